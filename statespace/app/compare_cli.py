"""``statespace compare``: score methods on held-out games (:func:`statespace.evaluation.compare.compare`);
on matches of many sides, :mod:`statespace.app.compare_matches_cli`.

::

    statespace compare [--data CSV | --dataset NAME | --scenario NAME] [--methods elo,elo_fide:home=60] [--auto] [--split 0.7]
                       [--mode frozen|online|walk_forward] [--every BLOCK] [--periods SPEC]
                       [--drop-invalid] [--quiet] [--json] [--plot FILE] [--seed N]

Its options (:func:`add_parser`), the run (:func:`main`) and the table it prints, as text
(:func:`format_table`, with its footnote) or as JSON. ``statespace.app.cli`` wires it in.
"""

from __future__ import annotations

import argparse
import json
import math
import time

from statespace.app.cli_auto import add_observations, auto_json, auto_line, check_group, group, observations
from statespace.app.cli_games import DROP_HELP, PERIODS_HELP, drop_unscorable, load, seed
from statespace.app.cli_output import QUIET_HELP, finite, plot_target, plural, write_comparison_plot
from statespace.methods.specs import CLIError, parse_methods, whole_number

__all__ = ["MODES", "add_parser", "format_table", "main"]

#: ``statespace.evaluation.compare.MODES``, written here so that building the parser imports no pandas
#: (tests/test_registry.py checks that the two agree).
MODES = ("frozen", "online", "walk_forward")


#: worker processes: a whole number >= 1, or -1 for one per core (as ``statespace study --n-jobs``)
_n_jobs = whole_number("--n-jobs", lambda v: v >= 1 or v == -1, ">= 1 or -1")


def _split_fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {text!r}")
    return value


def _block_length(text: str):
    """``--every``: a number of days > 0, or week / month / year."""
    if text in ("week", "month", "year"):
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of days or week/month/year, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of days > 0 or week/month/year, got {text!r}")
    return value


