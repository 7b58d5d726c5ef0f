r"""The probability of a match's observed ranking under TrueSkill's Thurstonian model, computed.

Side :math:`s` performs :math:`p_s \sim \mathcal{N}(\mu_s, \sigma_s^2)`, :math:`\sigma_s^2 = \beta^2 + v_s`,
independently; with the sides in the order of their places, :math:`o_1` first, the result is the
chain of TrueSkill's factor graph (Herbrich et al. 2006): a side placed ahead of the next beat it
by more than the draw margin, :math:`p_{o_k} - p_{o_{k+1}} > \varepsilon`, and tied sides are within
it, :math:`|p_{o_k} - p_{o_{k+1}}| \le \varepsilon`. Its probability is an :math:`n`-dimensional
Gaussian integral, written as one forward recursion over the places,

.. math::

    g_1 = f_1, \qquad g_k(y) = f_k(y) \int g_{k-1}(z)\, \mathbb{1}[\text{constraint}(z, y)]\, dz, \qquad
    P(\text{ranking}) = \int g_n(y)\, dy,

:math:`f_k` the density of :math:`p_{o_k}`: the integral is :math:`G_{k-1}(y + \varepsilon)` for a win
and :math:`G_{k-1}(y - \varepsilon) - G_{k-1}(y + \varepsilon)` for a tie, with :math:`G(y) =
\int_y^\infty g(z)\, dz`. On a uniform grid of step :math:`h` (at most :data:`STEP_SHARE` of the
smallest :math:`\sigma_s`, at most :data:`MAX_POINTS` points, spanning :data:`SPAN` sds beyond
every side's mean) each :math:`G` is a cumulative trapezoid sum with its end correction, read
between grid points by cubic Hermite interpolation (its slope is :math:`-g`), and each :math:`g_k` is rescaled to
a maximum of 1 (its log scale kept), so a contest of thousands of sides neither underflows nor
costs more than :math:`O(n M)`. Where a step's mass vanishes on the grid (a side many sds out of
its place), the match falls back to the product of the chain's adjacent factors
(:func:`statespace.model.ranking_pairwise.thurstone_loglik`'s value), which is that step's
limit. Unlike that product, the recursion is the probability of the result: summed over every
strict order of the sides it is 1, so it compares with Plackett-Luce's likelihood.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model import numeric as nx
from statespace.model.ranking import Z_MAX, ratio
from statespace.model.ranking_pairwise import D_SCALES, pair_scale

__all__ = ["thurstone_order_logprob", "chain_loglik", "STEP_SHARE", "SPAN", "MAX_POINTS"]

#: the grid's step as a share of the smallest performance sd. The corrected trapezoid and the
#: Hermite interpolation err by O(step^4) of the curvature of each g_k; deep in a large field g_k
#: is much narrower than a performance sd (the k-th performance held below k - 1 others), so the
#: step is finer than one side alone would need
STEP_SHARE = 1.0 / 128.0
#: sds beyond the extreme means that the grid spans (the normal's mass beyond 10 sd is 1e-23)
SPAN = 10.0
#: the most grid points of one match (a contest whose means spread over thousands of sds takes a
#: coarser step rather than unbounded memory)
MAX_POINTS = 1 << 15


@njit(cache=True)
def chain_loglik(mu, var, beta, eps, rank):
    """The sum over adjacent places of the log-probability of each adjacent result (the chain's
    factors taken as independent), for the sides in the order of ``rank`` (stable)."""
    order = np.argsort(rank, kind="mergesort")
    total = 0.0
    for p in range(mu.shape[0] - 1):
        i, j = order[p], order[p + 1]
        c = pair_scale(var, beta, i, j)
        d = ratio(mu[i] - mu[j], c, D_SCALES) * c
        s = 0.5 if rank[i] == rank[j] else 1.0
        total += nx.loglik_grad(nx.PROBIT, nx.DRAW_THRESHOLD, eps, s, d, c)[0]
    return total


@njit(cache=True)
def _at(cum, slope, lo, h, y):
    """``G(y)`` from its values ``cum`` and slopes ``slope`` (``-g``) on the grid ``lo + j h`` by cubic
    Hermite interpolation (the total beyond the left end, 0 beyond the right)."""
    x = (y - lo) / h
    m = cum.shape[0]
    if x <= 0.0:
        return cum[0]
    if x >= m - 1:
        return 0.0
    j = int(x)
    t = x - j
    t2 = t * t
    t3 = t2 * t
    return ((2.0 * t3 - 3.0 * t2 + 1.0) * cum[j] + (t3 - 2.0 * t2 + t) * h * slope[j]
            + (-2.0 * t3 + 3.0 * t2) * cum[j + 1] + (t3 - t2) * h * slope[j + 1])


@njit(cache=True)
def thurstone_order_logprob(mu, var, beta, eps, rank, step_share=STEP_SHARE):
    r"""``log P(ranking)`` of one match under the Thurstonian chain with draw margin ``eps`` (the
    module docstring): ``mu``, ``var`` the sides' performance means and skill variances, ``beta``
    the per-side noise, ``rank`` the places (0 first, ties sharing); ``step_share`` the grid's step
    in units of the smallest performance sd."""
    n = mu.shape[0]
    order = np.argsort(rank, kind="mergesort")
    sd_min = math.inf
    lo = math.inf
    hi = -math.inf
    for k in range(n):
        s = math.sqrt(beta * beta + var[k])
        sd_min = min(sd_min, s)
        lo = min(lo, mu[k] - SPAN * s)
        hi = max(hi, mu[k] + SPAN * s)
    if not (math.isfinite(lo) and math.isfinite(hi)) or sd_min <= 0.0:
        return chain_loglik(mu, var, beta, eps, rank)
    h = max(sd_min * step_share, (hi - lo) / (MAX_POINTS - 1))
    m = int((hi - lo) / h) + 2
    g = np.empty(m)
    cum = np.empty(m)
    slope = np.empty(m)
    log_scale = 0.0
    for p in range(n):
        k = order[p]
        s = math.sqrt(beta * beta + var[k])
        tie = p > 0 and rank[k] == rank[order[p - 1]]
        top = 0.0
        for j in range(m):
            y = lo + j * h
            z = ratio(y - mu[k], s, Z_MAX)
            dens = math.exp(-0.5 * z * z) / s
            if p > 0:
                if tie:
                    dens *= max(_at(cum, slope, lo, h, y - eps) - _at(cum, slope, lo, h, y + eps), 0.0)
                else:  # the cubic may dip below 0 in the far tail
                    dens *= max(_at(cum, slope, lo, h, y + eps), 0.0)
            g[j] = dens
            top = max(top, dens)
        if not (top > 0.0) or not math.isfinite(top):
            return chain_loglik(mu, var, beta, eps, rank)
        log_scale += math.log(top)
        for j in range(m):
            g[j] /= top
        # G(y_j) = the integral of g from y_j to the right end: the trapezoid rule with its end
        # correction h^2 / 12 (g'_j - g'_{j+1}), the slopes by central differences (O(h^4))
        for j in range(m):
            slope[j] = -g[j]
        acc = 0.0
        cum[m - 1] = 0.0
        for j in range(m - 2, -1, -1):
            d0 = (g[j + 1] - g[j - 1]) / (2.0 * h) if j > 0 else (g[1] - g[0]) / h
            d1 = (g[j + 2] - g[j]) / (2.0 * h) if j + 2 < m else (g[m - 1] - g[m - 2]) / h
            acc += 0.5 * h * (g[j] + g[j + 1]) + h * h / 12.0 * (d0 - d1)
            cum[j] = acc
    total = cum[0]
    if not (total > 0.0):
        return chain_loglik(mu, var, beta, eps, rank)
    # each density lacks its 1 / sqrt(2 pi)
    return log_scale + math.log(total) - n * 0.5 * math.log(2.0 * math.pi)
