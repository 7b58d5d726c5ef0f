"""TrueSkill on matches of many sides (teams, free-for-all, ties, partial play) through the compiled
match loop, against the ``trueskill`` package (H. Lee) rated match by match."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import trueskill
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtri

from filters import TrueSkill
from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.ranking_forecast import RankingForecast

TOL = 1e-9
#: the package's backend: the standard normal from math.erfc (to the last digits, as scipy's, and many
#: times faster per call than scipy.stats); its ppf, used once per margin, from scipy.special
NORMAL = (lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0)), lambda x: math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi),
          lambda p: float(ndtri(p)))


def _frame(matches):
    """Long table of ``matches``: each a list of sides ``(names, weights, rank)``, match ``m`` at time ``m``."""
    rows = []
    for m, sides in enumerate(matches):
        for s, (names, weights, rank) in enumerate(sides):
            for name, w in zip(names, weights):
                rows.append(dict(match=f"m{m}", time=float(m), competitor=name, side=s, rank=rank, weight=w))
    return pd.DataFrame(rows)


def _stored_sides(mt: Matches, m: int, weight_of):
    """Match ``m``'s sides in the order the table stores them (the order of the EP chain among tied
    sides): (names, weights, rank) each."""
    out = []
    for s in range(mt.match_ptr[m], mt.match_ptr[m + 1]):
        names = [mt.names[i] for i in mt.member[mt.side_ptr[s]:mt.side_ptr[s + 1]]]
        out.append((names, [weight_of[(m, n)] for n in names], int(mt.rank[s])))
    return out


def _package_rate(env, sides, rating):
    """Rate one match with the package; updates ``rating`` (name -> trueskill.Rating) in place."""
    groups = [tuple(rating[n] for n in names) for names, _, _ in sides]
    new = env.rate(groups, ranks=[r for _, _, r in sides], weights=[tuple(w) for _, w, _ in sides])
    for (names, _, _), group in zip(sides, new):
        for n, r in zip(names, group):
            rating[n] = r


def _run_values(run):
    df = run.state.frame().set_index("player")
    return {p: (float(df.loc[p, "mu"]), float(df.loc[p, "sigma"])) for p in df.index}


@st.composite
def one_match(draw):
    """Up to 8 sides of up to 5 players: starting beliefs, partial-play weights in (0, 1], ranks with ties."""
    n_sides = draw(st.integers(2, 8))
    sides, initial, k = [], {}, 0
    for _ in range(n_sides):
        names = []
        for _ in range(draw(st.integers(1, 5))):
            name = f"p{k:02d}"
            k += 1
            initial[name] = (draw(st.floats(15.0, 35.0)), draw(st.floats(2.0, 9.0)))
            names.append(name)
        weights = [draw(st.sampled_from([1.0]) | st.floats(0.01, 1.0)) for _ in names]
        sides.append((names, weights, draw(st.integers(0, n_sides - 1))))
    return sides, initial, draw(st.sampled_from([0.05, 0.10, 0.30]))


@settings(max_examples=30, deadline=None)
@given(one_match())
def test_one_match_through_the_loop_equals_rate_and_the_package(case):
    sides, initial, p_draw = case
    mt = Matches.from_long(_frame([sides]))
    weight_of = {(0, n): w for names, ws, _ in sides for n, w in zip(names, ws)}
    stored = _stored_sides(mt, 0, weight_of)
    got = _run_values(TrueSkill(draw_probability=p_draw).run(mt, initial=initial))
    env = trueskill.TrueSkill(backend=NORMAL, draw_probability=p_draw)
    theirs = {n: env.create_rating(*initial[n]) for n in initial}
    _package_rate(env, stored, theirs)
    rated = TrueSkill(draw_probability=p_draw).rate([[initial[n] for n in names] for names, _, _ in stored],
                                                    ranks=[r for _, _, r in stored], weights=[w for _, w, _ in stored])
    ours = {n: r for (names, _, _), group in zip(stored, rated) for n, r in zip(names, group)}
    for n in initial:
        assert got[n][0] == pytest.approx(theirs[n].mu, abs=TOL) and got[n][1] == pytest.approx(theirs[n].sigma, abs=TOL)
        assert got[n][0] == pytest.approx(ours[n][0], abs=TOL) and got[n][1] == pytest.approx(ours[n][1], abs=TOL)


def _league(seed, n_matches=8, n_players=14):
    """Matches of 2 to 5 sides of 1 to 3 players drawn from a small pool, weights in (0, 1], ties."""
    rng = np.random.default_rng(seed)
    names = [f"q{i:02d}" for i in range(n_players)]
    matches = []
    for _ in range(n_matches):
        n_sides = int(rng.integers(2, 6))
        sizes = rng.integers(1, 4, n_sides)
        who = rng.choice(n_players, int(sizes.sum()), replace=False)
        ranks = rng.integers(0, n_sides, n_sides)
        sides, k = [], 0
        for s in range(n_sides):
            members = [names[i] for i in who[k:k + sizes[s]]]
            k += sizes[s]
            sides.append((members, [float(w) for w in np.where(rng.random(len(members)) < 0.5, 1.0,
                                                                rng.uniform(0.05, 1.0, len(members)))],
                          int(ranks[s])))
        matches.append(sides)
    return matches


@pytest.mark.parametrize("seed", [1, 2])
def test_a_sequence_of_matches_equals_the_package_match_by_match(seed):
    """dynamics="game": tau^2 before each match of a member, as the package's ``rate`` adds it; and the
    sides' forecasts are the weighted sums of the members' beliefs before the match."""
    matches = _league(seed)
    mt = Matches.from_long(_frame(matches))
    weight_of = {(m, n): w for m, sides in enumerate(matches) for names, ws, _ in sides for n, w in zip(names, ws)}
    run = TrueSkill(draw_probability=0.1).run(mt)
    env = trueskill.TrueSkill(backend=NORMAL, draw_probability=0.1)
    theirs = {n: env.create_rating() for n in mt.names}
    for m in range(mt.n_matches):
        stored = _stored_sides(mt, m, weight_of)
        for s, (names, ws, _) in zip(range(mt.match_ptr[m], mt.match_ptr[m + 1]), stored):
            mean = sum(w * theirs[n].mu for n, w in zip(names, ws))
            var = sum(w * w * theirs[n].sigma ** 2 for n, w in zip(names, ws))
            assert run.perf_mean[s] == pytest.approx(mean, abs=TOL) and run.perf_var[s] == pytest.approx(var, abs=TOL)
        _package_rate(env, stored, theirs)
    got = _run_values(run)
    for n in mt.names:
        assert got[n][0] == pytest.approx(theirs[n].mu, abs=TOL) and got[n][1] == pytest.approx(theirs[n].sigma, abs=TOL)


def test_dynamics_time_widens_by_the_idle_time_only():
    """dynamics="time": the loop's predict kernel adds tau^2 per unit of time since a member's last
    match, and the match adds nothing more (the package with tau = 0 on the widened beliefs)."""
    tau = 0.5
    rows = [("m0", 0.0, "a", 0, 0), ("m0", 0.0, "b", 1, 1), ("m0", 0.0, "c", 1, 1),
            ("m1", 3.0, "a", 0, 1), ("m1", 3.0, "c", 1, 0), ("m1", 3.0, "d", 2, 2)]
    frame = pd.DataFrame(rows, columns=["match", "time", "competitor", "side", "rank"])
    run = TrueSkill(tau=tau, draw_probability=0.1, dynamics="time", period_days=1.0).run(Matches.from_long(frame))
    env = trueskill.TrueSkill(backend=NORMAL, draw_probability=0.1, tau=0.0)
    r = {n: env.create_rating() for n in "abcd"}
    (r["a"],), (r["b"], r["c"]) = env.rate([(r["a"],), (r["b"], r["c"])], ranks=[0, 1])
    for n in "ac":
        r[n] = trueskill.Rating(r[n].mu, math.sqrt(r[n].sigma ** 2 + 3.0 * tau * tau))
    (r["c"],), (r["a"],), (r["d"],) = env.rate([(r["c"],), (r["a"],), (r["d"],)], ranks=[0, 1, 2])
    got = _run_values(run)
    for n in "abcd":
        assert got[n][0] == pytest.approx(r[n].mu, abs=TOL) and got[n][1] == pytest.approx(r[n].sigma, abs=TOL)


def test_one_vs_one_matches_equal_the_pairwise_run():
    rng = np.random.default_rng(5)
    n = 60
    a = rng.integers(0, 8, n)
    b = (a + rng.integers(1, 8, n)) % 8
    score = rng.choice([1.0, 0.5, 0.0], n, p=[0.45, 0.1, 0.45])
    names = np.array([f"r{i}" for i in range(8)], dtype=object)
    games = Games.from_arrays(np.arange(n), names[a], names[b], score)
    method = TrueSkill(draw_probability=0.1)
    pairwise = method.run(games).state.frame().set_index("player")
    got = _run_values(method.run(Matches.from_games(games)))
    for p in pairwise.index:
        assert got[p][0] == pytest.approx(pairwise.loc[p, "mu"], abs=TOL)
        assert got[p][1] == pytest.approx(pairwise.loc[p, "sigma"], abs=TOL)


def test_match_forecast_is_the_thurstonian_chain_at_the_one_vs_one_margin():
    env = trueskill.TrueSkill(backend=NORMAL, draw_probability=0.25)
    f = TrueSkill(draw_probability=0.25).match_forecast()
    assert f == RankingForecast("thurstone", 25.0 / 6.0, f.eps)
    assert f.eps == pytest.approx(trueskill.calc_draw_margin(0.25, 2, env), abs=1e-12)


def test_a_free_for_all_of_3000_entrants_runs():
    rng = np.random.default_rng(0)
    n = 3000
    frame = pd.DataFrame({"match": "ffa", "time": 0.0, "competitor": [f"e{i:04d}" for i in range(n)],
                          "rank": rng.integers(0, n, n)})
    run = TrueSkill().run(Matches.from_long(frame))
    v = run.state.values
    assert np.all(np.isfinite(v)) and np.all(np.isfinite(run.perf_mean)) and np.all(np.isfinite(run.perf_var))
    assert np.all(v[:, 1] < TrueSkill().sigma)
    # the best place gains, the last loses
    df = run.state.frame().set_index("player")
    order = np.argsort(frame["rank"].to_numpy(), kind="stable")
    assert df.loc[frame["competitor"][order[0]], "mu"] > 25.0 > df.loc[frame["competitor"][order[-1]], "mu"]
