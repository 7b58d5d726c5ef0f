"""``statespace study``: run a grid of comparisons from a TOML file (:func:`statespace.evaluation.study.study`).

::

    statespace study GRID.toml [--out TABLE.parquet|TABLE.csv] [--parts DIR] [--n-jobs N] [--quiet]

The grid file (read with :mod:`tomllib`; relative paths are relative to the file)::

    seeds = [0, 1, 2]            # seeds of the simulated scenarios (default [0])
    modes = ["online", "frozen"] # any of frozen, online, walk_forward (default ["frozen"])
    split = 0.7                  # share of games, in time order, that trains (default 0.7)
    every = 30                   # walk_forward block: days, or "week", "month", "year" (default 30)
    tune = false                 # tune each method on the training part first (default false)
    path = "study-parts"         # optional: folder of finished rows, which makes the study resumable

    [methods]                    # name = method spec, as --methods of `statespace compare`
    elo = "elo:k=24"
    glicko = "glicko"

    [sources]                    # name = source
    intl = "dataset:intl_football"
    balanced = "scenario:balanced"
    drift = { scenario = "drifting" }
    mine = { csv = "games.csv" }
    halo = "dataset:halo2_large_team"                   # matches of many sides (teams)
    ffa = { scenario = "simulate_matches", sides = 8 }  # a simulated free-for-all league

    [tune_options]               # optional: passed to each method's tune, e.g. burn_in = 0.2
    burn_in = 0.2

Sources of matches of many sides (match data sets, ``ffa_league``, ``team_league``,
``simulate_matches`` with its parameters: :mod:`statespace.evaluation.study_matches`) run online
only, each task a ``compare_matches`` row with the ranking scores; a method that cannot rate
matches fails there, naming itself.

The command prints a summary (per method, source and mode: the mean log loss over the seeds,
its standard error, with match sources the mean pairwise log loss and its standard error, the
number of tasks and of failed ones: :func:`statespace.evaluation.study.summary`) and,
with ``--out``, writes the full table (one row per task), as Parquet or CSV by the file's
suffix. Finished rows go to the parts folder as they end: ``--parts DIR``, else the grid's
``path``, else ``OUT.parts`` beside ``--out`` (without ``--out`` and ``path`` there is none); run
the same command again after an interruption and only the missing tasks run. ``--n-jobs N``
runs the tasks on a local process pool of ``N`` workers (``-1``: one per core).

``statespace.app.cli`` wires it in with :func:`add_parser`. Errors follow the command line's rule:
one line ``statespace: error: ...`` on stderr and exit status 2 (a grid file that cannot be read
or has unknown keys, a bad method or source, an output suffix other than ``.parquet``/``.csv``).
Failed tasks are not errors of the command: they are counted on stderr and kept in the table's
``error`` column, and the exit status is 0; so are row files in the parts folder that cannot be
used (one ``warning:`` line; their tasks run again). A process pool that breaks (a worker
killed) is an error: one line saying so, exit status 2, the finished rows kept for a rerun.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import os
import tomllib
import warnings
from pathlib import Path

from statespace.methods.specs import PROG, CLIError, one_line, whole_number

__all__ = ["add_parser", "main", "read_grid"]

#: the keys a grid file may have
GRID_KEYS = ("methods", "sources", "seeds", "modes", "split", "every", "tune", "tune_options", "path")
OUT_SUFFIXES = (".parquet", ".csv")


#: worker processes: a whole number >= 1, or -1 for one per core
_n_jobs = whole_number("--n-jobs", lambda v: v >= 1 or v == -1, ">= 1 or -1")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``study`` subcommand to ``subparsers`` (of ``statespace.app.cli.build_parser``)."""
    p = subparsers.add_parser("study", help="run a grid of comparisons (methods x sources x seeds x modes)",
                              description="Run every task of a grid file (TOML: methods, sources, seeds, modes, "
                                          "split, tune; see docs/study.md), print the mean log loss per method, "
                                          "source and mode over the seeds, and write the full table. Finished rows "
                                          "are kept as they end, so running the command again resumes it.")
    p.add_argument("grid", metavar="GRID.toml", help="the grid file")
    p.add_argument("--out", metavar="PATH", help="write the full table here (.parquet or .csv)")
    p.add_argument("--parts", metavar="DIR",
                   help="folder of finished rows, for resuming (default: the grid's path, else OUT.parts)")
    p.add_argument("--n-jobs", type=_n_jobs, default=None, metavar="N",
                   help="run the tasks on N local worker processes (-1: one per core; default: in this process)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress on stderr (by default it shows once the study has taken a few seconds)")
    p.set_defaults(func=main)
    return p


