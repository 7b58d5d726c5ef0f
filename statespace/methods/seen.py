"""Which forecasts are honest: games a fitted method has already seen, and games from its past.

A fitted method (a filter's run, a smoother's fit, ``auto``'s or ``Blend``'s fitted object)
forecasts new games from its belief after the LAST fitted game. That is an honest forecast of a
game played later. A game inside the fitted span is another matter: its forecast comes from a
belief that has already read its result (or later results), so it scores far better than any
forecast made before the game could, and compared with a published forecast it shows a false win.
The honest forecasts of fitted games are the one-step-ahead ones (a run's ``proba``; for held-out
games ``statespace.compare(..., mode="online")`` or ``mode="walk_forward"``).

"Inside the fitted span" (:func:`seen_rows`): a game dated before the last fitted game's time (with
rating periods on both tables, its period before the last fitted period), or at that time and one
of the fitted games themselves (the same input row and the same two competitors). A new game at
the same time as the last fitted one is not flagged: a table split in time order
(:meth:`statespace.Games.split`) often puts games of one day on both sides, and forecasting the
later part of that day from the earlier is what ``compare``'s frozen mode does.

:class:`SeenGamesWarning` (a ``UserWarning``) says so and names the honest alternative; silence it
with ``warnings.filterwarnings("ignore", category=statespace.SeenGamesWarning)`` where a forecast
of fitted games is meant (an in-sample fit, say). :func:`check_not_past` refuses games dated
before a run's end where a filter is asked to continue it.
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings

import numpy as np

from statespace.data.games import Games, GamesError

__all__ = ["SeenGamesWarning", "seen_rows", "warn_seen", "already_checked", "check_not_past"]


class SeenGamesWarning(UserWarning):
    """A fitted method was asked to forecast games inside its fitted span (see
    :mod:`statespace.methods.seen`): the forecasts read those games' results, so they are not honest
    forecasts; the message names the honest alternative."""


#: set while a caller that has checked (and warned) already forecasts through a fitted object
_CHECKED = contextvars.ContextVar("statespace_seen_checked", default=False)


@contextlib.contextmanager
def already_checked():
    """A context in which :func:`warn_seen` stays quiet: for a fitted object that forecasts through
    another (``auto``'s through its run) and has warned in its own words."""
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def _clocks(fitted: Games, games: Games) -> tuple[np.ndarray, np.ndarray, bool]:
    """Both tables' times on one clock: rating-period codes when both have periods, else days
    (numeric times as given); and whether periods are used."""
    if fitted.period is not None and games.period is not None:
        return fitted.period.astype(np.float64), games.period.astype(np.float64), True
    return fitted.days(), games.days(), False


def _shown(games: Games, i: int, periods: bool) -> str:
    """Game ``i``'s time as a reader knows it: its period, date or number."""
    if periods:
        return f"period {int(games.period[i])}"
    t = games.time[i]
    if games.is_datetime:
        text = str(np.datetime_as_string(np.datetime64(t, "s")))
        return text[:-len("T00:00:00")] if text.endswith("T00:00:00") else text
    return f"{float(t):g}"


def seen_rows(fitted: Games, games: Games) -> np.ndarray:
    """Positions (input order) of ``games`` inside the span of ``fitted``, the fitted games (see
    the module docstring): before the last fitted time, or at it and the same game (row and
    competitors) as a fitted one. Both tables must share their time base (checked by the caller)."""
    if len(fitted) == 0 or len(games) == 0:
        return np.zeros(0, dtype=np.int64)
    t_fit, t_new, _ = _clocks(fitted, games)
    end = t_fit.max()
    before = t_new < end
    at_end = np.flatnonzero(t_new == end)
    if at_end.size:
        last = np.flatnonzero(t_fit == end)
        known = set(zip(fitted.row[last].tolist(), fitted.a_name[last].tolist(), fitted.b_name[last].tolist()))
        same = [(r, a, b) in known for r, a, b in zip(games.row[at_end].tolist(), games.a_name[at_end].tolist(),
                                                       games.b_name[at_end].tolist())]
        before[at_end[np.asarray(same, dtype=bool)]] = True
    return np.flatnonzero(before)


def warn_seen(owner: str, fitted: Games, games: Games, honest: str, *, stacklevel: int = 3) -> None:
    """:class:`SeenGamesWarning` when some of ``games`` are inside the span of ``fitted`` (the games
    ``owner``, a fitted method, was fitted on): how many, the first (time order) by row and time,
    the end of the fitted games, and ``honest``, the forecast to use instead."""
    if _CHECKED.get():
        return
    rows = seen_rows(fitted, games)
    if rows.size == 0:
        return
    t_fit, t_new, periods = _clocks(fitted, games)
    first = int(rows[np.lexsort((rows, t_new[rows]))[0]])
    last = int(np.argmax(t_fit))
    warnings.warn(SeenGamesWarning(
        f"{owner}: {rows.size} of {len(games)} games to forecast lie inside the fitted games' span (the first, "
        f"row {int(games.row[first])}, at {_shown(games, first, periods)}; the fitted games end at "
        f"{_shown(fitted, last, periods)}): they are forecast from the belief after every fitted game, which has "
        f"read their results or later ones, so these are not honest forecasts. {honest}"), stacklevel=stacklevel)


def check_not_past(owner: str, fitted: Games, games: Games) -> None:
    """:class:`statespace.GamesError` naming the first game (time order) of ``games`` dated before
    the end of ``fitted`` (with rating periods on both: in an earlier period), the history a run
    is to continue."""
    if len(fitted) == 0 or len(games) == 0:
        return
    t_fit, t_new, periods = _clocks(fitted, games)
    end = t_fit.max()
    early = np.flatnonzero(t_new < end)
    if early.size == 0:
        return
    first = int(early[np.lexsort((early, t_new[early]))[0]])
    last = int(np.argmax(t_fit))
    row = int(games.row[first])
    raise GamesError(
        f"{owner}: row {row} is dated {_shown(games, first, periods)}, before the end of the fitted history "
        f"({_shown(fitted, last, periods)}){f', as are {early.size - 1} more of these games' if early.size > 1 else ''}"
        f": a run continues forward in time. Give only later games, run the whole table again (method.run(all_games)), "
        f"or pass allow_past=True to filter them from the current state anyway", rows=[row], column="time")
