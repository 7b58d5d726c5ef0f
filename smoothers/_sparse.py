r"""Exact posterior variances of the whole-history model: a sparse ``L D L^T`` factor of the
Hessian and its selected inverse.

``H = P^T L D L^T P`` with a fill-reducing order ``P`` (reverse Cuthill-McKee from scipy, or
SuperLU's multiple minimum degree on ``H + H^T``, whichever fills less); the pattern of ``L`` from
the elimination tree and its row subtrees (Liu 1986; Davis 2006, *Direct Methods for Sparse
Linear Systems*, ch. 4); a left-looking numeric pass. The *selected inverse* (Takahashi, Fox &
Wang 1973; Erisman & Tinney 1975; as INLA uses it, Rue & Martino 2007) then gives every entry of
``H^-1`` on the pattern of ``L + L^T`` -- every marginal variance and every node's covariance with
its chain neighbours -- and ``log det H = sum log D``. Other covariances (forecasts) are
``y_i^T D^-1 y_j`` with ``y = L^-1 e``, one sparse forward solve per node along its path in the
elimination tree (:class:`SparseCovariance`). Small fits use LAPACK's dense Cholesky instead
(:class:`DenseFactor`). With scikit-sparse installed (optional: ``pip install
statespace-ratings[cholmod]``), the orders also come from CHOLMOD (AMD, METIS); the factor and the
selected inverse stay these. ``docs/benchmarks.md`` compares this code with CHOLMOD.

Newton's linear systems (:class:`NewtonSystem`): deflated conjugate gradients, compiled, in a
time-major layout of the nodes, preconditioned by each competitor's chain; or the factor above
once CG would cost more (``smoothers.laplace``).
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.linalg import lapack
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import spilu

from .base import Timeline

__all__ = ["DenseFactor", "SparsePlan", "SparseFactor", "SparseCovariance", "NewtonSystem", "crossing_work"]

#: A reverse Cuthill-McKee order whose factor costs at most this many multiply-adds (``sum c_j^2``)
#: is kept without trying minimum degree.
RCM_ENOUGH = 1e8
#: :meth:`SparsePlan.build` gives up at once when :func:`crossing_work` exceeds this many times
#: the budget (the ratios behind it are in docs/smoothers.md).
SKIP = 20.0
#: With CHOLMOD, METIS's nested dissection is tried too when the minimum-degree factor would cost
#: more than this many multiply-adds (it takes about a second on 100,000 nodes, AMD a tenth of that),
#: unless that is more than ``METIS_REACH`` times the budget (METIS cut international football's
#: factor 3.4-fold, English football's 1.1-fold).
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


class DenseFactor:
    """``H = C C^T`` by LAPACK's dense Cholesky (small fits): log det H and the whole inverse."""

    def __init__(self, H):
        c, info = lapack.dpotrf(H.toarray(), lower=1)
        if info != 0:  # pragma: no cover - H is positive definite (the prior's Q is)
            raise np.linalg.LinAlgError(f"LaplaceSmoother: the Hessian is not positive definite (dpotrf {info})")
        self.c = c
        self.logdet = float(2.0 * np.sum(np.log(np.diag(c))))

    def inverse(self) -> np.ndarray:
        inv, info = lapack.dpotri(self.c, lower=1)
        if info != 0:  # pragma: no cover
            raise np.linalg.LinAlgError(f"LaplaceSmoother: dpotri {info}")
        low = np.tril(inv)
        return low + np.tril(low, -1).T


def _structure(tl: Timeline):
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
def _fill_counts(indptr, indices, order, pos, max_nnz):
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
def _fill_pattern(indptr, indices, order, pos, parent, counts):
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


