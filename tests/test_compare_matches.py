"""compare_matches (statespace.evaluation.compare_matches) and `statespace compare` on matches of many sides:
tiny simulated leagues, multiplayer Elo and methods made up here."""

import json
import math
import re
import warnings
from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from filters import Elo
from statespace.app.cli import main
from statespace.data.matches import Matches
from statespace.evaluation.compare import compare
from statespace.evaluation.compare_matches import compare_matches, match_methods
from statespace.evaluation.tune_matches import tune_matches
from statespace.methods.settings import BoundWarning
from statespace.model.match_scenarios import simulate_matches
from statespace.model.ranking_forecast import RankingForecast
from statespace.model.ranking_scores import ranking_loglik
from statespace.model.skillmodel import SkillModel

COLUMNS = ["observation", "loglik", "loglik_se", "pair_log_loss", "pair_log_loss_se", "pair_inversion",
           "pair_inversion_se", "rank_deviation", "rank_deviation_se", "top1", "top1_se", "n_matches", "n_sides",
           "seconds"]


@pytest.fixture(scope="module")
def league() -> Matches:
    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.01)
    return simulate_matches(model, n_players=12, n_matches=40, sides=4, seed=1).matches


class PLElo(Elo):
    """Elo's ratings read as a Plackett-Luce forecast (a made-up method: a second observation)."""

    def match_forecast(self):
        return RankingForecast("plackett_luce", 150.0)


class GamesOnly(Elo):
    """A filter without a match kernel."""

    _match = None


def _elo_references(matches: Matches, split: float):
    """Elo's pairwise log loss and pair inversion of each held-out match, pair by pair, from the
    one-step-ahead ratings of Elo's own run: P(i ahead of j) = 1 / (1 + 10^(-(r_i - r_j) / 400))."""
    run = Elo().run(matches)
    k = int(round(split * matches.n_matches))
    losses, ordered = [], []
    for m in range(k, matches.n_matches):
        lo, hi = matches.match_ptr[m], matches.match_ptr[m + 1]
        loss, good, pairs = 0.0, 0, 0
        for i, j in combinations(range(lo, hi), 2):
            p = 1.0 / (1.0 + 10.0 ** (-(run.perf_mean[i] - run.perf_mean[j]) / 400.0))
            ri, rj = matches.rank[i], matches.rank[j]
            y = 1.0 if ri < rj else (0.0 if ri > rj else 0.5)
            loss -= y * math.log(p) + (1 - y) * math.log(1 - p)
            pairs += 1
            good += ri == rj or (ri < rj) == (run.perf_mean[i] > run.perf_mean[j])
        losses.append(loss / pairs)
        ordered.append(100.0 * good / pairs)
    return np.array(losses), np.array(ordered), np.diff(matches.match_ptr)[k:]


def test_elo_row_equals_the_pairs_scored_one_by_one(league):
    table = compare_matches([Elo()], league, split=0.5)
    losses, ordered, sides = _elo_references(league, 0.5)
    row = table.loc["elo"]
    assert list(table.columns) == COLUMNS
    assert row["observation"] == "bradley_terry"
    assert row["pair_log_loss"] == pytest.approx(np.sum(losses * sides) / np.sum(sides), rel=1e-12)
    assert row["pair_inversion"] == pytest.approx(np.sum(ordered * sides) / np.sum(sides), rel=1e-12)
    assert row["n_matches"] == 20 and row["n_sides"] == 80
    # Elo's ranking: Plackett-Luce at its scale 400 / ln 10, whose pairs are its games
    want = []
    perf = Elo().run(league).perf_mean
    for m in range(int(round(0.5 * league.n_matches)), league.n_matches):
        lo, hi = league.match_ptr[m], league.match_ptr[m + 1]
        assert np.unique(league.rank[lo:hi]).size == hi - lo  # no tie: the plain Plackett-Luce product
        x = perf[lo:hi][np.argsort(league.rank[lo:hi])] / (400.0 / math.log(10.0))
        want.append(sum(x[p] - np.log(np.sum(np.exp(x[p:]))) for p in range(hi - lo)))
    assert row["loglik"] == pytest.approx(np.mean(want), rel=1e-12)


