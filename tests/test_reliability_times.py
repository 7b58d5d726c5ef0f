"""Regression tests for the reliability audit, the "times" part: each case is the
audit's minimal reproduction and the behaviour the issue asks for. Out-of-range dates are row
errors, mixed UTC offsets are read as UTC, whole-number years are years, a fitted method refuses
games on the other time base, the static Bradley-Terry fit forecasts at any time, and absurd
game weights are refused by name instead of failing inside scipy."""

from __future__ import annotations

import datetime
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import statespace as ss
from filters import EKF, Elo, Glicko
from smoothers import BradleyTerry, LaplaceSmoother

A, B = ["A", "B", "A", "B"], ["B", "C", "C", "A"]
SCORES = [1, 0, 1, 0.5]


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "statespace", *args], capture_output=True, text=True)


# ---------------------------------------------------------------- dates pandas cannot hold
OUTSIDE = ["9999-12-31", "1600-01-01", "0001-01-01"]


def test_dates_outside_the_nanosecond_range_are_row_errors_in_a_csv(tmp_path):
    """They wrapped: 9999-12-31 became a day of 1816 and reordered the games."""
    path = tmp_path / "games.csv"
    path.write_text("time,a,b,score\n2020-01-01,A,B,1\n" + "".join(f"{t},B,C,0\n" for t in OUTSIDE))
    with pytest.raises(ss.GamesError, match=r"column 'time': 3 rows .*row 1 \(line 3 of games.csv\): '9999-12-31'") as exc:
        ss.Games.from_csv(path)
    assert exc.value.rows == [1, 2, 3] and exc.value.column == "time"


@pytest.mark.parametrize("times", [
    pd.Series(["2020-01-01"] + OUTSIDE, dtype=object),
    pd.Series([datetime.datetime(2020, 1, 1), datetime.datetime(9999, 12, 31), datetime.datetime(1600, 1, 1),
               datetime.datetime(1, 1, 1)]),
    pd.Series([datetime.date(2020, 1, 1), datetime.date(9999, 12, 31), datetime.date(1600, 1, 1),
               datetime.date(1, 1, 1)], dtype=object),
    pd.Series(np.array(["2020-01-01"] + OUTSIDE, dtype="datetime64[s]")),
], ids=["text", "datetime", "date", "datetime64[s]"])
def test_dates_outside_the_nanosecond_range_are_row_errors_in_a_frame(times):
    df = pd.DataFrame({"time": times, "a": A, "b": B, "score": SCORES})
    with pytest.raises(ss.GamesError, match="column 'time'") as exc:
        ss.Games.from_frame(df)
    assert exc.value.rows == [1, 2, 3] and exc.value.column == "time"
    with pytest.raises(ss.GamesError, match="column 'time'"):
        ss.Games.from_arrays(times.to_numpy(), A, B, SCORES)


def test_out_of_range_dates_are_dropped_like_other_bad_times():
    df = pd.DataFrame({"time": ["2020-01-02", "9999-12-31", "2020-01-01", "not a date"], "a": A, "b": B,
                       "score": SCORES})
    with pytest.warns(ss.DroppedRowsWarning, match="row 1 \\(time"):
        g = ss.Games.from_frame(df, errors="drop")
    assert list(g.row) == [0, 2]
    assert list(g.dropped["row"]) == [1, 3] and set(g.dropped["column"]) == {"time"}
    np.testing.assert_array_equal(g.time, np.array(["2020-01-02", "2020-01-01"], dtype="datetime64[ns]"))


def test_dates_just_inside_the_range_are_kept_exactly():
    g = ss.Games.from_arrays(["1677-09-22", "2262-04-10"], ["A", "B"], ["B", "A"], [1, 0])
    np.testing.assert_array_equal(g.time, np.array(["1677-09-22", "2262-04-10"], dtype="datetime64[ns]"))
    assert list(g.order) == [0, 1]


def test_an_out_of_range_date_is_one_line_and_exit_2_on_the_command_line(tmp_path):
    path = tmp_path / "games.csv"
    path.write_text("time,a,b,score\n2020-01-01,A,B,1\n9999-12-31,B,A,0\n")
    out = _cli("rate", str(path))
    assert out.returncode == 2 and "Traceback" not in out.stderr and "column 'time'" in out.stderr
    out = _cli("rate", str(path), "--drop-invalid")
    assert out.returncode == 0 and "dropped 1 invalid row" in out.stderr