_DESCRIPTION = ("Fit each method on the first part of the games (in time order) and score its forecasts of the "
                "rest. Default: the built-in scenario and every registered method. A match data set or simulated "
                "league (matches of many sides) is scored online, by default with every method that rates matches.")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``compare`` subcommand to ``subparsers`` (of ``statespace.app.cli.build_parser``)."""
    c = subparsers.add_parser("compare", help="score methods on held-out games or matches", description=_DESCRIPTION)
    src = c.add_mutually_exclusive_group()
    src.add_argument("--data", metavar="CSV", help="games CSV: time,a,b,score[,neutral][,...]")
    src.add_argument("--dataset", metavar="NAME", help="a real data set by name, of games or of matches of many "
                     "sides (halo2_large_team, halo2_head_to_head, codeforces; see `statespace datasets`)")
    src.add_argument("--scenario", metavar="NAME", help="built-in simulated scenario, NAME or NAME:KEY=VALUE,... "
                     "for one with parameters, or a league of matches of many sides (ffa_league, team_league; "
                     "see `statespace scenarios`)")
    c.add_argument("--methods", action="append", metavar="LIST",
                   help="comma-separated methods, each name or name:key=value,... "
                        "(e.g. elo,elo:k=24,home=60,elo_fide); repeatable; default: all registered")
    c.add_argument("--split", type=_split_fraction, default=0.7, metavar="F",
                   help="fraction of games (in time order) used for fitting (default 0.7)")
    c.add_argument("--mode", choices=MODES, default=None,
                   help="frozen: forecast held-out games from the fitted state; online: forecast each "
                        "from everything before it; walk_forward: filters online, smoothers refitted "
                        "before each block of --every (default frozen; matches: online, the only mode)")
    c.add_argument("--every", type=_block_length, default=None, metavar="BLOCK",
                   help="walk_forward block: a number of days, or week/month/year (default 30 days)")
    c.add_argument("--periods", metavar="SPEC", help=PERIODS_HELP)
    c.add_argument("--tune", action="store_true",
                   help="tune every filter's settings on the training part only (maximum one-step-ahead "
                        "likelihood: the three-outcome log loss for methods whose model has a threshold "
                        "or Davidson draw model, else the expected-score log loss; on matches, the ranking "
                        "log-likelihood, or the pairwise log loss for Thurstonian forecasts) before scoring")
    c.add_argument("--auto", action="store_true",
                   help="add the row 'auto': statespace.auto's choice among EKF variants (observation, home "
                        "advantage, mean reversion, margin weights), each tuned and compared on the training part only")
    add_observations(c)
    c.add_argument("--drop-invalid", action="store_true", help=DROP_HELP)
    c.add_argument("--n-jobs", type=_n_jobs, default=None, metavar="N",
                   help="fit the methods on N local worker processes (-1: one per core; default: in this "
                        "process). Worth it on big games, whose first run compiles each method's loops: the "
                        "workers compile them side by side")
    c.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    c.add_argument("--json", action="store_true", help="print the table as JSON")
    c.add_argument("--plot", metavar="FILE", help="write a calibration and trajectory figure to FILE, in the format "
                   "of its suffix (.png, .pdf, .svg, ...; PNG without one)")
    c.add_argument("--seed", type=seed, default=0, help="seed of the simulated scenario (default 0)")
    c.set_defaults(func=main)
    return c


def format_table(table) -> str:
    """``compare``'s table as text: one row a method, best first, each against the best."""
    import pandas as pd

    has3 = table["log_loss_3"].notna().any()
    # the score forecasts' columns, where compare added them (a method's model observes the score)
    scores = "score_log_density" in table.columns
    best = table.index[0]
    header = ["method", "log loss", "Brier", "accuracy"] + (["log loss 3"] if has3 else []) + \
        (["score log dens", "margin RMSE"] if scores else []) + ["fit s", "\u0394 log loss \u00b1 se"]
    rows = []

    def num(v, spec):  # an undefined value (NaN: the paired se of one held-out game, say) is "n/a", not "nan"
        v = finite(v, text=True)
        return v if isinstance(v, str) else format(v, spec)

    for name, r in table.iterrows():
        delta = "best" if name == best else f"{num(r['delta_log_loss'], '+.4f')} \u00b1 {num(r['delta_se'], '.4f')}"
        row = [str(name), num(r["log_loss"], ".4f"), num(r["brier"], ".4f"), num(r["accuracy"], ".4f")]
        if has3:
            row.append("-" if pd.isna(r["log_loss_3"]) else f"{r['log_loss_3']:.4f}")
        if scores:
            row += ["-" if pd.isna(r[c]) else f"{r[c]:.4f}" for c in ("score_log_density", "margin_rmse")]
        row += [f"{r['fit_seconds']:.3f}", delta]
        rows.append(row)
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(header)]
    def line(cells):
        return "  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(cells, widths)))
    out = [line(header), "  ".join("-" * w for w in widths)] + [line(r) for r in rows]
    return "\n".join(out)


_FOOTNOTE = ("log loss (nats) and Brier score the expected score P(win) + P(draw)/2 against the result "
             "(draw = 0.5);\naccuracy calls a draw when it is within 0.45-0.55; \u0394 log loss is "
             "against the best method, \u00b1 its paired standard error.")
_FOOTNOTE_3 = "\nlog loss 3 is -log P(observed outcome), for methods that forecast draws."
_FOOTNOTE_SCORES = ("\nscore log dens is the mean log predictive density of the observed scores and margin RMSE the "
                    "root mean squared\nerror of score_a - score_b, for methods whose model forecasts the score "
                    "(Margin, Goals).")


