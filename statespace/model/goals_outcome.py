r"""The win/draw/loss probabilities of :class:`statespace.Goals`: at one skill difference, and
averaged over a Gaussian one, from the forecast table (:mod:`statespace.model.outcome_table`) or
by the trapezoid rule. In ``u = d / (2 scale)``: the rates are ``e^(base +- u)``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numba import njit

from statespace.model import outcome_table as T
from statespace.model.counts import count_outcome
from statespace.model.goal_laws import taus as _taus, tilt as _tilt

__all__ = ["U_MAX", "Z_MAX", "MAX_STEP", "TILT_AT", "SHIFT_AT", "COORD_AT", "BASE_MIN", "BASE_MAX", "outcome_at",
           "forecast_u", "game_base"]

#: ``base`` from the log of 0.05 to the log of 1000 expected goals (or points) of a level side: from
#: twenty times fewer than association football's 1.35 a side (a game that ends 0-0 nine times in
#: ten tells nothing more about skill) to about ten times basketball's 110 points. Below, one game's
#: Newton step (the EKF's) from level sides overshoots by up to ``|x - y| / e^base`` scales; above,
#: a forecast sums thousands of terms per quadrature node. A game's base moved by the two sides'
#: openness (two skills per side) is kept within the same range.
BASE_MIN, BASE_MAX = math.log(0.05), math.log(1000.0)

#: Half the log-ratio of the two rates, :math:`u = d / (2\alpha)`, beyond which a record is scored and
#: forecast as at :math:`\pm` ``U_MAX`` (a skill difference of 200 scales): the rates there differ by
#: :math:`e^{200}`, every forecast is certain to within :math:`e^{-46}`, and the rates,
#: :math:`e^{\eta_0 + U}` at most :math:`e^{107}`, keep every derivative finite at any accepted scale.
#: The gradient there still points back towards the data.
U_MAX = 100.0

#: The forecast integrates the Gaussian skill uncertainty out by the trapezoid rule on
#: ``z = (d - mean) / sd`` over ``|z| <= Z_MAX`` (the Gaussian mass beyond is 1.2e-15).
Z_MAX = 8.0

#: Widest trapezoid step in ``z``: the error of the rule on a Gaussian bump of width ``w`` sampled
#: every ``h`` falls like ``exp(-2 pi^2 w^2 / h^2)``: e^-31 for the weight itself (``w = 1``) at
#: this step, e^-79 at ``h = w / 2``, the step taken where the probabilities vary faster.
MAX_STEP = 0.8

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: the observation's own numbers in its kernel parameters
#: (``[base, scale, dispersion, rho, covariance, inflation, tilt, shift, coord]``); the forecast table follows them
_N_PARAMS = 9
#: where the draw tilt sits among them (a filter with a latent draw tendency writes the game's value
#: there before the game's kernels run)
TILT_AT = 6
#: where the game's goal-rate shift sits, in skill units: with two skills per side (attack and
#: defence) the two sides' summed openness ``e = o_a + o_b``, which moves both log-rates by
#: ``e / (2 scale)``; a filter that carries the second skill writes the game's value there (0 else)
SHIFT_AT = 7
#: where the kernels read which derivatives the derivatives kernel returns: 0, in the skill difference
#: ``d``; 1, the gradient in the shift ``e`` and the cross curvature in ``d`` and ``e`` (the
#: curvature in ``e`` equals the one in ``d`` for the counts' own law)
COORD_AT = 8


@njit(cache=True)
def game_base(params):
    """The game's ``base``: the observation's, moved by the shift (:data:`SHIFT_AT`) over ``2 scale``,
    kept within ``[BASE_MIN, BASE_MAX]``."""
    shift = params[SHIFT_AT]
    if shift == 0.0:
        return params[0]
    return min(max(params[0] + 0.5 * shift / params[1], BASE_MIN), BASE_MAX)


@njit(cache=True)
def _clip_u(u):
    """``u`` within ``+-U_MAX`` (see :data:`U_MAX`)."""
    return min(max(u, -U_MAX), U_MAX)


@njit(cache=True)
def outcome_at(base, kappa, rho, u):
    """:func:`statespace.model.counts.count_outcome` at the rates ``e^(base +- u)``, ``u`` clipped;
    with Dixon and Coles' ``rho`` (Poisson counts) the four low scores' probabilities times their
    :func:`_taus`: ``P(x, y) = tau(x, y) e^(-la - lb) la^x lb^y / (x! y!)``. Unclipped, the changes
    cancel (a win and a loss each gain ``rho la lb e^(-la - lb)``, a draw loses twice that); a
    clipped factor's residue is divided out."""
    u = _clip_u(u)
    la = math.exp(base + u)
    lb = math.exp(base - u)
    pw, pd, pl = count_outcome(la, lb, kappa)
    if rho == 0.0:
        return pw, pd, pl
    t00, t01, t10, t11 = _taus(la, lb, rho)
    p00 = math.exp(-la - lb)
    d00 = (t00 - 1.0) * p00
    d01 = (t01 - 1.0) * p00 * lb
    d10 = (t10 - 1.0) * p00 * la
    d11 = (t11 - 1.0) * p00 * la * lb
    total = 1.0 + d00 + d01 + d10 + d11
    return (pw + d10) / total, (pd + d00 + d11) / total, (pl + d01) / total


