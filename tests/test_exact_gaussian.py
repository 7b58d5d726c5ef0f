"""The exact Gaussian test bed: with Gaussian score margins every method has one answer.

With ``statespace.Margin`` observations (``score_a - score_b ~ N(s_a - s_b + home, sd^2)``) and
Gaussian random-walk skills, the posterior of every node (competitor x time) is Gaussian and is
written down here in NumPy, sharing no code with the package: the joint precision is the
random-walk prior (``1 / prior_var`` at a competitor's first node, a link ``1 / (drift dt)``
between its consecutive nodes) plus ``w h h^T / sd^2`` per game, ``h = e_a - e_b`` over the game's
two nodes and ``w`` its weight; its mean solves ``precision x = prior_mean / prior_var (first
nodes) + sum_g w h (y_g - home_g) / sd^2``. Against it:

(a) ``RTSSmoother(covariance="full")`` (the Kalman filter, then the RTS smoother): equal to 1e-9,
    means, variances and the nodes' covariance; the diagonal RTS smoother is exact for a
    competitor whose every opponent plays once (the correlation its games create is never used
    again), and not otherwise;
(b) ``LaplaceSmoother``: one Newton step lands on the mode, the dense inverse is the covariance;
(c) ``PyMCSmoother`` (NUTS): within a few Monte Carlo standard errors (few games, few draws: no
    marker for slow tests is registered in pyproject.toml).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import statespace as ss
from conftest import walk_prior
from smoothers import LaplaceSmoother, RTSSmoother

SD, DRIFT, PRIOR_MEAN, PRIOR_VAR, HOME = 2.0, 0.05, 0.5, 4.0, 0.8


def margin_model(drift=DRIFT, prior_mean=PRIOR_MEAN):
    return ss.SkillModel(scale=1.0, prior_mean=prior_mean, prior_var=PRIOR_VAR, drift=drift, home=HOME,
                         observation=ss.Margin(sd=SD))


def margin_games(n_players=5, n_games=60, n_times=12, seed=0, periods=False, weights=False):
    """Random-walk skills observed through Gaussian margins at ``n_times`` times (several games
    a time; with ``periods``, each time a rating period); 60% of games at a's home."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(PRIOR_MEAN, math.sqrt(PRIOR_VAR), n_players)
    a = rng.integers(0, n_players, n_games)
    b = (a + 1 + rng.integers(0, n_players - 1, n_games)) % n_players
    neutral = rng.random(n_games) < 0.4
    t = np.sort(rng.integers(0, n_times, n_games)).astype(float)
    y = np.empty(n_games)
    for g in range(n_games):
        if g and t[g] > t[g - 1]:
            skill += rng.normal(0.0, math.sqrt(DRIFT * (t[g] - t[g - 1])), n_players)
        y[g] = skill[a[g]] - skill[b[g]] + HOME * (not neutral[g]) + rng.normal(0.0, SD)
    names = np.array([f"P{i}" for i in range(n_players)])
    games = ss.Games.from_arrays(t, names[a], names[b], neutral=neutral, score_a=np.maximum(y, 0) + 10.0,
                                 score_b=np.maximum(-y, 0) + 10.0, period=t.astype(int) if periods else None)
    if weights:
        games = games.with_weights(rng.uniform(0.5, 2.0, n_games))
    return games


def exact_posterior(games, drift=DRIFT, prior_mean=PRIOR_MEAN):
    """Nodes ``[(player id, time)]`` sorted by player then time, and the exact posterior mean
    and covariance over them (times: the games' own numeric times)."""
    t = games.time.astype(float)
    nodes, at, prec, lin = walk_prior(games.a, games.b, t, prior_mean, PRIOR_VAR, drift)
    n = len(nodes)
    y = games.score_a - games.score_b - HOME * ~games.neutral
    for g in range(len(games)):
        h = np.zeros(n)
        h[at[(int(games.a[g]), t[g])]] = 1.0
        h[at[(int(games.b[g]), t[g])]] = -1.0
        prec += games.weight[g] * np.outer(h, h) / SD**2
        lin += games.weight[g] * h * y[g] / SD**2
    cov = np.linalg.inv(prec)
    return nodes, cov @ lin, cov


def same_nodes(fit, nodes):
    tl = fit.timeline
    got = list(zip(tl.node_player.tolist(), tl.node_time.tolist()))
    assert got == [(p, t) for p, t in nodes]


# ---------------------------------------------------------------------------- (a) Kalman + RTS
@pytest.mark.parametrize("periods", [False, True], ids=["game-by-game", "rating-periods"])
@pytest.mark.parametrize("weights", [False, True], ids=["unweighted", "weighted"])
def test_full_rts_is_the_exact_posterior(periods, weights):
    games = margin_games(seed=1, periods=periods, weights=weights)
    nodes, mean, cov = exact_posterior(games)
    fit = RTSSmoother(margin_model(), "full").fit(games)
    same_nodes(fit, nodes)
    np.testing.assert_allclose(fit.mean, mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.var, np.diag(cov), rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.cov, cov, rtol=0, atol=1e-9)
    linked = np.flatnonzero(fit.timeline.prev >= 0)
    np.testing.assert_allclose(fit.info["prev_cov"][linked], cov[linked, fit.timeline.prev[linked]], rtol=0,
                               atol=1e-9)
    # without the whole covariance, the neighbours' covariance still comes from the gains
    lean = RTSSmoother(margin_model(), "full", dense_cov_limit=0).fit(games)
    assert lean.cov is None and lean.info["cov"] == "not formed"
    np.testing.assert_allclose(lean.info["prev_cov"], fit.info["prev_cov"], rtol=0, atol=1e-12, equal_nan=True)


