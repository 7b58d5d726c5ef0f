"""The full-covariance RTS smoother (:class:`smoothers.rts.RTSSmoother` with
``covariance="full"``): the full EKF's joint filtered belief recorded at every distinct time
(:func:`record_steps`), the matrix RTS recursion back from the last (:func:`smooth_steps`), and
each node's smoothed belief and covariances read from the result (:func:`node_beliefs`); the
equations are in :mod:`smoothers.rts`'s docstring."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from statespace.model.skillmodel import SkillModel

from .base import Timeline

__all__ = ["Steps", "record_steps", "smooth_steps", "node_beliefs", "COV_FLOPS"]

#: The full form forms ``fit.cov`` (every pair of nodes) only below this many multiply-adds.
COV_FLOPS = 1e9


@dataclass
class Steps:
    """The full form's beliefs at each distinct time ``t_k`` (lists, one entry per time): the
    number of competitors seen by then (``size``, a prefix of ``appear``, the competitors' names in
    order of first appearance), the filtered ``mf``, ``Pf``, the smoothed ``ms``, ``Ps`` and the
    gains ``C`` (``C[k]`` links ``t_k`` to ``t_{k+1}``; the last is ``None``). Entries are never
    changed in place: a refit shares the unchanged ones."""

    times: list
    size: list
    mf: list
    Pf: list
    ms: list
    Ps: list
    C: list
    appear: list


def record_steps(ekf, model: SkillModel, st, g, starts: np.ndarray, steps: Steps, static: bool) -> None:
    """The full EKF's run loop (:func:`filters.kernels.period_loop`) over the games of each
    distinct time in turn, and after each, the joint filtered belief of every competitor seen
    so far at that time (appended to ``steps``; the EKF moves an idle competitor forward only
    when it next plays, which the record does here: exact, as the update leaves an idle
    competitor's variance out and a reversion's decay commutes with it)."""
    from filters import kernels as K

    derivs, forecast, obs = ekf.observation_kernels()
    cls = type(ekf)
    theta = ekf.theta()
    n = g.a.size
    out_p = np.empty((n, 3))
    t = g.t
    bounds = np.r_[np.flatnonzero(np.r_[True, t[1:] != t[:-1]]), n]
    names = st.players
    index = st.index()
    appear = steps.appear
    seen = set(appear)
    rows = [index[p] for p in appear]  # the state's row of each competitor, in order of appearance
    for s, e in zip(bounds[:-1], bounds[1:]):
        lo, hi = np.searchsorted(starts, s), np.searchsorted(starts, e)
        K.period_loop(cls._predict, cls._proba, cls._update, derivs, forecast, obs, st.values, st.count, st.last,
                      theta, g.a[s:e], g.b[s:e], g.score[s:e], g.score_a[s:e], g.score_b[s:e], g.home[s:e],
                      g.weight[s:e], g.t[s:e], np.ascontiguousarray(starts[lo:hi + 1] - s), out_p[s:e],
                      np.empty((e - s, 0)), -1)
        if static:
            continue
        fresh = sorted({names[i] for i in np.concatenate([g.a[s:e], g.b[s:e]]) if names[i] not in seen})
        for name in fresh:
            seen.add(name)
            appear.append(name)
            rows.append(index[name])
        idx = np.array(rows, dtype=np.int64)
        tk = float(t[s])
        m = st.values[idx, 0].copy()
        P = st.values[np.ix_(idx, 2 + idx)].copy()
        gap = tk - st.last[idx]  # 0 for the competitors of this time
        a, v = model.transition(gap)
        if model.reversion > 0:
            m = model.prior_mean + a * (m - model.prior_mean)
            P = a[:, None] * P * a[None, :]
        P[np.diag_indices_from(P)] += v
        steps.times.append(tk)
        steps.size.append(idx.size)
        steps.mf.append(m)
        steps.Pf.append(P)
        steps.ms.append(None)
        steps.Ps.append(None)
        steps.C.append(None)



def smooth_steps(steps: Steps, n_old: int, model: SkillModel, refit_tol: float) -> int:
    """The matrix RTS recursion from the last distinct time back (:mod:`smoothers.rts`); at an
    earlier fit's time it stops once the smoothed belief moved by at most ``refit_tol``.
    Returns the number of times smoothed."""
    from scipy.linalg import cho_factor, cho_solve

    mu = model.prior_mean
    tol_m = refit_tol * model.scale
    last = len(steps.times) - 1
    steps.ms[last], steps.Ps[last] = steps.mf[last], steps.Pf[last]
    done = 1
    for k in range(last - 1, -1, -1):
        s = steps.size[k]
        mf, Pf = steps.mf[k], steps.Pf[k]
        a, q = (float(x) for x in model.transition(steps.times[k + 1] - steps.times[k]))
        Pp = a * a * Pf + q * np.eye(s)
        mp = mu + a * (mf - mu)
        C = steps.C[k]
        if C is None:  # C = a Pf Pp^-1, from Pp C^T = a Pf (both symmetric)
            C = cho_solve(cho_factor(Pp), a * Pf).T
            steps.C[k] = C
        ms = mf + C @ (steps.ms[k + 1][:s] - mp)
        Ps = Pf + C @ (steps.Ps[k + 1][:s, :s] - Pp) @ C.T
        Ps = 0.5 * (Ps + Ps.T)
        done += 1
        if k < n_old:
            settled = (np.max(np.abs(ms - steps.ms[k])) <= tol_m
                       and np.max(np.abs(np.diag(Ps) - np.diag(steps.Ps[k])) / np.diag(Ps)) <= refit_tol)
            steps.ms[k], steps.Ps[k] = ms, Ps
            if settled:
                break
        else:
            steps.ms[k], steps.Ps[k] = ms, Ps
    return done



def node_beliefs(tl: Timeline, steps: Steps, info: dict, dense_cov_limit: int):
    """Each node's smoothed mean and variance, each node's covariance with its previous node,
    and (within ``dense_cov_limit`` and :data:`COV_FLOPS`) every pair's covariance."""
    times = np.asarray(steps.times)
    k_of = np.searchsorted(times, tl.node_time)
    pos_of = {name: i for i, name in enumerate(steps.appear)}
    pos = np.array([pos_of[p] for p in tl.players[tl.node_player]], dtype=np.int64)
    order = np.argsort(k_of, kind="stable")
    cut = np.searchsorted(k_of[order], np.arange(times.size + 1))
    at = [order[cut[k]:cut[k + 1]] for k in range(times.size)]  # the nodes at each time
    mean = np.empty(tl.n_nodes)
    var = np.empty(tl.n_nodes)
    for k, nodes in enumerate(at):
        mean[nodes] = steps.ms[k][pos[nodes]]
        var[nodes] = steps.Ps[k][pos[nodes], pos[nodes]]
    prev_cov = _prev_cov(tl, steps, at, pos)
    after = tl.n_nodes - cut[1:]
    flops = float(np.sum(np.asarray(steps.size, dtype=float) ** 2 * after))
    if tl.n_nodes > dense_cov_limit or flops > COV_FLOPS:
        info["cov"] = "not formed"
        return mean, var, None, prev_cov
    cov = np.empty((tl.n_nodes, tl.n_nodes))
    later = np.empty(0, dtype=np.int64)  # the nodes after t_{k+1}, as R's columns
    R = None  # Cov(x(t_{k+1}) of everyone seen by then, the nodes after t_{k+1})
    for k in range(times.size - 1, -1, -1):
        here = at[k]
        cov[np.ix_(here, here)] = steps.Ps[k][np.ix_(pos[here], pos[here])]
        s = steps.size[k]
        if k == times.size - 1:
            R = np.empty((s, 0))
            continue
        nxt = at[k + 1]
        R = steps.C[k] @ np.hstack([steps.Ps[k + 1][:s][:, pos[nxt]], R[:s]])
        later = np.concatenate([nxt, later])
        cov[np.ix_(here, later)] = R[pos[here]]
        cov[np.ix_(later, here)] = R[pos[here]].T
    info["cov"] = "dense"
    return mean, var, cov, prev_cov



