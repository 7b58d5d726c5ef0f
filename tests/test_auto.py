"""``statespace.auto``: the choice among EKF variants, made on the training games only.

The simulations have a known structure (mean reversion, a drifting home advantage, Gaussian score
margins) and are large enough, with a fixed seed, that the variant with that structure wins on the
training games by a wide margin (0.005 to 0.01 nats a game where the tie rule is 1e-5); the tests
assert the choice, not a log loss. No-peeking: a table whose held-out part is adversarial must
leave every number of the choice unchanged.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import statespace as ss
from statespace import Auto, ELO_SCALE, SkillModel, auto, simulate
from statespace.ensemble.auto import AutoFit, AutoResult, Candidate, Variant
from statespace.app.cli import main


@pytest.fixture(scope="module")
def reverting():
    """Skills that revert to the mean (an Ornstein-Uhlenbeck process, half-life about 35 days), no
    draws, neutral venues."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 200.0**2, 1600.0, "none", reversion=0.02)
    return simulate(model, 30, 3000, seed=2).games


@pytest.fixture(scope="module")
def drifting_home():
    """Every game at a's home, the home advantage a random walk (it moves ~400 points over the span),
    threshold draws."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 200.0**2, 5.0, ("threshold", 50.0), home=100.0,
                       home_drift=100.0)
    return simulate(model, 30, 3000, days=1000, home_fraction=1.0, seed=3).games


def _with_margins(games: ss.Games, margin: np.ndarray) -> ss.Games:
    """``games`` with the result of each given by the sign of ``margin`` and the sides' scores."""
    df = games.to_frame()
    df["score"] = np.where(margin > 0, 1.0, np.where(margin < 0, 0.0, 0.5))
    df["score_a"] = np.maximum(margin, 0) + 7
    df["score_b"] = np.maximum(-margin, 0) + 7
    return ss.Games.from_frame(df)


@pytest.fixture(scope="module")
def gaussian_margins():
    """Score margins Gaussian around the skill difference (in points: 15 rating points a point, sd 12):
    the Margin observation is the true model."""
    sim = simulate(SkillModel("logistic", ELO_SCALE, 1500.0, 150.0**2, 20.0, "none"), 30, 2000, days=500, seed=1)
    rng = np.random.default_rng(101)
    margin = np.round((sim.skill_a - sim.skill_b) / 15.0 + rng.normal(0.0, 12.0, len(sim.games)))
    return _with_margins(sim.games, margin)


# ---------------------------------------------------------------------------------------- the choice
def test_picks_mean_reversion_when_skills_revert(reverting):
    fit = auto(reverting, progress=False)
    assert isinstance(fit, AutoFit)
    assert fit.variant == Variant("outcome", "none", reversion=True)
    assert fit.chosen == "outcome, reversion"
    # neutral games: no home advantage is tried; no scores: no margin weights or margin observation
    assert list(fit.table.index) == ["outcome, reversion", "outcome"]
    # no draws: the expected-score log loss is the likelihood, and draws are modelled as half a win
    assert fit.objective == "log_loss" and set(fit.table["objective"]) == {"log_loss"}
    assert type(fit.model.draw).__name__ == "HalfWin"
    assert fit.table.loc["outcome", "delta"] > 1e-3  # far beyond the tie rule


def test_picks_a_drifting_home_advantage_when_it_drifts(drifting_home):
    fit = auto(drifting_home, reversion=False, progress=False)
    assert fit.variant == Variant("outcome", "drifting")
    assert set(fit.table.index) == {"outcome, fixed home", "outcome, drifting home"}
    assert fit.objective == "log_loss_3"  # the games have draws
    assert fit.table.loc["outcome, fixed home", "delta"] > 1e-3
    assert fit.settings["home_drift"] > 1.0


def test_picks_the_margin_observation_for_gaussian_margins_and_lists_every_candidate(gaussian_margins):
    fit = auto(gaussian_margins, progress=False)
    assert fit.variant.observation == "margin"
    t = fit.table
    # the default staged search: structure (no home advantage: neutral games) with and without reversion,
    # then margin weights of each default power and the margin observation on the best structure
    rev = fit.variant.reversion
    s = ", reversion" if rev else ""
    want = {"outcome", "outcome, reversion", f"outcome{s}, margin weights p=0", f"outcome{s}, margin weights p=0.5",
            f"outcome{s}, margin weights p=1", f"margin{s}"}
    assert set(t.index) == want
    assert t["chosen"].sum() == 1 and t.loc[fit.chosen, "chosen"]
    assert set(t["stage"]) == {"structure", "margin weights", "observation"}
    assert (t["train_score"].notna()).all() and (t["error"] == "").all()
    assert t.attrs["objective"] == fit.objective and t.attrs["n_scored"] < t.attrs["n_games"] == len(gaussian_margins)
    assert set(fit.candidates) == want
    assert t.attrs["not_tried"] == []  # points, not goals: Goals is not a candidate
    # what it says
    text = fit.summary()
    assert fit.chosen in text and "why:" in text and fit.objective in text
    for label in want:
        assert label in text
    assert repr(fit).startswith("AutoFit(chose 'margin")


