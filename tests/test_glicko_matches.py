"""Glicko-1 and Glicko-2 on matches of many sides (:mod:`filters._glicko_match`).

Checked against: Glicko's own game loop (a match of two single competitors is that game);
Glickman's rating-period formulas (1999, eqs. 4-6) written out here with NumPy, every other side a
game of weight 1/(n-1); and for Glicko-2 free-for-alls the ``glicko2`` package's ``Player`` (its g,
E and volatility solver, with Glickman's f: the package has mu^2 where his f has phi^2), its
``update_player`` steps written out with those weights."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from filters import Glicko, Glicko2, Stephenson
from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.ranking_scores import forecast_pair_log_loss

Q = math.log(10.0) / 400.0


def _g(rd2):
    return 1.0 / np.sqrt(1.0 + 3.0 * Q * Q * rd2 / math.pi**2)


def _frame(rng, n_sides, team, partial):
    people = rng.choice(10 * n_sides * team, size=n_sides * team, replace=False)
    ranks = rng.integers(0, n_sides, size=n_sides)  # repeats are ties
    rows = []
    for s in range(n_sides):
        for k in range(team):
            rows.append(dict(match="m0", time=0.0, competitor=f"p{people[s * team + k]}", side=s, rank=int(ranks[s]),
                             weight=float(rng.uniform(0.0, 1.0)) if partial else 1.0))
    return pd.DataFrame(rows)


def _initial(rng, frame, volatility=False):
    out = {}
    for p in frame.competitor:
        row = (float(rng.uniform(1200, 1800)), float(rng.uniform(30, 350)))
        out[p] = row + ((float(rng.uniform(0.03, 0.1)),) if volatility else ())
    return out


def _glickman_period(frame, initial):
    """Glickman (1999) eqs. 4-6 for every member: the sides' ratings and RD^2 the weighted sums
    of the members', each other side a game of weight 1/(n-1); a member takes its side's 1/d^2
    times w^2 and its sum times w."""
    sides = [g for _, g in frame.groupby("side", sort=True)]
    r = np.array([sum(w * initial[p][0] for p, w in zip(g.competitor, g.weight)) for g in sides])
    v = np.array([sum(w * w * initial[p][1] ** 2 for p, w in zip(g.competitor, g.weight)) for g in sides])
    rank = np.array([g["rank"].iloc[0] for g in sides])
    n = len(sides)
    share = 1.0 / (n - 1)
    out = {}
    for s, g in enumerate(sides):
        others = np.arange(n) != s
        gj = _g(v[others])
        e = 1.0 / (1.0 + 10.0 ** (-gj * (r[s] - r[others]) / 400.0))
        y = np.where(rank[s] < rank[others], 1.0, np.where(rank[s] == rank[others], 0.5, 0.0))
        inv_d2 = share * Q * Q * np.sum(gj * gj * e * (1 - e))
        total = share * np.sum(gj * (y - e))
        for p, w in zip(g.competitor, g.weight):
            rating, rd = initial[p]
            post = 1.0 / (1.0 / rd**2 + w * w * inv_d2)
            out[p] = (rating + Q * post * w * total, math.sqrt(post))
    return out


def _columns(table):
    return [c for c in ("mean", "sd", "volatility") if c in table]


def _ratings(run):
    return {row.player: (row.mean, row.sd) for row in run.ratings().itertuples()}


@pytest.mark.parametrize("method", [Glicko(), Glicko(c=80.0), Glicko2(), Glicko2(tau=1.0)],
                         ids=["glicko", "glicko-c80", "glicko2", "glicko2-tau1"])
def test_one_against_one_matches_are_glicko_games(method):
    rng = np.random.default_rng(5)
    n = 400
    a = rng.integers(0, 25, n)
    b = (a + rng.integers(1, 25, n)) % 25
    games = Games.from_arrays(np.sort(rng.uniform(0, 4000, n)).round(), a, b, rng.choice([0.0, 0.5, 1.0], n))
    by_game = method.run(games).ratings().set_index("player")
    by_match = method.run(Matches.from_games(games)).ratings().set_index("player")
    cols = _columns(by_game)
    np.testing.assert_allclose(by_match.loc[by_game.index, cols].to_numpy(float), by_game[cols].to_numpy(float),
                               rtol=1e-12, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sides=st.integers(2, 9), team=st.integers(1, 4), partial=st.booleans())
def test_glicko1_match_is_glickmans_rating_period(seed, n_sides, team, partial):
    rng = np.random.default_rng(seed)
    frame = _frame(rng, n_sides, team, partial)
    initial = _initial(rng, frame)
    run = Glicko().run(Matches.from_long(frame), initial=initial)
    got, want = _ratings(run), _glickman_period(frame, initial)
    for p, (rating, rd) in want.items():
        assert got[p][0] == pytest.approx(rating, abs=1e-8)
        assert got[p][1] == pytest.approx(rd, rel=1e-12)


def _weighted_player():
    from glicko2 import Player

    class WeightedPlayer(Player):
        def _f(self, x, delta, v, a):  # Glickman's f: phi^2 where the package has mu^2
            ex = math.exp(x)
            phi2 = self._Player__rd ** 2
            return ex * (delta**2 - phi2 - v - ex) / (2 * ((phi2 + v + ex) ** 2)) - (x - a) / (self._tau**2)

        def update_weighted(self, ratings, rds, outcomes, w):
            """``update_player``'s steps with every game of weight ``w``: v = 1 / (w sum g^2 E (1 - E)),
            Delta = v w sum g (s - E), then the package's volatility, pre-period RD and update."""
            mu = [(x - 1500) / 173.7178 for x in ratings]
            phi = [x / 173.7178 for x in rds]
            v = 1.0 / (w * sum(self._g(p) ** 2 * self._E(m, p) * (1 - self._E(m, p)) for m, p in zip(mu, phi)))
            total = w * sum(self._g(p) * (s - self._E(m, p)) for m, p, s in zip(mu, phi, outcomes))
            self._delta = lambda *args: v * total
            self.vol = self._newVol(mu, phi, outcomes, v)
            self._preRatingRD()
            self._Player__rd = 1 / math.sqrt(1 / self._Player__rd**2 + 1 / v)
            self._Player__rating += self._Player__rd**2 * total

    return WeightedPlayer


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sides=st.integers(2, 12), tau=st.sampled_from([0.3, 0.5, 1.2]))
def test_glicko2_free_for_all_equals_the_glicko2_package_steps(seed, n_sides, tau):
    pytest.importorskip("glicko2")
    player = _weighted_player()
    rng = np.random.default_rng(seed)
    frame = _frame(rng, n_sides, 1, partial=False)
    initial = _initial(rng, frame, volatility=True)
    run = Glicko2(tau=tau).run(Matches.from_long(frame), initial=initial)
    got = {row.player: (row.mean, row.sd, row.volatility) for row in run.ratings().itertuples()}
    names, ranks = list(frame.competitor), list(frame["rank"])
    for i, p in enumerate(names):
        me = player(*initial[p])
        me._tau = tau
        others = [j for j in range(len(names)) if j != i]
        me.update_weighted([initial[names[j]][0] for j in others], [initial[names[j]][1] for j in others],
                           [1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0 for j in others],
                           1.0 / len(others))
        # the package's 173.7178 against 400 / ln 10 = 173.71779...: agreement to about 1e-6 relative
        assert got[p][0] == pytest.approx(me.getRating(), abs=2e-3)
        assert got[p][1] == pytest.approx(me.getRd(), rel=1e-5)
        assert got[p][2] == pytest.approx(me.vol, rel=1e-5)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_sides=st.integers(2, 8), team=st.integers(1, 3),
       method=st.sampled_from([Glicko(), Glicko2(), Glicko(c=80.0), Glicko2(tau=1.0)]))
