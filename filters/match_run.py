"""A filter run over a table of matches of many sides: the driver of :func:`filters.match_loop.match_loop`
and its result, :class:`MatchRun`.

:meth:`filters.base.Filter.run` (and ``fit``) come here when given a
:class:`statespace.data.matches.Matches`. A filter rates matches when its class has a match kernel
(``_match``, :mod:`filters.match_loop`); any other refuses them with a ``ValueError`` naming the
method and the first match it cannot rate (:func:`check_matches`).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np
import pandas as pd

from statespace.data.matches import Matches
from statespace.methods.display import Ratings, as_ratings
from statespace.methods.registry import collect

from . import match_loop as ML
from .run import leaderboard

__all__ = ["MatchRun", "run_matches", "check_matches", "match_times", "match_filters", "recorded_columns"]


def match_filters() -> list[str]:
    """Names of the filter classes users construct by name that rate matches of many sides."""
    methods, _ = collect(__package__)
    return sorted({f.__name__ for f in methods.values()
                   if isinstance(f, type) and getattr(f, "_match", None) is not None})


def _first_many_sided(matches: Matches) -> int:
    """Index of the first match that is not one competitor against one (-1: none)."""
    sides = np.diff(matches.match_ptr)
    members = np.diff(matches.side_ptr)
    side_of_match = np.repeat(np.arange(matches.n_matches), sides)
    team = np.zeros(matches.n_matches, bool)
    np.logical_or.at(team, side_of_match, members != 1)
    bad = np.flatnonzero((sides != 2) | team)
    return int(bad[0]) if bad.size else -1


def _shape(matches: Matches, m: int) -> str:
    """``2 sides of 6 and 6 competitors``, ``500 sides of one competitor each``, ``40 sides of 1 to
    4 competitors``."""
    sizes = [len(s) for s in matches.sides(m)]
    if max(sizes) == 1:
        return f"{len(sizes)} sides of one competitor each"
    if len(sizes) <= 4:
        return f"{len(sizes)} sides of {', '.join(map(str, sizes[:-1]))} and {sizes[-1]} competitors"
    return f"{len(sizes)} sides of {min(sizes)} to {max(sizes)} competitors"


def check_matches(method, matches: Matches) -> None:
    """``ValueError`` naming ``method`` and the first match when the method has no match kernel."""
    if not isinstance(matches, Matches):
        raise TypeError(f"expected statespace.data.matches.Matches, got {type(matches).__name__}")
    if getattr(type(method), "_match", None) is not None:
        return
    m = _first_many_sided(matches)
    what = (f"{matches.match_text(m)} has {_shape(matches, m)}" if m >= 0
            else f"these {matches.n_matches} matches are all one competitor against one: rate them as games "
                 f"(statespace.Games)")
    raise ValueError(f"{method.name} rates games of two competitors only and cannot rate matches of many sides: "
                     f"{what}. Methods that rate matches: {', '.join(match_filters())}")


def match_times(method, matches: Matches) -> np.ndarray:
    """Each match's time in ``method``'s time unit: days (``time_unit="day"``), days over
    ``period_days`` where the filter counts periods of that length, else the match's index (each
    match one step)."""
    unit = getattr(method, "time_unit", "game")
    days = np.asarray(matches.time, dtype=np.float64)
    if unit == "day":
        return np.ascontiguousarray(days)
    if unit == "period" and getattr(method, "period_days", None) is not None:
        return np.ascontiguousarray(days / method.period_days)
    return np.arange(matches.n_matches, dtype=np.float64)


def recorded_columns(method, width: int) -> int:
    """How many leading state columns a recording run keeps of each member after its match: the
    filter's ``record_columns`` (None: all ``width``), through its sd column at least (what
    :meth:`MatchRun.trajectories` reads)."""
    k = method.record_columns or width
    if method.sd_column is not None:
        k = max(k, method.columns.index(method.sd_column) + 1)
    return min(k, width)


def run_matches(method, matches: Matches, initial: Mapping[str, Any] | None = None,
                record: bool = False) -> "MatchRun":
    """Rate ``matches`` in time order with ``method``'s match kernel from its prior (``initial``:
    starting values as for :meth:`filters.base.Filter.init_state`)."""
    check_matches(method, matches)
    method.match_forecast()  # a setting that cannot forecast a match (FIDE's rules) refuses here
    st = method.init_state(matches.names, initial)
    n_sides = int(matches.side_ptr.size - 1)
    # each side's score (NaN when absent) until its match's kernel writes the forecast there: an
    # observation of the scores (the EKF's Margin) reads them first
    perf_mean = np.array(matches.score, dtype=np.float64)
    perf_var = np.empty(n_sides)
    post = ML.empty_post(int(matches.member.size), recorded_columns(method, st.values.shape[1]), record)
    ML.match_loop(type(method)._predict, type(method)._match, st.values, st.count, st.last, method.theta(),
                  match_times(method, matches), matches.match_ptr, matches.side_ptr, matches.member,
                  matches.weight, matches.rank, perf_mean, perf_var, post, record)
    method.check_results(st)
    return MatchRun(method, matches, st, perf_mean, perf_var, post if record else None, initial)


class MatchRun:
    """A filter run over matches: ``method``, ``matches``, ``state`` (the final
    :class:`filters.state.FilterState`) and each side's one-step-ahead forecast ``perf_mean`` and
    ``perf_var`` (its performance's mean and skill variance from the state before its match, in
    the method's units, rows of ``matches``' side arrays); ``forecast`` says which ranking these
    moments predict (:class:`statespace.model.ranking_forecast.RankingForecast`)."""

    def __init__(self, method, matches: Matches, state, perf_mean, perf_var, post, initial=None):
        self.method = method
        self.matches = matches
        self.state = state
        self.perf_mean = perf_mean
        self.perf_var = perf_var
        self._post_rows = post
        self._initial = initial

    @property
    def forecast(self):
        return self.method.match_forecast()

    def __repr__(self) -> str:
        return f"MatchRun({self.method!r}, {self.matches.n_matches} matches, {self.matches.n_players} competitors)"

    def ratings(self) -> Ratings:
        """Leaderboard: ``player``, ``mean``, ``sd`` (if tracked), ``matches`` played and the
        method's own columns, best ``mean`` first; competitors without matches left out."""
        m = self.method
        df = leaderboard(m, self.state, "matches")
        return as_ratings(df, f"{m!r} · {self.matches.n_matches:,} matches · {int(df.shape[0]):,} competitors")

    def trajectories(self) -> pd.DataFrame:
        """Long table of each competitor's state after each of its matches (time order): ``time``,
        ``player``, ``mean``, ``sd`` (if tracked), ``match`` (the match's label)."""
        if self._post_rows is None:
            self._post_rows = run_matches(self.method, self.matches, self._initial, record=True)._post_rows
        mt = self.matches
        m = self.method
        members_per_match = np.diff(mt.side_ptr[mt.match_ptr])
        match_of = np.repeat(np.arange(mt.n_matches), members_per_match)
        out = pd.DataFrame({"time": np.asarray(mt.when)[match_of], "player": np.asarray(mt.names, dtype=object)[mt.member],
                            "mean": self._post_rows[:, 0]})
        if m.sd_column is not None:
            out["sd"] = self._post_rows[:, m.columns.index(m.sd_column)]
        out["match"] = np.asarray(mt.label, dtype=object)[match_of]
        return out
