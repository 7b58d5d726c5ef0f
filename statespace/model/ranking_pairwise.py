r"""A ranking of the sides of one match observed pair by pair: Bradley-Terry pairs and TrueSkill's
Thurstonian chain.

The inputs and outputs are those of :mod:`statespace.model.ranking` (``mu``, ``var``, ``beta``,
``rank``; ``(l, grad, hess)`` and the forecasts). Both models see a pair of sides :math:`i, j`
through :math:`d_{ij} = \mu_i - \mu_j` at the pair's scale

.. math::

    c_{ij} = \sqrt{2 \beta^2 + v_i + v_j},

the sd of the difference of two independent performances :math:`p_i - p_j` with the uncertainty
of the means integrated (Weng and Lin 2011, JMLR 12, Algorithms 1 and 2: :math:`c_{iq}`). Each
pair's terms are the two-sided numerics of :mod:`statespace.model.numeric`
(:func:`~statespace.model.numeric.loglik_grad`, :func:`~statespace.model.numeric.loglik_derivs`),
so a match of two sides is exactly today's two-sided game at scale :math:`c_{12}`, with their
guards in the tails.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model import numeric as nx
from statespace.model.ranking import Z_MAX, expected_place, rank_order, ratio

__all__ = ["pair_scale", "bt_loglik", "bt_forecast", "thurstone_loglik", "thurstone_forecast"]

#: a pair's difference beyond this many of its scales counts as this: the probit's log-likelihood, about
#: -z^2 / 2, overflows past 1e154 (and its draw term is then -inf - -inf), while every probability and
#: derivative has reached its limit long before; no difference of ratings in range comes near
D_SCALES = 1e150


@njit(cache=True)
def pair_scale(var, beta, i, j):
    r""":math:`c_{ij} = \sqrt{2 \beta^2 + v_i + v_j}`."""
    return math.sqrt(2.0 * beta * beta + var[i] + var[j])


@njit(cache=True)
def _add_pair(grad, hess, i, j, g, h):
    """Add one pair's derivatives in ``d = mu_i - mu_j`` (``g``, ``h``) to the gradient and Hessian
    in ``mu``: ``d`` has gradient ``e_i - e_j``, so the pair adds ``h`` on the diagonal and ``-h``
    off it."""
    grad[i] += g
    grad[j] -= g
    hess[i, i] += h
    hess[j, j] += h
    hess[i, j] -= h
    hess[j, i] -= h


@njit(cache=True)
def bt_loglik(mu, var, beta, rank):
    r"""Log-likelihood of the ranking as independent Bradley-Terry games of every pair, its gradient
    ``(n,)`` and Hessian ``(n, n)`` in ``mu``: ``(l, grad, hess)``.

    .. math::

        \ell = \sum_{i < j} s_{ij} \log F(d_{ij} / c_{ij}) + (1 - s_{ij}) \log F(-d_{ij} / c_{ij}),

    F the logistic cdf, :math:`s_{ij}` = 1 when i placed ahead of j, 0 behind, 1/2 for a tie (a
    draw scored as half a win). This is the full pairing of Weng and Lin's Bradley-Terry model
    (JMLR 12, 2011, Algorithm 1, "BT-full") and of Elo-MMR's view of a contest as the games of all
    its pairs (Ebtekar and Liu, WWW 2021); it is a composite likelihood: the pairs of one ranking
    are not independent, so it counts a ranking of :math:`n` sides as :math:`n (n - 1) / 2`
    games. A difference beyond :data:`D_SCALES` of its scale counts as that.
    """
    n = mu.shape[0]
    loglik = 0.0
    grad = np.zeros(n)
    hess = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            c = pair_scale(var, beta, i, j)
            d = ratio(mu[i] - mu[j], c, D_SCALES) * c
            s = 1.0 if rank[i] < rank[j] else (0.0 if rank[i] > rank[j] else 0.5)
            loglik += nx.loglik_grad(nx.LOGISTIC, nx.DRAW_HALF, 0.0, s, d, c)[0]
            g, h = nx.loglik_derivs(nx.LOGISTIC, nx.DRAW_HALF, 0.0, s, d, c)
            _add_pair(grad, hess, i, j, g, h)
    return loglik, grad, hess


@njit(cache=True)
def bt_forecast(mu, var, beta):
    r"""Forecasts of the pairwise Bradley-Terry model: ``(P, win, place)``.

    - ``P[i, j]`` :math:`= F(d_{ij} / c_{ij})`, the pair's game (so ``P[i, j] + P[j, i] = 1``);
    - ``win[i]``: an approximation, since independent pairs define no distribution over whole
      rankings: the probability that i wins all its games given that some side wins all of
      theirs, :math:`u_i / \sum_k u_k` with :math:`u_i = \prod_{j \ne i} F(d_{ij} / c_{ij})`. At
      most one side can win all its games, so the :math:`u_i` are probabilities of disjoint
      events and this is their exact conditional law; for two sides it is ``P[0, 1]``. It is
      computed from :math:`\log u_i` (:func:`statespace.model.numeric.log_cdf`), so it stays
      finite when every :math:`u_i` underflows;
    - ``place`` = :func:`statespace.model.ranking.expected_place` of ``P`` (exact for the
      pairwise model: the expected number of games lost, plus 1).
    """
    n = mu.shape[0]
    P = np.zeros((n, n))
    logu = np.zeros(n)
    for i in range(n):
        for j in range(i + 1, n):
            z = ratio(mu[i] - mu[j], pair_scale(var, beta, i, j), Z_MAX)
            p, q = nx.cdf_pair(nx.LOGISTIC, z)
            P[i, j] = p
            P[j, i] = q
            logu[i] += nx.log_cdf(nx.LOGISTIC, z)
            logu[j] += nx.log_cdf(nx.LOGISTIC, -z)
    m = -math.inf
    for i in range(n):
        m = max(m, logu[i])
    win = np.empty(n)
    total = 0.0
    for i in range(n):
        win[i] = math.exp(logu[i] - m)
        total += win[i]
    for i in range(n):
        win[i] /= total
    return P, win, expected_place(P)


@njit(cache=True)
def thurstone_loglik(mu, var, beta, eps, rank):
    r"""Log-likelihood of the order of the sides under TrueSkill's chain of adjacent probit factors,
    its gradient ``(n,)`` and Hessian ``(n, n)`` in ``mu``: ``(l, grad, hess)``.

    Sort the sides by place (ties in their input order, :func:`statespace.model.ranking.rank_order`,
    as TrueSkill sorts its rating groups); for each adjacent pair :math:`(i, j)` of that order,
    with :math:`d = \mu_i - \mu_j`,

    .. math::

        \ell = \sum_{\text{adjacent}} \begin{cases}
            \log \Phi\bigl((d - \varepsilon) / c_{ij}\bigr) & i \text{ ahead of } j \\
            \log\bigl(\Phi((\varepsilon - d) / c_{ij}) - \Phi((-\varepsilon - d) / c_{ij})\bigr) & \text{tie}
        \end{cases}

    (Herbrich, Minka and Graepel, *TrueSkill*, NIPS 2006: the factor graph's
    :math:`\mathbb{I}(d > \varepsilon)` and :math:`\mathbb{I}(|d| \le \varepsilon)` factors between
    neighbours in the ranking). The product of the factors' marginal probabilities is what is exact
    and cheap here: it is not the probability of the whole order (the adjacent differences share
    a side, so they are correlated, which TrueSkill's message passing accounts for), and for a tie
    of three or more sides it depends on the order within the tie, as TrueSkill's graph does.
    ``eps`` is the draw margin in skill units; a tie at ``eps = 0`` has no likelihood
    (``-inf``; :func:`statespace.model.ranking.check_match` refuses it). A difference beyond
    :data:`D_SCALES` of its scale counts as that (so that every number stays finite).
    """
    n = mu.shape[0]
    order = rank_order(rank)
    loglik = 0.0
    grad = np.zeros(n)
    hess = np.zeros((n, n))
    for p in range(n - 1):
        i = order[p]
        j = order[p + 1]
        c = pair_scale(var, beta, i, j)
        d = ratio(mu[i] - mu[j], c, D_SCALES) * c
        s = 0.5 if rank[i] == rank[j] else 1.0
        loglik += nx.loglik_grad(nx.PROBIT, nx.DRAW_THRESHOLD, eps, s, d, c)[0]
        g, h = nx.loglik_derivs(nx.PROBIT, nx.DRAW_THRESHOLD, eps, s, d, c)
        _add_pair(grad, hess, i, j, g, h)
    return loglik, grad, hess


@njit(cache=True)
def thurstone_forecast(mu, var, beta, eps):
    r"""Forecasts of the Thurstonian model: ``(P, place)``.

    ``P[i, j]`` = P(i strictly ahead of j) :math:`= \Phi\bigl((d_{ij} - \varepsilon) / c_{ij}\bigr)`,
    exact for independent Gaussian performances (:math:`p_i - p_j \sim \mathcal{N}(d_{ij},
    c_{ij}^2)`, ahead when beyond the margin); P(tie) is ``1 - P[i, j] - P[j, i]``. ``place`` =
    :func:`statespace.model.ranking.expected_place` of ``P``: 1 + the expected number of sides
    strictly ahead (exact).
    """
    n = mu.shape[0]
    P = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                c = pair_scale(var, beta, i, j)
                z = ratio(mu[i] - mu[j] - eps, c, Z_MAX)
                P[i, j] = nx.cdf(nx.PROBIT, z)
    return P, expected_place(P)
