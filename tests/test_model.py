"""SkillModel: validation, forecast invariants, and the forecast formulas against independent
references (scipy quadrature, textbook Davidson / ordered logit-probit written out here)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from statespace import ELO_SCALE, Davidson, HalfWin, NoDraw, SkillModel, Threshold

LINKS = ("logistic", "probit")
# every draw model, with a parameter drawn by hypothesis where it has one
DRAW_KINDS = ("none", "half", "threshold", "davidson")


def make_draw(kind: str, param: float):
    return {"none": NoDraw(), "half": HalfWin(), "threshold": Threshold(param), "davidson": Davidson(param)}[kind]


def F(link: str, x):
    """The link cdf, written independently of statespace (scipy)."""
    return special.expit(x) if link == "logistic" else stats.norm.cdf(x)


# ---------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kwargs, word", [
    (dict(link="logit"), "link"),
    (dict(link="normal"), "link"),
    (dict(scale=0.0), "scale"),
    (dict(scale=-1.0), "scale"),
    (dict(prior_var=-0.1), "prior_var"),
    (dict(drift=-1e-9), "drift"),
    (dict(scale=float("nan")), "scale"),
    (dict(prior_mean=float("nan")), "prior_mean"),
    (dict(prior_var=float("inf")), "prior_var"),
    (dict(drift=float("nan")), "drift"),
    (dict(home=float("nan")), "home"),
    (dict(scale="1.0"), "scale"),
    (dict(draw="ties"), "draw"),
    (dict(draw=("threshold",)), "draw"),
    (dict(draw=("margin", 1.0)), "draw"),
    (dict(draw=0.5), "draw"),
])
def test_invalid_model_raises_value_error_naming_the_field(kwargs, word):
    with pytest.raises(ValueError, match=word):
        SkillModel(**kwargs)


@pytest.mark.parametrize("draw", [("threshold", -1.0), ("davidson", -0.5), ("threshold", float("nan")),
                                  ("davidson", float("inf"))])
def test_invalid_draw_parameter_raises(draw):
    with pytest.raises(ValueError):
        SkillModel(draw=draw)
    with pytest.raises(ValueError):
        (Threshold if draw[0] == "threshold" else Davidson)(draw[1])


def test_draw_spec_forms_are_equivalent():
    assert SkillModel(draw=("threshold", 0.3)).draw == Threshold(0.3)
    assert SkillModel(draw=("davidson", 2.0)).draw == Davidson(2.0)
    assert SkillModel(draw="half").draw == HalfWin()
    assert SkillModel().draw == NoDraw()


def test_negative_variance_raises():
    m = SkillModel()
    with pytest.raises(ValueError):
        m.proba(0.0, -1.0)
    with pytest.raises(ValueError):
        m.effective_scale(np.array([0.0, -0.5]))


def test_zero_prior_var_and_drift_are_allowed():
    m = SkillModel(prior_var=0, drift=0)
    assert m.prior_var == 0.0 and m.drift == 0.0
    # predict_var: var + drift * dt, checked by hand
    assert SkillModel(drift=2.5).predict_var(1.0, 4.0) == pytest.approx(1.0 + 2.5 * 4.0)


# ---------------------------------------------------------------------------- invariants
@settings(max_examples=50, deadline=None)
@given(link=st.sampled_from(LINKS), kind=st.sampled_from(DRAW_KINDS),
       diff=st.floats(-2000, 2000), var=st.floats(0, 1e5),
       scale=st.floats(0.05, 500), param=st.floats(0, 400))
def test_proba_rows_are_probabilities(link, kind, diff, var, scale, param):
    if kind == "threshold":  # a margin is a length: at most 1e3 scales (statespace.model.ranges)
        param = min(param, 1e3 * scale)
    m = SkillModel(link, scale, draw=make_draw(kind, param))
    p = m.proba(np.array([diff, -diff, 0.0]), var)
    assert p.shape == (3, 3)
    assert np.all(p >= 0) and np.all(p <= 1)
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)
    if kind in ("none", "half"):
        assert np.all(p[:, 1] == 0)


@settings(max_examples=50, deadline=None)
@given(link=st.sampled_from(LINKS), kind=st.sampled_from(DRAW_KINDS),
       diff=st.floats(-50, 50), var=st.floats(0, 100), param=st.floats(0, 10))
def test_proba_symmetry(link, kind, diff, var, param):
    """Swapping a and b swaps win and loss: proba(d)[win] == proba(-d)[loss]."""
    m = SkillModel(link, 3.0, draw=make_draw(kind, param))
    p, q = m.proba(diff, var), m.proba(-diff, var)
    assert p[0] == pytest.approx(q[2], abs=1e-12)
    assert p[2] == pytest.approx(q[0], abs=1e-12)
    assert p[1] == pytest.approx(q[1], abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(link=st.sampled_from(LINKS), d1=st.floats(-20, 20), d2=st.floats(-20, 20))
def test_win_probability_increases_with_skill_difference(link, d1, d2):
    m = SkillModel(link, 2.0)
    lo, hi = sorted((d1, d2))
    assert m.proba(lo)[0] <= m.proba(hi)[0]


def test_proba_broadcasts_shapes():
    m = SkillModel("probit", 1.0, draw=("threshold", 0.2))
    p = m.proba(np.zeros((4, 5)), np.ones(5))
    assert p.shape == (4, 5, 3)


# ---------------------------------------------------------------------------- integration over var
def _gauss_expect(f, mean, var):
    """E[f(X)], X ~ N(mean, var), by scipy quadrature (the independent reference)."""
    if var == 0:
        return float(f(mean))
    sd = math.sqrt(var)
    val, _ = integrate.quad(lambda x: f(x) * stats.norm.pdf(x, mean, sd), mean - 14 * sd, mean + 14 * sd,
                            epsabs=1e-13, epsrel=1e-12, limit=200)
    return val


@pytest.mark.parametrize("scale", [1.0, 2.5, ELO_SCALE])
@pytest.mark.parametrize("mean_units, var_units", [(0.0, 0.0), (0.3, 0.5), (-1.7, 2.0), (2.5, 9.0),
                                                   (0.0, 4.0), (-4.0, 0.1)])
def test_probit_integration_is_exact(scale, mean_units, var_units):
    """Probit: E[Phi(X / s)] for X ~ N(m, v), by quadrature, equals proba(m, v)[win] to 1e-8."""
    m, v = mean_units * scale, var_units * scale**2
    model = SkillModel("probit", scale)
    ref = _gauss_expect(lambda x: stats.norm.cdf(x / scale), m, v)
    assert model.proba(m, v)[0] == pytest.approx(ref, abs=1e-8)


@pytest.mark.parametrize("mean_units, var_units", [(0.4, 1.0), (-1.0, 3.0)])
def test_probit_threshold_integration_is_exact(mean_units, var_units):
    """Ordered probit with skill uncertainty: win = E[Phi((X - margin) / s)], by quadrature."""
    scale, margin = 2.0, 0.7
    m, v = mean_units * scale, var_units * scale**2
    model = SkillModel("probit", scale, draw=Threshold(margin))
    win = _gauss_expect(lambda x: stats.norm.cdf((x - margin) / scale), m, v)
    loss = _gauss_expect(lambda x: stats.norm.cdf((-x - margin) / scale), m, v)
    p = model.proba(m, v)
    assert p[0] == pytest.approx(win, abs=1e-8)
    assert p[2] == pytest.approx(loss, abs=1e-8)


def test_logistic_integration_error_is_within_documented_bound():
    """Logistic: Glickman's approximation vs quadrature of E[logistic(X / s)], X ~ N(m, v).

    The SkillModel docstring claims "accurate to about 0.01 in probability for v <= s^2";
    measured max over this grid is 0.0098 (at v = s^2, m ~ 1.3 s). Assert the documented
    0.01 (with the brief's 0.02 as the hard ceiling being comfortably met) and that the error
    is not trivially zero (so the test would notice if the approximation were replaced).
    """
    scale = 1.7
    model = SkillModel("logistic", scale)
    worst = 0.0
    for var_units in (0.0, 0.05, 0.25, 0.5, 0.75, 1.0):
        for mean_units in np.linspace(-6, 6, 49):
            m, v = mean_units * scale, var_units * scale**2
            ref = _gauss_expect(lambda x: special.expit(x / scale), m, v)
            worst = max(worst, abs(model.proba(m, v)[0] - ref))
    assert worst < 0.02
    assert worst <= 0.0101  # the docstring's "about 0.01"
    assert worst > 1e-3     # it is an approximation, not exact


def test_logistic_zero_variance_is_exact_logistic():
    model = SkillModel("logistic", 3.0)
    d = np.linspace(-20, 20, 41)
    np.testing.assert_allclose(model.proba(d)[:, 0], 1 / (1 + np.exp(-d / 3.0)), rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------- draw models
@settings(max_examples=50, deadline=None)
@given(sa=st.floats(-6, 6), sb=st.floats(-6, 6), nu=st.floats(0, 20))
def test_davidson_logistic_is_textbook_davidson(sa, sb, nu):
    """Davidson (1970) with strengths pi = exp(s):
    P(a) = pi_a / D, P(b) = pi_b / D, P(draw) = nu sqrt(pi_a pi_b) / D,
    D = pi_a + pi_b + nu sqrt(pi_a pi_b)."""
    pa, pb = math.exp(sa), math.exp(sb)
    den = pa + pb + nu * math.sqrt(pa * pb)
    ref = (pa / den, nu * math.sqrt(pa * pb) / den, pb / den)
    p = SkillModel("logistic", 1.0, draw=Davidson(nu)).proba(sa - sb)
    np.testing.assert_allclose(p, ref, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("scale", [1.0, ELO_SCALE])
def test_davidson_with_scale_uses_pi_exp_s_over_scale(scale):
    sa, sb, nu = 1.2 * scale, -0.4 * scale, 0.8
    pa, pb = math.exp(sa / scale), math.exp(sb / scale)
    den = pa + pb + nu * math.sqrt(pa * pb)
    p = SkillModel("logistic", scale, draw=("davidson", nu)).proba(sa - sb)
    np.testing.assert_allclose(p, (pa / den, nu * math.sqrt(pa * pb) / den, pb / den), rtol=1e-12)


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("nu", [0.0, 0.5, 1.0, 3.0])
def test_davidson_draw_probability_at_zero_is_nu_over_2_plus_nu(link, nu):
    # at d = 0, p = q = 1/2: draw = (nu / 2) / (1 + nu / 2) = nu / (2 + nu)
    p = SkillModel(link, 1.0, draw=Davidson(nu)).proba(0.0)
    assert p[1] == pytest.approx(nu / (2 + nu), abs=1e-15)
    assert p[0] == pytest.approx(1 / (2 + nu), abs=1e-15)


@settings(max_examples=50, deadline=None)
@given(link=st.sampled_from(LINKS), d=st.floats(-30, 30), margin=st.floats(0, 10), scale=st.floats(0.2, 5))
def test_threshold_is_ordered_logit_probit(link, d, margin, scale):
    """Ordered model with latent y* = d + e, e ~ F(./scale): win if y* > margin, loss if
    y* < -margin; written with scipy cdfs (win = 1 - F((margin - d)/s))."""
    p = SkillModel(link, scale, draw=Threshold(margin)).proba(d)
    win = 1.0 - F(link, (margin - d) / scale)
    loss = F(link, (-margin - d) / scale)
    np.testing.assert_allclose(p, (win, 1.0 - win - loss, loss), atol=1e-12)


def test_threshold_zero_margin_has_no_draws():
    p = SkillModel("probit", 1.0, draw=Threshold(0.0)).proba(np.linspace(-3, 3, 7))
    np.testing.assert_allclose(p[:, 1], 0.0, atol=1e-15)


# ---------------------------------------------------------------------------- loglik
@pytest.mark.parametrize("link", LINKS)
def test_loglik_half_win_draw(link):
    m = SkillModel(link, 2.0, draw="half")
    d = 0.9
    f = float(F(link, d / 2.0))
    assert m.loglik(0.5, d) == pytest.approx(0.5 * math.log(f) + 0.5 * math.log(1 - f), rel=1e-12)
    assert m.loglik(1.0, d) == pytest.approx(math.log(f), rel=1e-12)
    assert m.loglik(0.0, d) == pytest.approx(math.log(1 - f), rel=1e-12)


def test_loglik_draw_under_none_raises():
    m = SkillModel("logistic", 1.0, draw="none")
    assert m.loglik(np.array([1.0, 0.0]), 0.3).shape == (2,)
    with pytest.raises(ValueError, match="draw"):
        m.loglik(np.array([1.0, 0.5]), 0.3)


@pytest.mark.parametrize("draw", [("threshold", 0.4), ("davidson", 1.5)])
def test_loglik_three_outcome_models_pick_the_observed_outcome(draw):
    m = SkillModel("logistic", 1.0, draw=draw)
    d = np.array([0.2, 0.2, 0.2])
    ll = m.loglik(np.array([1.0, 0.5, 0.0]), d)
    p = m.proba(0.2)
    np.testing.assert_allclose(ll, np.log(p), rtol=1e-12)
    # the three outcomes' probabilities sum to one: logsumexp == 0
    assert special.logsumexp(ll) == pytest.approx(0.0, abs=1e-12)


def test_loglik_threshold_by_formula():
    # ordered logit, margin 0.4, d = 0.2: draw prob = F(0.6) - F(-0.2) (win = 1 - F(0.2), loss = F(-0.6))
    m = SkillModel("logistic", 1.0, draw=("threshold", 0.4))
    draw = special.expit(0.6) - special.expit(-0.2)
    assert m.loglik(0.5, 0.2) == pytest.approx(math.log(draw), rel=1e-12)


# ---------------------------------------------------------------------------- Elo units
def test_elo_expected_score_200_points():
    """1600 vs 1400 under Elo: E = 1 / (1 + 10^(-200/400)) = 0.7597469266 (hand formula)."""
    reference = 1.0 / (1.0 + 10 ** (-0.5))
    m = SkillModel("logistic", ELO_SCALE)
    assert m.expected_score(200.0) == pytest.approx(reference, abs=1e-12)
    assert m.expected_score(200.0) == pytest.approx(0.7597469266, abs=1e-10)
    # a 400-point lead means odds of 10 to 1
    p = m.proba(400.0)
    assert p[0] / p[2] == pytest.approx(10.0, rel=1e-12)


def test_elo_scale_constant():
    assert ELO_SCALE == pytest.approx(400 / math.log(10))
    assert ELO_SCALE == pytest.approx(173.7178, abs=1e-4)


def test_expected_score_counts_half_a_draw():
    m = SkillModel("probit", 1.0, draw=("threshold", 0.5))
    p = m.proba(0.3)
    assert m.expected_score(0.3) == pytest.approx(p[0] + 0.5 * p[1])
    # symmetric game: expected score exactly 1/2 by symmetry
    assert m.expected_score(0.0) == pytest.approx(0.5, abs=1e-15)


def test_diff_adds_home_advantage_only_at_home():
    m = SkillModel(home=30.0)
    np.testing.assert_allclose(m.diff([100, 100], [50, 50], [True, False]), [80.0, 50.0])


# ---------------------------------------------------------------- likelihood derivatives (EKF)
@pytest.mark.parametrize("link", ["logistic", "probit"])
@pytest.mark.parametrize("draw", ["half", ("threshold", 0.4), ("davidson", 0.8)])
def test_loglik_derivatives_match_finite_differences(link, draw):
    # independent check: central differences of SkillModel.loglik
    m = SkillModel(link, scale=1.3, draw=draw)
    h = 1e-4
    for y in (0.0, 0.5, 1.0):
        for d in np.linspace(-4, 4, 9):
            f = lambda x: float(m.loglik(y, x))  # noqa: E731
            g, hh = m.loglik_derivs(y, d)
            assert g == pytest.approx((f(d + h) - f(d - h)) / (2 * h), abs=1e-7)
            assert hh == pytest.approx((f(d + h) - 2 * f(d) + f(d - h)) / h**2, abs=1e-4)
            if draw != ("davidson", 0.8):
                assert hh <= 0  # log-concave


def test_loglik_derivatives_finite_in_the_tails():
    for link in ("logistic", "probit"):
        m = SkillModel(link, scale=1.0, draw=("threshold", 0.5))
        g, h = m.loglik_derivs([1.0, 0.0, 0.5, 1.0, 0.0], [-60.0, 60.0, 60.0, 60.0, -60.0])
        assert np.all(np.isfinite(g)) and np.all(np.isfinite(h))
