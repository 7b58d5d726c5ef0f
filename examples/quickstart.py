"""Quickstart: simulate games from the shared skill model, rate them with Elo, compare settings.

What it reproduces: nothing published. Every number printed comes from a built-in, seeded
simulated scenario (``statespace.scenarios``; default ``drifting``: 40 competitors, 4,000 games
over 1,000 days, skills random-walking), so the source of the figures is this script itself;
rerunning it with the same ``--seed`` prints the same table.

Steps:

1. ``statespace.scenarios.get(name, seed)`` draws the games and keeps the true skills;
2. ``statespace.compare`` scores Elo with several gains K on the last 30% of the games (by
   time), twice: ``frozen`` (fitted on the first 70%, forecasting the rest without learning)
   and ``online`` (each held-out game forecast from everything before it, then learned from);
3. the forecast at the true skills is scored on the same games: the best any method can do;
4. with ``--plot out.png``, the best setting's rating trajectories are drawn against the true
   skills (needs ``statespace.methods.plots``; skipped with a note if it is not available).

Usage::

    python examples/quickstart.py
    python examples/quickstart.py --scenario balanced --seed 3 --plot trajectories.png
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

import statespace
from statespace.model import metrics
from filters import Elo

GAINS = (8, 16, 24, 32, 48)
COLUMNS = ["n_test", "log_loss", "brier", "accuracy", "delta_log_loss", "delta_se"]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Compare Elo settings on a simulated scenario.")
    p.add_argument("--scenario", default="drifting", choices=statespace.scenarios.NAMES)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--split", type=float, default=0.7, help="share of games (by time) used to train")
    p.add_argument("--plot", metavar="PNG", default=None,
                   help="write the best setting's trajectories against the truth to this PNG")
    args = p.parse_args(argv)

    sim = statespace.scenarios.get(args.scenario, seed=args.seed)
    games = sim.games
    print(f"scenario {sim.name!r} (seed {args.seed}): {games}")
    print(" ".join(sim.description.split()))
    print(f"draws: {np.mean(games.score == 0.5):.1%} of games")

    methods = {f"elo k={k}": Elo(k=k) for k in GAINS}
    with pd.option_context("display.width", 120, "display.float_format", "{:.4f}".format):
        tables = {}
        for mode in ("frozen", "online"):
            table = statespace.compare(methods, games, split=args.split, mode=mode)
            tables[mode] = table
            how = ("fitted on the first {:.0%} of games, forecasting the rest without learning"
                   if mode == "frozen" else
                   "each of the last {:.0%} of games forecast from all games before it, then learned")
            share = args.split if mode == "frozen" else 1 - args.split
            print(f"\n{mode}: {how.format(share)} (best log loss first)")
            print(table[COLUMNS].to_string())

    # the forecast at the true skills, on the same held-out games: the floor for any method
    test = tables["online"].attrs["test"]
    at = pd.Index(games.row).get_indexer(test.row)
    true_p = sim.true_proba()[at]
    print(f"\nforecast at the true skills on the same {len(test):,} games: "
          f"log loss {metrics.log_loss(test.score, true_p):.4f}, brier {metrics.brier(test.score, true_p):.4f}")

    best = tables["online"].index[0]
    print(f"best online setting: {best}")
    print("\nfinal leaderboard of the best setting (all games), top 5:")
    fitted = methods[best].fit(games)
    with pd.option_context("display.float_format", "{:.1f}".format):
        print(fitted.ratings()[["player", "mean", "games"]].head(5).to_string(index=False))

    if args.plot:
        try:
            from statespace.methods import plots
        except ImportError:
            print(f"\nstatespace.plots is not available; no plot written to {args.plot}")
        else:
            import matplotlib.pyplot as plt
            ax = plots.plot_trajectories(fitted, truth=sim.truth)
            ax.figure.savefig(args.plot, dpi=120)
            plt.close(ax.figure)
            print(f"\ntrajectories of {best} against the true skills written to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
