r"""The compiled message passing of TrueSkill Through Time: the Gaussian messages in natural
parameters and their guards, EP's messages of one game, the forward and backward passes over the
slices, a fit's passes and sweeps to convergence (:func:`run`), and a refit's sweeps over the
flagged slices only (:func:`refit`). The equations and the schedule are in :mod:`smoothers.ttt`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model.gaussian import EPS_MIN, T_MAX, draw_terms, left_tail, cdf, pdf

__all__ = ["run", "refit", "posterior", "next_nodes", "VAR_MAX", "SD_MIN"]

# the message algebra's guards: a precision below _PI_MIN counts as none (a uniform message), a
# variance is kept within [_VAR_MIN, VAR_MAX] and a mean within +-_MEAN_MAX (filters.kernels' bounds)
_VAR_MIN = 1e-300
VAR_MAX = 1e300
_PI_MIN = 1.0 / VAR_MAX
_MEAN_MAX = 1e300
SD_MIN = math.sqrt(_VAR_MIN)


@njit(cache=True)
def _widen(pi, tau, q):
    """The Gaussian message ``(pi, tau)`` with the variance ``q`` added (the random walk's step):
    ``(pi, tau) / (1 + pi q)``; a uniform message (``pi`` below ``_PI_MIN``) stays uniform, and the
    variance stays at most ``VAR_MAX``."""
    if pi < _PI_MIN:
        return 0.0, 0.0
    var = 1.0 / pi + q
    if var > VAR_MAX:
        var = VAR_MAX
    scale = (1.0 / var) / pi
    return pi * scale, tau * scale


@njit(cache=True)
def _moments(pi, tau):
    """Mean and variance of a belief with precision ``pi > 0`` (kept within the guards)."""
    var = 1.0 / pi if pi > _PI_MIN else VAR_MAX
    if var < _VAR_MIN:
        var = _VAR_MIN
    mean = tau * var
    if mean > _MEAN_MAX:
        mean = _MEAN_MAX
    elif mean < -_MEAN_MAX:
        mean = -_MEAN_MAX
    return mean, var


@njit(cache=True)
def _cavity(k, g, side, fwd, bwd, lik, msg):
    """Mean and variance of node ``k``'s belief without game ``g``'s message (its ``side``-th pair
    of ``msg``): the forward and backward messages times the node's other games' messages (their
    sum less this one, at least 0 where rounding left less)."""
    other_pi = lik[k, 0] - msg[g, 2 * side]
    other_tau = lik[k, 1] - msg[g, 2 * side + 1]
    if other_pi < 0.0:
        other_pi = 0.0
    return _moments(fwd[k, 0] + bwd[k, 0] + other_pi, fwd[k, 1] + bwd[k, 1] + other_tau)


@njit(cache=True)
def _vw_win(t, eps):
    """``(v_win(t, eps), w_win(t, eps))`` of :mod:`statespace.model.gaussian`, the same numbers from one
    evaluation of the density and the cdf."""
    x = t - eps
    if x < -4.0:
        x = max(x, -T_MAX)
        tail = left_tail(-x)
        v = -x + tail
        w = v * tail
    else:
        v = pdf(x) / cdf(x)
        w = v * (v + x)
    if not w > 0.0:
        w = 1e-300
    elif w >= 1.0:
        w = 1.0 - 1e-16
    return v, w


@njit(cache=True)
def _vw_draw(t, eps):
    """``(v_draw(t, eps), w_draw(t, eps))`` of :mod:`statespace.model.gaussian`, the same numbers from one
    evaluation of its terms."""
    if eps < EPS_MIN:
        return -t * (1.0 - eps * eps / 3.0), min(1.0 - eps * eps / 3.0, 1.0 - 1e-16)
    v, w = draw_terms(abs(t), eps)
    if t < 0.0:
        v = -v
    if w <= 0.0:
        w = 1e-300
    elif w >= 1.0:
        w = 1.0 - 1e-16
    return v, w


@njit(cache=True)
def _game_messages(ma, va, mb, vb, score, home, beta, eps):
    """EP's messages ``(pi_a, tau_a, pi_b, tau_b)`` of one game to its two nodes, from their cavities
    ``N(ma, va)`` and ``N(mb, vb)``: the tilted distribution's moments (TrueSkill's ``v``, ``w``)
    divided by the cavity, in closed form (see :mod:`smoothers.ttt`)."""
    c2 = 2.0 * beta * beta + va + vb
    c = math.sqrt(c2)
    diff = ma - mb + home
    e = eps / c
    if score == 0.5:
        sign = 1.0
        v, w = _vw_draw(diff / c, e)
    else:
        sign = 1.0 if score == 1.0 else -1.0
        v, w = _vw_win(sign * diff / c, e)
    da = c2 - w * va
    db = c2 - w * vb
    return w / da, (w * ma + sign * c * v) / da, w / db, (w * mb - sign * c * v) / db


@njit(cache=True)
def _slice_games(lo, hi, ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, parallel, tmp):
    """Recompute the messages of the games ``lo`` to ``hi - 1`` (one slice), one after another (each
    from the beliefs the earlier ones left), or with ``parallel`` all from the beliefs before the slice."""
    for g in range(lo, hi):
        a, b = ga[g], gb[g]
        ma, va = _cavity(a, g, 0, fwd, bwd, lik, msg)
        mb, vb = _cavity(b, g, 1, fwd, bwd, lik, msg)
        pa, ta, pb, tb = _game_messages(ma, va, mb, vb, score[g], home[g], beta, eps)
        if parallel:
            tmp[g, 0], tmp[g, 1], tmp[g, 2], tmp[g, 3] = pa, ta, pb, tb
        else:
            lik[a, 0] += pa - msg[g, 0]
            lik[a, 1] += ta - msg[g, 1]
            lik[b, 0] += pb - msg[g, 2]
            lik[b, 1] += tb - msg[g, 3]
            msg[g, 0], msg[g, 1], msg[g, 2], msg[g, 3] = pa, ta, pb, tb
    if parallel:
        for g in range(lo, hi):
            a, b = ga[g], gb[g]
            lik[a, 0] += tmp[g, 0] - msg[g, 0]
            lik[a, 1] += tmp[g, 1] - msg[g, 1]
            lik[b, 0] += tmp[g, 2] - msg[g, 2]
            lik[b, 1] += tmp[g, 3] - msg[g, 3]
            for col in range(4):
                msg[g, col] = tmp[g, col]


@njit(cache=True)
def _forward_nodes(s, node_start, prev, q, prior_pi, prior_tau, fwd, lik):
    """Slice ``s``'s forward messages: the prior at a first node, else the previous node's forward
    message times its games' messages, widened by the step."""
    for k in range(node_start[s], node_start[s + 1]):
        p = prev[k]
        if p < 0:
            fwd[k, 0], fwd[k, 1] = prior_pi, prior_tau
        else:
            fwd[k, 0], fwd[k, 1] = _widen(fwd[p, 0] + lik[p, 0], fwd[p, 1] + lik[p, 1], q[k])


