"""Effects by a grouping column (``EKF(group=...)``): a latent home advantage and draw tendency per
group (a league, a tier, a competition). Checked against independent computations: leagues that
never meet, filtered together with a block of rows per league, are the same as each filtered on
its own (each with one latent home advantage and draw tendency); one group for every game is the
ungrouped filter; renaming the groups changes nothing; the batched grid is the run; a continued
run is one run; a simulated pair of leagues with different home advantages is told apart; and the
refusals name the setting, the column and the row."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import statespace as ss
from _dense import log_pmf, newton_step
from filters import EKF
from filters.ekf import DRAW_ROW, HOME_ROW
from filters.state import FilterState
from statespace.ensemble.auto import Variant

SCALE = ss.ELO_SCALE
BASE = math.log(1.3)


def _model(home_drift=5.0, draw_drift=1e-3, **kw):
    return ss.SkillModel("logistic", SCALE, 1500.0, 200.0**2, 10.0, home=40.0, home_drift=home_drift,
                         observation=ss.Goals(base=BASE, dispersion=0.1), draw_drift=draw_drift, **kw)


def _leagues(n_leagues=2, n_teams=5, n_games=120, seed=0, home=(0.0, 120.0), start_together=True):
    """Leagues whose teams never meet (team names carry the league), goals from a Poisson model with
    each league's own home advantage; every league's first game on day 0 (the grouped run's shared
    rows all start at its first game) and its last on day 400."""
    rng = np.random.default_rng(seed)
    rows = []
    for lg in range(n_leagues):
        skill = rng.normal(0, 150, n_teams)
        days = np.sort(rng.integers(1 if lg else 0, 400, n_games))
        days[0] = 0 if start_together else 10 * lg
        days[-1] = 400  # the shared rows end every run at its last day: each league's last game on it
        for t in days:
            i, j = rng.choice(n_teams, 2, replace=False)
            d = skill[i] - skill[j] + home[lg % len(home)]
            x, y = rng.poisson(np.exp(BASE + d / (2 * SCALE))), rng.poisson(np.exp(BASE - d / (2 * SCALE)))
            rows.append((pd.Timestamp("2020-01-01") + pd.Timedelta(days=int(t)), f"L{lg}-{i}", f"L{lg}-{j}", x, y,
                         f"league {lg}"))
    df = pd.DataFrame(rows, columns=["time", "a", "b", "score_a", "score_b", "league"]).sort_values("time",
                                                                                                 kind="stable")
    df["score"] = np.sign(df["score_a"] - df["score_b"]) * 0.5 + 0.5
    df["neutral"] = 0
    return ss.Games.from_frame(df.reset_index(drop=True))


def _only(games, league):
    df = games.to_frame()
    return ss.Games.from_frame(df[df["league"] == league].reset_index(drop=True))


#: the groups' parts: spread at the start and drift (home in rating points^2, draws in log-odds^2)
PARTS = dict(group_home_var=60.0**2, group_home_drift=5.0, group_draw_var=0.3**2, group_draw_drift=1e-3)


@pytest.mark.parametrize("parts", ["both", "home", "draw"])
def test_leagues_that_never_meet_are_filtered_as_if_alone(parts):
    """Without common rows (home_drift = draw_drift = 0) each group's part is all of its home
    advantage and draw tendency, so each league's forecasts and ratings from the grouped run over
    all of them equal the ungrouped filter's run over that league alone, whose latent home advantage
    and draw tendency start at N(home, group_home_var), N(tilt, group_draw_var) and drift as the
    groups' parts."""
    games = _leagues(n_leagues=3)
    keep = {"both": PARTS, "home": dict(list(PARTS.items())[:2]), "draw": dict(list(PARTS.items())[2:])}[parts]
    settings_ = {k: keep.get(k, 0.0) for k in PARTS}
    model = _model(home_drift=0.0, draw_drift=0.0)
    ekf = EKF(model, group="league", **settings_)
    together = ekf.run(games)
    board = together.ratings().set_index("player")
    effects = ekf.group_effects(together.state)
    alone_model = dataclasses.replace(model, home_drift=settings_["group_home_drift"],
                                      draw_drift=settings_["group_draw_drift"])
    initial = {}
    if "group_home_var" in keep:
        initial[HOME_ROW] = (model.home, math.sqrt(settings_["group_home_var"]))
    if "group_draw_var" in keep:
        initial[DRAW_ROW] = (0.0, math.sqrt(settings_["group_draw_var"]))
    for lg in ("league 0", "league 1", "league 2"):
        alone = EKF(alone_model).run(_only(games, lg), initial=initial)
        mask = games.extra["league"].to_numpy() == lg
        np.testing.assert_allclose(together.proba[mask], alone.proba, rtol=1e-10, atol=1e-13)
        alone_board = alone.ratings().set_index("player")
        np.testing.assert_allclose(board.loc[alone_board.index, "mean"], alone_board["mean"], rtol=1e-10)
        np.testing.assert_allclose(board.loc[alone_board.index, "sd"], alone_board["sd"], rtol=1e-10)
        if "group_home_var" in keep:
            np.testing.assert_allclose(effects.loc[lg, ["home", "home_sd"]].to_numpy(float),
                                       alone.state.shared_row(HOME_ROW)[:2], rtol=1e-10)
        else:
            assert effects.loc[lg, ["home", "home_sd"]].isna().all()
        if "group_draw_var" in keep:
            np.testing.assert_allclose(effects.loc[lg, ["draw_tilt", "draw_tilt_sd"]].to_numpy(float),
                                       alone.state.shared_row(DRAW_ROW)[:2], rtol=1e-10)