# ---------------------------------------------------------------- UTC offsets
def test_mixed_utc_offsets_are_converted_to_utc():
    """A local-time column crossing daylight saving raised pandas' "Mixed timezones detected"."""
    g = ss.Games.from_arrays(["2020-03-28T12:00:00+01:00", "2020-03-30T12:00:00+02:00"], ["A", "B"], ["B", "A"],
                             [1, 0])
    np.testing.assert_array_equal(g.time, np.array(["2020-03-28T11:00", "2020-03-30T10:00"], dtype="datetime64[ns]"))


def test_mixed_offsets_as_python_datetimes_are_converted_to_utc():
    tz = [datetime.timezone(datetime.timedelta(hours=h)) for h in (1, 2)]
    times = [datetime.datetime(2020, 3, 28, 12, tzinfo=tz[0]), datetime.datetime(2020, 3, 30, 12, tzinfo=tz[1])]
    g = ss.Games.from_frame(pd.DataFrame({"time": times, "a": ["A", "B"], "b": ["B", "A"], "score": [1, 0]}))
    np.testing.assert_array_equal(g.time, np.array(["2020-03-28T11:00", "2020-03-30T10:00"], dtype="datetime64[ns]"))


def test_times_without_an_offset_are_taken_as_utc_beside_ones_with_an_offset():
    g = ss.Games.from_arrays(["2020-03-28T12:00:00+01:00", "2020-03-29T12:00:00"], ["A", "B"], ["B", "A"], [1, 0])
    np.testing.assert_array_equal(g.time, np.array(["2020-03-28T11:00", "2020-03-29T12:00"], dtype="datetime64[ns]"))


def test_a_time_zone_aware_column_is_still_converted_to_utc():
    times = pd.to_datetime(["2020-03-28 12:00", "2020-03-30 12:00"]).tz_localize("Europe/Paris")
    g = ss.Games.from_frame(pd.DataFrame({"time": times, "a": ["A", "B"], "b": ["B", "A"], "score": [1, 0]}))
    np.testing.assert_array_equal(g.time, np.array(["2020-03-28T11:00", "2020-03-30T10:00"], dtype="datetime64[ns]"))


def test_mixed_offsets_on_the_command_line_rate_without_a_traceback(tmp_path):
    path = tmp_path / "games.csv"
    path.write_text("time,a,b,score\n2020-03-28T12:00:00+01:00,A,B,1\n2020-03-30T12:00:00+02:00,B,A,0\n")
    out = _cli("rate", str(path))
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr


# ---------------------------------------------------------------- years
def test_whole_number_years_are_read_as_years():
    """2019, 2020 were day numbers: a drift per day saw one day between them instead of a year."""
    g = ss.Games.from_arrays([2019, 2020], ["A", "A"], ["B", "B"], [1, 0])
    assert g.time_base == "datetime"
    np.testing.assert_array_equal(g.time, np.array(["2019-01-01", "2020-01-01"], dtype="datetime64[ns]"))
    for method in (EKF(), LaplaceSmoother()):  # drift per day (period_days=1)
        assert np.diff(method.times(g))[0] == 365
    assert np.diff(Glicko(period_days=365).times(g))[0] == 1


def test_years_in_a_csv_and_as_text_agree(tmp_path):
    path = tmp_path / "games.csv"
    path.write_text("time,a,b,score\n2019,A,B,1\n2020,B,A,0\n,A,B,1\n")
    with pytest.warns(ss.DroppedRowsWarning):
        from_csv = ss.Games.from_csv(path, errors="drop")
    as_text = ss.Games.from_arrays(["2019", "2020"], ["A", "B"], ["B", "A"], [1, 0])
    np.testing.assert_array_equal(from_csv.time, as_text.time)


@pytest.mark.parametrize("times", [[1, 2], [0, 2019], [2019.5, 2020], [2019, 5000], [1677, 2000]])
def test_other_numbers_stay_plain_numbers(times):
    g = ss.Games.from_arrays(times, ["A", "B"], ["B", "A"], [1, 0])
    assert not g.is_datetime
    np.testing.assert_array_equal(g.time, np.asarray(times, dtype=float))


# ---------------------------------------------------------------- one time base per fit


