"""What the choice of rating period costs Glicko-1 and Glicko-2, measured on real and simulated games.

What it reproduces: no published table. Every number comes from running ``filters.Glicko``,
``filters.Glicko2`` and, for reference, ``filters.Elo(k=20)`` with their default settings (no
home advantage unless ``--home`` is given) through the games online and scoring the last 10% by
time (``statespace.compare(..., split=0.9, mode="online")``: each held-out game is forecast from
all games before it, then learned from). The rating-period choices:

- each game its own period (the table has no period column), time counted as
  ``days / period_days`` with ``period_days`` = 1, 7, 30 (the default) and 365;
- weekly and monthly periods, ``games.with_periods(7)`` (7-day windows) and
  ``games.with_periods("month")`` (calendar months): all games of a period are forecast from
  the state before it and rated together; time is counted in periods;
- season periods, ``games.with_periods(column="season")``, where the data have a season column
  (NFL, England football); time is counted in seasons.

Every choice sees the same games and is scored on the same held-out games. For each data set
the script prints three Markdown tables:

1. every choice's log loss, Brier score, accuracy (0.45/0.55 band, draws called), accuracy at
   0.5 (decisive games) and its difference in log loss from the best, with the paired standard
   error over the same games (``delta ± se``; see docs/evaluation.md);
2. the cost of batching: weekly, monthly and season periods minus each game its own period
   with the same drift per unit of time (``period_days`` = 7, 30 and 365), paired;
3. the forecast form: Glickman's update-time expected score minus the default symmetric
   prediction form, for the default filters (each game its own period, ``period_days=30``);

and one line: Glicko-1 minus Glicko-2 at their defaults, paired.

Data: ``nfl``, ``intl_football``, ``england_football`` and ``atp_tennis`` from
``statespace.datasets`` (``intl_football`` and ``nfl`` ship with the package; England and ATP are
fetched from their public sources on first use; or a data root given
as an argument; ``statespace.datasets.catalogue()`` lists sources and licences; the three ATP
rows with a competitor against itself are dropped, with a message), and the simulated ``drifting`` scenario of ``statespace.scenarios`` (seed 0; skills
random-walk, so the forecast at the true skills is shown as the floor). Data sets that are
absent are skipped with a message; with none found the script exits with status 2 unless
``--scenario-only`` is given.

Usage::

    python examples/glicko_rating_periods.py                     # all data sets + the scenario
    python examples/glicko_rating_periods.py /path/to/data       # another data root
    python examples/glicko_rating_periods.py --scenario-only     # the simulated scenario only (fast)
    python examples/glicko_rating_periods.py --datasets nfl --home 60
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
from filters import Elo, Glicko, Glicko2

DATASETS = ("nfl", "intl_football", "england_football", "atp_tennis")


class OnPeriods:
    """A filter run on the games grouped into rating periods (``Games.with_periods``)."""

    def __init__(self, method, every=None, column=None):
        self.method, self.every, self.column = method, every, column

    def periods(self, games: Games) -> Games:
        if self.column is not None:
            return games.with_periods(column=self.column)
        return games.with_periods(self.every)

    @property
    def name(self) -> str:
        return self.method.name

    @property
    def model(self):
        return self.method.model

    def run(self, games: Games):
        return self.method.run(self.periods(games))

    def fit(self, games: Games):
        return self.run(games)


PERIOD_DAYS = (1, 7, 30, 365)
# a batched choice and the sequential one with the same drift per unit of time: their
# difference is the cost of rating a whole period from the state before it
PAIRS = (("weekly periods", "each game, period_days=7"),
         ("monthly periods", "each game, period_days=30"),
         ("season periods", "each game, period_days=365"))


def methods_for(games: Games, home: float = 0.0) -> dict:
    """The period choices compared on ``games`` (season periods only where there is a season)."""
    out = {"elo k=20": Elo(k=20, home=home)}
    for label, cls in (("glicko", Glicko), ("glicko2", Glicko2)):
        for days in PERIOD_DAYS:
            out[f"{label}, each game, period_days={days}"] = cls(period_days=days, home=home)
        out[f"{label}, weekly periods"] = OnPeriods(cls(home=home), 7)
        out[f"{label}, monthly periods"] = OnPeriods(cls(home=home), "month")
        if "season" in games.extra.columns:
            out[f"{label}, season periods"] = OnPeriods(cls(home=home), column="season")
    return out


def _delta(d: float, se: float) -> str:
    d = 0.0 if round(d, 4) == 0 else d  # no "-0.0000"
    return f"{d:+.4f} ± {se:.4f}"


def markdown(table: pd.DataFrame, extra_rows: list[tuple[str, float, float, float, float]] = ()) -> str:
    """The comparison as a Markdown table (best log loss first)."""
    lines = ["| method | log loss | Brier | accuracy | accuracy at 0.5 | Δ log loss ± se |",
             "|---|---|---|---|---|---|"]
    best = table.index[0]
    for name, row in table.iterrows():
        delta = "best" if name == best else _delta(row["delta_log_loss"], row["delta_se"])
        lines.append(f"| {name} | {row['log_loss']:.4f} | {row['brier']:.4f} | {row['accuracy']:.4f} | "
                     f"{row['accuracy_50']:.4f} | {delta} |")
    for name, ll, br, acc, acc50 in extra_rows:
        lines.append(f"| *{name}* | {ll:.4f} | {br:.4f} | {acc:.4f} | {acc50:.4f} | |")
    return "\n".join(lines)


def batching_cost(table: pd.DataFrame) -> str:
    """Each batched choice minus the sequential one with the same drift per unit of time."""
    test = table.attrs["test"]
    loss = {n: metrics.log_loss(test.score, p, per_game=True) for n, p in table.attrs["proba"].items()}
    lines = ["| filter | batched | same drift, each game its own period | Δ log loss ± se |", "|---|---|---|---|"]
    for label in ("glicko", "glicko2"):
        for batched, sequential in PAIRS:
            b, s = f"{label}, {batched}", f"{label}, {sequential}"
            if b in loss and s in loss:
                d, se = metrics.paired_difference(loss[b], loss[s])
                lines.append(f"| {label} | {batched} | {sequential} | {_delta(d, se)} |")
    return "\n".join(lines)


def forecast_form(table: pd.DataFrame, games: Games, split: float, home: float) -> str:
    """Glickman's update-time expected score as the forecast, minus the default prediction form
    (each game its own period, period_days=30, the defaults otherwise)."""
    test = table.attrs["test"]
    other = statespace.compare({"glicko": Glicko(form="update", home=home),
                                "glicko2": Glicko2(form="update", home=home)}, games, split=split, mode="online")
    lines = ["| filter | log loss, prediction form | log loss, update-time form | Δ log loss ± se |",
             "|---|---|---|---|"]
    for label in ("glicko", "glicko2"):
        base = metrics.log_loss(test.score, table.attrs["proba"][f"{label}, each game, period_days=30"], per_game=True)
        upd = metrics.log_loss(test.score, other.attrs["proba"][label], per_game=True)
        d, se = metrics.paired_difference(upd, base)
        lines.append(f"| {label} | {base.mean():.4f} | {upd.mean():.4f} | {_delta(d, se)} |")
    return "\n".join(lines)


def measure(title: str, games: Games, split: float, home: float = 0.0,
            truth: np.ndarray | None = None) -> pd.DataFrame:
    table = statespace.compare(methods_for(games, home), games, split=split, mode="online")
    test = table.attrs["test"]
    first, last = test.time[test.order[0]], test.time[test.order[-1]]
    n_periods = {k: np.unique(games.with_periods(k).period).size for k in (7, "month")}
    span = games.time[games.order[[0, -1]]].astype("datetime64[D]")
    desc = (f"{len(games):,} games, {games.n_players:,} competitors, {span[0]} to {span[1]}; scored: the last "
            f"{1 - split:.0%}, {len(test):,} games from "
            f"{np.datetime_as_string(first, unit='D')} to {np.datetime_as_string(last, unit='D')}; "
            f"draws {np.mean(games.score == 0.5):.1%}; {n_periods[7]:,} weekly and "
            f"{n_periods['month']:,} monthly periods")
    if "season" in games.extra.columns:
        desc += f", {games.extra['season'].nunique():,} seasons"
    if home:
        desc += f"; home advantage {home:g} points for every method"
    extra = []
    if truth is not None:
        at = pd.Index(games.row).get_indexer(test.row)
        p = truth[at]
        extra.append(("forecast at the true skills", metrics.log_loss(test.score, p), metrics.brier(test.score, p),
                      metrics.accuracy(test.score, p), metrics.accuracy(test.score, p, band=None)))
    print(f"\n### {title}\n\n{desc}.\n")
    print(markdown(table, extra))
    print("\nCost of batching (batched minus each game its own period, same drift per unit of time):\n")
    print(batching_cost(table))
    print("\nForecast form (each game its own period, period_days=30): update-time minus prediction form:\n")
    print(forecast_form(table, games, split, home))
    loss = {n: metrics.log_loss(test.score, table.attrs["proba"][f"{n}, each game, period_days=30"], per_game=True)
            for n in ("glicko", "glicko2")}
    d, se = metrics.paired_difference(loss["glicko"], loss["glicko2"])
    print(f"\nDefaults (each game its own period, period_days=30): glicko minus glicko2, log loss {_delta(d, se)}")
    return table


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Glicko-1/2 under different rating periods, scored online.")
    ap.add_argument("data", nargs="?", default=None,
                    help="data root holding <name>/games.csv (default: the shipped copies and the user cache; "
                         "see statespace.datasets)")
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help=f"comma-separated data sets under the data root (default: {','.join(DATASETS)})")
    ap.add_argument("--scenario", default="drifting", choices=statespace.scenarios.NAMES,
                    help="simulated scenario also measured (default: drifting)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the scenario")
    ap.add_argument("--scenario-only", action="store_true", help="measure the simulated scenario only")
    ap.add_argument("--split", type=float, default=0.9, help="share of games (by time) before the scored part")
    ap.add_argument("--home", type=float, default=0.0,
                    help="home advantage in rating points for every method, on the real data (default 0)")
    args = ap.parse_args(argv)

    print(f"statespace {statespace.__version__}: Glicko rating periods, online, last {1 - args.split:.0%} scored")
    found = 0
    if not args.scenario_only:
        root = args.data
        for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            games = load_or_skip(name, root)
            if games is None:
                continue
            measure(name, games, args.split, home=args.home)
            found += 1
        if found == 0:
            print(f"\nno data set found under {root or 'the data home'} (looked for {args.datasets}); pass the data root as an "
                  "argument, or use --scenario-only", file=sys.stderr)
            return 2
    sim = statespace.scenarios.get(args.scenario, seed=args.seed)
    measure(f"scenario {sim.name} (seed {args.seed})", sim.games, args.split, truth=sim.true_proba())
    return 0


if __name__ == "__main__":
    sys.exit(main())
