"""Reading the columns of a game table: times, flags and rating-period codes, and the wording
of the row-and-column errors (:class:`statespace.Games` uses them)."""

from __future__ import annotations

import csv
import os
import unicodedata
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

MAX_LISTED = 5
#: The two columns of each side's points or goals.
_SIDE_SCORES = ("score_a", "score_b")
#: The columns a game table reads as its own (any other goes to ``extra``, as do ``score_a`` and
#: ``score_b``); :meth:`statespace.data.games.Games.from_csv` reads a file with pyarrow only when it
#: has no other column (any other goes to ``extra`` as the C engine types it).
_KNOWN = frozenset({"time", "a", "b", "score", "neutral", "period", "score_a", "score_b"})
#: Missing values in a CSV, except in the competitor columns (where only an empty cell is).
_NA_WORDS = ["", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "<NA>", "#N/A", "n/a"]


class GamesError(ValueError):
    """Invalid game data. ``rows`` are 0-based positions in the input, ``column`` the culprit."""

    def __init__(self, message: str, rows: Sequence[int] = (), column: str | None = None):
        super().__init__(message)
        self.rows = list(rows)
        self.column = column


@dataclass(frozen=True)
class _Problem:
    column: str
    reason: str
    rows: np.ndarray  # 0-based input positions
    values: list


def describe_rows(rows: np.ndarray, values: list, line_offset: int | None, source: str | None) -> str:
    parts = []
    for r, v in zip(rows[:MAX_LISTED], values[:MAX_LISTED]):
        where = f"row {r}"
        if line_offset is not None:
            where += f" (line {r + line_offset}{' of ' + source if source else ''})"
        parts.append(f"{where}: {v!r}")
    more = f" and {len(rows) - MAX_LISTED} more" if len(rows) > MAX_LISTED else ""
    return "; ".join(parts) + more


# pandas keeps dates as int64 nanoseconds since 1970, which hold 1677-09-21 to 2262-04-11: a date
# outside would wrap around when converted (9999-12-31 became a day of 1816), so it is a row error.
# The bounds are whole seconds just inside the exact limits.
_NS_FIRST = np.datetime64("1677-09-21T00:12:44", "s")
_NS_LAST = np.datetime64("2262-04-11T23:47:16", "s")
TIME_RANGE = "1677-09-21 .. 2262-04-11"
#: A numeric time column whose values are all whole numbers in this range (the years whose 1 January
#: pandas' dates hold) is read as years, each the date of its 1 January.
YEARS = (1678, 2262)


def _to_ns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``datetime64`` of any unit as ``datetime64[ns]`` (NaT and out-of-range values as the epoch)
    and a mask of the values outside what nanoseconds hold."""
    if values.dtype == np.dtype("datetime64[ns]"):
        nat = np.isnat(values)
        return np.where(nat, np.datetime64(0, "ns"), values), np.zeros(values.size, dtype=bool)
    # compared in seconds, which hold any date a coarser or finer unit does, so nothing wraps here
    seconds = values.astype("datetime64[s]")
    nat = np.isnat(seconds)
    outside = ~nat & ((seconds < _NS_FIRST) | (seconds > _NS_LAST))
    keep = np.where(nat | outside, np.datetime64(0, "s").astype(values.dtype), values)
    return keep.astype("datetime64[ns]"), outside


def _read_time(raw: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Times as ``datetime64[ns]`` (dates) or ``float64`` (plain numbers), and masks of the bad
    (missing, unparseable or out of range), missing and out-of-range rows.

    - Text is parsed as ISO 8601. Times with a UTC offset are converted to UTC, each with its own
      offset (so a local-time column that crosses a daylight-saving change reads); times without
      one are taken as UTC already, also in a column that mixes the two.
    - A datetime column is kept (a time-zone-aware one converted to UTC); other datetime units
      than nanoseconds are converted, and dates nanoseconds cannot hold are out of range.
    - Numbers are plain numbers (days, or any unit), except that a column whose values are all
      whole numbers from ``YEARS[0]`` to ``YEARS[1]`` is read as years: 2019 is 2019-01-01, as the
      ISO 8601 text ``"2019"`` is.
    """
    missing = raw.isna().to_numpy()
    no_range = np.zeros(len(raw), dtype=bool)
    if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
        values = raw.to_numpy(dtype=float, na_value=np.nan)
        bad = ~np.isfinite(values)
        any_bad = bool(bad.any())
        ok = values[~bad] if any_bad else values
        if (ok.size and YEARS[0] <= ok.min() and ok.max() <= YEARS[1]
                and (raw.dtype.kind in "iu" or np.all(ok == np.round(ok)))):
            years = np.where(bad, 1970, values).astype(np.int64) - 1970
            return years.astype("datetime64[Y]").astype("datetime64[ns]"), bad | missing, missing, no_range
        if any_bad:
            return np.where(bad, 0.0, values), bad | missing, missing, no_range
        if np.may_share_memory(values, raw.to_numpy()):  # the caller's array: the table keeps its own
            values = values.copy()
        return values, bad | missing, missing, no_range
    if pd.api.types.is_datetime64_any_dtype(raw):
        t = pd.to_datetime(raw)
        if getattr(t.dt, "tz", None) is not None:
            t = t.dt.tz_convert("UTC").dt.tz_localize(None)
        values, outside = _to_ns(t.to_numpy())
        return values, missing | outside, missing, outside
    text = raw.astype(str).str.strip()
    # utc=True: mixed offsets cannot share one time zone; pandas refuses them without it
    parsed = pd.to_datetime(text.where(~missing, None), errors="coerce", format="ISO8601", utc=True)
    values, outside = _to_ns(parsed.dt.tz_localize(None).to_numpy())
    bad = parsed.isna().to_numpy() | missing | outside
    return values, bad, missing, outside


