"""simulate and the built-in scenarios: seeding, truth bookkeeping, and outcome frequencies."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from statespace import ELO_SCALE, Games, SkillModel, Simulation, scenarios, simulate

MODEL = SkillModel("logistic", ELO_SCALE, 1500.0, 200.0**2, 50.0, ("threshold", 60.0), home=40.0)


def _same_games(g1: Games, g2: Games) -> bool:
    return (np.array_equal(g1.time, g2.time) and np.array_equal(g1.a_name, g2.a_name)
            and np.array_equal(g1.b_name, g2.b_name) and np.array_equal(g1.score, g2.score)
            and np.array_equal(g1.neutral, g2.neutral))


def test_same_seed_same_games_different_seed_different():
    s1 = simulate(MODEL, 20, 300, home_fraction=0.5, seed=7)
    s2 = simulate(MODEL, 20, 300, home_fraction=0.5, seed=7)
    s3 = simulate(MODEL, 20, 300, home_fraction=0.5, seed=8)
    assert _same_games(s1.games, s2.games)
    np.testing.assert_array_equal(s1.skill_a, s2.skill_a)
    pd.testing.assert_frame_equal(s1.truth, s2.truth)
    assert not _same_games(s1.games, s3.games)
    assert not np.array_equal(s1.skill_a, s3.skill_a)


def test_generator_seed_is_accepted():
    s1 = simulate(MODEL, 10, 50, seed=np.random.default_rng(3))
    s2 = simulate(MODEL, 10, 50, seed=np.random.default_rng(3))
    assert _same_games(s1.games, s2.games)


def test_shape_and_basic_invariants():
    sim = simulate(MODEL, 25, 400, home_fraction=0.3, seed=1)
    g = sim.games
    assert isinstance(sim, Simulation)
    assert len(g) == 400 and g.n_players <= 25
    assert np.all(g.a != g.b)
    assert set(np.unique(g.score)) <= {0.0, 0.5, 1.0}
    assert sim.skill_a.shape == sim.skill_b.shape == (400,)
    # default span: about one game per competitor per day, days = 2 * 400 / 25 = 32
    span = (g.time.max() - g.time.min()) / np.timedelta64(1, "D")
    assert 31 <= span < 32
    assert g.time.min() == np.datetime64("2000-01-01")
    # home share close to 0.3 (binomial sd ~ 0.023)
    assert abs(np.mean(~g.neutral) - 0.3) < 0.1
    assert sim.true_proba().shape == (400, 3)


def test_truth_trajectories_match_skill_a_and_skill_b():
    sim = simulate(MODEL, 15, 300, seed=2)
    g = sim.games
    truth = sim.truth
    lookup = {(t, p): s for t, p, s in zip(truth["time"].to_numpy(), truth["player"], truth["skill"])}
    # one truth record per (time, competitor) with games then
    assert len(lookup) == len(truth)
    for i in range(len(g)):
        assert lookup[(g.time[i], g.a_name[i])] == sim.skill_a[i]
        assert lookup[(g.time[i], g.b_name[i])] == sim.skill_b[i]
    # every truth record belongs to a game
    played = set(zip(g.time, g.a_name)) | set(zip(g.time, g.b_name))
    assert set(lookup) == played
    # with drift, skills do move
    assert truth.groupby("player")["skill"].nunique().max() > 1


def test_zero_drift_gives_constant_skills():
    static = SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.0)
    sim = simulate(static, 10, 200, seed=4)
    per_player = sim.truth.groupby("player")["skill"]
    assert (per_player.nunique() == 1).all()
    # and the same per-game skills agree across a and b sides
    skill = {}
    for name, s in zip(np.r_[sim.games.a_name, sim.games.b_name], np.r_[sim.skill_a, sim.skill_b]):
        assert skill.setdefault(name, s) == s


def test_drift_variance_is_as_stated():
    """Increments of a competitor's skill over dt days have variance drift * dt (chi-square check)."""
    model = SkillModel("logistic", 1.0, 0.0, 1.0, drift=4.0)
    sim = simulate(model, 10, 2000, days=400, seed=5)
    z = []
    for _, df in sim.truth.groupby("player"):
        t = df["time"].to_numpy().astype("datetime64[D]").astype(float)
        s = df["skill"].to_numpy()
        z.append(np.diff(s) / np.sqrt(4.0 * np.diff(t)))
    z = np.concatenate(z)
    # standardised increments: variance 1 within a few standard errors (se of var ~ sqrt(2 / n))
    assert abs(z.var() - 1.0) < 4 * np.sqrt(2.0 / z.size)
    assert abs(z.mean()) < 4 / np.sqrt(z.size)


