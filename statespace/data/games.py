"""``Games``: an immutable, validated table of one-vs-one results.

Columns: ``time``, ``a``, ``b``, ``score`` (1, 0.5, 0 for a win, draw, loss of ``a``), optional
``neutral`` (1 = neutral venue; otherwise ``a`` is at home), ``period`` (rating period) and
``score_a``, ``score_b`` (points or goals of each side, read by the :class:`~statespace.Margin` and
:class:`~statespace.Goals` observations; ``score`` must agree with them, and is derived from them
when the table has no ``score`` column).
Rows keep the caller's order: every array on a ``Games`` and every result computed from it is
aligned with the rows as given. Methods that need time order use :attr:`Games.order` (a stable
sort by time, so games of the same time keep their given order).
"""

from __future__ import annotations

import csv
import importlib.util
import os
import re
import warnings
from typing import Iterable

import numpy as np
import pandas as pd

from statespace.data import csvfile as _csvfile
from statespace.data.ids import StreamedNames, competitor_codes
from statespace.data.columns import (TIME_RANGE, GamesError, _check_header, describe_rows, _id_text, _parse_flag, _parse_time, _period_codes_from_column, _Problem, _read_time)

__all__ = ["Games", "GamesError", "DroppedRowsWarning"]

_SCORES = (0.0, 0.5, 1.0)
#: Missing values in a CSV, except in the competitor columns (where only an empty cell is).
_NA_WORDS = ["", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "<NA>", "#N/A", "n/a"]
#: The columns :meth:`Games.from_csv` may read with pyarrow (any other goes to ``extra``, as the
#: C engine types it).
_KNOWN = frozenset({"time", "a", "b", "score", "neutral", "period", "score_a", "score_b"})
#: Text pyarrow reads as a number and the C engine does not (hexadecimal integers), or as another
#: kind of number (``+1`` as a float; only ``score_a``/``score_b`` keep the kind, in ``extra``).
_HEX = (b"0x", b"0X")
_PLUS = (b"+",)
#: An ISO 8601 date, and a UTC offset after it (pyarrow then reads the column as UTC times)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?)?([zZ]|[+-]\d{2}(:?\d{2})?)?$")
_OFFSET = re.compile(r"([zZ]|[+-]\d{2}(:?\d{2})?)$")
_SIDE_SCORES = ("score_a", "score_b")
#: The block size of pyarrow's streaming CSV reader in :meth:`Games.from_csv`: it reads up to 32
#: blocks ahead of the batch being converted, so larger blocks hold more of the file at once.
_CSV_BLOCK = 1 << 16
#: The longest line :meth:`Games.from_csv` reads, in bytes (16 MiB, far beyond any game's row): a
#: longer line is a row error, found before any parser holds it (:mod:`statespace.data.csvfile`).
MAX_LINE_BYTES = 1 << 24
_CALENDAR = ("week", "month", "year")


def _have_pyarrow() -> bool:
    """Whether pyarrow is installed (found, not imported: pandas imports it when it needs it)."""
    global _PYARROW
    if _PYARROW is None:
        _PYARROW = importlib.util.find_spec("pyarrow") is not None
    return _PYARROW


_PYARROW: bool | None = None


def _arrow_column(name: str, column) -> pd.Series | None:
    """One column read by pyarrow (a chunked array: its batches) as :meth:`Games.from_csv` reads
    it with the C engine (text as pandas' Arrow-backed strings, numbers and dates as NumPy
    arrays), or ``None`` when the C engine may read it otherwise or it has a missing value (a
    row error)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        if name in ("a", "b") and column.null_count:  # an NA word: a name for the C engine
            return None
        text = pd.Series(pd.arrays.ArrowStringArray(column), copy=False)
        if name == "period" and pd.to_numeric(text, errors="coerce").notna().any():
            return None  # a number the C engine may have read as one
        return text
    if column.null_count:
        return None
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        if name != "time":
            return None
        if pa.types.is_date(kind):
            column = pc.cast(column, pa.timestamp("s"))
        elif kind.tz is not None:  # UTC times: the same instants without the zone
            column = column.cast(pa.timestamp(kind.unit))
        return pd.Series(column.to_numpy(), copy=False)
    if pa.types.is_boolean(kind):
        return pd.Series(column.to_numpy(), copy=False) if name == "neutral" else None
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        values = column.to_numpy()
        if name in _SIDE_SCORES and values.dtype.kind == "f" and (np.abs(values) >= 2.0**63).any():
            return None  # an integer beyond int64: the C engine keeps it as one (uint64)
        return pd.Series(values, copy=False)
    return None  # times of day, ...


def _first_value(path: str, sep: str, column: str) -> str | None:
    """The first data row's value of ``column`` in a CSV file (``None`` if there is none, or the
    ``csv`` module cannot read the first rows: the readers then report)."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        rows = csv.reader(f, delimiter=sep)
        try:
            header = [c.strip().lstrip("\ufeff") for c in next(rows, [])]
            first = next(rows, None)
        except csv.Error:
            return None
    if first is None or column not in header or len(first) != len(header):
        return None
    return first[header.index(column)]


