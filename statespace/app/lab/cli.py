"""``statespace lab``: the command that serves the rating lab (:func:`statespace.app.lab.serve`).

::

    statespace lab [--host 127.0.0.1] [--port 0] [--open] [--allow-host NAME ...]

``statespace.app.cli`` wires it in with :func:`add_parser` (which sets :func:`main` as the
subcommand's function). Errors follow the command line's rule: one line
``statespace: error: ...`` on stderr and exit status 2 (FastAPI or uvicorn missing, a port that
cannot be bound, a port out of range).
"""

from __future__ import annotations

import argparse

from statespace.methods.specs import PROG, one_line, whole_number

__all__ = ["add_parser", "main"]


#: a TCP port: a whole number from 0 (a free port) to 65535
_port = whole_number("--port", lambda v: 0 <= v <= 65535, "from 0 to 65535")


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``lab`` subcommand to ``subparsers`` (of ``statespace.app.cli.build_parser``)."""
    p = subparsers.add_parser("lab", help="serve the local web rating lab and its JSON API",
                              description="Serve the rating lab: a page to enter games and starting ratings, run "
                                          "Elo, FIDE Elo, Glicko-1, Glicko-2, TrueSkill and the EKF side by side, "
                                          "and see leaderboards, rating histories and odds; and its JSON API "
                                          "(POST /api/v1/rate, POST /api/v1/compare, GET /openapi.json). Needs "
                                          'the extra lab: pip install "statespace-ratings[lab]".')
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=_port, default=0, help="port to listen on (default 0: a free port, printed)")
    p.add_argument("--open", action="store_true", dest="open_browser", help="open the page in the system's browser")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME", dest="allow_hosts",
                   help="another name the lab may be addressed by (the Host header), e.g. this machine's name on "
                        "the network with --host 0.0.0.0; by default only the address it listens on, localhost, "
                        "127.0.0.1 and [::1] (a page of another site that points its name here is refused)")
    p.set_defaults(func=main)
    return p


def main(args, out, err) -> int:
    """Serve until interrupted; 0 when stopped, 2 (one line on ``err``) on a user error."""
    from . import INSTALL_HINT, missing_dependencies, serve

    missing = missing_dependencies()
    if missing:
        print(f"{PROG}: error: the rating lab needs {' and '.join(missing)}: {INSTALL_HINT}", file=err)
        return 2
    try:
        serve(args.host, args.port, open_browser=args.open_browser, out=out, allow_hosts=args.allow_hosts)
    except OSError as exc:
        print(f"{PROG}: error: cannot listen on {args.host}:{args.port}: {one_line(exc.strerror or exc)}", file=err)
        return 2
    return 0
