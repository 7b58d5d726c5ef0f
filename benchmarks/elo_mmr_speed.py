"""Speed of Elo-MMR (filters.elo_mmr): free-for-all contests of 3,000 entrants (Codeforces' size)
drawn from a pool of competitors, random ranks, after a warm-up run that compiles. Prints the wall
and CPU time in all and per contest. Usage:
``python benchmarks/elo_mmr_speed.py [n_contests (1000)] [pool (30000)] [entrants (3000)]``."""
import sys
import time

import numpy as np

from filters.elo_mmr import EloMMR
from statespace.data.matches import Matches


def build(n_contests, n_entrants, pool, seed=0):
    rng = np.random.default_rng(seed)
    member = np.concatenate([rng.choice(pool, n_entrants, replace=False) for _ in range(n_contests)]).astype(np.int64)
    rank = np.concatenate([rng.permutation(n_entrants) for _ in range(n_contests)]).astype(np.int64)
    n_sides = n_contests * n_entrants
    return Matches(time=np.arange(n_contests, dtype=float), when=np.arange(n_contests, dtype=float),
                   match_ptr=np.arange(0, n_sides + 1, n_entrants, dtype=np.int64),
                   side_ptr=np.arange(n_sides + 1, dtype=np.int64), member=member, weight=np.ones(n_sides),
                   rank=rank, score=np.full(n_sides, np.nan),
                   names=np.array([f"p{i}" for i in range(pool)], dtype=object),
                   label=np.array([str(i) for i in range(n_contests)], dtype=object),
                   side_label=np.array([f"p{i}" for i in member], dtype=object), row=np.arange(n_sides))


def main(argv):
    n = int(argv[1]) if len(argv) > 1 else 1000
    pool = int(argv[2]) if len(argv) > 2 else 30000
    entrants = int(argv[3]) if len(argv) > 3 else 3000
    EloMMR().run(build(3, entrants, max(pool, entrants), 1))  # warm-up: compiles
    mt = build(n, entrants, pool)
    wall, cpu = time.perf_counter(), time.process_time()
    EloMMR().run(mt)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{n} contests x {entrants} entrants, pool {pool}: {wall:.1f} s wall ({1e3 * wall / n:.1f} ms a contest), "
          f"{cpu:.1f} s CPU ({1e3 * cpu / n:.1f} ms a contest)")


if __name__ == "__main__":
    main(sys.argv)
