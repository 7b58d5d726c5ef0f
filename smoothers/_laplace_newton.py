r"""Newton's method to the Laplace smoother's posterior mode: the prior as chains, the objective
(minus the log posterior), the Newton loop with its backtracking line search, and each step's
linear solve -- a sparse LU below ``smoothers._chains.CG_FROM`` nodes, else deflated conjugate
gradients (:class:`smoothers._newton_system.NewtonSystem`), or the fit's sparse factor once CG is
predicted to cost more (:data:`CG_FLOPS_PER_ITEM`). The equations are in :mod:`smoothers.laplace`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.sparse as sp

from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel

from . import _chains
from ._newton_system import CG_RTOL, NewtonSystem
from ._sparse import SparsePlan
from .base import Timeline

__all__ = ["NewtonMode", "CG_FLOPS_PER_ITEM"]

#: Newton's steps switch from conjugate gradients to the sparse factor (when the fit has one) once
#: a CG solve is predicted to cost more: ``iterations * (nodes + games) * CG_FLOPS_PER_ITEM >
#: sum_j c_j^2`` (in the numeric factor's multiply-adds: one CG iteration costs about as much as
#: ten of them per node and game).
CG_FLOPS_PER_ITEM = 10.0


def _loglik(model: SkillModel, games: Games, diff: np.ndarray) -> float:
    """``sum_g w_g l(y_g | d_g)``: each game's record (``score``, and ``score_a``, ``score_b`` for
    the observations that read them) scored by the model's observation at ``diff``."""
    return float(np.sum(games.weight * model.loglik(games.score, diff, 0.0, games.score_a, games.score_b)))