@njit(cache=True)
def _backward_nodes(s, node_start, nxt, q, bwd, lik):
    """Slice ``s``'s backward messages: uniform at a last node, else the next node's backward
    message times its games' messages, widened by the step."""
    for k in range(node_start[s], node_start[s + 1]):
        n = nxt[k]
        if n < 0:
            bwd[k, 0], bwd[k, 1] = 0.0, 0.0
        else:
            bwd[k, 0], bwd[k, 1] = _widen(bwd[n, 0] + lik[n, 0], bwd[n, 1] + lik[n, 1], q[n])


@njit(cache=True)
def _forward(node_start, game_start, prev, q, prior_pi, prior_tau, ga, gb, score, home, beta, eps, fwd, bwd, lik,
             msg, parallel, tmp):
    """One forward pass: per slice in time order, its nodes' forward messages, then its games."""
    for s in range(node_start.size - 1):
        _forward_nodes(s, node_start, prev, q, prior_pi, prior_tau, fwd, lik)
        _slice_games(game_start[s], game_start[s + 1], ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, parallel,
                     tmp)


@njit(cache=True)
def _backward(node_start, game_start, nxt, q, ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, tmp):
    """One backward pass: per slice in reverse time order, its nodes' backward messages, then its games."""
    for s in range(node_start.size - 2, -1, -1):
        _backward_nodes(s, node_start, nxt, q, bwd, lik)
        _slice_games(game_start[s], game_start[s + 1], ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, False, tmp)