@njit(cache=True)
def _ldl_numeric(indptr, indices, data, order, pos, colptr, rowind):
    """H[order][:, order] = L D L^T on the symbolic pattern (colptr, rowind): left-looking, one
    dense work column; each earlier column k that reaches row j is kept on a list by its next
    row. Returns L's values (unit diagonal implied), D, and False if a pivot is not positive."""
    n = order.size
    L = np.zeros(rowind.size)
    d = np.zeros(n)
    x = np.zeros(n)
    head = np.full(n, -1, np.int64)
    link = np.full(n, -1, np.int64)
    nextpos = np.zeros(n, np.int64)
    for j in range(n):
        v = order[j]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            if i >= j:
                x[i] += data[p]
        k = head[j]
        while k != -1:
            knext = link[k]
            q = nextpos[k]  # L[j, k]
            f = L[q] * d[k]
            x[j] -= f * L[q]
            for r in range(q + 1, colptr[k + 1]):
                x[rowind[r]] -= f * L[r]
            q += 1
            nextpos[k] = q
            if q < colptr[k + 1]:
                row = rowind[q]
                link[k] = head[row]
                head[row] = k
            k = knext
        dj = x[j]
        x[j] = 0.0
        if not dj > 0.0:
            return L, d, False
        d[j] = dj
        for q in range(colptr[j], colptr[j + 1]):
            r = rowind[q]
            L[q] = x[r] / dj
            x[r] = 0.0
        nextpos[j] = colptr[j]
        if colptr[j] < colptr[j + 1]:
            row = rowind[colptr[j]]
            link[j] = head[row]
            head[row] = j
    return L, d, True


@njit(cache=True)
def _selected_inverse(colptr, rowind, L, d):
    """Z = H^-1 on the pattern of L (strictly lower: z, diagonal: zd), columns from last to
    first (Takahashi et al. 1973; Erisman & Tinney 1975): for column j with pattern S,

        Z[i, j] = - sum_{k in S} L[k, j] Z[i, k]   (i in S),   Z[j, j] = 1 / D[j] - sum_{k in S} L[k, j] Z[k, j],

    where every Z[i, k] needed lies in the pattern already computed (S is a clique of L's graph:
    for k < i in S, i is in column k), found by walking column k's sorted rows along S. Returns
    ok False if an entry is missing (a pattern that is not L's)."""
    n = d.size
    z = np.empty(rowind.size)
    zd = np.empty(n)
    acc = np.zeros(n)
    for j in range(n - 1, -1, -1):
        p0 = colptr[j]
        m = colptr[j + 1] - p0
        for t in range(m):
            acc[t] = 0.0
        for t in range(m):
            k = rowind[p0 + t]
            lkj = L[p0 + t]
            s = lkj * zd[k]
            q = colptr[k]
            end = colptr[k + 1]
            for u in range(t + 1, m):
                r = rowind[p0 + u]
                while q < end and rowind[q] != r:
                    q += 1
                if q == end:
                    return zd, z, False
                zr = z[q]  # Z[r, k]
                acc[u] += lkj * zr  # Z[r, j] gets L[k, j] Z[r, k]
                s += L[p0 + u] * zr  # Z[k, j] gets L[r, j] Z[k, r]
                q += 1
            acc[t] += s
        s = 0.0
        for t in range(m):
            z[p0 + t] = -acc[t]
            s -= L[p0 + t] * acc[t]
        zd[j] = 1.0 / d[j] - s
    return zd, z, True


@njit(cache=True)
def _pattern_entries(colptr, rowind, z, zd, a, b):
    """Z[a_t, b_t] (positions in the factor's order) where the pair lies in the pattern; NaN elsewhere."""
    out = np.full(a.size, np.nan)
    for t in range(a.size):
        i, j = a[t], b[t]
        if i == j:
            out[t] = zd[i]
            continue
        lo, hi = (i, j) if i < j else (j, i)
        left, right = colptr[lo], colptr[lo + 1]
        while left < right:  # binary search of row hi in column lo
            mid = (left + right) // 2
            if rowind[mid] < hi:
                left = mid + 1
            else:
                right = mid
        if left < colptr[lo + 1] and rowind[left] == hi:
            out[t] = z[left]
    return out


