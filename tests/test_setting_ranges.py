"""The one rule for settings and results (statespace.model.ranges), through the API, tuning and the CLI.

Each case was a meaningless number presented as a result, or an error that did not say what was
wrong: Glicko-2 with ``tau=10`` printed ratings near 4.6e296 with exit 0; the EKF with a drift or a
prior variance of 1e300 gave means near 5.8e297; ``Elo(SkillModel(...))`` said ``k`` must be a
number; ``tune`` with a box beyond a setting's range failed inside the search; its at-bound warning
said a drift of 4.7 was at its lower bound 0. Every filter over its whole range is in
tests/test_extremes.py.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import statespace as ss
from filters import EKF, Elo, Glicko2, TrueSkill
from filters.tuning import at_bound
from statespace import Margin, SkillModel
from statespace.model.ranges import RESULT_SCALES, ResultRangeError, check_results, number, variance
from statespace.methods.settings import BoundWarning


def league(n: int = 300, seed: int = 0) -> ss.Games:
    return ss.simulate(SkillModel("logistic", ss.ELO_SCALE, 1500.0, 150.0**2, 4.0), 10, n, seed=seed).games


# ---------------------------------------------------------------- construction
@pytest.mark.parametrize("make, words", [
    (lambda: Glicko2(tau=10), ["Glicko2", "tau", "(0, 3]", "10"]),
    (lambda: Glicko2(tau=1e308), ["Glicko2", "tau", "(0, 3]"]),
    (lambda: Glicko2(initial_volatility=100), ["Glicko2", "initial_volatility", "(0, 1]", "100"]),
    (lambda: EKF(SkillModel(scale=1.0, drift=1e300)), ["SkillModel", "drift", "1e6", "1e+300"]),
    (lambda: EKF(SkillModel(scale=1.0, prior_var=1e300)), ["SkillModel", "prior_var", "1e6"]),
    (lambda: TrueSkill(tau=1e150), ["TrueSkill", "tau", "1000 scales"]),
    (lambda: Elo(k=1e190), ["Elo", "k", "1737.18", "10 scales"]),
])
def test_a_setting_beyond_its_meaningful_range_is_refused_naming_method_setting_range_and_value(make, words):
    with pytest.raises(ValueError) as info:
        make()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_numbers_of_any_numpy_type_are_numbers_and_bools_are_not():
    model = SkillModel(scale=np.int64(2), drift=np.float32(0.5), prior_var=np.int32(1))
    assert (model.scale, model.drift, model.prior_var) == (2.0, 0.5, 1.0)
    assert Elo(k=np.int64(20)).k == 20.0
    assert number("m", "x", np.uint8(3), 0, 5) == 3.0
    with pytest.raises(ValueError, match="x must be"):
        number("m", "x", True, 0, 5)


@pytest.mark.parametrize("value", [SkillModel(), Margin(sd=1.0), Elo()])
def test_a_positional_argument_of_the_wrong_kind_names_what_was_passed_and_what_the_method_takes(value):
    with pytest.raises(TypeError) as info:
        Elo(value)
    text = str(info.value)
    assert "'k'" in text and type(value).__name__ in text
    if isinstance(value, SkillModel):
        assert "filters.EKF(model)" in text  # where a SkillModel is taken


# ---------------------------------------------------------------- results
def test_ratings_beyond_the_stated_bound_are_an_error_not_output():
    games = league(60)
    heavy = games.with_weights(np.r_[1e100, np.ones(len(games) - 1)])  # one game counted 1e100 times
    with pytest.raises(ResultRangeError, match=r"elo: the rating of .* beyond 1e9 scales"):
        Elo().run(heavy)
    run = Elo().run(games)  # the same games at weight 1: ratings well inside the bound
    assert np.abs(run.state.values[:, 0] - 1500.0).max() < 10 * ss.ELO_SCALE


def test_check_results_names_the_competitor_and_catches_nan():
    check_results("m", ["a", "b"], np.array([0.0, RESULT_SCALES]), np.array([1.0, 1.0]), alpha=1.0)
    with pytest.raises(ResultRangeError, match="rating of 'b'"):
        check_results("m", ["a", "b"], np.array([0.0, 2 * RESULT_SCALES]), alpha=1.0)
    with pytest.raises(ResultRangeError, match="sd of 'a'"):
        check_results("m", ["a", "b"], np.zeros(2), np.array([np.nan, 1.0]), alpha=1.0)
    with pytest.raises(ValueError, match=r"drift must be a finite number in \[0, 4e6\]"):
        variance("m", "drift", 5e6, 2.0)


# ---------------------------------------------------------------- tuning
@pytest.mark.parametrize("box, words", [
    ((1e6, 1e300), ["search box of 'k'", "accepted range", "k must be a finite number in [0, 1737.18]"]),
    ((0, np.inf), ["search box of 'k'", "finite"]),
    ((50, 10), ["search box of 'k'", "low < high"]),
])
def test_tune_checks_its_search_box_before_searching(box, words):
    with pytest.raises(ValueError) as info:
        Elo().tune(league(40), params=["k"], bounds={"k": box})
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_a_box_beyond_a_models_range_is_refused_naming_the_setting():
    games = ss.Games.from_arrays(np.arange(4.0), ["a", "b", "a", "c"], ["b", "c", "c", "a"],
                                 score_a=[2, 1, 0, 3], score_b=[1, 1, 2, 0])
    method = EKF(SkillModel(scale=1.0, drift=0.01, observation=Margin(sd=1.0)))
    with pytest.raises(ValueError, match=r"search box of 'drift'.*drift must be"):
        method.tune(games, params=["drift"], bounds={"drift": (0, 1e300)})


def test_the_at_bound_warning_is_true():
    """In a box as wide as (0, 1e6) a drift of 4.7 is not at its lower bound 0; on the bound it is."""
    assert at_bound({"drift": 4.72543}, {"drift": (0.0, 1e6)}) == ()
    assert at_bound({"drift": 0.0}, {"drift": (0.0, 1e6)}) == ("drift",)
    assert at_bound({"home": 399.9}, {"home": (-400.0, 400.0)}) == ("home",)
    assert at_bound({"home": 0.05}, {"home": (0.0, 400.0)}) == ()
    assert at_bound({"k": 1.0005}, {"k": (1.0, 200.0)}) == ("k",)  # log scale, as before


def test_tune_in_a_wide_box_does_not_warn_of_a_bound_it_is_not_on():
    games = league(400, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        result = Elo().tune(games, params=["k"], bounds={"k": (0.0, 1500.0)}, standard_errors=False).tuning
    assert 0.0 < result.params["k"] < 1500.0 and result.on_bound == ()


def test_tune_treats_a_run_whose_arithmetic_broke_as_a_loss():
    from filters.tuning import _score

    games = league(60)
    heavy = games.with_weights(np.r_[1e100, np.ones(len(games) - 1)])
    value, per = _score(Elo(), heavy, "log_loss")
    assert value == 1e6 and per.shape == (len(heavy),)


# ---------------------------------------------------------------- the command line
def test_the_cli_refuses_a_meaningless_setting_in_one_line(tmp_path):
    path = tmp_path / "games.csv"
    league(50).to_frame().to_csv(path, index=False)
    out = subprocess.run([sys.executable, "-m", "statespace", "rate", str(path), "--method", "glicko2:tau=10"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 2, out
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "tau" in lines[0] and "(0, 3]" in lines[0], out.stderr
    assert "e+29" not in out.stdout and "Traceback" not in out.stderr


def test_a_record_the_observation_cannot_score_is_a_row_error_or_dropped_from_the_cli(tmp_path):
    """A draw where the method's draw model gives draws no chance (TrueSkill with draw_probability=0):
    a GamesError naming the row and column from the filters, one line from the CLI; with
    --drop-invalid the row is dropped and counted on one warning line."""
    games = ss.Games.from_arrays([0, 1, 2, 3], ["a", "b", "c", "a"], ["b", "c", "a", "c"], [1.0, 0.5, 0.0, 1.0])
    with pytest.raises(ss.GamesError, match=r"score.*row 1"):
        TrueSkill(draw_probability=0.0).fit(games)
    path = tmp_path / "games.csv"
    games.to_frame().to_csv(path, index=False)
    command = [sys.executable, "-m", "statespace", "rate", str(path), "--method", "trueskill:draw_probability=0"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and "row 1" in out.stderr, out
    out = subprocess.run(command + ["--drop-invalid"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "warning" in out.stderr and "1 row" in out.stderr and "Traceback" not in out.stderr, out.stderr
