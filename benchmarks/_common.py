"""What the speed benchmarks share: the command line, the simulated stream, the clocks, the
games-per-second table and the breakdown of a run into Python-side preparation and compiled loop.

Used by ``bench_elo.py``, ``bench_glicko.py``, ``bench_trueskill.py``, ``bench_ekf.py``, (the
clock and the version line) ``bench_smoothers.py`` and ``peers.py`` (which imports the peers of the
other scripts); each script keeps its own peers, checks and report, and runs as
``python benchmarks/<script>.py`` (its folder is then on ``sys.path``).
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import platform
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable

import numpy as np

# The speed benchmarks time compiled code: on a cold cache small work would otherwise run as plain
# Python until compiling pays (statespace._runtime.tier), and a warm-up call would not warm. A
# script that measures that rule (first_run.py) sets STATESPACE_JIT for its children itself.
os.environ.setdefault("STATESPACE_JIT", "always")

START = datetime(2024, 1, 1)  # first game of a dated stream
EPOCH_SECONDS = int((START - datetime(1970, 1, 1)).total_seconds())


# ---------------------------------------------------------------------------- the command line
class BenchParser(argparse.ArgumentParser):
    """The command line of a benchmark over one simulated stream.

    It starts with ``--games``, ``--players``, ``--seed`` and ``--repeats``; the script adds its
    own options in the order they should appear in ``--help``. Sizes (:meth:`add_size`) and
    switches (:meth:`add_quick_off`) default by ``--quick``; :meth:`parse_args` fills them in, so
    every size in the returned namespace is a number (a slice of the stream at most ``--games``)
    and every switch a bool, and it rejects fewer than 2 games or competitors and ``--days <= 0``.
    """

    def __init__(self, doc: str):
        super().__init__(description=doc.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
        self._sizes: dict[str, tuple[int, int, bool]] = {}
        self._quick_off: list[str] = []
        self.add_size("--games", "games in the stream", 1_000_000, 20_000, slice_of_stream=False)
        self.add_size("--players", "competitors", 1_000, 200, slice_of_stream=False)
        self.add_argument("--seed", type=int, default=0, help="seed of the stream (0)")
        self.add_size("--repeats", "timed repeats, best reported", 5, 2, slice_of_stream=False)

    def add_size(self, flag: str, what: str, full: int, quick: int, *, slice_of_stream: bool = True) -> None:
        """A whole-number option, ``full`` by default and ``quick`` with ``--quick``; the help
        reads ``what (full; --quick quick)``. ``slice_of_stream``: it counts games taken from
        the start of the stream, so it is capped at ``--games``."""
        action = self.add_argument(flag, type=int, default=None, help=f"{what} ({full:,}; --quick {quick:,})")
        self._sizes[action.dest] = (full, quick, slice_of_stream)

    def set_size(self, dest: str, full: int, quick: int) -> None:
        """Other defaults for a size already added (e.g. ``"games"``): ``full``, and ``quick`` with
        ``--quick``."""
        self._sizes[dest] = (full, quick, self._sizes[dest][2])
        for action in self._actions:
            if action.dest == dest:
                action.help = action.help.rsplit("(", 1)[0] + f"({full:,}; --quick {quick:,})"

    def add_days(self, help: str) -> None:
        """``--days``: the span of the dated games in days (730 by default; must be > 0)."""
        self.add_argument("--days", type=float, default=730.0, help=help)

    def add_quick_off(self, flag: str, what: str) -> None:
        """An on/off option (``--x`` / ``--no-x``) that is on unless ``--quick``."""
        action = self.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                                   help=f"{what} (default: on, off with --quick)")
        self._quick_off.append(action.dest)

    def add_quick(self) -> None:
        """``--quick``: the small sizes of a smoke test."""
        self.add_argument("--quick", action="store_true", help="small sizes for a smoke test")

    def parse_args(self, args=None, namespace=None):
        ns = super().parse_args(args, namespace)
        quick = bool(getattr(ns, "quick", False))
        for dest, (full, small, _) in self._sizes.items():
            if getattr(ns, dest) is None:
                setattr(ns, dest, small if quick else full)
        for dest, (_, _, slice_of_stream) in self._sizes.items():
            if slice_of_stream:
                setattr(ns, dest, min(ns.games, getattr(ns, dest)))
        for dest in self._quick_off:
            if getattr(ns, dest) is None:
                setattr(ns, dest, not quick)
        if ns.games < 2 or ns.players < 2:
            self.error("need at least 2 games and 2 competitors")
        if hasattr(ns, "days") and not ns.days > 0:
            self.error("--days must be > 0")
        return ns


# ---------------------------------------------------------------------------- the stream
def make_stream(n_games: int, n_players: int, seed: int):
    """Random pairs (never a competitor against itself) and random results (45% wins, 10% draws,
    45% losses), as NumPy arrays ``(t, a, b, score)`` with numeric times, one game per step."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_games)
    b = (a + rng.integers(1, n_players, n_games)) % n_players
    score = rng.choice(np.array([1.0, 0.5, 0.0]), size=n_games, p=[0.45, 0.10, 0.45])
    t = np.arange(n_games, dtype=np.float64)  # numeric times: one game per time step
    return t, a, b, score


