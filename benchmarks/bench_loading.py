"""Speed and memory of loading games: ``statespace.Games`` built from arrays and read from CSV files.

One stream of simulated games (``_common.make_stream``: random pairs among ``--players``
competitors, 45% wins, 10% draws, 45% losses) is loaded at each of ``--sizes`` (1,000,000 and
5,000,000 games by default) as

- ``from_arrays``, integer ids: ``Games.from_arrays(t, a, b, score)`` with NumPy arrays (numeric
  times, ids 0 .. players - 1);
- ``from_arrays``, categorical ids: the same games with ``pandas.Categorical`` ids named ``p0``,
  ``p1``, ...;
- ``from_arrays``, string ids: the same names as a NumPy object array of Python strings;
- ``from_csv``: a file ``time,a,b,score,neutral`` written once per size (dates ``YYYY-MM-DD``, about
  one day per 2,000 games, and a 0/1 ``neutral`` column), read by ``Games.from_csv`` as it runs
  (pyarrow's streaming CSV reader when pyarrow is installed) and, for comparison, with pandas' C
  engine only (the pyarrow path switched off: what a file with other columns, or without
  pyarrow, gets).

Each row gives the best of ``--repeats`` calls (wall clock and CPU time of the process, which
counts every thread: pyarrow's reader uses several) as games per second, and the peak memory of
one call beyond its input in bytes per game: the rise of the process's peak resident set
(Linux's ``VmHWM``, reset just before the call) over what it held just before, measured in a
fresh process per row (``--no-memory`` skips it). The input (the arrays, or the file) is
allocated before; everything the call allocates, kept or freed, counts. The speed goals' targets
are printed beside the figures: ``from_arrays`` >= 10 M games/s for integer and categorical ids,
``from_csv`` >= 2 M rows/s, and <= 64 bytes per game.

The numbers are printed and saved as JSON (``--json``, default
``benchmarks/results/loading.json``: the command, the machine, the versions and every row).

Usage::

    python benchmarks/bench_loading.py                    # 1M and 5M games: about 2 minutes
    python benchmarks/bench_loading.py --quick            # 20,000 games, a few seconds (smoke test)
    python benchmarks/bench_loading.py --sizes 1000000 --repeats 5 --no-memory
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from _common import cpu_name, load, make_stream, version_map

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "loading.json"
KINDS = ("from_arrays, integer ids", "from_arrays, categorical ids", "from_arrays, string ids",
         "from_csv (pyarrow reader)", "from_csv (C engine only)")
TARGETS = {KINDS[0]: 10e6, KINDS[1]: 10e6, KINDS[3]: 2e6}  # games per second (the speed goals)
TARGET_BYTES = 64
GAMES_PER_DAY = 2_000


# ---------------------------------------------------------------------------- inputs
def inputs(kind: str, n: int, players: int, seed: int, csv_path: str | None):
    """The call's arguments: ``(function, args)`` with the input already allocated."""
    from statespace import Games

    t, a, b, score = make_stream(n, players, seed)
    if kind == KINDS[0]:
        return Games.from_arrays, (t, a, b, score)
    names = np.array([f"p{i}" for i in range(players)], dtype=object)
    if kind == KINDS[1]:
        import pandas as pd

        return Games.from_arrays, (t, pd.Categorical.from_codes(a, names), pd.Categorical.from_codes(b, names), score)
    if kind == KINDS[2]:
        return Games.from_arrays, (t, names[a], names[b], score)
    del t, a, b, score
    if kind == KINDS[4]:
        import statespace.data.games as G

        G._PYARROW = False  # the C engine only: what from_csv does without pyarrow
    return Games.from_csv, (csv_path,)


