r"""Glicko's per-competitor updates from a rating period's sums, shared by games and matches.

A rating period leaves each competitor two sums over its games (in rating points): the precision
:math:`q^2 \sum_j g(\mathrm{RD}_j)^2 E_j (1 - E_j)` (Glickman's :math:`1 / d^2`) and the gradient
:math:`q \sum_j g(\mathrm{RD}_j) (s_j - E_j)`. Games collect them in the loop's scratch rows
(:func:`filters.kernels.gaussian_site`), a match of many sides in its own kernel
(:mod:`filters._glicko_match`); both then update the competitor with the same step:

- Glicko-1 (Glickman 1999, eqs. 5-6), the Gaussian product of the filters' shared rule
  (:func:`filters.kernels.gaussian_product`):
  :math:`1/\mathrm{RD}'^2 = 1/\mathrm{RD}^2 + 1/d^2`, :math:`r' = r + \mathrm{RD}'^2 q \sum_j g (s_j - E_j)`;
- Glicko-2 (Glickman, "Example of the Glicko-2 system", steps 3-8): :func:`glicko2_step`, the
  volatility by :func:`new_volatility`.

The kernels' parameter vector (:data:`PARAMS`) and the state's columns are named here, once.
"""

from __future__ import annotations

import math

from numba import njit

from statespace.model.skillmodel import ELO_SCALE

from . import kernels as K

__all__ = ["PARAMS", "new_volatility", "glicko2_step"]

#: the kernels' parameters, in ``theta`` order, shared by both versions
PARAMS = ("c", "rd_max", "home", "update_form", "tau", "eps", "max_iter")
_C, _RDMAX, _HOME, _FORM, _TAU, _EPS, _MAXIT = range(len(PARAMS))
#: the state's columns: rating, RD (both in rating points) and, for Glicko-2, the volatility
_R, _RD, _SIGMA = 0, 1, 2


@njit(cache=True, error_model="numpy")
def _f_ex(xv, ex, delta2, pv, a_, inv_tau2):
    """Glickman's f(x) = e^x (Delta^2 - phi^2 - v - e^x) / (2 (phi^2 + v + e^x)^2) - (x - a) / tau^2,
    given ex = e^x, pv = phi^2 + v and inv_tau2 = 1 / tau^2 (so no exp or division is repeated).

    The first term is taken as ``(e^x q) ((Delta^2 - phi^2 - v - e^x) q) / 2``, ``q = 1 / (phi^2 + v + e^x)``,
    so that no square of a large variance is formed (it may still be inf far from the root, where
    only its sign matters: :func:`new_volatility` copes)."""
    q = 1.0 / (pv + ex)
    return 0.5 * (ex * q) * ((delta2 - pv - ex) * q) - (xv - a_) * inv_tau2


#: the largest tau: more than twice the top of Glickman's advice (0.3 to 1.2)
TAU_MAX = 3.0
#: the largest starting volatility: an RD growth of one scale (173.7 points) a period
INITIAL_VOLATILITY_MAX = 1.0
#: Glicko-2's largest RD, in scales (1737 points; Glickman's 350 is 2): the volatility step grows
#: ln sigma^2 by up to tau^2 v / 8, and v, the variance a game's result implies, grows as
#: e^{|mu - mu_j|}: a newcomer of RD 100 scales, moved 50 scales by its first game, met a settled
#: competitor and ran the volatility, then the ratings, to 1e296
RD2_MAX_SCALES = 10.0
#: Glicko-2's volatility is kept in [VOL_MIN, VOL_MAX]: ln sigma^2 is then a normal float,
#: and sigma^2 added to phi^2 leaves the RD (173.7 phi) within the filters' sd cap of 1e150
VOL_MIN = 1e-150
VOL_MAX = 1e147
_X_MIN = 2.0 * math.log(VOL_MIN)
_X_MAX = 2.0 * math.log(VOL_MAX)
#: Glickman's v = 1 / sum g^2 E (1 - E) counts as at most this (its games then tell nothing of the
#: skill; a larger v, up to inf when every E is exactly 0 or 1, would overflow phi^2 + v and Delta)
V_MAX = 1e300


