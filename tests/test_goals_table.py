"""The Goals forecast read from its table (statespace.model.outcome_table) against the same integral
computed per game: the trapezoid rule of ``Goals(table=False)``, and an independent one (SciPy's
Skellam distribution under a dense Gauss-Hermite rule)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import stats

from statespace import Goals
from statespace.model import outcome_table as T
from statespace.model.goals import BASE_MAX, BASE_MIN, DISPERSION_MAX, goals_forecast

SCALE = 173.7
C = 0.5 / SCALE  # u = C d
OWN = 9  # the observation's own numbers before the table: base, scale, dispersion, rho, covariance, inflation, tilt, shift, coord


def _both(obs_kwargs, mu, s):
    """Table and exact forecasts at ``u ~ N(mu, s^2)``."""
    fast = Goals(**obs_kwargs).vector(SCALE)
    exact = Goals(**obs_kwargs, table=False).vector(SCALE)
    d, var = mu / C, (s / C) ** 2
    return np.array(goals_forecast(fast, d, var)), np.array(goals_forecast(exact, d, var))


@settings(max_examples=150, deadline=None)
@given(base=st.floats(BASE_MIN, BASE_MAX), kappa=st.one_of(st.just(0.0), st.floats(0.0, DISPERSION_MAX)),
       mu=st.floats(-20.0, 20.0), s=st.floats(0.0, 6.0))
def test_table_agrees_with_the_per_game_integral(base, kappa, mu, s):
    """Within 2e-6 of the trapezoid rule (measured worst over random settings: 6e-7), for any base
    and dispersion, ``mu`` and ``s`` in widths of the forecast's steepest change (inside the table
    and out: outside it the forecast is the exact one)."""
    width = Goals(base=base, dispersion=kappa).vector(SCALE)[OWN + 1]
    p, q = _both({"base": base, "dispersion": kappa}, mu * width, s * width)
    assert np.all(p >= 0) and np.all(p <= 1) and p.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(p, q, rtol=0, atol=2e-6)


@settings(max_examples=60, deadline=None)
@given(rho=st.floats(-0.3, 0.3), mu=st.floats(-3.0, 3.0), s=st.floats(0.0, 1.5))
def test_table_with_dixon_coles(rho, mu, s):
    """Football's settings with Dixon and Coles' rho: within 5e-5 (a negative rho's factor of 0-1
    reaches its floor where one rate is -1/rho, a kink in the probabilities the interpolation
    smooths over; measured worst 2e-5)."""
    p, q = _both({"base": math.log(1.35), "rho": rho}, mu, s)
    np.testing.assert_allclose(p, q, rtol=0, atol=5e-5)


def test_table_against_scipy_skellam():
    """Independent of our sums: the Skellam win/draw/loss from SciPy, averaged over the skill
    uncertainty with 60 Gauss-Hermite nodes; the table within 1e-6."""
    base = math.log(1.35)
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    vec = Goals(base=base).vector(SCALE)
    for mu, s in [(0.0, 0.1), (0.3, 0.25), (-0.7, 0.4), (1.1, 0.8), (0.05, 1.2), (2.0, 0.05)]:
        u = mu + s * x
        la, lb = np.exp(base + u), np.exp(base - u)
        loss = stats.skellam.cdf(-1, la, lb)
        draw = stats.skellam.pmf(0, la, lb)
        ref = np.array([w @ (1 - loss - draw), w @ draw, w @ loss])
        np.testing.assert_allclose(goals_forecast(vec, mu / C, (s / C) ** 2), ref, rtol=0, atol=1e-6)


def test_outside_the_table_the_forecast_is_exact():
    """Sides far apart, an uncertainty beyond the table, and probabilities below P_MIN: the exact
    integral itself, to the last digit."""
    base = math.log(1.35)
    width = Goals(base=base).vector(SCALE)[OWN + 1]
    for mu, s in [(20 * width, 0.1), (-0.2, 50 * width), (4.5, 0.1), (0.0, 0.0)]:
        p, q = _both({"base": base}, mu, s)
        assert p.tolist() == q.tolist()


def test_the_vector_carries_the_table_only_when_asked():
    assert Goals(base=0.3, table=False).vector(SCALE).shape == (OWN,)
    v = Goals(base=0.3).vector(SCALE)
    assert v.shape == (OWN + T.table_length(6),)  # the probabilities and three products (for a draw tilt)
    assert v[OWN + 1] == pytest.approx(1.0 / math.sqrt(2.0 * math.exp(0.3)))  # the width, in u
    assert Goals(base=0.3).vector(SCALE) is not v  # a new vector each time (the table is shared, read-only)


def test_table_setting_is_checked():
    with pytest.raises(ValueError, match="table must be True or False"):
        Goals(base=0.3, table="yes")


def test_build_refuses_a_wrong_shape():
    with pytest.raises(ValueError, match="outcome table"):
        T.build(np.zeros((10, 3)), 0.5)