@njit(cache=True)
def _forward_paths(colptr, rowind, L, parent, nodes):
    """y_s = L^-1 e_s for each position s in ``nodes``: nonzero only on the path from s to the
    root of the elimination tree (every row of a column of L is an ancestor of it), so each
    forward solve touches that path's columns only. Returns the paths' offsets, positions and
    values, concatenated."""
    n = parent.size
    offsets = np.zeros(nodes.size + 1, np.int64)
    for u in range(nodes.size):
        k = nodes[u]
        m = 0
        while k != -1:
            m += 1
            k = parent[k]
        offsets[u + 1] = offsets[u] + m
    where = np.empty(offsets[-1], np.int64)
    vals = np.empty(offsets[-1])
    y = np.zeros(n)
    for u in range(nodes.size):
        k = nodes[u]
        t = offsets[u]
        while k != -1:
            where[t] = k
            t += 1
            k = parent[k]
        y[nodes[u]] = 1.0
        for t in range(offsets[u], offsets[u + 1]):  # the path is increasing: forward substitution
            j = where[t]
            yj = y[j]
            if yj != 0.0:
                for q in range(colptr[j], colptr[j + 1]):
                    y[rowind[q]] -= L[q] * yj
        for t in range(offsets[u], offsets[u + 1]):
            vals[t] = y[where[t]]
            y[where[t]] = 0.0
    return offsets, where, vals


@njit(cache=True)
def _path_dots(offsets, where, vals, d, ia, ib):
    """(H^-1)[a, b] = y_a^T D^-1 y_b for the pairs (ia[t], ib[t]) of paths, ``ia`` sorted."""
    n = d.size
    w = np.zeros(n)
    out = np.empty(ia.size)
    current = -1
    for t in range(ia.size):
        if ia[t] != current:
            if current >= 0:
                for q in range(offsets[current], offsets[current + 1]):
                    w[where[q]] = 0.0
            current = ia[t]
            for q in range(offsets[current], offsets[current + 1]):
                w[where[q]] = vals[q] / d[where[q]]
        acc = 0.0
        for q in range(offsets[ib[t]], offsets[ib[t] + 1]):
            acc += w[where[q]] * vals[q]
        out[t] = acc
    return out


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
        indptr, indices, S = _structure(tl)
        # sum_j c_j^2 >= (sum_j c_j)^2 / n: an order whose L passes sqrt(max_flops n) entries is over budget
        lim = min(float(max_nnz) - n, math.sqrt(float(max_flops) * n))
        best = None

        def consider(order, name):
            nonlocal best
            order = np.ascontiguousarray(order, dtype=np.int64)
            pos = np.empty(n, np.int64)
            pos[order] = np.arange(n)
            parent, counts, ok = _fill_counts(indptr, indices, order, pos, lim)
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
        colptr, rowind = _fill_pattern(indptr, indices, order, pos, parent, counts)
        return cls(order, pos, parent, colptr, rowind, name, flops)

    @classmethod
    def from_order(cls, tl: Timeline, order: np.ndarray, name: str = "given", max_flops: float = math.inf,
                   max_nnz: float = math.inf, structure=None) -> "SparsePlan | None":
        """The plan for a given order of the nodes (whatever its fill; ``None`` if it is over
        ``max_flops`` or ``max_nnz``); ``structure``: :func:`_structure` of ``tl`` if at hand."""
        indptr, indices, _ = _structure(tl) if structure is None else structure
        n = order.size
        order = np.ascontiguousarray(order, dtype=np.int64)
        pos = np.empty(n, np.int64)
        pos[order] = np.arange(n)
        lim = min(float(max_nnz) - n, math.sqrt(float(max_flops) * n))
        parent, counts, ok = _fill_counts(indptr, indices, order, pos, lim)
        flops = float(np.sum(counts.astype(float) ** 2))
        if not ok or flops > max_flops:
            return None
        colptr, rowind = _fill_pattern(indptr, indices, order, pos, parent, counts)
        return cls(order, pos, parent, colptr, rowind, name, flops)

    def factor(self, H) -> "SparseFactor | None":
        H = H.tocsc()
        L, d, ok = _ldl_numeric(H.indptr.astype(np.int64), H.indices.astype(np.int64), H.data, self.order, self.pos,
                                self.colptr, self.rowind)
        if not ok:  # pragma: no cover - H is positive definite at any point (the prior's Q is)
            warnings.warn("LaplaceSmoother: the Hessian is not numerically positive definite; variances from "
                          "the per-competitor blocks", RuntimeWarning, stacklevel=3)
            return None
        return SparseFactor(self, L, d)


