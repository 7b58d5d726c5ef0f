"""The diagonal RTS smoother's backward pass (:class:`smoothers.rts.RTSSmoother` with
``covariance="diagonal"``), compiled: the scalar recursion along each competitor's chain of nodes,
each node's covariance with its previous node, and for a refit the earlier fit's beliefs at their
nodes' new numbers (the equations: :mod:`smoothers.rts`)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import SmootherFit, Timeline


@njit(cache=True)
def _smooth_chains(mf, vf, a, q, mu, ends, prev, ms, vs, old, tol_m, tol_v):
    """The scalar RTS recursion along each chain, backwards from each node of ``ends`` (a
    competitor's last node) through ``prev``: ``C = v_f a / (a^2 v_f + q)``,
    ``m_s = m_f + C (m_s' - m_p)``, ``v_s = v_f + C^2 (v_s' - v_p)`` (Särkkä 2013, Theorem 8.2);
    ``a[j]``, ``q[j]`` are the transition into node ``j`` from ``prev[j]``. An earlier fit's node
    (``old``, its belief already in ``ms``, ``vs``) whose new belief moved by at most ``tol_m`` in
    the mean and ``tol_v`` relatively in the variance ends its chain's pass (the nodes before it
    keep their beliefs). Returns the number of nodes smoothed."""
    visited = 0
    for e in ends:
        ms[e] = mf[e]
        vs[e] = vf[e]
        visited += 1
        j = e
        k = prev[e]
        while k >= 0:
            aj = a[j]
            vp = aj * aj * vf[k] + q[j]
            mp = mu + aj * (mf[k] - mu)
            c = vf[k] * aj / vp
            m_new = mf[k] + c * (ms[j] - mp)
            v_new = vf[k] + c * c * (vs[j] - vp)
            visited += 1
            done = old[k] and abs(m_new - ms[k]) <= tol_m and abs(v_new - vs[k]) <= tol_v * v_new
            ms[k] = m_new
            vs[k] = v_new
            if done:
                break
            j = k
            k = prev[k]
    return visited


@njit(cache=True)
def _carry(old_to, mf_old, vf_old, ms_old, vs_old, mf, vf, ms, vs, was):
    """An earlier fit's filtered and smoothed beliefs, each at its node's new number."""
    for i in range(old_to.size):
        k = old_to[i]
        mf[k] = mf_old[i]
        vf[k] = vf_old[i]
        ms[k] = ms_old[i]
        vs[k] = vs_old[i]
        was[k] = True


@njit(cache=True)
def _chain_prev_cov(vf, vs, a, q, prev, out):
    """Each node's smoothed covariance with its previous node, ``C v_s`` with the gain
    ``C = v_f a / (a^2 v_f + q)`` of the previous node (NaN at a first node)."""
    for j in range(prev.size):
        k = prev[j]
        if k < 0:
            out[j] = np.nan
        else:
            out[j] = vf[k] * a[j] / (a[j] * a[j] * vf[k] + q[j]) * vs[j]



def _earlier(fit: SmootherFit, tl: Timeline):
    """For each node of ``tl``, the node of ``fit`` of the same competitor and time (and whether
    there is one)."""
    node = fit._node_at(fit._ids(tl.players)[tl.node_player], tl.node_time)
    exact = node >= 0
    exact[exact] = fit.timeline.node_time[node[exact]] == tl.node_time[exact]
    return node, exact