@njit(cache=True)
def posterior(fwd, bwd, lik, mean, var):
    """Every node's posterior moments (the product of its messages)."""
    for k in range(mean.size):
        pi = fwd[k, 0] + bwd[k, 0] + lik[k, 0]
        mean[k], var[k] = _moments(pi, fwd[k, 1] + bwd[k, 1] + lik[k, 1])


@njit(cache=True)
def run(node_start, game_start, prev, nxt, q, prior_pi, prior_tau, ga, gb, score, home, beta, eps, fwd, bwd, lik,
        msg, parallel_first, max_iter, tol):
    """The forward pass, then backward-forward sweeps until no posterior mean or sd moves by more
    than ``tol`` (or ``max_iter`` sweeps). Nodes and games are numbered in time order (slice
    ``s`` holds the nodes ``node_start[s]`` to ``node_start[s + 1] - 1`` and the games
    ``game_start[s]`` to ``game_start[s + 1] - 1``). ``msg`` (games x 4: ``pi_a, tau_a, pi_b,
    tau_b``) holds the starting messages, ``fwd``, ``bwd``, ``lik`` (nodes x 2, zeros) receive the
    nodes' messages; all are updated in place. Returns the nodes' posterior means and variances,
    the forward-pass (filtered) variances, the sweeps run and the last sweep's largest change (-1
    when none ran)."""
    n_nodes = prev.size
    tmp = np.zeros(msg.shape) if parallel_first else np.zeros((0, 4))
    for g in range(ga.size):
        lik[ga[g], 0] += msg[g, 0]
        lik[ga[g], 1] += msg[g, 1]
        lik[gb[g], 0] += msg[g, 2]
        lik[gb[g], 1] += msg[g, 3]
    _forward(node_start, game_start, prev, q, prior_pi, prior_tau, ga, gb, score, home, beta, eps, fwd, bwd, lik, msg,
             parallel_first, tmp)
    mean = np.empty(n_nodes)
    var = np.empty(n_nodes)
    posterior(fwd, bwd, lik, mean, var)
    filtered_var = var.copy()
    new_mean = np.empty(n_nodes)
    new_var = np.empty(n_nodes)
    sweeps = 0
    change = -1.0
    while sweeps < max_iter:
        _backward(node_start, game_start, nxt, q, ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, tmp)
        _forward(node_start, game_start, prev, q, prior_pi, prior_tau, ga, gb, score, home, beta, eps, fwd, bwd, lik,
                 msg, False, tmp)
        posterior(fwd, bwd, lik, new_mean, new_var)
        sweeps += 1
        change = 0.0
        for k in range(n_nodes):
            d = abs(new_mean[k] - mean[k])
            ds = abs(math.sqrt(new_var[k]) - math.sqrt(var[k]))
            if ds > d:
                d = ds
            if not d <= change:  # a NaN counts as a change
                change = d
            mean[k] = new_mean[k]
            var[k] = new_var[k]
        if change <= tol:
            break
    return mean, var, filtered_var, sweeps, change


@njit(cache=True)
def _snapshot(s, node_start, fwd, bwd, lik, before):
    """The posterior mean and sd of slice ``s``'s nodes, into the first rows of ``before``."""
    lo = node_start[s]
    for k in range(lo, node_start[s + 1]):
        m, v = _moments(fwd[k, 0] + bwd[k, 0] + lik[k, 0], fwd[k, 1] + bwd[k, 1] + lik[k, 1])
        before[k - lo, 0] = m
        before[k - lo, 1] = math.sqrt(v)


@njit(cache=True)
def _notify(s, backward, node_start, node_slice, prev, nxt, fwd, bwd, lik, before, tol, flag_b, flag_f):
    """After slice ``s`` was processed (``before``: its nodes' posterior means and sds before): each
    node whose mean or sd moved by more than ``tol`` flags the slices that read its messages: its
    previous node's (for the backward pass), its next node's (for the forward pass) and its own
    (for the pass in the other direction, whose cavities include it). Returns the largest move."""
    lo = node_start[s]
    largest = 0.0
    for k in range(lo, node_start[s + 1]):
        m, v = _moments(fwd[k, 0] + bwd[k, 0] + lik[k, 0], fwd[k, 1] + bwd[k, 1] + lik[k, 1])
        d = abs(m - before[k - lo, 0])
        ds = abs(math.sqrt(v) - before[k - lo, 1])
        if ds > d:
            d = ds
        if not d <= largest:  # a NaN counts as a move
            largest = d
        if d <= tol:
            continue
        if prev[k] >= 0:
            flag_b[node_slice[prev[k]]] = True
        if nxt[k] >= 0:
            flag_f[node_slice[nxt[k]]] = True
        if backward:
            flag_f[s] = True
        else:
            flag_b[s] = True
    return largest