def test_tiny_parts_are_the_ungrouped_filter():
    """The groups' parts with a vanishing spread and no drift: the ungrouped filter (common walks of
    the home advantage and draw tendency), to within what a 1e-6-point sd can move."""
    games = _leagues(n_leagues=3, n_games=200)
    for model in (_model(), _model(draw_drift=0.0), _model(home_drift=0.0)):
        grouped = EKF(model, group="league", group_home_var=1e-12, group_draw_var=1e-12).run(games)
        plain = EKF(model).run(games)
        np.testing.assert_allclose(grouped.proba, plain.proba, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(grouped.state.values[:len(games.players)],
                                   plain.state.values[:len(games.players)], rtol=1e-8)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2**31), names=st.permutations(["zeta", "alpha", "Mu", "1", "beta"]))
def test_renaming_the_groups_changes_nothing(seed, names):
    """Groups shared by the same teams (a cup and a league): new names in another sorted order give
    the same forecasts."""
    rng = np.random.default_rng(seed)
    n = 150
    df = pd.DataFrame({"time": np.sort(rng.integers(0, 300, n)), "a": [f"t{k}" for k in rng.integers(0, 6, n)],
                       "b": [f"u{k}" for k in rng.integers(0, 6, n)], "score_a": rng.poisson(1.4, n),
                       "score_b": rng.poisson(1.1, n), "neutral": rng.integers(0, 2, n),
                       "comp": rng.integers(0, 5, n)})
    df["score"] = np.sign(df["score_a"] - df["score_b"]) * 0.5 + 0.5
    renamed = df.assign(comp=[names[c] for c in df["comp"]])
    a = EKF(_model(), group="comp", **PARTS).run(ss.Games.from_frame(df))
    b = EKF(_model(), group="comp", **PARTS).run(ss.Games.from_frame(renamed))
    np.testing.assert_allclose(a.proba, b.proba, rtol=1e-12, atol=1e-15)
    assert np.all((a.proba >= 0) & (a.proba <= 1))
    np.testing.assert_allclose(a.proba.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all(a.state.values[:, 1] > 0)


def test_the_batched_grid_is_the_run():
    """``grid`` (the batched loop of tuning) gives each setting the log loss of its own run."""
    games = _leagues(n_leagues=2, start_together=False).with_periods(7)
    ekf = EKF(_model(), group="league", **PARTS)
    table = ekf.grid(games, drift=[1.0, 30.0], group_home_var=[10.0, 4000.0], objective="log_loss_3")
    for _, row in table.iterrows():
        run = ekf.with_params(drift=row["drift"], group_home_var=row["group_home_var"]).run(games)
        y = np.where(games.score == 1, 0, np.where(games.score == 0.5, 1, 2))
        loss = -np.mean(np.log(run.proba[np.arange(len(games)), y]))
        assert row["log_loss_3"] == pytest.approx(loss, rel=1e-10)


def test_a_continued_run_is_one_run_and_a_new_group_starts_at_the_prior():
    games = _leagues(n_leagues=2)
    first, rest = games.split(0.6)
    ekf = EKF(_model(), group="league", **PARTS)
    whole = ekf.run(games)
    cont = ekf.run(first).continue_run(rest)
    np.testing.assert_allclose(cont.proba, whole.proba[len(first):], rtol=1e-10)
    # a league the state has not seen: its rows are appended, starting at the prior
    late = _leagues(n_leagues=1, seed=3).to_frame().assign(league="league 9", time=pd.Timestamp("2022-01-01"))
    late[["a", "b"]] = late[["a", "b"]].replace(r"^L0", "L9", regex=True)
    more = ekf.run(games).continue_run(ss.Games.from_frame(late))
    effects = ekf.group_effects(more.state)
    assert list(effects.index) == ["league 0", "league 1", "league 9"]
    # its first game, before anything is learned from it: the frozen forecast from the state before
    first_game = ss.Games.from_frame(late).take([0])
    np.testing.assert_allclose(more.proba[:1], whole.predict_proba(first_game), rtol=1e-10)
    p = ekf.predict_proba(whole.state, ["L0-1", "L0-1"], ["L0-2", "L0-2"], at_home=1,
                          group=["league 0", "league 7"])
    assert p.shape == (2, 3) and not np.allclose(p[0], p[1])
    # an unseen group's forecast: its parts at the prior, N(0, group_*_var) around the common rows, so
    # the ungrouped filter whose common rows carry those variances too
    plain = EKF(_model())
    core, common = whole.state.split()
    common = FilterState(common.players[:2], common.values[:2].copy(), common.count[:2], common.last[:2],
                         common.columns)
    common.values[0, 1] = math.hypot(common.values[0, 1], math.sqrt(PARTS["group_home_var"]))
    common.values[1, 1] = math.hypot(common.values[1, 1], math.sqrt(PARTS["group_draw_var"]))
    ref = plain.predict_proba(FilterState.join(core, common), ["L0-1"], ["L0-2"], at_home=1)
    np.testing.assert_allclose(p[1], ref[0], rtol=1e-12)


def test_two_leagues_home_advantages_are_told_apart():
    """Simulated: league 0 without home advantage, league 1 with 120 points; a fixed common home
    advantage of 60 and each league's part N(0, 100^2): the grouped filter ends with each league's
    near its own (within 3 sd), the ungrouped one (a drifting home advantage) with one in between."""
    games = _leagues(n_leagues=2, n_teams=8, n_games=3000, home=(0.0, 120.0), seed=1)
    model = dataclasses.replace(_model(home_drift=0.0, draw_drift=0.0), home=60.0)
    ekf = EKF(model, group="league", group_home_var=100.0**2)
    effects = ekf.group_effects(ekf.run(games).state)
    for lg, truth in (("league 0", 0.0), ("league 1", 120.0)):
        assert abs(effects.loc[lg, "home"] - truth) < 3 * effects.loc[lg, "home_sd"]
        assert effects.loc[lg, "home_part"] == pytest.approx(effects.loc[lg, "home"] - 60.0)
    drifting = dataclasses.replace(model, home_drift=5.0)
    one, _ = EKF(drifting).home_advantage(EKF(drifting).run(games).state)
    assert effects.loc["league 0", "home"] + 20.0 < one < effects.loc["league 1", "home"] - 20.0


def test_refusals_name_the_setting_the_column_and_the_row():
    games = _leagues(n_leagues=2)
    with pytest.raises(ValueError, match="all of them 0"):
        EKF(_model(), group="league")
    with pytest.raises(ValueError, match="give group="):
        EKF(_model(), group_home_var=1.0)
    with pytest.raises(ValueError, match="covariance='diagonal' only"):
        EKF(_model(home_drift=0.0, draw_drift=0.0), covariance="full", group="league", group_home_var=1.0)
    with pytest.raises(ValueError, match="a string"):
        EKF(_model(), group=3, group_home_var=1.0)
    with pytest.raises(ValueError, match="group_draw_var"):
        EKF(_model(), group="league", group_draw_var=-1.0)
    with pytest.raises(ValueError, match="no tilt"):
        EKF(ss.SkillModel("logistic", SCALE, draw="half"), group="league", group_draw_var=0.1)
    with pytest.raises(ss.GamesError, match="'tier'.*other columns.*league"):
        EKF(_model(), group="tier", **PARTS).run(games)
    df = games.to_frame()
    df.loc[7, "league"] = None
    with pytest.raises(ss.GamesError, match=r"column 'league': row 7 has no group"):
        EKF(_model(), group="league", **PARTS).run(ss.Games.from_frame(df))
    run = EKF(_model(), group="league", **PARTS).run(games)
    with pytest.raises(ValueError, match="group="):
        run.method.predict_proba(run.state, ["L0-1"], ["L0-2"])
    with pytest.raises(ValueError, match="this one has none"):
        EKF(_model()).predict_proba(EKF(_model()).run(games).state, ["L0-1"], ["L0-2"], group="league 0")
    with pytest.raises(ValueError, match="at_home"):
        run.method.predict_proba(run.state, ["L0-1"], ["L0-2"], at_home=-1, group="league 0")
    with pytest.raises(ValueError, match="per group"):
        run.method.home_advantage(run.state)
    with pytest.raises(ValueError, match="shared rows"):  # a state of another grouping
        EKF(_model()).run(games, state=run.state)


def test_auto_tries_the_pick_per_group_and_chooses_it_where_leagues_differ():
    """Two leagues, one without home advantage and one with 150 points: ``auto(group=...)`` adds the
    pick with a part of its home advantage per league (stage "groups", started from the pick) and
    chooses it on the training games."""
    games = _leagues(n_leagues=2, n_teams=6, n_games=700, home=(0.0, 150.0), seed=2)
    fit = ss.auto(games, group="league", observations=("outcome",), powers=(), reversion=False, progress=False)
    table = fit.table
    grouped = table[table["stage"] == "groups"]
    assert len(grouped) == 1 and grouped.index[0].endswith("by league")
    assert fit.chosen == grouped.index[0]
    assert table.loc[fit.chosen, "train_score"] < table.drop(fit.chosen)["train_score"].min()
    effects = fit.method.ekf.group_effects(fit.method.run(games).state)
    assert effects.loc["league 1", "home"] - effects.loc["league 0", "home"] > 75.0


def test_auto_group_refusals():
    games = _leagues(n_leagues=2)
    with pytest.raises(ss.GamesError, match="no column 'tier'"):
        ss.auto(games, group="tier", observations=("outcome",), powers=(), progress=False)
    with pytest.raises(ValueError, match="Variant"):
        ss.auto(games, group="league", candidates=[Variant("outcome")])
    with pytest.raises(ValueError, match="has neither"):
        Variant("outcome", "none", group="league")


def test_cli_group_needs_auto_and_a_column(tmp_path, capsys):
    from statespace.app.cli import main

    path = tmp_path / "games.csv"
    _leagues(n_leagues=2).to_frame().to_csv(path, index=False)
    assert main(["compare", "--data", str(path), "--group", "league"]) == 2
    assert "add --auto" in capsys.readouterr().err
    assert main(["rate", str(path), "--auto", "--group", "tier"]) == 2
    assert "--group tier: no column 'tier'" in capsys.readouterr().err


@pytest.mark.parametrize("score", [(0, 0), (3, 1), (1, 4)])
def test_one_game_with_a_goal_base_part_is_a_dense_newton_step(score):
    """A group's part of the goal base, beta ~ N(0, 60^2) beside skills N(m, diag(v)): the EKF's
    posterior means are one Newton step m + (Sigma^-1 + K)^-1 grad l on (s_a, s_b, beta), its
    variances the diagonal of (Sigma^-1 + K)^-1, with l the log pmf of both counts (scipy) at
    log-rates base + (+-(s_a - s_b + home) + beta) / (2 scale), differentiated numerically; the
    forecast is Goals' at the base moved by the part's mean (0)."""
    from statespace.model.goals import goals_forecast

    kappa, home = 0.1, 40.0
    model = ss.SkillModel("logistic", SCALE, 1500.0, 120.0**2, 10.0, home=home,
                          observation=ss.Goals(base=BASE, dispersion=kappa))
    ekf = EKF(model, group="league", group_base_var=60.0**2)
    df = pd.DataFrame({"time": ["2020-01-01"], "a": ["x"], "b": ["y"], "score_a": [score[0]], "score_b": [score[1]],
                       "neutral": [0], "league": ["L"]})
    df["score"] = np.sign(df["score_a"] - df["score_b"]) * 0.5 + 0.5
    run = ekf.run(ss.Games.from_frame(df), initial={"x": (1560.0, 120.0), "y": (1480.0, 90.0)})
    m = np.array([1560.0, 1480.0, 0.0])
    var = np.array([120.0, 90.0, 60.0]) ** 2

    def loglik(z):
        sa, sb, beta = z
        d = sa - sb + home
        return (log_pmf(score[0], math.exp(BASE + (d + beta) / (2 * SCALE)), kappa)
                + log_pmf(score[1], math.exp(BASE + (-d + beta) / (2 * SCALE)), kappa))

    mean, cov = newton_step(loglik, m, var)
    st = run.state
    rows = [st.values[st.index()["x"]], st.values[st.index()["y"]], st.shared_row("(goal base: L)")]
    np.testing.assert_allclose([r[0] for r in rows], mean, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose([r[1] ** 2 for r in rows], np.diag(cov), rtol=1e-5)
    obs = ss.Goals(base=BASE, dispersion=kappa, table=False)
    # the part's mean is 0 before the game, so the EKF reads the forecast table (within 2e-6 of the
    # integral, tests/test_goals_table.py)
    np.testing.assert_allclose(run.proba[0], goals_forecast(obs.vector(SCALE), 80.0 + home, 120.0**2 + 90.0**2),
                               atol=2e-6)
    effects = ekf.group_effects(st)
    assert effects.loc["L", "base_part"] == pytest.approx(rows[2][0] / (2 * SCALE))


def test_leagues_that_never_meet_with_a_goal_base_part_are_filtered_as_if_alone():
    """Each league's part of the goal base learns from its own games: filtered together, a league's
    forecasts equal its own grouped run's (one group)."""
    games = _leagues(n_leagues=2, n_games=80)
    ekf = EKF(_model(home_drift=0.0, draw_drift=0.0), group="league", group_base_var=50.0**2, group_base_drift=2.0)
    together = ekf.run(games)
    for lg in ("league 0", "league 1"):
        mask = games.extra["league"].to_numpy() == lg
        np.testing.assert_allclose(together.proba[mask], ekf.run(_only(games, lg)).proba, rtol=1e-10)
    with pytest.raises(ValueError, match="draw tilt"):
        EKF(_model(home_drift=0.0), group="league", group_base_var=1.0)
    with pytest.raises(ValueError, match="does not read"):
        EKF(ss.SkillModel("logistic", SCALE, draw="half"), group="league", group_base_var=1.0)
