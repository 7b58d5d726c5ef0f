"""statespace.Blend: pooled forecasts of online methods, weights fitted on the fitting games only.

Expected values are computed here from the definitions (the pools written out in plain Python on
small arrays; each member's score from statespace.model.metrics on its own run), never copied from
the blend's output."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import statespace as ss
from filters import EKF, Elo, Glicko2, TrueSkill
from smoothers import LaplaceSmoother
from statespace.app import cli
from statespace.model import metrics
from statespace.ensemble.blend import Blend, BlendFit, pool_forecasts
from statespace.methods.protocols import Configurable, Fitted, OnlineMethod, TunableMethod, is_online

GAMES = ss.scenarios.get("balanced", seed=3).games  # 600 games, some draws
NO_DRAWS = GAMES.take(np.flatnonzero(GAMES.score != 0.5))
BURN = 0.3


def scored(games: ss.Games, burn_in: float = BURN) -> np.ndarray:
    return np.sort(games.order[int(round(burn_in * len(games))):])


def with_results(games: ss.Games, score: np.ndarray) -> ss.Games:
    return ss.Games.from_arrays(games.time, games.a_name, games.b_name, score, neutral=games.neutral)


# ---------------------------------------------------------------------------- the pools by hand
def loglinear_by_hand(rows, weights, draws=True):
    """Π_k q_k^{w_k}, normalised, one game at a time; a member with no draw forecast gets the draw
    factor sqrt(p_win p_loss); without draws, each member's expected score and its complement."""
    out = []
    for game in zip(*rows):
        if draws:
            factors = [1.0, 1.0, 1.0]
            for (pw, pd, pl), w in zip(game, weights):
                pd = pd if pd > 0 else math.sqrt(pw * pl)
                factors = [factors[0] * pw**w, factors[1] * pd**w, factors[2] * pl**w]
            total = sum(factors)
            out.append([f / total for f in factors])
        else:
            win = loss = 1.0
            for (pw, pd, pl), w in zip(game, weights):
                e = pw + pd / 2
                win, loss = win * e**w, loss * (1 - e) ** w
            out.append([win / (win + loss), 0.0, loss / (win + loss)])
    return np.array(out)


A = [[0.5, 0.2, 0.3], [0.1, 0.3, 0.6], [0.7, 0.1, 0.2]]
B = [[0.6, 0.1, 0.3], [0.2, 0.2, 0.6], [0.3, 0.3, 0.4]]
C = [[0.7, 0.0, 0.3], [0.4, 0.0, 0.6], [0.9, 0.0, 0.1]]  # forecasts no draws


def test_loglinear_pool_on_small_arrays():
    # the first game by hand: 0.5 * 0.6^2, 0.2 * 0.1^2, 0.3 * 0.3^2 = 0.18, 0.002, 0.027
    expected_first = np.array([0.18, 0.002, 0.027]) / 0.209
    got = pool_forecasts([np.array(A), np.array(B)], [1.0, 2.0])
    np.testing.assert_allclose(got[0], expected_first, rtol=1e-12)
    np.testing.assert_allclose(got, loglinear_by_hand([A, B], [1.0, 2.0]), rtol=1e-12)
    np.testing.assert_allclose(pool_forecasts([np.array(A), np.array(C)], [0.7, 1.3]),
                               loglinear_by_hand([A, C], [0.7, 1.3]), rtol=1e-12)
    np.testing.assert_allclose(pool_forecasts([np.array(A), np.array(C)], [0.5, 2.0], draws=False),
                               loglinear_by_hand([A, C], [0.5, 2.0], draws=False), rtol=1e-12)
    # temperature scaling of one member: w = (2, 0) squares and renormalises A
    sq = np.array(A) ** 2
    np.testing.assert_allclose(pool_forecasts([np.array(A), np.array(B)], [2.0, 0.0]),
                               sq / sq.sum(axis=1, keepdims=True), rtol=1e-12)


