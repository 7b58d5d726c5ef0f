"""How much work one request may ask of the lab, and how many requests compute at once.

**The work of a request**, counted from the request alone, before anything is computed:

- its games, at most :data:`~statespace.app.lab.schema.MAX_GAMES` (the schema's check);
- its distinct names, at most :data:`MAX_NAMES`;
- for ``/rate``, the size of the answer, at most :data:`MAX_RESPONSE_BYTES`. Each method returns
  a leaderboard row per name and a history point per name (its starting value) and per
  (name, period) pair in which that name played, so the answer grows with methods x (names +
  name-periods); :func:`work` predicts its size from those counts and the names' lengths, as an
  upper bound (every number printed at its longest).

The periods themselves cost nothing: a filter carries a competitor's idle periods to their next
game (Glicko's RD grows by ``c^2`` times the periods passed), so a run's time grows with the
games and the name-periods, not with games x periods. Those are the counts limited here, so the
time a request may take is bounded too (well under a few seconds on one core at the limits).

**Workers.** Computing runs in FastAPI's thread pool; :class:`Workers` lets at most ``n`` requests
compute at once (by default :data:`WORKERS`) and answers 503 to a request that waited
:data:`WAIT_SECONDS` for a turn. A single lock would make every request wait for the one before
it; unbounded concurrency would let a burst of requests share the cores until each took minutes.
With each request's work capped, a turn comes within seconds, and a second request is served
while a long one is still running.
"""

from __future__ import annotations

import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass

from .errors import LabBusy, LabInputError
from .schema import METHODS

__all__ = ["MAX_NAMES", "MAX_RESPONSE_BYTES", "WORKERS", "WAIT_SECONDS", "Work", "work", "check", "Workers"]

#: the most distinct competitor names in one request
MAX_NAMES = 5_000
#: the largest answer ``/rate`` may give, in bytes (predicted before computing: :func:`work`)
MAX_RESPONSE_BYTES = 10_000_000
#: how many requests compute at once
WORKERS = 2
#: how long a request waits for a worker before it is answered 503
WAIT_SECONDS = 30.0

_LONGEST = -1.2345678901234567e-300  # a double at its longest in JSON: 24 characters
_COMPACT = {"separators": (",", ":"), "ensure_ascii": False}


def _bytes(row: dict) -> int:
    """A row's JSON length with an empty name, plus the comma that follows it."""
    return len(json.dumps(row, **_COMPACT).encode()) + 1


#: the longest leaderboard row and history point, less their name
_BOARD_ROW = _bytes({"rank": 10**9, "player": "", "rating": _LONGEST, "rd": _LONGEST, "games": 10**12,
                     "volatility": _LONGEST, "conservative": _LONGEST, "reached_2400": False})
_HISTORY_POINT = _bytes({"player": "", "period": -10**9, "rating": _LONGEST, "rd": _LONGEST, "volatility": _LONGEST})
#: a method's result less its rows (spec, units, notes), at its longest
_METHOD = 2_000


@dataclass(frozen=True)
class Work:
    """What a request asks for: ``games``, distinct ``names``, distinct ``periods``, distinct
    (name, period) pairs ``name_periods``, ``methods`` run, and the predicted answer size in
    ``response_bytes`` (``/rate``'s)."""

    games: int
    names: int
    periods: int
    name_periods: int
    methods: int
    response_bytes: int


def _name_bytes(name: str) -> int:
    return len(json.dumps(name, ensure_ascii=False).encode())


def work(req) -> Work:
    """The :class:`Work` of a rate or compare request (names as the schema normalised them)."""
    names: dict[str, int] = {}
    pairs: set[tuple[str, int]] = set()
    periods: set[int] = set()
    for g in req.games:
        periods.add(g.period)
        for who in (g.player, g.opponent):
            if who not in names:
                names[who] = _name_bytes(who)
            pairs.add((who, g.period))
    methods = len(req.methods) if req.methods else len(METHODS)
    per_method = (_METHOD + sum(_BOARD_ROW + b for b in names.values())
                  + sum(_HISTORY_POINT + b for b in names.values())
                  + sum(_HISTORY_POINT + names[who] for who, _ in pairs))
    top = 500 + sum(b + 1 for b in names.values()) + 12 * len(periods)
    odds = 200 * methods
    return Work(len(req.games), len(names), len(periods), len(pairs), methods, top + odds + methods * per_method)


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} bytes"


def check(req, answer: bool = True) -> Work:
    """The request's :class:`Work`, or a 422 :class:`~statespace.app.lab.errors.LabInputError`
    naming each limit it is over and by how much; ``answer``: limit the answer's size too
    (``/rate``; ``/compare`` answers one row per method)."""
    w = work(req)
    over = []
    if w.names > MAX_NAMES:
        over.append(("games", f"{w.names:,} distinct names, over the limit of {MAX_NAMES:,} per request; "
                              "rate fewer competitors at a time"))
    if answer and w.response_bytes > MAX_RESPONSE_BYTES:
        over.append(("games", f"the answer would be up to {_mb(w.response_bytes)} ({w.methods} method"
                              f"{'s' if w.methods != 1 else ''} x {w.names + w.name_periods:,} history points: "
                              f"{w.names:,} names and {w.name_periods:,} name-periods), over the limit of "
                              f"{_mb(MAX_RESPONSE_BYTES)}; ask for fewer methods, or send fewer periods or games"))
    if over:
        raise LabInputError(*over[0], more=over[1:])
    return w


class Workers:
    """At most ``n`` computations at once; a request that waits ``wait`` seconds for a turn gets
    :class:`~statespace.app.lab.errors.LabBusy` (503)."""

    def __init__(self, n: int = WORKERS, wait: float = WAIT_SECONDS):
        if n < 1:
            raise ValueError(f"workers must be at least 1, got {n}")
        self.n, self.wait = n, wait
        self._slots = threading.BoundedSemaphore(n)

    @contextmanager
    def turn(self):
        if not self._slots.acquire(timeout=self.wait):
            raise LabBusy(f"the lab is busy: all {self.n} workers stayed busy for {self.wait:g} s; "
                          "retry in a few seconds")
        try:
            yield
        finally:
            self._slots.release()