def test_order_of_sides_and_labels_change_nothing(seed, n_sides, team, method):
    rng = np.random.default_rng(seed)
    frame = pd.concat([_frame(rng, n_sides, team, partial=True).assign(match=f"m{m}", time=float(m))
                       for m in range(6)], ignore_index=True)
    base = method.run(Matches.from_long(frame)).ratings().set_index("player").sort_index()
    shuffled = frame.sample(frac=1.0, random_state=int(rng.integers(2**31))).sort_values("time", kind="stable")
    shuffled = shuffled.assign(side=shuffled.side.map(dict(enumerate(rng.permutation(n_sides)))))
    again = method.run(Matches.from_long(shuffled)).ratings().set_index("player").sort_index()
    cols = _columns(base)
    np.testing.assert_allclose(again[cols].to_numpy(float), base[cols].to_numpy(float), rtol=1e-12, atol=1e-9)


def test_a_member_of_weight_zero_learns_nothing():
    frame = pd.DataFrame(dict(match="m", time=0.0, competitor=["a", "b", "c", "d"], side=[0, 0, 1, 2],
                              rank=[0, 0, 1, 2], weight=[1.0, 0.0, 1.0, 1.0]))
    initial = {p: (1500.0 + 50 * i, 120.0, 0.06) for i, p in enumerate("abcd")}
    g1 = Glicko().run(Matches.from_long(frame), initial={p: v[:2] for p, v in initial.items()})
    b = g1.ratings().set_index("player").loc["b"]
    assert (b["mean"], b["sd"]) == (1550.0, 120.0)
    g2 = Glicko2().run(Matches.from_long(frame), initial=initial).ratings().set_index("player").loc["b"]
    # Glicko-2 step 6 for a competitor with no game in the period: phi* = sqrt(phi^2 + sigma^2)
    assert g2["mean"] == pytest.approx(1550.0, abs=1e-9)
    assert g2["sd"] == pytest.approx(math.hypot(120.0, 0.06 * 400.0 / math.log(10.0)), rel=1e-9)
    assert g2["volatility"] == pytest.approx(0.06, rel=1e-6)


