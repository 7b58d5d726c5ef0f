"""The ``statespace`` command line.

::

    statespace compare [--data CSV | --dataset NAME | --scenario NAME] [--methods elo,elo_fide:home=60] [--auto] [--split 0.7]
                       [--mode frozen|online|walk_forward] [--every BLOCK] [--periods SPEC]
                       [--drop-invalid] [--quiet] [--json] [--plot FILE]
                       [--seed N]
    statespace rate (CSV | --dataset NAME | --scenario NAME) [--method elo | --auto] [--top N] [--periods SPEC] [--drop-invalid]
                    [--quiet] [--json]
    statespace datasets [--fetch NAME]
    statespace scenarios
    statespace methods
    statespace lab [--host 127.0.0.1] [--port N] [--open]
    statespace study GRID.toml [--out PATH] [--n-jobs N]

``--auto`` adds :func:`statespace.auto`'s choice (the EKF variant with the best one-step-ahead
likelihood, chosen and tuned on the training part only) as the row ``auto`` of ``compare``, or
rates with it in ``rate``; one line says what it chose, and its progress goes to stderr when the
choice takes more than a few seconds.

Method specs are ``name`` or ``name:key=value,key=value`` (e.g. ``elo:k=24,home=60``); values are
read as booleans (true/false/yes/no), integers, floats, or else text. A games CSV may also be a
pipe: ``statespace rate <(zcat games.csv.gz)`` or ``... | statespace rate /dev/stdin`` (see
:meth:`statespace.Games.from_csv`). A user error (bad file, invalid rows, unknown method or
option), and output that cannot be written (standard output closed, a full disk), prints one
line ``statespace: error: ...`` to stderr and exits with status 2; ``--plot FILE`` writes
exactly ``FILE`` and says so on stderr. Progress bars go to stderr on a terminal only. Ctrl-C
prints one line ``statespace: interrupted`` to stderr and exits with status 130, with no partial
result (an interrupted PyMC sample is an error, see ``smoothers.PyMCSmoother``).

This module sits on top of everything: it is the one place in ``statespace`` that imports the
sibling packages ``filters`` and ``smoothers``. It imports what a command needs when the command
runs (``--help`` loads neither NumPy nor pandas, and ``--method elo`` the Elo module, not every
method's).
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import sys
import time
import warnings
from typing import Any

from statespace.app.cli_output import Output, plot_target, write_comparison_plot
from statespace.methods.specs import (PROG, CLIError, keyword_names, one_line, parse_method, parse_methods, parse_periods,
                                      parse_scenario, registry, split_specs, whole_number)

__all__ = ["main", "parse_method", "parse_methods", "parse_periods", "registry"]

#: ``statespace.evaluation.compare.MODES``, written here so that building the parser imports no pandas
#: (tests/test_cli.py checks that the two agree).
MODES = ("frozen", "online", "walk_forward")


def _games_error() -> tuple[type, ...]:
    """``(GamesError,)`` once the game table's module is loaded (nothing else raises it), else
    ``()``: an ``except`` clause naming it need not import pandas to catch it."""
    columns = sys.modules.get("statespace.data.columns")
    return (columns.GamesError,) if columns is not None else ()


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so errors stay on one line."""

    def error(self, message):  # noqa: D401 - argparse API
        raise CLIError(message)


# ---------------------------------------------------------------------------- data
def _load(args, err) -> tuple[Any, str, Any]:
    """Games from ``--data``/CSV or a scenario; returns (games, description, simulation or None)."""
    from statespace.data.games import DroppedRowsWarning, Games

    path = args.data
    if getattr(args, "dataset", None) is not None:
        from statespace.data import datasets

        if args.dataset not in datasets.DATASETS:
            raise CLIError(f"unknown data set {args.dataset!r}; choose one of {', '.join(datasets.DATASETS)} "
                           f"(see statespace datasets)")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            games = datasets.load(args.dataset, errors="drop" if args.drop_invalid else "raise")
        _report_warnings(caught, err)
        source, sim = f"data set {args.dataset}", None
    elif path is not None:
        if os.path.isdir(path):
            raise CLIError(f"{path} is a folder, not a games CSV file")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DroppedRowsWarning)
            try:
                games = Games.from_csv(path, errors="drop" if args.drop_invalid else "raise")
            except PermissionError as exc:
                raise CLIError(f"cannot read {path}: {exc.strerror}") from None
            except UnicodeDecodeError as exc:
                raise CLIError(f"cannot read {path} as text: {exc}") from None
        _report_warnings(caught, err)
        source, sim = path, None
    else:
        from statespace.model import scenarios

        name, params = parse_scenario(args.scenario or scenarios.DEFAULT)
        try:
            sim = scenarios.get(name, seed=args.seed, **params)
        except ValueError as exc:  # a parameter's value out of range
            raise CLIError(str(exc)) from None
        games = sim.games
        given = "".join(f", {k}={v}" for k, v in params.items())
        source = f"scenario {name} (seed {args.seed}{given})"
    periods = parse_periods(args.periods)
    if periods is not None:
        try:
            games = games.with_periods(**periods)
        except ValueError as exc:  # GamesError included
            raise CLIError(f"--periods {args.periods}: {exc}") from None
    return games, source, sim


