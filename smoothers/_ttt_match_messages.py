r"""The compiled message passing of TrueSkill Through Time over matches of many sides: one match's
EP messages to its members' nodes (the team performances and the chain of rank differences), and
a fit's forward pass and backward-forward sweeps to convergence (:func:`run_matches`). The model
and the schedule are in :mod:`smoothers._ttt_matches`; the Gaussian messages' algebra, the node
messages and the truncated-Gaussian corrections are :mod:`smoothers._ttt_messages`' (the same as
for games).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._ttt_messages import _PI_MIN, _VAR_MIN, _backward_nodes, _forward_nodes, _game_messages, _moments, posterior

__all__ = ["run_matches", "INNER_MAX", "INNER_TOL"]

#: at most this many rounds (each diff factor of the chain forward, then backward) of a match's own
#: EP, which is exact in one round for two sides; Herbrich et al. iterate the chain likewise
INNER_MAX = 200
#: a visit of a match stops its own EP (after at least one round) when no diff factor's message to
#: a side moved its mean or sd by more than this share of that message's sd (scale-free; the
#: package stops at a move of 1e-6 too). The chain's messages are kept from visit to visit, so the
#: sweeps refine them further, and a fit's fixed point does not depend on this value
INNER_TOL = 1e-6


@njit(cache=True)
def _member_cavities(lo, hi, side_order, side_ptr, member_node, weight, beta2, fwd, bwd, lik, mmsg, cav, perf):
    r"""Each member's cavity (its node's belief without this match's message to it, into ``cav``)
    and each side's performance prior :math:`\mathcal{N}(\sum_k w_k m_k, \sum_k w_k^2 (v_k + \beta^2))`
    (into ``perf``, rows by rank: ``perf[i]`` is the side ``side_order[lo + i]``)."""
    for i in range(hi - lo):
        s = side_order[lo + i]
        pm = 0.0
        pv = 0.0
        for j in range(side_ptr[s], side_ptr[s + 1]):
            k = member_node[j]
            other_pi = lik[k, 0] - mmsg[j, 0]
            if other_pi < 0.0:  # rounding of the sum of the node's messages
                other_pi = 0.0
            m, v = _moments(fwd[k, 0] + bwd[k, 0] + other_pi, fwd[k, 1] + bwd[k, 1] + lik[k, 1] - mmsg[j, 1])
            cav[j, 0] = m
            cav[j, 1] = v
            w = weight[j]
            pm += w * m
            pv += w * w * (v + beta2)
        perf[i, 0] = pm
        perf[i, 1] = max(pv, _VAR_MIN)  # a side whose members all sat out (weight 0) still has a prior


@njit(cache=True)
def _diff_update(e, perf, chain, score, eps):
    """Diff factor ``e`` of the chain (side ``e`` ahead of side ``e + 1``, or tied with it): its
    messages to the two sides from their cavities (each side's prior times the message of its
    other diff factor), by :func:`smoothers._ttt_messages._game_messages` with no performance noise
    (it is in the sides' priors); ``chain[e]`` holds ``pi, tau`` to side ``e`` then to side
    ``e + 1``. Returns the largest move of the two messages' mean or sd, in their sds."""
    pa = 1.0 / perf[e, 1]
    ta = perf[e, 0] * pa
    if e > 0:
        pa += chain[e - 1, 2]
        ta += chain[e - 1, 3]
    pb = 1.0 / perf[e + 1, 1]
    tb = perf[e + 1, 0] * pb
    if e + 1 < chain.shape[0]:
        pb += chain[e + 1, 0]
        tb += chain[e + 1, 1]
    ma, va = _moments(pa, ta)
    mb, vb = _moments(pb, tb)
    new = _game_messages(ma, va, mb, vb, score, 0.0, 0.0, eps)
    largest = 0.0
    for h in range(2):
        p_old, t_old = chain[e, 2 * h], chain[e, 2 * h + 1]
        p_new, t_new = new[2 * h], new[2 * h + 1]
        chain[e, 2 * h], chain[e, 2 * h + 1] = p_new, t_new
        sd = 1.0 / math.sqrt(p_new)
        if p_old > 0.0:
            d = max(abs(t_new / p_new - t_old / p_old), abs(sd - 1.0 / math.sqrt(p_old))) / sd
        else:
            d = math.inf
        if not d <= largest:
            largest = d
    return largest


@njit(cache=True)
def _chain(n, lo, side_order, side_ptr, rank, eps_unit, perf, links, eps):
    """The messages of the chain of diff factors between the ``n`` sides by rank (``perf``: their
    performance priors) to each side, into ``perf[:, 2:4]`` (``pi, tau``): a tie of adjacent sides
    is a draw factor, else a win of the one ahead; the draw margin of a pair is
    ``eps_unit * sqrt(n_a + n_b)`` (members counted). Iterated until no message moves by more
    than :data:`INNER_TOL` of its sd, or :data:`INNER_MAX` rounds, from the chain's messages of the
    match's previous visit (``links``, uniform at the first): the same fixed point, reached in a
    round or two once the sweeps settle, where a start from uniform messages takes as many rounds
    as a long chain needs every visit."""
    for e in range(n - 1):
        a, b = side_order[lo + e], side_order[lo + e + 1]
        eps[e] = eps_unit * math.sqrt(side_ptr[a + 1] - side_ptr[a] + side_ptr[b + 1] - side_ptr[b])
    for _ in range(INNER_MAX):
        moved = 0.0
        for e in range(n - 1):
            score = 0.5 if rank[side_order[lo + e]] == rank[side_order[lo + e + 1]] else 1.0
            moved = max(moved, _diff_update(e, perf, links, score, eps[e]))
        for e in range(n - 3, -1, -1):
            score = 0.5 if rank[side_order[lo + e]] == rank[side_order[lo + e + 1]] else 1.0
            moved = max(moved, _diff_update(e, perf, links, score, eps[e]))
        if n == 2 or moved <= INNER_TOL:
            break
    for i in range(n):
        p = 0.0
        t = 0.0
        if i > 0:
            p += links[i - 1, 2]
            t += links[i - 1, 3]
        if i < n - 1:
            p += links[i, 0]
            t += links[i, 1]
        perf[i, 2] = p
        perf[i, 3] = t


@njit(cache=True)
def _match(m, match_ptr, side_order, side_ptr, member_node, weight, rank, beta2, eps_unit, fwd, bwd, lik, mmsg,
           cav, perf, chain, eps):
    r"""Match ``m``'s messages to its members' nodes, recomputed from their cavities and replaced in
    ``mmsg`` and ``lik``. A side's message :math:`\mathcal{N}(m_T, v_T)` (from :func:`_chain`) is
    one on :math:`w_k s_k + r_k`, the rest :math:`r_k` of the side's performance
    (:math:`\mathcal{N}(\sum_{j \ne k} w_j m_j, \sum_{j \ne k} w_j^2 (v_j + \beta^2) + w_k^2 \beta^2)`),
    so the message to :math:`s_k` is :math:`\pi = w_k^2 \pi_T / (1 + \pi_T v_r)`,
    :math:`\tau = w_k (\tau_T - \pi_T m_r) / (1 + \pi_T v_r)` (uniform at weight 0)."""
    lo, hi = match_ptr[m], match_ptr[m + 1]
    n = hi - lo
    _member_cavities(lo, hi, side_order, side_ptr, member_node, weight, beta2, fwd, bwd, lik, mmsg, cav, perf)
    _chain(n, lo, side_order, side_ptr, rank, eps_unit, perf, chain[lo : hi - 1], eps)
    for i in range(n):
        s = side_order[lo + i]
        p_t, t_t = perf[i, 2], perf[i, 3]
        for j in range(side_ptr[s], side_ptr[s + 1]):
            w = weight[j]
            rest_m = 0.0
            rest_v = w * w * beta2
            for r in range(side_ptr[s], side_ptr[s + 1]):
                if r != j:
                    rest_m += weight[r] * cav[r, 0]
                    rest_v += weight[r] * weight[r] * (cav[r, 1] + beta2)
            if p_t < _PI_MIN or w == 0.0:
                pi, tau = 0.0, 0.0
            else:
                den = 1.0 + p_t * rest_v
                pi, tau = w * w * p_t / den, w * (t_t - p_t * rest_m) / den
            k = member_node[j]
            lik[k, 0] += pi - mmsg[j, 0]
            lik[k, 1] += tau - mmsg[j, 1]
            mmsg[j, 0], mmsg[j, 1] = pi, tau


@njit(cache=True)
def _pass(forward, node_start, match_start, prev, nxt, q, prior_pi, prior_tau, match_ptr, side_order, side_ptr,
          member_node, weight, rank, beta2, eps_unit, fwd, bwd, lik, mmsg, cav, perf, chain, eps):
    """One pass over the slices, in time order (``forward``: each slice's forward messages, then its
    matches one after another) or in reverse (its backward messages, then its matches)."""
    n_slices = node_start.size - 1
    for j in range(n_slices):
        s = j if forward else n_slices - 1 - j
        if forward:
            _forward_nodes(s, node_start, prev, q, prior_pi, prior_tau, fwd, lik)
        else:
            _backward_nodes(s, node_start, nxt, q, bwd, lik)
        for m in range(match_start[s], match_start[s + 1]):
            _match(m, match_ptr, side_order, side_ptr, member_node, weight, rank, beta2, eps_unit, fwd, bwd, lik,
                   mmsg, cav, perf, chain, eps)


@njit(cache=True)
def run_matches(node_start, match_start, prev, nxt, q, prior_pi, prior_tau, match_ptr, side_order, side_ptr,
                member_node, weight, rank, beta, eps_unit, max_iter, tol):
    """The forward pass, then backward-forward sweeps until no node's posterior mean or sd moves
    by more than ``tol`` (or ``max_iter`` sweeps). Nodes are numbered in time order (slice ``s``
    holds the nodes ``node_start[s]`` to ``node_start[s + 1] - 1`` and the matches
    ``match_start[s]`` to ``match_start[s + 1] - 1``); ``side_order`` lists each match's sides by
    rank; ``member_node`` is each member's node. Returns the posterior means and variances, the
    forward-pass (filtered) variances, the sweeps run and the last sweep's largest change (-1 when
    none ran)."""
    n_nodes = prev.size
    fwd = np.zeros((n_nodes, 2))
    bwd = np.zeros((n_nodes, 2))
    lik = np.zeros((n_nodes, 2))
    mmsg = np.zeros((member_node.size, 2))
    cav = np.zeros((member_node.size, 2))
    widest = 2
    for m in range(match_ptr.size - 1):
        widest = max(widest, match_ptr[m + 1] - match_ptr[m])
    perf = np.zeros((widest, 4))
    # diff factor e of match m (between its sides e and e + 1 by rank) keeps its messages in row
    # match_ptr[m] + e, from one visit of the match to the next
    chain = np.zeros((side_order.size, 4))
    eps = np.zeros(widest - 1)
    beta2 = beta * beta
    args = (node_start, match_start, prev, nxt, q, prior_pi, prior_tau, match_ptr, side_order, side_ptr, member_node,
            weight, rank, beta2, eps_unit, fwd, bwd, lik, mmsg, cav, perf, chain, eps)
    _pass(True, *args)
    mean = np.empty(n_nodes)
    var = np.empty(n_nodes)
    posterior(fwd, bwd, lik, mean, var)
    filtered_var = var.copy()
    sweeps = 0
    change = -1.0
    while sweeps < max_iter:
        _pass(False, *args)
        _pass(True, *args)
        sweeps += 1
        change = _settle(fwd, bwd, lik, mean, var)
        if change <= tol:
            break
    return mean, var, filtered_var, sweeps, change


@njit(cache=True)
def _settle(fwd, bwd, lik, mean, var):
    """Replace ``mean`` and ``var`` by the nodes' posterior moments now; the largest move of a
    mean or sd (a NaN counts as a move)."""
    largest = 0.0
    for k in range(mean.size):
        m, v = _moments(fwd[k, 0] + bwd[k, 0] + lik[k, 0], fwd[k, 1] + bwd[k, 1] + lik[k, 1])
        d = abs(m - mean[k])
        ds = abs(math.sqrt(v) - math.sqrt(var[k]))
        if ds > d:
            d = ds
        if not d <= largest:
            largest = d
        mean[k] = m
        var[k] = v
    return largest
