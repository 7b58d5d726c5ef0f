"""Scores of a method's own forecasts of matches (statespace.model.ranking_scores), against references
written out here with math.erf / math.exp / math.log, and against the observations' own log-likelihoods."""

import math
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from statespace.model.ranking import pl_loglik
from statespace.model.ranking_forecast import RankingForecast
from statespace.model.ranking_pairwise import bt_loglik, thurstone_loglik
from statespace.model.ranking_scores import forecast_pair_log_loss, match_scores, ranking_loglik


def phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def logistic(x):
    return 1.0 / (1.0 + math.exp(-x))


MU = np.array([0.3, -0.4, 1.1, 0.0, -1.2])
VAR = np.array([0.2, 0.0, 0.5, 0.1, 0.3])
RANK = np.array([1, 3, 0, 1, 4])  # sides 0 and 3 tied for second
ONE = np.array([0, 5])


def outcome(ri, rj):
    return 1.0 if ri < rj else (0.0 if ri > rj else 0.5)


def test_plackett_luce_loglik_of_three_sides_written_out():
    mu, var, beta = np.array([0.5, -0.2, 0.9]), np.array([0.1, 0.3, 0.0]), 0.8
    c = math.sqrt(sum(beta**2 + v for v in var))
    e = [math.exp(m / c) for m in mu]
    # ranking: side 2 first, side 0 second, side 1 last
    expected = math.log(e[2] / (e[0] + e[1] + e[2])) + math.log(e[0] / (e[0] + e[1]))
    got = ranking_loglik(RankingForecast("plackett_luce", beta), mu, var, np.array([1, 2, 0]), np.array([0, 3]))[0]
    assert got == pytest.approx(expected, rel=1e-13)
    # sides 0 and 1 tied behind side 2: each tied side's factor to the power 1/2 (Weng and Lin's ties)
    tied = math.log(e[2] / sum(e)) + 0.5 * (math.log(e[0] / (e[0] + e[1])) + math.log(e[1] / (e[0] + e[1])))
    got = ranking_loglik(RankingForecast("plackett_luce", beta), mu, var, np.array([1, 1, 0]), np.array([0, 3]))[0]
    assert got == pytest.approx(tied, rel=1e-13)


def test_bradley_terry_loglik_is_the_plackett_luce_ranking_of_its_pairs():
    """A forecast of pairs is ranked by the Plackett-Luce model whose pairwise marginals are those
    games, at the pair scale of the match's mean variance; written out for three sides."""
    mu, var, beta = np.array([0.5, -0.2, 0.9]), np.array([0.1, 0.3, 0.0]), 0.8
    c = math.sqrt(2 * beta**2 + 2 * np.mean(var))
    e = [math.exp(m / c) for m in mu]
    expected = math.log(e[2] / (e[0] + e[1] + e[2])) + math.log(e[0] / (e[0] + e[1]))
    got = ranking_loglik(RankingForecast("bradley_terry", beta), mu, var, np.array([1, 2, 0]), np.array([0, 3]))[0]
    assert got == pytest.approx(expected, rel=1e-13)
    # one against one: exactly the Bradley-Terry game; with point ratings every pair's marginal is its game
    two = ranking_loglik(RankingForecast("bradley_terry", beta), mu[:2], var[:2], np.array([0, 1]), np.array([0, 2]))[0]
    assert two == pytest.approx(math.log(logistic((mu[0] - mu[1]) / math.sqrt(2 * beta**2 + var[0] + var[1]))),
                                rel=1e-13)


def _orders(n):
    from itertools import permutations

    for perm in permutations(range(n)):
        rank = np.empty(n, np.int64)
        rank[list(perm)] = np.arange(n)
        yield rank


@pytest.mark.parametrize("kind", ["plackett_luce", "bradley_terry", "thurstone"])
def test_loglik_is_a_probability_over_the_orders(kind):
    """Summed over every strict order of a match's sides, each kind's probability is 1 (which a sum of
    the pairs' or the chain's log-probabilities is not)."""
    rng = np.random.default_rng(5)
    for n in (2, 3, 4):
        mu, var = rng.normal(size=n), rng.uniform(0, 0.5, n)
        f = RankingForecast(kind, 0.9)
        total = sum(math.exp(ranking_loglik(f, mu, var, r, np.array([0, n]))[0]) for r in _orders(n))
        assert total == pytest.approx(1.0, abs=1e-4 if kind == "thurstone" else 1e-12)
    pairs = sum(math.exp(bt_loglik(mu, var, 0.9, r)[0]) for r in _orders(4))
    assert abs(pairs - 1.0) > 0.01  # the composite of pairs is no distribution over orders


