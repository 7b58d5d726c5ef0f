r"""Expectation propagation on TrueSkill's factor graph for one match of many sides (teams,
free-for-all, ties, partial play), compiled.

Herbrich, Minka and Graepel, "TrueSkill: A Bayesian skill rating system" (NIPS 2006), Fig. 1:
skills :math:`s_k \sim \mathcal{N}(\mu_k, \sigma_k^2 + \tau^2)` (the prior, with the dynamics
noise), performances :math:`p_k \sim \mathcal{N}(s_k, \beta^2)`, team performances
:math:`t_i = \sum_{k \in i} w_k p_k` (partial play :math:`w_k`), differences of neighbouring teams
in rank order :math:`d_j = t_j - t_{j+1}`, and the observation that :math:`d_j > \varepsilon_j`
(a win) or :math:`|d_j| \le \varepsilon_j` (a tie), with the draw margin of the pair's
:math:`n_j` players :math:`\varepsilon_j = \sqrt{n_j}\,\varepsilon_1`,
:math:`\varepsilon_1 = \beta\,\Phi^{-1}\bigl((p_\text{draw} + 1) / 2\bigr)`.

The schedule is the one of the ``trueskill`` package (H. Lee, ``TrueSkill.run_schedule``): the
priors, performances and team sums downwards; then the chain of differences, swept forward
(difference down, truncation up, message to the right team) and back (to the left team) until no
truncation moves its difference's marginal by more than ``min_delta`` (the larger of the changes
of :math:`\tau` and of :math:`\sqrt{|\Delta\pi|}`), at most ``max_iter`` times (one pass for two
teams, where it is exact ADF); then the messages back up to the skills. Each sweep is
:math:`O(n)` in the sides; a team's sum factor sends to each of its members in :math:`O(m^2)` for
its :math:`m` members.

Gaussians are kept in natural parameters, precision :math:`\pi = 1 / \sigma^2` and
precision-adjusted mean :math:`\tau = \mu / \sigma^2`; a variable's marginal is the product of its
incoming messages, updated as ``marginal / old message * new message``, and a cavity is the
marginal divided by one message. Every variable and message of the match lives in one work array
(rows of ``(pi, tau)``, allocated once per match).

Numeric guards: a message's variance and the posterior's are kept in ``[VAR_MIN, VAR_MAX]`` and
the posterior mean within ``+-MEAN_MAX`` (:mod:`filters.kernels`), as the filters' own kernels keep
them. (Natural parameters still overflow where :math:`|\mu| / \sigma^2` passes 1e308, e.g. a mean of
1e300 with a sigma below 1e-4: the graph is not shifted to centre the means, since with partial
play a common shift of the skills moves the teams' performances by different amounts; the result
is then not finite and the caller refuses it.)
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model.gaussian import T_MAX, cdf, pdf, v_draw, w_draw

from ._belief import _BETA, _EPS, _TAU, _TIME
from .kernels import clamp_mean, clamp_var as _clamp_var
from .match_loop import match_kernel, side_moments

__all__ = ["ep_match", "trueskill_match", "MIN_DELTA", "MAX_ITER"]

#: the ``trueskill`` package's stopping rule: the chain is swept until no truncation factor moves
#: its difference by more than MIN_DELTA, at most MAX_ITER times
MIN_DELTA = 1e-4
MAX_ITER = 10


@njit(cache=True)
def _bigger(a, b):
    """Python's ``max(a, b)``: ``b`` only where it is greater (a NaN ``a`` stays, a NaN ``b`` is
    passed over), so that the stopping rule reads a NaN as the reference schedule does."""
    return b if b > a else a


@njit(cache=True)
def _delta(pi0, tau0, pi1, tau1):
    """The change of a marginal: the larger of :math:`|\\Delta\\tau|` and :math:`\\sqrt{|\\Delta\\pi|}`
    (an infinite change of precision counts 0)."""
    d_pi = abs(pi0 - pi1)
    if math.isinf(d_pi):
        d_pi = 0.0
    return _bigger(abs(tau0 - tau1), math.sqrt(d_pi))


@njit(cache=True)
def _set_message(g, v, m, pi, tau):
    """Replace message row ``m`` of variable row ``v`` by ``(pi, tau)``; returns the change of the
    marginal."""
    return _replace(g, v, m, g[v, 0] - g[m, 0] + pi, g[v, 1] - g[m, 1] + tau, pi, tau)


@njit(cache=True)
def _set_value(g, v, m, pi, tau):
    """Set variable ``v``'s marginal to ``(pi, tau)`` by choosing message ``m`` accordingly; returns
    the change of the marginal."""
    return _replace(g, v, m, pi, tau, pi - (g[v, 0] - g[m, 0]), tau - (g[v, 1] - g[m, 1]))


@njit(cache=True)
def _replace(g, v, m, pi, tau, msg_pi, msg_tau):
    """Variable ``v``'s marginal becomes ``(pi, tau)`` and message ``m`` becomes ``(msg_pi, msg_tau)``;
    returns the change of the marginal."""
    delta = _delta(g[v, 0], g[v, 1], pi, tau)
    g[v, 0] = pi
    g[v, 1] = tau
    g[m, 0] = msg_pi
    g[m, 1] = msg_tau
    return delta


@njit(cache=True)
def _cavity(g, v, m):
    """Variable ``v``'s marginal without message ``m``, as (mean, variance) (flat: variance inf)."""
    pi = g[v, 0] - g[m, 0]
    tau = g[v, 1] - g[m, 1]
    if pi <= 0.0:
        return 0.0, math.inf
    return tau / pi, 1.0 / pi


