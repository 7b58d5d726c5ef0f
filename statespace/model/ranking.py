r"""A ranking of the sides of one match as an observation: Plackett-Luce, with the shared parts.

One match has :math:`n \ge 2` sides. Side :math:`i` performs :math:`p_i \sim \mathcal{N}(\mu_i,
\beta^2 + v_i)`: ``mu`` its performance mean (the weighted sum of its members' skills), ``var``
:math:`v_i` the uncertainty of that mean (0 for point ratings), ``beta`` :math:`\beta` the scale of
the per-side performance noise. ``rank`` is the observed place of each side (int64, 0 first, ties
share a place; only the order of the places is read). Three models of the ranking, each with the
log-likelihood of the observed ranking, its gradient in ``mu`` and its Hessian (what the EKF
linearises with and the Laplace smoother's Newton step takes), and the forecasts:

- Plackett-Luce (this module: :func:`pl_loglik`, :func:`pl_forecast`), in Weng and Lin's form
  (openskill's ``PlackettLuce``) with its ties;
- the pairwise decomposition, every pair an independent Bradley-Terry game
  (:func:`statespace.model.ranking_pairwise.bt_loglik`, :func:`~statespace.model.ranking_pairwise.bt_forecast`);
- the Thurstonian chain of TrueSkill with draw margin :math:`\varepsilon`
  (:func:`statespace.model.ranking_pairwise.thurstone_loglik`,
  :func:`~statespace.model.ranking_pairwise.thurstone_forecast`).

The forecasts are the matrix ``P[i, j]`` = P(side i ahead of side j), the expected place
(:func:`expected_place`: 1 + the expected number of sides strictly ahead, so 1 = first, the
"competition ranking" a tie shares) and, for Plackett-Luce and the pairwise model, P(side i wins).
Every Hessian here has rows that sum to 0 (the likelihood depends on ``mu`` only through
differences), so its diagonal is the negative sum of its off-diagonal terms, each of one sign,
which keeps it free of cancellation. :func:`check_match` is the one check of the inputs; the kernels
assume it has passed.

The kernels are numba-compiled (``cache=True``) and plain math: the same numbers with
``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model import numeric as nx
from statespace.model import ranges as R

__all__ = ["check_match", "pl_scale", "pl_loglik", "pl_forecast", "expected_place", "rank_order", "place_groups", "ratio"]

#: a standardised performance beyond this counts as this (as statespace.model.numeric's limit):
#: mu / c over a tiny c overflows to inf, and inf - inf is NaN
Z_MAX = 1e300


@njit(cache=True)
def ratio(a, c, limit):
    """``a / c`` for ``c > 0``, kept within ``+-limit`` without overflowing on the way (a NumPy
    float divided in Python, ``NUMBA_DISABLE_JIT=1``, warns where the compiled code gives inf)."""
    if abs(a) >= limit * c:
        return limit if a > 0.0 else -limit
    return a / c


def check_match(owner: str, mu, var, beta, rank, eps=None):
    """``(mu, var, beta, rank)`` (and ``eps`` when given) as the kernels take them: ``mu`` and ``var``
    C-contiguous float64 ``(n,)``, ``rank`` int64 ``(n,)``, ``n >= 2``; ``ValueError`` naming
    ``owner``, the input, the side and the value otherwise: ``mu`` finite, ``var`` finite and
    ``>= 0``, ``rank`` whole numbers in ``0 .. n - 1``, ``beta`` a scale
    (:func:`statespace.model.ranges.scale`), ``eps`` (the Thurstonian draw margin) a length of at
    most ``1e4`` scales (:func:`statespace.model.ranges.sd`), and a tie needs ``eps > 0`` (a tie
    has no likelihood without a draw margin)."""
    mu_in, var_in, rank_in = (np.asarray(a) for a in (mu, var, rank))
    if mu_in.ndim != 1 or mu_in.shape != var_in.shape or mu_in.shape != rank_in.shape:
        raise ValueError(f"{owner}: mu, var and rank must be 1-d arrays of one value a side, got shapes "
                         f"{mu_in.shape}, {var_in.shape} and {rank_in.shape}")
    n = mu_in.shape[0]
    if n < 2:
        raise ValueError(f"{owner}: a match needs at least 2 sides, got {n}")
    beta = R.scale(owner, "beta", beta)
    for name, values, lo in (("mu", mu_in, -math.inf), ("var", var_in, 0.0)):
        if values.dtype.kind not in "iuf":
            raise ValueError(f"{owner}: {name} must be numbers, got dtype {values.dtype}")
        x = values.astype(float)
        bad = ~np.isfinite(x) | (x < lo)
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            need = "a finite number" + (" >= 0" if lo == 0.0 else "")
            raise ValueError(f"{owner}: {name} of side {at} must be {need}, got {values[at]!r}")
    if rank_in.dtype.kind not in "iu":
        if rank_in.dtype.kind != "f" or not np.all(np.isfinite(rank_in)) or np.any(rank_in != np.round(rank_in)):
            raise ValueError(f"{owner}: rank must be whole numbers (0 first), got {rank_in.tolist()}")
    r = rank_in.astype(np.int64)
    bad = (r < 0) | (r >= n)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{owner}: rank of side {at} must be in [0, {n - 1}] (0 first), got {rank_in[at]!r}")
    if eps is not None:
        eps = R.sd(owner, "eps", eps, beta, zero=True)
        if eps / beta == 0.0 and np.unique(r).size < n:
            raise ValueError(f"{owner}: a tie in rank {r.tolist()} has no likelihood at a draw margin eps of "
                             f"{eps:g}: give eps > 0")
    out = (np.ascontiguousarray(mu_in, dtype=np.float64), np.ascontiguousarray(var_in, dtype=np.float64), beta,
           np.ascontiguousarray(r))
    return out if eps is None else out + (eps,)


@njit(cache=True)
def rank_order(rank):
    """The sides in the order of their places, ties in their input order (a stable sort, as
    TrueSkill's ``rate`` sorts its rating groups by rank)."""
    return np.argsort(rank, kind="mergesort")


@njit(cache=True)
def place_groups(rank, order):
    """The places' groups of tied sides along ``order`` (:func:`rank_order`): ``(group, start,
    n_groups)``, ``group[p]`` the group of the ``p``-th side in order (0 first) and ``start`` the
    groups' first positions, ``start[n_groups] = n`` (length ``n + 1``)."""
    n = order.shape[0]
    group = np.empty(n, np.int64)
    start = np.empty(n + 1, np.int64)
    k = 0
    start[0] = 0
    for p in range(n):
        if p > 0 and rank[order[p]] != rank[order[p - 1]]:
            k += 1
            start[k] = p
        group[p] = k
    n_groups = k + 1
    start[n_groups] = n
    return group, start, n_groups


@njit(cache=True)
def expected_place(P):
    r"""Expected place of each side, 1 first: :math:`1 + \sum_{j \ne i} P[j, i]` (linearity of
    expectation: a side's competition place is 1 + the number of sides strictly ahead of it)."""
    n = P.shape[0]
    out = np.ones(n)
    for i in range(n):
        for j in range(n):
            if j != i:
                out[i] += P[j, i]
    return out


@njit(cache=True)
def pl_scale(var, beta):
    r"""Plackett-Luce's one scale of the match, :math:`c = \sqrt{\sum_k (\beta^2 + v_k)}`
    (Weng and Lin 2011, Algorithm 4; openskill's ``PlackettLuce._c``)."""
    s = 0.0
    for k in range(var.shape[0]):
        s += beta * beta + var[k]
    return math.sqrt(s)


@njit(cache=True)
def pl_loglik(mu, var, beta, rank):
    r"""Plackett-Luce log-likelihood of the observed ranking, its gradient ``(n,)`` and Hessian
    ``(n, n)`` in ``mu``: ``(l, grad, hess)``.

    With :math:`c` = :func:`pl_scale`, :math:`x_i = \mu_i / c`, the places' groups of tied sides
    :math:`G_1, \dots, G_K` from first to last, :math:`A_q = |G_{k(q)}|` and
    :math:`T_k = G_k \cup \dots \cup G_K` (the sides not ahead of group :math:`k`),

    .. math::

        L = \prod_q \Bigl(\frac{e^{x_q}}{\sum_{s \in T_{k(q)}} e^{x_s}}\Bigr)^{1 / A_q},
        \qquad
        \ell = \sum_k \Bigl(\frac{1}{|G_k|} \sum_{q \in G_k} x_q - \operatorname{lse}_{s \in T_k} x_s\Bigr).

    This is Weng and Lin (2011), *A Bayesian Approximation Method for Online Ranking*, JMLR 12,
    Section 3.5 and Algorithm 4 (the Plackett-Luce model, ties sharing the exponent
    :math:`1 / A_q`), exactly as openskill.py's ``PlackettLuce`` forms it (``_sum_q``: the sum over
    :math:`C_q = \{i : r(i) \ge r(q)\}`; ``_a``: :math:`A_q`; ``_compute``: its ``omega`` is
    :math:`\sigma_i^2` times this gradient, its ``delta`` before ``gamma`` is :math:`-\sigma_i^2`
    times this Hessian's diagonal). A tie of two sides alone is half a win:
    :math:`\ell = \tfrac12 \log F(z) + \tfrac12 \log F(-z)`, F the logistic cdf.

    With :math:`\pi_{k i} = e^{x_i - \operatorname{lse}_{T_k}}` (:math:`i \in T_k`):
    :math:`\partial \ell / \partial \mu_i = (1 / A_i - \sum_{k \le k(i)} \pi_{k i}) / c` and, for
    :math:`i \ne j`, :math:`\partial^2 \ell / \partial \mu_i \partial \mu_j
    = \sum_{k \le \min(k(i), k(j))} \pi_{k i} \pi_{k j} / c^2`, summed in :math:`O(n^2)` through
    :math:`R_k = \sum_{h \le k} e^{2 (\operatorname{lse}_k - \operatorname{lse}_h)}`; each
    exponent is :math:`\le 0`, so nothing overflows however far apart the sides are.
    """
    n = mu.shape[0]
    c = pl_scale(var, beta)
    x = np.empty(n)
    for i in range(n):
        x[i] = ratio(mu[i], c, Z_MAX)
    order = rank_order(rank)
    group, start, n_groups = place_groups(rank, order)
    # log-sum-exp of x over T_k, streamed from the last place up
    lse = np.empty(n_groups)
    m = -math.inf
    s = 0.0
    for p in range(n - 1, -1, -1):
        v = x[order[p]]
        if v > m:
            s = s * math.exp(m - v) + 1.0
            m = v
        else:
            s += math.exp(v - m)
        if p == start[group[p]]:
            lse[group[p]] = m + math.log(s)
    r1 = np.empty(n_groups)  # sum_{h <= k} e^(lse_k - lse_h)
    r2 = np.empty(n_groups)  # sum_{h <= k} e^(2 (lse_k - lse_h))
    r1[0] = 1.0
    r2[0] = 1.0
    for k in range(1, n_groups):
        e = math.exp(lse[k] - lse[k - 1])
        r1[k] = 1.0 + r1[k - 1] * e
        r2[k] = 1.0 + r2[k - 1] * e * e
    gk = np.empty(n, np.int64)  # group of each side
    for p in range(n):
        gk[order[p]] = group[p]
    loglik = 0.0
    for k in range(n_groups):
        a = start[k + 1] - start[k]
        mean = 0.0
        for p in range(start[k], start[k + 1]):
            mean += x[order[p]] / a
        loglik += mean - lse[k]
    grad = np.empty(n)
    hess = np.zeros((n, n))
    for i in range(n):
        k = gk[i]
        a = start[k + 1] - start[k]
        grad[i] = (1.0 / a - math.exp(x[i] - lse[k]) * r1[k]) / c
        for j in range(i + 1, n):
            kk = min(k, gk[j])
            h = math.exp(x[i] - lse[kk]) * math.exp(x[j] - lse[kk]) * r2[kk] / (c * c)
            hess[i, j] = h
            hess[j, i] = h
    for i in range(n):
        t = 0.0
        for j in range(n):
            if j != i:
                t += hess[i, j]
        hess[i, i] = -t
    return loglik, grad, hess


@njit(cache=True)
def pl_forecast(mu, var, beta):
    r"""Plackett-Luce forecasts: ``(P, win, place)``.

    - ``P[i, j]`` = P(i ahead of j) :math:`= e^{x_i} / (e^{x_i} + e^{x_j}) = F((\mu_i - \mu_j) / c)`,
      F the logistic cdf: exact, since a Plackett-Luce ranking's pairwise marginals are
      Bradley-Terry (Luce's choice axiom; Marden 1995, *Analyzing and Modeling Rank Data*,
      Section 5.1); the uncertainty ``var`` enters through :math:`c` (:func:`pl_scale`), as in
      Weng and Lin's Algorithm 4;
    - ``win[i]`` = P(i first) :math:`= e^{x_i} / \sum_k e^{x_k}` (exact under the model);
    - ``place`` = :func:`expected_place` of ``P`` (exact: Plackett-Luce has no ties).
    """
    n = mu.shape[0]
    c = pl_scale(var, beta)
    P = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            p, q = nx.cdf_pair(nx.LOGISTIC, ratio(mu[i] - mu[j], c, Z_MAX))
            P[i, j] = p
            P[j, i] = q
    m = -math.inf
    for i in range(n):
        m = max(m, ratio(mu[i], c, Z_MAX))
    win = np.empty(n)
    total = 0.0
    for i in range(n):
        win[i] = math.exp(ratio(mu[i], c, Z_MAX) - m)
        total += win[i]
    for i in range(n):
        win[i] /= total
    return P, win, expected_place(P)