def test_linear_pool_on_small_arrays():
    expected = (0.25 * np.array(A) + 0.75 * np.array(B))
    np.testing.assert_allclose(pool_forecasts([np.array(A), np.array(B)], [1.0, 3.0], "linear"), expected,
                               rtol=1e-12)
    e = 0.5 * (np.array(A)[:, 0] + np.array(A)[:, 1] / 2) + 0.5 * np.array(C)[:, 0]
    np.testing.assert_allclose(pool_forecasts([np.array(A), np.array(C)], [1.0, 1.0], "linear", draws=False),
                               np.column_stack([e, np.zeros(3), 1 - e]), rtol=1e-12)


def triples(n):
    return st.lists(st.tuples(*[st.floats(1e-6, 1.0)] * 3), min_size=n, max_size=n).map(
        lambda rows: np.array(rows) / np.array(rows).sum(axis=1, keepdims=True))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 4).flatmap(lambda k: st.tuples(st.lists(triples(5), min_size=k, max_size=k),
                                                     st.lists(st.floats(0.0, 20.0), min_size=k, max_size=k))),
       st.sampled_from(["loglinear", "linear"]), st.booleans())
def test_pooled_forecasts_are_probabilities(members_weights, pool, draws):
    probas, weights = members_weights
    if pool == "linear" and sum(weights) == 0:
        weights = [1.0] * len(weights)
    p = pool_forecasts(probas, weights, pool, draws)
    assert p.shape == (5, 3)
    assert np.all(p >= 0) and np.all(p <= 1)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    if not draws:
        assert np.all(p[:, 1] == 0)


# ---------------------------------------------------------------------------- the blend
def test_a_blend_of_one_member_is_the_member():
    member = TrueSkill()
    for pool in ("loglinear", "linear"):
        fit = Blend([member], pool=pool, weights=[1.0]).fit(GAMES)
        np.testing.assert_allclose(fit.proba, member.run(GAMES).proba, rtol=1e-12, atol=1e-15)
        train, test = GAMES.split(0.7)
        np.testing.assert_allclose(Blend([member], pool=pool, weights=[1.0]).fit(train).predict_proba(test),
                                   member.fit(train).predict_proba(test), rtol=1e-12, atol=1e-15)
    # a member that forecasts no draws, on games without draws: its expected score
    fit = Blend([Elo()], weights=[1.0]).fit(NO_DRAWS)
    np.testing.assert_allclose(fit.proba, Elo().run(NO_DRAWS).proba, rtol=1e-12, atol=1e-15)
    # fitted, one member's log-linear weight is a temperature: positive
    assert Blend([member]).fit(GAMES).weights["trueskill"] > 0


@pytest.mark.parametrize("pool", ["loglinear", "linear"])
def test_weights_are_non_negative(pool):
    for games in (GAMES, NO_DRAWS):
        fit = Blend(pool=pool).fit(games)
        assert np.all(fit.weights.to_numpy() >= 0)
        assert list(fit.weights.index) == ["elo", "glicko2", "trueskill", "ekf"]
        if pool == "linear":
            assert fit.weights.sum() == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("pool", ["loglinear", "linear"])
@pytest.mark.parametrize("draws", [True, False])
def test_never_worse_on_the_fitting_games_than_its_best_member(pool, draws):
    games = GAMES if draws else NO_DRAWS
    members = [Elo(k=20), Glicko2(), TrueSkill(), EKF()]
    fit = Blend(members, pool=pool).fit(games)
    rows = scored(games)
    y = games.score[rows]
    score = metrics.log_loss_3 if draws else metrics.log_loss
    alone = [score(y, m.run(games).proba[rows]) for m in members]
    best = np.nanmin(alone)
    assert fit.objective == ("log_loss_3" if draws else "log_loss")
    pooled = score(y, fit.proba[rows])
    assert pooled == pytest.approx(fit.train_score, rel=1e-12)
    assert pooled <= best + 1e-12
    if draws:  # Elo, Glicko-2 and the default EKF forecast no draws: no three-outcome score of their own
        assert np.isnan(alone[0]) and np.isfinite(alone[2])


