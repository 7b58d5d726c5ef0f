"""Compiled scalar kernels of the observation model, shared by every method.

These are the few lines of math that every filter evaluates once per game, so they are
compiled with numba and take only scalars. ``SkillModel`` wraps them for NumPy arrays; the
filters call them from inside their own compiled loops. Codes rather than strings cross the
compiled boundary: see ``LINKS`` and ``DRAWS``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model import gaussian as _g

#: link code -> name
LINKS = ("logistic", "probit")
LOGISTIC = 0
PROBIT = 1

#: draw-model code -> name
DRAWS = ("none", "half", "threshold", "davidson")
DRAW_NONE = 0
DRAW_HALF = 1
DRAW_THRESHOLD = 2
DRAW_DAVIDSON = 3

#: Variance inflation used to integrate skill uncertainty through the logistic link:
#: E[logistic(x)] for x ~ N(m, v) is approximated by logistic(m / sqrt(1 + LOGISTIC_VAR_FACTOR v)).
#: 3 / pi^2 is the factor in Glickman's g(RD) (it matches the variance of the logistic
#: distribution, pi^2 / 3), so Glicko's symmetric prediction is exactly this model's forecast.
LOGISTIC_VAR_FACTOR = 3.0 / math.pi**2

_SQRT2 = math.sqrt(2.0)
#: a standardised difference or margin beyond this counts as this: a finite difference over
#: a tiny scale overflows to inf, and inf - inf (a margin and a difference both infinite) is NaN; every
#: probability and derivative below has reached its limit long before
_Z_MAX = 1e300


@njit(cache=True)
def _clip(x):
    """``x`` kept within ``+-_Z_MAX`` (NaN stays NaN)."""
    return min(max(x, -_Z_MAX), _Z_MAX)


@njit(cache=True)
def cdf(link, x):
    """The link's cdf F(x): logistic 1 / (1 + e^-x), or the standard normal Phi(x)."""
    if link == LOGISTIC:
        # e^-|x| never overflows; choosing between the two forms by a select, not a branch,
        # spares a loop a mispredicted jump on half its games
        e = math.exp(-abs(x))
        r = 1.0 / (1.0 + e)
        return r if x >= 0.0 else e * r
    return 0.5 * math.erfc(-x / _SQRT2)


@njit(cache=True)
def cdf_pair(link, x):
    """``(F(x), F(-x))``, each exactly as :func:`cdf` gives it; the logistic pair from one
    ``e^-|x|`` (``1 / (1 + e)`` and ``e / (1 + e)``, by the sign of ``x``)."""
    if link == LOGISTIC:
        e = math.exp(-abs(x))
        r = 1.0 / (1.0 + e)
        er = e * r
        return (r, er) if x >= 0.0 else (er, r)
    return 0.5 * math.erfc(-x / _SQRT2), 0.5 * math.erfc(x / _SQRT2)


@njit(cache=True)
def effective_scale(link, scale, var):
    """Scale of the link after integrating a Gaussian skill difference of variance ``var``.

    probit (exact):   sqrt(scale^2 + var)
    logistic (approx): sqrt(scale^2 + 3 var / pi^2)   (Glickman's g-function)
    """
    if link == LOGISTIC:
        return math.sqrt(scale * scale + LOGISTIC_VAR_FACTOR * var)
    return math.sqrt(scale * scale + var)


@njit(cache=True)
def outcome_proba(link, draw, theta, diff, s):
    """(P(a wins), P(draw), P(b wins)) for mean difference ``diff`` at effective scale ``s``.

    Draw models (F is the link's cdf, z = diff / s):

    - none, half:  (F(z), 0, 1 - F(z)); "half" only changes how an observed draw is scored.
    - threshold:   win F(z - theta/s), loss F(-z - theta/s), draw the rest; ``theta`` is the
      draw margin in skill units (ordered logit/probit; TrueSkill's epsilon).
    - davidson:    with p = F(z), win p / D, loss (1 - p) / D, draw theta sqrt(p (1 - p)) / D,
      D = 1 + theta sqrt(p (1 - p)); for the logistic link this is exactly Davidson (1970),
      P(draw) proportional to nu sqrt(pi_a pi_b).

    An infinite ``z`` (a finite difference over a tiny scale) gives 1 or 0, as it should; the
    margin's ``theta / s`` must be finite (the filters bound the margin by 1e150 and the scale below
    by 1e-150), or ``z - m`` could be inf - inf.
    """
    z = diff / s
    if draw == DRAW_THRESHOLD:
        m = theta / s
        pw = cdf(link, z - m)
        pl = cdf(link, -z - m)
        pd = 1.0 - pw - pl
        if pd < 0.0:
            pd = 0.0
        return pw, pd, pl
    p, q = cdf_pair(link, z)
    if draw == DRAW_DAVIDSON:
        g = theta * math.sqrt(p * q)
        den = 1.0 + g
        return p / den, g / den, q / den
    return p, 0.0, q