def draw_stream(n_games: int, n_players: int, seed: int, note: str = ""):
    """:func:`make_stream`, printing how long NumPy took (``note`` is appended to the line)."""
    t0 = time.perf_counter()
    stream = make_stream(n_games, n_players, seed)
    print(f"stream drawn with NumPy in {time.perf_counter() - t0:.3f} s{note}")
    return stream


def dated_seconds(n_games: int, days: float) -> np.ndarray:
    """Whole seconds since 1970 of games spread evenly over ``days`` days from 2024-01-01."""
    span = int(round(days * 86_400))
    return EPOCH_SECONDS + (np.arange(n_games, dtype=np.int64) * span) // max(1, n_games)


def build_games(t, a, b, score):
    """``statespace.Games`` of the arrays (validation, names, time order)."""
    from statespace import Games
    return Games.from_arrays(t, a, b, score)


def final_states(fitted) -> dict:
    """Final state of a filter run as {player id: tuple of its state row} (competitors who
    played; ids are the stream's integers)."""
    st = fitted.state
    played = st.count > 0
    return {int(p): tuple(float(v) for v in row) for p, row in zip(st.players[played], st.values[played])}


# ---------------------------------------------------------------------------- the machine
def cpu_name() -> str:
    """The processor's model name (Linux), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def load() -> str:
    """``load average 1.00 0.80 0.70``, or ``load average unknown``."""
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        return "load average unknown"


def version_map(*modules: str, peers: tuple[str, ...] = ()) -> dict[str, str | None]:
    """{name: version}: ``python``, then each of ``modules`` (imported, in the order given), then
    the installed version of each peer package (``None`` when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {"python": platform.python_version()}
    out.update({name: importlib.import_module(name).__version__ for name in modules})
    for pkg in peers:
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:  # pragma: no cover - test-only dependency missing
            out[pkg] = None
    return out


def versions(*modules: str, peers: tuple[str, ...] = ()) -> str:
    """``python X, numpy Y, ...``: :func:`version_map` as one line (``name not installed`` for a
    missing peer)."""
    return ", ".join(f"{name} {v if v is not None else 'not installed'}"
                     for name, v in version_map(*modules, peers=peers).items())


def print_header(title: str, versions_line: str, machine_note: str = "") -> None:
    """The first lines of every speed benchmark: the title, the machine (one core used by the
    serial compiled loop) and the versions."""
    import numba

    print(title)
    print(f"machine: {cpu_name()}, {os.cpu_count()} logical cores; one core used "
          f"(serial loop; NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS} unused){machine_note}")
    print(f"versions: {versions_line}")


def import_packages() -> None:
    """Import ``statespace`` and ``filters``, printing how long it took."""
    t0 = time.perf_counter()
    import filters  # noqa: F401
    import statespace  # noqa: F401
    print(f"import statespace + filters: {time.perf_counter() - t0:.2f} s")


def warm_up(label: str, runs, file=None) -> None:
    """Call each of ``runs`` once (numba loads its cache or compiles) and print
    ``label (numba cache load or compilation, excluded below): seconds`` (to ``file``: stdout
    by default)."""
    t0 = time.perf_counter()
    for run in runs:
        run()
    print(f"{label} (numba cache load or compilation, excluded below): {time.perf_counter() - t0:.2f} s", file=file)


# ---------------------------------------------------------------------------- clocks
def best_of(fn: Callable[[], Any], repeats: int):
    """(best wall-clock seconds, last result) over ``repeats`` calls."""
    best, result = math.inf, None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def timed(fn: Callable[[], Any], repeats: int):
    """(best wall-clock seconds, best CPU seconds of this thread, last result) over ``repeats``
    calls. The CPU time leaves out the time other processes held the core (it still includes
    their effect on shared caches and a hyperthread sibling), so on a busy machine it is the
    steadier of the two."""
    wall, cpu, result = math.inf, math.inf, None
    for _ in range(max(1, repeats)):
        w0, c0 = time.perf_counter(), time.thread_time()
        result = fn()
        c1, w1 = time.thread_time(), time.perf_counter()
        wall, cpu = min(wall, w1 - w0), min(cpu, c1 - c0)
    return wall, cpu, result


@dataclass
class Paired:
    """One contestant of :func:`paired`: the best and median CPU seconds of the process
    (``time.process_time``: every thread), the best wall-clock seconds, and the last result."""

    cpu: float
    cpu_median: float
    wall: float
    result: Any


def paired(fns: dict[str, Callable[[], Any]], repeats: int) -> dict[str, Paired]:
    """Time every function of ``fns`` ``repeats`` times, in alternation (round 1: each once, in
    order; round 2: each once, ...), so that a busy moment of a shared machine falls on all of
    them alike; the same number of repeats for each. Warm them first: the first round is timed."""
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in fns}
    last: dict[str, Any] = {}
    for _ in range(max(1, repeats)):
        for name, fn in fns.items():
            w0, c0 = time.perf_counter(), time.process_time()
            last[name] = fn()
            c1, w1 = time.process_time(), time.perf_counter()
            runs[name].append((c1 - c0, w1 - w0))
    return {k: Paired(min(c for c, _ in v), float(np.median([c for c, _ in v])), min(w for _, w in v), last[k])
            for k, v in runs.items()}


