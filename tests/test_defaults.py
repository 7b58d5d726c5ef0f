"""Defaults that don't trap (issue: draw probability on draw-free data, settings on a tuning
bound, an undefined standard error printed as a number, a row error without the way past it).

Expected values here are properties the settings promise (no draw forecast on draw-free games,
the objective's name, the bound a setting was pinned to), not numbers read from our own output.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import filters
import statespace as ss
from filters import Elo, TrueSkill, WengLin
from filters.tuning import default_objective
from statespace import Games, GamesError
from statespace.app.cli import _format_table, main
from statespace.methods.settings import BoundWarning, DrawWarning, TuneResult


def draw_free(seed: int = 0, n_games: int = 2000) -> Games:
    """Games from the probit model in TrueSkill's units with no draw model: no game is a draw."""
    model = ss.SkillModel("probit", math.sqrt(2.0) * 25 / 6, 25.0, (25 / 3) ** 2, 0.05, "none")
    games = ss.simulate(model, 40, n_games, seed=seed).games
    assert not np.any(games.score == 0.5)
    return games


# ---------------------------------------------------------------------- draws learned from the games
@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_default_trueskill_forecasts_no_draws_on_draw_free_games_and_says_so():
    games = draw_free()
    method = TrueSkill()
    assert method.draw_probability is None and method.get_params()["draw_probability"] is None
    fit = method.fit(games)
    assert fit.method.draw_probability == 0.0
    assert fit.method.get_params()["draw_probability"] == 0.0
    assert "draw_probability=0" in repr(fit.method) and "draw_probability=0" in repr(fit)
    assert np.all(fit.proba[:, 1] < 1e-12)
    np.testing.assert_allclose(fit.proba.sum(axis=1), 1.0, atol=1e-12)
    assert fit.predict_proba(games)[:, 1].max() < 1e-12
    # the method itself is unchanged: it learns again on other games
    assert method.resolved(ss.scenarios.balanced(seed=0).games).draw_probability == pytest.approx(0.10)


def test_default_trueskill_is_tuned_on_the_two_outcome_loss_of_draw_free_games():
    games = draw_free(seed=1)
    assert default_objective(TrueSkill(), games) == "log_loss"
    assert default_objective(TrueSkill()) == "log_loss_3"  # no games: by the draw model alone
    tuned = TrueSkill().tune(games, maxiter=40)
    assert tuned.tuning.objective_name == "log_loss"
    assert "draw_probability" not in tuned.tuning.params
    assert tuned.draw_probability == 0.0
    assert tuned.run(games).proba[:, 1].max() < 1e-12


def test_the_learned_default_beats_the_old_one_on_draw_free_games():
    """Old: draw probability 0.10 tuned on the three-outcome loss; new: learned (0), tuned on the
    two-outcome loss. Scored by the held-out three-outcome log loss, the proper score of a
    forecast that gives draws a share."""
    games = draw_free(seed=2)
    new = ss.compare([TrueSkill()], games, split=0.7, mode="online", tune=True, tune_options={"maxiter": 40})
    with pytest.warns(DrawWarning):  # the old setting forecasts draws these games never have
        old = ss.compare([TrueSkill(draw_probability=0.10)], games, split=0.7, mode="online", tune=True,
                         tune_options={"objective": "log_loss_3", "maxiter": 40})
    assert new.attrs["tuned"]["trueskill"].objective_name == "log_loss"
    assert old.attrs["tuned"]["trueskill"].objective_name == "log_loss_3"
    assert new["log_loss_3"].iloc[0] < old["log_loss_3"].iloc[0]


def test_games_with_draws_keep_the_classic_draw_probability_and_tune_it():
    games = ss.scenarios.balanced(seed=3).games
    assert np.any(games.score == 0.5)
    fit = TrueSkill().fit(games)
    assert fit.method.draw_probability == pytest.approx(0.10)
    np.testing.assert_allclose(fit.proba, TrueSkill(draw_probability=0.10).run(games).proba, rtol=0, atol=0)
    assert default_objective(TrueSkill(), games) == "log_loss_3"
    tuned = TrueSkill().tune(games, params=["draw_probability"], maxiter=30)
    assert tuned.tuning.objective_name == "log_loss_3"
    assert tuned.tuning.start["draw_probability"] == pytest.approx(0.10)


def test_a_short_table_without_draws_is_no_evidence_against_them():
    """A dozen decisive games happen by chance at a 10% draw rate: the classic value stays and an
    explicit one is not warned about."""
    games = draw_free(seed=4, n_games=12)
    assert TrueSkill().resolved(games).draw_probability == pytest.approx(0.10)
    assert WengLin("tm").resolved(games).epsilon == pytest.approx(0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DrawWarning)
        TrueSkill(draw_probability=0.10).fit(games)
        TrueSkill().fit(games)


