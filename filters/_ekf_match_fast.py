r"""The diagonal EKF's match of many single-member sides in :math:`O(n \log n)`: the same Newton
step as :func:`filters._ekf_match.newton_sides` (the diagonal of the joint update from the
diagonal prior), solved through the structure of the ranking's Hessian instead of an
eigendecomposition of it.

**The step in scaled form.** Side :math:`i` is one member with variance :math:`v_i` and weight
:math:`w_i`; put :math:`t_i = w_i \sqrt{v_i}` and :math:`T = \operatorname{diag}(t)`. With
:math:`\Lambda = -H \succeq 0` the negative Hessian of the log-likelihood in the sides'
performances and :math:`g` its gradient, the joint update
:math:`P' = (V^{-1} + W \Lambda W)^{-1}`, :math:`m' = m + P' W g` is

.. math::

    P' = V^{1/2} B^{-1} V^{1/2}, \qquad m' = m + V^{1/2} B^{-1} T g, \qquad B = I + T \Lambda T,

so member :math:`i` moves by :math:`\sqrt{v_i}\,(B^{-1} T g)_i` to variance
:math:`v_i (B^{-1})_{ii}`. :math:`B` is dimensionless, its eigenvalues at least 1, and a member of
weight 0 has a row of the identity (it does not move). Both :math:`B^{-1} b` and
:math:`\operatorname{diag}(B^{-1})` are exact in :math:`O(n)` for both observations:

**Thurstonian chain** (probit link): :math:`\Lambda = \sum_p \lambda_p (e_i - e_j)(e_i - e_j)^\top`
over the adjacent pairs :math:`(i, j)` of the order, :math:`\lambda_p = -\partial^2 \ell_p / \partial d^2`,
so :math:`B` is tridiagonal in rank order: the solve is Thomas' recurrence and the diagonal of the
inverse is the two-sweep one, :math:`(B^{-1})_{ii} = 1 / (f_i + r_i - B_{ii})` with :math:`f, r` the
pivots of the elimination from the top and from the bottom (Meurant 1992, *A review on the inverse
of symmetric tridiagonal and block tridiagonal matrices*, SIAM J. Matrix Anal. Appl. 13).

**Plackett-Luce** (logistic link): with the places' groups :math:`G_1..G_K` in order, the sides
not ahead of group :math:`k` :math:`T_k`, :math:`Z_k = \sum_{j \in T_k} e^{x_j}`,
:math:`\pi_{k i} = e^{x_i} / Z_k` (:func:`statespace.model.ranking.pl_loglik`) and
:math:`\Phi(h, k) = Z_k / Z_h = \prod_{h \le m < k} \rho_m`, :math:`\rho_m = Z_{m+1} / Z_m`,

.. math::

    c^2 \Lambda = \sum_k \bigl(\operatorname{diag}(\pi_k) - \pi_k \pi_k^\top\bigr), \qquad
    c^2 \Lambda_{ij} = -\pi_{k(i) i}\, \Phi(k(j), k(i))\, \pi_{k(j) j}\, r_{k(j)}
    \quad (i \text{ not ahead of } j), \qquad r_k = \sum_{h \le k} \Phi(h, k)^2,

so below its diagonal :math:`B` is :math:`-a_i \Phi(j, i) b_j` with :math:`a_i = t_i \pi_{k(i) i} / c`,
:math:`b_j = a_j r_{k(j)}`: diagonal plus quasiseparable of order 1 (Vandebril, Van Barel and
Mastronardi, *Matrix Computations and Semiseparable Matrices*, 2008). Its factor
:math:`B = L \operatorname{diag}(\delta) L^\top` has :math:`L_{ij} = a_i \Phi(j, i) l_j`, each column in
:math:`O(1)` from the running :math:`s_j = \sum_{k < j} \Phi(k, j)^2 l_k^2 \delta_k`:
:math:`\delta_j = B_{jj} - a_j^2 s_j`, :math:`l_j = -(b_j + a_j s_j) / \delta_j`. Column :math:`i` of
:math:`L^{-1}` below the diagonal is :math:`-a_k \Phi(i, i+1) l_i \prod_{i < j < k} \psi_j`,
:math:`\psi_j = \Phi(j, j+1)(1 - l_j a_j)`, so

.. math::

    (B^{-1})_{ii} = \frac{1}{\delta_i} + \Phi(i, i+1)^2 l_i^2 W_i, \qquad
    W_i = \frac{a_{i+1}^2}{\delta_{i+1}} + \psi_{i+1}^2 W_{i+1},

a sum of positive terms, exact; the solve is the factor's two triangular sweeps, refined once
against the product of :math:`B` with the step (:func:`pl_hess_vec`: :math:`O(n)` through the
stages' running sums). No :math:`e^x` is formed (every :math:`\pi`, :math:`\rho` is a ratio of
log-sums), and :math:`B_{jj} = 1 + t_j^2 \Lambda_{jj}` is summed from positive terms,
:math:`c^2 \Lambda_{jj} = \sum_{h \le k} \pi_{h j}(1 - \pi_{h j}) = \pi_{k j} (A_k + (1 - \pi_{k j}) r_k)`,
:math:`A_k = \sum_{h \le k} \Phi(h, k)(1 - \Phi(h, k))` by
:math:`A_{k+1} = \rho_k (1 - \rho_k) \sum_{h \le k} \Phi(h, k) + \rho_k^2 A_k`, :math:`1 - \rho_k` the
sum of group :math:`k`'s :math:`\pi`. (Woodbury's identity through the tridiagonal inverse of
:math:`r`'s random-walk covariance is exact too, but cancels where a side was all but sure of its
place and :math:`t \gg c`, where the factor does not.)

Nothing here approximates: the fast form and the joint one agree to rounding
(``tests/test_ekf_matches.py`` checks it on matches of 20 to 200 sides, ties and weight 0
included; the errors are those of the condition number of :math:`B`, as for a dense solve). The
joint form projects :math:`\Lambda` on the positive semi-definite matrices by its eigenvalues;
here :math:`\Lambda \succeq 0` holds by construction (Plackett-Luce's is a sum of covariance
matrices of categorical distributions; the chain's :math:`\lambda_p` are clipped at 0, which only
rounding could cross: the probit's win and draw terms are log-concave). The cost is the sort of
the places, :math:`O(n \log n)`, and :math:`O(n)` after it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model import numeric as nx
from statespace.model.ranking import Z_MAX, place_groups, rank_order, ratio
from statespace.model.ranking_pairwise import D_SCALES, pair_scale

__all__ = ["pl_stages", "pl_hess_vec", "tridiag_solve", "tridiag_inv_diag", "pl_newton", "chain_newton"]


@njit(cache=True)
def tridiag_solve(a, b, y):
    """``B^-1 y`` for the symmetric positive definite tridiagonal ``B`` of diagonal ``a`` ``(n,)`` and
    off-diagonal ``b`` ``(n - 1,)`` (``b[i] = B[i, i + 1]``): Thomas' elimination without pivoting,
    stable for a positive definite ``B``."""
    n = a.shape[0]
    f = np.empty(n)
    z = np.empty(n)
    f[0] = a[0]
    z[0] = y[0]
    for i in range(1, n):
        q = b[i - 1] / f[i - 1]
        f[i] = a[i] - q * b[i - 1]
        z[i] = y[i] - q * z[i - 1]
    out = np.empty(n)
    out[n - 1] = z[n - 1] / f[n - 1]
    for i in range(n - 2, -1, -1):
        out[i] = (z[i] - b[i] * out[i + 1]) / f[i]
    return out


@njit(cache=True)
def tridiag_inv_diag(a, b):
    """The diagonal of ``B^-1`` (``B`` as in :func:`tridiag_solve`): ``1 / (f_i + r_i - a_i)``, ``f``
    and ``r`` the pivots of the elimination from the top and from the bottom (each ``f_i + r_i - a_i``
    is the Schur complement of ``B_ii``, positive for a positive definite ``B``)."""
    n = a.shape[0]
    f = np.empty(n)
    r = np.empty(n)
    f[0] = a[0]
    for i in range(1, n):
        f[i] = a[i] - b[i - 1] * b[i - 1] / f[i - 1]
    r[n - 1] = a[n - 1]
    for i in range(n - 2, -1, -1):
        r[i] = a[i] - b[i] * b[i] / r[i + 1]
    out = np.empty(n)
    for i in range(n):
        out[i] = 1.0 / (f[i] + r[i] - a[i])
    return out


@njit(cache=True)
def pl_stages(mu, beta, order, rank):
    r"""Plackett-Luce's stages in rank order (``order`` from :func:`rank_order`), at ``var`` 0:
    ``(c, grad, group, start, pi, d, earlier, rho)`` with ``c`` the scale :math:`\sqrt{n}\,\beta`, ``grad``
    the gradient in ``mu`` (input order), ``group[p]`` the group of the ``p``-th side in order,
    ``start`` the groups' first positions (``K + 1``), ``pi[p]`` :math:`= \pi_{k(p) p}` (the side's
    probability at its own stage), ``d[p]`` :math:`= \sum_{k \le k(p)} \pi_{k p}`, ``earlier[k]``
    :math:`= \sum_{h < k} Z_k / Z_h` (so ``d = pi (1 + earlier)``) and ``rho[k]``
    :math:`= Z_{k+1} / Z_k` (0 for the last group). Log-sums are streamed from the last place up,
    so nothing overflows however far apart the sides are."""
    n = mu.shape[0]
    c = math.sqrt(n) * beta
    group, start, n_groups = place_groups(rank, order)
    x = np.empty(n)
    for p in range(n):
        x[p] = ratio(mu[order[p]], c, Z_MAX)
    lse = np.empty(n_groups)
    top = -math.inf
    acc = 0.0
    for p in range(n - 1, -1, -1):
        if x[p] > top:
            acc = acc * math.exp(top - x[p]) + 1.0
            top = x[p]
        else:
            acc += math.exp(x[p] - top)
        if p == start[group[p]]:
            lse[group[p]] = top + math.log(acc)
    rho = np.zeros(n_groups)
    for k in range(n_groups - 1):
        rho[k] = math.exp(lse[k + 1] - lse[k])
    earlier = np.zeros(n_groups)  # sum_{h < k} Z_k / Z_h
    for k in range(1, n_groups):
        earlier[k] = (1.0 + earlier[k - 1]) * rho[k - 1]
    pi = np.empty(n)
    d = np.empty(n)
    grad = np.empty(n)
    for p in range(n):
        k = group[p]
        pi[p] = math.exp(x[p] - lse[k])
        d[p] = pi[p] + pi[p] * earlier[k]
        grad[order[p]] = (1.0 / (start[k + 1] - start[k]) - d[p]) / c
    return c, grad, group, start, pi, d, earlier, rho


@njit(cache=True)
def pl_hess_vec(group, start, pi, d, rho, y):
    r""":math:`c^2 \Lambda y` in rank order, :math:`O(n)`: :math:`d_i y_i - \pi_{k(i) i}
    \sum_{h \le k(i)} (Z_{k(i)} / Z_h)\, s_h` with :math:`s_h = \pi_h^\top y = \sum_{j \in G_h} \pi_{h j} y_j
    + \rho_h s_{h+1}` (a running sum from the last stage up, then one from the first down)."""
    n_groups = rho.shape[0]
    n = y.shape[0]
    s = np.zeros(n_groups)
    nxt = 0.0
    for k in range(n_groups - 1, -1, -1):
        t = 0.0
        for p in range(start[k], start[k + 1]):
            t += pi[p] * y[p]
        nxt = t + rho[k] * nxt
        s[k] = nxt
    q = np.empty(n_groups)
    q[0] = s[0]
    for k in range(1, n_groups):
        q[k] = s[k] + rho[k - 1] * q[k - 1]
    out = np.empty(n)
    for p in range(n):
        out[p] = d[p] * y[p] - pi[p] * q[group[p]]
    return out


@njit(cache=True)
def _ldl(a, bb, phi, diag):
    """``(D, l)`` of ``B = L diag(D) L^T`` for ``B`` of diagonal ``diag`` and, below it,
    ``B[i, j] = -a_i Phi(j, i) bb_j`` (``Phi(j, i)`` the product of ``phi[j:i]``): the factor is
    ``L[i, j] = a_i Phi(j, i) l_j``, each column in O(1) from the running ``s_j = sum_{k < j}
    Phi(k, j)^2 l_k^2 D_k``."""
    n = a.shape[0]
    D = np.empty(n)
    l = np.empty(n)
    s = 0.0
    for j in range(n):
        D[j] = diag[j] - a[j] * (a[j] * s)
        l[j] = -(bb[j] + a[j] * s) / D[j]
        s = phi[j] * phi[j] * (s + l[j] * (l[j] * D[j]))
    return D, l


@njit(cache=True)
def _ldl_solve(a, phi, D, l, rhs):
    """``B^-1 rhs`` from :func:`_ldl`'s factors: ``L z = rhs`` down, ``L^T y = z / D`` up, each sum
    over the triangle carried as a running sum."""
    n = rhs.shape[0]
    z = np.empty(n)
    run = 0.0
    for k in range(n):
        z[k] = rhs[k] - a[k] * run
        run = phi[k] * (run + l[k] * z[k])
    y = np.empty(n)
    run = 0.0
    for j in range(n - 1, -1, -1):
        y[j] = z[j] / D[j] - l[j] * run
        run = phi[j - 1] * (a[j] * y[j] + run) if j > 0 else 0.0
    return y


@njit(cache=True)
def _ldl_inv_diag(a, phi, D, l):
    """The diagonal of ``B^-1 = L^-T diag(D)^-1 L^-1`` from :func:`_ldl`'s factors:
    ``(B^-1)_ii = 1 / D_i + phi_i^2 l_i^2 W_i`` with ``W_i = a_{i+1}^2 / D_{i+1} + psi_{i+1}^2 W_{i+1}``,
    ``psi_j = phi_j (1 - l_j a_j)`` (column ``i`` of ``L^-1`` below the diagonal is
    ``-a_k phi_i l_i prod_{i < j < k} psi_j``): a sum of positive terms."""
    n = a.shape[0]
    out = np.empty(n)
    W = 0.0
    for i in range(n - 1, -1, -1):
        out[i] = 1.0 / D[i] + (phi[i] * l[i]) * (phi[i] * l[i]) * W
        psi = phi[i] * (1.0 - l[i] * a[i])
        W = a[i] * a[i] / D[i] + psi * psi * W
    return out


@njit(cache=True)
def _input_order(order, y, inv):
    """``(step, shrink)`` back in the sides' input order from rank order."""
    step = np.empty(y.shape[0])
    shrink = np.empty(y.shape[0])
    for p in range(y.shape[0]):
        step[order[p]] = y[p]
        shrink[order[p]] = inv[p]
    return step, shrink


