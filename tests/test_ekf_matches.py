"""The EKF's matches of many sides (filters._ekf_match): the exact Kalman filter of a Gaussian
team margin, one-vs-one matches equal to games, the Newton step of the ranking log-likelihood in
the members' skills against central differences, and a 50-entrant free-for-all."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from filters.ekf import EKF
from filters.ekf_full import FullEKF
from filters._ekf_match import _match, _match_full
from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.margin import Margin
from statespace.model.match_scenarios import ffa_league
from statespace.model.skillmodel import SkillModel

LOGISTIC = SkillModel("logistic", 1.3, 0.2, 0.8, 0.05, "half")
PROBIT = SkillModel("probit", 1.1, -0.1, 0.9, 0.04, ("threshold", 0.3))


def _table(rng, n_matches, n_players, n_sides, team, scores=False, ties=False) -> Matches:
    """Random matches of ``n_sides`` sides of 1..``team`` distinct competitors with partial play,
    at increasing times with random gaps."""
    rows = []
    t = 0.0
    for m in range(n_matches):
        t += rng.choice([0.0, 0.5, 1.0, 3.0]) if m else 0.0
        sizes = rng.integers(1, team + 1, n_sides)
        who = rng.choice(n_players, sizes.sum(), replace=False)
        ranks = rng.permutation(n_sides)
        if ties:
            ranks = np.minimum(ranks, n_sides - 2)
        points = rng.normal(0, 3, n_sides)
        start = 0
        for s in range(n_sides):
            for c in who[start:start + sizes[s]]:
                row = dict(match=f"m{m}", time=t, competitor=f"p{c}", side=s, weight=rng.uniform(0.3, 1.0))
                row["score" if scores else "rank"] = float(points[s]) if scores else int(ranks[s])
                rows.append(row)
            start += sizes[s]
    return Matches.from_long(pd.DataFrame(rows))


def _design(mt: Matches, m: int, n: int) -> np.ndarray:
    """The match's design matrix over all ``n`` competitors (side x competitor, entries w)."""
    A = np.zeros((mt.match_ptr[m + 1] - mt.match_ptr[m], n))
    for j, s in enumerate(range(mt.match_ptr[m], mt.match_ptr[m + 1])):
        for k in range(mt.side_ptr[s], mt.side_ptr[s + 1]):
            A[j, mt.member[k]] = mt.weight[k]
    return A


def _kalman(mt: Matches, model: SkillModel, sd: float, diagonal: bool):
    """The Kalman filter of y = score_a - score_b = (design a - design b) s + N(0, sd^2) over every
    competitor: a competitor's skill starts at the prior at its first match and random-walks with
    variance ``drift`` per unit of time from then on; ``diagonal``: P reset to its diagonal after
    each update. Returns the final mean and covariance and each side's forecast (w m, w P w)."""
    n = mt.n_players
    m = np.full(n, model.prior_mean)
    P = np.eye(n) * model.prior_var
    started = np.zeros(n, bool)
    t_prev = None
    f_mean, f_var = [], []
    for j in range(mt.n_matches):
        t = mt.time[j]
        if t_prev is not None:
            P[started, started] += model.drift * (t - t_prev)
        t_prev = t
        A = _design(mt, j, n)
        started |= A.any(axis=0)
        f_mean += list(A @ m)
        f_var += list(np.einsum("si,ij,sj->s", A, P, A))
        s0 = mt.match_ptr[j]
        y = mt.score[s0] - mt.score[s0 + 1]
        h = A[0] - A[1]
        S = h @ P @ h + sd * sd
        gain = P @ h / S
        m = m + gain * (y - h @ m)
        P = P - np.outer(gain, h @ P)
        if diagonal:
            P = np.diag(np.diag(P))
    return m, P, np.array(f_mean), np.array(f_var)


