"""Loading games at array speed: ``from_frame`` builds a table with nothing to report
column by column, ``from_csv`` reads through pyarrow's CSV reader when it can, and both give
exactly the table (and the errors) of the row-by-row path and the C engine; the caller's arrays
stay theirs; a table keeps at most 64 bytes per game."""

from __future__ import annotations

import tracemalloc
import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import statespace.data.games as games_module
from statespace import DroppedRowsWarning, Games, GamesError

needs_pyarrow = pytest.mark.skipif(not games_module._have_pyarrow(), reason="pyarrow is not installed")


def assert_same_table(g1: Games, g2: Games) -> None:
    """Every column, name, order and frame of two tables equal (NaN equal to NaN)."""
    assert list(g1.players) == list(g2.players)
    for name in ("time", "a", "b", "score", "neutral", "row", "weight", "order", "score_a", "score_b"):
        x, y = getattr(g1, name), getattr(g2, name)
        np.testing.assert_array_equal(x, y, err_msg=name)
        assert x.dtype == y.dtype, name
        assert not x.flags.writeable, name
    assert (g1.period is None) == (g2.period is None)
    if g1.period is not None:
        np.testing.assert_array_equal(g1.period, g2.period)
    assert g1.has_scores == g2.has_scores and g1.time_base == g2.time_base
    pd.testing.assert_frame_equal(g1.extra, g2.extra)
    pd.testing.assert_frame_equal(g1.dropped.reset_index(drop=True), g2.dropped.reset_index(drop=True),
                                  check_dtype=False, check_index_type=False)


