"""Matches of many sides (statespace.data.matches): reading a long table, the games as matches,
the accessors, and each invalid value named by its rows and column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from statespace.data.games import Games, GamesError
from statespace.data.matches import Matches

POOL = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]  # enough for 4 sides of 2


@st.composite
def long_frames(draw):
    """A valid long table whose ranks are competition ranks already (counted here by hand from
    drawn places) and whose rows of a match are contiguous."""
    rows = []
    for m in range(draw(st.integers(1, 4))):
        t = float(draw(st.integers(0, 3)))
        n_sides = draw(st.integers(2, 4))
        people = draw(st.permutations(POOL))
        sizes = [draw(st.integers(1, 2)) for _ in range(n_sides)]
        places = [draw(st.integers(0, 3)) for _ in range(n_sides)]
        at = 0
        for s in range(n_sides):
            rank = sum(p < places[s] for p in places)  # sides placed strictly ahead
            score = float(draw(st.integers(0, 9)))
            for k in range(sizes[s]):  # members who sat out (weight 0), but never a whole side
                w = draw(st.sampled_from([0.0, 0.5, 1.0] if k else [0.5, 1.0]))
                rows.append({"match": f"m{m}", "time": t, "competitor": people[at], "side": f"s{s}",
                             "rank": rank, "score": score, "weight": w})
                at += 1
    return pd.DataFrame(rows)


def _canonical(df: pd.DataFrame) -> pd.DataFrame:
    """A long frame in one row order (by match and competitor), columns in one order."""
    cols = ["match", "time", "competitor", "side", "rank", "score", "weight"]
    out = df[cols].sort_values(["match", "competitor"], kind="stable").reset_index(drop=True)
    return out.astype({"rank": np.int64, "score": float, "weight": float, "time": float})


def _same(x: Matches, y: Matches, fields=("time", "match_ptr", "side_ptr", "member", "weight", "rank",
                                            "score", "names", "label", "side_label")) -> None:
    for f in fields:
        np.testing.assert_array_equal(getattr(x, f), getattr(y, f), err_msg=f)


@settings(max_examples=25, deadline=None)
@given(long_frames())
def test_round_trip_long_matches_long(df):
    m = Matches.from_long(df)
    pd.testing.assert_frame_equal(_canonical(m.to_long()), _canonical(df))
    _same(Matches.from_long(m.to_long()), m)
    assert np.all(np.diff(m.time) >= 0)
    assert m.n_matches == df["match"].nunique()
    assert m.n_players == df["competitor"].nunique()


@settings(max_examples=25, deadline=None)
@given(long_frames(), st.randoms(use_true_random=False))
def test_order_of_rows_inside_a_match_does_not_count(df, rnd):
    blocks = [list(ix) for _, ix in df.groupby("match", sort=False).groups.items()]
    for b in blocks:
        rnd.shuffle(b)
    shuffled = df.loc[[i for b in blocks for i in b]].reset_index(drop=True)
    _same(Matches.from_long(shuffled), Matches.from_long(df))


@settings(max_examples=25, deadline=None)
@given(long_frames(), st.permutations(POOL))
def test_relabelling_competitors_changes_nothing_but_names(df, renamed):
    rename = {old: f"z{new}" for old, new in zip(POOL, renamed)}
    back = {v: k for k, v in rename.items()}
    m = Matches.from_long(df)
    r = Matches.from_long(df.assign(competitor=df["competitor"].map(rename)))
    assert sorted(r.names) == sorted(rename[n] for n in m.names)
    long_r = r.to_long()
    long_r["competitor"] = long_r["competitor"].map(back)
    pd.testing.assert_frame_equal(_canonical(long_r), _canonical(m.to_long()))
    np.testing.assert_array_equal(r.label, m.label)


def test_ranks_from_scores_and_places():
    df = pd.DataFrame({"match": [7, 7, 7, 7], "time": [1, 1, 1, 1], "competitor": ["a", "b", "c", "d"],
                       "score": [10, 30, 10, 20]})
    m = Matches.from_long(df)  # free-for-all: each its own side; higher score first, equal tie
    ranks = {m.names[s[0]]: r for s, r in zip(m.sides(0), m.rank)}
    assert ranks == {"b": 0, "d": 1, "a": 2, "c": 2}
    places = Matches.from_long(df.drop(columns="score").assign(rank=[1, 1, 2, 4]))
    assert {places.names[s[0]]: r for s, r in zip(places.sides(0), places.rank)} == {"a": 0, "b": 0, "c": 2, "d": 3}
    assert m.label.tolist() == ["7"] and not m.is_pairwise


GAMES = pd.DataFrame({"time": [3.0, 1.0, 2.0, 2.0], "a": ["x", "y", "z", "w"], "b": ["y", "z", "x", "x"],
                      "score": [1.0, 0.5, 0.0, 1.0]})


def test_from_games_agrees_with_the_games():
    g = Games.from_frame(GAMES)
    m = Matches.from_games(g)
    assert m.is_pairwise and m.n_matches == 4 and m.names.tolist() == ["w", "x", "y", "z"]
    expected = {1.0: [0, 1], 0.5: [0, 0], 0.0: [1, 0]}  # a's and b's place by a's score
    for k, game in enumerate([1, 2, 3, 0]):  # time order, ties by row
        row = GAMES.iloc[game]
        assert [m.names[s[0]] for s in m.sides(k)] == [row["a"], row["b"]]
        assert m.rank[2 * k:2 * k + 2].tolist() == expected[row["score"]]
        assert m.time[k] == row["time"] and m.label[k] == str(game)
    np.testing.assert_array_equal(m.member, np.column_stack([g.a[g.order], g.b[g.order]]).reshape(-1))
    # the same games as a long table give the same competitors, matches and results
    long = pd.DataFrame([{"match": i, "time": r.time, "competitor": c, "rank": expected[r.score][j]}
                         for i, r in GAMES.iterrows() for j, c in enumerate([r.a, r.b])])
    _same(Matches.from_long(long), m, fields=("time", "names", "label"))
    assert _canonical(Matches.from_long(long).to_long()).drop(columns="side").equals(
        _canonical(m.to_long()).drop(columns="side"))


def test_from_games_datetime_and_scores():
    g = Games.from_frame(pd.DataFrame({"time": ["2021-03-01", "2021-03-02"], "a": [1, 2], "b": [2, 3],
                                       "score_a": [2, 0], "score_b": [1, 0]}))
    m = Matches.from_games(g)
    assert m.score.tolist() == [2.0, 1.0, 0.0, 0.0] and m.rank.tolist() == [0, 1, 0, 0]
    assert m.time.tolist() == [18687.0, 18688.0]  # days since 1970-01-01
    assert m.to_long()["time"].iloc[0] == pd.Timestamp("2021-03-01")


def test_take_and_split():
    df = pd.DataFrame({"match": ["p", "p", "q", "q", "q", "r", "r"], "time": [5, 5, 1, 1, 1, 3, 3],
                       "competitor": ["a", "b", "a", "c", "d", "b", "c"], "side": [1, 2, 1, 1, 2, 1, 2],
                       "rank": [0, 1, 1, 1, 0, 0, 0]})
    m = Matches.from_long(df)
    assert m.label.tolist() == ["q", "r", "p"]
    first, rest = m.split(0.67)
    assert first.label.tolist() == ["q", "r"] and rest.label.tolist() == ["p"]
    assert rest.names.tolist() == m.names.tolist()
    t = m.take([2, 0])
    assert t.label.tolist() == ["p", "q"]
    assert [[t.names[x].tolist() for x in t.sides(i)] for i in range(2)] == [[["a"], ["b"]], [["d"], ["a", "c"]]]
    assert t.match_ptr.tolist() == [0, 2, 4] and t.side_ptr.tolist() == [0, 1, 2, 3, 5]
    with pytest.raises(ValueError, match="one part empty"):
        m.split(0.1)
    with pytest.raises(AttributeError):
        m.rank = m.rank
    with pytest.raises(ValueError):
        m.rank[0] = 3


BASE = pd.DataFrame({"match": ["g", "g", "h", "h", "h"], "time": [1.0, 1.0, 2.0, 2.0, 2.0],
                     "competitor": ["a", "b", "a", "b", "c"], "side": ["x", "y", "x", "x", "y"],
                     "rank": [0, 1, 0, 0, 1], "weight": [1.0, 1.0, 0.5, 1.0, 1.0]})


def _error(df, **kw) -> GamesError:
    with pytest.raises(GamesError) as info:
        Matches.from_long(df, **kw)
    return info.value


def _names(err: GamesError, rows: list[int], column: str) -> None:
    assert err.rows == rows and err.column == column
    text = str(err)
    assert f"column '{column}'" in text
    for r in rows:
        assert f"row {r}:" in text


def test_base_table_is_valid():
    assert Matches.from_long(BASE).n_matches == 2


def test_error_missing_column():
    err = _error(BASE.drop(columns="competitor"))
    assert err.column == "competitor" and "missing column 'competitor'" in str(err)


def test_error_neither_rank_nor_score():
    err = _error(BASE.drop(columns="rank"))
    assert err.column == "rank" and "neither a rank column 'rank' nor a score column 'score'" in str(err)


def test_error_match_of_fewer_than_two_sides():
    _names(_error(BASE.assign(side=["x", "x", "x", "x", "y"], rank=[0, 0, 0, 0, 1])), [0, 1], "side")


def test_error_match_of_one_competitor_free_for_all():
    df = BASE.drop(columns="side").iloc[2:].assign(match=["h", "h", "k"])
    _names(_error(df), [2], "competitor")  # rows of the given frame, 0-based


def test_error_competitor_twice_in_one_match():
    _names(_error(BASE.assign(competitor=["a", "b", "a", "b", "a"])), [2, 4], "competitor")


@pytest.mark.parametrize("bad", [1.5, -0.1, np.nan])
def test_error_weight_outside_unit_interval_or_missing(bad):
    _names(_error(BASE.assign(weight=[1.0, 1.0, 0.5, bad, 1.0])), [3], "weight")


@pytest.mark.parametrize("bad", [np.inf, 1.5, np.nan, True])  # True: pandas would read it as 1
def test_error_rank_not_a_finite_whole_number(bad):
    _names(_error(BASE.assign(rank=[0, 1, bad, bad, 1])), [2, 3], "rank")


def test_error_time_missing():
    _names(_error(BASE.assign(time=[1.0, None, 2.0, 2.0, 2.0])), [1], "time")


def test_error_match_rows_disagree_on_time():
    _names(_error(BASE.assign(time=[1.0, 1.0, 2.0, 3.0, 2.0])), [2, 3, 4], "time")


def test_error_side_rows_disagree_on_rank():
    _names(_error(BASE.assign(rank=[0, 1, 0, 1, 1])), [2, 3], "rank")


def test_error_scores_alone_need_every_score():
    df = BASE.drop(columns="rank").assign(score=[3.0, 1.0, 2.0, 2.0, None])
    _names(_error(df), [4], "score")


def test_error_rows_named_in_the_given_frame_not_its_index():
    df = BASE.assign(weight=[1.0, 1.0, 2.0, 1.0, 1.0]).set_axis([10, 11, 12, 13, 14])
    _names(_error(df), [2], "weight")


def test_error_custom_column_names_are_named():
    df = BASE.rename(columns={"competitor": "player", "rank": "place"}).assign(place=[0, 1, 0.5, 0.5, 1])
    _names(_error(df, competitor="player", rank="place"), [2, 3], "place")


def test_a_row_without_a_side_is_a_side_of_its_own():
    frame = pd.DataFrame({"match": ["m1"] * 4 + ["m2"] * 3, "time": [0.0] * 4 + [1.0] * 3,
                          "competitor": ["ann", "bob", "cat", "dan", "ann", "cat", "bob"],
                          "side": ["red", "red", "blue", "blue", None, "", None], "rank": [1, 1, 2, 2, 2, 1, 3]})
    m = Matches.from_long(frame)
    assert [len(s) for s in m.sides(0)] == [2, 2]
    assert [len(s) for s in m.sides(1)] == [1, 1, 1]
    assert m.rank[m.match_ptr[1]:].tolist() == [0, 1, 2]  # cat, ann, bob
    long = m.to_long()
    assert sorted(long[long["match"] == "m2"]["side"]) == ["ann", "bob", "cat"]
    # a competitor alone never merges with a side of the same name
    clash = pd.DataFrame({"match": ["m"] * 3, "time": [0.0] * 3, "competitor": ["ann", "bob", "cat"],
                          "side": [None, "ann", "ann"], "rank": [1, 2, 2]})
    assert [len(s) for s in Matches.from_long(clash).sides(0)] == [1, 2]


def test_a_side_of_members_who_all_sat_out_is_refused():
    frame = pd.DataFrame({"match": ["m"] * 4, "time": [0.0] * 4, "competitor": ["a", "b", "c", "d"],
                          "side": [1, 1, 2, 2], "rank": [1, 1, 2, 2], "weight": [0.0, 0.0, 1.0, 0.5]})
    with pytest.raises(GamesError, match=r"weight.*all have weight 0") as info:
        Matches.from_long(frame)
    assert info.value.rows == [0, 1]
    ok = frame.assign(weight=[0.0, 0.3, 1.0, 0.5])  # one member who played is enough
    assert Matches.from_long(ok).n_sides == 2
