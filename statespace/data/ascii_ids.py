"""Competitor codes of two columns of ASCII names held as NumPy text, at array speed.

:func:`statespace.data.ids.competitor_codes` makes the names of a table's competitors the way a
user sees them (text stripped, in Unicode NFC form, sorted by code point) through pandas' hashing
of Python strings: about 2.5 s for a million games between a million names. When both id columns
are fixed-width NumPy text (``dtype`` kind ``U``) of ASCII characters only, none of that needs a
Python object per row: an ASCII name is its own NFC form, and its characters, one byte each, fit
in 64-bit words. :func:`ascii_codes` hashes the words (one integer key a name, mixed one-to-one
from a single word, so that a name of up to eight characters is read back from its key; several
words folded into one key, every code then checked against its first row's words, so that a
collision of keys can never merge two names), sorts the distinct names by their words read
big-endian (integer order is then code-point order) and makes Python strings of the distinct
names only, with one decode and one split of all their bytes.

It gives up, returning ``None`` so that the general path runs (with its row errors), when a
column is not such text, a character is beyond ASCII, a name is empty or has a leading or
trailing character ``str.strip`` removes, or two keys collide.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd

__all__ = ["ascii_codes"]

#: distinct names from which the sort runs in a second thread while their strings are made
_OVERLAP = 100_000

#: the ASCII characters ``str.strip()`` removes (``str.isspace``: tab to carriage return, the
#: four information separators 0x1c-0x1f, space)
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = True
#: folds a name's words into one key (an odd 64-bit multiplier: the golden ratio's)
_MIX = np.uint64(0x9E3779B97F4A7C15)
#: its inverse modulo 2**64 (Newton's iteration, each step doubling the correct low bits)
_UNMIX = 0x9E3779B97F4A7C15
for _ in range(6):
    _UNMIX = _UNMIX * (2 - 0x9E3779B97F4A7C15 * _UNMIX) % 2**64
_UNMIX = np.uint64(_UNMIX)
_SHIFT, _SHIFT2 = np.uint64(29), np.uint64(58)


def _bytes(a: np.ndarray, b: np.ndarray, width: int) -> np.ndarray | None:
    """``(len(a) + len(b), 8 k)`` uint8: each name's characters as bytes, zero-padded to
    ``8 k >= width``, the rows of ``a`` then those of ``b``; ``None`` when a character is beyond
    ASCII. Read as little-endian 64-bit words, each row is ``k`` words holding its characters in
    order in memory."""
    k = -(-width // 8)
    out = np.zeros((a.size + b.size, 8 * k), dtype=np.uint8)
    for rows, column in ((out[:a.size], a), (out[a.size:], b)):
        chars = np.ascontiguousarray(column).view(np.uint32).reshape(column.size, column.dtype.itemsize // 4)
        if chars.size and chars.max() >= 128:
            return None
        rows[:, :chars.shape[1]] = chars
    return out


def _mix(words: np.ndarray) -> np.ndarray:
    """One 64-bit key a row of ``words`` (``(n, k)`` uint64), overwriting its first column: one word
    is mixed one-to-one (so that pandas' hash, which keeps the low bits, where short names are all
    zeros, sees them spread: an odd multiplier and this shift are one-to-one); more are folded."""
    key = words[:, 0]
    key *= _MIX
    for j in range(1, words.shape[1]):
        key ^= words[:, j]
        key *= _MIX
    key ^= key >> _SHIFT
    return key


def _unmix(key: np.ndarray) -> np.ndarray:
    """The word a key of one word was mixed from (:func:`_mix`'s inverse)."""
    x = key ^ (key >> _SHIFT) ^ (key >> _SHIFT2)
    x *= _UNMIX
    return x


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
    raw = _bytes(a, b, width)
    if raw is None:
        return None
    words = raw.view("<u8")  # the characters in memory order: any one-to-one key serves the hashing
    k = words.shape[1]
    if k > 1:
        kept = words.copy()  # the words, for the check that no two names share a key
    codes, uniques = pd.factorize(_mix(words), sort=False)
    n_names = uniques.size
    if k == 1:
        distinct = _unmix(np.asarray(uniques, dtype=np.uint64)).reshape(n_names, 1)
    else:
        first = np.empty(n_names, dtype=np.int64)
        first[codes[::-1]] = np.arange(codes.size - 1, -1, -1)  # each code's first row
        distinct = kept[first]
        if not np.array_equal(kept, distinct[codes]):
            return None  # two names share a key
        del kept
    # the distinct names' bytes: empty or padded with spaces is the general path's to name or strip
    as_bytes = distinct.view(np.uint8).reshape(n_names, 8 * k)
    length = as_bytes.shape[1] - np.argmax(as_bytes[:, ::-1] != 0, axis=1)
    if not as_bytes[:, 0].all() or _SPACE[as_bytes[:, 0]].any() or \
            _SPACE[as_bytes[np.arange(n_names), length - 1]].any():
        return None
    # code-point order: the words read big-endian (the first character in the top byte), by the
    # first word, then the next, ...
    big = distinct.byteswap()
    sort = (lambda: np.argsort(big[:, 0])) if k == 1 else (lambda: np.lexsort(big.T[::-1]))
    if n_names >= _OVERLAP:  # NumPy sorts without the interpreter lock: the strings are made meanwhile
        with ThreadPoolExecutor(1) as pool:
            sorting = pool.submit(sort)
            text = _strings(as_bytes, length)
            order = sorting.result()
    else:
        text, order = _strings(as_bytes, length), sort()
    if text is None:
        return None
    text = text[order]
    position = np.empty(n_names, dtype=np.int64)
    position[order] = np.arange(n_names)
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