@njit(cache=True)
def _send(g, v, m, mean, var):
    """Set message ``m`` of ``v`` to N(mean, var): infinite variance is the flat message, a finite
    one is kept in ``[VAR_MIN, VAR_MAX]``; returns the change of the marginal."""
    if math.isinf(var):
        return _set_message(g, v, m, 0.0, 0.0)
    var = _clamp_var(var)
    return _set_message(g, v, m, 1.0 / var, mean / var)


@njit(cache=True)
def _diff_down(g, d, md, left, right, ml, mr):
    """Difference factor :math:`d = t_\\text{left} - t_\\text{right}` to ``d`` (its message ``md``; the
    factor's messages on the teams are ``ml``, ``mr``)."""
    m0, v0 = _cavity(g, left, ml)
    m1, v1 = _cavity(g, right, mr)
    return _send(g, d, md, m0 - m1, v0 + v1)


@njit(cache=True)
def _diff_up(g, d, md, target, mt, other, mo, sign):
    """Difference factor to one of its teams: ``target = other + sign * d`` (``sign`` +1 to the left
    team, -1 to the right one)."""
    m_y, v_y = _cavity(g, d, md)
    mean = m_y * sign
    var = v_y
    m, v = _cavity(g, other, mo)
    mean += m
    var += v
    if math.isnan(mean) and math.isinf(var):
        mean = 0.0
    return _send(g, target, mt, mean, var)


@njit(cache=True)
def _truncate(g, d, mt, eps, tie):
    """Truncation factor on difference ``d`` (its message ``mt``): the moments of the cavity
    truncated to :math:`d > \\varepsilon` (a win) or :math:`|d| \\le \\varepsilon` (a tie) become
    the new marginal (Herbrich et al. 2006, Table 1's :math:`v`, :math:`w`)."""
    m, v = _cavity(g, d, mt)
    sd = math.sqrt(v)
    t = m / sd
    e = eps / sd
    if tie:
        vv = v_draw(t, e)
        ww = w_draw(t, e)
    else:
        vv, ww = _win(t, e)
    mean = m + sd * vv
    var = _clamp_var(v * (1.0 - ww))
    return _set_value(g, d, mt, 1.0 / var, mean / var)


@njit(cache=True)
def _win(t, eps):
    r""":func:`statespace.model.gaussian.v_win` and :func:`~statespace.model.gaussian.w_win` at once
    (one Mills' ratio for both). In the left tail, :math:`u = \varepsilon - t > 4`, the continued
    fraction :math:`T(u) = 1 / (u + 2 / (u + 3 / (u + \ldots)))` is cut at :math:`8 + 160 / u` terms
    (60 at most) instead of 60: it has settled to the last digit well before (39 terms at
    :math:`u = 4`, 17 at 8, 6 at 50), and the differences of a long free-for-all chain sit hundreds
    of sds into the tail, where the 60 terms were most of the time of a sweep."""
    x = t - eps
    if x < -4.0:
        u = -max(x, -T_MAX)
        acc = u
        for k in range(min(60, 8 + int(160.0 / u)), 1, -1):
            acc = u + k / acc
        tail = 1.0 / acc
        v = u + tail
        w = v * tail
    else:
        v = pdf(x) / cdf(x)
        w = v * (v + x)
    if not w > 0.0:  # far right tail: the limit is 0
        w = 1e-300
    elif w >= 1.0:  # far left tail: w -> 1 from below
        w = 1.0 - 1e-16
    return v, w