class SparseFactor:
    """``H[order][:, order] = L D L^T``: log det H, the selected inverse, and solves."""

    def __init__(self, plan: SparsePlan, L: np.ndarray, d: np.ndarray):
        self.plan, self.L, self.d = plan, L, d
        self.logdet = float(np.sum(np.log(d)))

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x`` with ``H x = b``."""
        p = self.plan
        return _ordered_ldl_solve(p.colptr, p.rowind, self.L, self.d, p.order, np.ascontiguousarray(b, dtype=float))

    def selected_inverse(self, a: np.ndarray, b: np.ndarray):
        """Every node's variance and the covariances of the node pairs (a, b), which must lie in
        the pattern of L + L^T (a node and its previous node always do: H links them)."""
        p = self.plan
        zd, z, ok = _selected_inverse(p.colptr, p.rowind, self.L, self.d)
        if not ok:  # pragma: no cover - the pattern is L's by construction
            raise RuntimeError("selected inverse: the factor's pattern is not closed")
        entries = _pattern_entries(p.colptr, p.rowind, z, zd, p.pos[a], p.pos[b])
        return zd[p.pos], entries

    def covariances(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(H^-1)[a_t, b_t] for node index arrays a, b: ``y_a^T D^-1 y_b`` with ``y = L^-1 e``, one
        sparse forward solve per distinct node (along its elimination-tree path)."""
        p = self.plan
        a = np.asarray(a, np.int64).ravel()
        b = np.asarray(b, np.int64).ravel()
        nodes, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
        ia, ib = inv[:a.size], inv[a.size:]
        offsets, where, vals = _forward_paths(p.colptr, p.rowind, self.L, p.parent, p.pos[nodes])
        order = np.argsort(ia, kind="stable")
        out = np.empty(a.size)
        out[order] = _path_dots(offsets, where, vals, self.d, ia[order], ib[order])
        return out


class SparseCovariance:
    """The nodes' posterior covariance ``H^-1`` held as the sparse factor of ``H``: what
    ``fit.cov`` is when there are more nodes than ``dense_cov_limit`` and the factor was
    affordable. ``cov[i, j]`` (node indices: integers or broadcastable integer arrays) returns
    those covariances, ``y_i^T D^-1 y_j`` with ``y = L^-1 e`` (one sparse forward solve per
    distinct node, along its path in the elimination tree); ``cov.diagonal()`` the marginal
    variances; ``np.asarray(cov)`` the dense matrix (small fits only)."""

    ndim = 2
    dtype = np.dtype(float)

    def __init__(self, factor: SparseFactor, var: np.ndarray):
        self._factor = factor
        self._var = var
        self.shape = (factor.plan.n, factor.plan.n)

    def __repr__(self) -> str:
        return f"SparseCovariance({self.shape[0]} nodes, factor with {self._factor.plan.nnz:,} entries)"

    def diagonal(self) -> np.ndarray:
        return self._var.copy()

    def __getitem__(self, key):
        if not (isinstance(key, tuple) and len(key) == 2):
            raise IndexError("index the covariance with cov[i, j] (node indices)")
        i, j = np.broadcast_arrays(np.asarray(key[0]), np.asarray(key[1]))
        if not (np.issubdtype(i.dtype, np.integer) and np.issubdtype(j.dtype, np.integer)):
            raise IndexError("SparseCovariance takes integer node indices")
        n = self.shape[0]
        i = np.where(i < 0, i + n, i)
        j = np.where(j < 0, j + n, j)
        if i.size and (i.min() < 0 or j.min() < 0 or i.max() >= n or j.max() >= n):
            raise IndexError(f"node index out of range for {n} nodes")
        out = self._factor.covariances(i, j).reshape(i.shape)
        return float(out) if out.ndim == 0 else out

    def __array__(self, dtype=None, copy=None):
        idx = np.arange(self.shape[0])
        full = self[idx[:, None], idx[None, :]]
        return full if dtype is None else full.astype(dtype)


