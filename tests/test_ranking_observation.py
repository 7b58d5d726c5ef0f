"""Observations of a ranking of the sides of one match (statespace.model.ranking,
statespace.model.ranking_pairwise) against independent references.

References: two sides against the two-sided numerics (statespace.model.numeric's cdf); Plackett-Luce
against its product written out here (Weng and Lin 2011, Algorithm 4, ties sharing 1 / A_q) and its
forecasts against sums over every ordering of the sides; the pairwise win forecast against every
result of the independent games; gradients and Hessians against central differences; and, where
openskill is installed, Plackett-Luce's gradient and Hessian diagonal against openskill's update
and its order of the sides against openskill's predict_win / predict_rank.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statespace.model import numeric as nx
from statespace.model.ranking import check_match, pl_forecast, pl_loglik
from statespace.model.ranking_pairwise import bt_forecast, bt_loglik, thurstone_forecast, thurstone_loglik

EPS = 0.3  # a Thurstonian draw margin, skill units

LIKS = {
    "pl": lambda mu, var, beta, rank: pl_loglik(mu, var, beta, rank),
    "bt": lambda mu, var, beta, rank: bt_loglik(mu, var, beta, rank),
    "thurstone": lambda mu, var, beta, rank: thurstone_loglik(mu, var, beta, EPS, rank),
}


def _match(seed, n, ties=True):
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, 1.5, n)
    var = rng.uniform(0.0, 0.5, n)
    rank = np.sort(rng.integers(0, n, n)) if ties else np.arange(n)
    rank = np.array([np.searchsorted(rank, r) for r in rank], dtype=np.int64)  # competition ranking
    return mu, var, rng.permutation(rank).astype(np.int64)


# ---------------------------------------------------------------- two sides: today's game
@pytest.mark.parametrize("d,va,vb,beta", [(0.7, 0.0, 0.0, 1.0), (-1.3, 0.2, 0.5, 0.8), (4.0, 1.0, 0.0, 2.0)])
def test_two_sides_are_the_two_sided_game(d, va, vb, beta):
    mu = np.array([d, 0.0])
    var = np.array([va, vb])
    c = math.sqrt(2 * beta**2 + va + vb)
    z = d / c
    win, loss = np.array([0, 1]), np.array([1, 0])
    tie = np.array([0, 0])
    F = lambda x: nx.cdf(nx.LOGISTIC, x)  # noqa: E731
    Phi = lambda x: nx.cdf(nx.PROBIT, x)  # noqa: E731
    for lik in (pl_loglik, bt_loglik):
        assert lik(mu, var, beta, win)[0] == pytest.approx(math.log(F(z)), rel=1e-12)
        assert lik(mu, var, beta, loss)[0] == pytest.approx(math.log(F(-z)), rel=1e-12)
        assert lik(mu, var, beta, tie)[0] == pytest.approx(0.5 * math.log(F(z)) + 0.5 * math.log(F(-z)), rel=1e-12)
    for fc in (pl_forecast, bt_forecast):
        P, w, place = fc(mu, var, beta)
        assert P[0, 1] == pytest.approx(F(z), rel=1e-12) and w[0] == pytest.approx(F(z), rel=1e-12)
        assert place[0] == pytest.approx(2.0 - F(z), rel=1e-12)
    assert thurstone_loglik(mu, var, beta, EPS, win)[0] == pytest.approx(math.log(Phi((d - EPS) / c)), rel=1e-12)
    assert thurstone_loglik(mu, var, beta, EPS, loss)[0] == pytest.approx(math.log(Phi((-d - EPS) / c)), rel=1e-12)
    assert thurstone_loglik(mu, var, beta, EPS, tie)[0] == pytest.approx(
        math.log(Phi((EPS - d) / c) - Phi((-EPS - d) / c)), rel=1e-12)
    P, _ = thurstone_forecast(mu, var, beta, EPS)
    assert P[0, 1] == pytest.approx(Phi((d - EPS) / c), rel=1e-12)


# ---------------------------------------------------------------- derivatives
@pytest.mark.parametrize("model", sorted(LIKS))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gradient_and_hessian_match_central_differences(model, seed):
    mu, var, rank = _match(seed, 5)
    lik = LIKS[model]
    _, g, H = lik(mu, var, 1.1, rank)
    h = 1e-5
    for i in range(5):
        e = np.zeros(5)
        e[i] = h
        lp, gp, _ = lik(mu + e, var, 1.1, rank)
        lm, gm, _ = lik(mu - e, var, 1.1, rank)
        assert g[i] == pytest.approx((lp - lm) / (2 * h), rel=1e-6, abs=1e-8)
        np.testing.assert_allclose(H[:, i], (gp - gm) / (2 * h), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(H, H.T, rtol=0, atol=0)


# ---------------------------------------------------------------- Plackett-Luce, written out
def _pl_direct(mu, var, beta, rank):
    """Weng and Lin's product over sides q of (e_q / sum_{s: r(s) >= r(q)} e_s)^(1 / A_q)."""
    c = math.sqrt(sum(beta**2 + v for v in var))
    e = [math.exp(m / c) for m in mu]
    total = 0.0
    for q in range(len(mu)):
        a = sum(1 for r in rank if r == rank[q])
        below = sum(e[s] for s in range(len(mu)) if rank[s] >= rank[q])
        total += math.log(e[q] / below) / a
    return total


