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


def _describe_rows(rows: np.ndarray, values: list, line_offset: int | None, source: str | None) -> str:
    parts = []
    for r, v in zip(rows[:MAX_LISTED], values[:MAX_LISTED]):
        where = f"row {r}"
        if line_offset is not None:
            where += f" (line {r + line_offset}{' of ' + source if source else ''})"
        parts.append(f"{where}: {v!r}")
    more = f" and {len(rows) - MAX_LISTED} more" if len(rows) > MAX_LISTED else ""
    return "; ".join(parts) + more


def _parse_time(raw: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Times as datetime64[ns] (text/dates) or float64 (numbers); also bad and missing masks."""
    missing = raw.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(raw) and not pd.api.types.is_bool_dtype(raw):
        values = raw.to_numpy(dtype=float)
        bad = ~np.isfinite(values)
        return np.where(bad, 0.0, values), bad | missing, missing
    if pd.api.types.is_datetime64_any_dtype(raw):
        t = pd.to_datetime(raw)
        if getattr(t.dt, "tz", None) is not None:
            t = t.dt.tz_convert("UTC").dt.tz_localize(None)
        values = t.to_numpy(dtype="datetime64[ns]")
        return np.where(missing, np.datetime64(0, "ns"), values), missing, missing
    text = raw.astype(str).str.strip()
    parsed = pd.to_datetime(text.where(~missing, None), errors="coerce", format="ISO8601")
    if getattr(parsed.dt, "tz", None) is not None:
        parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    bad = parsed.isna().to_numpy() | missing
    values = parsed.to_numpy(dtype="datetime64[ns]")
    values = np.where(bad, np.datetime64(0, "ns"), values)
    return values, bad, missing


def _parse_flag(raw: pd.Series) -> np.ndarray:
    """0/1, true/false, yes/no -> 0.0/1.0; anything else NaN."""
    mapping = {"1": 1.0, "0": 0.0, "true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0,
               "1.0": 1.0, "0.0": 0.0}
    out = np.full(len(raw), np.nan)
    notna = ~raw.isna().to_numpy()
    text = raw[notna].astype(str).str.strip().str.lower()
    out[notna] = text.map(mapping).to_numpy(dtype=float)
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
    # a period may not start again after another one started (it would not be one batch)
    first_seen = {}
    renumber = np.empty(seq.size, dtype=np.int64)
    current = None
    for i, c in enumerate(seq):
        if c != current:
            back = c in first_seen
            if back or (numeric and current is not None and c < current):
                r = int(rows[order[i]])
                where = f"row {r}" + (f" (line {r + line_offset})" if line_offset is not None else "")
                shown = values.iloc[order[i]]
                shown = shown.item() if hasattr(shown, "item") else shown
                why = ("comes back after another period started; periods must be contiguous in time"
                       if back else "is smaller than the period before it in time; numeric periods "
                       "must not decrease in time")
                raise GamesError(f"column '{column}': period {shown!r} at {where} {why}", [r], column)
            first_seen[c] = len(first_seen)
            current = c
        renumber[i] = first_seen[c] if not numeric else c
    out = np.empty_like(renumber)
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


def _check_header(path: str, sep: str) -> None:
    """A header that names a column twice is an error (pandas would silently rename the second
    ``score`` to ``score.1``)."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        first = next(csv.reader(f, delimiter=sep if isinstance(sep, str) and len(sep) == 1 else ","), [])
    names = [c.strip() for c in first]
    dupes = sorted({c for c in names if names.count(c) > 1})
    if dupes:
        raise GamesError(f"{os.path.basename(path)}: the header names column{'s' if len(dupes) > 1 else ''} "
                         f"{', '.join(map(repr, dupes))} more than once (line 1)", column=dupes[0])
