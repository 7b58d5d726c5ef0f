"""Simulated leagues of matches of many sides (statespace.model.match_scenarios): the same seed gives
the same league, the orders follow the link (probit pairs at Phi(d / scale), logistic pairs at the
logistic cdf, three logistic sides Plackett-Luce), the skills follow the random walk, and every bad
argument is named. Expected probabilities come from scipy and from Plackett-Luce written out."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import expit, softmax
from scipy.stats import norm

from statespace.model.match_scenarios import MatchSimulation, ffa_league, simulate_matches, team_league
from statespace.model.skillmodel import SkillModel

TOL_SD = 4.5  # a true probability lies this many binomial sds from its estimate about once in 150,000


def _static(link: str, scale: float = 1.0) -> SkillModel:
    """Skills drawn once from N(0, 1) and then fixed (no drift)."""
    return SkillModel(link, scale, 0.0, 1.0, 0.0)


def _per_competitor(sim: MatchSimulation) -> np.ndarray:
    """Each competitor's one (static) skill, checking it is the same at all its matches."""
    m = sim.matches
    skill = np.full(m.n_players, np.nan)
    for i in range(m.n_players):
        at = sim.truth[m.member == i]
        assert np.all(at == at[0])
        skill[i] = at[0]
    return skill


def test_same_seed_same_league_and_other_seed_another():
    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.05)
    one, two = (simulate_matches(model, 12, 30, 3, 2, seed=7, partial=0.5) for _ in range(2))
    for field in ("time", "match_ptr", "side_ptr", "member", "weight", "rank", "names", "label"):
        np.testing.assert_array_equal(getattr(one.matches, field), getattr(two.matches, field))
    np.testing.assert_array_equal(one.truth, two.truth)
    other = simulate_matches(model, 12, 30, 3, 2, seed=8, partial=0.5)
    assert not np.array_equal(one.truth, other.truth)


def test_layout_sides_members_ranks_and_weights():
    sim = simulate_matches(SkillModel("probit", 1.0, 0.0, 1.0, 0.1), 20, 15, 3, 2, seed=1, partial=0.25)
    m = sim.matches
    assert m.n_matches == 15 and m.n_players == 20
    assert np.all(np.diff(m.match_ptr) == 3) and np.all(np.diff(m.side_ptr) == 2)
    np.testing.assert_array_equal(m.time, np.arange(15.0))
    for k in range(15):
        np.testing.assert_array_equal(np.sort(m.rank[m.match_ptr[k]:m.match_ptr[k + 1]]), [0, 1, 2])
        members = np.concatenate(m.sides(k))
        assert len(set(members)) == 6
    assert np.all((m.weight >= 0.75) & (m.weight <= 1.0)) and np.ptp(m.weight) > 0
    assert sim.truth.shape == m.member.shape and not sim.truth.flags.writeable
    side_of_member = np.repeat(np.arange(m.n_sides), 2)
    np.testing.assert_allclose(sim.side_strength(),
                               [np.sum((m.weight * sim.truth)[side_of_member == s]) for s in range(m.n_sides)])


@pytest.mark.parametrize("link, cdf", [("probit", norm.cdf), ("logistic", expit)])
def test_two_single_sides_order_at_the_links_probability(link, cdf):
    scale = 2.0
    n = 10_000
    sim = simulate_matches(_static(link, scale), 2, n, 2, seed=11)
    skill = _per_competitor(sim)
    d = abs(skill[0] - skill[1])
    assert 0.3 < d < 4.0  # the seed gives a pair whose order is neither a coin toss nor certain
    stronger = int(np.argmax(skill))
    m = sim.matches
    first = m.member[m.side_ptr[m.match_ptr[:-1]]]  # sides are stored by rank: the winner first
    share = np.mean(first == stronger)
    p = cdf(d / scale)
    assert abs(share - p) < TOL_SD * math.sqrt(p * (1 - p) / n), (share, p)


