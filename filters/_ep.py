"""Expectation propagation on TrueSkill's factor graph (teams, free-for-all, ties, partial play).

Herbrich, Minka and Graepel, "TrueSkill: A Bayesian skill rating system" (NIPS 2006), Fig. 1:
skills ``s_ij`` (prior, with the dynamics noise already added), performances
``p_ij ~ N(s_ij, beta^2)``, team performances ``t_i = sum_j w_ij p_ij``, differences of
neighbouring teams in rank order ``d_k = t_k - t_{k+1}``, and the observation that ``d_k > eps_k``
(a win) or ``|d_k| <= eps_k`` (a tie). Only the difference layer needs iterating; the schedule is
the paper's: sweep the differences forward and back until no truncation message moves by more
than ``min_delta``, at most ``max_iter`` times (one pass for two teams, where it is exact ADF).

Gaussians are kept in natural parameters: precision ``pi = 1 / sigma^2`` and precision-adjusted
mean ``tau = mu / sigma^2``; a variable's marginal is the product of its incoming messages.

Numeric guards: a message's variance and the posterior's are kept in
``[VAR_MIN, VAR_MAX]`` and the posterior mean within ``+-MEAN_MAX`` (:mod:`filters.kernels`),
as the filters' own kernels keep them. (Natural parameters still overflow where ``|mu| / sigma^2``
passes 1e308, e.g. a mean of 1e300 with a sigma below 1e-4: the graph is not shifted to centre
the means, since with partial play a common shift of the skills moves the teams' performances
by different amounts.)
"""

from __future__ import annotations

import math

from statespace.model.gaussian import v_draw, v_win, w_draw, w_win

from .kernels import clamp_mean
from .kernels import clamp_var as _var


class _Var:
    __slots__ = ("pi", "tau", "msgs")

    def __init__(self):
        self.pi = 0.0
        self.tau = 0.0
        self.msgs: dict[int, tuple[float, float]] = {}

    def message(self, key):
        return self.msgs.get(key, (0.0, 0.0))

    def set_message(self, key, pi, tau):
        """Replace factor ``key``'s message; returns the change of the marginal (the paper's delta)."""
        old_pi, old_tau = self.message(key)
        new_pi = self.pi - old_pi + pi
        new_tau = self.tau - old_tau + tau
        delta = _delta(self.pi, self.tau, new_pi, new_tau)
        self.pi, self.tau = new_pi, new_tau
        self.msgs[key] = (pi, tau)
        return delta

    def set_value(self, key, pi, tau):
        """Set the marginal to (pi, tau) by choosing factor ``key``'s message accordingly."""
        old_pi, old_tau = self.message(key)
        msg_pi = pi - (self.pi - old_pi)
        msg_tau = tau - (self.tau - old_tau)
        delta = _delta(self.pi, self.tau, pi, tau)
        self.pi, self.tau = pi, tau
        self.msgs[key] = (msg_pi, msg_tau)
        return delta

    def cavity(self, key):
        """Marginal without factor ``key``'s message, as (mean, variance)."""
        pi_m, tau_m = self.message(key)
        pi = self.pi - pi_m
        tau = self.tau - tau_m
        if pi <= 0.0:
            return 0.0, math.inf
        return tau / pi, 1.0 / pi

    @property
    def mu(self):
        return self.tau / self.pi if self.pi else 0.0

    @property
    def var(self):
        return 1.0 / self.pi if self.pi else math.inf


def _delta(pi0, tau0, pi1, tau1):
    d_pi = abs(pi0 - pi1)
    if math.isinf(d_pi):
        d_pi = 0.0
    return max(abs(tau0 - tau1), math.sqrt(d_pi))


def _gauss(mean, var):
    """(pi, tau) of N(mean, var); infinite variance is the flat message (a finite one is kept in
    ``[VAR_MIN, VAR_MAX]``)."""
    if math.isinf(var):
        return 0.0, 0.0
    var = _var(var)
    return 1.0 / var, mean / var