# ---------------------------------------------------------------------------- Newton's linear systems
#: Conjugate gradients stop at this relative residual ``|H dx - b| <= CG_RTOL |b|``.
CG_RTOL = 1e-12
#: At most this many time bins in the deflation space, per node (``n // BIN_NODES`` bins).
BIN_NODES = 8
#: Newton's steps switch from conjugate gradients to the sparse factor (when the fit has one) once
#: a CG solve is predicted to cost more: ``iterations * (nodes + games) * CG_FLOPS_PER_ITEM >
#: sum_j c_j^2`` (in the numeric factor's multiply-adds, about 1 ns each on the development machine,
#: where one CG iteration costs about 10 ns per node and game).
CG_FLOPS_PER_ITEM = 10.0


@njit(cache=True)
def _chain_factor_p(diag, off, prev):
    """``L D L^T`` of every competitor's chain, the chains given by ``prev`` (the previous node of
    the same competitor, always at a lower index, or -1): returns ``1 / D`` and ``l`` (``l[k]`` the
    multiplier of the link from ``prev[k]`` to ``k``)."""
    n = diag.size
    dinv = np.empty(n)
    l = np.zeros(n)
    for k in range(n):
        p = prev[k]
        if p >= 0:
            l[k] = off[k] * dinv[p]
            dinv[k] = 1.0 / (diag[k] - l[k] * off[k])
        else:
            dinv[k] = 1.0 / diag[k]
    return dinv, l


@njit(cache=True)
def _ordered_ldl_solve(colptr, rowind, L, d, order, b):
    """``x`` with ``H x = b`` for ``H[order][:, order] = L D L^T`` (L unit lower, its strictly
    lower part on the pattern colptr / rowind)."""
    n = b.size
    y = np.empty(n)
    for i in range(n):
        y[i] = b[order[i]]
    for j in range(n):
        yj = y[j]
        if yj != 0.0:
            for q in range(colptr[j], colptr[j + 1]):
                y[rowind[q]] -= L[q] * yj
    for j in range(n):
        y[j] /= d[j]
    for j in range(n - 1, -1, -1):
        s = y[j]
        for q in range(colptr[j], colptr[j + 1]):
            s -= L[q] * y[rowind[q]]
        y[j] = s
    x = np.empty(n)
    for i in range(n):
        x[order[i]] = y[i]
    return x