@pytest.mark.parametrize("method", [Glicko(), Glicko2()], ids=["glicko", "glicko2"])
def test_forecast_of_two_sides_is_glickmans_prediction_form(method):
    from filters.glicko import expected_score

    frame = pd.DataFrame(dict(match="m", time=0.0, competitor=["a", "b"], side=[0, 1], rank=[0, 1], weight=1.0))
    initial = {"a": (1400.0, 80.0, 0.06), "b": (1500.0, 150.0, 0.06)}
    if isinstance(method, Glicko) and not isinstance(method, Glicko2):
        initial = {p: v[:2] for p, v in initial.items()}
    run = method.run(Matches.from_long(frame), initial=initial)
    loss, _, _ = forecast_pair_log_loss(run.forecast, run.perf_mean, run.perf_var, np.array([0, 1]), np.array([0, 2]))
    # Glickman's own example ("The Glicko system", p. 5): E = 0.376 for 1400 (RD 80) against 1500 (RD 150)
    assert loss == pytest.approx(-math.log(expected_score(1400, 80, 1500, 150)), rel=1e-12)
    assert math.exp(-loss) == pytest.approx(0.376, abs=5e-4)


def test_large_free_for_all_keeps_meaningful_numbers():
    rng = np.random.default_rng(3)
    n = 3000
    rows = pd.DataFrame(dict(match=np.repeat(np.arange(3), n), time=np.repeat(np.arange(3.0), n),
                             competitor=np.concatenate([rng.permutation(n) for _ in range(3)]),
                             rank=np.tile(np.arange(n), 3)))
    rows["side"] = rows["competitor"]
    matches = Matches.from_long(rows, score=None, weight=None)
    for method in (Glicko(), Glicko2(), Glicko2(tau=2.5, initial_volatility=1.0)):
        r = method.run(matches).ratings()
        assert np.isfinite(r[["mean", "sd"]].to_numpy()).all()
        assert (r["sd"] > 0).all() and (r["sd"] <= 350.0 + 1e-9).all()
        # a match is one game for each side: three games move nobody far
        assert (r["mean"].sub(1500.0).abs() < 1000.0).all()


def test_stephenson_refuses_matches_naming_itself():
    frame = _frame(np.random.default_rng(0), 3, 1, partial=False)
    with pytest.raises(ValueError, match=r"stephenson .*cannot rate matches of many sides"):
        Stephenson().run(Matches.from_long(frame))
