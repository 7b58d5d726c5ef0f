"""auto on matches of many sides (statespace.ensemble.auto_matches): tiny simulated leagues, Elo
candidates whose validation scores are known without our scoring code."""

import math
import warnings
from itertools import combinations

import numpy as np
import pytest

from filters import Elo, Stephenson
from statespace.ensemble.auto import auto
from statespace.ensemble.auto_matches import auto_matches
from statespace.ensemble.auto_matches_fit import AutoMatchFit
from statespace.evaluation.compare_matches import compare_matches
from statespace.methods.settings import BoundWarning
from statespace.model.match_scenarios import simulate_matches
from statespace.model.skillmodel import SkillModel

SPLIT = 0.7


@pytest.fixture(scope="module")
def league():
    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.01)
    return simulate_matches(model, n_players=12, n_matches=60, sides=4, seed=3).matches


def _elo_pair_log_loss(k: float, matches) -> float:
    """Elo's validation pairwise log loss pair by pair from its own one-step-ahead ratings:
    P(i ahead of j) = 1 / (1 + 10^(-(r_i - r_j) / 400)); every match has 4 sides, so the weighted
    mean over matches is the mean over all pairs."""
    run = Elo(k=k).run(matches)
    first = int(round(SPLIT * matches.n_matches))
    losses = []
    for m in range(first, matches.n_matches):
        lo, hi = matches.match_ptr[m], matches.match_ptr[m + 1]
        for i, j in combinations(range(lo, hi), 2):
            p = 1.0 / (1.0 + 10.0 ** (-(run.perf_mean[i] - run.perf_mean[j]) / 400.0))
            y = 1.0 if matches.rank[i] < matches.rank[j] else 0.0
            losses.append(-(y * math.log(p) + (1 - y) * math.log(1 - p)))
    return float(np.mean(losses))


def test_auto_picks_the_candidate_with_the_best_validation_score(league):
    # k = 0 never moves a rating: every pair forecast 1/2, a pairwise log loss of log 2 exactly
    fit = auto_matches(league, candidates={"broken": Elo(k=0.0), "sane": Elo(k=32.0)}, tune=False)
    assert isinstance(fit, AutoMatchFit)
    t = fit.table
    assert t.at["broken", "pair_log_loss"] == pytest.approx(math.log(2.0), abs=1e-12)
    assert t.at["sane", "pair_log_loss"] == pytest.approx(_elo_pair_log_loss(32.0, league), rel=1e-9)
    assert t.at["sane", "pair_log_loss"] < math.log(2.0) - 0.01
    assert fit.chosen == "sane" and list(t.index[t["chosen"]]) == ["sane"]
    assert fit.method.k == 32.0
    assert t.at["broken", "delta"] == pytest.approx(math.log(2.0) - t.at["sane", "pair_log_loss"])
    assert t.attrs["n_train"] == 42 and t.attrs["n_validation"] == 18


def test_auto_chooses_by_validation_not_by_the_order_given(league):
    # the same two candidates the other way round: still the sane one; and a k too large to forecast well
    fit = auto_matches(league, candidates={"sane": Elo(k=32.0), "wild": Elo(k=1500.0)}, tune=False)
    wild = _elo_pair_log_loss(1500.0, league)
    assert fit.table.at["wild", "pair_log_loss"] == pytest.approx(wild, rel=1e-9)
    assert fit.chosen == ("sane" if _elo_pair_log_loss(32.0, league) < wild else "wild") == "sane"


def test_auto_returns_ratings_of_the_chosen_method_fitted_on_all_matches(league):
    fit = auto(league, candidates={"broken": Elo(k=0.0), "sane": Elo(k=32.0)}, tune=False)
    assert isinstance(fit, AutoMatchFit)
    ratings = fit.ratings()
    direct = Elo(k=32.0).run(league).ratings()
    assert len(ratings) == league.n_players == len(direct)
    np.testing.assert_allclose(ratings["mean"].to_numpy(), direct["mean"].to_numpy())
    assert list(ratings["player"]) == list(direct["player"])
    assert "chose: sane" in fit.summary() and "broken" in fit.summary()


