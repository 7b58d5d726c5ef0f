"""The bivariate Poisson (``Goals(covariance=...)``) and the inflation of the draws
(``Goals(inflation=...)``) against an independent computation: the joint pmf written out here from
Karlis and Ntzoufras (2003, The Statistician 52(3), eq. 1 and section 2.2) as a convolution of
scipy's Poisson pmfs (``X = W_a + W_3``, ``Y = W_b + W_3``), summed over a grid of scores; the
derivatives against central differences of the log-likelihood."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import nbinom, poisson

from statespace import Goals
from statespace.model.goals import goals_derivs, goals_forecast, goals_loglik

SCALE = 1.0
K = 60  # scores 0..59 (the mass beyond is below 1e-30 at these rates)


def rates(base, d):
    u = d / (2.0 * SCALE)
    return math.exp(base + u), math.exp(base - u)


def bivariate(la, lb, lam3):
    """P(x, y) of X = W_a + W_3, Y = W_b + W_3 on a (K, K) grid, by the convolution over W_3."""
    k = np.arange(K)
    pa, pb, p3 = poisson.pmf(k, la), poisson.pmf(k, lb), poisson.pmf(k, lam3)
    table = np.zeros((K, K))
    for w in range(K):
        if p3[w] < 1e-300:
            break
        table[w:, w:] += p3[w] * np.outer(pa[: K - w], pb[: K - w])
    return table


def inflate(table, base, p):
    """(1 - p) P(x, y) + p D(x) [x = y], D Poisson of rate e^base."""
    out = (1.0 - p) * table
    out[np.diag_indices(K)] += p * poisson.pmf(np.arange(K), math.exp(base))
    return out


def outcome(table):
    x, y = np.indices(table.shape)
    return np.array([table[x > y].sum(), table[x == y].sum(), table[x < y].sum()])


_cases = dict(base=st.floats(math.log(0.3), math.log(3.0)), d=st.floats(-3.0, 3.0), lam3=st.floats(0.0, 1.5),
              p=st.floats(0.0, 0.5), x=st.integers(0, 6), y=st.integers(0, 6))


@settings(max_examples=100, deadline=None)
@given(**_cases)
def test_loglik_and_forecast_are_those_of_the_joint_pmf(base, d, lam3, p, x, y):
    la, lb = rates(base, d)
    table = inflate(bivariate(la, lb, lam3), base, p)
    obs = Goals(base=base, covariance=lam3, inflation=p)
    vec = obs.vector(SCALE)
    l, _, _ = goals_loglik(vec, 0.5, float(x), float(y), d)
    assert l == pytest.approx(math.log(table[x, y]), rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(goals_forecast(vec, d, 0.0), outcome(table), rtol=0, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(**_cases)
def test_derivatives_are_the_slopes_of_the_loglik(base, d, lam3, p, x, y):
    vec = Goals(base=base, covariance=lam3, inflation=p).vector(SCALE)
    h = 1e-4
    lp, lm, l0 = (goals_loglik(vec, 0.5, float(x), float(y), d + s)[0] for s in (h, -h, 0.0))
    g, hh = goals_derivs(vec, 0.5, float(x), float(y), d)
    assert g == pytest.approx((lp - lm) / (2 * h), rel=1e-6, abs=1e-7)
    assert hh == pytest.approx((lp - 2 * l0 + lm) / (h * h), rel=1e-4, abs=1e-5)
    _, g2, h2 = goals_loglik(vec, 0.5, float(x), float(y), d)
    assert (g2, h2) == pytest.approx((g, hh), rel=1e-12, abs=1e-15)


def test_the_shared_goals_change_neither_forecast_nor_update():
    """X - Y = W_a - W_b: the covariance leaves the win/draw/loss forecast and, with la lb fixed by
    base, the derivatives in d as the independent Poisson's; it changes the likelihood of the score."""
    a, b = Goals(base=0.3).vector(SCALE), Goals(base=0.3, covariance=0.4).vector(SCALE)
    for x, y, d in [(0.0, 0.0, 0.3), (2.0, 1.0, -0.4), (3.0, 3.0, 1.2)]:
        assert goals_derivs(a, 0.5, x, y, d) == pytest.approx(goals_derivs(b, 0.5, x, y, d), rel=1e-12)
        assert goals_forecast(a, d, 0.3) == pytest.approx(goals_forecast(b, d, 0.3), rel=1e-12)
        assert goals_loglik(a, 0.5, x, y, d)[0] != pytest.approx(goals_loglik(b, 0.5, x, y, d)[0])


