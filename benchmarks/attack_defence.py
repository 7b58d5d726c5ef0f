"""Do two skills per side (attack and defence) forecast football better than one? Held-out
three-outcome log loss on real football, with paired standard errors, and what a run costs.

For each data set (``intl_football``, ``england_football`` under the shared data folder; absent ones
are skipped), by time: ``statespace.auto`` tunes two Goals candidates on the first 90% only, the
same search settings otherwise (drifting home advantage; England: with mean reversion, the
structure the default search picks there):

- **one skill**: ``Variant("goals", "drifting", ...)`` (negative binomial counts);
- **attack/defence**: the same with ``skills=2`` (``SkillModel.openness_var``, ``openness_drift``),
  started from the one-skill candidate's tuned numbers.

Each is run online through every game; the last 10% are scored (each game forecast before its
result is seen). Printed: the training objective auto chose on, the held-out log loss, the
difference two - one with its paired standard error, the tuned openness, the seconds of one run
through all games, and the sd of the openness over the competitors at the end.

Usage::

    python benchmarks/attack_defence.py
    python benchmarks/attack_defence.py --datasets intl_football
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from _common import add_dataset_args, cpu_name, each_dataset, git_describe, load, versions

DATASETS = ("intl_football", "england_football")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dataset_args(p, DATASETS)
    args = p.parse_args()

    import statespace as ss
    from statespace.ensemble.auto import Variant
    from statespace.model import metrics

    print(f"# Attack and defence against one skill: held-out log loss ({git_describe()}, "
          f"{time.strftime('%Y-%m-%d')})\n")
    print(f"{cpu_name()}; {load()}; {versions('numpy', 'numba', 'scipy')}\n")
    for name, games in each_dataset(args):
        cut = int(round(0.9 * len(games)))
        test = np.sort(games.order[cut:])
        y = games.score[test]
        reversion = name == "england_football"
        one = Variant("goals", "drifting", reversion=reversion)
        two = Variant("goals", "drifting", reversion=reversion, skills=2)
        t = time.perf_counter()
        fit = ss.auto(games, split=0.9, progress=False, candidates=[one, two])
        sec = time.perf_counter() - t
        print(f"## {name}: {cut:,} training games, {len(test):,} held out (both tuned in {sec:.0f} s)\n")
        print("| candidate | training objective | held-out log_loss_3 | one run, s | tuned openness |")
        print("|---|---:|---:|---:|---|")
        losses = {}
        for v in (one, two):
            method = fit.result.methods[v.label]
            t = time.perf_counter()
            run = method.run(games)
            run_s = time.perf_counter() - t
            losses[v.skills] = metrics.log_loss_3(y, run.proba[test], per_game=True)
            m = method.model
            extra = ""
            if v.skills == 2:
                board = run.ratings()
                extra = (f"openness_var {m.openness_var:.4g} (sd {math.sqrt(m.openness_var):.1f} points), "
                         f"openness_drift {m.openness_drift:.3g}/day; sd over competitors at the end "
                         f"{board['openness'].std():.1f} points")
            print(f"| {v.label} | {fit.table.loc[v.label, 'train_score']:.5f} | {losses[v.skills].mean():.5f} | "
                  f"{run_s:.2f} | {extra} |")
        d, se = metrics.paired_difference(losses[2], losses[1])
        print(f"\nattack/defence - one skill, held out: {d:+.5f} (paired se {se:.5f}; {d / se:+.1f} se); "
              f"auto's choice on the training games: {fit.chosen}\n")


if __name__ == "__main__":
    main()