def test_full_rts_with_drift_0_is_the_static_posterior():
    """Drift 0: one node per competitor, the final joint belief of the Kalman filter, which is the
    posterior of static skills."""
    games = margin_games(seed=2)
    static = games._replace(time=np.zeros(len(games)))  # every game at one time: one node each
    nodes, mean, cov = exact_posterior(static, drift=1.0)  # no links: the drift is never used
    fit = RTSSmoother(margin_model(drift=0.0), "full").fit(games)
    assert fit.static
    assert list(zip(fit.timeline.node_player.tolist(), [0.0] * fit.timeline.n_nodes)) == nodes
    np.testing.assert_allclose(fit.mean, mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.cov, cov, rtol=0, atol=1e-9)


def star_games(n_games=30, seed=3):
    """A hub plays a fresh opponent in every game (each opponent plays once), at times 0..n-1."""
    rng = np.random.default_rng(seed)
    y = rng.normal(0.0, 3.0, n_games)
    t = np.arange(n_games, dtype=float)
    return ss.Games.from_arrays(t, ["hub"] * n_games, [f"o{g:02d}" for g in range(n_games)],
                                neutral=rng.random(n_games) < 0.5, score_a=np.maximum(y, 0) + 5.0,
                                score_b=np.maximum(-y, 0) + 5.0)


def test_diagonal_rts_is_exact_where_no_correlation_is_reused():
    """The diagonal filter drops the correlation each game creates between its two competitors.
    When every opponent plays once, that correlation is never used again: the hub's filtered and
    smoothed beliefs are exact (its opponents' single nodes are not: they are filtered, and the
    hub's later games would inform them through the correlation the diagonal form dropped)."""
    games = star_games()
    nodes, mean, cov = exact_posterior(games)
    fit = RTSSmoother(margin_model(), "diagonal").fit(games)
    same_nodes(fit, nodes)
    hub = fit.timeline.node_player == games.player_id("hub")
    assert hub.sum() == len(games)
    np.testing.assert_allclose(fit.mean[hub], mean[hub], rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.var[hub], np.diag(cov)[hub], rtol=0, atol=1e-9)
    assert np.max(np.abs(fit.var[~hub] - np.diag(cov)[~hub])) > 1e-3


def test_diagonal_rts_is_not_exact_when_opponents_meet_again():
    """The counterpart of the star test (so that it can fail): among five competitors who meet
    again and again, the dropped correlations matter."""
    games = margin_games(seed=4)
    _, mean, cov = exact_posterior(games)
    fit = RTSSmoother(margin_model(), "diagonal").fit(games)
    assert np.max(np.abs(fit.mean - mean)) > 1e-3


# ---------------------------------------------------------------------------- (b) Laplace
@pytest.mark.parametrize("periods", [False, True], ids=["game-by-game", "rating-periods"])
def test_laplace_is_the_exact_posterior(periods):
    games = margin_games(seed=5, periods=periods, weights=True)
    nodes, mean, cov = exact_posterior(games)
    fit = LaplaceSmoother(margin_model()).fit(games)
    same_nodes(fit, nodes)
    np.testing.assert_allclose(fit.mean, mean, rtol=0, atol=1e-6)
    np.testing.assert_allclose(fit.var, np.diag(cov), rtol=0, atol=1e-6)
    rts = RTSSmoother(margin_model(), "full").fit(games)
    np.testing.assert_allclose(fit.mean, rts.mean, rtol=0, atol=1e-6)


# ---------------------------------------------------------------------------- (c) PyMC
def test_pymc_is_the_exact_posterior_within_monte_carlo_error():
    """NUTS draws of every node: each node's mean within 4.5 Monte Carlo standard errors
    (``sd / sqrt(ESS)``, ESS the bulk ESS of that node's draws) of the exact mean, and its variance
    within 4.5 standard errors ``var sqrt(2 / ESS)`` of the exact one: with about 50 nodes and a
    fixed seed, a test that a correct sampler passes and a wrong mean or scale fails."""
    pytest.importorskip("pymc")
    from smoothers import PyMCSmoother
    from smoothers._diagnostics import ess_bulk

    games = margin_games(n_players=4, n_games=30, n_times=8, seed=6)
    nodes, mean, cov = exact_posterior(games)
    smoother = PyMCSmoother(margin_model(), drift=DRIFT, prior_var=PRIOR_VAR, home=HOME, draws=1000, tune=500,
                            chains=2, seed=11, progressbar=False, keep_draws=2000)
    fit = smoother.fit(games)
    same_nodes(fit, nodes)
    skill = np.asarray(fit.idata.posterior["skill"])  # (chain, draw, node)
    ess = ess_bulk(np.ascontiguousarray(np.moveaxis(skill, -1, 0)))
    assert np.all(ess > 200), ess.min()
    sd = np.sqrt(np.diag(cov))
    z_mean = (fit.mean - mean) / (sd / np.sqrt(ess))
    z_var = (fit.var - np.diag(cov)) / (np.diag(cov) * np.sqrt(2.0 / ess))
    assert np.max(np.abs(z_mean)) < 4.5, z_mean
    assert np.max(np.abs(z_var)) < 4.5, z_var