def write_csv(path: str, n: int, players: int, seed: int) -> None:
    """The games as ``time,a,b,score,neutral`` with dates (``GAMES_PER_DAY`` games a day)."""
    import pandas as pd

    t, a, b, score = make_stream(n, players, seed)
    days = np.datetime64("2000-01-01") + (np.arange(n) // GAMES_PER_DAY).astype("timedelta64[D]")
    neutral = np.random.default_rng(seed + 1).integers(0, 2, n)
    pd.DataFrame({"time": days.astype(str), "a": a, "b": b, "score": score, "neutral": neutral}).to_csv(
        path, index=False)


# ---------------------------------------------------------------------------- measuring
def _status_kib(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _trim() -> None:
    """Return the C heap's free memory to the system (glibc's ``malloc_trim``), where there is one."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # pragma: no cover - not glibc
        pass


def peak_bytes_child(kind: str, n: int, players: int, seed: int, csv_path: str | None) -> dict:
    """In this (fresh) process: the peak resident memory one call adds to what the process
    held just before it (its input allocated, the packages imported and warmed up)."""
    fn, args = inputs(kind, n, players, seed, csv_path)
    if kind in KINDS[3:]:  # warm on the file's first 1,000 games: the one-off costs (pyarrow's thread pool, ...)
        small_path = csv_path + ".head.csv"
        with open(csv_path) as src, open(small_path, "w") as dst:
            dst.writelines(line for _, line in zip(range(1_001), src))
        small = (small_path,)
    else:
        small = inputs(kind, 1_000, players, seed, None)[1]
    fn(*small)  # (this call's size, not the measured one's: the pools it leaves cannot hide the measured peak)
    _trim()  # memory freed before the call goes back to the system: it cannot hide the call's own
    before = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:  # reset the peak (VmHWM) to the current size
        fh.write("5")
    games = fn(*args)
    peak = _status_kib("VmHWM")
    kept = _status_kib("VmRSS")
    assert len(games) == n
    return {"peak_bytes_per_game": (peak - before) * 1024 / n, "kept_bytes_per_game": (kept - before) * 1024 / n}


def peak_bytes(kind: str, n: int, args, csv_path: str | None) -> dict | None:
    """:func:`peak_bytes_child` in a fresh Python process (``None`` where Linux's ``/proc`` is not
    there to ask)."""
    if not os.path.exists("/proc/self/clear_refs"):
        return None
    cmd = [sys.executable, __file__, "--child", kind, str(n), str(args.players), str(args.seed), csv_path or ""]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
    if done.returncode != 0:
        print(f"  (memory of {kind} not measured: {done.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def timed_calls(fn, args, repeats: int) -> tuple[float, float]:
    """Best wall-clock and best process-CPU seconds of ``repeats`` calls."""
    wall = cpu = math.inf
    for _ in range(max(1, repeats)):
        w0, c0 = time.perf_counter(), time.process_time()
        fn(*args)
        c1, w1 = time.process_time(), time.perf_counter()
        wall, cpu = min(wall, w1 - w0), min(cpu, c1 - c0)
    return wall, cpu


# ---------------------------------------------------------------------------- the report
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default=None, help="comma-separated numbers of games (1000000,5000000; --quick 20000)")
    p.add_argument("--players", type=int, default=10_000, help="competitors (10,000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the stream (0)")
    p.add_argument("--repeats", type=int, default=None, help="timed calls, best reported (3; --quick 2)")
    p.add_argument("--memory", action=argparse.BooleanOptionalAction, default=True,
                   help="measure the peak memory of each row in a fresh process (default: on)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to save the numbers ({DEFAULT_JSON})")
    p.add_argument("--quick", action="store_true", help="20,000 games: a smoke test")
    p.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        kind, n, players, seed, csv_path = args.child
        print(json.dumps(peak_bytes_child(kind, int(n), int(players), int(seed), csv_path or None)))
        return 0
    sizes = [int(s) for s in (args.sizes or ("20000" if args.quick else "1000000,5000000")).split(",")]
    repeats = args.repeats or (2 if args.quick else 3)
    if min(sizes) < 2 or args.players < 2:
        p.error("need at least 2 games and 2 competitors")

    t0 = time.perf_counter()
    import statespace
    import statespace.data.games as G

    print(f"bench_loading: Games.from_arrays and Games.from_csv at {', '.join(f'{n:,}' for n in sizes)} games "
          f"among {args.players:,} competitors (seed {args.seed})")
    print(f"machine: {cpu_name()}, {os.cpu_count()} logical cores, {load()}; pyarrow "
          f"{'installed' if G._have_pyarrow() else 'NOT installed (from_csv uses the C engine)'}")
    print(f"versions: {', '.join(f'{k} {v}' for k, v in version_map('numpy', 'pandas', peers=('pyarrow',)).items())}")
    print(f"import statespace.data.games: {time.perf_counter() - t0:.2f} s (loading games needs neither numba nor the "
          "methods)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_loading_") as tmp:
        for n in sizes:
            csv_path = os.path.join(tmp, f"games_{n}.csv")
            w0 = time.perf_counter()
            write_csv(csv_path, n, args.players, args.seed)
            print(f"\n{n:,} games (CSV written in {time.perf_counter() - w0:.1f} s, "
                  f"{os.path.getsize(csv_path) / 1e6:.0f} MB)", flush=True)
            for kind in KINDS:
                fn, call_args = inputs(kind, n, args.players, args.seed, csv_path)
                try:
                    fn(*call_args)  # warm-up
                    wall, cpu = timed_calls(fn, call_args, repeats)
                finally:
                    G._PYARROW = None
                del call_args
                mem = peak_bytes(kind, n, args, csv_path if kind in KINDS[3:] else None) if args.memory else None
                row = {"kind": kind, "games": n, "wall_s": wall, "cpu_s": cpu, "games_per_s": n / wall,
                       "cpu_games_per_s": n / cpu, **(mem or {})}
                target = TARGETS.get(kind)
                if target is not None:
                    row["target_games_per_s"] = target
                rows.append(row)
                peak = f"{mem['peak_bytes_per_game']:6.1f} B/game peak" if mem else ""
                met = "" if target is None else ("  (target met)" if n / cpu >= target else "  (BELOW TARGET on CPU)")
                print(f"  {kind:30s} {wall:7.3f} s wall {n / wall / 1e6:7.2f} M/s | {cpu:7.3f} s CPU "
                      f"{n / cpu / 1e6:7.2f} M/s | {peak}{met}", flush=True)
    print(f"\npeak memory target (speed goal): <= {TARGET_BYTES} bytes per game beyond the input; "
          "CPU time counts every thread of the process")
    result = {"command": "python benchmarks/bench_loading.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip(),
              "machine": {"cpu": cpu_name(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
                          "load_average_end": list(os.getloadavg())},
              "versions": {**version_map("numpy", "pandas", peers=("pyarrow",)), "pyarrow_installed": G._have_pyarrow(),
                           "statespace": statespace.__version__},
              "players": args.players, "seed": args.seed, "repeats": repeats, "games_per_day_in_csv": GAMES_PER_DAY,
              "target_bytes_per_game": TARGET_BYTES, "rows": rows}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"saved: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
