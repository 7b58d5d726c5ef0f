"""The row-by-row reading of a game table, whose errors name the rows and the column: every invalid
value found (a missing or unreadable time, competitor, score or flag, a competitor against
itself, a score that disagrees with both sides' scores, a period that comes back) and raised as
one :class:`~statespace.data.columns.GamesError` ending with :data:`DROP_HINT`, or, with
``errors="drop"``, those rows dropped with a :class:`DroppedRowsWarning` and recorded in the
table's ``dropped``. :meth:`statespace.data.games.Games.from_frame` takes this path only when the
column-by-column one (:mod:`statespace.data.clean_columns`) finds something to report.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from statespace.data.columns import (TIME_RANGE, _SIDE_SCORES, GamesError, _id_text, _parse_flag,
                                     _period_codes_from_column, _Problem, _read_time, describe_rows)

_SCORES = (0.0, 0.5, 1.0)
#: what a row error ends with: the way to read the other rows, in Python and on the command line
DROP_HINT = '; to skip invalid rows, pass errors="drop" (statespace compare/rate: --drop-invalid)'


class DroppedRowsWarning(UserWarning):
    """Invalid rows were dropped because the caller asked for ``errors="drop"``."""


def check_frame(df: pd.DataFrame, errors: str) -> None:
    """The checks of a whole frame before its rows are read: ``errors`` is ``"raise"`` or
    ``"drop"`` (else a ``ValueError``), ``df`` a DataFrame (else a ``TypeError``) with rows, each
    column once, and ``time``, ``a``, ``b`` and ``score`` or both sides' scores (else a
    :class:`~statespace.data.columns.GamesError` naming the column)."""
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
    if len(df) == 0:
        raise GamesError("the games table is empty: no rows to rate")


def frame_rows(df: pd.DataFrame, errors: str, line_offset: int | None, source: str | None) -> dict:
    """:meth:`~statespace.data.games.Games.from_frame` row by row: every invalid row found and
    named (raised, or dropped with a warning); the table's columns (the keyword arguments of
    :class:`~statespace.data.games.Games`)."""
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
    if problems and errors == "raise":
        msgs = [f"column '{p.column}': {len(p.rows)} row{'s' if len(p.rows) > 1 else ''} with "
                f"{p.reason} ({describe_rows(p.rows, p.values, line_offset, source)})"
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
        # stacklevel: the caller of Games._from_frame_rows, which calls this
        warnings.warn(f"dropped {int(invalid.sum())} invalid row{'s' if invalid.sum() > 1 else ''} "
                      f"of {n}: {listed}", DroppedRowsWarning, stacklevel=3)
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
                                                 keep_idx, line_offset, source)
    return dict(time=time, a=inv[:k], b=inv[k:], score=num[keep_idx], neutral=neu[keep_idx] == 1,
                period=period_codes, players=players.astype(object), extra=extra,
                row=None if all_rows else keep_idx,
                dropped=dropped, score_a=None if sides is None else sides["score_a"][keep_idx],
                score_b=None if sides is None else sides["score_b"][keep_idx])
