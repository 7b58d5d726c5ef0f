"""Observation models (Outcome, Margin, Goals): each against an independent reference.

- Outcome: bit for bit what SkillModel computed from ``statespace.model.numeric`` before the
  observations existed (the formulas re-assembled here from the scalar kernels);
- log-likelihoods against scipy (norm.logpdf, poisson.logpmf, the link cdfs), derivatives
  against mpmath's numerical differentiation of the same log-likelihood written in mpmath;
- forecasts with skill uncertainty against scipy quadrature over d, Goals against
  scipy.stats.skellam, exact tilted moments against quadrature;
- hypothesis: every forecast is a probability vector.
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from conftest import compiled_and_python_runs
from statespace import (Davidson, Games, Goals, HalfWin, Margin, NoDraw, Observation, Outcome, SkillModel,
                        Threshold)
from statespace.model import numeric as nx

LINKS = ("logistic", "probit")
DRAWS = (NoDraw(), HalfWin(), Threshold(0.4), Davidson(0.7))


def grid(rng, n=200):
    """Skill differences (including far tails) and variances."""
    d = np.concatenate([rng.normal(0, 2, n), [-40.0, -8.0, -1e-3, 0.0, 1e-3, 8.0, 40.0]])
    var = np.concatenate([rng.exponential(1.0, n), [0.0, 0.0, 3.0, 0.0, 1e-6, 9.0, 0.5]])
    return d, var


# ---------------------------------------------------------------------------- Outcome: today's numbers
@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("draw", DRAWS)
@pytest.mark.parametrize("scale", [1.0, 173.7178])
def test_outcome_is_bit_identical_to_the_numeric_kernels(link, draw, scale):
    rng = np.random.default_rng(7)
    d, var = grid(rng)
    d, var = d * scale / 2, var * scale**2 / 4
    model = SkillModel(link, scale, draw=draw)
    lc, dc, th = nx.LINKS.index(link), draw.code, draw.theta

    # the forecast: outcome_proba at the effective scale sqrt(scale^2 + k var)
    k = nx.LOGISTIC_VAR_FACTOR if link == "logistic" else 1.0
    s = np.sqrt(scale**2 + k * var)
    want = nx.outcome_proba_array(lc, dc, th, d, s)
    assert np.array_equal(model.proba(d, var), want)
    assert np.array_equal(model.expected_score(d, var), want[:, 0] + 0.5 * want[:, 1])

    # the predictive log-likelihood, as SkillModel.loglik wrote it
    tiny = np.finfo(float).tiny
    for score in ([1.0, 0.0] if dc == nx.DRAW_NONE else [1.0, 0.5, 0.0]):
        y = np.full(d.size, score)
        if dc in (nx.DRAW_NONE, nx.DRAW_HALF):
            old = y * np.log(np.maximum(want[:, 0], tiny)) + (1 - y) * np.log(np.maximum(want[:, 2], tiny))
        else:
            old = np.log(np.maximum(want[:, {1.0: 0, 0.5: 1, 0.0: 2}[score]], tiny))
        assert np.array_equal(model.loglik(y, d, var), old)

        # derivatives: loglik_derivs; l: loglik_grad
        g, h = nx.loglik_derivs_array(lc, dc, th, y, d, scale)
        mg, mh = model.loglik_derivs(y, d)
        assert np.array_equal(mg, g) and np.array_equal(mh, h)
        l3, g3, h3 = model.observation.loglik(y, d, scale=scale)
        assert np.array_equal(g3, g) and np.array_equal(h3, h)
        want_l = np.array([nx.loglik_grad(lc, dc, th, score, x, scale)[0] for x in d])
        assert np.array_equal(l3, want_l)


def test_outcome_vector_and_compiled_kernels_called_directly():
    o = Outcome("probit", ("threshold", 0.3))
    p = o.vector(2.0)
    assert p.tolist() == [1.0, 2.0, 0.3, 2.0]
    assert o.forecast_kernel(p, 0.7, 0.5) == nx.outcome_proba(1, 2, 0.3, 0.7, math.sqrt(4.0 + 0.5))
    l, g, h = o.lik_kernel(p, 0.5, math.nan, math.nan, 0.7)
    assert (g, h) == nx.loglik_derivs(1, 2, 0.3, 0.5, 0.7, 2.0)
    assert l == nx.loglik_grad(1, 2, 0.3, 0.5, 0.7, 2.0)[0]


# ---------------------------------------------------------------------------- Outcome: independent formulas
def F(link, x):
    return special.expit(x) if link == "logistic" else stats.norm.cdf(x)


def logF(link, x):
    return special.log_expit(x) if link == "logistic" else stats.norm.logcdf(x)


def outcome_l_scipy(link, draw, score, d, scale):
    """The win/draw/loss log-likelihood written out with scipy."""
    z = d / scale
    if isinstance(draw, Threshold):
        m = draw.margin / scale
        if score == 1.0:
            return logF(link, z - m)
        if score == 0.0:
            return logF(link, -z - m)
        t = abs(z)  # the draw term is even in z; at |z| the two cdfs keep their digits
        return math.log(F(link, m - t) - F(link, -m - t))
    if isinstance(draw, Davidson):
        p, q = F(link, z), F(link, -z)
        den = 1 + draw.nu * math.sqrt(p * q)
        return math.log({1.0: p, 0.0: q, 0.5: draw.nu * math.sqrt(p * q)}[score] / den)
    return score * logF(link, z) + (1 - score) * logF(link, -z)


def outcome_l_mpmath(link, draw, score, d, scale):
    """The same log-likelihood in mpmath (for numerical differentiation at high precision)."""
    cdf = (lambda x: 1 / (1 + mpmath.exp(-x))) if link == "logistic" else mpmath.ncdf
    z = d / scale
    if isinstance(draw, Threshold):
        m = mpmath.mpf(draw.margin) / scale
        if score == 1.0:
            return mpmath.log(cdf(z - m))
        if score == 0.0:
            return mpmath.log(cdf(-z - m))
        return mpmath.log(cdf(m - z) - cdf(-m - z))
    if isinstance(draw, Davidson):
        p, q = cdf(z), cdf(-z)
        r = mpmath.sqrt(p * q)
        return mpmath.log({1.0: p, 0.0: q, 0.5: draw.nu * r}[score] / (1 + draw.nu * r))
    return score * mpmath.log(cdf(z)) + (1 - score) * mpmath.log(cdf(-z))


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("draw", DRAWS)
def test_outcome_loglik_and_derivatives_against_scipy_and_mpmath(link, draw):
    o, scale = Outcome(link, draw), 1.7
    mpmath.mp.dps = 40
    for score in ([1.0, 0.0] if isinstance(draw, NoDraw) else [1.0, 0.5, 0.0]):
        for d in (-4.0, -0.3, 0.0, 0.9, 3.0):
            l, g, h = (float(v) for v in o.loglik(score, d, scale=scale))
            assert l == pytest.approx(outcome_l_scipy(link, draw, score, d, scale), rel=1e-12, abs=1e-14)
            f = lambda x: outcome_l_mpmath(link, draw, score, x, mpmath.mpf(scale))  # noqa: E731
            assert g == pytest.approx(float(mpmath.diff(f, mpmath.mpf(d), 1)), rel=1e-9, abs=1e-12)
            assert h == pytest.approx(float(mpmath.diff(f, mpmath.mpf(d), 2)), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("draw", [NoDraw(), Threshold(0.5)])
def test_probit_forecast_with_variance_against_quadrature(draw):
    o, scale = Outcome("probit", draw), 1.3
    for d, var in [(0.4, 0.8), (-1.5, 2.5), (2.0, 0.05)]:
        def integrand(x, k):
            return stats.norm.pdf(x, d, math.sqrt(var)) * Outcome("probit", draw).proba(x, scale=scale)[k]
        want = [integrate.quad(integrand, d - 12 * math.sqrt(var), d + 12 * math.sqrt(var), args=(k,),
                               epsabs=1e-13, epsrel=1e-12)[0] for k in range(3)]
        np.testing.assert_allclose(o.proba(d, var, scale=scale), want, atol=1e-10)


def tilted_moments_by_quadrature(loglik, mean, var):
    """Mean and variance of N(x; mean, var) exp(loglik(x)), normalised, by scipy quadrature."""
    sd = math.sqrt(var)
    lo, hi = mean - 14 * sd, mean + 14 * sd
    w = lambda x: stats.norm.pdf(x, mean, sd) * math.exp(loglik(x))  # noqa: E731
    z = integrate.quad(w, lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0]
    m = integrate.quad(lambda x: x * w(x), lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0] / z
    v = integrate.quad(lambda x: (x - m) ** 2 * w(x), lo, hi, epsabs=0, epsrel=1e-13, limit=200)[0] / z
    return m, v


@pytest.mark.parametrize("draw", [NoDraw(), HalfWin(), Threshold(0.6)])
def test_probit_moments_against_quadrature(draw):
    o, scale = Outcome("probit", draw), 1.4
    scores = [1.0, 0.0] + ([0.5] if isinstance(draw, Threshold) else [])
    for score in scores:
        for mean, var in [(0.3, 1.0), (-2.0, 0.5), (1.5, 4.0)]:
            m, v = o.moments(score, mean, var, scale=scale)
            want = tilted_moments_by_quadrature(lambda x: outcome_l_scipy("probit", draw, score, x, scale), mean, var)
            assert (float(m), float(v)) == pytest.approx(want, rel=1e-8, abs=1e-10)


def test_moments_raise_where_not_exact():
    with pytest.raises(NotImplementedError, match="logistic"):
        Outcome("logistic").moments(1.0, 0.0, 1.0)
    with pytest.raises(NotImplementedError, match="Davidson"):
        Outcome("probit", ("davidson", 1.0)).moments(1.0, 0.0, 1.0)
    with pytest.raises(NotImplementedError, match="half"):
        Outcome("probit", "half").moments(0.5, 0.0, 1.0)
    with pytest.raises(NotImplementedError, match="Goals"):
        Goals(base=0.3).moments(1.0, 0.0, 1.0, 2, 1)
    with pytest.raises(ValueError, match="draw"):
        Outcome("probit").moments(0.5, 0.0, 1.0)


# ---------------------------------------------------------------------------- Margin
def test_margin_loglik_and_derivatives():
    o = Margin(sd=13.5)
    rng = np.random.default_rng(1)
    sa, sb = rng.integers(0, 45, 30).astype(float), rng.integers(0, 45, 30).astype(float)
    d = rng.normal(0, 10, 30)
    l, g, h = o.loglik(np.nan, d, sa, sb)
    np.testing.assert_allclose(l, stats.norm.logpdf(sa - sb, d, 13.5), rtol=1e-13)
    mpmath.mp.dps = 30
    for i in range(5):
        f = lambda x: -(sa[i] - sb[i] - x) ** 2 / (2 * mpmath.mpf(13.5) ** 2) - mpmath.log(mpmath.sqrt(2 * mpmath.pi) * 13.5)  # noqa: E731
        assert g[i] == pytest.approx(float(mpmath.diff(f, d[i], 1)), rel=1e-12)
        assert h[i] == pytest.approx(float(mpmath.diff(f, d[i], 2)), rel=1e-12)
    # finite differences of the compiled l, independent of the formula for g
    eps = 1e-4
    lp = o.loglik(np.nan, d + eps, sa, sb)[0]
    lm = o.loglik(np.nan, d - eps, sa, sb)[0]
    np.testing.assert_allclose((lp - lm) / (2 * eps), g, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("w", [0.0, 0.5, 3.0])
def test_margin_forecast_against_quadrature(w):
    sd = 11.0
    o = Margin(sd=sd, draw_width=w)
    for d, var in [(3.0, 0.0), (3.0, 40.0), (-12.0, 5.0), (0.0, 100.0), (60.0, 30.0)]:
        if var == 0:
            want = [stats.norm.sf(w, d, sd), stats.norm.cdf(w, d, sd) - stats.norm.cdf(-w, d, sd),
                    stats.norm.cdf(-w, d, sd)]
        else:
            s = math.sqrt(var)
            def integrand(x, k):
                y = stats.norm(x, sd)
                return stats.norm.pdf(x, d, s) * (y.sf(w), y.cdf(w) - y.cdf(-w), y.cdf(-w))[k]
            want = [integrate.quad(integrand, d - 12 * s, d + 12 * s, args=(k,), epsabs=1e-13, epsrel=1e-12)[0]
                    for k in range(3)]
        np.testing.assert_allclose(o.proba(d, var), want, atol=1e-10)


def test_margin_moments_and_predictive_against_quadrature():
    o = Margin(sd=7.0)
    for mean, var, sa, sb in [(2.0, 9.0, 24, 17), (-5.0, 30.0, 10, 13), (0.0, 0.5, 0, 35)]:
        m, v = o.moments(np.nan, mean, var, sa, sb)
        want = tilted_moments_by_quadrature(lambda x: stats.norm.logpdf(sa - sb, x, 7.0), mean, var)
        assert (float(m), float(v)) == pytest.approx(want, rel=1e-9)
        s = math.sqrt(var)
        z = integrate.quad(lambda x: stats.norm.pdf(x, mean, s) * stats.norm.pdf(sa - sb, x, 7.0),
                           mean - 14 * s, mean + 14 * s, epsabs=0, epsrel=1e-13)[0]
        assert float(o.log_predictive(np.nan, mean, var, sa, sb)) == pytest.approx(math.log(z), rel=1e-10)


def test_margin_needs_scores_and_validates():
    with pytest.raises(ValueError, match="score_a"):
        Margin(sd=3.0).loglik(1.0, 0.0)
    with pytest.raises(ValueError, match="finite"):
        Margin(sd=3.0).loglik(1.0, [0.0, 1.0], [1.0, np.nan], [0.0, 0.0])
    for bad in (0.0, -1.0, float("nan"), float("inf"), "3", True):
        with pytest.raises(ValueError, match="sd"):
            Margin(sd=bad)
    for bad in (-0.5, float("nan")):
        with pytest.raises(ValueError, match="draw_width"):
            Margin(sd=3.0, draw_width=bad)


# ---------------------------------------------------------------------------- Goals
def test_goals_loglik_against_poisson_and_derivatives():
    base, scale = math.log(1.35), 2.0
    o = Goals(base=base)
    rng = np.random.default_rng(2)
    sa, sb = rng.integers(0, 7, 40).astype(float), rng.integers(0, 7, 40).astype(float)
    d = rng.normal(0, 2, 40)
    l, g, h = o.loglik(np.nan, d, sa, sb, scale=scale)
    want = (stats.poisson.logpmf(sa, np.exp(base + d / (2 * scale)))
            + stats.poisson.logpmf(sb, np.exp(base - d / (2 * scale))))
    np.testing.assert_allclose(l, want, rtol=1e-12)
    mpmath.mp.dps = 30
    for i in range(6):
        def f(x, i=i):
            la = base + x / (2 * scale)
            lb = base - x / (2 * scale)
            return (sa[i] * la - mpmath.exp(la) - mpmath.loggamma(sa[i] + 1)
                    + sb[i] * lb - mpmath.exp(lb) - mpmath.loggamma(sb[i] + 1))
        assert g[i] == pytest.approx(float(mpmath.diff(f, d[i], 1)), rel=1e-11, abs=1e-14)
        assert h[i] == pytest.approx(float(mpmath.diff(f, d[i], 2)), rel=1e-11)


@pytest.mark.parametrize("base, d", [(math.log(1.4), 0.0), (math.log(1.4), 1.3), (0.0, -3.0),
                                     (math.log(22.0), 0.4), (math.log(0.2), 2.0), (math.log(300.0), -0.1),
                                     (math.log(1000.0), 0.3), (math.log(5.0), 9.0)])
def test_goals_forecast_is_skellam_at_zero_variance(base, d):
    ra, rb = math.exp(base + d / 2), math.exp(base - d / 2)
    want = [stats.skellam.sf(0, ra, rb), stats.skellam.pmf(0, ra, rb), stats.skellam.cdf(-1, ra, rb)]
    np.testing.assert_allclose(Goals(base=base).proba(d), want, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("base, scale, d, var", [(math.log(1.35), 1.0, 0.3, 0.5), (math.log(1.35), 1.0, -1.0, 2.0),
                                                 (math.log(22.0), 3.0, 1.0, 4.0), (0.0, 0.5, 0.0, 0.05)])
def test_goals_forecast_with_variance_against_quadrature(base, scale, d, var):
    def skellam3(x):
        ra, rb = math.exp(base + x / (2 * scale)), math.exp(base - x / (2 * scale))
        return stats.skellam.sf(0, ra, rb), stats.skellam.pmf(0, ra, rb), stats.skellam.cdf(-1, ra, rb)
    s = math.sqrt(var)
    want = [integrate.quad(lambda x: stats.norm.pdf(x, d, s) * skellam3(x)[k], d - 12 * s, d + 12 * s,
                           epsabs=1e-13, epsrel=1e-12, limit=200)[0] for k in range(3)]
    np.testing.assert_allclose(Goals(base=base).proba(d, var, scale=scale), want, atol=1e-8)


def test_goals_predictive_loglik_against_quadrature():
    o, base, scale = Goals(base=math.log(1.3)), math.log(1.3), 1.5
    for d, var, sa, sb in [(0.5, 0.8, 2, 1), (-1.0, 2.0, 0, 4)]:
        s = math.sqrt(var)
        f = lambda x: stats.norm.pdf(x, d, s) * math.exp(  # noqa: E731
            stats.poisson.logpmf(sa, math.exp(base + x / (2 * scale)))
            + stats.poisson.logpmf(sb, math.exp(base - x / (2 * scale))))
        z = integrate.quad(f, d - 14 * s, d + 14 * s, epsabs=0, epsrel=1e-13)[0]
        assert float(o.log_predictive(np.nan, d, var, sa, sb, scale=scale)) == pytest.approx(math.log(z), rel=1e-9)


@pytest.mark.parametrize("kappa", [0.05, 0.3, 1.7])
def test_negative_binomial_goals_against_scipy_and_mpmath(kappa):
    """Dispersion ``kappa``: each count negative binomial with mean ``lambda`` and variance
    ``lambda + kappa lambda^2``, i.e. scipy's ``nbinom(n=1/kappa, p=1/(1 + kappa lambda))``."""
    base, scale = math.log(1.35), 2.0
    o = Goals(base=base, dispersion=kappa)
    rng = np.random.default_rng(3)
    sa, sb = rng.integers(0, 9, 40).astype(float), rng.integers(0, 9, 40).astype(float)
    d = rng.normal(0, 2, 40)
    l, g, h = o.loglik(np.nan, d, sa, sb, scale=scale)
    r = 1.0 / kappa
    la, lb = np.exp(base + d / (2 * scale)), np.exp(base - d / (2 * scale))
    want = stats.nbinom.logpmf(sa, r, 1 / (1 + kappa * la)) + stats.nbinom.logpmf(sb, r, 1 / (1 + kappa * lb))
    np.testing.assert_allclose(l, want, rtol=1e-12)
    mpmath.mp.dps = 30

    def side(x, eta):
        lam = mpmath.exp(eta)
        return (mpmath.loggamma(x + r) - mpmath.loggamma(r) - mpmath.loggamma(x + 1) + x * (eta - mpmath.log(r))
                - (x + r) * mpmath.log(1 + kappa * lam))

    for i in range(6):
        def f(x, i=i):
            return side(sa[i], base + x / (2 * scale)) + side(sb[i], base - x / (2 * scale))
        assert g[i] == pytest.approx(float(mpmath.diff(f, d[i], 1)), rel=1e-10, abs=1e-14)
        assert h[i] == pytest.approx(float(mpmath.diff(f, d[i], 2)), rel=1e-10)