def test_rows_sorted_by_pair_log_loss_with_paired_errors_against_the_best(league):
    methods = {"elo": Elo(), "elo_k4": Elo(k=4), "pl": PLElo()}
    table = compare_matches(methods, league, split=0.5, progress=False)
    assert table["pair_log_loss"].is_monotonic_increasing
    best = table.index[0]
    assert table.loc[best, "pair_log_loss_se"] == 0.0
    values, weights = table.attrs["values"], table.attrs["weights"]
    for name in table.index[1:]:
        d = values[name]["pair_log_loss"] - values[best]["pair_log_loss"]
        w = weights["pair_log_loss"]
        dbar = np.sum(w * d) / np.sum(w)
        assert table.loc[name, "pair_log_loss_se"] == pytest.approx(np.sqrt(np.sum(w**2 * (d - dbar) ** 2)) / np.sum(w))
    # every method's log-likelihood is a probability of the same ranking: one best across observations
    assert sorted(table["observation"].unique()) == ["bradley_terry", "plackett_luce"]
    assert (table["loglik_se"] == 0.0).sum() == 1
    assert table.loc[table["loglik"].idxmax(), "loglik_se"] == 0.0


def test_online_a_later_result_never_changes_an_earlier_score(league):
    frame = league.to_long()
    last = league.label[-1]
    in_last = frame["match"] == last
    frame.loc[in_last, "rank"] = frame.loc[in_last, "rank"].max() - frame.loc[in_last, "rank"]  # reversed
    changed = Matches.from_long(frame)
    a = compare_matches([Elo()], league, split=0.5).attrs["values"]["elo"]
    b = compare_matches([Elo()], changed, split=0.5).attrs["values"]["elo"]
    for score in a:
        np.testing.assert_array_equal(a[score][:-1], b[score][:-1])
    assert a["pair_log_loss"][-1] != b["pair_log_loss"][-1]


def test_a_method_that_cannot_rate_matches_is_refused_by_name_before_anything_runs(league):
    with pytest.raises(ValueError, match=r"elo rates games of two competitors only"):
        compare_matches({"ok": Elo(), "games_only": GamesOnly()}, league)
    with pytest.raises(ValueError, match=r"elo_fide: FIDE's rules rate games of two"):
        compare_matches([Elo.fide()], league)
    with pytest.raises(ValueError, match=r"method 'x' \(str\) has no run"):
        compare_matches({"x": "elo"}, league)


def test_bad_arguments(league):
    with pytest.raises(ValueError, match="split must be a number strictly between 0 and 1"):
        compare_matches([Elo()], league, split=1.0)
    with pytest.raises(ValueError, match="leaves no held-out matches"):
        compare_matches([Elo()], league, split=0.99)
    with pytest.raises(ValueError, match="scored online only"):
        compare([Elo()], league, mode="frozen")
    with pytest.raises(ValueError, match=r"elo: cannot tune \['beta'\] on matches; tunable: \['k'\]"):
        tune_matches(Elo(), league, params=["beta"])
    with pytest.raises(ValueError, match="objective must be one of loglik, pair_log_loss"):
        tune_matches(Elo(), league, objective="brier")


def _loglik_of(k, matches):
    run = Elo(k=k).run(matches)
    return ranking_loglik(run.forecast, run.perf_mean, run.perf_var, matches.rank, matches.match_ptr)[0]


