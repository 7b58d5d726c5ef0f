"""statespace.study: grids of comparisons on any executor, resumable, one tidy table."""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import io
import json
import multiprocessing
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from filters import Elo, Glicko
from statespace import compare, scenarios
from statespace.evaluation.study import Grid, run_all, study, summary

TIMINGS = ["fit_seconds", "tune_seconds"]


def small_grid(**changes) -> dict:
    """Two filters and a smoother on two small scenarios, two seeds, two modes: the smoother in
    online mode is a task that fails (it has no online run)."""
    grid = dict(methods={"elo": Elo(k=24), "elo32": "elo:k=32", "bt": "bradley_terry"},
                sources={"bal": "scenario:balanced", "draws": {"scenario": "draw_heavy"}},
                seeds=[0, 1], modes=["online", "frozen"], progress=False)
    grid.update(changes)
    return grid


def same_table(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.drop(columns=TIMINGS), b.drop(columns=TIMINGS))


class Raising:
    """A rating method whose fit raises: its tasks must fail alone."""

    name = "raising"

    def fit(self, games):
        raise RuntimeError("this method always fails")

    def __repr__(self):
        return "Raising()"


class InterruptOnce:
    """Elo that raises KeyboardInterrupt (as Ctrl-C would) at its first fit while ``flag`` exists,
    removing it; its repr leaves the flag out, so the task ids do not depend on it."""

    name = "interrupt_once"

    def __init__(self, flag: str):
        self.flag = flag

    def fit(self, games):
        if os.path.exists(self.flag):
            os.unlink(self.flag)
            raise KeyboardInterrupt
        return Elo().fit(games)

    def __repr__(self):
        return "InterruptOnce()"


@pytest.fixture(scope="module")
def serial():
    return study(**small_grid())


@pytest.fixture(scope="module")
def pool():
    with cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as executor:
        yield executor


def test_tasks_in_grid_order_data_sets_once():
    games = scenarios.get("draw_heavy", seed=5).games
    grid = Grid(methods={"elo": "elo", "glicko": Glicko()}, sources={"s": "scenario:balanced", "g": games,
                                                                      "intl": "dataset:intl_football"},
                seeds=[3, 1, 2], modes=["frozen", "online"])
    tasks = grid.tasks()
    # per method: 3 seeds of the scenario + the Games once + the data set once, times 2 modes
    assert len(tasks) == 2 * (3 + 1 + 1) * 2
    assert [(t.method_name, t.source_name, t.seed, t.mode) for t in tasks[:8]] == [
        ("elo", "s", 3, "frozen"), ("elo", "s", 3, "online"), ("elo", "s", 1, "frozen"), ("elo", "s", 1, "online"),
        ("elo", "s", 2, "frozen"), ("elo", "s", 2, "online"), ("elo", "g", None, "frozen"),
        ("elo", "g", None, "online")]
    assert [t.index for t in tasks] == list(range(len(tasks)))
    ids = [t.id for t in tasks]
    assert len(set(ids)) == len(ids)
    # stable: the same grid gives the same ids; a changed setting changes them
    again = Grid(methods={"elo": "elo", "glicko": Glicko()}, sources={"s": "balanced", "g": games,
                                                                      "intl": "intl_football"},
                 seeds=[3, 1, 2], modes=["frozen", "online"])
    assert [t.id for t in again.tasks()] == ids
    other = Grid(methods={"elo": "elo:k=20", "glicko": Glicko()}, sources={"s": "balanced"}, seeds=[3])
    assert other.tasks()[0].id != tasks[0].id
    moved = Grid(methods={"elo": "elo"}, sources={"s": "balanced"}, seeds=[3], split=0.6)
    assert moved.tasks()[0].id != tasks[0].id


