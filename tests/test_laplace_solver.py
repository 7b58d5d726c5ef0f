"""The Laplace smoother's linear algebra: Newton's systems by deflated conjugate
gradients in time order, the sparse factor reused across Newton steps and refits, CHOLMOD's
orderings (optional), and BLAS threads limited inside a fit.

References, all independent of ``smoothers._sparse``:

- the Hessian written densely here from the model's equations (each competitor's chain of nodes
  with the random-walk or Ornstein-Uhlenbeck link, the prior on first nodes, each game's curvature
  on its two nodes), solved with ``numpy.linalg.solve``;
- the posterior mode by a dense Newton iteration written here (``numpy.linalg.solve`` on the
  dense Hessian, the gradient of a log posterior typed out here), and its variances
  ``diag(inv(H))`` by ``numpy.linalg.inv``;
- for CHOLMOD and for a kept plan, the same fit without them (the orders change the rounding only).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import expit

import statespace as ss
from statespace import SkillModel
from smoothers import BradleyTerry, LaplaceSmoother
from smoothers.base import timeline
import smoothers._laplace_factor as factor_module
import smoothers._laplace_newton as newton_module
import smoothers._sparse as sparse_module
from smoothers._newton_system import NewtonSystem
from smoothers._sparse import SparsePlan


# ---------------------------------------------------------------- independent references
def dense_hessian(tl, model, kappa):
    """H = Q + sum_g kappa_g (e_a - e_b)(e_a - e_b)^T, with Q from the transition's equations."""
    n = tl.n_nodes
    H = np.zeros((n, n))
    for k in range(n):
        if tl.prev[k] < 0:
            H[k, k] += 1.0 / model.prior_var
            continue
        j, dt = tl.prev[k], tl.dt[k]
        if model.reversion > 0:
            phi = math.exp(-model.reversion * dt)
            q = model.drift * (1.0 - phi * phi) / (2.0 * model.reversion)
        else:
            phi, q = 1.0, model.drift * dt
        # (x_k - phi x_j)^2 / (2 q)
        H[k, k] += 1.0 / q
        H[j, j] += phi * phi / q
        H[k, j] -= phi / q
        H[j, k] -= phi / q
    for a, b, c in zip(tl.game_a, tl.game_b, kappa):
        H[a, a] += c
        H[b, b] += c
        H[a, b] -= c
        H[b, a] -= c
    return H


def league(n_games, active=40, career=30, per_day=20, drift=0.01, seed=0, reversion=0.0, prior_var=1.0):
    """A league of ``active`` competitors at any time, each for ``career`` days, ``per_day`` games a
    day (logistic, scale 1; static skills drawn from N(0, 1): the data only need to be plausible),
    and the model fitted to it."""
    rng = np.random.default_rng(seed)
    day = np.arange(n_games) // per_day
    start = day * active // career
    oa = rng.integers(0, active, n_games)
    ob = (oa + rng.integers(1, active, n_games)) % active
    a, b = start + oa, start + ob
    skill = rng.normal(0.0, 1.0, int(max(a.max(), b.max())) + 1)
    score = (rng.random(n_games) < expit(skill[a] - skill[b])).astype(float)
    times = np.datetime64("2000-01-01") + day.astype("timedelta64[D]")
    model = SkillModel("logistic", 1.0, 0.0, prior_var, drift, "half", reversion=reversion)
    return ss.Games.from_arrays(times, a, b, score), model


def newton_reference(games, model, tl, iters=60):
    """The posterior mode by dense Newton (numpy), and diag(inv(H)) there."""
    x = np.full(tl.n_nodes, model.prior_mean)
    y = games.score.astype(float)
    s = model.scale
    for _ in range(iters):
        d = (x[tl.game_a] - x[tl.game_b]) / s
        p = expit(d)
        g = (y - p) / s  # d/d(x_a) of y log p + (1 - y) log(1 - p)
        kappa = p * (1 - p) / s**2
        H = dense_hessian(tl, model, kappa)
        Q = dense_hessian(tl, model, np.zeros_like(kappa))
        lin = np.where(tl.prev < 0, model.prior_mean / model.prior_var, 0.0)
        grad = Q @ x - lin - np.bincount(tl.game_a, g, tl.n_nodes) + np.bincount(tl.game_b, g, tl.n_nodes)
        step = np.linalg.solve(H, grad)
        x = x - step
        if np.max(np.abs(step)) < 1e-13 * s:
            break
    d = (x[tl.game_a] - x[tl.game_b]) / s
    p = expit(d)
    H = dense_hessian(tl, model, p * (1 - p) / s**2)
    return x, np.diag(np.linalg.inv(H))