@njit(cache=True)
def tilted_at(base, kappa, rho, theta, u):
    """:func:`outcome_at` with the draw's odds times ``e^theta``
    (:func:`statespace.model.goal_laws.tilt`)."""
    pw, pd, pl = outcome_at(base, kappa, rho, u)
    return _tilt(pw, pd, pl, theta)


@njit(cache=True)
def _width(base, kappa):
    """The width in ``u`` over which the win/draw/loss probabilities change around ``u = 0``
    (:func:`goals_forecast`): ``1 / sqrt(2 lambda_0)``, at most 1, wider with the dispersion."""
    lam0 = math.exp(base)
    return min(1.0, max(1.0 / math.sqrt(2.0 * lam0), 0.5 * math.sqrt((1.0 + kappa * lam0) / (2.0 * lam0))))


@njit(cache=True)
def _outcome_grid(base, kappa, rho, u, out):
    """``out[k] = outcome_at(base, kappa, rho, u[k])`` and the products ``P(win) P(draw)``,
    ``P(draw)^2``, ``P(loss) P(draw)``: what the forecast table averages (the products for a tilt of
    the draws, :func:`forecast_u`)."""
    for k in range(u.shape[0]):
        pw, pd, pl = outcome_at(base, kappa, rho, u[k])
        out[k, 0], out[k, 1], out[k, 2] = pw, pd, pl
        out[k, 3], out[k, 4], out[k, 5] = pw * pd, pd * pd, pl * pd


@lru_cache(maxsize=16)
def _table(base: float, kappa: float, rho: float) -> np.ndarray:
    """The forecast table of these settings (:mod:`statespace.model.outcome_table`): the same for
    every scale, since it is read in ``u``. Kept for the last few settings (a tuning changes them
    at every evaluation; a run reads them once)."""
    width = float(_width(base, kappa))
    u = T.fine_grid(width)
    f = np.empty((u.shape[0], 6))
    _outcome_grid(base, kappa, rho, u, f)
    out = T.build(f, width)
    out.flags.writeable = False
    return out


@njit(cache=True)
def _forecast_z(base, kappa, rho, theta, mu, s, h):
    """The trapezoid rule on ``z`` (``u = mu + s z``, steps of ``h`` in ``u``) over ``|z| <= Z_MAX``,
    its Gaussian weights normalised to sum to 1: at most ``2 Z_MAX s / h + 1`` nodes."""
    step = h / s
    n = int(math.ceil(Z_MAX / step))
    pw = 0.0
    pd = 0.0
    pl = 0.0
    mass = 0.0
    for k in range(-n, n + 1):
        z = k * step
        weight = math.exp(-0.5 * z * z)
        w, dr, lo = tilted_at(base, kappa, rho, theta, mu + s * z)
        pw += weight * w
        pd += weight * dr
        pl += weight * lo
        mass += weight
    return pw / mass, pd / mass, pl / mass


@njit(cache=True)
def _forecast_u(base, kappa, rho, theta, mu, s, h):
    """For ``u ~ N(mu, s^2)`` wider than the clip (``Z_MAX s > U_MAX``): the outcome is constant
    beyond ``+-U_MAX`` (clipped), so ``E[f(u)] = f(U) P(u > U) + f(-U) P(u < -U) + int_{-U}^{U} f
    phi``, the tails by ``erfc`` and the middle by the trapezoid rule on a grid of ``N = ceil(2 U /
    h)`` steps in ``u`` with the Euler-Maclaurin end correction ``-(h^2 / 12) (F'(U) - F'(-U))``,
    ``F = f phi``, ``F'(+-U) = f(+-U) phi'(+-U)`` (``f`` is flat at the clip). ``s > U_MAX / Z_MAX``,
    so the weight is smooth on the grid. Normalised by the same rule applied to 1."""
    n = int(math.ceil(2.0 * U_MAX / h))
    step = 2.0 * U_MAX / n
    top = tilted_at(base, kappa, rho, theta, U_MAX)
    bottom = tilted_at(base, kappa, rho, theta, -U_MAX)
    acc = np.zeros(4)  # P(win), P(draw), P(loss) and the mass, unnormalised
    for k in range(n + 1):
        u = -U_MAX + k * step
        t = (u - mu) / s
        weight = math.exp(-0.5 * t * t) * (0.5 if k == 0 or k == n else 1.0) * step * _INV_SQRT_2PI / s
        if k == 0:
            f = bottom
        elif k == n:
            f = top
        else:
            f = tilted_at(base, kappa, rho, theta, u)
        for j in range(3):
            acc[j] += weight * f[j]
        acc[3] += weight
    up = 0.5 * math.erfc((U_MAX - mu) / (s * math.sqrt(2.0)))
    down = 0.5 * math.erfc((U_MAX + mu) / (s * math.sqrt(2.0)))
    # phi'(u) = -phi(u) (u - mu) / s^2 at both ends, times h^2 / 12
    t_up = (U_MAX - mu) / s
    t_down = (-U_MAX - mu) / s
    d_up = -math.exp(-0.5 * t_up * t_up) * _INV_SQRT_2PI / s * t_up / s * step * step / 12.0
    d_down = -math.exp(-0.5 * t_down * t_down) * _INV_SQRT_2PI / s * t_down / s * step * step / 12.0
    for j in range(3):
        acc[j] += up * top[j] + down * bottom[j] - (top[j] * d_up - bottom[j] * d_down)
    acc[3] += up + down - (d_up - d_down)
    return acc[0] / acc[3], acc[1] / acc[3], acc[2] / acc[3]


