r"""TrueSkill Through Time: expectation propagation of TrueSkill's model over the whole history.

Dangauthier, Herbrich, Minka and Graepel, "TrueSkill Through Time: Revisiting the History of
Chess" (NIPS 2007); Landfried and Mocskos, "TrueSkill Through Time: reliable initial skill
estimates and historical comparability with Julia, Python and R" (2021 onwards; the
``trueskillthroughtime`` package, against which ``tests/test_ttt.py`` checks this module).

The model is the TrueSkill filter's (:class:`filters.TrueSkill` with ``dynamics="time"``) laid out
as the smoothers' whole-history model (:mod:`smoothers.base`): one Gaussian skill per competitor
and time slice at which it plays (a node; a rating period, or a distinct time), a newcomer's first
node :math:`\mathcal{N}(\mu, \sigma^2)`, consecutive nodes linked by the random walk
:math:`s_k = s_{k-1} + \mathcal{N}(0, \tau^2 \Delta t)`, and each game one factor on the difference
of its two nodes: performances :math:`p = s + \mathcal{N}(0, \beta^2)`, a win when
:math:`p_a - p_b + h > \varepsilon`, a draw within :math:`\pm\varepsilon` (the draw margin of
``draw_probability``, :func:`filters.trueskill.draw_margin`).

``draw_probability`` left out (``None``, the default) is learned from the games at ``fit`` as the
TrueSkill filter learns it (:mod:`filters.draws`), and by that filter: the one this smoother's
forward pass is, ``filters.TrueSkill(mu, sigma, beta, tau, None, dynamics="time", home=...,
period_days=...)``, whose ``resolved(games).draw_probability`` is 0 when the games have no draw
and the classic 0.10's own forecasts make that implausible, else 0.10. The fit's method carries
the value used (``fit.method.draw_probability``, ``get_params()``, ``repr``), and a refit
compares that value, so a walk-forward's refits stay incremental.

Every node's belief is the product of three kinds of Gaussian messages, kept in natural
parameters (precision :math:`\pi = 1/v`, precision-mean :math:`\tau = m/v` for a mean :math:`m`
and variance :math:`v`; a product of Gaussians adds them, a division subtracts them):

- the *forward* message from its competitor's previous node (or the prior at a first node): that
  node's forward message times its games' messages, widened by :math:`\tau^2 \Delta t` (here
  :math:`\tau` is the dynamics noise, ``tau``);
- the *backward* message from its next node: that node's backward message times its games'
  messages, widened by the same :math:`\tau^2 \Delta t` (uniform, :math:`\pi = 0`, at a last node);
- one *likelihood* message per game it plays.

Widening :math:`(\pi, \tau)` by the variance :math:`u` is :math:`(\pi, \tau) / (1 + \pi u)`: no
division by a precision, and a uniform message stays uniform. A game's message to ``a`` is
recomputed by EP from the cavities (each node's belief divided by the game's own message): with
cavity means :math:`m_a, m_b` and variances :math:`v_a, v_b`,
:math:`c^2 = 2 \beta^2 + v_a + v_b`, :math:`t = (m_a - m_b + h) / c` and TrueSkill's
truncated-Gaussian corrections :math:`v(t)`, :math:`w(t)` (:mod:`statespace.model.gaussian`; the sign
:math:`\varsigma = -1` for a loss of ``a``, else 1; draws use :math:`v_\text{draw}`,
:math:`w_\text{draw}`), the message that moment-matches the tilted distribution is

.. math::

    \pi_a = \frac{w}{c^2 - w v_a}, \qquad \tau_a = \frac{w m_a + \varsigma\, c\, v}{c^2 - w v_a}

(and for ``b`` the same with :math:`v_b`, :math:`m_b` and :math:`-\varsigma`):
:math:`c^2 - w v_a \ge 2 \beta^2 + v_b > 0` since :math:`w` is in (0, 1), so every message has a
positive precision and no division of Gaussians can produce a negative variance. The posterior of a single game is then exactly the
TrueSkill (ADF) update of :func:`filters.trueskill._adf`.

The schedule (Dangauthier et al. 2007, Landfried and Mocskos):

1. a forward pass through the slices in time order (each slice's forward messages, then its
   games' messages): the TrueSkill filter. With rating periods every game of a slice is computed
   from the slice's forward messages alone and their messages multiplied afterwards (the filter's
   rating-period update, so the order of games inside a period does not matter); without, the
   games of a time are taken one after another in input order (the filter's one-game updates);
2. then sweeps, each a backward pass (slices in reverse time order: each slice's backward
   messages, then its games' messages recomputed one after another by EP with the other messages
   fixed) and a forward pass (the same in time order, with the new forward messages), until no
   node's posterior mean or sd moves by more than ``tol`` in a sweep, or ``max_iter`` sweeps.

A slice's games are revisited once per pass, not iterated to convergence inside the pass: the
sweeps do that (the fixed point is the same; Landfried and Mocskos do the same). Convergence is
linear, and its slowest part is the common level of all competitors, which only their priors pin:
it typically moves by a nearly constant factor (about 0.9) per sweep, so the sweeps stop when that
level's last move is below ``tol``, with perhaps ten times that still to go; forecasts depend on
differences of skills and settle sooner. ``fit.info`` reports ``sweeps``, ``change`` (the last
sweep's largest move of a mean or sd), ``converged`` and ``filtered_sd`` (every node's sd after
the first forward pass: the filter's). With rating periods that filter updates a period's games
from one pre-period belief, which overstates their joint evidence, so a smoothed sd can come out
above the filtered one at a node; taken one game at a time (no periods), the smoothed sds are at
most the filtered ones.

**Refits** (``fit(games, warm_start=earlier_fit)``, a walk-forward's; see
:meth:`TrueSkillThroughTime.fit`). When ``games`` extends the earlier fit's games by later ones,
the EP fixed point moves only where the new games' evidence reaches: the new slices, and the
earlier ones as far back as the changed messages carry it, shrinking on the way (a smoothing gain
below 1 along each chain, and across a game by the share of the opponent's uncertainty). So a
refit keeps every earlier message, runs step 1 over the new slices only, and then sweeps as in
step 2 but visits a slice only when a message it reads has changed: after a slice is processed,
each of its nodes whose posterior mean or sd moved by more than ``refit_tol`` flags its previous
node's slice (whose backward message it sends), its next node's (whose forward message it sends)
and its own for the pass in the other direction (its games' cavities include it); the sweeps
stop when nothing is flagged. This is the sweeps' own schedule with the unchanged slices skipped:
a skipped slice would recompute its messages from inputs that moved by at most ``refit_tol``, so
the refit stops at the fixed point up to those moves, as a fit from scratch stops at ``tol``. It
is a thresholded form of residual scheduling (Elidan, McGraw and Koller, "Residual Belief
Propagation: Informed Scheduling for Asynchronous Message Passing", UAI 2006), with slices as the
units and the sweeps' order kept. Nodes and games are numbered in time order inside the compiled
loops, so a refit's new nodes, games and slices are appended to the earlier fit's arrays: the
numbering a fit from scratch would give.

The default ``refit_tol`` is ten times ``tol``: on long histories a fit from scratch stops at
``max_iter`` before ``tol`` (the slow common level), its last sweep still moving nodes by more
than ``tol``, and a refit that propagated every such move would finish that convergence over the
whole history instead of following the new games.

Cost: one compiled loop (``numba.njit(cache=True)``) over flat arrays, O(games + nodes) a sweep;
a refit, the slices it visits plus a copy of the earlier arrays; the measured times are in
``docs/smoothers.md`` (``benchmarks/bench_forward_backward.py``, ``benchmarks/bench_walk_forward.py``).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from numba import njit

from filters.draws import LearnedDraws, has_draws
from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel
from statespace.model.outcome import Threshold
from statespace.model import ranges
from statespace.model.gaussian import EPS_MIN, T_MAX, draw_terms, left_tail, cdf, pdf
from statespace.methods.settings import DrawWarning

from .base import Smoother, SmootherFit, extend_timeline, resumable, timeline

__all__ = ["TrueSkillThroughTime", "MU", "SIGMA", "BETA", "TAU", "DRAW_PROBABILITY", "MAX_ITER", "TOL"]

#: a newcomer's mean skill :math:`\mu` (TrueSkill's 25; the displayed rating :math:`\mu - 3 \sigma` starts at 0)
MU = 25.0
#: a newcomer's uncertainty: the sd :math:`\sigma` of the prior skill (25/3, so that :math:`\mu - 3 \sigma = 0`)
SIGMA = MU / 3.0
#: the performance noise: the skill lead that guarantees about a 76% chance of winning
#: (:math:`\Phi(1 / \sqrt{2})`) between competitors whose skills are known exactly (``SIGMA / 2``)
BETA = SIGMA / 2.0
#: the dynamics noise: the sd by which a skill wanders per unit of time (a rating period, or
#: ``period_days`` days); ``SIGMA / 100``, TrueSkill's default ``tau`` per game, here per unit of time
TAU = SIGMA / 100.0
#: the share of draws between two equally skilled competitors (sets the draw margin): the classic
#: value, as :data:`filters.trueskill.DRAW_PROBABILITY`, used where the games have draws (and where
#: no games are at hand) when ``draw_probability`` is left to the games (``None``, the default)
DRAW_PROBABILITY = 0.10
#: at most this many backward-forward sweeps after the first forward pass (the common level of all
#: competitors, pinned only by their priors, is the slowest part to settle: it typically moves by
#: a nearly constant factor of 0.9 per sweep, so 40-60 sweeps reach ``TOL``)
MAX_ITER = 100
#: the sweeps stop when no posterior mean or sd moved by more than this (skill units: a
#: ten-thousandth of a point on TrueSkill's scale, 2.4e-5 ``beta``; a forecast moves by less than
#: 1e-5 then)
TOL = 1e-4

# the message algebra's guards: a precision below _PI_MIN counts as none (a uniform message), a
# variance is kept within [_VAR_MIN, _VAR_MAX] and a mean within +-_MEAN_MAX (filters.kernels' bounds)
_VAR_MIN = 1e-300
_VAR_MAX = 1e300
_PI_MIN = 1.0 / _VAR_MAX
_MEAN_MAX = 1e300
_SD_MIN = math.sqrt(_VAR_MIN)


# ---------------------------------------------------------------------------- the compiled message passing
@njit(cache=True)
def _widen(pi, tau, q):
    """The Gaussian message ``(pi, tau)`` with the variance ``q`` added (the random walk's step):
    ``(pi, tau) / (1 + pi q)``; a uniform message (``pi`` below ``_PI_MIN``) stays uniform, and the
    variance stays at most ``_VAR_MAX``."""
    if pi < _PI_MIN:
        return 0.0, 0.0
    var = 1.0 / pi + q
    if var > _VAR_MAX:
        var = _VAR_MAX
    scale = (1.0 / var) / pi
    return pi * scale, tau * scale


@njit(cache=True)
def _moments(pi, tau):
    """Mean and variance of a belief with precision ``pi > 0`` (kept within the guards)."""
    var = 1.0 / pi if pi > _PI_MIN else _VAR_MAX
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
    divided by the cavity, in closed form (see the module docstring)."""
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
def _posterior(fwd, bwd, lik, mean, var):
    """Every node's posterior moments (the product of its messages)."""
    for k in range(mean.size):
        pi = fwd[k, 0] + bwd[k, 0] + lik[k, 0]
        mean[k], var[k] = _moments(pi, fwd[k, 1] + bwd[k, 1] + lik[k, 1])


@njit(cache=True)
def _run(node_start, game_start, prev, nxt, q, prior_pi, prior_tau, ga, gb, score, home, beta, eps, fwd, bwd, lik,
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
    _posterior(fwd, bwd, lik, mean, var)
    filtered_var = var.copy()
    new_mean = np.empty(n_nodes)
    new_var = np.empty(n_nodes)
    sweeps = 0
    change = -1.0
    while sweeps < max_iter:
        _backward(node_start, game_start, nxt, q, ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, tmp)
        _forward(node_start, game_start, prev, q, prior_pi, prior_tau, ga, gb, score, home, beta, eps, fwd, bwd, lik,
                 msg, False, tmp)
        _posterior(fwd, bwd, lik, new_mean, new_var)
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
def _refit(first_new, node_start, game_start, node_slice, prev, nxt, q, prior_pi, prior_tau, ga, gb, score, home,
           beta, eps, fwd, bwd, lik, msg, filtered_var, parallel_first, max_iter, tol):
    """A warm-started refit on a history grown by the slices from ``first_new`` on (nodes and games
    numbered in time order, as :func:`_run`), every earlier message the earlier fit's: the forward
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
def _next_nodes(prev, nxt):
    """Each node's next node of the same competitor (-1 at a last node), from the previous ones."""
    for k in range(prev.size):
        nxt[k] = -1
    for k in range(prev.size):
        if prev[k] >= 0:
            nxt[prev[k]] = k


# ---------------------------------------------------------------------------- the method
class TrueSkillThroughTime(LearnedDraws, Smoother):
    r"""TrueSkill Through Time (Dangauthier et al. 2007): TrueSkill's probit model with a draw
    margin, smoothed over the whole history by expectation propagation (see the module docstring).

    Parameters
    ----------
    mu, sigma:
        A newcomer's skill, :math:`\mathcal{N}\bigl(25, (25/3)^2\bigr)` (:data:`MU`, :data:`SIGMA`):
        :math:`|\mu| \le L \alpha`, :math:`0 < \sigma \le s \alpha` (the ranges of
        :mod:`statespace.model.ranges`, in units of the scale :math:`\alpha` below: :math:`s` =
        :data:`~statespace.model.ranges.SD_SCALES`, :math:`L` = :data:`~statespace.model.ranges.LOCATION_SCALES`).
    beta:
        Performance noise :math:`\beta` (:data:`BETA` = 25/6): a skill lead of :math:`\beta` gives
        about a 76% chance of winning; the model's scale is :math:`\alpha = \sqrt{2}\,\beta`
        (probit link), in ``[ranges.SCALE_MIN, ranges.SCALE_MAX]`` (:math:`[10^{-100}, 10^{100}]`).
    tau:
        Dynamics noise :math:`\tau` (:data:`TAU` = 25/300): the sd a skill wanders per unit of
        time, so the variance :math:`\tau^2 \Delta t` links consecutive nodes :math:`\Delta t` apart
        (the random walk); 0 for skills that never change. :math:`0 \le \tau \le s \alpha`.
    draw_probability:
        The share of draws :math:`p` between equal competitors, in ``[0, 1)``, which sets the draw
        margin :math:`\varepsilon = \sqrt{2}\,\beta\,\Phi^{-1}\bigl((1 + p) / 2\bigr)`
        (:func:`filters.trueskill.draw_margin`).
        ``None`` (the default): learned from the games at :meth:`fit` as ``filters.TrueSkill``
        learns it (:mod:`filters.draws`; decided by the TrueSkill filter that is the forward
        pass, :meth:`resolved`): 0 when the games have no draw and are too many for that to be
        chance (the classic value's forecasts give a table without draws less than 1e-3 of
        chance), else the classic :data:`DRAW_PROBABILITY` = 0.10. The value used is on the fit:
        ``fit.method.draw_probability`` (its ``get_params()`` and ``repr``). Where no games are at
        hand (``model``, ``draw_margin``) the classic 0.10 applies. An explicit value is honoured
        on any games; above 0 on games without a draw that its own filter's forecasts make
        implausible by the same test, ``fit`` warns (:class:`~statespace.methods.settings.DrawWarning`).
    home:
        Home advantage in skill units, added to ``a``'s performance when ``a`` is at home:
        :math:`|h| \le H \alpha` (:math:`H` = :data:`~statespace.model.ranges.HOME_SCALES`, as for
        ``filters.TrueSkill``).
    period_days:
        The unit of time when the games have no rating periods (days; numeric times: their own
        unit), a finite number > 0. With rating periods (``Games.with_periods``) the unit is one
        period.
    max_iter:
        At most this many backward-forward sweeps after the first forward pass (:data:`MAX_ITER` =
        100), a whole number >= 0; ``max_iter=0`` stops after the forward pass, which is the
        TrueSkill filter (``filters.TrueSkill(dynamics="time")``, same settings): the fit is never
        the prior, as the forward pass always runs.
    tol:
        The sweeps stop once no node's posterior mean or sd moved by more than ``tol`` skill units
        in a sweep (:data:`TOL` = 1e-4), a finite number >= 0 (0: every one of ``max_iter`` sweeps
        runs, which ``max_iter`` bounds). ``fit.info`` reports ``sweeps``, ``change`` (the last
        sweep's largest move) and ``converged``.
    incremental, refit_tol:
        How a warm-started refit on a grown history runs (:meth:`fit`): with ``incremental=True``
        (default) the forward pass over the new games, then sweeps confined to the slices around
        the nodes that move by more than ``refit_tol`` (skill units; ``None``, the default: ten
        times ``tol``; else a finite number >= 0); with ``False``, sweeps over the whole history from the earlier messages,
        stopped by ``tol`` and ``max_iter`` as a fit from scratch.

    ``fit(games)`` returns a :class:`smoothers.base.SmootherFit` (``predict_proba``, ``ratings``,
    ``trajectories``: the posterior of every node). Game weights are refused (``ValueError``): a
    tempered likelihood is not a TrueSkill factor.
    """

    name = "ttt"
    honours_weights = False
    # filters.draws.LearnedDraws gives learns_draws, the classic value where no games are at hand
    # (_draw_value) and the DrawWarning check; resolved() is this class's (a filter's _run is not used)
    _draw_setting = "draw_probability"
    _draw_default = DRAW_PROBABILITY

    def __init__(self, mu: float = MU, sigma: float = SIGMA, beta: float = BETA, tau: float = TAU,
                 draw_probability: float | None = None, *, home: float = 0.0, period_days: float = 1.0,
                 max_iter: int = MAX_ITER, tol: float = TOL, incremental: bool = True, refit_tol: float | None = None):
        owner = "TrueSkillThroughTime"
        # beta sets the unit every other range is stated in (statespace.model.ranges): alpha = sqrt(2) beta,
        # a scale, as filters.TrueSkill (the forward pass) takes it
        self.beta = ranges.number(owner, "beta", beta, ranges.SCALE_MIN / math.sqrt(2.0),
                                  ranges.SCALE_MAX / math.sqrt(2.0), unit=" (sqrt(2) beta is the scale)")
        alpha = math.sqrt(2.0) * self.beta
        self.mu = ranges.location(owner, "mu", mu, alpha)
        self.sigma = ranges.sd(owner, "sigma", sigma, alpha)
        self.tau = ranges.sd(owner, "tau", tau, alpha, zero=True)
        self.draw_probability = None if draw_probability is None else ranges.number(
            owner, "draw_probability", draw_probability, 0.0, 1.0, hi_open=True)
        self.home = ranges.home(owner, home, alpha)  # as filters.TrueSkill's, the forward pass
        self.period_days = ranges.number(owner, "period_days", period_days, 0.0, lo_open=True)
        self.max_iter = ranges.whole(owner, "max_iter", max_iter, 0)
        self.tol = ranges.number(owner, "tol", tol, 0.0)
        if not isinstance(incremental, (bool, np.bool_)):
            raise ValueError(f"{owner}: incremental must be True or False, got {incremental!r}")
        self.incremental = bool(incremental)
        self.refit_tol = None if refit_tol is None else ranges.number(owner, "refit_tol", refit_tol, 0.0)

    def __repr__(self) -> str:
        extra = f", home={self.home:g}" if self.home else ""
        p = self.draw_probability
        return (f"TrueSkillThroughTime(mu={self.mu:g}, sigma={self.sigma:g}, beta={self.beta:g}, tau={self.tau:g}, "
                f"draw_probability={'None' if p is None else format(p, 'g')}{extra})")

    @property
    def beta_kernel(self) -> float:
        """The ``beta`` the messages use: at least 1e-150 (as the TrueSkill filter's), so
        :math:`c^2 > 0`."""
        return max(self.beta, _SD_MIN)

    @property
    def draw_margin(self) -> float:
        r"""One-vs-one draw margin :math:`\varepsilon = \sqrt{2}\,\beta\,\Phi^{-1}\bigl((p_\text{draw} + 1) / 2\bigr)`
        (skill units; at 0.10 while ``draw_probability`` is left to the games: :meth:`resolved`
        fixes it)."""
        from filters.trueskill import draw_margin

        return draw_margin(self._draw_value, self.beta_kernel, 2)

    def _forward_filter(self):
        """The filter this smoother's first forward pass is: ``filters.TrueSkill`` with the same
        ``mu``, ``sigma``, ``beta``, ``tau``, ``draw_probability``, ``home`` and ``period_days`` and
        ``dynamics="time"`` (``max_iter=0`` gives its states)."""
        from filters import TrueSkill

        return TrueSkill(self.mu, self.sigma, self.beta, self.tau, self.draw_probability, dynamics="time",
                         home=self.home, period_days=self.period_days)

    def resolved(self, games: Games) -> "TrueSkillThroughTime":
        """This method with ``draw_probability`` fixed as :meth:`fit` fixes it on ``games`` when it
        is left out (``None``): the value the forward pass's filter (:meth:`_forward_filter`) learns
        from them (:meth:`filters.TrueSkill.resolved`; 0 when they have no draw and the classic
        0.10's forecasts make that implausible, else 0.10). ``self`` when it is given."""
        if not self.learns_draws:
            return self
        return self.with_params(draw_probability=self._forward_filter().resolved(games).draw_probability)

    @property
    def model(self) -> SkillModel:
        r"""Probit link at scale :math:`\alpha = \sqrt{2}\,\beta`, prior
        :math:`\mathcal{N}(\mu, \sigma^2)`, drift :math:`q = \tau^2` per unit of time, the threshold
        draw model with the draw margin, and the home advantage: the model of
        ``filters.TrueSkill(dynamics="time")``."""
        return SkillModel("probit", math.sqrt(2.0) * self.beta_kernel, self.mu, max(self.sigma, _SD_MIN) ** 2,
                          self.tau**2, Threshold(self.draw_margin), self.home)

    def fit(self, games: Games, initial=None, *, warm_start: SmootherFit | None = None) -> SmootherFit:
        """The posterior of every node given ``games`` (see the class docstring).

        ``warm_start``: an earlier fit of this method on part of the same history (e.g. the games
        before a date: a walk-forward refit).

        - When the earlier fit has the same model (``mu``, ``sigma``, ``beta``, ``tau``,
          ``draw_probability``, ``home``, ``period_days``), its games are the first games of
          ``games`` in time order (the same records) and every other game comes later (a later
          slice), and the two tables share their competitors' ids (a walk-forward's tables, all
          taken from one table), the refit is *incremental* (``incremental=True``, the default;
          the module docstring's "Refits"): every earlier message is kept, the forward pass (the
          filter) runs over the new slices only, and the sweeps that follow visit only the slices
          that read a node which moved by more than ``refit_tol`` (default ``10 * tol``), until
          none is flagged (``converged``) or after ``max_iter`` sweeps. It costs the new games and
          the slices their evidence changes, plus a copy of the earlier fit's arrays.
          ``fit.info`` adds ``refit`` (``"incremental"``), ``slice_visits`` (slices processed,
          each pass counted) and ``earliest_slice`` (the earliest visited, of ``n_slices``).
        - Otherwise (another model, another table, games at the earlier fit's last time,
          ``incremental=False``) the earlier games' messages (matched by the games' rows,
          competitors and times; the other games start uniform) start EP over the whole history
          (``refit`` is ``"full"``): the first forward pass takes the games one after another,
          and each sweep costs what a fit from scratch's does, O(games + nodes); what it saves is
          sweeps.

        ``max_iter=0`` with a warm start is not the filter.

        ``draw_probability`` left out (``None``) is fixed on ``games`` first (:meth:`resolved`), and
        the fit is the fixed method's: ``fit.method`` carries the value, and "the same model" above
        compares it, so refits on tables that resolve alike stay incremental (a refit after the
        earlier fit learned 0 from games that ``games`` extend without a draw learns 0 without a
        run). An explicit value above 0 on games without a draw may warn (``DrawWarning``; see the
        class docstring).
        """
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        if initial is not None:
            raise ValueError(f"{self.name}: initial= values are not supported by a smoother; start from an earlier "
                             f"fit with warm_start= instead")
        if np.any(games.weight != 1.0):
            raise ValueError(f"{self.name}: TrueSkillThroughTime does not use game weights; these games carry weights "
                             f"(Games.with_weights): use LaplaceSmoother, BradleyTerry or PyMCSmoother, or drop them")
        if warm_start is not None:
            if not isinstance(warm_start, SmootherFit):
                raise TypeError(f"warm_start must be a SmootherFit (an earlier fit), got {type(warm_start).__name__}")
            if getattr(warm_start, "_ttt_state", None) is None:
                raise ValueError(f"{self.name}: warm_start must be a fit of TrueSkillThroughTime (it starts from that "
                                 f"fit's game messages), got a fit of {warm_start.method!r}")
            warm_start._check_time_base(games)
        if self.learns_draws:
            ruled_out = self._draws_ruled_out(games, warm_start)
            method = self.with_params(draw_probability=0.0) if ruled_out else self.resolved(games)
            fit = method._fit(games, warm_start)
            fit._ttt_state.draws_ruled_out = method.draw_probability == 0.0
            return fit
        if self.draw_probability > 0 and not has_draws(games):
            self._warn_draw_free(games)
        return self._fit(games, warm_start)

    def _fit(self, games: Games, warm_start: SmootherFit | None) -> SmootherFit:
        """:meth:`fit` of checked ``games`` and ``warm_start``, ``draw_probability`` given."""
        t0 = time.perf_counter()
        times = self.times(games)
        if warm_start is not None and self.incremental and warm_start._ttt_state.settings == self._model_settings():
            n0, _ = resumable(warm_start.games, games, times)
            grown = extend_timeline(warm_start.timeline, warm_start.games, games, times) if n0 else None
            if grown is not None:
                return self._fit_incremental(games, times, warm_start, n0, *grown, t0)
        tl = timeline(games, times)
        n = len(games)
        # nodes and games numbered in time order: slice s (a distinct time) holds the nodes
        # node_start[s]..node_start[s+1]-1 (competitor order) and the games game_start[s].. (input order)
        node_order = np.argsort(tl.node_time, kind="stable").astype(np.int64)  # internal -> timeline node
        slice_times, node_counts = np.unique(tl.node_time[node_order], return_counts=True)
        node_start = np.concatenate([[0], np.cumsum(node_counts)]).astype(np.int64)
        game_order = np.argsort(times, kind="stable").astype(np.int64)  # internal -> row
        game_slice = np.searchsorted(slice_times, times[game_order])
        game_start = np.searchsorted(game_slice, np.arange(slice_times.size + 1)).astype(np.int64)
        node_slice = np.repeat(np.arange(slice_times.size, dtype=np.int64), node_counts)
        pos = np.empty(tl.n_nodes, dtype=np.int64)
        pos[node_order] = np.arange(tl.n_nodes)
        prev = tl.prev[node_order]
        prev = np.where(prev >= 0, pos[np.maximum(prev, 0)], -1).astype(np.int64)
        nxt = np.empty(tl.n_nodes, dtype=np.int64)
        _next_nodes(prev, nxt)
        q = self._steps(tl.dt[node_order])
        ga, gb = pos[tl.game_a[game_order]], pos[tl.game_b[game_order]]
        score, home = self._game_arrays(games, game_order)
        prior_var = max(self.sigma, _SD_MIN) ** 2
        msg = np.zeros((n, 4))
        warm_games = 0
        if warm_start is not None:
            warm_games = self._warm_messages(games, times, warm_start, msg)
            msg = msg[game_order]
        parallel = games.period is not None and warm_start is None
        fwd, bwd, lik = np.zeros((tl.n_nodes, 2)), np.zeros((tl.n_nodes, 2)), np.zeros((tl.n_nodes, 2))
        mean_i, var_i, filtered_i, sweeps, change = _run(
            node_start, game_start, prev, nxt, q, 1.0 / prior_var, self.mu / prior_var, ga, gb, score, home,
            self.beta_kernel, self.draw_margin, fwd, bwd, lik, msg, parallel, self.max_iter, self.tol)
        mean, var, filtered_var = (_to_timeline(x, node_order) for x in (mean_i, var_i, filtered_i))
        self._check_finite(mean, var)
        info = {"sweeps": int(sweeps), "change": float(change) if sweeps else float("nan"),
                "converged": bool(sweeps) and change <= self.tol, "n_nodes": tl.n_nodes, "n_slices": slice_times.size,
                "filtered_sd": np.sqrt(filtered_var), "warm_games": warm_games,
                "refit": "none" if warm_start is None else "full", "seconds": time.perf_counter() - t0}
        fit = SmootherFit(self, games, tl, mean, var, self.model, self.times, info=info)
        fit._ttt_state = _State(self._model_settings(), times, slice_times, node_order, node_start, node_slice,
                                game_order, game_start, prev, nxt, q, ga, gb, score, home, fwd, bwd, lik, msg,
                                filtered_i)
        return fit

    def _draws_ruled_out(self, games: Games, warm: SmootherFit | None) -> bool:
        """Whether ``games`` are known to resolve ``draw_probability`` to 0 without a run: they have
        no draw, and ``warm`` (a fit of the same model but for the draw setting) learned 0 from
        games that are the first of these, with every other game later (:func:`resumable`). The
        forward filter's forecasts of those first games are then the same in a run through
        ``games``, and each later game only lowers the chance of a table without draws."""
        st = getattr(warm, "_ttt_state", None)
        if st is None or not st.draws_ruled_out or has_draws(games):
            return False
        ours = {k: v for k, v in self._model_settings().items() if k != "draw_probability"}
        if ours != {k: v for k, v in st.settings.items() if k != "draw_probability"}:
            return False
        return resumable(warm.games, games, self.times(games))[0] == len(warm.games) > 0

    def _warn_draw_free(self, games: Games) -> None:
        """:class:`DrawWarning` (:meth:`filters.draws.LearnedDraws._check_draw_free`) when the
        forward filter's forecasts at this ``draw_probability`` make ``games``, which have no draw,
        implausible. The filter's own warning, which would name it rather than this method, is
        silenced."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DrawWarning)
            proba = self._forward_filter().run(games).proba
        self._check_draw_free(games, proba)

    def _model_settings(self) -> dict:
        """The settings that define the model (the messages of one are no fixed point of another)."""
        return {k: v for k, v in self.get_params().items() if k not in ("max_iter", "tol", "incremental", "refit_tol")}

    def _steps(self, dt: np.ndarray) -> np.ndarray:
        """The random walk's variance ``tau^2 dt`` between consecutive nodes (at most ``_VAR_MAX``)."""
        return np.minimum(self.tau**2 * dt, _VAR_MAX)

    def _game_arrays(self, games: Games, rows: np.ndarray):
        """The scores and home advantages of the games at ``rows``, as the compiled loops take them."""
        return (np.ascontiguousarray(games.score[rows], dtype=np.float64),
                np.where(games.neutral[rows], 0.0, self.home))

    def _check_finite(self, mean: np.ndarray, var: np.ndarray) -> None:
        if not (np.all(np.isfinite(mean)) and np.all(var > 0)):
            raise ArithmeticError(f"{self.name}: the message passing gave a non-finite mean or a non-positive variance "
                                  f"({repr(self)}); this is a bug, please report it with the games")

    def _fit_incremental(self, games: Games, times: np.ndarray, warm: SmootherFit, n0: int, tl, old_to: np.ndarray,
                         new_to: np.ndarray, t0: float) -> SmootherFit:
        """The incremental refit of :meth:`fit`. Nodes and games are numbered in time order, and every
        new one is later than every earlier one, so the earlier fit's arrays keep their numbers and
        the new nodes, games and slices are appended (the same numbering as a fit from scratch);
        then :func:`_refit`."""
        st = warm._ttt_state
        n = len(games)
        n_old, n_old_slices = st.prev.size, st.slice_times.size
        # the new nodes by time, then competitor (new_to is by competitor, then time)
        fresh = new_to[np.argsort(tl.node_time[new_to], kind="stable")]
        new_times, counts = np.unique(tl.node_time[fresh], return_counts=True)
        node_order = np.concatenate([old_to[st.node_order], fresh])
        pos = np.empty(tl.n_nodes, dtype=np.int64)
        pos[node_order] = np.arange(tl.n_nodes)
        new_prev = tl.prev[fresh]
        new_prev = np.where(new_prev >= 0, pos[np.maximum(new_prev, 0)], -1).astype(np.int64)
        prev = np.concatenate([st.prev, new_prev])
        nxt = np.concatenate([st.nxt, np.full(fresh.size, -1, dtype=np.int64)])
        linked = np.flatnonzero(new_prev >= 0)
        nxt[new_prev[linked]] = n_old + linked
        q = np.concatenate([st.q, self._steps(tl.dt[fresh])])
        node_start = np.concatenate([st.node_start, n_old + np.cumsum(counts)]).astype(np.int64)
        node_slice = np.concatenate([st.node_slice, n_old_slices + np.repeat(np.arange(new_times.size), counts)])
        # the new games by time, then row; the earlier ones keep their numbers (their rows mapped)
        rows = np.sort(games.order[n0:])
        rows = rows[np.argsort(times[rows], kind="stable")]
        row_of_old = np.empty(n0, dtype=np.int64)
        row_of_old[warm.games.order] = games.order[:n0]
        game_order = np.concatenate([row_of_old[st.game_order], rows])
        game_start = np.concatenate([st.game_start[:-1], n0 + np.searchsorted(times[rows], new_times),
                                     [n]]).astype(np.int64)
        ga = np.concatenate([st.ga, pos[tl.game_a[rows]]])
        gb = np.concatenate([st.gb, pos[tl.game_b[rows]]])
        score, home = self._game_arrays(games, rows)
        score, home = np.concatenate([st.score, score]), np.concatenate([st.home, home])
        grow = np.zeros((fresh.size, 2))
        fwd, bwd, lik = (np.concatenate([x, grow]) for x in (st.fwd, st.bwd, st.lik))
        msg = np.concatenate([st.msg, np.zeros((rows.size, 4))])
        filtered_i = np.concatenate([st.filtered_var, np.empty(fresh.size)])
        prior_var = max(self.sigma, _SD_MIN) ** 2
        sweeps, change, settled, visits, earliest = _refit(
            n_old_slices, node_start, game_start, node_slice, prev, nxt, q, 1.0 / prior_var, self.mu / prior_var, ga,
            gb, score, home, self.beta_kernel, self.draw_margin, fwd, bwd, lik, msg, filtered_i,
            games.period is not None, self.max_iter, self.tol * 10.0 if self.refit_tol is None else self.refit_tol)
        mean_i, var_i = np.empty(tl.n_nodes), np.empty(tl.n_nodes)
        _posterior(fwd, bwd, lik, mean_i, var_i)
        mean, var, filtered_var = (_to_timeline(x, node_order) for x in (mean_i, var_i, filtered_i))
        self._check_finite(mean, var)
        slice_times = np.concatenate([st.slice_times, new_times])
        info = {"sweeps": int(sweeps), "change": float(change) if sweeps else float("nan"),
                "converged": bool(settled), "n_nodes": tl.n_nodes, "n_slices": slice_times.size,
                "filtered_sd": np.sqrt(filtered_var), "warm_games": n0, "refit": "incremental",
                "slice_visits": int(visits), "earliest_slice": int(earliest), "seconds": time.perf_counter() - t0}
        fit = SmootherFit(self, games, tl, mean, var, self.model, self.times, info=info)
        fit._ttt_state = _State(self._model_settings(), times, slice_times, node_order, node_start, node_slice,
                                game_order, game_start, prev, nxt, q, ga, gb, score, home, fwd, bwd, lik, msg,
                                filtered_i)
        return fit

    @staticmethod
    def _warm_messages(games: Games, times: np.ndarray, warm: SmootherFit, msg: np.ndarray) -> int:
        """Copy into ``msg`` (row order) the messages of the warm fit's games that are games of this
        table (the same row, competitors and time); the number copied."""
        old_games, st = warm.games, warm._ttt_state
        old_msg = np.empty_like(st.msg)
        old_msg[st.game_order] = st.msg  # back to the earlier table's rows
        rows, old_times = np.asarray(old_games.row), st.times
        order = np.argsort(rows, kind="stable")
        at = np.searchsorted(rows[order], games.row)
        at = np.minimum(at, rows.size - 1)
        old = order[at]
        same = ((rows[old] == games.row) & (old_games.a_name[old] == games.a_name)
                & (old_games.b_name[old] == games.b_name) & (old_times[old] == times))
        msg[same] = old_msg[old[same]]
        return int(np.count_nonzero(same))


def _to_timeline(x: np.ndarray, node_order: np.ndarray) -> np.ndarray:
    """Per-node values numbered in time order, renumbered as the timeline's nodes."""
    out = np.empty_like(x)
    out[node_order] = x
    return out


@dataclass
class _State:
    """What a refit continues from, nodes and games numbered in time order (as :func:`_run`): the
    settings; each game's time (the smoother's unit, input row order); the slices' times, each
    internal node's timeline node (``node_order``), the slices' first nodes (``node_start``) and
    each node's slice; each internal game's row (``game_order``) and the slices' first games; each
    node's previous and next node and step variance; each game's nodes, score and home advantage;
    the nodes' forward, backward and likelihood messages and the games' messages (natural
    parameters); the filtered variances; whether the fit learned ``draw_probability`` 0."""

    settings: dict
    times: np.ndarray
    slice_times: np.ndarray
    node_order: np.ndarray
    node_start: np.ndarray
    node_slice: np.ndarray
    game_order: np.ndarray
    game_start: np.ndarray
    prev: np.ndarray
    nxt: np.ndarray
    q: np.ndarray
    ga: np.ndarray
    gb: np.ndarray
    score: np.ndarray
    home: np.ndarray
    fwd: np.ndarray
    bwd: np.ndarray
    lik: np.ndarray
    msg: np.ndarray
    filtered_var: np.ndarray
    #: whether ``draw_probability`` 0 was learned from these games (``None`` given): a refit on
    #: games that extend them without a draw learns 0 too, without a run
    draws_ruled_out: bool = False
