"""Reading a long table of matches (one row per competitor of a match) into the arrays of
:class:`statespace.data.matches.Matches`, every invalid value named by its rows and column.

The checks come in two rounds, each collecting every problem it finds and raising them as one
:class:`~statespace.data.columns.GamesError` worded as the game table's row errors are
(:mod:`statespace.data.row_errors`): first the values of each row (a missing match, competitor or
time; a weight outside [0, 1]; a rank that is not a whole number; a score that is not a
number), then, once every value reads, the matches they make (rows of a match that disagree on
its time, a competitor twice in one match, rows of a side that disagree on its rank or score, a
side whose members all have weight 0, a match of fewer than two sides). Nothing is dropped.

Ranks are read as places: only their order counts, and they are stored as competition ranks
(the number of sides placed strictly ahead: places 1, 2, 2, 4 are ranks 0, 1, 1, 3; 1, 1, 2 are
0, 0, 2). From scores alone, a higher score places first and equal scores tie.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.columns import TIME_RANGE, GamesError, _id_text, _Problem, _read_time, describe_rows
from statespace.data.ids import _players

__all__ = ["read_long", "competition_ranks", "OWN_SIDE"]

#: the side label of a competitor whose ``side`` is missing or empty (a side of its own); no typed
#: label starts with a NUL character, so it cannot merge with a named side
OWN_SIDE = "\x00own:"


def _shown(side_label: np.ndarray) -> np.ndarray:
    """Side labels as shown: a competitor on its own side is labelled by its name."""
    labels = pd.Series(side_label, dtype=object)
    own = labels.str.startswith(OWN_SIDE, na=False)
    if own.any():
        labels[own] = labels[own].str.slice(len(OWN_SIDE))
    return labels.to_numpy(dtype=object)


def _labels(raw: pd.Series) -> tuple[pd.Series, np.ndarray]:
    """The text of an id column (as the game table names competitors: whole numbers as integers,
    text stripped and in NFC form) and the mask of its missing or empty values."""
    missing = raw.isna().to_numpy()
    text = _id_text(raw, missing)
    bad = missing | text.eq("").to_numpy()
    return text.where(~bad, None), bad


def _numbers(raw: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A column as float64 (anything unreadable NaN) and the mask of its missing values."""
    missing = raw.isna().to_numpy()
    if pd.api.types.is_bool_dtype(raw):  # True is no rank, weight or score
        return np.full(len(raw), np.nan), missing
    values = np.array(pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan))
    if raw.dtype == object:  # nor is a True among other values, which pandas reads as 1
        values[raw.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)] = np.nan
    return values, missing


