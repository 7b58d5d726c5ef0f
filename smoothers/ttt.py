r"""TrueSkill Through Time: expectation propagation of TrueSkill's model over the whole history.

Dangauthier, Herbrich, Minka and Graepel, "TrueSkill Through Time: Revisiting the History of
Chess" (NIPS 2007); Landfried and Mocskos, "TrueSkill Through Time: reliable initial skill
estimates and historical comparability with Julia, Python and R" (2021 onwards; the
``trueskillthroughtime`` package, against which ``tests/test_ttt.py`` checks this module).

The model is the TrueSkill filter's (:class:`filters.TrueSkill` with ``dynamics="time"``) laid out
as the smoothers' whole-history model (:mod:`smoothers.base`): one Gaussian skill per competitor
and time slice at which it plays (a node; a rating period, or a distinct time), a newcomer's first
node ``N(mu, sigma^2)``, consecutive nodes linked by the random walk
``s_k = s_{k-1} + N(0, tau^2 dt)``, and each game one factor on the difference of its two nodes:
performances ``p = s + N(0, beta^2)``, a win when ``p_a - p_b + home > eps``, a draw within
``+-eps`` (the draw margin of ``draw_probability``, :func:`filters.trueskill.draw_margin`).

Every node's belief is the product of three kinds of Gaussian messages, kept in natural
parameters (precision ``pi = 1/var``, precision-mean ``tau = mean/var``; a product of Gaussians
adds them, a division subtracts them):

- the *forward* message from its competitor's previous node (or the prior at a first node): that
  node's forward message times its games' messages, widened by ``tau^2 dt``;
- the *backward* message from its next node: that node's backward message times its games'
  messages, widened by the same ``tau^2 dt`` (uniform, ``pi = 0``, at a last node);
- one *likelihood* message per game it plays.

Widening ``(pi, tau)`` by the variance ``q`` is ``(pi, tau) / (1 + pi q)``: no division by a
precision, and a uniform message stays uniform. A game's message to ``a`` is recomputed by EP from
the cavities (each node's belief divided by the game's own message): with ``c^2 = 2 beta^2 +
var_a + var_b``, ``t = (m_a - m_b + home) / c`` and TrueSkill's truncated-Gaussian corrections
``v``, ``w`` (:mod:`statespace._gaussian`; ``sign`` -1 for a loss of ``a``, draws use ``v_draw``,
``w_draw``), the message that moment-matches the tilted distribution is

    pi_a = w / (c^2 - w var_a),   tau_a = (w m_a + sign c v) / (c^2 - w var_a)

(and for ``b`` the same with ``var_b``, ``m_b`` and ``-sign``): ``c^2 - w var_a >= 2 beta^2 +
var_b > 0`` since ``w`` is in (0, 1), so every message has a positive precision and no division
of Gaussians can produce a negative variance. The posterior of a single game is then exactly the
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

Cost: one compiled loop (``numba.njit(cache=True)``) over flat arrays, O(games + nodes) a sweep;
the measured times are in ``docs/smoothers.md`` (``benchmarks/bench_forward_backward.py``).
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import njit

from statespace import Games, SkillModel, Threshold
from statespace._gaussian import v_draw, v_win, w_draw, w_win

from .base import Smoother, SmootherFit, timeline

__all__ = ["TrueSkillThroughTime", "MU", "SIGMA", "BETA", "TAU", "DRAW_PROBABILITY", "MAX_ITER", "TOL"]

#: a newcomer's mean skill (TrueSkill's 25; the displayed rating ``mu - 3 sigma`` starts at 0)
MU = 25.0
#: a newcomer's uncertainty: the sd of the prior skill (25/3, so that ``mu - 3 sigma = 0``)
SIGMA = MU / 3.0
#: the performance noise: the skill lead that guarantees about a 76% chance of winning
#: (``Phi(1 / sqrt(2))``) between competitors whose skills are known exactly (``SIGMA / 2``)
BETA = SIGMA / 2.0
#: the dynamics noise: the sd by which a skill wanders per unit of time (a rating period, or
#: ``period_days`` days); ``SIGMA / 100``, TrueSkill's default ``tau`` per game, here per unit of time
TAU = SIGMA / 100.0
#: the share of draws between two equally skilled competitors (sets the draw margin); as
#: :data:`filters.trueskill.DRAW_PROBABILITY`
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
# variance is kept within [_VAR_MIN, _VAR_MAX] and a mean within +-_MEAN_MAX (filters._kernels' bounds)
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
        t = diff / c
        v = v_draw(t, e)
        w = w_draw(t, e)
    else:
        sign = 1.0 if score == 1.0 else -1.0
        t = sign * diff / c
        v = v_win(t, e)
        w = w_win(t, e)
    da = c2 - w * va
    db = c2 - w * vb
    return w / da, (w * ma + sign * c * v) / da, w / db, (w * mb - sign * c * v) / db


@njit(cache=True)
def _slice_games(lo, hi, order, ga, gb, score, home, beta, eps, fwd, bwd, lik, msg, parallel, tmp):
    """Recompute the messages of the games ``order[lo:hi]`` (one slice), one after another (each from
    the beliefs the earlier ones left), or with ``parallel`` all from the beliefs before the slice."""
    for j in range(lo, hi):
        g = order[j]
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
        for j in range(lo, hi):
            g = order[j]
            a, b = ga[g], gb[g]
            lik[a, 0] += tmp[g, 0] - msg[g, 0]
            lik[a, 1] += tmp[g, 1] - msg[g, 1]
            lik[b, 0] += tmp[g, 2] - msg[g, 2]
            lik[b, 1] += tmp[g, 3] - msg[g, 3]
            for col in range(4):
                msg[g, col] = tmp[g, col]


@njit(cache=True)
def _forward(slice_nodes, node_start, game_order, game_start, prev, q, prior_pi, prior_tau, ga, gb, score, home,
             beta, eps, fwd, bwd, lik, msg, parallel, tmp):
    """One forward pass: per slice in time order, its nodes' forward messages, then its games."""
    for s in range(node_start.size - 1):
        for j in range(node_start[s], node_start[s + 1]):
            k = slice_nodes[j]
            p = prev[k]
            if p < 0:
                fwd[k, 0], fwd[k, 1] = prior_pi, prior_tau
            else:
                fwd[k, 0], fwd[k, 1] = _widen(fwd[p, 0] + lik[p, 0], fwd[p, 1] + lik[p, 1], q[k])
        _slice_games(game_start[s], game_start[s + 1], game_order, ga, gb, score, home, beta, eps, fwd, bwd, lik,
                     msg, parallel, tmp)