def test_rows_are_compare_of_each_task(serial):
    assert len(serial) == 3 * 2 * 2 * 2
    assert list(serial.columns[:5]) == ["task", "method", "source", "seed", "mode"]
    assert serial["seed"].tolist() == [0, 0, 1, 1] * 6
    for i in (0, 7, 13, 23):
        row = serial.iloc[i]
        if row["error"] is not None:
            continue
        method = {"elo": Elo(k=24), "elo32": Elo(k=32), "bt": None}[row["method"]]
        if method is None:
            from smoothers import BradleyTerry
            method = BradleyTerry()
        games = scenarios.get({"bal": "balanced", "draws": "draw_heavy"}[row["source"]], seed=int(row["seed"])).games
        direct = compare({"x": method}, games, 0.7, row["mode"], progress=False).iloc[0]
        for column in ("n_test", "log_loss", "brier", "accuracy", "accuracy_50"):
            assert row[column] == direct[column], (i, column)
    assert "delta_log_loss" not in serial.columns


def test_failing_tasks_reported_others_complete(serial):
    failed = serial[serial["error"].notna()]
    # the smoother has no online run: its online tasks fail, each with compare's message
    assert set(failed["method"]) == {"bt"} and set(failed["mode"]) == {"online"} and len(failed) == 4
    assert all(e.startswith("ValueError: ") and "online" in e for e in failed["error"])
    assert failed["log_loss"].isna().all()
    ok = serial[serial["error"].isna()]
    assert len(ok) == 20 and ok["log_loss"].between(0.3, 0.8).all()

    table = study(methods={"bad": Raising(), "elo": "elo"}, sources={"bal": "balanced"}, seeds=[0], progress=False)
    assert table["error"].tolist() == ["RuntimeError: this method always fails", None]
    assert np.isfinite(table["log_loss"].iloc[1])


def test_same_grid_same_table(serial):
    again = study(**small_grid())
    same_table(serial, again)
    other_seeds = study(**small_grid(seeds=[0, 2]))
    assert not np.allclose(other_seeds["log_loss"].dropna(), serial["log_loss"].dropna())


def test_resume_after_lost_rows(tmp_path, serial):
    first = study(**small_grid(), path=tmp_path)
    assert first.attrs["ran"] == 24
    same_table(first, serial)
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 24
    # the failed rows are kept on disk too, and run again when resumed (a fixed failure is retried)
    for f in files[:3]:
        f.unlink()
    errors = sum(json.loads(f.read_text())["error"] is not None for f in files[3:])
    resumed = study(**small_grid(), path=tmp_path)
    assert resumed.attrs["ran"] == 3 + errors
    same_table(resumed, serial)
    done = study(**small_grid(), path=tmp_path)
    assert done.attrs["ran"] == 4  # only the four failing tasks
    assert not list(tmp_path.glob(".*.tmp"))


def test_interrupted_study_resumes(tmp_path):
    flag = tmp_path / "interrupt"
    grid = dict(methods={"elo": "elo", "late": InterruptOnce(str(flag))}, sources={"bal": "balanced"},
                seeds=[0, 1, 2], progress=False)
    parts = tmp_path / "parts"
    flag.touch()
    with pytest.raises(KeyboardInterrupt):
        study(**grid, path=parts)
    assert len(list(parts.glob("*.json"))) == 3  # elo's three tasks finished before the interrupt
    resumed = study(**grid, path=parts)
    assert resumed.attrs["ran"] == 3
    assert resumed["error"].isna().all()
    fresh = study(**grid)
    same_table(resumed, fresh)


def test_process_pool_equals_serial(serial):
    grid = small_grid(methods={"elo": Elo(k=24), "bt": "bradley_terry", "bad": Raising()})
    table = study(**grid, n_jobs=2)
    reference = study(**grid)
    same_table(table, reference)
    assert reference["error"].notna().sum() == 4 + 8  # bt online and every Raising task
    same_table(table[table["method"] != "bad"].reset_index(drop=True),
               serial[serial["method"].isin(["elo", "bt"])].reset_index(drop=True))