def test_partial_weights_scale_the_sides_performance():
    # equal skills (prior variance 0) at 3: only the weights set the gap, d = 3 (w_a - w_b)
    model = SkillModel("logistic", 1.0, 3.0, 0.0, 0.0)
    n = 10_000
    sim = simulate_matches(model, 2, n, 2, seed=5, partial=0.9)
    strength = sim.side_strength().reshape(n, 2)  # stored by rank: winner's side first
    np.testing.assert_allclose(strength, 3.0 * sim.matches.weight.reshape(n, 2))
    # the heavier side places first with probability expit(|d|): over the matches it is first
    # sum(expit(|d|)) times in expectation
    d = strength[:, 0] - strength[:, 1]
    heavier_won = np.sum(d > 0)
    p = expit(np.abs(d))
    assert abs(heavier_won - p.sum()) < TOL_SD * math.sqrt(np.sum(p * (1 - p)))


def test_three_logistic_sides_follow_plackett_luce():
    scale = 1.5
    n = 15_000
    sim = simulate_matches(_static("logistic", scale), 3, n, 3, seed=3)
    skill = _per_competitor(sim)
    assert np.ptp(skill) > 0.3
    m = sim.matches
    orders = m.member.reshape(n, 3)  # one member per side, sides stored by rank
    w = np.exp(skill / scale)
    for order in itertools.permutations(range(3)):
        a, b, c = order  # Plackett-Luce: first a among all, then b among the rest
        p = w[a] / w.sum() * w[b] / (w[b] + w[c])
        share = np.mean(np.all(orders == order, axis=1))
        assert abs(share - p) < TOL_SD * math.sqrt(p * (1 - p) / n), (order, share, p)
    winner_p = softmax(skill / scale)
    for i in range(3):
        share = np.mean(orders[:, 0] == i)
        assert abs(share - winner_p[i]) < TOL_SD * math.sqrt(winner_p[i] * (1 - winner_p[i]) / n)


def test_skills_random_walk_with_the_models_drift():
    drift, n = 0.04, 5_000
    sim = simulate_matches(SkillModel("probit", 1.0, 0.0, 1.0, drift), 2, n, 2, seed=2)
    m = sim.matches
    for i in range(2):
        steps = np.diff(sim.truth[m.member == i])  # competitor i plays every match, one unit apart
        sd = drift * math.sqrt(2.0 / steps.size)  # sd of a sample variance of Gaussian steps
        assert abs(np.mean(steps**2) - drift) < TOL_SD * sd


def test_presets():
    ffa = ffa_league(seed=0)
    assert (ffa.matches.n_matches, ffa.matches.n_players, ffa.name) == (1000, 500, "ffa_league")
    assert np.all(np.diff(ffa.matches.match_ptr) == 50) and np.all(np.diff(ffa.matches.side_ptr) == 1)
    assert (ffa.model.link, ffa.model.scale, ffa.model.drift) == ("logistic", 1.0, 0.01)
    team = team_league(seed=0)
    assert (team.matches.n_matches, team.matches.n_players) == (1000, 200)
    assert np.all(np.diff(team.matches.match_ptr) == 2) and np.all(np.diff(team.matches.side_ptr) == 4)


MODEL = SkillModel("logistic", 1.0, 0.0, 1.0, 0.0)


@pytest.mark.parametrize("kwargs, words", [
    (dict(sides=1), "sides must be a whole number >= 2, got 1"),
    (dict(sides=2.5), "sides must be a whole number"),
    (dict(team_size=0), "team_size must be a whole number >= 1, got 0"),
    (dict(n_players=1), "n_players must be a whole number >= 2"),
    (dict(n_matches=0), "n_matches must be a whole number >= 1"),
    (dict(n_matches="5"), "n_matches must be a whole number"),
    (dict(sides=3, team_size=4), "sides * team_size must be <= n_players"),
    (dict(partial=1.0), "partial must be a finite number in [0, 1)"),
    (dict(partial=-0.1), "partial must be a finite number in [0, 1)"),
    (dict(model="elo"), "model must be a SkillModel"),
])
def test_bad_arguments_are_named(kwargs, words):
    args = dict(model=MODEL, n_players=10, n_matches=5, sides=2, team_size=1, partial=0.0) | kwargs
    with pytest.raises(ValueError, match="simulate_matches") as err:
        simulate_matches(**args)
    assert words in str(err.value)
