"""Metrics against values computed by hand on tiny inputs (the arithmetic is written out)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from statespace.model import metrics

# three games: a wins, a draw, a loses
SCORE = np.array([1.0, 0.5, 0.0])
# win/draw/loss forecasts; expected scores E = P(win) + P(draw)/2 = 0.7, 0.5, 0.4
PROBA = np.array([[0.6, 0.2, 0.2],
                  [0.3, 0.4, 0.3],
                  [0.2, 0.4, 0.4]])
E = np.array([0.6 + 0.1, 0.3 + 0.2, 0.2 + 0.2])


def test_expected_score():
    np.testing.assert_allclose(metrics.expected_score(PROBA), E)
    np.testing.assert_array_equal(metrics.expected_score(E), E)
    with pytest.raises(ValueError):
        metrics.expected_score(np.ones((2, 2)) / 2)


def test_log_loss_by_hand():
    # game 1: -log(0.7); game 2 (draw, target 0.5): -(0.5 log 0.5 + 0.5 log 0.5) = log 2;
    # game 3 (loss): -log(1 - 0.4) = -log(0.6)
    per = [-math.log(0.7), math.log(2.0), -math.log(0.6)]
    np.testing.assert_allclose(metrics.log_loss(SCORE, PROBA, per_game=True), per, rtol=1e-12)
    assert metrics.log_loss(SCORE, PROBA) == pytest.approx(sum(per) / 3, rel=1e-12)
    # expected scores directly give the same
    assert metrics.log_loss(SCORE, E) == pytest.approx(sum(per) / 3, rel=1e-12)


def test_log_loss_clips_certain_wrong_forecasts():
    loss = metrics.log_loss([1.0], [0.0])
    assert np.isfinite(loss) and loss == pytest.approx(-math.log(metrics.EPS), rel=1e-6)


def test_brier_by_hand():
    # (0.7 - 1)^2, (0.5 - 0.5)^2, (0.4 - 0)^2 = 0.09, 0, 0.16
    np.testing.assert_allclose(metrics.brier(SCORE, PROBA, per_game=True), [0.09, 0.0, 0.16], atol=1e-15)
    assert metrics.brier(SCORE, PROBA) == pytest.approx((0.09 + 0.0 + 0.16) / 3)


def test_log_loss_3_by_hand():
    # -log P(observed): win 0.6, draw 0.4, loss 0.4
    per = [-math.log(0.6), -math.log(0.4), -math.log(0.4)]
    np.testing.assert_allclose(metrics.log_loss_3(SCORE, PROBA, per_game=True), per, rtol=1e-12)
    assert metrics.log_loss_3(SCORE, PROBA) == pytest.approx(sum(per) / 3)


def test_log_loss_3_nan_rule():
    no_draw_forecast = np.array([[0.7, 0.0, 0.3], [0.5, 0.0, 0.5], [0.4, 0.0, 0.6]])
    # data with a draw, forecasts with no draw probability anywhere: not applicable -> NaN
    assert math.isnan(metrics.log_loss_3(SCORE, no_draw_forecast))
    assert np.all(np.isnan(metrics.log_loss_3(SCORE, no_draw_forecast, per_game=True)))
    # data without draws: an ordinary score, -log(0.7) and -log(0.6)
    decisive = np.array([1.0, 0.0])
    assert metrics.log_loss_3(decisive, no_draw_forecast[[0, 2]]) == pytest.approx(
        (-math.log(0.7) - math.log(0.6)) / 2)
    # one draw forecast > 0 somewhere: the rule does not apply, the zero-probability draw is clipped
    some = no_draw_forecast.copy()
    some[0] = [0.6, 0.1, 0.3]
    out = metrics.log_loss_3(SCORE, some, per_game=True)
    assert out[1] == pytest.approx(-math.log(metrics.EPS))
    with pytest.raises(ValueError):
        metrics.log_loss_3(SCORE, E)  # needs (n, 3)


def test_accuracy_with_band_by_hand():
    # E = 0.7, 0.5, 0.4 with band (0.45, 0.55): calls win, draw, loss -> all right
    assert metrics.accuracy(SCORE, PROBA) == 1.0
    # E = 0.6, 0.3, 0.5 for results 0, 0.5, 1: calls win (wrong), loss (wrong), draw (wrong)
    assert metrics.accuracy(np.array([0.0, 0.5, 1.0]), np.array([0.6, 0.3, 0.5])) == 0.0
    # E = 0.6, 0.46 for results 1, 0.5: both right; then the band (0.4, 0.5) calls 0.46 a draw, 0.6 a win
    np.testing.assert_array_equal(metrics.accuracy([1.0, 0.5], [0.6, 0.46], per_game=True), [1.0, 1.0])
    np.testing.assert_array_equal(metrics.accuracy([1.0, 0.5], [0.6, 0.56], band=(0.4, 0.5), per_game=True),
                                  [1.0, 0.0])
    with pytest.raises(ValueError):
        metrics.accuracy(SCORE, PROBA, band=(0.6, 0.4))


def test_accuracy_at_half_by_hand():
    # decisive games only: results 1, 0, 1, 0 (and a draw, left out) with E = 0.7, 0.2, 0.4, 0.5, 0.9
    score = np.array([1.0, 0.0, 1.0, 0.0, 0.5])
    e = np.array([0.7, 0.2, 0.4, 0.5, 0.9])
    # right, right, wrong, half (E exactly 0.5): (1 + 1 + 0 + 0.5) / 4
    assert metrics.accuracy(score, e, band=None) == pytest.approx(2.5 / 4)
    per = metrics.accuracy(score, e, band=None, per_game=True)
    np.testing.assert_array_equal(per[:4], [1.0, 1.0, 0.0, 0.5])
    assert math.isnan(per[4])
    assert math.isnan(metrics.accuracy([0.5, 0.5], [0.3, 0.8], band=None))


def test_calibration_table_by_hand():
    score = np.array([1.0, 0.0, 1.0, 1.0, 0.5])
    e = np.array([0.12, 0.18, 0.81, 0.89, 0.85])
    t = metrics.calibration_table(score, e, bins=5)
    # edges 0, .2, .4, .6, .8, 1: bin [0, .2) holds 0.12, 0.18; bin [.8, 1] holds 0.81, 0.89, 0.85
    assert list(t["n"]) == [2, 3]
    np.testing.assert_allclose(t["bin_lo"], [0.0, 0.8])
    np.testing.assert_allclose(t["bin_hi"], [0.2, 1.0])
    np.testing.assert_allclose(t["mean_forecast"], [(0.12 + 0.18) / 2, (0.81 + 0.89 + 0.85) / 3])
    np.testing.assert_allclose(t["mean_score"], [0.5, 2.5 / 3])
    # se = sample sd / sqrt(n): bin 1 values 1, 0: sd = sqrt(0.5); bin 2 values 1, 1, 0.5
    m2 = 2.5 / 3
    sd2 = math.sqrt(((1 - m2) ** 2 * 2 + (0.5 - m2) ** 2) / 2)
    np.testing.assert_allclose(t["se"], [math.sqrt(0.5) / math.sqrt(2), sd2 / math.sqrt(3)])


def test_calibration_table_edges():
    # 1.0 goes in the last bin; 0.0 in the first; a lone game has se NaN
    t = metrics.calibration_table([1.0, 0.0], [1.0, 0.0], bins=4)
    assert list(t["n"]) == [1, 1]
    np.testing.assert_allclose(t["bin_lo"], [0.0, 0.75])
    assert t["se"].isna().all()


def test_paired_difference_by_hand():
    a = np.array([1.0, 2.0, 3.0, np.nan])
    b = np.array([0.0, 0.0, 0.0, 1.0])
    # differences 1, 2, 3 (NaN left out): mean 2, sd 1, se 1 / sqrt(3)
    mean, se = metrics.paired_difference(a, b)
    assert mean == pytest.approx(2.0)
    assert se == pytest.approx(1 / math.sqrt(3))
    m1, s1 = metrics.paired_difference([0.5], [0.25])
    assert m1 == 0.25 and math.isnan(s1)
    with pytest.raises(ValueError):
        metrics.paired_difference(np.ones((2, 2)), np.zeros((2, 2)))


@pytest.mark.parametrize("fn", [metrics.log_loss, metrics.brier, metrics.log_loss_3, metrics.accuracy,
                                metrics.calibration_table])
def test_input_validation(fn):
    with pytest.raises(ValueError, match="0, 0.5 or 1"):
        fn(np.array([1.0, 0.7, 0.0]), PROBA)
    with pytest.raises(ValueError, match="forecasts for"):
        fn(SCORE[:2], PROBA)
    with pytest.raises(ValueError, match="one-dimensional"):
        fn(SCORE[None, :], PROBA)
    bad = PROBA.copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"rows \[1\]"):
        fn(SCORE, bad)
    bad = PROBA.copy()
    bad[2, 2] = 1.5
    with pytest.raises(ValueError, match=r"rows \[2\]"):
        fn(SCORE, bad)
    with pytest.raises(ValueError, match=r"rows \[0\]"):
        fn(SCORE, np.array([-0.1, 0.5, 0.5]))
