"""The Laplace smoother on matches of many sides (smoothers._laplace_matches): the games as matches
give the games' posterior; team matches' mode and variances against a direct minimisation of a
log posterior written here from the likelihoods' definitions; the gradient at the mode with
drift; a simulated league without NaN; and the settings it refuses."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.special import logsumexp
from scipy.stats import norm

from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.skillmodel import SkillModel
from smoothers import LaplaceSmoother


def _games(link_draw_score):
    """Six competitors, numeric times with repeats (two games of a competitor at one time share
    its node), some draws."""
    rng = np.random.default_rng(3)
    names = ["ann", "bob", "cy", "dee", "eve", "fay"]
    a, b, t, s = [], [], [], []
    for g in range(30):
        i, j = rng.choice(6, 2, replace=False)
        a.append(names[i])
        b.append(names[j])
        t.append(float(g // 3))
        s.append(link_draw_score[g % len(link_draw_score)])
    return Games.from_arrays(t, a, b, s, neutral=np.ones(30, bool))


@pytest.mark.parametrize("model, scores", [
    (SkillModel("logistic", 173.7, 1500.0, 350.0**2, 30.0, "half"), [1.0, 0.0, 0.5, 1.0]),
    (SkillModel("probit", 1.3, 0.0, 2.0, 0.05, ("threshold", 0.4)), [1.0, 0.5, 0.0]),
    (SkillModel("logistic", 1.0, 0.0, 1.0, 0.0, "none"), [1.0, 0.0]),
])
def test_one_vs_one_matches_are_the_games(model, scores):
    games = _games(scores)
    smoother = LaplaceSmoother(model, tol=1e-12)
    on_games = smoother.fit(games)
    on_matches = smoother.fit(Matches.from_games(games))
    tl, mtl = on_games.timeline, on_matches.timeline
    np.testing.assert_array_equal(mtl.node_player, tl.node_player)
    np.testing.assert_allclose(mtl.node_time, tl.node_time, rtol=0, atol=1e-12)
    np.testing.assert_allclose(on_matches.mean, on_games.mean, rtol=0, atol=1e-8 * model.scale)
    np.testing.assert_allclose(on_matches.var, on_games.var, rtol=1e-8, atol=0)
    np.testing.assert_allclose(on_matches.info["log_evidence"], on_games.info["log_evidence"], rtol=1e-9)


# ---------------------------------------------------------------- team matches, written out here
# (match, time, competitor, side, rank, weight): 3 against 3, a free-for-all of three pairs with a
# tie for first, partial play; ranks are places (0 first)
ROWS = [
    ("m1", 0.0, "ann", "x", 0, 1.0), ("m1", 0.0, "bob", "x", 0, 1.0), ("m1", 0.0, "cy", "x", 0, 0.5),
    ("m1", 0.0, "dee", "y", 1, 1.0), ("m1", 0.0, "eve", "y", 1, 1.0), ("m1", 0.0, "fay", "y", 1, 1.0),
    ("m2", 1.0, "ann", "p", 0, 1.0), ("m2", 1.0, "dee", "p", 0, 1.0),
    ("m2", 1.0, "bob", "q", 0, 1.0), ("m2", 1.0, "eve", "q", 0, 0.25),
    ("m2", 1.0, "cy", "r", 2, 1.0), ("m2", 1.0, "fay", "r", 2, 1.0),
    ("m3", 2.0, "ann", "u", 2, 1.0), ("m3", 2.0, "fay", "v", 0, 1.0), ("m3", 2.0, "bob", "w", 1, 0.75),
    ("m3", 2.0, "cy", "z", 3, 1.0),
    ("m4", 3.0, "dee", "x", 0, 1.0), ("m4", 3.0, "eve", "x", 0, 1.0), ("m4", 3.0, "ann", "y", 1, 1.0),
    ("m4", 3.0, "cy", "y", 1, 1.0),
    ("m5", 3.0, "fay", "a", 0, 1.0), ("m5", 3.0, "bob", "b", 0, 1.0), ("m5", 3.0, "cy", "c", 1, 1.0),
    ("m6", 5.0, "bob", "a", 1, 1.0), ("m6", 5.0, "eve", "a", 1, 1.0), ("m6", 5.0, "ann", "b", 0, 1.0),
    ("m6", 5.0, "fay", "b", 0, 0.5),
]
FRAME = pd.DataFrame(ROWS, columns=["match", "time", "competitor", "side", "rank", "weight"])


def _pl_loglik(perf: dict, rank: dict, c: float) -> float:
    """Plackett-Luce with ties (Weng and Lin 2011, Section 3.5): sum over places k of the mean of
    the tied group's x minus log sum exp of x over every side not ahead, x = performance / c."""
    total = 0.0
    for r in sorted(set(rank.values())):
        group = [s for s in perf if rank[s] == r]
        rest = [s for s in perf if rank[s] >= r]
        total += np.mean([perf[s] / c for s in group]) - logsumexp([perf[s] / c for s in rest])
    return total