def _prev_cov(tl: Timeline, steps: Steps, at: list, pos: np.ndarray) -> np.ndarray:
    """Each node's smoothed covariance with its competitor's previous node (NaN at a first node):
    for nodes at ``t_j < t_k``, ``(C_j C_{j+1} ... C_{k-1} P_s(k))_ii``. The row ``e_i^T`` of each
    node that has a next one is carried forward through the gains until that next node's time
    (at most one row per competitor at once: O(n^3) per distinct time, as the backward pass)."""
    prev_cov = np.full(tl.n_nodes, np.nan)
    linked = np.flatnonzero(tl.prev >= 0)
    nxt = np.full(tl.n_nodes, -1, dtype=np.int64)
    nxt[tl.prev[linked]] = linked
    W = np.zeros((0, 0))  # rows e_i^T C_j ... C_{k-1}, over x(t_k) of everyone seen by t_k
    waiting = np.empty(0, dtype=np.int64)  # the later node each row is carried to
    for k, here in enumerate(at):
        s = steps.size[k]
        W = np.hstack([W, np.zeros((W.shape[0], s - W.shape[1]))])
        done = np.isin(waiting, here)
        if done.any():
            j = waiting[done]
            prev_cov[j] = np.einsum("ij,ji->i", W[done], steps.Ps[k][:, pos[j]])
            W, waiting = W[~done], waiting[~done]
        start = here[nxt[here] >= 0]
        E = np.zeros((start.size, s))
        E[np.arange(start.size), pos[start]] = 1.0
        W = np.vstack([W, E])
        waiting = np.concatenate([waiting, nxt[start]])
        if k < len(at) - 1:
            W = W @ steps.C[k]
    return prev_cov