def test_thurstone_loglik_is_the_probability_of_the_chain():
    """Two sides: Phi's win and tie; three sides: the chain's integral by scipy's quadrature; the
    adjacent factors' sum is another number."""
    from scipy import integrate
    from scipy.stats import norm

    beta, eps = 0.7, 0.25
    mu, var = np.array([0.4, -0.3]), np.array([0.2, 0.1])
    c = math.sqrt(2 * beta**2 + var.sum())
    d = mu[0] - mu[1]
    f = RankingForecast("thurstone", beta, eps)
    win = ranking_loglik(f, mu, var, np.array([0, 1]), np.array([0, 2]))[0]
    tie = ranking_loglik(f, mu, var, np.array([0, 0]), np.array([0, 2]))[0]
    assert win == pytest.approx(math.log(phi((d - eps) / c)), abs=1e-5)
    assert tie == pytest.approx(math.log(phi((eps - d) / c) - phi((-eps - d) / c)), abs=1e-5)
    mu, var = np.array([0.3, 1.1, -0.4]), np.array([0.2, 0.5, 0.0])
    sd = np.sqrt(beta**2 + var)
    rank = np.array([1, 0, 1])  # side 1 first, sides 0 and 2 tied behind
    # p1 > p0 + eps and |p0 - p2| <= eps: integrate over p0 the two conditional probabilities
    def inner(p0):
        ahead = norm.sf(p0 + eps, mu[1], sd[1])
        level = norm.cdf(p0 + eps, mu[2], sd[2]) - norm.cdf(p0 - eps, mu[2], sd[2])
        return norm.pdf(p0, mu[0], sd[0]) * ahead * level
    want = integrate.quad(inner, -12, 12, epsabs=1e-13, epsrel=1e-11)[0]
    got = ranking_loglik(f, mu, var, rank, np.array([0, 3]))[0]
    assert got == pytest.approx(math.log(want), abs=1e-5)
    assert abs(got - thurstone_loglik(mu, var, beta, eps, rank)[0]) > 0.05


def test_plackett_luce_loglik_equals_the_observations_own_value():
    rng = np.random.default_rng(3)
    beta = 0.9
    for n in (2, 3, 7):
        mu, var = rng.normal(size=n), rng.uniform(0, 0.5, n)
        rank = np.sort(rng.integers(0, n, n))
        rank = np.searchsorted(rank, rank)[rng.permutation(n)]  # competition ranking with ties
        got = ranking_loglik(RankingForecast("plackett_luce", beta), mu, var, rank, np.array([0, n]))[0]
        assert got == pytest.approx(pl_loglik(mu, var, beta, rank)[0], rel=1e-12)


@pytest.mark.parametrize("kind, eps", [("bradley_terry", 0.0), ("plackett_luce", 0.0), ("thurstone", 0.0),
                                       ("thurstone", 0.4)])
def test_pairwise_log_loss_over_all_pairs_with_the_methods_own_probability(kind, eps):
    """The tie (sides 0 and 3) is target 1/2, also for the Thurstonian forecast at eps = 0, whose
    log-likelihood refuses it."""
    beta = 0.6
    c_match = math.sqrt(sum(beta**2 + v for v in VAR))
    losses = []
    for i, j in combinations(range(5), 2):
        d = MU[i] - MU[j]
        c = math.sqrt(2 * beta**2 + VAR[i] + VAR[j])
        if kind == "bradley_terry":
            e = logistic(d / c)
        elif kind == "plackett_luce":
            e = logistic(d / c_match)
        else:  # P(ahead) + P(tie) / 2; at eps = 0 this is Phi(d / c)
            ahead, behind = phi((d - eps) / c), phi((-d - eps) / c)
            e = ahead + (1 - ahead - behind) / 2
            if eps == 0:
                assert e == pytest.approx(phi(d / c), rel=1e-14)
        y = outcome(RANK[i], RANK[j])
        losses.append(-(y * math.log(e) + (1 - y) * math.log(1 - e)))
    got = forecast_pair_log_loss(RankingForecast(kind, beta, eps), MU, VAR, RANK, ONE)[0]
    assert got == pytest.approx(np.mean(losses), rel=1e-12)


def test_weights_sides_for_pair_scores_and_matches_for_the_loglik():
    f = RankingForecast("bradley_terry", 1.0)
    mu = np.array([1.0, 0.0, 0.5, 0.2, -0.3])
    var = np.zeros(5)
    rank = np.array([0, 1, 2, 0, 1])
    ptr = np.array([0, 3, 5])
    out = match_scores(f, mu, var, rank, ptr)
    a = ranking_loglik(f, mu[:3], var[:3], rank[:3], np.array([0, 3]))[0]
    b = ranking_loglik(f, mu[3:], var[3:], rank[3:], np.array([0, 2]))[0]
    assert out["loglik"][0] == pytest.approx((a + b) / 2)
    la = forecast_pair_log_loss(f, mu[:3], var[:3], rank[:3], np.array([0, 3]))[0]
    lb = forecast_pair_log_loss(f, mu[3:], var[3:], rank[3:], np.array([0, 2]))[0]
    assert out["pair_log_loss"][0] == pytest.approx((3 * la + 2 * lb) / 5)
    assert out["pair_log_loss"][2].tolist() == [3.0, 2.0]
    assert out["loglik"][2].tolist() == [1.0, 1.0]