def git_describe(root=None) -> str:
    """``abc1234`` (the checked-out commit, ``-dirty`` when tracked files differ from it), or
    ``unknown`` outside a git checkout."""
    import subprocess

    try:
        out = subprocess.run(["git", "describe", "--always", "--dirty", "--abbrev=7"], capture_output=True,
                             text=True, timeout=20, cwd=root or os.path.dirname(os.path.abspath(__file__)))
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


# ---------------------------------------------------------------------------- the report
def rate(n: int, seconds: float) -> str:
    """Games per second, ``"  12.34 M"`` or ``"  123.4 k"``."""
    r = n / seconds
    return f"{r / 1e6:8.2f} M" if r >= 1e6 else f"{r / 1e3:8.1f} k"


def per_game(n: int, seconds: float) -> str:
    """Time per game, ``"     154 ns"`` or ``"    12.3 us"``."""
    ns = 1e9 * seconds / n
    return f"{ns:8.0f} ns" if ns < 1e4 else f"{ns / 1e3:8.1f} us"


def print_rate_table(rows, width: int, *, cpu: bool = False) -> None:
    """The games-per-second table: rows of ``(name, games, seconds)``, or with ``cpu`` of
    ``(name, games, wall seconds, CPU seconds)``, which adds the time per game and the CPU-time
    columns."""
    head = f"{'method':{width}s} {'games':>11s} {'seconds':>9s} {'games/s':>12s}"
    if cpu:
        head += f" {'per game':>11s}   {'CPU s':>7s} {'CPU games/s':>11s}"
    print(head)
    for name, n, s, *c in rows:
        line = f"{name:{width}s} {n:11,d} {s:9.4f} {rate(n, s):>11s}"
        if cpu:
            line += f" {per_game(n, s):>11s}   {c[0]:7.4f} {rate(n, c[0]):>11s}"
        print(line)


def print_breakdown(n: int, total: float, loop: float, width: int, loop_name: str = "game_loop", *,
                    total_note: str = "", loop_note: str = "") -> None:
    """Three lines: the whole run, its Python-side preparation and the compiled loop (seconds;
    ``width`` is the label column of the whole-run line)."""
    print(f"  {'whole run':{width}s}{total * 1e3:9.1f} ms  {rate(n, total)} games/s{total_note}")
    print(f"    {'Python-side preparation (Filter.run)':{width - 2}s}{(total - loop) * 1e3:9.1f} ms  "
          f"({100 * (total - loop) / total:4.1f}%)")
    print(f"    {'compiled ' + loop_name:{width - 2}s}{loop * 1e3:9.1f} ms  ({100 * loop / total:4.1f}%)  "
          f"{rate(n, loop)} games/s{loop_note}")


# ---------------------------------------------------------------------------- inside a run
@dataclass
class RunTiming:
    """One ``method.run(games)`` split into the whole run and the compiled loop inside it
    (wall-clock and CPU seconds), the loop's arguments and the run's result."""

    wall: float
    cpu: float
    loop_wall: float
    loop_cpu: float
    args: tuple
    fitted: Any


