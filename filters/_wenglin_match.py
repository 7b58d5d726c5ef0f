r"""Weng-Lin's update of one match of many sides, compiled: the sides' :math:`\Omega` and
:math:`\Delta` for the three algorithms, and the match kernel that shares them among members.

Weng and Lin, "A Bayesian approximation method for online ranking", JMLR 12 (2011) 267-300.
Side :math:`i` has strength mean :math:`\mu_i` and variance :math:`\sigma_i^2`; ranks are lower
for better places, equal ranks tie.

- Full pairing (Algorithms 1 and 3, Bradley-Terry and Thurstone-Mosteller): every other side
  :math:`q` at its own :math:`c_{iq}^2 = \sigma_i^2 + \sigma_q^2 + 2\beta^2`,
  :math:`t = (\mu_i - \mu_q) / c_{iq}`,

  .. math::

      \Omega_i = \sum_{q \ne i} \frac{\sigma_i^2}{c_{iq}}\, \omega(t, s_{iq}), \qquad
      \Delta_i = \sum_{q \ne i} \frac{\sigma_i}{c_{iq}} \frac{\sigma_i^2}{c_{iq}^2}\, \delta(t, s_{iq})

  (:func:`omega_delta`: Bradley-Terry :math:`s - p`, :math:`p(1-p)`; Thurstone-Mosteller the
  truncated-Gaussian :math:`v`, :math:`w` at margin :math:`\varepsilon / c_{iq}`). A pair is
  computed once and mirrored: the other side gets :math:`-\omega` and the same :math:`\delta`.
  :math:`O(n^2)` for :math:`n` sides, by definition.
- Plackett-Luce (Algorithm 4): one :math:`c^2 = \sum_i (\sigma_i^2 + \beta^2)`,
  :math:`z_i = \mu_i / c`, :math:`S_q = \sum_{r(s) \ge r(q)} e^{z_s}`, :math:`A_q` the number of
  sides tied at :math:`r(q)`, :math:`p_{iq} = e^{z_i} / S_q`,

  .. math::

      \Omega_i = \frac{\sigma_i^2}{c} \sum_{r(q) \le r(i)} \frac{[q = i] - p_{iq}}{A_q}, \qquad
      \Delta_i = \frac{\sigma_i}{c} \frac{\sigma_i^2}{c^2} \sum_{r(q) \le r(i)} \frac{p_{iq}(1 - p_{iq})}{A_q}.

  :math:`S_q` depends only on the place of :math:`q`, and the :math:`A_q` sides of a place add
  :math:`A_q / A_q`, so with places :math:`g \le g(i)` the sums are
  :math:`1 / A_{g(i)} - e^{z_i} \sum_{g \le g(i)} S_g^{-1}` and
  :math:`e^{z_i} \sum_g S_g^{-1} - e^{2 z_i} \sum_g S_g^{-2}`: suffix sums (the :math:`S_g`, in
  logs) and prefix sums over the places make the match :math:`O(n)` after ordering the sides
  (:math:`O(n)` when they come in rank order, as :class:`statespace.data.matches.Matches` stores
  them). The prefix sums are kept relative to the current place,
  :math:`\sum_{h \le g} S_h^{-k} = S_g^{-k} R^{(k)}_g` with
  :math:`R^{(k)}_g = \sum_{h \le g} (S_g / S_h)^k = 1 + R^{(k)}_{g-1} (S_g / S_{g-1})^k` (each
  term at most 1), so nothing overflows however far apart the strengths are.

A match (:func:`_match`, :mod:`filters.match_loop`): side :math:`s`'s strength is the weighted sum
of its members, :math:`\mu_s = \sum_k w_k \mu_k`, :math:`\sigma_s^2 = \sum_k w_k^2 \sigma_k^2`
(the moments the loop's forecast reports), after :math:`\tau^2` is added to each member's
variance with ``dynamics="game"``. The side's update is shared as the Gaussian conditioning of a
member on its side's strength (the covariance of :math:`s_k` with :math:`\sum_k w_k s_k` is
:math:`w_k \sigma_k^2`):

.. math::

    \mu_k \leftarrow \mu_k + \frac{w_k \sigma_k^2}{\sigma_s^2}\, \Omega_s, \qquad
    \sigma_k^2 \leftarrow \sigma_k^2 \max\left(1 - \frac{w_k^2 \sigma_k^2}{\sigma_s^2}\, \Delta_s,\ \kappa\right),

which with every weight 1 is the paper's (and openskill's) team update, and for a member of
weight :math:`w` is exactly the update of the scaled skill :math:`w s_k` as a full member. (openskill's
own ``weights`` are a different rule: they do not enter the team's strength, they are rescaled to
[1, 2] within each team, and they multiply a gaining team's share but divide a losing one's.)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model.gaussian import v_draw, v_win, w_draw, w_win
from statespace.model.numeric import DRAW_HALF, LOGISTIC, loglik_derivs

from . import kernels as K
from ._belief import _BETA, _EPS, _TAU, _TIME, PARAMS as _BELIEF_PARAMS
from .match_loop import match_kernel, side_moments

__all__ = ["PARAMS", "BT", "TM", "PL", "omega_delta", "sides_omega_delta"]

#: the kernels' parameters, in ``theta`` order: the Gaussian-belief ones, the variance-shrink
#: floor and the variant's code
PARAMS = _BELIEF_PARAMS + ("kappa", "model_code")
_KAPPA, _MODEL = len(_BELIEF_PARAMS), len(_BELIEF_PARAMS) + 1
_MU, _SIGMA = 0, 1
# model codes
BT, TM, PL = 0, 1, 2
#: ``z = mu / c`` is kept within this bound (a mean past it over a tiny ``c`` would be infinite)
_Z_MAX = 1e300


@njit(cache=True)
def omega_delta(t, e, s, model):
    """``(Omega, Delta)`` before scaling, for ``i`` at ``t = (mu_i - mu_q) / c`` with score ``s``
    (1, 0.5, 0): Bradley-Terry the logistic log-likelihood's gradient ``s - p`` and curvature
    ``p (1 - p)`` in ``t``; Thurstone-Mosteller the truncated-Gaussian ``v`` and ``w`` at margin ``e``."""
    if model == TM:
        if s == 1.0:
            return v_win(t, e), w_win(t, e)
        if s == 0.0:
            return -v_win(-t, e), w_win(-t, e)
        return v_draw(t, e), w_draw(t, e)
    grad, curv = loglik_derivs(LOGISTIC, DRAW_HALF, 0.0, s, t, 1.0)
    return grad, -curv


@njit(cache=True)
def _bradley_terry(t, s):
    """:func:`omega_delta` for Bradley-Terry, inline: ``p = 1 / (1 + e^(-t))``, ``q = 1 - p`` from
    the one exponential of ``-|t|`` (neither overflows), ``(s q - (1 - s) p, p q)``."""
    e = math.exp(-abs(t))
    if t >= 0.0:
        p = 1.0 / (1.0 + e)
        q = e / (1.0 + e)
    else:
        p = e / (1.0 + e)
        q = 1.0 / (1.0 + e)
    return s * q - (1.0 - s) * p, p * q


@njit(cache=True)
def _full_pair(mu, s2, rank, beta, eps, model, omega, delta):
    """Algorithms 1 and 3: each pair of sides once, mirrored (``beta`` at least 1e-150, so ``c > 0``)."""
    n = mu.shape[0]
    b2 = 2.0 * beta * beta
    for i in range(n):
        omega[i] = 0.0
        delta[i] = 0.0
    sd = np.sqrt(s2)
    for i in range(n):
        si2 = s2[i]
        for q in range(i + 1, n):
            sq2 = s2[q]
            c2 = si2 + sq2 + b2
            c = math.sqrt(c2)
            t = (mu[i] - mu[q]) / c
            s = 1.0 if rank[i] < rank[q] else (0.5 if rank[i] == rank[q] else 0.0)
            if model == BT:
                g, w = _bradley_terry(t, s)
            else:
                g, w = omega_delta(t, eps / c, s, model)
            omega[i] += si2 / c * g
            omega[q] -= sq2 / c * g
            # gamma sigma^2 / c^2 as two ratios of at most 1: the cube of c would overflow or underflow
            delta[i] += sd[i] / c * (si2 / c2) * w
            delta[q] += sd[q] / c * (sq2 / c2) * w


@njit(cache=True)
def _logaddexp(a, b):
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@njit(cache=True)
def _plackett_luce(mu, s2, rank, beta, omega, delta):
    """Algorithm 4 in :math:`O(n)` over the places (see the module docstring); ``c^2`` kept in
    ``[VAR_MIN, VAR_MAX]`` and ``z`` within ``+-1e300``."""
    n = mu.shape[0]
    total = 0.0
    for i in range(n):
        total += s2[i] + beta * beta
    c = math.sqrt(min(max(total, K.VAR_MIN), K.VAR_MAX))
    in_order = True
    for i in range(1, n):
        if rank[i] < rank[i - 1]:
            in_order = False
            break
    order = np.arange(n) if in_order else np.argsort(rank, kind="mergesort")
    z = np.empty(n)
    for i in range(n):
        z[i] = min(max(mu[i] / c, -_Z_MAX), _Z_MAX)
    # places in rank order: place g holds order[start[g]:start[g + 1]]
    start = np.empty(n + 1, np.int64)
    n_places = 0
    for j in range(n):
        if j == 0 or rank[order[j]] != rank[order[j - 1]]:
            start[n_places] = j
            n_places += 1
    start[n_places] = n
    # log S_g: the log-sum-exp of z over the places g and below, from the last place up
    log_s = np.empty(n_places)
    acc = -math.inf
    for g in range(n_places - 1, -1, -1):
        top = -math.inf
        for j in range(start[g], start[g + 1]):
            top = max(top, z[order[j]])
        part = 0.0
        for j in range(start[g], start[g + 1]):
            part += math.exp(z[order[j]] - top)
        here = top + math.log(part)
        acc = here if g == n_places - 1 else _logaddexp(acc, here)
        log_s[g] = acc
    r1 = 0.0
    r2 = 0.0
    for g in range(n_places):
        if g == 0:
            r1 = 1.0
            r2 = 1.0
        else:
            ratio = math.exp(log_s[g] - log_s[g - 1])  # S_g / S_(g-1) <= 1
            r1 = 1.0 + r1 * ratio
            r2 = 1.0 + r2 * ratio * ratio
        a = float(start[g + 1] - start[g])
        for j in range(start[g], start[g + 1]):
            i = order[j]
            p = math.exp(z[i] - log_s[g])  # e^(z_i) / S_g <= 1
            sum_p = p * r1
            omega[i] = s2[i] / c * (1.0 / a - sum_p)
            delta[i] = math.sqrt(s2[i]) / c * s2[i] / (c * c) * (sum_p - p * p * r2)


@njit(cache=True)
def sides_omega_delta(mu, s2, rank, beta, eps, model, omega, delta):
    r"""Each side's :math:`\Omega_i` and :math:`\Delta_i` (``omega``, ``delta``, written) from the
    sides' strength means ``mu``, variances ``s2`` and places ``rank`` (lower is better, equal
    ties) with the model's algorithm (see the module docstring)."""
    if model == PL:
        _plackett_luce(mu, s2, rank, beta, omega, delta)
    else:
        _full_pair(mu, s2, rank, beta, eps, model, omega, delta)