def _dated():
    return ss.Games.from_arrays(["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"], A, B, SCORES)


def _numeric():
    return ss.Games.from_arrays([5.0, 6.0], ["A", "B"], ["B", "C"], [1, 0])


def test_the_time_base_is_recorded_on_the_games():
    assert _dated().time_base == "datetime"
    assert _numeric().time_base == "numeric"
    assert _dated().take([0, 1]).time_base == "datetime"


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("smoother", [LaplaceSmoother(), BradleyTerry()], ids=["laplace", "bradley_terry"])
def test_a_smoother_fitted_on_dates_refuses_numeric_games(smoother):
    """The Laplace smoother returned 0.5 for every such game."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # BradleyTerry: Ford's condition on four games
        fit = smoother.fit(_dated())
    with pytest.raises(ValueError, match="'datetime'.*'numeric'"):
        fit.predict_proba(_numeric())
    numeric_fit = LaplaceSmoother().fit(_numeric())
    with pytest.raises(ValueError, match="'numeric'.*'datetime'"):
        numeric_fit.predict_proba(_dated())
    with pytest.raises(ValueError, match="'numeric'.*'datetime'"):
        LaplaceSmoother().fit(_dated(), warm_start=numeric_fit)
    assert fit.predict_proba(_dated()).shape == (4, 3)  # the same base still forecasts


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("method", [Elo(), EKF(), Glicko(), EKF(covariance="full")],
                         ids=["elo", "ekf", "glicko", "ekf_full"])
def test_a_filter_run_on_dates_refuses_numeric_games(method):
    run = method.fit(_dated())
    assert run.state.time_base == "datetime"
    with pytest.raises(ValueError, match="'datetime'.*'numeric'"):
        run.predict_proba(_numeric())
    with pytest.raises(ValueError, match="'datetime'.*'numeric'"):
        run.continue_run(_numeric())
    with pytest.raises(ValueError, match="'datetime'.*'numeric'"):
        method.update(run.state, _numeric())
    with pytest.raises(ValueError, match="'numeric'.*'datetime'"):
        method.run(_dated(), state=method.fit(_numeric()).state)
    assert run.predict_proba(_dated()).shape == (4, 3)
    assert run.continue_run(_dated(), allow_past=True).state.time_base == "datetime"  # its own dates again


# ---------------------------------------------------------------- the static fit at any time
@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_bradley_terry_forecasts_known_competitors_before_their_first_game():
    """A static strength is the same at every time; it gave 0.5 before a competitor's first game."""
    fit = BradleyTerry().fit(ss.Games.from_arrays(
        ["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04", "2020-01-05", "2020-01-06"],
        ["A", "A", "A", "A", "B", "B"], ["C", "C", "C", "C", "C", "C"], [1, 1, 1, 0, 1, 0]))
    early, late = (ss.Games.from_arrays([t], ["A"], ["C"], [1]) for t in ("2019-01-01", "2021-01-01"))
    p_early, p_late = fit.predict_proba(early), fit.predict_proba(late)
    np.testing.assert_allclose(p_early, p_late)
    assert p_early[0, 0] > 0.6  # A won three of four against C
    rating_a = fit.ratings(at="2019-06-01").set_index("player").loc["A", "mean"]
    assert rating_a == pytest.approx(fit.ratings().set_index("player").loc["A", "mean"])


# ---------------------------------------------------------------- absurd weights
@pytest.mark.parametrize("smoother", [LaplaceSmoother(), BradleyTerry()], ids=["laplace", "bradley_terry"])
def test_absurd_game_weights_are_refused_by_name(smoother):
    """Weights of 1e300 failed inside scipy with "Factor is exactly singular"."""
    g = ss.Games.from_arrays([0, 1, 2, 3], A, B, SCORES).with_weights([1e300] * 4)
    with pytest.raises(ss.GamesError, match="weight") as exc:
        smoother.fit(g)
    assert exc.value.column == "weight"
    assert "singular" in str(exc.value) and "Games.with_weights" in str(exc.value)


def test_large_but_sane_weights_still_fit():
    g = ss.Games.from_arrays([0, 1, 2, 3], A, B, SCORES).with_weights([1e3, 1.0, 2.0, 1.0])
    fit = LaplaceSmoother().fit(g)
    assert np.all(np.isfinite(fit.mean)) and np.all(fit.var > 0)
