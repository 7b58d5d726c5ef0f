"""TrueSkill Through Time on matches of many sides (``TrueSkillThroughTime().fit(Matches)``,
``smoothers._ttt_matches``).

- against the ``trueskillthroughtime`` package (Landfried and Mocskos; a test-only peer, the tests
  skip without it) on small random histories of 2-4 teams of 1-3 players with ties, and with
  partial-play weights: the same posterior mean and sd at every node after convergence;
- one-vs-one matches are the games: the same nodes as the fit on the equivalent ``Games``;
- one two-team match without dynamics is TrueSkill's team update (the ``trueskill`` package);
- a member who sat the match out (weight 0) learns nothing from it;
- a 3-sided free-for-all history: finite posteriors and side moments;
- ``draw_probability`` left out; what a fit on matches refuses.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import statespace as ss
from statespace.data.matches import Matches
from statespace.model.ranking_forecast import RankingForecast
from smoothers.ttt import DRAW_PROBABILITY, TrueSkillThroughTime

#: agreement with the package once its normal cdf is exact (``exact_package``): its own is a
#: rational approximation of erfc (Numerical Recipes' erfcc, relative error about 1.2e-7), which
#: alone moves its posteriors on these histories by up to about 1.5e-6 (then the two agree to
#: about 1e-10; what is left is its cut of each match's own EP at 10 rounds or a move of 1e-6)
PACKAGE_ATOL = 1e-8
#: agreement with the package as shipped (its approximate cdf)
SHIPPED_ATOL = 1e-5


@pytest.fixture
def exact_package(monkeypatch):
    """The ``trueskillthroughtime`` module with its ``erfc`` (which its cdf, pdf ratio and margin
    read as a module global) replaced by ``math.erfc``."""
    ttt = pytest.importorskip("trueskillthroughtime")
    monkeypatch.setattr(ttt, "erfc", math.erfc)
    return ttt


def random_matches(seed: int, n_players: int = 7, n_matches: int = 12, n_times: int = 4, p_tie: float = 0.2,
                   weights: bool = False) -> Matches:
    """Random matches of 2-4 teams of 1-3 players at ``n_times`` numeric times; with ``p_tie`` a
    side takes another side's rank (a tie); with ``weights`` partial play in [0.2, 1]."""
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(n_matches):
        n_teams = int(rng.integers(2, 5))
        sizes = rng.integers(1, 4, n_teams)
        while sizes.sum() > n_players:
            sizes = rng.integers(1, 3, n_teams)
        who = rng.permutation(n_players)[: sizes.sum()]
        ranks = rng.permutation(n_teams)
        for i in range(n_teams):
            if rng.random() < p_tie:
                ranks[i] = ranks[rng.integers(n_teams)]
        t = float(rng.integers(0, n_times))
        k = 0
        for s in range(n_teams):
            for _ in range(sizes[s]):
                w = round(float(rng.uniform(0.2, 1.0)), 2) if weights else 1.0
                rows.append(dict(match=f"m{m}", time=t, competitor=f"p{who[k]}", side=f"s{s}", rank=int(ranks[s]),
                                 weight=w))
                k += 1
    return Matches.from_long(pd.DataFrame(rows))


def package_nodes(ttt, mt: Matches, mu, sigma, beta, gamma, p_draw) -> pd.DataFrame:
    """The package's posterior at every node: ``History(composition, results, times, ...)``, each
    match a list of teams of names, results one number per team (higher is better: minus our
    rank), partial-play weights per member; converged to 1e-10."""
    comp, results, times, weights = [], [], [], []
    for m in range(mt.n_matches):
        sides = range(mt.match_ptr[m], mt.match_ptr[m + 1])
        members = [range(mt.side_ptr[s], mt.side_ptr[s + 1]) for s in sides]
        comp.append([[str(mt.names[mt.member[j]]) for j in team] for team in members])
        weights.append([[float(mt.weight[j]) for j in team] for team in members])  # Python floats: it tests type(w) == float
        results.append([float(-mt.rank[s]) for s in sides])
        times.append(float(mt.time[m]))
    history = ttt.History(comp, results, times, mu=mu, sigma=sigma, beta=beta, gamma=gamma, p_draw=p_draw,
                          weights=weights)
    history.convergence(epsilon=1e-10, iterations=3000, verbose=False)
    return pd.DataFrame([(a, t, n.mu, n.sigma) for a, curve in history.learning_curves().items() for t, n in curve],
                        columns=["player", "time", "mean", "sd"]).set_index(["player", "time"]).sort_index()


