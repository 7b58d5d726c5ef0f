"""The rating lab's web application: the page, its static files and the JSON API (FastAPI).

Routes:

- ``GET /``: the page (``static/index.html``), and ``GET /static/...``: its script and style
  sheet. Everything the page loads comes from this server; the API documentation pages that
  FastAPI would serve from a CDN (``/docs``, ``/redoc``) are switched off.
- ``POST /api/v1/rate``: :func:`statespace.app.lab.compute.rate`.
- ``POST /api/v1/compare``: :func:`statespace.app.lab.compute.compare`.
- ``GET /api/v1/examples``: the two worked examples the page's buttons load.
- ``POST /api/v1/rate-matches``: :func:`statespace.app.lab.match_compute.rate_matches` (matches of
  many sides: teams, free-for-all rankings, partial play).
- ``GET /api/v1/match-methods``: the methods that rate matches, their settings, two examples.
- ``GET /openapi.json``: the OpenAPI description, generated from :mod:`statespace.app.lab.schema`.

In front of them: the ``Host`` check and the body-size limit (:mod:`statespace.app.lab.guard`); a
JSON body is read by :mod:`statespace.app.lab.body`; the work a request asks for is checked before
computing (:mod:`statespace.app.lab.limits`), and a bounded pool of workers computes. Every error
has one shape (:mod:`statespace.app.lab.errors`), and none of them stops the server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from . import compute, errors, limits, match_compute
from .body import JSONRoute
from .errors import MAX_ERRORS, RESPONSES, field_path
from .guard import LOOPBACK, BodyLimit, HostCheck
from .limits import MAX_NAMES, MAX_RESPONSE_BYTES, WAIT_SECONDS, WORKERS, Workers
from .schema import (MAX_BODY_BYTES, MAX_GAMES, CompareRequest, CompareResponse, RateRequest, RateResponse,
                     club_example, glickman_example)
from .match_schema import MAX_MATCH_ROWS, MAX_SIDES, MatchMethods, MatchRequest, MatchResponse, ffa_example, team_example

__all__ = ["create_app", "STATIC", "MAX_ERRORS", "BodyLimit", "field_path", "DESCRIPTION"]

#: the page's files, shipped as package data (``statespace = ["lab/static/*"]``)
STATIC = Path(__file__).with_name("static")

DESCRIPTION = f"""
The JSON API of `statespace lab`: rate one-vs-one games with Elo, FIDE Elo, Glicko-1, Glicko-2,
TrueSkill and the extended Kalman filter, through the same Python classes as the package's own
API (`filters.Glicko().run(games, initial=...)` and so on), so the numbers are the Python API's.

