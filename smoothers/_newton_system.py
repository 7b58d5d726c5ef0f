r"""Newton's linear systems of the whole-history Hessian: deflated conjugate gradients, compiled,
in a time-major layout of the nodes, preconditioned by each competitor's chain (Saad, Yeung,
Erhel & Guyomarc'h 2000; Frank & Vuik 2001); :class:`NewtonSystem` also fills each step's Hessian
into its fixed pattern for the sparse LU or the sparse factor (``smoothers._sparse``), which
``smoothers._laplace_newton`` takes instead once CG would cost more.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numba import njit
from scipy.sparse.csgraph import reverse_cuthill_mckee

from ._sparse import fill_counts, fill_pattern, hessian_pattern
from ._sparse_factor import ldl_numeric, ordered_ldl_solve
from .base import Timeline

__all__ = ["NewtonSystem", "CG_RTOL"]

#: Conjugate gradients stop at this relative residual ``|H dx - b| <= CG_RTOL |b|``.
CG_RTOL = 1e-12
#: At most this many time bins in the deflation space, per node (``n // BIN_NODES`` bins).
BIN_NODES = 8


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
        c = ordered_ldl_solve(cptr, crow, cL, cd, corder, s)
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
        mu = ordered_ldl_solve(cptr, crow, cL, cd, corder, t)
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
      gradient iteration streams through the arrays once instead of jumping across them (in the
      timeline's competitor-major order a sparse product with ``H`` grew dearer per game as the
      history grew).
    - The preconditioner is each competitor's chain (its tridiagonal block with the games'
      curvature on the diagonal, solved exactly); the deflation space is the indicator of every
      time bin (all nodes of a bin moving together), whose coarse system ``W^T H W = W^T Q W``
      does not depend on the games. The chains cannot see that common level (a game between two
      competitors does not move when both move), which only the prior and the random walk pin;
      without the deflation CG's iterations grew with the length of the history, with it they
      stay flat (the counts on the scaling benchmark are in docs/smoothers.md).
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
            parent, counts, ok = fill_counts(indptr, indices, order, pos, math.inf if nb <= 16 else
                                             float(max(self.n, 1000)))
            if ok:
                colptr, rowind = fill_pattern(indptr, indices, order, pos, parent, counts)
                L, d, ok = ldl_numeric(indptr, indices, E.data, order, pos, colptr, rowind)
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
            indptr, indices, _ = hessian_pattern(tl)
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