@njit(cache=True)
def pl_newton(mu, t, beta, rank):
    r"""``(step, shrink)`` of the Plackett-Luce Newton step (module docstring), in input order:
    ``step`` :math:`= B^{-1} T g` and ``shrink`` :math:`= \operatorname{diag}(B^{-1})`; ``t`` is
    :math:`w \sqrt{v}` of each side."""
    n = mu.shape[0]
    order = rank_order(rank)
    c, grad, group, start, pi, d, earlier, rho = pl_stages(mu, beta, order, rank)
    n_groups = rho.shape[0]
    # per group: gamma = 1 - rho = sum of its pi, r2 = sum_{h <= k} (Z_k / Z_h)^2, and
    # A = sum_{h <= k} Phi (1 - Phi), Phi = Z_k / Z_h, by recurrences of positive terms
    gamma = np.zeros(n_groups)
    for p in range(n):
        gamma[group[p]] += pi[p]
    r2 = np.empty(n_groups)
    A = np.empty(n_groups)
    r2[0] = 1.0
    A[0] = 0.0
    for k in range(1, n_groups):
        r = rho[k - 1]
        r2[k] = 1.0 + r * r * r2[k - 1]
        A[k] = r * gamma[k - 1] * (1.0 + earlier[k - 1]) + r * r * A[k - 1]
    tc = np.empty(n)  # t / c in rank order
    b = np.empty(n)  # T g in rank order
    a = np.empty(n)
    bb = np.empty(n)
    diag = np.empty(n)
    phi = np.ones(n)
    for p in range(n):
        k = group[p]
        tc[p] = t[order[p]] / c
        b[p] = t[order[p]] * grad[order[p]]
        a[p] = tc[p] * pi[p]
        bb[p] = a[p] * r2[k]
        # c^2 Lambda_pp = sum_{h <= k} pi_hp (1 - pi_hp) = pi (A_k + (1 - pi) r2_k)
        lam = pi[p] * (A[k] + (rho[k] + (gamma[k] - pi[p])) * r2[k])
        diag[p] = 1.0 + tc[p] * (tc[p] * lam)
        if p + 1 < n and group[p + 1] != k:
            phi[p] = rho[k]
    D, l = _ldl(a, bb, phi, diag)
    y = _ldl_solve(a, phi, D, l, b)
    # one refinement: B y = y + T Lambda T y, the product through the stages' running sums
    ly = pl_hess_vec(group, start, pi, d, rho, tc * y)
    y = y + _ldl_solve(a, phi, D, l, b - y - tc * ly)
    inv = _ldl_inv_diag(a, phi, D, l)
    return _input_order(order, y, inv)


