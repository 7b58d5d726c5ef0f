"""Competitor ids at array speed: the two id columns of a game table turned into integer codes
into one sorted list of names, hashing the values once and converting only the distinct ones to
text (the names a user sees follow :func:`statespace.data.columns._id_text`).

The paths, fastest first:

- two integer arrays whose ids are small non-negative numbers: one lookup table over the ids of
  both sides, no hashing at all;
- categorical columns: their codes, with only the categories that occur turned into names;
- anything else (text, floats, large or negative integers, pandas' string arrays): one hash of
  each column (``factorize``; pyarrow's dictionary encoding for Arrow-backed strings), the
  distinct values turned into names and merged across the sides (``2`` and ``2.0``, or the
  composed and decomposed spellings of a name, are one competitor).

Whatever the path, the result is exactly the table the row-by-row path of
:meth:`statespace.Games.from_frame` builds; a column it cannot code exactly that way (a missing
or empty id, a competitor against itself, an object column mixing kinds of values whose equality
and text disagree, such as ``1`` and ``True``) gives ``None``, and the caller takes that path.

:class:`StreamedNames` codes id columns that arrive in pieces (the batches of pyarrow's CSV
reader) the same way, holding only the distinct ids rather than the text of every row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.ascii_ids import ascii_codes

from statespace.data.columns import _id_text

__all__ = ["competitor_codes", "StreamedNames"]

#: Non-negative integer ids below this bound (and below 4 codes per game) are coded by direct
#: lookup rather than by hashing.
DIRECT_LOOKUP_MAX = 1 << 26


def _plain_integers(values) -> np.ndarray | None:
    """``values`` as a NumPy integer array when it is one (or a Series or array wrapping one,
    without a copy), else ``None``."""
    if isinstance(values, pd.Series):
        if not (isinstance(values.dtype, np.dtype) and values.dtype.kind in "iu"):
            return None
        values = values.to_numpy()
    elif not isinstance(values, np.ndarray):
        return None
    return values if values.dtype.kind in "iu" and values.ndim == 1 else None


def _integer_codes(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None | bool:
    """Both sides by one lookup table when the ids are small non-negative integers: ``(a codes,
    b codes, players)``, ``None`` for a competitor against itself, ``False`` when the ids do not
    suit a table (the caller hashes them)."""
    table = _direct_table(a, b)
    if table is None:
        return False
    if a.size == b.size and np.any(a == b):
        return None
    distinct, lookup = table
    names = distinct.astype(str)  # an integer's name is its decimal text (as _id_text writes it)
    rank = np.argsort(names, kind="stable")
    lookup[distinct[rank]] = np.arange(rank.size)
    return np.take(lookup, a), np.take(lookup, b), names[rank].astype(object)


def _direct_table(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For non-negative integer ids below :data:`DIRECT_LOOKUP_MAX` (and 4 per game): the distinct
    ids, ascending, and a lookup array over ``0..max`` with each its rank; ``None`` otherwise."""
    if not all(x.size for x in arrays):
        return None
    lo = min(int(x.min()) for x in arrays)
    hi = max(int(x.max()) for x in arrays)
    if lo < 0 or hi >= min(DIRECT_LOOKUP_MAX, 4 * sum(x.size for x in arrays) + 1024):
        return None
    present = np.zeros(hi + 1, dtype=bool)
    for x in arrays:
        present[x] = True
    distinct = np.flatnonzero(present)
    lookup = np.zeros(hi + 1, dtype=np.int64)
    lookup[distinct] = np.arange(distinct.size)
    return distinct, lookup


def _exact_objects(distinct: pd.Series) -> bool:
    """Whether hashing an object column kept apart every pair of values whose names differ:
    true when its distinct values are all text or all integers (within one kind, equal values
    have equal text); ``1``, ``1.0`` and ``True`` hash alike but are named ``1``, ``1.0`` and
    ``True`` by the row-by-row path."""
    values = distinct.to_numpy(dtype=object)
    if all(isinstance(v, str) for v in values):
        return True
    return all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in values)


def _exact(codes: np.ndarray, distinct, used: np.ndarray | None = None):
    """``(codes, distinct, used)`` of a factorised column, or ``None`` when a value was missing
    (code -1) or an object column's hashing may have merged values with different names."""
    if codes.size and codes.min() < 0:
        return None
    distinct = pd.Series(distinct)
    if distinct.dtype == object and not _exact_objects(distinct if used is None else distinct[used]):
        return None
    return codes, distinct, used


