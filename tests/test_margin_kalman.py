"""Gaussian score margins: the conjugate case, where the EKF is the Kalman filter itself.

With ``Margin`` observations (``score_a - score_b ~ N(d, sd^2)``) the log-likelihood is quadratic
in the skills, so one Newton step is exact: the EKF's update must equal the Kalman filter's.
The references below are Kalman filters written here from the textbook equations (predict
``P_ii += q dt``; update with ``H = e_a - e_b``, ``S = H P H^T + sd^2``, ``K = P H^T / S``), in NumPy,
sharing no code with the package:

- the full-covariance EKF against the joint Kalman filter over all competitors (also with rating
  periods: for a linear-Gaussian model the batch update of a period equals its games applied one
  after another with no time passing);
- the diagonal EKF against the same update applied to the two competitors' marginals, with the
  cross-covariance dropped after each game (what "diagonal" means; exact per game).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

import statespace as ss
from filters import EKF

SD, DRAW_WIDTH, DRIFT, PRIOR_VAR, HOME = 3.0, 0.5, 0.05, 4.0, 0.8


def margin_stream(n_players=7, n_games=300, seed=0, periods=False):
    """Random-walk skills observed through Gaussian margins; times 0, 1, 2, ... (or periods of
    five games)."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, math.sqrt(PRIOR_VAR), n_players)
    a = rng.integers(0, n_players, n_games)
    b = (a + 1 + rng.integers(0, n_players - 1, n_games)) % n_players
    neutral = rng.random(n_games) < 0.4
    t = np.arange(n_games, dtype=float) // (5 if periods else 1)
    y = np.empty(n_games)
    for g in range(n_games):
        skill += rng.normal(0.0, math.sqrt(DRIFT), n_players) * (g > 0 and t[g] > t[g - 1])
        y[g] = skill[a[g]] - skill[b[g]] + HOME * (not neutral[g]) + rng.normal(0.0, SD)
    y = np.round(y * 4) / 4  # quarter points: some exact draws
    names = np.array([f"P{i}" for i in range(n_players)])
    score_a, score_b = np.maximum(y, 0) + 20.0, np.maximum(-y, 0) + 20.0
    games = ss.Games.from_arrays(t, names[a], names[b], neutral=neutral, score_a=score_a, score_b=score_b,
                                 period=t.astype(int) if periods else None)
    return games, y


def kalman(games, y, diagonal: bool):
    """Forecasts and final (mean, cov) of the Kalman filter, in the games' own row order (time
    order here); competitors indexed as ``games.players``."""
    n = games.n_players
    m = np.zeros(n)
    P = np.diag(np.full(n, PRIOR_VAR))
    last = np.full(n, np.nan)
    proba = np.empty((len(games), 3))
    starts = np.flatnonzero(np.r_[True, np.diff(games.time) != 0])
    for s, e in zip(starts, np.r_[starts[1:], len(games)]):
        for g in range(s, e):
            for i in (games.a[g], games.b[g]):
                if not np.isnan(last[i]) and games.time[g] > last[i]:
                    P[i, i] += DRIFT * (games.time[g] - last[i])
                last[i] = games.time[g]
        prior_m, prior_P = m.copy(), P.copy()
        for g in range(s, e):  # forecasts from the pre-period state
            H = np.zeros(n)
            H[games.a[g]], H[games.b[g]] = 1.0, -1.0
            d = H @ prior_m + HOME * (not games.neutral[g])
            t = math.sqrt(SD**2 + H @ prior_P @ H)
            pw, pl = norm.cdf((d - DRAW_WIDTH) / t), norm.cdf((-d - DRAW_WIDTH) / t)
            proba[g] = pw, 1 - pw - pl, pl
        for g in range(s, e):  # then the period's observations, one after another
            H = np.zeros(n)
            H[games.a[g]], H[games.b[g]] = 1.0, -1.0
            S = H @ P @ H + SD**2
            K = P @ H / S
            m = m + K * (y[g] - H @ m - HOME * (not games.neutral[g]))
            P = P - np.outer(K, H @ P)
            if diagonal:
                P = np.diag(np.diag(P))
    return proba, m, P


def margin_ekf(covariance):
    model = ss.SkillModel(scale=1.0, prior_mean=0.0, prior_var=PRIOR_VAR, drift=DRIFT, home=HOME,
                          observation=ss.Margin(sd=SD, draw_width=DRAW_WIDTH))
    return EKF(model, covariance=covariance)


@pytest.mark.parametrize("seed", [0, 1])
def test_diagonal_ekf_is_the_kalman_filter_on_the_marginals(seed):
    games, y = margin_stream(seed=seed)
    run = margin_ekf("diagonal").run(games)
    proba, m, P = kalman(games, y, diagonal=True)
    np.testing.assert_allclose(run.proba, proba, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.state.values[:, 0], m, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.state.values[:, 1] ** 2, np.diag(P), rtol=0, atol=1e-9)


@pytest.mark.parametrize("periods", [False, True])
def test_full_ekf_is_the_joint_kalman_filter(periods):
    games, y = margin_stream(seed=3, periods=periods)
    ekf = margin_ekf("full")
    run = ekf.run(games)
    proba, m, P = kalman(games, y, diagonal=False)
    np.testing.assert_allclose(run.proba, proba, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.state.values[:, 0], m, rtol=0, atol=1e-9)
    np.testing.assert_allclose(ekf.covariance_matrix(run.state), P, rtol=0, atol=1e-9)


def test_margin_needs_the_two_sides_scores():
    g = ss.Games.from_arrays([0, 1], ["A", "B"], ["B", "A"], [1.0, 0.0])
    with pytest.raises(ValueError, match="score_a"):
        margin_ekf("diagonal").run(g)


def test_scalar_filter_refuses_margins():
    with pytest.raises(ValueError, match="Outcome"):
        margin_ekf("scalar")
