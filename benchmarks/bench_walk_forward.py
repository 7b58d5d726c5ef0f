"""Walk-forward smoothing on real data: the forward–backward smoothers against the Laplace smoother.

The goal: walk-forward with a forward–backward smoother, the NFL with weekly refits and
England with monthly refits, each under 20 s on this machine, at a log loss no worse than the
Laplace smoother's walk-forward. For each data set (``nfl`` with ``every="week"``,
``england_football`` with ``every="month"``; from the shared data folder through
``statespace.datasets``, skipped when absent) the last 10% of the games are forecast block by
block, each method refitted (warm-started where it can) on every game before the block:
``statespace.compare([...], games, split=0.9, mode="walk_forward", every=...)``.

Methods, each with its defaults (nothing tuned, so the comparison is of the inference, not of
settings): ``smoothers.RTSSmoother()`` (the EKF's default model forward, RTS back),
``smoothers.TrueSkillThroughTime()`` (incremental refits) and ``smoothers.LaplaceSmoother()`` (the
reference); on request (``--methods``) also ``ttt-full``, ``TrueSkillThroughTime(incremental=False)``,
whose refits sweep the whole history (what ``ttt`` did before its refits were incremental).

Before the timed run, each method runs the same walk-forward on the data set's first 3,000 games,
so that its compiled loops are compiled (or loaded from numba's cache, which any change to the
packages' sources empties) outside the timing; that warm-up's seconds are printed too. Printed per
method: wall and CPU seconds of the whole walk-forward, held-out log loss, and its log loss minus
the Laplace smoother's with the paired standard error; with the load average before and after
(the machine has other jobs at times). A run of every data set with the default methods writes the
table, dated, to ``benchmarks/results/walk_forward-<date>.md``; ``--out`` writes any run's table.

Usage::

    python benchmarks/bench_walk_forward.py
    python benchmarks/bench_walk_forward.py --sets nfl --methods rts laplace
    python benchmarks/bench_walk_forward.py --methods ttt ttt-full --out benchmarks/results/x.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import smoothers
import statespace as ss
from statespace.data import datasets
from statespace.model import metrics

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
SETS = {"nfl": "week", "england_football": "month"}
METHODS = {"rts": smoothers.RTSSmoother, "ttt": smoothers.TrueSkillThroughTime,
           "laplace": smoothers.LaplaceSmoother,
           "ttt-full": lambda: smoothers.TrueSkillThroughTime(incremental=False)}
DEFAULT_METHODS = ["rts", "ttt", "laplace"]
GOAL_SECONDS = 20.0
#: games of the untimed warm-up walk-forward (the first, in time order)
WARM_UP_GAMES = 3000


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def walk_forward(key: str, games, every: str):
    """``statespace.compare`` of one method, walk-forward; the table, wall and CPU seconds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        table = ss.compare({key: METHODS[key]()}, games, split=0.9, mode="walk_forward", every=every)
        return table, time.perf_counter() - t0, time.process_time() - c0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    p.add_argument("--methods", nargs="+", default=DEFAULT_METHODS, choices=list(METHODS))
    p.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    p.add_argument("--out", type=Path, default=None, help="write the table here")
    args = p.parse_args(argv)
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    command = " ".join(["python benchmarks/bench_walk_forward.py", *(argv if argv is not None else sys.argv[1:])])
    lines = [f"# Walk-forward smoothing, {date}", "", f"`{command}`", "",
             f"{os.cpu_count()} cores; load average (1, 5, 15 min) at the start: {load()}.", "",
             "| data set | every | method | seconds | CPU s | warm-up s | goal < 20 s | log loss | "
             "− Laplace ± paired se |",
             "|---|---|---|--:|--:|--:|---|--:|--:|"]
    for name in args.sets:
        try:
            games = datasets.load(name, args.data)
        except datasets.DatasetNotFound as exc:
            print(f"{name}: skipped ({exc})")
            continue
        every = SETS[name]
        losses, rows = {}, []
        for key in args.methods:
            warm_up = walk_forward(key, games.take(games.order[:WARM_UP_GAMES]), every)[1]
            table, seconds, cpu = walk_forward(key, games, every)
            proba = table.attrs["proba"][key]
            losses[key] = metrics.log_loss(table.attrs["test"].score, proba, per_game=True)
            rows.append((key, seconds, cpu, warm_up, float(np.mean(losses[key]))))
            print(f"{name} ({len(games):,} games, every {every}): {key} {seconds:.1f} s (CPU {cpu:.1f} s; warm-up "
                  f"{warm_up:.1f} s), log loss {rows[-1][-1]:.6f}; load {load()}", flush=True)
        for key, seconds, cpu, warm_up, loss in rows:
            if "laplace" in losses and key != "laplace":
                d, se = metrics.paired_difference(losses[key], losses["laplace"])
                delta = f"{d:+.4f} ± {se:.4f}"
            else:
                delta = "—"
            met = "met" if seconds < GOAL_SECONDS else "**NOT met**"
            lines.append(f"| {name} | {every} | {key} | {seconds:.1f} | {cpu:.1f} | {warm_up:.1f} | {met} | "
                         f"{loss:.6f} | {delta} |")
    lines += ["", f"Load average at the end: {load()}."]
    report = "\n".join(lines)
    print("\n" + report)
    out = args.out
    if out is None and args.sets == list(SETS) and args.methods == DEFAULT_METHODS:
        out = HERE / "results" / f"walk_forward-{date[:10]}.md"
    if out is not None:
        out.write_text(report + "\n")
        print(f"saved: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
