"""Compiled scalar kernels of the observation model, shared by every method.

These are the few lines of math that every filter evaluates once per game, so they are
compiled with numba and take only scalars. ``SkillModel`` wraps them for NumPy arrays; the
filters call them from inside their own compiled loops. Codes rather than strings cross the
compiled boundary: see ``LINKS`` and ``DRAWS``.
"""

from __future__ import annotations

import math

from numba import njit

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


@njit(cache=True)
def cdf(link, x):
    """The link's cdf F(x): logistic 1 / (1 + e^-x), or the standard normal Phi(x)."""
    if link == LOGISTIC:
        if x >= 0.0:
            return 1.0 / (1.0 + math.exp(-x))
        e = math.exp(x)
        return e / (1.0 + e)
    return 0.5 * math.erfc(-x / _SQRT2)


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
    if draw == DRAW_DAVIDSON:
        p = cdf(link, z)
        q = cdf(link, -z)
        g = theta * math.sqrt(p * q)
        den = 1.0 + g
        return p / den, g / den, q / den
    p = cdf(link, z)
    return p, 0.0, cdf(link, -z)


@njit(cache=True)
def expected_score(link, draw, theta, diff, s):
    """P(a wins) + P(draw) / 2 under :func:`outcome_proba`."""
    pw, pd, pl = outcome_proba(link, draw, theta, diff, s)
    return pw + 0.5 * pd