A game is `{{"period": 1, "player": "Player", "opponent": "A", "score": "1"}}`: the player's
result `"1"`, `"0.5"` (or `"½"`) or `"0"`. All games of one period are rated together from the
ratings before it (Glickman's rating periods). Starting values are optional
(`players`: name, rating, rd, volatility; TrueSkill's mu and sigma).

Send bodies as JSON (`Content-Type: application/json`; anything else: 415), to the address the
lab was started on (another `Host`: 421).

Limits, checked before anything is computed:
- a request body of at most {MAX_BODY_BYTES:,} bytes (1 MB; larger: 413);
- at most {MAX_GAMES:,} games and {MAX_NAMES:,} distinct names per request (more: 422);
- for `/api/v1/rate`, an answer of at most {MAX_RESPONSE_BYTES:,} bytes (10 MB), predicted from
  the request: each method returns a leaderboard row per name and a history point per name and
  per (name, period) in which that name played (more: 422, naming the limit and the numbers).
At most {WORKERS} requests compute at once; one that waits {WAIT_SECONDS:g} s for its turn gets 503.

Matches of many sides (`/api/v1/rate-matches`): one row per competitor of a match,
`{{"match": "m1", "competitor": "Ana", "side": "red", "rank": 1}}` (`side` left out: the competitor
plays alone, a free-for-all; `rank` 1 first, ties share it; optional `time` and `weight`, the share
of the match played), rated by one method whose filter rates matches (`/api/v1/match-methods`).
At most {MAX_MATCH_ROWS:,} rows and {MAX_NAMES:,} distinct competitors per request, at most
{MAX_SIDES:,} sides per match (more: 422).

Every error is JSON `{{"detail": ..., "errors": [{{"field", "message"}}]}}` naming the field and the
row (rows counted from 0): `games[3].score: must be "1", "0.5" or "0"`,
`settings.ekf.drift: ...`, `body: malformed JSON at line 1, column 12 (character 11): ...`.
"""


def create_app(allowed_hosts: Iterable[str] | None = None, workers: int = WORKERS,
               wait: float = WAIT_SECONDS) -> FastAPI:
    """The lab's FastAPI application (see the module docstring for its routes).

    ``allowed_hosts``: the ``Host`` values it answers (:class:`statespace.app.lab.guard.HostCheck`:
    ``"name:port"`` for that port or none, ``"name"`` for any port); by default the loopback
    names (``localhost``, ``127.0.0.1``, ``[::1]``) with any port. :func:`statespace.app.lab.serve`
    passes the address it listens on. ``workers`` requests compute at once; one that waits
    ``wait`` seconds for a turn is answered 503 (:class:`statespace.app.lab.limits.Workers`, kept as
    ``app.state.workers``).
    """
    from statespace._runtime.version import __version__

    hosts = list(LOOPBACK if allowed_hosts is None else allowed_hosts)
    app = FastAPI(title="statespace rating lab", version=__version__, description=DESCRIPTION,
                  docs_url=None, redoc_url=None)
    # a bounded pool of workers rather than one lock: a long request never holds up the next
    # (statespace.app.lab.limits says why the bound, and the work limits, keep every turn short)
    app.state.workers = pool = Workers(workers, wait)
    app.state.allowed_hosts = hosts
    # the last added runs first: the Host is checked before the body is read
    app.add_middleware(BodyLimit, limit=MAX_BODY_BYTES)
    app.add_middleware(HostCheck, hosts=hosts)
    errors.install(app)
    api = APIRouter(route_class=JSONRoute)

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @api.post("/api/v1/rate", response_model=RateResponse, responses=RESPONSES, summary="Rate games with each method")
    def rate(req: RateRequest) -> dict:
        """Leaderboards, rating histories (with each value's sd) and, given a ``pair``, the
        win/draw/loss odds of two competitors, for each method asked for: what
        ``method.run(games, initial=...)`` gives (``ratings()``, ``trajectories()``,
        ``method.predict_proba(state, a, b)``). Over a work limit (names, the answer's size): 422
        before computing."""
        limits.check(req, answer=True)
        with pool.turn():
            return compute.rate(req)

    @api.post("/api/v1/compare", response_model=CompareResponse, responses=RESPONSES,
              summary="Score the methods on held-out games")
    def compare(req: CompareRequest) -> dict:
        """``statespace.compare(methods, games, split, mode)``: held-out log loss, Brier score,
        accuracy, three-outcome log loss and the paired difference from the best, best first.
        Over a work limit (names): 422 before computing."""
        limits.check(req, answer=False)
        with pool.turn():
            return compute.compare(req)

    @api.get("/api/v1/examples", responses={421: RESPONSES[421]}, summary="The worked examples the page loads")
    def examples() -> dict:
        """``glickman``: Glickman's worked example (1500/200 against 1400/30, 1550/100, 1700/300);
        ``club``: a small club league over three periods. Each is a request for ``/api/v1/rate``."""
        return {"glickman": glickman_example(), "club": club_example()}

    @api.post("/api/v1/rate-matches", response_model=MatchResponse, responses=RESPONSES,
              summary="Rate matches of many sides (teams, free-for-all)")
    def rate_matches(req: MatchRequest) -> dict:
        """``method.run(Matches.from_long(rows))``: the leaderboard (``ratings()``) and, per match,
        each side's forecast strength before it (``perf_mean``, ``perf_var``) and the order that
        forecast predicts, against the result. Over a work limit (rows, names, sides): 422."""
        match_compute.check_work(req)
        with pool.turn():
            return match_compute.rate_matches(req)

    @api.get("/api/v1/match-methods", response_model=MatchMethods, responses={421: RESPONSES[421]},
             summary="The methods that rate matches of many sides")
    def match_methods() -> dict:
        """Every registered method whose filter has a match kernel, with the settings it takes;
        ``examples``: a free-for-all of four (``ffa``) and two against two (``teams``)."""
        return {"methods": [{"method": name, "label": label, "settings": match_compute.method_settings(name)}
                            for name, label in match_compute.match_methods().items()],
                "examples": {"ffa": ffa_example(), "teams": team_example()}}

    app.include_router(api)
    return app