def outcome(build):
    """``("table", Games, warnings)`` or ``("error", message, rows, column)`` of ``build()``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            g = build()
        except GamesError as exc:
            return ("error", str(exc), exc.rows, exc.column)
    return ("table", g, [str(w.message) for w in caught if issubclass(w.category, DroppedRowsWarning)])


def assert_same_outcome(o1, o2) -> None:
    assert o1[0] == o2[0], (o1, o2)
    if o1[0] == "error":
        assert o1[1:] == o2[1:]
    else:
        assert_same_table(o1[1], o2[1])
        assert o1[2] == o2[2]


# ---------------------------------------------------------------------------- from_frame
def _ids(draw, kind, idx, n_players):
    names = [f"p{i}" for i in range(n_players)]
    if kind == "int":
        return idx
    if kind == "big_int":
        return idx * 10**12 - 5
    if kind == "whole_float":
        return idx.astype(float)
    if kind == "text":
        return np.array([f" {names[i]}" if i % 3 == 0 else names[i] for i in idx], dtype=object)
    if kind == "nfd":
        spelled = [unicodedata.normalize("NFD" if i % 2 else "NFC", f"Zoë{i % 3}") for i in range(n_players)]
        return np.array([spelled[i] for i in idx], dtype=object)
    if kind == "arrow_str":
        return pd.array([names[i] for i in idx], dtype="str")
    if kind == "categorical":  # with a category no game has
        return pd.Categorical([names[i] for i in idx], categories=names + ["unused"])
    if kind == "mixed_object":  # ints and text in one column
        return np.array([i if i % 2 else names[i] for i in idx], dtype=object)
    if kind == "bool_and_int":  # 1 and True hash alike but are two names on the row path
        return np.array([True if i == 1 else i for i in idx], dtype=object)
    raise AssertionError(kind)


def _times(kind, n, rng):
    base = np.sort(rng.uniform(0, 50, n))
    if kind == "float":
        return base
    if kind == "unsorted":
        return rng.uniform(0, 50, n).round(0)  # ties: the stable order keeps the rows' order
    if kind == "years":
        return np.sort(rng.integers(1990, 2020, n))
    if kind == "datetime":
        return (np.datetime64("2020-01-01") + (base * 86400).astype("timedelta64[s]")).astype("datetime64[ns]")
    if kind == "iso":
        t = np.datetime64("2020-01-01") + (base * 86400).astype("timedelta64[s]")
        return np.array([str(x) for x in t], dtype=object)
    if kind == "offsets":
        t = np.datetime64("2020-01-01T00:00:00") + (base * 86400).astype("timedelta64[s]")
        return np.array([f"{x}+0{i % 3}:00" for i, x in enumerate(t)], dtype=object)
    raise AssertionError(kind)


@st.composite
def frames(draw):
    n_players = draw(st.integers(2, 12))
    n = draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    kind = draw(st.sampled_from(["int", "big_int", "whole_float", "text", "nfd", "arrow_str", "categorical",
                                 "mixed_object", "bool_and_int"]))
    data = {"time": _times(draw(st.sampled_from(["float", "unsorted", "years", "datetime", "iso", "offsets"])),
                           n, rng),
            "a": _ids(draw, kind, a, n_players), "b": _ids(draw, kind, b, n_players)}
    score = rng.choice([0.0, 0.5, 1.0], n)
    sides = draw(st.booleans())
    if sides:
        sa = rng.integers(0, 4, n)
        sb = np.where(score == 1, sa - 1, np.where(score == 0, sa + 1, sa))
        sb = np.where(sb < 0, sa + 1, sb)
        score = np.where(sa > sb, 1.0, np.where(sa < sb, 0.0, 0.5))
        data["score_a"], data["score_b"] = sa, sb
    score_kind = draw(st.sampled_from(["float", "text", "absent"] if sides else ["float", "text", "int"]))
    if score_kind == "float":
        data["score"] = score
    elif score_kind == "text":
        data["score"] = np.array([f"{s:g}" for s in score], dtype=object)
    elif score_kind == "int":
        data["score"] = (score == 1).astype(int)
    neutral = draw(st.sampled_from(["absent", "bool", "int", "float", "text"]))
    flags = rng.integers(0, 2, n)
    if neutral == "bool":
        data["neutral"] = flags.astype(bool)
    elif neutral == "int":
        data["neutral"] = flags
    elif neutral == "float":
        data["neutral"] = flags.astype(float)
    elif neutral == "text":
        data["neutral"] = np.array([["no", " TRUE "][f] for f in flags], dtype=object)
    period = draw(st.sampled_from(["absent", "numeric", "text"]))
    if period != "absent":
        order = np.argsort(pd.Series(data["time"]).to_numpy(), kind="stable")
        codes = np.empty(n, dtype=np.int64)
        codes[order] = np.arange(n) // 3
        data["period"] = codes + 2000 if period == "numeric" else np.array([f"s{c}" for c in codes], dtype=object)
    if draw(st.booleans()):
        data["goals"] = rng.integers(0, 5, n)
    df = pd.DataFrame(data)
    # sometimes one bad cell, which the row path must name
    bad = draw(st.one_of(st.none(), st.sampled_from(["a", "b", "time", "score", "neutral", "period", "self",
                                                      "neg_zero", "period_back", "score_a"])))
    if bad is not None and n >= 2:
        r = int(rng.integers(0, n))
        df = df.astype({c: object for c in df.columns if c not in ("a", "b") or not isinstance(df[c].dtype, pd.CategoricalDtype)})
        if bad in ("a", "b") and not isinstance(df[bad].dtype, pd.CategoricalDtype):
            df.loc[r, bad] = draw(st.sampled_from([None, np.nan, "", "  "]))
        elif bad == "time":
            df.loc[r, "time"] = draw(st.sampled_from([None, "not a date", np.inf]))
        elif bad == "score" and "score" in df:
            df.loc[r, "score"] = draw(st.sampled_from([None, 2, "win", 0.25]))
        elif bad == "neutral" and "neutral" in df:
            df.loc[r, "neutral"] = draw(st.sampled_from([None, 2, "maybe"]))
        elif bad == "neg_zero" and "neutral" in df and neutral == "float":
            df.loc[r, "neutral"] = -0.0  # its text "-0.0" is no flag
        elif bad == "period" and "period" in df:
            df.loc[r, "period"] = None
        elif bad == "period_back" and "period" in df and n >= 7:
            df.loc[order[-1], "period"] = df.loc[order[0], "period"]
        elif bad == "score_a" and "score_a" in df:
            df.loc[r, "score_a"] = draw(st.sampled_from([None, -1, "x"]))
        elif bad == "self" and not isinstance(df["b"].dtype, pd.CategoricalDtype):
            df.loc[r, "b"] = df.loc[r, "a"]
    return df


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(df=frames(), errors=st.sampled_from(["raise", "drop"]))
def test_from_frame_builds_the_table_and_errors_of_the_row_by_row_path(df, errors):
    fast = outcome(lambda: Games.from_frame(df, errors=errors))
    rows = outcome(lambda: Games._from_frame_rows(df.reset_index(drop=True), errors, None, None))
    assert_same_outcome(fast, rows)


def test_a_clean_frame_takes_the_column_path(monkeypatch):
    df = pd.DataFrame({"time": [1.0, 2.0, 3.0], "a": ["x", "y", "z"], "b": ["y", "z", "x"], "score": [1, 0, 0.5],
                       "neutral": [0, 1, 1], "period": [1, 1, 2], "goals": [2, 0, 1]})

    def refuse(*args, **kwargs):
        raise AssertionError("the row-by-row path was taken")

    monkeypatch.setattr(Games, "_from_frame_rows", refuse)
    g = Games.from_frame(df)
    assert list(g.players) == ["x", "y", "z"] and g.period.tolist() == [1, 1, 2]
    assert list(g.extra.columns) == ["goals"]


def test_period_errors_name_the_same_row_on_both_paths():
    df = pd.DataFrame({"time": [1, 2, 3, 4], "a": list("abcd"), "b": list("bcda"), "score": [1] * 4,
                       "period": ["x", "y", "x", "z"]})
    o1 = outcome(lambda: Games.from_frame(df))
    o2 = outcome(lambda: Games._from_frame_rows(df, "raise", None, None))
    assert o1[0] == "error" and "period 'x' at row 2 comes back" in o1[1]
    assert_same_outcome(o1, o2)


# ---------------------------------------------------------------------------- from_csv
def _both_engines(path, monkeypatch, **kwargs):
    """``from_csv`` as it runs (pyarrow when it can) and with the C engine only."""
    with_arrow = outcome(lambda: Games.from_csv(path, **kwargs))
    monkeypatch.setattr(games_module, "_PYARROW", False)
    c_only = outcome(lambda: Games.from_csv(path, **kwargs))
    monkeypatch.setattr(games_module, "_PYARROW", None)
    return with_arrow, c_only


def _arrow_read(path, **kwargs) -> bool:
    header = pd.read_csv(path, nrows=0, **kwargs).columns
    return Games._from_csv_arrow(str(path), header, kwargs) is not None


PLAIN = "time,a,b,score,neutral\n2020-01-01,007,100092,1,0\n2020-01-02,100092,x y,0.5,1\n2020-01-03,x y,007,0,1\n"


@needs_pyarrow
@pytest.mark.parametrize("text, arrow", [
    (PLAIN, True),
    ("time,a,b,score\n1,a,b,1\n2.5,b,c,0\n0,c,a,0.5\n", True),  # numeric, unsorted times
    ("time,a,b,score\n2019,a,b,1\n2020,b,c,0\n", True),  # years
    ("time,a,b,score\n2020-01-01 12:00,a,b,1\n2020-01-02,b,c,0\n", True),  # mixed date and time
    ("time,a,b,score\n2020-01-01T12:00:00Z,a,b,1\n2020-01-02T00:00:00Z,b,c,0\n", True),
    ("time,a,b,score\n2020-01-01T12:00:00+02:00,a,b,1\n2020-01-02T00:00:00-05:00,b,c,0\n", True),
    ("time,a,b,score\n2020-01-01T12:00:00+02:00,a,b,1\n2020-01-02T00:00:00,b,c,0\n", False),  # mixed: text
    ("time,a,b,score\n2020-01-01 00:00:00.123456789,a,b,1\n2020-01-01,b,c,0\n", True),
    ("time,a,b,score\n2020-01-01T00,a,b,1\n2020-01-02,b,c,0\n", True),
    ("time,a,b,score\n2020-01-01T12:00:00+02:00,a,b,1\n2020-01-02T00:00:00Z,b,c,0\n", True),
    ("time,a,b,score\n2020-01-01T12:00:00,a,b,1\n2020-01-02T00:00:00+01:00,b,c,0\n", False),  # mixed: text
    ("time,a,b,score\n2020-01-01,a,b,1\nNA,b,c,0\n", False),  # a missing time
    ("time,a,b,score\n2020-01-01,a,b,1\n2020-02-30,b,c,0\n", False),  # no such day
    ("time,a,b,score\n2020-01-01,a,b,1\n1,b,c,0\n", False),
    ("time,a,b,score\n9999-12-31,a,b,1\n2020-01-02,b,c,0\n", False),  # out of range: an error
    ("time,a,b,score\n2020-01-02,a,b,1\n9999-12-31,b,c,0\n", False),
    ("time,a,b,score\n12:30:00,a,b,1\n13:00:00,b,c,0\n", False),  # times of day: an error
    ("time,a,b,score\n2020-01-01,NA,None,1\n2020-01-02,NA,null,0\n", False),  # "NA" is a name
    ("time,a,b,score\n2020-01-01,a,,1\n2020-01-02,b,c,0\n", False),  # a missing competitor
    ("time,a,b,score\n0x10,a,b,1\n0x11,b,c,0\n", False),  # hexadecimal: text for the C engine
    ("time,a,b,score\n1,0x1F,b,1\n2,b,c,0\n", False),
    ("time,a,b,score,neutral\n1,a,b,1,1\n2,b,c,0,true\n", True),  # pyarrow: booleans
    ("time,a,b,score\n1,a,b,1\n2,b,c,true\n", False),  # a boolean score: an error for the C engine
    ("time,a,b,score\n-nan,a,b,1\n2,b,c,0\n", False),
    ("time,a,b,score\n+1,a,b,+1\n2,b,c,0\n", True),
    ("time,a,b,score,period\n1,a,b,1,1\n2,b,c,1,2\n3,c,a,1,1\n", False),  # period comes back
    ("time,a,b,score,period\n1,a,b,1,s1\n2,b,c,1,s1\n3,c,a,1,s2\n", True),
    ("time,a,b,score,period\n1,a,b,1,2020-01-01\n2,b,c,1,2020-01-02\n", False),  # dates in another column
    ("time,a,b,score,period\n1,a,b,1,true\n2,b,c,1,1\n", False),
    ("time,a,b,score_a,score_b\n1,a,b,3,1\n2,b,c,2,2\n", True),
    ("time,a,b,score_a,score_b\n1,a,b,+3,1\n2,b,c,2,2\n", False),  # "+3": a float for pyarrow
    ("time,a,b,score_a,score_b\n1,a,b,18446744073709551615,1\n2,b,c,2,2\n", False),
    ("time,a,b,score,score_a,score_b\n1,a,b,0,3,1\n2,b,c,0.5,2,2\n", False),  # disagreeing score
    ("time,a,b,score,goals\n1,a,b,1,2\n2,b,c,0,NA\n", False),  # an extra column: the C engine
    ("time,a,b,score\n1, a ,b,1\n2,b,\" c\",0\n", True),
    ("\ufefftime,a,b,score\n1,a,b,1\n2,b,c,0\n", True),  # a byte-order mark
    ("time,a,b,score\r\n1,a,b,1\r\n2,b,c,0\r\n", True),
    ("time,a,b,score\n1,a,b,1\n\n2,b,c,0\n", True),  # a blank line
    ("time,a,b,score\n1,a,b,1\n2,b,c\n", False),  # a short row
    ("time,a,b,score\n1,a,b,1,9\n2,b,c,0\n", False),  # a long row
    ("time,a,b,score\n1,a,a,1\n2,b,c,0\n", False),  # a competitor against itself
    ("time,a,b,score\n", False),  # no rows
    ("time,a,score\n1,x,1\n2,y,0\n", False),  # a missing column: the C engine names it
    ("time,a,b\n1,x,y\n2,y,z\n", False),
    ("time,a,b,score_a\n1,x,y,1\n2,y,z,0\n", False),
])
def test_csv_through_pyarrow_is_the_c_engines_table(tmp_path, monkeypatch, text, arrow):
    path = tmp_path / "games.csv"
    path.write_text(text, encoding="utf-8")
    with_arrow, c_only = _both_engines(path, monkeypatch)
    assert_same_outcome(with_arrow, c_only)
    for mode in ("drop",):
        assert_same_outcome(*_both_engines(path, monkeypatch, errors=mode))
    assert _arrow_read(path) == arrow


@needs_pyarrow
def test_csv_with_another_separator(tmp_path, monkeypatch):
    path = tmp_path / "games.csv"
    path.write_text(PLAIN.replace(",", ";"))
    with_arrow, c_only = _both_engines(path, monkeypatch, sep=";")
    assert_same_outcome(with_arrow, c_only)
    assert with_arrow[0] == "table" and _arrow_read(path, sep=";")
    path.write_text("time;a;b;score\n2020-01-01;NA;b;NA\n2020-01-02;b;c;0\n")  # NA words per column
    assert_same_outcome(*_both_engines(path, monkeypatch, sep=";"))


@needs_pyarrow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(df=frames())
def test_csv_files_written_from_frames_read_alike(tmp_path_factory, df):
    path = tmp_path_factory.mktemp("csv") / "games.csv"
    df.to_csv(path, index=False)
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_same_outcome(*_both_engines(path, monkeypatch, errors="drop"))


def _batched_file(path, n, rng, *, late=None, more=None):
    """A file of ``n`` dated games whose names need the competitor treatment: composed and
    decomposed spellings of one name, surrounding spaces (some quoted), so that several raw
    ids are one competitor once stripped and in NFC form. ``late`` puts a bad cell near the
    end (in a late batch): ``"name"`` (a missing competitor), ``"score"`` (2), ``"neutral"``
    (``yes`` after integer flags: a type pyarrow fixed from the first batch). ``more`` adds
    columns: ``"sides"`` (``score_a``, ``score_b``) or ``"period"`` (weeks, as numbers)."""
    spelled = []
    for i in range(40):
        name = f"Zo\u00eb {i}"
        spelled.append(unicodedata.normalize("NFD" if i % 2 else "NFC", name))
        spelled.append(f"  {unicodedata.normalize('NFD', name)}")  # the same competitor
        spelled.append(f'" {name} "')  # quoted, spaces kept by the reader and stripped after
        spelled.append(f"p{i}")
        spelled.append(f"p{i} ")
    a = rng.integers(0, len(spelled), n)
    b = (a + 5 * rng.integers(1, 40, n)) % len(spelled)  # another competitor (5 spellings each)
    days = np.datetime64("2020-01-01") + (np.arange(n) // 7).astype("timedelta64[D]")
    score = rng.choice(["1", "0.5", "0", "1.0"], n)
    neutral = rng.integers(0, 2, n).astype(str)
    if late == "name":
        a = a.astype(object)
        a[n - 3] = None
    elif late == "score":
        score[n - 3] = "2"
    elif late == "neutral":
        neutral[n - 3] = "yes"
    columns = {"time": days.astype(str), "a": [None if i is None else spelled[i] for i in a],
               "b": [spelled[i] for i in b], "score": score, "neutral": neutral}
    if more == "sides":
        sa, won = rng.integers(1, 5, n), score.astype(float)
        columns["score_a"] = sa
        columns["score_b"] = np.where(won == 1, sa - 1, np.where(won == 0, sa + 1, sa))  # as score says
    elif more == "period":
        columns["period"] = np.arange(n) // 7 // 7
    lines = [",".join(columns)]
    for i in range(n):
        lines.append(",".join("" if c[i] is None else str(c[i]) for c in columns.values()))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@needs_pyarrow
@pytest.mark.parametrize("late, more", [(None, None), ("name", None), ("score", None), ("neutral", None),
                                        (None, "sides"), (None, "period")])
def test_csv_read_in_batches_is_the_c_engines_table(tmp_path, monkeypatch, late, more):
    """Small blocks and small hashing thresholds: names coded over many batches, encodings and
    merges, agree with the C engine, and a row error in a late batch is the C engine's error."""
    from statespace.data.ids import StreamedNames

    monkeypatch.setattr(games_module, "_CSV_BLOCK", 1 << 12)
    monkeypatch.setattr(StreamedNames, "ENCODE_AT", 300)
    monkeypatch.setattr(StreamedNames, "MERGE_AT", 500)
    path = tmp_path / "games.csv"
    _batched_file(path, 6_000, np.random.default_rng(7), late=late, more=more)
    with_arrow, c_only = _both_engines(path, monkeypatch)
    assert_same_outcome(with_arrow, c_only)
    assert_same_outcome(*_both_engines(path, monkeypatch, errors="drop"))
    assert _arrow_read(path) == (late is None)
    if late is None:
        g = with_arrow[1]
        assert g.n_players == 80  # 40 names, each as "Zoë i" and "pi"
        assert all(p == unicodedata.normalize("NFC", p.strip()) for p in g.players)
        assert "Zo\u00eb 1" in set(g.players) and "p1" in set(g.players)
        assert g.has_scores == (more == "sides") and (g.period is None) == (more != "period")