def _chain_loglik(perf: dict, rank: dict, first: dict, c: float, eps: float) -> float:
    """TrueSkill's chain: adjacent sides in place order, a win log Phi((d - eps) / c), a tie
    log(Phi((eps - d) / c) - Phi((-eps - d) / c)). Tied sides in the order Matches stores them
    (by their first competitor's name: ``first``), which the chain's likelihood depends on."""
    order = sorted(perf, key=lambda s: (rank[s], first[s]))
    total = 0.0
    for i, j in zip(order[:-1], order[1:]):
        d = perf[i] - perf[j]
        if rank[i] == rank[j]:
            total += math.log(norm.cdf((eps - d) / c) - norm.cdf((-eps - d) / c))
        else:
            total += norm.logcdf((d - eps) / c)
    return total


def _table(frame):
    """Each match as a list of sides ``(members [(competitor, time, weight)], rank, first competitor)``."""
    out = []
    for _, m in frame.groupby("match", sort=False):
        out.append([([(r.competitor, r.time, r.weight) for r in rows.itertuples()], int(rows["rank"].iloc[0]),
                     min(rows["competitor"])) for _, rows in m.groupby("side", sort=False)])
    return out


def _log_posterior(table, model, node_of, x, kind):
    """The log posterior (up to a constant): each match's ranking likelihood at p_s = sum_k w_k x[node(k, t)],
    plus the prior N(mu0, s0^2) on each competitor's first node and N(x_prev, drift dt) on each later one."""
    total = 0.0
    for sides in table:
        perf = {i: sum(w * x[node_of[p, t]] for p, t, w in members) for i, (members, _, _) in enumerate(sides)}
        rank = {i: r for i, (_, r, _) in enumerate(sides)}
        if kind == "pl":
            total += _pl_loglik(perf, rank, model.scale * math.sqrt(len(perf) / 2.0))
        else:
            first = {i: f for i, (_, _, f) in enumerate(sides)}
            total += _chain_loglik(perf, rank, first, model.scale, model.draw.margin)
    players = sorted({p for (p, _) in node_of})
    for p in players:
        times = sorted({t for (q, t) in node_of if q == p})
        total += norm.logpdf(x[node_of[p, times[0]]], model.prior_mean, math.sqrt(model.prior_var))
        for t0, t1 in zip(times[:-1], times[1:]) if model.drift > 0 else ():  # static: one node, no links
            total += norm.logpdf(x[node_of[p, t1]], x[node_of[p, t0]], math.sqrt(model.drift * (t1 - t0)))
    return total


def _nodes(frame, static: bool):
    """Node of each (competitor, time) in the test's own order: one per competitor if static."""
    keys = sorted({(r.competitor, 0.0 if static else r.time) for r in frame.itertuples()})
    index = {k: i for i, k in enumerate(keys)}
    if static:
        return {(r.competitor, r.time): index[r.competitor, 0.0] for r in frame.itertuples()}, keys
    return index, keys


def _fitted(fit, keys, static: bool):
    """The fit's node means and variances in the test's node order (read from its trajectories)."""
    tr = fit.trajectories()
    by = {(p, 0.0 if static else t): (m, s * s) for t, p, m, s in zip(tr["time"], tr["player"], tr["mean"], tr["sd"])}
    return np.array([by[k][0] for k in keys]), np.array([by[k][1] for k in keys])


def _hessian(f, x, h):
    """Central-difference Hessian of ``f`` at ``x``."""
    n = x.size
    H = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            H[i, j] = H[j, i] = (f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j) + f(x - e_i - e_j)) / (4 * h * h)
    return H


def test_static_team_matches_mode_and_variances_match_a_direct_minimisation():
    model = SkillModel("logistic", 1.0, 0.0, 1.5, 0.0, "half")
    fit = LaplaceSmoother(model, tol=1e-12).fit(Matches.from_long(FRAME))
    node_of, keys = _nodes(FRAME, static=True)

    table = _table(FRAME)

    def f(x):
        return -_log_posterior(table, model, node_of, x, "pl")

    res = minimize(f, np.zeros(len(keys)), method="BFGS", options={"gtol": 1e-10})
    mean, var = _fitted(fit, keys, static=True)
    np.testing.assert_allclose(mean, res.x, atol=1e-6)
    np.testing.assert_allclose(var, np.diag(np.linalg.inv(_hessian(f, mean, 1e-3))), rtol=1e-5)


@pytest.mark.parametrize("model, kind", [
    (SkillModel("logistic", 1.0, 0.0, 1.0, 0.3, "half"), "pl"),
    (SkillModel("probit", 0.8, 0.0, 1.0, 0.3, ("threshold", 0.3)), "chain"),
])
def test_gradient_of_the_log_posterior_vanishes_at_the_mode_with_drift(model, kind):
    fit = LaplaceSmoother(model, tol=1e-12).fit(Matches.from_long(FRAME))
    node_of, keys = _nodes(FRAME, static=False)
    mean, _ = _fitted(fit, keys, static=False)
    assert len(keys) > 20  # competitors have several nodes: the links are exercised
    h = 1e-5
    table = _table(FRAME)
    grad = np.array([(_log_posterior(table, model, node_of, mean + h * e, kind)
                      - _log_posterior(table, model, node_of, mean - h * e, kind)) / (2 * h)
                     for e in np.eye(mean.size)])
    assert np.max(np.abs(grad)) < 1e-6
    # and the mode is no trivial point: the prior alone would have a zero gradient at the prior mean
    assert np.max(np.abs(mean)) > 0.05


