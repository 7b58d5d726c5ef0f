"""The latent draw tendency (``SkillModel(draw_drift=...)``, Goals' ``tilt`` as a random walk) in the
EKF: one game's step against a hand computation from the published pieces (the tilted forecast of
``Goals(tilt=m)`` and the Bernoulli likelihood of the draw), the limit of no drift, order inside a
rating period, what it learns from simulated games with more or fewer draws than the counts give,
the tilted law against its joint pmf, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import poisson

import statespace as ss
from filters import EKF
from filters.ekf import DRAW_ROW, HOME_ROW
from statespace.model.goals import goals_forecast

SCALE = ss.ELO_SCALE
BASE = math.log(1.3)


def _games(rows, period=None):
    df = pd.DataFrame(rows, columns=["time", "a", "b", "score_a", "score_b"])
    df["score"] = np.sign(df["score_a"] - df["score_b"]) * 0.5 + 0.5
    df["neutral"] = 0  # a plays at home
    if period is not None:
        df["period"] = period
    return ss.Games.from_frame(df)


def _model(draw_drift=1e-3, tilt=0.0, home_drift=0.0):
    return ss.SkillModel("logistic", SCALE, 1500.0, 200.0**2, 10.0, home=40.0, home_drift=home_drift,
                         observation=ss.Goals(base=BASE, dispersion=0.1, tilt=tilt), draw_drift=draw_drift)


def test_one_game_is_a_newton_step_on_the_draw():
    """From a draw row N(m, v): the forecast is Goals(tilt=m)'s over the skill uncertainty, and the
    row moves to m + v g / (1 + kappa v), variance v / (1 + kappa v), with g = [draw] - p'_D and
    kappa = p'_D (1 - p'_D) (the Bernoulli log-likelihood's slope and curvature in the log-odds)."""
    m, sd = 0.2, 0.3
    games = _games([("2020-01-01", "x", "y", 1, 1)])
    ekf = EKF(_model())
    run = ekf.run(games, initial={DRAW_ROW: (m, sd)})
    obs = ss.Goals(base=BASE, dispersion=0.1, tilt=m)
    d, var = 40.0, 2 * 200.0**2
    p = np.array(goals_forecast(obs.vector(SCALE), d, var))
    np.testing.assert_allclose(run.proba[0], p, rtol=1e-12)
    v = sd * sd
    g, kappa = 1.0 - p[1], p[1] * (1.0 - p[1])
    row = run.state.shared_row(DRAW_ROW)
    assert row[0] == pytest.approx(m + v * g / (1 + kappa * v), rel=1e-12)
    assert row[1] ** 2 == pytest.approx(v / (1 + kappa * v), rel=1e-12)


def test_without_drift_the_tilt_stays_and_matches_the_fixed_model():
    """draw_drift tiny and the row known exactly: every forecast is the fixed tilt's."""
    rng = np.random.default_rng(3)
    rows = [(f"2020-01-{1 + k // 3:02d}", f"t{rng.integers(6)}", f"u{rng.integers(6)}", int(rng.poisson(1.3)),
             int(rng.poisson(1.3))) for k in range(60)]
    games = _games(rows)
    latent = EKF(_model(draw_drift=1e-300, tilt=-0.2)).run(games)
    fixed = EKF(_model(draw_drift=0.0, tilt=-0.2)).run(games)
    np.testing.assert_allclose(latent.proba, fixed.proba, rtol=1e-9, atol=1e-12)
    assert latent.state.shared_row(DRAW_ROW)[0] == pytest.approx(-0.2, abs=1e-9)


def test_order_inside_a_period_does_not_matter():
    rows = [("2020-01-01", "a", "b", 1, 1), ("2020-01-01", "c", "d", 2, 0), ("2020-01-01", "e", "f", 0, 0),
            ("2020-01-08", "a", "c", 1, 2), ("2020-01-08", "b", "d", 3, 3)]
    one = _games(rows, period=[1, 1, 1, 2, 2])
    other = _games([rows[2], rows[0], rows[1], rows[4], rows[3]], period=[1, 1, 1, 2, 2])
    ekf = EKF(_model(draw_drift=1e-2, home_drift=1.0))
    s1, s2 = ekf.run(one).state, ekf.run(other).state
    for name in (DRAW_ROW, HOME_ROW):
        np.testing.assert_allclose(s1.shared_row(name), s2.shared_row(name), rtol=1e-12)


def _tilted_league(theta, n_games=6000, seed=0):
    """Games of 12 level teams whose scores follow the tilted law: independent Poisson counts of
    rate 1.3 with the draws' odds times e^theta (rejection from the untilted draws)."""
    rng = np.random.default_rng(seed)
    rows, day = [], 0
    while len(rows) < n_games:
        x, y = rng.poisson(1.3, 2)
        accept = min(1.0, math.exp(theta)) if x == y else min(1.0, math.exp(-theta))
        if rng.random() < accept:
            a, b = rng.choice(12, 2, replace=False)
            rows.append((pd.Timestamp("2000-01-01") + pd.Timedelta(days=day // 6), f"t{a}", f"t{b}", int(x), int(y)))
            day += 1
    return _games(rows)


@pytest.mark.parametrize("theta", [-0.5, 0.5])
def test_the_row_learns_the_draw_tendency_of_the_games(theta):
    games = _tilted_league(theta)
    model = ss.SkillModel("logistic", SCALE, 1500.0, 30.0**2, 0.01, observation=ss.Goals(base=BASE), draw_drift=1e-4)
    row = EKF(model).run(games).state.shared_row(DRAW_ROW)
    assert row[0] == pytest.approx(theta, abs=0.15)
    assert 0 < row[1] < 0.2


@settings(max_examples=60, deadline=None)
@given(theta=st.floats(-1.0, 1.0), d=st.floats(-2.0, 2.0), x=st.integers(0, 5), y=st.integers(0, 5))
def test_the_tilted_law_is_its_joint_pmf(theta, d, x, y):
    """Goals(tilt=theta): P'(x, y) = P(x, y) e^(theta [x = y]) / Z, summed with scipy's Poisson."""
    k = np.arange(60)
    u = d / 2.0
    table = np.outer(poisson.pmf(k, math.exp(BASE + u)), poisson.pmf(k, math.exp(BASE - u)))
    table[np.diag_indices(60)] *= math.exp(theta)
    table /= table.sum()
    vec = ss.Goals(base=BASE, tilt=theta).vector(1.0)
    from statespace.model.goals import goals_loglik

    assert goals_loglik(vec, 0.5, float(x), float(y), d)[0] == pytest.approx(math.log(table[x, y]), rel=1e-9)
    xs, ys = np.indices(table.shape)
    np.testing.assert_allclose(goals_forecast(vec, d, 0.0), [table[xs > ys].sum(), table[xs == ys].sum(),
                                                             table[xs < ys].sum()], atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(theta=st.floats(-1.0, 1.0), kappa=st.one_of(st.just(0.0), st.floats(0.01, 0.5)),
       lam3=st.sampled_from([0.0, 0.3]), d=st.floats(-2.0, 2.0), x=st.integers(0, 5), y=st.integers(0, 5))
def test_the_tilted_law_s_derivatives_are_its_slopes(theta, kappa, lam3, d, x, y):
    """The derivatives through the draw probability's own (counts.draw_moments) against central
    differences of the log-likelihood; the derivatives kernel gives the log-likelihood kernel's."""
    from statespace.model.goals import goals_derivs, goals_loglik

    obs = ss.Goals(base=BASE, dispersion=kappa if lam3 == 0.0 else 0.0, covariance=lam3, tilt=theta)
    vec = obs.vector(1.0)
    h = 1e-4
    l0, g, hh = goals_loglik(vec, 0.5, float(x), float(y), d)
    lp, lm = (goals_loglik(vec, 0.5, float(x), float(y), d + s)[0] for s in (h, -h))
    assert g == pytest.approx((lp - lm) / (2 * h), rel=1e-6, abs=1e-7)
    assert hh == pytest.approx((lp - 2 * l0 + lm) / (h * h), rel=1e-4, abs=1e-5)
    assert goals_derivs(vec, 0.5, float(x), float(y), d) == pytest.approx((g, hh), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("rate_a, rate_b", [(2.0, 0.5), (1e3, 1e3), (1e4, 1e2), (800.0, 1e-3), (1e8, 1e-8),
                                             (1e300, 1e-300)])
@pytest.mark.parametrize("kappa", [0.0, 0.2])
def test_the_draw_probability_and_its_slopes_are_scipy_s_sums(rate_a, rate_b, kappa):
    """counts.draw_moments against scipy's pmfs summed over every count (P(X = Y) and its derivatives
    in u, where rate_a = e^(eta + u), rate_b = e^(eta - u)), including means so far apart that the
    probability underflows: exactly 0 for all three, never NaN."""
    from scipy.stats import nbinom
    from statespace.model.counts import draw_moments

    def pmf(k, rate):
        if kappa == 0.0:
            return poisson.pmf(k, rate)
        r = 1.0 / kappa
        return nbinom.pmf(k, r, r / (r + rate))

    got = draw_moments(rate_a, rate_b, kappa)
    if rate_a > 1e200:  # scipy's sums overflow; P(X = Y) <= P(X = 0) < 1e-1400 either law: zeros
        assert got == (0.0, 0.0, 0.0), got
        return
    k = np.arange(0.0, 20 * min(rate_a, rate_b) + 200)  # the smaller mean's pmf bounds each term
    t = pmf(k, rate_a) * pmf(k, rate_b)
    sa = (k - rate_a) / (1 + kappa * rate_a)
    sb = (k - rate_b) / (1 + kappa * rate_b)
    ca = -rate_a * (1 + kappa * k) / (1 + kappa * rate_a) ** 2
    cb = -rate_b * (1 + kappa * k) / (1 + kappa * rate_b) ** 2
    want = (t.sum(), (t * (sa - sb)).sum(), (t * ((sa - sb) ** 2 + ca + cb)).sum())
    assert np.all(np.isfinite(got)), got
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("theta", [-0.5, -0.1, 0.3])
def test_the_forecast_over_skill_uncertainty_from_the_table(theta):
    """The table's second-order tilt against the per-game integral of the tilted probabilities."""
    for mu, var in [(0.0, 0.1), (1.0, 0.4), (-0.6, 1.0)]:
        fast = goals_forecast(ss.Goals(base=BASE, dispersion=0.1, tilt=theta).vector(1.0), mu, var)
        exact = goals_forecast(ss.Goals(base=BASE, dispersion=0.1, tilt=theta, table=False).vector(1.0), mu, var)
        np.testing.assert_allclose(fast, exact, atol=5e-4 * abs(theta) / 0.5 + 1e-6)


def test_refusals_name_the_setting():
    model = _model()
    games = _games([("2020-01-01", "x", "y", 1, 1), ("2020-01-02", "x", "y", 0, 2)])
    with pytest.raises(ValueError, match="draw_drift"):
        ss.SkillModel(observation=ss.Margin(sd=1.0), draw_drift=1e-3)
    with pytest.raises(ValueError, match="rho and inflation"):
        ss.SkillModel(observation=ss.Goals(base=BASE, rho=-0.1), draw_drift=1e-3)
    with pytest.raises(ValueError, match="diagonal"):
        EKF(model, covariance="full")
    from smoothers import LaplaceSmoother

    with pytest.raises(ValueError, match="draw_drift"):
        LaplaceSmoother(model)
    with pytest.raises(ValueError, match="draw_drift"):
        ss.simulate(model, 4, 10, seed=0)
    with pytest.raises(ValueError, match="draw_drift"):
        ss.SkillModel(observation=ss.Goals(base=BASE), draw_drift=2.0)
    assert EKF(model).run(games).state.shared == (DRAW_ROW,)


def test_interpreted_equals_compiled(monkeypatch):
    """The Python twins (STATESPACE_JIT=never) give the compiled numbers: the draw row, the tilted
    likelihood and the table's second-order tilt (statespace._runtime.tier)."""
    games = _tilted_league(0.3, n_games=300, seed=2)
    model = ss.SkillModel("logistic", SCALE, 1500.0, 60.0**2, 1.0, home=30.0, home_drift=0.5,
                          observation=ss.Goals(base=BASE, dispersion=0.1), draw_drift=1e-3)
    runs = {}
    for mode in ("never", "always"):
        monkeypatch.setenv("STATESPACE_JIT", mode)
        runs[mode] = EKF(model).run(games)
    np.testing.assert_allclose(runs["never"].proba, runs["always"].proba, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(runs["never"].state.values, runs["always"].state.values, rtol=1e-9, atol=1e-12)