# ---------------------------------------------------------------- the conjugate gradients
CASES = {
    "league": dict(),
    "reversion": dict(reversion=0.05),
    "wide prior": dict(prior_var=100.0, drift=1e-3),  # the common level pinned loosely (cond(H) ~ 6e6)
    "long careers": dict(career=200, per_day=10),
}


@pytest.mark.parametrize("case", list(CASES))
def test_deflated_cg_solves_newtons_system_as_numpy_does(case):
    """H dx = b by the compiled, deflated, chain-preconditioned CG equals numpy's dense solve of the
    Hessian written here, to 1e-10 relative, whatever the curvature."""
    games, model = league(1500, **CASES[case])
    method = LaplaceSmoother(model)
    tl = timeline(games, method._node_times(games, model))
    assert 500 < tl.n_nodes < 3000
    system = NewtonSystem(tl)
    diag_q, off_q, *_ = method._prior_chains(tl, model)
    system.set_prior(diag_q, off_q)
    rng = np.random.default_rng(1)
    for trial in range(3):
        kappa = rng.uniform(0.0, 0.25, len(games))
        b = rng.normal(size=tl.n_nodes)
        dx, iters, ok = system.solve_cg(kappa, b)
        H = dense_hessian(tl, model, kappa)
        expected = np.linalg.solve(H, b)
        assert ok and 0 < iters < system.maxiter
        assert np.linalg.norm(dx - expected) <= 1e-10 * np.linalg.norm(expected)
        # the Hessian filled into its fixed pattern is the same matrix
        np.testing.assert_allclose(system.hessian(kappa).toarray(), H, rtol=1e-13, atol=1e-13 * np.abs(H).max())


def test_static_systems_are_solved_too():
    """Drift 0 (BradleyTerry): one node per competitor, no chains, one time bin (the common level)."""
    games, _ = league(1500)
    model = SkillModel("logistic", 1.0, 0.0, 1e6, 0.0, "half")
    method = BradleyTerry(model)
    tl = timeline(games, method._node_times(games, method.skill_model))
    system = NewtonSystem(tl)
    diag_q, off_q, *_ = method._prior_chains(tl, method.skill_model)
    system.set_prior(diag_q, off_q)
    assert system.n_bins == 1
    kappa = np.random.default_rng(2).uniform(0.01, 0.25, len(games))
    b = np.random.default_rng(3).normal(size=tl.n_nodes)
    dx, _, ok = system.solve_cg(kappa, b)
    expected = np.linalg.solve(dense_hessian(tl, method.skill_model, kappa), b)
    assert ok and np.linalg.norm(dx - expected) <= 1e-9 * np.linalg.norm(expected)


@pytest.mark.parametrize("case", ["league", "reversion"])
def test_the_fit_is_numpys_dense_newton(case):
    """The mode and the variances of a fit on the CG path (more nodes than CG_FROM, fewer than the
    dense limit: variances from the dense inverse) and of the same fit with the sparse factor's
    selected inverse (dense_cov_limit=0) equal a dense Newton iteration written here, to 1e-8."""
    games, model = league(1500, **CASES[case])
    tl = timeline(games, LaplaceSmoother(model)._node_times(games, model))
    x_ref, var_ref = newton_reference(games, model, tl)
    for kwargs in ({}, {"dense_cov_limit": 0}):
        fit = LaplaceSmoother(model, tol=1e-12, **kwargs).fit(games)
        assert set(fit.info["newton_solves"]) == {"cg"}
        np.testing.assert_allclose(fit.mean, x_ref, rtol=0, atol=1e-8 * model.scale)
        np.testing.assert_allclose(fit.var, var_ref, rtol=1e-8)
    assert fit.info["variances"] == "selected inverse"