@needs_pyarrow
@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.lists(st.sampled_from(["x", " x", "y", "e\u0301", "\u00e9", "007", "7", "z "]),
                                max_size=9), min_size=1, max_size=8),
       encode_at=st.integers(1, 12), merge_at=st.integers(1, 12))
def test_streamed_names_code_every_piece(pieces, encode_at, merge_at):
    """Ids given in pieces of any sizes, whatever the hashing thresholds: each row's competitor
    is its id stripped and in NFC form, and the competitors are those names, sorted."""
    import pyarrow as pa

    from statespace.data.ids import StreamedNames

    names = StreamedNames()
    names.ENCODE_AT, names.MERGE_AT = encode_at, merge_at
    rows = [x for piece in pieces for x in piece]
    codes = [np.full(len(rows), -1, dtype=np.int64) for _ in range(2)]  # two sides, pieces alternating
    start = [0, 0]
    for i, piece in enumerate(pieces):
        assert names.add(pa.array(piece, type=pa.string()), codes[i % 2], start[i % 2])
        start[i % 2] += len(piece)
    done = names.finish()
    if not rows:
        assert done is None
        return
    to_player, players = done
    sides = [[x for i, piece in enumerate(pieces) if i % 2 == side for x in piece] for side in range(2)]
    assert list(players) == sorted({unicodedata.normalize("NFC", r.strip()) for r in rows})
    for side in range(2):
        coded = to_player[codes[side][:start[side]]]
        assert [players[c] for c in coded] == [unicodedata.normalize("NFC", r.strip()) for r in sides[side]]