def _parse_time(raw: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_read_time` without the out-of-range mask (for callers that only need to know
    whether every time is valid)."""
    return _read_time(raw)[:3]


_FLAGS = {"1": 1.0, "0": 0.0, "true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0, "1.0": 1.0, "0.0": 0.0}


def _parse_flag(raw: pd.Series) -> np.ndarray:
    """0/1, true/false, yes/no -> 0.0/1.0; anything else NaN (each value read as its text,
    stripped and lower-cased: ``1.0`` is 1 but ``-0.0`` and ``2`` are neither)."""
    out = np.full(len(raw), np.nan)
    dtype = raw.dtype
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return raw.to_numpy(dtype=float)
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":  # the text of 0 and 1 is "0" and "1"
        v = raw.to_numpy()
        return np.where((v == 0) | (v == 1), v, np.nan).astype(float)
    if isinstance(dtype, np.dtype) and dtype.kind == "f":  # "0.0" and "1.0"; "-0.0" is no flag
        v = raw.to_numpy()
        return np.where((v == 1) | ((v == 0) & ~np.signbit(v)), v, np.nan).astype(float)
    notna = ~raw.isna().to_numpy()
    values = raw[notna]
    if pd.api.types.is_string_dtype(values):  # text: each distinct value read once
        codes, uniq = pd.factorize(values)
        mapped = pd.Series(uniq, dtype=object).astype(str).str.strip().str.lower().map(_FLAGS)
        out[notna] = mapped.to_numpy(dtype=float)[codes]
        return out
    text = values.astype(str).str.strip().str.lower()
    out[notna] = text.map(_FLAGS).to_numpy(dtype=float)
    return out


def _period_codes_from_column(values: pd.Series, time: np.ndarray, rows: np.ndarray,
                              line_offset, source, column: str = "period") -> np.ndarray:
    """Integer codes for a period column; periods must not interleave in time, and numeric
    periods (kept as absolute codes) must not decrease in time."""
    values = values.reset_index(drop=True)
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    if numeric:
        v = values.to_numpy(dtype=float)
        if np.all(v == np.round(v)):
            codes = v.astype(np.int64)
        else:
            codes = pd.factorize(v, sort=True)[0].astype(np.int64)
    else:
        codes = pd.factorize(values.astype(str), sort=False)[0].astype(np.int64)
    order = np.argsort(time, kind="stable")
    seq = codes[order]
    # a period may not start again after another one started (it would not be one batch), and
    # numeric periods may not decrease: the first run of equal codes (in time order) that breaks
    # either rule is the error
    starts = np.flatnonzero(np.r_[True, seq[1:] != seq[:-1]])
    runs = seq[starts]
    _, first, inverse = np.unique(runs, return_index=True, return_inverse=True)
    back = first[inverse] < np.arange(runs.size)
    broken = back | (np.r_[False, runs[1:] < runs[:-1]] if numeric else False)
    if broken.any():
        j = int(np.argmax(broken))
        i = int(starts[j])
        r = int(rows[order[i]])
        where = f"row {r}" + (f" (line {r + line_offset})" if line_offset is not None else "")
        shown = values.iloc[order[i]]
        shown = shown.item() if hasattr(shown, "item") else shown
        why = ("comes back after another period started; periods must be contiguous in time"
               if back[j] else "is smaller than the period before it in time; numeric periods "
               "must not decrease in time")
        raise GamesError(f"column '{column}': period {shown!r} at {where} {why}", [r], column)
    # numeric periods keep their codes; others are numbered in order of first appearance
    renumber = seq if numeric else np.repeat(np.arange(runs.size, dtype=np.int64), np.diff(np.r_[starts, seq.size]))
    out = np.empty(seq.size, dtype=np.int64)
    out[order] = renumber
    return out


def _id_text(raw: pd.Series, missing: np.ndarray) -> pd.Series:
    """Competitor ids as the names a user sees, the same across columns: numbers as integers where
    they are whole (a float column, upcast by a missing cell elsewhere, gives ``2``, not ``2.0``),
    text stripped and in Unicode NFC form (so the composed and decomposed spellings of a name are
    one competitor)."""
    if pd.api.types.is_float_dtype(raw):
        values = raw.to_numpy()
        whole = ~missing & np.isfinite(values) & (values == np.round(values))
        text = raw.astype(str)
        if whole.any():
            text[whole] = values[whole].astype(np.int64).astype(str)
        return text
    text = raw.astype(str)  # converted once: the slow step on big tables
    if pd.api.types.is_integer_dtype(raw):
        return text
    text = text.str.strip()
    uniq = pd.unique(text.to_numpy())
    normal = {u: unicodedata.normalize("NFC", u) if isinstance(u, str) else u for u in uniq}
    if any(k != v for k, v in normal.items()):
        text = text.map(normal)
    return text


def _check_header(path: str, sep: str, shown: str | None = None) -> None:
    """A header that names a column twice is an error (pandas would silently rename the second
    ``score`` to ``score.1``); so is one the ``csv`` module cannot read (a quoted field that runs
    past its field limit). Messages name the file ``shown`` (default: ``path``'s base name)."""
    shown = os.path.basename(path) if shown is None else shown
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        try:
            first = next(csv.reader(f, delimiter=sep if isinstance(sep, str) and len(sep) == 1 else ","), [])
        except csv.Error as exc:
            raise GamesError(f"cannot read {shown} as CSV: the header (line 1): {exc}") from None
    names = [c.strip() for c in first]
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise GamesError(f"{shown}: the header names column{'s' if len(dupes) > 1 else ''} "
                         f"{', '.join(map(repr, dupes))} more than once (line 1)", column=dupes[0])
