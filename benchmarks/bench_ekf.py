"""Speed of our compiled extended Kalman filter (diagonal, iterated, scalar and full covariance)
and of hyperparameter tuning, against Elo on the same games.

One stream of simulated games (random pairs among ``--players`` competitors, random results:
45% wins, 10% draws, 45% losses, drawn with NumPy by ``_common.make_stream``; numeric times in
rounds, game ``i`` at time ``2 i / players``, so that each competitor plays about once per unit of
time and the default drift of 100 per unit of time is about 100 rating points^2 per game) is
rated one game at a time (no period column: ``Filter.run`` takes the one-game path,
``filters.kernels.game_loop`` with the filter's site kernel and its combination rule) by

- ours: ``filters.EKF()`` (the default model: logistic link at Elo scale, prior N(1500, 350^2),
  drift 100 per unit of time, draws as half a win; ``covariance="diagonal"``). **The
  target, at least 5 M games/s on one core, is judged on this row**;
- for information: ``EKF(iterations=5)`` (the iterated EKF: up to five Newton steps to the
  one-game posterior mode), ``EKF(covariance="scalar")`` (a fixed shared variance: Elo with a
  principled K) and ``filters.Elo(k=32)`` on the same games, for the ratio.

Each is timed on a prebuilt ``statespace.Games`` after a warm-up on a small table (numba cache
load or compilation excluded), best of ``--repeats``. Then ``EKF(covariance="full")`` (one n x n
covariance, O(n^2) per game; its update is joint, not a sum of per-competitor sites, so it goes
through ``period_loop`` with its ``_update`` kernel, one rating period per game) is timed on its
own smaller streams, ``--full-games`` games among ``--full-players`` competitors (20,000 among 10
and among 100, 5,000 among 1,000 by default; the 10-competitor stream shows the fixed cost per
game), with the diagonal filter on the same games beside it.

Tuning: ``filters.Elo().tune(train)`` (K and home advantage, L-BFGS-B on the one-step-ahead log
loss, then the standard errors from a numerical Hessian) on the first ``--split`` (90%) by time
of the international football results (``--data``, default
``../shared/data/intl_football/games.csv`` next to the repository; the section is skipped with a
message if the file is absent), after a warm-up run; wall time against the target (under
5 seconds), the number of optimiser evaluations and of filter runs in all (each evaluation is one
compiled pass over the games plus the log loss), the fitted K and home, and the time per
evaluation, also measured directly. ``EKF().tune(train)`` (drift, prior variance, home) on the
same games for information (not with ``--quick``).

``--profile`` (on by default, off with ``--quick``) splits ``EKF().run`` into the Python-side
preparation and the compiled ``game_loop``, then times that loop with kernels built up step by
step from the filter's own compiled pieces (a no-op site and a no-op combination; the time
updates of both competitors, ``_predict``; the forecast, ``_proba``; the site, ``_site`` ->
``linearise`` -> the observation's log-likelihood kernel, with a no-op combination; the built-in
Gaussian combination rule, i.e. the run's own loop), all from the same realistic state, and
times ``exp``, ``sqrt`` and a division on their own in compiled loops (independent calls and
dependent chains).

Every rate is games per second on one core (the compiled loops are serial), printed from the
wall clock and from the CPU time of the calling thread (``time.thread_time()``, which leaves out
the time other processes held the core: the steadier figure on a shared machine), with the load
average at the start and the end. The exit status is 1 if a forecast of a timed run is not a
finite probability.

Usage::

    python benchmarks/bench_ekf.py                  # 1,000,000 games, 1,000 competitors
    python benchmarks/bench_ekf.py --quick          # 20,000 games, a few seconds
    python benchmarks/bench_ekf.py --games 200000 --players 500 --repeats 5 --seed 1
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

from _common import (BenchParser, build_games, draw_stream, import_packages, load, make_stream, noop_site_kernel,
                     print_breakdown, print_header, print_rate_table, proba_site_kernel, rate, replay_loop,
                     time_run_and_loop, timed, versions, warm_up)

TARGET = 5e6  # games per second on one core for the diagonal EKF
TUNE_TARGET = 5.0  # seconds for Elo().tune on the first 90% of the international football games
K_FACTOR = 32.0
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "intl_football" / "games.csv"


# ---------------------------------------------------------------------------- helpers
def in_rounds(t: np.ndarray, n_players: int) -> np.ndarray:
    """``make_stream``'s times (one game per time step) in rounds: ``2 t / players``, so that each
    competitor plays about once per unit of time. (With one game per unit of time a competitor
    would sit idle for ``players / 2`` units between games, gaining a variance of 100 per unit:
    the default EKF would then chase noise, with rating spreads in the tens of thousands. The
    speed is the same either way; the numbers are not.)"""
    return t * (2.0 / n_players)


def rounds_stream(n_games: int, n_players: int, seed: int):
    t, a, b, score = make_stream(n_games, n_players, seed)
    return build_games(in_rounds(t, n_players), a, b, score)


def valid(fitted) -> bool:
    """Every forecast a finite probability triple (the sanity check of each timed run)."""
    p = fitted.proba
    return bool(np.all(np.isfinite(p)) and np.all(p >= 0) and np.all(p <= 1)
                and np.allclose(p.sum(axis=1), 1.0))


# ---------------------------------------------------------------------------- diagonal, iterated, scalar
def one_game_section(games, repeats: int) -> tuple[bool, float]:
    """Time the one-game filters on ``games``; returns (all forecasts valid, EKF() games/s)."""
    from filters import EKF, Elo

    n = len(games)
    methods = [
        ("ours: EKF().run, diagonal (default)", EKF()),
        ("ours: EKF(iterations=5).run, iterated, diagonal", EKF(iterations=5)),
        ("ours: EKF(covariance=\"scalar\").run", EKF(covariance="scalar")),
        (f"ours: Elo(k={K_FACTOR:g}).run, same games", Elo(k=K_FACTOR)),
    ]
    small = games.take(np.arange(min(1_000, n)))
    warm_up(f"first calls on {len(small):,} games", [lambda m=m: m.run(small) for _, m in methods])
    seconds, cpu, ok = {}, {}, True
    for name, m in methods:
        seconds[name], cpu[name], fitted = timed(lambda: m.run(games), repeats)
        ok = valid(fitted) and ok
    names = [name for name, _ in methods]
    print()
    print_rate_table([(name, n, seconds[name], cpu[name]) for name in names], 56, cpu=True)
    diag, it, sc, elo = (n / seconds[name] for name in names)
    diag_c, it_c, sc_c, elo_c = (n / cpu[name] for name in names)
    print()
    print("ratios (per game; wall clock / CPU time):")
    print(f"  Elo(k={K_FACTOR:g}) / EKF() diagonal:          {elo / diag:6.2f}x / {elo_c / diag_c:5.2f}x   "
          "(Elo is this much faster)")
    print(f"  EKF() diagonal / EKF(iterations=5):  {diag / it:6.2f}x / {diag_c / it_c:5.2f}x")
    print(f"  EKF(covariance=\"scalar\") / EKF():    {sc / diag:6.2f}x / {sc_c / diag_c:5.2f}x")
    print(f"target: >= {TARGET / 1e6:.0f} M games/s on one core for EKF() (diagonal):")
    print(f"  wall clock: measured {diag / 1e6:.2f} M games/s: {'MET' if diag >= TARGET else 'BELOW'}")
    print(f"  CPU time:   measured {diag_c / 1e6:.2f} M games/s: {'MET' if diag_c >= TARGET else 'BELOW'}")
    if not ok:
        print("A FORECAST OF A TIMED RUN IS NOT A FINITE PROBABILITY")
    return ok, diag


# ---------------------------------------------------------------------------- full covariance
def full_section(sizes, seed: int, repeats: int) -> bool:
    """Time EKF(covariance="full") on (players, games) streams, the diagonal filter beside it."""
    from filters import EKF

    print()
    print("Full covariance: EKF(covariance=\"full\") (period_loop, one rating period per game, a rank-1 update of "
          "the n x n covariance per game), the diagonal EKF() on the same games for comparison:")
    warm = rounds_stream(200, 10, seed + 1)
    warm_up("first call on 200 games among 10", [lambda: EKF(covariance="full").run(warm)])
    rows, per, ok = [], [], True
    for n_players, n_games in sizes:
        games = rounds_stream(n_games, n_players, seed)
        s_full, c_full, fitted = timed(lambda: EKF(covariance="full").run(games), repeats)
        ok = valid(fitted) and ok
        s_diag, c_diag, _ = timed(lambda: EKF().run(games), repeats)
        mb = 8 * n_players * (n_players + 2) / 1e6
        rows.append((f"ours: EKF(covariance=\"full\"), {n_players:,} competitors ({mb:,.1f} MB state)",
                     n_games, s_full, c_full))
        rows.append((f"ours: EKF() diagonal, same {n_players:,} competitors", n_games, s_diag, c_diag))
        per.append((n_players, s_full / n_games))
    print()
    print_rate_table(rows, 64, cpu=True)
    for (n0, t0_), (n1, t1) in zip(per[:-1], per[1:]):
        print(f"time per game, {n1:,} against {n0:,} competitors: {t1 / t0_:.1f}x "
              f"(n^2 would be {(n1 / n0) ** 2:.0f}x)")
    if not ok:
        print("A FORECAST OF A TIMED RUN IS NOT A FINITE PROBABILITY")
    return ok


# ---------------------------------------------------------------------------- tuning
def _counting_score():
    """Replace ``filters.tuning._score`` (looked up at call time by ``tune`` and the standard
    errors) by a counting wrapper; returns (counter, restore)."""
    from filters import tuning

    original = tuning._score
    counter = {"n": 0, "seconds": 0.0, "cpu": 0.0}

    def wrapper(*args, **kwargs):
        counter["n"] += 1
        t0, c0 = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            counter["cpu"] += time.thread_time() - c0
            counter["seconds"] += time.perf_counter() - t0

    tuning._score = wrapper

    def restore():
        tuning._score = original

    return counter, restore


def tune_once(method, train) -> dict:
    """One ``method.tune(train)``: wall and CPU seconds, the tuned method, the filter runs in all
    and the wall and CPU seconds spent inside them."""
    counter, restore = _counting_score()
    try:
        t0, c0 = time.perf_counter(), time.thread_time()
        tuned = method.tune(train)
        cpu = time.thread_time() - c0
        seconds = time.perf_counter() - t0
    finally:
        restore()
    return {"wall": seconds, "cpu": cpu, "tuned": tuned, "runs": counter["n"], "wall_in": counter["seconds"],
            "cpu_in": counter["cpu"]}


def tuning_section(path: Path, split: float, repeats: int, ekf_tune: bool) -> None:
    import statespace as ss
    from filters import EKF, Elo
    from filters.tuning import _score

    print()
    if not path.is_file():
        print(f"Tuning: international football data not found at {path}; section skipped "
              "(pass --data PATH to the games.csv).")
        return
    t0 = time.perf_counter()
    games = ss.Games.from_csv(path)
    train, _ = games.split(split)
    print(f"Tuning on {path}: {len(games):,} games, the first {split:.0%} by time: {len(train):,} games "
          f"(loaded and split in {time.perf_counter() - t0:.2f} s)")
    t0 = time.perf_counter()
    Elo().run(train)
    EKF().run(train)
    print(f"first runs on the training games (numba cache load or compilation, excluded below): "
          f"{time.perf_counter() - t0:.2f} s")

    cases = [("Elo().tune(train)", Elo(), ("k", "home"))]
    if ekf_tune:
        cases.append(("EKF().tune(train)", EKF(), ("drift", "prior_var", "home")))
    reps = max(1, min(repeats, 3))
    for label, method, names in cases:
        calls = [tune_once(method, train) for _ in range(reps)]
        best = min(calls, key=lambda c: c["wall"])
        best_cpu = min(c["cpu"] for c in calls)
        runs, res = best["runs"], best["tuned"].tuning
        evals = len(res.trace)
        # one evaluation on its own: the filter run on the training games and the log loss
        fitted = method.with_params(**res.params)
        one, one_cpu, _ = timed(lambda: _score(fitted, train, "log_loss"), max(3, repeats))
        run_only, run_cpu, _ = timed(lambda: fitted.run(train), max(3, repeats))
        worst = max(c["wall"] for c in calls)
        print()
        verdict = (f"target under {TUNE_TARGET:g} s: {'MET' if worst < TUNE_TARGET else 'BELOW'}"
                   + ("" if reps == 1 else " (on the slowest call)")
                   if isinstance(method, Elo) else "for information")
        print(f"{label}: wall time {best['wall']:.3f} s, best of {reps} (first call {calls[0]['wall']:.3f} s, "
              f"slowest {worst:.3f} s; CPU time {best_cpu:.3f} s; each includes the standard errors): {verdict}")
        print(f"  optimiser: L-BFGS-B, {evals} evaluations of the objective "
              f"({'converged' if res.success else 'NOT converged'}: {res.message})")
        print(f"  filter runs in all: {runs} (the {evals} evaluations, the final value, "
              f"{runs - evals - 1} for the standard errors)")
        print("  fitted: " + ", ".join(f"{p} = {res.params[p]:.4f} ± {res.se.get(p, float('nan')):.2g}"
                                        for p in names if p in res.params)
              + f"; log loss {res.objective:.6f} on {res.n_games:,} games")
        print(f"  time per evaluation (wall / CPU): {1e3 * best['wall'] / runs:.2f} / {1e3 * best['cpu'] / runs:.2f} ms "
              f"(the call's time / filter runs), of which inside the evaluations (filter run + log loss)")
        print(f"    {1e3 * best['wall_in'] / runs:.2f} / {1e3 * best['cpu_in'] / runs:.2f} ms "
              f"({100 * best['cpu_in'] / best['cpu']:.0f}% of the CPU time; the rest is the optimiser, with_params "
              f"and the trace);")
        print(f"    one evaluation alone (best of {max(3, repeats)}): {1e3 * one:.2f} / {1e3 * one_cpu:.2f} ms, of which "
              f"the filter run {1e3 * run_only:.2f} / {1e3 * run_cpu:.2f} ms "
              f"({rate(len(train), run_cpu).strip()} games/s on CPU time)")


# ---------------------------------------------------------------------------- profile
def _profile_kernels():
    """The transcendental micro-benchmarks (built on demand: numba compiles them)."""
    from numba import njit

    @njit(cache=False)
    def exp_throughput(z):
        acc = 0.0
        for i in range(z.shape[0]):
            acc += math.exp(z[i])  # independent calls: the processor overlaps them
        return acc

    @njit(cache=False)
    def sqrt_throughput(z):
        acc = 0.0
        for i in range(z.shape[0]):
            acc += math.sqrt(z[i])
        return acc

    @njit(cache=False)
    def exp_latency(x, n):
        for _ in range(n):
            x = math.exp(-x)  # each call waits for the previous one, as in the game kernel
        return x

    @njit(cache=False)
    def sqrt_latency(x, n):
        for _ in range(n):
            x = math.sqrt(x + 1.0)
        return x

    @njit(cache=False)
    def div_latency(x, n):
        for _ in range(n):
            x = 1.0 / (1.0 + x)
        return x

    return exp_throughput, sqrt_throughput, exp_latency, sqrt_latency, div_latency


def profile(games, repeats: int) -> None:
    """Where the time of ``EKF().run(games)`` goes (printed), in CPU time (steadier than the wall
    clock when other processes share the machine)."""
    from filters import EKF
    from filters import kernels as K
    from filters import ekf as E

    n = len(games)
    reps = max(1, repeats)
    method = EKF()
    run = time_run_and_loop(method, games, reps, best_by="cpu")
    total_w, total, loop, fitted = run.wall, run.cpu, run.loop_cpu, run.fitted

    exp_throughput, sqrt_throughput, exp_latency, sqrt_latency, div_latency = _profile_kernels()
    # every variant starts from the run's final state (realistic means and variances, so that
    # exp is never called at 0, where it takes a shortcut), each competitor's first game here
    # keeping its row as in Filter.run; all but the last combine the sites by nothing (a no-op
    # custom rule: two indirect calls per game, the state never moves)
    start = fitted.state.values
    no_rule = {"apply": K.no_apply, "rule": K.RULE_CUSTOM}

    def loop_with(**kernels):
        go = replay_loop(run.args, start, **kernels)
        go()  # compiles the probe
        return timed(go, reps)[1]

    site_noop, site_proba = noop_site_kernel(), proba_site_kernel(E._proba)
    steps = [
        ("loop, no-op site, no-op combination, no predict",
         loop_with(site=site_noop, predict=K.no_predict, has_predict=False, **no_rule)),
        ("+ EKF._predict of both competitors (2 indirect calls, 2 sqrt)", loop_with(site=site_noop, **no_rule)),
        ("+ the forecast, _proba (effective scale: 1 sqrt; 2 exp)", loop_with(site=site_proba, **no_rule)),
        ("+ the site, _site -> linearise -> the observation's lik", loop_with(**no_rule)),
        ("the Gaussian rule for the no-op apply (2 sqrt) = the run's loop", loop_with()),
    ]

    # exp, sqrt and division on their own: independent calls (throughput) over arguments like
    # the kernel's, and dependent chains (latency), as inside one game
    z = -np.abs(np.log(fitted.proba[:, 0] / fitted.proba[:, 2]))  # the logit of each forecast
    z = np.tile(z, max(1, 6_000_000 // max(1, z.size)))[:6_000_000].copy()
    pos = 1.0 - z
    m = 6_000_000
    exp_throughput(z[:10]), sqrt_throughput(pos[:10]), exp_latency(0.3, 10), sqrt_latency(2.0, 10), div_latency(0.3, 10)
    ns = {
        "exp throughput": timed(lambda: exp_throughput(z), reps)[1] / z.size,
        "sqrt throughput": timed(lambda: sqrt_throughput(pos), reps)[1] / pos.size,
        "exp latency": timed(lambda: exp_latency(0.3, m), reps)[1] / m,
        "sqrt latency": timed(lambda: sqrt_latency(2.0, m), reps)[1] / m,
        "division latency": timed(lambda: div_latency(0.3, m), reps)[1] / m,
    }

    w = 66
    print()
    print(f"Where the time of EKF().run goes ({n:,} games, no rating periods, CPU time, best of {reps}):")
    print_breakdown(n, total, loop, w, total_note=f"   (wall clock {total_w * 1e3:.1f} ms)",
                    loop_note=f"   ({1e9 * loop / n:.0f} ns per game)")
    print("  the same loop from the run's final state, its kernels built up step by step "
          "(cumulative, then the step's own share):")
    prev = 0.0
    for label, sec in steps:
        print(f"    {label:{w - 2}s}{sec * 1e3:9.1f} ms  {1e9 * sec / n:5.0f} ns/game   "
              f"step {1e9 * (sec - prev) / n:+4.0f} ns")
        prev = sec
    print("  (the no-op combination is the custom rule with a no-op apply: two indirect calls per game, which the "
          "built-in rule inlines,")
    print("  so the last step can come out negative)")
    print("  on their own in a compiled loop (ns per call; throughput: independent calls, latency: each "
          "waiting for the previous):")
    print("    " + ", ".join(f"{k} {1e9 * v:.1f}" for k, v in ns.items()))
    print("  per game the diagonal EKF's forecast (the observation's forecast kernel) computes F(z) and F(-z) at the "
          "effective scale,")
    print("  and its linearisation the observation's log-likelihood and its two derivatives at the model's scale.")


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = BenchParser(__doc__)
    p.add_argument("--full-players", type=int, nargs="+", default=None,
                   help="competitors of the full-covariance streams (10 100 1000; --quick 10 50 200)")
    p.add_argument("--full-games", type=int, nargs="+", default=None,
                   help="games of the full-covariance streams, one per --full-players (20000 20000 5000; "
                        "--quick 2000 2000 500)")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA,
                   help=f"international football games.csv for the tuning section (default {DEFAULT_DATA})")
    p.add_argument("--split", type=float, default=0.9, help="share of the games (by time) tuned on (0.9)")
    p.add_argument("--tune", action=argparse.BooleanOptionalAction, default=True,
                   help="time the tuning (default: on)")
    p.add_quick_off("--ekf-tune", "also time EKF().tune")
    p.add_quick_off("--profile", "break the diagonal EKF run down")
    p.add_quick()
    args = p.parse_args(argv)

    quick = args.quick
    n_games, n_players, repeats = args.games, args.players, args.repeats
    full_players = (args.full_players if args.full_players is not None
                    else ([10, 50, 200] if quick else [10, 100, 1_000]))
    full_games = (args.full_games if args.full_games is not None
                  else ([2_000, 2_000, 500] if quick else [20_000, 20_000, 5_000]))
    if len(full_players) != len(full_games):
        p.error("--full-players and --full-games need the same number of values")
    if any(n < 2 for n in full_players) or any(g < 2 for g in full_games):
        p.error("the full-covariance streams need at least 2 games and 2 competitors")
    if not 0 < args.split < 1:
        p.error("--split must be strictly between 0 and 1")

    print_header(f"bench_ekf: EKF over {n_games:,} simulated games among {n_players:,} competitors (seed {args.seed})",
                 versions("numpy", "pandas", "scipy", "numba"), f"; {load()} at start")
    busy = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if busy > (os.cpu_count() or 1) - 0.5:
        print(f"note: the load average ({busy:.1f}) is near or above the {os.cpu_count()} cores: other processes "
              "share the machine, so wall-clock rates are lowered; the CPU-time columns less so")

    t, a, b, score = draw_stream(n_games, n_players, args.seed, " (numeric times in rounds: each competitor plays "
                                 "about once per unit of time)")
    t = in_rounds(t, n_players)
    import_packages()

    t0 = time.perf_counter()
    games = build_games(t, a, b, score)
    print(f"Games built in {time.perf_counter() - t0:.2f} s")

    ok, _ = one_game_section(games, repeats)
    ok = full_section(list(zip(full_players, full_games)), args.seed, max(1, min(repeats, 3))) and ok
    if args.tune:
        tuning_section(args.data, args.split, repeats, args.ekf_tune)
    if args.profile:
        profile(games, repeats)
    print()
    print(f"{load()} at the end")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
