"""Each competitor's chain of nodes as its own tridiagonal block of the Hessian.

The prior links a competitor's consecutive nodes only, so its block of ``H`` (the chain, with the
games' curvature on the diagonal and its opponents held fixed) is tridiagonal: ``L D L^T`` by the
Thomas algorithm, solves, the diagonal of its inverse from forward and backward pivots, the sum of
its ``log D``. They serve as the preconditioner of Newton's conjugate-gradient steps
(``smoothers._newton_system.NewtonSystem``) and as WHR's approximation of the variances and of
``log det H`` when the exact sparse factor (``smoothers._sparse``) is over budget (Coulom 2008).
Small systems are solved directly (:func:`solve`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.sparse.linalg import splu

__all__ = ["chains", "chain_factor", "solve", "logdet", "tridiagonal_inverse_diag", "CG_FROM",
           "DIRECT_LIMIT"]

CG_FROM = 500  # nodes: from here Newton's steps use conjugate gradients (below, a sparse LU)
DIRECT_LIMIT = 4000  # nodes: up to here the LU backs up a stalled CG


@njit(cache=True)
def _chain_entries(indptr, indices, data, prev):
    """``H[k, prev[k]]`` for every linked node ``k`` of a CSC matrix (0 at first nodes)."""
    off = np.zeros(prev.size)
    for k in range(prev.size):
        p = prev[k]
        if p < 0:
            continue
        for q in range(indptr[p], indptr[p + 1]):
            if indices[q] == k:
                off[k] += data[q]
    return off


def chains(H, prev: np.ndarray):
    """Each competitor's tridiagonal block of the sparse Hessian ``H``: its diagonal,
    ``off[k] = H[k, prev[k]]`` (0 at a chain's first node) and which nodes are linked."""
    H = H.tocsc()
    off = _chain_entries(H.indptr, H.indices, H.data, np.ascontiguousarray(prev, dtype=np.int64))
    return np.ascontiguousarray(H.diagonal()), off, prev >= 0


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


def solve(H, b):
    """Solve ``H x = b`` by a sparse LU (symmetric mode, minimum-degree order): Newton's steps
    below ``CG_FROM`` nodes, and above it a stalled conjugate-gradient solve of up to
    ``DIRECT_LIMIT`` nodes."""
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