@pytest.mark.parametrize("kind", ["plackett_luce", "bradley_terry", "thurstone"])
def test_a_perfect_forecast_orders_every_pair_and_beats_a_flat_one(kind):
    n = 6
    rank = np.array([3, 0, 5, 1, 4, 2])
    ptr = np.array([0, n])
    f = RankingForecast(kind, 1.0, 0.1)
    perfect = match_scores(f, -5.0 * rank.astype(float), np.zeros(n), rank, ptr)
    flat = match_scores(f, np.zeros(n), np.zeros(n), rank, ptr)
    assert perfect["pair_inversion"][0] == 100.0
    assert perfect["rank_deviation"][0] == 0.0
    assert perfect["top1"][0] == 1.0
    assert perfect["pair_log_loss"][0] < flat["pair_log_loss"][0]
    assert flat["pair_log_loss"][0] == pytest.approx(math.log(2.0))
    assert perfect["loglik"][0] > flat["loglik"][0]


def test_far_apart_sides_stay_finite():
    mu = np.array([1e200, -1e200, 0.0])
    rank = np.array([2, 0, 1])  # the worst possible result
    for kind in ("plackett_luce", "bradley_terry", "thurstone"):
        out = match_scores(RankingForecast(kind, 1.0, 0.5), mu, np.zeros(3), rank, np.array([0, 3]))
        assert all(np.isfinite(score) for score, _, _ in out.values()), kind


def test_thurstonian_tie_without_margin_is_refused_naming_the_match():
    rank = np.array([0, 1, 0, 0])
    with pytest.raises(ValueError, match=r"match 1 has tied sides.*eps = 0"):
        ranking_loglik(RankingForecast("thurstone", 1.0), np.zeros(4), np.zeros(4), rank, np.array([0, 2, 4]))


def test_bad_inputs_are_named():
    f = RankingForecast("bradley_terry", 1.0)
    with pytest.raises(ValueError, match="perf_var of side 1"):
        match_scores(f, np.zeros(2), np.array([0.0, -1.0]), np.array([0, 1]), np.array([0, 2]))
    with pytest.raises(ValueError, match="RankingForecast"):
        match_scores("bradley_terry", np.zeros(2), np.zeros(2), np.array([0, 1]), np.array([0, 2]))
    with pytest.raises(ValueError, match="strength of side 0"):
        match_scores(f, np.array([np.nan, 0.0]), np.zeros(2), np.array([0, 1]), np.array([0, 2]))


def _reference_pair_loss(kind, beta, eps, mu, var, rank):
    """Every pair's loss at 40 digits (mpmath's normal cdf and logistic), so that a loss close
    to 0 is known to all its digits."""
    import mpmath

    mpmath.mp.dps = 40
    n = mu.size
    c_match = mpmath.sqrt(sum(mpmath.mpf(beta) ** 2 + mpmath.mpf(v) for v in var))
    total = mpmath.mpf(0)
    for i, j in combinations(range(n), 2):
        d = mpmath.mpf(mu[i]) - mpmath.mpf(mu[j])
        c = mpmath.sqrt(2 * mpmath.mpf(beta) ** 2 + mpmath.mpf(var[i]) + mpmath.mpf(var[j]))
        if kind == "thurstone":
            e = (mpmath.ncdf((d - eps) / c) + mpmath.ncdf((d + eps) / c)) / 2
            f = (mpmath.ncdf((-d - eps) / c) + mpmath.ncdf((-d + eps) / c)) / 2
        else:
            z = d / (c_match if kind == "plackett_luce" else c)
            e, f = 1 / (1 + mpmath.exp(-z)), 1 / (1 + mpmath.exp(z))
        y = outcome(rank[i], rank[j])
        # E and 1 - E each computed on its own; the log of the larger as log1p of minus the smaller,
        # so that a loss of 1e-65 is not lost to the larger rounding to 1 at 40 digits
        log_e = mpmath.log(e) if e < 0.5 else mpmath.log1p(-f)
        log_f = mpmath.log(f) if f < 0.5 else mpmath.log1p(-e)
        if y > 0:
            total -= y * log_e
        if y < 1:
            total -= (1 - y) * log_f
    return float(total / (n * (n - 1) / 2))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12), spread=st.sampled_from([0.1, 1.0, 10.0, 40.0]),
       kind=st.sampled_from(["plackett_luce", "bradley_terry", "thurstone"]), eps=st.sampled_from([0.0, 0.3, 2.0]),
       var_factor=st.sampled_from([1.0, 3 / math.pi**2]))
def test_pairwise_log_loss_equals_a_40_digit_computation_far_into_the_tails(seed, n, spread, kind, eps, var_factor):
    rng = np.random.default_rng(seed)
    mu = rng.normal(0.0, spread, n)
    var = rng.uniform(0.0, 2.0, n)
    rank = rng.integers(0, n, n)  # repeats are ties, target 1/2
    got = forecast_pair_log_loss(RankingForecast(kind, 0.7, eps, var_factor), mu, var, rank, np.array([0, n]))[0]
    want = _reference_pair_loss(kind, 0.7, eps, mu, var * var_factor, rank)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-300)