@njit(cache=True)
def expected_score(link, draw, theta, diff, s):
    """P(a wins) + P(draw) / 2 under :func:`outcome_proba`."""
    pw, pd, pl = outcome_proba(link, draw, theta, diff, s)
    return pw + 0.5 * pd


# ---------------------------------------------------------------- log-likelihood derivatives
@njit(cache=True)
def _log_cdf_derivs(link, x):
    """(d/dx log F(x), d^2/dx^2 log F(x)): logistic F(-x), -F(x) F(-x); probit v, -v (v + x)
    with v = N(x) / Phi(x) by Mills' ratio (finite far into the left tail, where
    ``-v (v + x) = -w`` comes from :func:`statespace.model.gaussian.w_win` without cancellation)."""
    if link == LOGISTIC:
        p, q = cdf_pair(LOGISTIC, x)
        return q, -p * q
    return _g.v_win(x, 0.0), -_g.w_win(x, 0.0)


@njit(cache=True)
def _log_sigmoid(x):
    """log F(x) for the logistic F, without overflow."""
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


#: a logistic threshold draw's margin (in scale units) below which its limit as the margin goes to 0 is used
_MARGIN_MIN = 1e-5


@njit(cache=True)
def loglik_derivs(link, draw, theta, score, diff, scale):
    """First and second derivatives of the log-likelihood of one result with respect to the
    skill difference ``diff`` (in skill units), at effective scale ``scale``.

    With z = diff / scale and F the link's cdf:

    - none / half:  l = y log F(z) + (1 - y) log F(-z);
    - threshold:    win log F(z - m), loss log F(-z - m), draw log(F(m - z) - F(-m - z)),
      m = margin / scale; probit draws through the truncated-Gaussian corrections
      (l' = v_draw, l'' = -w_draw), which stay finite in the tails;
    - davidson:     win log p - log D, loss log q - log D, draw log nu + log r - log D, with
      p = F(z), q = F(-z), r = sqrt(p q), D = 1 + nu r.

    Returns (dl/ddiff, d2l/ddiff2); the second is <= 0 wherever the likelihood is log-concave.
    With a threshold, ``z`` beyond 1e300 counts as 1e300 (:data:`_Z_MAX`: the logistic draw's ratios
    subtract two log-cdfs that are both -inf at an infinite ``z``); every other form takes an
    infinite ``z`` as it is.
    """
    z = diff / scale
    if draw == DRAW_THRESHOLD:
        z = _clip(z)
        m = theta / scale
        if score == 1.0:
            g, h = _log_cdf_derivs(link, z - m)
        elif score == 0.0:
            g, h = _log_cdf_derivs(link, -z - m)
            g = -g
        elif link == PROBIT:
            g = _g.v_draw(z, m)
            h = -_g.w_draw(z, m)
        elif m < _MARGIN_MIN:
            # logistic, a margin below 1e-5 scale units: D = 2 m F(z) F(-z) (1 + O(m^2)), so l' and l''
            # are those of log(F(z) F(-z)) to within 1e-10; the ratios below would lose every digit
            p = cdf(link, z)
            q = cdf(link, -z)
            g = q - p
            h = -2.0 * p * q
        else:
            # logistic: D = F(a) - F(b) = F(a) F(-b) (1 - e^(-2m)), a = m - z, b = -m - z, so the
            # ratios f(a)/D = F(-a) / (F(-b) c) and f(b)/D = F(b) / (F(a) c), c = 1 - e^(-2m),
            # stay finite however far z is from 0; D' = f(b) - f(a), D'' = f'(a) - f'(b) with
            # f'(x) = f(x) (F(-x) - F(x))
            a_ = m - z
            b_ = -m - z
            c = -math.expm1(-2.0 * max(m, 1e-300))
            ra = math.exp(_log_sigmoid(-a_) - _log_sigmoid(-b_)) / c
            rb = math.exp(_log_sigmoid(b_) - _log_sigmoid(a_)) / c
            g = rb - ra
            h = (ra * (cdf(link, -a_) - cdf(link, a_)) - rb * (cdf(link, -b_) - cdf(link, b_))) - g * g
    elif draw == DRAW_DAVIDSON:
        gp, hp = _log_cdf_derivs(link, z)
        gq, hq = _log_cdf_derivs(link, -z)
        gq = -gq
        p = cdf(link, z)
        q = cdf(link, -z)
        r = math.sqrt(p * q)
        lr1 = 0.5 * (gp + gq)
        lr2 = 0.5 * (hp + hq)
        # share = nu r / D, D = 1 + nu r; then (log D)' = share lr1 and
        # (log D)'' = nu r (lr2 + lr1^2) / D - (share lr1)^2 = share lr2 + (share lr1) ((1 - share) lr1),
        # written so that a huge nu (nu r = inf) or a vanishing r (nu r = 0, lr1^2 = inf) gives no NaN
        tr = theta * r
        share = tr / (1.0 + tr) if tr <= 1.0 else 1.0 / (1.0 + 1.0 / tr)
        ld1 = share * lr1
        ld2 = share * lr2 + ld1 * ((1.0 - share) * lr1)
        if score == 1.0:
            g, h = gp - ld1, hp - ld2
        elif score == 0.0:
            g, h = gq - ld1, hq - ld2
        else:
            g, h = lr1 - ld1, lr2 - ld2
    elif link == LOGISTIC:
        # the none / half form below with _log_cdf_derivs(z) = (q, -p q) and (-z) = (p, -q p),
        # from one pair
        p, q = cdf_pair(link, z)
        g = score * q - (1.0 - score) * p
        h = score * (-p * q) + (1.0 - score) * (-q * p)
    else:
        g1, h1 = _log_cdf_derivs(link, z)
        g0, h0 = _log_cdf_derivs(link, -z)
        g = score * g1 - (1.0 - score) * g0
        h = score * h1 + (1.0 - score) * h0
    return g / scale, h / (scale * scale)