def test_observations_all_tries_what_the_games_allow(gaussian_margins, reverting):
    # points (not goal counts): "all" tries the margin observation and not goals, without an error
    margins = auto(gaussian_margins, observations="all", powers=(), reversion=False, progress=False)
    assert {lab.split(",")[0] for lab in margins.table.index} == {"outcome", "margin"}
    # no scores: the outcome alone, where ("outcome", "margin") is an error
    plain = auto(reverting, observations="all", reversion=False, drifting_home=False, progress=False)
    assert {lab.split(",")[0] for lab in plain.table.index} == {"outcome"}
    with pytest.raises(ValueError, match="need each side's score"):
        auto(reverting, observations=("outcome", "margin"), progress=False)


@pytest.fixture(scope="module")
def poisson_goals():
    """Each side's goals Poisson with log rates log(1.4) +- d / (2 * 173.7): the Goals observation is
    the true model."""
    sim = simulate(SkillModel("logistic", ELO_SCALE, 1500.0, 150.0**2, 20.0, "none"), 16, 800, days=400, seed=5)
    rng = np.random.default_rng(7)
    u = (sim.skill_a - sim.skill_b) / (2.0 * ELO_SCALE)
    ga, gb = rng.poisson(1.4 * np.exp(u)), rng.poisson(1.4 * np.exp(-u))
    df = sim.games.to_frame()
    df["score"] = np.sign(ga - gb) * 0.5 + 0.5
    df["score_a"], df["score_b"] = ga, gb
    return ss.Games.from_frame(df)


def test_goals_is_tried_by_default_and_chosen_on_poisson_goals(poisson_goals):
    """Goal counts: the default search tries Goals under both laws of the counts (negative binomial,
    Poisson with Dixon and Coles' rho) and picks one of them where the goals are Poisson; asked for
    outcome and margin only, it tries no Goals."""
    default = auto(poisson_goals, powers=(0.0,), progress=False)
    assert {"goals, fixed home", "goals (dixon-coles), fixed home"} <= set(default.table.index) or \
        {"goals", "goals (dixon-coles)"} <= set(default.table.index)
    assert default.table.attrs["not_tried"] == [] and default.chosen.startswith("goals")
    drifting = [k for k in default.table.index if "drifting draws" in k]
    assert len(drifting) == 1 and "draw_drift" in default.result.methods[drifting[0]].values()
    dc = default.result.methods[next(k for k in default.table.index if "dixon-coles" in k)]
    assert set(dc.values()) >= {"base", "rho"} and "dispersion" not in dc.values()
    assert abs(dc.model.observation.rho) < 0.2  # independent Poisson goals: no low-score dependence
    narrow = auto(poisson_goals, observations=("outcome", "margin"), powers=(), progress=False)
    assert not any(label.startswith("goals") for label in narrow.table.index)
    fit = auto(poisson_goals, candidates=[Variant("goals", "none"), Variant("outcome", "none")], progress=False)
    assert set(fit.table.index) == {"goals", "outcome"} and set(fit.table["stage"]) == {"given"}
    assert fit.table.attrs["not_tried"] == []
    assert fit.chosen == "goals" and isinstance(fit.model.observation, ss.Goals)
    every = auto(poisson_goals, observations="all", powers=(), reversion=False, progress=False)
    assert {"margin", "goals"} <= set(every.table.index) and every.table.attrs["not_tried"] == []


def test_fitted_face(reverting):
    train, test = reverting.split(0.8)
    fit = auto(train, progress=False)
    p = fit.predict_proba(test)
    assert p.shape == (len(test), 3) and np.allclose(p.sum(axis=1), 1.0)
    board = fit.ratings()
    assert {"player", "mean", "sd", "games"} <= set(board.columns)
    assert fit.proba.shape == (len(train), 3)
    # the chosen method runs online through any games
    run = fit.method.run(reverting)
    np.testing.assert_array_equal(run.proba[: len(train)], fit.proba)
    assert isinstance(fit.method, Candidate) and isinstance(fit.method.tuning, AutoResult)


