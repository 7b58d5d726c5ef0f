r"""The plan of the sparse ``L D L^T`` factor of the whole-history Hessian: a fill-reducing order
of the nodes and the symbolic pattern of ``L``, fixed for a timeline whatever the drift and the
games' curvature.

``H = P^T L D L^T P`` with a fill-reducing order ``P`` (reverse Cuthill-McKee from scipy, or
SuperLU's multiple minimum degree on ``H + H^T``, whichever fills less); the pattern of ``L`` from
the elimination tree and its row subtrees (Liu 1986; Davis 2006, *Direct Methods for Sparse
Linear Systems*, ch. 4). With scikit-sparse installed (optional: ``pip install
statespace-ratings[cholmod]``), the orders also come from CHOLMOD (AMD, METIS); the factor and the
selected inverse stay these (:mod:`smoothers._sparse_factor`: :meth:`SparsePlan.factor` gives
one). ``docs/benchmarks.md`` compares this code with CHOLMOD.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import spilu

from ._sparse_factor import SparseFactor, ldl_numeric
from .base import Timeline

__all__ = ["SparsePlan", "crossing_work", "hessian_pattern", "fill_counts", "fill_pattern"]

#: A reverse Cuthill-McKee order whose factor costs at most this many multiply-adds (``sum c_j^2``)
#: is kept without trying minimum degree.
RCM_ENOUGH = 1e8
#: :meth:`SparsePlan.build` gives up at once when :func:`crossing_work` exceeds this many times
#: the budget (the ratios behind it are in docs/smoothers.md).
SKIP = 20.0
#: With CHOLMOD, METIS's nested dissection is tried too when the minimum-degree factor would cost
#: more than this many multiply-adds (it takes about ten times AMD's time), unless that is more
#: than ``METIS_REACH`` times the budget (METIS cut international football's factor 3.4-fold,
#: English football's 1.1-fold).
METIS_FROM = 1e9
METIS_REACH = 4.0
#: Whether :meth:`SparsePlan.build` orders with CHOLMOD (scikit-sparse) when it is installed; the
#: environment variable ``STATESPACE_CHOLMOD=0`` turns it off. Without it: SuperLU's minimum degree.
USE_CHOLMOD = os.environ.get("STATESPACE_CHOLMOD", "1").strip().lower() not in ("0", "false", "no", "off")


def _cholmod_analyze():
    """scikit-sparse's ``cholmod.analyze``, or ``None`` (not installed, or turned off)."""
    if not USE_CHOLMOD:
        return None
    try:
        from sksparse.cholmod import analyze
    except Exception:  # noqa: BLE001 - ImportError, or a build that does not load
        return None
    return analyze


def hessian_pattern(tl: Timeline):
    """The sparsity pattern H can have (whatever the values): the diagonal, each link between a
    competitor's consecutive nodes and each game's pair of nodes, both triangles, as CSC
    (indptr, indices: int64, sorted)."""
    n = tl.n_nodes
    links = np.flatnonzero(tl.prev >= 0)
    ga, gb = tl.game_a, tl.game_b
    rows = np.concatenate([np.arange(n), links, tl.prev[links], ga, gb])
    cols = np.concatenate([np.arange(n), tl.prev[links], links, gb, ga])
    S = sp.csc_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    return S.indptr.astype(np.int64), S.indices.astype(np.int64), S


@njit(cache=True)
def fill_counts(indptr, indices, order, pos, max_nnz):
    """Elimination tree and column counts (strictly below the diagonal) of L for the symmetric
    pattern (indptr, indices) taken in the order ``order`` (``pos`` its inverse): each row's
    pattern is its row subtree, walked up the tree (Liu 1986; Davis 2006, ch. 4). Stops early
    (``ok`` False) once the count passes ``max_nnz``."""
    n = order.size
    parent = np.full(n, -1, np.int64)
    ancestor = np.full(n, -1, np.int64)
    for k in range(n):
        v = order[k]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            while i != -1 and i < k:  # path compression towards k
                nxt = ancestor[i]
                ancestor[i] = k
                if nxt == -1:
                    parent[i] = k
                i = nxt
    counts = np.zeros(n, np.int64)
    mark = np.full(n, -1, np.int64)
    total = 0
    for k in range(n):
        mark[k] = k
        v = order[k]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            while i < k and mark[i] != k:  # L[k, i] != 0: walk up to k
                counts[i] += 1
                total += 1
                mark[i] = k
                i = parent[i]
        if total > max_nnz:
            return parent, counts, False
    return parent, counts, True


