"""filters.ECF, the English Chess Federation's grading system.

References (none shares code with filters/ecf.py):

- the worked example of Wikipedia's "ECF grading system" (A graded 160 beats B graded 140:
  performances 190 and 110; had B been graded 100, 170 and 90), and North London Chess Club's
  grading page (mjh.orpheusweb.co.uk/nulcc/grading.htm: a player graded 150 against one graded 100
  counts the opponents as 140 and 110; the new grade equals the mean of the capped opponents'
  grades plus the percentage score minus 50);
- the ECF Arbiter Seminar's grading slides (materials by the Chief Arbiters' Association, "Inexperienced
  players often ask arbiters how grades are calculated"): the game grades of a 150-graded player
  against 90, 130, 150 and 200, the two outer ones taken as 110 and 190;
- the rule for fewer than 30 games ("n games at the player's previous grade", the ECF's method
  before 2011 as the Bronowski Trophy's note "Grading developments 2011-12" describes it),
  transcribed below in plain Python (``ecf_reference``);
- elote's ``ECFCompetitor`` (installed test dependency). Elote departs from the published rule in
  three ways: it caps the grade gap at 50 (its ``_delta`` is both the cap and the win bonus, the
  rule's cap is 40), it grades game by game as a moving average of the last 30 performances
  (each computed from the current average, not from the period's published grade), and a
  newcomer's starting grade counts as one of those 30 entries (one game against a newcomer rated
  r gives it (r + p) / 2, the rule (p + 29 r) / 30). They agree on one player's grade after
  exactly 30 games against opponents it has never met, when every gap is within 40 of the
  player's grade before the period and within 50 of elote's running average: both are the mean
  of the 30 performances. ``test_thirty_games_match_elote`` checks that case on random inputs.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import statespace as ss
from filters.ecf import ECF
from conftest import compiled_and_python_runs


def one_game(ga, gb, score, **kw):
    g = ss.Games.from_arrays([0], ["A"], ["B"], [score])
    return ECF(**kw).run(g, initial={"A": ga, "B": gb}).state.frame().set_index("player")["grade"]


def test_wikipedia_worked_example():
    got = one_game(160.0, 140.0, 1.0, games_required=1)
    assert got["A"] == pytest.approx(190.0) and got["B"] == pytest.approx(110.0)
    got = one_game(160.0, 100.0, 1.0, games_required=1)
    assert got["A"] == pytest.approx(170.0) and got["B"] == pytest.approx(90.0)


def test_north_london_example_caps_the_opponents_at_40():
    got = one_game(150.0, 100.0, 0.0, games_required=1)      # 150 loses: 110 - 50; 100 wins: 140 + 50
    assert got["A"] == pytest.approx(60.0) and got["B"] == pytest.approx(190.0)


@pytest.mark.parametrize("opponent, taken_as", [(90.0, 110.0), (130.0, 130.0), (150.0, 150.0), (200.0, 190.0)])
def test_arbiter_seminar_table_for_a_player_graded_150(opponent, taken_as):
    """The ECF Arbiter Seminar's grading slides (Chief Arbiters' Association, "Calculating grades":
    a 150-graded player's game grade against 90 (taken as 110), 130, 150 and 200 (taken as 190):
    win 160 / 180 / 200 / 240, draw 110 / 130 / 150 / 190, loss 60 / 80 / 100 / 140)."""
    table = {90.0: (160.0, 110.0, 60.0), 130.0: (180.0, 130.0, 80.0), 150.0: (200.0, 150.0, 100.0),
             200.0: (240.0, 190.0, 140.0)}
    for score, expected in zip((1.0, 0.5, 0.0), table[opponent]):
        assert one_game(150.0, opponent, score, games_required=1)["A"] == pytest.approx(expected)
        assert expected - 50.0 * (2.0 * score - 1.0) == taken_as  # the slide's "taken as" column


def ecf_reference(periods, grades0, n_required=30.0, initial=100.0):
    """The published rule, period by period: performances from the pre-period grades, the new grade
    ``(sum p + max(0, N - m) g) / max(m, N)``."""
    g = dict(grades0)
    for games in periods:
        perf = {}
        for a, b, s in games:
            for me, opp, res in ((a, b, s), (b, a, 1 - s)):
                gm, go = g.setdefault(me, initial), g.setdefault(opp, initial)
                capped = gm + max(-40.0, min(40.0, go - gm))
                perf.setdefault(me, []).append(capped + 100 * res - 50)
        g.update({p: (sum(v) + max(0.0, n_required - len(v)) * g[p]) / max(len(v), n_required)
                  for p, v in perf.items()})
    return g


def random_periods(rng, n_players=7, n_periods=6, per_period=15):
    return [[(f"P{a}", f"P{b}", float(rng.choice([0.0, 0.5, 1.0])))
             for a, b in (rng.choice(n_players, 2, replace=False) for _ in range(rng.integers(1, per_period)))]
            for _ in range(n_periods)]


def as_games(periods):
    rows = [(t, a, b, s) for t, games in enumerate(periods) for a, b, s in games]
    t, a, b, s = zip(*rows)
    return ss.Games.from_arrays(list(t), list(a), list(b), list(s), period=list(t))


@pytest.mark.parametrize("seed, n_required", [(0, 30.0), (1, 1.0), (2, 5.0)])
def test_matches_the_published_rule(seed, n_required):
    rng = np.random.default_rng(seed)
    periods = random_periods(rng)
    start = {f"P{i}": float(rng.uniform(40, 220)) for i in range(7)}
    ref = ecf_reference(periods, start, n_required)
    got = ECF(n_required).run(as_games(periods), initial=start).state.frame().set_index("player")["grade"]
    for p, v in ref.items():
        assert got[p] == pytest.approx(v, abs=1e-9)


def test_mean_performance_is_opponents_mean_plus_percentage_minus_50():
    rng = np.random.default_rng(5)
    opp = rng.uniform(90, 170, 12)
    res = rng.choice([0.0, 0.5, 1.0], 12)
    names = [f"O{i}" for i in range(12)]
    g = ss.Games.from_arrays([0] * 12, ["X"] * 12, names, res, period=[0] * 12)
    start = {"X": 130.0, **dict(zip(names, opp))}
    got = ECF(1).run(g, initial=start).state.frame().set_index("player").loc["X", "grade"]
    capped = 130.0 + np.clip(opp - 130.0, -40, 40)
    assert got == pytest.approx(capped.mean() + 100 * res.mean() - 50)


@pytest.mark.parametrize("seed", range(4))
def test_thirty_games_match_elote(seed):
    elote = pytest.importorskip("elote")
    rng = np.random.default_rng(seed)
    g0 = float(rng.uniform(150, 250))  # elote refuses starting grades below 100
    x = elote.ECFCompetitor(initial_rating=g0)
    opps, res = [], []
    for _ in range(30):
        lo, hi = max(g0 - 40, x.rating - 50), min(g0 + 40, x.rating + 50)
        r = float(rng.uniform(lo, hi))
        s = float(rng.choice([0.0, 0.5, 1.0]))
        o = elote.ECFCompetitor(initial_rating=r)
        {1.0: x.beat, 0.5: x.tied, 0.0: x.lost_to}[s](o)
        opps.append(r)
        res.append(s)
    names = [f"O{i}" for i in range(30)]
    g = ss.Games.from_arrays([0] * 30, ["X"] * 30, names, res, period=[0] * 30)
    got = ECF(30).run(g, initial={"X": g0, **dict(zip(names, opps))}).state.frame().set_index("player")
    assert got.loc["X", "grade"] == pytest.approx(x.rating, abs=1e-9)


def test_scale_and_forecast_through_the_model():
    m = ECF().model
    assert m.scale == pytest.approx(400 / math.log(10) / 8)
    g = ss.Games.from_arrays([0], ["A"], ["B"], [1.0])
    p = ECF().run(g, initial={"A": 125.0, "B": 100.0}).proba[0]
    assert p[0] == pytest.approx(1 / (1 + 10 ** (-25 * 8 / 400)))        # 25 grade points = 200 Elo
    p = ECF(draw=("davidson", 0.5)).run(g, initial={"A": 125.0, "B": 100.0}).proba[0]
    assert p[1] > 0 and p.sum() == pytest.approx(1.0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.floats(1, 100), davidson=st.booleans())
def test_properties(seed, n, davidson):
    rng = np.random.default_rng(seed)
    periods = random_periods(rng)
    games = as_games(periods)
    method = ECF(n, draw=("davidson", 0.7) if davidson else "half")
    run = method.run(games)
    assert np.all((run.proba >= 0) & (run.proba <= 1))
    np.testing.assert_allclose(run.proba.sum(axis=1), 1.0)
    base = run.state.frame().set_index("player")["grade"]
    # relabelling the competitors (and reversing the rows inside each period) changes nothing
    rename = {f"P{i}": f"Q{(i * 3) % 7}" for i in range(7)}
    relabelled = [[(rename[a], rename[b], s) for a, b, s in reversed(games_)] for games_ in periods]
    other = method.run(as_games(relabelled)).state.frame().set_index("player")["grade"]
    for p, q in rename.items():
        if p in base.index:
            assert other[q] == pytest.approx(base[p], abs=1e-9)


def test_compiled_and_plain_python_agree():
    script = """