def competition_ranks(group: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Each entry's competition rank within its ``group``: how many entries of the group have a
    strictly smaller ``key`` (ties share a rank; the next rank skips: keys 5, 7, 7, 9 give 0, 1,
    1, 3)."""
    order = np.lexsort((key, group))
    g, k = group[order], key[order]
    n = order.size
    new_group = np.r_[True, g[1:] != g[:-1]] if n else np.zeros(0, dtype=bool)
    new_run = new_group | np.r_[True, k[1:] != k[:-1]] if n else new_group
    idx = np.arange(n)
    group_start = np.maximum.accumulate(np.where(new_group, idx, 0)) if n else idx
    run_start = np.maximum.accumulate(np.where(new_run, idx, 0)) if n else idx
    out = np.empty(n, dtype=np.int64)
    out[order] = run_start - group_start
    return out


def _check_columns(frame, names: dict[str, str | None]) -> tuple[bool, bool, bool, bool]:
    """The checks of the whole frame: a DataFrame (else ``TypeError``) with rows, each column
    once, the match, time and competitor columns, and a rank or a score column; whether it has
    (side, rank, score, weight) columns."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    dupes = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if dupes:
        raise GamesError(f"duplicate column name{'s' if len(dupes) > 1 else ''} "
                         f"{', '.join(map(repr, dupes))}: each column must appear once", column=dupes[0])
    found = ", ".join(map(str, frame.columns)) or "none"
    missing = [names[k] for k in ("match", "time", "competitor") if names[k] not in frame.columns]
    if missing:
        raise GamesError(f"missing column{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
                         f"(columns found: {found})", column=missing[0])
    has = [names[k] is not None and names[k] in frame.columns for k in ("side", "rank", "score", "weight")]
    if not (has[1] or has[2]):
        raise GamesError(f"neither a rank column {names['rank']!r} nor a score column {names['score']!r}: give "
                         f"one, the matches' result (columns found: {found})", column=names["rank"] or names["score"])
    if len(frame) == 0:
        raise GamesError("the matches table is empty: no rows to read")
    return tuple(has)


def _raise(problems: list[_Problem]) -> None:
    """One :class:`GamesError` naming every problem's rows and column (as the game table's row
    errors do), if there is any."""
    if not problems:
        return
    msgs = [f"column '{p.column}': {len(p.rows)} row{'s' if len(p.rows) > 1 else ''} with "
            f"{p.reason} ({describe_rows(p.rows, p.values, None, None)})" for p in problems]
    rows = sorted(set(np.concatenate([p.rows for p in problems]).tolist()))
    raise GamesError("invalid matches: " + " | ".join(msgs), rows=rows, column=problems[0].column)


def _spread(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row, whether the rows of its ``group`` hold more than one value (NaN one of them)."""
    return (pd.Series(values).groupby(group).transform("nunique", dropna=False) > 1).to_numpy()


def read_long(frame: pd.DataFrame, names: dict[str, str | None]) -> dict:
    """The keyword arguments of :class:`~statespace.data.matches.Matches` read from ``frame``
    (``names``: the roles ``match, time, competitor, side, rank, score, weight`` -> column
    names); every invalid value a :class:`GamesError` naming its rows (0-based positions in the
    frame) and column."""
    has_side, has_rank, has_score, has_weight = _check_columns(frame, names)
    df = frame.reset_index(drop=True)
    n = len(df)
    problems: list[_Problem] = []

    def flag(column: str, reason: str, mask: np.ndarray, shown) -> None:
        if mask.any():
            rows = np.flatnonzero(mask)
            problems.append(_Problem(column, reason, rows, list(pd.Series(shown).iloc[rows])))

    mcol, ccol, scol = names["match"], names["competitor"], names["side"]
    match_text, bad = _labels(df[mcol])
    flag(mcol, "missing match", bad, df[mcol])
    comp_text, bad = _labels(df[ccol])
    flag(ccol, "missing competitor", bad, df[ccol])
    if has_side:  # a row without a side is a competitor on its own (free-for-all within a table of teams)
        side_text, solo = _labels(df[scol])
        side_text = side_text.where(~solo, OWN_SIDE + comp_text.astype(object).fillna(""))
    else:  # free-for-all: each competitor its own side
        side_text = comp_text

    tcol = names["time"]
    when, bad, missing, outside = _read_time(df[tcol])
    flag(tcol, "missing time", missing, df[tcol])
    flag(tcol, f"a date outside {TIME_RANGE}", outside, df[tcol])
    flag(tcol, "unparseable time", bad & ~missing & ~outside, df[tcol])

    weight = np.ones(n)
    if has_weight:
        wcol = names["weight"]
        weight, _ = _numbers(df[wcol])
        flag(wcol, "weight outside [0, 1] or missing", ~((weight >= 0) & (weight <= 1)), df[wcol])

    place = None
    if has_rank:
        rcol = names["rank"]
        place, _ = _numbers(df[rcol])
        flag(rcol, "a rank that is not a finite whole number",
             ~np.isfinite(place) | (np.round(place) != place), df[rcol])
    score = np.full(n, np.nan)
    if has_score:
        ocol = names["score"]
        score, missing = _numbers(df[ocol])
        # with ranks given, a score may be absent; from scores alone, each row needs one
        flag(ocol, "a score that is not a finite number",
             ~np.isfinite(score) & (~missing | (not has_rank)), df[ocol])
    _raise(problems)

    match_code, labels = pd.factorize(match_text.to_numpy(dtype=object))  # matches in order of first row
    side_code = pd.factorize(pd.MultiIndex.from_arrays([match_code, side_text.to_numpy(dtype=object)]))[0]
    flag(tcol, "rows of one match that disagree on its time", _spread(match_code, when), df[tcol])
    twice = pd.DataFrame({"m": match_code, "c": comp_text.to_numpy(dtype=object)}).duplicated(keep=False).to_numpy()
    flag(ccol, "a competitor twice in one match", twice, df[ccol])
    if has_rank:
        flag(names["rank"], "rows of one side that disagree on its rank", _spread(side_code, place),
             df[names["rank"]])
    if has_score:
        flag(names["score"], "rows of one side that disagree on its score", _spread(side_code, score),
             df[names["score"]])
    if has_weight:  # a side must have played: with every member at weight 0 its performance is 0, not a result
        idle = pd.Series(weight).groupby(side_code).transform("max").to_numpy() <= 0.0
        flag(names["weight"], "a side whose members all have weight 0 (none of them played)", idle,
             df[names["weight"]])
    n_sides = pd.Series(side_code).groupby(match_code).transform("nunique").to_numpy()
    flag(scol if has_side else ccol, "a match of fewer than 2 sides", n_sides < 2,
         df[scol] if has_side else df[ccol])
    _raise(problems)
    return _build(df, when, match_code, np.asarray(labels, dtype=object), side_code,
                  side_text.to_numpy(dtype=object), comp_text.to_numpy(dtype=object), weight,
                  place if has_rank else -score, score)


def _build(df, when, match_code, labels, side_code, side_text, comp_text, weight, key, score) -> dict:
    """The CSR arrays of valid rows: matches in time order (a stable sort: a tie keeps the order
    of the matches' first rows), sides of a match by rank and then their smallest competitor id,
    members of a side by competitor id, so the order of the rows within a match does not count."""
    member, names = _players(comp_text)
    n_matches = labels.size
    first_row = np.zeros(n_matches, dtype=np.int64)
    first_row[match_code[::-1]] = np.arange(match_code.size)[::-1]  # the smallest row of each match
    match_when = when[first_row]
    match_time = _days(match_when)
    morder = np.argsort(match_time, kind="stable")
    position = np.empty(n_matches, dtype=np.int64)
    position[morder] = np.arange(n_matches)

    n_sides = int(side_code.max()) + 1
    side_row = np.zeros(n_sides, dtype=np.int64)
    side_row[side_code[::-1]] = np.arange(side_code.size)[::-1]
    side_low = np.full(n_sides, np.iinfo(np.int64).max)
    np.minimum.at(side_low, side_code, member)
    side_match = position[match_code[side_row]]
    side_rank = competition_ranks(side_match, key[side_row])
    sorder = np.lexsort((side_low, side_rank, side_match))
    side_pos = np.empty(n_sides, dtype=np.int64)
    side_pos[sorder] = np.arange(n_sides)

    rows = np.lexsort((member, side_pos[side_code]))
    side_ptr = np.r_[0, np.cumsum(np.bincount(side_code, minlength=n_sides)[sorder])].astype(np.int64)
    match_ptr = np.r_[0, np.cumsum(np.bincount(side_match, minlength=n_matches))].astype(np.int64)
    return dict(time=match_time[morder], when=match_when[morder], match_ptr=match_ptr, side_ptr=side_ptr,
                member=member[rows], weight=weight[rows], rank=side_rank[sorder], score=score[side_row[sorder]],
                names=names, label=labels[morder], side_label=_shown(side_text[side_row[sorder]]), row=rows)


def _days(when: np.ndarray) -> np.ndarray:
    """Times as float64: days since 1970-01-01 for dates (as :meth:`statespace.Games.days`
    counts them), plain numbers as they are."""
    if np.issubdtype(when.dtype, np.datetime64):
        return when.astype("datetime64[ns]").astype(np.int64) / 86_400e9
    return when.astype(np.float64)