def _distinct_codes(values) -> tuple[np.ndarray, pd.Series, np.ndarray | None] | None:
    """``(codes, distinct, used)`` of one id column: ``codes`` index ``distinct`` (an integer
    array of any width, possibly a fresh buffer the caller may overwrite), ``used`` marks the
    distinct values that occur (``None``: all do). ``None`` when a value is missing or the column
    cannot be coded exactly (the caller's slow path names the rows)."""
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        codes = np.asarray(values.codes)
        if codes.size and codes.min() < 0:
            return None
        cats = values.categories
        used = np.zeros(len(cats), dtype=bool)
        used[codes] = True  # a category no game has is no competitor
        return _exact(codes, pd.Series(np.asarray(cats, dtype=object) if cats.dtype == object else cats), used)
    if isinstance(values, pd.api.extensions.ExtensionArray) and not isinstance(values, pd.arrays.NumpyExtensionArray):
        return _exact(*values.factorize())  # Arrow-backed text: pyarrow's dictionary encoding
    arr = np.asarray(values)
    table = _direct_table(arr) if arr.dtype.kind in "iu" else None
    if table is not None:
        distinct, lookup = table
        return np.take(lookup, arr), pd.Series(distinct.astype(arr.dtype)), None
    return _exact(*pd.factorize(arr))


