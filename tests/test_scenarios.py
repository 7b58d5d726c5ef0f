"""The parameterised ``league`` scenario: each parameter shows in the simulated games and the
true skills, the draw margin solves its equation, seeds repeat, bad parameters are named; and
``study`` passes a scenario's parameters through.

Expected values come from the definitions in ``statespace.scenarios.league`` (the draw share as an
integral of the ordered logit written out here, the Ornstein-Uhlenbeck decay ``exp(-reversion)``
per period, the random walk's variance ``drift_sd^2`` per period), never from the code's output.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, stats

from statespace.model import scenarios
from statespace.evaluation.study import study

ELO = 400.0 / math.log(10.0)


def logistic(x):
    return 1.0 / (1.0 + np.exp(-x))


def draw_share_by_quad(margin, spread, home=0.0, home_share=1.0):
    """E[P(draw | d)] with d ~ N(home * H, 2 spread^2), by adaptive quadrature of the ordered
    logit written out: P(draw | d) = 1 - F((d - m) / s) - F((-d - m) / s)."""
    sd = math.sqrt(2.0) * spread

    def share(shift):
        f = lambda x: (1 - logistic((x + shift - margin) / ELO) - logistic((-x - shift - margin) / ELO)) \
            * stats.norm.pdf(x, scale=sd)
        return integrate.quad(f, -12 * sd, 12 * sd, epsabs=1e-13, limit=200)[0]

    return (1 - home_share) * share(0.0) + home_share * share(home)


@pytest.mark.parametrize("rate, spread, home, home_share",
                         [(0.02, 200.0, 0.0, 1.0), (0.1, 200.0, 0.0, 1.0), (0.3, 100.0, 60.0, 0.5),
                          (0.6, 300.0, 150.0, 1.0)])
def test_draw_margin_gives_the_requested_share(rate, spread, home, home_share):
    m = scenarios.league_draw_margin(rate, spread, home, home_share)
    assert m > 0
    assert draw_share_by_quad(m, spread, home, home_share) == pytest.approx(rate, abs=1e-7)
    # and the margin is where the share crosses: a little more margin, more draws
    assert draw_share_by_quad(m * 1.05, spread, home, home_share) > rate + 1e-4


def test_draw_margin_zero_rate_and_bad_rates():
    assert scenarios.league_draw_margin(0.0) == 0.0
    for bad in (1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="draw_rate"):
            scenarios.league_draw_margin(bad)


@pytest.mark.parametrize("rate", [0.05, 0.25])
def test_simulated_draw_share_is_the_requested_rate(rate):
    # static skills (no drift) keep the starting spread; many competitors make the realised
    # spread close to the prior's, many games make the binomial error small
    sim = scenarios.get("league", seed=11, n_competitors=2000, games_per_period=10.0, n_periods=2, drift_sd=0.0,
                        draw_rate=rate)
    draws = sim.games.score == 0.5
    n = len(draws)
    # sampling error: the results given the skills (binomial) and the 2,000 drawn skills, whose
    # spread has a relative sd of 1 / sqrt(2 * 2000); the draw share moves at most in proportion
    se = math.sqrt(rate * (1 - rate) / n + (rate / math.sqrt(2 * 2000)) ** 2)
    assert abs(draws.mean() - rate) < 4 * se, (draws.mean(), rate, se)
    assert draws.sum() > 0


def test_zero_draw_rate_gives_no_draws():
    sim = scenarios.get("league", seed=1, draw_rate=0.0)
    assert not np.any(sim.games.score == 0.5)


def test_home_advantage_raises_the_home_win_share():
    shares = []
    for home in (0.0, 100.0, 200.0):
        sim = scenarios.get("league", seed=4, n_competitors=400, games_per_period=20.0, n_periods=2, drift_sd=0.0,
                            home=home)
        g = sim.games
        assert not g.neutral.any()  # home_share=1: every game has a home side
        shares.append(np.mean(g.score == 1.0))
    n = 4000
    se = math.sqrt(0.25 / n)
    assert shares[1] > shares[0] + 4 * se and shares[2] > shares[1] + 4 * se, shares
    # a 100-point home edge between equal sides wins 1 / (1 + 10^(-100/400)) = 64% of the
    # expected score; against a spread of 200 the share of home wins is lower but well above half
    assert 0.40 < shares[0] < 0.50 and shares[2] > 0.60
    half = scenarios.get("league", seed=4, home=100.0, home_share=0.5).games
    assert 0.4 < half.neutral.mean() < 0.6


def _first_last(truth: pd.DataFrame):
    """Each competitor's first and last recorded skill and the days between them."""
    t = truth.sort_values(["player", "time"])
    g = t.groupby("player")
    first, last = g.first(), g.last()
    days = (last["time"] - first["time"]) / np.timedelta64(1, "D")
    return first["skill"].to_numpy(), last["skill"].to_numpy(), days.to_numpy()


