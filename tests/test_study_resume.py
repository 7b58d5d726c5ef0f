"""statespace.study when things go wrong: row files that do not parse are reported and their tasks
rerun; a process pool that breaks ends the study with an error saying why."""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing
import os
import sys
from concurrent.futures.process import BrokenProcessPool

import pandas as pd
import pytest

from statespace.evaluation.study import StudyWarning, run_all, study

from test_study import run_cli  # the study command line, as test_study drives it

TIMINGS = ["fit_seconds", "tune_seconds"]
GRID = dict(methods={"elo": "elo", "elo32": "elo:k=32"}, sources={"bal": "balanced"}, seeds=[0, 1],
            progress=False)


@pytest.fixture(scope="module")
def fresh():
    return study(**GRID)


def same_table(a, b):
    pd.testing.assert_frame_equal(a.drop(columns=TIMINGS), b.drop(columns=TIMINGS))


def first_file(folder, table):
    return folder / f"{table['task'].iloc[0]}.json"


def spoil(row: dict, how: str):
    """A row file's text spoiled one way."""
    if how == "text":
        return "{not json"
    if how == "list":
        return json.dumps([row])
    changes = {"n_test": {"n_test": "many"}, "negative": {"n_test": -3}, "fraction": {"n_test": 2.5},
               "score": {"log_loss": "0.6"}, "bool": {"brier": True}, "error": {"error": 5},
               "method": {"method": "glicko"}, "seed": {"seed": "0"}, "tuned": {"tuned": {"k": 3}}}
    if how == "missing":
        return json.dumps({k: v for k, v in row.items() if k != "log_loss"})
    return json.dumps({**row, **changes[how]})


HOWS = ["n_test", "text", "list", "negative", "fraction", "score", "bool", "error", "method", "seed", "tuned",
        "missing"]


@pytest.mark.parametrize("how", HOWS)
def test_a_row_file_that_does_not_parse_is_reported_and_rerun(tmp_path, fresh, how):
    first = study(**GRID, path=tmp_path)
    file = first_file(tmp_path, first)
    row = json.loads(file.read_text())
    file.write_text(spoil(row, how))
    with pytest.warns(StudyWarning, match=f"row file {file}: .*; its task runs again"):
        resumed = study(**GRID, path=tmp_path)
    assert resumed.attrs["ran"] == 1
    assert list(resumed.attrs["unusable"]) == [row["task"]]
    same_table(resumed, fresh)
    assert json.loads(file.read_text())["log_loss"] == row["log_loss"]  # rewritten by the rerun


def test_the_reason_names_the_value(tmp_path):
    first = study(**GRID, path=tmp_path)
    file = first_file(tmp_path, first)
    file.write_text(spoil(json.loads(file.read_text()), "n_test"))
    with pytest.warns(StudyWarning, match=r"'n_test' is 'many', not a number"):
        study(**GRID, path=tmp_path)


GRID_TOML = """
seeds = [0, 1]
path = "parts"

[methods]
elo = "elo"

[sources]
bal = "scenario:balanced"
"""


def test_cli_reports_unusable_rows_in_one_line(tmp_path):
    (tmp_path / "grid.toml").write_text(GRID_TOML)
    code, _, err = run_cli(["study", str(tmp_path / "grid.toml"), "--quiet"])
    assert code == 0 and err == ""
    files = sorted((tmp_path / "parts").glob("*.json"))
    for f in files:
        f.write_text(spoil(json.loads(f.read_text()), "n_test"))
    code, out, err = run_cli(["study", str(tmp_path / "grid.toml"), "--quiet"])
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("statespace: warning: study: row file "), err
    assert "'n_test' is 'many'" in lines[0] and lines[0].endswith("(1 more)")


# ---------------------------------------------------------------------------- a broken pool
class BreaksAfter(cf.Executor):
    """An executor whose pool breaks after ``n`` items (run here): the rest fail as a process pool's
    futures do when a worker died."""

    def __init__(self, n: int):
        self.n, self.submitted = n, 0

    def submit(self, fn, *args, **kwargs):
        future = cf.Future()
        if self.submitted < self.n:
            future.set_result(fn(*args, **kwargs))
        else:
            future.set_exception(BrokenProcessPool("A child process terminated abruptly, the process pool is "
                                                   "not usable anymore"))
        self.submitted += 1
        return future


def test_a_broken_pool_ends_the_study_saying_why(tmp_path):
    with pytest.raises(BrokenProcessPool, match=r'before any task ended.*if __name__ == "__main__":'):
        study(**GRID, executor=BreaksAfter(0))
    with pytest.raises(BrokenProcessPool, match=r"2 of 4 tasks had ended.*run the study again to resume") as info:
        study(**GRID, executor=BreaksAfter(2), path=tmp_path)
    assert str(tmp_path) in str(info.value)
    rows = [json.loads(f.read_text()) for f in tmp_path.glob("*.json")]
    assert len(rows) == 2 and all(r["error"] is None for r in rows)  # no task recorded as failed


def test_a_real_pool_whose_worker_dies(tmp_path):
    """A worker that ends abruptly (os._exit, as a killed worker or an unguarded script's does)."""
    got = {}
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as executor:
        with pytest.raises(BrokenProcessPool, match="the process pool broke"):
            run_all(os._exit, [3, 4], got.__setitem__, executor=executor, failed=lambda i, exc: repr(exc))
    assert got == {}


def test_cli_broken_pool_is_one_line(tmp_path, monkeypatch):
    study_module = sys.modules["statespace.evaluation.study"]

    def broken(*args, **kwargs):
        raise BrokenProcessPool("the process pool broke: a worker process ended abruptly")

    monkeypatch.setattr(study_module, "study", broken)
    (tmp_path / "grid.toml").write_text(GRID_TOML)
    code, _, err = run_cli(["study", str(tmp_path / "grid.toml"), "--quiet"])
    assert code == 2
    assert err == "statespace: error: the process pool broke: a worker process ended abruptly\n"