@njit(cache=True)
def _order(rank, s0, s1):
    """The match's sides sorted by rank, stable (positions from ``s0``)."""
    n = s1 - s0
    sorted_already = True
    for j in range(1, n):
        if rank[s0 + j] < rank[s0 + j - 1]:
            sorted_already = False
            break
    if sorted_already:
        return np.arange(n)
    return np.argsort(rank[s0:s1], kind="mergesort")


@njit(cache=True)
def ep_match(x, side_ptr, member, weight, rank, s0, s1, beta, tau, eps_unit, min_delta, max_iter):
    """Rate one match by expectation propagation: the members' rows ``(mu, sigma)`` of ``x`` (columns
    0 and 1) are replaced by their posteriors.

    The sides are rows ``s0 .. s1 - 1`` of ``rank`` (lower places first, equal ranks tie), side
    ``s``'s members rows ``side_ptr[s] .. side_ptr[s + 1] - 1`` of ``member`` (rows of ``x``) and
    ``weight`` (partial play; 0 learns nothing). ``tau``: the dynamics noise added to every prior
    variance (0 where it was added already); ``eps_unit``: the draw margin per player, a pair of
    sides with ``n`` players in all has the margin ``eps_unit * sqrt(n)``."""
    order = _order(rank, s0, s1)
    n = s1 - s0
    L = n - 1
    start = np.empty(n + 1, np.int64)  # each sorted team's first member position
    start[0] = 0
    for j in range(n):
        s = s0 + order[j]
        start[j + 1] = start[j] + side_ptr[s + 1] - side_ptr[s]
    M = start[n]
    # rows of the work array: the variables, then the messages (see the module docstring)
    S = 0                  # skills
    P = S + M              # performances
    T = P + M              # team performances
    D = T + n              # differences
    MPRIOR = D + L         # prior -> skill
    MLS = MPRIOR + M       # likelihood -> skill
    MLP = MLS + M          # likelihood -> performance
    MSP = MLP + M          # team sum -> performance
    MST = MSP + M          # team sum -> team
    MLEFT = MST + n        # difference j - 1 -> team j (team j is its right term)
    MRIGHT = MLEFT + n     # difference j -> team j (its left term)
    MDD = MRIGHT + n       # difference sum -> difference
    MTR = MDD + L          # truncation -> difference
    g = np.zeros((MTR + L, 2))
    b2 = beta * beta
    t2 = tau * tau
    # down: priors, performances (skill + N(0, beta^2), exact both ways), team sums
    for j in range(n):
        s = s0 + order[j]
        mean = 0.0
        var = 0.0
        for k in range(side_ptr[s], side_ptr[s + 1]):
            q = start[j] + k - side_ptr[s]
            i = member[k]
            sig = x[i, 1]
            _send(g, S + q, MPRIOR + q, x[i, 0], sig * sig + t2)
            m, v = _cavity(g, S + q, MLS + q)
            _send(g, P + q, MLP + q, m, v + b2)
            m, v = _cavity(g, P + q, MSP + q)
            c = weight[k]
            mean += c * m
            var += c * c * v
        _send(g, T + j, MST + j, mean, var)
    # the chain of differences
    for _ in range(max_iter):
        if L == 1:
            _diff_down(g, D, MDD, T, T + 1, MRIGHT, MLEFT + 1)
            delta = _truncate(g, D, MTR, _eps(eps_unit, side_ptr, s0, order, 0), _tie(rank, s0, order, 0))
        else:
            delta = 0.0
            for j in range(L - 1):
                _diff_down(g, D + j, MDD + j, T + j, T + j + 1, MRIGHT + j, MLEFT + j + 1)
                delta = _bigger(delta, _truncate(g, D + j, MTR + j, _eps(eps_unit, side_ptr, s0, order, j),
                                                 _tie(rank, s0, order, j)))
                _diff_up(g, D + j, MDD + j, T + j + 1, MLEFT + j + 1, T + j, MRIGHT + j, -1.0)
            for j in range(L - 1, 0, -1):
                _diff_down(g, D + j, MDD + j, T + j, T + j + 1, MRIGHT + j, MLEFT + j + 1)
                delta = _bigger(delta, _truncate(g, D + j, MTR + j, _eps(eps_unit, side_ptr, s0, order, j),
                                                 _tie(rank, s0, order, j)))
                _diff_up(g, D + j, MDD + j, T + j, MRIGHT + j, T + j + 1, MLEFT + j + 1, 1.0)
        if delta <= min_delta:
            break
    _diff_up(g, D, MDD, T, MRIGHT, T + 1, MLEFT + 1, 1.0)
    _diff_up(g, D + L - 1, MDD + L - 1, T + L, MLEFT + L, T + L - 1, MRIGHT + L - 1, -1.0)
    # up: team sums to the performances, performances to the skills
    for j in range(n):
        s = s0 + order[j]
        k0 = side_ptr[s]
        k1 = side_ptr[s + 1]
        for k in range(k0, k1):
            q = start[j] + k - k0
            cj = weight[k]
            if cj == 0.0:  # a player who took no part: the match says nothing about them
                _set_message(g, P + q, MSP + q, 0.0, 0.0)
                continue
            m_y, v_y = _cavity(g, T + j, MST + j)
            # divided twice, not by cj^2, which underflows to 0 for a share below 1e-154: the
            # variance is then inf, the flat message (a player with so small a share learns nothing)
            mean = m_y / cj
            var = v_y / cj / cj
            for k2 in range(k0, k1):
                if k2 == k:
                    continue
                q2 = start[j] + k2 - k0
                m, v = _cavity(g, P + q2, MSP + q2)
                r = weight[k2] / cj
                mean -= r * m
                var += r * r * v
            if math.isnan(mean) and math.isinf(var):  # inf - inf in a mean whose message is flat anyway
                mean = 0.0
            _send(g, P + q, MSP + q, mean, var)
    for q in range(M):
        m, v = _cavity(g, P + q, MLP + q)
        _send(g, S + q, MLS + q, m, v + b2)
    for j in range(n):
        s = s0 + order[j]
        for k in range(side_ptr[s], side_ptr[s + 1]):
            q = start[j] + k - side_ptr[s]
            pi = g[S + q, 0]
            mu = g[S + q, 1] / pi if pi != 0.0 else 0.0
            var = 1.0 / pi if pi != 0.0 else math.inf
            i = member[k]
            x[i, 0] = clamp_mean(mu)
            x[i, 1] = math.sqrt(_clamp_var(var))