class _Sum:
    """Factor ``y = sum_i c_i x_i``."""

    def __init__(self, key, y, xs, coeffs):
        self.key, self.y, self.xs, self.coeffs = key, y, list(xs), list(coeffs)

    def down(self):
        mean, var = 0.0, 0.0
        for x, c in zip(self.xs, self.coeffs):
            m, v = x.cavity(self.key)
            mean += c * m
            var += c * c * v
        return self.y.set_message(self.key, *_gauss(mean, var))

    def up(self, j):
        """Message to term ``j``: x_j = (y - sum_{i != j} c_i x_i) / c_j."""
        cj = self.coeffs[j]
        if cj == 0.0:  # a player who took no part: the game says nothing about them
            return self.xs[j].set_message(self.key, 0.0, 0.0)
        m_y, v_y = self.y.cavity(self.key)
        # divided twice, not by cj^2, which underflows to 0 for a share below 1e-154: the variance is
        # then inf, the flat message (a player with so small a share learns nothing)
        mean, var = m_y / cj, v_y / cj / cj
        for i, (x, c) in enumerate(zip(self.xs, self.coeffs)):
            if i == j:
                continue
            m, v = x.cavity(self.key)
            r = c / cj
            mean -= r * m
            var += r * r * v
        if math.isnan(mean) and math.isinf(var):  # inf - inf in a mean whose message is flat anyway
            mean = 0.0
        return self.xs[j].set_message(self.key, *_gauss(mean, var))


class _Truncate:
    """Observation factor on a difference: d > eps (win) or |d| <= eps (tie)."""

    def __init__(self, key, d, eps, tie):
        self.key, self.d, self.eps, self.tie = key, d, eps, tie

    def up(self):
        m, v = self.d.cavity(self.key)
        sd = math.sqrt(v)
        t, e = m / sd, self.eps / sd
        if self.tie:
            vv, ww = v_draw(t, e), w_draw(t, e)
        else:
            vv, ww = v_win(t, e), w_win(t, e)
        # moments of the truncated Gaussian, set as the difference's new marginal
        mean = m + sd * vv
        var = _var(v * (1.0 - ww))
        return self.d.set_value(self.key, 1.0 / var, mean / var)


def rate_teams(teams, ranks, weights, beta, tau, eps_per_player, min_delta=1e-4, max_iter=10):
    """Posterior (mu, sigma) of every player of ``teams`` (lists of (mu, sigma)).

    ``ranks``: lower is better, equal is a tie. ``weights``: per-player partial-play weights.
    ``eps_per_player``: the draw margin of a difference is ``eps_per_player * sqrt(n)`` for the
    n players of the two neighbouring teams (the trueskill convention). Returns lists shaped
    like ``teams``, in the input order.
    """
    n = len(teams)
    order = sorted(range(n), key=lambda i: ranks[i])
    key = iter(range(10**9))
    skills, perfs, team_vars = [], [], []
    prior_keys, like, team_sums = [], [], []
    for i in order:
        row_s, row_p, row_k = [], [], []
        for (mu, sigma) in teams[i]:
            s = _Var()
            k = next(key)
            s.set_message(k, *_gauss(mu, sigma * sigma + tau * tau))
            p = _Var()
            row_s.append(s)
            row_p.append(p)
            row_k.append(k)
        skills.append(row_s)
        perfs.append(row_p)
        prior_keys.append(row_k)
    # performance = skill + N(0, beta^2): a Gaussian likelihood factor, exact in both directions
    for row_s, row_p in zip(skills, perfs):
        row_l = []
        for s, p in zip(row_s, row_p):
            k = next(key)
            m, v = s.cavity(k)
            p.set_message(k, *_gauss(m, v + beta * beta))
            row_l.append(k)
        like.append(row_l)
    for idx, i in enumerate(order):
        t = _Var()
        f = _Sum(next(key), t, perfs[idx], weights[i])
        f.down()
        team_vars.append(t)
        team_sums.append(f)
    diffs, truncs = [], []
    for k in range(n - 1):
        d = _Var()
        f = _Sum(next(key), d, [team_vars[k], team_vars[k + 1]], [1.0, -1.0])
        size = len(teams[order[k]]) + len(teams[order[k + 1]])
        tie = ranks[order[k]] == ranks[order[k + 1]]
        diffs.append(f)
        truncs.append(_Truncate(next(key), d, eps_per_player * math.sqrt(size), tie))
    L = len(diffs)
    for _ in range(max_iter):
        if L == 1:
            diffs[0].down()
            delta = truncs[0].up()
        else:
            delta = 0.0
            for k in range(L - 1):
                diffs[k].down()
                delta = max(delta, truncs[k].up())
                diffs[k].up(1)
            for k in range(L - 1, 0, -1):
                diffs[k].down()
                delta = max(delta, truncs[k].up())
                diffs[k].up(0)
        if delta <= min_delta:
            break
    diffs[0].up(0)
    diffs[L - 1].up(1)
    for f in team_sums:
        for j in range(len(f.xs)):
            f.up(j)
    out = [None] * n
    for idx, i in enumerate(order):
        res = []
        for s, p, k in zip(skills[idx], perfs[idx], like[idx]):
            m, v = p.cavity(k)
            s.set_message(k, *_gauss(m, v + beta * beta))
            res.append((clamp_mean(s.mu), math.sqrt(_var(s.var))))
        out[i] = res
    return out