@match_kernel
def _match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    r"""One match of Weng-Lin (see the module docstring): the sides' forecast moments, then
    :math:`\tau^2` added to each member's variance with ``dynamics="game"``, the sides'
    :math:`\Omega`, :math:`\Delta` from their weighted strengths, each member's share. Means are
    kept within ``+-MEAN_MAX`` and variances in ``[VAR_MIN, VAR_MAX]``."""
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, _SIGMA)
    n = s1 - s0
    t2 = theta[_TAU] * theta[_TAU] if theta[_TIME] == 0.0 else 0.0
    mu_t = np.empty(n)
    s2_t = np.empty(n)
    places = np.empty(n)
    for j in range(n):
        s = s0 + j
        m = 0.0
        v = 0.0
        for k in range(side_ptr[s], side_ptr[s + 1]):
            i = member[k]
            w = weight[k]
            sd = x[i, _SIGMA]
            m += w * x[i, _MU]
            v += w * w * min(sd * sd + t2, K.VAR_MAX)
        mu_t[j] = min(max(m, -K.MEAN_MAX), K.MEAN_MAX)
        s2_t[j] = min(v, K.VAR_MAX)
        places[j] = rank[s]
    omega = np.empty(n)
    delta = np.empty(n)
    sides_omega_delta(mu_t, s2_t, places, theta[_BETA], theta[_EPS], int(theta[_MODEL]), omega, delta)
    kappa = theta[_KAPPA]
    for j in range(n):
        s = s0 + j
        for k in range(side_ptr[s], side_ptr[s + 1]):
            i = member[k]
            w = weight[k]
            sd = x[i, _SIGMA]
            vk = min(max(sd * sd + t2, K.VAR_MIN), K.VAR_MAX)
            if s2_t[j] > 0.0:
                share = w * vk / s2_t[j]  # cov(s_k, side) / var(side)
                shrink = min(w * share, 1.0)
            else:  # every member at weight 0: the side carries no information on them
                share = 0.0
                shrink = 0.0
            x[i, _MU] = min(max(x[i, _MU] + share * omega[j], -K.MEAN_MAX), K.MEAN_MAX)
            x[i, _SIGMA] = math.sqrt(min(max(vk * max(1.0 - shrink * delta[j], kappa), K.VAR_MIN), K.VAR_MAX))
