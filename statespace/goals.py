"""``Goals``: a game observed as each side's count of goals (or points), Poisson.

The win/draw/loss forecast follows from the distribution of the difference of two Poisson
counts (Skellam), with the Gaussian uncertainty of the skill difference integrated out by
Gauss-Hermite quadrature.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, types

from .margin import _positive_number
from .observation import FORECAST_SIG, LIK_SIG, Observation, gauss_hermite

__all__ = ["Goals"]

#: Nodes of the Gauss-Hermite rule that integrates the skill uncertainty out of the forecast:
#: exact for polynomials of degree 79 in d, and the Skellam probabilities are smooth in d.
GH_NODES = 40
_GH_X, _GH_W = gauss_hermite(GH_NODES)

#: A Poisson sum stops once the mass of the terms not yet added is below this (its tail bound):
#: far below the digits a probability keeps.
TAIL = 1e-17

#: Upper bound on the terms of a Poisson sum (reached only at rates of hundreds of thousands).
MAX_TERMS = 1_000_000

_f8 = types.float64


@njit(types.UniTuple(_f8, 3)(_f8, _f8), cache=True)
def skellam_outcome(rate_a, rate_b):
    """``(P(X > Y), P(X = Y), P(X < Y))`` for independent ``X ~ Poisson(rate_a)``,
    ``Y ~ Poisson(rate_b)`` (the Skellam distribution of ``X - Y`` summed over its sign;
    Karlis and Ntzoufras 2003).

    ``P(X > Y) = sum_x p_a(x) P(Y <= x - 1)``, ``P(X < Y) = sum_y p_b(y) P(X <= y - 1)``,
    ``P(X = Y) = sum_k p_a(k) p_b(k)``: sums of positive terms only, so small probabilities keep
    their relative precision. The pmf runs by ``log p(k) = log p(k - 1) + log rate - log k``
    from ``log p(0) = -rate``; past the larger rate the tail after ``k`` is below
    ``p(k) r / (1 - r)``, ``r = rate / (k + 2)``, and the sums stop once both tails are below
    :data:`TAIL`.
    """
    if not (rate_a > 0.0 and rate_b > 0.0 and rate_a < math.inf and rate_b < math.inf):
        return math.nan, math.nan, math.nan
    la = math.log(rate_a)
    lb = math.log(rate_b)
    lpa = -rate_a
    lpb = -rate_b
    cdf_a = 0.0  # P(X <= k - 1)
    cdf_b = 0.0
    pw = 0.0
    pd = 0.0
    pl = 0.0
    top = max(rate_a, rate_b)
    for k in range(MAX_TERMS):
        pa = math.exp(lpa)
        pb = math.exp(lpb)
        pw += pa * cdf_b
        pl += pb * cdf_a
        pd += pa * pb
        cdf_a += pa
        cdf_b += pb
        if k + 2.0 > top:
            ra = rate_a / (k + 2.0)
            rb = rate_b / (k + 2.0)
            if pa * ra / (1.0 - ra) < TAIL and pb * rb / (1.0 - rb) < TAIL:
                break
        lk = math.log(k + 1.0)
        lpa += la - lk
        lpb += lb - lk
    total = pw + pd + pl
    return pw / total, pd / total, pl / total


# params = [base, scale]

@njit(LIK_SIG, cache=True)
def goals_loglik(params, score, score_a, score_b, d):
    """With ``u = d / (2 scale)``, ``lambda_a = exp(base + u)``, ``lambda_b = exp(base - u)``:
    ``l = x log lambda_a - lambda_a - log x! + y log lambda_b - lambda_b - log y!``,
    ``dl/dd = ((x - lambda_a) - (y - lambda_b)) / (2 scale)``,
    ``d2l/dd2 = -(lambda_a + lambda_b) / (2 scale)^2`` (``x, y`` = score_a, score_b)."""
    c = 0.5 / params[1]
    log_a = params[0] + c * d
    log_b = params[0] - c * d
    rate_a = math.exp(log_a)
    rate_b = math.exp(log_b)
    l = (score_a * log_a - rate_a - math.lgamma(score_a + 1.0)
         + score_b * log_b - rate_b - math.lgamma(score_b + 1.0))
    return l, c * ((score_a - rate_a) - (score_b - rate_b)), -c * c * (rate_a + rate_b)


@njit(FORECAST_SIG, cache=True)
def goals_forecast(params, d, var):
    """:func:`skellam_outcome` at the rates of ``d``, averaged over ``d ~ N(d, var)`` by the
    :data:`GH_NODES`-point Gauss-Hermite rule."""
    c = 0.5 / params[1]
    if var <= 0.0:
        return skellam_outcome(math.exp(params[0] + c * d), math.exp(params[0] - c * d))
    sd = math.sqrt(2.0 * var)
    pw = 0.0
    pd = 0.0
    pl = 0.0
    for k in range(_GH_X.shape[0]):
        x = d + sd * _GH_X[k]
        w, dr, lo = skellam_outcome(math.exp(params[0] + c * x), math.exp(params[0] - c * x))
        pw += _GH_W[k] * w
        pd += _GH_W[k] * dr
        pl += _GH_W[k] * lo
    total = pw + pd + pl
    return pw / total, pd / total, pl / total


@dataclass(frozen=True)
class Goals(Observation):
    """Each side's count, Poisson, with rates set by the skill difference:

        score_a ~ Poisson(lambda_a),  log lambda_a = base + d / (2 scale)
        score_b ~ Poisson(lambda_b),  log lambda_b = base - d / (2 scale)

    independently (Maher 1982, "Modelling association football scores", Statistica
    Neerlandica 36, with attack and defence folded into one skill per side). ``d`` already holds
    the model's home advantage, so ``home`` is a log-rate ratio times ``2 scale``. A skill
    difference of ``scale`` multiplies a's rate by ``e^(1/2)`` and divides b's by it: the
    log-ratio of the two rates is ``d / scale``.

    Win/draw/loss: the sign of ``score_a - score_b``, a Skellam variable (Karlis and Ntzoufras
    2003, "Analysis of sports data by using bivariate Poisson models", JRSS D 52); with skill
    uncertainty ``d ~ N(mean, var)`` averaged by Gauss-Hermite quadrature. No exact tilted
    moments (:meth:`moments` raises ``NotImplementedError``).

    Parameters
    ----------
    base:
        Log of each side's expected count when the sides are level (``d = 0``):
        ``log(1.35)`` for about 1.35 goals a side, as in association football.

    Kernel parameters (:meth:`vector`): ``[base, scale]``.
    """

    base: float

    name = "goals"
    needs_scores = True
    lik_kernel = staticmethod(goals_loglik)
    forecast_kernel = staticmethod(goals_forecast)

    def __post_init__(self) -> None:
        ok = isinstance(self.base, (int, float, np.integer, np.floating)) and not isinstance(self.base, bool)
        if not ok or not math.isfinite(float(self.base)):
            raise ValueError(f"base must be a finite number (the log of a side's expected count), got {self.base!r}")
        object.__setattr__(self, "base", float(self.base))

    def vector(self, scale: float) -> np.ndarray:
        return np.array([self.base, _positive_number("scale", scale, allow_zero=False)])

    def _check_record(self, score, score_a, score_b) -> None:
        super()._check_record(score, score_a, score_b)
        if np.any(score_a < 0) or np.any(score_b < 0):
            raise ValueError("score_a and score_b are counts: they must be >= 0")
