r"""The extended Rauch-Tung-Striebel smoother: the EKF forward, then back along the history.

The forward pass is the extended Kalman filter of :mod:`filters.ekf` (the same kernels and run
loops, so the same numbers): after each distinct time at which a competitor plays (a node of
:func:`smoothers.base.timeline`) it gives the *filtered* belief :math:`\mathcal{N}(m_f, P_f)`
(every game up to and including that time), and before it the *predicted* one
:math:`\mathcal{N}(m_p, P_p)`. The backward pass turns them into the *smoothed* belief
:math:`\mathcal{N}(m_s, P_s)` given every game (Rauch, Tung & Striebel 1965, "Maximum likelihood
estimates of linear dynamic systems", AIAA Journal 3(8); Särkkä 2013, *Bayesian Filtering and
Smoothing*, Theorem 8.2 and, for the extended smoother, section 9.1).

**The transition.** Between two times :math:`\Delta t` apart a skill moves by the model's
transition (:meth:`statespace.SkillModel.transition`): :math:`x' = \mu_0 + a (x - \mu_0) + w`,
:math:`w \sim \mathcal{N}(0, Q)`, with :math:`a = 1` and :math:`Q = q\,\Delta t` for the random
walk of drift :math:`q`, and with mean reversion :math:`\lambda > 0`
:math:`a = e^{-\lambda \Delta t}`, :math:`Q = q (1 - a^2) / (2 \lambda)` (:math:`\mu_0` the prior
mean): the Ornstein-Uhlenbeck process :math:`dx = -\lambda (x - \mu_0)\, dt + \sqrt{q}\, dW` solved
over :math:`\Delta t`.

**The backward step** (Särkkä 2013, Theorem 8.2, with :math:`A = a` and the constant
:math:`\mu_0 (1 - a)`). Given the games up to :math:`t`, :math:`x(t)` and :math:`x(t')` at the next
node are jointly Gaussian with :math:`\operatorname{Cov} = P_f a` and
:math:`x(t') \sim \mathcal{N}(m_p, P_p)`, :math:`m_p = \mu_0 + a (m_f - \mu_0)`,
:math:`P_p = a^2 P_f + Q`. Conditioning :math:`x(t)` on :math:`x(t')` gives
:math:`\mathrm{E}[x(t) \mid x(t'), \text{past}] = m_f + C\,(x(t') - m_p)` with the smoother gain
:math:`C = P_f a / P_p`; the later games act on :math:`x(t)` only through :math:`x(t')` (the
Markov property), so averaging over the smoothed :math:`x(t') \sim \mathcal{N}(m_s', P_s')`:

.. math::

    C = \frac{P_f a}{P_p}, \qquad m_s = m_f + C (m_s' - m_p), \qquad P_s = P_f + C^2 (P_s' - P_p),

and the two nodes' smoothed covariance is :math:`C P_s'` (``fit.info["prev_cov"]``). A last node
keeps its filtered belief (:math:`m_s = m_f`). With a Gaussian observation
(:class:`statespace.Margin`) the EKF is the Kalman filter (one Newton step of a quadratic
log-likelihood is exact) and this is the exact posterior of the linear-Gaussian model; otherwise
it is the exact posterior of the model whose games are replaced by the EKF's linearisations at
the forward pass's prior means: the *extended* RTS smoother (Särkkä 2013, Algorithm 9.1), which,
unlike the Laplace smoother, never relinearises at the smoothed means.

**Covariance forms.**

- ``covariance="diagonal"`` (default): the diagonal EKF keeps one variance per competitor and
  drops the correlation a game creates, so each competitor's nodes form their own chain and the
  scalar recursion above runs along every chain independently (compiled; :math:`O(1)` per node).
- ``covariance="full"``: the full-covariance EKF (:mod:`filters.ekf_full`) keeps the joint
  :math:`\mathcal{N}(m, P)` of every competitor seen so far, and the backward pass is the matrix
  form at every distinct time :math:`t_k` of the table (all competitors move by the same
  :math:`a` and :math:`Q` between consecutive times; :math:`S_k` the competitors seen by
  :math:`t_k`, in order of first appearance):

  .. math::

      P_p &= a^2 P_f(k) + Q I, \qquad C_k = a P_f(k) P_p^{-1}, \\
      m_s(k) &= m_f(k) + C_k \bigl(m_s(k+1)[S_k] - m_p\bigr), \\
      P_s(k) &= P_f(k) + C_k \bigl(P_s(k+1)[S_k, S_k] - P_p\bigr) C_k^\top.

  A competitor first seen at :math:`t_{k+1}` is independent of :math:`x(t_k)` a priori, so only
  the rows of :math:`S_k` enter. With ``Margin`` observations this is the exact Kalman smoother.
  The covariance of any two nodes,
  :math:`\operatorname{Cov}\bigl(x_i(t_k), x_j(t_l)\bigr) = (C_k C_{k+1} \cdots C_{l-1} P_s(l))_{ij}`
  for :math:`k < l`, is formed (``fit.cov``) up to ``dense_cov_limit`` nodes and
  :data:`smoothers._rts_full.COV_FLOPS` multiply-adds. Cost: :math:`O(n^2)` per game forward,
  :math:`O(n^3)` per distinct time backward and :math:`\sum_k |S_k|^2` numbers per stored matrix
  (filtered and smoothed beliefs and gains: three of them), refused beyond ``_FULL_BYTES``.

With drift 0 (and no reversion) skills are static: as :class:`smoothers.LaplaceSmoother`, the
fit has one node per competitor (``fit.static``), its belief the EKF's final one (with ``"full"``,
and ``fit.cov`` the final joint covariance).

**Refits** (``fit(games, warm_start=earlier_fit)``): when the earlier fit's games are the first
games of ``games`` in time order (the same records) and every other game comes at a later time
(a later rating period, with periods), the forward pass continues from the stored EKF state over
the new games only, and the backward pass runs from each new chain end (each new distinct time,
with ``"full"``) until the smoothed belief of an earlier node changes by at most ``refit_tol``
(times the model's scale for a mean, relatively for a variance); the earlier nodes keep the
earlier fit's beliefs. For the random walk every gain :math:`C` is below 1, so those differ from
a fit from scratch by less than that tolerance. A refit then costs the forward and backward work
of the new games and a few nodes before them, plus one compiled pass over the nodes: when the two
tables share their competitors' ids (a walk-forward's tables, all taken from one), the timeline
grows from the earlier one (:func:`smoothers.base.extend_timeline`: the old nodes merged with the
new games', no sort of the whole history) and the earlier beliefs are copied to their nodes' new
numbers; otherwise the timeline is built afresh and the earlier nodes found by competitor and
time. Otherwise (another table, games at or before the earlier fit's last time) the fit starts
from scratch; ``fit.info["warm_start"]`` says which happened.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from statespace.data.games import Games
from statespace.model.outcome import Outcome
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges

from ._rts_chains import _carry, _chain_prev_cov, _earlier, _smooth_chains
from ._rts_full import Steps, node_beliefs, record_steps, smooth_steps
from .base import Smoother, SmootherFit, Timeline, extend_timeline, resumable, timeline

__all__ = ["RTSSmoother"]

#: The full form's stored matrices (filtered and smoothed covariances and gains, one of each per
#: distinct time): a fit that would hold more bytes than this is refused.
_FULL_BYTES = 2**30


@dataclass
class _Forward:
    """What a refit continues from: the settings, how many games (the first in time order) were
    filtered, the EKF's state after them, and the filtered beliefs at the nodes (diagonal) or at
    every distinct time (full)."""

    settings: dict
    n_games: int
    state: object
    node_mf: np.ndarray | None = None
    node_vf: np.ndarray | None = None
    steps: Steps | None = None


class RTSSmoother(Smoother):
    r"""The extended Rauch-Tung-Striebel smoother over the EKF's filtered beliefs (see the module
    docstring): the forward pass is :class:`filters.EKF`, the backward pass the RTS recursion.

    Parameters
    ----------
    model:
        The :class:`statespace.SkillModel` (link, scale, prior, drift, draw model, a fixed home
        advantage, mean reversion; an ``Outcome``, ``Margin`` or ``Goals`` observation). Default:
        the EKF's (logistic at Elo scale, prior :math:`\mathcal{N}(1500, 350^2)`, drift 100 per day, draws as half
        a win). A latent home advantage (``home_drift > 0``) and drift 0 with reversion > 0 are
        refused, as by :class:`smoothers.LaplaceSmoother`.
    covariance:
        ``"diagonal"`` (per-competitor chains) or ``"full"`` (the joint smoother; exact with
        ``Margin`` observations).
    drift:
        ``None`` (the model's) or a number replacing the model's drift: a variance per unit of
        time in :math:`[0, (s \alpha)^2]`, :math:`\alpha` the model's scale and :math:`s` =
        :data:`statespace.model.ranges.SD_SCALES`
        (:func:`statespace.model.ranges.variance`).
    iterations, tol:
        The forward pass's Newton steps per game and their tolerance (:class:`filters.EKF`: 1 is
        the EKF, more the iterated EKF), checked by the EKF against its ranges.
    period_days:
        Time unit of the drift when the games have no rating periods (days; numeric times:
        their own unit), checked by the EKF.
    refit_tol:
        Where a warm-started refit stops its backward pass (see the module docstring): a finite
        number >= 0.
    dense_cov_limit:
        With ``"full"``, ``fit.cov`` (every pair of nodes) is formed up to this many nodes (a whole
        number >= 0).
    """

    name = "rts"
    _param_aliases = {"model": "skill_model", "drift": "_drift_arg"}

    def __init__(self, model: SkillModel | None = None, covariance: str = "diagonal", *, drift=None,
                 iterations: int = 1, tol: float = 1e-12, period_days: float = 1.0, refit_tol: float = 1e-12,
                 dense_cov_limit: int = 3000):
        from filters.ekf import DEFAULT_MODEL

        if model is None:
            model = DEFAULT_MODEL
        if not isinstance(model, SkillModel):
            raise TypeError(f"model must be a statespace.SkillModel, got {type(model).__name__}")
        if covariance not in ("diagonal", "full"):
            raise ValueError(f"{self.name}: covariance must be 'diagonal' or 'full', got {covariance!r} (the "
                             f"scalar EKF keeps no variance to smooth)")
        if drift is not None:
            model = dataclasses.replace(model, drift=ranges.variance(self.name, "drift", drift, model.scale))
        model.refuse_ekf_only(self.name)
        if model.home_drift > 0:
            raise ValueError(f"{self.name}: the model has a latent, drifting home advantage (home_drift="
                             f"{model.home_drift!r}), which the smoother does not smooth: give home_drift=0 (a "
                             f"fixed home advantage), or filter the drifting one with the EKF")
        if model.drift == 0 and model.reversion > 0:
            raise ValueError(f"{self.name}: drift 0 with reversion {model.reversion!r} > 0 is a deterministic "
                             f"decay, which the backward pass cannot invert; give drift > 0 or reversion=0")
        refit_tol = ranges.number(self.name, "refit_tol", refit_tol, 0.0)
        dense_cov_limit = ranges.whole(self.name, "dense_cov_limit", dense_cov_limit, 0)
        self.skill_model = model
        self.covariance = covariance
        self._drift_arg = None  # a given drift is in the model
        self.iterations = iterations
        self.tol = tol
        self.period_days = period_days
        self.refit_tol = float(refit_tol)
        self.dense_cov_limit = int(dense_cov_limit)
        self._ekf = self._make_ekf()

    def _make_ekf(self):
        """The forward pass's filter; it checks the model's numbers and the Newton settings."""
        from filters.ekf import EKF

        ekf = EKF(self.skill_model, self.covariance, iterations=self.iterations, tol=self.tol,
                  period_days=self.period_days)
        # its messages name this smoother's forward pass
        ekf.name = f"{self.name} (forward pass: {ekf.name})"
        return ekf

    def __repr__(self) -> str:
        m = self.skill_model
        observed = m.link if isinstance(m.observation, Outcome) else repr(m.observation)
        rev = f", reversion={m.reversion:g}" if m.reversion else ""
        return (f"{type(self).__name__}({observed}, drift={m.drift:g}, prior_var={m.prior_var:g}{rev}, "
                f"covariance={self.covariance!r})")

    @property
    def model(self) -> SkillModel:
        return self.skill_model

    # ------------------------------------------------------------ the fit
    def fit(self, games: Games, initial=None, *, warm_start: SmootherFit | None = None) -> SmootherFit:
        """The smoothed belief of every node given ``games``.

        ``warm_start``: an earlier fit of this smoother (the same settings) on the first games of
        ``games``; the forward pass continues from it and the backward pass stops where nothing
        changes (module docstring). ``initial=`` values are refused, as by every smoother.
        """
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        if initial is not None:
            raise ValueError(f"{self.name}: initial= values are not supported by a smoother (its prior is the "
                             f"model's); continue an earlier fit with warm_start= instead")
        if warm_start is not None:
            if not isinstance(warm_start, SmootherFit):
                raise TypeError(f"warm_start must be a SmootherFit (an earlier fit), got {type(warm_start).__name__}")
            forward = getattr(warm_start, "_rts_forward", None)
            if forward is None or forward.settings != self.get_params():
                raise ValueError(f"{self.name}: warm_start must be a fit of RTSSmoother with these settings "
                                 f"({self!r}); got a fit of {warm_start.method!r}")
            warm_start._check_time_base(games)
        t0 = time.perf_counter()
        times = self.times(games)
        start, why = (0, "none") if warm_start is None else resumable(warm_start.games, games, times)
        old = warm_start if start else None
        model = self.skill_model
        static = model.drift == 0
        grown = None if old is None or static else extend_timeline(old.timeline, old.games, games, times)
        if grown is not None:
            tl, old_to, _ = grown
        else:
            tl, old_to = timeline(games, np.full(len(games), times.min()) if static else times), None
        info = {"covariance": self.covariance, "n_nodes": tl.n_nodes, "warm_start": why}
        if self.covariance == "full":
            if not static:
                self._check_full_size(games, tl)
            mean, var, cov, prev_cov, forward = self._fit_full(games, tl, old, start, static, info)
        else:
            mean, var, prev_cov, forward = self._fit_diagonal(games, tl, old, old_to, start, static, info)
            cov = None
        info["prev_cov"] = prev_cov
        info["seconds"] = time.perf_counter() - t0
        fit = SmootherFit(self, games, tl, mean, var, model, self.times, info=info, cov=cov, static=static)
        fit._rts_forward = forward
        return fit

    # ------------------------------------------------------------ diagonal: per-competitor chains
    def _fit_diagonal(self, games: Games, tl: Timeline, old: SmootherFit | None, old_to: np.ndarray | None,
                      start: int, static: bool, info: dict):
        ekf = self._ekf
        t0 = time.perf_counter()
        fw_old = old._rts_forward if old is not None else None
        rows = games.order[start:]
        new_games = rows.size > 0
        state = None if fw_old is None else fw_old.state
        post = None
        if new_games:
            sub = games if start == 0 else games.take(rows)
            run = ekf._run(sub, None, state, record=not static)
            state, post = run.state, run._post_rows
        info["forward_seconds"] = time.perf_counter() - t0
        forward = _Forward(self.get_params(), len(games), state)
        if static:  # one node per competitor: its final belief
            index = state.index()
            r = np.array([index[p] for p in tl.players[tl.node_player]], dtype=np.int64)
            info["backward_nodes"] = 0
            return state.values[r, 0].copy(), state.values[r, 1] ** 2, np.full(tl.n_nodes, np.nan), forward
        t1 = time.perf_counter()
        mf = np.empty(tl.n_nodes)
        vf = np.empty(tl.n_nodes)
        ms = np.empty(tl.n_nodes)
        vs = np.empty(tl.n_nodes)
        was = np.zeros(tl.n_nodes, dtype=np.bool_)
        if old_to is not None:  # the grown timeline: every earlier node is a node here
            _carry(old_to, fw_old.node_mf, fw_old.node_vf, old.mean, old.var, mf, vf, ms, vs, was)
        elif old is not None:
            node, exact = _earlier(old, tl)
            was = exact
            mf[exact], vf[exact] = fw_old.node_mf[node[exact]], fw_old.node_vf[node[exact]]
            ms[exact], vs[exact] = old.mean[node[exact]], old.var[node[exact]]
        if new_games:
            # each node's filtered belief: its competitor's state after the node's last game
            nodes = np.concatenate([tl.game_a[rows], tl.game_b[rows]])
            when = np.concatenate([np.arange(rows.size), np.arange(rows.size)])
            o = np.lexsort((when, nodes))
            last = o[np.r_[nodes[o][1:] != nodes[o][:-1], True]]
            side = last >= rows.size  # rows of b: the second half
            g = when[last]
            mf[nodes[last]] = np.where(side, post[g, 2], post[g, 0])
            vf[nodes[last]] = np.where(side, post[g, 3], post[g, 1]) ** 2
            touched = np.unique(tl.node_player[nodes])
        else:
            touched = np.zeros(0, dtype=np.int64)
        # each touched competitor's last node (nodes are sorted by competitor, then time)
        ends = (np.searchsorted(tl.node_player, touched, side="right") - 1).astype(np.int64)
        a, q = self.skill_model.transition(tl.dt)
        a = np.ascontiguousarray(a, dtype=np.float64)
        q = np.ascontiguousarray(q, dtype=np.float64)
        visited = _smooth_chains(mf, vf, a, q, float(self.skill_model.prior_mean), ends, tl.prev, ms, vs, was,
                                 self.refit_tol * self.skill_model.scale, self.refit_tol)
        prev_cov = np.empty(tl.n_nodes)
        _chain_prev_cov(vf, vs, a, q, tl.prev, prev_cov)
        info["backward_nodes"] = int(visited)
        info["backward_seconds"] = time.perf_counter() - t1
        forward.node_mf, forward.node_vf = mf, vf
        return ms, vs, prev_cov, forward

    # ------------------------------------------------------------ full: the joint smoother
    def _check_full_size(self, games: Games, tl: Timeline) -> None:
        """Refuse a full-form fit whose stored matrices would pass ``_FULL_BYTES``."""
        steps = np.unique(tl.node_time)
        first = np.sort(tl.node_time[tl.prev < 0])
        size = np.searchsorted(first, steps, side="right").astype(float)
        need = 3 * 8 * float(np.sum(size**2))
        if need > _FULL_BYTES:
            raise ValueError(f"{self.name}: covariance='full' would store {need / 2**30:.1f} GiB here "
                             f"({steps.size} distinct times, up to {int(size.max())} competitors; the limit is "
                             f"{_FULL_BYTES / 2**30:g} GiB): use covariance='diagonal', or rating periods "
                             f"(Games.with_periods) for fewer distinct times")

    def _fit_full(self, games: Games, tl: Timeline, old: SmootherFit | None, start: int, static: bool,
                  info: dict):
        from filters.state import GameArrays

        ekf = self._ekf
        model = self.skill_model
        t0 = time.perf_counter()
        fw_old = old._rts_forward if old is not None else None
        rows = games.order[start:]
        if fw_old is None:
            steps = Steps([], [], [], [], [], [], [], [])
            state = None
        else:
            s = fw_old.steps
            steps = Steps(*(list(v) for v in (s.times, s.size, s.mf, s.Pf, s.ms, s.Ps, s.C, s.appear)))
            state = fw_old.state
        n_old_steps = len(steps.times)
        if rows.size:
            sub = games if start == 0 else games.take(rows)
            if state is None:
                st = ekf.init_state(sub.players)
                ids = None
            else:
                st, ids = ekf._aligned(state, sub)
            st = dataclasses.replace(st, time_base=games.time_base)
            g = GameArrays.of(sub, ids, ekf.times(sub), model.observation.needs_scores)
            record_steps(ekf, model, st, g, sub.batches(), steps, static)
            state = st
        info["forward_seconds"] = time.perf_counter() - t0
        forward = _Forward(self.get_params(), len(games), state, steps=steps)
        index = state.index()
        if static:
            r = np.array([index[p] for p in tl.players[tl.node_player]], dtype=np.int64)
            P = state.values[:, 2:]
            cov = P[np.ix_(r, r)].copy()
            info["backward_nodes"] = 0
            return state.values[r, 0].copy(), np.diag(cov).copy(), cov, np.full(tl.n_nodes, np.nan), forward
        t1 = time.perf_counter()
        info["backward_steps"] = smooth_steps(steps, n_old_steps, model, self.refit_tol)
        mean, var, cov, prev_cov = node_beliefs(tl, steps, info, self.dense_cov_limit)
        info["backward_seconds"] = time.perf_counter() - t1
        return mean, var, cov, prev_cov, forward
