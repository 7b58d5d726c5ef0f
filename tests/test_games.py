"""Games: construction, ids, time order, splitting, rating periods, and input validation."""

from __future__ import annotations

import datetime as dt
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import data_path, has_data, needs_data
from filters import Elo
from statespace import DroppedRowsWarning, Games, GamesError


# ---------------------------------------------------------------------------- construction
def test_from_arrays_frame_and_csv_agree(tiny_frame, tmp_path):
    f = tiny_frame
    g1 = Games.from_arrays(f.time, f.a, f.b, f.score)
    g2 = Games.from_frame(f)
    path = tmp_path / "games.csv"
    f.to_csv(path, index=False)
    g3 = Games.from_csv(path)
    for g in (g1, g2, g3):
        assert len(g) == 6
        assert list(g.players) == ["ann", "bob", "cid", "dan"]  # sorted names
        np.testing.assert_array_equal(g.a_name, f.a.to_numpy())
        np.testing.assert_array_equal(g.b_name, f.b.to_numpy())
        np.testing.assert_array_equal(g.score, f.score.to_numpy(dtype=float))
        np.testing.assert_array_equal(g.time, pd.to_datetime(f.time).to_numpy())
        assert g.is_datetime
        assert g.neutral.all()  # no column: all neutral, no home advantage
        np.testing.assert_array_equal(g.row, np.arange(6))


def test_arrays_are_read_only(tiny_frame):
    g = Games.from_frame(tiny_frame)
    with pytest.raises(ValueError):
        g.score[0] = 0.0


def test_names_map_to_ids_and_back(tiny_frame):
    g = Games.from_frame(tiny_frame)
    for name in ["ann", "bob", "cid", "dan"]:
        i = g.player_id(name)
        assert g.players[i] == name
        assert g.player_name([i])[0] == name
    np.testing.assert_array_equal(g.player_name(g.a), tiny_frame.a.to_numpy())
    with pytest.raises(KeyError):
        g.player_id("eve")


def test_numeric_ids_in_csv_stay_names(tmp_path):
    path = tmp_path / "ids.csv"
    path.write_text("time,a,b,score\n2020-01-01,100092,007,1\n2020-01-02,007,100092,0\n")
    g = Games.from_csv(path)
    assert set(g.players) == {"100092", "007"}  # the leading zero is kept: read as text
    assert g.player_id(100092) == g.player_id("100092")