def test_auto_rows_equal_compare_matches_tuned_rows_and_the_refit_tunes_on_all(league):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        fit = auto_matches(league, candidates={"elo": Elo(k=5.0)}, maxiter=20)
        ref = compare_matches({"elo": Elo(k=5.0)}, league, SPLIT, tune=True,
                              tune_options={"maxiter": 20, "objective": "pair_log_loss"})
    assert fit.table.at["elo", "pair_log_loss"] == pytest.approx(ref.at["elo", "pair_log_loss"], rel=1e-12)
    assert fit.table.at["elo", "settings"]["k"] == pytest.approx(ref.attrs["tuned"]["elo"].params["k"], rel=1e-12)
    assert fit.table.at["elo", "settings"]["k"] != 5.0
    assert fit.table.attrs["objective"] == "pair_log_loss" == fit.refit_tuning.objective_name
    # refit: tuned again on all 60 matches, from the first part's tuned k
    assert fit.refit_tuning is not None and fit.refit_tuning.n_games == league.n_matches
    assert fit.method.k == pytest.approx(fit.refit_tuning.params["k"])
    assert fit.run.method is fit.method
    kept = auto_matches(league, candidates={"elo": Elo(k=5.0)}, maxiter=20, refit=False)
    assert kept.refit_tuning is None and kept.method.k == fit.table.at["elo", "settings"]["k"]


def test_a_candidate_that_cannot_rate_matches_is_a_failed_row_never_chosen(league):
    fit = auto_matches(league, candidates={"stephenson": Stephenson(), "elo": Elo()}, tune=False)
    assert fit.chosen == "elo"
    assert "stephenson rates games of two competitors only" in fit.table.at["stephenson", "error"]
    assert math.isnan(fit.table.at["stephenson", "pair_log_loss"]) and fit.table.index[-1] == "stephenson"
    with pytest.raises(ValueError, match="no candidate could be scored.*stephenson: stephenson rates games"):
        auto_matches(league, candidates={"stephenson": Stephenson()}, tune=False)


@pytest.mark.parametrize("options, message", [
    ({"split": 1.5}, "auto: split=1.5"),
    ({"split": 0.001}, "auto: split=0.001"),
    ({"tune": "yes"}, "tune must be True or False"),
    ({"maxiter": 0}, "maxiter must be a whole number"),
    ({"objective": "brier"}, "objective must be None or one of loglik, pair_log_loss"),
    ({"candidates": {"x": "no_such_method"}}, "candidate 'x'"),
    ({"candidates": [Elo(), Elo()]}, "has the name 'elo' of another"),
])
def test_bad_options_are_refused_naming_them(league, options, message):
    with pytest.raises(ValueError, match=message):
        auto_matches(league, **options)


def test_level_candidates_go_to_the_fewest_tuned_settings():
    from statespace.ensemble.auto_matches import _pick
    from statespace.ensemble.auto_search import TIE

    rows = [{"candidate": "tuned", "pair_log_loss": 0.5, "settings": {"k": 20.0}},
            {"candidate": "plain", "pair_log_loss": 0.5 + TIE / 2, "settings": {}},
            {"candidate": "far", "pair_log_loss": 0.5 + 2 * TIE, "settings": {}}]
    assert _pick(rows)["candidate"] == "plain"
    rows[1]["pair_log_loss"] = 0.5 + 2 * TIE
    assert _pick(rows)["candidate"] == "tuned"
    assert _pick([{"candidate": "x", "pair_log_loss": float("nan"), "settings": {}}]) is None


def test_cli_compare_auto_on_matches_adds_the_row_chosen_on_the_training_matches(capsys, monkeypatch):
    import json

    from statespace.app.cli import main
    from statespace.ensemble import auto_matches as module
    from statespace.model.match_scenarios import team_league

    monkeypatch.setattr(module, "DEFAULT_CANDIDATES", ("elo", "wenglin"))  # two quick candidates
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        assert main(["compare", "--scenario", "team_league", "--seed", "2", "--methods", "elo", "--auto", "--json",
                     "--quiet"]) == 0
        rows = {r["method"]: r for r in json.loads(capsys.readouterr().out)["methods"]}
        assert set(rows) == {"elo", "auto"}
        matches = team_league(seed=2).matches
        chosen = auto_matches(matches.take(np.arange(700))).method  # the choice sees the training matches only
        ref = compare_matches({"auto": chosen}, matches, SPLIT)
    assert rows["auto"]["spec"] == repr(chosen)
    assert main(["compare", "--scenario", "team_league", "--seed", "2", "--methods", "elo", "--auto", "--quiet"]) == 0
    assert f"auto: chose {chosen.name} on the 700 training matches" in capsys.readouterr().out
    assert rows["auto"]["pair_log_loss"] == pytest.approx(ref.at["auto", "pair_log_loss"], rel=1e-12)


def test_the_default_candidates_are_registered_methods_that_rate_matches():
    from statespace.ensemble.auto_matches import DEFAULT_CANDIDATES
    from statespace.methods.registry import get

    for name in DEFAULT_CANDIDATES:
        method = get(name)()
        assert getattr(type(method), "_match", None) is not None, name
        method.match_forecast()