def test_zero_reversion_is_the_random_walk_as_before():
    """reversion 0 keeps the random-walk code path: the same numbers per seed as before mean
    reversion was simulated (values recorded from that version)."""
    sim = simulate(MODEL, 20, 300, home_fraction=0.5, seed=7)
    assert MODEL.reversion == 0
    np.testing.assert_array_equal(sim.skill_a[[0, 1, 150, 299]],
                                  [1380.0285772536945, 1172.1081336913749, 1151.4284496938078, 1297.412286320985])
    np.testing.assert_array_equal(sim.skill_b[[0, 1, 150, 299]],
                                  [1616.1343561794354, 1426.977195054914, 1167.3458978806152, 1666.0003146737045])
    assert sim.games.score.sum() == 147.0


def _records(sim):
    for _, df in sim.truth.groupby("player"):
        yield df["time"].to_numpy().astype("datetime64[D]").astype(float), df["skill"].to_numpy()


def test_reversion_follows_the_ornstein_uhlenbeck_transition():
    """With reversion lambda, s_k | s_{k-1} ~ N(mu + a (s_{k-1} - mu), q (1 - a^2) / (2 lambda)),
    a = exp(-lambda dt): standardised innovations are N(0, 1), and the lag regression
    coefficient of (s_k - mu) on (s_{k-1} - mu), pooled over pairs with one-day gaps, is
    exp(-lambda) (1 for the random walk)."""
    q, lam, mu = 4.0, 0.05, 10.0
    model = SkillModel("logistic", 1.0, mu, q / (2 * lam), drift=q, reversion=lam)
    sim = simulate(model, 10, 4000, days=400, seed=12)
    z, x0, x1 = [], [], []
    for t, s in _records(sim):
        dt = np.diff(t)
        a = np.exp(-lam * dt)
        v = q * (1 - a**2) / (2 * lam)
        z.append((s[1:] - mu - a * (s[:-1] - mu)) / np.sqrt(v))
        one = dt == 1
        x0.append(s[:-1][one] - mu)
        x1.append(s[1:][one] - mu)
    z = np.concatenate(z)
    assert z.size > 3000
    assert abs(z.var() - 1.0) < 4 * np.sqrt(2.0 / z.size)
    assert abs(z.mean()) < 4 / np.sqrt(z.size)
    x0, x1 = np.concatenate(x0), np.concatenate(x1)
    slope = x0 @ x1 / (x0 @ x0)
    resid_sd = np.sqrt(q * (1 - np.exp(-2 * lam)) / (2 * lam))
    assert abs(slope - np.exp(-lam)) < 4 * resid_sd / np.sqrt(x0 @ x0)
    assert slope < 1 - 8 * resid_sd / np.sqrt(x0 @ x0)  # clearly not the random walk


def test_reversion_spread_tends_to_the_stationary_variance():
    """Starting exactly at the mean (prior_var 0), a skill t days later has variance
    q (1 - exp(-2 lambda t)) / (2 lambda): about q / (2 lambda) = 40 after a long time, where
    the random walk would have q t (here about 1,600)."""
    q, lam = 4.0, 0.05
    model = SkillModel("logistic", 1.0, 0.0, 0.0, drift=q, reversion=lam)
    sim = simulate(model, 400, 8000, days=400, seed=13)
    z = []
    for t, s in _records(sim):
        elapsed = t[-1] - t[0]
        if elapsed > 0:
            z.append(s[-1] / np.sqrt(q * -np.expm1(-2 * lam * elapsed) / (2 * lam)))
    z = np.asarray(z)
    assert z.size > 350
    assert abs(z.var() - 1.0) < 4 * np.sqrt(2.0 / z.size)


def test_prior_spread_matches_prior_var():
    model = SkillModel("logistic", 1.0, 3.0, 0.25)
    sim = simulate(model, 400, 400, seed=6)
    first = sim.truth.sort_values("time", kind="stable").groupby("player")["skill"].first()
    n = first.size
    assert abs(first.mean() - 3.0) < 4 * 0.5 / np.sqrt(n)
    assert abs(first.var() / 0.25 - 1.0) < 4 * np.sqrt(2.0 / n)


