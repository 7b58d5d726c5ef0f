"""The probability of an observed ranking under the Thurstonian chain (statespace.model.ranking_probability),
against Phi for two sides, scipy's quadrature for three, a Monte Carlo draw of performances for six,
the sum over all orders, and its own finer grid on a large field."""

import math
from itertools import permutations

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from statespace.model.ranking_probability import chain_loglik, thurstone_order_logprob


def test_two_sides_are_phi():
    mu, var, beta, eps = np.array([1.0, 0.2]), np.array([0.3, 0.5]), 1.0, 0.4
    c = math.sqrt(2 * beta**2 + var.sum())
    assert thurstone_order_logprob(mu, var, beta, 0.0, np.array([0, 1])) == pytest.approx(
        math.log(norm.cdf(0.8 / c)), abs=1e-8)
    assert thurstone_order_logprob(mu, var, beta, eps, np.array([1, 0])) == pytest.approx(
        math.log(norm.cdf((-0.8 - eps) / c)), abs=1e-8)
    assert thurstone_order_logprob(mu, var, beta, eps, np.array([0, 0])) == pytest.approx(
        math.log(norm.cdf((eps - 0.8) / c) - norm.cdf((-eps - 0.8) / c)), abs=1e-8)


def test_three_sides_with_a_tie_are_the_quadrature():
    beta, eps = 0.7, 0.25
    mu, var = np.array([0.3, 1.1, -0.4]), np.array([0.2, 0.5, 0.0])
    sd = np.sqrt(beta**2 + var)

    def inner(p0):  # side 1 first by more than eps, sides 0 and 2 within eps behind
        return (norm.pdf(p0, mu[0], sd[0]) * norm.sf(p0 + eps, mu[1], sd[1])
                * (norm.cdf(p0 + eps, mu[2], sd[2]) - norm.cdf(p0 - eps, mu[2], sd[2])))

    want = integrate.quad(inner, -12, 12, epsabs=1e-13, epsrel=1e-11)[0]
    assert thurstone_order_logprob(mu, var, beta, eps, np.array([1, 0, 1])) == pytest.approx(math.log(want), abs=1e-7)


def test_every_order_of_four_sums_to_one_and_six_sides_match_monte_carlo():
    rng = np.random.default_rng(1)
    mu, var = rng.normal(size=4), rng.uniform(0, 1, 4)
    total = 0.0
    for perm in permutations(range(4)):
        rank = np.empty(4, np.int64)
        rank[list(perm)] = np.arange(4)
        total += math.exp(thurstone_order_logprob(mu, var, 1.0, 0.0, rank))
    assert total == pytest.approx(1.0, abs=1e-7)
    mu, var = np.array([0.9, 0.1, 0.5, -0.3, 0.0, -0.8]), rng.uniform(0, 0.3, 6)
    rank = np.array([0, 2, 1, 4, 3, 5])
    draws = rng.normal(mu, np.sqrt(1.0 + var), size=(400_000, 6))
    hit = (np.argsort(-draws, axis=1) == np.argsort(rank)).all(axis=1)
    p, se = hit.mean(), math.sqrt(hit.mean() * (1 - hit.mean()) / hit.size)
    assert math.exp(thurstone_order_logprob(mu, var, 1.0, 0.0, rank)) == pytest.approx(p, abs=4 * se)


def test_a_large_field_agrees_with_a_grid_four_times_finer():
    rng = np.random.default_rng(0)
    n = 120
    mu, var = rng.normal(1500, 300, n), np.full(n, 100.0**2)
    rank = np.argsort(np.argsort(-(mu + rng.normal(0, 200, n))))
    coarse = thurstone_order_logprob(mu, var, 200.0, 0.0, rank)
    fine = thurstone_order_logprob(mu, var, 200.0, 0.0, rank, 1.0 / 512.0)
    assert coarse == pytest.approx(fine, rel=1e-4)
    # the chain's adjacent factors, taken as independent, are far more probable than the ranking is
    assert chain_loglik(mu, var, 200.0, 0.0, rank) > coarse + 100.0


def test_a_side_far_out_of_its_place_falls_back_to_the_chain():
    mu, var = np.array([0.0, 1e6, -1e6]), np.zeros(3)
    rank = np.array([0, 1, 2])  # side 1, a million sds above side 0, placed behind it
    got = thurstone_order_logprob(mu, var, 1.0, 0.0, rank)
    assert got == chain_loglik(mu, var, 1.0, 0.0, rank)
    assert math.isfinite(got) and got < -1e10


def test_a_flat_forecast_gives_every_order_of_fifty_the_same_probability():
    rng = np.random.default_rng(2)
    for var in (0.0, 3.0):
        got = thurstone_order_logprob(np.zeros(50), np.full(50, var), 1.0, 0.0, rng.permutation(50))
        assert got == pytest.approx(-math.lgamma(51), rel=1e-5)
