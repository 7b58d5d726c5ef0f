r"""Two skills per competitor (attack and defence, :attr:`statespace.SkillModel.two_skills`) in the
Laplace smoother: the posterior mode of every node's skill :math:`s` and openness :math:`o`, and
their marginal variances.

Each competitor's nodes carry both: the skills' chain is the one-skill model's (prior
:math:`\mathcal N(\mu_0, \sigma_0^2)`, the transition of ``drift`` and ``reversion``), the openness's a
chain of its own on the same nodes (prior :math:`\mathcal N(0,` ``openness_var`` :math:`)`, the
transition of ``openness_drift`` pulled towards 0 at the same rate: the EKF's model). A game
observes :math:`d = s_a - s_b + h` and :math:`e = o_a + o_b` through the log-rates
:math:`\eta_0 + (e \pm d) / (2\alpha)`. Newton's method minimises

.. math::

    \mathcal E(x) = -\sum_g w_g\, \ell_g(d_g, e_g) + \tfrac12 x^\top Q x - \mathrm{lin}^\top x

over :math:`x = (s, o)`, :math:`Q` the two chains' prior precision (block diagonal), each step's
Hessian :math:`Q` plus, per game, :math:`\kappa_{dd}` on the pairs of :math:`d` (as one skill),
:math:`\kappa_{ee} = \kappa_{dd}` on those of :math:`e` (``+`` between :math:`o_a` and :math:`o_b`) and
:math:`\kappa_{de}` between them (the counts' own law makes the 2 x 2 curvature positive
semi-definite; the derivatives are :meth:`statespace.Goals.two_skill_loglik`), with the same
backtracking line search. Its linear solves: the sparse :math:`L D L^\top` factor of the doubled
node graph (:class:`smoothers._sparse.SparsePlan` over a timeline whose "games" are the six node
pairs each game couples) within the smoother's budget, else SuperLU. Variances: the dense
inverse up to ``dense_cov_limit`` nodes (both skills counted), else the selected inverse of the
factor, else each chain's own block (the smoother's ``"blocks"``, understated).

An ``openness_var`` or ``openness_drift`` of 0 is a variance of :data:`TIED` scale^2 here (the
chains' precisions are finite). The drift is fixed (``drift="auto"``, its evidence, is refused).
Forecasts plug the openness's mean into the game's base and integrate the skill difference's
uncertainty (as the EKF does).
"""

from __future__ import annotations

import dataclasses
import time
import warnings

import numpy as np
import pandas as pd
import scipy.sparse as sp

from statespace.data.games import Games
from statespace.model.ranges import check_results
from statespace.model.skillmodel import SkillModel

from . import _chains
from ._laplace_factor import _FACTOR_FLOPS, _FACTOR_NNZ, earlier_nodes
from ._sparse import SparsePlan
from ._sparse_factor import DenseFactor, SparseCovariance
from .base import SmootherFit, Timeline, _RESULTS_HINT

__all__ = ["fit_two_skills", "TwoSkillFit", "openness_model", "TIED"]

#: The variance (in scale^2) that stands for an openness known exactly (``openness_var = 0``) or a
#: link that does not move (``openness_drift = 0``): a sd of a millionth of the scale, far below
#: anything a game can tell, with a precision that keeps the Hessian's condition number finite.
TIED = 1e-12


def openness_model(model: SkillModel) -> SkillModel:
    """The openness's chain as a one-skill model: prior ``N(0, openness_var)``, drift
    ``openness_drift`` (each at least :data:`TIED` scale^2), the skills' reversion."""
    tied = TIED * model.scale**2
    return dataclasses.replace(model, prior_mean=0.0, prior_var=max(model.openness_var, tied),
                               drift=max(model.openness_drift, tied), home=0.0, openness_var=0.0, openness_drift=0.0)