def _drop_unscorable(methods, games, args, err):
    """With ``--drop-invalid``, ``games`` without the records some method's observation cannot
    score (a fractional or huge goal count, a margin beyond its range), each drop reported as a
    warning line; else ``games`` (the methods refuse such records with a row-and-column error)."""
    if not args.drop_invalid:
        return games
    from statespace.data.games import DroppedRowsWarning

    for method in methods:
        model = getattr(method, "model", None)
        observation = getattr(model, "observation", None)
        if observation is None:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DroppedRowsWarning)
            games = observation.check_games(games, scale=model.scale, owner=getattr(method, "name", None),
                                            errors="drop")
        _report_warnings(caught, err)
    return games


def _report_warnings(caught, err) -> None:
    """Dropped rows and fetched-data checks as one ``warning:`` line each; others re-raised."""
    from statespace.data.fetch import ChecksumWarning
    from statespace.data.games import DroppedRowsWarning

    for w in caught:
        if issubclass(w.category, (DroppedRowsWarning, ChecksumWarning)):
            print(f"{PROG}: warning: {one_line(str(w.message))}", file=err)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _finite(x, text: bool = False):
    """A number for JSON: a NaN or infinity (an undefined standard error, say) is ``None``
    (``null``); with ``text=True`` a number for people, such a value ``"n/a"`` (never ``"nan"``)."""
    import numpy as np

    if isinstance(x, (float, np.floating)):
        if not math.isfinite(float(x)):
            return "n/a" if text else None
        return float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


# ---------------------------------------------------------------------------- compare
def _format_table(table) -> str:
    import pandas as pd

    has3 = table["log_loss_3"].notna().any()
    # the score forecasts' columns, where compare added them (a method's model observes the score)
    scores = "score_log_density" in table.columns
    best = table.index[0]
    header = ["method", "log loss", "Brier", "accuracy"] + (["log loss 3"] if has3 else []) + \
        (["score log dens", "margin RMSE"] if scores else []) + ["fit s", "\u0394 log loss \u00b1 se"]
    rows = []

    def num(v, spec):  # an undefined value (NaN: the paired se of one held-out game, say) is "n/a", not "nan"
        v = _finite(v, text=True)
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


def _cmd_compare(args, out, err) -> int:
    if not 0 < args.split < 1:
        raise CLIError(f"--split must be strictly between 0 and 1, got {args.split:g}")
    plot_format = plot_target(args.plot) if args.plot else None
    games, source, sim = _load(args, err)
    methods = parse_methods(args.methods, mode=args.mode)
    games = _drop_unscorable(methods.values(), games, args, err)
    auto_method = None
    if args.auto:
        from statespace.ensemble.auto import Auto

        if "auto" in methods:
            raise CLIError("--auto adds the row 'auto', and --methods names a method 'auto' already")
        # frozen: compare fits it on the training part; online and walk-forward: compare runs it
        # through every game, and the split (the same as compare's) keeps the choice to the training part
        auto_method = Auto(split=None if args.mode == "frozen" or args.tune else args.split,
                           progress=False if args.quiet else None)
        methods["auto"] = auto_method
    from statespace.evaluation.compare import compare
    from statespace.data.games import GamesError

    try:
        n_train = int(round(args.split * len(games)))
        if n_train == 0 or n_train == len(games):
            raise CLIError(f"--split {args.split:g} of {_plural(len(games), 'game')} leaves no "
                           f"{'training' if n_train == 0 else 'held-out'} games")
        t0 = time.perf_counter()
        if args.every is not None and args.mode != "walk_forward":
            raise CLIError(f"--every sets the blocks of --mode walk_forward; this is --mode {args.mode}")
        extra = {} if args.every is None else {"every": args.every}
        table = compare(methods, games, split=args.split, mode=args.mode, tune=args.tune,
                        progress=False if args.quiet else None, **extra)
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
            meta["auto"] = _auto_json(choice)
    if args.json:
        records = []
        for rec in table.reset_index().to_dict(orient="records"):
            name = rec.pop("method")
            res = table.attrs.get("tuned", {}).get(name)
            records.append({"method": str(name), "spec": repr(methods[name]),
                            **{k: _finite(v) for k, v in rec.items()},
                            **({"tuned": {k: _finite(v) for k, v in res.params.items()},
                                "tune_objective": res.objective_name} if res else {})})
        print(json.dumps({**meta, "methods": records}, indent=2), file=out)
    else:
        periods = f", periods {args.periods}" if args.periods else ""
        print(f"{source}: {_plural(len(games), 'game')}, {_plural(games.n_players, 'competitor')}; split {args.split:g} "
              f"({len(games) - n_test:,} train / {n_test:,} held out), mode {args.mode}{periods}", file=out)
        print(file=out)
        print(_format_table(table), file=out)
        print(file=out)
        print(_FOOTNOTE + (_FOOTNOTE_3 if table["log_loss_3"].notna().any() else "")
              + (_FOOTNOTE_SCORES if "score_log_density" in table.columns else ""), file=out)
        if choice is not None:
            print(file=out)
            print(_auto_line(choice, "the training part"), file=out)
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


