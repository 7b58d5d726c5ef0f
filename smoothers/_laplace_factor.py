r"""The factor of the Laplace smoother's Hessian at the mode, and what it gives: the sparse
factor's plan within its budget (kept across a walk-forward's refits), the marginal variances and
covariances (dense inverse, selected inverse, or the per-competitor blocks), and the Laplace
approximation of the log evidence. The equations are in :mod:`smoothers.laplace`.
"""

from __future__ import annotations

import math

import numpy as np

from . import _chains
from ._sparse import SparsePlan, hessian_pattern
from ._sparse_factor import DenseFactor, SparseCovariance, SparseFactor
from .base import SmootherFit, Timeline

__all__ = ["FactorAtMode", "earlier_nodes"]

# The budget of variances="auto" for the sparse L D L^T factor and its selected inverse, in the column counts c_j
# of L (strictly below the diagonal): both passes cost about sum_j c_j^2 multiply-adds and hold nnz(L) entries
# (L, the selected inverse and their row indices: 24 bytes each). docs/smoothers.md has what they cost on real data.
_FACTOR_FLOPS = 1e9
_FACTOR_NNZ = 2e7


def earlier_nodes(fit: SmootherFit, tl: Timeline):
    """For each node of ``tl``, the node of ``fit`` of the same competitor at or before its time
    (-1: none; a static fit's only node at any time: :meth:`SmootherFit._node_at`), and whether
    that node is at the same time (the same node; never in a static fit)."""
    node = fit._node_at(fit._ids(tl.players)[tl.node_player], tl.node_time)
    exact = node >= 0
    if fit.static:
        exact[:] = False
    else:
        exact[exact] = fit.timeline.node_time[node[exact]] == tl.node_time[exact]
    return node, exact