@njit(cache=True)
def _backward(slice_nodes, node_start, game_order, game_start, nxt, q, ga, gb, score, home, beta, eps, fwd, bwd,
              lik, msg, tmp):
    """One backward pass: per slice in reverse time order, its nodes' backward messages, then its games."""
    for s in range(node_start.size - 2, -1, -1):
        for j in range(node_start[s], node_start[s + 1]):
            k = slice_nodes[j]
            n = nxt[k]
            if n < 0:
                bwd[k, 0], bwd[k, 1] = 0.0, 0.0
            else:
                bwd[k, 0], bwd[k, 1] = _widen(bwd[n, 0] + lik[n, 0], bwd[n, 1] + lik[n, 1], q[n])
        _slice_games(game_start[s], game_start[s + 1], game_order, ga, gb, score, home, beta, eps, fwd, bwd, lik,
                     msg, False, tmp)


@njit(cache=True)
def _posterior(fwd, bwd, lik, mean, var):
    """Every node's posterior moments (the product of its messages)."""
    for k in range(mean.size):
        pi = fwd[k, 0] + bwd[k, 0] + lik[k, 0]
        mean[k], var[k] = _moments(pi, fwd[k, 1] + bwd[k, 1] + lik[k, 1])


@njit(cache=True)
def _run(slice_nodes, node_start, game_order, game_start, prev, nxt, q, prior_pi, prior_tau, ga, gb, score, home,
         beta, eps, msg, parallel_first, max_iter, tol):
    """The forward pass, then backward-forward sweeps until no posterior mean or sd moves by more
    than ``tol`` (or ``max_iter`` sweeps). ``msg`` (games x 4: ``pi_a, tau_a, pi_b, tau_b``) holds
    the starting messages and is updated in place. Returns the nodes' posterior means and
    variances, the forward-pass (filtered) variances, the sweeps run and the last sweep's largest
    change (-1 when none ran)."""
    n_nodes = prev.size
    fwd = np.zeros((n_nodes, 2))
    bwd = np.zeros((n_nodes, 2))
    lik = np.zeros((n_nodes, 2))
    tmp = np.zeros(msg.shape) if parallel_first else np.zeros((0, 4))
    for g in range(ga.size):
        lik[ga[g], 0] += msg[g, 0]
        lik[ga[g], 1] += msg[g, 1]
        lik[gb[g], 0] += msg[g, 2]
        lik[gb[g], 1] += msg[g, 3]
    _forward(slice_nodes, node_start, game_order, game_start, prev, q, prior_pi, prior_tau, ga, gb, score, home,
             beta, eps, fwd, bwd, lik, msg, parallel_first, tmp)
    mean = np.empty(n_nodes)
    var = np.empty(n_nodes)
    _posterior(fwd, bwd, lik, mean, var)
    filtered_var = var.copy()
    new_mean = np.empty(n_nodes)
    new_var = np.empty(n_nodes)
    sweeps = 0
    change = -1.0
    while sweeps < max_iter:
        _backward(slice_nodes, node_start, game_order, game_start, nxt, q, ga, gb, score, home, beta, eps, fwd,
                  bwd, lik, msg, tmp)
        _forward(slice_nodes, node_start, game_order, game_start, prev, q, prior_pi, prior_tau, ga, gb, score,
                 home, beta, eps, fwd, bwd, lik, msg, False, tmp)
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