@njit(cache=True)
def _dpcg(diag, diag_q, off, prev, nxt, ga, gb, kappa, binof, bin_nodes, bin_games, cptr, crow, cL, cd, corder, b,
          rtol, maxiter):
    """Deflated conjugate gradients for ``H x = b`` (Saad, Yeung, Erhel & Guyomarc'h 2000; Frank &
    Vuik 2001), preconditioned by the competitors' chains (exact tridiagonal solves) and deflated
    by the time bins ``W`` (``binof``): the common level of everyone at each time, which the
    games leave to the prior and the chains cannot see, is solved exactly on the coarse system
    ``E = W^T H W = W^T Q W`` (factor ``cptr, crow, cL, cd`` in the order ``corder``; ``H W = Q W``
    because a game's curvature cancels within its bin). The bins' share of the residual, which
    rounding brings back, is projected out again at every iteration. Four passes over the nodes
    per iteration; the product with ``H`` goes bin by bin (``bin_nodes``, ``bin_games``: where each
    bin's nodes and games start), each bin's games right after its nodes, while they are in the
    cache. Returns ``x``, the iterations and whether it converged."""
    n = b.size
    nb = cd.size
    dinv, l = _chain_factor_p(diag, off, prev)
    x = np.zeros(n)
    r = b.copy()
    z = np.empty(n)
    p = np.zeros(n)
    y = np.empty(n)
    s = np.zeros(nb)  # W^T r
    t = np.zeros(nb)  # W^T H z
    xc = np.zeros(nb)  # the corrections of x, W xc, added at the end
    bn = 0.0
    for k in range(n):
        bn += b[k] * b[k]
        s[binof[k]] += b[k]
    bn = math.sqrt(bn)
    if bn == 0.0:
        return x, 0, True
    rz = 1.0
    it = 0
    converged = False
    while True:
        # the coarse correction c = E^-1 W^T r: x += W c (kept in xc), r -= Q W c; with it the
        # forward sweep of the chains' solve and |r|^2
        c = _ordered_ldl_solve(cptr, crow, cL, cd, corder, s)
        for i in range(nb):
            xc[i] += c[i]
        rr = 0.0
        for k in range(n):
            bk = binof[k]
            q = prev[k]
            nk = nxt[k]
            corr = diag_q[k] * c[bk]
            if q >= 0:
                corr += off[k] * c[binof[q]]
            if nk >= 0:
                corr += off[nk] * c[binof[nk]]
            rk = r[k] - corr
            r[k] = rk
            rr += rk * rk
            z[k] = rk - (l[k] * z[q] if q >= 0 else 0.0)
        if math.sqrt(rr) <= rtol * bn:
            converged = True
            break
        if it == maxiter:
            break
        it += 1
        # the backward sweep, r^T z, and t = W^T H z (= W^T Q z)
        rz_new = 0.0
        for i in range(nb):
            t[i] = 0.0
        for k in range(n - 1, -1, -1):
            nk = nxt[k]
            v = z[k] * dinv[k]
            if nk >= 0:
                v -= l[nk] * z[nk]
            z[k] = v
            rz_new += v * r[k]
            bk = binof[k]
            t[bk] += diag_q[k] * v
            if nk >= 0:
                t[bk] += off[nk] * z[nk]
                t[binof[nk]] += off[nk] * v
        mu = _ordered_ldl_solve(cptr, crow, cL, cd, corder, t)
        beta = rz_new / rz if it > 1 else 0.0
        rz = rz_new
        # p = z - W mu + beta p, and y = H p with p^T H p: the chains, then the games
        pHp = 0.0
        for c in range(nb):
            mc = mu[c]
            for k in range(bin_nodes[c], bin_nodes[c + 1]):
                pk = z[k] - mc + beta * p[k]
                p[k] = pk
                yk = diag[k] * pk
                pHp += yk * pk
                q = prev[k]
                if q >= 0:
                    yk += off[k] * p[q]
                    y[q] += off[k] * pk
                    pHp += 2.0 * off[k] * pk * p[q]
                y[k] = yk
            for g in range(bin_games[c], bin_games[c + 1]):
                a_ = ga[g]
                b_ = gb[g]
                kg = kappa[g]
                pa = p[a_]
                pb = p[b_]
                y[a_] -= kg * pb
                y[b_] -= kg * pa
                pHp -= 2.0 * kg * pa * pb
        if not pHp > 0.0:
            break
        alpha = rz / pHp
        for i in range(nb):
            s[i] = 0.0
        for k in range(n):
            x[k] += alpha * p[k]
            rk = r[k] - alpha * y[k]
            r[k] = rk
            s[binof[k]] += rk
    for k in range(n):
        x[k] += xc[binof[k]]
    return x, it, converged


@njit(cache=True)
def _positions(indptr, indices, rows, cols):
    """The position in a CSC pattern (sorted row indices) of each entry (rows[t], cols[t])."""
    out = np.empty(rows.size, np.int64)
    for t in range(rows.size):
        lo, hi = indptr[cols[t]], indptr[cols[t] + 1]
        r = rows[t]
        while lo < hi:
            mid = (lo + hi) // 2
            if indices[mid] < r:
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo
    return out


def _time_bins(times: np.ndarray, max_bins: int):
    """Bins of consecutive distinct times (each time wholly in one bin), at most ``max_bins``, of
    about equal numbers of nodes; ``times`` ascending. Returns each node's bin and the count."""
    new = np.r_[True, times[1:] != times[:-1]]
    tid = np.cumsum(new) - 1
    n_times = int(tid[-1]) + 1 if times.size else 0
    if n_times <= max_bins:
        return tid.astype(np.int32), n_times
    first = np.flatnonzero(new)  # the first node of each distinct time
    cut = (first * max_bins) // times.size  # the bin of each time by the nodes before it
    _, bin_of_time = np.unique(cut, return_inverse=True)
    return bin_of_time[tid].astype(np.int32), int(bin_of_time.max()) + 1