def _is_number(text: str) -> bool:
    """Whether ``text`` reads as a number (Python's ``float``; pyarrow may still refuse it)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _scan_file(path: str, needles: tuple[bytes, ...]) -> tuple[bool, int]:
    """Whether a file contains any of ``needles`` (short byte strings), and how many ``\\n`` and
    ``\\r`` bytes it holds (each counted: one more is at least its number of lines), read in
    blocks; the count stops at a needle."""
    tail = b""
    ends = 0
    with open(path, "rb") as f:
        while block := f.read(1 << 22):
            joined = tail + block[:64] if tail else b""
            # the needle's last byte first: one memchr pass, and most files lack it
            if any((nd[-1:] in block and nd in block) or (joined and nd in joined) for nd in needles):
                return True, ends
            ends += int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10))  # b"\n"
            if b"\r" in block:
                ends += block.count(b"\r")
            tail = block[-64:]
    return False, ends


def _flags_into(column, out: np.ndarray) -> bool:
    """Write the ``neutral`` flags of a pyarrow array (integers, numbers, booleans or text, without
    missing values) into ``out``, read as the C engine's column of that kind is read
    (:func:`statespace.data.columns._parse_flag`); ``False`` when a value is no flag."""
    import pyarrow as pa

    if pa.types.is_integer(column.type):  # 0 and 1, the usual column: no pandas needed
        values = column.to_numpy(zero_copy_only=False)
        if not ((values == 0) | (values == 1)).all():
            return False
        np.equal(values, 1, out=out)
        return True
    if pa.types.is_string(column.type):
        values = pd.Series(pd.arrays.ArrowStringArray(column), copy=False)
    else:
        values = pd.Series(column.to_numpy(zero_copy_only=False), copy=False)
    flags = _parse_flag(values)
    if np.isnan(flags).any():
        return False
    np.equal(flags, 1.0, out=out)
    return True


def _shrink(x: np.ndarray, n: int) -> np.ndarray:
    """``x`` (an array that owns its memory, with no view of it left) cut to its first ``n``
    values in place: its memory beyond them is given back, nothing is copied."""
    if x.size != n:
        x.resize(n, refcheck=False)
    return x


class _CsvBatches:
    """The columns of a CSV file as pyarrow's streaming CSV reader gives them, batch by batch,
    turned into the arrays a :class:`Games` keeps as they arrive (no column is held whole as
    pyarrow's table or as pandas' text): ``time`` (pyarrow's timestamps, or numbers as
    float64), ``score`` and ``neutral`` (as flags) are written into arrays sized for the most
    rows the file can have, ``a`` and ``b`` into competitor codes
    (:class:`statespace.data.ids.StreamedNames`); any other column (and ``time`` read as text) is
    kept as pyarrow's batches, for :func:`_arrow_column` at the end. A missing value anywhere, a
    score not 0, 0.5 or 1, or a ``neutral`` value that is no flag stops the reading (:meth:`add`
    gives ``False``): those are row errors, which the C engine names."""

    def __init__(self, schema, bound: int):
        import pyarrow as pa

        self.n = 0
        self.bound = bound
        self.arrays: dict[str, np.ndarray] = {}
        self.chunks: dict[str, list] = {}
        self.types = {name: schema.field(name).type for name in schema.names}
        self.names = StreamedNames()
        for name, kind in self.types.items():
            number = pa.types.is_integer(kind) or pa.types.is_floating(kind)
            if name in ("a", "b"):
                self.arrays[name] = np.empty(bound, dtype=np.int64)
            elif name == "time" and pa.types.is_timestamp(kind):
                self.arrays[name] = np.empty(bound, dtype="datetime64[ns]")
            elif name in ("time", "score") and number:
                self.arrays[name] = np.empty(bound, dtype=np.float64)
            elif name == "neutral" and (number or pa.types.is_boolean(kind) or pa.types.is_string(kind)):
                self.arrays[name] = np.empty(bound, dtype=bool)
            else:
                self.chunks[name] = []

    def add(self, batch) -> bool:
        """Take one batch; ``False`` when it has a row error or more rows than the file can."""
        start, stop = self.n, self.n + batch.num_rows
        if stop > self.bound:
            return False
        for name, column in zip(batch.schema.names, batch.columns):
            if column.null_count:
                return False
            if name in self.chunks:
                self.chunks[name].append(column)
                continue
            if name in ("a", "b"):
                if not self.names.add(column, self.arrays[name], start):
                    return False
                continue
            out = self.arrays[name][start:stop]
            if name == "neutral":
                if not _flags_into(column, out):
                    return False
            else:
                out[:] = column.to_numpy(zero_copy_only=False)
                if name == "score" and not ((out == 0.0) | (out == 0.5) | (out == 1.0)).all():
                    return False
        self.n = stop
        return True

    def columns(self) -> tuple[dict, dict] | None:
        """``(checked, cols)`` for :meth:`Games._from_clean_columns` once every batch is in:
        the arrays already checked (``time`` as dates, ``score``, ``neutral``, and ``codes``), and
        the other columns as :func:`_arrow_column` makes them; ``None`` when there are no rows,
        a column is one that function refuses, or the competitors need the C engine's errors."""
        import pyarrow as pa

        n = self.n
        if n == 0:
            return None
        coded = self.names.finish()
        if coded is None:
            return None
        to_player, players = coded
        a, b = (_shrink(self.arrays.pop(side), n) for side in ("a", "b"))
        for codes in (a, b):
            np.take(to_player, codes, out=codes, mode="clip")
        if np.any(a == b):
            return None
        checked = {"codes": (a, b, players)}
        cols = {}
        for name in list(self.arrays):
            values = _shrink(self.arrays.pop(name), n)
            if name == "time" and values.dtype.kind == "f":
                cols[name] = values  # numbers: whole years are dates (_parse_time)
            else:
                checked[name] = values
        for name in list(self.chunks):
            column = pa.chunked_array(self.chunks.pop(name), type=self.types[name])
            cols[name] = _arrow_column(name, column)
            del column
            if cols[name] is None:
                return None
        return checked, cols


#: what a row error ends with: the way to read the other rows, in Python and on the command line
DROP_HINT = '; to skip invalid rows, pass errors="drop" (statespace compare/rate: --drop-invalid)'


class DroppedRowsWarning(UserWarning):
    """Invalid rows were dropped because the caller asked for ``errors="drop"``."""


def _freeze(x: np.ndarray) -> np.ndarray:
    """``x`` read-only: contiguous (copied only if it is not), or a constant column as given (a
    zero-stride view: one value for every game, no memory per game)."""
    if x.ndim == 1 and x.size > 1 and x.strides[0] == 0:
        if x.flags.writeable:
            x = x.view()
            x.flags.writeable = False
        return x
    x = np.ascontiguousarray(x)
    x.flags.writeable = False
    return x


def _constant(value: float, n: int) -> np.ndarray:
    """A read-only float64 column of ``n`` equal values that takes no memory per game (NumPy
    code reads it as any array; :func:`numpy.ascontiguousarray` gives a compiled loop a real
    one)."""
    return np.broadcast_to(np.float64(value), (n,))


def _time_order(t: np.ndarray) -> tuple[np.ndarray, bool]:
    """The stable time order of ``t`` and whether it is the rows' own order (checked first: a
    table given in time order, the usual case, needs no sort)."""
    n = t.size
    if n < 2 or not np.any(t[1:] < t[:-1]):
        return np.arange(n, dtype=np.int64), True
    return np.argsort(t, kind="stable").astype(np.int64, copy=False), False


def _own(x: np.ndarray, raw: pd.Series) -> np.ndarray:
    """``x`` (read from the caller's column ``raw``), copied when it may share memory with it: a
    table keeps its own arrays (freezing the caller's would make them read-only, and the
    caller's later writes would change the table)."""
    if isinstance(raw.dtype, np.dtype) and not np.may_share_memory(x, raw.to_numpy()):
        return x
    return x.copy()