@pytest.mark.parametrize("draw", [("threshold", 120.0), ("davidson", 0.8)])
def test_outcome_frequencies_match_the_model(draw):
    """Empirical draw and win shares vs the mean model probabilities at the true skills,
    within 4 standard errors (sd of a sum of independent Bernoullis: sqrt(sum p (1 - p)))."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 150.0**2, 0.0, draw, home=50.0)
    sim = simulate(model, 30, 4000, home_fraction=0.5, seed=11)
    # independent recomputation of the probabilities from the true skills and the home flag
    d = sim.skill_a - sim.skill_b + 50.0 * (~sim.games.neutral)
    p = model.proba(d)
    np.testing.assert_allclose(sim.true_proba(), p)
    for k, outcome in enumerate((1.0, 0.5, 0.0)):
        observed = np.sum(sim.games.score == outcome)
        expected = p[:, k].sum()
        sd = np.sqrt(np.sum(p[:, k] * (1 - p[:, k])))
        assert abs(observed - expected) < 4 * sd, (outcome, observed, expected)
    assert 0.05 < np.mean(sim.games.score == 0.5) < 0.6


def test_simulate_rejects_bad_arguments():
    with pytest.raises(ValueError):
        simulate(MODEL, 1, 10)
    with pytest.raises(ValueError):
        simulate(MODEL, 10, 0)
    with pytest.raises(ValueError):
        simulate(MODEL, 10, 10, home_fraction=1.5)


# sizes from the statespace.scenarios module docstring
SIZES = {"balanced": (30, 600, 39), "draw_heavy": (30, 600, 39), "sparse": (120, 600, 9),
         "drifting": (40, 4000, 999)}
# documented approximate draw shares ("about 10%", "~50%" / "about half")
DRAW_SHARE = {"balanced": (0.05, 0.17), "draw_heavy": (0.35, 0.6), "sparse": (0.05, 0.17),
              "drifting": (0.05, 0.17)}


def test_names_cover_documented_scenarios():
    assert set(scenarios.NAMES) == set(SIZES)
    assert scenarios.DEFAULT in scenarios.NAMES


@pytest.mark.parametrize("name", scenarios.NAMES)
def test_every_scenario_builds_with_documented_sizes(name):
    sim = scenarios.get(name, seed=0)
    n_players, n_games, span_days = SIZES[name]
    g = sim.games
    assert sim.name == name and sim.description
    assert len(g) == n_games
    assert g.n_players == n_players
    span = (g.time.max() - g.time.min()) / np.timedelta64(1, "D")
    # drifting: "over 1,000 days"; the others use the default ~1 game per competitor per day
    assert span == span_days
    lo, hi = DRAW_SHARE[name]
    assert lo < np.mean(g.score == 0.5) < hi
    assert sim.model.scale == pytest.approx(400 / np.log(10))
    assert sim.model.prior_mean == 1500.0
    # seeded: the same seed gives the same games, another seed others
    assert _same_games(g, getattr(scenarios, name)(seed=0).games)
    assert not _same_games(g, scenarios.get(name, seed=1).games)


def test_drifting_scenario_skill_sd_over_span():
    # "variance 22.5 per day (sd 150 over the span)": 22.5 * 1000 = 150^2
    m = scenarios.get("drifting").model
    assert m.drift * 1000 == pytest.approx(150.0**2)
    assert scenarios.get("balanced").model.drift == 0.0


def test_unknown_scenario_raises():
    with pytest.raises(ValueError, match="nope"):
        scenarios.get("nope")


def test_home_drift_makes_the_home_advantage_a_random_walk():
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 100.0**2, 0.0, "half", home=80.0, home_drift=9.0)
    sim = simulate(model, 20, 3000, days=1000, home_fraction=0.6, seed=21)
    h = sim.home_level
    assert h.shape == (3000,) and h[sim.games.order[0]] == 80.0
    t = sim.games.days()
    o = sim.games.order
    dt, dh = np.diff(t[o]), np.diff(h[o])
    assert np.all(dh[dt == 0] == 0)  # one level per day
    z = dh[dt > 0] / np.sqrt(9.0 * dt[dt > 0])
    assert abs(z.var() - 1.0) < 4 * np.sqrt(2.0 / z.size) and abs(z.mean()) < 4 / np.sqrt(z.size)
    # the results follow the drifting home advantage, not the starting value
    at_home = ~sim.games.neutral
    np.testing.assert_allclose(sim.true_proba(), model.proba(sim.skill_a - sim.skill_b + h * at_home))
    assert simulate(dataclasses.replace(model, home_drift=0.0), 20, 300, seed=21).home_level is None
