"""``statespace rate``: fit one method on all games and print the leaderboard.

::

    statespace rate (CSV | --dataset NAME | --scenario NAME) [--method elo | --auto] [--top N] [--periods SPEC]
                    [--drop-invalid] [--quiet] [--json]

Its options (:func:`add_parser`) and the run (:func:`main`): the leaderboard as a table for people
or as JSON. ``statespace.app.cli`` wires it in.
"""

from __future__ import annotations

import argparse
import json
import math

from statespace.app.cli_auto import add_observations, auto_json, auto_line, check_group, group, observations
from statespace.app.cli_games import DROP_HELP, PERIODS_HELP, drop_unscorable, load, seed
from statespace.app.cli_output import QUIET_HELP, finite, plural
from statespace.methods.specs import CLIError, parse_method, split_specs

__all__ = ["add_parser", "main"]


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``rate`` subcommand to ``subparsers`` (of ``statespace.app.cli.build_parser``)."""
    r = subparsers.add_parser("rate", help="fit a method on all games and print a leaderboard",
                              description="Fit one method on all games and print the leaderboard.")
    r.add_argument("data", nargs="?", metavar="CSV", help="games CSV: time,a,b,score[,neutral][,...]")
    r.add_argument("--dataset", metavar="NAME", help="rate a real data set by name (see `statespace datasets`)")
    r.add_argument("--scenario", metavar="NAME", help="rate a built-in scenario instead of a CSV (NAME or "
                   "NAME:KEY=VALUE,...)")
    r.add_argument("--seed", type=seed, default=0, help="seed of the scenario (default 0)")
    r.add_argument("--method", default=None, metavar="SPEC",
                   help="method name or name:key=value,... (default elo)")
    r.add_argument("--auto", action="store_true",
                   help="rate with statespace.auto's choice among EKF variants, chosen and tuned on these games "
                        "(instead of --method)")
    add_observations(r)
    r.add_argument("--top", type=int, default=20, metavar="N", help="show the best N (default 20; 0 = all)")
    r.add_argument("--periods", metavar="SPEC", help=PERIODS_HELP)
    r.add_argument("--drop-invalid", action="store_true", help=DROP_HELP)
    r.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    r.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    r.set_defaults(func=main)
    return r


def main(args, out, err) -> int:
    """Run ``rate``: 0 when the leaderboard is written; a user error raises :class:`CLIError`."""
    if args.top < 0:
        raise CLIError(f"--top must be >= 0 (0 = everyone), got {args.top}")
    given = [x for x in (args.data, args.dataset, args.scenario) if x is not None]
    if not given:
        raise CLIError("give a games CSV file (or --dataset NAME, or --scenario NAME)")
    if len(given) > 1:
        raise CLIError("give one of a games CSV file, --dataset and --scenario, not several")
    if args.auto and args.method is not None:
        raise CLIError(f"give either --method or --auto, not both (--method {args.method})")
    observations(args)  # --observations without --auto, or an unknown name: said before any work
    group(args)
    games, source, _ = load(args, err)
    check_group(args, games)
    spec = "elo" if args.method is None else args.method
    if args.auto:
        from statespace.ensemble.auto import Auto

        method = Auto(observations=observations(args), group=group(args), progress=False if args.quiet else None)
    else:
        if len(split_specs(spec)) != 1:
            raise CLIError(f"--method takes one method, got {spec!r}")
        method = parse_method(spec)
        games = drop_unscorable([method], games, args, err)
    import numpy as np
    import pandas as pd

    try:
        fitted = method.fit(games)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.auto:
        spec, method = "auto", fitted.method
    board = fitted.ratings()
    n_rated = len(board)
    shown = board if args.top == 0 else board.head(args.top)
    table = pd.DataFrame({"rank": np.arange(1, len(shown) + 1), "competitor": shown["player"].astype(str),
                          "rating": shown["mean"].astype(float)})
    if "sd" in shown.columns:
        table["sd"] = shown["sd"].astype(float).to_numpy()
    table["games"] = shown["games"].astype(int).to_numpy()
    if args.json:
        meta = {"source": source, "method": spec, "spec": repr(method), "n_games": len(games),
                "n_competitors": n_rated, "periods": args.periods}
        if args.auto:
            meta["auto"] = auto_json(fitted.result)
        records = [{k: finite(v) for k, v in rec.items()} for rec in table.to_dict(orient="records")]
        print(json.dumps({**meta, "ratings": records}, indent=2), file=out)
        return 0
    what = "everyone" if args.top == 0 or args.top >= n_rated else f"top {len(shown)} of {n_rated:,}"
    if args.auto:
        print(auto_line(fitted.result, "the rated games"), file=out)
    print(f"{method!r} on {source}: {plural(len(games), 'game')}, {plural(n_rated, 'rated competitor')}; "
          f"{what}", file=out)
    print(file=out)
    cells = [["rank", "competitor", "rating"] + (["sd"] if "sd" in table else []) + ["games"]]
    # one decimal on the Elo scale; more where the ratings spread less (Colley's lie in [0, 1])
    spread = float(np.ptp(table["rating"])) if len(table) > 1 else 0.0
    places = 1 if not 0 < spread < 10 else min(6, 2 - int(math.floor(math.log10(spread))))
    for r in table.itertuples(index=False):
        row = [str(r.rank), str(r.competitor), f"{r.rating:.{places}f}"]
        if "sd" in table:
            row.append(f"{r.sd:.{places}f}")
        row.append(str(r.games))
        cells.append(row)
    widths = [max(len(c[j]) for c in cells) for j in range(len(cells[0]))]
    for i, row in enumerate(cells):
        print("  ".join(c.ljust(w) if j == 1 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))),
              file=out)
        if i == 0:
            print("  ".join("-" * w for w in widths), file=out)
    return 0
