"""study on matches of many sides (statespace.evaluation.study_matches): match sources in a grid,
each task one compare_matches row; games sources unchanged."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from filters import Elo, Stephenson
from statespace.evaluation.compare import compare
from statespace.evaluation.compare_matches import compare_matches
from statespace.evaluation.study import Grid, study, summary
from statespace.model.match_scenarios import simulate_matches
from statespace.model.simulate import simulate
from statespace.model.skillmodel import SkillModel

SOURCE = {"scenario": "simulate_matches", "n_players": 12, "n_matches": 50, "sides": 4}
MATCH_COLUMNS = ["loglik", "pair_log_loss", "pair_inversion", "rank_deviation", "top1"]


def _league(seed: int):
    """SOURCE's league as the docs say: the unnamed settings at their documented defaults (team size
    1, no partial play, logistic link at scale 1, skills N(0, 1) drifting 0.01 per match)."""
    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.01)
    return simulate_matches(model, 12, 50, 4, 1, seed=seed).matches


@pytest.fixture(scope="module")
def games():
    return simulate(SkillModel("logistic", 1.0, 0.0, 1.0, 0.01), 10, 80, seed=2).games


def test_study_rows_on_a_match_scenario_equal_compare_matches_rows():
    table = study(methods={"elo": Elo(k=24.0)}, sources={"league": SOURCE}, seeds=[0, 1], modes=["frozen", "online"],
                  progress=False)
    # matches are scored online only: one task per seed, whatever the modes
    assert list(table["seed"]) == [0, 1] and list(table["mode"]) == ["online", "online"]
    for (_, row), seed in zip(table.iterrows(), (0, 1)):
        ref = compare_matches({"elo": Elo(k=24.0)}, _league(seed), 0.7).loc["elo"]
        assert row["error"] is None
        for column in MATCH_COLUMNS:
            assert row[column] == pytest.approx(ref[column], rel=1e-12), column
        assert row["n_test"] == 15 == ref["n_matches"] and row["n_sides"] == 60
        assert math.isnan(row["log_loss"]) and math.isnan(row["brier"])
    assert table.loc[0, "pair_log_loss"] != table.loc[1, "pair_log_loss"]  # two leagues, two seeds


def test_a_match_data_set_runs_once_and_tuned_rows_match_compare_matches():
    table = study(methods={"elo": "elo"}, sources={"halo": "dataset:halo2_large_team"}, seeds=[0, 1], progress=False)
    assert len(table) == 1 and pd.isna(table.loc[0, "seed"]) and table.loc[0, "mode"] == "online"
    assert table.loc[0, "n_test"] == 292 and table.loc[0, "error"] is None  # 972 matches, the last 30%
    tuned = study(methods={"elo": "elo"}, sources={"league": SOURCE}, tune=True, tune_options={"maxiter": 5},
                  progress=False)
    ref = compare_matches({"elo": Elo()}, _league(0), 0.7, tune=True, tune_options={"maxiter": 5})
    assert tuned.loc[0, "pair_log_loss"] == pytest.approx(ref.at["elo", "pair_log_loss"], rel=1e-12)
    assert json.loads(tuned.loc[0, "tuned"])["k"] == pytest.approx(ref.attrs["tuned"]["elo"].params["k"], rel=1e-12)
    assert tuned.loc[0, "tune_seconds"] >= 0


def test_a_games_only_method_on_a_match_source_is_a_failed_row_naming_it(games):
    table = study(methods={"stephenson": Stephenson(), "elo": Elo()}, sources={"games": games, "league": SOURCE},
                  modes=["online"], progress=False)
    rows = {(r["method"], r["source"]): r for _, r in table.iterrows()}
    failed = rows[("stephenson", "league")]
    assert failed["error"].startswith("ValueError: stephenson rates games of two competitors only")
    assert all(math.isnan(failed[c]) for c in ["log_loss", *MATCH_COLUMNS])
    assert rows[("elo", "league")]["error"] is None and np.isfinite(rows[("elo", "league")]["pair_log_loss"])
    # games rows are what compare gives, with no ranking scores
    for method, obj in (("stephenson", Stephenson()), ("elo", Elo())):
        row = rows[(method, "games")]
        ref = compare({method: obj}, games, 0.7, "online", progress=False).loc[method]
        assert row["error"] is None and row["log_loss"] == pytest.approx(ref["log_loss"], rel=1e-12)
        assert math.isnan(row["pair_log_loss"])
    s = summary(table)
    assert list(s.columns) == ["method", "source", "mode", "log_loss", "se", "pair_log_loss", "pair_log_loss_se",
                               "n", "failed"]
    line = s[(s["method"] == "stephenson") & (s["source"] == "league")].iloc[0]
    assert line["failed"] == 1 and line["n"] == 0


def test_match_rows_resume_from_their_files(tmp_path):
    grid = dict(methods={"elo": Elo()}, sources={"league": SOURCE}, seeds=[0, 1], progress=False)
    first = study(path=tmp_path, **grid)
    again = study(path=tmp_path, **grid)
    assert again.attrs["ran"] == 0 and again.attrs["unusable"] == {}
    pd.testing.assert_frame_equal(first.drop(columns=["fit_seconds"]), again.drop(columns=["fit_seconds"]))


@pytest.mark.parametrize("source, message", [
    ({"scenario": "ffa_league", "n_players": 3}, "match scenario ffa_league takes no parameters"),
    ({"scenario": "simulate_matches", "sidez": 3}, "simulate_matches has no parameter 'sidez'"),
    ({"scenario": "simulate_matches", "sides": 1}, "sides must be a whole number >= 2, got 1"),
    ({"scenario": "simulate_matches", "n_matches": 0}, "n_matches must be a whole number >= 1"),
    ({"scenario": "simulate_matches", "drift": -1.0}, "drift"),
    ({"scenario": "team_league", "seed": 3}, "the seed of a scenario comes from the grid's seeds"),
    ({"dataset": "halo2_large_team", "x": 1}, "a data set takes no parameters"),
    ("ffa_leage", "is neither a scenario .*team_league.* nor a data set .*halo2_large_team"),
    ("dataset:halo3", "unknown data set 'halo3'; choose one of .*halo2_head_to_head"),
])
def test_bad_match_sources_are_refused_naming_them(source, message):
    with pytest.raises(ValueError, match=f"source 'bad': .*{message}"):
        Grid(methods={"elo": Elo()}, sources={"bad": source})


def test_study_command_runs_a_grid_with_a_match_source(tmp_path):
    from statespace.app.cli import main

    grid = tmp_path / "grid.toml"
    grid.write_text('seeds = [0]\n[methods]\nelo = "elo"\nstephenson = "stephenson"\n[sources]\n'
                    'league = { scenario = "simulate_matches", n_players = 12, n_matches = 50, sides = 4 }\n')
    out, err = io.StringIO(), io.StringIO()
    from contextlib import redirect_stderr, redirect_stdout

    with redirect_stdout(out), redirect_stderr(err):
        assert main(["study", str(grid), "--out", str(tmp_path / "t.csv"), "--quiet"]) == 0
    assert "pair_log_loss" in out.getvalue()
    assert "1 of 2 tasks failed" in err.getvalue() and "stephenson rates games of two competitors only" in err.getvalue()
    written = pd.read_csv(tmp_path / "t.csv")
    assert list(written["mode"]) == ["online", "online"]