def test_tuning_on_matches_finds_the_best_k_of_a_grid(league):
    """Elo's k by the mean ranking log-likelihood of its one-step-ahead forecasts: the tuned k is at
    least as good as every k of a grid over its box, and as Elo's default."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        tuned, result = tune_matches(Elo(), league)
    assert result.objective_name == "loglik" and set(result.params) == {"k"}
    best = _loglik_of(result.params["k"], league)
    assert -result.objective == pytest.approx(best)
    for k in np.geomspace(1.0, 200.0, 12):
        assert best >= _loglik_of(k, league) - 1e-6
    assert tuned.k == result.params["k"] and tuned.tuning is result


def test_tuning_a_setting_learnt_from_games_starts_inside_its_box():
    """TrueSkill's draw rate is left to learn (None); on matches with a tie it is tuned from the
    middle of its box, by the ranking log-likelihood (the probability of TrueSkill's chain)."""
    from filters import TrueSkill

    frame = pd.DataFrame({"match": ["a"] * 3 + ["b"] * 3 + ["c"] * 2, "time": [0, 0, 0, 1, 1, 1, 2, 2],
                          "competitor": ["x", "y", "z", "x", "y", "z", "x", "z"],
                          "rank": [0, 1, 2, 0, 0, 2, 1, 0]})
    matches = Matches.from_long(frame, side=None, weight=None, score=None)
    assert TrueSkill().param_value("draw_probability") is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        _, result = tune_matches(TrueSkill(), matches, maxiter=3)
    assert result.objective_name == "loglik" and "draw_probability" in result.params
    lo, hi = result.bounds["draw_probability"]
    assert lo < result.start["draw_probability"] < hi


def test_compare_with_tuning_tunes_on_the_training_matches_only(league):
    table = compare([Elo()], league, split=0.5, tune=True)
    res = table.attrs["tuned"]["elo"]
    assert res.n_games == 20 and "tune_seconds" in table.columns
    train = league.take(np.arange(20))
    direct = tune_matches(Elo(), train)[1]
    assert res.params["k"] == pytest.approx(direct.params["k"])


def test_compare_dispatches_matches_to_compare_matches(league):
    pd.testing.assert_frame_equal(compare([Elo()], league).drop(columns="seconds"),
                                  compare_matches([Elo()], league).drop(columns="seconds"))


class Individuals(Elo):
    """A filter whose own check refuses matches with teams (as Elo-MMR's)."""

    def check_match_table(self, matches):
        if (np.diff(matches.side_ptr) > 1).any():
            raise ValueError("individuals rates contests of individuals")

    def run(self, matches, *args, **kwargs):
        raise AssertionError("ran")


def test_a_methods_own_check_of_the_matches_refuses_before_anything_runs():
    teams = simulate_matches(SkillModel("logistic", 1.0, 0.0, 1.0, 0.01), 8, 10, 2, 2, seed=0).matches
    with pytest.raises(ValueError, match="individuals rates contests of individuals"):
        compare_matches({"elo": Elo(), "ind": Individuals()}, teams)


def test_cli_default_methods_leave_out_one_that_refuses_the_matches_with_a_warning(capsys, monkeypatch):
    import statespace.app.compare_matches_cli as C

    monkeypatch.setattr(C, "registry", lambda default_only=False: {"elo": Elo, "individuals": Individuals})
    assert main(["compare", "--scenario", "team_league", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip() == ("statespace: warning: individuals left out: individuals rates contests of "
                                    "individuals")
    rows = [line.split()[0] for line in captured.out.splitlines()[4:] if line.strip()]
    assert rows[0] == "elo" and "individuals" not in rows


class SlowToBuild(Elo):
    """A filter without a match kernel that must not be built to learn so."""

    _match = None

    def __init__(self):
        raise AssertionError("built")


def test_match_methods_keeps_the_factories_whose_method_rates_matches():
    got = match_methods({"elo": Elo, "elo_fide": Elo.fide, "games_only": GamesOnly, "pl": PLElo,
                         "slow": SlowToBuild})
    assert list(got) == ["elo", "pl"]


# ---------------------------------------------------------------------------- the command line
def test_cli_on_the_ffa_league_prints_the_table(capsys):
    assert main(["compare", "--scenario", "ffa_league", "--methods", "elo,elo:k=8", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("scenario ffa_league (seed 0): 1,000 matches")
    header = next(line for line in out.splitlines() if line.startswith("method"))
    for column in ("observation", "loglik", "pair log loss", "pair inv %", "rank dev %", "top-1", "run s"):
        assert column in header
    assert "elo:k=8" in out


def test_cli_json_on_matches(capsys):
    assert main(["compare", "--scenario", "team_league", "--methods", "elo", "--json", "--split", "0.9"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["n_matches"] == 1000 and record["n_test"] == 100
    (row,) = record["methods"]
    assert row["method"] == "elo" and set(COLUMNS) <= set(row)


def test_cli_tunes_on_matches(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoundWarning)
        assert main(["compare", "--scenario", "team_league", "--methods", "elo", "--tune", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["methods"]
    assert row["tune_objective"] == "loglik" and 1 <= row["tuned"]["k"] <= 200 and row["tune_seconds"] > 0


@pytest.mark.parametrize("argv, message", [
    (["--dataset", "nosuch"], "unknown data set 'nosuch'; choose one of .*halo2_large_team"),
    (["--scenario", "nosuch"], "unknown scenario 'nosuch'; choose one of .*ffa_league"),
    (["--scenario", "ffa_league", "--mode", "walk_forward"], "matches are scored online only"),
    (["--scenario", "ffa_league", "--periods", "week"], "--periods .* games only"),
    (["--scenario", "ffa_league", "--plot", "x.png"], "--plot .* games only"),
    (["--scenario", "ffa_league:n=3"], "match scenario ffa_league takes no parameters"),
    (["--scenario", "ffa_league", "--methods", "elo_fide"], "FIDE's rules rate games of two"),
])
def test_cli_bad_input_on_matches_is_one_line_and_exit_2(capsys, argv, message):
    assert main(["compare", *argv, "--quiet"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("statespace: error: ")
    assert re.search(message, lines[0])


def test_listings_name_the_match_data_sets_and_scenarios(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "halo2_large_team" in out and "codeforces" in out
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    assert "ffa_league" in out and "team_league" in out
    assert main(["compare", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in ("halo2_large_team", "halo2_head_to_head", "codeforces", "ffa_league", "team_league"):
        assert name in out
