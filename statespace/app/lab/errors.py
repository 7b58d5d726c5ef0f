"""The rating lab's one error shape, and the handlers that answer every error in it.

Every error the lab answers, whatever its status, is JSON::

    {"detail": "<field>: <message> (and 2 more errors)",
     "errors": [{"field": "games[3].score", "message": "must be \\"1\\", \\"0.5\\" or \\"0\\" ..."}, ...]}

``field`` is the path of the value at fault as the request spells it (``games[3].player``,
``players[0].rating``, ``settings.ekf.drift``; rows counted from 0, as JSON arrays are indexed),
``body`` for the body as a whole, ``headers.host`` / ``headers.content-type`` for a header, and
``null`` only when no part of the request is at fault (an unknown path, a busy server, a bug).
``detail`` repeats the first error, so a client that reads one string still reads the reason.
"""

from __future__ import annotations

import logging
from typing import Any, Iterable

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from .schema import METHODS

__all__ = ["MAX_ERRORS", "ErrorItem", "ErrorResponse", "LabInputError", "LabBusy", "error_response", "field_path",
           "install", "RESPONSES", "safe_text"]

#: the most errors listed in one answer (the first of them is also its ``detail``)
MAX_ERRORS = 20
_log = logging.getLogger("statespace.app.lab")


class ErrorItem(BaseModel):
    field: str | None = Field(description="The value at fault, with its row: games[3].score, players[1].rd, "
                                          "settings.ekf.drift; body for the whole body, headers.host for a header; "
                                          "null when no part of the request is at fault.")
    message: str


class ErrorResponse(BaseModel):
    detail: str = Field(description="The first error, '<field>: <message>', and how many more there are.")
    errors: list[ErrorItem] = Field(description=f"Up to {MAX_ERRORS} errors.")


class LabInputError(ValueError):
    """A request the lab cannot answer as asked: ``field`` names the value at fault (and its
    row) as the API's messages do (``players[2].name``), ``message`` says why; ``more`` holds
    further ``(field, message)`` pairs. ``status`` is the HTTP status (422 unless said)."""

    def __init__(self, field: str | None, message: str, more: Iterable[tuple[str | None, str]] = (),
                 status: int = 422):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message
        self.more = list(more)
        self.status = status

    @property
    def items(self) -> list[tuple[str | None, str]]:
        return [(self.field, self.message), *self.more]


class LabBusy(Exception):
    """Every worker of the lab stayed busy for as long as a request may wait (answered 503)."""


def safe_text(text: str) -> str:
    """``text`` as UTF-8 can carry it: a lone surrogate (JSON's ``"\\ud800"`` decodes to one) is
    written as its escape, so the error naming it can itself be sent."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def error_response(status: int, items: list[tuple[str | None, str]], headers: dict | None = None) -> JSONResponse:
    """The lab's error body for ``items`` (``(field, message)`` pairs, the first one first)."""
    items = [(None if f is None else safe_text(f), safe_text(m)) for f, m in items]
    first_field, first = items[0]
    detail = f"{first_field}: {first}" if first_field else first
    if len(items) > 1:
        detail += f" (and {len(items) - 1} more error{'s' if len(items) > 2 else ''})"
    return JSONResponse(status_code=status, headers=headers, content={
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
    :mod:`statespace.app.lab.schema` already are)."""
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
    return error_response(422, [(field_path(tuple(e.get("loc", ()))), _message(e)) for e in exc.errors()])


async def _input_error(request: Request, exc: LabInputError) -> JSONResponse:
    return error_response(exc.status, exc.items)


async def _busy(request: Request, exc: LabBusy) -> JSONResponse:
    return error_response(503, [(None, str(exc))], headers={"Retry-After": "5"})


_HTTP_FIELDS = {400: "body", 404: None, 405: None}


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """Starlette's own errors (an unknown path, a method a path does not take) in the lab's shape."""
    if exc.status_code == 404:
        message = f"no such page or API path: {request.url.path}"
    elif exc.status_code == 405:
        message = f"{request.method} is not a method of {request.url.path}"
    else:
        message = str(exc.detail)
    return error_response(exc.status_code, [(_HTTP_FIELDS.get(exc.status_code), message)],
                          headers=getattr(exc, "headers", None))


async def _internal_error(request: Request, exc: Exception) -> JSONResponse:
    _log.exception("statespace lab: internal error on %s", request.url.path)
    return error_response(500, [(None, f"internal error ({type(exc).__name__}: {' '.join(str(exc).split())[:300]}); "
                                       "please report it with the request")])


def install(app) -> None:
    """Answer every error of ``app`` in the lab's shape."""
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(LabInputError, _input_error)
    app.add_exception_handler(LabBusy, _busy)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _internal_error)


def _response(text: str) -> dict:
    return {"model": ErrorResponse, "description": text}


#: the error answers of a JSON endpoint, for its OpenAPI description
RESPONSES = {
    400: _response("The body is not JSON the lab can read: not UTF-8, malformed (with the line, column and "
                   "character), nested too deeply, or a number with too many digits; field: body."),
    413: _response("The body is over the size limit; field: body."),
    415: _response("The body is not sent as JSON: send it with Content-Type: application/json; "
                   "field: headers.content-type."),
    421: _response("The request's Host header is not an address the lab serves (a page of another site that "
                   "points its own name at this machine); field: headers.host."),
    422: _response("A value cannot be rated, or the request is over a work limit; each error names the field "
                   "and row (games[3].score, players[0].rating, settings.ekf.drift)."),
    500: _response("A bug in the lab; the message says so. The server keeps serving."),
    503: _response("Every worker stayed busy while the request waited; retry (Retry-After says when)."),
}
