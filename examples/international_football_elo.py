"""Elo on 150 years of international football: which gain K and home advantage forecast best?

What it reproduces: no published table. The numbers come from the data set
``intl_football`` of ``statespace.datasets`` (49,520 men's internationals, 1872 to 2026, from
martj42/international_results ``results.csv``, CC0),
rated by ``filters.Elo`` with K in {20, 40, 60} and a home advantage of 0 or 100 points
(applied to ``a`` in games not flagged neutral). Each setting runs through all games online and
is scored on the last 10% by time (``statespace.compare(mode="online", split=0.9)``): every
held-out game is forecast from all games before it, then learned from. Draws (about 23% of
games) count as half a win in the log loss and Brier score; Elo forecasts no draws, so the
three-outcome log loss does not apply to it.

The data ship with the package: ``statespace.datasets.load("intl_football")`` reads them from
inside it; or pass a path (another copy: the CSV, its folder, or a data root).

Usage::

    python examples/international_football_elo.py
    python examples/international_football_elo.py my_copy/games.csv
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

import statespace
from statespace.data import datasets
from filters import Elo

COLUMNS = ["n_test", "log_loss", "brier", "accuracy", "accuracy_50", "delta_log_loss", "delta_se", "fit_seconds"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Compare Elo settings online on international football results.")
    ap.add_argument("path", nargs="?", default=None,
                    help="games.csv, its folder or a data root (default: the copy shipped with the package; "
                         "see statespace.datasets)")
    ap.add_argument("--split", type=float, default=0.9, help="share of games (by time) before the scored part")
    args = ap.parse_args(argv)

    try:
        path = datasets.path("intl_football", args.path)
        games = datasets.load("intl_football", args.path, errors="raise")
    except datasets.DatasetNotFound as exc:
        print(f"international football: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: {games}")
    print(f"draws: {np.mean(games.score == 0.5):.1%}; neutral venues: {np.mean(games.neutral):.1%}")

    methods = {f"elo k={k} home={h}": Elo(k=k, home=h) for k in (20, 40, 60) for h in (0, 100)}
    table = statespace.compare(methods, games, split=args.split, mode="online")
    test = table.attrs["test"]
    first, last = test.time[test.order[0]], test.time[test.order[-1]]
    print(f"\nonline forecasts of the last {1 - args.split:.0%} of games ({len(test):,} games, "
          f"{np.datetime_as_string(first, unit='D')} to {np.datetime_as_string(last, unit='D')}), "
          "best log loss first:")
    with pd.option_context("display.width", 140, "display.float_format", "{:.4f}".format):
        print(table[COLUMNS].to_string())
    best = table.index[0]
    print(f"\nbest: {best}; delta_se is the paired standard error of each difference from it, "
          "over the same games.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
