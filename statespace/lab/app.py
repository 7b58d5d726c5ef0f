"""The rating lab's web application: the page, its static files and the JSON API (FastAPI).

Routes:

- ``GET /``: the page (``static/index.html``), and ``GET /static/...``: its script and style
  sheet. Everything the page loads comes from this server; the API documentation pages that
  FastAPI would serve from a CDN (``/docs``, ``/redoc``) are switched off.
- ``POST /api/v1/rate``: :func:`statespace.lab.compute.rate`.
- ``POST /api/v1/compare``: :func:`statespace.lab.compute.compare`.
- ``GET /api/v1/examples``: the two worked examples the page's buttons load.
- ``GET /openapi.json``: the OpenAPI description, generated from :mod:`statespace.lab.schema`.

Errors are JSON, ``{"detail": "<field>: <message>", "errors": [{"field": ..., "message": ...},
...]}``: 400 for a body that is not JSON, 413 for a body over
:data:`~statespace.lab.schema.MAX_BODY_BYTES`, 422 for a value the lab cannot rate (the field
and the row named, rows counted from 0), 500 for a bug (the message says so). None of them
stops the server.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from . import compute
from .schema import (MAX_BODY_BYTES, MAX_GAMES, METHODS, CompareRequest, CompareResponse, RateRequest, RateResponse,
                     club_example, glickman_example)

__all__ = ["create_app", "STATIC", "MAX_ERRORS"]

#: the page's files, shipped as package data (``statespace = ["lab/static/*"]``)
STATIC = Path(__file__).with_name("static")
#: the most errors listed in one answer (the first of them is also its ``detail``)
MAX_ERRORS = 20
_log = logging.getLogger("statespace.lab")


class ErrorItem(BaseModel):
    field: str | None = Field(description="The field, with the row: games[3].score, players[1].rd, body.")
    message: str


class ErrorResponse(BaseModel):
    detail: str = Field(description="The first error, '<field>: <message>', and how many more there are.")
    errors: list[ErrorItem] = Field(description=f"Up to {MAX_ERRORS} errors.")


_ERRORS = {400: {"model": ErrorResponse, "description": "The body is not valid JSON."},
           413: {"model": ErrorResponse, "description": f"The body is over {MAX_BODY_BYTES:,} bytes."},
           422: {"model": ErrorResponse, "description": "A field's value cannot be rated; the message names the "
                                                        "field and row."}}

DESCRIPTION = f"""
The JSON API of `statespace lab`: rate one-vs-one games with Elo, FIDE Elo, Glicko-1, Glicko-2,
TrueSkill and the extended Kalman filter, through the same Python classes as the package's own
API (`filters.Glicko().run(games, initial=...)` and so on), so the numbers are the Python API's.

A game is `{{"period": 1, "player": "Player", "opponent": "A", "score": "1"}}`: the player's
result `"1"`, `"0.5"` (or `"½"`) or `"0"`. All games of one period are rated together from the
ratings before it (Glickman's rating periods). Starting values are optional
(`players`: name, rating, rd, volatility; TrueSkill's mu and sigma).

Limits: a request body of at most {MAX_BODY_BYTES:,} bytes (1 MB; larger: 413) and at most
{MAX_GAMES:,} games (more: 422). Errors are JSON `{{"detail": ..., "errors": [{{"field", "message"}}]}}`
naming the field and the row (rows counted from 0): `games[3].score: must be "1", "0.5" or "0"`.
"""


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
        response = _error(413, [("body", f"the request body is over the limit of {self.limit:,} bytes (1 MB); "
                                         f"send fewer games (at most {MAX_GAMES:,})")])
        await response(scope, receive, send)


def _error(status: int, items: list[tuple[str | None, str]]) -> JSONResponse:
    first_field, first = items[0]
    detail = f"{first_field}: {first}" if first_field else first
    if len(items) > 1:
        detail += f" (and {len(items) - 1} more error{'s' if len(items) > 2 else ''})"
    return JSONResponse(status_code=status, content={
        "detail": detail, "errors": [{"field": f, "message": m} for f, m in items[:MAX_ERRORS]]})


def field_path(loc: tuple) -> str:
    """``("body", "games", 3, "score")`` as ``games[3].score``; the body itself is ``body``."""
    parts = list(loc[1:] if loc and loc[0] == "body" else loc)
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text or "body"


def _message(err: dict[str, Any]) -> str:
    """A validation error's message in the lab's words (the custom checks of
    :mod:`statespace.lab.schema` already are)."""
    kind, ctx = err.get("type", ""), err.get("ctx") or {}
    loc = err.get("loc", ())
    if kind == "missing":
        return "is required" if len(loc) > 1 else "is required: send a JSON object"
    if kind == "extra_forbidden":
        return "is not a known field"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return "must be a JSON object"
    if kind == "list_type":
        return "must be a list"
    if kind == "literal_error":
        got = err.get("input")
        if len(loc) >= 2 and loc[-2] == "methods":
            return f"unknown method {got!r}; choose from {', '.join(METHODS)}"
        return f"must be one of {ctx.get('expected', '')}, got {got!r}"
    return str(err.get("msg", "is not valid"))


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = list(exc.errors())
    bad_json = [e for e in errors if e.get("type") == "json_invalid"]
    if bad_json:
        e = bad_json[0]
        where = e["loc"][1] if len(e.get("loc", ())) > 1 else None
        reason = (e.get("ctx") or {}).get("error", "not valid JSON")
        at = f" at character {where}" if isinstance(where, int) else ""
        return _error(400, [("body", f"malformed JSON{at}: {reason}")])
    return _error(422, [(field_path(tuple(e.get("loc", ()))), _message(e)) for e in errors])


async def _input_error(request: Request, exc: compute.LabInputError) -> JSONResponse:
    return _error(422, [(exc.field, exc.message)])


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    _log.exception("statespace lab: internal error on %s", request.url.path)
    return _error(500, [(None, f"internal error ({type(exc).__name__}: {' '.join(str(exc).split())[:300]}); "
                               "please report it with the request")])


def create_app() -> FastAPI:
    """The lab's FastAPI application (see the module docstring for its routes)."""
    from statespace import __version__

    app = FastAPI(title="statespace rating lab", version=__version__, description=DESCRIPTION,
                  docs_url=None, redoc_url=None)
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(compute.LabInputError, _input_error)
    app.add_exception_handler(Exception, _internal_error)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.post("/api/v1/rate", response_model=RateResponse, responses=_ERRORS, summary="Rate games with each method")
    def rate(req: RateRequest) -> dict:
        """Leaderboards, rating histories (with each value's sd) and, given a ``pair``, the
        win/draw/loss odds of two competitors, for each method asked for: what
        ``method.run(games, initial=...)`` gives (``ratings()``, ``trajectories()``,
        ``method.predict_proba(state, a, b)``)."""
        return compute.rate(req)

    @app.post("/api/v1/compare", response_model=CompareResponse, responses=_ERRORS,
              summary="Score the methods on held-out games")
    def compare(req: CompareRequest) -> dict:
        """``statespace.compare(methods, games, split, mode)``: held-out log loss, Brier score,
        accuracy, three-outcome log loss and the paired difference from the best, best first."""
        return compute.compare(req)

    @app.get("/api/v1/examples", summary="The worked examples the page loads")
    def examples() -> dict:
        """``glickman``: Glickman's worked example (1500/200 against 1400/30, 1550/100, 1700/300);
        ``club``: a small club league over three periods. Each is a request for ``/api/v1/rate``."""
        return {"glickman": glickman_example(), "club": club_example()}

    return app
