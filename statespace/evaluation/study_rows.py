"""A study's rows on disk and in its table (:func:`statespace.evaluation.study.study`'s ``path``).

Each finished task's row is ``folder/<task>.json``, written whole or not at all. A row read back
is used only when it is one the study itself could have written for that task: a JSON object
whose key columns (task id, method, source, seed, mode) are the task's, whose score and timing
columns are numbers (or missing values) and whose ``tuned`` and ``error`` are text or null. Any
other file (edited by hand, cut short by a full disk, written by another program) is reported
with what is wrong and its task runs again, rewriting it; it never stops the study.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Iterable

#: the columns that say which task a row is
KEY_COLUMNS = ("task", "method", "source", "seed", "mode")
#: compare's score columns a row carries (the last two only where some row has them)
SCORE_COLUMNS = ("n_test", "log_loss", "brier", "accuracy", "accuracy_50", "log_loss_3", "score_log_density",
                 "margin_rmse")
TAIL = ("fit_seconds", "tune_seconds", "tuned", "error")
#: the columns every row has (a failed task's with missing scores)
REQUIRED = SCORE_COLUMNS[:6] + TAIL
_TEXT = ("tuned", "error")


def key_row(task) -> dict:
    """The key columns of a task's row."""
    return {"task": task.id, "method": task.method_name, "source": task.source_name, "seed": task.seed,
            "mode": task.mode}


def _number(value) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def check_row(row, task) -> str | None:
    """What is wrong with ``row`` as the row of ``task`` (see the module docstring), or ``None``."""
    if not isinstance(row, dict):
        return f"it holds a JSON {type(row).__name__}, not an object"
    for column, value in key_row(task).items():
        if column not in row:
            return f"it has no {column!r}"
        if row[column] != value or type(row[column]) is bool:
            return f"{column!r} is {row[column]!r}, not this task's {value!r}"
    missing = [c for c in REQUIRED if c not in row]
    if missing:
        return f"it has no {', '.join(map(repr, missing))}"
    for column, value in row.items():
        if column in KEY_COLUMNS:
            continue
        if column in _TEXT:
            if value is not None and not isinstance(value, str):
                return f"{column!r} is {value!r}, not text or null"
        elif not _number(value):
            return f"{column!r} is {value!r}, not a number"
        elif column == "n_test" and value is not None and not math.isnan(value) and not (
                value >= 0 and float(value).is_integer()):
            return f"'n_test' is {value!r}, not a whole number >= 0"
    return None


def write_row(folder: Path, row: dict) -> None:
    """``folder/<task>.json``, whole or absent: written to a temporary file in the folder and
    renamed over the target (:func:`os.replace` is atomic on one file system)."""
    text = json.dumps(row, allow_nan=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{row['task']}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, folder / f"{row['task']}.json")
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_rows(folder: Path, tasks: Iterable) -> tuple[dict[str, dict], dict[str, str]]:
    """``(rows, unusable)``: the rows in ``folder`` of ``tasks`` (by id), and for each task whose
    file is there but cannot be used (unreadable, not JSON, not a row of the task: see
    :func:`check_row`), ``{task id: "FILE: what is wrong"}``. Such a task runs again."""
    rows, unusable = {}, {}
    for task in tasks:
        file = folder / f"{task.id}.json"
        try:
            row = json.loads(file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except OSError as exc:
            unusable[task.id] = f"{file}: cannot be read ({exc.strerror or exc})"
            continue
        except ValueError as exc:  # not UTF-8, or not JSON
            unusable[task.id] = f"{file}: not a JSON row ({str(exc).splitlines()[0]})"
            continue
        wrong = check_row(row, task)
        if wrong is None:
            rows[task.id] = row
        else:
            unusable[task.id] = f"{file}: {wrong}"
    return rows, unusable


def table(rows: list[dict]):
    """The study's DataFrame from its rows in task order, with fixed column order and dtypes (so
    a resumed table equals a fresh one)."""
    import pandas as pd

    present = {c for r in rows for c in r}
    columns = (list(KEY_COLUMNS) + [c for c in SCORE_COLUMNS if c in present]
               + sorted(present - set(KEY_COLUMNS) - set(SCORE_COLUMNS) - set(TAIL)) + list(TAIL))
    def whole(value):  # a whole number, or None for a missing one (None or NaN)
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else int(value)

    out = pd.DataFrame([{c: r.get(c) for c in columns} for r in rows], columns=columns)
    # from the rows, not the frame's columns, where a missing value would have made the numbers floats
    out["seed"] = pd.array([whole(r.get("seed")) for r in rows], dtype="Int64")
    out["n_test"] = pd.array([whole(r.get("n_test")) for r in rows], dtype="Int64")
    for c in columns:
        if c not in ("task", "method", "source", "seed", "mode", "n_test", "tuned", "error"):
            out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    for c in ("tuned", "error"):
        out[c] = out[c].astype(object).where(out[c].notna(), None)
    return out