# ---------------------------------------------------------------------------- rate
def _cmd_rate(args, out, err) -> int:
    if args.top < 0:
        raise CLIError(f"--top must be >= 0 (0 = everyone), got {args.top}")
    given = [x for x in (args.data, args.dataset, args.scenario) if x is not None]
    if not given:
        raise CLIError("give a games CSV file (or --dataset NAME, or --scenario NAME)")
    if len(given) > 1:
        raise CLIError("give one of a games CSV file, --dataset and --scenario, not several")
    if args.auto and args.method is not None:
        raise CLIError(f"give either --method or --auto, not both (--method {args.method})")
    games, source, _ = _load(args, err)
    spec = "elo" if args.method is None else args.method
    if args.auto:
        from statespace.ensemble.auto import Auto

        method = Auto(progress=False if args.quiet else None)
    else:
        if len(split_specs(spec)) != 1:
            raise CLIError(f"--method takes one method, got {spec!r}")
        method = parse_method(spec)
        games = _drop_unscorable([method], games, args, err)
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
            meta["auto"] = _auto_json(fitted.result)
        records = [{k: _finite(v) for k, v in rec.items()} for rec in table.to_dict(orient="records")]
        print(json.dumps({**meta, "ratings": records}, indent=2), file=out)
        return 0
    what = "everyone" if args.top == 0 or args.top >= n_rated else f"top {len(shown)} of {n_rated:,}"
    if args.auto:
        print(_auto_line(fitted.result, "the rated games"), file=out)
    print(f"{method!r} on {source}: {_plural(len(games), 'game')}, {_plural(n_rated, 'rated competitor')}; "
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


def _auto_line(choice, where: str) -> str:
    """One line: what ``--auto`` chose, on which games and by what."""
    a = choice.table.attrs
    settings = choice.table.loc[choice.chosen, "settings"]
    bound = choice.table.loc[choice.chosen, "at_bound"] if "at_bound" in choice.table.columns else ()

    def show(k, v):  # "n/a" for an undefined value; a setting the search box stopped is marked
        v = _finite(v, text=True)
        return (f"{k}={v if isinstance(v, str) else format(v, '.4g')}"
                + (" (at a bound of its search box)" if k in tuple(bound or ()) else ""))

    shown = ", ".join(show(k, v) for k, v in settings.items())
    return (f"auto chose EKF, {choice.chosen}: training {choice.objective_name} {choice.objective:.5f} "
            f"(chosen among {len(choice.table)} candidates, each tuned on {where}, {a['n_games']:,} games, the first "
            f"{a['burn_in']:.0%} a burn-in; {choice.seconds:.1f} s); {shown}")


def _auto_json(choice) -> dict:
    table = choice.table
    return {"chosen": choice.chosen, "objective": choice.objective_name, "train_score": _finite(choice.objective),
            "n_games": table.attrs["n_games"], "n_scored": table.attrs["n_scored"], "burn_in": table.attrs["burn_in"],
            "seconds": round(choice.seconds, 4),
            "candidates": [{"candidate": str(name), "stage": r["stage"], "train_score": _finite(r["train_score"]),
                            "train_log_loss": _finite(r["train_log_loss"]),
                            "train_log_loss_3": _finite(r["train_log_loss_3"]), "chosen": bool(r["chosen"]),
                            "settings": {k: _finite(v) for k, v in r["settings"].items()},
                            "at_bound": list(r["at_bound"]) if "at_bound" in r.index else [],
                            **({"error": r["error"]} if r["error"] else {})}
                           for name, r in table.iterrows()]}


# ---------------------------------------------------------------------------- listings
def _first_line(doc: str | None) -> str:
    doc = inspect.cleandoc(doc or "")
    para = doc.split("\n\n")[0]
    return one_line(para)


def _cmd_scenarios(args, out, err) -> int:
    from statespace.model import scenarios

    width = max(map(len, scenarios.ALL))
    for name in scenarios.ALL:
        mark = " (default)" if name == scenarios.DEFAULT else ""
        print(f"{name.ljust(width)}  {_first_line(getattr(scenarios, name).__doc__)}{mark}", file=out)
    for name, defaults in scenarios.PARAMETERISED.items():
        settings = ",".join(f"{k}={v}" for k, v in defaults.items())
        print(f"\n{name} takes parameters (--scenario {name}:KEY=VALUE,...); its defaults: {settings}", file=out)
    return 0


def _cmd_datasets(args, out, err) -> int:
    from statespace.data import datasets
    from statespace._runtime.progress import interactive

    if args.fetch is not None:
        if args.fetch not in datasets.DATASETS:
            raise CLIError(f"unknown data set {args.fetch!r}; choose one of {', '.join(datasets.DATASETS)}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            where = datasets.fetch(args.fetch, progress=interactive())  # a bar only where someone watches
        _report_warnings(caught, err)
        print(f"{args.fetch}: {where}", file=out)
        return 0
    table = datasets.catalogue()
    width = max(map(len, table["name"]))
    for row in table.itertuples():
        print(f"{row.name.ljust(width)}  {row.games:>7,} games  {row.competitors:>5,} competitors  {row.span}  "
              f"{row.where:<20}  licence: {row.licence}", file=out)
        print(f"{''.ljust(width)}  {row.title}; source {row.source}", file=out)
    print("load one with statespace.data.datasets.load(NAME), or --dataset NAME in compare and rate; "
          "statespace datasets --fetch NAME downloads one now", file=out)
    return 0


def _cmd_methods(args, out, err) -> int:
    known = registry()
    default = set(registry(default_only=True))
    width = max(map(len, known), default=0)
    for name, ctor in known.items():
        allowed = keyword_names(ctor)
        doc = _first_line(inspect.getdoc(ctor))
        settings = f"  [settings: {', '.join(allowed)}]" if allowed else ""
        mark = "" if name in default else "  (not compared by default)"
        print(f"{name.ljust(width)}  {doc}{settings}{mark}", file=out)
    return 0


# ---------------------------------------------------------------------------- parser
#: a seed: a whole number >= 0 (NumPy's generators take no negative seed)
_seed = whole_number("--seed", lambda v: v >= 0, ">= 0")


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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Dynamic skill ratings as filters of one state-space model: "
                     "compare rating methods on held-out games, or rate competitors.")
    from statespace._runtime.version import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    periods_help = ("group games into rating periods: a number of days, week, month, year, game, "
                    "or column:NAME (an extra CSV column such as season)")
    drop_help = "drop invalid rows (reported on stderr) instead of stopping at them"

    c = sub.add_parser("compare", help="score methods on held-out games",
                       description="Fit each method on the first part of the games (in time order) and "
                                   "score its forecasts of the rest. Default: the built-in scenario and "
                                   "every registered method.")
    src = c.add_mutually_exclusive_group()
    src.add_argument("--data", metavar="CSV", help="games CSV: time,a,b,score[,neutral][,...]")
    src.add_argument("--dataset", metavar="NAME", help="a real data set by name (see `statespace datasets`)")
    src.add_argument("--scenario", metavar="NAME", help="built-in simulated scenario, NAME or NAME:KEY=VALUE,... "
                     "for one with parameters (see `statespace scenarios`)")
    c.add_argument("--methods", action="append", metavar="LIST",
                   help="comma-separated methods, each name or name:key=value,... "
                        "(e.g. elo,elo:k=24,home=60,elo_fide); repeatable; default: all registered")
    c.add_argument("--split", type=_split_fraction, default=0.7, metavar="F",
                   help="fraction of games (in time order) used for fitting (default 0.7)")
    c.add_argument("--mode", choices=MODES, default="frozen",
                   help="frozen: forecast held-out games from the fitted state; online: forecast each "
                        "from everything before it; walk_forward: filters online, smoothers refitted "
                        "before each block of --every (default frozen)")
    c.add_argument("--every", type=_block_length, default=None, metavar="BLOCK",
                   help="walk_forward block: a number of days, or week/month/year (default 30 days)")
    c.add_argument("--periods", metavar="SPEC", help=periods_help)
    c.add_argument("--tune", action="store_true",
                   help="tune every filter's settings on the training part only (maximum one-step-ahead "
                        "likelihood: the three-outcome log loss for methods whose model has a threshold "
                        "or Davidson draw model, else the expected-score log loss) before scoring")
    c.add_argument("--auto", action="store_true",
                   help="add the row 'auto': statespace.auto's choice among EKF variants (observation, home "
                        "advantage, mean reversion, margin weights), each tuned and compared on the training part only")
    c.add_argument("--drop-invalid", action="store_true", help=drop_help)
    quiet_help = ("no progress on stderr (by default a bar shows on a terminal once the work has taken a few "
                  "seconds, and none when stderr is a file or a pipe)")
    c.add_argument("--quiet", action="store_true", help=quiet_help)
    c.add_argument("--json", action="store_true", help="print the table as JSON")
    c.add_argument("--plot", metavar="FILE", help="write a calibration and trajectory figure to FILE, in the format "
                   "of its suffix (.png, .pdf, .svg, ...; PNG without one)")
    c.add_argument("--seed", type=_seed, default=0, help="seed of the simulated scenario (default 0)")
    c.set_defaults(func=_cmd_compare)

    r = sub.add_parser("rate", help="fit a method on all games and print a leaderboard",
                       description="Fit one method on all games and print the leaderboard.")
    r.add_argument("data", nargs="?", metavar="CSV", help="games CSV: time,a,b,score[,neutral][,...]")
    r.add_argument("--dataset", metavar="NAME", help="rate a real data set by name (see `statespace datasets`)")
    r.add_argument("--scenario", metavar="NAME", help="rate a built-in scenario instead of a CSV (NAME or "
                   "NAME:KEY=VALUE,...)")
    r.add_argument("--seed", type=_seed, default=0, help="seed of the scenario (default 0)")
    r.add_argument("--method", default=None, metavar="SPEC",
                   help="method name or name:key=value,... (default elo)")
    r.add_argument("--auto", action="store_true",
                   help="rate with statespace.auto's choice among EKF variants, chosen and tuned on these games "
                        "(instead of --method)")
    r.add_argument("--top", type=int, default=20, metavar="N", help="show the best N (default 20; 0 = all)")
    r.add_argument("--periods", metavar="SPEC", help=periods_help)
    r.add_argument("--drop-invalid", action="store_true", help=drop_help)
    r.add_argument("--quiet", action="store_true", help=quiet_help)
    r.add_argument("--json", action="store_true", help="print the leaderboard as JSON")
    r.set_defaults(func=_cmd_rate)

    d = sub.add_parser("datasets", help="list the real data sets (shipped or fetched on first use)",
                       description="List the real data sets with their size, span, licence and where each is; "
                                   "--fetch NAME downloads one from its public source into the user cache.")
    d.add_argument("--fetch", metavar="NAME", help="download data set NAME now")
    d.set_defaults(func=_cmd_datasets)
    s = sub.add_parser("scenarios", help="list the built-in simulated scenarios")
    s.set_defaults(func=_cmd_scenarios)
    m = sub.add_parser("methods", help="list the registered methods and their settings")
    m.set_defaults(func=_cmd_methods)
    from statespace.app.lab.cli import add_parser as _add_lab_parser

    _add_lab_parser(sub)
    from statespace.app.study_cli import add_parser as _add_study_parser

    _add_study_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 user error, 130 interrupted)."""
    out, err = Output(sys.stdout), sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            raise CLIError("choose a command: compare, rate, datasets, scenarios, methods, lab or study (see statespace --help)")
        status = args.func(args, out, err)
        out.flush()  # a full disk shows here, not after the exit status is decided
        return status
    except SystemExit as exc:  # --help / --version
        return exc.code if isinstance(exc.code, int) else 0
    except (CLIError, FileNotFoundError, *_games_error()) as exc:
        print(f"{PROG}: error: {one_line(exc)}", file=err)
        return 2
    except BrokenPipeError:  # e.g. `statespace rate ... | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt as exc:  # Ctrl-C: no traceback and no partial result, exit 128 + SIGINT
        detail = one_line(exc) if str(exc) else ""  # e.g. what a PyMC sample held when stopped
        print(f"{PROG}: interrupted" + (f": {detail}" if detail else ""), file=err)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
