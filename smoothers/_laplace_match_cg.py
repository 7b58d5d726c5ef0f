"""Conjugate gradients for the Newton steps of the Laplace smoother on matches, preconditioned by
each competitor's chain: the tridiagonal block of the Hessian along a competitor's nodes (its
links and the matches' curvature on its diagonal; :mod:`smoothers._chains`), solved exactly by
its ``L D L^T``. A match couples all its members, so the exact sparse factor of a history of
large teams fills quickly; one CG iteration costs a product with the sparse Hessian."""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.sparse.linalg import LinearOperator, cg

from . import _chains

__all__ = ["chain_cg", "CG_RTOL", "CG_MAXITER"]

#: relative residual at which a Newton step's solve stops (an inexact Newton step is still a
#: descent direction: the line search and the stopping rule on the moves do the rest)
CG_RTOL = 1e-10
#: iterations before the step falls back to the sparse LU
CG_MAXITER = 2000


@njit(cache=True)
def chain_solve(d, l, linked, r):
    """``x`` with ``L D L^T x = r`` for every chain at once (``L[k, k - 1] = l_k`` where ``k`` is
    linked to ``k - 1``; :func:`smoothers._chains.chain_factor`)."""
    n = r.size
    y = r.copy()
    for k in range(n):
        if linked[k]:
            y[k] -= l[k] * y[k - 1]
    for k in range(n):
        y[k] /= d[k]
    for k in range(n - 2, -1, -1):
        if linked[k + 1]:
            y[k] -= l[k + 1] * y[k + 1]
    return y


def chain_cg(H, b, prev: np.ndarray):
    """``(x, converged)`` for ``H x = b`` (``H`` sparse, symmetric positive definite, nodes sorted by
    competitor then time; ``prev`` each node's previous node, -1 at a competitor's first)."""
    n = H.shape[0]
    diag, off, linked = _chains.chains(H, prev)
    d, l = _chains.chain_factor(diag, off, linked)
    M = LinearOperator((n, n), matvec=lambda r: chain_solve(d, l, linked, np.ascontiguousarray(r, dtype=np.float64)),
                       dtype=np.float64)
    x, info = cg(H, b, rtol=CG_RTOL, atol=0.0, maxiter=CG_MAXITER, M=M)
    return x, info == 0
