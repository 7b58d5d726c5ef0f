"""Many settings in one compiled pass: the batched grid against one run, and tune's grid start.

Default mode, on international football (``statespace.datasets.load("intl_football")``, shipped):

- one ``Elo().run(games)``: best of ``--repeats`` after a warm-up run;
- ``Elo().grid(games, k=np.linspace(5, 80, --settings))`` (1,000 settings, through the lanes of
  :mod:`filters._lanes`): best of ``--grid-repeats`` after a warm-up call (so compiling is not
  timed), Python-side preparation (building the 1,000 methods) included;
- ``filters.grid.evaluate`` of the same methods built beforehand, through the lanes and through the
  batched loops of before (``lanes=False``);
- the ratios to one run, the target being grid / run < 20 on 2 cores, numba's thread count
  and the load average (``os.getloadavg``) when the script started.

``--tune``: for each filter (Elo, Glicko, Glicko2, TrueSkill, WengLin, EKF) and each shared data
set found under DATA_ROOT (``intl_football``, ``nfl``, ``england_football``, ``atp_tennis``;
``--datasets`` picks some), the final training objective of ``tune(start="current")`` (the old
start: the method's current settings) and ``tune(start="grid")`` (the best of a coarse batched grid),
both without standard errors, and their difference (grid minus current: <= 0 means the grid start
reached a loss at least as low).

Printed as Markdown and written to ``benchmarks/results/bench_grid-<date>[-tune].md`` (``--out -``:
none). Usage::

    python benchmarks/bench_grid.py                       # the timing
    python benchmarks/bench_grid.py --tune [DATA_ROOT]    # default ../shared/data
"""

from __future__ import annotations

import argparse
import datetime
import io
import os
import sys
import time
import warnings
from pathlib import Path

import numba
import numpy as np
from _common import load_shared

import statespace as ss
from filters import EKF, Elo, Glicko, Glicko2, TrueSkill, WengLin

HERE = Path(__file__).resolve().parent
DATASETS = ("intl_football", "nfl", "england_football", "atp_tennis")
FILTERS = {"Elo": Elo, "Glicko": Glicko, "Glicko2": Glicko2, "TrueSkill": TrueSkill, "WengLin": WengLin,
           "EKF": EKF}


def best_of(fn, repeats: int) -> float:
    """Shortest wall time of ``repeats`` calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def timing(args, out) -> None:
    from filters import _lanes
    from filters.grid import evaluate

    games = ss.datasets.load("intl_football")
    elo = Elo()
    ks = np.linspace(5, 80, args.settings)
    elo.run(games)  # warm-up: compile or load from the cache
    run = best_of(lambda: elo.run(games), args.repeats)
    methods = [elo.with_params(k=k) for k in ks]
    t = time.perf_counter()
    elo.grid(games, k=ks[:2])  # warm-up of the lanes loop
    evaluate(methods[:2], games, lanes=False)  # and of the batched loop
    warm = time.perf_counter() - t
    grid = best_of(lambda: elo.grid(games, k=ks), args.grid_repeats)
    lanes = best_of(lambda: evaluate(methods, games), args.grid_repeats)
    old = best_of(lambda: evaluate(methods, games, lanes=False), max(1, args.grid_repeats // 2))
    df = elo.grid(games, k=ks)
    pairs = len(games) * args.settings
    threads = numba.get_num_threads()
    print(f"## Batched grid: {args.settings:,} Elo settings on international football\n", file=out)
    print(f"{len(games):,} games, {games.n_players} teams; numba threads {threads} "
          f"(layer {numba.threading_layer()}), {datetime.datetime.now():%Y-%m-%d %H:%M}; load average before "
          f"{args.load:.2f}; lanes {_lanes.lane_width(args.settings, threads)} settings a block\n", file=out)
    print("| what | seconds | / one run |\n|---|---:|---:|", file=out)
    print(f"| one `Elo().run(games)` (best of {args.repeats}) | {run:.5f} | 1 |", file=out)
    print(f"| `Elo().grid(games, k=<{args.settings:,} values>)`, lanes (best of {args.grid_repeats}) | {grid:.4f} | "
          f"**{grid / run:.0f}** |", file=out)
    print(f"| `filters.grid.evaluate` of the {args.settings:,} methods built beforehand, lanes | {lanes:.4f} | "
          f"{lanes / run:.0f} |", file=out)
    print(f"| the same, the batched loops of before (`lanes=False`) | {old:.4f} | {old / run:.0f} |", file=out)
    print(f"| first calls (compile or cache load) | {warm:.2f} | |", file=out)
    print(f"\nratio grid / run: **{grid / run:.0f}** (target < 20); the lanes against the batched loops: "
          f"{old / lanes:.1f}x; {lanes / pairs * threads * 1e9:.2f} ns a (game, setting) a thread in `evaluate`, "
          f"{run / len(games) * 1e9:.1f} ns a game in one run", file=out)
    best = df.loc[df["log_loss"].idxmin()]
    print(f"\nbest k {best['k']:.2f}: log loss {best['log_loss']:.5f}, brier {best['brier']:.5f}", file=out)


def tune_mode(args, out) -> None:
    print("## tune: start='current' (old) against start='grid' (new), final training objective\n", file=out)
    print("| data set | games | filter | objective | current | grid | grid - current | seconds current | "
          "seconds grid |\n|---|---:|---|---|---:|---:|---:|---:|---:|", file=out)
    for name in args.datasets:
        games = load_shared(args.root, name)
        if games is None:
            continue
        for label, cls in FILTERS.items():
            res = {}
            for start in ("current", "grid"):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    tuned = cls().tune(games, standard_errors=False, start=start)
                    res[start] = (tuned.tuning, time.perf_counter() - t)
            cur, grid = res["current"][0], res["grid"][0]
            print(f"| {name} | {len(games):,} | {label} | {cur.objective_name} | {cur.objective:.6f} | "
                  f"{grid.objective:.6f} | {grid.objective - cur.objective:+.1e} | {res['current'][1]:.1f} | "
                  f"{res['grid'][1]:.1f} |", file=out, flush=True)
            out.flush()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=str(HERE.parent.parent / "shared" / "data"),
                    help="shared data folder (--tune; default ../shared/data)")
    ap.add_argument("--tune", action="store_true", help="compare tune's starts instead of timing the grid")
    ap.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    ap.add_argument("--settings", type=int, default=1000, help="Elo settings in the timed grid (1,000)")
    ap.add_argument("--repeats", type=int, default=20, help="timed runs, best reported (20)")
    ap.add_argument("--grid-repeats", type=int, default=5, help="timed grids, best reported (5)")
    ap.add_argument("--out", default=None, help="Markdown file ('-': none; default benchmarks/results/...)")
    args = ap.parse_args(argv)
    args.load = os.getloadavg()[0]

    class Tee(io.StringIO):
        def write(self, s):
            sys.stdout.write(s)
            sys.stdout.flush()
            return super().write(s)

    out = Tee()
    (tune_mode if args.tune else timing)(args, out)
    if args.out != "-":
        path = Path(args.out) if args.out else (
            HERE / "results" / f"bench_grid-{datetime.date.today():%Y-%m-%d}{'-tune' if args.tune else ''}.md")
        stem = path.stem
        n = 2
        while args.out is None and path.exists():  # a second run on the same day keeps the first's file
            path = path.with_name(f"{stem}-{n}.md")
            n += 1
        path.write_text(out.getvalue())
        print(f"\nwritten to {path}")


if __name__ == "__main__":
    main()