def test_numeric_times_and_extra_columns():
    df = pd.DataFrame({"time": [3.0, 1.0, 2.0], "a": ["x", "y", "z"], "b": ["y", "z", "x"],
                       "score": [1, 0, 0.5], "neutral": [0, 1, "true"], "goals": [2, 0, 1]})
    g = Games.from_frame(df)
    assert not g.is_datetime
    np.testing.assert_array_equal(g.days(), [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(g.neutral, [False, True, True])
    np.testing.assert_array_equal(g.extra["goals"], [2, 0, 1])
    back = g.to_frame()
    assert list(back.a) == ["x", "y", "z"] and list(back.goals) == [2, 0, 1]


def test_days_since_epoch():
    g = Games.from_arrays(["1970-01-01", "1970-01-11T12:00"], ["x", "y"], ["y", "x"], [1, 0])
    np.testing.assert_allclose(g.days(), [0.0, 10.5])  # 10 days and 12 hours


# ---------------------------------------------------------------------------- time order
def test_order_is_a_stable_sort_by_time():
    times = [2, 1, 2, 1, 0, 2]
    g = Games.from_arrays(times, list("abcdef"), list("bcdefa"), [1] * 6)
    # stable: equal times keep input order -> 0 first (time 0), then rows 1, 3 (time 1), then 0, 2, 5
    np.testing.assert_array_equal(g.order, [4, 1, 3, 0, 2, 5])


def test_order_is_stable_on_large_tables_with_many_ties(rng):
    n = 500  # large enough that an unstable sort would reorder ties
    times = rng.integers(0, 4, n)
    names = np.array([f"p{i}" for i in range(n + 1)])
    g = Games.from_arrays(times, names[:-1], names[1:], np.ones(n))
    # Python's sorted() is guaranteed stable: the independent reference
    np.testing.assert_array_equal(g.order, sorted(range(n), key=lambda i: times[i]))


def test_shuffled_table_gives_same_forecasts_row_by_row(rng):
    n = 200
    names = np.array([f"p{i}" for i in range(12)])
    a = rng.integers(0, 12, n)
    b = (a + rng.integers(1, 12, n)) % 12
    times = pd.Timestamp("2021-01-01") + pd.to_timedelta(np.arange(n), unit="h")  # distinct times
    score = rng.choice([0.0, 0.5, 1.0], n)
    sorted_games = Games.from_arrays(times, names[a], names[b], score)
    perm = rng.permutation(n)
    shuffled = Games.from_arrays(times[perm], names[a][perm], names[b][perm], score[perm])
    assert not np.array_equal(shuffled.order, np.arange(n))
    r_sorted = Elo(k=24).run(sorted_games)
    r_shuffled = Elo(k=24).run(shuffled)
    # row i of the shuffled table is row perm[i] of the sorted one
    np.testing.assert_allclose(r_shuffled.proba, r_sorted.proba[perm], rtol=0, atol=1e-12)
    # and the forecasts actually vary, so the check has teeth
    assert np.ptp(r_sorted.proba[:, 0]) > 0.1


# ---------------------------------------------------------------------------- split
def test_split_in_time_order_with_shared_ids():
    # 10 games, given out of order, with ties in time
    times = [5, 1, 9, 3, 3, 7, 0, 8, 2, 6]
    g = Games.from_arrays(times, list("abcdefghij"), list("bcdefghija"), [1, 0] * 5)
    train, test = g.split(0.7)
    assert len(train) == 7 and len(test) == 3
    assert set(train.row).isdisjoint(test.row)
    assert sorted(np.r_[train.row, test.row]) == list(range(10))
    assert train.time.max() <= test.time.min()
    np.testing.assert_array_equal(test.row, [2, 5, 7])  # times 9, 7, 8 in caller order
    assert train.players is not None and list(train.players) == list(g.players)
    assert list(test.players) == list(g.players)
    # each part keeps caller order
    assert list(train.row) == sorted(train.row)
    # same ids for the same names
    np.testing.assert_array_equal(test.a_name, np.asarray(list("abcdefghij"), dtype=object)[[2, 5, 7]])


@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1, 1.5, 0.01])
def test_split_rejects_bad_fractions(fraction, tiny_frame):
    with pytest.raises(ValueError):
        Games.from_frame(tiny_frame).split(fraction)


# ---------------------------------------------------------------------------- periods
DATES = pd.to_datetime(["2019-12-29", "2019-12-30", "2020-01-05", "2020-01-06", "2020-01-31",
                        "2020-02-01", "2020-12-31", "2021-01-01", "2021-01-04"])


def _dated_games(dates=DATES):
    n = len(dates)
    names = [f"p{i}" for i in range(n + 1)]
    return Games.from_arrays(dates, names[:-1], names[1:], [1] * n)


def _same_partition(codes, keys):
    """codes group games exactly as keys do."""
    for i in range(len(keys)):
        for j in range(len(keys)):
            assert (codes[i] == codes[j]) == (keys[i] == keys[j]), (i, j)


