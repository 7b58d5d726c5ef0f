"""Does ``statespace.auto``'s goal model beat the pick it made before Goals was a default? Held-out
three-outcome log loss on real football, with paired standard errors.

For each data set (``intl_football``, ``england_football`` under the shared data folder; absent
ones are skipped), by time: ``statespace.auto(games, split=0.9, ...)`` chooses and tunes on the first
90% only and runs its pick online through every game; the last 10% are scored (each game forecast
before its result is seen). Two searches, both with default settings otherwise:

- **before**: ``observations=("outcome", "margin")``, the search as it was before Goals was tried by
  default (the pick then: Margin on both data sets);
- **now**: the default search (outcome, margin and, where the scores are goal counts, Goals under its
  laws of the counts, with and without a drifting draw tendency).

Printed: each search's pick, its seconds, its held-out log loss; the difference now - before with
its paired standard error (``statespace.model.metrics.paired_difference``) and their ratio; the
held-out log loss of every Goals candidate of the search (each tuned on the training games); the
draw rate against the mean forecast probability of a draw on the held-out games, and decade by
decade over all games (one-step-ahead forecasts).

Usage::

    python benchmarks/goals_accuracy.py
    python benchmarks/goals_accuracy.py --datasets england_football
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _common import add_dataset_args, cpu_name, each_dataset, git_describe, load, versions

DATASETS = ("intl_football", "england_football")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dataset_args(p, DATASETS)
    args = p.parse_args()

    import statespace as ss
    from statespace.model import metrics

    print(f"# Goals against the pick before it: held-out log loss ({git_describe()}, {time.strftime('%Y-%m-%d')})\n")
    print(f"{cpu_name()}; {load()}; {versions('numpy', 'numba', 'scipy')}\n")
    for name, games in each_dataset(args):
        cut = int(round(0.9 * len(games)))
        test = np.sort(games.order[cut:])
        y = games.score[test]
        fits, losses = {}, {}
        for label, options in (("before", {"observations": ("outcome", "margin")}), ("now", {})):
            t = time.perf_counter()
            fit = ss.auto(games, split=0.9, progress=False, **options)
            sec = time.perf_counter() - t
            every = fit.method.run(games).proba
            proba = every[test]
            fits[label] = (fit, sec, proba, every)
            losses[label] = metrics.log_loss_3(y, proba, per_game=True)
        print(f"## {name}: {cut:,} training games, {len(test):,} held out\n")
        print("| search | pick | seconds | held-out log_loss_3 | P(draw) forecast vs draw rate |")
        print("|---|---|---:|---:|---|")
        for label, (fit, sec, proba, _) in fits.items():
            print(f"| {label} | {fit.chosen} | {sec:.1f} | {losses[label].mean():.5f} | "
                  f"{proba[:, 1].mean():.4f} vs {np.mean(y == 0.5):.4f} |")
        diff, se = metrics.paired_difference(losses["now"], losses["before"])
        print(f"\nnow - before: {diff:+.5f} (paired se {se:.5f}; {diff / se:+.1f} se)\n")
        decade = (games.time.astype("datetime64[Y]").astype(int) + 1970) // 10 * 10
        print("| decade | games | draw rate | P(draw), before's pick | P(draw), now's pick |")
        print("|---|---:|---:|---:|---:|")
        for dec in np.unique(decade):
            m = decade == dec
            print(f"| {dec}s | {int(m.sum()):,} | {np.mean(games.score[m] == 0.5):.3f} | "
                  f"{fits['before'][3][m, 1].mean():.3f} | {fits['now'][3][m, 1].mean():.3f} |")
        print("\n(one-step-ahead forecasts of every game; the last 10% are the held-out games)\n")
        fit = fits["now"][0]
        rows = [(k, m) for k, m in fit.result.methods.items() if m.variant.observation == "goals"]
        if rows:
            print("| Goals candidate (tuned on training) | training log_loss_3 | held-out log_loss_3 | vs before (se) |")
            print("|---|---:|---:|---:|")
            for label, m in rows:
                lm = metrics.log_loss_3(y, m.run(games).proba[test], per_game=True)
                dd, s = metrics.paired_difference(lm, losses["before"])
                print(f"| {label} | {fit.table.loc[label, 'train_score']:.5f} | {lm.mean():.5f} | "
                      f"{dd:+.5f} ({dd / s:+.1f}) |")
            print()


if __name__ == "__main__":
    main()
