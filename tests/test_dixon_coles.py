"""Dixon and Coles' low-score correction of the Goals observation (``Goals(rho=...)``), against an
independent computation: the joint pmf ``tau(x, y) Poisson(x; la) Poisson(y; lb)`` written out
here from the paper (Dixon and Coles 1997, JRSS C 46(2), eq. 4.2) with scipy's Poisson pmf, summed
over a grid of scores; its derivatives against central differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import poisson

from statespace import Goals
from statespace.model.goals import TAU_MIN, goals_derivs, goals_forecast, goals_loglik

SCALE = 1.0
GRID = 80  # at least scores 0..79; more where a rate is big (the mass beyond stays below 1e-40)


def tau(x, y, la, lb, rho):
    """Dixon and Coles (1997), eq. 4.2, floored at TAU_MIN as the package does."""
    if x == 0 and y == 0:
        t = 1.0 - la * lb * rho
    elif x == 0 and y == 1:
        t = 1.0 + la * rho
    elif x == 1 and y == 0:
        t = 1.0 + lb * rho
    elif x == 1 and y == 1:
        t = 1.0 - rho
    else:
        t = 1.0
    return max(t, TAU_MIN)


def joint(la, lb, rho):
    """The (GRID, GRID) table of P(x, y), normalised (a floored factor leaves a residue)."""
    top = max(la, lb)
    k = np.arange(max(GRID, int(top + 20.0 * math.sqrt(top) + 20.0)))
    table = np.outer(poisson.pmf(k, la), poisson.pmf(k, lb))
    for x in (0, 1):
        for y in (0, 1):
            table[x, y] *= tau(x, y, la, lb, rho)
    return table / table.sum()


def rates(base, d):
    u = d / (2.0 * SCALE)
    return math.exp(base + u), math.exp(base - u)


_cases = dict(base=st.floats(math.log(0.3), math.log(4.0)), d=st.floats(-3.0, 3.0), rho=st.floats(-0.3, 0.3))


@settings(max_examples=80, deadline=None)
@given(**_cases)
def test_the_forecast_is_the_sum_of_the_joint_pmf(base, d, rho):
    la, lb = rates(base, d)
    table = joint(la, lb, rho)
    win, draw = np.tril(table, -1).sum(), np.trace(table)
    got = goals_forecast(Goals(base=base, rho=rho).vector(SCALE), d, 0.0)
    np.testing.assert_allclose(got, (win, draw, 1.0 - win - draw), rtol=0, atol=1e-12)
    assert abs(sum(got) - 1.0) < 1e-12


@settings(max_examples=80, deadline=None)
@given(x=st.integers(0, 4), y=st.integers(0, 4), **_cases)
def test_the_loglik_is_the_log_of_the_joint_pmf_and_its_derivatives_its_slopes(x, y, base, d, rho):
    params = Goals(base=base, rho=rho).vector(SCALE)
    la, lb = rates(base, d)
    expected = poisson.logpmf(x, la) + poisson.logpmf(y, lb) + math.log(tau(x, y, la, lb, rho))
    lik, g, h = goals_loglik(params, 0.5, float(x), float(y), d)
    assert lik == pytest.approx(expected, abs=1e-10)
    step = 1e-4
    lp = goals_loglik(params, 0.5, float(x), float(y), d + step)[0]
    lm = goals_loglik(params, 0.5, float(x), float(y), d - step)[0]
    # relative too: near a factor's floor (1 + rho lb close to 0) the slopes are steep and the central
    # differences' own error grows with them
    assert g == pytest.approx((lp - lm) / (2 * step), abs=1e-6, rel=1e-5)
    assert h == pytest.approx((lp - 2 * lik + lm) / step**2, abs=1e-4, rel=1e-3)
    assert goals_derivs(params, 0.5, float(x), float(y), d) == pytest.approx((g, h), abs=1e-14)


def test_rho_zero_is_the_independent_model():
    for x, y in ((0, 0), (1, 0), (2, 3)):
        a = goals_loglik(Goals(base=0.3).vector(SCALE), 0.5, float(x), float(y), 0.7)
        b = poisson.logpmf(x, math.exp(0.3 + 0.35)) + poisson.logpmf(y, math.exp(0.3 - 0.35))
        assert a[0] == pytest.approx(b, abs=1e-12)


def test_a_negative_rho_gives_more_draws_as_in_football():
    level = goals_forecast(Goals(base=math.log(1.35)).vector(SCALE), 0.0, 0.0)
    dc = goals_forecast(Goals(base=math.log(1.35), rho=-0.13).vector(SCALE), 0.0, 0.0)
    assert dc[1] > level[1] and dc[0] < level[0]


def test_the_forecast_over_skill_uncertainty_is_the_mean_over_the_skill_difference():
    """With var > 0 the forecast is the joint pmf's outcome averaged over d ~ N(m, v): here by
    Gauss-Hermite quadrature (numpy's nodes) over the direct sums."""
    base, rho, m, v = math.log(1.4), -0.12, 0.4, 0.8
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    acc = np.zeros(3)
    for z, w in zip(nodes, weights):
        table = joint(*rates(base, m + math.sqrt(v) * z), rho)
        win, draw = np.tril(table, -1).sum(), np.trace(table)
        acc += w * np.array([win, draw, 1.0 - win - draw])
    acc /= weights.sum()
    got = goals_forecast(Goals(base=base, rho=rho).vector(SCALE), m, v)
    np.testing.assert_allclose(got, acc, atol=1e-9)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="rho"):
        Goals(base=0.3, rho=1.5)
    with pytest.raises(ValueError, match="Poisson counts"):
        Goals(base=0.3, rho=-0.1, dispersion=0.05)


def test_filters_and_the_pymc_graph_read_it():
    """The EKF runs on it (finite forecasts); PyMC's graph of the log-likelihood is the kernel's."""
    import statespace as ss
    from filters import EKF

    from conftest import with_points

    games = with_points(ss.scenarios.get("balanced", seed=1).games)
    model = ss.SkillModel("logistic", 173.7, 1500.0, 350.0**2, 100.0, observation=Goals(base=0.3, rho=-0.1))
    fitted = EKF(model=model).fit(games)
    assert np.isfinite(np.asarray(fitted.proba)).all()
    obs = Goals(base=0.3, rho=-0.1)
    xs = np.array([0.0, 0.0, 1.0, 1.0, 2.0])
    ys = np.array([0.0, 1.0, 0.0, 1.0, 3.0])
    d = np.array([0.2, -0.5, 1.0, 0.0, 0.3])
    graph = obs.symbolic_loglik(d, np.full(5, 0.5), xs, ys, scale=SCALE).eval()
    kernel = [goals_loglik(obs.vector(SCALE), 0.5, x, y, di)[0] for x, y, di in zip(xs, ys, d)]
    np.testing.assert_allclose(graph, kernel, atol=1e-10)
