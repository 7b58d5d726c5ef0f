"""Walk-forward smoothing on real data: the forward–backward smoothers against the Laplace smoother.

Issue 15's goal: walk-forward with a forward–backward smoother, the NFL with weekly refits and
England with monthly refits, each under 20 s on this machine, at a log loss no worse than the
Laplace smoother's walk-forward. For each data set (``nfl`` with ``every="week"``,
``england_football`` with ``every="month"``; from the shared data folder through
``statespace.datasets``, skipped when absent) the last 10% of the games are forecast block by
block, each method refitted (warm-started where it can) on every game before the block:
``statespace.compare([...], games, split=0.9, mode="walk_forward", every=...)``.

Methods, each with its defaults (nothing tuned, so the comparison is of the inference, not of
settings): ``smoothers.RTSSmoother()`` (the EKF's default model forward, RTS back),
``smoothers.TrueSkillThroughTime()`` and ``smoothers.LaplaceSmoother()`` (the reference). Printed:
wall seconds of the whole walk-forward, held-out log loss, and each method's log loss minus the
Laplace smoother's with its paired standard error. ``--methods`` chooses a subset; a full run
writes the table, dated, to ``benchmarks/results/walk_forward-<date>.md``.

Usage::

    python benchmarks/bench_walk_forward.py
    python benchmarks/bench_walk_forward.py --sets nfl --methods rts laplace
"""

from __future__ import annotations

import argparse
import time
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

import smoothers
import statespace as ss
from statespace import datasets, metrics

HERE = Path(__file__).resolve().parent
DATA = HERE.parents[1] / "shared" / "data"
SETS = {"nfl": "week", "england_football": "month"}
METHODS = {"rts": smoothers.RTSSmoother, "ttt": smoothers.TrueSkillThroughTime,
           "laplace": smoothers.LaplaceSmoother}
GOAL_SECONDS = 20.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", nargs="+", default=list(SETS), choices=list(SETS))
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = p.parse_args(argv)
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"# Walk-forward smoothing, {date}", "",
             "`python benchmarks/bench_walk_forward.py` " + " ".join(argv or []), "",
             "| data set | every | method | seconds | goal < 20 s | log loss | − Laplace ± paired se |",
             "|---|---|---|--:|---|--:|--:|"]
    for name in args.sets:
        try:
            games = datasets.load(name, args.data)
        except datasets.DatasetNotFound as exc:
            print(f"{name}: skipped ({exc})")
            continue
        every = SETS[name]
        losses, rows = {}, []
        for key in args.methods:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                table = ss.compare({key: METHODS[key]()}, games, split=0.9, mode="walk_forward", every=every)
                seconds = time.perf_counter() - t0
            proba = table.attrs["proba"][key]
            losses[key] = metrics.log_loss(table.attrs["test"].score, proba, per_game=True)
            rows.append((key, seconds, float(np.mean(losses[key]))))
            print(f"{name} ({len(games):,} games, every {every}): {key} {seconds:.1f} s, log loss {rows[-1][2]:.4f}",
                  flush=True)
        for key, seconds, loss in rows:
            if "laplace" in losses and key != "laplace":
                d, se = metrics.paired_difference(losses[key], losses["laplace"])
                delta = f"{d:+.4f} ± {se:.4f}"
            else:
                delta = "—"
            met = "met" if seconds < GOAL_SECONDS else "**NOT met**"
            lines.append(f"| {name} | {every} | {key} | {seconds:.1f} | {met} | {loss:.4f} | {delta} |")
    report = "\n".join(lines)
    print("\n" + report)
    if args.sets == list(SETS) and args.methods == list(METHODS):
        out = HERE / "results" / f"walk_forward-{date[:10]}.md"
        out.write_text(report + "\n")
        print(f"saved: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