def test_team_league_fits_without_nan_and_sides_carry_forecast_moments():
    from statespace.model.match_scenarios import team_league

    sim = team_league(seed=1)
    matches = sim.matches.take(np.arange(200))
    fit = LaplaceSmoother(SkillModel("logistic", 1.0, 0.0, 1.0, 0.01, "half")).fit(matches)
    for values in (fit.mean, fit.var, fit.perf_mean, fit.perf_var):
        assert np.all(np.isfinite(values))
    assert np.all(fit.var > 0) and np.all(fit.perf_var > 0)
    assert fit.perf_mean.shape == (matches.n_sides,)
    # each side's moments are its members' weighted node means and variances at the match
    s = 5
    k = np.arange(matches.side_ptr[s], matches.side_ptr[s + 1])
    w = matches.weight[k]
    assert fit.perf_mean[s] == pytest.approx(np.sum(w * fit.mean[fit.node[k]]))
    assert fit.perf_var[s] == pytest.approx(np.sum(w * w * fit.var[fit.node[k]]))
    assert fit.match_forecast().kind == "plackett_luce"
    assert fit.match_forecast().beta == pytest.approx(1.0 / math.sqrt(2.0))
    board = fit.ratings()
    assert np.all(np.isfinite(board["mean"])) and board["matches"].sum() == matches.member.size


def test_observations_the_matches_cannot_have_are_refused_by_name():
    matches = Matches.from_long(FRAME)
    with pytest.raises(ValueError, match="Davidson"):
        LaplaceSmoother(SkillModel("logistic", 1.0, 0.0, 1.0, 0.1, ("davidson", 0.5))).fit(matches)
    with pytest.raises(ValueError, match="match 'm2'.*tied"):
        LaplaceSmoother(SkillModel("probit", 1.0, 0.0, 1.0, 0.1, "none")).fit(matches)
    with pytest.raises(ValueError, match="match 'm2'.*tied"):
        LaplaceSmoother(SkillModel("logistic", 1.0, 0.0, 1.0, 0.1, "none")).fit(matches)
    assert LaplaceSmoother(SkillModel("probit", 1.0, 0.0, 1.0, 0.1, ("threshold", 0.2))).match_forecast().kind \
        == "thurstone"


def test_conjugate_gradient_steps_give_the_sparse_lu_fit(monkeypatch):
    """Above 500 nodes Newton's steps run conjugate gradients preconditioned by the chains; forced
    to the sparse LU instead, the fit is the same."""
    import smoothers._laplace_matches as LM
    from statespace.model.match_scenarios import team_league

    matches = team_league(seed=2).matches.take(np.arange(120))
    smoother = LaplaceSmoother(SkillModel("logistic", 1.0, 0.0, 1.0, 0.01, "half"), tol=1e-10)
    by_cg = smoother.fit(matches)
    assert by_cg.timeline.n_nodes >= 500
    monkeypatch.setattr(LM, "chain_cg", lambda H, b, prev: (None, False))
    by_lu = smoother.fit(matches)
    np.testing.assert_allclose(by_cg.mean, by_lu.mean, rtol=0, atol=1e-8)


def test_chain_preconditioner_solves_each_competitors_tridiagonal_block():
    import scipy.sparse as sp

    from smoothers import _chains
    from smoothers._laplace_match_cg import chain_solve

    rng = np.random.default_rng(0)
    prev = np.array([-1, 0, 1, -1, 3, -1, 5, 6, 7])  # chains of 3, 2 and 4 nodes
    linked = prev >= 0
    off = np.where(linked, -rng.uniform(0.1, 1.0, prev.size), 0.0)
    diag = 2.5 + rng.uniform(0, 1, prev.size)
    rows = np.flatnonzero(linked)
    T = sp.diags(diag) + sp.csr_matrix((off[rows], (rows, prev[rows])), shape=(9, 9))
    T = T + sp.csr_matrix((off[rows], (prev[rows], rows)), shape=(9, 9))
    d, l = _chains.chain_factor(diag, off, linked)
    r = rng.normal(size=9)
    np.testing.assert_allclose(chain_solve(d, l, linked, r), np.linalg.solve(T.toarray(), r), rtol=1e-12)


def test_auto_drift_on_matches_maximises_the_laplace_evidence():
    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.1, "half")
    matches = Matches.from_long(FRAME)
    fit = LaplaceSmoother(model, drift="auto", drift_bounds=(1e-3, 10.0)).fit(matches)
    best = fit.model.drift
    assert 1e-3 * 1.01 < best < 10.0 / 1.01  # inside the box, not at a bound
    for factor in (0.5, 2.0):
        other = LaplaceSmoother(model, drift=best * factor).fit(matches)
        assert other.info["log_evidence"] < fit.info["log_evidence"]