def test_an_explicit_draw_probability_on_draw_free_games_is_honoured_with_a_warning():
    games = draw_free(seed=5)
    with pytest.warns(DrawWarning, match=r"draw_probability=0\.1 on 2,000 games without a draw.*"
                                         r"leave draw_probability out.*draw_probability=0") as rec:
        fit = TrueSkill(draw_probability=0.10).fit(games)
    assert len(rec) == 1 and rec[0].filename == __file__  # names the caller's line
    assert fit.method.draw_probability == pytest.approx(0.10)
    assert fit.proba[:, 1].min() > 0
    # tuning warns once, not once per evaluation
    with pytest.warns(DrawWarning) as rec:
        TrueSkill(draw_probability=0.10).tune(games, maxiter=10, standard_errors=False)
    assert sum(issubclass(w.category, DrawWarning) for w in rec) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", DrawWarning)
        TrueSkill(draw_probability=0.0).fit(games)  # explicit 0: nothing to say


def test_wenglin_thurstone_mosteller_learns_its_margin_and_the_others_take_none():
    games = draw_free(seed=6)
    tm = WengLin("tm")
    assert tm.epsilon is None
    fit = tm.fit(games)
    assert fit.method.epsilon == 0.0 and "epsilon=0" in repr(fit.method)
    assert fit.proba[:, 1].max() < 1e-12
    assert WengLin("tm").fit(ss.scenarios.balanced(seed=0).games).method.epsilon == pytest.approx(0.1)
    assert WengLin("tm").tune(games, maxiter=20, standard_errors=False).tuning.objective_name == "log_loss"
    with pytest.warns(DrawWarning, match="epsilon=0.5"):
        WengLin("tm", epsilon=0.5).fit(games)
    bt = WengLin("bt")
    assert bt.resolved(games) is bt and bt.get_params()["epsilon"] is None


def test_threshold_ekf_on_draw_free_games_is_tuned_on_the_two_outcome_loss():
    method = filters.EKF(ss.SkillModel("logistic", ss.ELO_SCALE, 1500.0, 200.0**2, 10.0, ("threshold", 50.0)))
    games = draw_free(seed=7, n_games=400)
    assert default_objective(method) == "log_loss_3"
    assert default_objective(method, games) == "log_loss"


# ---------------------------------------------------------------------- settings on a tuning bound
def test_tune_flags_settings_that_end_on_a_bound():
    games = ss.scenarios.balanced(seed=0).games
    # K of a few points cannot follow skills of sd 200: the upper bound stops it
    with pytest.warns(BoundWarning, match=r"k=3 at its upper bound 3.*bounds=\{'k': \(low, high\)\}") as rec:
        tuned = Elo(k=2.0).tune(games, params=["k"], bounds={"k": (1.0, 3.0)})
    assert rec[0].filename == __file__
    result = tuned.tuning
    assert result.on_bound == ("k",)
    assert result.bound_of("k") == ("upper", 3.0)
    assert result.bounds["k"] == (1.0, 3.0)
    assert "k=3 " in repr(result) and "(at upper bound 3)" in repr(result)
    # inside a wide box: nothing flagged, nothing warned
    with warnings.catch_warnings():
        warnings.simplefilter("error", BoundWarning)
        free = Elo(k=20.0).tune(games, params=["k"], bounds={"k": (1.0, 500.0)}).tuning
    assert free.on_bound == () and "bound" not in repr(free)
    assert filters.BoundWarning is BoundWarning and issubclass(BoundWarning, UserWarning)


def test_an_undefined_standard_error_is_shown_as_n_a():
    result = TuneResult({"k": 20.0, "home": 30.0}, {"k": float("nan"), "home": 2.5}, 0.6, "log_loss", 100,
                        pd.DataFrame(), 0.1, True)
    text = repr(result)
    assert "k=20 ± n/a" in text and "home=30 ± 2.5" in text
    assert "nan" not in text.lower().replace("n/a", "")


def test_the_compare_table_prints_an_undefined_se_as_n_a():
    table = pd.DataFrame({"log_loss": [0.5, 0.6], "brier": [0.2, 0.21], "accuracy": [0.6, 0.55],
                          "log_loss_3": [np.nan, np.nan], "fit_seconds": [0.1, 0.2],
                          "delta_log_loss": [0.0, 0.1], "delta_se": [0.0, np.nan]}, index=["a", "b"])
    text = _format_table(table)
    assert "+0.1000 ± n/a" in text
    assert "nan" not in text


# ---------------------------------------------------------------------- the way past an invalid row
def test_a_row_error_suggests_dropping_invalid_rows():
    with pytest.raises(GamesError, match=r"row 1.*errors=\"drop\".*--drop-invalid") as info:
        Games.from_arrays(["2024-01-01", "2024-01-02", "2024-01-03"], ["A", "B", "C"], ["B", "C", "A"], [1, 2, 0])
    assert info.value.rows == [1] and info.value.column == "score"


def test_the_command_line_row_error_suggests_drop_invalid(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("time,a,b,score\n2020-01-01,x,y,1\n2020-01-02,x,y,2\n2020-01-03,y,z,0\n")
    code = main(["rate", str(path), "--method", "elo"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "row 1 (line 3 of bad.csv)" in err and "--drop-invalid" in err
    code = main(["rate", str(path), "--method", "elo", "--drop-invalid"])
    captured = capsys.readouterr()
    assert code == 0 and "dropped 1 invalid row" in captured.err