def _no_columns(n: int) -> pd.DataFrame:
    """An ``extra`` without columns, as a DataFrame with named columns leaves it (its empty column
    labels typed as column names are)."""
    return pd.DataFrame(index=pd.RangeIndex(n), columns=pd.Index(["time"])[:0])


#: What :meth:`Games.from_arrays` takes column by column (anything else goes through a DataFrame).
_COLUMN_TYPES = (np.ndarray, pd.Series, pd.Index, pd.api.extensions.ExtensionArray, list, tuple, range)


def _as_series(values) -> pd.Series:
    """A column as a Series (as :class:`pandas.DataFrame` would hold it), without a copy where
    pandas allows."""
    if isinstance(values, pd.Series):
        return values
    return pd.Series(values, copy=False)


def _clean_score(values) -> np.ndarray | None:
    """``score`` as a fresh float64 array, or ``None`` when a value is missing or not 0, 0.5 or 1
    (read as the row-by-row path reads it: :func:`pandas.to_numeric`)."""
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "biuf":
        num = values.astype(np.float64)  # a copy: the table keeps its own
    else:
        raw = _as_series(values)
        if raw.isna().any():
            return None
        num = _own(pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64), raw)
    if not ((num == 0.0) | (num == 0.5) | (num == 1.0)).all():
        return None
    return num


def _clean_neutral(values, n: int) -> np.ndarray | None:
    """``neutral`` as a fresh boolean array (all True without a column), or ``None`` when a flag
    is missing or not 0/1, true/false, yes/no (:func:`statespace.data.columns._parse_flag`)."""
    if values is None:
        return np.ones(n, dtype=bool)
    if isinstance(values, np.ndarray) and values.dtype.kind == "b" and values.ndim == 1:
        return values.copy()
    raw = _as_series(values)
    flag = _parse_flag(raw)
    if np.isnan(flag).any():  # a missing flag is NaN too
        return None
    return flag == 1.0