def read_grid(path: str | os.PathLike):
    """``(grid, parts)`` from a grid file: the :class:`statespace.evaluation.study.Grid` and the file's
    ``path`` (resolved against the file's folder, or ``None``). ``CLIError`` naming what is wrong."""
    from statespace.evaluation.study import Grid

    file = Path(path)
    try:
        with open(file, "rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise CLIError(f"cannot read grid file {str(file)!r}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CLIError(f"grid file {str(file)!r} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - set(GRID_KEYS))
    if unknown:
        raise CLIError(f"grid file {str(file)!r}: unknown key{'s' if len(unknown) > 1 else ''} "
                       f"{', '.join(map(repr, unknown))}; the keys are {', '.join(GRID_KEYS)}")
    for key in ("methods", "sources"):
        if not isinstance(data.get(key), dict) or not data[key]:
            raise CLIError(f"grid file {str(file)!r} needs a [{key}] table naming at least one")
    base = file.resolve().parent
    sources = {}
    for name, source in data["sources"].items():
        if isinstance(source, dict) and isinstance(source.get("csv"), str):
            source = {**source, "csv": str(base / source["csv"])}  # relative to the grid file, not the shell
        elif isinstance(source, str) and source.startswith("csv:"):
            source = {"csv": str(base / source[len("csv:"):].strip())}
        sources[name] = source
    options = {k: data[k] for k in ("seeds", "modes", "split", "every", "tune", "tune_options") if k in data}
    try:
        grid = Grid(methods=data["methods"], sources=sources, **options)
    except (TypeError, ValueError) as exc:
        raise CLIError(f"grid file {str(file)!r}: {one_line(exc)}") from None
    parts = base / data["path"] if isinstance(data.get("path"), str) else None
    if "path" in data and parts is None:
        raise CLIError(f"grid file {str(file)!r}: path must be a folder name, got {data['path']!r}")
    return grid, parts


def _write(table, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".parquet":
        table.to_parquet(out, index=False)
    else:
        table.to_csv(out, index=False)


def main(args, out, err) -> int:
    """Run the grid; 0 when done (also with failed tasks, counted on ``err``), 2 (one line on
    ``err``) on a user error."""
    try:
        return _run(args, out, err)
    except CLIError as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=err)
        return 2


def _report_unusable(caught, err) -> None:
    """Row files that could not be used (their tasks ran again) as one ``warning:`` line; other
    warnings shown as Python shows them."""
    from statespace.evaluation.study import StudyWarning

    unusable = [str(w.message) for w in caught if issubclass(w.category, StudyWarning)]
    if unusable:
        more = f" ({len(unusable) - 1} more)" if len(unusable) > 1 else ""
        print(f"{PROG}: warning: {one_line(unusable[0])}{more}", file=err)
    for w in caught:
        if not issubclass(w.category, StudyWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _run(args, out, err) -> int:
    from statespace.evaluation.study import StudyWarning, study, summary

    target = Path(args.out) if args.out else None
    if target is not None and target.suffix.lower() not in OUT_SUFFIXES:
        raise CLIError(f"--out must end in .parquet or .csv, got {args.out!r}")
    grid, parts = read_grid(args.grid)
    if args.parts:
        parts = Path(args.parts)
    elif parts is None and target is not None:
        parts = target.with_name(target.name + ".parts")
    if parts is not None and parts.exists() and not parts.is_dir():
        raise CLIError(f"the parts folder {str(parts)!r} is a file; give a folder for the finished rows")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StudyWarning)
        try:
            table = study(grid, n_jobs=args.n_jobs, path=parts, progress=False if args.quiet else None)
        except KeyboardInterrupt:
            if parts is None:
                raise
            raise KeyboardInterrupt(f"the finished rows are in {parts}; run the same command again to resume") from None
        except cf.BrokenExecutor as exc:  # a worker lost: one line, not a traceback
            raise CLIError(str(exc)) from None
        finally:
            _report_unusable(caught, err)
    text = summary(table).to_string(index=False, float_format=lambda v: f"{v:.4f}", na_rep="-")
    print(text, file=out)
    failed = table[table["error"].notna()]
    if len(failed):
        first = failed.iloc[0]
        print(f"{PROG}: {len(failed)} of {len(table)} tasks failed (the table's error column); first: "
              f"{first['method']} on {first['source']} ({first['mode']}): {first['error']}", file=err)
    if target is not None:
        try:
            _write(table, target)
        except OSError as exc:
            raise CLIError(f"cannot write {str(target)!r}: {exc.strerror or exc}") from None
        print(f"wrote {len(table)} rows to {target}", file=out)
    return 0