def _doubled(tl: Timeline) -> Timeline:
    """The node graph of ``x = (s, o)``: both chains, and each game's six coupled pairs."""
    n = tl.n_nodes
    ga, gb = tl.game_a, tl.game_b
    return Timeline(np.concatenate([tl.players, tl.players]),
                    np.concatenate([tl.node_player, tl.node_player + tl.players.size]),
                    np.concatenate([tl.node_time, tl.node_time]),
                    np.concatenate([tl.prev, np.where(tl.prev >= 0, tl.prev + n, -1)]),
                    np.concatenate([tl.dt, tl.dt]),
                    np.concatenate([ga, ga + n, ga, ga, gb, gb]),
                    np.concatenate([gb, gb + n, ga + n, gb + n, ga + n, gb + n]))


class _Problem:
    """The objective, gradient and Hessian of one fit (the prior's chains built once)."""

    def __init__(self, smoother, games: Games, tl: Timeline, model: SkillModel):
        self.tl, self.model, self.games = tl, model, games
        self.n = n = tl.n_nodes
        chains_ = [smoother._prior_chains(tl, m) for m in (model, openness_model(model))]
        diag = np.concatenate([c[0] for c in chains_])
        off = np.concatenate([c[1] for c in chains_])
        self.lin = np.concatenate([c[2] for c in chains_])
        prev = np.concatenate([tl.prev, np.where(tl.prev >= 0, tl.prev + n, -1)])
        links = np.flatnonzero(prev >= 0)
        rows = np.concatenate([np.arange(2 * n), links, prev[links]])
        cols = np.concatenate([np.arange(2 * n), prev[links], links])
        self.Q = sp.csc_matrix((np.concatenate([diag, off[links], off[links]]), (rows, cols)), shape=(2 * n, 2 * n))
        self.diag_q, self.off_q, self.linked = diag, off, np.r_[False, prev[1:] == np.arange(2 * n - 1)]
        ga, gb = tl.game_a, tl.game_b
        self.pairs = (np.concatenate([ga, gb, ga, gb, ga + n, gb + n, ga + n, gb + n, ga, ga, gb, gb, ga + n, gb + n, ga + n, gb + n]),
                      np.concatenate([ga, gb, gb, ga, ga + n, gb + n, gb + n, ga + n, ga + n, gb + n, ga + n, gb + n, ga, ga, gb, gb]))
        self.home = model.home * (~games.neutral)
        self.obs = model.observation

    def terms(self, x):
        """Each game's ``(l, g_d, g_e, h_dd, h_de)`` at ``x``."""
        n, tl = self.n, self.tl
        d = x[tl.game_a] - x[tl.game_b] + self.home
        e = x[n + tl.game_a] + x[n + tl.game_b]
        return self.obs.two_skill_loglik(d, e, self.games.score_a, self.games.score_b, scale=self.model.scale)

    def energy(self, x):
        """The objective at ``x`` and the games' terms there (which :meth:`gradient_hessian` reuses)."""
        t = self.terms(x)
        return float(-np.sum(self.games.weight * t[:, 0]) + 0.5 * x @ (self.Q @ x) - self.lin @ x), t

    def gradient_hessian(self, x, t):
        """The objective's gradient and Hessian at ``x``, from the games' terms ``t`` there."""
        n, tl, w = self.n, self.tl, self.games.weight
        gd, ge = w * t[:, 1], w * t[:, 2]
        ga, gb = tl.game_a, tl.game_b
        lik = np.concatenate([np.bincount(ga, gd, n) - np.bincount(gb, gd, n),
                              np.bincount(ga, ge, n) + np.bincount(gb, ge, n)])
        grad = self.Q @ x - self.lin - lik
        kdd = w * np.maximum(-t[:, 3], 0.0)
        kde = np.clip(-w * t[:, 4], -kdd, kdd)  # kappa_ee = kappa_dd: |kappa_de| <= kappa_dd keeps it PSD
        vals = np.concatenate([kdd, kdd, -kdd, -kdd, kdd, kdd, kdd, kdd, kde, kde, -kde, -kde, kde, kde, -kde, -kde])
        H = self.Q + sp.csc_matrix((vals, self.pairs), shape=(2 * n, 2 * n))
        return grad, H


