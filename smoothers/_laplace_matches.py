r"""The Laplace smoother on matches of many sides: the whole-history nodes of a
:class:`statespace.data.matches.Matches`, Newton to the posterior mode, the variances and the
evidence.

The model is the smoother's (:mod:`smoothers.laplace`): each competitor's skill a random walk (or
Ornstein-Uhlenbeck process) with one node per competitor and time it plays, now observed by
matches: minimise

.. math::

    \mathcal{E}(x) = -\sum_\text{matches} \ell_m\bigl(p_m(x)\bigr)
    + \frac12 \sum_\text{first} \frac{(x_k - \mu_0)^2}{\sigma_0^2}
    + \frac12 \sum_\text{links} \frac{\bigl(x_k - \mu_0 - \phi_k (x_\text{prev} - \mu_0)\bigr)^2}{q_k},

:math:`p_{m,s} = \sum_{k \in s} w_k x_{n(k)}` the sides' performances and :math:`\ell_m` the
ranking observation of :mod:`smoothers._laplace_match_obs` (Plackett-Luce for the logistic link,
the Thurstonian chain for the probit). The gradient maps to the members through the design
:math:`A` (:math:`A_{s k} = w_k`), the Hessian block is :math:`A^\top (-H_\text{sides}) A`, so
every two members of a match are coupled. Newton's steps solve with a sparse LU (or, for large
fits, the sparse :math:`L D L^\top` factor whose plan reads the pattern of the chains plus every
coupled pair); variances and :math:`\log\det H` come from the same factors as for games
(:class:`smoothers._laplace_factor.FactorAtMode`), and ``drift="auto"`` maximises the same Laplace
approximation of the evidence. Matches have no home side and no likelihood weights: the model's
``home`` does not enter.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings

import numpy as np
import scipy.sparse as sp

from statespace.data.matches import Matches

from . import _chains
from ._laplace_checks import singular
from ._laplace_match_fit import MatchSmootherFit
from ._laplace_match_cg import chain_cg
from ._laplace_match_obs import MatchObservation, block_pairs, match_derivs, observation_of
from ._laplace_run import blas_limits
from ._timeline import Timeline

__all__ = ["MatchTimeline", "match_timeline", "fit_matches"]


@dataclasses.dataclass(frozen=True)
class MatchTimeline:
    """The nodes of a table of matches: ``tl``, a :class:`smoothers._timeline.Timeline` whose
    ``game_a``, ``game_b`` are every pair of nodes that one match couples (the Hessian's pattern
    off the chains, which is all the sparse factor's plan reads); ``node`` the node of each member
    (rows of ``matches.member``); ``rows``, ``cols``, ``offsets``: each match's block of the
    Hessian (:func:`smoothers._laplace_match_obs.block_pairs`)."""

    tl: Timeline
    node: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    offsets: np.ndarray


def match_timeline(matches: Matches, times: np.ndarray) -> MatchTimeline:
    """Nodes for ``matches`` with each match at ``times`` (the smoother's unit): one per competitor
    and distinct time, sorted by competitor then time (as :func:`smoothers._timeline.timeline`)."""
    per_match = np.diff(matches.side_ptr[matches.match_ptr])
    player = np.asarray(matches.member, dtype=np.int64)
    t = np.repeat(np.asarray(times, dtype=float), per_match)
    order = np.lexsort((t, player))
    ps, ts = player[order], t[order]
    new = np.r_[True, (ps[1:] != ps[:-1]) | (ts[1:] != ts[:-1])]
    node_player, node_time = ps[new], ts[new]
    node = np.empty(player.size, np.int64)
    node[order] = np.cumsum(new) - 1
    first = np.r_[True, node_player[1:] != node_player[:-1]]
    prev = np.where(first, -1, np.arange(node_player.size) - 1).astype(np.int64)
    dt = np.where(first, 0.0, node_time - np.r_[node_time[:1], node_time[:-1]])
    rows, cols, offsets = block_pairs(np.asarray(matches.match_ptr), np.asarray(matches.side_ptr), node)
    off = rows < cols
    tl = Timeline(np.asarray(matches.names), node_player.astype(np.int64), node_time, prev, dt, rows[off], cols[off])
    return MatchTimeline(tl, node, rows, cols, offsets)


class _Objective:
    """The matches' log-likelihood at the nodes, its gradient and minus its Hessian (sparse)."""

    def __init__(self, matches: Matches, mt: MatchTimeline, obs: MatchObservation):
        self.args = (mt.node, np.asarray(matches.match_ptr), np.asarray(matches.side_ptr),
                     np.asarray(matches.weight), np.asarray(matches.rank), obs.kind, obs.beta, obs.eps, mt.offsets)
        self.mt = mt
        self.hvals = np.empty(mt.rows.size)

    def __call__(self, x: np.ndarray):
        """``(loglik, grad, K)``: K = minus the Hessian of the log-likelihood (CSC)."""
        n = self.mt.tl.n_nodes
        grad = np.zeros(n)
        ll = match_derivs(np.ascontiguousarray(x, dtype=np.float64), *self.args, grad, self.hvals)
        K = sp.csc_matrix((self.hvals, (self.mt.rows, self.mt.cols)), shape=(n, n))
        return ll, grad, K


def _times(smoother, matches: Matches, model) -> np.ndarray:
    """Each match's time in the smoother's unit (days over ``period_days``); a static fit's one node
    per competitor at the first match's time."""
    t = np.asarray(matches.time, dtype=float) / smoother.period_days
    return np.full(t.size, t.min()) if smoother._static(model) else t


def fit_matches(smoother, matches: Matches, warm_start=None) -> MatchSmootherFit:
    """``smoother.fit(matches)`` (:class:`smoothers.laplace.LaplaceSmoother`): the posterior mode
    and marginal variances of every node given ``matches``."""
    if warm_start is not None:
        raise ValueError(f"{smoother.name}: warm_start= is for games; a fit on matches starts Newton at the prior")
    t0 = time.perf_counter()
    model = smoother.skill_model
    obs = observation_of(smoother.name, model, matches)
    mt = match_timeline(matches, _times(smoother, matches, model))
    objective = _Objective(matches, mt, obs)
    with blas_limits(smoother.blas_threads):
        try:
            return _fit(smoother, matches, mt, obs, objective, t0)
        except (RuntimeError, np.linalg.LinAlgError) as exc:
            if isinstance(exc, RuntimeError) and "singular" not in str(exc):
                raise
            raise singular(smoother.name, mt.tl, model, exc) from None


def _fit(smoother, matches, mt, obs, objective, t0) -> MatchSmootherFit:
    tl = mt.tl
    model = smoother.skill_model
    x = np.full(tl.n_nodes, model.prior_mean)
    dense = smoother._dense(tl)
    plan = smoother._plan(tl) if (smoother.auto_drift or not dense) else None
    info: dict = {}
    if smoother.auto_drift:
        model, x, info = _type2(smoother, mt, objective, model, x, plan)
    x, H, it = _mode(smoother, mt, objective, model, x, plan)
    factor = smoother._factor(tl, H, None if dense else plan)
    var, cov, prev_cov, how = smoother._variances(tl, H, factor)
    info.update({"iterations": it, "variances": how, "prev_cov": prev_cov, "n_nodes": tl.n_nodes,
                 "log_evidence": _log_evidence(smoother, mt, objective, model, x, H, factor),
                 "seconds": time.perf_counter() - t0, "drift": model.drift,
                 "observation": obs.forecast().kind})
    return MatchSmootherFit(smoother, matches, mt, x, var, model, obs, info=info, cov=cov,
                            static=smoother._static(model))


def _energy(objective, Q, lin, x) -> float:
    """Minus the log posterior (up to a constant) and its parts."""
    ll, grad, K = objective(x)
    return -ll + 0.5 * x @ (Q @ x) - lin @ x, ll, grad, K


def _mode(smoother, mt: MatchTimeline, objective, model, x, plan):
    """Newton's method with a backtracking line search (as :meth:`smoothers._laplace_newton.NewtonMode._mode`):
    the mode, the Hessian there and the number of steps."""
    tl = mt.tl
    Q, lin, _, _ = smoother._prior(tl, model)
    E, _, g_ll, K = _energy(objective, Q, lin, x)
    it = 0
    for it in range(1, smoother.max_iter + 1):
        H = (Q + K).tocsc()
        grad = Q @ x - lin - g_ll
        step = -_solve(H, grad, plan, tl.prev)
        a = 1.0
        for _ in range(30):
            x_new = x + a * step
            E_new, _, g_new, K_new = _energy(objective, Q, lin, x_new)
            if E_new <= E + 1e-12 * abs(E):
                break
            a *= 0.5
        x, E, g_ll, K = x_new, E_new, g_new, K_new
        moved = float(np.max(np.abs(a * step))) if tl.n_nodes else 0.0
        if moved <= smoother.tol * model.scale:
            break
    else:
        warnings.warn(f"LaplaceSmoother: Newton did not converge in {smoother.max_iter} iterations on matches",
                      RuntimeWarning, stacklevel=4)
    return x, (Q + K).tocsc(), it


def _solve(H, b, plan, prev: np.ndarray) -> np.ndarray:
    """``H^-1 b``: the sparse LU below ``smoothers._chains.CG_FROM`` nodes; above, the plan's sparse
    factor when there is one, else conjugate gradients preconditioned by each competitor's chain
    (:func:`chain_cg`), backed by the LU should they stall."""
    if H.shape[0] >= _chains.CG_FROM:
        if plan is not None:
            factor = plan.factor(H)
            if factor is not None:
                return factor.solve(b)
        x, ok = chain_cg(H, b, prev)
        if ok:
            return x
    return _chains.solve(H, b)


def _log_evidence(smoother, mt, objective, model, x, H, factor) -> float:
    r"""The Laplace approximation :math:`\sum \ell(x^*) - \mathcal{E}_\text{prior}(x^*) + \frac12 \log\det Q
    - \frac12 \log\det H` (as for games, :mod:`smoothers.laplace`)."""
    Q, lin, prior_const, logdet_q = smoother._prior(mt.tl, model)
    E = _energy(objective, Q, lin, x)[0]
    return -E - prior_const + 0.5 * logdet_q - 0.5 * _chains.logdet(H, mt.tl.prev, factor)


def _type2(smoother, mt, objective, model, x0, plan):
    """The drift of the largest evidence between ``drift_bounds`` (bounded search in log drift)."""
    lo, hi = smoother.drift_bounds
    cache = {"x": x0}
    trace = []

    def neg_evidence(log_q):
        m = dataclasses.replace(model, drift=float(math.exp(log_q)))
        x, H, _ = _mode(smoother, mt, objective, m, cache["x"], plan)
        cache["x"] = x
        ev = _log_evidence(smoother, mt, objective, m, x, H, smoother._factor(mt.tl, H, plan))
        trace.append((m.drift, ev))
        return -ev

    from scipy.optimize import minimize_scalar  # here: scipy.optimize takes 0.2 s to import

    res = minimize_scalar(neg_evidence, bounds=(math.log(lo), math.log(hi)), method="bounded", options={"xatol": 1e-3})
    return dataclasses.replace(model, drift=float(math.exp(res.x))), cache["x"], {"drift_trace": trace}
