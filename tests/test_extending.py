"""The new observation of docs/extending.md (examples/logistic_margin.py), checked against
independent references sharing no code with it:

- the log-likelihood against ``scipy.stats.logistic.logpdf``; its two derivatives against
  ``mpmath.diff`` of the logistic log-density written here with mpmath, and against central
  finite differences of scipy's;
- the forecast against ``scipy.integrate.quad`` of scipy's logistic tail probabilities over
  ``d ~ N(mean, var)``; the triple sums to 1 (a hypothesis property);
- the unchanged EKF with it: valid forecasts and finite ratings on a simulated stream, and after
  one game the posterior of the two skills equals one Newton step on their log posterior, its
  gradient and curvature taken by finite differences of scipy's log-density and the 2 x 2 step
  solved with NumPy;
- the example's ``main`` (quick) as a smoke test.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import integrate, stats

import statespace as ss
from filters import EKF

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import logistic_margin as lm  # noqa: E402  (examples/ is not a package)

LogisticMargin = lm.LogisticMargin


# ---------------------------------------------------------------- the log-likelihood
CASES = [(7.0, 1.5, 5.0), (-3.0, 2.0, 5.0), (0.0, 0.0, 1.0), (12.0, -4.0, 0.7), (-1.0, 0.3, 3.0),
         (40.0, -10.0, 1.0), (-60.0, 0.0, 0.9), (2.0, 2.0, 13.0)]  # (y, d, s); the last but two far in the tails


def _kernel(obs, y, d):
    """The compiled kernel itself, with a game of margin ``y`` (score_a = 50 + y, score_b = 50)."""
    return obs.lik_kernel(obs.vector(1.0), 1.0 if y > 0 else (0.5 if y == 0 else 0.0), 50.0 + y, 50.0, d)


@pytest.mark.parametrize("y, d, s", CASES)
def test_loglik_is_the_logistic_log_density(y, d, s):
    obs = LogisticMargin(s)
    l, _, _ = _kernel(obs, y, d)
    assert l == pytest.approx(stats.logistic.logpdf(y, loc=d, scale=s), rel=1e-13, abs=1e-13)
    # and through the base's NumPy method, vectorised
    ys = np.array([-9.0, -1.0, 0.0, 4.0, 30.0])
    got = obs.loglik(None, d, score_a=10.0 + ys, score_b=10.0)[0]
    np.testing.assert_allclose(got, stats.logistic.logpdf(ys, loc=d, scale=s), rtol=1e-13, atol=1e-13)


def _mp_logpdf(y, s):
    def f(d):
        z = (mpmath.mpf(y) - d) / s
        return -z - 2 * mpmath.log1p(mpmath.exp(-z)) - mpmath.log(s)
    return f


@pytest.mark.parametrize("y, d, s", CASES)
def test_derivatives_against_mpmath(y, d, s):
    with mpmath.workdps(40):
        f = _mp_logpdf(y, mpmath.mpf(s))
        g_ref = float(mpmath.diff(f, mpmath.mpf(d), 1))
        h_ref = float(mpmath.diff(f, mpmath.mpf(d), 2))
    _, g, h = _kernel(LogisticMargin(s), y, d)
    assert g == pytest.approx(g_ref, rel=1e-12, abs=1e-15)
    assert h == pytest.approx(h_ref, rel=1e-10, abs=1e-300)
    assert h < 0  # log-concave everywhere


def _fd(y, d, s):
    """Gradient and curvature in ``d`` of scipy's logistic log-density, by central differences."""
    f = lambda x: stats.logistic.logpdf(y, loc=x, scale=s)  # noqa: E731
    h1, h2 = 1e-6 * max(s, 1.0), 1e-3 * s
    return (f(d + h1) - f(d - h1)) / (2 * h1), (f(d + h2) - 2 * f(d) + f(d - h2)) / h2**2


@pytest.mark.parametrize("y, d, s", [c for c in CASES if abs(c[0] - c[1]) / c[2] < 20])
def test_derivatives_against_finite_differences(y, d, s):
    g_fd, h_fd = _fd(y, d, s)
    _, g, h = _kernel(LogisticMargin(s), y, d)
    assert g == pytest.approx(g_fd, rel=1e-6, abs=1e-9)
    assert h == pytest.approx(h_fd, rel=1e-5, abs=1e-9)