@pytest.mark.parametrize("drift_sd", [0.0, 30.0])
def test_drift_is_the_sd_per_period(drift_sd):
    sim = scenarios.get("league", seed=5, n_competitors=300, games_per_period=2.0, n_periods=60, drift_sd=drift_sd)
    assert sim.model.drift == pytest.approx(drift_sd**2 / 7.0)
    s0, s1, days = _first_last(sim.truth)
    periods = days / 7.0
    if drift_sd == 0:
        assert np.array_equal(s0, s1)
        return
    # the random walk adds drift_sd^2 per period: sum of squared changes over sum of periods
    estimate = np.sum((s1 - s0) ** 2) / np.sum(periods)
    # relative sd of the estimate is about sqrt(2 / 300) = 8%
    assert estimate == pytest.approx(drift_sd**2, rel=0.3)


@pytest.mark.parametrize("reversion", [0.0, 0.05])
def test_reversion_pulls_skills_to_the_mean(reversion):
    sim = scenarios.get("league", seed=6, n_competitors=300, games_per_period=2.0, n_periods=40, drift_sd=20.0,
                        reversion=reversion)
    assert sim.model.reversion == pytest.approx(reversion / 7.0)
    s0, s1, days = _first_last(sim.truth)
    # regress the last deviation from 1500 on the first: the OU process keeps exp(-reversion)
    # of a deviation per period, a random walk all of it
    keep = days > 0.9 * days.max()
    x, y = s0[keep] - 1500.0, s1[keep] - 1500.0
    slope = np.sum(x * y) / np.sum(x * x)
    expected = math.exp(-reversion * np.mean(days[keep]) / 7.0)
    assert slope == pytest.approx(expected, abs=0.1), (slope, expected)
    if reversion:
        assert expected < 0.2  # far from the random walk's 1


def test_sizes_and_span():
    sim = scenarios.get("league", seed=0, n_competitors=12, games_per_period=3.0, n_periods=10, period_days=5.0)
    g = sim.games
    assert len(g) == round(12 * 3.0 * 10 / 2) and g.n_players == 12
    span = (g.time.max() - g.time.min()) / np.timedelta64(1, "D")
    assert 10 * 5 - 5 <= span < 10 * 5
    assert sim.name == "league" and "12 competitors" in sim.description
    # the defaults the module documents: 20 competitors, 2 games each per period, 100 periods
    assert len(scenarios.get("league").games) == 2000


def test_same_seed_same_games_other_seed_other_games():
    a = scenarios.get("league", seed=3, n_competitors=10, n_periods=20, home=50.0)
    b = scenarios.get("league", seed=3, n_competitors=10, n_periods=20, home=50.0)
    c = scenarios.get("league", seed=4, n_competitors=10, n_periods=20, home=50.0)
    fa, fb, fc = a.games.to_frame(), b.games.to_frame(), c.games.to_frame()
    pd.testing.assert_frame_equal(fa, fb)
    np.testing.assert_array_equal(a.skill_a, b.skill_a)
    assert not fa.equals(fc)


def test_unknown_parameters_are_named_with_the_allowed_ones():
    with pytest.raises(ValueError, match=r"scenario 'league' has no parameter 'n_teams' \(it takes n_competitors, "
                                         r"games_per_period"):
        scenarios.get("league", n_teams=10)
    with pytest.raises(ValueError, match=r"scenario 'balanced' has no parameters 'drift_sd', 'home' \(it takes none"):
        scenarios.get("balanced", drift_sd=3.0, home=1.0)
    with pytest.raises(ValueError, match="unknown scenario 'leauge'"):
        scenarios.get("leauge")


@pytest.mark.parametrize("params, word", [
    (dict(n_competitors=1), "n_competitors"), (dict(n_competitors=2.5), "n_competitors"),
    (dict(n_periods=0), "n_periods"), (dict(games_per_period=0), "games_per_period"),
    (dict(drift_sd=-1.0), "drift_sd"), (dict(draw_rate=1.0), "draw_rate"), (dict(home_share=1.5), "home_share"),
    (dict(reversion=-0.1), "reversion"), (dict(home="high"), "home"), (dict(period_days=0.0), "period_days"),
])
def test_bad_parameter_values_are_named(params, word):
    with pytest.raises(ValueError, match=word):
        scenarios.get("league", **params)


def test_fixed_scenarios_are_unchanged_and_listed_apart():
    assert "league" not in scenarios.NAMES and "league" in scenarios.ALL
    assert set(scenarios.PARAMETERISED["league"]) == set(scenarios.LEAGUE_DEFAULTS)
    scenarios.check_params("league", {"home": 1.0})
    with pytest.raises(ValueError, match="has no parameter"):
        scenarios.check_params("drifting", {"home": 1.0})


def test_study_passes_scenario_parameters():
    params = dict(n_competitors=8, games_per_period=2.0, n_periods=25, draw_rate=0.2)
    table = study(methods={"elo": "elo"}, sources={"small": {"scenario": "league", **params}, "bare": "league"},
                  seeds=[2], modes=["online"], split=0.6, progress=False)
    assert table["error"].isna().all(), table["error"].tolist()
    small = table[table["source"] == "small"].iloc[0]
    assert small["n_test"] == 200 - round(0.6 * 200)  # 8 * 2 * 25 / 2 = 200 games
    bare = table[table["source"] == "bare"].iloc[0]
    assert bare["n_test"] == 2000 - 1200
    with pytest.raises(ValueError, match=r"source 'x': scenario 'league' has no parameter 'teams'"):
        study(methods={"elo": "elo"}, sources={"x": {"scenario": "league", "teams": 3}}, progress=False)
