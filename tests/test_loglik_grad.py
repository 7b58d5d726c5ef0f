"""``statespace.model.numeric.loglik_grad`` and ``log_cdf`` against arbitrary-precision references.

The reference is mpmath at 100 digits: the log-likelihood of each result written directly from
its definition (cdf differences included, which double precision cannot take in the tails) and
its derivatives by mpmath's numerical differentiation at that precision. Covers every link,
draw model and result, far into the tails where naive formulas underflow or cancel.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from statespace.model import numeric as nx

mp = pytest.importorskip("mpmath")
mp.mp.dps = 100

LINKS = {"logistic": nx.LOGISTIC, "probit": nx.PROBIT}
DRAWS = {"none": nx.DRAW_NONE, "half": nx.DRAW_HALF, "threshold": nx.DRAW_THRESHOLD,
         "davidson": nx.DRAW_DAVIDSON}


def cdf(link):
    if link == "logistic":
        return lambda x: 1 / (1 + mp.exp(-x))
    return mp.ncdf


def reference_loglik(link, draw, theta, score, z):
    """log P(result) at normalised difference z, straight from the definitions."""
    F = cdf(link)
    if draw in ("none", "half"):
        return score * mp.log(F(z)) + (1 - score) * mp.log(F(-z))
    if draw == "threshold":
        if score == 1:
            return mp.log(F(z - theta))
        if score == 0:
            return mp.log(F(-z - theta))
        # F(m - z) - F(-m - z) = F(m + z) - F(z - m): take the form whose terms are small,
        # else 100 digits are not enough for 1 - (1 - tiny)
        return mp.log(F(theta - z) - F(-theta - z)) if z >= 0 else mp.log(F(theta + z) - F(z - theta))
    r = mp.sqrt(F(z) * F(-z))
    d = 1 + theta * r
    return mp.log({1.0: F(z), 0.0: F(-z), 0.5: theta * r}[score] / d)


def check(link, draw, theta, score, z, scale=1.0, rel=1e-12):
    got = nx.loglik_grad(LINKS[link], DRAWS[draw], theta, score, z * scale, scale)
    th, zz = mp.mpf(theta), mp.mpf(z)
    # theta is in skill units for the threshold (margin / scale), a pure number for Davidson
    th_n = th / scale if draw == "threshold" else th
    value = reference_loglik(link, draw, th_n, score, zz)
    d_diff = mp.diff(lambda t: reference_loglik(link, draw, th_n, score, t), zz) / scale
    d_theta = (mp.diff(lambda t: reference_loglik(link, draw, t / scale if draw == "threshold" else t, score, zz), th)
               if draw in ("threshold", "davidson") else mp.mpf(0))
    for name, a, b in (("value", got[0], value), ("d/ddiff", got[1], d_diff), ("d/dtheta", got[2], d_theta)):
        b = float(b)
        assert abs(a - b) <= rel * max(1.0, abs(b)), (name, link, draw, theta, score, z, a, b)


ZS = [-35.0, -12.0, -6.0, -2.5, -0.7, 0.0, 0.3, 1.9, 5.5, 11.0, 35.0]


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("score", [1.0, 0.0, 0.5])
def test_bradley_terry_and_half_draws(link, score):
    draw = "half" if score == 0.5 else "none"
    for z in ZS:
        check(link, draw, 0.0, score, z, scale=1.7)


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("score", [1.0, 0.0, 0.5])
@pytest.mark.parametrize("margin", [1e-4, 0.35, 2.5])
def test_threshold_draws(link, score, margin):
    for z in ZS:
        if score == 0.5 and abs(z) > 12:  # draws that far out: log P ~ -z^2/2, checked below
            continue
        check(link, "threshold", margin * 1.7, score, z, scale=1.7, rel=1e-9 if margin < 1e-3 else 1e-12)


@pytest.mark.parametrize("link", LINKS)
def test_threshold_draw_far_in_the_tails_stays_finite_and_exact(link):
    for z in (-30.0, 25.0):
        check(link, "threshold", 0.4, 0.5, z, rel=1e-10)


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("score", [1.0, 0.0, 0.5])
@pytest.mark.parametrize("nu", [0.05, 0.8, 3.0])
def test_davidson(link, score, nu):
    for z in ZS:
        check(link, "davidson", nu, score, z, scale=0.6)


@pytest.mark.parametrize("link", LINKS)
def test_log_cdf_full_precision(link):
    F = cdf(link)
    for x in np.concatenate([np.linspace(-38, 38, 153), [-5.0000001, -4.9999999, 1e-9, -1e-9]]):
        ref = float(mp.log(F(mp.mpf(x))) if x <= 0 else mp.log1p(-F(-mp.mpf(x))))  # 1 - tiny needs care too
        assert nx.log_cdf(LINKS[link], x) == pytest.approx(ref, rel=1e-12, abs=0.0), x  # erfc deep in its tail: ~1e-13


def test_gradient_agrees_with_loglik_derivs():
    """The sampler's gradient and the EKF's/Laplace's first derivative are the same number."""
    rng = np.random.default_rng(0)
    for link in LINKS.values():
        for draw, theta in ((nx.DRAW_HALF, 0.0), (nx.DRAW_THRESHOLD, 0.3), (nx.DRAW_DAVIDSON, 0.9)):
            for _ in range(50):
                score = float(rng.choice([0.0, 0.5, 1.0]))
                diff = float(rng.normal(scale=3.0))
                g = nx.loglik_grad(link, draw, theta, score, diff, 1.3)[1]
                assert g == pytest.approx(nx.loglik_derivs(link, draw, theta, score, diff, 1.3)[0], rel=1e-9, abs=1e-12)
                assert math.isfinite(g)
