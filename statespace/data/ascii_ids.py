"""Competitor codes of two columns of ASCII names held as NumPy text, at array speed.

:func:`statespace.data.ids.competitor_codes` makes the names of a table's competitors the way a
user sees them (text stripped, in Unicode NFC form, sorted by code point) through pandas' hashing
of Python strings: about 2.5 s for a million games between a million names. When both id columns
are fixed-width NumPy text (``dtype`` kind ``U``) of ASCII characters only, none of that needs a
Python object per row: an ASCII name is its own NFC form, and its characters, one byte each,
packed big-endian into 64-bit words, compare as integers in code-point order. :func:`ascii_codes`
then hashes the words (one integer key a name; several words folded into one key, every code
checked against its first row's words, so that a collision of keys can never merge two names),
sorts the distinct names by their words and makes Python strings of the distinct names only.

It gives up, returning ``None`` so that the general path runs (with its row errors), when a
column is not such text, a character is beyond ASCII, a name is empty or has a leading or
trailing character ``str.strip`` removes, or two keys collide.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["ascii_codes"]

#: the ASCII characters ``str.strip()`` removes (``str.isspace``: tab to carriage return, the
#: four information separators 0x1c-0x1f, space)
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
#: folds a name's words into one key (an odd 64-bit multiplier: the golden ratio's)
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _words(column: np.ndarray, width: int) -> np.ndarray | None:
    """``(n, k)`` uint64: each name's characters as bytes, zero-padded to ``8 k >= width``, packed
    big-endian (the first character in the top byte) so that integer order is code-point order;
    ``None`` when a character is beyond ASCII."""
    n = column.shape[0]
    chars = np.ascontiguousarray(column).view(np.uint32).reshape(n, column.dtype.itemsize // 4)
    if chars.size and chars.max() >= 128:
        return None
    k = -(-width // 8)
    packed = np.zeros((n, 8 * k), dtype=np.uint8)
    packed[:, :chars.shape[1]] = chars
    return packed.view(">u8").astype(np.uint64)


def ascii_codes(a, b) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(a codes, b codes, players)`` as :func:`statespace.data.ids.competitor_codes` gives them
    (codes into ``players``, the distinct names as Python strings sorted by code point), or
    ``None`` when the columns are not plain ASCII text (see the module docstring). A competitor
    meeting itself is left to the caller."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype.kind == "U" and b.dtype.kind == "U"
            and a.ndim == 1 and b.ndim == 1 and a.size and b.size):
        return None
    width = max(a.dtype.itemsize, b.dtype.itemsize) // 4
    if width == 0:
        return None  # every name empty
    wa, wb = _words(a, width), _words(b, width)
    if wa is None or wb is None:
        return None
    words = np.concatenate([wa, wb])
    key = words[:, 0] * _MIX
    for j in range(1, words.shape[1]):
        key = (key ^ words[:, j]) * _MIX
    # pandas' integer hash keeps the low bits, where short names are all zeros: spread the high
    # ones down (an odd multiplier and this shift are one-to-one: one word stays an exact key)
    key ^= key >> np.uint64(29)
    codes, _ = pd.factorize(key, sort=False)
    n_names = int(codes.max()) + 1
    first = np.empty(n_names, dtype=np.int64)
    first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)  # each code's first row
    distinct = words[first]
    if words.shape[1] > 1 and not np.array_equal(words, distinct[codes]):
        return None  # two names share a key
    # the distinct names' bytes: empty or padded with spaces is the general path's to name or strip
    as_bytes = distinct.astype(">u8").view(np.uint8).reshape(n_names, -1)
    length = as_bytes.shape[1] - np.argmax(as_bytes[:, ::-1] != 0, axis=1)
    if not as_bytes[:, 0].all() or _SPACE[as_bytes[:, 0]].any() or \
            _SPACE[as_bytes[np.arange(n_names), length - 1]].any():
        return None
    # by the first word, then the next, ...: code-point order
    order = np.argsort(distinct[:, 0]) if distinct.shape[1] == 1 else np.lexsort(distinct.T[::-1])
    position = np.empty(n_names, dtype=np.int64)
    position[order] = np.arange(n_names)
    text = _strings(as_bytes[order], length[order])
    if text is None:
        return None
    player = position[codes]
    return player[:a.size], player[a.size:], text


def _strings(rows: np.ndarray, length: np.ndarray) -> np.ndarray | None:
    """Object array of the Python strings of ``rows``, ASCII bytes zero-padded after each name's
    ``length`` (one decode and one split of all of them, rather than a NumPy text array converted
    row by row); ``None`` when a name holds a zero byte of its own."""
    n, w = rows.shape
    buf = np.zeros((n, w + 1), dtype=np.uint8)
    buf[:, :w] = rows
    keep = buf != 0
    if not np.array_equal(keep.sum(axis=1), length):
        return None
    keep[:, w] = True  # each name ends with one zero byte
    pieces = buf[keep].tobytes().decode("ascii").split("\0")
    out = np.empty(n, dtype=object)
    out[:] = pieces[:-1]
    return out
