"""Two versions of the package side by side: each filter's games per second now and at an earlier
commit, measured in alternation so that both see the same machine.

The earlier commit is checked out into a temporary git worktree; two worker processes (one per
version, each importing its own tree) build the same stream (``--games`` random pairs among
``--players`` competitors, no rating periods, one game per time step) and warm up; then the
driver asks them in turn, ``--rounds`` times, to run each filter once and reports the best and
the median CPU time of each. On a machine whose speed drifts (a shared or throttled virtual
machine) this paired, interleaved measurement is the fair comparison; the absolute figures of
``peers.py`` taken minutes apart are not.

Usage::

    python benchmarks/ab_versions.py --old 6c5d09d            # the commit before the site rewrite
    python benchmarks/ab_versions.py --old HEAD~3 --rounds 20 --filters Elo,EKF
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILTERS = ("Elo", "Glicko", "Glicko2", "TrueSkill", "WengLin", "EKF")

WORKER = """
import sys, time
import numpy as np
import statespace as ss
import filters
n, players = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
a = rng.integers(0, players, n)
b = (a + 1 + rng.integers(0, players - 1, n)) % players
games = ss.Games.from_arrays(np.arange(n, dtype=float), a.astype(str), b.astype(str),
                             rng.choice([0.0, 0.5, 1.0], n))
methods = {name: getattr(filters, name)() for name in sys.argv[3].split(",")}
for m in methods.values():
    m.run(games)
print("ready", flush=True)
for line in sys.stdin:
    t = time.process_time()
    methods[line.strip()].run(games)
    print(time.process_time() - t, flush=True)
"""


def worker(tree: Path, n: int, players: int, names: list[str]) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.Popen([sys.executable, "-c", WORKER, str(n), str(players), ",".join(names)], cwd=tree, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        raise SystemExit(f"the worker of {tree} did not start")
    return p


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the earlier commit (any git revision)")
    ap.add_argument("--games", type=int, default=1_000_000)
    ap.add_argument("--players", type=int, default=1_000)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--filters", default=",".join(FILTERS), help=f"comma-separated, from {', '.join(FILTERS)}")
    args = ap.parse_args(argv)
    names = [f.strip() for f in args.filters.split(",") if f.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        old_tree = Path(tmp) / "old"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(old_tree), args.old],
                       check=True, capture_output=True)
        try:
            procs = {"old": worker(old_tree, args.games, args.players, names),
                     "new": worker(ROOT, args.games, args.players, names)}
            times: dict[tuple[str, str], list[float]] = {}
            for _ in range(args.rounds):
                for name in names:
                    for tag, p in procs.items():
                        p.stdin.write(name + "\n")
                        p.stdin.flush()
                        times.setdefault((name, tag), []).append(float(p.stdout.readline()))
            for p in procs.values():
                p.stdin.close()
                p.wait()
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old_tree)],
                           capture_output=True)
    n = args.games
    print(f"{n:,} games among {args.players:,} competitors, no rating periods; {args.rounds} alternating rounds; "
          f"M games per CPU second (old = {args.old})\n")
    print("| filter | old best | new best | new / old | old median | new median | new / old |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        o, w = times[(name, "old")], times[(name, "new")]
        bo, bw, mo, mw = min(o), min(w), statistics.median(o), statistics.median(w)
        print(f"| {name} | {n / bo / 1e6:.2f} | {n / bw / 1e6:.2f} | {bo / bw:.2f} | {n / mo / 1e6:.2f} | "
              f"{n / mw / 1e6:.2f} | {mo / mw:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