@njit(cache=True)
def _eps(eps_unit, side_ptr, s0, order, j):
    """The draw margin of the ``j``-th pair in rank order: ``eps_unit * sqrt(n)`` for its ``n``
    players (the ``trueskill`` package's ``calc_draw_margin(p, n)``)."""
    a = s0 + order[j]
    b = s0 + order[j + 1]
    size = side_ptr[a + 1] - side_ptr[a] + side_ptr[b + 1] - side_ptr[b]
    return eps_unit * math.sqrt(size)


@njit(cache=True)
def _tie(rank, s0, order, j):
    return rank[s0 + order[j]] == rank[s0 + order[j + 1]]


@match_kernel
def trueskill_match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    r"""TrueSkill's match kernel (:data:`filters.match_loop.MATCH_SIG`): the sides' forecast moments
    from the pre-match state, then :func:`ep_match` with the stopping rule of the ``trueskill``
    package. With ``dynamics="game"`` :math:`\tau^2` is added to each member's variance here (as
    the package does before a match); with ``dynamics="time"`` the loop's predict kernel added it.
    The stored draw margin is the one-vs-one :math:`\varepsilon_2 = \sqrt 2\,\varepsilon_1`, so a pair of
    sides with :math:`n` players has :math:`\varepsilon_2 \sqrt{n / 2}`. Home advantage is not part of a
    match (:meth:`statespace.data.matches.Matches.from_games`)."""
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, 1)
    tau = theta[_TAU] if theta[_TIME] == 0.0 else 0.0
    ep_match(x, side_ptr, member, weight, rank, s0, s1, theta[_BETA], tau, theta[_EPS] / math.sqrt(2.0),
             MIN_DELTA, MAX_ITER)