# ---------------------------------------------------------------------------- the method
def _check(name: str, value, lo: float, hi: float = math.inf, *, lo_open: bool = False, hi_open: bool = False,
           integer: bool = False) -> float:
    """``value`` as a float (or int) if it is a finite number in the interval, else a ``ValueError``
    naming the setting."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
    if ok and integer:
        ok = float(value) == int(value)
    if ok:
        v = float(value)
        ok = math.isfinite(v) and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
    if not ok:
        kind = "a whole number" if integer else "a finite number"
        interval = f"{'(' if lo_open else '['}{lo:g}, {'inf' if hi == math.inf else f'{hi:g}'}{')' if hi_open else ']'}"
        raise ValueError(f"TrueSkillThroughTime: {name} must be {kind} in {interval}, got {value!r}")
    return int(value) if integer else float(value)


class TrueSkillThroughTime(Smoother):
    """TrueSkill Through Time (Dangauthier et al. 2007): TrueSkill's probit model with a draw
    margin, smoothed over the whole history by expectation propagation (see the module docstring).

    Parameters
    ----------
    mu, sigma:
        A newcomer's skill, ``N(25, (25/3)^2)`` (:data:`MU`, :data:`SIGMA`).
    beta:
        Performance noise (:data:`BETA` = 25/6): a skill lead of ``beta`` gives about a 76% chance
        of winning; the model's scale is ``sqrt(2) * beta`` (probit link).
    tau:
        Dynamics noise (:data:`TAU` = 25/300): the sd a skill wanders per unit of time, so the
        variance ``tau^2 dt`` links consecutive nodes ``dt`` apart (the random walk); 0 for skills
        that never change.
    draw_probability:
        The share of draws between equal competitors (:data:`DRAW_PROBABILITY` = 0.10), which sets
        the draw margin ``eps = sqrt(2) beta Phi^{-1}((1 + p) / 2)`` (:func:`filters.trueskill.draw_margin`).
    home:
        Home advantage in skill units, added to ``a``'s performance when ``a`` is at home.
    period_days:
        The unit of time when the games have no rating periods (days; numeric times: their own
        unit). With rating periods (``Games.with_periods``) the unit is one period.
    max_iter:
        At most this many backward-forward sweeps after the first forward pass (:data:`MAX_ITER` =
        100); ``max_iter=0`` stops after the forward pass, which is the TrueSkill filter
        (``filters.TrueSkill(dynamics="time")``, same settings).
    tol:
        The sweeps stop once no node's posterior mean or sd moved by more than ``tol`` skill units
        in a sweep (:data:`TOL` = 1e-4). ``fit.info`` reports ``sweeps``, ``change`` (the last
        sweep's largest move) and ``converged``.

    ``fit(games)`` returns a :class:`smoothers.base.SmootherFit` (``predict_proba``, ``ratings``,
    ``trajectories``: the posterior of every node). Game weights are refused (``ValueError``): a
    tempered likelihood is not a TrueSkill factor.
    """

    name = "ttt"
    honours_weights = False

    def __init__(self, mu: float = MU, sigma: float = SIGMA, beta: float = BETA, tau: float = TAU,
                 draw_probability: float = DRAW_PROBABILITY, *, home: float = 0.0, period_days: float = 1.0,
                 max_iter: int = MAX_ITER, tol: float = TOL):
        self.mu = _check("mu", mu, -_MEAN_MAX, _MEAN_MAX)
        self.sigma = _check("sigma", sigma, 0.0, 1e150, lo_open=True)
        self.beta = _check("beta", beta, 0.0, 1e150, lo_open=True)
        self.tau = _check("tau", tau, 0.0, 1e150)
        self.draw_probability = _check("draw_probability", draw_probability, 0.0, 1.0, hi_open=True)
        self.home = _check("home", home, -_MEAN_MAX, _MEAN_MAX)
        self.period_days = _check("period_days", period_days, 0.0, lo_open=True)
        self.max_iter = _check("max_iter", max_iter, 0.0, integer=True)
        self.tol = _check("tol", tol, 0.0)

    def __repr__(self) -> str:
        extra = f", home={self.home:g}" if self.home else ""
        return (f"TrueSkillThroughTime(mu={self.mu:g}, sigma={self.sigma:g}, beta={self.beta:g}, tau={self.tau:g}, "
                f"draw_probability={self.draw_probability:g}{extra})")

    @property
    def beta_kernel(self) -> float:
        """The ``beta`` the messages use: at least 1e-150 (as the TrueSkill filter's), so ``c^2 > 0``."""
        return max(self.beta, _SD_MIN)

    @property
    def draw_margin(self) -> float:
        """One-vs-one draw margin ``sqrt(2) * beta * Phi^{-1}((p_draw + 1) / 2)`` (skill units)."""
        from filters.trueskill import draw_margin

        return draw_margin(self.draw_probability, self.beta_kernel, 2)

    @property
    def model(self) -> SkillModel:
        """Probit link at scale ``sqrt(2) beta``, prior ``N(mu, sigma^2)``, drift ``tau^2`` per unit of
        time, the threshold draw model with the draw margin, and the home advantage: the model of
        ``filters.TrueSkill(dynamics="time")``."""
        return SkillModel("probit", math.sqrt(2.0) * self.beta_kernel, self.mu, max(self.sigma, _SD_MIN) ** 2,
                          self.tau**2, Threshold(self.draw_margin), self.home)

    def fit(self, games: Games, initial=None, *, warm_start: SmootherFit | None = None) -> SmootherFit:
        """The posterior of every node given ``games`` (see the class docstring).

        ``warm_start``: an earlier fit of this method on part of the same history (e.g. the games
        before a date: a walk-forward refit). Its games' messages start EP (matched by the games'
        rows, competitors and times; the other games start uniform), and the first forward pass
        takes the games one after another. The cost of a sweep is the same, O(games + nodes); what
        a warm start saves is sweeps: the earlier games' messages are at their fixed point already,
        and only the new games' evidence has to spread back through the history. The common level
        still settles slowly (see the module docstring), so the saving is modest: on the issue's
        benchmark, refitting 40 periods from a fit of the first 39 took 35 sweeps instead of 45.
        ``max_iter=0`` with a warm start is not the filter.
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
            if getattr(warm_start, "_ttt_messages", None) is None:
                raise ValueError(f"{self.name}: warm_start must be a fit of TrueSkillThroughTime (it starts from that "
                                 f"fit's game messages), got a fit of {warm_start.method!r}")
            warm_start._check_time_base(games)
        t0 = time.perf_counter()
        times = self.times(games)
        tl = timeline(games, times)
        n = len(games)
        # slices: the distinct times; nodes and games in time order (games stable: input order within a time)
        node_order = np.argsort(tl.node_time, kind="stable").astype(np.int64)
        slice_times, node_counts = np.unique(tl.node_time[node_order], return_counts=True)
        node_start = np.concatenate([[0], np.cumsum(node_counts)]).astype(np.int64)
        game_order = np.argsort(times, kind="stable").astype(np.int64)
        game_slice = np.searchsorted(slice_times, times[game_order])
        game_start = np.searchsorted(game_slice, np.arange(slice_times.size + 1)).astype(np.int64)
        nxt = np.full(tl.n_nodes, -1, dtype=np.int64)
        has_prev = tl.prev >= 0
        nxt[tl.prev[has_prev]] = np.flatnonzero(has_prev)
        q = np.minimum(self.tau**2 * tl.dt, _VAR_MAX)
        prior_var = max(self.sigma, _SD_MIN) ** 2
        home = np.where(games.neutral, 0.0, self.home)
        msg = np.zeros((n, 4))
        warm_games = 0
        if warm_start is not None:
            warm_games = self._warm_messages(games, times, warm_start, msg)
        parallel = games.period is not None and warm_start is None
        mean, var, filtered_var, sweeps, change = _run(
            node_order, node_start, game_order, game_start, tl.prev.astype(np.int64), nxt, q, 1.0 / prior_var,
            self.mu / prior_var, tl.game_a.astype(np.int64), tl.game_b.astype(np.int64),
            np.ascontiguousarray(games.score, dtype=np.float64), home, self.beta_kernel, self.draw_margin, msg,
            parallel, self.max_iter, self.tol)
        if not (np.all(np.isfinite(mean)) and np.all(var > 0)):
            raise ArithmeticError(f"{self.name}: the message passing gave a non-finite mean or a non-positive variance "
                                  f"({repr(self)}); this is a bug, please report it with the games")
        info = {"sweeps": int(sweeps), "change": float(change) if sweeps else float("nan"),
                "converged": bool(sweeps) and change <= self.tol, "n_nodes": tl.n_nodes, "n_slices": slice_times.size,
                "filtered_sd": np.sqrt(filtered_var), "warm_games": warm_games,
                "seconds": time.perf_counter() - t0}
        fit = SmootherFit(self, games, tl, mean, var, self.model, self.times, info=info)
        fit._ttt_messages = (np.asarray(games.row), games.a_name, games.b_name, times, msg)
        return fit

    @staticmethod
    def _warm_messages(games: Games, times: np.ndarray, warm: SmootherFit, msg: np.ndarray) -> int:
        """Copy into ``msg`` the messages of the warm fit's games that are games of this table (the same
        row, competitors and time); the number copied."""
        rows, a_name, b_name, old_times, old_msg = warm._ttt_messages
        order = np.argsort(rows, kind="stable")
        at = np.searchsorted(rows[order], games.row)
        at = np.minimum(at, rows.size - 1)
        old = order[at]
        same = ((rows[old] == games.row) & (a_name[old] == games.a_name) & (b_name[old] == games.b_name)
                & (old_times[old] == times))
        msg[same] = old_msg[old[same]]
        return int(np.count_nonzero(same))
