"""Studies at scale: one call runs a grid of comparisons on any executor and returns one tidy table.

A study is the grid ``methods x sources x seeds x modes``; each cell (a *task*) is one
:func:`statespace.compare` of one method on one source's games, split at ``split`` in time
order, in one mode. :func:`study` runs every task and returns a :class:`pandas.DataFrame` with
one row per task, in task order (methods, then sources, then seeds, then modes, each in the
order given), so the same grid gives the same table whatever ran it and in whatever order the
tasks ended:

- ``task`` (a stable id of the task, see below), ``method``, ``source``, ``seed``, ``mode``;
- the score columns of :func:`statespace.compare`'s table: ``n_test``, ``log_loss``, ``brier``,
  ``accuracy``, ``accuracy_50``, ``log_loss_3`` and, where the method's model forecasts the score
  on games that have one, ``score_log_density`` and ``margin_rmse`` (NaN in the other rows);
  compare's ``delta_log_loss`` and ``delta_se`` are left out, since a task scores one method;
- ``fit_seconds``, ``tune_seconds`` (NaN unless tuned), ``tuned`` (the tuned settings as JSON
  text, e.g. ``{"k": 31.7}``, or ``None``) and ``error``: ``None``, or one line
  ``"ValueError: ..."`` when the task failed (its scores are then NaN). A failing task never
  stops the others.

Grid
----
:class:`Grid` (or the same keyword arguments of :func:`study`) holds

- ``methods``: ``{name: method}``, each a method object (``filters.Elo(k=24)``) or a method spec
  string of the command line (``"elo:k=24"``, :func:`statespace.methods.specs.parse_method`);
- ``sources``: ``{name: source}``, each one of

  - ``"dataset:NAME"`` or ``{"dataset": NAME}``: a real data set (:func:`statespace.data.datasets.load`);
  - ``"scenario:NAME"`` or ``{"scenario": NAME, **params}``: a simulated scenario
    (:func:`statespace.model.scenarios.get` with ``seed`` and the parameters);
  - a bare name: the scenario or data set of that name (scenarios first);
  - ``{"csv": PATH}``: a games CSV (:meth:`statespace.Games.from_csv`);
  - a :class:`statespace.Games`: these games;

  - a match data set or a simulated league of matches of many sides (``"dataset:halo2_large_team"``,
    ``"ffa_league"``, ``{"scenario": "simulate_matches", "sides": 8}``): each task is then one
    row of :func:`statespace.evaluation.compare_matches.compare_matches`, online, with its
    ranking scores as the row's columns (:mod:`statespace.evaluation.study_matches`);

- ``seeds`` (default ``[0]``): the seed of each simulated scenario. A source that is not
  simulated (a data set, a CSV, a Games) does not depend on the seed: it runs once per method and
  mode, with ``seed`` missing (``<NA>``) in its row, so averages over seeds weigh it once;
- ``modes`` (default ``["frozen"]``), ``split`` (0.7), ``every`` (30) and ``tune`` (False),
  ``tune_options``: as in :func:`statespace.compare`.

Executors
---------
``executor`` is any :class:`concurrent.futures.Executor` (its ``submit`` and the futures'
results through :func:`concurrent.futures.as_completed`): a
:class:`~concurrent.futures.ProcessPoolExecutor`, Dask's ``Client.get_executor()`` (install the
extra ``dask``) or Ray's executor on a cluster. ``n_jobs=k`` makes a local process pool of ``k``
workers (the ``spawn`` start method, which is safe with numba's and BLAS's threads; ``-1``: one
per core), shut down when the study ends; ``n_jobs=1`` and the default run every task in this
process, one after the other. A process pool's workers start by importing the main script, so a
script must call :func:`study` under ``if __name__ == "__main__":``; a pool that breaks (for
that reason, or a worker killed) ends the study with ``BrokenProcessPool`` saying so, never with
every task a failed row (:mod:`statespace._runtime.pool`). Each task builds its games inside the worker from the source spec
(a scenario's games are never shipped), so what crosses to a worker is the method object and a
small spec.

Resuming
--------
With ``path`` (a folder) each finished task's row is written at once to
``path/<task>.json`` (written to a temporary file and renamed, so a file is whole or absent),
where ``<task>`` is the first 16 hex digits of the SHA-256 of the task's spec (method name and
``repr`` of its settings, source spec, seed, mode, split, every, tune and tune options). A
study started again with the same ``path`` reads the rows already there and runs only the
tasks without one (and again those whose row recorded an error, so that a fixed failure is
retried); the returned table merges both and equals a fresh run's (up to the timing columns).
A row file that cannot be used (not JSON, or not a row the study could have written for its
task: a wrong key, ``"n_test": "many"``; see :mod:`statespace.evaluation.study_rows`) is reported, as a
:class:`StudyWarning` and in ``table.attrs["unusable"]``, and its task runs again.
Rows are JSON rather than Parquet so that each file round-trips its floats exactly without a
schema to agree on across one-row files. Files of other tasks in the folder are left alone.

The task ids change with anything that changes the result, so a study with a changed method
setting or split runs those tasks anew; a method whose ``repr`` is the default one (``<... at
0x...>``) is identified by its pickled bytes instead.

Progress shows as tasks end (``progress=``: :mod:`statespace._runtime.progress`'s convention).
:func:`summary` gives the mean log loss per method, source and mode with its standard error over
the seeds. ``statespace study GRID.toml`` runs a grid from the command line
(:mod:`statespace.app.study_cli`, which documents the TOML format).
"""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import math
import os
import pickle
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from statespace.methods.specs import one_line
from statespace.evaluation.study_rows import (KEY_COLUMNS, SCORE_COLUMNS, key_row as _key_row, read_rows, table as _table, write_row)
from statespace._runtime.pool import check_jobs as _check_jobs, run_all
from statespace.data.match_datasets import MATCH_DATASETS
from statespace.evaluation.study_matches import (MATCH_MODES, MATCH_SCENARIOS, is_match_source, match_row, match_source_spec,
                                                 match_summary)

