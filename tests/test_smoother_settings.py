"""Every smoother checks its settings against statespace.model.ranges, as the filters do, and refuses
what it cannot forecast or fit.

- a setting out of its range is a ValueError naming the smoother, the setting and the value
  (``LaplaceSmoother(max_iter=0)`` used to return the prior as a fit, ``tol=-1`` was accepted);
- numbers of any NumPy type are numbers (``drift=np.int64(5)`` used to be refused);
- a fit on games with rating periods refuses games without them, and the reverse, naming both
  (the Laplace fit used to forecast exactly (0.5, 0, 0.5) for every game);
- a fit whose ratings or sds run beyond 1e6 scales from the prior mean is a ResultRangeError,
  not a fit (statespace.model.ranges.check_results).

The ranges are statespace.model.ranges' (a drift is a variance in [0, (SD_SCALES alpha)^2], alpha the
model's scale; a location within LOCATION_SCALES alpha), so the bounds below are written from that
rule's constants, not read from each smoother's code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import statespace as ss
from smoothers import BradleyTerry, Colley, Keener, LaplaceSmoother, Massey, RTSSmoother, TrueSkillThroughTime
from statespace.model.ranges import HOME_SCALES, LOCATION_SCALES, RESULT_SCALES, SD_SCALES, ResultRangeError

UNIT = ss.SkillModel("logistic", 1.0, 0.0, 1.0, 0.1, "half")  # alpha = 1
#: just beyond the rule's bounds at alpha = 1: an sd, a variance (a drift), a location
SD_OVER, VAR_OVER, LOC_OVER = 1.01 * SD_SCALES, (1.01 * SD_SCALES) ** 2, 1.01 * LOCATION_SCALES


def _games(times, pairs, scores, **kw) -> ss.Games:
    return ss.Games.from_arrays(list(times), [a for a, _ in pairs], [b for _, b in pairs], list(scores), **kw)


def small() -> ss.Games:
    """Eight dated games among four competitors over two weeks, with scores (Massey and Keener)."""
    import pandas as pd

    pairs = ["AB", "CD", "AC", "BD", "AD", "BC", "AB", "CD"]
    return ss.Games.from_frame(pd.DataFrame({
        "time": pd.to_datetime("2021-03-01") + pd.to_timedelta([0, 0, 3, 3, 7, 7, 10, 10], unit="D"),
        "a": [p[0] for p in pairs], "b": [p[1] for p in pairs],
        "score": [1, 0, 0.5, 1, 0, 1, 1, 0.5], "score_a": [2, 0, 1, 3, 0, 2, 1, 1], "score_b": [1, 1, 1, 0, 2, 0, 0, 1]}))


@pytest.mark.parametrize("make, setting", [
    (lambda: LaplaceSmoother(max_iter=0), "max_iter"),
    (lambda: LaplaceSmoother(max_iter=2.5), "max_iter"),
    (lambda: LaplaceSmoother(tol=-1), "tol"),
    (lambda: LaplaceSmoother(tol=0), "tol"),
    (lambda: LaplaceSmoother(tol=math.nan), "tol"),
    (lambda: LaplaceSmoother(UNIT, drift=VAR_OVER), "drift"),
    (lambda: LaplaceSmoother(UNIT, drift=True), "drift"),
    (lambda: LaplaceSmoother(period_days=-1.0), "period_days"),
    (lambda: LaplaceSmoother(blas_threads=0), "blas_threads"),
    (lambda: LaplaceSmoother(UNIT, drift_bounds=(0.0, 1.0)), "drift_bounds"),
    (lambda: LaplaceSmoother(UNIT, drift_bounds=(1.0, VAR_OVER)), "drift_bounds"),
    (lambda: LaplaceSmoother(UNIT, drift_bounds=(2.0, 1.0)), "drift_bounds"),
    (lambda: BradleyTerry(max_iter=0), "max_iter"),
    (lambda: BradleyTerry(tol=-1e-3), "tol"),
    (lambda: RTSSmoother(UNIT, drift=VAR_OVER), "drift"),
    (lambda: RTSSmoother(refit_tol=math.inf), "refit_tol"),
    (lambda: RTSSmoother(dense_cov_limit=-1), "dense_cov_limit"),
    # TrueSkill Through Time's unit is alpha = sqrt(2) beta: 1 at beta = 1/sqrt(2)
    (lambda: TrueSkillThroughTime(beta=1 / math.sqrt(2), sigma=SD_OVER), "sigma"),
    (lambda: TrueSkillThroughTime(beta=1 / math.sqrt(2), tau=SD_OVER), "tau"),
    (lambda: TrueSkillThroughTime(beta=1 / math.sqrt(2), mu=LOC_OVER), "mu"),
    (lambda: TrueSkillThroughTime(beta=1 / math.sqrt(2), home=-1.01 * HOME_SCALES), "home"),
    (lambda: TrueSkillThroughTime(beta=0.99e-100 / math.sqrt(2)), "beta"),  # sqrt(2) beta is the scale
    (lambda: TrueSkillThroughTime(beta=1e100), "beta"),
    (lambda: TrueSkillThroughTime(max_iter=-1), "max_iter"),
    (lambda: Keener(max_iter=0.5), "max_iter"),
    (lambda: Colley(link_blocks=np.float64(2.5)), "link_blocks"),
    (lambda: Massey(window=-3), "window"),
])
def test_a_setting_out_of_range_is_refused_naming_it(make, setting):
    with pytest.raises(ValueError, match=rf"{setting}\S* must"):
        make()


def test_pymc_settings_go_through_the_shared_rule():
    pytest.importorskip("pymc")
    from smoothers import PyMCSmoother

    for kwargs, setting in [({"drift": VAR_OVER}, "drift"), ({"prior_var": -1.0}, "prior_var"),
                            ({"home": LOC_OVER}, "home"), ({"draw_param": "0.3"}, "draw_param"),
                            ({"chains": 0}, "chains"), ({"target_accept": 1.0}, "target_accept"),
                            ({"max_rhat": 1.0}, "max_rhat")]:
        with pytest.raises(ValueError, match=rf"PyMCSmoother: {setting} must be"):
            PyMCSmoother(ss.SkillModel("logistic", 1.0), **kwargs)
    fixed = PyMCSmoother(ss.SkillModel("logistic", 1.0), drift=np.int64(2), home=np.float32(0.5), draws=np.int64(10))
    assert (fixed.drift, fixed.home, fixed.draws) == (2.0, 0.5, 10) and type(fixed.drift) is float


def test_numbers_of_any_numpy_type_are_numbers():
    lap = LaplaceSmoother(UNIT, drift=np.int64(5), tol=np.float32(1e-6), max_iter=np.int32(7))
    assert lap.model.drift == 5.0 and lap.max_iter == 7 and lap.tol == pytest.approx(1e-6)
    assert LaplaceSmoother(UNIT, drift_bounds=(np.float32(0.5), np.int64(4))).drift_bounds == (0.5, 4.0)
    assert RTSSmoother(UNIT, drift=np.float32(0.25)).model.drift == 0.25
    ttt = TrueSkillThroughTime(sigma=np.float32(4.0), max_iter=np.int64(3), period_days=np.int16(2))
    assert (ttt.sigma, ttt.max_iter, ttt.period_days) == (4.0, 3, 2.0)
    assert Keener(max_iter=np.int64(9), tol=np.float64(1e-8)).max_iter == 9
    assert Colley(link_blocks=np.int8(3), window=np.int64(30)).window == 30.0


def test_max_iter_is_honoured_not_the_prior():
    # one Newton step from the prior mean moves the winner above the loser (the old max_iter=0 fit did not)
    games = small()
    with pytest.warns(RuntimeWarning, match="did not converge in 1 iterations"):
        one = LaplaceSmoother(UNIT, max_iter=1).fit(games)
    assert np.ptp(one.mean) > 0


METHODS = [
    pytest.param(lambda: LaplaceSmoother(UNIT), id="laplace"),
    pytest.param(lambda: BradleyTerry(ss.SkillModel("logistic", 1.0, 0.0, 1.0, 0.0, "half")), id="bradley_terry"),
    pytest.param(lambda: RTSSmoother(UNIT), id="rts"),
    pytest.param(lambda: TrueSkillThroughTime(), id="ttt"),
    pytest.param(lambda: Colley(link_blocks=2), id="colley"),
    pytest.param(lambda: Massey(link_blocks=2), id="massey"),
    pytest.param(lambda: Keener(link_blocks=2), id="keener"),
]


@pytest.mark.parametrize("make", METHODS)
def test_forecasts_refuse_games_whose_periods_do_not_match_the_fit(make):
    games = small()
    later = _games(["2021-03-20"], [("A", "B")], [1.0])
    plain = make().fit(games)
    with pytest.raises(ValueError, match="fitted on games without rating periods but given games with"):
        plain.predict_proba(later.with_periods(every="week"))
    weekly = make().fit(games.with_periods(every="week"))
    with pytest.raises(ValueError, match="fitted on games with rating periods but given games without"):
        weekly.predict_proba(later)
    # the time base is refused as before, naming both
    with pytest.raises(ValueError, match="time base 'datetime'.*time base 'numeric'"):
        plain.predict_proba(_games([5.0], [("A", "B")], [1.0]))
    # matching tables forecast
    assert plain.predict_proba(later).shape == weekly.predict_proba(later.with_periods(every="week")).shape == (1, 3)


#: a gap (units of time) over which the largest accepted drift at alpha = 1, SD_SCALES^2 a unit,
#: adds a variance of (100 RESULT_SCALES)^2: a returning competitor's sd is far beyond the bound
GAP = (100.0 * RESULT_SCALES / SD_SCALES) ** 2


def _gap_games() -> ss.Games:
    return _games([0.0, 1.0, GAP, 2 * GAP], [("A", "B"), ("A", "B"), ("A", "C"), ("C", "B")], [1, 0, 1, 0.5])


def test_a_fit_whose_arithmetic_breaks_down_is_a_result_range_error():
    # a drift of SD_SCALES^2 a unit (the largest accepted at alpha = 1) over the gaps: the
    # posterior's precisions are further apart than double precision resolves, and the Laplace
    # fit's Hessian is singular (a SuperLU traceback before); the error names the longest gap
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, SD_SCALES**2, "half")
    with pytest.raises(ResultRangeError, match=r"laplace: the whole-history Hessian is singular.*longest gap"):
        LaplaceSmoother(model).fit(_gap_games())
    # the same gaps with a modest drift are a fit
    assert np.all(np.isfinite(LaplaceSmoother(UNIT).fit(_gap_games()).mean))


def test_ttt_results_beyond_the_result_bound_are_a_result_range_error():
    with pytest.raises(ResultRangeError, match=r"ttt: the (rating|sd) of '[ABC]'"):
        TrueSkillThroughTime(beta=1 / math.sqrt(2), sigma=1.0, tau=SD_SCALES).fit(_gap_games())


def test_static_rules_refuse_weights_double_precision_cannot_solve():
    games = small().with_weights(np.r_[1e100, np.ones(7)])
    for method in (Colley(link_blocks=2), Massey(link_blocks=2)):
        with pytest.raises(ss.GamesError, match=r"row 0\), further apart than double precision") as info:
            method.fit(games)
        assert info.value.rows == [0] and info.value.column == "weight"
