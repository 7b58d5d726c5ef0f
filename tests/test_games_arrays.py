"""``Games.from_arrays`` builds clean tables without a DataFrame (statespace/data/ids.py); it must give
exactly the table the row-by-row path (``Games._from_frame_rows``, what ``from_frame`` falls back
to) gives, and leave every invalid table to that path so its errors still name rows and columns.
``from_frame`` and ``from_csv`` are checked the same way in tests/test_loading.py."""

import unicodedata

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from statespace import Games, GamesError
from test_loading import assert_same_table


def _same(g1: Games, g2: Games) -> None:
    assert_same_table(g1, g2)


def _slow(time, a, b, score=None, neutral=None, **more) -> Games:
    data = {"time": time, "a": a, "b": b}
    for name, value in (("score", score), ("neutral", neutral), *more.items()):
        if value is not None:
            data[name] = value
    return Games._from_frame_rows(pd.DataFrame(data), "raise", None, None)


def _pairs(n_players, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    return rng, a, b


@settings(max_examples=40, deadline=None)
@given(n_players=st.integers(2, 40), n=st.integers(1, 60), seed=st.integers(0, 2**32 - 1),
       kind=st.sampled_from(["int", "big_int", "negative_int", "whole_float", "text", "categorical", "mixed"]))
def test_the_array_path_builds_the_same_table_as_the_row_path(n_players, n, seed, kind):
    rng, a, b = _pairs(n_players, n, seed)
    if kind == "big_int":
        a, b = a * 10**12, b * 10**12
    elif kind == "negative_int":
        a, b = a - 7, b - 7
    elif kind == "whole_float":
        a, b = a.astype(float), b.astype(float)
    elif kind in ("text", "categorical"):
        names = np.array([f" p{i}" if i % 3 == 0 else f"p{i}" for i in range(n_players)], dtype=object)
        a, b = names[a], names[b]
        if kind == "categorical":
            a, b = pd.Categorical(a), pd.Categorical(b)
    elif kind == "mixed":  # integers against whole floats: the same competitors
        b = b.astype(float)
    time = np.sort(rng.uniform(0, 100, n))
    score = rng.choice([0.0, 0.5, 1.0], n)
    neutral = rng.integers(0, 2, n).astype(bool)
    fast = Games.from_arrays(time, a, b, score, neutral)
    slow = _slow(time, np.asarray(a, dtype=object) if kind == "categorical" else a,
                 np.asarray(b, dtype=object) if kind == "categorical" else b, score, neutral)
    _same(fast, slow)


def test_an_integer_and_a_whole_float_id_are_one_competitor():
    g = Games.from_arrays([0, 1], np.array([2, 3]), np.array([3.0, 2.0]), [1, 0])
    assert list(g.players) == ["2", "3"]
    assert g.a.tolist() == [0, 1] and g.b.tolist() == [1, 0]


def test_composed_and_decomposed_names_are_one_competitor_on_the_array_path():
    nfc, nfd = unicodedata.normalize("NFC", "Zoë"), unicodedata.normalize("NFD", "Zoë")
    assert nfc != nfd
    g = Games.from_arrays([0, 1, 2], np.array([nfc, "Bo", nfd]), np.array(["Bo", nfd, "Bo"]), [1, 0, 1])
    assert g.n_players == 2


def test_datetime_times_on_the_array_path():
    t = np.array(["2020-01-02", "2020-01-01"], dtype="datetime64[D]")
    fast = Games.from_arrays(t, np.array([1, 2]), np.array([2, 1]), [1.0, 0.5])
    _same(fast, _slow(t, np.array([1, 2]), np.array([2, 1]), [1.0, 0.5]))
    assert fast.order.tolist() == [1, 0]


@pytest.mark.parametrize("change, column", [
    (dict(score=[1, 0.7, 0]), "score"),
    (dict(a=np.array([1.0, np.nan, 3.0])), "a"),
    (dict(b=np.array([2, 2, 1])), "a/b"),
    (dict(a=np.array(["x", "", "z"], dtype=object)), "a"),
    (dict(time=[0.0, np.inf, 2.0]), "time"),
    (dict(neutral=[0, 2, 1]), "neutral"),
])
def test_invalid_arrays_are_still_row_errors(change, column):
    args = dict(time=[0.0, 1.0, 2.0], a=np.array([1, 2, 3]), b=np.array([2, 3, 1]), score=[1, 0.5, 0])
    args.update(change)
    with pytest.raises(GamesError) as err:
        Games.from_arrays(**args)
    assert err.value.column == column
    assert 1 in err.value.rows


def test_columns_of_different_lengths_are_refused():
    with pytest.raises(GamesError, match="same length"):
        Games.from_arrays([0.0, 1.0], np.array([1, 2]), np.array([2, 1, 3]), [1, 0])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), seed=st.integers(0, 2**32 - 1), as_lists=st.booleans(),
       sides=st.booleans(), period=st.sampled_from([None, "numeric", "text"]))
def test_periods_sides_and_lists_on_the_array_path(n, seed, as_lists, sides, period):
    rng, a, b = _pairs(6, n, seed)
    time = np.sort(rng.uniform(0, 10, n))
    score = rng.choice([0.0, 0.5, 1.0], n)
    more = {}
    if sides:
        sa = rng.integers(0, 3, n)
        sb = rng.integers(0, 3, n)
        score = np.where(sa > sb, 1.0, np.where(sa < sb, 0.0, 0.5))
        more = {"score_a": sa, "score_b": sb}
    if period is not None:
        codes = np.arange(n) // 4
        more["period"] = codes + 7 if period == "numeric" else np.array([f"s{c}" for c in codes], dtype=object)
    cols = {"time": time, "a": a, "b": b, "score": score, **more}
    if as_lists:
        cols = {k: list(v) for k, v in cols.items()}
    fast = Games.from_arrays(**cols)
    _same(fast, _slow(**cols))
    assert fast.has_scores == sides


def test_ids_whose_text_differs_though_they_hash_alike_take_the_row_path():
    # 1 and True are equal (one hash) but two names, "1" and "True", on the row-by-row path
    a = np.array([True, 1, 2], dtype=object)
    b = np.array([2, 2, True], dtype=object)
    fast = Games.from_arrays([0, 1, 2], a, b, [1, 0, 1])
    assert sorted(fast.players) == ["1", "2", "True"]
    _same(fast, _slow([0, 1, 2], a, b, [1, 0, 1]))


def test_categories_no_game_has_are_no_competitors():
    a = pd.Categorical(["x", "y"], categories=["w", "x", "y", "z"])
    b = pd.Categorical(["y", "x"], categories=["z", "y", "x"])
    g = Games.from_arrays([0, 1], a, b, [1, 0])
    assert list(g.players) == ["x", "y"]
    _same(g, _slow([0, 1], np.asarray(a, dtype=object), np.asarray(b, dtype=object), [1, 0]))


def test_series_with_different_labels_are_aligned_as_a_dataframe_would():
    t = pd.Series([0.0, 1.0], index=[0, 1])
    a = pd.Series(["x", "y"], index=[1, 0])  # aligned by label: row 0 is y
    g = Games.from_arrays(t, a, pd.Series(["z", "z"], index=[0, 1]), pd.Series([1, 0], index=[0, 1]))
    assert g.a_name.tolist() == ["y", "x"]


def test_a_scalar_neutral_is_broadcast_as_before():
    g = Games.from_arrays([0, 1], ["x", "y"], ["y", "x"], [1, 0], neutral=0)
    assert g.neutral.tolist() == [False, False]