__all__ = ["Grid", "Task", "study", "summary", "run_task", "run_all", "StudyWarning", "KEY_COLUMNS",
           "SCORE_COLUMNS"]

#: compare's columns a study row leaves out: they compare methods with one another, and a task has one
_DROPPED = ("delta_log_loss", "delta_se")


class StudyWarning(UserWarning):
    """A row file of a resumed study that cannot be used (its task runs again)."""


# ------------------------------------------------------------------------------ grid and tasks
def _source_spec(name: str, source) -> dict | Any:
    """A source as a normal spec: ``{"dataset": NAME}``, ``{"scenario": NAME, **params}``,
    ``{"csv": PATH}``, or a Games object as it is; ``ValueError`` naming the source otherwise."""
    from statespace.data import datasets
    from statespace.model import scenarios
    from statespace.data.games import Games

    if isinstance(source, Games):
        return source
    matches = match_source_spec(name, source)
    if matches is not None:
        return matches
    if isinstance(source, str):
        kind, colon, value = source.partition(":")
        if not colon:  # a bare name: a scenario, else a data set
            if source in scenarios.ALL:
                return {"scenario": source}
            if source in datasets.DATASETS:
                return {"dataset": source}
            raise ValueError(f"source {name!r}: {source!r} is neither a scenario "
                             f"({', '.join([*scenarios.ALL, *MATCH_SCENARIOS])}) nor a data set "
                             f"({', '.join([*datasets.DATASETS, *MATCH_DATASETS])}); or write 'dataset:NAME', "
                             f"'scenario:NAME'")
        source = {kind.strip(): value.strip()}
    if not isinstance(source, Mapping):
        raise ValueError(f"source {name!r} must be 'dataset:NAME', 'scenario:NAME', a mapping such as "
                         f"{{'scenario': 'drifting'}} or a statespace.Games; got {type(source).__name__}")
    spec = dict(source)
    kinds = [k for k in ("dataset", "scenario", "csv") if k in spec]
    if len(kinds) != 1:
        raise ValueError(f"source {name!r} must have exactly one of the keys 'dataset', 'scenario', 'csv'; "
                         f"got {sorted(spec)}")
    kind = kinds[0]
    if kind == "dataset":
        if set(spec) - {"dataset"}:
            raise ValueError(f"source {name!r}: a data set takes no parameters, got {sorted(set(spec) - {'dataset'})}")
        if spec["dataset"] not in datasets.DATASETS:
            raise ValueError(f"source {name!r}: unknown data set {spec['dataset']!r}; choose one of "
                             f"{', '.join([*datasets.DATASETS, *MATCH_DATASETS])}")
    elif kind == "scenario":
        if "seed" in spec:
            raise ValueError(f"source {name!r}: the seed of a scenario comes from the grid's seeds, not its spec")
        try:  # caught here rather than as an error in every one of the source's rows
            scenarios.check_params(spec["scenario"], {k: v for k, v in spec.items() if k != "scenario"})
        except ValueError as exc:
            raise ValueError(f"source {name!r}: {exc}") from None
    else:
        if set(spec) - {"csv"}:
            raise ValueError(f"source {name!r}: a CSV source takes no parameters, got {sorted(set(spec) - {'csv'})}")
        spec["csv"] = str(Path(spec["csv"]).resolve())  # a worker elsewhere in the tree reads the same file
    return spec


