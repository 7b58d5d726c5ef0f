"""Each competitor's chain of nodes as its own tridiagonal block of the Hessian.

The prior links a competitor's consecutive nodes only, so its block of ``H`` (the chain, with the
games' curvature on the diagonal and its opponents held fixed) is tridiagonal: ``L D L^T`` by the
Thomas algorithm, solves, the diagonal of its inverse from forward and backward pivots, the sum of
its ``log D``. They serve as the preconditioner of Newton's conjugate-gradient steps
(:func:`solve`) and as WHR's approximation of the variances and of ``log det H`` when the exact
sparse factor (``smoothers._sparse``) is over budget (Coulom 2008).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numba import njit
from scipy.sparse.linalg import LinearOperator, cg, splu

__all__ = ["chains", "chain_factor", "chain_solve", "solve", "logdet", "tridiagonal_inverse_diag", "CG_FROM",
           "DIRECT_LIMIT"]

CG_FROM = 500  # nodes: from here Newton's steps use conjugate gradients (below, a sparse LU)
DIRECT_LIMIT = 4000  # nodes: up to here the LU backs up a stalled CG


def chains(H, prev):
    """The per-competitor tridiagonal blocks of H: diagonal, and off[k] = H[k, prev[k]]."""
    diag = np.ascontiguousarray(H.diagonal())
    linked = prev >= 0
    off = np.zeros(diag.size)
    links = np.flatnonzero(linked)
    off[links] = np.asarray(H[links, prev[links]]).ravel()
    return diag, off, linked


@njit(cache=True)
def chain_factor(diag, off, linked):
    """``L D L^T`` of every chain (the Thomas algorithm): for a node k linked to k - 1,
    ``l_k = off_k / d_{k-1}``, ``d_k = diag_k - l_k off_k``; a chain's first node ``d_k = diag_k``."""
    n = diag.size
    d = np.empty(n)
    l = np.zeros(n)
    for k in range(n):
        if linked[k]:
            l[k] = off[k] / d[k - 1]
            d[k] = diag[k] - l[k] * off[k]
        else:
            d[k] = diag[k]
    return d, l


@njit(cache=True)
def chain_solve(d, l, linked, b):
    """``x`` with ``L D L^T x = b`` for the chains' factor (:func:`chain_factor`): forward
    ``y_k = b_k - l_k y_{k-1}``, then backward ``x_k = y_k / d_k - l_{k+1} x_{k+1}``."""
    n = b.size
    y = np.empty(n)
    for k in range(n):
        y[k] = b[k] - (l[k] * y[k - 1] if linked[k] else 0.0)
    x = np.empty(n)
    for k in range(n - 1, -1, -1):
        x[k] = y[k] / d[k]
        if k + 1 < n and linked[k + 1]:
            x[k] -= l[k + 1] * x[k + 1]
    return x


def solve(H, b, prev):
    """Solve H x = b: sparse LU for small systems; otherwise conjugate gradients preconditioned
    by the per-competitor chains (exact when competitors do not interact), which needs a few
    dozen products with H instead of a factorisation whose fill-in explodes on real schedules
    (docs/smoothers.md has the timings). Should CG stall, a system of up to ``DIRECT_LIMIT`` nodes is solved by the LU instead."""
    n = b.size
    if n >= CG_FROM:
        diag, off, linked = chains(H, prev)
        d, l = chain_factor(diag, off, linked)
        M = LinearOperator((n, n), matvec=lambda r: chain_solve(d, l, linked, np.ascontiguousarray(r)))
        x, info = cg(H, b, rtol=1e-12, atol=0.0, maxiter=10 * int(math.sqrt(n)) + 200, M=M)
        if info == 0:
            return x
        if n > DIRECT_LIMIT:
            warnings.warn(f"LaplaceSmoother: conjugate gradients stopped before 1e-12 (info {info})",
                          RuntimeWarning, stacklevel=3)
            return x
    lu = splu(H, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    return lu.solve(b)


def logdet(H, prev, factor: "DenseFactor | SparseFactor | None") -> float:
    """log det H: exact from a factor (dense Cholesky, or the sparse ``sum log D``); without one,
    the per-competitor blocks' approximation (log det of each chain's block), the same
    approximation as the variances."""
    if factor is not None:
        return factor.logdet
    d, _ = chain_factor(*chains(H, prev))
    return float(np.sum(np.log(d)))


@njit(cache=True)
def tridiagonal_inverse_diag(diag, off, linked):
    """Diagonal of the inverse of each competitor's tridiagonal block (chains of nodes where
    ``linked[k]`` says node k continues node k - 1): with forward pivots f and backward pivots g
    of the chain, ``(A^-1)_kk = 1 / (f_k + g_k - a_k)``."""
    n = diag.size
    f = np.empty(n)
    g = np.empty(n)
    for k in range(n):
        f[k] = diag[k] - (off[k] * off[k] / f[k - 1] if linked[k] else 0.0)
    for k in range(n - 1, -1, -1):
        nxt = k + 1 < n and linked[k + 1]
        g[k] = diag[k] - (off[k + 1] * off[k + 1] / g[k + 1] if nxt else 0.0)
    out = np.empty(n)
    for k in range(n):
        out[k] = 1.0 / (f[k] + g[k] - diag[k])
    return out

