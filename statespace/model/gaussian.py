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

Far tails: ``t - eps`` for a win below -1e300 counts as -1e300 (a finite skill difference
over a tiny sd can overflow to inf, and the tail's ``(u + T) T`` would be inf * 0; every correction
has reached its limit long before), a win's ``w`` at ``t - eps = +inf`` is its limit, 0 (as 1e-300),
and a draw at an infinite ``t`` (with a finite ``eps``) has ``v = -+inf`` and ``w`` next to 1, its
limits, from the exponential limit below. A win far in the left tail takes ``v = u + T`` and ``w = (u + T) T`` from
the continued fraction's tail ``T`` (``v + t - eps = T`` exactly, instead of a difference of two
nearly equal numbers), and a draw whose window lies beyond ``1e4`` sds takes the moments of the
exponential distribution the truncated Gaussian tends to there (relative error below 1e-8).
"""

from __future__ import annotations

import math

from numba import njit

_SQRT2 = math.sqrt(2.0)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: |t| and eps beyond this count as this (see the module docstring)
T_MAX = 1e300
#: a draw window beyond this many sds takes the exponential limit (see :func:`_draw_far`)
_FAR = 1e4


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
def left_tail(u):
    """For u > 4, ``T(u) = 1 / (u + 2 / (u + 3 / (u + ...)))`` (60 terms), so that Mills' ratio is
    ``R(u) = 1 / (u + T(u))``: then ``1 / R(u) = u + T`` and ``1 / R(u) - u = T`` with no cancellation."""
    acc = u
    for k in range(60, 1, -1):
        acc = u + k / acc
    return 1.0 / acc


@njit(cache=True)
def v_win(t, eps):
    """Mean correction for a win: N(t - eps) / Phi(t - eps) (= 1 / R(eps - t) = u + T(u), u = eps - t,
    in the left tail)."""
    x = t - eps
    if x < -4.0:
        x = max(x, -T_MAX)
        return -x + left_tail(-x)
    return pdf(x) / cdf(x)


@njit(cache=True)
def w_win(t, eps):
    """Variance correction for a win, v (v + t - eps), in (0, 1); in the left tail (u + T) T."""
    x = t - eps
    if x < -4.0:
        x = max(x, -T_MAX)
        tail = left_tail(-x)
        w = (-x + tail) * tail
    else:
        v = pdf(x) / cdf(x)
        w = v * (v + x)
    if not w > 0.0:  # far right tail: v + x ~ 0 loses every digit (x = inf: 0 * inf); the limit is 0
        return 1e-300
    if w >= 1.0:  # far left tail: w -> 1 from below
        return 1.0 - 1e-16
    return w


@njit(cache=True)
def _draw_far(u, eps):
    """(v_draw, w_draw) for ``u = t - eps > _FAR``: the difference ``y = t - d`` is a standard normal
    truncated to ``[u, u + L]``, ``L = 2 eps``, which there is ``u`` plus an exponential of rate ``u``
    truncated at ``L``: with ``a = u L``, ``E[y] = u + 1/u - L / (e^a - 1)``,
    ``Var[y] = 1/u^2 - L^2 / ((e^a - 1)(1 - e^-a))``; ``v = -E[y]``, ``w = 1 - Var[y]``."""
    L = 2.0 * eps
    a = u * L
    # inf for a large: the window is wider than the mass, as if unbounded (compiled, expm1
    # overflows to inf; Python's raises OverflowError, so the limit is written out)
    em1 = math.expm1(a) if a < 709.0 else math.inf
    mean_s = 1.0 / u - L / em1
    var = 1.0 / u / u - (L / em1) * (L / -math.expm1(-a))  # in factors: L^2 and u^2 may overflow
    return -(u + mean_s), 1.0 - max(var, 0.0)


@njit(cache=True)
def draw_terms(t, eps):
    """(v_draw, w_draw) for t >= 0 (``w`` not yet kept in (0, 1)), scaled by N(t - eps) where that
    underflows; beyond ``_FAR`` the exponential limit (:func:`_draw_far`)."""
    u = t - eps
    if u > 0.0:
        if u > _FAR:
            return _draw_far(u, eps)
        e = math.exp(-2.0 * eps * (u + eps))  # N(u + 2 eps) / N(u)
        den = mills(u) - e * mills(u + 2.0 * eps)
        v = (e - 1.0) / den
        extra = (-u + (u + 2.0 * eps) * e) / den
    else:
        den = cdf(eps - t) - cdf(-eps - t)
        v = (pdf(-eps - t) - pdf(eps - t)) / den
        extra = ((eps - t) * pdf(eps - t) + (eps + t) * pdf(eps + t)) / den
    return v, v * v + extra


EPS_MIN = 1e-5


@njit(cache=True)
def v_draw(t, eps):
    """Mean correction for a draw (odd in t).

    Below eps = 1e-5 the ratios lose every digit to cancellation (0/0 at eps = 0, where a draw
    has probability zero); there the moments of N(t, 1) truncated to [-eps, eps] to order
    eps^2 are used: v = -t (1 - eps^2 / 3), w = 1 - eps^2 / 3.
    """
    if eps < EPS_MIN:
        return -t * (1.0 - eps * eps / 3.0)
    if t < 0.0:
        v, _ = draw_terms(-t, eps)
        return -v
    v, _ = draw_terms(t, eps)
    return v


@njit(cache=True)
def w_draw(t, eps):
    """Variance correction for a draw (even in t), in (0, 1)."""
    if eps < EPS_MIN:
        return min(1.0 - eps * eps / 3.0, 1.0 - 1e-16)
    w = draw_terms(abs(t), eps)[1]
    if w <= 0.0:
        return 1e-300
    if w >= 1.0:
        return 1.0 - 1e-16
    return w
