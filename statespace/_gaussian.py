"""Truncated-Gaussian moment corrections shared by TrueSkill and Weng-Lin (Thurstone-Mosteller).

For a performance difference ``d ~ N(t, 1)`` (in units of its sd) observed to be a win
(``d > eps``) or a draw (``|d| <= eps``), assumed-density filtering matches the mean and
variance of the truncated Gaussian (Herbrich, Minka and Graepel 2006, Table 1):

    v_win(t, eps)  = N(t - eps) / Phi(t - eps)
    w_win(t, eps)  = v_win (v_win + t - eps)
    v_draw(t, eps) = (N(-eps - t) - N(eps - t)) / (Phi(eps - t) - Phi(-eps - t))
    w_draw(t, eps) = v_draw^2 + ((eps - t) N(eps - t) + (eps + t) N(eps + t))
                                / (Phi(eps - t) - Phi(-eps - t))

Written naively these are 0/0 far in the tails (Phi(-40) underflows). Here they are computed
through Mills' ratio ``R(u) = Phi(-u) / N(u)``, evaluated by its continued fraction for large
``u``, so that ``v`` stays finite and ``w`` stays in (0, 1) at any ``t`` (e.g. t = -40).
"""

from __future__ import annotations

import math

from numba import njit

_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


@njit(cache=True)
def pdf(x):
    """Standard normal density N(x)."""
    return _INV_SQRT2PI * math.exp(-0.5 * x * x)


@njit(cache=True)
def cdf(x):
    """Standard normal cdf Phi(x)."""
    return 0.5 * math.erfc(-x / _SQRT2)


@njit(cache=True)
def mills(u):
    """Mills' ratio R(u) = Phi(-u) / N(u), accurate for every u >= -30.

    For u > 4 the continued fraction R(u) = 1 / (u + 1 / (u + 2 / (u + 3 / (u + ...)))),
    evaluated bottom-up with 60 terms; otherwise the ratio directly.
    """
    if u > 4.0:
        acc = u
        for k in range(60, 0, -1):
            acc = u + k / acc
        return 1.0 / acc
    return cdf(-u) / pdf(u)


@njit(cache=True)
def v_win(t, eps):
    """Mean correction for a win: N(t - eps) / Phi(t - eps) (= 1 / R(eps - t) in the left tail)."""
    x = t - eps
    if x < -4.0:
        return 1.0 / mills(-x)
    return pdf(x) / cdf(x)


@njit(cache=True)
def w_win(t, eps):
    """Variance correction for a win, v (v + t - eps), in (0, 1)."""
    x = t - eps
    v = v_win(t, eps)
    w = v * (v + x)
    if w <= 0.0:  # far right tail: v + x ~ 0 loses every digit; the limit is N(x)/Phi(x) * x ~ 0
        return 1e-300
    if w >= 1.0:  # far left tail: w -> 1 from below
        return 1.0 - 1e-16
    return w


@njit(cache=True)
def _draw_terms(t, eps):
    """(v_draw, w_draw - v_draw^2) for t >= 0, scaled by N(t - eps) where that underflows."""
    u = t - eps
    if u > 0.0:
        e = math.exp(-2.0 * eps * (u + eps))  # N(u + 2 eps) / N(u)
        den = mills(u) - e * mills(u + 2.0 * eps)
        v = (e - 1.0) / den
        extra = (-u + (u + 2.0 * eps) * e) / den
    else:
        den = cdf(eps - t) - cdf(-eps - t)
        v = (pdf(-eps - t) - pdf(eps - t)) / den
        extra = ((eps - t) * pdf(eps - t) + (eps + t) * pdf(eps + t)) / den
    return v, extra


_EPS_MIN = 1e-5


@njit(cache=True)
def v_draw(t, eps):
    """Mean correction for a draw (odd in t).

    Below eps = 1e-5 the ratios lose every digit to cancellation (0/0 at eps = 0, where a draw
    has probability zero); there the moments of N(t, 1) truncated to [-eps, eps] to order
    eps^2 are used: v = -t (1 - eps^2 / 3), w = 1 - eps^2 / 3.
    """
    if eps < _EPS_MIN:
        return -t * (1.0 - eps * eps / 3.0)
    if t < 0.0:
        v, _ = _draw_terms(-t, eps)
        return -v
    v, _ = _draw_terms(t, eps)
    return v


@njit(cache=True)
def w_draw(t, eps):
    """Variance correction for a draw (even in t), in (0, 1)."""
    if eps < _EPS_MIN:
        return min(1.0 - eps * eps / 3.0, 1.0 - 1e-16)
    v, extra = _draw_terms(abs(t), eps)
    w = v * v + extra
    if w <= 0.0:
        return 1e-300
    if w >= 1.0:
        return 1.0 - 1e-16
    return w
