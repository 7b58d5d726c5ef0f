"""The ``statespace`` command line: output, JSON, plots, and one-line user errors (exit 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import smoothers

import filters
from statespace import Games, scenarios
from statespace.app import cli
from statespace.ensemble import blend
from statespace.app.cli import CLIError, main, parse_method, parse_methods, parse_periods

#: registered but not compared by default (each package's own list)
NOT_BY_DEFAULT = smoothers.NOT_BY_DEFAULT | filters.NOT_BY_DEFAULT | blend.NOT_BY_DEFAULT

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
ROOT = Path(__file__).resolve().parents[1]
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared real data folder ../shared/data is absent")


# ---------------------------------------------------------------------------- helpers
def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_user_error(code, out, err, *fragments):
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("statespace: error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


@pytest.fixture
def games_csv(tmp_path):
    """A small valid CSV: 4 competitors, 60 games, with a season column."""
    rng = np.random.default_rng(1)
    names = np.array(["ann", "bob", "cyd", "dee"])
    a = rng.integers(0, 4, 60)
    b = (a + rng.integers(1, 4, 60)) % 4
    df = pd.DataFrame({"time": pd.date_range("2021-01-01", periods=60, freq="D").strftime("%Y-%m-%d"),
                       "a": names[a], "b": names[b], "score": rng.choice([0, 0.5, 1], 60),
                       "season": np.repeat([2021, 2022, 2023], 20)})
    path = tmp_path / "games.csv"
    df.to_csv(path, index=False)
    return path


@pytest.fixture
def bad_csv(tmp_path):
    """Row 1 (file line 3) has score 2; the rest is fine."""
    path = tmp_path / "bad.csv"
    path.write_text("time,a,b,score\n2020-01-01,x,y,1\n2020-01-02,x,y,2\n2020-01-03,y,z,0\n"
                    "2020-01-04,z,x,0.5\n2020-01-05,x,z,1\n")
    return path


class _SdRun:
    """A fitted stand-in for a method that tracks an sd (no registered filter does yet)."""

    def __init__(self, games):
        self.games = games

    def ratings(self):
        players = list(self.games.players)
        mean = np.linspace(1600, 1400, len(players))
        return pd.DataFrame({"player": players, "mean": mean, "sd": np.full(len(players), 50.0),
                             "games": np.arange(len(players)) + 1})

    def predict_proba(self, games):
        return np.tile([0.4, 0.2, 0.4], (len(games), 1))


class _SdMethod:
    """Frozen-only method with an sd: has ``fit`` but no ``run``."""

    name = "sdmethod"

    def __init__(self, width: float = 1.0):
        self.width = width

    def __repr__(self):
        return f"SdMethod(width={self.width:g})"

    def fit(self, games):
        return _SdRun(games)


@pytest.fixture
def with_sd_method(monkeypatch):
    """``sdmethod`` registered (through statespace.methods.registry) for one test."""
    from statespace.methods import registry

    registry.names()  # the built-ins and entry points first
    monkeypatch.setattr(registry, "_entries", dict(registry._entries))
    registry.register("sdmethod", _SdMethod)
    return cli.registry()


# ---------------------------------------------------------------------------- compare
def test_compare_default_prints_header_and_table(capsys):
    code, out, err = run(capsys, "compare")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"scenario {scenarios.DEFAULT} (seed 0): 600 games, 30 competitors")
    assert "split 0.7 (420 train / 180 held out), mode frozen" in lines[0]
    header = next(line for line in lines if line.startswith("method"))
    for col in ("log loss", "Brier", "accuracy", "fit s", "\u0394 log loss \u00b1 se"):
        assert col in header
    body = lines[lines.index(header) + 2:]
    rows = [line.split()[0] for line in body[:body.index("")]]
    import smoothers

    assert sorted(rows) == sorted(set(cli.registry()) - NOT_BY_DEFAULT)
    assert "best" in out


def test_compare_json_one_record_per_method(capsys):
    code, out, err = run(capsys, "compare", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["n_games"] == 600 and data["n_test"] == 180 and data["mode"] == "frozen"
    records = data["methods"]
    assert sorted(r["method"] for r in records) == sorted(set(cli.registry()) - NOT_BY_DEFAULT)
    losses = [r["log_loss"] for r in records]
    assert losses == sorted(losses)
    for r in records:
        assert 0 < r["log_loss"] < 1 and 0 <= r["brier"] <= 1 and r["n_test"] == 180
    assert records[0]["delta_log_loss"] == 0.0


def test_compare_walk_forward_every_matches_the_library(capsys):
    """--mode walk_forward --every: smoothers refitted before each block, as compare(..., every=)."""
    from statespace import compare

    code, out, err = run(capsys, "compare", "--scenario", "drifting", "--methods", "elo,laplace",
                         "--mode", "walk_forward", "--every", "7", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["mode"] == "walk_forward"
    by_name = {r["method"]: r for r in data["methods"]}
    games = scenarios.get("drifting", seed=0).games
    methods = parse_methods(["elo,laplace"], mode="walk_forward")
    ref = compare(methods, games, split=0.7, mode="walk_forward", every=7)
    other = compare({"laplace": parse_method("laplace")}, games, split=0.7, mode="walk_forward", every="year")
    for name in ("elo", "laplace"):
        assert by_name[name]["log_loss"] == pytest.approx(ref.loc[name, "log_loss"], rel=1e-12)
    assert by_name["laplace"]["log_loss"] != pytest.approx(other.loc["laplace", "log_loss"], rel=1e-9)


@pytest.mark.parametrize("argv, fragment", [(["--every", "year"], "--every sets the blocks of --mode walk_forward"),
                                            (["--mode", "walk_forward", "--every", "-3"], "must be a number of days > 0"),
                                            (["--mode", "walk_forward", "--every", "fortnight"], "week/month/year")])
def test_compare_every_errors(capsys, argv, fragment):
    assert_user_error(*run(capsys, "compare", *argv), fragment)


def test_compare_methods_with_settings_and_json_matches_library(capsys):
    from statespace import compare

    code, out, err = run(capsys, "compare", "--scenario", "drifting", "--methods", "elo:k=24,home=60,elo_fide",
                         "--methods", "elo", "--mode", "online", "--json", "--seed", "3")
    assert code == 0, err
    data = json.loads(out)
    assert data["source"] == "scenario drifting (seed 3)"
    by_name = {r["method"]: r for r in data["methods"]}
    assert set(by_name) == {"elo:k=24,home=60", "elo_fide", "elo"}
    assert by_name["elo:k=24,home=60"]["spec"] == "Elo(k=24, home=60)"
    games = scenarios.get("drifting", seed=3).games
    ref = compare({"x": filters.Elo(k=24, home=60)}, games, split=0.7, mode="online")
    assert by_name["elo:k=24,home=60"]["log_loss"] == pytest.approx(ref.loc["x", "log_loss"], rel=1e-12)


def test_compare_csv_with_periods(capsys, games_csv):
    code, out, err = run(capsys, "compare", "--data", str(games_csv), "--methods", "elo",
                         "--periods", "column:season", "--split", "0.5")
    assert code == 0, err
    assert "60 games, 4 competitors; split 0.5 (30 train / 30 held out)" in out
    assert "periods column:season" in out
    for spec in ("week", "7", "game", "month"):
        code, out, err = run(capsys, "compare", "--data", str(games_csv), "--methods", "elo", "--periods", spec)
        assert code == 0, (spec, err)


def test_compare_plot_writes_png(capsys, tmp_path):
    png = tmp_path / "cmp.png"
    code, out, err = run(capsys, "compare", "--scenario", "drifting", "--plot", str(png))
    assert code == 0, err
    assert png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(png) in err


def test_compare_drop_invalid_reports_rows(capsys, bad_csv):
    code, out, err = run(capsys, "compare", "--data", str(bad_csv), "--methods", "elo", "--drop-invalid",
                         "--split", "0.5")
    assert code == 0, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("statespace: warning: dropped 1 invalid row of 5")
    assert "row 1" in lines[0] and "score" in lines[0]
    assert "4 games" in out


def test_online_mode_skips_frozen_only_methods_by_default(capsys, with_sd_method):
    code, out, err = run(capsys, "compare", "--mode", "online", "--json")
    assert code == 0, err
    assert "sdmethod" not in {r["method"] for r in json.loads(out)["methods"]}
    code, out, err = run(capsys, "compare", "--json")
    assert code == 0, err
    assert "sdmethod" in {r["method"] for r in json.loads(out)["methods"]}
    code, out, err = run(capsys, "compare", "--mode", "online", "--methods", "sdmethod")
    assert_user_error(code, out, err, "no online run")


# ---------------------------------------------------------------------------- user errors
USER_ERRORS = [
    (["compare", "--data", "{missing}"], ["no such games file", "missing.csv"]),
    (["compare", "--data", "{bad}"], ["column 'score'", "row 1", "line 3 of bad.csv"]),
    (["rate", "{bad}"], ["column 'score'", "row 1 (line 3 of bad.csv): 2"]),
    (["rate", "{missing}"], ["no such games file"]),
    (["rate", "{folder}"], ["is a folder"]),
    (["rate"], ["give a games CSV"]),
    (["compare", "--methods", "nosuch"], ["unknown method 'nosuch'", "elo"]),
    (["compare", "--methods", "elo,nosuch:x=1"], ["unknown method 'nosuch'"]),
    (["compare", "--methods", "elo:kk=3"], ["method 'elo' has no setting 'kk'", "k, home"]),
    (["compare", "--methods", "elo:k=-5"], ["k must be a finite number in [0"]),
    (["compare", "--methods", "elo:k"], ["must look like key=value"]),
    (["compare", "--methods", "k=3"], ["before any method name"]),
    (["compare", "--methods", "elo,elo"], ["given twice"]),
    (["rate", "--scenario", "balanced", "--method", "nosuch"], ["unknown method 'nosuch'"]),
    (["rate", "--scenario", "balanced", "--method", "elo,elo_fide"], ["one method"]),
    (["compare", "--scenario", "nosuch"], ["unknown scenario 'nosuch'", "balanced"]),
    (["rate", "--scenario", "nosuch"], ["unknown scenario 'nosuch'"]),
    (["rate", "--scenario", "league:nosuch=3"], ["scenario 'league' has no parameter 'nosuch'", "drift_sd"]),
    (["rate", "--scenario", "balanced:drift_sd=3"], ["scenario 'balanced' has no parameter 'drift_sd'"]),
    (["rate", "--scenario", "league:draw_rate=2"], ["draw_rate"]),
    (["rate", "--scenario", "league:drift_sd"], ["parameter 'drift_sd' must look like key=value"]),
    (["rate", "--scenario", "balanced", "--seed", "-1"], ["--seed must be a whole number >= 0, got '-1'"]),
    (["rate", "--scenario", "balanced", "--seed", "x"], ["--seed must be a whole number >= 0, got 'x'"]),
    (["study", "grid.toml", "--n-jobs", "0"], ["--n-jobs must be a whole number >= 1 or -1, got '0'"]),
    (["compare", "--split", "1.5"], ["--split", "between 0 and 1"]),
    (["compare", "--split", "0"], ["--split"]),
    (["compare", "--split", "abc"], ["--split", "'abc'"]),
    (["compare", "--mode", "sideways"], ["--mode", "sideways"]),
    (["compare", "--periods", "fortnight"], ["--periods", "fortnight"]),
    (["compare", "--periods", "-2"], ["--periods", "positive"]),
    (["compare", "--periods", "column:season"], ["no column 'season'"]),
    (["compare", "--data", "{bad}", "--scenario", "balanced"], ["not allowed with"]),
    (["compare", "--plot", "{nofolder}"], ["cannot write plot"]),
    (["rate", "--scenario", "balanced", "--top", "-1"], ["--top"]),
    (["compare", "--bogus"], ["unrecognized arguments: --bogus"]),
    (["frobnicate"], ["invalid choice: 'frobnicate'"]),
    ([], ["choose a command"]),
]


@pytest.mark.parametrize("argv, fragments", USER_ERRORS, ids=[" ".join(a) or "(none)" for a, _ in USER_ERRORS])
def test_user_errors_are_one_line_exit_2(capsys, tmp_path, bad_csv, argv, fragments):
    subs = {"{missing}": str(tmp_path / "missing.csv"), "{bad}": str(bad_csv), "{folder}": str(tmp_path),
            "{nofolder}": str(tmp_path / "no" / "such" / "x.png")}
    argv = [subs.get(a, a) for a in argv]
    code, out, err = run(capsys, *argv)
    assert_user_error(code, out, err, *fragments)
    assert out == ""


def test_user_error_via_python_m_has_no_traceback(bad_csv):
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run([sys.executable, "-m", "statespace", "rate", str(bad_csv), "--method", "elo"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("statespace: error: invalid games: column 'score'")
    assert "row 1 (line 3 of bad.csv)" in lines[0]
    assert "Traceback" not in proc.stderr


def test_help_and_listings(capsys):
    code, out, err = run(capsys, "--help")
    assert code == 0 and "compare" in out and "rate" in out
    code, out, err = run(capsys, "scenarios")
    assert code == 0
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[:len(scenarios.ALL)]] == list(scenarios.ALL)
    assert "(default)" in lines[scenarios.ALL.index(scenarios.DEFAULT)]
    assert "league takes parameters" in out and "drift_sd=" in out
    code, out, err = run(capsys, "methods")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == list(cli.registry())
    # every method says what it is (pymc's factory once printed nothing after its name)
    for line in out.splitlines():
        name, _, rest = line.partition(" ")
        words = rest.split("[settings:")[0].replace("(not compared by default)", "").split()
        assert len(words) >= 3, line


# ---------------------------------------------------------------------------- rate
def _board(out: str) -> tuple[list[str], list[list[str]]]:
    lines = out.splitlines()
    i = next(k for k, line in enumerate(lines) if line.split()[:1] == ["rank"])
    return lines[i].split(), [line.split() for line in lines[i + 2:] if line.strip()]


def test_rate_leaderboard_order_and_columns(capsys, games_csv):
    code, out, err = run(capsys, "rate", str(games_csv), "--method", "elo:k=20", "--top", "3")
    assert code == 0, err
    assert out.splitlines()[0].startswith("Elo(k=20) on ")
    header, rows = _board(out)
    assert header == ["rank", "competitor", "rating", "games"]  # Elo tracks no sd
    assert len(rows) == 3
    expected = filters.Elo(k=20).fit(Games.from_csv(games_csv)).ratings()
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert [r[1] for r in rows] == list(expected["player"][:3])
    ratings = [float(r[2]) for r in rows]
    assert ratings == sorted(ratings, reverse=True)
    assert ratings == pytest.approx(list(expected["mean"][:3]), abs=0.05)
    assert [int(r[3]) for r in rows] == list(expected["games"][:3])


def test_rate_json_and_top_zero(capsys, games_csv):
    code, out, err = run(capsys, "rate", str(games_csv), "--top", "0", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == "elo" and data["n_games"] == 60 and data["n_competitors"] == 4
    recs = data["ratings"]
    assert [r["rank"] for r in recs] == [1, 2, 3, 4]
    assert set(recs[0]) == {"rank", "competitor", "rating", "games"}
    assert [r["rating"] for r in recs] == sorted((r["rating"] for r in recs), reverse=True)
    assert sum(r["games"] for r in recs) == 2 * 60


def test_rate_shows_sd_when_method_has_one(capsys, with_sd_method):
    code, out, err = run(capsys, "rate", "--scenario", "balanced", "--method", "sdmethod:width=2", "--top", "5")
    assert code == 0, err
    header, rows = _board(out)
    assert header == ["rank", "competitor", "rating", "sd", "games"]
    assert len(rows) == 5 and all(r[3] == "50.0" for r in rows)
    code, out, err = run(capsys, "rate", "--scenario", "balanced", "--method", "sdmethod", "--json")
    assert "sd" in json.loads(out)["ratings"][0]


def test_rate_drop_invalid(capsys, bad_csv):
    code, out, err = run(capsys, "rate", str(bad_csv), "--drop-invalid")
    assert code == 0
    assert err.startswith("statespace: warning: dropped 1 invalid row") and "row 1" in err
    header, rows = _board(out)
    assert sorted(r[1] for r in rows) == ["x", "y", "z"]


# ---------------------------------------------------------------------------- parsing
def test_parse_method_settings_and_types():
    m = parse_method("elo:k=24,home=60")
    assert isinstance(m, filters.Elo) and m.k == 24 and m.home == 60 and not m.is_fide
    assert parse_method("elo:fide=true").is_fide
    assert not parse_method("elo:fide=no").is_fide
    fide = parse_method("elo_fide:home=35.5")
    assert fide.is_fide and fide.home == 35.5
    with pytest.raises(CLIError, match="has no setting 'kk'"):
        parse_method("elo:kk=1")
    with pytest.raises(CLIError, match="unknown method"):
        parse_method("glorp")


def test_parse_methods_grouping():
    named = parse_methods(["elo:k=24,home=60,elo_fide,elo:k=10"])
    assert list(named) == ["elo:k=24,home=60", "elo_fide", "elo:k=10"]
    assert named["elo:k=10"].k == 10
    assert set(parse_methods(None)) == set(cli.registry()) - NOT_BY_DEFAULT
    assert set(parse_methods(None)) == set(cli.registry(default_only=True))


def test_parse_periods():
    assert parse_periods(None) is None
    assert parse_periods("7") == {"every": 7.0}
    assert parse_periods("Week") == {"every": "week"}
    assert parse_periods("column:season") == {"column": "season"}
    for bad in ("0", "nan", "fortnight", "column:"):
        with pytest.raises(CLIError):
            parse_periods(bad)


# ---------------------------------------------------------------------------- real data
@needs_data
def test_real_data_intl_football_online(capsys):
    code, out, err = run(capsys, "compare", "--data", str(DATA / "intl_football" / "games.csv"),
                         "--methods", "elo", "--mode", "online", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["n_games"] == 49_520 and data["mode"] == "online"
    assert data["n_test"] == 49_520 - round(0.7 * 49_520)
    assert 0.4 < data["methods"][0]["log_loss"] < 0.7


@needs_data
def test_real_data_atp_self_play_rows(capsys):
    path = str(DATA / "atp_tennis" / "games.csv")
    code, out, err = run(capsys, "rate", path, "--method", "elo")
    assert_user_error(code, out, err, "a competitor against itself", "row 5217", "'199999'")
    code, out, err = run(capsys, "rate", path, "--method", "elo", "--drop-invalid", "--top", "10")
    assert code == 0
    assert "dropped 3 invalid rows" in err and "row 23688" in err
    header, rows = _board(out)
    assert len(rows) == 10 and "193,725 games" in out


def test_quiet_turns_progress_off_in_compare_and_auto(monkeypatch, capsys):
    """--quiet hands progress=False to compare and to auto (by default: None, shown once slow)."""
    from statespace.app.cli import main
    from statespace.evaluation import compare as compare_module

    seen = []
    real = compare_module.compare

    def spy(*args, **kwargs):
        seen.append(kwargs.get("progress", "missing"))
        return real(*args, **kwargs)

    monkeypatch.setattr(compare_module, "compare", spy)
    assert main(["compare", "--scenario", "drifting", "--methods", "elo", "--quiet"]) == 0
    assert main(["compare", "--scenario", "drifting", "--methods", "elo"]) == 0
    assert seen == [False, None]
    assert capsys.readouterr().err == ""


def test_a_scenario_with_parameters_from_the_command_line(capsys):
    code, out, err = run(capsys, "rate", "--scenario", "league:n_competitors=12,n_periods=10,drift_sd=40",
                         "--seed", "2", "--method", "elo", "--top", "3")
    assert code == 0, err
    games = scenarios.get("league", seed=2, n_competitors=12, n_periods=10, drift_sd=40).games
    assert f"{len(games)} games, 12 rated competitors" in out
    assert "scenario league (seed 2, n_competitors=12, n_periods=10, drift_sd=40)" in out


# ---------------------------------------------------------------------------- --observations
@pytest.fixture
def goals_csv(tmp_path):
    """300 games between 8 sides with Poisson goals (1.4 a side when level): goal counts."""
    rng = np.random.default_rng(3)
    skill = rng.normal(0.0, 0.4, 8)
    a = rng.integers(0, 8, 300)
    b = (a + rng.integers(1, 8, 300)) % 8
    ga = rng.poisson(1.4 * np.exp((skill[a] - skill[b]) / 2))
    gb = rng.poisson(1.4 * np.exp((skill[b] - skill[a]) / 2))
    df = pd.DataFrame({"time": np.arange(300.0), "a": [f"t{i}" for i in a], "b": [f"t{i}" for i in b],
                       "score": np.sign(ga - gb) * 0.5 + 0.5, "score_a": ga, "score_b": gb})
    path = tmp_path / "goals.csv"
    df.to_csv(path, index=False)
    return path


def test_observations_reach_goals_from_the_command_line(capsys, goals_csv):
    """``--auto``: the search tries the Goals observation where the scores are goal counts (as with
    ``--observations all``); ``--observations outcome,margin`` leaves it out."""
    for extra in ((), ("--observations", "all")):
        code, out, err = run(capsys, "rate", str(goals_csv), "--auto", *extra, "--json", "--quiet")
        assert code == 0, err
        candidates = [c["candidate"] for c in json.loads(out)["auto"]["candidates"]]
        assert any("goals" in c for c in candidates), candidates
    code, out, err = run(capsys, "rate", str(goals_csv), "--auto", "--observations", "outcome,margin", "--json",
                         "--quiet")
    assert code == 0, err
    assert not any("goals" in c["candidate"] for c in json.loads(out)["auto"]["candidates"])


@pytest.mark.parametrize("argv, fragments", [
    (("compare", "--observations", "goals"), ("--observations goals", "add --auto")),
    (("rate", "--scenario", "balanced", "--observations", "all"), ("add --auto",)),
    (("compare", "--auto", "--observations", "margin,goals"), ("must include 'outcome'",)),
    (("rate", "--scenario", "balanced", "--auto", "--observations", "outcome,foo"), ("outcome, margin, goals", "'outcome,foo'")),
])
def test_observations_errors_are_one_line(capsys, argv, fragments):
    assert_user_error(*run(capsys, *argv), *fragments)