class NewtonSystem:
    """Newton's linear systems ``H dx = -grad`` for one timeline, whatever the drift and the
    games' curvature: the layout is built once per fit and serves every Newton step (and every
    drift of a type-II search).

    - The nodes are taken in time order (ties by competitor), so that a game's two nodes and a
      node's chain neighbours lie close in memory, and the games in time order: each conjugate-
      gradient iteration streams through the arrays once instead of jumping across them (the
      competitor-major order of the timeline made one sparse product with ``H`` 50 times slower at
      a million games than at 100,000).
    - The preconditioner is each competitor's chain (its tridiagonal block with the games'
      curvature on the diagonal, solved exactly), as before; the deflation space is the
      indicator of every time bin (all nodes of a bin moving together), whose coarse system
      ``W^T H W = W^T Q W`` does not depend on the games. The chains cannot see that common level
      (a game between two competitors does not move when both move), which only the prior and
      the random walk pin; without the deflation CG's iterations grew with the length of the
      history (18 per Newton step at 100,000 games, 46 at a million, on the scaling benchmark),
      with it they stay flat (13-14).
    - The Hessian of a step, when a factor or the LU needs it, is filled into its fixed pattern
      (:meth:`hessian`) instead of being assembled and sorted again.
    """

    def __init__(self, tl: Timeline):
        n = tl.n_nodes
        self.n = n
        self.tl = tl
        perm = np.lexsort((tl.node_player, tl.node_time))
        pos = np.empty(n, np.int64)
        pos[perm] = np.arange(n)
        self.perm, self.pos = perm, pos
        itype = np.int32 if n < 2**31 - 1 else np.int64
        pprev = tl.prev[perm]
        self.prev = np.where(pprev >= 0, pos[np.maximum(pprev, 0)], -1).astype(itype)
        self.next = np.full(n, -1, itype)
        linked = np.flatnonzero(self.prev >= 0)
        self.next[self.prev[linked]] = linked
        self.game_order = np.argsort(tl.node_time[tl.game_a], kind="stable")
        self.ga = pos[tl.game_a[self.game_order]].astype(itype)
        self.gb = pos[tl.game_b[self.game_order]].astype(itype)
        self.binof, self.n_bins = _time_bins(tl.node_time[perm], max(1, n // BIN_NODES))
        self.maxiter = 10 * int(math.sqrt(n)) + 200
        self._pattern = None
        #: set once a conjugate-gradient solve was predicted dearer than the fit's sparse factor
        self.use_factor = False
        #: the last Newton run's steps: ("cg", iterations), ("factor", 0) or ("lu", 0)
        self.steps: list[tuple[str, int]] = []

    # ---- the prior's chains, per drift
    def set_prior(self, diag_q: np.ndarray, off_q: np.ndarray) -> None:
        """The prior's chains in the timeline's node order: ``Q``'s diagonal and ``off_q[k] =
        Q[k, prev[k]]``; factorises the coarse system ``W^T Q W`` (once per drift)."""
        self.diag_q_tl, self.off_tl = diag_q, off_q
        self.diag_q = np.ascontiguousarray(diag_q[self.perm])
        self.off = np.ascontiguousarray(off_q[self.perm])
        self._coarse_factor()

    def prior_matrix(self) -> sp.csc_matrix:
        """Q (the prior's chains) as a CSC matrix in the timeline's node order."""
        tl, n = self.tl, self.n
        links = np.flatnonzero(tl.prev >= 0)
        prev = tl.prev[links]
        rows = np.concatenate([np.arange(n), links, prev])
        cols = np.concatenate([np.arange(n), prev, links])
        vals = np.concatenate([self.diag_q_tl, self.off_tl[links], self.off_tl[links]])
        return sp.csc_matrix((vals, (rows, cols)), shape=(n, n))

    def _coarse_factor(self) -> None:
        binof, nb = self.binof, self.n_bins
        while True:
            linked = np.flatnonzero(self.prev >= 0)
            bk, bp = binof[linked], binof[self.prev[linked]]
            rows = np.concatenate([binof, bk, bp])
            cols = np.concatenate([binof, bp, bk])
            vals = np.concatenate([self.diag_q, self.off[linked], self.off[linked]])
            E = sp.csc_matrix((vals, (rows, cols)), shape=(nb, nb))
            E.sum_duplicates()
            indptr, indices = E.indptr.astype(np.int64), E.indices.astype(np.int64)
            order = np.ascontiguousarray(reverse_cuthill_mckee(E.tocsr(), symmetric_mode=True), dtype=np.int64)
            pos = np.empty(nb, np.int64)
            pos[order] = np.arange(nb)
            # the coarse factor must stay small beside the chains: at most about n entries
            parent, counts, ok = _fill_counts(indptr, indices, order, pos, math.inf if nb <= 16 else
                                              float(max(self.n, 1000)))
            if ok:
                colptr, rowind = _fill_pattern(indptr, indices, order, pos, parent, counts)
                L, d, ok = _ldl_numeric(indptr, indices, E.data, order, pos, colptr, rowind)
                if ok or nb == 1:
                    break
            # fewer, wider bins (pairs of neighbouring bins merged)
            binof = (binof // 2).astype(binof.dtype)
            nb = (nb + 1) // 2
        self.binof, self.n_bins = binof, nb
        self.coarse = (colptr, rowind, L, d, order)
        # where each bin's nodes (time order) and games (sorted by time) start
        self.bin_nodes = np.r_[0, np.cumsum(np.bincount(binof, minlength=nb))].astype(np.int64)
        self.bin_games = np.r_[0, np.cumsum(np.bincount(binof[self.ga], minlength=nb))].astype(np.int64)

    # ---- one Newton step
    def curvature(self, kappa: np.ndarray) -> np.ndarray:
        """The diagonal of H in the timeline's node order: the prior's plus each game's curvature
        on both its nodes."""
        n = self.n
        return self.diag_q_tl + np.bincount(self.tl.game_a, kappa, n) + np.bincount(self.tl.game_b, kappa, n)

    def solve_cg(self, kappa: np.ndarray, b: np.ndarray, diag: np.ndarray | None = None):
        """``dx`` with ``H dx = b`` by deflated, chain-preconditioned conjugate gradients: returns
        ``dx`` (the timeline's node order), the iterations and whether CG converged."""
        if diag is None:
            diag = self.curvature(kappa)
        x, it, ok = _dpcg(np.ascontiguousarray(diag[self.perm]), self.diag_q, self.off, self.prev, self.next,
                          self.ga, self.gb, np.ascontiguousarray(kappa[self.game_order]), self.binof, self.bin_nodes,
                          self.bin_games, *self.coarse, np.ascontiguousarray(b[self.perm]), CG_RTOL, self.maxiter)
        out = np.empty(self.n)
        out[self.perm] = x
        return out, int(it), bool(ok)

    def hessian(self, kappa: np.ndarray, diag: np.ndarray | None = None) -> sp.csc_matrix:
        """H as a CSC matrix (sorted indices), filled into the timeline's fixed pattern."""
        tl = self.tl
        if self._pattern is None:
            n = self.n
            links = np.flatnonzero(tl.prev >= 0)
            indptr, indices, _ = _structure(tl)
            nodes = np.arange(n)

            def where(r, c):
                return _positions(indptr, indices, np.ascontiguousarray(r, dtype=np.int64),
                                  np.ascontiguousarray(c, dtype=np.int64))

            ga, gb = tl.game_a, tl.game_b
            self._pattern = (indptr, indices, where(nodes, nodes), links, where(links, tl.prev[links]),
                             where(tl.prev[links], links), where(ga, gb), where(gb, ga))
        indptr, indices, at_diag, links, at_lo, at_hi, at_ab, at_ba = self._pattern
        if diag is None:
            diag = self.curvature(kappa)
        nnz = indices.size
        data = np.zeros(nnz)
        data[at_diag] = diag
        data[at_lo] = self.off_tl[links]
        data[at_hi] = self.off_tl[links]
        data -= np.bincount(at_ab, kappa, nnz) + np.bincount(at_ba, kappa, nnz)
        return sp.csc_matrix((data, indices, indptr), shape=(self.n, self.n))
