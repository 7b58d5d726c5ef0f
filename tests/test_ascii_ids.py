"""The ASCII fast path of competitor codes (:mod:`statespace.data.ascii_ids`) gives exactly what the
general path gives (pandas' hashing of Python strings, names stripped and in NFC form, sorted by
code point), and hands over to it whenever it cannot be exact."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from statespace import Games
from statespace.data import ascii_ids, ids

#: characters that exercise every hand-over: spaces and separators str.strip removes, a character
#: beyond ASCII, NUL, and enough letters for long names of several 64-bit words
ALPHABET = "ab0Z_- \t\x1c\x00é"


def _general(a, b):
    with pytest.MonkeyPatch.context() as m:
        m.setattr(ids, "ascii_codes", lambda a, b: None)
        return ids.competitor_codes(a, b)


def _draw(pool, seed, n):
    """``n`` games between names of ``pool`` (an array), no one meeting itself."""
    rng = np.random.default_rng(seed)
    i = rng.integers(0, len(pool), n)
    j = (i + 1 + rng.integers(0, len(pool) - 1, n)) % len(pool)
    return pool[i], pool[j]


def _same(x, y):
    if x is None or y is None:
        return x is None and y is None
    return all(np.array_equal(p, q) and p.dtype == q.dtype for p, q in zip(x, y))


@settings(max_examples=200, deadline=None)
@given(pool=st.lists(st.text(ALPHABET, min_size=0, max_size=20), min_size=2, max_size=12, unique=True),
       seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_ascii_path_equals_the_general_path(pool, seed, n):
    a, b = _draw(np.array(pool), seed, n)
    assert _same(ids.competitor_codes(a, b), _general(a, b))


@settings(max_examples=50, deadline=None)
@given(pool=st.lists(st.text(ALPHABET, min_size=0, max_size=20), min_size=2, max_size=12, unique=True),
       seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_the_sort_beside_the_strings_gives_the_same_codes(pool, seed, n):
    """Many names sort in a second thread while their strings are made: the same codes."""
    a, b = _draw(np.array(pool), seed, n)
    original = ascii_ids._OVERLAP
    try:
        ascii_ids._OVERLAP = 1
        threaded = ids.competitor_codes(a, b)
    finally:
        ascii_ids._OVERLAP = original
    assert _same(threaded, _general(a, b))


def test_plain_names_take_the_fast_path_and_sort_by_code_point():
    a = np.array(["b", "Zed", "a long name of three words", "b"])
    b = np.array(["a", "b", "Zed", "a long name of three words!"])
    coded = ascii_ids.ascii_codes(a, b)
    assert coded is not None
    assert list(coded[2]) == sorted(set(a) | set(b))  # code-point order: capitals first
    assert all(isinstance(p, str) for p in coded[2])
    assert [coded[2][k] for k in coded[0]] == list(a) and [coded[2][k] for k in coded[1]] == list(b)


@pytest.mark.parametrize("a, b", [
    (np.array(["a", " b"]), np.array(["c", "d"])),          # a leading space: stripped by the general path
    (np.array(["a", "b\t"]), np.array(["c", "d"])),         # a trailing tab
    (np.array(["a", ""]), np.array(["c", "d"])),            # an empty name: the general path's row error
    (np.array(["a", "é"]), np.array(["c", "d"])),           # beyond ASCII: NFC is the general path's
    (np.array([1, 2]), np.array([3, 4])),                   # not text
    (["a", "b"], ["c", "d"]),                               # not NumPy text
])
def test_what_the_fast_path_hands_over(a, b):
    assert ascii_ids.ascii_codes(a, b) is None


def test_a_collision_of_keys_is_caught_never_merges_names(monkeypatch):
    """With a multiplier of 0 every name of two words or more has key 0: the check against each
    code's first row refuses, and the general path gives the right names."""
    a = np.array(["first name one", "second name two"])
    b = np.array(["third name three", "first name one"])
    monkeypatch.setattr(ascii_ids, "_MIX", np.uint64(0))
    assert ascii_ids.ascii_codes(a, b) is None
    games = Games.from_arrays([0.0, 1.0], a, b, [1.0, 0.0])
    assert sorted(games.players) == sorted(set(a) | set(b))


def test_a_competitor_meeting_itself_is_still_the_row_error():
    from statespace import GamesError

    with pytest.raises(GamesError, match="row"):
        Games.from_arrays([0.0, 1.0], np.array(["a", "b"]), np.array(["c", "b"]), [1.0, 0.0])


@settings(max_examples=100, deadline=None)
@given(pool=st.lists(st.text("abZ09_- .", min_size=1, max_size=30).filter(lambda s: s == s.strip() and s),
                     min_size=2, max_size=12, unique=True),
       seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40))
def test_plain_ascii_names_are_coded_by_the_fast_path_exactly(pool, seed, n):
    a, b = _draw(np.array(pool), seed, n)
    fast = ascii_ids.ascii_codes(a, b)
    assert fast is not None
    assert _same(fast, _general(a, b))


@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=50))
def test_a_key_of_one_word_gives_back_its_word(words):
    """Names of up to eight characters are read back from their keys (no row of first
    appearances): the mixing is one-to-one and ``_unmix`` inverts it."""
    w = np.array(words, dtype=np.uint64)
    key = ascii_ids._mix(w.reshape(-1, 1).copy())
    np.testing.assert_array_equal(ascii_ids._unmix(key), w)