@pytest.mark.parametrize("diagonal", [False, True])
def test_team_margin_is_the_kalman_filter(diagonal):
    rng = np.random.default_rng(3)
    mt = _table(rng, 25, 7, 2, 3, scores=True)
    sd = 1.7
    model = SkillModel("logistic", 1.0, 0.3, 2.0, 0.4, observation=Margin(sd))
    run = EKF(model, "diagonal" if diagonal else "full").run(mt)
    m, P, f_mean, f_var = _kalman(mt, model, sd, diagonal)
    v = run.state.values
    np.testing.assert_allclose(v[:, 0], m, rtol=0, atol=1e-9)
    np.testing.assert_allclose(v[:, 1] ** 2, np.diag(P), rtol=0, atol=1e-9)
    if not diagonal:
        np.testing.assert_allclose(v[:, 2:], P, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.perf_mean, f_mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(run.perf_var, f_var, rtol=0, atol=1e-9)
    assert run.forecast.kind == "thurstone" and run.forecast.beta == pytest.approx(sd / math.sqrt(2))


@pytest.mark.parametrize("model", [LOGISTIC, PROBIT], ids=["plackett_luce", "thurstone"])
@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_one_vs_one_matches_are_the_games(model, covariance):
    rng = np.random.default_rng(5)
    n = 40
    names = np.array([f"p{i}" for i in range(6)])
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    games = Games.from_arrays(np.cumsum(rng.choice([1.0, 2.0, 5.0], n)), names[a], names[b],
                              rng.choice([1.0, 0.5, 0.0], n), neutral=np.ones(n, bool))
    by_game = EKF(model, covariance).run(games).state.values
    by_match = EKF(model, covariance).run(Matches.from_games(games)).state.values
    assert by_match.shape == by_game.shape
    np.testing.assert_allclose(by_match, by_game, rtol=1e-9, atol=1e-12)


def _pl_loglik(p, rank, c):
    """Plackett-Luce, written out: sum over places of x_first - log sum exp(x of those not ahead)."""
    x = p[np.argsort(rank, kind="stable")] / c
    return sum(x[k] - np.log(np.exp(x[k:]).sum()) for k in range(len(x) - 1))


def _thurstone_loglik(p, rank, alpha, eps):
    """TrueSkill's chain of adjacent sides, written out with scipy's normal cdf."""
    order = np.argsort(rank, kind="stable")
    out = 0.0
    for i, j in zip(order[:-1], order[1:]):
        d = p[i] - p[j]
        if rank[i] == rank[j]:
            out += np.log(norm.cdf((eps - d) / alpha) - norm.cdf((-eps - d) / alpha))
        else:
            out += norm.logcdf((d - eps) / alpha)
    return out


def _central(f, s, h=1e-4):
    """Gradient and Hessian of ``f`` at ``s`` by central differences."""
    n = s.size
    E = np.eye(n) * h
    g = np.array([(f(s + E[i]) - f(s - E[i])) / (2 * h) for i in range(n)])
    H = np.array([[(f(s + E[i] + E[j]) - f(s + E[i] - E[j]) - f(s - E[i] + E[j]) + f(s - E[i] - E[j])) / (4 * h * h)
                   for j in range(n)] for i in range(n)])
    return g, H


@pytest.mark.parametrize("model", [LOGISTIC, PROBIT], ids=["plackett_luce", "thurstone"])
@pytest.mark.parametrize("full", [False, True], ids=["diagonal", "full"])
def test_update_is_the_newton_step_of_the_ranking_in_the_members(model, full):
    """The kernel's update from N(m, P) equals P' = (P^-1 - Hs)^-1, m' = m + P' gs with gs, Hs the
    central differences of the ranking's log-likelihood in the members' skills."""
    rng = np.random.default_rng(11)
    for trial in range(4):
        n_sides = 3 + trial % 2
        mt = _table(rng, 1, 12, n_sides, 3, ties=(model is PROBIT and trial >= 2))
        n = mt.n_players
        A = _design(mt, 0, n)
        rank = mt.rank.copy()
        if model is LOGISTIC:
            def loglik(s):
                return _pl_loglik(A @ s, rank, math.sqrt(n_sides / 2.0) * model.scale)
        else:
            def loglik(s):
                return _thurstone_loglik(A @ s, rank, model.scale, model.draw.theta)
        m = rng.normal(0, 1, n)
        if full:
            L = rng.normal(0, 0.5, (n, n))
            P = L @ L.T + 0.2 * np.eye(n)
        else:
            P = np.diag(rng.uniform(0.2, 1.5, n))
        g, H = _central(loglik, m)
        P_new = np.linalg.inv(np.linalg.inv(P) - H)
        m_new = m + P_new @ g
        f = EKF(model, "full" if full else "diagonal")
        x = np.column_stack([m, np.sqrt(np.diag(P))] + ([P] if full else []))
        x = np.ascontiguousarray(x)
        perf_mean = np.empty(n_sides)
        perf_var = np.empty(n_sides)
        (_match_full if full else _match)(x, f.theta(), mt.side_ptr, mt.member, mt.weight, mt.rank, 0, n_sides,
                                          perf_mean, perf_var)
        np.testing.assert_allclose(perf_mean, A @ m, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(perf_var, np.einsum("si,ij,sj->s", A, P, A), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(x[:, 0], m_new, rtol=0, atol=1e-6)
        if full:
            np.testing.assert_allclose(x[:, 2:], P_new, rtol=0, atol=1e-6)
        else:  # the diagonal of the full update from the diagonal prior
            np.testing.assert_allclose(x[:, 1] ** 2, np.diag(P_new), rtol=0, atol=1e-6)


@pytest.mark.parametrize("link", ["logistic", "probit"])
def test_free_for_all_of_50_stays_finite(link):
    sim = ffa_league(seed=1)
    mt = sim.matches
    model = SkillModel(link, 1.0, 0.0, 1.0, 0.01, "half")
    runs = [EKF(model).run(mt)]
    if link == "logistic":  # the full covariance over 500 competitors (O(n^2) a match): the first 20 matches
        runs.append(EKF(model, "full").run(mt.take(range(20))))
    for run in runs:
        v = run.state.values
        assert np.all(np.isfinite(v))
        assert np.all(v[:, 1] > 0)
        assert np.all(np.isfinite(run.perf_mean)) and np.all(run.perf_var > 0)
        # no variance beyond the prior's plus the drift of the whole league's time
        assert np.all(v[:, 1] ** 2 <= 1.0 + 0.01 * mt.time[-1])
    # the ratings follow the true skills (each competitor's at its last match)
    truth = np.full(mt.n_players, np.nan)
    truth[mt.member] = sim.truth
    assert np.corrcoef(runs[0].state.values[:, 0], truth)[0, 1] > 0.8
    if link == "logistic":
        assert np.all(np.linalg.eigvalsh(runs[1].state.values[:, 2:]) > 0)


def test_refusals_name_the_method_and_the_match():
    rng = np.random.default_rng(2)
    three = _table(rng, 3, 9, 3, 2, scores=True)
    with pytest.raises(ValueError, match=r"ekf: a Margin model .* match 'm0' .* has 3 sides"):
        EKF(SkillModel("logistic", 1.0, observation=Margin(1.0))).run(three)
    unscored = _table(rng, 3, 9, 2, 2)
    with pytest.raises(ValueError, match=r"Margin model needs each side's score; match 'm0'"):
        EKF(SkillModel("logistic", 1.0, observation=Margin(1.0))).run(unscored)
    tied = _table(rng, 3, 9, 3, 2, ties=True)
    with pytest.raises(ValueError, match=r"ekf_full: match 'm0' .* has a tie"):
        EKF(SkillModel("probit", 1.0, draw="half"), "full").run(tied)
    with pytest.raises(ValueError, match=r"iterations=3\) rates games only"):
        EKF(LOGISTIC, iterations=3).run(tied)
    with pytest.raises(ValueError, match=r"Plackett-Luce .* draw='half'"):
        EKF(SkillModel("logistic", 1.0, draw=("threshold", 0.2))).run(tied)
    with pytest.raises(ValueError, match=r"ekf_scalar rates games of two competitors only"):
        EKF(LOGISTIC, "scalar").run(tied)
    assert FullEKF._match is not None and EKF(LOGISTIC).match_forecast().kind == "plackett_luce"
    assert EKF(PROBIT).match_forecast().eps == pytest.approx(0.3)
    assert EKF(LOGISTIC).match_forecast().beta == pytest.approx(1.3 / math.sqrt(2))


@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_the_scale_is_a_unit(covariance):
    """Ratings in units of 1e-100 or 1e100 are those in units of 1 times the unit, also where the
    variances reach a million scales^2 after a long idle time (a squared variance over- or
    underflows there)."""
    rows = [dict(match=f"m{m}", time=t, competitor=f"p{(3 * s + c + m) % 9}", side=s, rank=s, weight=1.0 - 0.2 * c)
            for m, t in enumerate([0.0, 1e6, 2e6]) for s in range(3) for c in range(3)]
    mt = Matches.from_long(pd.DataFrame(rows))

    def run(unit):
        model = SkillModel("logistic", unit, 0.0, (1e3 * unit) ** 2, 10 * unit * unit, "half")
        r = EKF(model, covariance).run(mt)
        return r.state.values[:, :2] / unit, r.perf_var / unit**2

    one = run(1.0)
    for unit in (1e-100, 1e100):
        for got, want in zip(run(unit), one):
            # the means are O(1) residues of steps of the sds' size (1e3): rounding of 1e-12 of those
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-7)


def _singles(rng, n_sides, ties):
    """One match of ``n_sides`` single-member sides (partial play, one weight 0), competitors 0..n-1."""
    rank = rng.permutation(n_sides)
    if ties:  # groups of three sharing a place, and a tie at the last place
        rank = np.minimum(rank // 3 * 3, n_sides - 4)
    weight = rng.uniform(0.3, 1.0, n_sides)
    weight[1] = 0.0
    member = rng.permutation(n_sides).astype(np.int64)
    return np.arange(n_sides + 1, dtype=np.int64), member, weight, rank.astype(np.int64)


def _pl_derivs(p, rank, c):
    """Plackett-Luce's gradient and Hessian in the performances, written out from its stages (Weng
    and Lin's form with ties: l = sum over the places' groups k of mean_{G_k} p / c - lse_{T_k} p / c,
    T_k the sides not ahead of group k): g = sum_k (1_{G_k} / |G_k| - pi_k) / c and
    H = -sum_k (diag(pi_k) - pi_k pi_k^T) / c^2, pi_k the softmax of p / c over T_k."""
    g = np.zeros(p.size)
    H = np.zeros((p.size, p.size))
    for r in np.unique(rank):
        z = np.where(rank >= r, p / c, -np.inf)
        pi = np.exp(z - z.max())
        pi /= pi.sum()
        g += ((rank == r) / np.sum(rank == r) - pi) / c
        H -= (np.diag(pi) - np.outer(pi, pi)) / c**2
    return g, H


def _joint(x, model, side_ptr, member, weight, rank):
    """The joint Newton step from the diagonal prior over the match's members, by a dense inverse:
    P' = (V^-1 - W H W)^-1, m' = m + P' W g, g and H of the ranking at the performances w m (H of
    Plackett-Luce's written out; the chain's from thurstone_loglik, checked above by central
    differences)."""
    from statespace.model.ranking_pairwise import thurstone_loglik
    n = rank.size
    m, v = x[member, 0], x[member, 1] ** 2
    p = weight * m
    if model is LOGISTIC:
        c = math.sqrt(n / 2.0) * model.scale
        g, H = _pl_derivs(p, rank, c)
    else:
        _, g, H = thurstone_loglik(p, np.zeros(n), model.scale / math.sqrt(2), model.draw.theta, rank)
    P = np.linalg.inv(np.diag(1 / v) - weight[:, None] * H * weight[None, :])
    return m + P @ (weight * g), np.diag(P)


@pytest.mark.parametrize("model", [LOGISTIC, PROBIT], ids=["plackett_luce", "thurstone"])
@pytest.mark.parametrize("ties", [False, True], ids=["strict", "ties"])
def test_many_singles_take_the_fast_step_of_the_joint_update(model, ties):
    """A free-for-all of more than FAST_SIDES single members (filters._ekf_match_fast) gives the
    joint update's mean and diagonal, by a dense inverse; the fast functions themselves on 20 to 200
    sides against the joint form of newton_sides."""
    from filters import _ekf_match as EM
    from filters import _ekf_match_fast as FAST
    rng = np.random.default_rng(17)
    theta = EKF(model).theta()
    for n in (EM.FAST_SIDES + 1, 200):
        side_ptr, member, weight, rank = _singles(rng, n, ties)
        x = np.ascontiguousarray(np.column_stack([rng.normal(0, 2, n), rng.uniform(0.3, 2.0, n)]))
        idle = x[member[1]].copy()  # weight 0: does not move
        m_new, v_new = _joint(x, model, side_ptr, member, weight, rank)
        perf_mean, perf_var = np.empty(n), np.empty(n)
        assert EM._fast(theta, side_ptr, 0, n)
        EM._match(x, theta, side_ptr, member, weight, rank, 0, n, perf_mean, perf_var)
        np.testing.assert_allclose(x[member, 0], m_new, rtol=0, atol=1e-8)
        np.testing.assert_allclose(x[member, 1] ** 2, v_new, rtol=1e-10, atol=0)
        np.testing.assert_array_equal(x[member[1]], idle)
    for n in (20, 57, 200):  # the fast functions against the joint form's eigh-Woodbury step
        _, member, weight, rank = _singles(rng, n, ties)
        mu, v = rng.normal(0, 3, n), rng.uniform(0.1, 3.0, n)
        g, H = EM.side_derivs(theta, mu * weight, rank, 0.0)
        u, M = EM.newton_sides(np.diag(weight**2 * v), g, H)
        t = weight * np.sqrt(v)
        if model is LOGISTIC:
            step, shrink = FAST.pl_newton(mu * weight, t, theta[EM._MBETA], rank)
        else:
            step, shrink = FAST.chain_newton(mu * weight, t, theta[EM._MBETA], theta[EM._MEPS], rank)
        np.testing.assert_allclose(np.sqrt(v) * step, weight * v * u, rtol=0, atol=1e-10)
        np.testing.assert_allclose(v * shrink, v - (weight * v) ** 2 * np.diag(M), rtol=1e-10, atol=0)


def test_the_fast_step_is_for_rankings_of_many_single_members():
    from filters import _ekf_match as EM
    theta = EKF(LOGISTIC).theta()
    n = EM.FAST_SIDES
    singles = np.arange(n + 3, dtype=np.int64)
    assert EM._fast(theta, singles, 0, n + 1) and EM._fast(EKF(PROBIT).theta(), singles, 1, n + 2)
    assert not EM._fast(theta, singles, 0, n)
    team = singles.copy()
    team[n // 2:] += 1  # one side of two members
    assert not EM._fast(theta, team, 0, n + 1)
    margin = EKF(SkillModel("logistic", 1.0, observation=Margin(1.0))).theta()
    assert not EM._fast(margin, singles, 0, n + 1)


@pytest.mark.parametrize("model", [LOGISTIC, PROBIT], ids=["plackett_luce", "thurstone"])
def test_the_fast_step_keeps_the_scale_a_unit_and_far_apart_ratings_finite(model):
    """80 single members with ratings thousands of scales apart and variances of a million
    scales^2: every number finite, no variance grows, and units of 1e-80 and 1e80 give the same
    numbers times the unit."""
    rng = np.random.default_rng(4)
    n = 80
    side_ptr, member, weight, rank = _singles(rng, n, False)
    base = np.column_stack([rng.normal(0, 3e3, n), rng.uniform(1.0, 1e3, n)])

    def run(unit):
        x = np.ascontiguousarray(base * unit)
        draw = "half" if model is LOGISTIC else ("threshold", 0.3 * unit)
        f = EKF(SkillModel(model.link, model.scale * unit, 0.0, unit**2, 0.0, draw))
        _match(x, f.theta(), side_ptr, member, weight, rank, 0, n, np.empty(n), np.empty(n))
        return x / unit

    one = run(1.0)
    assert np.all(np.isfinite(one)) and np.all(one[:, 1] > 0) and np.all(one[:, 1] <= base[:, 1] * (1 + 1e-12))
    for unit in (1e-80, 1e80):
        np.testing.assert_allclose(run(unit), one, rtol=1e-9, atol=1e-9 * 3e3)