@njit(cache=True)
def fill_pattern(indptr, indices, order, pos, parent, counts):
    """Row indices of L column by column (sorted), from the same row subtrees."""
    n = order.size
    colptr = np.zeros(n + 1, np.int64)
    for j in range(n):
        colptr[j + 1] = colptr[j] + counts[j]
    nxt = colptr[:n].copy()
    rowind = np.empty(colptr[n], np.int64)
    mark = np.full(n, -1, np.int64)
    for k in range(n):
        mark[k] = k
        v = order[k]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            while i < k and mark[i] != k:
                rowind[nxt[i]] = k
                nxt[i] += 1
                mark[i] = k
                i = parent[i]
    return colptr, rowind


def crossing_work(tl: Timeline) -> float:
    """sum over nodes of w^2, w the number of competitors' links that cross the node's time (those
    still "alive" then): the work of factorising with the nodes in time order, a band of width
    about w. A rough guide to the fill of any ordering: every time cut is a separator of w nodes."""
    linked = np.flatnonzero(tl.prev >= 0)
    start = np.sort(tl.node_time[tl.prev[linked]])
    end = np.sort(tl.node_time[linked])
    at = np.sort(tl.node_time)  # only the sum over nodes counts: sorted queries search faster
    w = np.searchsorted(start, at, side="left") - np.searchsorted(end, at, side="left")
    return float(np.sum(w.astype(float) ** 2))