def test_factor_steps_give_the_cg_mode(monkeypatch):
    """Once CG is predicted dearer than the fit's sparse factor, Newton's steps use the factor
    (numeric pass only, the plan kept): the same mode, variances and evidence."""
    games, model = league(1500)
    cg = LaplaceSmoother(model, dense_cov_limit=0).fit(games)
    assert set(cg.info["newton_solves"]) == {"cg"}
    monkeypatch.setattr(newton_module, "CG_FLOPS_PER_ITEM", 1e12)
    direct = LaplaceSmoother(model, dense_cov_limit=0).fit(games)
    assert direct.info["newton_solves"][0] == "cg" and set(direct.info["newton_solves"][1:]) == {"factor"}
    np.testing.assert_allclose(direct.mean, cg.mean, rtol=0, atol=1e-9 * model.scale)
    np.testing.assert_allclose(direct.var, cg.var, rtol=1e-9)
    assert direct.info["log_evidence"] == pytest.approx(cg.info["log_evidence"], rel=1e-11)


def test_a_stalled_cg_falls_back_to_the_factor(monkeypatch):
    games, model = league(1500)
    ref = LaplaceSmoother(model, dense_cov_limit=0).fit(games)
    original = NewtonSystem.solve_cg

    def stalled(self, kappa, b, diag=None):
        dx, iters, _ = original(self, kappa, b, diag)
        return dx + 1.0, iters, False  # wrong and not converged

    monkeypatch.setattr(NewtonSystem, "solve_cg", stalled)
    fit = LaplaceSmoother(model, dense_cov_limit=0).fit(games)
    assert fit.info["newton_solves"][0] == "cg" and set(fit.info["newton_solves"][1:]) == {"factor"}
    np.testing.assert_allclose(fit.mean, ref.mean, rtol=0, atol=1e-9 * model.scale)


# ---------------------------------------------------------------- the plan across refits
def test_a_refit_on_a_grown_history_keeps_the_plan():
    """fit(more games, warm_start=fit): the old order with the new nodes at one end, and the same
    fit as a cold one."""
    games, model = league(4000, active=60, career=100, per_day=30)
    method = LaplaceSmoother(model, dense_cov_limit=0)
    days = games.days()
    first = method.fit(games.take(np.flatnonzero(days < days.max() - 10)))
    assert first.info["variances"] == "selected inverse"
    grown = method.fit(games, warm_start=first)
    cold = method.fit(games)
    assert grown.info["factor_ordering"].endswith(", kept")
    assert not cold.info["factor_ordering"].endswith(", kept")
    assert grown.info["factor_flops"] <= 1.5 * cold.info["factor_flops"]
    np.testing.assert_allclose(grown.mean, cold.mean, rtol=0, atol=1e-9 * model.scale)
    np.testing.assert_allclose(grown.var, cold.var, rtol=1e-9)
    assert grown.info["log_evidence"] == pytest.approx(cold.info["log_evidence"], rel=1e-11)


def test_a_refit_remembers_that_the_factor_was_over_budget(monkeypatch):
    games, model = league(3000)
    monkeypatch.setattr(factor_module, "_FACTOR_FLOPS", 1.0)  # every factor over budget
    method = LaplaceSmoother(model, dense_cov_limit=0)
    first = method.fit(games.take(np.arange(2500)))
    assert first.info["variances"] == "blocks"
    built = []
    original = SparsePlan.build
    monkeypatch.setattr(SparsePlan, "build", classmethod(lambda cls, *a: built.append(1) or original(*a)))
    grown = method.fit(games, warm_start=first)
    assert grown.info["variances"] == "blocks" and not built
    method.fit(games)  # a cold fit orders (and finds the factor over budget)
    assert built