# ---------------------------------------------------------------- log-likelihood and its gradient
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True)
def log_cdf(link, x):
    """log F(x) to full relative precision: logistic by :func:`_log_sigmoid`; probit log Phi(x),
    in the left tail (x < -5) as log N(x) + log R(-x) with Mills' ratio R, for x > 0 as
    log1p(-Phi(-x))."""
    if link == LOGISTIC:
        return _log_sigmoid(x)
    if x < -5.0:
        return -0.5 * x * x - _HALF_LOG_2PI + math.log(_g.mills(-x))
    if x > 0.0:  # log(1 - Phi(-x)): keeps the digits of a log close to 0
        return math.log1p(-0.5 * math.erfc(x / _SQRT2))
    return math.log(0.5 * math.erfc(-x / _SQRT2))


@njit(cache=True)
def _log1mexp(d):
    """log(1 - e^d) for d < 0 (Maechler 2012: expm1 near 0, log1p further out)."""
    if d > -0.6931471805599453:
        return math.log(-math.expm1(d))
    return math.log1p(-math.exp(d))


@njit(cache=True)
def _log_cdf_and_grad(link, x):
    """(log F(x), d/dx log F(x)) together: for the logistic link from one exp and one log1p
    (log F(x) = min(x, 0) - log(1 + e^-|x|), F(-x) = e^-|x| / (1 + e^-|x|) or its complement),
    the hot path of a sampler; for the probit link :func:`log_cdf` and Mills' ratio."""
    if link == LOGISTIC:
        e = math.exp(-abs(x))
        if x >= 0.0:
            return -math.log1p(e), e / (1.0 + e)
        return x - math.log1p(e), 1.0 / (1.0 + e)
    return log_cdf(link, x), _g.v_win(x, 0.0)