@settings(max_examples=60, deadline=None)
@given(p=st.floats(0.01, 0.6), kappa=st.one_of(st.just(0.0), st.floats(0.01, 0.5)), x=st.integers(0, 5),
       d=st.floats(-2.0, 2.0))
def test_inflation_on_negative_binomial_counts(p, kappa, x, d):
    """Inflation over any law: the negative binomial's joint pmf (scipy's nbinom, size 1/kappa)."""
    base = math.log(1.3)
    la, lb = rates(base, d)
    k = np.arange(K)
    if kappa == 0.0:
        pa, pb = poisson.pmf(k, la), poisson.pmf(k, lb)
    else:
        r = 1.0 / kappa
        pa, pb = nbinom.pmf(k, r, r / (r + la)), nbinom.pmf(k, r, r / (r + lb))
    table = inflate(np.outer(pa, pb), base, p)
    vec = Goals(base=base, dispersion=kappa, inflation=p).vector(SCALE)
    assert goals_loglik(vec, 0.5, float(x), float(x), d)[0] == pytest.approx(math.log(table[x, x]), rel=1e-9)
    np.testing.assert_allclose(goals_forecast(vec, d, 0.0), outcome(table), atol=1e-10)


def test_an_inflated_draw_moves_the_skills_less():
    """A draw 0-0 between unequal sides: its gradient in d shrinks by the share the model explains."""
    plain, inflated = Goals(base=0.3).vector(SCALE), Goals(base=0.3, inflation=0.2).vector(SCALE)
    g0, _ = goals_derivs(plain, 0.5, 0.0, 0.0, 1.5)
    g1, _ = goals_derivs(inflated, 0.5, 0.0, 0.0, 1.5)
    assert 0 < g1 / g0 < 1
    assert goals_derivs(inflated, 1.0, 2.0, 0.0, 1.5) == goals_derivs(plain, 1.0, 2.0, 0.0, 1.5)  # not a draw


def test_the_forecast_over_skill_uncertainty_inflates_the_table():
    """With an uncertain d the forecast is the inflation of the independent one (from the table)."""
    a = Goals(base=0.2).vector(SCALE)
    b = Goals(base=0.2, inflation=0.15, covariance=0.3).vector(SCALE)
    for d, var in [(0.0, 0.5), (1.0, 2.0), (-0.3, 0.01)]:
        pw, pd, pl = goals_forecast(a, d, var)
        assert goals_forecast(b, d, var) == pytest.approx((0.85 * pw, 0.85 * pd + 0.15, 0.85 * pl), rel=1e-12)


def test_the_pymc_graph_is_the_kernel():
    obs = Goals(base=0.3, covariance=0.25, inflation=0.1)
    xs = np.array([0.0, 0.0, 1.0, 1.0, 2.0, 4.0])
    ys = np.array([0.0, 1.0, 0.0, 1.0, 3.0, 4.0])
    d = np.array([0.2, -0.5, 1.0, 0.0, 0.3, -1.0])
    graph = obs.symbolic_loglik(d, np.full(6, 0.5), xs, ys, scale=SCALE).eval()
    kernel = [goals_loglik(obs.vector(SCALE), 0.5, x, y, di)[0] for x, y, di in zip(xs, ys, d)]
    np.testing.assert_allclose(graph, kernel, atol=1e-10)


def test_settings_are_checked():
    with pytest.raises(ValueError, match="covariance"):
        Goals(base=0.3, covariance=-0.1)
    with pytest.raises(ValueError, match="inflation"):
        Goals(base=0.3, inflation=0.99)
    with pytest.raises(ValueError, match="Poisson counts without"):
        Goals(base=0.3, covariance=0.1, dispersion=0.05)
    with pytest.raises(ValueError, match="Poisson counts without"):
        Goals(base=0.3, covariance=0.1, rho=-0.1)