def _seeded(spec) -> bool:
    """Whether a source's games depend on the seed (simulated scenarios only)."""
    return isinstance(spec, dict) and ("scenario" in spec or "match_scenario" in spec)


def _method(name: str, method):
    """A method object from an object or a spec string of the command line."""
    if isinstance(method, str):
        from statespace.methods.specs import CLIError, parse_method

        try:
            return parse_method(method)
        except CLIError as exc:
            raise ValueError(f"method {name!r}: {exc}") from None
    from statespace.methods.protocols import Forecaster

    if not isinstance(method, Forecaster):
        raise TypeError(f"method {name!r} ({type(method).__name__}) has no fit(games): it is not a rating method "
                        f"(see statespace.methods.protocols.Method)")
    return method


def _identity(method) -> str:
    """What identifies a method's settings in a task id: its ``repr``, or for an object with the
    default ``repr`` (which holds a memory address) the SHA-256 of its pickled bytes."""
    text = repr(method)
    if " at 0x" in text:
        return type(method).__qualname__ + ":" + hashlib.sha256(pickle.dumps(method)).hexdigest()
    return text


def _games_digest(games) -> str:
    """A content hash of a Games object's table (for task ids of a Games source)."""
    import pandas as pd

    frame = games.to_frame()
    values = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return hashlib.sha256(values.tobytes() + ",".join(map(str, frame.columns)).encode()).hexdigest()


@dataclass(frozen=True)
class Task:
    """One cell of a grid: ``method`` (an object) called ``method_name`` scored on the games of
    ``source`` (a spec, see the module docstring) called ``source_name``, simulated with ``seed``
    (``None`` for a source that does not depend on it), in ``mode``; ``index`` its place in the
    grid's order. :attr:`id` is its stable id."""

    index: int
    method_name: str
    method: Any
    source_name: str
    source: Any
    seed: int | None
    mode: str
    split: float
    every: Any
    tune: bool
    tune_options: dict | None
    id: str = field(default="", compare=False)

    def spec(self) -> dict:
        """Everything that determines the task's result, as JSON-able values (its id hashes this)."""
        return self._spec(_identity(self.method), _source_key(self.source))

    def _spec(self, settings: str, source) -> dict:
        return {"method": self.method_name, "settings": settings, "source": self.source_name,
                "source_spec": source, "seed": self.seed, "mode": self.mode, "split": self.split,
                "every": self.every, "tune": self.tune, "tune_options": self.tune_options}


def _source_key(source):
    """A source spec as it goes into a task id: a Games object by the hash of its table."""
    from statespace.data.games import Games

    return {"games": _games_digest(source)} if isinstance(source, Games) else source


