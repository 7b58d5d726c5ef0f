"""TrueSkill and the three Weng-Lin filters on real games, scored online, with Elo and Glicko-2
for reference.

What it reproduces: no published table. Every number comes from running the filters through
the games online and scoring the last 10% by time (``statespace.compare(..., split=0.9,
mode="online")``: each held-out game is forecast from all games before it, then learned from).
No method gets a home advantage. The methods, all with their default constants unless named:

- ``trueskill``: ``TrueSkill()`` (mu 25, sigma 25/3, beta 25/6, tau 25/300 per game, draw
  probability left to the games: 0 on a table without draws such as ATP, else 0.10; see
  ``filters.draws``); its variants below leave it to the games too;
- ``trueskill, draw = training rate``: ``draw_probability`` set to the share of draws in the
  training part (the first 90%), which the scoring never sees;
- ``trueskill, beta=25/12``: half the performance noise (a skill lead counts for more);
- ``trueskill, tau=0.5``: six times the default dynamics noise per game;
- ``trueskill, dynamics=time``: ``tau^2`` per day since the competitor's last game instead
  of per game (``TrueSkill(dynamics="time")``, tau 25/300 per day);
- ``wenglin_bt``, ``wenglin_tm``, ``wenglin_pl``: ``WengLin(model)`` for Bradley-Terry,
  Thurstone-Mosteller (draw margin epsilon left to the games: 0 without draws, else 0.1) and
  Plackett-Luce (identical to Bradley-Terry for one-vs-one games, so its row repeats that one: a
  check, not a result);
- ``wenglin_tm, epsilon = TrueSkill's margin``: Thurstone-Mosteller with the one-vs-one draw
  margin ``trueskill`` uses on the games (``TrueSkill().resolved(games).draw_margin``: 0.7405 at
  beta 25/6 and draw probability 0.10 on the football tables, 0 on ATP); with the same constants the
  only difference from ``trueskill`` is Weng-Lin's variance factor ``gamma = sigma / c`` (and
  the ``kappa`` floor), so the paired difference of these two rows isolates it;
- ``elo k=20`` (``Elo(k=20)``) and ``glicko2`` (``Glicko2()``, each game its own period,
  ``period_days=30``) for reference.

For each data set the script prints one Markdown table: log loss and Brier score of the expected
score, accuracy (0.45/0.55 band, draws called), accuracy at 0.5 (decisive games), the
three-outcome log loss (only for methods that forecast draws: "n/a" for those that give draws
probability 0 on data with draws), and each method's difference in log loss from the best, with
the paired standard error over the same games (``delta ± se``; see docs/evaluation.md). Then
three paired differences: ``trueskill`` minus ``wenglin_tm`` at TrueSkill's margin, minus
``wenglin_bt`` and minus ``elo k=20``; and the median sigma of the two competitors right after
each scored game for five of the Gaussian-belief methods (how settled their beliefs are).

Data: ``nfl``, ``intl_football``, ``england_football`` and ``atp_tennis`` from
``statespace.datasets`` (``intl_football`` and ``nfl`` ship with the package; England and ATP are
fetched from their public sources on first use; or a data root given
as an argument; ``statespace.datasets.catalogue()`` lists sources and licences). Invalid rows are dropped with a message (the three ATP rows
with a player against himself). Data sets that are absent are skipped with a message; with none
found the script exits with status 2.

Usage::

    python examples/trueskill_real_data.py                     # all four data sets
    python examples/trueskill_real_data.py /path/to/data       # another data root
    python examples/trueskill_real_data.py --datasets nfl,atp_tennis
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

import statespace
from statespace import Games
from statespace.model import metrics
from _data import load_or_skip  # examples/ is on sys.path when a script runs
from filters import Elo, Glicko2, TrueSkill, WengLin

DATASETS = ("nfl", "intl_football", "england_football", "atp_tennis")
TS_MARGIN = "wenglin_tm, epsilon = TrueSkill's margin"
SIGMA_ROWS = ("trueskill", "trueskill, tau=0.5", "trueskill, dynamics=time", "wenglin_bt", TS_MARGIN)


def methods_for(train_draw_rate: float, games: Games) -> dict:
    """The methods compared (``train_draw_rate``: the share of draws in the training part; ``games``:
    the table, on which ``TrueSkill()`` learns its draw setting, whose margin the Thurstone-Mosteller
    row at TrueSkill's margin takes)."""
    return {
        "trueskill": TrueSkill(),
        "trueskill, draw = training rate": TrueSkill(draw_probability=train_draw_rate),
        "trueskill, beta=25/12": TrueSkill(beta=25 / 12),
        "trueskill, tau=0.5": TrueSkill(tau=0.5),
        "trueskill, dynamics=time": TrueSkill(dynamics="time"),
        "wenglin_bt": WengLin("bradley_terry"),
        "wenglin_tm": WengLin("thurstone_mosteller"),
        "wenglin_pl": WengLin("plackett_luce"),
        TS_MARGIN: WengLin("thurstone_mosteller", epsilon=TrueSkill().resolved(games).draw_margin),
        "elo k=20": Elo(k=20),
        "glicko2": Glicko2(),
    }


def _delta(d: float, se: float) -> str:
    d = 0.0 if round(d, 4) == 0 else d  # no "-0.0000"
    return f"{d:+.4f} ± {se:.4f}"


def markdown(table: pd.DataFrame) -> str:
    """The comparison as a Markdown table (best log loss first)."""
    lines = ["| method | log loss | Brier | accuracy | accuracy at 0.5 | 3-outcome log loss | Δ log loss ± se |",
             "|---|---|---|---|---|---|---|"]
    best = table.index[0]
    for name, row in table.iterrows():
        delta = "best" if name == best else _delta(row["delta_log_loss"], row["delta_se"])
        ll3 = "n/a" if not np.isfinite(row["log_loss_3"]) else f"{row['log_loss_3']:.4f}"
        lines.append(f"| {name} | {row['log_loss']:.4f} | {row['brier']:.4f} | {row['accuracy']:.4f} | "
                     f"{row['accuracy_50']:.4f} | {ll3} | {delta} |")
    return "\n".join(lines)


def measure(title: str, games: Games, split: float) -> pd.DataFrame:
    train, _ = games.split(split)
    p_draw = float(np.mean(train.score == 0.5))
    table = statespace.compare(methods_for(p_draw, games), games, split=split, mode="online")
    test = table.attrs["test"]
    first, last = test.time[test.order[0]], test.time[test.order[-1]]
    span = games.time[games.order[[0, -1]]].astype("datetime64[D]")
    desc = (f"{len(games):,} games, {games.n_players:,} competitors, {span[0]} to {span[1]}; scored: the last "
            f"{1 - split:.0%}, {len(test):,} games from "
            f"{np.datetime_as_string(first, unit='D')} to {np.datetime_as_string(last, unit='D')}; "
            f"draws {np.mean(test.score == 0.5):.1%} of the scored games, {p_draw:.1%} of the training games "
            f"(TrueSkill draw margin at that rate: {TrueSkill(draw_probability=p_draw).draw_margin + 0.0:.4f})")
    print(f"\n### {title}\n\n{desc}.\n")
    print(markdown(table))
    loss = {n: metrics.log_loss(test.score, p, per_game=True) for n, p in table.attrs["proba"].items()}
    methods = methods_for(p_draw, games)
    scored = np.isin(games.row[games.order], test.row)  # run._post is in time order
    sigmas = []
    for name in SIGMA_ROWS:
        post = methods[name].run(games)._post[scored]
        sigmas.append(f"{name}: {np.median(np.concatenate([post[:, 1], post[:, 3]])):.3f}")
    print("\nMedian sigma of the two competitors right after each scored game: " + "; ".join(sigmas))
    print("\nPaired differences in log loss (positive: trueskill is worse):")
    for other in (TS_MARGIN, "wenglin_bt", "elo k=20"):
        d, se = metrics.paired_difference(loss["trueskill"], loss[other])
        print(f"  trueskill minus {other}: {_delta(d, se)}")
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="TrueSkill and Weng-Lin on real games, scored online.")
    ap.add_argument("data", nargs="?", default=None,
                    help="data root holding <name>/games.csv (default: the shipped copies and the user cache; "
                         "see statespace.datasets)")
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help=f"comma-separated data sets under the data root (default: {','.join(DATASETS)})")
    ap.add_argument("--split", type=float, default=0.9, help="share of games (by time) before the scored part")
    args = ap.parse_args(argv)

    print(f"statespace {statespace.__version__}: TrueSkill and Weng-Lin, online, last {1 - args.split:.0%} scored")
    root = args.data
    found = 0
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        games = load_or_skip(name, root)
        if games is None:
            continue
        measure(name, games, args.split)
        found += 1
    if found == 0:
        print(f"\nno data set found under {root or 'the data home'} (looked for {args.datasets}); pass the data root as an argument",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