@njit(cache=True, error_model="numpy")
def new_volatility(sigma, phi, v, delta, tau, eps, max_iter):
    """Glickman's step 5: the new volatility by the Illinois algorithm (regula falsi).

    Returns -1.0 when the iteration does not converge within ``max_iter`` steps (the caller
    raises), never a silent NaN.

    Guards, none of which changes a step where Glickman's arithmetic is finite: the root
    of f is sought in ``x = ln sigma^2`` within ``[ln VOL_MIN^2, ln VOL_MAX^2]``, and a root beyond
    an end gives that end (a shock no finite volatility explains, ``Delta^2`` overflowing, gives
    ``VOL_MAX``; with a huge ``tau`` f may stay below 0 down to the floor, and the volatility falls
    to ``VOL_MIN``); a ``tau`` so small that ``1 / tau^2`` passes 1e290, or that ``a - tau`` rounds to
    ``a``, leaves sigma as it is (the root lies within about ``tau^2`` of ``a``); the search stops
    when a secant step no longer moves (``eps`` below the resolution of x), at the end point where
    f is smaller, and when a secant step is undefined (f infinite at an end: it is NaN, compiled with
    NumPy's error model, so no division raises), at ``A``, an end of the bracket.
    """
    s2 = min(max(sigma * sigma, VOL_MIN * VOL_MIN), VOL_MAX * VOL_MAX)
    a_ = math.log(s2)
    inv_tau = 1.0 / tau
    inv_tau2 = inv_tau * inv_tau
    if not inv_tau2 <= 1e290:
        return math.sqrt(s2)
    pv = phi * phi + v
    delta2 = delta * delta
    # e^A and e^B are kept alongside A and B, so the result sqrt(e^A) costs no further exp
    A = a_
    exA = s2
    fA = _f_ex(A, exA, delta2, pv, a_, inv_tau2)
    if delta2 > pv:
        exB = delta2 - pv
        if exB >= VOL_MAX * VOL_MAX:
            B = _X_MAX
            exB = VOL_MAX * VOL_MAX
            fB = _f_ex(B, exB, delta2, pv, a_, inv_tau2)
            if fB >= 0.0:  # f > 0 up to the cap: the root lies beyond it
                return VOL_MAX
        else:
            B = math.log(exB)
            fB = _f_ex(B, exB, delta2, pv, a_, inv_tau2)
    else:
        k = 1.0
        B = max(a_ - tau, _X_MIN)
        if B == a_:  # tau below the resolution of x
            return math.sqrt(s2)
        exB = math.exp(B)
        fB = _f_ex(B, exB, delta2, pv, a_, inv_tau2)
        while fB < 0.0:
            if B <= _X_MIN:  # f < 0 down to the floor: the root lies below it
                return VOL_MIN
            k += 1.0
            if k > max_iter:
                return -1.0
            B = max(a_ - k * tau, _X_MIN)
            exB = math.exp(B)
            fB = _f_ex(B, exB, delta2, pv, a_, inv_tau2)
    it = 0
    while abs(B - A) > eps:
        it += 1
        if it > max_iter:
            return -1.0
        C = A + (A - B) * fA / (fB - fA)
        if C == A or C == B:  # the bracket no longer shrinks: x is known to its last digit
            return math.sqrt(exA) if abs(fA) <= abs(fB) else math.sqrt(exB)
        exC = math.exp(C)
        fC = _f_ex(C, exC, delta2, pv, a_, inv_tau2)
        if fC * fB <= 0.0:
            A = B
            exA = exB
            fA = fB
        else:
            fA = fA / 2.0
        B = C
        exB = exC
        fB = fC
    return math.sqrt(exA)


@njit(cache=True)
def glicko2_step(x, theta, i, precision, gradient):
    """Glicko-2 steps 3-8 for row ``i`` from its period's precision and gradient (rating units):
    ``1 / v = sum g^2 E (1 - E) = precision * 173.72^2``, ``Delta / v = gradient * 173.72``.

    Guards: ``v`` counts as at most ``V_MAX`` (every ``E`` exactly 0 or 1 gives
    ``1 / v = 0``: Glickman's ``v`` would be inf and ``Delta`` NaN); the volatility is kept in
    ``[VOL_MIN, VOL_MAX]`` (:func:`new_volatility`), the new RD's square within the filters'
    variance bounds and the rating within ``+-MEAN_MAX``."""
    w = precision * ELO_SCALE * ELO_SCALE
    r = gradient * ELO_SCALE
    phi = x[i, _RD] / ELO_SCALE
    v = 1.0 / max(w, 1.0 / V_MAX)
    delta = v * r
    sigma = new_volatility(x[i, _SIGMA], phi, v, delta, theta[_TAU], theta[_EPS], int(theta[_MAXIT]))
    if not sigma > 0.0:  # -1 (or, were a guard missed, NaN): an error, never a NaN rating
        raise ArithmeticError("Glicko-2: the volatility iteration did not converge; "
                              "check tau and the ratings (or raise max_iter)")
    phi_star2 = phi * phi + sigma * sigma
    phi_new2 = 1.0 / (1.0 / phi_star2 + w)  # 1/v = w
    x[i, _R] = K.clamp_mean(x[i, _R] + ELO_SCALE * phi_new2 * r)
    # step 7 has no cap of its own (only the time update has RD_max)
    x[i, _RD] = math.sqrt(K.clamp_var(ELO_SCALE * ELO_SCALE * phi_new2))
    x[i, _SIGMA] = sigma
