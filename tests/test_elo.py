"""Elo: hand-checked numbers, the FIDE rules one by one, invariants, and the elote library.

Reference numbers:
- expected score 1600 vs 1400: 1 / (1 + 10^(-200/400)) = 0.7597469266 (the logistic Elo
  formula, FIDE Handbook B.02 8.1.2 table gives 0.76 for a 200-point difference);
- FIDE rules: FIDE Handbook B.02 "FIDE Rating Regulations" 8.3.3 (400-point cap) and 8.56
  (K = 40 / 20 / 10 and K * n <= 700);
- the elote package (test-only dependency) on random streams.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from conftest import compiled_and_python_runs
import statespace as ss
from filters import Elo

E_200 = 1.0 / (1.0 + 10.0 ** (-200.0 / 400.0))


def games(rows, **kw):
    time, a, b, score = zip(*rows)
    return ss.Games.from_arrays(list(time), list(a), list(b), list(score), **kw)


def test_expected_score_1600_vs_1400():
    assert E_200 == pytest.approx(0.7597469266, abs=1e-10)
    elo = Elo()
    state = elo.init_state(["A", "B"], initial={"A": 1600, "B": 1400})
    p = elo.predict_proba(state, ["A", "B"], ["B", "A"])
    assert p[0, 0] == pytest.approx(0.7597469266, abs=1e-10)
    assert p[1, 0] == pytest.approx(1 - 0.7597469266, abs=1e-10)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.all(p[:, 1] == 0)  # Elo forecasts no draws


def test_one_k32_update():
    r = Elo(k=32).fit(games([(0, "A", "B", 1)]), initial={"A": 1600, "B": 1400})
    rt = r.ratings().set_index("player")["mean"]
    assert rt["A"] == pytest.approx(1600 + 32 * (1 - 0.7597469266), abs=1e-8)
    assert rt["B"] == pytest.approx(1400 - 32 * (1 - 0.7597469266), abs=1e-8)
    assert r.proba[0, 0] == pytest.approx(0.7597469266, abs=1e-10)


def test_draw_counts_as_half_a_win():
    r = Elo(k=32).fit(games([(0, "A", "B", 0.5)]), initial={"A": 1600, "B": 1400})
    rt = r.ratings().set_index("player")["mean"]
    assert rt["A"] == pytest.approx(1600 + 32 * (0.5 - E_200), abs=1e-8)


def test_home_advantage_is_added_to_a_at_home():
    g = games([(0, "A", "B", 1), (1, "A", "B", 1)], neutral=[0, 1])
    r = Elo(k=20, home=100).run(g)
    e0 = 1 / (1 + 10 ** (-100 / 400))  # equal ratings, +100 at home
    assert r.proba[0, 0] == pytest.approx(e0)
    ra = 1500 + 20 * (1 - e0)
    rb = 1500 - 20 * (1 - e0)
    assert r.proba[1, 0] == pytest.approx(1 / (1 + 10 ** (-(ra - rb) / 400)))  # neutral: no home


def test_rating_period_uses_pre_period_ratings():
    g = games([(0, "A", "B", 1), (0, "A", "C", 1), (0, "C", "B", 0.5)], period=[0, 0, 0])
    init = {"A": 1500, "B": 1600, "C": 1400}
    r = Elo(k=32).run(g, initial=init)
    e = lambda x, y: 1 / (1 + 10 ** (-(x - y) / 400))  # noqa: E731
    expected_a = 1500 + 32 * ((1 - e(1500, 1600)) + (1 - e(1500, 1400)))
    expected_c = 1400 + 32 * ((0 - e(1400, 1500)) + (0.5 - e(1400, 1600)))
    rt = r.ratings().set_index("player")["mean"]
    assert rt["A"] == pytest.approx(expected_a)
    assert rt["C"] == pytest.approx(expected_c)
    # every game of the period is forecast from the pre-period ratings
    assert r.proba[2, 0] == pytest.approx(e(1400, 1600))


# ---------------------------------------------------------------- FIDE rules, one by one
def test_fide_k40_for_first_30_games_then_20():
    rows = [(t, "N", f"O{t}", 1 if t % 2 else 0) for t in range(31)]
    r = Elo.fide().run(games(rows))
    traj = r.trajectories()
    n = traj[traj.player == "N"]["mean"].to_numpy()
    before = np.r_[1500.0, n[:-1]]
    exp = 1 / (1 + 10 ** (-(before - 1500) / 400))  # every opponent is a newcomer at 1500
    score = np.array([1 if t % 2 else 0 for t in range(31)])
    steps = np.diff(np.r_[1500.0, n])
    np.testing.assert_allclose(steps[:30], 40 * (score[:30] - exp[:30]))
    assert steps[30] == pytest.approx(20 * (score[30] - exp[30]))


def test_fide_k10_once_2400_reached_and_stays():
    # an established player at 2390 beats an equal opponent: +10 with K 20 -> reaches 2400
    init = {"X": {"rating": 2390, "games": 100}, "Y": {"rating": 2390, "games": 100},
            "Z": {"rating": 2400, "games": 100}}
    g = games([(0, "X", "Y", 1), (1, "X", "Z", 0), (2, "X", "Y", 0)])
    r = Elo.fide().run(g, initial=init)
    x = r.trajectories().query("player == 'X'")["mean"].to_numpy()
    assert x[0] == pytest.approx(2400.0)  # 2390 + 20 * (1 - 0.5)
    # now K = 10 although the rating drops below 2400 again
    e1 = 1 / (1 + 10 ** (-(2400 - 2400) / 400))
    assert x[1] == pytest.approx(2400 + 10 * (0 - e1))
    assert x[1] < 2400
    y_now = 2390 - 20 * 0.5
    e2 = 1 / (1 + 10 ** (-(x[1] - y_now) / 400))
    assert x[2] == pytest.approx(x[1] + 10 * (0 - e2))
    assert r.ratings().set_index("player").loc["X", "reached_2400"] == 1.0


def test_fide_400_point_cap():
    init = {"A": {"rating": 2000, "games": 100}, "B": {"rating": 1400, "games": 100}}
    r = Elo.fide().run(games([(0, "A", "B", 1)]), initial=init)
    capped = 1 / (1 + 10 ** (-400 / 400))  # a 600-point difference counts as 400
    rt = r.ratings().set_index("player")["mean"]
    assert rt["A"] == pytest.approx(2000 + 20 * (1 - capped))
    assert rt["B"] == pytest.approx(1400 - 20 * (1 - capped))
    # plain Elo has no cap
    r2 = Elo(k=20).run(games([(0, "A", "B", 1)]), initial={"A": 2000, "B": 1400})
    assert r2.ratings().set_index("player")["mean"]["A"] == pytest.approx(2000 + 20 * (1 - 1 / (1 + 10 ** -1.5)))


def test_fide_k_times_n_at_most_700():
    # a newcomer (K 40) with 20 games in one period: 40 * 20 = 800 > 700, so K = floor(700/20) = 35
    rows = [(0, "N", f"O{i:02d}", 1) for i in range(20)]
    r = Elo.fide().run(games(rows, period=[0] * 20))
    rt = r.ratings().set_index("player")
    assert rt.loc["N", "mean"] == pytest.approx(1500 + 35 * 20 * 0.5)
    assert rt.loc["O00", "mean"] == pytest.approx(1500 - 40 * 0.5)  # one game: K stays 40
    assert rt.loc["N", "games"] == 20
    # 17 games: 40 * 17 = 680 <= 700, K stays 40
    r = Elo.fide().run(games(rows[:17], period=[0] * 17))
    assert r.ratings().set_index("player").loc["N", "mean"] == pytest.approx(1500 + 40 * 17 * 0.5)
    # an established K-20 player needs 36 games to be capped: floor(700 / 36) = 19
    rows = [(0, "E", f"O{i:02d}", 1) for i in range(36)]
    r = Elo.fide().run(games(rows, period=[0] * 36), initial={"E": {"rating": 1500, "games": 50}})
    assert r.ratings().set_index("player").loc["E", "mean"] == pytest.approx(1500 + 19 * 36 * 0.5)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("kw", [dict(k=-1), dict(scale=0), dict(base=1), dict(k=float("nan")),
                                dict(home=float("inf"))])
def test_bad_parameters_raise(kw):
    with pytest.raises(ValueError):
        Elo(**kw)


def test_bad_initial_values_raise():
    g = games([(0, "A", "B", 1)])
    with pytest.raises(ValueError, match="initial"):
        Elo().fit(g, initial={"A": "strong"})
    with pytest.raises(ValueError, match="unknown keys"):
        Elo().fit(g, initial={"A": {"elo": 1600}})
    with pytest.raises(ValueError, match="initial"):
        Elo().fit(g, initial={"A": float("nan")})


# ---------------------------------------------------------------- invariants
@st.composite
def game_tables(draw, max_players=8, max_games=40, periods=False):
    n_players = draw(st.integers(2, max_players))
    n = draw(st.integers(1, max_games))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_players - 1), st.integers(1, n_players - 1)),
                          min_size=n, max_size=n))
    scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    times = draw(st.lists(st.integers(0, 5 if periods else 50), min_size=n, max_size=n))
    neutral = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    a = [f"p{i}" for i, _ in pairs]
    b = [f"p{(i + j) % n_players}" for i, j in pairs]
    kw = {"period": times} if periods else {}
    return ss.Games.from_arrays(times, a, b, scores, neutral=neutral, **kw)


elo_settings = st.builds(Elo, k=st.floats(0, 80), home=st.floats(-200, 200))


@settings(max_examples=40, deadline=None)
@given(game_tables(), elo_settings)
def test_probabilities_valid_and_complementary(g, elo):
    r = elo.run(g)
    assert np.all((r.proba >= 0) & (r.proba <= 1))
    np.testing.assert_allclose(r.proba.sum(axis=1), 1.0)
    st_ = r.state
    p_ab = elo.predict_proba(st_, g.a_name, g.b_name)
    p_ba = elo.predict_proba(st_, g.b_name, g.a_name)
    np.testing.assert_allclose(p_ab[:, 0] + p_ba[:, 0], 1.0, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(game_tables(periods=True), elo_settings)
def test_total_rating_is_conserved(g, elo):
    r = elo.run(g)
    st_ = r.state
    assert st_.values[:, 0].sum() == pytest.approx(1500.0 * g.n_players, abs=1e-7)


@settings(max_examples=30, deadline=None)
@given(game_tables(periods=True), st.randoms(use_true_random=False))
def test_relabelling_competitors_changes_nothing(g, rnd):
    names = list(g.players)
    new = [f"z{k}" for k in range(len(names))]
    rnd.shuffle(new)
    rename = dict(zip(names, new))
    df = g.to_frame()
    df["a"] = df["a"].map(rename)
    df["b"] = df["b"].map(rename)
    g2 = ss.Games.from_frame(df)
    r1, r2 = Elo(k=24, home=50).run(g), Elo(k=24, home=50).run(g2)
    np.testing.assert_allclose(r1.proba, r2.proba, atol=1e-12)
    m1 = r1.ratings().set_index("player")["mean"].rename(index=rename).sort_index()
    m2 = r2.ratings().set_index("player")["mean"].sort_index()
    np.testing.assert_allclose(m1.to_numpy(), m2.to_numpy(), atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(game_tables(periods=True), st.randoms(use_true_random=False), st.booleans())
def test_order_inside_a_rating_period_changes_nothing(g, rnd, fide):
    perm = list(range(len(g)))
    rnd.shuffle(perm)
    g2 = g.take(perm)
    method = Elo.fide() if fide else Elo(k=32, home=30)
    r1, r2 = method.run(g), method.run(g2)
    np.testing.assert_allclose(r1.proba[perm], r2.proba, atol=1e-10)
    m1 = r1.ratings().set_index("player")["mean"].sort_index()
    m2 = r2.ratings().set_index("player")["mean"].sort_index()
    np.testing.assert_allclose(m1.to_numpy(), m2.to_numpy(), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(game_tables(periods=True))
def test_textbook_verbs_agree_with_run(g):
    """init_state / predict / update period by period equals the compiled run."""
    elo = Elo(k=20, home=40)
    state = elo.init_state(g.players)
    for p in np.unique(g.period):
        batch = g.take(np.flatnonzero(g.period == p))
        state = elo.predict(state, 1.0)
        state = elo.update(state, batch)
    r = elo.run(g)
    np.testing.assert_allclose(state.values, r.state.values, atol=1e-9)
    np.testing.assert_array_equal(state.count, r.state.count)


def test_frozen_forecast_of_newcomers_uses_the_prior():
    train = games([(0, "A", "B", 1)])
    r = Elo().fit(train)
    p = r.predict_proba(games([(5, "A", "NEW", 1), (6, "NEW", "OTHER", 0)]))
    ra = 1516.0
    assert p[0, 0] == pytest.approx(1 / (1 + 10 ** (-(ra - 1500) / 400)))
    assert p[1, 0] == pytest.approx(0.5)


def test_continue_run_equals_one_run():
    sim = ss.scenarios.balanced(seed=3)
    first, second = sim.games.split(0.5)
    r_all = Elo().run(sim.games)
    r_cont = Elo().run(first).continue_run(second)
    a = r_all.ratings().set_index("player")["mean"].sort_index()
    b = r_cont.ratings().set_index("player")["mean"].sort_index()
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy())


@pytest.mark.parametrize("method", [Elo(k=32, home=60), Elo.fide()], ids=["elo", "fide"])
def test_one_game_fast_path_equals_period_path(method):
    """Without periods the fused one-game kernel runs; with one period per game the batch
    kernels do. They must agree to the last bit."""
    g = ss.scenarios.drifting(seed=2).games
    g = ss.Games.from_frame(g.to_frame().assign(neutral=np.arange(len(g)) % 3 == 0))
    fast, batch = method.run(g), method.run(g.with_periods("game"))
    np.testing.assert_array_equal(fast.proba, batch.proba)
    np.testing.assert_array_equal(fast.state.values, batch.state.values)
    np.testing.assert_array_equal(fast.state.count, batch.state.count)
    pd_fast, pd_batch = fast.trajectories(), batch.trajectories()
    np.testing.assert_array_equal(pd_fast["mean"].to_numpy(), pd_batch["mean"].to_numpy())


# ---------------------------------------------------------------- compiled vs plain Python
SCRIPT = textwrap.dedent("""
    import json, numpy as np, statespace as ss
    from filters import Elo
    games = ss.scenarios.drifting(seed=1).games
    out = {}
    for name, m in [("elo", Elo(k=24, home=35)), ("fide", Elo.fide())]:
        for periods in (True, False):
            r = m.run(games.with_periods(7) if periods else games)
            out[f"{name}{periods}"] = [r.proba.tolist(), r.state.values.tolist()]
    print(json.dumps(out))