@njit(cache=True)
def forecast_u(params, d, var):
    """:func:`statespace.model.counts.count_outcome` at the rates of ``d`` (the draw tilted by
    ``params[6]``: :func:`tilted_at`), averaged over ``d ~ N(d, var)``.

    The probabilities change fastest in ``u = d / (2 scale)`` around ``u = 0``, where both rates
    are ``lambda_0 = e^base`` and the Poisson difference has sd ``sqrt(2 lambda_0)``: there they move
    over a width ``w = 1 / sqrt(2 lambda_0)`` of ``u`` (at most 1, the width of ``1 - exp(-e^u)`` when
    a rate is small; the negative binomial's is wider, but its small counts are steep enough to
    want the same step). From the forecast table where it reaches (with a tilt, from its averages of
    the untilted probabilities and their products, :func:`_tilt_moments`); else the trapezoid rule
    on the tilted probabilities takes steps of
    ``h = w / 2`` in ``u`` (at most :data:`MAX_STEP` sds): on ``z = (u - mean) / sd`` over ``|z| <=
    Z_MAX`` (:func:`_forecast_z`), or where that reaches past the clip ``+-U_MAX`` over
    ``[-U_MAX, U_MAX]`` with the Gaussian tails in closed form (:func:`_forecast_u`). Either way at
    most ``2 U_MAX / h + 1 <= 4 U_MAX sqrt(2 e^base) + 1`` nodes, about 18,000 at the largest
    ``base``, whatever the variance.
    """
    base = game_base(params)
    kappa = params[2]
    rho = params[3]
    theta = params[TILT_AT]
    c = 0.5 / params[1]
    mu = min(max(c * d, -1e300), 1e300)  # c d may overflow: +-1e300 is far beyond the clip
    if not var > 0.0:
        return tilted_at(base, kappa, rho, theta, mu)
    s = c * math.sqrt(var)
    if mu - Z_MAX * s >= U_MAX:  # all the mass beyond the clip
        return tilted_at(base, kappa, rho, theta, U_MAX)
    if mu + Z_MAX * s <= -U_MAX:
        return tilted_at(base, kappa, rho, theta, -U_MAX)
    if params.shape[0] > _N_PARAMS and params[SHIFT_AT] == 0.0:  # the table (of the observation's base), where it reaches
        found, pw, pd, pl, wd, dd, ld = T.lookup(params, _N_PARAMS, mu, s, theta != 0.0)
        if found:
            if theta == 0.0:
                return pw, pd, pl
            return _tilt_moments(pw, pd, pl, wd, dd, ld, theta)
    h = min(MAX_STEP * s, 0.5 * _width(base, kappa))
    if Z_MAX * s <= U_MAX:
        return _forecast_z(base, kappa, rho, theta, mu, s, h)
    return _forecast_u(base, kappa, rho, theta, mu, s, h)


@njit(cache=True)
def _tilt_moments(pw, pd, pl, wd, dd, ld, theta):
    """``E[tilt(P(u), theta)]`` from the averages of the probabilities and of their products with
    ``P(draw)`` (the table's six channels), to second order in the spread of ``P(draw)``: with
    ``e = e^theta - 1`` and ``D = 1 + e E[P_D]``, ``E[X / (1 + e P_D)] = E[X] / D - e Cov(X, P_D) / D^2
    + e^2 E[X] Var(P_D) / D^3`` for each of ``P(win)``, ``e^theta P(draw)``, ``P(loss)``, normalised to
    sum to 1 (the expansion of ``1 / (1 + e P_D)`` about ``E[P_D]``; the next term is of third order in
    ``e (P_D - E[P_D]) / D``)."""
    e = math.expm1(theta)
    big_d = 1.0 + e * pd
    var_d = max(dd - pd * pd, 0.0)
    second = e * e * var_d / (big_d * big_d * big_d)
    w = pw / big_d - e * (wd - pw * pd) / (big_d * big_d) + pw * second
    dr = (1.0 + e) * (pd / big_d - e * var_d / (big_d * big_d) + pd * second)
    lo = pl / big_d - e * (ld - pl * pd) / (big_d * big_d) + pl * second
    w = max(w, 0.0)
    dr = max(dr, 0.0)
    lo = max(lo, 0.0)
    total = w + dr + lo
    return w / total, dr / total, lo / total