def _task_id(spec: dict) -> str:
    text = json.dumps(spec, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Grid:
    """A study's grid (see the module docstring): ``methods`` ``{name: method or spec}``,
    ``sources`` ``{name: source}``, ``seeds``, ``modes``, ``split``, ``every``, ``tune`` and
    ``tune_options``. :meth:`tasks` lists its tasks in order. Bad entries raise ``ValueError`` (or
    ``TypeError`` for a method that is not one) naming the entry, when the grid is made."""

    methods: Mapping[str, Any]
    sources: Mapping[str, Any]
    seeds: Sequence[int] = (0,)
    modes: Sequence[str] = ("frozen",)
    split: float = 0.7
    every: Any = 30
    tune: bool = False
    tune_options: dict | None = None

    def __post_init__(self):
        from statespace.evaluation.compare import MODES

        if not isinstance(self.methods, Mapping) or not self.methods:
            raise ValueError("a study needs methods as a non-empty mapping {name: method or spec}")
        if not isinstance(self.sources, Mapping) or not self.sources:
            raise ValueError("a study needs sources as a non-empty mapping {name: source}")
        object.__setattr__(self, "methods", {str(k): _method(str(k), m) for k, m in self.methods.items()})
        object.__setattr__(self, "sources", {str(k): _source_spec(str(k), s) for k, s in self.sources.items()})
        seeds = [self.seeds] if isinstance(self.seeds, int) else list(self.seeds)
        for s in seeds:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise ValueError(f"seeds must be whole numbers >= 0, got {s!r}")
        if not seeds:
            raise ValueError("seeds must name at least one seed")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds are given twice: {seeds}")
        object.__setattr__(self, "seeds", tuple(seeds))
        modes = [self.modes] if isinstance(self.modes, str) else list(self.modes)
        bad = [m for m in modes if m not in MODES]
        if bad or not modes:
            raise ValueError(f"modes must be some of {', '.join(MODES)}; got {modes!r}")
        object.__setattr__(self, "modes", tuple(dict.fromkeys(modes)))
        if isinstance(self.split, bool) or not isinstance(self.split, (int, float)) or not 0 < self.split < 1:
            raise ValueError(f"split must be a fraction between 0 and 1, got {self.split!r}")
        if not isinstance(self.tune, bool):
            raise ValueError(f"tune must be True or False, got {self.tune!r}")

    def tasks(self) -> list[Task]:
        """The tasks in the grid's order: methods, then sources, then seeds, then modes; a source
        that does not depend on the seed once per method and mode (seed ``None``)."""
        out = []
        # once per method and source, not per task: pickling a method, hashing a Games table
        settings = {mname: _identity(method) for mname, method in self.methods.items()}
        keys = {sname: _source_key(source) for sname, source in self.sources.items()}
        for mname, method in self.methods.items():
            for sname, source in self.sources.items():
                for seed in (self.seeds if _seeded(source) else (None,)):
                    for mode in (MATCH_MODES if is_match_source(source) else self.modes):
                        task = Task(len(out), mname, method, sname, source, seed, mode, float(self.split),
                                    self.every, self.tune, self.tune_options)
                        object.__setattr__(task, "id", _task_id(task._spec(settings[mname], keys[sname])))
                        out.append(task)
        return out


# ------------------------------------------------------------------------------ one task
def _games(source, seed):
    """The games of a source spec (built where the task runs)."""
    from statespace.data import datasets
    from statespace.model import scenarios
    from statespace.data.games import Games

    if isinstance(source, Games):
        return source
    if "dataset" in source:
        return datasets.load(source["dataset"])
    if "csv" in source:
        return Games.from_csv(source["csv"])
    params = {k: v for k, v in source.items() if k != "scenario"}
    return scenarios.get(source["scenario"], seed=seed, **params).games


def _plain(value):
    """A JSON-able copy of a tuned setting (NumPy scalars to Python numbers)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


def run_task(task: Task) -> dict:
    """Run one task (build its games, :func:`statespace.compare` its method on them) and return
    its row as a dict of plain Python values. An exception becomes the row's ``error``
    (``"TypeName: message"`` on one line, scores NaN); ``KeyboardInterrupt`` passes on."""
    from statespace.evaluation.compare import compare

    row = _key_row(task)
    try:
        if is_match_source(task.source):
            return match_row(task, row)
        games = _games(task.source, task.seed)
        table = compare({task.method_name: task.method}, games, task.split, task.mode, every=task.every,
                        tune=task.tune, tune_options=task.tune_options, progress=False)
    except Exception as exc:  # the study goes on; the row says what went wrong
        row.update({c: math.nan for c in SCORE_COLUMNS[:6]})
        row.update(fit_seconds=math.nan, tune_seconds=math.nan, tuned=None,
                   error=f"{type(exc).__name__}: {one_line(exc)}")
        return row
    scored = table.iloc[0]
    for column in table.columns:
        if column in _DROPPED or column in ("fit_seconds", "tune_seconds"):
            continue
        value = scored[column]
        row[column] = int(value) if column == "n_test" else float(value)
    row["fit_seconds"] = float(scored["fit_seconds"])
    row["tune_seconds"] = float(scored["tune_seconds"]) if "tune_seconds" in table.columns else math.nan
    tuned = table.attrs.get("tuned", {}).get(task.method_name)
    row["tuned"] = None if tuned is None else json.dumps(_plain(tuned.params))
    row["error"] = None
    return row


def _failed_row(task: Task, exc: BaseException) -> dict:
    """The row of a task whose future failed outside :func:`run_task` (a worker lost, a method that
    does not pickle)."""
    row = _key_row(task)
    row.update({c: math.nan for c in SCORE_COLUMNS[:6]})
    row.update(fit_seconds=math.nan, tune_seconds=math.nan, tuned=None,
               error=f"{type(exc).__name__}: {one_line(exc)}")
    return row


# ------------------------------------------------------------------------------ the study
def study(grid: Grid | None = None, *, executor: cf.Executor | None = None, n_jobs: int | None = None,
          path: str | os.PathLike | None = None, progress: bool | None = None, **grid_options):
    """Run every task of ``grid`` (a :class:`Grid`, or its fields as keyword arguments:
    ``study(methods=..., sources=..., seeds=[0, 1], modes=["online"])``) and return the table,
    one row per task in the grid's order (see the module docstring for the columns).

    ``executor``: any :class:`concurrent.futures.Executor` to run the tasks on (Dask's
    ``client.get_executor()``, a process pool); ``n_jobs``: a local process pool of that many
    workers instead (``-1``: one per core); neither: every task in this process. ``path``: a
    folder for each finished row, which makes the study resumable (see the module docstring).
    ``progress``: a bar ticking as tasks end (``True``, ``False``, ``None``: once the study has
    taken a few seconds). ``table.attrs["ran"]`` is the number of tasks run by this call (the
    others were read from ``path``), and ``table.attrs["unusable"]`` ``{task id: "FILE: what is
    wrong"}`` for the row files in ``path`` that could not be used (each also a
    :class:`StudyWarning`; their tasks ran again).

    A failing task is a row with its ``error``; a process pool that breaks (a worker lost, or a
    script that starts the study without ``if __name__ == "__main__":``) ends the study with
    :class:`concurrent.futures.process.BrokenProcessPool` saying why, the rows that ended kept in
    ``path``.
    """
    from statespace._runtime.progress import bar, check_progress, note

    if grid is None:
        grid = Grid(**grid_options)
    elif grid_options:
        raise TypeError(f"give a Grid or its fields, not both (got {', '.join(sorted(grid_options))})")
    if not isinstance(grid, Grid):
        raise TypeError(f"grid must be a statespace.Grid, got {type(grid).__name__}")
    check_progress(progress, "study")
    _check_jobs(executor, n_jobs)
    tasks = grid.tasks()
    folder = None
    rows: dict[str, dict] = {}
    unusable: dict[str, str] = {}
    if path is not None:
        folder = Path(path)
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"study path {str(folder)!r} is a file; give a folder for the study's rows")
        folder.mkdir(parents=True, exist_ok=True)
        rows, unusable = read_rows(folder, tasks)
        rows = {k: r for k, r in rows.items() if r.get("error") is None}
        for why in unusable.values():
            warnings.warn(f"study: row file {why}; its task runs again", StudyWarning, stacklevel=2)
    todo = [t for t in tasks if t.id not in rows]
    failures = []

    with bar(len(todo), "study", progress, unit="task") as pbar:
        def done(i: int, row: dict) -> None:
            task = todo[i]
            rows[task.id] = row
            if folder is not None:
                write_row(folder, row)
            if row.get("error") is not None:
                failures.append(task)
            pbar.update(1)
            note(pbar, f"ended: {task.method_name} on {task.source_name}"
                 + (f" ({len(failures)} failed)" if failures else ""))

        try:
            run_all(run_task, todo, done, executor=executor, n_jobs=n_jobs,
                    failed=lambda i, exc: _failed_row(todo[i], exc))
        except cf.BrokenExecutor as exc:
            if folder is None:
                raise
            raise type(exc)(f"{exc}; the rows that ended are in {folder}: run the study again to resume") from exc
    table = _table([rows[t.id] for t in tasks])
    table.attrs["ran"] = len(todo)
    table.attrs["unusable"] = unusable
    return table


def summary(table):
    """Per method, source and mode: the mean ``log_loss`` over the tasks that did not fail, its
    standard error over the seeds (``std / sqrt(n)``, ddof 1; NaN from fewer than two), the
    number of tasks ``n`` and of failed ones ``failed``. Rows in the table's order of first
    appearance."""
    import pandas as pd

    ok = table[table["error"].isna()]
    keys = ["method", "source", "mode"]
    order = table[keys].drop_duplicates()
    stats = ok.groupby(keys, sort=False)["log_loss"].agg(["mean", "std", "count"])
    stats["se"] = stats["std"] / stats["count"].pow(0.5)
    failed = table[table["error"].notna()].groupby(keys, sort=False).size().rename("failed")
    out = order.merge(stats[["mean", "se", "count"]].reset_index(), on=keys, how="left")
    out = out.merge(failed.reset_index(), on=keys, how="left")
    out = out.rename(columns={"mean": "log_loss", "count": "n"})
    out["n"] = out["n"].fillna(0).astype(int)
    out["failed"] = out["failed"].fillna(0).astype(int)
    return match_summary(table, pd.DataFrame(out).reset_index(drop=True))
