"""Does a home advantage and draw tendency per group pay on real football? Held-out three-outcome
log loss of ``auto``'s pick with and without its parts per group.

For each data set (``intl_football`` grouped by ``tournament``, ``england_football`` by ``tier``;
absent ones are skipped), by time: ``statespace.auto(games, split=0.9, candidates=[pick,
grouped(pick)])`` tunes both on the first 90% only (the grouped one started from the pick's
optimum, as ``auto(group=...)``'s last stage does) and chooses by training score; each is then run
online through every game and the last 10% are scored. ``pick`` is the default search's choice
on these data sets (``benchmarks/goals_accuracy.py``): Goals (negative binomial) with a drifting home
advantage and drifting draws (England: and mean reversion).

Printed: each candidate's training score, tuned settings and seconds; its held-out log loss; the
difference grouped - pick with its paired standard error
(``statespace.model.metrics.paired_difference``); which one ``auto`` chose; and the groups with
the largest and smallest parts of the home advantage and draw tendency.

Usage::

    python benchmarks/group_effects.py
    python benchmarks/group_effects.py --datasets england_football
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from _common import add_dataset_args, cpu_name, each_dataset, git_describe, load, versions

DATASETS = ("intl_football", "england_football")
#: the grouping column and whether the pick has mean reversion, by data set
SETUP = {"intl_football": ("tournament", False), "england_football": ("tier", True)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dataset_args(p, DATASETS)
    args = p.parse_args()

    import pandas as pd

    import statespace as ss
    from statespace.ensemble.auto import Variant
    from statespace.ensemble.auto_search import grouped
    from statespace.model import metrics

    pd.set_option("display.width", 200)
    print(f"# Effects by group: held-out log loss ({git_describe()}, {time.strftime('%Y-%m-%d')})\n")
    print(f"{cpu_name()}; {load()}; {versions('numpy', 'numba', 'scipy')}\n")
    for name, games in each_dataset(args):
        column, reversion = SETUP[name]
        pick = Variant("goals", "drifting", reversion, draws="drifting")
        by_group = grouped(pick, column)
        cut = int(round(0.9 * len(games)))
        test = np.sort(games.order[cut:])
        y = games.score[test]
        t = time.perf_counter()
        fit = ss.auto(games, split=0.9, candidates=[pick, by_group], progress=False)
        sec = time.perf_counter() - t
        methods = fit.method.tuning.methods
        print(f"## {name} ({len(games):,} games, {len(games.groups(column)[0])} groups of {column!r}; "
              f"auto chose {fit.chosen!r} in {sec:.0f} s)\n")
        losses = {}
        for v in (pick, by_group):
            row = fit.table.loc[v.label]
            losses[v.label] = metrics.log_loss_3(y, methods[v.label].run(games).proba[test], per_game=True)
            shown = ", ".join(f"{k}={ss_fmt(x)}" for k, x in row["settings"].items())
            print(f"- {v.label}: training {row['train_score']:.5f}, held out {losses[v.label].mean():.5f} "
                  f"({row['tune_seconds']:.0f} s); {shown}")
        diff, se = metrics.paired_difference(losses[by_group.label], losses[pick.label])
        print(f"\ngrouped - pick, held out: {diff:+.5f}, paired se {se:.5f} ({diff / se:+.1f} se)\n")
        g = methods[by_group.label]
        effects = g.ekf.group_effects(g.run(games).state)
        counts = pd.Series(games.groups(column)[1]).value_counts()
        effects["games"] = [int(counts.get(i, 0)) for i in range(len(effects))]
        big = effects[effects["games"] >= 200].sort_values("home_part")
        print(f"groups with at least 200 games ({len(big)}), by their part of the home advantage (rating points) "
              f"and of the draws' log-odds:\n")
        print("```")
        print(big.round(3).to_string())
        print("```\n")


def ss_fmt(x) -> str:
    from statespace.ensemble.auto_candidate import fmt

    return fmt(x)


if __name__ == "__main__":
    main()