def main(args, out, err) -> int:
    """Run ``compare``: 0 when the table is written; a user error raises :class:`CLIError`."""
    if not 0 < args.split < 1:
        raise CLIError(f"--split must be strictly between 0 and 1, got {args.split:g}")
    from statespace.app import compare_matches_cli

    if compare_matches_cli.is_match_source(args):
        return compare_matches_cli.main(args, out, err)
    args.mode = args.mode or "frozen"
    plot_format = plot_target(args.plot) if args.plot else None
    games, source, sim = load(args, err)
    check_group(args, games)
    methods = parse_methods(args.methods, mode=args.mode)
    games = drop_unscorable(methods.values(), games, args, err)
    auto_method = None
    observations(args)  # --observations without --auto, or an unknown name: said before any work
    group(args)
    if args.auto:
        from statespace.ensemble.auto import Auto

        if "auto" in methods:
            raise CLIError("--auto adds the row 'auto', and --methods names a method 'auto' already")
        # frozen: compare fits it on the training part; online and walk-forward: compare runs it
        # through every game, and the split (the same as compare's) keeps the choice to the training part
        auto_method = Auto(split=None if args.mode == "frozen" or args.tune else args.split,
                           observations=observations(args), group=group(args),
                           progress=False if args.quiet else None)
        methods["auto"] = auto_method
    from statespace.evaluation.compare import compare
    from statespace.data.games import GamesError

    try:
        n_train = int(round(args.split * len(games)))
        if n_train == 0 or n_train == len(games):
            raise CLIError(f"--split {args.split:g} of {plural(len(games), 'game')} leaves no "
                           f"{'training' if n_train == 0 else 'held-out'} games")
        t0 = time.perf_counter()
        if args.every is not None and args.mode != "walk_forward":
            raise CLIError(f"--every sets the blocks of --mode walk_forward; this is --mode {args.mode}")
        extra = {} if args.every is None else {"every": args.every}
        table = compare(methods, games, split=args.split, mode=args.mode, tune=args.tune,
                        progress=False if args.quiet else None, n_jobs=args.n_jobs, **extra)
        seconds = time.perf_counter() - t0
    except GamesError as exc:
        raise CLIError(str(exc)) from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    n_test = int(table["n_test"].iloc[0])
    meta = {"source": source, "n_games": len(games), "n_competitors": games.n_players,
            "split": args.split, "n_train": len(games) - n_test, "n_test": n_test, "mode": args.mode,
            "periods": args.periods, "seconds": round(seconds, 4)}
    choice = None
    if auto_method is not None:
        choice = table.attrs.get("tuned", {}).get("auto") or auto_method.last
        if args.json:
            meta["auto"] = auto_json(choice)
    if args.json:
        records = []
        for rec in table.reset_index().to_dict(orient="records"):
            name = rec.pop("method")
            res = table.attrs.get("tuned", {}).get(name)
            records.append({"method": str(name), "spec": repr(methods[name]),
                            **{k: finite(v) for k, v in rec.items()},
                            **({"tuned": {k: finite(v) for k, v in res.params.items()},
                                "tune_objective": res.objective_name} if res else {})})
        print(json.dumps({**meta, "methods": records}, indent=2), file=out)
    else:
        periods = f", periods {args.periods}" if args.periods else ""
        print(f"{source}: {plural(len(games), 'game')}, {plural(games.n_players, 'competitor')}; split {args.split:g} "
              f"({len(games) - n_test:,} train / {n_test:,} held out), mode {args.mode}{periods}", file=out)
        print(file=out)
        print(format_table(table), file=out)
        print(file=out)
        print(_FOOTNOTE + (_FOOTNOTE_3 if table["log_loss_3"].notna().any() else "")
              + (_FOOTNOTE_SCORES if "score_log_density" in table.columns else ""), file=out)
        if choice is not None:
            print(file=out)
            print(auto_line(choice, "the training part"), file=out)
        if args.tune:
            print(file=out)
            print("tuned on the training part (one-step-ahead log_loss, or log_loss_3 for methods "
                  "whose model has a threshold or Davidson draw model):", file=out)
            for name, res in table.attrs.get("tuned", {}).items():
                if name == "auto" and choice is not None:
                    continue  # said above
                if res is not None:
                    shown = ", ".join(f"{k}={v:.4g}" for k, v in res.params.items())
                    print(f"  {name}: {shown}  ({res.objective_name}, {res.seconds:.2f} s)", file=out)
    if args.plot:
        write_comparison_plot(args.plot, plot_format, table, games, methods, sim, source, out, err)
    return 0