# ---------------------------------------------------------------- the forecast
def _quad_forecast(m, var, s, w):
    """``E[P(y > w | d)]``, ``E[P(y < -w | d)]`` for ``d ~ N(m, var)``, ``y | d ~ Logistic(d, s)``,
    by adaptive quadrature; the draw the rest."""
    if var == 0:
        pw, pl = stats.logistic.sf(w, loc=m, scale=s), stats.logistic.cdf(-w, loc=m, scale=s)
        return np.array([pw, 1 - pw - pl, pl])
    sd = math.sqrt(var)
    lo, hi = m - 12 * sd, m + 12 * sd  # the Gaussian mass outside is below 1e-32
    dens = stats.norm(m, sd).pdf
    opts = dict(epsabs=1e-13, epsrel=1e-12, limit=200, points=[m - w, m + w, w, -w])
    pw = integrate.quad(lambda d: dens(d) * stats.logistic.sf(w, loc=d, scale=s), lo, hi, **opts)[0]
    pl = integrate.quad(lambda d: dens(d) * stats.logistic.cdf(-w, loc=d, scale=s), lo, hi, **opts)[0]
    return np.array([pw, 1 - pw - pl, pl])


@pytest.mark.parametrize("s, w", [(5.0, 0.5), (1.0, 0.0), (0.8, 1.5), (13.0, 0.5)])
@pytest.mark.parametrize("m_over_s", [-3.0, -0.4, 0.0, 0.25, 1.7, 6.0])
@pytest.mark.parametrize("var_over_s2", [0.0, 0.05, 0.5, 1.0, 3.0, 8.0])
def test_forecast_integrates_the_skill_uncertainty(s, w, m_over_s, var_over_s2):
    m, var = m_over_s * s, var_over_s2 * s * s
    got = LogisticMargin(s, draw_width=w).proba(m, var)
    np.testing.assert_allclose(got, _quad_forecast(m, var, s, w), rtol=0, atol=1e-7)
    if w == 0:
        assert got[1] == 0.0


def test_more_nodes_for_a_wide_prior():
    # at var = 30 s^2 the default rule keeps fewer digits; 300 nodes get them back
    s, m, var = 2.0, 1.0, 30 * 4.0
    ref = _quad_forecast(m, var, s, 0.5)
    assert np.max(np.abs(LogisticMargin(s, nodes=300).proba(m, var) - ref)) < 1e-7
    assert np.max(np.abs(LogisticMargin(s).proba(m, var) - ref)) < 1e-4


@settings(max_examples=200, deadline=None)
@given(s=st.floats(1e-2, 1e2), w=st.floats(0.0, 5.0), m=st.floats(-1e3, 1e3), var=st.floats(0.0, 1e4),
       nodes=st.integers(1, 200))
def test_probabilities_sum_to_one(s, w, m, var, nodes):
    p = LogisticMargin(s, draw_width=w, nodes=nodes).proba(m, var)
    assert np.all(np.isfinite(p)) and np.all(p >= 0) and np.all(p <= 1)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_a_favourite_is_favoured_symmetrically():
    obs = LogisticMargin(3.0)
    p, q = obs.proba(2.0, 4.0), obs.proba(-2.0, 4.0)
    assert p[0] > p[2]
    np.testing.assert_allclose(p, q[::-1], rtol=0, atol=1e-14)


@pytest.mark.parametrize("kwargs, name", [({"s": 0.0}, "s"), ({"s": -1.0}, "s"), ({"s": float("nan")}, "s"),
                                          ({"s": "5"}, "s"), ({"s": 1.0, "draw_width": -0.5}, "draw_width"),
                                          ({"s": 1.0, "nodes": 0}, "nodes"), ({"s": 1.0, "nodes": 2.5}, "nodes")])
def test_bad_settings_name_the_setting(kwargs, name):
    with pytest.raises(ValueError, match=name):
        LogisticMargin(**kwargs)


def test_from_sd_matches_the_variance():
    obs = LogisticMargin.from_sd(9.0)
    assert stats.logistic(scale=obs.s).std() == pytest.approx(9.0, rel=1e-14)
    assert obs.sd == pytest.approx(9.0, rel=1e-14)


# ---------------------------------------------------------------- the unchanged EKF
def _ekf(obs, prior_var=25.0, drift=0.05, home=0.0):
    return EKF(ss.SkillModel(scale=1.0, prior_mean=0.0, prior_var=prior_var, drift=drift, home=home,
                             observation=obs))


def test_ekf_runs_on_a_simulated_stream():
    sim = lm.simulate(12, 60, s=4.0, seed=5)
    run = _ekf(LogisticMargin(4.0)).run(sim.games)
    p = run.proba
    assert p.shape == (len(sim.games), 3)
    assert np.all(np.isfinite(p)) and np.all(p >= 0) and np.all(p <= 1)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    r = run.ratings()
    assert len(r) == 12 and np.all(np.isfinite(r["mean"])) and np.all(r["sd"] > 0)
    assert r["sd"].max() < 5.0  # every team learned something
    # the forecasts track the simulated skills: in the second half, the expected score rises with
    # the true skill difference
    half = len(sim.games) // 2
    e = p[half:, 0] + 0.5 * p[half:, 1]
    assert np.corrcoef(sim.true_d[half:], e)[0, 1] > 0.8


