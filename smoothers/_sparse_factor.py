r"""The numeric sparse factor of a Hessian, its solves and its selected inverse; the dense factor
of small fits.

``H[order][:, order] = L D L^T`` on the symbolic pattern of a :class:`smoothers._sparse.SparsePlan`:
a left-looking numeric pass (Davis 2006, *Direct Methods for Sparse Linear Systems*, ch. 4). The
*selected inverse* (Takahashi, Fox & Wang 1973; Erisman & Tinney 1975; as INLA uses it, Rue &
Martino 2007) then gives every entry of ``H^-1`` on the pattern of ``L + L^T`` -- every marginal
variance and every node's covariance with its chain neighbours -- and ``log det H = sum log D``.
Other covariances (forecasts) are ``y_i^T D^-1 y_j`` with ``y = L^-1 e``, one sparse forward solve
per node along its path in the elimination tree (:class:`SparseCovariance`). Small fits use
LAPACK's dense Cholesky instead (:class:`DenseFactor`).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from scipy.linalg import lapack

__all__ = ["DenseFactor", "SparseFactor", "SparseCovariance", "ldl_numeric", "ordered_ldl_solve"]


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


@njit(cache=True)
def ldl_numeric(indptr, indices, data, order, pos, colptr, rowind):
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
def ordered_ldl_solve(colptr, rowind, L, d, order, b):
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


class SparseFactor:
    """``H[order][:, order] = L D L^T``: log det H, the selected inverse, and solves (``plan``: the
    :class:`smoothers._sparse.SparsePlan` whose order and pattern the factor has)."""

    def __init__(self, plan, L: np.ndarray, d: np.ndarray):
        self.plan, self.L, self.d = plan, L, d
        self.logdet = float(np.sum(np.log(d)))

    def solve(self, b: np.ndarray) -> np.ndarray:
        """``x`` with ``H x = b``."""
        p = self.plan
        return ordered_ldl_solve(p.colptr, p.rowind, self.L, self.d, p.order, np.ascontiguousarray(b, dtype=float))

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
