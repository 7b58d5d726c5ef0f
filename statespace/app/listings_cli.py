"""The listing commands: ``statespace datasets [--fetch NAME]``, ``statespace scenarios`` and
``statespace methods`` (:func:`add_parsers`), each printing what the package holds, one line (or
two) an entry. ``statespace.app.cli`` wires them in.
"""

from __future__ import annotations

import argparse
import inspect
import warnings

from statespace.app.cli_games import report_warnings
from statespace.methods.specs import CLIError, keyword_names, one_line, registry

__all__ = ["add_parsers", "list_datasets", "list_methods", "list_scenarios"]


def add_parsers(subparsers) -> list[argparse.ArgumentParser]:
    """Add the ``datasets``, ``scenarios`` and ``methods`` subcommands to ``subparsers`` (of
    ``statespace.app.cli.build_parser``)."""
    d = subparsers.add_parser("datasets", help="list the real data sets (shipped or fetched on first use)",
                              description="List the real data sets with their size, span, licence and where each "
                                          "is; --fetch NAME downloads one from its public source into the user "
                                          "cache.")
    d.add_argument("--fetch", metavar="NAME", help="download data set NAME now")
    d.set_defaults(func=list_datasets)
    s = subparsers.add_parser("scenarios", help="list the built-in simulated scenarios")
    s.set_defaults(func=list_scenarios)
    m = subparsers.add_parser("methods", help="list the registered methods and their settings")
    m.set_defaults(func=list_methods)
    return [d, s, m]


def _first_line(doc: str | None) -> str:
    doc = inspect.cleandoc(doc or "")
    para = doc.split("\n\n")[0]
    return one_line(para)


def list_scenarios(args, out, err) -> int:
    """``statespace scenarios``: each built-in scenario with its docstring's first paragraph."""
    from statespace.model import scenarios

    width = max(map(len, scenarios.ALL))
    for name in scenarios.ALL:
        mark = " (default)" if name == scenarios.DEFAULT else ""
        print(f"{name.ljust(width)}  {_first_line(getattr(scenarios, name).__doc__)}{mark}", file=out)
    for name, defaults in scenarios.PARAMETERISED.items():
        settings = ",".join(f"{k}={v}" for k, v in defaults.items())
        print(f"\n{name} takes parameters (--scenario {name}:KEY=VALUE,...); its defaults: {settings}", file=out)
    from statespace.app.compare_matches_cli import MATCH_SCENARIOS
    from statespace.model import match_scenarios

    print("\nleagues of matches of many sides (compare --scenario NAME scores them online):", file=out)
    for name in MATCH_SCENARIOS:
        print(f"{name.ljust(width)}  {_first_line(getattr(match_scenarios, name).__doc__)}", file=out)
    return 0


def list_datasets(args, out, err) -> int:
    """``statespace datasets``: the catalogue of real data sets, or ``--fetch NAME`` one of them."""
    from statespace.data import datasets
    from statespace._runtime.progress import interactive

    if args.fetch is not None:
        if args.fetch not in datasets.DATASETS:
            raise CLIError(f"unknown data set {args.fetch!r}; choose one of {', '.join(datasets.DATASETS)}")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            where = datasets.fetch(args.fetch, progress=interactive())  # a bar only where someone watches
        report_warnings(caught, err)
        print(f"{args.fetch}: {where}", file=out)
        return 0
    table = datasets.catalogue()
    width = max(map(len, table["name"]))
    for row in table.itertuples():
        print(f"{row.name.ljust(width)}  {row.games:>7,} games  {row.competitors:>5,} competitors  {row.span}  "
              f"{row.where:<20}  licence: {row.licence}", file=out)
        print(f"{''.ljust(width)}  {row.title}; source {row.source}", file=out)
    print("load one with statespace.datasets.load(NAME), or --dataset NAME in compare and rate; "
          "statespace datasets --fetch NAME downloads one now", file=out)
    from statespace.data.match_datasets import MATCH_DATASETS

    print("\nmatches of many sides (compare --dataset NAME; statespace.data.match_datasets.load_matches(NAME)):",
          file=out)
    width = max(map(len, MATCH_DATASETS))
    for name, what in MATCH_DATASETS.items():
        print(f"{name.ljust(width)}  {what}", file=out)
    return 0


def list_methods(args, out, err) -> int:
    """``statespace methods``: each registered method, its settings, and whether compare runs it by default."""
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