# ---------------------------------------------------------------------------- the caller's arrays
def test_the_callers_arrays_stay_theirs():
    t, a, b = np.arange(4.0), np.array([1, 2, 3, 4]), np.array([2, 3, 4, 1])
    score, neutral = np.array([1.0, 0.0, 0.5, 1.0]), np.array([True, False, True, True])
    g = Games.from_arrays(t, a, b, score, neutral)
    for x in (t, a, b, score, neutral):
        assert x.flags.writeable
    for mine, theirs in ((g.time, t), (g.score, score), (g.neutral, neutral)):
        assert not np.shares_memory(mine, theirs)
    score[0] = 0.0
    assert g.score[0] == 1.0
    df = pd.DataFrame({"time": t, "a": a, "b": b, "score": [1.0, 0.0, 0.5, 1.0]})
    g = Games.from_frame(df)
    df.loc[0, "score"] = 0.0
    assert g.score[0] == 1.0
    w = np.full(4, 2.0)
    g.with_weights(w)
    assert w.flags.writeable


def test_time_order_and_rows_share_one_array_when_sorted():
    g = Games.from_arrays(np.arange(5.0), np.arange(5), (np.arange(5) + 1) % 5, np.ones(5))
    assert g.order is g.row and g.order.tolist() == list(range(5))
    g = Games.from_arrays([3.0, 1.0, 1.0, 2.0], [0, 1, 2, 3], [1, 2, 3, 0], [1, 0, 1, 0])
    assert g.order.tolist() == [1, 2, 3, 0] and g.row.tolist() == [0, 1, 2, 3]
    assert g.with_weights(np.ones(4)).order is g.order  # the same times: the same order


