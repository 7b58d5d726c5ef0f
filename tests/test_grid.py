"""Many settings in one compiled pass (filters.grid, Filter.grid): the batched scores equal scoring
each setting's own run with statespace.metrics, for every loop (one game at a time, rating periods,
the full-covariance EKF's joint update), with burn-in, and bad settings are refused by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import statespace as ss
from filters import EKF, Elo, Glicko, Glicko2, TrueSkill, WengLin
from filters.grid import box_grid, evaluate, evaluate_by_runs
from statespace.model import metrics


@pytest.fixture(scope="module")
def games():
    model = ss.SkillModel("logistic", ss.ELO_SCALE, 1500.0, 150.0**2, 5.0, ("threshold", 60.0), home=40.0)
    return ss.simulate(model, n_players=12, n_games=300, home_fraction=0.5, seed=3).games


@pytest.fixture(scope="module")
def periods(games):
    return games.with_periods(10)


# each filter with two settings of two values (enough to catch a setting read from the wrong row),
# on games one at a time (grid_game_loop) or in rating periods (grid_site_loop; the full EKF's joint
# update: grid_period_loop), each filter on one of them so that the suite compiles few loops
CASES = [
    (Elo(), {"k": [8.0, 40.0], "home": [0.0, 50.0]}, "games"),
    (Glicko(), {"c": [10.0, 80.0], "home": [0.0, 30.0]}, "games"),
    (Glicko2(), {"tau": [0.3, 1.1], "initial_rd": [200.0, 350.0]}, "periods"),
    (TrueSkill(), {"beta": [2.0, 6.0], "tau": [0.01, 0.5]}, "periods"),
    (EKF(), {"drift": [1.0, 50.0], "home": [0.0, 40.0]}, "games"),
    (EKF(covariance="full"), {"drift": [1.0, 50.0], "prior_var": [1e3, 3e4]}, "periods"),
    (WengLin("thurstone_mosteller"), {"beta": [2.0, 6.0], "epsilon": [0.05, 0.3]}, "games"),
]


def by_runs(method, games, values, burn_in=0.0):
    """The reference: each setting's own run, scored by statespace.metrics on the scored rows."""
    import itertools

    method = method.resolved(games) if hasattr(method, "resolved") else method
    names = list(values)
    scored = np.sort(games.order[int(round(burn_in * len(games))):])
    rows = []
    for combo in itertools.product(*values.values()):
        p = method.with_params(**dict(zip(names, combo))).run(games).proba[scored]
        y = games.score[scored]
        rows.append([metrics.log_loss(y, p), metrics.log_loss_3(y, p), metrics.brier(y, p)])
    return np.array(rows)


@pytest.mark.parametrize("method,values,rated", CASES, ids=[f"{type(c[0]).__name__}-{c[2]}" for c in CASES])
def test_grid_equals_scoring_each_run(method, values, rated, request):
    games = request.getfixturevalue(rated)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = method.grid(games, burn_in=0.2, **values)
        expected = by_runs(method, games, values, burn_in=0.2)
    assert list(df.columns[: len(values)]) == list(values)
    assert len(df) == np.prod([len(v) for v in values.values()])
    np.testing.assert_allclose(df["log_loss"], expected[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(df["brier"], expected[:, 2], rtol=0, atol=1e-12)
    if "log_loss_3" in df:
        np.testing.assert_allclose(df["log_loss_3"], expected[:, 1], rtol=0, atol=1e-12)
    else:  # left out only where no setting forecasts a draw on games with draws
        assert np.all(np.isnan(expected[:, 1]))
    # the settings differ in their scores: a loop that ran one setting for all would not
    assert df["log_loss"].nunique() == len(df)


def test_draw_models_keep_log_loss_3_and_half_win_models_drop_it(games, periods):
    assert "log_loss_3" in TrueSkill().grid(periods, beta=[3.0, 5.0])
    assert "log_loss_3" not in Elo().grid(games, k=[10.0, 20.0])


def test_best_setting_and_objective(games):
    df = Elo().grid(games, k=[1.0, 20.0, 400.0], objective="brier")
    assert df.attrs["objective"] == "brier"
    assert df.attrs["best"] == {"k": float(df["k"][df["brier"].idxmin()])}


def test_settings_that_change_the_structure_are_grouped(games):
    # another filter's kernels, period_days other times: each group its own batched loop
    methods = [Elo(k=10.0), Glicko(period_days=1.0), Elo(k=30.0), Glicko(period_days=30.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = evaluate(methods, games, 0.1)
        reference = evaluate_by_runs(methods, games, 0.1)
    np.testing.assert_allclose(batched, reference, rtol=0, atol=1e-12, equal_nan=True)


def test_learned_draw_setting_is_resolved_first():
    # draw-free games: TrueSkill learns draw_probability 0, as its run does
    sim = ss.simulate(ss.SkillModel("probit", 25 * np.sqrt(2) / 6, 25.0, (25 / 3) ** 2, 0.1, "none"),
                      n_players=10, n_games=400, seed=1)
    games = sim.games.with_periods(10)
    df = TrueSkill().grid(games, beta=[3.0, 5.0])
    assert TrueSkill().resolved(games).draw_probability == 0.0
    expected = [metrics.log_loss(games.score, TrueSkill(beta=b).run(games).proba) for b in (3.0, 5.0)]
    np.testing.assert_allclose(df["log_loss"], expected, rtol=0, atol=1e-12)


def test_bad_settings_are_refused_by_name(games):
    with pytest.raises(ValueError, match="unknown settings.*'q'"):
        Elo().grid(games, q=[1.0])
    with pytest.raises(ValueError, match="grid setting .*'k': -1.0.*k"):
        Elo().grid(games, k=[10.0, -1.0])
    with pytest.raises(ValueError, match="no values given for 'k'"):
        Elo().grid(games, k=[])
    with pytest.raises(ValueError, match="at least one setting"):
        Elo().grid(games)
    with pytest.raises(ValueError, match="burn_in"):
        Elo().grid(games, k=[10.0], burn_in=1.0)
    with pytest.raises(ValueError, match="unknown settings"):
        EKF().grid(games, k=[10.0])


def test_box_grid_spans_the_box_inside_its_bounds():
    pts = box_grid({"k": (1.0, 100.0), "home": (-50.0, 50.0)}, {"k": True, "home": False}, cap=64)
    assert len(pts) == 64  # 8 values a dimension
    ks = sorted({p["k"] for p in pts})
    np.testing.assert_allclose(np.diff(np.log(ks)), np.log(100.0) / 8)  # even on the log scale
    assert ks[0] > 1.0 and ks[-1] < 100.0
    homes = sorted({p["home"] for p in pts})
    assert homes[0] == pytest.approx(-50.0 + 100.0 / 16) and homes[-1] == pytest.approx(50.0 - 100.0 / 16)