@pytest.mark.parametrize("base, d, kappa", [(math.log(1.4), 0.0, 0.1), (math.log(1.4), 1.3, 0.5), (0.0, -3.0, 2.0),
                                            (math.log(22.0), 0.4, 0.05), (math.log(0.2), 2.0, 1.0)])
def test_negative_binomial_outcome_against_the_double_sum(base, d, kappa):
    ra, rb = math.exp(base + d / 2), math.exp(base - d / 2)
    r = 1.0 / kappa
    k = np.arange(3000)
    pa = stats.nbinom.pmf(k, r, 1 / (1 + kappa * ra))
    pb = stats.nbinom.pmf(k, r, 1 / (1 + kappa * rb))
    joint = np.outer(pa, pb)
    want = [np.tril(joint, -1).sum(), np.trace(joint), np.triu(joint, 1).sum()]
    np.testing.assert_allclose(Goals(base=base, dispersion=kappa).proba(d), want, rtol=1e-10, atol=1e-15)


def test_dispersion_zero_is_poisson_and_tiny_dispersion_is_close():
    rng = np.random.default_rng(4)
    sa, sb = rng.integers(0, 7, 20).astype(float), rng.integers(0, 7, 20).astype(float)
    d = rng.normal(0, 1, 20)
    poisson, tiny = Goals(0.3), Goals(0.3, dispersion=1e-9)
    assert Goals(0.3, dispersion=0) == poisson
    for a, b in zip(poisson.loglik(np.nan, d, sa, sb), tiny.loglik(np.nan, d, sa, sb)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(poisson.proba(d, 0.3), tiny.proba(d, 0.3), atol=1e-8)


def test_goals_validates():
    for bad in (float("nan"), float("inf"), "0.3", None):
        with pytest.raises(ValueError, match="base"):
            Goals(base=bad)
    for bad in (-0.1, float("inf"), "0.1", True):
        with pytest.raises(ValueError, match="dispersion"):
            Goals(base=0.0, dispersion=bad)
    with pytest.raises(ValueError, match=">= 0"):
        Goals(base=0.0).loglik(1.0, 0.0, -1.0, 0.0)
    with pytest.raises(ValueError, match="score_a"):
        Goals(base=0.0).proba(0.0) is not None and Goals(base=0.0).loglik(1.0, 0.0)


# ---------------------------------------------------------------------------- every observation
OBSERVATIONS = st.one_of(
    st.builds(Outcome, st.sampled_from(LINKS), st.sampled_from(
        ["none", "half", ("threshold", 0.0), ("threshold", 0.8), ("davidson", 0.0), ("davidson", 2.5)])),
    st.builds(Margin, st.floats(0.1, 30.0), st.sampled_from([0.0, 0.5, 2.0])),
    st.builds(Goals, st.floats(-2.0, 4.0)),
)


@settings(max_examples=150, deadline=None)
@given(obs=OBSERVATIONS, d=st.floats(-60.0, 60.0), var=st.one_of(st.just(0.0), st.floats(0.0, 50.0)),
       scale=st.floats(0.3, 5.0))
def test_every_forecast_is_a_probability_vector(obs, d, var, scale):
    p = obs.proba(d, var, scale=scale)
    assert p.shape == (3,)
    assert np.all(p >= 0) and np.all(p <= 1)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(d=st.floats(-5.0, 5.0), var=st.floats(0.01, 3.0), sa=st.integers(0, 8), sb=st.integers(0, 8),
       sd=st.floats(0.5, 10.0))
def test_margin_draw_width_zero_has_no_draws_and_the_forecast_is_even(d, var, sa, sb, sd):
    o = Margin(sd=sd, draw_width=0.0)
    p = o.proba(d, var)
    assert p[1] == 0.0
    q = Margin(sd=sd).proba(-d, var)
    np.testing.assert_allclose(Margin(sd=sd).proba(d, var)[::-1], q, atol=1e-15)


def test_observations_are_immutable_values():
    for o in (Outcome("probit", ("threshold", 0.2)), Margin(sd=2.0), Goals(base=0.1)):
        assert isinstance(o, Observation)
        with pytest.raises(dataclasses.FrozenInstanceError):
            o.name_of_nothing = 1
        assert o == dataclasses.replace(o) and hash(o) == hash(dataclasses.replace(o))
        assert type(o).__name__ in repr(o)
    assert Outcome("probit", ("threshold", 0.2)) != Outcome("probit", ("threshold", 0.3))
    assert Outcome(draw=("davidson", 1.0)).draw == Davidson(1.0)
    with pytest.raises(ValueError, match="link"):
        Outcome("logit")
    with pytest.raises(ValueError, match="draw"):
        Outcome(draw="ties")


# ---------------------------------------------------------------------------- SkillModel(observation=...)
def test_model_default_observation_is_outcome_of_link_and_draw():
    m = SkillModel("probit", 2.0, draw=("threshold", 0.3))
    assert m.observation == Outcome("probit", Threshold(0.3))
    assert m.obs_vector().tolist() == [1.0, 2.0, 0.3, 2.0]
    # replace() rebuilds the observation from the new link/draw
    m2 = dataclasses.replace(m, draw=Threshold(0.5))
    assert m2.observation == Outcome("probit", Threshold(0.5)) and m2.draw == Threshold(0.5)
    assert dataclasses.replace(m, link="logistic").observation.link == "logistic"
    assert "observation" not in repr(m)


def test_model_explicit_outcome_sets_link_and_draw():
    m = SkillModel(scale=3.0, observation=Outcome("probit", "half"))
    assert (m.link, m.draw, m.link_code, m.draw_code) == ("probit", HalfWin(), 1, nx.DRAW_HALF)
    assert m == SkillModel("probit", 3.0, draw="half")
    # the same link given twice is fine, a different one is an error naming it
    SkillModel("probit", observation=Outcome("probit"))
    with pytest.raises(ValueError, match="link"):
        SkillModel("probit", observation=Outcome("logistic"))
    with pytest.raises(ValueError, match="draw"):
        SkillModel(draw="half", observation=Outcome("logistic", ("threshold", 0.1)))
    with pytest.raises(ValueError, match="observation"):
        SkillModel(observation="margin")


def test_model_with_margin_and_goals():
    m = SkillModel(scale=1.0, home=2.5, observation=Margin(sd=13.0))
    assert m.obs_vector().tolist() == [13.0, 0.5]
    assert "Margin" in repr(m)
    assert dataclasses.replace(m, drift=1.0).observation == Margin(sd=13.0)
    assert float(m.loglik(1.0, 3.0, 4.0, 24, 20)) == pytest.approx(stats.norm.logpdf(4.0, 3.0, math.sqrt(173.0)))
    g, h = m.loglik_derivs(1.0, 3.0, 24, 20)
    assert (float(g), float(h)) == pytest.approx((1 / 169, -1 / 169))
    np.testing.assert_allclose(m.proba(3.0, 4.0), Margin(sd=13.0).proba(3.0, 4.0))
    for name in ("link_code", "draw_code"):
        with pytest.raises(ValueError, match="Outcome"):
            getattr(m, name)
    with pytest.raises(ValueError, match="draw"):
        SkillModel(draw="half", observation=Margin(sd=1.0))
    with pytest.raises(ValueError, match="link"):
        SkillModel("probit", observation=Goals(base=0.0))
    goals = SkillModel(scale=2.0, observation=Goals(base=0.25))
    assert goals.obs_vector()[:4].tolist() == [0.25, 2.0, 0.0, 0.0]  # base, scale, dispersion (Poisson), rho (independent); the forecast table follows
    assert float(goals.expected_score(0.0)) == pytest.approx(0.5, abs=1e-14)


def test_observations_read_games_columns():
    games = Games.from_arrays([1, 2, 3], ["x", "y", "x"], ["y", "z", "z"], score_a=[3, 1, 0], score_b=[1, 1, 2])
    l, _, _ = Goals(base=0.2).loglik(games.score, np.zeros(3), games.score_a, games.score_b)
    np.testing.assert_allclose(l, stats.poisson.logpmf([3, 1, 0], math.exp(0.2))
                               + stats.poisson.logpmf([1, 1, 2], math.exp(0.2)))


def test_kernels_agree_compiled_and_as_plain_python():
    script = """
import json, math
import numpy as np
from statespace import Outcome, Margin, Goals
out = {}
for o in (Outcome("logistic", ("davidson", 0.8)), Outcome("probit", ("threshold", 0.4)), Margin(sd=9.0), Goals(base=0.3)):
    p = o.vector(1.5)
    out[repr(o)] = [list(o.lik_kernel(p, 1.0, 3.0, 1.0, 0.7)), list(o.forecast_kernel(p, 0.7, 0.9)),
                    o.proba([0.1, -2.0], [0.0, 1.0], scale=1.5).tolist()]
print(json.dumps(out))
"""
    compiled, python = compiled_and_python_runs(script)
    assert compiled.keys() == python.keys()
    for key in compiled:
        np.testing.assert_allclose(np.concatenate([np.ravel(x) for x in compiled[key]]),
                                   np.concatenate([np.ravel(x) for x in python[key]]), rtol=1e-13, atol=1e-15)


# ---------------------------------------------------------------------------- the PyTensor form (PyMC's graph)
def _symbolic(obs, d, score, score_a, score_b, scale, theta=None):
    """Value and d/dd of ``obs.symbolic_loglik`` at ``d``, every input a PyTensor variable
    (as in PyMC's graph), compiled in PyTensor's Python mode."""
    from statespace._runtime.pytensor_config import configure_pytensor

    configure_pytensor()  # before PyTensor's first import, as the package does
    import pytensor
    import pytensor.tensor as pt

    dv, sv, av, bv = pt.dvector("d"), pt.dvector("score"), pt.dvector("score_a"), pt.dvector("score_b")
    inputs = [dv, sv, av, bv]
    th = None
    if theta is not None:
        th = pt.dscalar("theta")
        inputs.append(th)
    terms = obs.symbolic_loglik(dv, sv, av, bv, scale=scale, theta=th)
    fn = pytensor.function(inputs, [terms, pytensor.grad(terms.sum(), dv)], mode="FAST_COMPILE",
                           on_unused_input="ignore")
    args = [np.asarray(x, dtype=float) for x in (d, score, score_a, score_b)]
    return fn(*args, *([] if theta is None else [theta]))


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("draw", DRAWS)
@pytest.mark.parametrize("scale", [1.0, 173.7178])
def test_outcome_symbolic_loglik_is_the_compiled_kernels(link, draw, scale):
    """The PyTensor log-likelihood PyMC's graph sums equals the observation's compiled kernel in
    value and derivative, for every result, with the draw parameter given symbolically and as
    the observation's own (``theta=None``)."""
    obs = Outcome(link, draw)
    rng = np.random.default_rng(3)
    d = np.concatenate([rng.normal(0, 2, 60), [-12.0, -3.0, 0.0, 3.0, 12.0] * 3]) * scale
    score = rng.choice([0.0, 0.5, 1.0] if draw != NoDraw() else [0.0, 1.0], d.size)
    score[-15:] = np.repeat([0.0, 0.5 if draw != NoDraw() else 1.0, 1.0], 5)
    nan = np.full(d.size, np.nan)
    l, g, _ = obs.loglik(score, d, scale=scale)
    # probit: PyMC's normal_lcdf (through erfcx) is good to a few 1e-6 relative (in the far right
    # tail, where log Phi is tiny); the kernel's to full precision
    rel, tiny = (1e-12, 1e-300) if link == "logistic" else (1e-5, 1e-12)
    for theta in ([None, draw.theta] if draw.theta else [None]):
        value, grad = _symbolic(obs, d, score, nan, nan, scale, theta)
        np.testing.assert_allclose(value, l, rtol=rel, atol=tiny)
        np.testing.assert_allclose(grad, g, rtol=rel, atol=tiny / scale)
        assert np.all(np.isfinite(value)) and np.all(np.isfinite(grad))


@pytest.mark.parametrize("obs, scale", [(Margin(13.5), 1.0), (Margin(0.7, 0.0), 2.0), (Goals(math.log(1.35)), 1.0),
                                        (Goals(0.3), 173.7178), (Goals(0.3, dispersion=0.4), 2.0)])
def test_margin_and_goals_symbolic_loglik_are_the_compiled_kernels(obs, scale):
    """Margin's Gaussian log density and Goals' two Poisson log pmfs in PyTensor equal the
    compiled kernels and scipy, in value and derivative."""
    rng = np.random.default_rng(4)
    d = rng.normal(0, 3 * scale, 50)
    sa, sb = rng.integers(0, 7, 50).astype(float), rng.integers(0, 7, 50).astype(float)
    score = np.where(sa > sb, 1.0, np.where(sa < sb, 0.0, 0.5))
    l, g, _ = obs.loglik(score, d, sa, sb, scale=scale)
    value, grad = _symbolic(obs, d, score, sa, sb, scale)
    np.testing.assert_allclose(value, l, rtol=1e-13)
    np.testing.assert_allclose(grad, g, rtol=1e-12, atol=1e-15)
    if isinstance(obs, Margin):
        ref = stats.norm.logpdf(sa - sb, d, obs.sd)
    elif obs.dispersion == 0:
        u = d / (2 * scale)
        ref = stats.poisson.logpmf(sa, np.exp(obs.base + u)) + stats.poisson.logpmf(sb, np.exp(obs.base - u))
    else:
        u, k = d / (2 * scale), obs.dispersion
        ref = (stats.nbinom.logpmf(sa, 1 / k, 1 / (1 + k * np.exp(obs.base + u)))
               + stats.nbinom.logpmf(sb, 1 / k, 1 / (1 + k * np.exp(obs.base - u))))
    np.testing.assert_allclose(value, ref, rtol=1e-12)


def test_importing_statespace_does_not_import_pytensor():
    import subprocess
    import sys

    code = "import sys, statespace; print('pytensor' in sys.modules, 'pymc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_log_sigmoid_array_is_the_scalar_kernel():
    """The array form of the logistic log cdf and its derivative (the compiled Op's Bradley-Terry
    path) is the scalar ``_log_cdf_and_grad`` to rounding (NumPy's vectorised exp and log1p against
    libm's), tails included."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.normal(0, 5, 500), [-800.0, -40.0, -1e-300, 0.0, 1e-300, 40.0, 800.0]])
    log_f, grad = nx.log_sigmoid_and_grad_array(x)
    ref = np.array([nx._log_cdf_and_grad(nx.LOGISTIC, v) for v in x])
    np.testing.assert_allclose(log_f, ref[:, 0], rtol=2e-15, atol=0)
    np.testing.assert_allclose(grad, ref[:, 1], rtol=2e-15, atol=0)
    np.testing.assert_allclose(log_f, -np.logaddexp(0.0, -x), rtol=1e-15)


@pytest.mark.parametrize("obs", [Outcome(link, draw) for link in ("logistic", "probit")
                                 for draw in ("none", "half", ("threshold", 0.3), ("davidson", 0.8))]
                         + [Margin(sd=2.5), Goals(base=0.3)])
def test_derivs_kernel_is_the_likelihood_kernels_derivatives(obs):
    """The filters linearise with ``derivs_kernel``; it must be ``lik_kernel``'s derivatives (and
    those are checked against finite differences and mpmath above)."""
    p = obs.vector(1.3)
    for score, ya, yb in ((1.0, 3.0, 1.0), (0.5, 2.0, 2.0), (0.0, 0.0, 4.0)):
        if isinstance(obs, Outcome) and obs.draw.code == 0 and score == 0.5:
            continue
        for d in (-2.0, 0.0, 0.7, 3.5):
            _, g, h = obs.lik_kernel(p, score, ya, yb, d)
            assert obs.derivs_kernel(p, score, ya, yb, d) == (g, h)
