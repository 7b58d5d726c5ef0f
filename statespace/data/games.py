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
from typing import Iterable

import numpy as np
import pandas as pd

from statespace.data import csvfile as _csvfile
from statespace.data.clean_columns import clean_arrays, clean_frame
from statespace.data.columns import _NA_WORDS, GamesError, _check_header
from statespace.data.csv_arrow import read_columns
from statespace.data.periods import period_codes
# DROP_HINT and DroppedRowsWarning: imported from here by the readers' users
from statespace.data.row_errors import DROP_HINT, DroppedRowsWarning, check_frame, frame_rows  # noqa: F401
from statespace.data.weights import game_weights

__all__ = ["Games", "GamesError", "DroppedRowsWarning"]

#: The block size of pyarrow's streaming CSV reader in :meth:`Games.from_csv`: it reads up to 32
#: blocks ahead of the batch being converted, so larger blocks hold more of the file at once.
_CSV_BLOCK = 1 << 16
#: The longest line :meth:`Games.from_csv` reads, in bytes (16 MiB, far beyond any game's row): a
#: longer line is a row error, found before any parser holds it (:mod:`statespace.data.csvfile`).
MAX_LINE_BYTES = 1 << 24


def _have_pyarrow() -> bool:
    """Whether pyarrow is installed (found, not imported: pandas imports it when it needs it)."""
    global _PYARROW
    if _PYARROW is None:
        _PYARROW = importlib.util.find_spec("pyarrow") is not None
    return _PYARROW


_PYARROW: bool | None = None


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


def _no_columns(n: int) -> pd.DataFrame:
    """An ``extra`` without columns, as a DataFrame with named columns leaves it (its empty column
    labels typed as column names are)."""
    return pd.DataFrame(index=pd.RangeIndex(n), columns=pd.Index(["time"])[:0])


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
                 "order", "dropped", "_index", "weight", "score_a", "score_b", "_derived")

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
        self._derived = {}  # arrays derived from the columns, made once (the columns never change)

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
            fast = clean_arrays(given)
            if fast is not None:
                return cls(**fast)
        try:
            frame = pd.DataFrame(given)
        except ValueError as exc:
            raise GamesError(f"columns must have the same length: {exc}") from None
        return cls.from_frame(frame, errors=errors)

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, errors: str = "raise", _line_offset: int | None = None,
                   _source: str | None = None) -> "Games":
        """Build from a DataFrame with columns ``time, a, b, score`` (+ ``neutral``, ``period``,
        ``score_a`` and ``score_b``; with both of these, ``score`` may be left out).

        ``errors="raise"`` (default) raises :class:`GamesError` naming the rows and column of
        every problem, and the way past them (:data:`DROP_HINT`: ``errors="drop"``, on the command
        line ``--drop-invalid``); ``errors="drop"`` drops invalid rows, warns with
        :class:`DroppedRowsWarning` saying how many and which, and records them in ``dropped``.

        A table with nothing to report is built column by column
        (:mod:`statespace.data.clean_columns`), any other row by row
        (:mod:`statespace.data.row_errors`, whose errors name the rows).
        """
        check_frame(df, errors)
        df = df.reset_index(drop=True)
        fast = clean_frame(df, _line_offset, _source)
        if fast is not None:
            return cls(**fast)
        return cls._from_frame_rows(df, errors, _line_offset, _source)

    @classmethod
    def _from_frame_rows(cls, df: pd.DataFrame, errors: str, _line_offset: int | None,
                         _source: str | None) -> "Games":
        """:meth:`from_frame` row by row (:func:`statespace.data.row_errors.frame_rows`): every
        invalid row found and named (raised, or dropped with a warning)."""
        return cls(**frame_rows(df, errors, _line_offset, _source))

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
        """:meth:`from_csv` through pyarrow's streaming CSV reader in blocks of :data:`_CSV_BLOCK`
        bytes, or ``None`` (the C engine then reads the file) when pyarrow is not installed or
        this path may not read the file exactly as the C engine does
        (:func:`statespace.data.csv_arrow.read_columns`)."""
        columns = read_columns(path, header, read_csv_kwargs, shown, pyarrow=_have_pyarrow(), block=_CSV_BLOCK)
        return None if columns is None else cls(**columns)

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

    def _derive(self, key: str, make):
        """``make()``, made once per table (its columns never change) and kept under ``key``."""
        value = self._derived.get(key)
        if value is None:
            value = self._derived[key] = make()
        return value

    @property
    def in_time_order(self) -> bool:
        """Whether the rows are in time order already (``order`` strictly increasing)."""
        return self._derive("in_time_order", lambda: bool(np.all(self.order[1:] > self.order[:-1])))

    def home(self) -> np.ndarray:
        """1.0 where the first-named side plays at home, 0.0 at a neutral venue (read-only)."""
        return self._derive("home", lambda: _freeze(np.subtract(1.0, self.neutral, dtype=np.float64)))

    def steps(self) -> np.ndarray:
        """Each row's position in time order as a float (the time of a filter counting games as its
        clock; read-only)."""
        def make():
            t = np.arange(len(self), dtype=np.float64)
            if not self.in_time_order:
                t[self.order] = t.copy()
            return _freeze(t)

        return self._derive("steps", make)

    def groups(self, column: str) -> tuple[tuple[str, ...], np.ndarray]:
        """The groups of the extra column ``column`` (a league, a competition): their names as
        strings, sorted, and each row's code into them (read-only). A missing column, or a row
        without a group, is a :class:`GamesError` naming it."""
        def make():
            if column not in self.extra.columns:
                raise GamesError(f"no column {column!r} to group the games by; the games' other columns: "
                                 f"{list(map(str, self.extra.columns))}")
            values = self.extra[column]
            missing = np.flatnonzero(values.isna().to_numpy())
            if missing.size:
                raise GamesError(f"column {column!r}: row {int(self.row[missing[0]])} has no group (empty), and "
                                 f"{missing.size - 1} other rows; give every game its group, or drop those rows")
            names, codes = np.unique(values.astype(str).to_numpy(), return_inverse=True)
            return tuple(names.tolist()), _freeze(codes.astype(np.int64))

        return self._derive(f"groups:{column}", make)

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
        return self._replace(period=period_codes(self, every, column, origin))

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
        return self._replace(weight=game_weights(self, weights, margin, power))

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