def _players(text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(to_player, players)`` of competitor names (an object array of text, one entry per raw
    id, equal names allowed): ``players`` the distinct names sorted by code point (as
    ``np.unique`` sorts them; hashing first and sorting only the distinct names is faster on big
    tables), ``to_player`` each entry's position in it (int64)."""
    merged, names = pd.factorize(text)
    names = np.asarray(names, dtype=str)
    rank = np.argsort(names, kind="stable")
    position = np.empty_like(rank)
    position[rank] = np.arange(rank.size)
    return position[merged].astype(np.int64, copy=False), names[rank].astype(object)


def competitor_codes(a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Integer codes of sides ``a`` and ``b`` into ``players`` (names as text, sorted by code
    point, exactly as :meth:`statespace.Games.from_frame` builds them), or ``None`` when some id
    is missing or empty, or a competitor meets itself: the caller then takes the row-by-row path,
    which names the offending rows."""
    ia, ib = _plain_integers(a), _plain_integers(b)
    if ia is not None and ib is not None:
        coded = _integer_codes(ia, ib)
        if coded is not False:
            return coded
    coded = ascii_codes(a, b)  # NumPy text of ASCII names: no Python object per row
    if coded is not None:
        return None if np.any(coded[0] == coded[1]) else coded
    sides = []
    for values in (a, b):
        coded = _distinct_codes(values)
        if coded is None:
            return None
        codes, distinct, used = coded
        if used is not None:
            distinct = distinct[used]
        text = _id_text(distinct, np.zeros(len(distinct), dtype=bool)).to_numpy(dtype=object)
        if len(text) and (text == "").any():
            return None
        sides.append((codes, text, used))
    # two raw values may be one name (2 and 2.0, composed and decomposed spellings)
    (ca, ta, ua), (cb, tb, ub) = sides
    to_player, players = _players(np.concatenate([ta, tb]))
    out = []
    for codes, table, used in ((ca, to_player[: len(ta)], ua), (cb, to_player[len(ta):], ub)):
        if used is not None:  # categories no game has sit between the ones that occur
            full = np.zeros(used.size, dtype=np.int64)
            full[used] = table
            table = full
        if codes.dtype == np.int64 and codes.flags.writeable and codes.base is None:
            out.append(np.take(table, codes, out=codes, mode="clip"))  # a fresh buffer: reused
        else:
            out.append(np.take(table, codes))
    a_codes, b_codes = out
    if a_codes.shape != b_codes.shape or np.any(a_codes == b_codes):
        return None
    return a_codes, b_codes, players


class StreamedNames:
    """Competitor codes of id columns read in pieces (the text arrays of pyarrow's CSV reader,
    batch by batch), both sides sharing one set of competitors, without holding the text of
    every row.

    :meth:`add` takes a piece and where its codes go (rows of one of the caller's int64 arrays);
    pieces wait until they hold :attr:`ENCODE_AT` ids, which are then hashed together (pyarrow's
    dictionary encoding) and written as positions among the distinct raw ids met so far. The
    distinct ids of each encoding wait in turn, and are merged into those met before (one hash
    of both, rewriting the codes written since) once they number at least as many as those and
    at least :attr:`MERGE_AT`, so every id is hashed about once however many batches and
    competitors there are. :meth:`finish` makes the names of the distinct ids only
    (:func:`statespace.data.columns._id_text`: stripped, in NFC form, so raw ids that differ only
    there are one competitor), sorted as :func:`competitor_codes` sorts them.
    """

    #: Ids (both sides) hashed at once.
    ENCODE_AT = 1 << 17
    #: The fewest waiting distinct ids worth a merge.
    MERGE_AT = 1 << 16

    def __init__(self) -> None:
        self._distinct = None  # a pyarrow array of the distinct raw ids merged so far
        self._pending: list = []  # the distinct ids of each encoding since
        self._pending_size = 0
        self._written: list[list] = []  # [codes, start, stop, []]: rows coded since, positions in distinct + pending
        self._waiting: list[list] = []  # [codes, start, stop, pieces]: rows read, not coded yet
        self._waiting_size = 0

    def _known(self) -> int:
        """How many distinct ids the merges so far have found."""
        return 0 if self._distinct is None else len(self._distinct)

    def add(self, column, codes: np.ndarray, start: int) -> bool:
        """Take a piece (a pyarrow text array) whose codes go to ``codes[start:start + len]`` (an
        int64 array, kept by reference and written until :meth:`finish`); ``False`` when an id is
        missing."""
        if column.null_count:
            return False
        stop = start + len(column)
        if stop == start:
            return True
        _extend(self._waiting, codes, start, stop).append(column)
        self._waiting_size += stop - start
        if self._waiting_size >= self.ENCODE_AT:
            self._encode()
        return True

    def _encode(self) -> None:
        """Hash the waiting pieces together and write their codes (positions among the distinct
        ids merged so far followed by those waiting for a merge)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(pa.concat_arrays([p for *_, pieces in self._waiting for p in pieces]))
        indices = encoded.indices.to_numpy(zero_copy_only=False)
        offset = self._known() + self._pending_size
        at = 0
        for codes, start, stop, _ in self._waiting:
            out = codes[start:stop]
            np.copyto(out, indices[at:at + stop - start])
            if offset:
                out += offset
            at += stop - start
            _extend(self._written, codes, start, stop)
        self._pending.append(encoded.dictionary)
        self._pending_size += len(encoded.dictionary)
        del encoded, indices
        self._waiting, self._waiting_size = [], 0
        if self._pending_size >= max(self._known(), self.MERGE_AT):
            self._merge()

    def _merge(self) -> None:
        """Fold the waiting distinct ids into those merged before and rewrite the codes written
        since as positions among them (those merged before come first and keep their positions)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        pieces = self._pending if self._distinct is None else [self._distinct, *self._pending]
        encoded = pc.dictionary_encode(pa.concat_arrays(pieces))
        position = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        for codes, start, stop, _ in self._written:
            out = codes[start:stop]
            np.take(position, out, out=out, mode="clip")
        self._distinct = encoded.dictionary
        self._pending, self._pending_size, self._written = [], 0, []

    def finish(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(to_player, players)``: each code written (every piece's, once this returns) as a
        competitor, a position in ``players`` (the names, sorted by code point); ``None`` when no
        id was read or an id is empty once stripped."""
        if self._waiting:
            self._encode()
        if self._pending:
            self._merge()
        if self._distinct is None or not len(self._distinct):
            return None
        distinct = pd.Series(pd.arrays.ArrowStringArray(self._distinct), copy=False)
        text = _id_text(distinct, np.zeros(len(distinct), dtype=bool)).to_numpy(dtype=object)
        if (text == "").any():
            return None
        return _players(text)


def _extend(ranges: list[list], codes: np.ndarray, start: int, stop: int) -> list:
    """Add rows ``start:stop`` of ``codes`` to a list of ``[codes, start, stop, pieces]`` ranges
    (the range of ``codes`` that ends at ``start`` grows, else a new one is appended) and return
    that range's list of pieces."""
    for r in ranges:
        if r[0] is codes and r[2] == start:
            r[2] = stop
            return r[3]
    ranges.append([codes, start, stop, []])
    return ranges[-1][3]
