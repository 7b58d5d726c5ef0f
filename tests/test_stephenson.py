"""Stephenson's system, the filter written through the one-file extension path (docs/extending.md).

Reference: the equations of the appendix "Stephenson System" of A. Stephenson's vignette of the
R package PlayerRatings ("Comparing predictive performance of chess ratings with the
PlayerRatings package", 2012), transcribed below in plain Python (a dictionary per player, one
loop per period), sharing no code with the package. Its special case ``h = b = lambda = 0`` is
Glicko-1 (the vignette says so), checked against our Glicko.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import statespace as ss
from filters import Glicko
from filters.stephenson import Stephenson

Q = math.log(10) / 400


def stephenson_reference(periods, c, h, b, lam, r0=1500.0, rd0=350.0, rd_max=350.0):
    """``periods``: a list of lists of (a, b, score). Returns {player: (r, rd)} and each game's
    forecast ``1 / (1 + 10^(-k_ab (r_a - r_b) / 400))``, ``k_ab = g(sqrt(v_a + v_b))``."""
    r, v, last = {}, {}, {}
    forecasts = []
    for t, games in enumerate(periods):
        players = {p for game in games for p in game[:2]}
        for p in players:  # step 1: v + c^2 t since the last period played, capped
            if p not in r:
                r[p], v[p] = r0, rd0**2
            elif t > last[p]:
                v[p] = min(v[p] + c**2 * (t - last[p]), rd_max**2)
            last[p] = t
        k = {p: 1 / math.sqrt(1 + 3 * Q**2 * v[p] / math.pi**2) for p in players}
        for pa, pb, _ in games:
            kab = 1 / math.sqrt(1 + 3 * Q**2 * (v[pa] + v[pb]) / math.pi**2)
            forecasts.append(1 / (1 + 10 ** (-kab * (r[pa] - r[pb]) / 400)))
        new = {}
        for p in players:
            mine = [(o, s) for pa, pb, s0 in games for (me, o, s) in ((pa, pb, s0), (pb, pa, 1 - s0)) if me == p]
            m = len(mine)
            e = {j: 1 / (1 + 10 ** (-k[o] * (r[p] - r[o]) / 400)) for j, (o, _) in enumerate(mine)}
            d = Q**2 * sum(k[o] ** 2 * e[j] * (1 - e[j]) for j, (o, _) in enumerate(mine))
            v_star = 1 / (1 / (v[p] + h**2 * m) + d)
            r_bar = sum(r[o] for o, _ in mine) / m
            gain = sum(k[o] * (s - e[j] + b) for j, (o, s) in enumerate(mine))
            new[p] = (r[p] + Q * v_star * gain + lam * (r_bar - r[p]), v_star)
        for p, (rp, vp) in new.items():
            r[p], v[p] = rp, vp
    return {p: (r[p], math.sqrt(v[p])) for p in r}, np.array(forecasts)


def random_periods(seed, n_players=9, n_periods=25, per_period=12):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_periods):
        games = []
        for _ in range(rng.integers(1, per_period)):
            a, b = rng.choice(n_players, 2, replace=False)
            games.append((f"P{a}", f"P{b}", float(rng.choice([0.0, 0.5, 1.0]))))
        out.append(games)
    return out


def as_games(periods):
    rows = [(t, a, b, s) for t, games in enumerate(periods) for a, b, s in games]
    t, a, b, s = zip(*rows)
    return ss.Games.from_arrays(list(t), list(a), list(b), list(s), period=list(t))


@pytest.mark.parametrize("seed, c, h, b, lam", [(0, 10.0, 10.0, 0.0, 0.02), (1, 25.0, 5.0, 0.03, 0.1),
                                                (2, 0.0, 30.0, 0.01, 0.0)])
def test_matches_the_vignette_equations(seed, c, h, b, lam):
    periods = random_periods(seed)
    ref, forecasts = stephenson_reference(periods, c, h, b, lam)
    run = Stephenson(c, h, b, lam).run(as_games(periods))
    np.testing.assert_allclose(run.proba[:, 0], forecasts, rtol=0, atol=1e-12)
    got = run.state.frame().set_index("player")
    for p, (r, rd) in ref.items():
        assert got.loc[p, "rating"] == pytest.approx(r, abs=1e-8)
        assert got.loc[p, "rd"] == pytest.approx(rd, abs=1e-8)


def test_without_its_three_extensions_it_is_glicko():
    g = as_games(random_periods(4))
    s, gl = Stephenson(20.0, h=0.0, bonus=0.0, neighbourhood=0.0).run(g), Glicko(20.0).run(g)
    np.testing.assert_allclose(s.state.values, gl.state.values, rtol=0, atol=1e-9)
    np.testing.assert_allclose(s.proba, gl.proba, rtol=0, atol=1e-12)


def test_runs_through_fit_compare_tune_and_the_command_line(tmp_path):
    sim = ss.scenarios.drifting(seed=3)
    train, test = sim.games.split(0.7)
    tuned = Stephenson().tune(train, maxiter=20, standard_errors=False)
    assert set(tuned.tuning.params) >= {"c", "h", "neighbourhood"}
    p = tuned.fit(train).predict_proba(test)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    table = ss.compare([Stephenson(), Glicko()], sim.games)
    assert "stephenson" in table.index
    path = tmp_path / "games.csv"
    sim.games.to_frame().to_csv(path, index=False)
    out = subprocess.run([sys.executable, "-m", "statespace", "compare", "--data", str(path), "--methods",
                          "stephenson,glicko", "--json"], capture_output=True, text=True, check=True)
    methods = {row["method"] for row in json.loads(out.stdout)["methods"]}
    assert methods == {"stephenson", "glicko"}


def test_bad_settings_name_the_setting():
    with pytest.raises(ValueError, match="neighbourhood"):
        Stephenson(neighbourhood=-0.1)