""")


def test_compiled_and_uncompiled_runs_agree():
    compiled, python = compiled_and_python_runs(SCRIPT)
    runs = {"0": compiled, "1": python}
    for name in ("eloTrue", "eloFalse", "fideTrue", "fideFalse"):
        for part in range(2):
            np.testing.assert_allclose(np.array(runs["0"][name][part]), np.array(runs["1"][name][part]),
                                       rtol=1e-12, atol=1e-9)


# ---------------------------------------------------------------- an independent library
def test_matches_elote_on_random_stream():
    elote = pytest.importorskip("elote")
    rng = np.random.default_rng(7)
    n_players, n = 25, 600
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    score = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.45, 0.1, 0.45])
    names = np.array([f"q{i}" for i in range(n_players)], dtype=object)
    g = ss.Games.from_arrays(np.arange(n), names[a], names[b], score)
    ours = Elo(k=32).run(g)

    comp = {i: elote.EloCompetitor(initial_rating=1500, k_factor=32) for i in range(n_players)}
    expected = np.empty(n)
    for t in range(n):
        ca, cb = comp[a[t]], comp[b[t]]
        expected[t] = ca.expected_score(cb)
        if score[t] == 1:
            ca.beat(cb)
        elif score[t] == 0:
            cb.beat(ca)
        else:
            ca.tied(cb)
    np.testing.assert_allclose(ours.proba[:, 0], expected, rtol=1e-10)
    final = ours.ratings().set_index("player")["mean"]
    for i in range(n_players):
        if f"q{i}" in final.index:
            assert final[f"q{i}"] == pytest.approx(comp[i].rating, rel=1e-10)
    assert math.isfinite(final.sum())


def test_game_weights_scale_the_update():
    g = games([(0, "A", "B", 1)]).with_weights([2.5])
    r = Elo(k=32).fit(g, initial={"A": 1600, "B": 1400})
    assert r.ratings().set_index("player")["mean"]["A"] == pytest.approx(1600 + 2.5 * 32 * (1 - E_200))


def test_methods_that_ignore_weights_refuse_weighted_games():
    from filters import TrueSkill

    g = games([(0, "A", "B", 1)]).with_weights([2.0])
    with pytest.raises(ValueError, match="does not use game weights"):
        TrueSkill().fit(g)


def test_weight_refusal_names_every_method_that_honours_weights():
    """The message's list comes from the classes' ``honours_weights`` flags, and every method
    it names really rates weighted games (a weight-2 game moves ratings more than weight 1)."""
    import re

    import filters
    import smoothers
    from filters import TrueSkill, WengLin
    from filters.base import Filter, weighted_filters

    g = games([(0, "A", "B", 1), (1, "A", "B", 1)])
    with pytest.raises(ValueError) as err:
        WengLin().fit(g.with_weights([1.0, 2.0]))
    message = str(err.value)
    named = weighted_filters()
    assert set(named) == {"Elo", "Glicko", "Glicko2", "EKF", "Stephenson"}
    honouring = {n for n in filters.__all__ if isinstance(getattr(filters, n), type)
                 and issubclass(getattr(filters, n), Filter) and getattr(filters, n).honours_weights}
    assert honouring == set(named)
    for name in named + ["LaplaceSmoother", "BradleyTerry", "PyMCSmoother"]:
        assert re.search(rf"\b{name}\b", message), name
    assert "TrueSkill" not in message and "WengLin" not in message
    for name in named:
        method = getattr(filters, name)()
        one = method.fit(g).ratings().set_index("player")["mean"]
        two = method.fit(g.with_weights([1.0, 2.0])).ratings().set_index("player")["mean"]
        assert two["A"] > one["A"], name
    for name in ("LaplaceSmoother", "BradleyTerry"):
        method = getattr(smoothers, name)()
        one = method.fit(g).ratings().set_index("player")["mean"]
        two = method.fit(g.with_weights([1.0, 2.0])).ratings().set_index("player")["mean"]
        assert two["A"] - two["B"] > one["A"] - one["B"], name
    assert not TrueSkill.honours_weights