def node_table(fit) -> pd.DataFrame:
    return fit.trajectories().set_index(["player", "time"])[["mean", "sd"]].sort_index()


def assert_same_nodes(ours: pd.DataFrame, theirs: pd.DataFrame, atol: float) -> None:
    assert list(ours.index) == list(theirs.index)
    np.testing.assert_allclose(ours["mean"], theirs["mean"], rtol=0, atol=atol)
    np.testing.assert_allclose(ours["sd"], theirs["sd"], rtol=0, atol=atol)


# ---------------------------------------------------------------------------- the peer package
@pytest.mark.parametrize("seed, gamma, p_draw", [(0, 25 / 300, 0.1), (1, 1.0, 0.25), (2, 0.0, 0.3), (3, 3.0, 0.05)])
def test_team_histories_match_the_package(exact_package, seed, gamma, p_draw):
    """The same posterior at every node as ``trueskillthroughtime.History(...).convergence()``
    (version 1.1.0; its settings are ours as ``tests/test_ttt.py`` reads them: ``gamma`` is our
    ``tau``, ``p_draw`` sets the margin ``compute_margin(p_draw, sqrt(sum of the two teams'
    beta^2))``). A team's performance there is ``sum w * Gaussian(mu, sqrt(sigma^2 + beta^2))``
    over its members, and the teams sorted by result are linked by win or draw factors."""
    mt = random_matches(seed)
    assert max(np.diff(mt.match_ptr)) >= 3 and max(np.diff(mt.side_ptr)) >= 2  # teams and many sides
    mu, sigma, beta = 25.0, 25.0 / 3.0, 25.0 / 6.0
    theirs = package_nodes(exact_package, mt, mu, sigma, beta, gamma, p_draw)
    fit = TrueSkillThroughTime(mu, sigma, beta, gamma, p_draw, tol=1e-10, max_iter=3000).fit(mt)
    assert fit.info["converged"]
    assert_same_nodes(node_table(fit), theirs, PACKAGE_ATOL)


@pytest.mark.parametrize("seed", [0, 1])
def test_partial_play_matches_the_package(exact_package, seed):
    """Partial-play weights, without ties and without a draw margin (the package's defaults: mu 0,
    sigma 6, beta 1, gamma 0.03, p_draw 0): its ``weights`` scale each member's performance."""
    mt = random_matches(seed + 10, p_tie=0.0, weights=True)
    assert np.any(mt.weight < 1.0)
    theirs = package_nodes(exact_package, mt, 0.0, 6.0, 1.0, 0.03, 0.0)
    fit = TrueSkillThroughTime(0.0, 6.0, 1.0, 0.03, 0.0, tol=1e-10, max_iter=3000).fit(mt)
    assert_same_nodes(node_table(fit), theirs, PACKAGE_ATOL)


def test_team_history_matches_the_package_as_shipped():
    """The package with its own approximate cdf: the same nodes to :data:`SHIPPED_ATOL`."""
    ttt = pytest.importorskip("trueskillthroughtime")
    mt = random_matches(8)
    theirs = package_nodes(ttt, mt, 25.0, 25.0 / 3.0, 25.0 / 6.0, 1.0, 0.1)
    fit = TrueSkillThroughTime(25.0, 25.0 / 3.0, 25.0 / 6.0, 1.0, 0.1, tol=1e-10, max_iter=3000).fit(mt)
    assert_same_nodes(node_table(fit), theirs, SHIPPED_ATOL)


# ---------------------------------------------------------------------------- one-vs-one matches are games
@pytest.mark.parametrize("seed", [0, 1])
def test_one_vs_one_matches_are_the_games(seed):
    """``Matches.from_games(g)`` fits to the same nodes as ``g`` itself (the games' own path)."""
    rng = np.random.default_rng(seed)
    n = 30
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(1, 5, n)) % 5
    names = np.array([f"p{k}" for k in range(5)])
    g = ss.Games.from_arrays(rng.integers(0, 6, n).astype(float), names[a], names[b],
                             rng.choice([0.0, 0.5, 1.0], n, p=[0.4, 0.2, 0.4]))
    method = TrueSkillThroughTime(20.0, 6.0, 3.0, 1.5, 0.2, tol=1e-12, max_iter=3000)
    games_fit, match_fit = method.fit(g), method.fit(Matches.from_games(g))
    assert_same_nodes(node_table(match_fit), node_table(games_fit), 1e-9)