def _solver(smoother, tl: Timeline):
    """The sparse factor's plan for the doubled graph within the smoother's budget (or None)."""
    if smoother.variances == "blocks" or 2 * tl.n_nodes < _chains.CG_FROM:
        return None
    return SparsePlan.build(_doubled(tl), _FACTOR_FLOPS, _FACTOR_NNZ)


def fit_two_skills(smoother, games: Games, tl: Timeline, warm_start, t0: float) -> "TwoSkillFit":
    """The posterior mode and marginal variances of both skills of every node (the module's
    equations); ``smoother`` a :class:`smoothers.laplace.LaplaceSmoother`."""
    model = smoother.skill_model
    prob = _Problem(smoother, games, tl, model)
    n = tl.n_nodes
    x = np.concatenate([np.full(n, model.prior_mean), np.zeros(n)])
    if isinstance(warm_start, TwoSkillFit):
        node, _ = earlier_nodes(warm_start, tl)
        have = node >= 0
        x[:n][have] = warm_start.mean[node[have]]
        x[n:][have] = warm_start.open_mean[node[have]]
    plan = _solver(smoother, tl)
    E, t = prob.energy(x)
    it = 0
    for it in range(1, smoother.max_iter + 1):
        grad, H = prob.gradient_hessian(x, t)
        factor = plan.factor(H) if plan is not None else None
        step = -(factor.solve(grad) if factor is not None else _chains.solve(H, grad))
        a = 1.0
        for _ in range(30):  # backtracking: the largest of 1, 1/2, ... that lowers the objective
            x_new = x + a * step
            E_new, t_new = prob.energy(x_new)
            if E_new <= E + 1e-12 * abs(E):
                break
            a *= 0.5
        x, E, t = x_new, E_new, t_new
        moved = float(np.max(np.abs(a * step))) if n else 0.0
        smoother._report(f"Newton step {it}: largest move {moved:.3g} (stops below {smoother.tol * model.scale:.3g})")
        if moved <= smoother.tol * model.scale:
            break
    else:
        warnings.warn(f"LaplaceSmoother: Newton did not converge in {smoother.max_iter} iterations", RuntimeWarning,
                      stacklevel=4)
    _, H = prob.gradient_hessian(x, t)
    smoother._report("variances")
    var, cov, how = _variances(smoother, prob, H, plan)
    info = {"iterations": it, "variances": how, "exact_variance": how != "blocks", "n_nodes": n, "two_skills": True,
            "log_evidence": float("nan"), "seconds": time.perf_counter() - t0, "drift": model.drift}
    return TwoSkillFit(smoother, games, tl, x[:n], var[:n], model, smoother.times, x[n:], var[n:], info=info,
                       cov=cov, static=smoother._static(model))


def _variances(smoother, prob: _Problem, H, plan):
    """The marginal variances of every node's two skills, their covariance (dense, a
    :class:`SparseCovariance`, or None with the blocks; the skills' nodes first) and how they were
    computed."""
    if smoother.variances != "blocks" and H.shape[0] <= smoother.dense_cov_limit:
        cov = DenseFactor(H).inverse()
        return np.diag(cov).copy(), cov, "dense"
    if plan is not None and smoother.variances != "blocks":
        factor = plan.factor(H)
        if factor is not None:
            none = np.zeros(0, np.int64)
            var = factor.selected_inverse(none, none)[0]
            return var, SparseCovariance(factor, var), "selected inverse"
    # each chain's own block: H's diagonal with the chains' links (WHR's approximation)
    return _chains.tridiagonal_inverse_diag(np.asarray(H.diagonal()), prob.off_q, prob.linked), None, "blocks"


