"""The ``statespace`` command line.

::

    statespace compare [--data CSV | --dataset NAME | --scenario NAME] [--methods elo,elo_fide:home=60] [--auto] [--split 0.7]
                       [--mode frozen|online|walk_forward] [--every BLOCK] [--periods SPEC]
                       [--observations LIST] [--drop-invalid] [--n-jobs N] [--quiet] [--json] [--plot FILE]
                       [--seed N]
    statespace rate (CSV | --dataset NAME | --scenario NAME) [--method elo | --auto [--observations LIST]] [--top N]
                    [--periods SPEC] [--drop-invalid]
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

This module is the entry point: the parser, made of each command's own (:mod:`~statespace.app.compare_cli`,
:mod:`~statespace.app.rate_cli`, :mod:`~statespace.app.listings_cli` for ``datasets``, ``scenarios``
and ``methods``, :mod:`statespace.app.lab.cli`, :mod:`~statespace.app.study_cli`), and :func:`main`,
which runs a command and turns its user errors into the one line. The command line sits on top of
everything: through the method registry it reaches the sibling packages ``filters`` and
``smoothers``. A command imports what it needs when it runs (``--help`` loads neither NumPy nor
pandas, and ``--method elo`` the Elo module, not every method's).
"""

from __future__ import annotations

import argparse
import os
import sys

from statespace.app import compare_cli, listings_cli, rate_cli
from statespace.app.cli_output import Output
from statespace.app.compare_cli import MODES, format_table as _format_table  # noqa: F401 - tests read them here
from statespace.methods.specs import PROG, CLIError, one_line, parse_method, parse_methods, parse_periods, registry

__all__ = ["main", "parse_method", "parse_methods", "parse_periods", "registry"]


def _games_error() -> tuple[type, ...]:
    """``(GamesError,)`` once the game table's module is loaded (nothing else raises it), else
    ``()``: an ``except`` clause naming it need not import pandas to catch it."""
    columns = sys.modules.get("statespace.data.columns")
    return (columns.GamesError,) if columns is not None else ()


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing usage and exiting, so errors stay on one line."""

    def error(self, message):  # noqa: D401 - argparse API
        raise CLIError(message)


def build_parser() -> argparse.ArgumentParser:
    """The ``statespace`` command's parser: the frame here, each command's options from its module
    (``compare_cli``, ``rate_cli``, ``listings_cli``, ``study_cli``, the lab's)."""
    parser = _Parser(prog=PROG, description="Dynamic skill ratings as filters of one state-space model: "
                     "compare rating methods on held-out games, or rate competitors.")
    from statespace._runtime.version import __version__

    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    compare_cli.add_parser(sub)
    rate_cli.add_parser(sub)
    listings_cli.add_parsers(sub)
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