def test_no_peeking_held_out_results_leave_the_weights_unchanged():
    rng = np.random.default_rng(0)
    train_rows = np.sort(GAMES.order[: int(round(0.7 * len(GAMES)))])
    held = np.setdiff1d(np.arange(len(GAMES)), train_rows)
    score = GAMES.score.copy()
    score[held] = rng.choice([0.0, 0.5, 1.0], size=held.size)
    assert np.any(score[held] != GAMES.score[held])
    other = with_results(GAMES, score)
    for blend in (Blend(split=0.7), Blend(split=0.7, pool="linear")):
        a, b = blend.run(GAMES), blend.run(other)
        np.testing.assert_array_equal(a.weights.to_numpy(), b.weights.to_numpy())
        np.testing.assert_array_equal(a.proba[train_rows], b.proba[train_rows])
        assert not np.array_equal(a.proba[held], b.proba[held])  # the members learn from held-out results online
    # compare, online, tuned on the training part
    tuned = [ss.compare([Blend([Elo(), TrueSkill()])], g, split=0.7, mode="online", tune=True,
                        tune_options={"maxiter": 20}).attrs["tuned"]["blend"].params for g in (GAMES, other)]
    assert tuned[0] == tuned[1]
    # and fitted on the training part, as compare's frozen mode does
    fits = [Blend().fit(g.split(0.7)[0]).weights for g in (GAMES, other)]
    np.testing.assert_array_equal(fits[0].to_numpy(), fits[1].to_numpy())


def test_run_without_a_split_or_fixed_weights_is_refused():
    with pytest.raises(ValueError, match="held-out games"):
        Blend().run(GAMES)
    with pytest.raises(ValueError, match="held-out games"):
        ss.compare([Blend()], GAMES, split=0.7, mode="online")
    fixed = Blend().fit(GAMES.split(0.7)[0]).blend
    assert fixed.weights is not None and fixed.split is None
    assert fixed.run(GAMES).proba.shape == (len(GAMES), 3)


def test_compare_online_with_a_blend_as_with_a_filter():
    table = ss.compare([Blend(split=0.7), TrueSkill()], GAMES, split=0.7, mode="online")
    assert set(table.index) == {"blend", "trueskill"}
    assert np.all(np.isfinite(table["log_loss"])) and np.all(np.isfinite(table["log_loss_3"]))
    # the blend's held-out forecasts are its run's, at the held-out rows
    test = table.attrs["test"]
    run = Blend(split=0.7).run(GAMES)
    np.testing.assert_allclose(table.attrs["proba"]["blend"], run.proba[np.searchsorted(GAMES.row, test.row)])


def test_tune_tunes_each_member_then_the_weights():
    train = GAMES.split(0.7)[0]
    tuned = Blend([Elo(), TrueSkill()]).tune(train, maxiter=20)
    assert isinstance(tuned, Blend) and tuned.weights is not None and tuned.draws is True
    assert tuned.members["elo"].tuning.objective_name == "log_loss"
    assert tuned.members["trueskill"].tuning.objective_name == "log_loss_3"  # threshold draws, games with draws
    assert set(tuned.tuning.params) == {"elo", "trueskill"}
    assert tuned.tuning.objective_name == "log_loss_3"
    # its weights are the tuned members' fitted weights on the same games
    refit = Blend(tuned.members).fit(train)
    np.testing.assert_allclose(refit.weights.to_numpy(), list(tuned.weights.values()), rtol=1e-9)
    with pytest.raises(ValueError, match="params"):
        Blend().tune(train, params=["k"])