def test_warm_start_nodes_are_the_fits_node_at():
    """The vectorised mapping of a refit's nodes to the warm start's (SmootherFit._node_at) equals a
    plain search of each competitor's nodes."""
    games, model = league(2000)
    fit = LaplaceSmoother(model).fit(games.take(np.arange(1200)))
    tl = timeline(games, LaplaceSmoother(model)._node_times(games, model))
    node, exact = factor_module.earlier_nodes(fit, tl)
    old = fit.timeline
    expected = np.full(tl.n_nodes, -1)
    for k in range(tl.n_nodes):
        name = tl.players[tl.node_player[k]]
        for j in range(old.n_nodes):  # the last node of that competitor at or before the time
            if old.players[old.node_player[j]] == name and old.node_time[j] <= tl.node_time[k]:
                expected[k] = j
    np.testing.assert_array_equal(node, expected)
    have = expected >= 0
    np.testing.assert_array_equal(exact[have], fit.timeline.node_time[expected[have]] == tl.node_time[have])


# ---------------------------------------------------------------- CHOLMOD (optional)
def test_cholmod_orders_give_the_same_fit(monkeypatch):
    """With scikit-sparse, the plan may take CHOLMOD's AMD or METIS order; the fit is the one of
    SuperLU's minimum degree to rounding."""
    pytest.importorskip("sksparse.cholmod")
    games, model = league(3000, career=100, per_day=20)
    monkeypatch.setattr(sparse_module, "RCM_ENOUGH", 0.0)  # past reverse Cuthill-McKee to the other orders
    monkeypatch.setattr(sparse_module, "USE_CHOLMOD", True)
    with_cholmod = LaplaceSmoother(model, dense_cov_limit=0).fit(games)
    monkeypatch.setattr(sparse_module, "USE_CHOLMOD", False)
    without = LaplaceSmoother(model, dense_cov_limit=0).fit(games)
    assert "CHOLMOD" in with_cholmod.info["factor_ordering"]
    assert "SuperLU" in without.info["factor_ordering"] or "Cuthill" in without.info["factor_ordering"]
    np.testing.assert_allclose(with_cholmod.mean, without.mean, rtol=0, atol=1e-9 * model.scale)
    np.testing.assert_allclose(with_cholmod.var, without.var, rtol=1e-9)
    assert with_cholmod.info["log_evidence"] == pytest.approx(without.info["log_evidence"], rel=1e-11)


def test_without_cholmod_the_plan_is_scipys(monkeypatch):
    monkeypatch.setattr(sparse_module, "USE_CHOLMOD", False)
    assert sparse_module._cholmod_analyze() is None


# ---------------------------------------------------------------- threads, progress, settings
def test_blas_threads_are_limited_inside_a_fit_and_restored(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    games, model = league(1500)
    seen = []
    original = NewtonSystem.solve_cg

    def watching(self, *args, **kwargs):
        seen.append([d["num_threads"] for d in threadpoolctl.threadpool_info() if d["user_api"] == "blas"])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(NewtonSystem, "solve_cg", watching)
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        outside = [d["num_threads"] for d in threadpoolctl.threadpool_info() if d["user_api"] == "blas"]
        LaplaceSmoother(model).fit(games)
        assert seen and all(threads == [1] * len(outside) for threads in seen)
        after = [d["num_threads"] for d in threadpoolctl.threadpool_info() if d["user_api"] == "blas"]
        assert after == outside
        seen.clear()
        LaplaceSmoother(model, blas_threads=None).fit(games)
        assert seen and all(threads == outside for threads in seen)


def test_progress_lines(capsys):
    games, model = league(1500)
    LaplaceSmoother(model, progress=True).fit(games)
    err = capsys.readouterr().err
    assert "LaplaceSmoother: Newton step 1:" in err and "variances" in err
    LaplaceSmoother(model, progress=False).fit(games)
    LaplaceSmoother(model).fit(games)  # not a terminal: quiet
    assert capsys.readouterr().err == ""


def test_new_settings_round_trip_and_are_checked():
    m = LaplaceSmoother(blas_threads=None, progress=True)
    assert LaplaceSmoother(**m.get_params()).get_params() == m.get_params()
    assert BradleyTerry(blas_threads=2).get_params()["blas_threads"] == 2
    for bad in (0, -1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="blas_threads"):
            LaplaceSmoother(blas_threads=bad)
    with pytest.raises(ValueError, match="progress"):
        LaplaceSmoother(progress="yes")