def test_compare_on_executor_equals_serial(pool):
    games = scenarios.get("balanced", seed=3).games
    from smoothers import BradleyTerry

    methods = {"elo": Elo(), "elo32": Elo(k=32), "bt": BradleyTerry()}
    for mode, tune in (("frozen", False), ("walk_forward", True)):
        a = compare(methods, games, 0.7, mode, tune=tune, every=60, progress=False)
        b = compare(methods, games, 0.7, mode, tune=tune, every=60, progress=False, executor=pool)
        cols = [c for c in a.columns if c not in TIMINGS]
        pd.testing.assert_frame_equal(a[cols], b[cols])
        for name in methods:
            np.testing.assert_array_equal(a.attrs["proba"][name], b.attrs["proba"][name])
        if tune:
            assert a.attrs["tuned"]["elo"].params == b.attrs["tuned"]["elo"].params


def test_compare_on_n_jobs_equals_serial():
    """``n_jobs``: compare makes its own pool of workers (each compiles what its methods need)."""
    games = scenarios.get("balanced", seed=3).games
    methods = {"elo": Elo(), "elo32": Elo(k=32)}
    a = compare(methods, games, 0.7, progress=False)
    b = compare(methods, games, 0.7, progress=False, n_jobs=2)
    cols = [c for c in a.columns if c not in TIMINGS]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    with pytest.raises(ValueError, match="n_jobs must be a whole number"):
        compare(methods, games, 0.7, progress=False, n_jobs=0)


def test_executor_failure_outside_task_is_a_row():
    """An item the executor cannot run (here: a method that does not pickle for a process) is
    reported in its row; run_all without ``failed`` raises it."""

    class Local(Elo):  # defined in a function: it does not pickle
        pass

    with cf.ThreadPoolExecutor(2) as executor:
        got = {}
        run_all(lambda x: 1 / x, [1, 0, 2], got.__setitem__, executor=executor, failed=lambda i, e: repr(e))
        assert got[0] == 1.0 and got[2] == 0.5 and "ZeroDivisionError" in got[1]
        with pytest.raises(ZeroDivisionError):
            run_all(lambda x: 1 / x, [1, 0], lambda i, r: None, executor=executor)
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as executor:
        table = study(methods={"local": Local(), "elo": "elo"}, sources={"bal": "balanced"}, executor=executor,
                      progress=False)
    assert "pickle" in table["error"].iloc[0].lower()
    assert table["error"].iloc[1] is None


def test_summary_means_over_seeds(serial):
    s = summary(serial)
    row = s[(s["method"] == "elo") & (s["source"] == "bal") & (s["mode"] == "online")].iloc[0]
    values = serial[(serial["method"] == "elo") & (serial["source"] == "bal") & (serial["mode"] == "online")]
    values = values["log_loss"].to_numpy()
    assert row["n"] == 2 and row["failed"] == 0
    assert row["log_loss"] == pytest.approx(values.mean())
    assert row["se"] == pytest.approx(abs(values[0] - values[1]) / 2)  # sd of two values / sqrt(2)
    bt = s[(s["method"] == "bt") & (s["mode"] == "online")]
    assert bt["n"].tolist() == [0, 0] and bt["failed"].tolist() == [2, 2] and bt["log_loss"].isna().all()


@pytest.mark.parametrize("changes, message", [
    (dict(sources={"x": "scenario:nope"}), "unknown scenario 'nope'"),
    (dict(sources={"x": "dataset:nope"}), "unknown data set 'nope'"),
    (dict(sources={"x": "nope"}), "neither a scenario"),
    (dict(sources={"x": {"scenario": "balanced", "seed": 3}}), "seed of a scenario"),
    (dict(sources={"x": {"dataset": "nfl", "scenario": "balanced"}}), "exactly one of"),
    (dict(sources={"x": {"scenario": "balanced", "n_frobs": 3}}), "scenario 'balanced' has no parameter 'n_frobs'"),
    (dict(methods={"e": "elo:kk=3"}), "method 'e'"),
    (dict(modes=["live"]), "modes must be"),
    (dict(seeds=[0, -1]), "seeds must be"),
    (dict(split=1.5), "split must be"),
])
def test_bad_grid_names_the_entry(changes, message):
    with pytest.raises(ValueError, match=message):
        study(**small_grid(**changes))


