"""``statespace lab``: a local web rating lab and its JSON API.

::

    from statespace.app.lab import create_app, serve
    serve()                          # http://127.0.0.1:<a free port>/ until Ctrl-C
    serve(port=8765, open_browser=True)
    app = create_app()               # the FastAPI application (it answers Host 127.0.0.1, localhost, [::1])
    app = create_app(["testserver"]) # e.g. for fastapi.testclient.TestClient, whose Host is "testserver"

The page enters games (period, player, opponent, result) and starting ratings, runs Elo, FIDE
Elo, Glicko-1, Glicko-2, TrueSkill and the EKF side by side, draws each competitor's rating
history with a band of +-1.96 sd, and gives the win/draw/loss odds of any two competitors.
Behind it, ``POST /api/v1/rate`` and ``POST /api/v1/compare`` compute through the package's own
classes (:mod:`statespace.app.lab.compute`); a second tab rates matches of many sides (teams,
free-for-all rankings) through ``POST /api/v1/rate-matches`` (:mod:`statespace.app.lab.match_compute`);
``GET /openapi.json`` describes them. docs/lab.md shows the page and the API.

Needs the extra ``lab`` (FastAPI and uvicorn): ``pip install "statespace-ratings[lab]"``. Importing
this package needs neither; :func:`create_app` and :func:`serve` do.
"""

from __future__ import annotations

import socket
import sys
import threading
import webbrowser
from typing import Iterable, TextIO

__all__ = ["create_app", "serve", "listen", "INSTALL_HINT", "missing_dependencies"]

#: what to run when FastAPI or uvicorn is missing
INSTALL_HINT = 'pip install "statespace-ratings[lab]"'


def missing_dependencies() -> list[str]:
    """The lab's packages that are not installed (``fastapi``, ``uvicorn``), found without
    importing them."""
    import importlib.util

    return [name for name in ("fastapi", "uvicorn") if importlib.util.find_spec(name) is None]


def create_app(allowed_hosts=None, **options):
    """The lab's FastAPI application (see :func:`statespace.app.lab.app.create_app`: ``allowed_hosts``,
    ``workers``, ``wait``)."""
    missing = missing_dependencies()
    if missing:
        raise ImportError(f"the rating lab needs {' and '.join(missing)}: {INSTALL_HINT}")
    from .app import create_app as _create

    return _create(allowed_hosts, **options)


def listen(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (port 0: a free port the system picks);
    ``OSError`` when the address cannot be bound (a port in use, a host not on this machine)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    """``http://host:port/`` of a listening socket (IPv6 hosts in brackets)."""
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def serve(host: str = "127.0.0.1", port: int = 0, open_browser: bool = False, out: TextIO | None = None, *,
          warm_up: bool = True, allow_hosts: Iterable[str] = ()) -> None:
    """Serve the lab on ``host``:``port`` until interrupted (Ctrl-C).

    ``port=0`` picks a free port. The lab answers only requests addressed to the address it
    listens on, ``localhost``, ``127.0.0.1`` or ``[::1]`` (with its port), and the names in
    ``allow_hosts`` (:func:`statespace.app.lab.guard.allowed_hosts`). With ``warm_up`` (the default)
    it first runs a tiny request through every method (:func:`statespace.app.lab.warmup.warm_up`),
    so the kernels are compiled or loaded before anyone waits for them. Then the URL is printed
    to ``out`` (default stdout); ``open_browser`` opens it in the system's browser. The default
    host, 127.0.0.1, keeps the lab to this machine: any other host lets whoever reaches it use
    the lab, and a warning line says so.
    """
    import uvicorn

    from .guard import allowed_hosts

    out = sys.stdout if out is None else out
    sock = listen(host, port)
    try:
        url = url_of(sock)
        app = create_app(allowed_hosts(host, sock.getsockname()[1], allow_hosts))
        if warm_up:
            from .warmup import warm_up as _warm_up

            print("statespace lab: loading the rating kernels (the first start after an install compiles them, "
                  "which can take a few minutes)", file=out, flush=True)
            _warm_up()
        if host not in ("127.0.0.1", "localhost", "::1"):
            print(f"statespace lab: warning: listening on {host}: anyone who can reach this machine can use the lab",
                  file=out)
        print(f"statespace lab: serving on {url} (Ctrl-C to stop)", file=out, flush=True)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
        if open_browser:
            threading.Timer(0.5, webbrowser.open, [url]).start()
        server.run(sockets=[sock])
    finally:
        sock.close()
