"""TrueSkill against published numbers and the `trueskill` package.

Reference numbers:
- the one-vs-one, team and free-for-all figures of the issue, which are those printed by the
  `trueskill` package (Heungsub Lee, trueskill.org, "Rating, the model for skill") and by
  Moser's "Computing your skill" worked examples, to 3 decimals;
- full precision: `trueskill.TrueSkill(backend="scipy")` (exact normal cdf/pdf). The package's
  default backend uses an erfc approximation good to ~1e-7, which is why its default-backend
  figures (e.g. 29.39583201999916) differ from exact ones in the 7th digit;
- draw margins: eps = sqrt(2) beta Phi^-1((p + 1) / 2) evaluated with scipy;
- expected scores: Phi((d - eps) / c) + (draw mass) / 2 evaluated with scipy in the test.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm

from conftest import compiled_and_python_runs
import statespace as ss
from filters import TrueSkill
from statespace.model import gaussian as G
from filters.trueskill import draw_margin

trueskill = pytest.importorskip("trueskill")
ENV = trueskill.TrueSkill(backend="scipy")
D = (25.0, 25.0 / 3.0)


def close(pair, mu, sigma, tol=5e-4):
    return abs(pair[0] - mu) < tol and abs(pair[1] - sigma) < tol


def test_one_vs_one_published_numbers():
    ts = TrueSkill()
    (a, b) = ts.rate_1vs1(D, D)
    assert close(a, 29.396, 7.171) and close(b, 20.604, 7.171)
    assert a[0] == pytest.approx(29.39583169299151, abs=1e-9)
    assert a[1] == pytest.approx(7.17147580700922, abs=1e-9)
    assert abs(a[0] - 29.39583201999916) < 1e-6  # the default-backend figure, to its own precision
    (a, b) = ts.rate_1vs1(D, D, drawn=True)
    assert close(a, 25.000, 6.458) and close(b, 25.000, 6.458)
    assert a[1] == pytest.approx(6.457515683245051, abs=1e-9)
    (a, b) = TrueSkill(draw_probability=0.5).rate_1vs1(D, D)
    assert close(a, 30.267, 7.077) and close(b, 19.733, 7.077)
    (a, b) = ts.rate_1vs1(D, (50.0, 12.5), drawn=True)
    assert close(a, 31.662, 7.137) and close(b, 35.011, 7.910)
    assert ts.quality_1vs1(D, (50.0, 12.5)) == pytest.approx(0.110, abs=5e-4)
    assert ts.quality_1vs1(D, D) == pytest.approx(1 / math.sqrt(5), abs=1e-12)


def test_teams_and_free_for_all_published_numbers():
    ts = TrueSkill()
    (t1, t2) = ts.rate([[D, D], [D, D]])
    assert all(close(r, 28.108, 7.774) for r in t1) and all(close(r, 21.892, 7.774) for r in t2)
    (t1, t2) = ts.rate([[D], [D, D]])
    # the issue prints 33.730 / 16.270 (truncated); the trueskill package prints 33.731 / 16.269
    assert close(t1[0], 33.730, 7.317, tol=1e-3) and all(close(r, 16.270, 7.317, tol=1e-3) for r in t2)
    assert t1[0][0] == pytest.approx(33.73067114899642, abs=1e-6)
    assert ts.quality([[D], [D, D]]) == pytest.approx(0.135, abs=5e-4)
    out = ts.rate([[D], [D], [D]])
    assert close(out[0][0], 31.675, 6.656) and close(out[1][0], 25.000, 6.208) and close(out[2][0], 18.325, 6.656)


def test_degenerate_inputs_are_errors():
    ts = TrueSkill()
    with pytest.raises(ValueError, match="weight > 0"):
        ts.rate([[D], [D]], weights=[[0.0], [1.0]])
    with pytest.raises(ValueError, match="sigma"):
        ts.rate_1vs1((25, -1), D)
    with pytest.raises(ValueError, match="sigma"):
        ts.quality_1vs1(D, (25, -1))
    assert sum(ts.proba_1vs1((25, 0), (25, 0))) == pytest.approx(1.0)  # a skill known exactly
    with pytest.raises(ValueError):
        ts.proba_1vs1((float("nan"), 1), D)


def test_rate_keeps_the_shape_and_keys():
    ts = TrueSkill()
    out = ts.rate([{"alice": D}, {"bob": D, "carol": D}], ranks=[1, 0])
    assert set(out[0]) == {"alice"} and set(out[1]) == {"bob", "carol"}
    assert out[1]["bob"][0] > 25 > out[0]["alice"][0]


@pytest.mark.parametrize("p, eps", [(0.10, 0.74046637542690541), (0.25, 1.87760059883033),
                                    (0.33, 2.5111010132487492)])
def test_draw_margins(p, eps):
    # the published figures come from an approximate inverse erfc (good to ~1e-7); exactly,
    # sqrt(2) beta Phi^-1((p + 1) / 2) with scipy's ppf
    exact = math.sqrt(2) * 25 / 6 * norm.ppf((p + 1) / 2)
    assert draw_margin(p, 25 / 6) == pytest.approx(exact, abs=1e-12)
    assert draw_margin(p, 25 / 6) == pytest.approx(eps, abs=1e-6)
    assert TrueSkill(draw_probability=p).draw_margin == pytest.approx(exact, abs=1e-12)


def expected_by_hand(mu_a, s_a, mu_b, s_b, beta, p_draw):
    eps = math.sqrt(2) * beta * norm.ppf((p_draw + 1) / 2)
    c = math.sqrt(2 * beta**2 + s_a**2 + s_b**2)
    win = norm.cdf((mu_a - mu_b - eps) / c)
    draw = norm.cdf((mu_a - mu_b + eps) / c) - win
    return win + draw / 2


def test_expected_scores():
    ts = TrueSkill(sigma=8.333, beta=4.166)
    assert ts.expected_score((30, 8.333), (25, 8.333)) == pytest.approx(0.6476185605, abs=1e-10)
    ts = TrueSkill()
    both = [ts.expected_score((30, s), (25, s)) for s in (25 / 3, 5, 2.5, 1)]
    np.testing.assert_allclose(both, [0.6476, 0.7059, 0.7653, 0.7936], atol=5e-5)
    opp = [ts.expected_score((30, 1.0), (25, s)) for s in (25 / 3, 5, 2.5, 1)]
    np.testing.assert_allclose(opp, [0.6866, 0.7385, 0.7784, 0.7936], atol=5e-5)
    for s in (25 / 3, 5, 2.5, 1):
        assert ts.expected_score((30, 1.0), (25, s)) + ts.expected_score((25, s), (30, 1.0)) == pytest.approx(1.0)
        assert ts.expected_score((30, s), (25, s)) == pytest.approx(
            expected_by_hand(30, s, 25, s, 25 / 6, 0.10), abs=1e-12)


def test_conservative_rating_is_a_separate_column():
    games = ss.Games.from_arrays([0], ["A"], ["B"], [1])
    ts = TrueSkill()
    r = ts.fit(games, initial={"A": (25, 25 / 3), "B": (25, 5)})
    table = r.ratings().set_index("player")
    assert {"mean", "sd", "mu", "sigma", "rating"} <= set(table.columns)
    np.testing.assert_allclose(table["rating"], table["mu"] - 3 * table["sigma"])
    np.testing.assert_array_equal(table["mean"], table["mu"])
    for sigma, shown in ((25 / 3, 0.001), (5, 10), (2.5, 17.5), (1, 22)):
        assert 25 - 3 * sigma == pytest.approx(shown, abs=1e-3)


def test_quality_and_expected_score_share_c():
    ts = TrueSkill()
    for a, b in [((25, 25 / 3), (30, 4)), ((10, 2), (12, 8)), ((40, 1), (20, 1))]:
        c2 = 2 * ts.beta**2 + a[1] ** 2 + b[1] ** 2
        q = ts.quality_1vs1(a, b)
        assert q == pytest.approx(math.sqrt(2 * ts.beta**2 / c2) * math.exp(-((a[0] - b[0]) ** 2) / (2 * c2)))
        assert q == pytest.approx(ts.quality([[a], [b]]))
        # the same c in the forecast: win = Phi((d - eps) / c)
        pw, pd, pl = ts.proba_1vs1(a, b)
        assert pw == pytest.approx(norm.cdf((a[0] - b[0] - ts.draw_margin) / math.sqrt(c2)))
        assert pw + pd + pl == pytest.approx(1.0)


def test_model_is_the_probit_threshold_model():
    ts = TrueSkill(home=1.5)
    m = ts.model
    assert m.link == "probit" and m.scale == pytest.approx(math.sqrt(2) * ts.beta)
    assert m.draw.margin == pytest.approx(ts.draw_margin)
    a, b = (30.0, 4.0), (26.0, 6.0)
    np.testing.assert_allclose(m.proba(a[0] - b[0], a[1] ** 2 + b[1] ** 2), ts.proba_1vs1(a, b), atol=1e-12)


# ---------------------------------------------------------------- tails
@pytest.mark.parametrize("t", [-1000.0, -40.0, -10.0, 0.0, 10.0, 40.0, 1000.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 5.0, 30.0])
def test_v_and_w_stay_finite_far_into_the_tails(t, eps):
    for v, w in ((G.v_win(t, eps), G.w_win(t, eps)), (G.v_draw(t, eps), G.w_draw(t, eps))):
        assert math.isfinite(v)
        assert 0.0 < w < 1.0


def test_v_and_w_match_trueskill_package():
    for t in np.linspace(-6, 6, 37):
        for eps in (0.0, 0.3, 0.74, 2.0):
            assert G.v_win(t, eps) == pytest.approx(ENV.v_win(t, eps), rel=1e-9, abs=1e-12)
            assert G.w_win(t, eps) == pytest.approx(ENV.w_win(t, eps), rel=1e-9, abs=1e-12)
            if eps > 0:
                assert G.v_draw(t, eps) == pytest.approx(ENV.v_draw(t, eps), rel=1e-9, abs=1e-12)
                assert G.w_draw(t, eps) == pytest.approx(ENV.w_draw(t, eps), rel=1e-9, abs=1e-12)


def test_extreme_upset_keeps_variance_positive():
    games = ss.Games.from_arrays([0, 1], ["weak", "weak"], ["strong", "strong"], [1, 0.5])
    r = TrueSkill().run(games, initial={"weak": (0, 0.5), "strong": (300, 0.5)})
    assert np.all(np.isfinite(r.state.values)) and np.all(r.state.values[:, 1] > 0)


# ---------------------------------------------------------------- differential tests
@st.composite
def ratings(draw):
    return (draw(st.floats(0, 50)), draw(st.floats(0.5, 12)))


@settings(max_examples=60, deadline=None)
@given(ratings(), ratings(), st.sampled_from([1.0, 0.5]), st.sampled_from([0.0, 0.1, 0.3]))
def test_one_vs_one_matches_trueskill_package(a, b, score, p_draw):
    env = trueskill.TrueSkill(backend="scipy", draw_probability=p_draw)
    ours = TrueSkill(draw_probability=p_draw)
    if score == 0.5 and p_draw == 0.0:
        return
    ra, rb = trueskill.rate_1vs1(env.create_rating(*a), env.create_rating(*b), drawn=score == 0.5, env=env)
    (ma, sa), (mb, sb) = ours.rate_1vs1(a, b, drawn=score == 0.5)
    np.testing.assert_allclose([ma, sa, mb, sb], [ra.mu, ra.sigma, rb.mu, rb.sigma], atol=1e-6)
    # and the compiled run gives the same
    games = ss.Games.from_arrays([0], ["A"], ["B"], [score])
    st_ = ours.run(games, initial={"A": a, "B": b}).state.frame().set_index("player")
    np.testing.assert_allclose([st_.loc["A", "mu"], st_.loc["A", "sigma"]], [ra.mu, ra.sigma], atol=1e-6)
    q = trueskill.quality_1vs1(env.create_rating(*a), env.create_rating(*b), env=env)
    assert ours.quality_1vs1(a, b) == pytest.approx(q, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(ratings(), min_size=1, max_size=3), min_size=2, max_size=4),
       st.data())
def test_team_games_match_trueskill_package(groups, data):
    ranks = data.draw(st.lists(st.integers(0, 3), min_size=len(groups), max_size=len(groups)))
    weights = data.draw(st.lists(st.floats(0.2, 1.0), min_size=sum(map(len, groups)),
                                 max_size=sum(map(len, groups))))
    wl, k = [], 0
    for g in groups:
        wl.append(tuple(weights[k:k + len(g)]))
        k += len(g)
    env = trueskill.TrueSkill(backend="scipy")
    theirs = env.rate([tuple(env.create_rating(*r) for r in g) for g in groups], ranks=ranks, weights=wl)
    ours = TrueSkill().rate(groups, ranks=ranks, weights=wl)
    for tg, og in zip(theirs, ours):
        for tr, orr in zip(tg, og):
            assert orr[0] == pytest.approx(tr.mu, abs=1e-6)
            assert orr[1] == pytest.approx(tr.sigma, abs=1e-6)
    q = env.quality([tuple(env.create_rating(*r) for r in g) for g in groups], weights=wl)
    assert TrueSkill().quality(groups, weights=wl) == pytest.approx(q, abs=1e-9)


def test_run_matches_trueskill_package_on_a_stream():
    rng = np.random.default_rng(3)
    n_players, n = 12, 300
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    score = rng.choice([1.0, 0.5, 0.0], n, p=[0.45, 0.1, 0.45])
    names = np.array([f"p{i:02d}" for i in range(n_players)], dtype=object)
    games = ss.Games.from_arrays(np.arange(n), names[a], names[b], score)
    run = TrueSkill().run(games)
    env = trueskill.TrueSkill(backend="scipy")
    r = {i: env.create_rating() for i in range(n_players)}
    for g in range(n):
        if score[g] == 0.0:
            r[b[g]], r[a[g]] = trueskill.rate_1vs1(r[b[g]], r[a[g]], env=env)
        else:
            r[a[g]], r[b[g]] = trueskill.rate_1vs1(r[a[g]], r[b[g]], drawn=score[g] == 0.5, env=env)
    final = run.state.frame().set_index("player")
    for i in range(n_players):
        assert final.loc[names[i], "mu"] == pytest.approx(r[i].mu, abs=1e-6)
        assert final.loc[names[i], "sigma"] == pytest.approx(r[i].sigma, abs=1e-6)


# ---------------------------------------------------------------- filter invariants
@st.composite
def period_tables(draw):
    n_players = draw(st.integers(2, 7))
    n = draw(st.integers(1, 25))
    pairs = draw(st.lists(st.tuples(st.integers(0, n_players - 1), st.integers(1, n_players - 1)),
                          min_size=n, max_size=n))
    scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=n, max_size=n))
    periods = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    a = [f"p{i}" for i, _ in pairs]
    b = [f"p{(i + j) % n_players}" for i, j in pairs]
    return ss.Games.from_arrays(periods, a, b, scores, period=periods)


@settings(max_examples=30, deadline=None)
@given(period_tables(), st.randoms(use_true_random=False), st.sampled_from(["game", "time"]))
def test_period_order_and_relabelling_change_nothing(g, rnd, dynamics):
    perm = list(range(len(g)))
    rnd.shuffle(perm)
    ts = TrueSkill(dynamics=dynamics, home=1.0)
    r1, r2 = ts.run(g), ts.run(g.take(perm))
    np.testing.assert_allclose(r1.proba[perm], r2.proba, atol=1e-12)
    np.testing.assert_allclose(r1.state.values, r2.state.values, rtol=1e-10)
    assert np.all(r1.state.values[:, 1] > 0)
    assert np.all((r1.proba >= 0) & (r1.proba <= 1))
    np.testing.assert_allclose(r1.proba.sum(axis=1), 1.0)
    names = list(g.players)
    rename = {p: f"z{len(names) - k}" for k, p in enumerate(names)}
    df = g.to_frame()
    df["a"], df["b"] = df["a"].map(rename), df["b"].map(rename)
    r3 = ts.run(ss.Games.from_frame(df))
    np.testing.assert_allclose(r1.proba, r3.proba, atol=1e-12)


@pytest.mark.parametrize("ts", [TrueSkill(), TrueSkill(dynamics="time", home=2.0)], ids=["game", "time"])
def test_one_game_fast_path_equals_period_path(ts):
    """One game per period through the period kernel gives the fused kernel's bits; numeric
    times equal to the game index make the period codes the same times."""
    g = ss.scenarios.drifting(seed=5).games
    df = g.to_frame()
    df["time"] = np.arange(len(g), dtype=float)
    g = ss.Games.from_frame(df)
    fast, batch = ts.run(g), ts.run(g.with_periods("game"))
    np.testing.assert_array_equal(fast.proba, batch.proba)
    np.testing.assert_array_equal(fast.state.values, batch.state.values)


def test_time_dynamics_make_idle_time_matter():
    games = ss.Games.from_arrays([0, 0, 100], ["A", "B", "A"], ["C", "C", "B"], [1, 1, 1])
    classic = TrueSkill().run(games)
    walk = TrueSkill(dynamics="time").run(games)
    # 100 idle days add 100 tau^2 to A and B before their game
    sa = classic.state.frame().set_index("player")
    sw = walk.state.frame().set_index("player")
    assert sw.loc["A", "sigma"] > sa.loc["A", "sigma"]


@pytest.mark.parametrize("kw", [dict(sigma=0), dict(beta=-1), dict(tau=-0.1), dict(draw_probability=1.0),
                                dict(draw_probability=-0.1), dict(dynamics="weekly"), dict(mu=float("nan"))])
def test_bad_parameters_raise(kw):
    with pytest.raises(ValueError):
        TrueSkill(**kw)


SCRIPT = textwrap.dedent("""
    import json, statespace as ss
    from filters import TrueSkill
    g = ss.scenarios.draw_heavy(seed=1).games
    out = {}
    for periods in (False, True):
        r = TrueSkill(home=1.0).run(g.with_periods(3) if periods else g)
        out[str(periods)] = [r.proba.tolist(), r.state.values.tolist()]
    print(json.dumps(out))
""")


def test_compiled_and_uncompiled_runs_agree():
    compiled, python = compiled_and_python_runs(SCRIPT)
    runs = {"0": compiled, "1": python}
    for key in ("False", "True"):
        for part in range(2):
            np.testing.assert_allclose(np.array(runs["0"][key][part]), np.array(runs["1"][key][part]),
                                       rtol=1e-12, atol=1e-12)
