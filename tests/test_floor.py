"""The speed goals' floor is a real equivalent: the plain numba loops of ``benchmarks/bench_floor.py``
give the same one-step win probabilities and final ratings as ``filters.Elo(k=...)`` and the default
``filters.EKF()`` (to 1e-9), on small streams. No timing is asserted."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_floor as F  # noqa: E402
from _common import build_games, make_stream  # noqa: E402
from bench_ekf import in_rounds  # noqa: E402


@pytest.mark.parametrize("n_players", [2, 7, 50, 1_000])
@pytest.mark.parametrize("k", [32.0, 10.0, 0.0])
def test_elo_floor_equals_elo(n_players, k):
    from filters import Elo

    t, a, b, score = make_stream(3_000, n_players, seed=n_players)
    games = build_games(t, a, b, score)
    F.check_time_order(games)
    fitted = Elo(k=k).run(games)
    for fn in (F.elo_floor, F.elo_floor_pow):
        diffs = F.elo_agreement(games, fitted, F.run_elo_floor(games, k, fn))
        assert F.agrees(diffs), (fn.__name__, diffs)
    p, r = F.run_elo_floor(games, k)
    assert p.shape == (len(games),) and r.shape == (games.n_players,)


@pytest.mark.parametrize("n_players", [2, 7, 50, 1_000])
def test_ekf_floor_equals_default_ekf(n_players):
    from filters import EKF

    t, a, b, score = make_stream(3_000, n_players, seed=n_players + 1)
    games = build_games(in_rounds(t, n_players), a, b, score)
    fitted = EKF().run(games)
    diffs = F.ekf_agreement(games, fitted, F.run_ekf_floor(games))
    assert F.agrees(diffs), diffs
    # the stream exercises what the floor writes out: drift between games and all three results
    assert np.any(np.diff(games.days()) > 0) and set(np.unique(games.score)) == {0.0, 0.5, 1.0}


def test_floor_disagreement_is_caught():
    # a floor with another K is not the same computation, and the check says so
    from filters import Elo

    t, a, b, score = make_stream(500, 20, seed=3)
    games = build_games(t, a, b, score)
    diffs = F.elo_agreement(games, Elo(k=32.0).run(games), F.run_elo_floor(games, 33.0))
    assert not F.agrees(diffs)


def test_floor_measure_small():
    # the benchmark's own path: checked, then timed in alternation (3 repeats of each)
    res = F.run_all(2_000, [10, 100], 2, seed=0, ekf_sizes=[10])
    assert [r["kind"] for r in res["rows"]] == ["elo", "elo", "ekf"]
    assert all(r["agrees"] and r["ratio"] > 0 and r["repeats"] == 2 for r in res["rows"])
    text = "\n".join(F.report_lines(res))
    assert "ours / floor (run)" in text and "goal <= 1.3x" in text and "goal >= 10.00 M" in text