@njit(cache=True)
def chain_newton(mu, t, beta, eps, rank):
    r"""``(step, shrink)`` of the Thurstonian chain's Newton step (module docstring) in input order;
    the chain's factors are those of :func:`statespace.model.ranking_pairwise.thurstone_loglik` at
    ``var`` 0, and :math:`B` is tridiagonal in rank order."""
    n = mu.shape[0]
    order = rank_order(rank)
    zero = np.zeros(n)
    a = np.ones(n)
    off = np.empty(n - 1)
    b = np.zeros(n)
    for p in range(n - 1):
        i = order[p]
        j = order[p + 1]
        c = pair_scale(zero, beta, i, j)
        dd = ratio(mu[i] - mu[j], c, D_SCALES) * c
        s = 0.5 if rank[i] == rank[j] else 1.0
        g, h = nx.loglik_derivs(nx.PROBIT, nx.DRAW_THRESHOLD, eps, s, dd, c)
        lam = max(-h, 0.0)
        b[p] += t[i] * g
        b[p + 1] -= t[j] * g
        a[p] += t[i] * (t[i] * lam)
        a[p + 1] += t[j] * (t[j] * lam)
        off[p] = -t[i] * (t[j] * lam)
    y = tridiag_solve(a, off, b)
    inv = tridiag_inv_diag(a, off)
    return _input_order(order, y, inv)