class FactorAtMode:
    """The variances half of :class:`smoothers.laplace.LaplaceSmoother` (a base class of it): the
    factor of H at the mode, its plan and budget, the variances and the log evidence, which read
    the smoother's ``variances`` and ``dense_cov_limit`` and the prior and objective of
    :class:`smoothers._laplace_newton.NewtonMode`."""

    def _dense(self, tl: Timeline) -> bool:
        """Whether the final fit's covariance is formed densely (small fits)."""
        return self.variances != "blocks" and tl.n_nodes <= self.dense_cov_limit

    def _plan(self, tl: Timeline, warm: SmootherFit | None = None) -> "SparsePlan | None":
        """The sparse factorisation's order and symbolic pattern, if it is to be used: ``None``
        for the per-competitor blocks, or when the factor is over the budget (``"auto"``; and
        always for small fits, which have the dense factor to fall back on). A refit warm-started
        from a fit on part of the same history keeps that fit's order (:meth:`_kept_plan`)."""
        if self.variances == "blocks":
            return None
        budget = self._budget(tl)
        kept = self._kept_plan(tl, warm, budget)
        if kept is not False:
            return kept
        return SparsePlan.build(tl, *budget)

    def _budget(self, tl: Timeline) -> tuple[float, float]:
        """The sparse factor's budget (``sum c_j^2``, entries): none with ``variances="exact"``."""
        if self.variances == "exact" and not self._dense(tl):
            return math.inf, math.inf
        return _FACTOR_FLOPS, _FACTOR_NNZ

    def _kept_plan(self, tl: Timeline, warm: SmootherFit | None, budget: tuple[float, float]):
        """The plan of a refit on a grown history (walk-forward: ``fit(more_games, warm_start=
        fit)``), from the warm start's: its order, with the new nodes after the old ones in time
        order, kept while its factor stays within the budget and within twice the old one's
        cost per node (else ``False``: order afresh). If the warm start's factor was over the
        budget and its graph (nodes, links, games' pairs of nodes) is part of this one, this one
        is over it too (``None``) without ordering again. ``False`` when there is nothing to
        keep."""
        kept = getattr(warm, "_laplace_plan", None)
        if kept is None or kept[1] != budget:
            return False
        old_plan, old = kept[0], warm.timeline
        old_node, exact = earlier_nodes(warm, tl)
        new_of_old = np.full(old.n_nodes, -1, np.int64)
        new_of_old[old_node[exact]] = np.flatnonzero(exact)
        if old.n_nodes == 0 or np.any(new_of_old < 0):
            return False  # not a grown history: some old node is gone
        if old_plan is None:
            linked = np.flatnonzero(old.prev >= 0)
            if np.any(tl.prev[new_of_old[linked]] != new_of_old[old.prev[linked]]):
                return False  # a new node between two old ones: not the old graph plus more
            n = tl.n_nodes
            a, b = new_of_old[old.game_a], new_of_old[old.game_b]
            pairs = np.minimum(tl.game_a, tl.game_b) * n + np.maximum(tl.game_a, tl.game_b)
            if not np.all(np.isin(np.minimum(a, b) * n + np.maximum(a, b), pairs)):
                return False
            return None
        # the new nodes (the latest times, mostly) go after the old ones, or before them (in
        # reverse time order) where the old order has the latest times first, as reverse
        # Cuthill-McKee may: whichever fills less
        fresh = np.flatnonzero(~exact)
        fresh = fresh[np.lexsort((tl.node_player[fresh], tl.node_time[fresh]))]
        kept_order = new_of_old[old_plan.order]
        name = old_plan.ordering if old_plan.ordering.endswith("kept") else f"{old_plan.ordering}, kept"
        structure = hessian_pattern(tl)
        best = None
        for order in (np.concatenate([kept_order, fresh]), np.concatenate([fresh[::-1], kept_order])):
            plan = SparsePlan.from_order(tl, order, name, *budget, structure=structure)
            if plan is not None and (best is None or plan.flops < best.flops):
                best = plan
        if best is None or best.flops > max(2.0 * old_plan.flops * tl.n_nodes / old.n_nodes, 1e6):
            return False
        return best

    def _factor(self, tl: Timeline, H, plan: "SparsePlan | None"):
        """The factor of H that the variances and log det H come from: the sparse one if planned,
        else the dense Cholesky factor for a small fit, else ``None`` (the blocks)."""
        if plan is not None:
            factor = plan.factor(H)
            if factor is not None:
                return factor
        if self._dense(tl):
            return DenseFactor(H)
        return None

    def _variances(self, tl: Timeline, H, factor: "DenseFactor | SparseFactor | None"):
        """Marginal variances, the covariance (an array, a :class:`SparseCovariance` or ``None``),
        each node's covariance with its previous node (NaN for first nodes) and which method."""
        n = tl.n_nodes
        linked = np.flatnonzero(tl.prev >= 0)
        prev_cov = np.full(n, np.nan)
        if isinstance(factor, DenseFactor):
            cov = factor.inverse()
            prev_cov[linked] = cov[linked, tl.prev[linked]]
            return np.diag(cov).copy(), cov, prev_cov, "dense"
        if factor is not None:
            var, prev_cov[linked] = factor.selected_inverse(linked, tl.prev[linked])
            return var, SparseCovariance(factor, var), prev_cov, "selected inverse"
        # per-competitor blocks: tridiagonal (the chain plus the games' curvature on the diagonal)
        diag, off, link = _chains.chains(H, tl.prev)
        var = _chains.tridiagonal_inverse_diag(diag, off, link)
        d, l = _chains.chain_factor(diag, off, link)
        # in a chain's L D L^T the previous node's column holds only l_k: Z[k, k-1] = -l_k Z[k, k]
        prev_cov[linked] = -l[linked] * var[linked]
        return var, None, prev_cov, "blocks"

    def _log_evidence(self, games, tl, model, x, H, factor: "DenseFactor | SparseFactor | None") -> float:
        Q, lin, prior_const, logdet_q = self._prior(tl, model)
        E = self._objective(games, tl, model, Q, lin, x)
        logdet_h = _chains.logdet(H, tl.prev, factor)  # exact, or the per-competitor blocks' as the variances
        return -E - prior_const + 0.5 * logdet_q - 0.5 * logdet_h