class SparsePlan:
    """A fill-reducing order of the nodes and the symbolic pattern of L for every Hessian of a
    timeline (their pattern is fixed: chains plus games); ``factor(H)`` factorises one."""

    def __init__(self, order, pos, parent, colptr, rowind, ordering: str, flops: float):
        self.order, self.pos, self.parent = order, pos, parent
        self.colptr, self.rowind = colptr, rowind
        self.ordering = ordering
        self.flops = flops
        self.n = order.size

    @property
    def nnz(self) -> int:
        """Entries of L, its unit diagonal included (as SuperLU counts them)."""
        return int(self.rowind.size) + self.n

    @classmethod
    def build(cls, tl: Timeline, max_flops: float, max_nnz: float) -> "SparsePlan | None":
        """Reverse Cuthill-McKee first (about free, and as good as anything on a dense schedule);
        if its factor costs more than ``RCM_ENOUGH``, also SuperLU's multiple minimum degree on
        ``H + H^T`` (its ordering alone, taken from an incomplete factorisation that keeps
        nothing). The cheaper one within the budget (``sum c_j^2 <= max_flops``, ``nnz <=
        max_nnz``), or ``None`` if neither fits -- or at once if the chains crossing each node's
        time (:func:`crossing_work`) say the factor is far out of the budget (then even ordering
        would cost more than the fit)."""
        n = tl.n_nodes
        if crossing_work(tl) > SKIP * max_flops:
            return None
        indptr, indices, S = hessian_pattern(tl)
        # sum_j c_j^2 >= (sum_j c_j)^2 / n: an order whose L passes sqrt(max_flops n) entries is over budget
        lim = min(float(max_nnz) - n, math.sqrt(float(max_flops) * n))
        best = None

        def consider(order, name):
            nonlocal best
            order = np.ascontiguousarray(order, dtype=np.int64)
            pos = np.empty(n, np.int64)
            pos[order] = np.arange(n)
            parent, counts, ok = fill_counts(indptr, indices, order, pos, lim)
            if not ok:
                return math.inf
            flops = float(np.sum(counts.astype(float) ** 2))
            if flops <= max_flops and (best is None or flops < best[3]):
                best = (order, pos, (parent, counts), flops, name)
            return flops

        flops = consider(reverse_cuthill_mckee(S.tocsr(), symmetric_mode=True), "reverse Cuthill-McKee")
        analyze = _cholmod_analyze() if flops > RCM_ENOUGH else None
        if analyze is not None:
            # CHOLMOD's orderings (scikit-sparse, optional): approximate minimum degree in a
            # hundredth of SuperLU's time, and for a large factor METIS's nested dissection
            M = S.copy()
            M.data[:] = -1.0
            M.setdiag(np.diff(S.indptr).astype(float) + 1.0)
            M = M.tocsc()
            for method, name in (("amd", "approximate minimum degree (CHOLMOD AMD)"),
                                 ("metis", "nested dissection (CHOLMOD METIS)")):
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        order = analyze(M, mode="simplicial", ordering_method=method).P()
                except Exception:  # noqa: BLE001 - e.g. a CHOLMOD built without METIS: keep what we have
                    continue
                flops = min(flops, consider(order, name))
                if flops <= METIS_FROM or flops > METIS_REACH * max_flops:
                    break  # cheap enough already, or too far over the budget for METIS to bring it in
        elif flops > RCM_ENOUGH:
            # SuperLU's ordering alone: with every entry dropped the incomplete factorisation is free;
            # the values make the matrix diagonally dominant (the ordering reads only the pattern)
            M = S.copy()
            M.data[:] = -1.0
            M.setdiag(np.diff(S.indptr).astype(float) + 1.0)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ilu = spilu(M.tocsc(), drop_tol=1e300, fill_factor=1.0, permc_spec="MMD_AT_PLUS_A",
                                diag_pivot_thresh=0.0, options={"SymmetricMode": True})
                consider(np.argsort(ilu.perm_c), "minimum degree (SuperLU MMD_AT_PLUS_A)")
            except RuntimeError:  # pragma: no cover - SuperLU refusing a diagonally dominant matrix
                pass
        if best is None:
            return None
        order, pos, (parent, counts), flops, name = best
        colptr, rowind = fill_pattern(indptr, indices, order, pos, parent, counts)
        return cls(order, pos, parent, colptr, rowind, name, flops)

    @classmethod
    def from_order(cls, tl: Timeline, order: np.ndarray, name: str = "given", max_flops: float = math.inf,
                   max_nnz: float = math.inf, structure=None) -> "SparsePlan | None":
        """The plan for a given order of the nodes (whatever its fill; ``None`` if it is over
        ``max_flops`` or ``max_nnz``); ``structure``: :func:`hessian_pattern` of ``tl`` if at hand."""
        indptr, indices, _ = hessian_pattern(tl) if structure is None else structure
        n = order.size
        order = np.ascontiguousarray(order, dtype=np.int64)
        pos = np.empty(n, np.int64)
        pos[order] = np.arange(n)
        lim = min(float(max_nnz) - n, math.sqrt(float(max_flops) * n))
        parent, counts, ok = fill_counts(indptr, indices, order, pos, lim)
        flops = float(np.sum(counts.astype(float) ** 2))
        if not ok or flops > max_flops:
            return None
        colptr, rowind = fill_pattern(indptr, indices, order, pos, parent, counts)
        return cls(order, pos, parent, colptr, rowind, name, flops)

    def factor(self, H) -> "SparseFactor | None":
        H = H.tocsc()
        L, d, ok = ldl_numeric(H.indptr.astype(np.int64), H.indices.astype(np.int64), H.data, self.order, self.pos,
                               self.colptr, self.rowind)
        if not ok:  # pragma: no cover - H is positive definite at any point (the prior's Q is)
            warnings.warn("LaplaceSmoother: the Hessian is not numerically positive definite; variances from "
                          "the per-competitor blocks", RuntimeWarning, stacklevel=3)
            return None
        return SparseFactor(self, L, d)

