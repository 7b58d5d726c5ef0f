"""Hyperparameter fitting: recovers a known drift, beats defaults, respects bounds, and every
filter can rebuild itself from its settings."""

from __future__ import annotations

import numpy as np
import pytest

import statespace as ss
from conftest import data_path, needs_data
from filters import EKF, Elo, Glicko, Glicko2, TrueSkill, WengLin
from filters.tuning import _score

ALL = [Elo(k=20, home=30), Elo.fide(), Glicko(c=50, home=20), Glicko2(tau=0.7), TrueSkill(beta=3.0),
       WengLin("thurstone_mosteller", epsilon=0.3), WengLin("plackett_luce"), EKF(),
       EKF(covariance="scalar"), EKF(covariance="full", iterations=3)]


@pytest.mark.parametrize("method", ALL, ids=lambda m: repr(m))
def test_methods_rebuild_from_their_settings(method):
    clone = method.with_params()
    assert type(clone) is type(method)
    np.testing.assert_array_equal(clone.theta(), method.theta())
    assert clone.get_params().keys() == method.get_params().keys()


def true_drift_model(drift):
    # the drifting scenario's generating model, except for the drift (see statespace/scenarios.py)
    return ss.SkillModel("logistic", ss.ELO_SCALE, 1500.0, 150.0**2, drift, ("threshold", 60.0))


def test_tune_recovers_the_drift_of_the_drifting_scenario():
    truth = 22.5  # statespace.scenarios.drifting: variance 22.5 per day
    sim = ss.scenarios.drifting(seed=0)
    tuned = EKF(model=true_drift_model(100.0)).tune(sim.games, params=["drift"], objective="log_loss_3")
    res = tuned.tuning
    assert abs(res.params["drift"] - truth) <= res.se["drift"]
    assert tuned.model.drift == pytest.approx(res.params["drift"])
    # over several seeds the estimate stays within two standard errors
    for seed in (1, 2, 3):
        sim = ss.scenarios.drifting(seed=seed)
        res = EKF(model=true_drift_model(100.0)).tune(sim.games, params=["drift"], objective="log_loss_3").tuning
        assert abs(res.params["drift"] - truth) <= 2 * res.se["drift"]


def test_tuned_filters_beat_their_defaults_on_held_out_games():
    sim = ss.scenarios.drifting(seed=0)
    train, _ = sim.games.split(0.7)
    for default in (EKF(), Glicko(period_days=1.0)):
        tuned = default.tune(train)
        table = ss.compare({"default": default, "tuned": tuned}, sim.games, split=0.7, mode="online")
        assert table.loc["tuned", "log_loss"] < table.loc["default", "log_loss"]


def test_tuning_minimises_the_objective_and_keeps_a_trace():
    sim = ss.scenarios.balanced(seed=2)
    tuned = Elo(k=5).tune(sim.games, bounds={"k": (2.0, 100.0)})
    res = tuned.tuning
    assert 2.0 <= res.params["k"] <= 100.0
    assert tuned.k == pytest.approx(res.params["k"])
    assert len(res.trace) >= 3 and {"k", "log_loss"} <= set(res.trace.columns)
    assert res.objective == pytest.approx(res.trace["log_loss"].min(), abs=1e-9)
    # a coarse independent grid finds nothing better
    grid = [_score(Elo(k=k), sim.games, "log_loss")[0] for k in np.linspace(2, 100, 50)]
    assert res.objective <= min(grid) + 1e-6


def test_bad_tuning_requests_raise():
    games = ss.scenarios.balanced().games
    with pytest.raises(ValueError, match="cannot tune"):
        Elo().tune(games, params=["beta"])
    with pytest.raises(ValueError, match="objective"):
        Elo().tune(games, objective="accuracy")
    with pytest.raises(ValueError, match="low < high"):
        Elo().tune(games, bounds={"k": (10, 5)})
    with pytest.raises(ValueError, match="nothing to tune"):
        Elo.fide().tune(games)
    with pytest.raises(ValueError, match="burn_in"):
        Elo().tune(games, burn_in=1.0)


def test_home_advantage_only_where_games_have_homes():
    neutral = ss.scenarios.balanced().games
    assert "home" not in Elo().tunable(neutral)
    df = neutral.to_frame()
    df["neutral"] = 0
    assert "home" in Elo().tunable(ss.Games.from_frame(df))


def test_compare_can_tune_on_the_training_part():
    sim = ss.scenarios.drifting(seed=1)
    table = ss.compare([Elo(), EKF()], sim.games, mode="online", tune=True)
    assert "tune_seconds" in table.columns
    assert set(table.attrs["tuned"]) == {"elo", "ekf"}
    assert table.attrs["tuned"]["elo"].n_games == round(0.7 * len(sim.games))


@needs_data
def test_tunes_elo_on_international_football():
    games = ss.Games.from_csv(data_path("intl_football"))
    train, _ = games.split(0.9)
    tuned = Elo().tune(train)
    assert 10 < tuned.k < 100 and 0 < tuned.home < 250  # K and home advantage of football Elo