def _clean_sides(score_a, score_b) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Each side's points as fresh float64 arrays and the score they imply, or ``None`` when one
    is missing, not a finite number, or negative."""
    sides = []
    for values in (score_a, score_b):
        raw = _as_series(values)
        if raw.isna().any():
            return None
        v = _own(pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64), raw)
        if not (np.isfinite(v).all() and (v >= 0).all()):
            return None
        sides.append(v)
    sa, sb = sides
    derived = np.where(sa > sb, 1.0, np.where(sa < sb, 0.0, 0.5))
    return sa, sb, derived


class Games:
    """Validated one-vs-one results (see the module docstring).

    Build with :meth:`from_arrays`, :meth:`from_frame` or :meth:`from_csv`; do not call the
    constructor directly. Attributes (all read-only NumPy arrays in the caller's row order):

    - ``time``: ``datetime64[ns]`` (UTC; whole-number years such as 2019 are read as 1 January of
      that year, see :func:`statespace.data.columns._read_time`), or ``float64`` for numeric times
      (:attr:`time_base` says which);
    - ``a``, ``b``: integer ids into ``players`` (the competitor names, sorted);
    - ``score``: 1, 0.5 or 0 for a win, draw or loss of ``a``;
    - ``score_a``, ``score_b``: points or goals of each side (finite, >= 0, ``float64``), NaN
      when the table has none (see :attr:`has_scores`; then a constant, zero-stride column that
      takes no memory per game); they also stay in ``extra``;
    - ``neutral``: True where the venue is neutral (all True when no column was given, so no
      home advantage applies);
    - ``period``: integer rating-period code (non-decreasing in time), or ``None``;
    - ``extra``: a DataFrame of any other input columns (goals, season, ...), same rows;
    - ``row``: each row's position in the original input (differs after ``split`` or drops);
    - ``weight``: each game's likelihood weight (all 1 unless set with :meth:`with_weights`);
    - ``order``: the positions of the rows in time order (a stable sort; when the rows are in
      time order already, ``order`` and ``row`` may be one shared array).
    """

    __slots__ = ("time", "a", "b", "score", "neutral", "period", "players", "extra", "row",
                 "order", "dropped", "_index", "weight", "score_a", "score_b")

    def __init__(self, *, time, a, b, score, neutral, period, players, extra, row=None, dropped=None, weight=None,
                 score_a=None, score_b=None, order=None):
        """``row=None``: the rows are the input's, 0 to n - 1. ``order``: the time order when the
        caller knows it (the same ``time``), else computed."""
        self.time = _freeze(time)
        n = self.time.size
        self.a = _freeze(np.asarray(a, dtype=np.int64))
        self.b = _freeze(np.asarray(b, dtype=np.int64))
        self.score = _freeze(np.asarray(score, dtype=np.float64))
        self.score_a = _freeze(_constant(np.nan, n) if score_a is None else np.asarray(score_a, dtype=np.float64))
        self.score_b = _freeze(_constant(np.nan, n) if score_b is None else np.asarray(score_b, dtype=np.float64))
        self.neutral = _freeze(np.asarray(neutral, dtype=bool))
        self.period = None if period is None else _freeze(np.asarray(period, dtype=np.int64))
        self.players = _freeze(np.asarray(players, dtype=object))
        self.extra = extra.reset_index(drop=True) if extra is not None else _no_columns(n)
        self.weight = _freeze(np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64))
        identity = False
        if order is None:
            order, identity = _time_order(self.time)
        self.order = _freeze(np.asarray(order, dtype=np.int64))
        if row is None:  # in time order already: the rows' positions are the time order itself
            self.row = self.order if identity else _freeze(np.arange(n, dtype=np.int64))
        else:
            self.row = _freeze(np.asarray(row, dtype=np.int64))
        self.dropped = dropped if dropped is not None else pd.DataFrame(columns=["row", "column", "reason"])
        self._index = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_arrays(cls, time, a, b, score=None, neutral=None, period=None, *, score_a=None, score_b=None,
                    errors: str = "raise") -> "Games":
        """Build from parallel arrays (``a`` and ``b`` are competitor names or ids); ``score`` may
        be left out when ``score_a`` and ``score_b`` are given.

        A table with nothing to report is built column by column at array speed (ids hashed
        once, or looked up directly when they are small integers; see :mod:`statespace.data.ids`);
        any invalid value sends the table through :meth:`from_frame`, whose errors name the rows
        and columns."""
        given = {"time": time, "a": a, "b": b}
        for name, value in (("score", score), ("neutral", neutral), ("period", period),
                            ("score_a", score_a), ("score_b", score_b)):
            if value is not None:
                given[name] = value
        if errors in ("raise", "drop") and (score is not None or (score_a is not None and score_b is not None)):
            fast = cls._from_clean_arrays(given)
            if fast is not None:
                return fast
        try:
            frame = pd.DataFrame(given)
        except ValueError as exc:
            raise GamesError(f"columns must have the same length: {exc}") from None
        return cls.from_frame(frame, errors=errors)

    @classmethod
    def _from_clean_arrays(cls, given: dict) -> "Games | None":
        """:meth:`from_arrays` without a DataFrame, for tables with nothing to report: ``None``
        when a column is not a plain one-dimensional column of the common length (the DataFrame
        path then broadcasts or refuses it) or any value is invalid."""
        values = list(given.values())
        if not all(isinstance(v, _COLUMN_TYPES) for v in values):  # a scalar (broadcast by pandas), ...
            return None
        if any(getattr(v, "ndim", 1) != 1 for v in values) or len({len(v) for v in values}) != 1 or not len(values[0]):
            return None
        if ("score_a" in given) != ("score_b" in given):
            return None
        indexes = [v.index for v in values if isinstance(v, pd.Series)]
        if any(not i.equals(indexes[0]) for i in indexes[1:]):  # a DataFrame aligns them by label
            return None
        extra = None
        if "score_a" in given:  # they stay in extra too, as the DataFrame path keeps them
            extra = pd.DataFrame({"score_a": given["score_a"], "score_b": given["score_b"]})
        return cls._from_clean_columns(dict(given), extra)

    @classmethod
    def _from_clean_columns(cls, cols: dict, extra: pd.DataFrame | None, line_offset: int | None = None,
                            source: str | None = None, checked: dict | None = None) -> "Games | None":
        """The table of columns with nothing to report (``time``, ``a``, ``b``, and any of
        ``score``, ``neutral``, ``period``, ``score_a``, ``score_b``: arrays or Series of one
        length; the dict is emptied as they are read), column by column without a row-by-row
        pass; ``None`` as soon as a value would be a row error. Builds exactly the table of the
        row-by-row path (tests/test_games_arrays.py and tests/test_loading.py check it).

        ``checked``: columns the caller has read and checked already, as the table keeps them
        (fresh arrays of its own: ``time`` as ``datetime64[ns]`` dates, ``score``, ``neutral``,
        and ``codes``, the ``(a codes, b codes, players)`` of :func:`competitor_codes`); they are
        kept as given, and ``cols`` then lacks them."""
        # Each column is taken out of ``cols`` as it is read: when the caller holds no other
        # reference (from_csv), its memory goes before the next column's arrays are made.
        checked = dict(checked or {})
        if "time" in checked:
            t = checked.pop("time")
        else:
            time = _parse_time(_as_series(cols.pop("time")))
            if time[1].any():
                return None
            t = time[0]
            del time
        given = cols.pop("score", None)
        score = checked.pop("score", None) if given is None else _clean_score(given)
        if given is not None and score is None:
            return None
        del given
        sa = sb = None
        if cols.get("score_a") is not None:
            sides = _clean_sides(cols.pop("score_a"), cols.pop("score_b"))
            if sides is None:
                return None
            sa, sb, derived = sides
            if score is None:
                score = derived
            elif np.any(score != derived):
                return None
            del sides, derived
        n = t.size
        neutral = checked.pop("neutral") if "neutral" in checked else _clean_neutral(cols.pop("neutral", None), n)
        if neutral is None:
            return None
        coded = checked.pop("codes") if "codes" in checked else competitor_codes(cols.pop("a"), cols.pop("b"))
        if coded is None:
            return None
        a_codes, b_codes, players = coded
        del coded
        period = None
        if cols.get("period") is not None:
            raw = _as_series(cols.pop("period")).reset_index(drop=True)
            if raw.isna().any():
                return None
            period = _period_codes_from_column(raw, t, range(n), line_offset, source)
            del raw
        return cls(time=t, a=a_codes, b=b_codes, score=score, neutral=neutral, period=period, players=players,
                   extra=extra, score_a=sa, score_b=sb)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, errors: str = "raise", _line_offset: int | None = None,
                   _source: str | None = None) -> "Games":
        """Build from a DataFrame with columns ``time, a, b, score`` (+ ``neutral``, ``period``,
        ``score_a`` and ``score_b``; with both of these, ``score`` may be left out).

        ``errors="raise"`` (default) raises :class:`GamesError` naming the rows and column of
        every problem, and the way past them (:data:`DROP_HINT`: ``errors="drop"``, on the command
        line ``--drop-invalid``); ``errors="drop"`` drops invalid rows, warns with
        :class:`DroppedRowsWarning` saying how many and which, and records them in ``dropped``.
        """
        if errors not in ("raise", "drop"):
            raise ValueError(f"errors must be 'raise' or 'drop', got {errors!r}")
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"expected a pandas DataFrame, got {type(df).__name__}")
        has_pair = [c in df.columns for c in _SIDE_SCORES]
        if any(has_pair) and not all(has_pair):
            given, absent = _SIDE_SCORES if has_pair[0] else _SIDE_SCORES[::-1]
            raise GamesError(f"column {given!r} without {absent!r}: give both sides' scores or neither",
                             column=absent)
        dupes = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        if dupes:
            raise GamesError(f"duplicate column name{'s' if len(dupes) > 1 else ''} "
                             f"{', '.join(map(repr, dupes))}: each column must appear once", column=dupes[0])
        required = ("time", "a", "b") if all(has_pair) else ("time", "a", "b", "score")
        missing = [c for c in required if c not in df.columns]
        if missing:
            raise GamesError(
                f"missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
                f"(columns found: {', '.join(map(str, df.columns)) or 'none'})",
                column=missing[0])
        n = len(df)
        if n == 0:
            raise GamesError("the games table is empty: no rows to rate")
        df = df.reset_index(drop=True)
        fast = cls._from_clean_frame(df, _line_offset, _source)
        if fast is not None:
            return fast
        return cls._from_frame_rows(df, errors, _line_offset, _source)

    @classmethod
    def _from_clean_frame(cls, df: pd.DataFrame, line_offset: int | None, source: str | None) -> "Games | None":
        """:meth:`from_frame` of a checked frame (columns present, index 0 to n - 1) with nothing
        to report, column by column; ``None`` when some row is invalid."""
        cols = {c: df[c] for c in _KNOWN if c in df.columns}
        extra_cols = [c for c in df.columns if c not in ("time", "a", "b", "score", "neutral", "period")]
        return cls._from_clean_columns(cols, df[extra_cols], line_offset, source)

    @classmethod
    def _from_frame_rows(cls, df: pd.DataFrame, errors: str, _line_offset: int | None,
                         _source: str | None) -> "Games":
        """:meth:`from_frame` row by row: every invalid row found and named (raised, or dropped
        with a warning)."""
        n = len(df)
        has_pair = [c in df.columns for c in _SIDE_SCORES]
        problems: list[_Problem] = []

        def flag(column: str, reason: str, mask: np.ndarray, shown: pd.Series) -> None:
            mask = np.asarray(mask, dtype=bool)
            if mask.any():
                rows = np.flatnonzero(mask)
                problems.append(_Problem(column, reason, rows, list(shown.iloc[rows])))

        # competitors
        names = {}
        for col in ("a", "b"):
            raw = df[col]
            bad = raw.isna().to_numpy()
            text = _id_text(raw, bad)
            bad = bad | text.eq("").to_numpy()
            flag(col, "missing competitor", bad, raw)
            names[col] = text.where(~bad, None)
        same = (names["a"] == names["b"]).to_numpy() & names["a"].notna().to_numpy()
        flag("a/b", "a competitor against itself", same, names["a"])

        # each side's points or goals
        sides = None
        if all(has_pair):
            sides = {}
            for col in _SIDE_SCORES:
                raw = df[col]
                missing_side = raw.isna().to_numpy()
                values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
                flag(col, f"missing {col}", missing_side, raw)
                not_number = ~missing_side & ~np.isfinite(values)
                flag(col, f"a non-numeric or infinite {col}", not_number, raw)
                flag(col, f"negative {col}", ~missing_side & ~not_number & (values < 0), raw)
                sides[col] = np.where(np.isfinite(values) & (values >= 0), values, np.nan)
            valid_sides = ~np.isnan(sides["score_a"]) & ~np.isnan(sides["score_b"])
            derived = np.where(sides["score_a"] > sides["score_b"], 1.0,
                               np.where(sides["score_a"] < sides["score_b"], 0.0, 0.5))
            derived[~valid_sides] = np.nan

        # score
        if "score" in df.columns:
            raw = df["score"]
            num = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
            missing_score = raw.isna().to_numpy()
            flag("score", "missing score", missing_score, raw)
            bad_score = ~missing_score & ~np.isin(num, _SCORES)
            flag("score", "score outside {0, 0.5, 1}", bad_score, raw)
            if sides is not None:
                disagree = valid_sides & np.isin(num, _SCORES) & (num != derived)
                shown = pd.Series([f"score {s:g} but score_a {x:g}, score_b {y:g}" for s, x, y in
                                   zip(num, sides["score_a"], sides["score_b"])]) if disagree.any() else raw
                flag("score/score_a/score_b", "a score that disagrees with score_a and score_b "
                     "(a wins iff score_a > score_b, a draw iff they are equal)", disagree, shown)
        else:
            num = derived

        # time
        time, time_bad, time_missing, time_outside = _read_time(df["time"])
        flag("time", "missing time", time_missing, df["time"])
        flag("time", f"a date outside {TIME_RANGE}", time_outside, df["time"])
        flag("time", "unparseable time", time_bad & ~time_missing & ~time_outside, df["time"])

        # neutral
        if "neutral" in df.columns:
            raw = df["neutral"]
            neu = _parse_flag(raw)
            flag("neutral", "missing neutral flag", raw.isna().to_numpy(), raw)
            flag("neutral", "neutral must be 0/1 or true/false", np.isnan(neu) & ~raw.isna().to_numpy(), raw)
        else:
            neu = np.ones(n)

        # period
        period = None
        if "period" in df.columns:
            raw = df["period"]
            flag("period", "missing period", raw.isna().to_numpy(), raw)
            period = raw

        invalid = np.zeros(n, dtype=bool)
        for p in problems:
            invalid[p.rows] = True
        line_offset = _line_offset
        if problems and errors == "raise":
            msgs = [f"column '{p.column}': {len(p.rows)} row{'s' if len(p.rows) > 1 else ''} with "
                    f"{p.reason} ({describe_rows(p.rows, p.values, line_offset, _source)})"
                    for p in problems]
            all_rows = sorted(set(np.concatenate([p.rows for p in problems]).tolist()))
            raise GamesError("invalid games: " + " | ".join(msgs) + DROP_HINT, rows=all_rows, column=problems[0].column)

        dropped = pd.DataFrame(
            [(int(r), p.column, p.reason) for p in problems for r in p.rows],
            columns=["row", "column", "reason"]).sort_values("row", kind="stable").reset_index(drop=True)
        if problems:
            keep_idx = np.flatnonzero(~invalid)
            listed = ", ".join(f"row {r} ({c}: {why})" for r, c, why in dropped.itertuples(index=False)
                               ) if len(dropped) <= 10 else ", ".join(
                f"row {r}" for r in dropped["row"].unique()[:10]) + ", ..."
            warnings.warn(f"dropped {int(invalid.sum())} invalid row{'s' if invalid.sum() > 1 else ''} "
                          f"of {n}: {listed}", DroppedRowsWarning, stacklevel=2)
            if keep_idx.size == 0:
                raise GamesError("the games table is empty after dropping invalid rows")
        else:
            keep_idx = np.arange(n)
        all_rows = not problems

        a_names = names["a"].to_numpy(dtype=object)[keep_idx]
        b_names = names["b"].to_numpy(dtype=object)[keep_idx]
        # same result as np.unique(..., return_inverse=True) (players sorted by code point), but
        # hashing first and sorting only the distinct names is much faster on big tables
        codes, distinct = pd.factorize(np.concatenate([a_names, b_names]))
        distinct = np.asarray(distinct, dtype=str)
        rank = np.argsort(distinct, kind="stable")
        players = distinct[rank]
        position = np.empty_like(rank)
        position[rank] = np.arange(rank.size)
        inv = position[codes]
        k = keep_idx.size
        # score_a and score_b stay in extra too, for code that reads them there
        extra_cols = [c for c in df.columns if c not in ("time", "a", "b", "score", "neutral", "period")]
        extra = df.loc[keep_idx, extra_cols].reset_index(drop=True)
        time = time[keep_idx]
        period_codes = None
        if period is not None:
            period_codes = _period_codes_from_column(period.iloc[keep_idx].reset_index(drop=True), time,
                                                     keep_idx, line_offset, _source)
        return cls(time=time, a=inv[:k], b=inv[k:], score=num[keep_idx], neutral=neu[keep_idx] == 1,
                   period=period_codes, players=players.astype(object), extra=extra,
                   row=None if all_rows else keep_idx,
                   dropped=dropped, score_a=None if sides is None else sides["score_a"][keep_idx],
                   score_b=None if sides is None else sides["score_b"][keep_idx])

    @classmethod
    def from_csv(cls, path: str | os.PathLike, *, errors: str = "raise", **read_csv_kwargs) -> "Games":
        """Read a CSV with a header ``time,a,b,score[,neutral][,period][,...]``.

        Competitor columns are read as text, so ids such as ``100092`` stay names (every table's
        names are stripped and put in Unicode NFC form, and a whole number in a float column is
        the integer: ``2.0`` is competitor ``2``). A header that names a column twice is an
        error. Error messages give both the 0-based data row and the file line (header = line 1).

        ``path`` may be a pipe (a FIFO, ``/dev/stdin``, a shell's ``<(...)``): it is copied block
        by block to a temporary file first, since reading goes over the file more than once. A
        line longer than :data:`MAX_LINE_BYTES` is a :class:`GamesError` naming its row, found in
        bounded memory before any parser reads the file (:mod:`statespace.data.csvfile`); a field may
        be as long as a line.

        With pyarrow installed, a file of the known columns only (``time, a, b, score, neutral,
        period, score_a, score_b``) and no ``read_csv`` options but ``sep`` is read by pyarrow's
        streaming CSV reader, batch by batch into the table's arrays (faster, and without
        holding the file's whole table or its text), and kept only when it gives exactly the
        table the C engine gives: a file with anything to report, or a value the two engines
        read differently, is read again by the C engine, whose table and errors are the
        reference.
        """
        path = os.fspath(path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"no such games file: {path}")
        with _csvfile.readable(path, MAX_LINE_BYTES) as (file, shown), _csvfile.field_limit(MAX_LINE_BYTES):
            return cls._from_csv_file(file, path, shown, errors, read_csv_kwargs)

    @classmethod
    def _from_csv_file(cls, path: str, given: str, shown: str, errors: str, read_csv_kwargs: dict) -> "Games":
        """:meth:`from_csv` of a regular file ``path`` (the ``given`` one, or a pipe's copy) whose
        lines are within :data:`MAX_LINE_BYTES`; row errors name the file ``shown``."""
        sep = read_csv_kwargs.get("sep", read_csv_kwargs.get("delimiter", ","))
        # A competitor called "NA" (Namibia) or "None" is a name, not a missing value: only an
        # empty cell is missing in the competitor columns; other columns keep pandas' NA words.
        try:
            header = pd.read_csv(path, nrows=0, **({"sep": sep} if sep != "," else {})).columns
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error) as exc:
            raise GamesError(f"cannot read {given} as CSV: {str(exc).strip().splitlines()[0]}") from None
        _check_header(path, sep, shown)
        fast = cls._from_csv_arrow(path, header, read_csv_kwargs, shown)
        if fast is not None:
            return fast
        kwargs = {"dtype": {"a": str, "b": str}, "keep_default_na": False,
                  "na_values": {c: ([""] if c in ("a", "b") else _NA_WORDS) for c in header}}
        kwargs.update(read_csv_kwargs)
        try:
            df = pd.read_csv(path, **kwargs)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, csv.Error) as exc:
            raise GamesError(f"cannot read {given} as CSV: {str(exc).strip().splitlines()[0]}") from None
        return cls.from_frame(df, errors=errors, _line_offset=2, _source=shown)

    @classmethod
    def _from_csv_arrow(cls, path: str, header: pd.Index, read_csv_kwargs: dict,
                        shown: str | None = None) -> "Games | None":
        """:meth:`from_csv` through pyarrow's streaming CSV reader (with the NA words pandas'
        pyarrow engine gives it), or ``None`` (the C engine then reads the file) when pyarrow is
        not installed, an option or a column is not one this path reads exactly as the C engine
        does, or the table has anything to report.

        The file is read in blocks of :data:`_CSV_BLOCK` bytes, and each batch is turned into the
        games' arrays as it comes (:class:`_CsvBatches`: competitor codes, times, scores and
        flags written into arrays sized from the file's line count), so neither pyarrow's table
        of the file nor a column of every row's text is ever held. Once the file is read, the
        memory pyarrow's default pool has freed is given back to the system
        (``release_unused``) before the table's own arrays are made.

        Column types given to pyarrow: ``a`` and ``b`` as text (ids are text: ``007`` stays
        ``007``); ``time`` as timestamps when the first value is an ISO date (with a UTC offset:
        UTC times, the same instants without the zone), as float64 when it is a number (the C
        engine's integers are read as floats too), and otherwise as pyarrow infers it; ``score``
        as float64 (likewise). pyarrow infers the other columns' types from the first batch, and
        a later batch that does not fit them is one of its errors: the C engine then reads the
        file.

        Where the engines differ, and how this path stays exact: pyarrow reads an NA word in a
        competitor column as missing (the C engine reads the name "NA": any missing value here
        goes to the C engine); it reads hexadecimal integers ``0x1F`` (the C engine reads text: a
        file containing ``0x`` goes to the C engine); it reads ISO dates as dates (kept for
        ``time``, whose value is the same either way; a date in another column goes to the C
        engine); a column mixing ``1`` and ``true`` as booleans (kept for ``neutral`` only,
        whose flags are the same either way); and ``+1`` or an integer beyond int64 as a float
        (the same number in every column but ``score_a``/``score_b``, which ``extra`` keeps as
        read: such a file goes to the C engine)."""
        sep = read_csv_kwargs.get("sep", read_csv_kwargs.get("delimiter", ","))
        if (set(read_csv_kwargs) - {"sep", "delimiter"} or len(read_csv_kwargs) > 1
                or not (isinstance(sep, str) and len(sep) == 1 and sep not in "\r\n\"")):
            return None
        if not _have_pyarrow() or len(header) == 0 or not set(header) <= _KNOWN:
            return None
        sides = [c in header for c in _SIDE_SCORES]
        if not {"time", "a", "b"} <= set(header) or any(sides) != all(sides) or not ("score" in header or all(sides)):
            return None  # a missing column: the C engine's error names it
        found, line_ends = _scan_file(path, _HEX + (_PLUS if "score_a" in header else ()))
        if found:
            return None
        try:
            import pyarrow as pa
            import pyarrow.csv as pacsv
        except ImportError:  # a broken install: the C engine reads
            return None
        types = {"a": pa.string(), "b": pa.string(), "score": pa.float64()}
        first = _first_value(path, sep, "time")
        if first is not None and _ISO_DATE.match(first):  # dates: parsed by pyarrow straight into times
            types["time"] = pa.timestamp("ns", tz="UTC") if _OFFSET.search(first[10:]) else pa.timestamp("ns")
        elif first is not None and _is_number(first):
            types["time"] = pa.float64()
        try:
            with pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=_CSV_BLOCK),
                                parse_options=pacsv.ParseOptions(delimiter=sep),
                                convert_options=pacsv.ConvertOptions(column_types=types, null_values=_NA_WORDS,
                                                                     strings_can_be_null=True)) as reader:
                names = reader.schema.names
                if [names[0].lstrip("\ufeff"), *names[1:]] != list(header):
                    return None
                batches = _CsvBatches(reader.schema, line_ends + 1)
                for batch in reader:
                    if not batches.add(batch):
                        return None
                    del batch
        except pa.ArrowException:  # a parse or conversion error: the C engine reads the file and reports
            return None
        read = batches.columns()
        del batches
        pa.default_memory_pool().release_unused()  # the reader's freed buffers, before the table's arrays
        if read is None:
            return None
        checked, cols = read
        del read
        extra = pd.DataFrame({c: cols[c] for c in names if c in _SIDE_SCORES}) if "score_a" in cols else None
        try:
            return cls._from_clean_columns(cols, extra, 2, shown or os.path.basename(path), checked)
        except GamesError:  # a period error: the C engine's values are the ones to show
            return None

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return int(self.a.size)

    def __repr__(self) -> str:
        span = ""
        if len(self):
            span = f", {self.time[self.order[0]]} .. {self.time[self.order[-1]]}"
        per = "" if self.period is None else f", {np.unique(self.period).size} periods"
        return f"Games({len(self)} games, {self.players.size} competitors{span}{per})"

    @property
    def n_players(self) -> int:
        return int(self.players.size)

    @property
    def has_scores(self) -> bool:
        """Whether the games carry each side's points or goals (``score_a``, ``score_b``)."""
        return bool(self.score_a.size) and not np.isnan(self.score_a[0])

    @property
    def is_datetime(self) -> bool:
        return np.issubdtype(self.time.dtype, np.datetime64)

    @property
    def time_base(self) -> str:
        """``"datetime"`` (dates, UTC) or ``"numeric"`` (plain numbers): what the times count in.
        A method fitted on one refuses to forecast or continue with games on the other (a day
        number compared with days since 1970 would be a meaningless gap)."""
        return "datetime" if self.is_datetime else "numeric"

    def check_time_base(self, fitted: str | None, owner: str) -> None:
        """``ValueError`` naming both bases when these games' :attr:`time_base` is not ``fitted``
        (the base ``owner``, a method, was fitted on; ``None``: not recorded, nothing to check)."""
        if fitted is not None and fitted != self.time_base:
            shown = {"datetime": "dates", "numeric": "plain numbers"}
            raise ValueError(f"{owner}: fitted on games with time base {fitted!r} ({shown[fitted]}), but these "
                             f"games have time base {self.time_base!r} ({shown[self.time_base]}); give every "
                             f"table times of one kind")

    @property
    def a_name(self) -> np.ndarray:
        return self.players[self.a]

    @property
    def b_name(self) -> np.ndarray:
        return self.players[self.b]

    def days(self) -> np.ndarray:
        """Time as float days since 1970-01-01 (datetimes) or the numeric time itself."""
        if self.is_datetime:
            return self.time.astype("datetime64[ns]").astype(np.int64) / 86_400e9
        return self.time.astype(float)

    def player_id(self, name) -> int:
        """Integer id of a competitor name (``KeyError`` if unknown)."""
        if self._index is None:
            self._index = {p: i for i, p in enumerate(self.players)}
        try:
            return self._index[str(name)]
        except KeyError:
            raise KeyError(f"unknown competitor {name!r}") from None

    def player_name(self, ids) -> np.ndarray:
        """Names of integer ids."""
        return self.players[np.asarray(ids, dtype=np.int64)]

    def to_frame(self) -> pd.DataFrame:
        """The table as a DataFrame in the caller's row order (names, not ids)."""
        df = pd.DataFrame({"time": self.time, "a": self.a_name, "b": self.b_name, "score": self.score,
                           "neutral": self.neutral.astype(int)})
        if self.period is not None:
            df["period"] = self.period
        if self.has_scores:
            df["score_a"] = self.score_a
            df["score_b"] = self.score_b
        for c in self.extra.columns:
            if c not in df.columns:
                df[c] = self.extra[c].to_numpy()
        return df

    def _replace(self, **changes) -> "Games":
        """A new table with the same columns except ``changes``."""
        kwargs = {name: getattr(self, name) for name in (
            "time", "a", "b", "score", "neutral", "period", "players", "extra", "row", "dropped", "weight",
            "score_a", "score_b")}
        kwargs.update(changes)
        if "time" not in changes:  # the same times: the same order
            kwargs["order"] = self.order
        if not self.has_scores and "score_a" not in changes:  # no scores: constant columns again
            kwargs["score_a"] = kwargs["score_b"] = None
        return Games(**kwargs)

    # ------------------------------------------------------------------ derived tables
    def take(self, idx: Iterable[int]) -> "Games":
        """The games at positions ``idx`` (caller's order), sharing the same competitor ids."""
        idx = np.asarray(list(idx) if not isinstance(idx, np.ndarray) else idx, dtype=np.int64)
        if idx.size == 0:
            raise GamesError("the games table is empty: no rows selected")
        return self._replace(time=self.time[idx], a=self.a[idx], b=self.b[idx], score=self.score[idx],
                             neutral=self.neutral[idx], period=None if self.period is None else self.period[idx],
                             extra=self.extra.iloc[idx], row=self.row[idx], weight=self.weight[idx],
                             **({"score_a": self.score_a[idx], "score_b": self.score_b[idx]} if self.has_scores else {}))

    def split(self, fraction: float = 0.7) -> tuple["Games", "Games"]:
        """Split in time order: the first ``fraction`` of games (by time) and the rest.

        Both parts share competitor ids, so a method fitted on the first can forecast the
        second. Ties in time are broken by input order.
        """
        if not 0 < fraction < 1:
            raise ValueError(f"split fraction must be strictly between 0 and 1, got {fraction!r}")
        k = int(round(fraction * len(self)))
        if k == 0 or k == len(self):
            raise ValueError(f"split({fraction}) of {len(self)} games leaves one part empty")
        first = np.sort(self.order[:k])
        rest = np.sort(self.order[k:])
        return self.take(first), self.take(rest)

    def with_periods(self, every: int | float | str | None = None, *, column: str | None = None,
                     origin=None) -> "Games":
        """Group games into rating periods; returns a new ``Games`` with ``period`` set.

        - ``every=7`` (a number): fixed windows of that many days (or time units for numeric
          times), counted from ``origin`` (default: 1970-01-01, or 0).
        - ``every="week" | "month" | "year"``: calendar periods (ISO weeks start on Monday).
        - ``every="game"``: each game its own period (sequential play).
        - ``column="season"``: the values of an extra column, in time order.

        Period codes are absolute (the same date gives the same code in any table), so tables
        split from one another stay comparable.
        """
        if (every is None) == (column is None):
            raise ValueError("give exactly one of every= (days or 'week'/'month'/'year'/'game') or column=")
        if column is not None:
            if column not in self.extra.columns:
                raise GamesError(f"no column {column!r} to take periods from (extra columns: "
                                 f"{', '.join(self.extra.columns) or 'none'})", column=column)
            values = self.extra[column]
            bad = values.isna().to_numpy()
            if bad.any():
                rows = self.row[np.flatnonzero(bad)]
                raise GamesError(f"column '{column}': {bad.sum()} rows with missing period "
                                 f"({describe_rows(rows, list(values[bad]), None, None)})", rows, column)
            codes = _period_codes_from_column(values, self.time, self.row, None, None, column)
        elif isinstance(every, str):
            if every == "game":
                codes = np.empty(len(self), dtype=np.int64)
                codes[self.order] = np.arange(len(self))
            elif every in _CALENDAR:
                if not self.is_datetime:
                    raise ValueError(f"calendar periods ({every!r}) need dates; these games have numeric times")
                t = pd.DatetimeIndex(self.time)
                if every == "year":
                    codes = t.year.to_numpy().astype(np.int64)
                elif every == "month":
                    codes = (t.year.to_numpy() * 12 + t.month.to_numpy() - 1).astype(np.int64)
                else:  # 1970-01-01 was a Thursday: shift so weeks start on Monday
                    codes = np.floor((self.days() + 3) / 7).astype(np.int64)
            else:
                raise ValueError(f"every must be a number of days or one of 'week', 'month', 'year', 'game'; got {every!r}")
        else:
            length = float(every)
            if not (np.isfinite(length) and length > 0):
                raise ValueError(f"period length must be > 0, got {every!r}")
            t = self.days()
            if origin is not None:
                if isinstance(origin, (int, float, np.integer, np.floating)):
                    t = t - origin  # as given: a lone whole number would otherwise read as a year
                else:
                    t = t - Games.from_arrays([origin], ["x"], ["y"], [1]).days()[0]
            codes = np.floor(t / length + 1e-9).astype(np.int64)
        return self._replace(period=codes)

    def with_weights(self, weights=None, *, margin: tuple[str, str] | None = None, power: float = 0.0) -> "Games":
        r"""A new table whose games carry likelihood weights (Elo, Glicko, Glicko-2, the EKF and
        the smoothers temper each game's log-likelihood by its weight: a heavier game moves
        ratings more; TrueSkill and Weng-Lin refuse weighted games).

        ``weights``: an array aligned with the rows, each finite and > 0. Or ``margin=(col_a,
        col_b)``: weights from the score margin
        :math:`\delta = \max(|\mathtt{score\_a} - \mathtt{score\_b}|, 1)` (a draw counts as a
        one-point game), divided by their mean so that the average game keeps weight 1. With
        ``power`` 0 (the default) :math:`w = \log(1 + \delta)`: FiveThirtyEight's margin-of-victory
        multiplier for NFL Elo, without its autocorrelation correction. Any other ``power`` :math:`= p`
        gives the Box-Cox transform of :math:`1 + \delta`, :math:`w = \bigl((1 + \delta)^p - 1\bigr) / p`,
        a family that tends to the logarithm as :math:`p \to 0` and is linear in the margin at
        :math:`p = 1`: larger :math:`p` lets big wins count for more. :math:`p` is a choice about the data, not a setting of a method, so
        ``tune`` does not fit it: pick it by the tuned methods' one-step-ahead loss on the
        training games (``benchmarks/real_data.py`` does so on a grid).
        """
        if (weights is None) == (margin is None):
            raise ValueError("give exactly one of weights= or margin=(column_a, column_b)")
        if not (isinstance(power, (int, float, np.integer, np.floating)) and np.isfinite(power)):
            raise ValueError(f"power must be a finite number, got {power!r}")
        if power != 0 and margin is None:
            raise ValueError("power= shapes the margin weights: give it with margin=(column_a, column_b)")
        if margin is not None:
            if tuple(margin) == _SIDE_SCORES and self.has_scores:
                sa, sb = self.score_a, self.score_b
            else:
                missing = [c for c in margin if c not in self.extra.columns]
                if missing:
                    raise GamesError(f"no column {missing[0]!r} for the margin (extra columns: "
                                     f"{', '.join(self.extra.columns) or 'none'})", column=missing[0])
                sa = pd.to_numeric(self.extra[margin[0]], errors="coerce").to_numpy(float)
                sb = pd.to_numeric(self.extra[margin[1]], errors="coerce").to_numpy(float)
            bad = np.flatnonzero(~np.isfinite(sa - sb))
            if bad.size:
                raise GamesError(f"columns {margin}: {bad.size} rows without a numeric score "
                                 f"({describe_rows(self.row[bad], list(sa[bad]), None, None)})",
                                 self.row[bad].tolist(), margin[0])
            # a draw (margin 0) counts as a one-point game rather than not at all
            m = np.maximum(np.abs(sa - sb), 1.0)
            w = np.log1p(m) if power == 0 else np.expm1(power * np.log1p(m)) / power
            w = w / w.mean()
        else:
            w = np.array(weights, dtype=float)  # a copy: the caller's array stays theirs (and writeable)
            if w.shape != (len(self),):
                raise ValueError(f"{w.size} weights for {len(self)} games")
            bad = np.flatnonzero(~np.isfinite(w) | (w <= 0))
            if bad.size:
                raise GamesError(f"weights must be finite and > 0 ({describe_rows(self.row[bad], list(w[bad]), None, None)})",
                                 self.row[bad].tolist(), "weight")
        return self._replace(weight=w)

    def batches(self) -> np.ndarray:
        """Start positions (in time order, ``order``) of each rating period, plus ``len(self)``.

        Without periods every game is its own batch.
        """
        n = len(self)
        if self.period is None:
            return np.arange(n + 1, dtype=np.int64)
        p = self.period[self.order]
        starts = np.flatnonzero(np.r_[True, p[1:] != p[:-1]])
        return np.r_[starts, n].astype(np.int64)