# ---------------------------------------------------------------------------------------- no peeking
@pytest.fixture(scope="module")
def adversarial():
    """The same first half (fixed home advantage 80, every game at a's home); in the second half of
    the adversarial table the home side always loses, which a choice that saw it would answer with a
    drifting home advantage."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 200.0**2, 10.0, "none", home=80.0)
    games = simulate(model, 30, 2400, days=600, home_fraction=1.0, seed=0).games
    train, test = games.split(0.5)
    df = games.to_frame()
    df.loc[test.row, "score"] = 0.0
    return games, ss.Games.from_frame(df)


def _same_choice(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns="tune_seconds"), b.drop(columns="tune_seconds"))
    assert a.attrs == b.attrs


def test_held_out_games_never_enter_the_choice(adversarial):
    games, bad = adversarial
    honest = auto(games, split=0.5, reversion=False, progress=False)
    peeked = auto(bad, reversion=False, progress=False)
    assert peeked.variant.home == "drifting"  # the adversarial half, if seen, changes the choice ...
    fooled = auto(bad, split=0.5, reversion=False, progress=False)
    assert fooled.variant.home == "fixed"  # ... but with split=0.5 it is not seen
    _same_choice(honest.table, fooled.table)
    assert honest.table.attrs["n_games"] == len(games) // 2
    # the chosen model is the same to the last bit; the margin weights' scale too (none here)
    assert honest.model == fooled.model


def test_compare_fits_auto_on_the_training_part_only(adversarial):
    games, bad = adversarial
    options = {"reversion": False, "progress": False}
    # frozen: compare fits Auto on the training part; held-out results never reach its forecasts
    t1 = ss.compare({"auto": Auto(**options)}, games, split=0.5)
    t2 = ss.compare({"auto": Auto(**options)}, bad, split=0.5)
    np.testing.assert_array_equal(t1.attrs["proba"]["auto"], t2.attrs["proba"]["auto"])
    # online with tune=True: the choice is made by Auto.tune on the training part
    o1 = ss.compare({"auto": Auto(**options)}, games, split=0.5, mode="online", tune=True,
                    tune_options={"burn_in": 0.3})
    o2 = ss.compare({"auto": Auto(**options)}, bad, split=0.5, mode="online", tune=True,
                    tune_options={"burn_in": 0.3})
    r1, r2 = o1.attrs["tuned"]["auto"], o2.attrs["tuned"]["auto"]
    assert isinstance(r1, AutoResult) and r1.chosen == r2.chosen == "outcome, fixed home"
    _same_choice(r1.table, r2.table)
    # online with Auto(split=) the same as compare's: the same choice again
    a = Auto(split=0.5, **options)
    ss.compare({"auto": a}, bad, split=0.5, mode="online")
    _same_choice(a.last.table, r1.table)


def test_auto_without_a_split_refuses_to_run_online(reverting):
    with pytest.raises(ValueError, match="tune=True"):
        ss.compare({"auto": Auto(progress=False)}, reverting, split=0.7, mode="online")


# ---------------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call, error, fragment", [
    (lambda g: auto(g.to_frame()), TypeError, "expected statespace.Games"),
    (lambda g: auto(g.take(range(20))), ValueError, "at least 50 games"),
    (lambda g: auto(g, split=1.5), ValueError, "split must be None or a fraction"),
    (lambda g: auto(g, burn_in=1.0), ValueError, "burn_in must be a fraction in [0, 1)"),
    (lambda g: auto(g, powers=(0.5,)), ValueError, "no 'score_a' and 'score_b' columns"),
    (lambda g: auto(g, observations=("outcome", "margin")), ValueError, "need each side's score"),
    (lambda g: auto(g, observations=("margin",)), ValueError, "must include 'outcome'"),
    (lambda g: auto(g, observations=("outcome", "poisson")), ValueError, "observations must name some of"),
    (lambda g: auto(g, objective="accuracy"), ValueError, "objective must be None or one of"),
    (lambda g: auto(g, candidates=[]), ValueError, "candidates= is empty"),
    (lambda g: auto(g, candidates=["outcome"]), TypeError, "must be statespace.ensemble.auto.Variant"),
    (lambda g: auto(g, candidates=[Variant("outcome", "fixed")]), ValueError, "every game is neutral"),
    (lambda g: auto(g, candidates=[Variant("margin", "none")]), ValueError, "needs each side's score"),
    (lambda g: auto(g, progress="yes"), ValueError, "progress must be True, False or None"),
    (lambda g: Variant("margin", power=0.5), ValueError, "apply to the outcome observation"),
    (lambda g: Variant("outcome", home="sometimes"), ValueError, "home must be one of"),
    (lambda g: Variant("goals", counts="zero-inflated"), ValueError, "counts must be one of"),
    (lambda g: Variant("margin", counts="dixon-coles"), ValueError, "law of the goals observation's counts"),
    (lambda g: Auto().tune(g, params=["drift"]), ValueError, "params= and bounds= do not apply"),
    (lambda g: Auto().model, AttributeError, "no model until it has chosen"),
])
def test_errors_are_clear(reverting, call, error, fragment):
    with pytest.raises(error, match=None) as info:
        call(reverting)
    assert fragment in str(info.value)


# ---------------------------------------------------------------------------------------- command line
def test_cli_compare_auto_adds_the_row_and_says_what_it_chose(capsys):
    code = main(["compare", "--scenario", "drifting", "--methods", "elo", "--auto", "--mode", "online",
                 "--split", "0.8"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert any(line.startswith("auto ") for line in out.splitlines())
    line = next(line for line in out.splitlines() if line.startswith("auto chose EKF, outcome"))
    assert "training log_loss_3" in line and "the training part, 3,200 games" in line


def test_cli_compare_auto_json(capsys):
    code = main(["compare", "--scenario", "balanced", "--methods", "elo", "--auto", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert "auto" in [m["method"] for m in data["methods"]]
    assert data["auto"]["chosen"] in [c["candidate"] for c in data["auto"]["candidates"]]
    assert data["auto"]["n_games"] == data["n_train"]


def test_cli_rate_auto(capsys):
    code = main(["rate", "--scenario", "drifting", "--auto", "--top", "3"])
    out, err = capsys.readouterr()
    assert code == 0, err
    first = out.splitlines()[0]
    assert first.startswith("auto chose EKF, outcome") and "the rated games, 4,000 games" in first
    assert "rank" in out and "P" in out


@pytest.mark.parametrize("argv, fragment", [
    (["rate", "--scenario", "drifting", "--auto", "--method", "elo"], "give either --method or --auto"),
    (["compare", "--scenario", "balanced", "--auto", "--split", "0.05", "--methods", "elo"], "at least 50 games"),
])
def test_cli_auto_user_errors_are_one_line_exit_2(capsys, argv, fragment):
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("statespace: error: ") and fragment in lines[0], err


# ---------------------------------------------------------------------------------------- blend=True
def _loglinear_expected_score(probas, weights):
    """The two-outcome log-linear pool written out: P(win) ∝ Π E_k^w_k, P(loss) ∝ Π (1 - E_k)^w_k."""
    win = np.prod([(p[:, 0] + p[:, 1] / 2) ** w for p, w in zip(probas, weights)], axis=0)
    loss = np.prod([(1 - p[:, 0] - p[:, 1] / 2) ** w for p, w in zip(probas, weights)], axis=0)
    e = win / (win + loss)
    return np.column_stack([e, np.zeros_like(e), 1 - e])


def test_blend_option_adds_a_row_and_returns_the_blend_only_when_better(reverting):
    from statespace.ensemble.auto import BLEND_TOP, TIE
    from statespace.ensemble.blend import Blend

    fit = auto(reverting, blend=True, progress=False)
    t = fit.table
    (label,) = t.index[t["stage"] == "blend"]
    candidates = [n for n in t.index if n != label]
    weights = t.loc[label, "settings"]
    assert list(weights) == list(t.loc[candidates].sort_values("train_score").index[:BLEND_TOP])
    assert all(w >= 0 for w in weights.values())
    # its training score: the pool of the candidates' one-step-ahead forecasts, scored after the burn-in
    scored = np.sort(reverting.order[int(round(0.3 * len(reverting))):])
    probas = [fit.candidates[n].run(reverting).proba[scored] for n in weights]
    pooled = _loglinear_expected_score(probas, list(weights.values()))
    assert t.loc[label, "train_score"] == pytest.approx(ss.metrics.log_loss(reverting.score[scored], pooled),
                                                        rel=1e-9)
    pick = t.loc[candidates, "train_score"].min()
    better = t.loc[label, "train_score"] < pick - TIE
    assert bool(t.loc[label, "chosen"]) == better
    assert isinstance(fit.method, Blend if better else Candidate)
    assert t["chosen"].sum() == 1 and fit.chosen == (label if better else fit.result.chosen)
    assert label in fit.summary()
    with pytest.warns(ss.SeenGamesWarning, match="auto: predict_proba") as seen:  # in-sample, on purpose
        p = fit.predict_proba(reverting)
    assert len(seen) == 1  # auto's own warning, not one per pooled member as well
    assert p.shape == (len(reverting), 3) and np.allclose(p.sum(axis=1), 1.0)
    # without the option: no blend row
    assert "blend" not in set(auto(reverting, progress=False).table["stage"])


def test_blend_option_never_sees_the_held_out_games(adversarial):
    games, bad = adversarial
    honest = auto(games, split=0.5, reversion=False, blend=True, progress=False)
    fooled = auto(bad, split=0.5, reversion=False, blend=True, progress=False)
    _same_choice(honest.table, fooled.table)
    assert "blend" in set(honest.table["stage"])


def test_blend_option_is_checked(reverting):
    with pytest.raises(ValueError, match="blend must be True or False"):
        Auto(blend="yes")
    assert "blend=True" in repr(Auto(blend=True))
