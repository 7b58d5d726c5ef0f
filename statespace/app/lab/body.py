"""Reading a JSON request body, with an error that says what is wrong and where.

FastAPI parses a body itself, but answers a body it cannot parse for any reason other than
malformed JSON (not UTF-8, nested too deeply, a number too long for Python) with a bare
``{"detail": "There was an error parsing the body"}``, and validates a body sent as
``text/plain`` as raw bytes ("must be a JSON object"). :class:`JSONRoute` reads the body first
with :func:`check_json_body`, which names the fault and its place (line, column and character,
counted from 1, 1 and 0), so FastAPI only ever parses a body known to be good.

Only ``application/json`` (or ``application/<something>+json``) is read: a browser sends a
cross-site request without asking the server first only for ``text/plain``, form and
multipart bodies, so a JSON-only API cannot be made to compute by another site's page.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from fastapi.routing import APIRoute

from .errors import LabInputError, field_path

__all__ = ["MAX_DEPTH", "check_json_body", "JSONRoute", "is_json_type"]

#: the deepest nesting of arrays and objects a body may have (a request needs 3 levels)
MAX_DEPTH = 100
_STRING_RE = r'"(?:[^"\\]|\\.)*"'
_STRING = re.compile(_STRING_RE, re.DOTALL)
_TOKENS = re.compile(_STRING_RE + r"|[\[\]{}]", re.DOTALL)
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")  # the escape of a surrogate, paired or not
_OPEN, _CLOSE = (ord("["), ord("{")), (ord("]"), ord("}"))


def is_json_type(content_type: str | None) -> bool:
    """``application/json`` or ``application/<x>+json``, with any parameters (``; charset=utf-8``)."""
    if not content_type:
        return False
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def _where(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line}, column {column} (character {pos})"


def _depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text`` (valid JSON), at C speed: strings
    blanked out by one regular expression, then a running sum of the brackets."""
    import numpy as np

    code = np.frombuffer(_STRING.sub('""', text).encode("utf-8"), dtype=np.uint8)
    step = np.isin(code, _OPEN).astype(np.int64) - np.isin(code, _CLOSE)
    return int(np.cumsum(step).max(initial=0))


def _lone_surrogate(value: Any, path: tuple) -> tuple[tuple, str, int] | None:
    """``(path, text, position)`` of the first string or key holding a lone surrogate (JSON's
    ``"\\ud800"`` decodes to one; no UTF-8 exists for it, so no message could show it), or ``None``."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return path, value, exc.start
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, (*path, i))
            if found:
                return found
    elif isinstance(value, dict):
        for key, item in value.items():
            found = _lone_surrogate(key, (*path, key)) or _lone_surrogate(item, (*path, key))
            if found:
                return found
    return None


def _too_deep(text: str) -> int | None:
    """Where the nesting first goes deeper than :data:`MAX_DEPTH` (strings skipped), or ``None``."""
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif c in "]}":
            depth -= 1
    return None


def check_json_body(content_type: str | None, body: bytes) -> None:
    """A :class:`~statespace.app.lab.errors.LabInputError` unless ``body`` is JSON sent as JSON:
    415 for another content type, 422 for an empty body, 400 for bytes that are not UTF-8, JSON
    that does not parse, nesting deeper than :data:`MAX_DEPTH` or a number with more digits than
    Python converts (``sys.get_int_max_str_digits()``), 422 on the field of a string or key that
    holds a lone surrogate (which pydantic cannot read)."""
    if not is_json_type(content_type):
        got = f'"{content_type}"' if content_type else "none"
        raise LabInputError("headers.content-type",
                            f"send the body as JSON with Content-Type: application/json (got {got})", status=415)
    if not body.strip():
        raise LabInputError("body", "is required: send a JSON object", status=422)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = body[:exc.start].decode("utf-8")
        raise LabInputError("body", f"is not UTF-8 text: byte 0x{body[exc.start]:02x} at "
                                    f"{_where(start, len(start))}", status=400) from None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LabInputError("body", f"malformed JSON at {_where(text, exc.pos)}: {exc.msg}", status=400) from None
    except RecursionError:
        pos = _too_deep(text)
        at = f" at {_where(text, pos)}" if pos is not None else ""
        raise LabInputError("body", f"JSON nested more than {MAX_DEPTH} levels deep{at} (a request needs 3)",
                            status=400) from None
    except ValueError as exc:  # an integer beyond Python's limit on digits converted
        limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
        m = re.search(r"\d{%d,}" % (limit + 1), text) if limit else None
        at = f" at {_where(text, m.start())}" if m else ""
        raise LabInputError("body", f"a number with {len(m.group()) if m else 'too many'} digits{at}: the lab reads "
                                    f"numbers of up to {limit} digits", status=400) from None
    if _depth(text) > MAX_DEPTH:  # parsed, but FastAPI's own parse of it, deeper in the stack, might not
        pos = _too_deep(text)
        raise LabInputError("body", f"JSON nested more than {MAX_DEPTH} levels deep at {_where(text, pos)} "
                                    "(a request needs 3)", status=400)
    if _SURROGATE.search(text):
        where = _lone_surrogate(parsed, ())
        if where is not None:
            path, value, at = where
            raise LabInputError(field_path(("body", *path)), f"must be Unicode text: a lone surrogate "
                                f"\\u{ord(value[at]):04x} at character {at} (half of a pair of JSON \\u escapes)")


class JSONRoute(APIRoute):
    """A route whose JSON body is read by :func:`check_json_body` before FastAPI parses it."""

    def get_route_handler(self):
        handler = super().get_route_handler()
        if self.body_field is None:
            return handler

        async def checked(request):
            check_json_body(request.headers.get("content-type"), await request.body())
            return await handler(request)  # request.body() is cached: FastAPI reads the same bytes

        return checked
