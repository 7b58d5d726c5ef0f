"""Speed of matches of many sides through the compiled match loop: free-for-all contests of the size
of Codeforces (1,000 contests of 3,000 entrants), rated by every filter with a match kernel.

The stream: ``--contests`` free-for-all contests of ``--entrants`` entrants drawn from a pool of
``--pool`` competitors whose skills random-walk, placed by skill plus Gumbel noise (so the
finishing orders are Plackett-Luce), built once and excluded from the times. Each method runs ``method.run(matches)`` (:mod:`filters.match_run`) after a warm-up on a
small table (numba's cache load or compilation excluded); best of ``--repeats``, wall clock and
the CPU time of the thread (steadier on a shared machine; the target is read on it); one core
(the loop is serial). The target for TrueSkill, Weng-Lin (Plackett-Luce) and Elo-MMR is under 30 s for
the whole stream on one core (Elo-MMR's paper reports 31.4 s for Codeforces on 24 cores).
Methods whose update is quadratic in the entrants by definition (Weng-Lin's full Bradley-Terry
pairing, multiplayer Elo, Glicko-1 and -2, the EKF over all pairs) run the first ``--quadratic-contests`` contests
only, and their whole-stream time is extrapolated (reported as such).

Pairwise games are unchanged by the match loop (their loops are the same code); compare their
speed against an earlier commit with ``python benchmarks/ab_versions.py --old <commit>``.

Usage::

    python benchmarks/bench_matches.py                 # 1,000 x 3,000
    python benchmarks/bench_matches.py --quick         # 50 x 500, a few seconds
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from _common import git_describe, load, print_header, timed, versions

TARGET_SECONDS = 30.0


def _methods():
    """(label, factory, linear in the entrants) of every filter that rates matches here."""
    import filters

    out = [("TrueSkill", lambda: filters.TrueSkill(), True),
           ("WengLin (Plackett-Luce)", lambda: filters.WengLin(model="plackett_luce"), True)]
    if "elo_mmr" in filters.REGISTRY:
        out.append(("Elo-MMR", lambda: filters.REGISTRY["elo_mmr"](), True))
    out.append(("EKF (diagonal, Plackett-Luce)", lambda: filters.EKF(), True))
    out += [("WengLin (Bradley-Terry full)", lambda: filters.WengLin(model="bradley_terry"), False),
            ("Elo (multiplayer)", lambda: filters.Elo(), False),
            ("Glicko (one game a match)", lambda: filters.Glicko(), False),
            ("Glicko-2 (one game a match)", lambda: filters.Glicko2(), False)]
    return out


def _stream(contests: int, entrants: int, pool: int, seed: int):
    """Free-for-all contests built straight into the arrays of :class:`statespace.data.matches.Matches`
    (the library's simulator checks and labels every entry, which takes minutes at this size):
    skills N(1500, 350^2) drifting by N(0, 20^2) per contest, entrants drawn without replacement,
    places by skill plus Gumbel noise of scale 200 (so the orders are Plackett-Luce)."""
    from statespace.data.matches import Matches

    rng = np.random.default_rng(seed)
    skill = rng.normal(1500.0, 350.0, pool)
    member = np.empty(contests * entrants, np.int64)
    rank = np.empty(contests * entrants, np.int64)
    for c in range(contests):
        skill += rng.normal(0.0, 20.0, pool)
        who = rng.choice(pool, entrants, replace=False)
        perf = skill[who] + 200.0 * rng.gumbel(size=entrants)
        order = np.argsort(-perf, kind="stable")
        member[c * entrants:(c + 1) * entrants] = who[order]
        rank[c * entrants:(c + 1) * entrants] = np.arange(entrants)
    n = contests * entrants
    names = np.array([f"P{i:06d}" for i in range(pool)], dtype=object)
    return Matches(time=np.arange(contests, dtype=float), when=np.arange(contests, dtype=float),
                   match_ptr=np.arange(0, n + 1, entrants), side_ptr=np.arange(n + 1), member=member,
                   weight=np.ones(n), rank=rank, score=np.full(n, np.nan), names=names,
                   label=np.array([f"C{c:04d}" for c in range(contests)], dtype=object),
                   side_label=names[member], row=np.arange(n))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--contests", type=int, default=None, help="contests (1,000; --quick 50)")
    p.add_argument("--entrants", type=int, default=None, help="entrants per contest (3,000; --quick 500)")
    p.add_argument("--pool", type=int, default=None, help="competitors in the pool (30,000; --quick 2,000)")
    p.add_argument("--quadratic-contests", type=int, default=None,
                   help="contests for the methods quadratic in the entrants (50; --quick 10)")
    p.add_argument("--repeats", type=int, default=None, help="timed repeats, best reported (2; --quick 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quick", action="store_true", help="small sizes for a smoke test")
    a = p.parse_args(argv)
    q = a.quick
    contests = a.contests or (50 if q else 1000)
    entrants = a.entrants or (500 if q else 3000)
    pool = a.pool or (2000 if q else 30000)
    quad = min(a.quadratic_contests or (10 if q else 50), contests)
    repeats = a.repeats or (1 if q else 2)
    if entrants < 2 or contests < 1 or pool < entrants:
        p.error("need --entrants >= 2, --contests >= 1 and --pool >= --entrants")

    print_header("Matches of many sides: free-for-all contests through the match loop",
                 versions("numpy", "numba", "statespace"))
    print(f"commit: {git_describe()}")
    t0 = time.perf_counter()
    matches = _stream(contests, entrants, pool, a.seed)
    small = matches.take(range(min(3, contests)))
    first = matches.take(range(quad))
    print(f"stream: {contests:,} contests x {entrants:,} entrants from a pool of {pool:,} "
          f"({matches.member.size:,} entries), built in {time.perf_counter() - t0:.1f} s")
    print()
    print(f"{load()} at the start")
    print()
    print(f"| method | contests | wall s | CPU s | contests / s (CPU) | entries / s (CPU) | whole stream, CPU s | "
          f"under {TARGET_SECONDS:g} s |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    failed = False
    for label, make, linear in _methods():
        table = matches if linear else first
        method = make()
        method.run(small)  # warm-up: numba's cache load or compilation
        wall, seconds, _ = timed(lambda: method.run(table), repeats)
        n = table.n_matches
        whole = seconds * contests / n
        verdict = ("yes" if whole < TARGET_SECONDS else "NO") if linear else "(quadratic: extrapolated)"
        failed |= linear and whole >= TARGET_SECONDS
        print(f"| {label} | {n:,} | {wall:.2f} | {seconds:.2f} | {n / seconds:,.1f} | "
              f"{table.member.size / seconds:,.0f} | {whole:.1f} | {verdict} |")
        sys.stdout.flush()
    return 1 if failed and not q else 0


if __name__ == "__main__":
    raise SystemExit(main())
