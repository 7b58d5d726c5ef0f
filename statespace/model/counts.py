r"""The numerics of two counts: each side's log pmf (Poisson or negative binomial) and the
win/draw/loss probabilities of two independent counts, compiled, with every loop bounded.

:class:`statespace.Goals` builds its kernels on these (:mod:`statespace.model.goals`). A count
:math:`X` of mean :math:`\lambda` is Poisson at dispersion :math:`\kappa = 0`, else negative
binomial with variance :math:`\lambda + \kappa \lambda^2` (the NB2 model; Hilbe 2011, "Negative
binomial regression"); its pmf runs by the ratio

.. math::

    \frac{p(k + 1)}{p(k)} = \frac{\lambda\,(1 + \kappa k)}{(k + 1)(1 + \kappa \lambda)}, \qquad
    p(0) = e^{-\lambda} \ \text{(Poisson)}, \quad (1 + \kappa \lambda)^{-1/\kappa} \ \text{(negative binomial)}.

**Bounded loops.** :func:`count_outcome` sums over the support of the count of the *smaller*
mean only, and stops once that count's remaining mass is below :data:`TAIL`. Under
:class:`~statespace.Goals` the two means multiply to :math:`e^{2\eta_0}`, so the smaller is at most
:math:`e^{\eta_0} \le 10^3` (:data:`statespace.model.goals.BASE_MAX`) and, with
:math:`\kappa \le 2` (:data:`statespace.model.goals.DISPERSION_MAX`), the sum takes at most about
:math:`10^3 + 40 (1 + \kappa \cdot 10^3) \approx 8 \cdot 10^4` terms. Whatever the arguments, no sum
runs past :data:`TERMS_MAX` terms. :func:`side_loglik` sums ``x`` terms for a whole count up to
:data:`COUNT_MAX`.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["count_outcome", "skellam_outcome", "side_loglik", "draw_moments", "COUNT_MAX", "TAIL", "MAX_RATE", "TERMS_MAX"]

#: A sum stops once the mass of the terms not yet added is below this (its tail bound): far below
#: the digits a probability keeps.
TAIL = 1e-17

#: Smaller mean above which both counts are taken as normal, ``X - Y ~ N(rate_a - rate_b, var_a +
#: var_b)`` with a continuity correction of 1/2 (its error shrinks like one over the square root of
#: the rate): summing would take millions of terms. Never reached under
#: :class:`~statespace.Goals`, whose smaller rate is at most ``1e3``.
MAX_RATE = 1e6

#: Largest rate whose ``exp(-rate)`` is a normal double (not below 2.2e-308): under it the pmf runs
#: by products, above it by sums of logarithms.
PRODUCT_RATE = 700.0

#: Standardised gap ``(rate_a - rate_b) / sd`` beyond which the weaker side's chance of a draw or
#: better is below e^-600 (Bernstein's inequality), so the forecast is certain.
CERTAIN = 40.0

#: The most terms any sum takes, whatever its arguments (a guard: the accepted settings of
#: :class:`~statespace.Goals` need at most about ``8e4``; a Poisson count of mean
#: :data:`MAX_RATE` about ``1.01e6``).
TERMS_MAX = 2_000_000

#: The largest whole count whose negative-binomial coefficient is summed term by term in
#: :func:`side_loglik` (exact for any dispersion); the counts :class:`~statespace.Goals` accepts
#: (:data:`statespace.model.goals.GOALS_MAX`) are all below it.
COUNT_MAX = 10_000.0


@njit(cache=True)
def _log_p0(rate, kappa):
    """``log P(X = 0)``: ``-rate`` (Poisson), ``-log(1 + kappa rate) / kappa`` (negative binomial)."""
    return -rate if kappa == 0.0 else -math.log1p(kappa * rate) / kappa


@njit(cache=True)
def _ratio(rate, kappa, k):
    """``P(X = k + 1) / P(X = k)``: ``rate (1 + kappa k) / ((k + 1) (1 + kappa rate))``."""
    return rate * (1.0 + kappa * k) / ((k + 1.0) * (1.0 + kappa * rate))


@njit(cache=True)
def _ordered(hi, lo, kappa):
    """``(P(X > Y), P(X = Y), P(X < Y))`` for ``X`` of mean ``hi`` >= ``Y``'s mean ``lo``.

    Summed over ``Y``'s support: ``P(X < Y) = sum_y p_Y(y) P(X <= y - 1)``, ``P(X = Y) = sum_y
    p_Y(y) p_X(y)``, ``P(X > Y) = sum_y p_Y(y) P(X > y)``, with ``P(X <= y)`` accumulated as ``y``
    runs. The first two are sums of positive terms, so a small probability keeps its relative
    precision; the third is the large one (``X`` is stochastically the larger count, so
    ``P(X > Y) >= P(X < Y)``). Past ``Y``'s mean the mass after ``y`` is below ``p_Y(y) q / (1 - q)``
    with ``q`` the largest ratio still to come (the ratio at ``y``, or its limit
    ``kappa lo / (1 + kappa lo)``), and the sum stops once that is below :data:`TAIL`.
    """
    if hi == math.inf:
        if lo < math.inf:
            return 1.0, 0.0, 0.0
        return math.nan, math.nan, math.nan
    if hi == 0.0:
        return 0.0, 1.0, 0.0
    sd = math.sqrt(hi * (1.0 + kappa * hi) + lo * (1.0 + kappa * lo))
    gap = (hi - lo) / sd
    if gap > CERTAIN:
        return 1.0, 0.0, 0.0
    if lo > MAX_RATE:
        pw = 0.5 * math.erfc(-(gap - 0.5 / sd) / math.sqrt(2.0))
        pl = 0.5 * math.erfc(-(-gap - 0.5 / sd) / math.sqrt(2.0))
        return pw, max(1.0 - pw - pl, 0.0), pl
    lp_hi = _log_p0(hi, kappa)
    lp_lo = _log_p0(lo, kappa)
    # above e^-700 a pmf can run by products (no underflow of p(0))
    prod_hi = lp_hi > -PRODUCT_RATE
    prod_lo = lp_lo > -PRODUCT_RATE
    p_hi = math.exp(lp_hi)
    p_lo = math.exp(lp_lo)
    limit = kappa * lo / (1.0 + kappa * lo)
    cdf_hi = 0.0  # P(X <= y - 1)
    greater = 0.0
    equal = 0.0
    less = 0.0
    for y in range(TERMS_MAX):
        less += p_lo * cdf_hi
        equal += p_lo * p_hi
        cdf_hi += p_hi
        greater += p_lo * max(1.0 - cdf_hi, 0.0)
        r_lo = _ratio(lo, kappa, y)
        r_hi = _ratio(hi, kappa, y)
        if y + 2.0 > lo:
            q = max(r_lo, limit)
            if q < 1.0 and p_lo * q / (1.0 - q) < TAIL:
                break
        if prod_lo:
            p_lo *= r_lo
        else:
            lp_lo += math.log(r_lo)
            p_lo = math.exp(lp_lo)
        if prod_hi:
            p_hi *= r_hi
        else:
            lp_hi += math.log(r_hi)
            p_hi = math.exp(lp_hi)
    total = greater + equal + less
    return greater / total, equal / total, less / total


@njit(cache=True)
def count_outcome(rate_a, rate_b, kappa):
    """``(P(X > Y), P(X = Y), P(X < Y))`` for independent counts ``X``, ``Y`` of means ``rate_a``,
    ``rate_b``: Poisson at ``kappa = 0`` (the Skellam distribution of ``X - Y`` summed over its
    sign; Karlis and Ntzoufras 2003), else negative binomial with variance ``rate + kappa rate^2``.
    An infinite mean beats every finite one; beyond :data:`CERTAIN` standard deviations of the
    difference the result is certain; NaN for a negative or NaN argument.

    Each probability is right to about :data:`TAIL` absolutely (the sum over the smaller count's
    support, :func:`_ordered`, in at most :data:`TERMS_MAX` terms).
    """
    if not (rate_a >= 0.0 and rate_b >= 0.0 and kappa >= 0.0):
        return math.nan, math.nan, math.nan
    if rate_a >= rate_b:
        return _ordered(rate_a, rate_b, kappa)
    win, draw, loss = _ordered(rate_b, rate_a, kappa)
    return loss, draw, win


@njit(cache=True)
def skellam_outcome(rate_a, rate_b):
    """:func:`count_outcome` of two Poisson counts (``kappa = 0``)."""
    return count_outcome(rate_a, rate_b, 0.0)


@njit(cache=True)
def side_loglik(x, eta, kappa):
    """A count ``x`` of mean ``lambda = e^eta``: ``(log p(x), dl/deta, d2l/deta2)`` with

    ``l = x eta - lambda - log x!`` (Poisson, ``kappa = 0``), else the negative binomial's
    ``l = log Gamma(x + r) - log Gamma(r) - log x! + x (eta - log r) - (x + r) log(1 + kappa lambda)``,
    ``r = 1 / kappa``, written as ``sum_{j < x} log(1 + kappa j) + x eta - (x + 1 / kappa)
    log(1 + kappa lambda) - log x!`` for a whole ``x`` up to :data:`COUNT_MAX` (no cancellation of
    large log-gammas, however small ``kappa``; at most ``1e4`` terms);
    ``dl/deta = (x - lambda) / (1 + kappa lambda)``,
    ``d2l/deta2 = -lambda (1 + kappa x) / (1 + kappa lambda)^2``
    (Hilbe 2011, "Negative binomial regression", the NB2 model)."""
    lam = math.exp(eta)
    if kappa == 0.0:
        return x * eta - lam - math.lgamma(x + 1.0), x - lam, -lam
    u = 1.0 + kappa * lam
    if x == math.floor(x) and 0.0 <= x <= COUNT_MAX:
        acc = 0.0
        for j in range(int(x)):
            acc += math.log1p(kappa * j)
    else:
        r = 1.0 / kappa
        acc = math.lgamma(x + r) - math.lgamma(r) - x * math.log(r)
    l = acc + x * eta - (x + 1.0 / kappa) * math.log1p(kappa * lam) - math.lgamma(x + 1.0)
    return l, (x - lam) / u, -lam * (1.0 + kappa * x) / (u * u)


@njit(cache=True)
def draw_moments(rate_a, rate_b, kappa):
    """``P(X = Y)`` for independent counts of means ``rate_a = e^(eta + u)``, ``rate_b = e^(eta - u)``
    (Poisson at ``kappa = 0``, else negative binomial) and its first two derivatives in ``u``:
    with ``t_k = p_a(k) p_b(k)`` and each side's score and curvature in its log-mean,
    ``s(k) = (k - rate) / (1 + kappa rate)``, ``c(k) = -rate (1 + kappa k) / (1 + kappa rate)^2``
    (:func:`side_loglik`), ``dP/du = sum_k t_k (s_a - s_b)`` and
    ``d2P/du2 = sum_k t_k ((s_a - s_b)^2 + c_a + c_b)`` (``rate_b`` falls as ``u`` grows). Each term
    from the logs of the two pmfs (no underflow of ``p(0)``); ``t_k`` is log-concave in ``k``, so past
    its peak the sum stops once the terms left, at most ``t_k q / (1 - q)`` with ``q`` the falling
    ratio ``t_(k+1) / t_k``, are below :data:`TAIL` of the sum, or once a term past the peak is 0 (the
    rest underflow too: two means so far apart that ``P(X = Y)`` is below the smallest double give
    0 for all three, in as many terms as it takes to pass the peak, not :data:`TERMS_MAX`)."""
    lpa = _log_p0(rate_a, kappa)
    lpb = _log_p0(rate_b, kappa)
    # above e^-700 each pmf runs by products (no underflow of p(0)); else by sums of logarithms
    prod = lpa > -PRODUCT_RATE and lpb > -PRODUCT_RATE
    pa = math.exp(lpa)
    pb = math.exp(lpb)
    ua = 1.0 + kappa * rate_a
    ub = 1.0 + kappa * rate_b
    d0 = 0.0
    d1 = 0.0
    d2 = 0.0
    for k in range(TERMS_MAX):
        t = pa * pb if prod else math.exp(lpa + lpb)
        ra = _ratio(rate_a, kappa, k)
        rb = _ratio(rate_b, kappa, k)
        q = ra * rb
        if t == 0.0:  # an underflowed term adds nothing (and its weight may overflow: 0 * inf)
            if q < 1.0:
                break
        else:
            sa = (k - rate_a) / ua
            sb = (k - rate_b) / ub
            ca = -rate_a * (1.0 + kappa * k) / (ua * ua)
            cb = -rate_b * (1.0 + kappa * k) / (ub * ub)
            diff = sa - sb
            d0 += t
            d1 += t * diff
            d2 += t * (diff * diff + ca + cb)
            if q < 1.0 and t * q / (1.0 - q) * (1.0 + diff * diff + abs(ca) + abs(cb)) < TAIL * d0:
                break
        if ra == 0.0 or rb == 0.0:
            break
        if prod:
            pa *= ra
            pb *= rb
        else:
            lpa += math.log(ra)
            lpb += math.log(rb)
    return d0, d1, d2