@njit(cache=True)
def _visit(s, backward, node_start, node_slice, game_start, prev, nxt, q, prior_pi, prior_tau, ga, gb, score, home,
           beta, eps, fwd, bwd, lik, msg, tmp, before, tol, flag_b, flag_f):
    """One flagged slice of a refit's sweep: its nodes' messages in the sweep's direction (backward
    or forward), then its games, then its neighbours flagged where its nodes moved
    (:func:`_notify`); returns the largest move of its nodes."""
    _snapshot(s, node_start, fwd, bwd, lik, before)
    if backward:
        _backward_nodes(s, node_start, nxt, q, bwd, lik)
    else:
        _forward_nodes(s, node_start, prev, q, prior_pi, prior_tau, fwd, lik)
    _slice_games(game_start[s], game_start[s + 1], ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, False, tmp)
    return _notify(s, backward, node_start, node_slice, prev, nxt, fwd, bwd, lik, before, tol, flag_b, flag_f)


@njit(cache=True)
def refit(first_new, node_start, game_start, node_slice, prev, nxt, q, prior_pi, prior_tau, ga, gb, score, home,
          beta, eps, fwd, bwd, lik, msg, filtered_var, parallel_first, max_iter, tol):
    """A warm-started refit on a history grown by the slices from ``first_new`` on (nodes and games
    numbered in time order, as :func:`run`), every earlier message the earlier fit's: the forward
    pass (the filter) over the new slices, then backward-forward sweeps that visit only flagged
    slices (:func:`_notify`; at first the new slices, and the slices of the earlier nodes that
    gained a next node, whose backward messages are new), until none is flagged or ``max_iter``
    sweeps. Fills the new nodes' ``filtered_var``; returns the sweeps, the last sweep's largest
    move, whether no slice is left flagged, the slice visits and the earliest slice visited."""
    n_slices = node_start.size - 1
    tmp = np.zeros(msg.shape) if parallel_first else np.zeros((0, 4))
    widest = 0
    for s in range(n_slices):
        widest = max(widest, node_start[s + 1] - node_start[s])
    before = np.empty((widest, 2))
    flag_b = np.zeros(n_slices, dtype=np.bool_)
    flag_f = np.zeros(n_slices, dtype=np.bool_)
    for s in range(first_new, n_slices):
        _forward_nodes(s, node_start, prev, q, prior_pi, prior_tau, fwd, lik)
        _slice_games(game_start[s], game_start[s + 1], ga, gb, score, home, beta, eps, fwd, bwd, lik, msg,
                     parallel_first, tmp)
        flag_b[s] = True
        for k in range(node_start[s], node_start[s + 1]):
            filtered_var[k] = _moments(fwd[k, 0] + bwd[k, 0] + lik[k, 0], fwd[k, 1] + bwd[k, 1] + lik[k, 1])[1]
            if prev[k] >= 0 and node_slice[prev[k]] < first_new:
                flag_b[node_slice[prev[k]]] = True
    sweeps = 0
    change = -1.0
    visits = 0
    earliest = first_new
    while sweeps < max_iter:
        change = 0.0
        for backward in (True, False):
            flags = flag_b if backward else flag_f
            for j in range(n_slices):
                s = n_slices - 1 - j if backward else j
                if flags[s]:
                    flags[s] = False
                    d = _visit(s, backward, node_start, node_slice, game_start, prev, nxt, q, prior_pi, prior_tau, ga,
                               gb, score, home, beta, eps, fwd, bwd, lik, msg, tmp, before, tol, flag_b, flag_f)
                    if not d <= change:
                        change = d
                    visits += 1
                    earliest = min(earliest, s)
        sweeps += 1
        if not (flag_b.any() or flag_f.any()):
            return sweeps, change, True, visits, earliest
    return sweeps, change, not (flag_b.any() or flag_f.any()), visits, earliest


@njit(cache=True)
def next_nodes(prev, nxt):
    """Each node's next node of the same competitor (-1 at a last node), from the previous ones."""
    for k in range(prev.size):
        nxt[k] = -1
    for k in range(prev.size):
        if prev[k] >= 0:
            nxt[prev[k]] = k