def time_run_and_loop(method, games, repeats: int, loop_name: str = "game_loop",
                      best_by: str = "wall") -> RunTiming:
    """Run ``method.run(games)`` ``repeats`` times, timing the compiled ``filters.kernels.<loop_name>``
    inside each run, and return the repeat with the least ``best_by`` (``"wall"`` or ``"cpu"``)
    time of the whole run. ``Filter.run`` calls ``K.game_loop`` (games without rating periods),
    ``K.site_loop`` (with periods) or ``K.period_loop`` (a filter with a joint period update),
    looking the loop up on the module at call time, so replacing the module attribute for the
    duration works."""
    from filters import kernels as K

    original = getattr(K, loop_name)
    captured: dict = {}
    loops: list = []

    def wrapper(*args):
        captured["args"] = args
        w0, c0 = time.perf_counter(), time.thread_time()
        original(*args)
        c1, w1 = time.thread_time(), time.perf_counter()
        loops.append((w1 - w0, c1 - c0))

    setattr(K, loop_name, wrapper)
    try:
        totals, fitted = [], None
        for _ in range(max(1, repeats)):
            w0, c0 = time.perf_counter(), time.thread_time()
            fitted = method.run(games)
            c1, w1 = time.thread_time(), time.perf_counter()
            totals.append((w1 - w0, c1 - c0))
    finally:
        setattr(K, loop_name, original)
    if len(loops) != len(totals):
        raise RuntimeError(f"expected one {loop_name} call per run, got {len(loops)} "
                           f"for {len(totals)} runs: Filter.run no longer takes this path")
    i = int(np.argmin([t[0 if best_by == "wall" else 1] for t in totals]))
    return RunTiming(totals[i][0], totals[i][1], loops[i][0], loops[i][1], captured["args"], fitted)


def replay_loop(args: tuple, values: np.ndarray, *, site=None, apply=None, rule: int | None = None, predict=None,
                has_predict: bool | None = None) -> Callable[[], None]:
    """A call of ``filters.kernels.game_loop`` on the games of a captured run (``args``, from
    :func:`time_run_and_loop` with ``loop_name="game_loop"``) with other kernels where given: the
    per-game ``site``, the combination rule (``rule`` and, for ``RULE_CUSTOM``, ``apply``) and the
    time update (``predict``, ``has_predict``). Each call starts from a copy of ``values``, with no
    games played, no time passed and fresh accumulator rows; the observation kernels, ``theta``
    and the games are the run's.

    Every call runs the **generic** loop (``game_loop.generic``: the kernels called through
    function pointers), whichever kernels it is given, so that the steps of a breakdown differ
    only by the kernels swapped; ``Filter.run`` itself runs the loop compiled for the filter's
    kernels (:mod:`statespace._runtime.jit`), which the breakdown's first row times."""
    from filters import kernels as K

    # game_loop(predict, site, apply, derivs, forecast, has_predict, rule, obs, x, count, last, theta,
    #           a, b, score, score_a, score_b, home, weight, t, out_p, out_post, scratch, shared)
    (pred0, site0, apply0, lik, forecast, has0, rule0, obs, _, count, last, theta, *per_game_arrays,
     out_p, out_post, scratch, shared) = args
    pred = pred0 if predict is None else predict
    has = has0 if has_predict is None else has_predict
    site_ = site0 if site is None else site
    apply_ = apply0 if apply is None else apply
    rule_ = rule0 if rule is None else rule

    def go() -> None:
        K.game_loop.generic(pred, site_, apply_, lik, forecast, has, rule_, obs, values.copy(), np.zeros_like(count),
                    np.full(last.shape, np.nan), theta, *per_game_arrays, np.empty(out_p.shape),
                    np.empty(out_post.shape), np.zeros_like(scratch), shared)

    return go


def noop_site_kernel():
    """A compiled site kernel that does nothing but return a forecast (it adds no site, so the
    state never moves): the generic loop's own cost, with one indirect call per game."""
    from numba import njit

    from filters import kernels as K

    @njit(K.SITE_SIG)
    def site_noop(lik, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
        return 0.5, 0.0, 0.5

    return site_noop


def proba_site_kernel(proba):
    """A compiled site kernel that only forecasts, by the filter's own ``proba`` kernel (it adds
    no site, so the state never moves): the loop plus the forecast."""
    from numba import njit

    from filters import kernels as K

    @njit(K.SITE_SIG)
    def site_proba(lik, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
        return proba(forecast, obs, x, a, b, at_home, theta)

    return site_proba


def load_shared(root, name: str, prefix: str = ""):
    """``<root>/<name>/games.csv`` as ``Games`` (rows the reader drops are dropped quietly: ATP has
    3 rows of a player against himself), or ``None`` with a note on stderr when it is absent."""
    import sys
    import warnings
    from pathlib import Path

    import statespace

    path = Path(root) / name / "games.csv"
    if not path.is_file():
        print(f"{prefix}{name}: not found at {path}; skipped", file=sys.stderr)
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", statespace.DroppedRowsWarning)
        return statespace.Games.from_csv(path, errors="drop")


def add_dataset_args(parser, names) -> None:
    """``--data`` (the shared data folder, default ``../shared/data`` beside the project) and
    ``--datasets`` (comma-separated, default ``names``) for a script over real data sets."""
    from pathlib import Path

    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    parser.add_argument("--datasets", default=",".join(names))


def each_dataset(args):
    """``(name, games)`` of every data set ``args.datasets`` names that ``args.data`` holds
    (:func:`load_shared`: an absent one is skipped with a note)."""
    for name in args.datasets.split(","):
        games = load_shared(args.data, name)
        if games is not None:
            yield name, games
