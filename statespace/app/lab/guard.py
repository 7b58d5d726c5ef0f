"""The lab's two gates in front of the application (ASGI middleware): the ``Host`` a request is
addressed to, and the size of its body.

**Host.** A server on 127.0.0.1 is out of other machines' reach, but not out of the reach of a
web page in this machine's browser: a page of ``evil.example`` can point its own name at
127.0.0.1 (DNS rebinding), and the browser then treats the lab's answers as that page's own and
lets its script read them. The request still says which name it was sent to, in its ``Host``
header, so :class:`HostCheck` answers only the names the lab is served under (the bound address,
``localhost``, ``127.0.0.1``, ``[::1]``) and refuses anything else with 421 (Misdirected
Request) before the application sees it.

**Body size.** :class:`BodyLimit` answers 413 to a body over the limit, whether it declares its
length or arrives in chunks, and stops reading it.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Iterable

from .errors import error_response
from .match_schema import MAX_MATCH_ROWS
from .schema import MAX_BODY_BYTES, MAX_GAMES

__all__ = ["LOOPBACK", "HostCheck", "BodyLimit", "allowed_hosts", "split_host"]

#: the names of this machine that no other site can point its own name at
LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
_WILDCARD = ("0.0.0.0", "::", "")


def split_host(value: str) -> tuple[str, int | None]:
    """``"Example.org:8000"`` as ``("example.org", 8000)``, ``"[::1]"`` as ``("[::1]", None)``; a
    port that is not a number as ``-1`` (it matches no fixed port)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return value, -1
        name, rest = value[:end + 1], value[end + 1:]
    elif value.count(":") > 1:  # a bare IPv6 address (a Host header writes it in brackets)
        return f"[{value}]", None
    else:
        name, sep, port = value.partition(":")
        rest = sep + port
    if not rest:
        return name, None
    port = rest[1:]
    return name, int(port) if rest[0] == ":" and port.isascii() and port.isdigit() else -1


def _bracketed(host: str) -> str:
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return host


def allowed_hosts(host: str, port: int, extra: Iterable[str] = ()) -> list[str]:
    """The ``Host`` values the lab answers when it listens on ``host``:``port``: each name with
    that port or none. The names: ``host`` itself, the loopback names (:data:`LOOPBACK`), and,
    for a wildcard address (``0.0.0.0``, ``::``: every interface), this machine's host name and
    the addresses it resolves to; ``extra`` adds more (``statespace lab --allow-host``)."""
    names = [_bracketed(host.lower()), *LOOPBACK]
    if host in _WILDCARD:
        names += [socket.gethostname().lower(), socket.getfqdn().lower()]
        try:
            names += [_bracketed(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None)]
        except OSError:
            pass
    names += [split_host(e)[0] for e in extra]
    return list(dict.fromkeys(f"{n}:{port}" for n in names if n and n not in _WILDCARD))


class HostCheck:
    """ASGI middleware: 421 for a request whose ``Host`` header is not one of ``hosts``.

    An entry ``"name:port"`` allows ``name`` with that port or with none (a client may leave out
    a default port); an entry ``"name"`` allows ``name`` with any port. Names compare without
    case."""

    def __init__(self, app, hosts: Iterable[str]):
        self.app = app
        self.any_port: set[str] = set()
        self.ports: dict[str, set[int | None]] = {}
        for entry in hosts:
            name, port = split_host(entry)
            if port is None:
                self.any_port.add(name)
            else:
                self.ports.setdefault(name, {None}).add(port)
        self.shown = ", ".join(dict.fromkeys(str(e) for e in hosts))

    def allows(self, value: str | None) -> bool:
        if not value:
            return False
        name, port = split_host(value)
        return name in self.any_port or port in self.ports.get(name, ())

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        value = None
        for key, v in scope.get("headers") or []:
            if key == b"host":
                value = v.decode("latin-1")
                break
        if self.allows(value):
            await self.app(scope, receive, send)
            return
        got = f'"{value}"' if value else "none"
        response = error_response(421, [("headers.host", f"the lab answers requests addressed to {self.shown}, not "
                                                          f"{got}: open it at the address it printed")])
        await response(scope, receive, send)


class BodyLimit:
    """ASGI middleware: answers 413 to a request whose body is over ``limit`` bytes (by its
    ``Content-Length``, or by counting a body sent in chunks), before the app reads it."""

    def __init__(self, app, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            await self._too_large(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.limit:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _too_large(self, scope, receive, send) -> None:
        response = error_response(413, [("body", f"the request body is over the limit of {self.limit:,} bytes (1 MB); "
                                                 f"send fewer games (at most {MAX_GAMES:,}) or rows of "
                                                 f"matches (at most {MAX_MATCH_ROWS:,})")])
        await response(scope, receive, send)
