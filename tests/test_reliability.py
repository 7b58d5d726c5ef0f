"""Regression tests for the reliability audit: each case is the audit's minimal
reproduction, written here, and the behaviour the issue asks for."""

from __future__ import annotations

import math
import os
import stat
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import statespace as ss
from filters import Glicko, TrueSkill


# ---------------------------------------------------------------- identities
def test_a_float_id_column_names_the_same_competitor_as_an_integer_one():
    """A NaN upcast column a to float: competitor 2 must not split into '2.0' and '2'."""
    df = pd.DataFrame({"time": [0, 1, 2], "a": [2.0, 3.0, 4.0], "b": [3, 2, 2], "score": [1, 0, 0.5]})
    g = ss.Games.from_frame(df)
    assert sorted(g.players) == ["2", "3", "4"]


def test_a_missing_id_in_a_float_column_is_a_row_error():
    df = pd.DataFrame({"time": [0, 1], "a": [2.0, np.nan], "b": [3, 2], "score": [1, 0]})
    with pytest.raises(ss.GamesError, match=r"column 'a'.*row 1"):
        ss.Games.from_frame(df)


def test_composed_and_decomposed_spellings_are_one_competitor():
    nfc, nfd = "Jos\u00e9", "Jose\u0301"
    g = ss.Games.from_frame(pd.DataFrame({"time": [0, 1], "a": [nfc, nfd], "b": ["X", "X"], "score": [1, 0]}))
    assert list(g.players) == [nfc, "X"]


# ---------------------------------------------------------------- duplicated columns
def test_a_dataframe_with_a_duplicated_column_is_refused_naming_it():
    df = pd.DataFrame([[0, "A", "B", 1, 1]], columns=["time", "a", "b", "score", "score"])
    with pytest.raises(ss.GamesError, match="duplicate column name 'score'"):
        ss.Games.from_frame(df)


def test_a_csv_header_naming_score_twice_is_refused(tmp_path):
    path = tmp_path / "games.csv"
    path.write_text("time,a,b,score,score\n0,A,B,1,0\n")
    with pytest.raises(ss.GamesError, match="'score' more than once"):
        ss.Games.from_csv(path)
    out = subprocess.run([sys.executable, "-m", "statespace", "rate", str(path)], capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "more than once" in out.stderr


# ---------------------------------------------------------------- settings
def test_settings_that_cannot_work_are_refused_naming_them():
    with pytest.raises(ValueError, match="home"):
        Glicko(home="x")
    teams = [[(25.0, 8.0)], [(25.0, 8.0)]]
    with pytest.raises(ValueError, match="ranks"):
        TrueSkill().rate(teams, ranks=[0, math.nan])
    with pytest.raises(ValueError, match="max_iter"):
        TrueSkill().rate(teams, max_iter=0)


def test_a_negative_seed_is_one_line_and_exit_2():
    out = subprocess.run([sys.executable, "-m", "statespace", "compare", "--seed", "-5"], capture_output=True,
                         text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().count("\n") == 0 and "--seed" in out.stderr


# ---------------------------------------------------------------- the PyTensor cache
def test_the_pytensor_cache_is_private(tmp_path):
    from statespace._runtime.pytensor_config import _private_dir

    path = _private_dir(str(tmp_path / "cache"))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)
    assert _private_dir(str(loose)) == str(loose) and stat.S_IMODE(os.stat(loose).st_mode) == 0o700


def test_a_cache_path_that_is_a_link_is_not_used(tmp_path):
    from statespace._runtime.pytensor_config import _private_dir

    target = tmp_path / "elsewhere"
    target.mkdir()
    link = tmp_path / "link"
    link.symlink_to(target)
    with pytest.warns(RuntimeWarning, match="not a private directory"):
        used = _private_dir(str(link))
    assert used != str(link) and stat.S_IMODE(os.stat(used).st_mode) == 0o700


# ---------------------------------------------------------------- forecasting from a big state
@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_forecasts_from_a_state_reuse_its_name_index():
    """``predict_proba`` on a few games must not rebuild the name index of every competitor on
    each call (0.5 s a call with a million competitors): the index is built once per state, and the
    forecasts are those of a fresh state."""
    from filters import Elo

    g = ss.scenarios.balanced(seed=1).games
    run = Elo().run(g)
    first = run.state.index()
    p1 = Elo().predict_proba(run.state, [g.players[0]], [g.players[1]])
    assert run.state.index() is first
    fresh = Elo().predict_proba(run.state.copy(), [g.players[0]], [g.players[1]])
    np.testing.assert_array_equal(p1, fresh)
    test = g.take(np.arange(5))
    np.testing.assert_array_equal(run.predict_proba(test), run.predict_proba(test))
    assert run.state.index() is first
