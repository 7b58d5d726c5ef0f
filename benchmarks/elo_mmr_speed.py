"""Speed of Elo-MMR (filters.elo_mmr): 1,000 free-for-all contests of 3,000 entrants over a pool of
30,000 competitors (random ranks), after a warm-up run that compiles. Usage:
``python benchmarks/elo_mmr_speed.py [n_contests]``."""
import time, sys
import numpy as np
from statespace.data.matches import Matches
from filters.elo_mmr import EloMMR

def build(n_contests, n_entrants, pool, seed=0):
    rng = np.random.default_rng(seed)
    member = np.concatenate([rng.choice(pool, n_entrants, replace=False) for _ in range(n_contests)]).astype(np.int64)
    rank = np.concatenate([rng.permutation(n_entrants) for _ in range(n_contests)]).astype(np.int64)
    n_sides = n_contests * n_entrants
    return Matches(time=np.arange(n_contests, dtype=float), when=np.arange(n_contests, dtype=float),
                   match_ptr=np.arange(0, n_sides + 1, n_entrants, dtype=np.int64),
                   side_ptr=np.arange(n_sides + 1, dtype=np.int64), member=member, weight=np.ones(n_sides),
                   rank=rank, score=np.full(n_sides, np.nan), names=np.array([f"p{i}" for i in range(pool)], dtype=object),
                   label=np.array([str(i) for i in range(n_contests)], dtype=object), side_label=np.array([f"p{i}" for i in member], dtype=object), row=np.arange(n_sides))

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
EloMMR().run(build(3, 3000, 30000, 1))  # warm-up
mt = build(n, 3000, 30000)
t = time.perf_counter()
r = EloMMR().run(mt)
print(f"{n} contests x 3000 entrants: {time.perf_counter() - t:.1f} s")
