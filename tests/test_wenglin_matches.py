"""Weng-Lin over matches of many sides (teams, free-for-all) through the compiled match loop.

Reference numbers: openskill 6.2 (test-only dependency), ``BradleyTerryFull``,
``ThurstoneMostellerFull`` and ``PlackettLuce`` (Weng and Lin 2011, Algorithms 1, 3, 4), built with
the same mu, sigma, beta, kappa, tau (and epsilon); its other options at their defaults, which are
the paper's (gamma ``sigma_i / c``, margin 0, ``limit_sigma`` False, ``balance`` False). Its
``rate(..., tau=0)`` falls back to the model's tau, so tau is given to the constructor only.

Partial play: our side's strength is the weighted sum of its members (the moments the loop
forecasts), and a member of weight ``w`` and belief ``N(mu, sigma^2)`` is updated exactly as the
full member ``N(w mu, w^2 sigma^2)`` of the same team would be (the scaled skill ``w s``). So the
reference for random weights is openskill with every weight 1 on the scaled ratings (and tau^2
added to sigma^2 before the scaling, openskill's tau set to 0), mapped back. openskill's own
``weights`` argument is another rule (it leaves the team's strength unweighted, rescales the
weights to [1, 2] within a team, and divides a losing team's share by them) and is not compared.

openskill's Thurstone-Mosteller terms leave their exact branches far in the tails (see
tests/test_wenglin.py): the random matches for that model are drawn with teams of even strength
(each player's mean about 25 over the team's size) and checked to stay where openskill is exact.

The 3,000-entrant free-for-all is checked against Plackett-Luce in closed form: from equal
beliefs every ``p_iq`` of a stage is one over the number still in it, so ``Omega`` at place ``j``
is ``sigma^2 / c (1 / A - sum_{g <= j} 1 / |C_g|)``.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from scipy.stats import norm

from conftest import compiled_and_python_runs
import statespace as ss
from filters.wenglin import WengLin
from statespace.data.matches import Matches
from statespace.model.ranking_forecast import RankingForecast

MODELS = ["bradley_terry", "thurstone_mosteller", "plackett_luce"]
OPENSKILL = {"bradley_terry": "BradleyTerryFull", "thurstone_mosteller": "ThurstoneMostellerFull",
             "plackett_luce": "PlackettLuce"}
KW = dict(mu=25.0, sigma=25 / 3, beta=25 / 6, kappa=1e-4, tau=25 / 300)
EPSILON = 0.1


def reference(model, **kw):
    models = pytest.importorskip("openskill.models")
    kw = dict(KW, **kw)
    if model == "thurstone_mosteller":
        kw["epsilon"] = EPSILON
    return getattr(models, OPENSKILL[model])(**kw)


def ours(model, **kw):
    kw = dict(KW, **kw)
    if model == "thurstone_mosteller":
        kw["epsilon"] = EPSILON
    return WengLin(model, **kw)


def table(matches):
    """``Matches`` from ``[(time, [[(name, weight), ...] per side], ranks), ...]``."""
    rows = [dict(match=m, time=float(t), competitor=name, side=s, rank=r, weight=w)
            for m, (t, sides, ranks) in enumerate(matches)
            for s, (side, r) in enumerate(zip(sides, ranks)) for name, w in side]
    return Matches.from_long(pd.DataFrame(rows))


def state(run):
    return run.state.frame().set_index("player")


def team_sums(teams, weights, tau):
    mu = [sum(w * m for (m, _), w in zip(t, ws)) for t, ws in zip(teams, weights)]
    s2 = [sum(w * w * (s * s + tau * tau) for (_, s), w in zip(t, ws)) for t, ws in zip(teams, weights)]
    return mu, s2


def openskill_exact(teams, weights, ranks):
    """Every pair stays where openskill's Thurstone-Mosteller terms are exact (tests/test_wenglin.py)."""
    mu, s2 = team_sums(teams, weights, KW["tau"])
    for i in range(len(teams)):
        for q in range(len(teams)):
            c = math.sqrt(s2[i] + s2[q] + 2 * KW["beta"] ** 2)
            t, e = (mu[i] - mu[q]) / c, EPSILON / c
            if i != q and ranks[i] == ranks[q] and norm.cdf(e - abs(t)) - norm.cdf(-e - abs(t)) < 1e-5:
                return False
            if ranks[i] < ranks[q] and t - e <= -4.5:
                return False
    return True


