"""The compiled loop over matches of many sides (filters.match_loop, filters.match_run) and
multiplayer Elo, its first kernel: checked against Elo's own game loop and against the pairwise
decomposition written out here from its definition (Cunningham 2019; Elo-MMR's Elo-like baseline)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from filters import Elo, Glicko2, Stephenson
from statespace.data.games import Games
from statespace.data.matches import Matches

ALPHA = 400.0 / math.log(10.0)


def _long(rng, n_matches, n_players, max_sides=5, max_team=3, partial=True):
    rows = []
    for m in range(n_matches):
        n_sides = int(rng.integers(2, max_sides + 1))
        size = int(rng.integers(1, max_team + 1))
        people = rng.choice(n_players, size=n_sides * size, replace=False)
        ranks = rng.integers(0, n_sides, size=n_sides)  # repeats are ties
        for s in range(n_sides):
            for k in range(size):
                w = float(rng.uniform(0.2, 1.0)) if partial else 1.0
                rows.append(dict(match=f"m{m}", time=float(m), competitor=f"p{people[s * size + k]}",
                                 side=s, rank=int(ranks[s]), weight=w))
    return pd.DataFrame(rows)


def _reference_elo(frame: pd.DataFrame, k: float, initial: float = 1500.0) -> dict:
    """Multiplayer Elo by its definition: every pair of sides an Elo game, K shared over n - 1."""
    r: dict = {}
    for _, match in frame.groupby("match", sort=False):
        sides = [g for _, g in match.groupby("side", sort=False)]
        perf = [sum(w * r.get(p, initial) for p, w in zip(g.competitor, g.weight)) for g in sides]
        rank = [int(g["rank"].iloc[0]) for g in sides]
        n = len(sides)
        shift = []
        for s in range(n):
            total = 0.0
            for t in range(n):
                if t != s:
                    y = 1.0 if rank[s] < rank[t] else 0.5 if rank[s] == rank[t] else 0.0
                    total += y - 1.0 / (1.0 + 10.0 ** (-(perf[s] - perf[t]) / 400.0))
            shift.append(k / (n - 1) * total)
        for g, d in zip(sides, shift):
            for p, w in zip(g.competitor, g.weight):
                r[p] = r.get(p, initial) + w * d
    return r


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.floats(1.0, 60.0))
def test_multiplayer_elo_is_the_pairwise_decomposition(seed, k):
    frame = _long(np.random.default_rng(seed), n_matches=6, n_players=20)
    run = Elo(k=k).run(Matches.from_long(frame))
    ref = _reference_elo(frame, k)
    got = run.ratings().set_index("player")["mean"]
    assert set(got.index) == set(ref)
    for p, v in ref.items():
        assert got[p] == pytest.approx(v, abs=1e-9)


def test_one_against_one_matches_are_elo_games():
    rng = np.random.default_rng(3)
    n = 300
    a = rng.integers(0, 12, n)
    b = (a + rng.integers(1, 12, n)) % 12
    games = Games.from_arrays(time=np.arange(n, dtype=float), a=[f"p{i}" for i in a], b=[f"p{i}" for i in b],
                              score=rng.choice([0.0, 0.5, 1.0], n))
    elo = Elo(k=24)
    by_games = elo.run(games)
    by_matches = elo.run(Matches.from_games(games))
    want = by_games.ratings().set_index("player")["mean"]
    got = by_matches.ratings().set_index("player")["mean"]
    pd.testing.assert_series_equal(got.sort_index(), want.sort_index(), rtol=0, atol=1e-9)
    # each side's forecast moment is the pre-game rating: Elo's one-step-ahead forecast follows
    d = by_matches.perf_mean[0::2] - by_matches.perf_mean[1::2]
    assert np.allclose(1.0 / (1.0 + np.exp(-d / ALPHA)), by_games.proba[games.order, 0], atol=1e-12)
    assert np.all(by_matches.perf_var == 0.0)


def test_order_of_sides_and_labels_change_nothing():
    frame = _long(np.random.default_rng(7), n_matches=8, n_players=25)
    base = Elo().run(Matches.from_long(frame)).ratings().set_index("player")["mean"]
    shuffled = frame.sample(frac=1.0, random_state=1)  # rows of a match in another order
    shuffled = shuffled.assign(side=shuffled["side"].map(lambda s: f"team-{9 - s}"),
                               competitor=shuffled["competitor"].map(lambda p: "x" + p))
    again = Elo().run(Matches.from_long(shuffled)).ratings().set_index("player")["mean"]
    again.index = [p[1:] for p in again.index]
    pd.testing.assert_series_equal(again.sort_index(), base.sort_index(), check_names=False, rtol=0, atol=1e-9)


def test_side_forecast_is_the_weighted_sum_before_the_match():
    frame = pd.DataFrame(dict(match=["m0"] * 3 + ["m1"] * 3, time=[0.0] * 3 + [1.0] * 3,
                              competitor=["a", "b", "c", "a", "b", "c"], side=[0, 0, 1, 0, 1, 1],
                              rank=[0, 0, 1, 1, 0, 0], weight=[1.0, 0.5, 1.0, 0.25, 1.0, 1.0]))
    run = Elo(k=32).run(Matches.from_long(frame))
    assert run.perf_mean[:2].tolist() == [1500.0 * 1.5, 1500.0]
    after = _reference_elo(frame.iloc[:3], 32.0)
    # the sides of a match may be stored in another order: compare as a set
    assert sorted(run.perf_mean[2:]) == pytest.approx(sorted([0.25 * after["a"], after["b"] + after["c"]]), abs=1e-9)
    traj = run.trajectories()
    final = run.ratings().set_index("player")["mean"]
    last = traj.groupby("player")["mean"].last()
    pd.testing.assert_series_equal(last.sort_index(), final.sort_index(), check_names=False)


def test_a_method_without_a_match_kernel_refuses_naming_itself_and_the_match():
    frame = _long(np.random.default_rng(1), n_matches=3, n_players=20, max_team=3)
    with pytest.raises(ValueError, match=r"stephenson .*cannot rate matches of many sides: match 'm0'.*Elo"):
        Stephenson().run(Matches.from_long(frame))
    with pytest.raises(ValueError, match="FIDE"):
        Elo.fide().run(Matches.from_long(frame))
    with pytest.raises(ValueError, match="continuing a state"):
        run = Elo().run(Matches.from_long(frame))
        Elo().run(Matches.from_long(frame), state=run.state)