def test_bad_executor_options():
    with pytest.raises(ValueError, match="either executor or n_jobs"):
        study(**small_grid(), n_jobs=2, executor=cf.ThreadPoolExecutor(1))
    with pytest.raises(ValueError, match="n_jobs must be"):
        study(**small_grid(), n_jobs=0)
    with pytest.raises(TypeError, match="not a rating method"):
        study(**small_grid(methods={"x": object()}))


def test_local_cluster_equals_serial(serial):
    if os.environ.get("CI"):  # CI installs the test extra, which holds dask: a missing dask fails there
        import dask.distributed as distributed
    else:
        distributed = pytest.importorskip("dask.distributed", reason="the extra dask is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        table = study(**small_grid(), executor=client.get_executor())
    same_table(table, serial)
    assert table["error"].notna().sum() == 4


# ------------------------------------------------------------------------------ the command line
def run_cli(argv) -> tuple[int, str, str]:
    from statespace.app import study_cli

    parser = argparse.ArgumentParser(prog="statespace")
    study_cli.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    out, err = io.StringIO(), io.StringIO()
    return args.func(args, out, err), out.getvalue(), err.getvalue()


GRID_TOML = """
seeds = [0, 1]
modes = ["online"]

[methods]
elo = "elo:k=24"
elo32 = "elo:k=32"

[sources]
bal = "scenario:balanced"
mine = { csv = "games.csv" }
"""


def test_cli_runs_a_grid_file(tmp_path):
    games = scenarios.get("draw_heavy", seed=9).games
    games.to_frame().to_csv(tmp_path / "games.csv", index=False)
    (tmp_path / "grid.toml").write_text(GRID_TOML)
    out_file = tmp_path / "out" / "table.parquet"
    code, out, err = run_cli(["study", str(tmp_path / "grid.toml"), "--out", str(out_file), "--quiet"])
    assert code == 0, err
    written = pd.read_parquet(out_file)
    expected = study(methods={"elo": "elo:k=24", "elo32": "elo:k=32"},
                     sources={"bal": "balanced", "mine": {"csv": str(tmp_path / "games.csv")}},
                     seeds=[0, 1], modes=["online"], progress=False)
    assert written["log_loss"].tolist() == expected["log_loss"].tolist()
    assert written["method"].tolist() == expected["method"].tolist()
    assert "elo32" in out and "wrote 6 rows" in out
    # the rows were kept beside the table: a second run runs nothing and writes the same
    assert len(list((tmp_path / "out" / "table.parquet.parts").glob("*.json"))) == 6
    code, _, _ = run_cli(["study", str(tmp_path / "grid.toml"), "--out", str(tmp_path / "t.csv"),
                          "--parts", str(tmp_path / "out" / "table.parquet.parts"), "--quiet"])
    assert code == 0
    assert pd.read_csv(tmp_path / "t.csv")["log_loss"].tolist() == pytest.approx(expected["log_loss"].tolist())


@pytest.mark.parametrize("text, message", [
    ("seeds = [0]\n[methods]\nelo = 'elo'\n", "needs a [sources] table"),
    ("colour = 1\n[methods]\nelo = 'elo'\n[sources]\nb = 'balanced'\n", "unknown key 'colour'"),
    ("[methods]\nelo = 'elo:k=x=1'\n[sources]\nb = 'balanced'\n", "method 'elo'"),
    ("[methods\n", "not valid TOML"),
])
def test_cli_bad_grid_is_one_line(tmp_path, text, message):
    (tmp_path / "grid.toml").write_text(text)
    code, out, err = run_cli(["study", str(tmp_path / "grid.toml")])
    assert code == 2
    assert err.startswith("statespace: error: ") and message in err and err.count("\n") == 1


def test_cli_bad_out_suffix(tmp_path):
    (tmp_path / "grid.toml").write_text(GRID_TOML)
    code, _, err = run_cli(["study", str(tmp_path / "grid.toml"), "--out", str(tmp_path / "t.xlsx")])
    assert code == 2 and "--out must end in .parquet or .csv" in err