def log_sigmoid_and_grad_array(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log F(x), F(-x))`` elementwise for the logistic ``F`` over a NumPy array: the array form
    of :func:`_log_cdf_and_grad` for the logistic link, the same formula
    (``log F(x) = min(x, 0) - log(1 + e^-|x|)``; ``d/dx log F(x) = F(-x) = e^-|x| / (1 + e^-|x|)``
    for ``x >= 0``, ``1 / (1 + e^-|x|)`` for ``x < 0``) in NumPy's vectorised ``exp`` and
    ``log1p``, for callers that hold every game's ``x`` at once (the Bradley-Terry path of
    :class:`smoothers._walk_logp.WalkGamesLogp`)."""
    e = np.exp(-np.abs(x))
    log_f = np.minimum(x, 0.0) - np.log1p(e)
    grad = np.where(x >= 0.0, e, 1.0)
    grad /= 1.0 + e
    return log_f, grad


@njit(cache=True)
def _log_sinhc(x):
    """``log(sinh(x) / x)`` for ``x >= 0``, without overflow (``x - log 2x`` past 20, where the rest
    is below 1e-17) or cancellation (``x^2 / 6`` below 1e-4)."""
    if x < 1e-4:
        return x * x / 6.0
    if x < 20.0:
        return math.log(math.sinh(x) / x)
    return x - math.log(2.0 * x)


@njit(cache=True)
def _langevin(x):
    """``coth(x) - 1 / x`` for ``x >= 0``, the derivative of :func:`_log_sinhc`."""
    if x < 1e-4:
        return x / 3.0
    if x < 20.0:
        return 1.0 / math.tanh(x) - 1.0 / x
    return 1.0 - 1.0 / x


@njit(cache=True)
def _probit_draw_small(z, m, scale):
    """A probit threshold draw at a margin ``m`` below :data:`_MARGIN_MIN` scale units, as
    :func:`loglik_grad` returns it. With ``t = |z|``,
    ``D = Phi(m - t) - Phi(-m - t) = N(t) int_{-m}^{m} e^{-t s - s^2 / 2} ds = 2 m N(t) sinh(m t) / (m t)
    (1 + O(m^2))``, so ``l = log 2m + log N(t) + log(sinh(mt) / mt)`` within ``m^2 / 2`` (5e-11),
    where the difference of the two cdfs has lost its digits (and is 0 below ``m`` = 1e-17);
    ``dl/dt = -t + m L(mt)``, ``dl/dm = 1 / m + t L(mt)``, ``L`` the Langevin function
    (:func:`_langevin`). At ``m = 0`` a draw has no likelihood: ``l = -inf``."""
    t = min(abs(z), _Z_MAX)
    x = m * t
    dt = -t + m * _langevin(x)
    gz = dt if z >= 0.0 else -dt
    if not m > 0.0:
        return -math.inf, gz / scale, math.inf
    lv = math.log(2.0 * m) - 0.5 * t * t - _HALF_LOG_2PI + _log_sinhc(x)
    return lv, gz / scale, (1.0 / m + t * _langevin(x)) / scale


@njit(cache=True)
def loglik_grad(link, draw, theta, score, diff, scale):
    """Log-likelihood of one result, its derivative in the skill difference ``diff`` and its
    derivative in the draw parameter ``theta`` (threshold margin, in skill units, or Davidson's
    nu): ``(l, dl/ddiff, dl/dtheta)``; the gradient a sampler needs (see
    :func:`loglik_derivs` for the curvature).

    With z = diff / scale, F the link's cdf and f its density:

    - none / half: l = y log F(z) + (1 - y) log F(-z);
    - threshold, m = theta / scale: win log F(z - m), loss log F(-z - m),
      draw log(F(m - z) - F(-m - z)); for the logistic link the draw term is
      log F(m - z) + log F(m + z) + log(1 - e^(-2m)) (exact, since F(a) - F(b) = F(a) F(-b)
      (1 - e^(b - a))); for the probit link it is evaluated at |z| (it is even in z), in the
      left tail through log Phi, so it stays finite however far z is from 0, and below a margin of
      1e-5 scale units by its expansion in m (:func:`_probit_draw_small`);
    - davidson: p = F(z), q = F(-z), r = sqrt(p q), D = 1 + nu r: win log p - log D,
      loss log q - log D, draw log nu + log r - log D (Davidson 1970).
    """
    z = diff / scale
    if draw == DRAW_THRESHOLD:
        m = theta / scale
        if score == 1.0:
            lv, gz = _log_cdf_and_grad(link, z - m)
            return lv, gz / scale, -gz / scale
        if score == 0.0:
            lv, gz = _log_cdf_and_grad(link, -z - m)
            return lv, -gz / scale, -gz / scale
        if link == LOGISTIC:
            la, ga = _log_cdf_and_grad(link, m - z)
            lb, gb = _log_cdf_and_grad(link, m + z)
            mm = max(m, 1e-300)
            lv = la + lb + _log1mexp(-2.0 * mm)
            return lv, (gb - ga) / scale, (ga + gb + 2.0 / math.expm1(2.0 * mm)) / scale
        if m < _MARGIN_MIN:
            return _probit_draw_small(z, m, scale)
        # probit: D = Phi(a) - Phi(b), a = m - t, b = -m - t, t = |z|
        t = abs(z)
        a = m - t
        b = -m - t
        if a <= 0.0:  # both in the left tail: D = Phi(a) (1 - rho), rho = Phi(b) / Phi(a)
            la = log_cdf(link, a)
            delta = log_cdf(link, b) - la
            if delta >= 0.0:  # m underflowed to 0
                delta = -1e-300
            one_m_rho = -math.expm1(delta)
            lv = la + _log1mexp(delta)
            na = _g.v_win(a, 0.0) / one_m_rho          # N(a) / D
            nb = _g.v_win(b, 0.0) * math.exp(delta) / one_m_rho  # N(b) / D
        else:
            d = 0.5 * (math.erf(a / _SQRT2) - math.erf(b / _SQRT2))
            lv = math.log(d)
            na = _g.pdf(a) / d
            nb = _g.pdf(b) / d
        dt = nb - na  # dl/dt
        gz = dt if z >= 0.0 else -dt
        return lv, gz / scale, (na + nb) / scale
    if draw == DRAW_DAVIDSON:
        lp, gp = _log_cdf_and_grad(link, z)
        lq, gq = _log_cdf_and_grad(link, -z)
        gq = -gq
        lr = 0.5 * (lp + lq)
        glr = 0.5 * (gp + gq)
        lnr = math.log(theta) + lr
        ld = -_log_sigmoid(-lnr)             # log D = log(1 + e^lnr)
        share = math.exp(lnr - ld)           # nu r / D
        gd = share * glr                     # d log D / dz
        gnu = -math.exp(lr - ld)             # d(-log D) / dnu = -r / D
        if score == 1.0:
            return lp - ld, (gp - gd) / scale, gnu
        if score == 0.0:
            return lq - ld, (gq - gd) / scale, gnu
        # a draw at nu = 0 has no likelihood (l = -inf), and its nu-gradient is +inf, not 1 / 0
        return lnr - ld, (glr - gd) / scale, (1.0 / theta if theta > 0.0 else math.inf) + gnu
    if score == 1.0:
        lv, gz = _log_cdf_and_grad(link, z)
        return lv, gz / scale, 0.0
    if score == 0.0:
        lv, gz = _log_cdf_and_grad(link, -z)
        return lv, -gz / scale, 0.0
    l1, g1 = _log_cdf_and_grad(link, z)
    l0, g0 = _log_cdf_and_grad(link, -z)
    return score * l1 + (1.0 - score) * l0, (score * g1 - (1.0 - score) * g0) / scale, 0.0


# ---------------------------------------------------------------- array versions
@njit(cache=True)
def outcome_proba_array(link, draw, theta, diff, s):
    """:func:`outcome_proba` over arrays ``diff`` and ``s`` (same length): an (n, 3) array."""
    n = diff.shape[0]
    out = np.empty((n, 3))
    for i in range(n):
        pw, pd, pl = outcome_proba(link, draw, theta, diff[i], s[i])
        out[i, 0] = pw
        out[i, 1] = pd
        out[i, 2] = pl
    return out


@njit(cache=True)
def loglik_derivs_array(link, draw, theta, score, diff, scale):
    """:func:`loglik_derivs` over arrays: (gradient, second derivative) per game."""
    n = diff.shape[0]
    g = np.empty(n)
    h = np.empty(n)
    for i in range(n):
        g[i], h[i] = loglik_derivs(link, draw, theta, score[i], diff[i], scale)
    return g, h
