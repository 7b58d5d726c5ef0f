"""Speed of our compiled Elo against a plain Python loop and the ``elote`` package.

One stream of simulated games (random pairs among ``--players`` competitors, random results:
45% wins, 10% draws, 45% losses, drawn with NumPy) is rated by

- ours: ``filters.Elo(k=32).run(games)`` on a prebuilt ``statespace.Games`` (compilation
  excluded by a warm-up on a small table; best of ``--repeats``), and separately end to end,
  building the ``Games`` from the arrays and running;
- a plain Python loop: a dict of ratings, one pass over the games (its own slice,
  ``--python-games``);
- ``elote.EloCompetitor`` (``initial_rating=1500, k_factor=32``), one ``beat``/``lost_to``/
  ``tied`` call per game (its own slice, ``--elote-games``).

Every rate is games per second on one core (the compiled loop is serial; numba's thread pool is
not used). The ratios ours / peer are taken within this one run. The three are also checked to
give the same final ratings on a common slice (the first ``--check-games`` games), to within
1e-9 relative. Finally ``--profile`` (on by default, off with ``--quick``) splits our run into the
Python-side preparation in ``filters.base.Filter.run`` and the compiled ``run_loop``, and times
the loop with no-op kernels (the cost of the generic loop itself) and a fused sequential Elo loop
(a prototype that is not part of the library) to show where the time goes.

Usage::

    python benchmarks/bench_elo.py                  # 1,000,000 games, 1,000 competitors
    python benchmarks/bench_elo.py --quick          # 20,000 games, a few seconds
    python benchmarks/bench_elo.py --games 200000 --players 500 --repeats 5 --seed 1
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time

import numpy as np

K_FACTOR = 32.0
INITIAL = 1500.0
TARGET = 20e6  # games per second on one core, stated in the issue
TOLERANCE = 1e-9  # relative, for the agreement check


# ---------------------------------------------------------------------------- the stream
def make_stream(n_games: int, n_players: int, seed: int):
    """Random pairs (never a competitor against itself) and random results, as NumPy arrays."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_games)
    b = (a + rng.integers(1, n_players, n_games)) % n_players
    score = rng.choice(np.array([1.0, 0.5, 0.0]), size=n_games, p=[0.45, 0.10, 0.45])
    t = np.arange(n_games, dtype=np.float64)  # numeric times: one game per time step
    return t, a, b, score


def build_games(t, a, b, score):
    from statespace import Games
    return Games.from_arrays(t, a, b, score)


# ---------------------------------------------------------------------------- the peers
def python_elo(a, b, score, k: float = K_FACTOR, initial: float = INITIAL) -> dict:
    """Plain Python Elo: a dict of ratings, one pass, E = 1 / (1 + 10^(-(r_a - r_b) / 400))."""
    r: dict = {}
    get = r.get
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist()):
        ri = get(i, initial)
        rj = get(j, initial)
        e = 1.0 / (1.0 + 10.0 ** (-(ri - rj) / 400.0))
        delta = k * (s - e)
        r[i] = ri + delta
        r[j] = rj - delta
    return r


def elote_elo(a, b, score, k: float = K_FACTOR, initial: float = INITIAL) -> dict:
    """elote's EloCompetitor, one method call per game (how the package is meant to be used)."""
    from elote import EloCompetitor
    players: dict = {}
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist()):
        ci = players.get(i)
        if ci is None:
            ci = players[i] = EloCompetitor(initial_rating=initial, k_factor=k)
        cj = players.get(j)
        if cj is None:
            cj = players[j] = EloCompetitor(initial_rating=initial, k_factor=k)
        if s == 1.0:
            ci.beat(cj)
        elif s == 0.0:
            ci.lost_to(cj)
        else:
            ci.tied(cj)
    return {p: c.rating for p, c in players.items()}


def ours_final(games, fitted) -> dict:
    """Final ratings of our run as {player id: rating} (ids are the stream's integers)."""
    st = fitted.state
    played = st.count > 0
    return {int(p): float(v) for p, v in zip(st.players[played], st.values[played, 0])}