def _pl_orderings(mu, var, beta):
    """Every ordering of the sides with its Plackett-Luce probability (no ties)."""
    c = math.sqrt(sum(beta**2 + v for v in var))
    e = [math.exp(m / c) for m in mu]
    for perm in itertools.permutations(range(len(mu))):
        p = 1.0
        for k in range(len(perm)):
            p *= e[perm[k]] / sum(e[s] for s in perm[k:])
        yield perm, p


@pytest.mark.parametrize("seed", range(4))
def test_pl_loglik_is_the_product(seed):
    mu, var, rank = _match(seed, 6)
    assert pl_loglik(mu, var, 0.9, rank)[0] == pytest.approx(_pl_direct(mu, var, 0.9, rank), rel=1e-12)
    order = np.arange(6, dtype=np.int64)
    ((_, p),) = [(perm, p) for perm, p in _pl_orderings(mu, var, 0.9) if perm == tuple(range(6))]
    assert pl_loglik(mu, var, 0.9, order)[0] == pytest.approx(math.log(p), rel=1e-12)


def test_pl_forecasts_sum_over_orderings():
    mu, var, _ = _match(7, 4)
    P, win, place = pl_forecast(mu, var, 0.7)
    ref_p = np.zeros((4, 4))
    ref_win = np.zeros(4)
    ref_place = np.zeros(4)
    for perm, p in _pl_orderings(mu, var, 0.7):
        ref_win[perm[0]] += p
        for k, i in enumerate(perm):
            ref_place[i] += p * (k + 1)
            for j in perm[k + 1:]:
                ref_p[i, j] += p
    np.testing.assert_allclose(P, ref_p, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(win, ref_win, rtol=1e-12)
    np.testing.assert_allclose(place, ref_place, rtol=1e-12)


def test_pairwise_win_is_undefeated_given_one_undefeated():
    """Every result of the three independent games: P(i wins both | some side wins both)."""
    mu, var, _ = _match(3, 3)
    beta = 0.8
    P, win, place = bt_forecast(mu, var, beta)
    pairs = [(0, 1), (0, 2), (1, 2)]
    undefeated = np.zeros(3)
    for outcome in itertools.product([0, 1], repeat=3):
        p, wins = 1.0, np.zeros(3)
        for (i, j), first in zip(pairs, outcome):
            c = math.sqrt(2 * beta**2 + var[i] + var[j])
            pij = 1.0 / (1.0 + math.exp(-(mu[i] - mu[j]) / c))
            p *= pij if first else 1.0 - pij
            wins[i if first else j] += 1
        if wins.max() == 2:
            undefeated[int(np.argmax(wins))] += p
    np.testing.assert_allclose(win, undefeated / undefeated.sum(), rtol=1e-12)
    np.testing.assert_allclose(place, 1.0 + P.sum(axis=0), rtol=1e-12)


# ---------------------------------------------------------------- probabilities add up
@pytest.mark.parametrize("seed", range(3))
def test_probabilities_add_up(seed):
    mu, var, _ = _match(seed, 6)
    off = ~np.eye(6, dtype=bool)
    for P in (pl_forecast(mu, var, 1.2)[0], bt_forecast(mu, var, 1.2)[0], thurstone_forecast(mu, var, 1.2, 0.0)[0]):
        np.testing.assert_allclose((P + P.T)[off], 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(pl_forecast(mu, var, 1.2)[1].sum(), 1.0, rtol=1e-14)
    np.testing.assert_allclose(bt_forecast(mu, var, 1.2)[1].sum(), 1.0, rtol=1e-14)
    P, _ = thurstone_forecast(mu, var, 1.2, EPS)
    for i, j in zip(*np.nonzero(off)):
        c = math.sqrt(2 * 1.2**2 + var[i] + var[j])
        d = mu[i] - mu[j]
        tie = nx.cdf(nx.PROBIT, (EPS - d) / c) - nx.cdf(nx.PROBIT, (-EPS - d) / c)
        assert P[i, j] + P[j, i] + tie == pytest.approx(1.0, abs=1e-14)


# ---------------------------------------------------------------- relabelling the sides
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5), ties=st.booleans())
def test_relabelling_permutes_everything(seed, n, ties):
    mu, var, rank = _match(seed, n, ties)
    perm = np.random.default_rng(seed + 1).permutation(n)
    models = ["pl", "bt"] + ([] if ties else ["thurstone"])  # TrueSkill's chain orders a tie by input
    for model in models:
        l0, g0, H0 = LIKS[model](mu, var, 1.0, rank)
        l1, g1, H1 = LIKS[model](mu[perm], var[perm], 1.0, rank[perm])
        assert l1 == pytest.approx(l0, rel=1e-12, abs=1e-14)
        np.testing.assert_allclose(g1, g0[perm], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(H1, H0[np.ix_(perm, perm)], rtol=1e-10, atol=1e-14)
    for fc in (lambda m, v: pl_forecast(m, v, 1.0), lambda m, v: bt_forecast(m, v, 1.0),
               lambda m, v: thurstone_forecast(m, v, 1.0, EPS)):
        a, b = fc(mu, var), fc(mu[perm], var[perm])
        np.testing.assert_allclose(b[0], a[0][np.ix_(perm, perm)], rtol=1e-12, atol=1e-15)
        for x, y in zip(a[1:], b[1:]):
            np.testing.assert_allclose(y, x[perm], rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- far apart
@pytest.mark.parametrize("gap,beta", [(1e6, 1.0), (1e12, 1e-3), (1e100, 1.0), (1e300, 1.0), (1e300, 1e-100)])
def test_huge_gaps_give_numbers(gap, beta):
    """Gaps far beyond any rating in range (1e9 scales): no NaN, no overflow of a derivative or a
    forecast; the log-likelihood finite while it is representable (the probit's is about -z^2 / 2)."""
    mu = np.array([gap, 0.0, -gap, 0.0])
    var = np.zeros(4)
    for rank in (np.array([0, 1, 2, 3]), np.array([3, 1, 0, 1]), np.array([1, 1, 0, 3])):
        for model, lik in LIKS.items():
            l, g, H = lik(mu, var, beta, rank)
            assert not math.isnan(l) and l <= 0.0, (model, rank)
            if gap / beta <= 1e140:
                assert math.isfinite(l), (model, rank)
            assert np.all(np.isfinite(g)) and np.all(np.isfinite(H)), (model, rank)
    for out in (pl_forecast(mu, var, beta), bt_forecast(mu, var, beta), thurstone_forecast(mu, var, beta, EPS)):
        for x in out:
            assert np.all(np.isfinite(x))
    P, win, place = pl_forecast(mu, var, beta)
    assert win[0] == 1.0 and P[0, 2] == 1.0 and place[0] == 1.0


# ---------------------------------------------------------------- inputs
@pytest.mark.parametrize("args,match", [
    (([0.0], [0.0], 1.0, [0]), "at least 2 sides"),
    (([0.0, np.nan], [0.0, 0.0], 1.0, [0, 1]), "mu of side 1"),
    (([0.0, 1.0], [0.0, -1.0], 1.0, [0, 1]), "var of side 1"),
    (([0.0, 1.0], [0.0, 0.0], 0.0, [0, 1]), "beta"),
    (([0.0, 1.0], [0.0, 0.0], 1.0, [0, 2]), "rank of side 1"),
    (([0.0, 1.0], [0.0, 0.0], 1.0, [0.5, 1]), "whole numbers"),
])
def test_bad_inputs_are_named(args, match):
    with pytest.raises(ValueError, match=match):
        check_match("test", *args)
    with pytest.raises(ValueError, match="eps > 0"):
        check_match("test", [0.0, 1.0], [0.0, 0.0], 1.0, [0, 0], eps=0.0)
    mu, var, beta, rank, eps = check_match("test", [0, 1], [0, 0], 2, [1, 0], eps=0.5)
    assert mu.dtype == np.float64 and rank.dtype == np.int64 and (beta, eps) == (2.0, 0.5)


# ---------------------------------------------------------------- openskill
def _openskill_match(seed, model, n, equal_sigma):
    rng = np.random.default_rng(seed)
    teams = []
    for _ in range(n):
        size = 2 if equal_sigma else int(rng.integers(1, 4))
        teams.append([model.rating(mu=float(rng.normal(25, 6)),
                                   sigma=4.0 if equal_sigma else float(rng.uniform(1, 8))) for _ in range(size)])
    mu = np.array([sum(p.mu for p in t) for t in teams])
    var = np.array([sum(p.sigma**2 for p in t) for t in teams])
    return teams, mu, var


@pytest.mark.parametrize("seed", range(3))
def test_pl_agrees_with_openskill(seed):
    openskill = pytest.importorskip("openskill.models")
    model = openskill.PlackettLuce(tau=0.0)
    # the order of the sides: openskill's predict_win averages pairwise probits (Ibstedt et al.), not
    # Plackett-Luce's P(first), so the two agree in order (where every side has the same sd), not in value
    teams, mu, var = _openskill_match(seed, model, 5, True)
    win = pl_forecast(mu, var, model.beta)[1]
    assert list(np.argsort(-win)) == list(np.argsort(-np.array(model.predict_win(teams))))
    assert [r for r, _ in model.predict_rank(teams)] == [1 + int(np.sum(win > w)) for w in win]
    # the update of single-player teams: omega = sigma^2 * gradient, delta = sigma^2 * (-H_ii) * gamma,
    # gamma = sigma / c; tied sides share the mean of their mu changes
    rng = np.random.default_rng(seed)
    players = [model.rating(mu=float(rng.normal(25, 6)), sigma=float(rng.uniform(1, 8))) for _ in range(5)]
    mu = np.array([p.mu for p in players])
    var = np.array([p.sigma**2 for p in players])
    rank = np.array([0, 1, 1, 3, 4], dtype=np.int64)[rng.permutation(5)]
    _, g, H = pl_loglik(mu, var, model.beta, rank)
    new = model.rate([[p] for p in players], ranks=[float(r) for r in rank])
    c = math.sqrt(np.sum(var + model.beta**2))
    step = var * g
    for i in range(5):
        # openskill 6.2 means to average a tie's mu changes, but compares the updated players with themselves
        # (a change of 0); accept either
        tied = rank == rank[i]
        change = new[i][0].mu - mu[i]
        assert change == pytest.approx(step[i], rel=1e-9, abs=1e-12) or \
            change == pytest.approx(step[tied].mean(), rel=1e-9, abs=1e-12)
        shrink = max(1.0 - var[i] * -H[i, i] * math.sqrt(var[i]) / c, model.kappa)
        assert new[i][0].sigma == pytest.approx(math.sqrt(var[i] * shrink), rel=1e-9)


def test_thurstone_two_sides_is_openskill_predict_win():
    openskill = pytest.importorskip("openskill.models")
    model = openskill.PlackettLuce()
    teams, mu, var = _openskill_match(11, model, 2, False)
    P, _ = thurstone_forecast(mu, var, model.beta, 0.0)
    assert P[0, 1] == pytest.approx(model.predict_win(teams)[0], rel=1e-12)


def test_far_draw_terms_in_pure_python_are_the_unbounded_limit():
    """Far in the tail a draw's window is wider than the mass: e^(u L) overflows. Compiled,
    expm1 gives inf; Python's math.expm1 raises OverflowError, so the limit is written out (the
    pure-Python run, NUMBA_DISABLE_JIT=1, must give the compiled numbers)."""
    from statespace.model.gaussian import _draw_far

    v, w = _draw_far.py_func(1e4, 1.0)  # u L = 2e4: e^(2e4) overflows
    assert (v, w) == _draw_far(1e4, 1.0)
    assert math.isfinite(v) and math.isfinite(w)