class NewtonMode:
    """The Newton half of :class:`smoothers.laplace.LaplaceSmoother` (a base class of it): the
    prior, the objective, and Newton's method to the mode, which reads the smoother's ``max_iter``,
    ``tol`` and ``_report``."""

    def _prior(self, tl: Timeline, model: SkillModel):
        """The prior's energy ``1/2 x^T Q x - lin^T x + const`` (minus its log density, without
        the normalising terms): Q (sparse), lin, const, and log det Q."""
        diag, off, lin, const, logdet = self._prior_chains(tl, model)
        n = tl.n_nodes
        links = np.flatnonzero(tl.prev >= 0)
        prev = tl.prev[links]
        rows = np.concatenate([np.arange(n), links, prev])
        cols = np.concatenate([np.arange(n), prev, links])
        vals = np.concatenate([diag, off[links], off[links]])
        Q = sp.csc_matrix((vals, (rows, cols)), shape=(n, n))
        return Q, lin, const, logdet

    def _prior_chains(self, tl: Timeline, model: SkillModel):
        """The prior as chains: Q's diagonal, ``off[k] = Q[k, prev[k]]`` (0 at first nodes), and
        lin, const, log det Q of :meth:`_prior`."""
        first = tl.prev < 0
        n = tl.n_nodes
        prec0 = 1.0 / model.prior_var if model.prior_var > 0 else 1e-12
        diag = np.where(first, prec0, 0.0)
        links = np.flatnonzero(~first)
        prev = tl.prev[links]
        phi, q = model.transition(tl.dt[links])
        w = 1.0 / q
        diag[links] += w  # each node has at most one link to its previous node and one from its next
        diag[prev] += phi * phi * w
        off = np.zeros(n)
        off[links] = -phi * w
        lin = np.where(first, prec0 * model.prior_mean, 0.0)
        # the transition's mean, mu + phi (x_prev - mu) = phi x_prev + shift, is affine in the
        # nodes: the shift (0 for the random walk) enters the linear and constant terms
        shift = model.prior_mean * (1.0 - phi)
        lin[links] += w * shift
        lin[prev] += -phi * w * shift
        const = (0.5 * model.prior_mean**2 * float(first.sum()) / max(model.prior_var, 1e-300)
                 + 0.5 * float(np.sum(w * shift * shift)))
        logdet = float(first.sum() * math.log(prec0) + np.sum(np.log(w)))
        return diag, off, lin, const, logdet

    def _objective(self, games, tl, model, Q, lin, x) -> float:
        """Negative log posterior (up to a constant), each game's log-likelihood weighted."""
        d = x[tl.game_a] - x[tl.game_b] + model.home * (~games.neutral)
        return -_loglik(model, games, d) + 0.5 * x @ (Q @ x) - lin @ x

    def _mode(self, games, tl, model, x, system: "NewtonSystem | None" = None, plan: "SparsePlan | None" = None):
        """Newton's method to the posterior mode from ``x``: the mode, the Hessian there and the
        number of steps (``system``, the timeline's :class:`NewtonSystem`, and ``plan``, the
        sparse factor's, are built once per fit and shared by every drift of a type-II search)."""
        if system is None:
            system = NewtonSystem(tl)
        diag_q, off_q, lin, _, _ = self._prior_chains(tl, model)
        system.set_prior(diag_q, off_q)
        Q = system.prior_matrix()
        n = tl.n_nodes
        ga, gb = tl.game_a, tl.game_b
        home = model.home * (~games.neutral)
        score = games.score.astype(float)
        score_a, score_b = games.score_a, games.score_b
        weight = games.weight
        E = self._objective(games, tl, model, Q, lin, x)
        it = 0
        system.steps = []
        for it in range(1, self.max_iter + 1):
            d = x[ga] - x[gb] + home
            g, h = model.loglik_derivs(score, d, score_a, score_b)
            g = weight * g
            kappa = weight * np.maximum(-h, 0.0)
            grad = Q @ x - lin - np.bincount(ga, g, n) + np.bincount(gb, g, n)
            step = -self._newton_step(system, plan, kappa, grad)
            # backtracking: accept the largest of 1, 1/2, ... that lowers the objective
            a = 1.0
            for _ in range(30):
                x_new = x + a * step
                E_new = self._objective(games, tl, model, Q, lin, x_new)
                if E_new <= E + 1e-12 * abs(E):
                    break
                a *= 0.5
            x, E = x_new, E_new
            moved = float(np.max(np.abs(a * step))) if n else 0.0
            self._report(f"Newton step {it}: largest move {moved:.3g} (stops below {self.tol * model.scale:.3g}), "
                         f"{system.steps[-1][0]}" + (f", {system.steps[-1][1]} CG iterations"
                                                     if system.steps[-1][0] == "cg" else ""))
            if moved <= self.tol * model.scale:
                break
        else:
            warnings.warn(f"LaplaceSmoother: Newton did not converge in {self.max_iter} iterations", RuntimeWarning,
                          stacklevel=3)
        # Hessian at the final mode
        d = x[ga] - x[gb] + home
        _, h = model.loglik_derivs(score, d, score_a, score_b)
        H = system.hessian(weight * np.maximum(-h, 0.0))
        return x, H, it

    def _newton_step(self, system: NewtonSystem, plan: "SparsePlan | None", kappa, grad) -> np.ndarray:
        """``H^-1 grad``: a sparse LU below ``smoothers._chains.CG_FROM`` nodes; else deflated,
        chain-preconditioned conjugate gradients (:class:`NewtonSystem`), or the fit's sparse
        factor (numeric pass only: the plan's order and pattern serve every step) once CG is
        predicted to cost more than it, or should CG stall."""
        n = system.n
        if n < _chains.CG_FROM:
            system.steps.append(("lu", 0))
            return _chains.solve(system.hessian(kappa), grad)
        if plan is not None and system.use_factor:
            factor = plan.factor(system.hessian(kappa))
            if factor is not None:
                system.steps.append(("factor", 0))
                return factor.solve(grad)
        dx, iters, ok = system.solve_cg(kappa, grad)
        system.steps.append(("cg", iters))
        if plan is not None and iters * (n + system.ga.size) * CG_FLOPS_PER_ITEM > plan.flops:
            system.use_factor = True  # cheaper from the next step on (and for the other drifts)
        if ok:
            return dx
        if plan is not None:
            factor = plan.factor(system.hessian(kappa))
            if factor is not None:
                system.use_factor = True
                return factor.solve(grad)
        if n <= _chains.DIRECT_LIMIT:
            return _chains.solve(system.hessian(kappa), grad)
        warnings.warn(f"LaplaceSmoother: conjugate gradients stopped before {CG_RTOL:g} after {iters} iterations",
                      RuntimeWarning, stacklevel=4)
        return dx