class TwoSkillFit(SmootherFit):
    """A Laplace fit with two skills per competitor: the skills' nodes as a one-skill fit
    (``mean``, ``var``) and the openness's (``open_mean``, ``open_var``); ``cov`` the covariance of
    all ``2 n`` of them, the skills' first (or None with the blocks); ratings and trajectories
    add ``openness`` (attack minus defence), its sd, ``attack`` and ``defence``; forecasts plug each
    game's mean openness into its base (:meth:`statespace.Goals.proba_shifted`). The skill
    difference's moments alone do not give a forecast: :meth:`predict_diff` raises."""

    def __init__(self, method, games, tl, mean, var, model, times_fn, open_mean, open_var, info=None, cov=None,
                 static=False):
        super().__init__(method, games, tl, mean, var, model, times_fn, info=info, cov=cov, static=static)
        self.open_mean = np.asarray(open_mean, dtype=float)
        self.open_var = np.asarray(open_var, dtype=float)
        self.openness_model = openness_model(model)
        check_results(getattr(method, "name", "smoother"), tl.players[tl.node_player], self.open_mean,
                      np.sqrt(np.maximum(self.open_var, 0.0)), alpha=model.scale, centre=0.0, hint=_RESULTS_HINT)

    def _open_moments(self, node, t):
        m = self.openness_model
        have = node >= 0
        mean = np.where(have, self.open_mean[np.maximum(node, 0)], 0.0)
        var = np.where(have, self.open_var[np.maximum(node, 0)], self.model.openness_var)
        gap = np.where(have, np.maximum(t - self.timeline.node_time[np.maximum(node, 0)], 0.0), 0.0)
        return m.predict(mean, var, gap)

    def predict_proba(self, games: Games) -> np.ndarray:
        """:meth:`SmootherFit.predict_proba` with each game's goal-rate shift, the two sides' mean
        openness at its time."""
        self._warn_seen(games, "predict_proba")
        d, var = SmootherFit._predict_diff(self, games)  # with the two nodes' covariance where the fit has it
        t, na, nb = self._game_nodes(games)
        e = self._open_moments(na, t)[0] + self._open_moments(nb, t)[0]
        return self.model.observation.proba_shifted(d, var, e, scale=self.model.scale)

    def _predict_diff(self, games: Games):
        raise NotImplementedError(f"{getattr(self.method, 'name', 'smoother')}: with two skills per competitor "
                                  f"(attack and defence) a forecast reads the game's goal-rate shift as well as the "
                                  f"skill difference, so the difference's moments alone do not give it")

    def ratings(self, at=None, *, centre: bool = False, level: float = 0.9):
        """:meth:`SmootherFit.ratings` with ``openness``, ``openness_sd``, ``attack`` and ``defence``
        (``attack = (mean - prior_mean + openness) / 2``, ``defence = (mean - prior_mean - openness) / 2``,
        at the same nodes; with ``centre`` the mean less the average over competitors in place of ``prior_mean``)."""
        board = super().ratings(at, centre=centre, level=level)
        tl = self.timeline
        ids = np.arange(tl.players.size)
        if at is None:
            node, t = self._last, tl.node_time[self._last]
        else:
            t = np.full(ids.size, float(self._times_at(at)))
            node = self._node_at(ids, t)
        om, ov = self._open_moments(node, t)
        mean = self._moments(node, t)[0]
        level = mean - (mean.mean() if centre else self.model.prior_mean)  # as the base class centres
        where = pd.Index(tl.players).get_indexer(board["player"])
        board["openness"] = om[where]
        board["openness_sd"] = np.sqrt(ov[where])
        board["attack"] = 0.5 * (level + om)[where]
        board["defence"] = 0.5 * (level - om)[where]
        return board

    def trajectories(self, *, centre: bool = False, level: float = 0.9) -> pd.DataFrame:
        """:meth:`SmootherFit.trajectories` with each node's ``openness`` and ``openness_sd``."""
        out = super().trajectories(centre=centre, level=level)
        out["openness"] = self.open_mean
        out["openness_sd"] = np.sqrt(self.open_var)
        return out