import json, numpy as np, statespace as ss
from filters.ecf import ECF
rng = np.random.default_rng(3)
a = rng.integers(0, 6, 200); b = (a + 1 + rng.integers(0, 5, 200)) % 6
g = ss.Games.from_arrays(np.arange(200) // 10, a.astype(str), b.astype(str), rng.choice([0, .5, 1], 200),
                         period=np.arange(200) // 10)
r = ECF(12, home=3.0).run(g)
print(json.dumps({"p": r.proba.tolist(), "g": r.state.values.tolist()}))
"""
    jit, py = compiled_and_python_runs(script)
    np.testing.assert_allclose(jit["p"], py["p"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(jit["g"], py["g"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("kw, name", [({"games_required": 0.5}, "games_required"),
                                      ({"elo_per_grade": -8}, "elo_per_grade"),
                                      ({"home": math.inf}, "home"),
                                      ({"draw": "sometimes"}, "draw")])
def test_bad_settings_name_the_setting(kw, name):
    with pytest.raises(ValueError, match=name):
        ECF(**kw)


def test_registered_and_tunable():
    from statespace.methods import registry

    assert registry.get("ecf") is ECF
    sim = ss.scenarios.get("balanced", seed=1)
    train, _ = sim.games.split(0.7)
    tuned = ECF().tune(train, maxiter=5, standard_errors=False)
    assert set(tuned.tuning.params) >= {"games_required", "elo_per_grade"}
    json.dumps(tuned.get_params())
