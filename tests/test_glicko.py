"""Glicko-1 and Glicko-2 against Glickman's worked examples and an independent computation.

Reference numbers:
- Glickman, "The Glicko system" (1999), worked example (p. 3-4) and the prediction example
  (p. 5); the full-precision figures were computed independently with q = ln 10 / 400.
- Glickman, "Example of the Glicko-2 system" (2022 revision), steps 1-8 worked example.
- Repeated wins / "whose uncertainty moves the prediction" tables: direct evaluation of
  Glickman's formulas, as filed in the issue (update-time form, q = 0.0057565).
- Random periods: a plain-NumPy implementation of the papers written in this file, with the
  Glicko-2 volatility root found by scipy's brentq instead of the Illinois algorithm.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import brentq

import statespace as ss
from filters import Glicko, Glicko2
from filters.glicko import Q, expected_score, g

SCALE2 = 173.7178


def paper_games():
    # the player (1500, RD 200) beats 1400/30, loses to 1550/100 and 1700/300, one period
    games = ss.Games.from_arrays([0, 0, 0], ["P", "P", "P"], ["A", "B", "C"], [1, 0, 0], period=[0, 0, 0])
    init = {"P": (1500, 200), "A": (1400, 30), "B": (1550, 100), "C": (1700, 300)}
    return games, init


# ---------------------------------------------------------------- Glicko-1, the paper
def test_glicko1_paper_intermediates():
    assert Q == pytest.approx(0.0057565, abs=1e-7)
    np.testing.assert_allclose(g([30, 100, 300]), [0.995498, 0.953149, 0.724235], atol=1e-6)
    e = expected_score(1500, 200, np.array([1400, 1550, 1700]), np.array([30, 100, 300]), form="update")
    np.testing.assert_allclose(e, [0.639468, 0.431842, 0.302841], atol=1e-6)
    d2 = 1 / (Q**2 * np.sum(g([30, 100, 300]) ** 2 * e * (1 - e)))
    assert d2 == pytest.approx(53685.74, abs=0.05)


def test_glicko1_paper_example():
    games, init = paper_games()
    r = Glicko().run(games, initial=init).ratings().set_index("player")
    assert round(r.loc["P", "mean"]) == 1464
    assert round(r.loc["P", "sd"], 1) == 151.4
    assert r.loc["P", "mean"] == pytest.approx(1464.1065, abs=1e-4)
    assert r.loc["P", "sd"] == pytest.approx(151.3989, abs=1e-4)
    assert r.loc["P", "games"] == 3


def test_glicko1_prediction_form_example():
    assert expected_score(1400, 80, 1500, 150) == pytest.approx(0.37599, abs=1e-5)
    glicko = Glicko()
    state = glicko.init_state(["A", "B"], initial={"A": (1400, 80), "B": (1500, 150)})
    p = glicko.predict_proba(state, ["A", "B"], ["B", "A"])
    assert p[0, 0] == pytest.approx(0.37599, abs=1e-5)
    assert p[0, 0] + p[1, 0] == pytest.approx(1.0)  # symmetric by default


def test_repeated_wins_without_time_passing():
    n = 20
    games = ss.Games.from_arrays([0] * n, ["P"] * n, ["Q"] * n, [1] * n)  # each game its own period
    traj = Glicko().run(games).trajectories()
    rd = traj[traj.player == "P"]["sd"].to_numpy()
    np.testing.assert_allclose(rd[[0, 4, 19]], [290.23, 223.26, 177.98], atol=0.005)


def test_whose_uncertainty_moves_the_prediction():
    # update-time form: only the opponent's RD matters
    e = expected_score(2500, 30, 1500, np.array([30, 50, 100, 200, 350]), form="update")
    np.testing.assert_allclose(e, [0.9968, 0.9966, 0.9959, 0.9923, 0.9792], atol=5e-5)
    own = expected_score(2500, np.array([30, 100, 350]), 1500, 100, form="update")
    np.testing.assert_allclose(own, own[0])
    ab = expected_score(1800, 30, 1500, 30, form="update")
    ba = expected_score(1500, 30, 1800, 30, form="update")
    assert (ab, ba) == (pytest.approx(0.8480, abs=5e-5), pytest.approx(0.1520, abs=5e-5))
    ba_grown = expected_score(1500, 30, 1800, 350, form="update")
    assert ba_grown == pytest.approx(0.2395, abs=5e-5)
    assert ab + ba_grown == pytest.approx(1.088, abs=5e-4)
    assert expected_score(1800, 350, 1500, 350, form="update") == pytest.approx(0.7605, abs=5e-5)
    # the symmetric prediction form always sums to one
    p1 = expected_score(1800, 350, 1500, 30)
    p2 = expected_score(1500, 30, 1800, 350)
    assert p1 + p2 == pytest.approx(1.0)
    # and predict_proba offers both
    glicko = Glicko()
    state = glicko.init_state(["X", "Y"], initial={"X": (1800, 350), "Y": (1500, 30)})
    upd = glicko.predict_proba(state, ["Y"], ["X"], form="update")
    assert upd[0, 0] == pytest.approx(0.2395, abs=5e-5)
    assert Glicko(form="update").predict_proba(state, ["Y"], ["X"])[0, 0] == pytest.approx(0.2395, abs=5e-5)


def test_rd_grows_with_idle_periods_and_is_capped():
    c = Glicko().c
    assert c == pytest.approx(34.641, abs=1e-3)
    # 100 idle periods bring RD 50 back to 350
    assert math.sqrt(50**2 + c**2 * 100) == pytest.approx(350.0)
    games = ss.Games.from_arrays([0, 10, 10], ["A", "A", "C"], ["B", "C", "D"], [1, 1, 0], period=[0, 10, 10])
    r = Glicko().run(games, initial={"A": (1500, 50), "B": (1500, 50)})
    traj = r.trajectories()
    # A's forecast for period 10 uses RD sqrt(rd_after_0^2 + 10 c^2)
    rd0 = traj[(traj.player == "A")]["sd"].to_numpy()[0]
    state = Glicko().init_state(["A", "C"], initial={"A": (traj[traj.player == "A"]["mean"].iloc[0],
                                                          math.sqrt(rd0**2 + 10 * c**2))})
    assert r.proba[1, 0] == pytest.approx(Glicko().predict_proba(state, ["A"], ["C"])[0, 0])
    # capped at rd_max
    st2 = Glicko().predict(Glicko().init_state(["A"], initial={"A": (1500, 300)}), 1000.0)
    assert st2.values[0, 1] == 350.0


def test_period_days_sets_the_time_unit_without_periods():
    games = ss.Games.from_arrays(["2020-01-01", "2020-01-31"], ["A", "A"], ["B", "C"], [1, 1])
    r1 = Glicko(period_days=30).run(games, initial={"A": (1500, 100)})
    assert Glicko().period_days == 30
    r2 = Glicko().run(games.with_periods(30, origin="2020-01-01"), initial={"A": (1500, 100)})
    np.testing.assert_allclose(r1.proba, r2.proba)


# ---------------------------------------------------------------- Glicko-2, the paper
def test_glicko2_paper_example():
    games, init = paper_games()
    init2 = {k: (r, rd, 0.06) for k, (r, rd) in init.items()}
    r = Glicko2(tau=0.5).run(games, initial=init2).ratings().set_index("player")
    # printed values (the paper rounds v and Delta)
    assert r.loc["P", "mean"] == pytest.approx(1464.06, abs=0.02)
    assert r.loc["P", "sd"] == pytest.approx(151.52, abs=0.02)
    assert r.loc["P", "volatility"] == pytest.approx(0.05999, abs=1e-5)
    # full precision
    assert r.loc["P", "mean"] == pytest.approx(1464.0507, abs=1e-4)
    assert r.loc["P", "sd"] == pytest.approx(151.5165, abs=1e-4)
    assert r.loc["P", "volatility"] == pytest.approx(0.0599960, abs=1e-7)


def test_glicko2_idle_period_grows_phi_only():
    games = ss.Games.from_arrays([0, 3], ["A", "A"], ["B", "C"], [1, 1], period=[0, 3])
    r = Glicko2().run(games)
    traj = r.trajectories()
    a0 = traj[traj.player == "A"].iloc[0]
    sigma = a0["volatility"]
    # before period 3, A sat out periods 1 and 2: phi^2 += 2 sigma^2; the rating is unchanged
    rd_pre = math.sqrt(a0["sd"] ** 2 + 2 * (SCALE2 * sigma) ** 2)
    state = Glicko2().init_state(["A", "C"], initial={"A": (a0["mean"], rd_pre, sigma)})
    assert r.proba[1, 0] == pytest.approx(Glicko2().predict_proba(state, ["A"], ["C"])[0, 0], abs=1e-9)


def test_glicko2_non_convergence_is_an_error_not_nan():
    games, init = paper_games()
    init2 = {k: (r, rd, 0.06) for k, (r, rd) in init.items()}
    with pytest.raises(ArithmeticError, match="did not converge"):
        Glicko2(max_iter=1).run(games, initial=init2)


@pytest.mark.parametrize("make", [
    lambda: Glicko(c=-1), lambda: Glicko2(tau=0), lambda: Glicko2(tau=-0.5),
    lambda: Glicko(initial_rd=0), lambda: Glicko2(initial_volatility=0), lambda: Glicko2(initial_volatility=-1),
    lambda: Glicko(initial_rd=float("nan")), lambda: Glicko(form="both"),
])
def test_bad_parameters_raise(make):
    with pytest.raises(ValueError):
        make()


def test_bad_initial_values_raise():
    games, _ = paper_games()
    with pytest.raises(ValueError, match="RD must be > 0"):
        Glicko().run(games, initial={"P": (1500, 0)})
    with pytest.raises(ValueError, match="volatility must be > 0"):
        Glicko2().run(games, initial={"P": (1500, 200, 0)})


# ---------------------------------------------------------------- independent implementation
def reference_period(players, games, version, tau=0.5):
    """One rating period from the papers, plain NumPy; ``players`` maps name -> [r, rd, sigma]."""
    out = {}
    for p, (r, rd, sigma) in players.items():
        opp = [(b if a == p else a, s if a == p else 1 - s) for a, b, s in games if p in (a, b)]
        if not opp:
            continue
        rj = np.array([players[o][0] for o, _ in opp])
        rdj = np.array([players[o][1] for o, _ in opp])
        s = np.array([sc for _, sc in opp])
        if version == 1:
            gj = 1 / np.sqrt(1 + 3 * Q**2 * rdj**2 / np.pi**2)
            e = 1 / (1 + 10 ** (-gj * (r - rj) / 400))
            d2 = 1 / (Q**2 * np.sum(gj**2 * e * (1 - e)))
            r_new = r + Q / (1 / rd**2 + 1 / d2) * np.sum(gj * (s - e))
            rd_new = math.sqrt(1 / (1 / rd**2 + 1 / d2))
            out[p] = (r_new, rd_new, sigma)
        else:
            mu, phi = (r - 1500) / SCALE2, rd / SCALE2
            muj, phij = (rj - 1500) / SCALE2, rdj / SCALE2
            gj = 1 / np.sqrt(1 + 3 * phij**2 / np.pi**2)
            e = 1 / (1 + np.exp(-gj * (mu - muj)))
            v = 1 / np.sum(gj**2 * e * (1 - e))
            delta = v * np.sum(gj * (s - e))
            a = math.log(sigma**2)

            def f(x):
                return (math.exp(x) * (delta**2 - phi**2 - v - math.exp(x))
                        / (2 * (phi**2 + v + math.exp(x)) ** 2) - (x - a) / tau**2)

            lo, hi = a - 1.0, a + 1.0
            while f(lo) < 0:
                lo -= 1.0
            while f(hi) > 0:
                hi += 1.0
            sigma_new = math.exp(brentq(f, lo, hi, xtol=1e-14) / 2)
            phi_star = math.sqrt(phi**2 + sigma_new**2)
            phi_new = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
            mu_new = mu + phi_new**2 * np.sum(gj * (s - e))
            out[p] = (SCALE2 * mu_new + 1500, SCALE2 * phi_new, sigma_new)
    return out


@st.composite
def period_tables(draw):
    n_players = draw(st.integers(2, 6))
    n = draw(st.integers(1, 12))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_players - 1), st.integers(1, n_players - 1)),
                          min_size=n, max_size=n))
    scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    games = [(f"p{i}", f"p{(i + j) % n_players}", s) for (i, j), s in zip(pairs, scores)]
    start = {f"p{k}": [draw(st.floats(1000, 2000)), draw(st.floats(30, 350)), draw(st.floats(0.03, 0.1))]
             for k in range(n_players)}
    return games, start


@settings(max_examples=40, deadline=None)
@given(period_tables(), st.sampled_from([1, 2]), st.floats(0.2, 1.2))
def test_random_periods_match_independent_computation(table, version, tau):
    games_list, start = table
    a, b, s = zip(*games_list)
    games = ss.Games.from_arrays([0] * len(a), list(a), list(b), list(s), period=[0] * len(a))
    if version == 1:
        method = Glicko()
        init = {p: (r, rd) for p, (r, rd, _) in start.items()}
    else:
        method = Glicko2(tau=tau)
        init = {p: tuple(v) for p, v in start.items()}
    got = method.run(games, initial=init).state.frame().set_index("player")
    want = reference_period(start, games_list, version, tau)
    for p, (r, rd, sigma) in want.items():
        if version == 1:
            assert got.loc[p, "rating"] == pytest.approx(r, rel=1e-12, abs=1e-9)
            assert got.loc[p, "rd"] == pytest.approx(rd, rel=1e-12)
        else:
            # Illinois stops at |B - A| <= 1e-6 in ln(sigma^2): sigma to about 1e-6 relative,
            # which moves the rating by well under 1e-3 points
            assert got.loc[p, "rating"] == pytest.approx(r, abs=1e-3)
            assert got.loc[p, "volatility"] == pytest.approx(sigma, rel=1e-6)
            assert got.loc[p, "rd"] == pytest.approx(rd, rel=1e-6)


# ---------------------------------------------------------------- invariants
@settings(max_examples=30, deadline=None)
@given(period_tables(), st.randoms(use_true_random=False), st.sampled_from(["glicko", "glicko2"]))
def test_order_inside_a_period_and_relabelling_change_nothing(table, rnd, which):
    games_list, _ = table
    rnd.shuffle(games_list)
    a, b, s = zip(*games_list)
    periods = [k // 3 for k in range(len(a))]
    g1 = ss.Games.from_arrays(periods, list(a), list(b), list(s), period=periods)
    perm = list(range(len(a)))
    rnd.shuffle(perm)
    g2 = g1.take(perm)
    method = Glicko() if which == "glicko" else Glicko2()
    r1, r2 = method.run(g1), method.run(g2)
    np.testing.assert_allclose(r1.proba[perm], r2.proba, atol=1e-12)
    np.testing.assert_allclose(r1.state.values, r2.state.values, rtol=1e-12)
    assert np.all(r1.state.values[:, 1] > 0)  # RD stays positive
    assert np.all((r1.proba >= 0) & (r1.proba <= 1))
    np.testing.assert_allclose(r1.proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("method", [Glicko(home=50), Glicko2(home=50)], ids=["glicko", "glicko2"])
def test_scenario_runs_finite_and_forecasts_symmetric(method):
    sim = ss.scenarios.drifting(seed=4)
    r = method.run(sim.games)
    assert np.all(np.isfinite(r.state.values))
    assert np.all(r.state.values[:, 1] > 0)
    p_ab = method.predict_proba(r.state, sim.games.a_name[:50], sim.games.b_name[:50])
    p_ba = method.predict_proba(r.state, sim.games.b_name[:50], sim.games.a_name[:50])
    np.testing.assert_allclose(p_ab[:, 0] + p_ba[:, 0], 1.0)
    assert method.model.link == "logistic" and method.model.scale == pytest.approx(173.7178, abs=1e-4)


def test_ratings_and_trajectories_columns():
    games, init = paper_games()
    r1 = Glicko().fit(games, initial=init)
    r2 = Glicko2().fit(games, initial={k: v + (0.06,) for k, v in init.items()})
    assert list(r1.ratings().columns) == ["player", "mean", "sd", "games", "rd"]
    assert list(r2.ratings().columns) == ["player", "mean", "sd", "games", "rd", "volatility"]
    np.testing.assert_array_equal(r1.ratings()["sd"], r1.ratings()["rd"])
    traj = r2.trajectories()
    assert {"time", "player", "row", "mean", "sd", "rd", "volatility"} <= set(traj.columns)
    assert len(traj) == 2 * len(games)


def test_frozen_forecast_refuses_mixed_time_bases():
    games = ss.scenarios.balanced(seed=1).games
    train, test = games.with_periods(7).split(0.8)
    fitted = Glicko().fit(train)
    assert np.all(np.isfinite(fitted.predict_proba(test)))
    plain_test = games.split(0.8)[1]
    with pytest.raises(ValueError, match="rating periods"):
        fitted.predict_proba(plain_test)
    with pytest.raises(ValueError, match="rating periods"):
        fitted.continue_run(plain_test)