def test_tables_without_scores_keep_constant_columns():
    g = Games.from_arrays(np.arange(6.0), np.arange(6), (np.arange(6) + 1) % 6, np.ones(6))
    assert not g.has_scores and g.score_a.strides == (0,) and not g.score_a.flags.writeable
    assert np.isnan(g.score_a).all() and g.score_b.shape == (6,)
    part = g.take([1, 3])
    assert part.score_a.strides == (0,) and part.score_a.shape == (2,)
    with pytest.raises(ValueError):
        g.score_a[0] = 1.0


def test_a_table_keeps_at_most_64_bytes_per_game():
    n, players = 200_000, 1_000
    rng = np.random.default_rng(0)
    a = rng.integers(0, players, n)
    b = (a + rng.integers(1, players, n)) % players
    t, score = np.arange(n, dtype=float), rng.choice([0.0, 0.5, 1.0], n)
    names = np.array([f"p{i}" for i in range(players)], dtype=object)
    Games.from_arrays(t[:10], a[:10], b[:10], score[:10])
    for ids in ((a, b), (pd.Categorical.from_codes(a, names), pd.Categorical.from_codes(b, names))):
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            g = Games.from_arrays(t, *ids, score)
            kept, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert (peak - base) / n <= 64, (peak - base) / n
        assert (kept - base) / n <= 50
        assert len(g) == n


def test_bench_loading_quick(tmp_path):
    """``benchmarks/bench_loading.py --quick`` runs and saves every row (a smoke test; its
    figures belong to the benchmark, not to a test)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "loading.json"
    done = subprocess.run([sys.executable, str(root / "benchmarks" / "bench_loading.py"), "--quick", "--json", str(out)],
                          capture_output=True, text=True, cwd=root, timeout=600)
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())["rows"]
    assert [r["kind"] for r in rows] == [
        "from_arrays, integer ids", "from_arrays, categorical ids", "from_arrays, string ids",
        "from_csv (pyarrow reader)", "from_csv (C engine only)"]
    assert all(r["games"] == 20_000 and r["games_per_s"] > 0 for r in rows)
    assert "from_csv (pyarrow reader)" in done.stdout