def test_a_zero_weight_is_reported():
    fit = Blend([Elo(), TrueSkill()], weights={"elo": 0.0, "trueskill": 1.0}).fit(GAMES)
    assert fit.zero_weight == ["elo"]
    assert bool(fit.table.loc["elo", "zero_weight"]) and not bool(fit.table.loc["trueskill", "zero_weight"])
    assert "weight 0" in fit.summary() and "elo" in fit.summary().splitlines()[-1]


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_the_method_protocols():
    method = Blend()
    assert isinstance(method, OnlineMethod) and isinstance(method, TunableMethod) and isinstance(method, Configurable)
    assert is_online(method)
    assert type(method.with_params()) is Blend
    assert repr(Blend(**method.get_params())) == repr(method)
    assert method.model == Elo().model  # the first member's
    fit = method.fit(GAMES)
    assert isinstance(fit, BlendFit) and isinstance(fit, Fitted)
    assert fit.method is method and fit.games is GAMES
    np.testing.assert_array_equal(fit.ratings()["mean"], Elo().fit(GAMES).ratings()["mean"])
    assert {"time", "player", "mean"} <= set(fit.trajectories().columns)
    p = fit.predict_proba(GAMES)
    assert p.shape == (len(GAMES), 3) and np.allclose(p.sum(axis=1), 1.0)


def test_members_by_name_mapping_and_string():
    assert Blend("elo+ekf").labels == ["elo", "ekf"]
    assert Blend(["elo", "elo"]).labels == ["elo", "elo_2"]
    assert Blend({"fast": Elo(k=40), "slow": Elo(k=10)}).labels == ["fast", "slow"]
    assert Blend().labels == ["elo", "glicko2", "trueskill", "ekf"]


def test_clear_errors():
    with pytest.raises(ValueError, match="at least one member"):
        Blend([])
    with pytest.raises(ValueError, match="'laplace'.*not an online method"):
        Blend([Elo(), LaplaceSmoother()])
    with pytest.raises(ValueError, match="'nope'"):
        Blend(["elo", "nope"])
    with pytest.raises(ValueError, match="pool"):
        Blend(pool="mixture")
    with pytest.raises(ValueError, match="2 weights for 1 members"):
        Blend([Elo()], weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="weight"):
        Blend([Elo()], weights=[-1.0])
    with pytest.raises(ValueError, match="burn_in"):
        Blend(burn_in=1.0)
    with pytest.raises(TypeError, match="Margin"):
        Blend(model=ss.SkillModel(observation=ss.Margin(1.0)))


# ---------------------------------------------------------------------------- command line
def test_cli_blend_spec(capsys):
    code = cli.main(["compare", "--scenario", "balanced", "--methods", "blend:members=elo+trueskill,elo", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {r["method"]: r for r in json.loads(out)["methods"]}
    assert set(rows) == {"blend:members=elo+trueskill", "elo"}
    assert "Blend({'elo': Elo(k=32), 'trueskill': TrueSkill(" in rows["blend:members=elo+trueskill"]["spec"]
    # online: tuned on the training part, or with the same split as compare
    for extra in (["--tune"], []):
        spec = "blend:members=elo+ekf" + ("" if extra else ",split=0.7")
        code = cli.main(["compare", "--scenario", "balanced", "--mode", "online", "--methods", spec, *extra, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        (row,) = json.loads(out)["methods"]
        assert row["method"] == spec and math.isfinite(row["log_loss"])
    code = cli.main(["compare", "--scenario", "balanced", "--mode", "online", "--methods", "blend"])
    out, err = capsys.readouterr()
    assert code == 2 and "split" in err
    code = cli.main(["compare", "--scenario", "balanced", "--methods", "blend:members=elo+laplace"])
    out, err = capsys.readouterr()
    assert code == 2 and "'laplace'" in err and "not an online method" in err


@pytest.mark.parametrize("periods", [False, True])
def test_split_weights_equal_those_fitted_on_the_first_part_alone(periods):
    """``Blend(split=...)`` reads the fitting part's forecasts from the run through all games: the
    weights are those of runs through the first part alone (rating periods cut by the split too)."""
    games = ss.scenarios.drifting().games
    games = games.with_periods(7.0) if periods else games
    blend = Blend("glicko2+trueskill", split=0.7)
    fitting = games.split(0.7)[0]
    alone = blend._weigh(fitting, {label: m.run(fitting) for label, m in blend.members.items()})["weights"]
    np.testing.assert_allclose(blend.fit(games).weights.to_numpy(), list(alone.values()), rtol=1e-10)