def test_ekf_refuses_games_without_scores():
    g = ss.Games.from_arrays([0, 1], ["A", "B"], ["B", "A"], [1.0, 0.0])
    with pytest.raises(ValueError, match="score_a"):
        _ekf(LogisticMargin(3.0)).run(g)


@pytest.mark.parametrize("y, home, neutral", [(7.0, 0.0, True), (-15.0, 1.2, False), (0.0, -0.6, False),
                                              (30.0, 0.0, True)])
def test_one_game_is_one_newton_step(y, home, neutral):
    s, w = 3.0, 0.5
    prior = {"A": (1.0, 2.0), "B": (-0.5, 3.0)}  # (mean, sd)
    games = ss.Games.from_arrays([0.0], ["A"], ["B"], neutral=[neutral], score_a=[20.0 + max(y, 0)],
                                 score_b=[20.0 + max(-y, 0)])
    run = _ekf(LogisticMargin(s, draw_width=w), home=home).run(games, initial=prior)
    post = run.state.frame().set_index("player")

    # the reference: Newton's step on log N(x; m, Sigma) + log f(y | J x + h) from x = m
    m = np.array([prior["A"][0], prior["B"][0]])
    Sigma = np.diag([prior["A"][1] ** 2, prior["B"][1] ** 2])
    J = np.array([1.0, -1.0])
    d0 = J @ m + (0.0 if neutral else home)
    g, kappa = _fd(y, d0, s)
    grad = J * g
    hess = -np.linalg.inv(Sigma) + kappa * np.outer(J, J)
    new_m = m - np.linalg.solve(hess, grad)
    new_cov = -np.linalg.inv(hess)
    np.testing.assert_allclose(post.loc[["A", "B"], "mean"], new_m, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(post.loc[["A", "B"], "sd"] ** 2, np.diag(new_cov), rtol=1e-6)
    # the game's forecast came from the prior, with the skills' variance integrated out
    np.testing.assert_allclose(run.proba[0], _quad_forecast(d0, J @ Sigma @ J, s, w), rtol=0, atol=1e-7)


# ---------------------------------------------------------------- the example itself
def test_example_main_quick(capsys):
    assert lm.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for label in ("LogisticMargin (true model)", "Margin (Gaussian, same sd)", "Outcome (ordered logit)",
                  "(forecast at the true skills)", "1,200 games of 20 teams", "the last 360 games"):
        assert label in out, label
    rows = {line[:30].strip(): line[30:].split() for line in out.splitlines() if line[:30].strip() in (
        "LogisticMargin (true model)", "Margin (Gaussian, same sd)", "Outcome (ordered logit)",
        "(forecast at the true skills)")}
    assert len(rows) == 4
    for name, numbers in rows.items():  # log loss, three-way log loss, Brier: plausible values
        loss, loss3, brier = map(float, numbers)
        assert 0.3 < loss < math.log(2) and loss < loss3 < math.log(3) and 0.1 < brier < 0.25, (name, numbers)


# ---------------------------------------------------------------- score metrics of an extension
def test_logistic_margin_mean_margin_is_the_logistic_mean():
    o = lm.LogisticMargin(s=4.0)
    d = np.array([-3.0, 0.0, 2.5])
    want = [stats.logistic.mean(loc=x, scale=4.0) for x in d]  # scipy's mean of the logistic
    np.testing.assert_allclose(o.mean_margin(d, 1.5), want, rtol=0, atol=1e-12)


class _NoMeanMargin(lm.LogisticMargin):
    """An extension's observation that forecasts no mean margin (the base refuses)."""
    mean_margin = ss.Observation.mean_margin


def test_compare_leaves_margin_rmse_nan_for_an_observation_without_a_mean_margin():
    rng = np.random.default_rng(3)
    n = 240
    a = rng.integers(0, 8, n)
    b = (a + rng.integers(1, 8, n)) % 8
    sa, sb = rng.poisson(1.5, n), rng.poisson(1.2, n)
    games = ss.Games.from_arrays(np.arange(n, dtype=float), a, b, score_a=sa, score_b=sb)
    model = ss.SkillModel(scale=1.0, prior_var=1.0, drift=0.01, observation=_NoMeanMargin(s=1.0))
    with pytest.raises(NotImplementedError, match="no mean_margin"):
        model.observation.mean_margin(0.0)
    table = ss.compare({"ekf": EKF(model)}, games, split=0.7, mode="online")
    assert np.isnan(table.loc["ekf", "margin_rmse"])
    assert np.isfinite(table.loc["ekf", "score_log_density"])