def test_one_two_team_match_is_the_trueskill_team_update():
    """One match of two teams without dynamics is one TrueSkill team update (EP on one factor is
    ADF): ``trueskill.TrueSkill(...).rate`` (Heungsub Lee's package; its margin is ours)."""
    trueskill = pytest.importorskip("trueskill")
    env = trueskill.TrueSkill(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=0.0, draw_probability=0.1)
    frame = pd.DataFrame(dict(match=["m"] * 5, time=[0.0] * 5, competitor=["a", "b", "c", "d", "e"],
                              side=["x", "x", "y", "y", "y"], rank=[1, 1, 0, 0, 0]))
    fit = TrueSkillThroughTime(25.0, 25 / 3, 25 / 6, 0.0, 0.1).fit(Matches.from_long(frame))
    r = fit.ratings().set_index("player")
    team_x, team_y = [env.create_rating()] * 2, [env.create_rating()] * 3
    new_x, new_y = env.rate([team_x, team_y], ranks=[1, 0])
    expected = {p: (q.mu, q.sigma) for p, q in zip("abcde", list(new_x) + list(new_y))}
    for p, (m, s) in expected.items():
        np.testing.assert_allclose([r.loc[p, "mean"], r.loc[p, "sd"]], [m, s], rtol=1e-9)


def test_a_member_who_sat_out_learns_nothing():
    """Weight 0: the member's performance is not in its side's, so its only match leaves it at the
    prior, while its team mates learn."""
    frame = pd.DataFrame(dict(match=["m"] * 4, time=[0.0] * 4, competitor=["a", "b", "c", "d"],
                              side=["x", "x", "y", "y"], rank=[0, 0, 1, 1], weight=[1.0, 0.0, 1.0, 1.0]))
    r = TrueSkillThroughTime(draw_probability=0.0).fit(Matches.from_long(frame)).ratings().set_index("player")
    np.testing.assert_allclose([r.loc["b", "mean"], r.loc["b", "sd"]], [25.0, 25.0 / 3.0], rtol=1e-12)
    assert r.loc["a", "mean"] > 25.0 and r.loc["a", "sd"] < 25.0 / 3.0


# ---------------------------------------------------------------------------- free-for-all, settings
def test_free_for_all_history_is_finite():
    """Three single competitors per match (a free-for-all), four players, several times: finite
    posteriors that order the players as their results do, and finite side moments."""
    rows = []
    rng = np.random.default_rng(3)
    for m in range(20):
        who = rng.permutation(4)[:3]
        order = np.sort(who)  # the lower id always places ahead: p0 > p1 > p2 > p3
        for place, p in enumerate(order):
            rows.append(dict(match=m, time=float(m // 4), competitor=f"p{p}", rank=place))
    mt = Matches.from_long(pd.DataFrame(rows))
    assert set(np.diff(mt.match_ptr)) == {3}
    fit = TrueSkillThroughTime().fit(mt)
    assert np.all(np.isfinite(fit.mean)) and np.all(fit.var > 0)
    assert np.all(np.isfinite(fit.perf_mean)) and np.all(fit.perf_var > 0)
    assert list(fit.ratings()["player"]) == ["p0", "p1", "p2", "p3"]
    assert fit.forecast == RankingForecast("thurstone", fit.method.beta, 0.0)
    assert fit.method.draw_probability == 0.0  # no tie: learned 0


def test_draw_probability_left_out_on_matches():
    """``None`` is the classic 0.10 on matches with a tie (kept on the fit), else 0."""
    tied = random_matches(0, p_tie=0.5)
    assert TrueSkillThroughTime().fit(tied).method.draw_probability == DRAW_PROBABILITY
    assert TrueSkillThroughTime().fit(random_matches(0, p_tie=0.0)).method.draw_probability == 0.0


def test_fit_on_matches_refuses_home_and_warm_start():
    mt = random_matches(1)
    with pytest.raises(ValueError, match="home=0.5"):
        TrueSkillThroughTime(home=0.5).fit(mt)
    fit = TrueSkillThroughTime().fit(mt)
    with pytest.raises(ValueError, match="from scratch"):
        TrueSkillThroughTime().fit(mt, warm_start=fit)