@st.composite
def random_match(draw, weighted):
    k = draw(st.integers(2, 8))
    sizes = [draw(st.integers(1, 5)) for _ in range(k)]
    unit = st.floats(0.0, 1.0)
    teams = [[(draw(st.floats(20, 30)) / n, 1.0 + 7.0 * draw(unit)) for _ in range(n)] for n in sizes]
    ranks = [draw(st.integers(0, k - 1)) for _ in range(k)]  # ties share a number
    weight = st.floats(0.01, 1.0) | st.just(1.0) if weighted else st.just(1.0)
    weights = [[draw(weight) for _ in range(n)] for n in sizes]
    return teams, ranks, weights


def run_one(model, teams, ranks, weights):
    names = [[f"p{s}_{j}" for j in range(len(t))] for s, t in enumerate(teams)]
    m = table([(0, [list(zip(n, w)) for n, w in zip(names, weights)], ranks)])
    r = ours(model).run(m, initial={n: v for ns, t in zip(names, teams) for n, v in zip(ns, t)})
    v = state(r)
    return [[tuple(v.loc[n, ["mu", "sigma"]]) for n in ns] for ns in names], r


def openskill_scaled(model, teams, ranks, weights):
    """openskill on the scaled ratings ``(w mu, w sqrt(sigma^2 + tau^2))``, mapped back."""
    ref = reference(model, tau=0.0)
    t2 = KW["tau"] ** 2
    scaled = [[ref.rating(mu=w * m, sigma=w * math.sqrt(s * s + t2)) for (m, s), w in zip(t, ws)]
              for t, ws in zip(teams, weights)]
    out = ref.rate(scaled, ranks=[float(r) for r in ranks])
    return [[(m + (p.mu - w * m) / w, p.sigma / w) for (m, _), w, p in zip(t, ws, po)]
            for t, ws, po in zip(teams, weights, out)]


def assert_close(mine, theirs, tol=1e-9):
    for tm, to in zip(mine, theirs):
        for (m, s), (pm, ps) in zip(tm, to):
            assert m == pytest.approx(pm, abs=tol) and s == pytest.approx(ps, abs=tol), (mine, theirs)


