"""``Goals``: a game observed as each side's count of goals (or points), Poisson or, with a
dispersion, negative binomial.

The win/draw/loss forecast follows from the distribution of the difference of the two counts
(Skellam for Poisson counts), with the Gaussian uncertainty of the skill difference integrated out
by quadrature over the skill difference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, types

from .margin import _positive_number
from ._pytensor_config import configure_pytensor
from ._jit import kernel
from .observation import DERIVS_SIG, FORECAST_SIG, LIK_SIG, Observation

__all__ = ["Goals"]

#: The forecast integrates the Gaussian skill uncertainty out by the trapezoid rule on
#: ``z = (d - mean) / sd`` over ``|z| <= Z_MAX`` (the Gaussian mass beyond is 1.2e-15).
Z_MAX = 8.0

#: Widest trapezoid step in ``z``: the error of the rule on a Gaussian bump of width ``w`` sampled
#: every ``h`` falls like ``exp(-2 pi^2 w^2 / h^2)``: e^-31 for the weight itself (``w = 1``) at
#: this step, e^-79 at ``h = w / 2``, the step taken where the probabilities vary faster.
MAX_STEP = 0.8

#: A Poisson sum stops once the mass of the terms not yet added is below this (its tail bound):
#: far below the digits a probability keeps.
TAIL = 1e-17

#: Rates above which the sums are replaced by the normal approximation of the difference,
#: ``X - Y ~ N(rate_a - rate_b, rate_a + rate_b)`` with a continuity correction of 1/2 (its
#: error shrinks like one over the square root of the rate); summing would take millions of terms.
MAX_RATE = 1e6

#: Largest rate whose ``exp(-rate)`` is a normal double (not below 2.2e-308): under it the
#: pmf runs by ``p(k) = p(k - 1) rate / k``, above it by sums of logarithms.
PRODUCT_RATE = 700.0

#: Standardised gap ``(rate_a - rate_b) / sqrt(rate_a + rate_b)`` beyond which the weaker side's
#: chance of a draw or better is below e^-600 (Bernstein's inequality), so the forecast is certain.
CERTAIN = 40.0

_f8 = types.float64


@njit(cache=True)
def _log_p0(rate, kappa):
    """``log P(X = 0)``: ``-rate`` (Poisson), ``-log(1 + kappa rate) / kappa`` (negative binomial)."""
    return -rate if kappa == 0.0 else -math.log1p(kappa * rate) / kappa


@njit(cache=True)
def _ratio(rate, kappa, k):
    """``P(X = k + 1) / P(X = k)``: ``rate (1 + kappa k) / ((k + 1) (1 + kappa rate))``."""
    return rate * (1.0 + kappa * k) / ((k + 1.0) * (1.0 + kappa * rate))


@njit(cache=True)
def count_outcome(rate_a, rate_b, kappa):
    """``(P(X > Y), P(X = Y), P(X < Y))`` for independent counts ``X``, ``Y`` of means ``rate_a``,
    ``rate_b``: Poisson at ``kappa = 0`` (the Skellam distribution of ``X - Y`` summed over its
    sign; Karlis and Ntzoufras 2003), else negative binomial with variance ``rate + kappa rate^2``.

    ``P(X > Y) = sum_x p_a(x) P(Y <= x - 1)``, ``P(X < Y) = sum_y p_b(y) P(X <= y - 1)``,
    ``P(X = Y) = sum_k p_a(k) p_b(k)``: sums of positive terms only, so small probabilities keep
    their relative precision. The pmf runs by ``p(k + 1) = p(k) rate (1 + kappa k) / ((k + 1)
    (1 + kappa rate))`` from ``p(0) = e^-rate`` (``(1 + kappa rate)^(-1 / kappa)``), by logarithms
    where ``p(0)`` is below :data:`PRODUCT_RATE`'s ``e^-700``. Past the larger rate the mass after
    ``k`` is below ``p(k) q / (1 - q)`` with ``q`` the largest ratio still to come (the ratio at
    ``k``, or its limit ``kappa rate / (1 + kappa rate)`` where it rises, ``kappa > 1``), and the
    sums stop once both are below :data:`TAIL`. Beyond :data:`CERTAIN` standard deviations of the
    difference the result is certain; above :data:`MAX_RATE` the difference is taken as normal.
    """
    if not (rate_a > 0.0 and rate_b > 0.0 and rate_a < math.inf and rate_b < math.inf and kappa >= 0.0):
        return math.nan, math.nan, math.nan
    sd = math.sqrt(rate_a * (1.0 + kappa * rate_a) + rate_b * (1.0 + kappa * rate_b))
    gap = (rate_a - rate_b) / sd
    if gap > CERTAIN:
        return 1.0, 0.0, 0.0
    if gap < -CERTAIN:
        return 0.0, 0.0, 1.0
    if max(rate_a, rate_b) > MAX_RATE:
        pw = 0.5 * math.erfc(-(gap - 0.5 / sd) / math.sqrt(2.0))
        pl = 0.5 * math.erfc(-(-gap - 0.5 / sd) / math.sqrt(2.0))
        return pw, max(1.0 - pw - pl, 0.0), pl
    lpa = _log_p0(rate_a, kappa)
    lpb = _log_p0(rate_b, kappa)
    # above e^-700 the pmf can run by products (no underflow of p(0))
    by_products = min(lpa, lpb) > -PRODUCT_RATE
    pa = math.exp(lpa)
    pb = math.exp(lpb)
    limit_a = kappa * rate_a / (1.0 + kappa * rate_a)
    limit_b = kappa * rate_b / (1.0 + kappa * rate_b)
    cdf_a = 0.0  # P(X <= k - 1)
    cdf_b = 0.0
    pw = 0.0
    pd = 0.0
    pl = 0.0
    top = max(rate_a, rate_b)
    k = 0
    while True:
        pw += pa * cdf_b
        pl += pb * cdf_a
        pd += pa * pb
        cdf_a += pa
        cdf_b += pb
        ra = _ratio(rate_a, kappa, k)
        rb = _ratio(rate_b, kappa, k)
        if k + 2.0 > top:
            qa = max(ra, limit_a)
            qb = max(rb, limit_b)
            if qa < 1.0 and qb < 1.0 and pa * qa / (1.0 - qa) < TAIL and pb * qb / (1.0 - qb) < TAIL:
                break
        if by_products:
            pa *= ra
            pb *= rb
        else:
            lpa += math.log(ra)
            lpb += math.log(rb)
            pa = math.exp(lpa)
            pb = math.exp(lpb)
        k += 1
    total = pw + pd + pl
    return pw / total, pd / total, pl / total


@njit(cache=True)
def skellam_outcome(rate_a, rate_b):
    """:func:`count_outcome` of two Poisson counts (``kappa = 0``)."""
    return count_outcome(rate_a, rate_b, 0.0)


@njit(cache=True)
def _side(x, eta, kappa):
    """A count ``x`` of mean ``lambda = e^eta``: ``(log p(x), dl/deta, d2l/deta2)`` with

    ``l = x eta - lambda - log x!`` (Poisson, ``kappa = 0``), else the negative binomial's
    ``l = log Gamma(x + r) - log Gamma(r) - log x! + x (eta - log r) - (x + r) log(1 + kappa lambda)``,
    ``r = 1 / kappa``, written as ``sum_{j < x} log(1 + kappa j) + x eta - (x + 1 / kappa)
    log(1 + kappa lambda) - log x!`` for whole ``x`` (no cancellation of large log-gammas);
    ``dl/deta = (x - lambda) / (1 + kappa lambda)``,
    ``d2l/deta2 = -lambda (1 + kappa x) / (1 + kappa lambda)^2``
    (Hilbe 2011, "Negative binomial regression", the NB2 model)."""
    lam = math.exp(eta)
    if kappa == 0.0:
        return x * eta - lam - math.lgamma(x + 1.0), x - lam, -lam
    u = 1.0 + kappa * lam
    if x == math.floor(x) and x <= 1000.0:
        acc = 0.0
        for j in range(int(x)):
            acc += math.log1p(kappa * j)
    else:
        r = 1.0 / kappa
        acc = math.lgamma(x + r) - math.lgamma(r) - x * math.log(r)
    l = acc + x * eta - (x + 1.0 / kappa) * math.log1p(kappa * lam) - math.lgamma(x + 1.0)
    return l, (x - lam) / u, -lam * (1.0 + kappa * x) / (u * u)


# params = [base, scale, dispersion]

@kernel(DERIVS_SIG)
def goals_derivs(params, score, score_a, score_b, d):
    """``dl/dd`` and ``d2l/dd2`` of :func:`goals_loglik`."""
    c = 0.5 / params[1]
    _, ga, ha = _side(score_a, params[0] + c * d, params[2])
    _, gb, hb = _side(score_b, params[0] - c * d, params[2])
    return c * (ga - gb), c * c * (ha + hb)


@kernel(LIK_SIG)
def goals_loglik(params, score, score_a, score_b, d):
    """With ``u = d / (2 scale)``, ``eta_a = base + u``, ``eta_b = base - u`` the log-means of
    the two counts ``x, y`` (score_a, score_b): ``l = l_side(x, eta_a) + l_side(y, eta_b)``,
    ``dl/dd = (g_a - g_b) / (2 scale)``, ``d2l/dd2 = (h_a + h_b) / (2 scale)^2`` with each side's
    log pmf and its derivatives ``g``, ``h`` in ``eta`` from :func:`_side`; Poisson,
    ``l = x log lambda_a - lambda_a - log x! + y log lambda_b - lambda_b - log y!``, at
    dispersion 0."""
    c = 0.5 / params[1]
    la, ga, ha = _side(score_a, params[0] + c * d, params[2])
    lb, gb, hb = _side(score_b, params[0] - c * d, params[2])
    return la + lb, c * (ga - gb), c * c * (ha + hb)


@kernel(FORECAST_SIG)
def goals_forecast(params, d, var):
    """:func:`count_outcome` at the rates of ``d``, averaged over ``d ~ N(d, var)``.

    The probabilities change fastest in ``u = d / (2 scale)`` around ``u = 0``, where both rates
    are ``e^base`` and the difference has sd ``sqrt(2 e^base)``: there they move over a width
    ``w = 1 / sqrt(2 e^base)`` of ``u`` (at most 1, the width of ``1 - exp(-e^u)`` when a rate
    is small). The trapezoid rule on ``z`` takes steps of ``w / 2`` in ``u``, at most
    :data:`MAX_STEP`, over ``|z| <= Z_MAX``, its Gaussian weights normalised to sum to 1.
    """
    c = 0.5 / params[1]
    if var <= 0.0:
        return count_outcome(math.exp(params[0] + c * d), math.exp(params[0] - c * d), params[2])
    sd = math.sqrt(var)
    width_u = min(1.0, 1.0 / math.sqrt(2.0 * math.exp(params[0])))
    step = min(MAX_STEP, 0.5 * width_u / (c * sd))
    n = int(math.ceil(Z_MAX / step))
    pw = 0.0
    pd = 0.0
    pl = 0.0
    mass = 0.0
    for k in range(-n, n + 1):
        z = k * step
        weight = math.exp(-0.5 * z * z)
        x = d + sd * z
        w, dr, lo = count_outcome(math.exp(params[0] + c * x), math.exp(params[0] - c * x), params[2])
        pw += weight * w
        pd += weight * dr
        pl += weight * lo
        mass += weight
    return pw / mass, pd / mass, pl / mass


@dataclass(frozen=True)
class Goals(Observation):
    r"""Each side's count, Poisson, with rates set by the skill difference :math:`d`, the scale
    :math:`\alpha` and the log-rate :math:`\eta_0` (``base``) of level sides:

    .. math::

        \mathtt{score\_a} &\sim \operatorname{Poisson}(\lambda_a), \qquad \log \lambda_a = \eta_0 + \frac{d}{2 \alpha} \\
        \mathtt{score\_b} &\sim \operatorname{Poisson}(\lambda_b), \qquad \log \lambda_b = \eta_0 - \frac{d}{2 \alpha}

    independently (Maher 1982, "Modelling association football scores", Statistica
    Neerlandica 36, with attack and defence folded into one skill per side); with a
    ``dispersion`` :math:`\kappa > 0` each count is negative binomial with the same mean and
    variance :math:`\lambda + \kappa \lambda^2` (the NB2 model; Hilbe 2011, "Negative binomial
    regression"; for football scores Reep, Pollard and Benjamin 1971): goals more spread out than
    Poisson, as between sides of very unequal strength, without pulling :math:`\eta_0` down.
    :math:`d` already holds the model's home advantage, so :math:`h` (``home``) is a log-rate ratio
    times :math:`2 \alpha`. A skill difference of :math:`\alpha` multiplies a's rate by
    :math:`e^{1/2}` and divides b's by it: the log-ratio of the two rates is :math:`d / \alpha`.

    Win/draw/loss: the sign of ``score_a - score_b``, a Skellam variable at dispersion 0 (Karlis and
    Ntzoufras 2003, "Analysis of sports data by using bivariate Poisson models", JRSS D 52); with
    skill uncertainty :math:`d \sim \mathcal{N}(m, v)` averaged by quadrature over :math:`d`
    (:func:`goals_forecast`). No exact tilted moments (:meth:`moments` raises
    ``NotImplementedError``).

    Parameters
    ----------
    base:
        :math:`\eta_0`, the log of each side's expected count when the sides are level
        (:math:`d = 0`): :math:`\log 1.35` for about 1.35 goals a side, as in association football.
    dispersion:
        :math:`\kappa \ge 0`: 0 (default) for Poisson counts; above, negative binomial with
        variance :math:`\lambda + \kappa \lambda^2` (:math:`\kappa = 1 / \mathtt{size}`).

    Kernel parameters (:meth:`vector`): ``[base, scale, dispersion]``.
    """

    base: float
    dispersion: float = 0.0

    name = "goals"
    needs_scores = True
    lik_kernel = staticmethod(goals_loglik)
    derivs_kernel = staticmethod(goals_derivs)
    forecast_kernel = staticmethod(goals_forecast)

    def __post_init__(self) -> None:
        ok = isinstance(self.base, (int, float, np.integer, np.floating)) and not isinstance(self.base, bool)
        if not ok or not math.isfinite(float(self.base)):
            raise ValueError(f"base must be a finite number (the log of a side's expected count), got {self.base!r}")
        object.__setattr__(self, "base", float(self.base))
        object.__setattr__(self, "dispersion", _positive_number("dispersion", self.dispersion, allow_zero=True))

    def vector(self, scale: float) -> np.ndarray:
        return np.array([self.base, _positive_number("scale", scale, allow_zero=False), self.dispersion])

    def symbolic_loglik(self, d, score, score_a, score_b, *, scale: float = 1.0, theta=None):
        r"""Each game's log-likelihood as a PyTensor graph of the skill differences ``d`` (what
        PyMC's model of the games sums): with :math:`u = d / (2 \alpha)`,
        :math:`\eta_a = \eta_0 + u`, :math:`\eta_b = \eta_0 - u`, the log pmf of both counts
        :math:`x, y` (``score_a``, ``score_b``): Poisson,

        .. math::

            x \eta_a - e^{\eta_a} - \log x! + y \eta_b - e^{\eta_b} - \log y!,

        or at dispersion :math:`\kappa = 1 / r > 0` the negative binomial's

        .. math::

            \log \Gamma(x + r) - \log \Gamma(r) - \log x! + x (\eta - \log r) - (x + r) \log(1 + \kappa e^\eta)

        per side (the formulas of :func:`goals_loglik`). ``score`` and ``theta`` are not read.
        PyTensor is imported here, when a graph is built."""
        configure_pytensor()  # before PyTensor's first import: its compile cache out of the home directory
        import pytensor.tensor as pt

        c = 0.5 / _positive_number("scale", scale, allow_zero=False)
        kappa = self.dispersion

        def side(x, eta):
            if kappa == 0.0:
                return x * eta - pt.exp(eta) - pt.gammaln(x + 1.0)
            r = 1.0 / kappa
            return (pt.gammaln(x + r) - math.lgamma(r) - pt.gammaln(x + 1.0) + x * (eta - math.log(r))
                    - (x + r) * pt.log1p(kappa * pt.exp(eta)))

        return side(score_a, self.base + c * d) + side(score_b, self.base - c * d)

    def _check_record(self, score, score_a, score_b) -> None:
        super()._check_record(score, score_a, score_b)
        if np.any(score_a < 0) or np.any(score_b < 0):
            raise ValueError("score_a and score_b are counts: they must be >= 0")

    def mean_margin(self, d, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        r""":math:`\mathrm{E}[\mathtt{score\_a} - \mathtt{score\_b}] = \mathrm{E}[\lambda_a - \lambda_b]`
        for :math:`x \sim \mathcal{N}(d, v)`: with :math:`c = 1 / (2 \alpha)` the rates are
        log-normal, :math:`\mathrm{E}[e^{\eta_0 + c x}] = e^{\eta_0 + c d + c^2 v / 2}` (the
        log-normal mean), so

        .. math::

            \mathrm{E}[\lambda_a - \lambda_b]
            &= e^{\eta_0} \left(e^{c d + c^2 v / 2} - e^{-c d + c^2 v / 2}\right) \\
            &= 2 e^{\eta_0 + c^2 v / 2} \sinh(c d),

        the last form taken (no cancellation of two large terms). Mean of a Poisson count is its
        rate (Maher 1982), so this is the mean of the Skellam difference averaged over ``x``."""
        d, var = self._moments_of_d(d, var)
        c = 0.5 / _positive_number("scale", scale, allow_zero=False)
        return 2.0 * np.exp(self.base + 0.5 * c * c * var) * np.sinh(c * d)