def test_periods_fixed_days_from_epoch_and_origin():
    g = _dated_games()
    codes = g.with_periods(7).period
    epoch = dt.date(1970, 1, 1)
    expected = [(d.date() - epoch).days // 7 for d in DATES]  # independent day count
    np.testing.assert_array_equal(codes, expected)
    codes_o = g.with_periods(10, origin="2019-12-29").period
    np.testing.assert_array_equal(codes_o, [(d.date() - dt.date(2019, 12, 29)).days // 10 for d in DATES])


def test_periods_numeric_times():
    g = Games.from_arrays([0.0, 2.9, 3.0, 7.5, 6.0], list("abcde"), list("bcdea"), [1] * 5)
    np.testing.assert_array_equal(g.with_periods(3).period, [0, 0, 1, 2, 2])
    with pytest.raises(ValueError):
        g.with_periods("week")  # calendar periods need dates
    with pytest.raises(ValueError):
        g.with_periods(0)


def test_periods_iso_week_month_year():
    g = _dated_games()
    week = g.with_periods("week").period
    _same_partition(week, [d.isocalendar()[:2] for d in DATES])  # ISO weeks start on Monday
    assert np.all(np.diff(week) >= 0)
    # 2019-12-29 is a Sunday and 2019-12-30 a Monday: different weeks
    assert week[0] != week[1]
    month = g.with_periods("month").period
    _same_partition(month, [(d.year, d.month) for d in DATES])
    year = g.with_periods("year").period
    _same_partition(year, [d.year for d in DATES])


def test_periods_per_game_follow_time_order():
    g = Games.from_arrays([3, 1, 2, 1], list("abcd"), list("bcda"), [1] * 4)
    np.testing.assert_array_equal(g.with_periods("game").period, [3, 0, 2, 1])
    np.testing.assert_array_equal(g.with_periods("game").batches(), [0, 1, 2, 3, 4])


def test_periods_from_column_and_batches():
    df = pd.DataFrame({"time": [1, 2, 3, 4, 5], "a": list("abcde"), "b": list("bcdea"), "score": [1] * 5,
                       "season": ["s1", "s1", "s2", "s2", "s2"]})
    g = Games.from_frame(df).with_periods(column="season")
    assert g.period[0] == g.period[1] != g.period[2] == g.period[3] == g.period[4]
    np.testing.assert_array_equal(g.batches(), [0, 2, 5])
    with pytest.raises(GamesError, match="nope"):
        Games.from_frame(df).with_periods(column="nope")
    with pytest.raises(ValueError):
        Games.from_frame(df).with_periods(7, column="season")
    with pytest.raises(ValueError):
        Games.from_frame(df).with_periods()


def test_period_that_comes_back_raises():
    df = pd.DataFrame({"time": [1, 2, 3, 4], "a": list("abcd"), "b": list("bcda"), "score": [1] * 4,
                       "season": ["s1", "s2", "s1", "s2"]})
    with pytest.raises(GamesError, match=r"row 2.*season|season.*row 2") as info:
        Games.from_frame(df).with_periods(column="season")
    assert info.value.rows == [2]
    with pytest.raises(GamesError, match="row 2") as info:
        Games.from_frame(df.rename(columns={"season": "period"}))
    assert info.value.column == "period"


def test_numeric_period_going_back_in_time_raises():
    # numeric period codes are used as time by period-based filters, so they must not decrease
    df = pd.DataFrame({"time": [1, 2, 3, 4], "a": list("abcd"), "b": list("bcda"), "score": [1] * 4,
                       "period": [2001, 2001, 2000, 2000]})
    with pytest.raises(GamesError, match="row 2") as info:
        Games.from_frame(df)
    assert info.value.rows == [2]


def test_period_column_in_csv_names_the_line(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("time,a,b,score,period\n1,a,b,1,1\n2,b,c,1,2\n3,c,a,1,1\n")
    with pytest.raises(GamesError, match=r"row 2 \(line 4\)"):
        Games.from_csv(path)


# ---------------------------------------------------------------------------- bad input
def _frame(**over):
    d = {"time": ["2020-01-01", "2020-01-02", "2020-01-03", "2020-01-04"],
         "a": ["x", "y", "z", "w"], "b": ["y", "z", "w", "x"], "score": [1, 0.5, 0, 1]}
    d.update(over)
    return pd.DataFrame(d)


BAD_CELLS = [
    ("time", None, "time"),
    ("time", np.nan, "time"),
    ("time", "not a date", "time"),
    ("time", "2020-13-45", "time"),
    ("a", None, "a"),
    ("a", np.nan, "a"),
    ("a", "   ", "a"),
    ("b", None, "b"),
    ("b", np.nan, "b"),
    ("score", None, "score"),
    ("score", np.nan, "score"),
    ("score", 2, "score"),
    ("score", -1, "score"),
    ("score", 0.25, "score"),
    ("score", "win", "score"),
    ("b", "y", "a/b"),  # row 1 is y vs y: a competitor against itself
]


@pytest.mark.parametrize("col, value, named", BAD_CELLS)
def test_bad_cell_raises_games_error_naming_row_and_column(col, value, named):
    values = list(_frame()[col].astype(object))
    values[1] = value
    df = _frame(**{col: values})
    with pytest.raises(GamesError) as info:
        Games.from_frame(df)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.rows == [1]
    assert err.column == named
    assert f"column '{named}'" in str(err)
    assert "row 1:" in str(err)


@pytest.mark.parametrize("col, value, named", BAD_CELLS)
def test_bad_cell_in_csv_names_the_file_line(col, value, named, tmp_path):
    values = list(_frame()[col].astype(object))
    values[1] = value
    path = tmp_path / "bad.csv"
    _frame(**{col: values}).to_csv(path, index=False)
    with pytest.raises(GamesError) as info:
        Games.from_csv(path)
    # data row 1 is on line 3 (header = line 1)
    assert "row 1 (line 3 of bad.csv)" in str(info.value)
    assert f"column '{named}'" in str(info.value)
    assert info.value.rows == [1]


def test_several_problems_are_all_reported():
    df = _frame(score=[1, 3, 0, 1], a=["x", "y", None, "w"])
    with pytest.raises(GamesError) as info:
        Games.from_frame(df)
    assert info.value.rows == [1, 2]
    assert "column 'score'" in str(info.value) and "column 'a'" in str(info.value)


def test_empty_table_and_missing_columns():
    with pytest.raises(GamesError, match="empty"):
        Games.from_frame(pd.DataFrame(columns=["time", "a", "b", "score"]))
    with pytest.raises(GamesError, match="'score'") as info:
        Games.from_frame(_frame().drop(columns="score"))
    assert info.value.column == "score"
    with pytest.raises(GamesError, match="'a', 'b'"):
        Games.from_frame(_frame().drop(columns=["a", "b"]))


def test_empty_csv_and_mismatched_arrays(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("time,a,b,score\n")
    with pytest.raises(GamesError, match="empty"):
        Games.from_csv(path)
    blank = tmp_path / "blank.csv"
    blank.write_text("")
    with pytest.raises(GamesError):
        Games.from_csv(blank)
    with pytest.raises(FileNotFoundError):
        Games.from_csv(tmp_path / "missing.csv")
    with pytest.raises(GamesError):
        Games.from_arrays([1, 2], ["x"], ["y", "z"], [1, 0])


def test_bad_neutral_flag_and_errors_argument():
    with pytest.raises(GamesError, match="neutral") as info:
        Games.from_frame(_frame(neutral=[0, 1, "maybe", 1]))
    assert info.value.rows == [2]
    with pytest.raises(ValueError):
        Games.from_frame(_frame(), errors="ignore")
    with pytest.raises(TypeError):
        Games.from_frame({"time": [1], "a": ["x"], "b": ["y"], "score": [1]})


# ---------------------------------------------------------------------------- errors="drop"
def test_drop_mode_drops_warns_and_records():
    df = _frame(score=[1, 7, 0, 1], b=["y", "z", "z", "x"])  # row 1 bad score, row 2 z vs z
    with pytest.warns(DroppedRowsWarning) as rec:
        g = Games.from_frame(df, errors="drop")
    msg = str(rec[0].message)
    assert "dropped 2 invalid rows" in msg
    assert "row 1" in msg and "row 2" in msg
    assert len(g) == 2
    np.testing.assert_array_equal(g.row, [0, 3])
    np.testing.assert_array_equal(g.a_name, ["x", "w"])
    assert list(g.dropped["row"]) == [1, 2]
    assert list(g.dropped["column"]) == ["score", "a/b"]
    # the dropped competitor that appeared only in bad rows is not a player
    assert "z" not in set(g.players)


def test_drop_mode_without_problems_is_silent(tiny_frame):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = Games.from_frame(tiny_frame, errors="drop")
    assert len(g) == len(tiny_frame) and len(g.dropped) == 0


def test_drop_everything_raises():
    with pytest.warns(DroppedRowsWarning), pytest.raises(GamesError, match="empty"):
        Games.from_frame(_frame(score=[3, 3, 3, 3]), errors="drop")


# ---------------------------------------------------------------------------- property test
CORRUPTIONS = {
    "time_missing": ("time", lambda df, r: None),
    "time_garbage": ("time", lambda df, r: "yesterday"),
    "a_missing": ("a", lambda df, r: None),
    "b_missing": ("b", lambda df, r: np.nan),
    "score_missing": ("score", lambda df, r: None),
    "score_range": ("score", lambda df, r: 0.75),
    "score_text": ("score", lambda df, r: "draw"),
    "self_play": ("b", lambda df, r: df.at[r, "a"]),
}
EXPECTED_COLUMN = {"time_missing": "time", "time_garbage": "time", "a_missing": "a", "b_missing": "b",
                   "score_missing": "score", "score_range": "score", "score_text": "score",
                   "self_play": "a/b"}


@st.composite
def valid_tables(draw):
    n = draw(st.integers(2, 40))
    n_players = draw(st.integers(2, 8))
    a = draw(st.lists(st.integers(0, n_players - 1), min_size=n, max_size=n))
    off = draw(st.lists(st.integers(1, n_players - 1), min_size=n, max_size=n))
    days = draw(st.lists(st.integers(0, 3000), min_size=n, max_size=n))
    score = draw(st.lists(st.sampled_from([0, 0.5, 1]), min_size=n, max_size=n))
    t = [str(np.datetime64("2000-01-01") + np.timedelta64(d, "D")) for d in days]
    return pd.DataFrame({"time": t, "a": [f"t{x}" for x in a],
                         "b": [f"t{(x + o) % n_players}" for x, o in zip(a, off)], "score": score})


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=valid_tables(), data=st.data())
def test_any_single_corrupted_row_is_reported(df, data):
    Games.from_frame(df)  # the table is valid as generated
    r = data.draw(st.integers(0, len(df) - 1), label="row")
    kind = data.draw(st.sampled_from(sorted(CORRUPTIONS)), label="corruption")
    col, make = CORRUPTIONS[kind]
    bad = df.astype({col: object})
    bad.at[r, col] = make(bad, r)
    with pytest.raises(GamesError) as info:
        Games.from_frame(bad)
    assert info.value.rows == [r]
    assert info.value.column == EXPECTED_COLUMN[kind]
    assert re.search(rf"\brow {r}:", str(info.value))
    assert f"column '{EXPECTED_COLUMN[kind]}'" in str(info.value)
    # and drop mode removes exactly that row
    with pytest.warns(DroppedRowsWarning, match="dropped 1 invalid row"):
        g = Games.from_frame(bad, errors="drop")
    assert len(g) == len(df) - 1 and r not in set(g.row)


# ---------------------------------------------------------------------------- real data
@needs_data
@pytest.mark.skipif(not has_data("atp_tennis"), reason="atp_tennis data set not found")
def test_atp_self_play_rows_raise_then_drop():
    path = data_path("atp_tennis")
    with pytest.raises(GamesError, match="against itself") as info:
        Games.from_csv(path, errors="raise")
    err = info.value
    assert err.column == "a/b"
    assert len(err.rows) == 3  # the README: three rows with id 199999 on both sides
    assert "199999" in str(err)
    for r in err.rows:
        assert f"row {r} (line {r + 2} of games.csv)" in str(err)
    with pytest.warns(DroppedRowsWarning, match="dropped 3 invalid rows"):
        g = Games.from_csv(path, errors="drop")
    assert len(g) == 193_728 - 3
    assert sorted(g.dropped["row"]) == sorted(err.rows)
    raw = pd.read_csv(path, dtype={"a": str, "b": str}, usecols=["a", "b"])
    assert (raw.loc[err.rows, "a"] == raw.loc[err.rows, "b"]).all()


# counts from ../shared/data/README.md
@needs_data
@pytest.mark.parametrize("name, n_games, n_competitors, draw_share", [
    ("intl_football", 49_520, 337, 0.227),
    ("nfl", 16_810, 123, 0.019),
    ("england_football", 208_028, 147, 0.253),
    ("atp_tennis", 193_728 - 3, 7_504, 0.0),
])
def test_real_data_sets_load(name, n_games, n_competitors, draw_share):
    if not has_data(name):
        pytest.skip(f"{name} not found")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedRowsWarning)
        g = Games.from_csv(data_path(name), errors="drop")
    assert len(g) == n_games
    assert g.n_players == n_competitors
    assert np.mean(g.score == 0.5) == pytest.approx(draw_share, abs=0.0006)
    assert g.is_datetime
    assert np.all(np.diff(g.time) >= np.timedelta64(0))  # the README: sorted by time


def test_csv_competitor_called_na_is_a_name_not_missing(tmp_path):
    # "NA" is Namibia's code; pandas would read it as missing by default
    path = tmp_path / "na.csv"
    path.write_text("time,a,b,score\n2020-01-01,NA,None,1\n2020-01-02,NA,null,NA\n")
    with pytest.raises(GamesError, match=r"column 'score'.*row 1 \(line 3"):
        Games.from_csv(path)
    path.write_text("time,a,b,score\n2020-01-01,NA,None,1\n2020-01-02,,null,0\n")
    with pytest.raises(GamesError, match=r"column 'a'.*row 1"):
        Games.from_csv(path)
    path.write_text("time,a,b,score\n2020-01-01,NA,None,1\n2020-01-02,NA,null,0\n")
    assert sorted(Games.from_csv(path).players) == ["NA", "None", "null"]


def test_margin_weights_and_validation():
    df = pd.DataFrame({"time": [1, 2, 3], "a": ["x", "y", "x"], "b": ["y", "z", "z"], "score": [1, 0.5, 0],
                       "score_a": [30, 14, 3], "score_b": [0, 14, 27]})
    g = Games.from_frame(df)
    assert np.all(g.weight == 1.0)
    w = g.with_weights(margin=("score_a", "score_b")).weight
    raw = np.log1p([30.0, 1.0, 24.0])  # a draw counts as a one-point game
    np.testing.assert_allclose(w, raw / raw.mean())
    assert g.with_weights(margin=("score_a", "score_b")).take([0, 2]).weight.tolist() == [w[0], w[2]]
    with pytest.raises(GamesError, match="finite and > 0"):
        g.with_weights([1.0, 0.0, 1.0])
    with pytest.raises(GamesError, match="no column"):
        g.with_weights(margin=("goals_a", "goals_b"))
    with pytest.raises(ValueError, match="exactly one"):
        g.with_weights()


def test_margin_weight_power_is_box_cox_of_one_plus_margin():
    df = pd.DataFrame({"time": [1, 2, 3, 4], "a": ["x", "y", "x", "y"], "b": ["y", "z", "z", "x"],
                       "score": [1, 0.5, 0, 1], "score_a": [30, 14, 3, 21], "score_b": [0, 14, 27, 20]})
    g = Games.from_frame(df)
    m = np.array([30.0, 1.0, 24.0, 1.0])  # a draw and a one-point game weigh the same
    for p in (1.0, 0.5, -0.5):
        raw = ((1 + m) ** p - 1) / p
        np.testing.assert_allclose(g.with_weights(margin=("score_a", "score_b"), power=p).weight,
                                   raw / raw.mean(), rtol=1e-13)
    # power 0 is the logarithm (the default, bit for bit), and the family is continuous there
    log = g.with_weights(margin=("score_a", "score_b")).weight
    assert np.array_equal(g.with_weights(margin=("score_a", "score_b"), power=0.0).weight, log)
    np.testing.assert_allclose(g.with_weights(margin=("score_a", "score_b"), power=1e-9).weight, log, rtol=1e-7)
    # power 1 is linear in the margin (plus a constant, before normalising)
    lin = g.with_weights(margin=("score_a", "score_b"), power=1.0).weight
    np.testing.assert_allclose(lin, m / m.mean())
    # larger powers give big wins more weight
    heavy = [g.with_weights(margin=("score_a", "score_b"), power=p).weight[0] for p in (-0.5, 0.0, 0.5, 1.0, 1.5)]
    assert np.all(np.diff(heavy) > 0)
    with pytest.raises(ValueError, match="power="):
        g.with_weights([1.0, 1.0, 1.0, 1.0], power=0.5)
    with pytest.raises(ValueError, match="finite"):
        g.with_weights(margin=("score_a", "score_b"), power=float("nan"))


# ---------------------------------------------------------------------------- score_a / score_b
def _side_frame():
    return pd.DataFrame({"time": [3, 1, 2, 4], "a": ["x", "y", "x", "z"], "b": ["y", "z", "z", "x"],
                         "score": [1, 0.5, 0, 1], "score_a": [3, 2, 0, 24], "score_b": [1, 2, 1, 17]})


def test_side_scores_round_trip_through_every_derived_table(tmp_path):
    f = _side_frame()
    g = Games.from_frame(f)
    assert g.has_scores and g.score_a.dtype == np.float64
    np.testing.assert_array_equal(g.score_a, [3, 2, 0, 24])
    np.testing.assert_array_equal(g.score_b, [1, 2, 1, 17])
    path = tmp_path / "g.csv"
    g.to_frame().to_csv(path, index=False)
    for h in (Games.from_csv(path), Games.from_frame(g.to_frame()),
              Games.from_arrays(f.time, f.a, f.b, f.score, score_a=f.score_a, score_b=f.score_b),
              g.with_periods(2), g.with_weights(np.arange(1.0, 5.0))):
        np.testing.assert_array_equal(h.score_a, g.score_a)
        np.testing.assert_array_equal(h.score_b, g.score_b)
    t = g.take([3, 0])
    assert t.score_a.tolist() == [24, 3] and t.score_b.tolist() == [17, 1]
    first, rest = g.split(0.5)  # time order: rows 1, 2 | 0, 3
    assert first.score_a.tolist() == [2, 0] and rest.score_b.tolist() == [1, 17]
    # read-only like every other column
    with pytest.raises(ValueError):
        g.score_a[0] = 9


def test_without_side_scores_they_are_nan():
    g = Games.from_arrays([1, 2], ["x", "y"], ["y", "x"], [1, 0])
    assert not g.has_scores and np.isnan(g.score_a).all() and np.isnan(g.score_b).all()
    assert "score_a" not in g.to_frame().columns
    assert not g.take([1]).has_scores


def test_score_is_derived_from_side_scores():
    g = Games.from_arrays([1, 2, 3], ["x", "y", "x"], ["y", "z", "z"], score_a=[2, 1, 0.0], score_b=[1, 1, 3.5])
    assert g.score.tolist() == [1.0, 0.5, 0.0]
    f = _side_frame().drop(columns="score")
    assert Games.from_frame(f).score.tolist() == [1.0, 0.5, 0.0, 1.0]


@pytest.mark.parametrize("col, value, words", [
    ("score_a", -1, "negative score_a"),
    ("score_b", "two", "non-numeric or infinite score_b"),
    ("score_a", float("nan"), "missing score_a"),
    ("score_b", None, "missing score_b"),
    ("score_a", float("inf"), "non-numeric or infinite score_a"),
])
def test_bad_side_score_names_row_and_column(col, value, words):
    f = _side_frame().astype({col: object})
    f.loc[2, col] = value
    with pytest.raises(GamesError, match=re.escape(words)) as info:
        Games.from_frame(f)
    assert info.value.rows == [2] and info.value.column == col
    assert f"column '{col}'" in str(info.value) and "row 2" in str(info.value)
    with pytest.warns(DroppedRowsWarning, match="row 2"):
        g = Games.from_frame(f, errors="drop")
    assert g.row.tolist() == [0, 1, 3] and g.score_a.tolist() == [3, 2, 24]


def test_bad_side_score_in_csv_names_the_line(tmp_path):
    path = tmp_path / "g.csv"
    f = _side_frame().astype({"score_b": object})
    f.loc[1, "score_b"] = -3
    f.to_csv(path, index=False)
    with pytest.raises(GamesError, match=r"row 1 \(line 3 of g.csv\)"):
        Games.from_csv(path)


def test_score_must_agree_with_side_scores():
    f = _side_frame()
    f.loc[1, "score"] = 1.0  # 2-2 is a draw
    f.loc[3, "score"] = 0.0  # 24-17 is a's win
    with pytest.raises(GamesError, match="disagrees") as info:
        Games.from_frame(f)
    assert info.value.rows == [1, 3] and "score_a" in info.value.column
    assert "row 1" in str(info.value) and "score_a 2, score_b 2" in str(info.value)


def test_one_side_score_without_the_other_is_an_error():
    f = _side_frame().drop(columns="score_b")
    with pytest.raises(GamesError, match="score_b") as info:
        Games.from_frame(f)
    assert info.value.column == "score_b"
    with pytest.raises(GamesError, match="score"):
        Games.from_frame(f.drop(columns="score"))


def test_margin_weights_read_first_class_side_scores():
    g = Games.from_frame(_side_frame())
    m = np.maximum(np.abs(np.array([3, 2, 0, 24.0]) - np.array([1, 2, 1, 17.0])), 1.0)
    np.testing.assert_allclose(g.with_weights(margin=("score_a", "score_b")).weight, np.log1p(m) / np.log1p(m).mean())
    # tables built without them as columns keep reading extra columns of other names
    f = _side_frame().rename(columns={"score_a": "pa", "score_b": "pb"})
    h = Games.from_frame(f)
    assert not h.has_scores
    np.testing.assert_allclose(h.with_weights(margin=("pa", "pb")).weight, np.log1p(m) / np.log1p(m).mean())


@needs_data
@pytest.mark.parametrize("name", ["intl_football", "nfl", "england_football"])
def test_real_data_side_scores_load_and_agree(name):
    if not has_data(name):
        pytest.skip(f"{name} not found")
    raw = pd.read_csv(data_path(name), usecols=["score", "score_a", "score_b"])
    g = Games.from_csv(data_path(name))
    assert g.has_scores
    np.testing.assert_array_equal(g.score_a, raw["score_a"].to_numpy(float))
    np.testing.assert_array_equal(np.sign(g.score_a - g.score_b), np.sign(2 * raw["score"].to_numpy() - 1))


def test_what_runs_derive_from_a_table_is_made_once_and_matches_its_columns():
    """``Games.in_time_order``, ``home()`` and ``steps()``: kept per table, equal to the columns
    they come from (home 1 where not neutral; steps the rank of each row in time order)."""
    import numpy as np

    from statespace import Games

    times = [3.0, 1.0, 2.0, 0.0]
    games = Games.from_arrays(times, ["a", "b", "c", "a"], ["b", "c", "a", "c"], [1.0, 0.0, 0.5, 1.0],
                              neutral=[True, False, False, True])
    assert not games.in_time_order
    np.testing.assert_array_equal(games.home(), [0.0, 1.0, 1.0, 0.0])
    np.testing.assert_array_equal(games.steps(), np.argsort(np.argsort(times, kind="stable")).astype(float))
    assert games.home() is games.home() and games.steps() is games.steps()
    assert not games.home().flags.writeable
    ordered = Games.from_arrays([0.0, 1.0], ["a", "b"], ["b", "a"], [1.0, 0.0])
    assert ordered.in_time_order
    np.testing.assert_array_equal(ordered.steps(), [0.0, 1.0])
