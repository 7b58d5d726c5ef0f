"""The games a command reads: a games CSV, a real data set or a simulated scenario, grouped into
rating periods on request, with the rows no method can score stopped at or dropped.

``compare`` and ``rate`` read their games through :func:`load` (the options ``--data``/CSV,
``--dataset``, ``--scenario``, ``--seed``, ``--periods``, ``--drop-invalid``); a dropped row and a
fetched file that failed its check are one ``statespace: warning: ...`` line on stderr each
(:func:`report_warnings`). A bad file, an invalid row or an unknown data set or scenario is a
:class:`~statespace.methods.specs.CLIError` (or the game table's ``GamesError``): one line, exit
status 2.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

from statespace.methods.specs import PROG, CLIError, one_line, parse_periods, parse_scenario, whole_number

__all__ = ["DROP_HELP", "PERIODS_HELP", "drop_unscorable", "load", "report_warnings", "seed"]

#: a seed: a whole number >= 0 (NumPy's generators take no negative seed)
seed = whole_number("--seed", lambda v: v >= 0, ">= 0")

PERIODS_HELP = ("group games into rating periods: a number of days, week, month, year, game, "
                "or column:NAME (an extra CSV column such as season)")
DROP_HELP = "drop invalid rows (reported on stderr) instead of stopping at them"


def load(args, err) -> tuple[Any, str, Any]:
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
        report_warnings(caught, err)
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
        report_warnings(caught, err)
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


def drop_unscorable(methods, games, args, err):
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
        report_warnings(caught, err)
    return games


def report_warnings(caught, err) -> None:
    """Dropped rows and fetched-data checks as one ``warning:`` line each; others re-raised."""
    from statespace.data.fetch import ChecksumWarning
    from statespace.data.games import DroppedRowsWarning

    for w in caught:
        if issubclass(w.category, (DroppedRowsWarning, ChecksumWarning)):
            print(f"{PROG}: warning: {one_line(str(w.message))}", file=err)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
