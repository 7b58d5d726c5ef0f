"""A fitted method never forecasts games it has already seen as if they were new.

``predict_proba`` (and ``predict_diff``) of games inside the fitted span -- dated before the last
fitted game, or the fitted games themselves at that time -- warns with
``statespace.SeenGamesWarning``, naming the honest alternative: a run's one-step-ahead ``proba``,
``compare(..., mode="online")`` or ``"walk_forward"``. Games after the fitted span, and new games at
its last time (a time-order split often puts one day's games on both sides), forecast silently; so
do compare, blend and auto internally, which only ever forecast after what they fitted.

The game tables are tiny and written out; which games are "inside the span" follows from their
dates, not from the code.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import statespace as ss
from filters import EKF, Elo
from smoothers import Colley, LaplaceSmoother, TrueSkillThroughTime
from statespace.ensemble.auto import Variant

UNIT = ss.SkillModel("logistic", 1.0, 0.0, 1.0, 0.1, "half")


def table(days, pairs, scores, start="2022-01-01") -> ss.Games:
    return ss.Games.from_frame(pd.DataFrame({
        "time": pd.to_datetime(start) + pd.to_timedelta(days, unit="D"),
        "a": [p[0] for p in pairs], "b": [p[1] for p in pairs], "score": scores}))


#: twelve games over ten days; the last day (day 9) has two games, rows 10 and 11
GAMES = table([0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 9],
              ["AB", "CD", "AC", "BD", "AD", "BC", "AB", "CD", "AC", "BD", "AD", "BC"],
              [1, 0, 0.5, 1, 0, 1, 1, 0.5, 0, 1, 1, 0])


@pytest.fixture(autouse=True)
def seen_games_are_errors():
    """Every test here fails on a SeenGamesWarning it did not ask for."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ss.SeenGamesWarning)
        yield


FITS = [
    pytest.param(lambda g: Elo().run(g), "run.proba", id="elo run"),
    pytest.param(lambda g: EKF(UNIT).fit(g), "run.proba", id="ekf run"),
    pytest.param(lambda g: LaplaceSmoother(UNIT).fit(g), "walk_forward", id="laplace"),
    pytest.param(lambda g: TrueSkillThroughTime().fit(g), "walk_forward", id="ttt"),
    pytest.param(lambda g: Colley(link_blocks=2).fit(g), "walk_forward", id="colley"),
]


@pytest.mark.parametrize("fit, honest", FITS)
def test_forecasting_the_fitted_games_warns_and_names_the_honest_alternative(fit, honest):
    fitted = fit(GAMES)
    with pytest.warns(ss.SeenGamesWarning, match=rf"predict_proba: 12 of 12 games .* row 0, at 2022-01-01; the "
                                                 rf"fitted games end at 2022-01-10.*{honest}"):
        p = fitted.predict_proba(GAMES)
    assert p.shape == (12, 3)  # a warning, not a refusal: an in-sample fit is sometimes what is wanted


@pytest.mark.parametrize("fit, honest", FITS)
def test_games_before_the_end_warn_later_games_do_not(fit, honest):
    fitted = fit(GAMES)
    # a game the fit never saw, but dated inside its span (day 5 of 0..9), is forecast from later results
    with pytest.warns(ss.SeenGamesWarning, match="1 of 2 games"):
        fitted.predict_proba(table([5, 10], ["AB", "CD"], [1, 1]))
    # after the span: silent
    assert fitted.predict_proba(table([10, 30], ["AB", "CE"], [1, 0])).shape == (2, 3)


def test_new_games_at_the_last_fitted_time_are_not_seen_games():
    # a time-order split of one day's games: the first part fits, the rest (the same day) is held out
    train, test = GAMES.split(11 / 12)
    assert train.days().max() == test.days().min()
    for fitted in (Elo().run(train), LaplaceSmoother(UNIT).fit(train)):
        assert fitted.predict_proba(test).shape == (1, 3)
        # but the fitted games of that day are seen
        with pytest.warns(ss.SeenGamesWarning, match="1 of 1 games"):
            fitted.predict_proba(train.take([10]))


def test_rating_periods_compare_periods():
    weekly = GAMES.with_periods(every="week")  # 2022-01-01 is a Saturday: days 0-1, 2-8, 9
    run = Elo().run(weekly.take(np.arange(10)))  # periods up to the one of days 2-8
    later = table([9, 10], ["AB", "CD"], [1, 0]).with_periods(every="week")
    assert run.predict_proba(later).shape == (2, 3)
    earlier = table([1, 9], ["AB", "CD"], [1, 0]).with_periods(every="week")
    with pytest.warns(ss.SeenGamesWarning, match=r"1 of 2 games .* at period \d+; the fitted games end at period"):
        run.predict_proba(earlier)


def test_predict_diff_warns_too():
    fit = LaplaceSmoother(UNIT).fit(GAMES)
    with pytest.warns(ss.SeenGamesWarning, match="predict_diff"):
        fit.predict_diff(GAMES)
    run = EKF(UNIT).run(GAMES)
    with pytest.warns(ss.SeenGamesWarning, match="predict_diff"):
        run.predict_diff(GAMES)


def test_the_warning_points_at_the_callers_line():
    with pytest.warns(ss.SeenGamesWarning) as record:
        Elo().run(GAMES).predict_proba(GAMES)
    assert record[0].filename == __file__
    with pytest.warns(ss.SeenGamesWarning) as record:
        LaplaceSmoother(UNIT).fit(GAMES).predict_proba(GAMES)
    assert record[0].filename == __file__


def test_users_can_silence_it_by_category():
    assert issubclass(ss.SeenGamesWarning, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=ss.SeenGamesWarning)
        Elo().run(GAMES).predict_proba(GAMES)


def test_compare_and_blend_never_forecast_seen_games():
    sim = ss.simulate(ss.SkillModel("logistic", ss.ELO_SCALE, 1500, 200**2, 50, "half"), 6, 120, seed=4).games
    sim = sim.with_periods(every=3).take(np.arange(len(sim)))  # periods, and one day's games on both sides
    methods = {"elo": Elo(), "laplace": LaplaceSmoother(), "colley": Colley(link_blocks=2)}
    for mode in ("frozen", "walk_forward"):
        ss.compare(methods, sim, split=0.7, mode=mode, every=7, progress=False)
    blend = ss.Blend([Elo(), EKF()], split=0.7).fit(sim)
    assert blend.proba.shape == (len(sim), 3)


def test_auto_warns_in_its_own_words():
    sim = ss.simulate(ss.SkillModel("logistic", ss.ELO_SCALE, 1500, 200**2, 50, "half"), 6, 120, seed=5).games
    train, test = sim.split(0.8)
    one = [Variant("outcome", "none")]
    fit = ss.auto(sim, split=0.8, candidates=one, maxiter=5, progress=False)
    with pytest.warns(ss.SeenGamesWarning, match=r"auto: predict_proba: 24 of 24 games.*fit\.proba") as record:
        fit.predict_proba(test)
    assert len(record) == 1  # auto's own words, not its run's as well
    fit_train = ss.auto(train, candidates=one, maxiter=5, progress=False)
    assert fit_train.predict_proba(test).shape == (len(test), 3)  # honest: the fit saw none of them
