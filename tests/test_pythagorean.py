"""filters.Pythagorean, Bill James's Pythagorean expectation with log5.

References (none shares code with filters/pythagorean.py): James's formula
``W = PF^x / (PF^x + PA^x)`` and his log5 ``W_a (1 - W_b) / (W_a (1 - W_b) + W_b (1 - W_a))``
written out below; elote's ``PythagoreanCompetitor`` (installed test dependency), which follows
the same rule with undiscounted totals and a symmetric prior on both sums (its ``_prior_points``,
our ``prior_points``), so the two agree game by game with ``half_life=None``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import statespace as ss
from conftest import compiled_and_python_runs
from filters.pythagorean import Pythagorean


def random_games(seed, n=60, n_players=6, periods=False):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n)
    b = (a + 1 + rng.integers(0, n_players - 1, n)) % n_players
    sa, sb = rng.integers(0, 45, n).astype(float), rng.integers(0, 45, n).astype(float)
    t = np.arange(n) // 5 if periods else np.arange(n)
    return ss.Games.from_arrays(t.tolist(), [f"T{i}" for i in a], [f"T{i}" for i in b],
                                score_a=sa.tolist(), score_b=sb.tolist(), period=t.tolist() if periods else None)


def test_log5_of_james_formula():
    x, c = 2.37, 4.0
    g = ss.Games.from_arrays([0, 1, 2], ["A", "B", "A"], ["C", "C", "B"], score_a=[27.0, 13, 0],
                             score_b=[20.0, 30, 0])
    p = Pythagorean(x, prior_points=c, half_life=None).run(g).proba
    pf = {"A": 27 + c, "B": 13 + c}
    pa = {"A": 20 + c, "B": 30 + c}
    w = {k: pf[k] ** x / (pf[k] ** x + pa[k] ** x) for k in pf}
    log5 = w["A"] * (1 - w["B"]) / (w["A"] * (1 - w["B"]) + w["B"] * (1 - w["A"]))
    assert p[2, 0] == pytest.approx(log5, abs=1e-12)
    assert p[0, 0] == pytest.approx(0.5)                      # newcomers: rating 0


@pytest.mark.parametrize("seed, x, c", [(0, 2.37, 1.0), (1, 2.0, 5.0), (2, 14.0, 0.3)])
def test_matches_elote(seed, x, c):
    elote = pytest.importorskip("elote")
    g = random_games(seed)
    frame = g.to_frame()
    theirs = {}

    def comp(name):
        if name not in theirs:
            theirs[name] = elote.PythagoreanCompetitor(exponent=x)
            theirs[name]._prior_points = c
        return theirs[name]

    expected = []
    for _, row in frame.iterrows():
        ca, cb = comp(row["a"]), comp(row["b"])
        expected.append(ca.expected_score(cb))
        sa, sb = row["score_a"], row["score_b"]
        if sa > sb:
            ca.beat(cb, scores=(sa, sb))
        elif sa < sb:
            cb.beat(ca, scores=(sb, sa))
        else:
            ca.tied(cb, scores=(sa, sb))
    run = Pythagorean(x, prior_points=c, half_life=None).run(g)
    np.testing.assert_allclose(run.proba[:, 0], expected, rtol=0, atol=1e-12)


def test_half_life_halves_the_sums():
    g = ss.Games.from_arrays([0.0, 10.0, 10.0], ["A", "C", "A"], ["B", "D", "C"], score_a=[30.0, 1, 5],
                             score_b=[10.0, 1, 5])
    st_ = Pythagorean(half_life=10.0).run(g).state.frame().set_index("player")
    assert st_.loc["A", "points_for"] == pytest.approx(30 / 2 + 5)
    assert st_.loc["A", "points_against"] == pytest.approx(10 / 2 + 5)


def test_needs_the_points():
    g = ss.Games.from_arrays([0, 1], ["A", "B"], ["B", "A"], [1.0, 0.0])
    with pytest.raises(ValueError, match="'score_a' and 'score_b'"):
        Pythagorean().run(g)
    with pytest.raises(ValueError, match="score_a"):   # the table refuses negative points itself
        Pythagorean().run(ss.Games.from_arrays([0, 1], ["A", "B"], ["B", "A"], score_a=[3.0, -1.0],
                                               score_b=[1.0, 0.0]))


def test_tune_fits_the_exponent_on_training_games():
    g = random_games(7, n=200)
    train, test = g.split(0.7)
    tuned = Pythagorean().tune(train, maxiter=10, standard_errors=False)
    assert tuned.tuning.n_games == len(train)
    assert {"exponent", "prior_points", "half_life"} <= set(tuned.tuning.params)
    p = tuned.fit(train).predict_proba(test)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), x=st.floats(0.1, 20), half_life=st.one_of(st.none(), st.floats(1, 1e4)),
       davidson=st.booleans())
def test_properties(seed, x, half_life, davidson):
    g = random_games(seed, periods=True)
    method = Pythagorean(x, half_life=half_life, draw=("davidson", 0.3) if davidson else "half")
    run = method.run(g)
    assert np.all((run.proba >= 0) & (run.proba <= 1))
    np.testing.assert_allclose(run.proba.sum(axis=1), 1.0)
    base = run.state.frame().set_index("player")
    f = g.to_frame()
    rename = {p: f"U{k}" for k, p in enumerate(sorted(set(f["a"]) | set(f["b"]))[::-1])}
    f = f.iloc[::-1]                                       # reversed rows: order inside a period
    other = ss.Games.from_arrays(f["time"].tolist(), f["a"].map(rename).tolist(), f["b"].map(rename).tolist(),
                                 score_a=f["score_a"].tolist(), score_b=f["score_b"].tolist(),
                                 period=f["period"].tolist())
    got = method.run(other).state.frame().set_index("player")
    for p, q in rename.items():
        np.testing.assert_allclose(got.loc[q, ["rating", "points_for", "points_against"]].to_numpy(float),
                                   base.loc[p, ["rating", "points_for", "points_against"]].to_numpy(float),
                                   rtol=1e-12, atol=1e-9)


def test_compiled_and_plain_python_agree():
    script = """
import json, numpy as np, statespace as ss
from filters.pythagorean import Pythagorean
rng = np.random.default_rng(5)
a = rng.integers(0, 6, 200); b = (a + 1 + rng.integers(0, 5, 200)) % 6
g = ss.Games.from_arrays((np.arange(200) // 4).tolist(), a.astype(str), b.astype(str),
                         score_a=rng.integers(0, 40, 200).astype(float), score_b=rng.integers(0, 40, 200).astype(float))
out = {}
for k, m in enumerate([Pythagorean(), Pythagorean(3.0, half_life=None, home=0.2)]):
    r = m.run(g)
    out[k] = [r.proba.tolist(), r.state.values.tolist()]
print(json.dumps(out))
"""
    jit, py = compiled_and_python_runs(script)
    for k in jit:
        np.testing.assert_allclose(jit[k][0], py[k][0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(jit[k][1], py[k][1], rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("kw, name", [({"exponent": 0.0}, "exponent"), ({"prior_points": 0.0}, "prior_points"),
                                      ({"half_life": -1.0}, "half_life"), ({"home": math.inf}, "home"),
                                      ({"draw": "x"}, "draw")])
def test_bad_settings_name_the_setting(kw, name):
    with pytest.raises(ValueError, match=name):
        Pythagorean(**kw)


def test_registered_not_by_default():
    from statespace.methods import registry

    assert registry.get("pythagorean") is Pythagorean
    assert "pythagorean" in registry.names() and "pythagorean" not in registry.names(default_only=True)