# ---------------------------------------------------------------------------- timing helpers
def best_of(fn, repeats: int):
    """(best seconds, last result) over ``repeats`` calls."""
    best, result = math.inf, None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def rate(n: int, seconds: float) -> str:
    r = n / seconds
    return f"{r / 1e6:8.2f} M" if r >= 1e6 else f"{r / 1e3:8.1f} k"


def max_rel_diff(x: dict, y: dict) -> float:
    if x.keys() != y.keys():
        return math.inf
    return max(abs(x[p] - y[p]) / abs(y[p]) for p in x)


def versions() -> str:
    import numba
    import pandas
    out = [f"python {platform.python_version()}", f"numpy {np.__version__}",
           f"pandas {pandas.__version__}", f"numba {numba.__version__}"]
    try:
        from importlib.metadata import version
        out.append(f"elote {version('elote')}")
    except Exception:  # pragma: no cover - elote missing
        out.append("elote not installed")
    return ", ".join(out)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


# ---------------------------------------------------------------------------- profile
def profile(games, repeats: int) -> None:
    """Where the time of ``Elo().run(games)`` goes (printed)."""
    from numba import njit

    from filters import Elo
    from filters import _kernels as K

    captured: dict = {}
    loop_seconds: list = []
    original = K.run_loop

    def timed_loop(*args):
        captured["args"] = args
        t0 = time.perf_counter()
        original(*args)
        loop_seconds.append(time.perf_counter() - t0)

    K.run_loop = timed_loop
    try:
        totals = []
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            Elo(k=K_FACTOR).run(games)
            totals.append(time.perf_counter() - t0)
    finally:
        K.run_loop = original
    i = int(np.argmin(totals))
    total, loop = totals[i], loop_seconds[i]
    n = len(games)

    # the generic loop with kernels that do nothing: the price of the loop structure and of
    # calling three kernels through first-class function pointers
    @njit(K.PROBA_SIG)
    def proba_noop(x, a, b, at_home, theta):
        return 0.5, 0.0, 0.5

    @njit(K.UPDATE_SIG)
    def update_noop(x, count, theta, a, b, score, home, start, stop, scratch):
        return

    # a fused sequential Elo loop (one game per batch, forecast and update share one E): the
    # same outputs as run_loop for Elo without rating periods, written out by hand
    @njit
    def fused(x, count, last, theta, a, b, score, home, t, out_p, out_post):
        k = x.shape[1]
        kk, hh, ss, bb = theta[0], theta[1], theta[2], theta[3]
        for g in range(a.shape[0]):
            ia = a[g]
            ib = b[g]
            last[ia] = t[g]
            last[ib] = t[g]
            d = x[ia, 0] - x[ib, 0] + hh * home[g]
            e = 1.0 / (1.0 + bb ** (-d / ss))
            out_p[g, 0] = e
            out_p[g, 1] = 0.0
            out_p[g, 2] = 1.0 - e
            r = score[g] - e
            x[ia, 0] += kk * r
            x[ib, 0] += kk * (-r)
            count[ia] += 1
            count[ib] += 1
            for c in range(k):
                out_post[g, c] = x[ia, c]
                out_post[g, k + c] = x[ib, c]

    (predict, proba, update, x, count, last, theta, a, b, score, home, t, starts, out_p, out_post,
     scratch) = captured["args"]
    fresh = Elo(k=K_FACTOR).init_state(games.players)

    def noop_run():
        original(predict, proba_noop, update_noop, fresh.values.copy(), fresh.count.copy(), fresh.last.copy(),
                 theta, a, b, score, home, t, starts, out_p, out_post, scratch)

    def fused_run():
        xs, cs, ls = fresh.values.copy(), fresh.count.copy(), fresh.last.copy()
        fused(xs, cs, ls, theta, a, b, score, home, t, out_p, out_post)
        return xs, cs, ls, out_p.copy(), out_post.copy()

    def proba_only_run():
        original(predict, proba, update_noop, fresh.values.copy(), fresh.count.copy(), fresh.last.copy(),
                 theta, a, b, score, home, t, starts, out_p, out_post, scratch)

    noop_run()
    proba_only_run()
    fused_run()
    floor, _ = best_of(noop_run, repeats)
    with_proba, _ = best_of(proba_only_run, repeats)
    fused_s, fused_out = best_of(fused_run, repeats)
    same = (np.array_equal(fused_out[0], x) and np.array_equal(fused_out[1], count)
            and np.array_equal(fused_out[2], last) and np.array_equal(fused_out[3], out_p)
            and np.array_equal(fused_out[4], out_post))

    print()
    print(f"Where the time of Elo(k=32).run goes ({n:,} games, best of {max(1, repeats)}):")
    print(f"  whole run                                 {total * 1e3:9.1f} ms  {rate(n, total)} games/s")
    print(f"    Python-side preparation (Filter.run)    {(total - loop) * 1e3:9.1f} ms  "
          f"({100 * (total - loop) / total:4.1f}%)")
    print(f"    compiled run_loop                       {loop * 1e3:9.1f} ms  ({100 * loop / total:4.1f}%)  "
          f"{rate(n, loop)} games/s")
    print(f"      loop structure + kernel calls         {floor * 1e3:9.1f} ms  {rate(n, floor)} games/s"
          "   (no-op proba and update: ceiling of the generic loop)")
    print(f"      Elo proba kernel (forecast)           {(with_proba - floor) * 1e3:9.1f} ms")
    print(f"      Elo update kernel                     {(loop - with_proba) * 1e3:9.1f} ms")
    print(f"  fused sequential Elo loop (prototype)     {fused_s * 1e3:9.1f} ms  {rate(n, fused_s)} games/s"
          f"   outputs bit-identical to run_loop: {'yes' if same else 'NO'}")


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=None, help="games in the stream (1,000,000; --quick 20,000)")
    p.add_argument("--players", type=int, default=None, help="competitors (1,000; --quick 200)")
    p.add_argument("--seed", type=int, default=0, help="seed of the stream (0)")
    p.add_argument("--repeats", type=int, default=None, help="timed repeats, best reported (5; --quick 2)")
    p.add_argument("--python-games", type=int, default=None,
                   help="games timed for the plain Python loop (200,000; --quick 20,000)")
    p.add_argument("--elote-games", type=int, default=None,
                   help="games timed for elote (20,000; --quick 2,000)")
    p.add_argument("--check-games", type=int, default=None,
                   help="common slice checked for equal final ratings (20,000; --quick 2,000)")
    p.add_argument("--profile", action=argparse.BooleanOptionalAction, default=None,
                   help="break our run down (default: on, off with --quick)")
    p.add_argument("--quick", action="store_true", help="small sizes for a smoke test")
    args = p.parse_args(argv)

    quick = args.quick
    n_games = args.games if args.games is not None else (20_000 if quick else 1_000_000)
    n_players = args.players if args.players is not None else (200 if quick else 1_000)
    repeats = args.repeats if args.repeats is not None else (2 if quick else 5)
    n_python = min(n_games, args.python_games if args.python_games is not None else (20_000 if quick else 200_000))
    n_elote = min(n_games, args.elote_games if args.elote_games is not None else (2_000 if quick else 20_000))
    n_check = min(n_games, args.check_games if args.check_games is not None else (2_000 if quick else 20_000))
    do_profile = args.profile if args.profile is not None else not quick
    if n_games < 2 or n_players < 2:
        p.error("need at least 2 games and 2 competitors")

    import numba

    print(f"bench_elo: Elo(k={K_FACTOR:g}) over {n_games:,} simulated games among {n_players:,} competitors "
          f"(seed {args.seed})")
    print(f"machine: {cpu_name()}, {os.cpu_count()} logical cores; one core used "
          f"(serial loop; NUMBA_NUM_THREADS={numba.config.NUMBA_NUM_THREADS} unused)")
    print(f"versions: {versions()}")

    t0 = time.perf_counter()
    t, a, b, score = make_stream(n_games, n_players, args.seed)
    print(f"stream drawn with NumPy in {time.perf_counter() - t0:.3f} s")

    t0 = time.perf_counter()
    from filters import Elo
    import statespace  # noqa: F401
    print(f"import statespace + filters: {time.perf_counter() - t0:.2f} s")

    # warm-up: loads the cached compiled loop (or compiles it) on a small table
    small = min(1_000, n_games)
    t0 = time.perf_counter()
    Elo(k=K_FACTOR).run(build_games(t[:small], a[:small], b[:small], score[:small]))
    first_call = time.perf_counter() - t0
    print(f"first call on {small:,} games (numba cache load or compilation, excluded below): {first_call:.2f} s")

    build_s, games = best_of(lambda: build_games(t, a, b, score), max(1, min(repeats, 3)))
    run_s, fitted = best_of(lambda: Elo(k=K_FACTOR).run(games), repeats)
    e2e_s, _ = best_of(lambda: Elo(k=K_FACTOR).run(build_games(t, a, b, score)), max(1, min(repeats, 3)))

    py_s, _ = best_of(lambda: python_elo(a[:n_python], b[:n_python], score[:n_python]), max(1, min(repeats, 3)))
    el_s, _ = best_of(lambda: elote_elo(a[:n_elote], b[:n_elote], score[:n_elote]), max(1, min(repeats, 3)))

    ours_rate, py_rate, el_rate = n_games / run_s, n_python / py_s, n_elote / el_s
    rows = [
        ("ours: Elo(k=32).run(games), compiled", n_games, run_s),
        ("ours: end to end, Games.from_arrays + run", n_games, e2e_s),
        ("  (of which Games.from_arrays alone)", n_games, build_s),
        ("plain Python loop (dict of ratings)", n_python, py_s),
        ("elote EloCompetitor", n_elote, el_s),
    ]
    print()
    print(f"{'method':44s} {'games':>11s} {'seconds':>9s} {'games/s':>12s}")
    for name, n, s in rows:
        print(f"{name:44s} {n:11,d} {s:9.4f} {rate(n, s):>11s}")
    print()
    print(f"ratio ours / plain Python: {ours_rate / py_rate:8.1f}x")
    print(f"ratio ours / elote:        {ours_rate / el_rate:8.1f}x")
    print(f"target (issue): >= {TARGET / 1e6:.0f} M games/s on one core for ours; measured "
          f"{ours_rate / 1e6:.2f} M games/s: {'MET' if ours_rate >= TARGET else 'BELOW TARGET'}")

    # ------------------------------------------------------------------ agreement
    ca, cb, cs = a[:n_check], b[:n_check], score[:n_check]
    check_games = build_games(t[:n_check], ca, cb, cs)
    ours = ours_final(check_games, Elo(k=K_FACTOR).run(check_games))
    plain = python_elo(ca, cb, cs)
    el = elote_elo(ca, cb, cs)
    d_py, d_el = max_rel_diff(ours, plain), max_rel_diff(ours, el)
    lowest = min(el.values())
    print()
    print(f"agreement of final ratings on the first {n_check:,} games ({len(ours):,} competitors), "
          f"tolerance {TOLERANCE:g} relative:")
    print(f"  ours vs plain Python: max relative difference {d_py:.3g} "
          f"({'bit-identical' if d_py == 0 else 'within tolerance' if d_py <= TOLERANCE else 'DIFFERENT'})")
    print(f"  ours vs elote:        max relative difference {d_el:.3g} "
          f"({'bit-identical' if d_el == 0 else 'within tolerance' if d_el <= TOLERANCE else 'DIFFERENT'})")
    print("    elote uses the same K (k_factor=32 multiplies S - E) and scale (400, base 10); it computes\n"
          "    E = Q_a / (Q_a + Q_b) with Q = 10^(r / 400), equal to 1 / (1 + 10^(-(r_a - r_b) / 400)) but\n"
          "    rounded differently, so agreement is to rounding error, not bit for bit. elote also clamps\n"
          f"    ratings at 100; the lowest rating here is {lowest:.1f}, so the clamp never acted.")
    ok = d_py <= TOLERANCE and d_el <= TOLERANCE and lowest > 100

    if do_profile:
        profile(games, repeats)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
