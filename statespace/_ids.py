"""Competitor ids at array speed: the two id columns of a game table turned into integer codes
into one sorted list of names, hashing the values once and converting only the distinct ones to
text (the names a user sees follow :func:`statespace._columns._id_text`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._columns import _id_text

__all__ = ["competitor_codes"]

#: Non-negative integer ids below this bound (and below 4 codes per game) are coded by direct
#: lookup rather than by hashing.
DIRECT_LOOKUP_MAX = 1 << 26


def _distinct_codes(values) -> tuple[np.ndarray, pd.Series] | None:
    """``(codes, distinct)`` of one id column, or ``None`` when a value is missing (the caller's
    slow path names the rows)."""
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        codes = np.asarray(values.codes, dtype=np.int64)
        if codes.size and codes.min() < 0:
            return None
        return codes, pd.Series(np.asarray(values.categories, dtype=object)
                                if values.categories.dtype == object else values.categories)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu" and arr.size:
        lo, hi = int(arr.min()), int(arr.max())
        if lo >= 0 and hi < min(DIRECT_LOOKUP_MAX, 4 * arr.size + 1024):
            present = np.zeros(hi + 1, dtype=bool)
            present[arr] = True
            distinct = np.flatnonzero(present)
            lookup = np.empty(hi + 1, dtype=np.int64)
            lookup[distinct] = np.arange(distinct.size)
            return lookup[arr], pd.Series(distinct.astype(arr.dtype))
    codes, distinct = pd.factorize(arr)
    if codes.size and codes.min() < 0:
        return None
    return codes.astype(np.int64, copy=False), pd.Series(distinct)


def competitor_codes(a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Integer codes of sides ``a`` and ``b`` into ``players`` (names as text, sorted by code
    point, exactly as :meth:`statespace.Games.from_frame` builds them), or ``None`` when some id
    is missing or empty, or a competitor meets itself: the caller then takes the row-by-row path,
    which names the offending rows."""
    sides = []
    for values in (a, b):
        coded = _distinct_codes(values)
        if coded is None:
            return None
        codes, distinct = coded
        text = _id_text(distinct, np.zeros(len(distinct), dtype=bool)).to_numpy(dtype=object)
        if len(text) and (text == "").any():
            return None
        sides.append((codes, text))
    # two raw values may be one name (2 and 2.0, composed and decomposed spellings)
    (ca, ta), (cb, tb) = sides
    merged, names = pd.factorize(np.concatenate([ta, tb]))
    names = np.asarray(names, dtype=str)
    rank = np.argsort(names, kind="stable")
    position = np.empty_like(rank)
    position[rank] = np.arange(rank.size)
    to_player = position[merged]
    a_codes = to_player[: len(ta)][ca]
    b_codes = to_player[len(ta):][cb]
    if (a_codes == b_codes).any():
        return None
    return a_codes, b_codes, names[rank].astype(object)