# ---------------------------------------------------------------- one match against openskill
@pytest.mark.parametrize("model", MODELS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(match=random_match(weighted=False))
def test_one_match_equals_openskill_and_rate(model, match):
    teams, ranks, weights = match
    if model == "thurstone_mosteller":
        assume(openskill_exact(teams, weights, ranks))
    mine, run = run_one(model, teams, ranks, weights)
    ref = reference(model)
    out = ref.rate([[ref.rating(mu=m, sigma=s) for m, s in t] for t in teams], ranks=[float(r) for r in ranks])
    assert_close(mine, [[(p.mu, p.sigma) for p in t] for t in out])
    assert_close(mine, ours(model).rate(teams, ranks=ranks), tol=1e-12)
    # the forecast moments are those of the pre-match beliefs (before tau)
    mu, s2 = team_sums(teams, weights, 0.0)
    np.testing.assert_allclose(np.sort(run.perf_mean), np.sort(mu), rtol=1e-12)
    np.testing.assert_allclose(np.sort(run.perf_var), np.sort(s2), rtol=1e-12)


@pytest.mark.parametrize("model", MODELS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(match=random_match(weighted=True))
def test_partial_play_is_the_scaled_members_update(model, match):
    teams, ranks, weights = match
    if model == "thurstone_mosteller":
        assume(openskill_exact(teams, weights, ranks))
    mine, _ = run_one(model, teams, ranks, weights)
    assert_close(mine, openskill_scaled(model, teams, ranks, weights))


@pytest.mark.parametrize("model", MODELS)
def test_a_member_of_weight_zero_is_not_in_the_match(model):
    """Weight 0: only tau reaches the member, and the others rate as if it were absent."""
    with_b = table([(0, [[("a", 1.0)], [("b", 0.0), ("c", 1.0)], [("d", 1.0)]], [0, 1, 1])])
    without = table([(0, [[("a", 1.0)], [("c", 1.0)], [("d", 1.0)]], [0, 1, 1])])
    init = {"a": (26.0, 3.0), "b": (20.0, 5.0), "c": (24.0, 7.0), "d": (25.0, 2.0)}
    v = state(ours(model).run(with_b, initial=init))
    w = state(ours(model).run(without, initial=init))
    assert v.loc["b", "mu"] == 20.0
    assert v.loc["b", "sigma"] == pytest.approx(math.hypot(5.0, KW["tau"]), rel=1e-15)
    np.testing.assert_allclose(v.loc[["a", "c", "d"]].to_numpy(float), w.loc[["a", "c", "d"]].to_numpy(float),
                               rtol=1e-14)
    assert v.loc["c", "mu"] != 24.0


# ---------------------------------------------------------------- sequences of matches
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("dynamics", ["game", "time"])
def test_a_sequence_of_matches_equals_openskill_match_by_match(model, dynamics):
    rng = np.random.default_rng(5)
    players = [f"q{i}" for i in range(12)]
    matches, t = [], 0.0
    for _ in range(40):
        t += float(rng.integers(0, 3))
        k = int(rng.integers(2, 5))
        size = int(rng.integers(1, 3))  # even teams: openskill's Thurstone-Mosteller stays exact
        who = rng.permutation(len(players))[:k * size].reshape(k, size)
        ranks = [int(x) for x in rng.integers(0, k, k)]
        matches.append((t, [[(players[i], 1.0) for i in side] for side in who], ranks))
    run = ours(model, dynamics=dynamics).run(table(matches))
    # openskill with tau 0; tau^2 added here: per match, or per unit of time since the last match
    ref = reference(model, tau=0.0)
    belief = {p: (KW["mu"], KW["sigma"]) for p in players}
    last = {}
    for t, sides, ranks in matches:
        teams = []
        for side in sides:
            team = []
            for p, _ in side:
                m, s = belief[p]
                dt = 1.0 if dynamics == "game" else t - last.get(p, t)
                team.append(ref.rating(mu=m, sigma=math.sqrt(s * s + KW["tau"] ** 2 * dt)))
                last[p] = t
            teams.append(team)
        for side, new in zip(sides, ref.rate(teams, ranks=[float(r) for r in ranks])):
            for (p, _), r in zip(side, new):
                belief[p] = (r.mu, r.sigma)
    v = state(run)
    for p, (m, s) in belief.items():
        assert v.loc[p, "mu"] == pytest.approx(m, abs=1e-9)
        assert v.loc[p, "sigma"] == pytest.approx(s, abs=1e-9)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("dynamics", ["game", "time"])
def test_one_against_one_matches_equal_the_games_run(model, dynamics):
    rng = np.random.default_rng(2)
    n = 60
    a = rng.integers(0, 8, n)
    b = (a + rng.integers(1, 8, n)) % 8
    names = np.array([f"r{i}" for i in range(8)], dtype=object)
    score = rng.choice([1.0, 0.5, 0.0], n)
    games = ss.Games.from_arrays(np.cumsum(rng.integers(1, 3, n)), names[a], names[b], score)
    method = ours(model, dynamics=dynamics)
    by_games = method.run(games)
    by_matches = method.run(Matches.from_games(games))
    np.testing.assert_allclose(state(by_matches).loc[list(names), ["mu", "sigma"]].to_numpy(),
                               state(by_games).loc[list(names), ["mu", "sigma"]].to_numpy(), rtol=1e-12, atol=1e-12)
    # the forecast of each game from the sides' moments, as the games run forecasts it
    pm, pv = by_matches.perf_mean.reshape(-1, 2), by_matches.perf_var.reshape(-1, 2)
    c = np.sqrt(2 * KW["beta"] ** 2 + pv.sum(axis=1))
    d = pm[:, 0] - pm[:, 1]
    win = norm.cdf((d - EPSILON) / c) if model == "thurstone_mosteller" else 1 / (1 + np.exp(-d / c))
    # Matches.from_games keeps a's side first, in the games' time order
    expect = np.asarray(by_games.proba)[games.order][:, 0]
    np.testing.assert_allclose(win, expect, rtol=1e-12)


def test_match_forecast_names_the_model():
    assert WengLin("bt", beta=3.0).match_forecast() == RankingForecast("bradley_terry", 3.0)
    assert WengLin("pl", beta=3.0).match_forecast() == RankingForecast("plackett_luce", 3.0)
    assert WengLin("tm", beta=3.0, epsilon=0.4).match_forecast() == RankingForecast("thurstone", 3.0, 0.4)


# ---------------------------------------------------------------- a large free-for-all
def test_a_free_for_all_of_3000_follows_plackett_luce_in_closed_form():
    n = 3000
    rng = np.random.default_rng(9)
    ranks = np.sort(rng.integers(0, n, n))
    ranks = np.searchsorted(ranks, ranks)  # competition ranks with ties
    names = [f"e{i:04d}" for i in rng.permutation(n)]
    m = table([(0, [[(p, 1.0)] for p in names], ranks.tolist())])
    v = state(ours("plackett_luce").run(m)).loc[names]
    assert np.all(np.isfinite(v.to_numpy(float)))
    s2 = KW["sigma"] ** 2 + KW["tau"] ** 2
    c = math.sqrt(n * (s2 + KW["beta"] ** 2))
    places, start, size = np.unique(ranks, return_index=True, return_counts=True)
    prefix = np.cumsum(1.0 / (n - start))  # sum over the stages up to each place of 1 / |C_g|
    place = np.searchsorted(places, ranks)
    omega = s2 / c * (1.0 / size[place] - prefix[place])
    p = 1.0 / (n - start)
    delta = math.sqrt(s2) / c * s2 / c**2 * np.cumsum(p * (1 - p))[place]
    np.testing.assert_allclose(v["mu"].to_numpy(), KW["mu"] + omega, rtol=1e-12)
    np.testing.assert_allclose(v["sigma"].to_numpy(), np.sqrt(s2 * np.maximum(1 - delta, KW["kappa"])), rtol=1e-12)


@pytest.mark.parametrize("model", MODELS)
def test_far_apart_strengths_stay_finite(model):
    m = table([(0, [[("a", 1.0)], [("b", 1.0)], [("c", 1.0)], [("d", 1.0)]], [3, 2, 1, 0])])
    init = {"a": (1e6, 1.0), "b": (0.0, 1e-3), "c": (-1e6, 8.0), "d": (-1e6, 8.0)}
    v = state(ours(model).run(m, initial=init))
    assert np.all(np.isfinite(v[["mu", "sigma"]].to_numpy())) and np.all(v["sigma"] > 0)
    assert v.loc["a", "mu"] < 1e6 and v.loc["d", "mu"] > -1e6  # the upsets move them


# ---------------------------------------------------------------- compiled and plain Python
SCRIPT = textwrap.dedent("""
    import json
    import pandas as pd
    from filters.wenglin import WengLin
    from statespace.data.matches import Matches
    rows = [dict(match=m, time=float(m), competitor=f"c{(3 * m + j) % 7}", side=j // 2, rank=(j // 2 * (m + 1)) % 3,
                 weight=1.0 - 0.1 * j) for m in range(6) for j in range(6)]
    matches = Matches.from_long(pd.DataFrame(rows))
    out = {}
    for model in ("bt", "tm", "pl"):
        r = WengLin(model, dynamics="time").run(matches)
        out[model] = [r.state.values.tolist(), r.perf_mean.tolist(), r.perf_var.tolist()]
    print(json.dumps(out))
""")


def test_compiled_and_uncompiled_runs_agree():
    compiled, python = compiled_and_python_runs(SCRIPT)
    assert compiled.keys() == python.keys() == {"bt", "tm", "pl"}
    for model in compiled:
        for part in range(3):
            np.testing.assert_allclose(np.array(compiled[model][part]), np.array(python[model][part]),
                                       rtol=1e-12, atol=1e-12)
