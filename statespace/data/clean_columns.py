"""Building a game table column by column, at array speed, when no row has anything to report:
each column read and checked whole (competitor ids hashed once, :mod:`statespace.data.ids`), no
row-by-row pass. Every function gives the keyword arguments of
:class:`~statespace.data.games.Games`, exactly those of the row-by-row path
(:mod:`statespace.data.row_errors`), or ``None`` as soon as a value would be a row error: the
caller then takes that path, whose errors name the rows and columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.columns import _KNOWN, _parse_flag, _parse_time, _period_codes_from_column
from statespace.data.ids import competitor_codes

#: What :meth:`~statespace.data.games.Games.from_arrays` takes column by column (anything else goes
#: through a DataFrame).
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


def _own(x: np.ndarray, raw: pd.Series) -> np.ndarray:
    """``x`` (read from the caller's column ``raw``), copied when it may share memory with it: a
    table keeps its own arrays (freezing the caller's would make them read-only, and the
    caller's later writes would change the table)."""
    if isinstance(raw.dtype, np.dtype) and not np.may_share_memory(x, raw.to_numpy()):
        return x
    return x.copy()


def clean_frame(df: pd.DataFrame, line_offset: int | None, source: str | None) -> dict | None:
    """:meth:`~statespace.data.games.Games.from_frame` of a checked frame (columns present, index
    0 to n - 1) with nothing to report, column by column; ``None`` when some row is invalid."""
    cols = {c: df[c] for c in _KNOWN if c in df.columns}
    extra_cols = [c for c in df.columns if c not in ("time", "a", "b", "score", "neutral", "period")]
    return clean_columns(cols, df[extra_cols], line_offset, source)


def clean_arrays(given: dict) -> dict | None:
    """:meth:`~statespace.data.games.Games.from_arrays` without a DataFrame, for tables with
    nothing to report (the table's columns, as :func:`clean_columns` gives them): ``None``
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
    return clean_columns(dict(given), extra)


def clean_columns(cols: dict, extra: pd.DataFrame | None, line_offset: int | None = None,
                  source: str | None = None, checked: dict | None = None) -> dict | None:
    """The table (its constructor's keyword arguments) of columns with nothing to report
    (``time``, ``a``, ``b``, and any of ``score``, ``neutral``, ``period``, ``score_a``,
    ``score_b``: arrays or Series of one length; the dict is emptied as they are read), column
    by column without a row-by-row pass; ``None`` as soon as a value would be a row error.
    Builds exactly the table of the row-by-row path (tests/test_games_arrays.py and tests/test_loading.py check it).

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
    return dict(time=t, a=a_codes, b=b_codes, score=score, neutral=neutral, period=period, players=players,
                extra=extra, score_a=sa, score_b=sb)
