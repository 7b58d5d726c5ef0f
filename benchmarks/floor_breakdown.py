"""Where Elo's run loop spends its time beyond the floor: a replica of ``filters.kernels.game_loop``
with Elo's site inlined, timed whole and with one piece of its bookkeeping taken out at a time.

``bench_floor.py`` measures the package's own loop against the floor (a plain numba Elo loop with
the same outputs); this script says why the two differ. The replica does per game what the shared
loop does for ``Elo(k=32)`` on games without rating periods: it records both competitors' last
appearance (``last``), marks their row of the accumulator (``scratch[i, 0]``, which some sites read as
the count of the period's games), runs the site (the forecast ``F((r_a - r_b + h) / s)`` read from
``theta``, the shift ``K w (S - E)`` added to ``scratch[i, 1]``), writes the three outcome
probabilities, combines each row's accumulator into its rating under the shift rule and clears
it, counts both competitors' games and checks the shared row; ``home`` and ``weight`` are read from
their columns. The lean loops at the end are the same arithmetic without the accumulator: the
rating updated in place, as the floor does.

Usage::

    python benchmarks/floor_breakdown.py               # 1,000,000 games among 1,000 competitors
    python benchmarks/floor_breakdown.py --players 100000
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from numba import njit

from _common import git_describe, load, make_stream, versions

LAST, MARKS, COUNT, SHARED, HOME, WEIGHT, ACCUMULATOR = 1, 2, 4, 8, 16, 32, 64
ALL = LAST | MARKS | COUNT | SHARED | HOME | WEIGHT | ACCUMULATOR
PIECES = [(LAST, "last appearance times"), (MARKS, "the accumulator's game marks"), (COUNT, "game counts"),
          (SHARED, "shared-row check and trajectory loop"), (HOME, "home column read"),
          (WEIGHT, "weight column read and cap"), (ACCUMULATOR, "accumulator round trip (site -> scratch -> rating)")]


@njit(cache=True)
def _cdf(z):
    e = math.exp(-abs(z))
    r = 1.0 / (1.0 + e)
    return r if z >= 0.0 else e * r


@njit(cache=True)
def _site(x, theta, ia, ib, score, home, weight, scratch):
    if theta[3] != 0.0:  # FIDE's branch, never taken here
        e, r = 0.5, 0.0
    else:
        e = _cdf((x[ia, 0] - x[ib, 0] + theta[1] * home) / theta[2])
        r = theta[0] * weight * (score - e)
    scratch[ia, 1] += r
    scratch[ib, 1] -= r
    return e, 0.0, 1.0 - e


@njit(cache=True)
def _combine(x, i, scratch):
    x[i, 0] += scratch[i, 1]
    scratch[i, 0] = 0.0
    scratch[i, 1] = 0.0


@njit(cache=True)
def replica(x, count, last, theta, a, b, score, home, weight, t, out_p, scratch, pieces):
    for g in range(a.shape[0]):
        ia = a[g]
        ib = b[g]
        if pieces & LAST:
            last[ia] = t[g]
            last[ib] = t[g]
        if pieces & MARKS:
            scratch[ia, 0] = 1.0
            scratch[ib, 0] = 1.0
        h = home[g] if pieces & HOME else 0.0
        w = min(weight[g], 1e6) if pieces & WEIGHT else 1.0
        pw, pd, pl = _site(x, theta, ia, ib, score[g], h, w, scratch)
        out_p[g, 0] = pw
        out_p[g, 1] = pd
        out_p[g, 2] = pl
        if pieces & ACCUMULATOR:
            _combine(x, ia, scratch)
            _combine(x, ib, scratch)
        else:  # the shift straight from the accumulator's column, nothing else touched
            x[ia, 0] += scratch[ia, 1]
            x[ib, 0] += scratch[ib, 1]
            scratch[ia, 1] = 0.0
            scratch[ib, 1] = 0.0
        if pieces & COUNT:
            count[ia] += 1
            count[ib] += 1
        if pieces & SHARED:
            if scratch.shape[0] < 0 and scratch[0, 0] != 0.0:  # never: no shared row
                _combine(x, 0, scratch)


@njit(cache=True)
def lean(x, theta, a, b, score, out_p):
    """The same arithmetic, the rating updated in place (no accumulator, no bookkeeping)."""
    k, s = theta[0], theta[2]
    for g in range(a.shape[0]):
        ia = a[g]
        ib = b[g]
        e = _cdf((x[ia, 0] - x[ib, 0]) / s)
        r = k * (score[g] - e)
        x[ia, 0] += r
        x[ib, 0] -= r
        out_p[g, 0] = e
        out_p[g, 1] = 0.0
        out_p[g, 2] = 1.0 - e


@njit(cache=True)
def floor(a, b, score, r, p):
    """bench_floor.py's Elo floor."""
    c = math.log(10.0) / 400.0
    for g in range(a.shape[0]):
        i = a[g]
        j = b[g]
        e = 1.0 / (1.0 + math.exp((r[j] - r[i]) * c))
        p[g] = e
        d = 32.0 * (score[g] - e)
        r[i] += d
        r[j] -= d


def best(fn, *args, repeats: int) -> float:
    """Best process CPU milliseconds of ``repeats`` calls after a warm-up."""
    fn(*args)
    out = math.inf
    for _ in range(repeats):
        c0 = time.process_time()
        fn(*args)
        out = min(out, time.process_time() - c0)
    return out * 1e3


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=1_000_000)
    p.add_argument("--players", type=int, default=1_000)
    p.add_argument("--repeats", type=int, default=9)
    a = p.parse_args(argv)
    t, ga, gb, score = make_stream(a.games, a.players, 0)
    n, P = a.games, a.players
    home, weight = np.zeros(n), np.ones(n)
    theta = np.array([32.0, 0.0, 400.0 / math.log(10.0), 0.0])
    x = np.zeros((P, 2))
    x[:, 0] = 1500.0
    count, last = np.zeros(P, np.int64), np.full(P, np.nan)
    out_p, scratch = np.empty((n, 3)), np.zeros((P, 5))
    print(f"Elo's run loop against the floor, piece by piece: {n:,} games among {P:,} competitors, best of "
          f"{a.repeats}, process CPU ms; commit {git_describe()}; {versions('numpy', 'numba')}; {load()}\n")
    f = best(floor, ga, gb, score, np.full(P, 1500.0), np.empty(n), repeats=a.repeats)

    def replica_ms(pieces):
        return best(replica, x, count, last, theta, ga, gb, score, home, weight, t, out_p, scratch, pieces,
                    repeats=a.repeats)

    whole = replica_ms(ALL)
    print("| loop | CPU ms | / floor |\n|---|---:|---:|")
    print(f"| the floor (bench_floor.py) | {f:.2f} | 1.00 |")
    print(f"| replica of the run loop, everything | {whole:.2f} | {whole / f:.2f} |")
    for bit, label in PIECES:
        ms = replica_ms(ALL & ~bit)
        print(f"| without {label} | {ms:.2f} | {ms / f:.2f} |")
    bare = replica_ms(0)
    print(f"| without all of them (the accumulator's shift column kept) | {bare:.2f} | {bare / f:.2f} |")
    ms = best(lean, x, theta, ga, gb, score, out_p, repeats=a.repeats)
    print(f"| lean: the rating updated in place, three probabilities written | {ms:.2f} | {ms / f:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
