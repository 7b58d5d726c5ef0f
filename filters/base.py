"""The filter protocol: one fitted interface for every online rating method.

A :class:`Filter` subclass supplies its compiled kernels (see :mod:`filters._kernels`), its
parameter vector and how its state columns read in its own units; everything else — running
the games, rating periods, ``initial=`` values, forecasts, leaderboards, trajectories — is
written once here.

Textbook verbs on an explicit state (pure: each returns a new state)::

    state = method.init_state(players)
    state = method.predict(state, dt)            # time update, every competitor
    state = method.update(state, batch)          # one rating period of games
    p = method.predict_proba(state, a, b)        # (n, 3) win/draw/loss

and on whole tables::

    fitted = method.fit(train)                   # = method.run(train)
    fitted.proba                                 # one-step-ahead forecasts, input row order
    fitted.predict_proba(test)                   # frozen forecasts from the final state
    fitted.ratings(); fitted.trajectories()
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np
import pandas as pd

from statespace import Games, SkillModel

from . import _kernels as K

__all__ = ["Filter", "FilterState", "FilterRun"]


@dataclass(frozen=True)
class FilterState:
    """A filter's belief about every competitor: rows of ``values`` in the method's units.

    ``count`` is the number of games each competitor has played; ``last`` the time of its
    last appearance (NaN before the first), in the filter's time units.
    """

    players: np.ndarray
    values: np.ndarray
    count: np.ndarray
    last: np.ndarray
    columns: tuple[str, ...]

    def frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.values, columns=list(self.columns))
        df.insert(0, "player", self.players)
        df["games"] = self.count
        return df

    def copy(self) -> "FilterState":
        return FilterState(self.players.copy(), self.values.copy(), self.count.copy(), self.last.copy(),
                           self.columns)


class Filter:
    """Base class of every filter. Subclasses set the class attributes and :meth:`theta`.

    Class attributes
    ----------------
    name: short name used by ``compare`` and the CLI.
    columns: names of the state columns; ``columns[0]`` is the skill estimate (``mean``).
    sd_column: the column holding a standard deviation in the method's units, or ``None``.
    time_unit: ``"period"`` (rating-period codes when the games have them, else game order),
        ``"day"`` or ``"game"``; what ``dt`` counts in ``predict``.
    """

    name: ClassVar[str] = "filter"
    columns: ClassVar[tuple[str, ...]] = ("mean",)
    sd_column: ClassVar[str | None] = None
    time_unit: ClassVar[str] = "period"
    scratch_width: ClassVar[int] = 4
    _predict: ClassVar[Any] = K.no_predict
    _proba: ClassVar[Any]
    _update: ClassVar[Any]
    _game: ClassVar[Any] = None  # optional fused one-game kernel (see filters._kernels)
    #: how many leading state columns a run records after each game (None: all of them)
    record_columns: ClassVar[int | None] = None

    # ------------------------------------------------------------------ to implement
    @property
    def model(self) -> SkillModel:  # pragma: no cover - abstract
        """The :class:`statespace.SkillModel` this filter assumes, in its own units."""
        raise NotImplementedError

    def theta(self) -> np.ndarray:  # pragma: no cover - abstract
        """Parameter vector passed to the kernels."""
        raise NotImplementedError

    def prior_row(self) -> np.ndarray:  # pragma: no cover - abstract
        """State row of a newcomer."""
        raise NotImplementedError

    def initial_row(self, value) -> np.ndarray:
        """State row from a user's ``initial=`` value (a number: the rating)."""
        row = self.prior_row().copy()
        try:
            values = np.atleast_1d(np.asarray(value, dtype=float))
        except (TypeError, ValueError):
            raise ValueError(f"{self.name}: initial value {value!r} is not a number or tuple of numbers") from None
        if values.size > row.size or not np.all(np.isfinite(values)):
            raise ValueError(f"{self.name}: initial value {value!r} must be up to {row.size} finite "
                             f"number(s): {', '.join(self.columns)}")
        row[: values.size] = values
        return row

    @property
    def shown_columns(self) -> tuple[str, ...]:
        """State columns shown in leaderboards and trajectories besides ``mean`` and ``sd``
        (default: every column after the first that is not the sd column)."""
        return tuple(c for c in self.columns[1:] if c != self.sd_column)

    # ------------------------------------------------------------------ settings and tuning
    #: constructor argument -> attribute name, where they differ
    _param_aliases: ClassVar[dict[str, str]] = {}

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this method."""
        out = {}
        for name, p in inspect.signature(type(self).__init__).parameters.items():
            if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            out[name] = getattr(self, self._param_aliases.get(name, name))
        return out

    def param_value(self, name: str) -> float:
        """Current value of a tunable parameter."""
        return self.get_params()[name]

    def with_params(self, **changes) -> "Filter":
        """A new method with some settings changed."""
        params = self.get_params()
        unknown = set(changes) - set(params)
        if unknown:
            raise ValueError(f"{self.name}: unknown settings {sorted(unknown)}; known: {sorted(params)}")
        params.update(changes)
        return type(self)(**params)

    def tunable(self, games: Games) -> dict[str, tuple[float, float]]:
        """Parameters :meth:`tune` fits by default, with their bounds (may depend on the games:
        a home advantage only where some game is not neutral)."""
        return {}

    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None,
             maxiter: int = 200, burn_in: float = 0.0, standard_errors: bool = True) -> "Filter":
        """A new method whose parameters maximise the one-step-ahead likelihood of ``games``.

        ``params``: names to fit (default :meth:`tunable`); ``bounds``: ``{name: (low, high)}``;
        ``objective``: ``"log_loss"`` (expected score, draw = 0.5), ``"log_loss_3"`` (the
        three-outcome log-likelihood) or ``"brier"``; ``None`` (default) means ``"log_loss_3"``
        when :attr:`model` has a threshold or Davidson draw model and ``"log_loss"`` otherwise
        (:func:`filters.tuning.default_objective`). ``burn_in``: share of the earliest games
        left out of the objective. The returned method carries ``.tuning``, a
        :class:`filters.tuning.TuneResult` with the values, standard errors, the objective used
        (``objective_name``) and the trace of every evaluation (see :mod:`filters.tuning`).
        ``standard_errors=False`` skips the standard errors (a numerical Hessian: about ``2 k^2``
        more runs for ``k`` parameters), leaving ``se`` empty.
        """
        from .tuning import tune

        return tune(self, games, params, bounds, objective=objective, maxiter=maxiter, burn_in=burn_in,
                    standard_errors=standard_errors)[0]

    #: whether the update tempers each game's likelihood by the games' weights
    honours_weights: ClassVar[bool] = False

    def check_games(self, games: Games) -> None:
        """Raise ``ValueError`` for games this method cannot rate (here: weighted games for a
        method that ignores weights)."""
        if not self.honours_weights and np.any(games.weight != 1.0):
            raise ValueError(f"{self.name} does not use game weights; these games carry weights "
                             f"(Games.with_weights); use a method that honours them — the filters "
                             f"{', '.join(weighted_filters())} or any smoother (smoothers.LaplaceSmoother, "
                             f"BradleyTerry, PyMCSmoother) — or drop the weights")

    def fused_game_kernel(self):
        """The one-game kernel used when every game is its own period, or None to use the
        period kernels for those too."""
        return type(self)._game

    def derived_columns(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """Extra leaderboard columns computed from state rows (e.g. TrueSkill's mu - 3 sigma)."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        return ""

    # ------------------------------------------------------------------ state verbs
    def init_state(self, players, initial: Mapping[str, Any] | None = None) -> FilterState:
        """State of ``players`` (names) before any game.

        ``initial`` maps names to starting values in the method's units: a number (the
        rating), a tuple of the first state columns, or a mapping of column names that may
        also give ``"games"`` already played (e.g. ``{"rating": 2450, "games": 120}``).
        """
        players = np.asarray(players, dtype=object)
        values = np.tile(self.prior_row(), (players.size, 1)).astype(np.float64)
        count = np.zeros(players.size, np.int64)
        if initial:
            if not isinstance(initial, Mapping):
                raise TypeError(f"{self.name}: initial must map competitor names to values, "
                                f"got {type(initial).__name__}")
            index = {p: i for i, p in enumerate(players)}
            for name, value in initial.items():
                i = index.get(str(name))
                if i is None:
                    continue  # a competitor who does not play here: nothing to start
                if isinstance(value, Mapping):
                    value = dict(value)
                    games = value.pop("games", 0)
                    if not (float(games) == int(games) and int(games) >= 0):
                        raise ValueError(f"{self.name}: initial games of {name!r} must be a whole number >= 0")
                    count[i] = int(games)
                    unknown = set(value) - set(self.columns)
                    if unknown:
                        raise ValueError(f"{self.name}: initial value of {name!r} has unknown keys "
                                         f"{sorted(unknown)}; known: {list(self.columns)} and 'games'")
                    row = self.initial_row([value[c] for c in self.columns[: 1 + max(
                        [self.columns.index(c) for c in value] or [0])]] if value else [])
                else:
                    row = self.initial_row(value)
                values[i] = row
        return FilterState(players, np.ascontiguousarray(values), count,
                           np.full(players.size, np.nan), tuple(self.columns))

    def predict(self, state: FilterState, dt: float) -> FilterState:
        """Time update of every competitor by ``dt`` units of time (a new state)."""
        if not dt >= 0:
            raise ValueError(f"dt must be >= 0, got {dt!r}")
        out = state.copy()
        theta = self.theta()
        for i in range(out.values.shape[0]):
            type(self)._predict(out.values, i, theta, float(dt))
        out.last[~np.isnan(out.last)] += dt
        return out

    def update(self, state: FilterState, batch: Games) -> FilterState:
        """Observation update with all games of ``batch`` as one rating period (a new state).

        Every game is computed from the pre-period state; no time passes.
        """
        self.check_games(batch)
        out, ids = self._aligned(state, batch)
        a, b = ids[batch.a], ids[batch.b]
        home = (~batch.neutral).astype(np.float64)
        scratch = K.empty_scratch(out.values.shape[0], self.scratch_width)
        type(self)._update(out.values, out.count, self.theta(), np.ascontiguousarray(a), np.ascontiguousarray(b),
                     np.array(batch.score, dtype=np.float64), home,
                                 np.array(batch.weight, dtype=np.float64), 0, len(batch), scratch)
        return out

    def predict_proba(self, state: FilterState, a, b, at_home=None) -> np.ndarray:
        """Win/draw/loss forecasts (n, 3) of ``a`` against ``b`` (names) from ``state``."""
        a = np.atleast_1d(np.asarray(a, dtype=object))
        b = np.atleast_1d(np.asarray(b, dtype=object))
        home = np.zeros(a.size) if at_home is None else np.broadcast_to(np.asarray(at_home, float), a.shape)
        names, codes = np.unique(np.concatenate([a, b]).astype(str), return_inverse=True)
        st, ids = self._aligned(state, names.astype(object))
        last = np.full(st.values.shape[0], np.nan)  # no time passes
        return self._frozen_proba(st.values, last, np.ascontiguousarray(ids[codes[:a.size]]),
                                  np.ascontiguousarray(ids[codes[a.size:]]), np.array(home, dtype=np.float64),
                                  np.zeros(a.size))

    def _frozen_proba(self, values, last, a, b, home, t) -> np.ndarray:
        """Forecasts of games (ids ``a``, ``b``) from ``values`` without learning, each
        competitor moved forward from ``last`` to the game's time ``t``."""
        cls = type(self)
        out = np.empty((a.size, 3))
        shared = self.shared_row(values.shape[0])
        K.forecast_loop(cls._predict, cls._proba, values, last, self.theta(), a, b, home, t, out,
                        np.empty((2 if shared < 0 else 3, values.shape[1])), shared)
        return out

    def shared_row(self, n_rows: int) -> int:
        """Index of the state row shared by all games (the EKF's latent home advantage), which
        the run loops move forward in time at every rating period; -1 (the default): none."""
        return -1

    # ------------------------------------------------------------------ whole tables
    def fit(self, games: Games, initial: Mapping[str, Any] | None = None) -> "FilterRun":
        """Run through ``games`` and return the fitted filter (same as :meth:`run`)."""
        return self.run(games, initial=initial)

    def run(self, games: Games, initial: Mapping[str, Any] | None = None,
            state: FilterState | None = None) -> "FilterRun":
        """Filter ``games`` in time order, rating period by rating period.

        Returns a :class:`FilterRun` whose ``proba`` holds each game's forecast made before
        its own update (one step ahead), aligned with the input rows. ``state`` continues
        from an earlier run instead of starting from the prior (``initial`` then applies only
        to newcomers).
        """
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        self.check_games(games)
        if state is None:
            st = self.init_state(games.players, initial)
            ids = np.arange(games.n_players)
        else:
            st, ids = self._aligned(state, games, initial)
        order = games.order
        # rows already in time order (the usual case): skip every permutation, which would
        # otherwise cost more than the compiled loop itself on big tables
        in_order = bool(np.all(order[1:] > order[:-1]))

        def by_time(x: np.ndarray) -> np.ndarray:  # a fresh, writeable, contiguous copy
            return np.array(x if in_order else x[order], order="C")

        a = by_time(games.a) if state is None else by_time(ids[games.a])
        b = by_time(games.b) if state is None else by_time(ids[games.b])
        score = by_time(games.score)
        home = by_time(~games.neutral).astype(np.float64)
        weight = by_time(games.weight)
        t = by_time(self.times(games)).astype(np.float64, copy=False)
        starts = games.batches()
        n, k = len(games), self.record_columns or st.values.shape[1]
        out_p = np.empty((n, 3))
        out_post = np.empty((n, 2 * k))
        cls = type(self)
        shared = self.shared_row(st.values.shape[0])
        if games.period is None and self.fused_game_kernel() is not None:
            # every game its own period: the fused one-game path (same numbers, faster)
            K.sequential_loop(cls._predict, self.fused_game_kernel(), cls._predict is not K.no_predict, st.values, st.count,
                              st.last, self.theta(), a, b, score, home, weight, t, out_p, out_post, shared)
        else:
            scratch = K.empty_scratch(st.values.shape[0], self.scratch_width)
            K.run_loop(cls._predict, cls._proba, cls._update, st.values, st.count, st.last, self.theta(),
                       a, b, score, home, weight, t, starts, out_p, out_post, scratch, shared)
        if in_order:
            proba = out_p
        else:
            proba = np.empty_like(out_p)
            proba[order] = out_p
        return FilterRun(self, games, st, proba, out_post)

    # ------------------------------------------------------------------ helpers
    def times(self, games: Games) -> np.ndarray:
        """Each game's time in this filter's time unit (caller's row order)."""
        if self.time_unit == "day":
            return games.days()
        if self.time_unit == "period" and games.period is not None:
            return games.period.astype(np.float64)
        # game count: each game one step
        t = np.empty(len(games))
        t[games.order] = np.arange(len(games), dtype=np.float64)
        return t

    def _aligned(self, state: FilterState, games, initial=None) -> tuple[FilterState, np.ndarray]:
        """Copy of ``state`` extended with newcomers of ``games`` (a :class:`Games` or an array of
        names); ids mapping the games' competitor ids (or the names) to rows of the state."""
        players = games.players if isinstance(games, Games) else np.asarray(games, dtype=object)
        index = {p: i for i, p in enumerate(state.players)}
        new = [p for p in players if p not in index]
        out = state.copy()
        if new:
            extra = self.init_state(np.asarray(new, dtype=object), initial)
            out = FilterState(np.concatenate([state.players, extra.players]),
                              np.ascontiguousarray(np.vstack([state.values, extra.values])),
                              np.concatenate([state.count, extra.count]),
                              np.concatenate([state.last, extra.last]), state.columns)
            index.update({p: len(state.players) + j for j, p in enumerate(new)})
        ids = np.array([index[p] for p in players], dtype=np.int64)
        return out, ids


class FilterRun:
    """A filter run over a table of games: the fitted interface shared by every method.

    Attributes: ``method``, ``games``, ``state`` (final :class:`FilterState`), ``proba``
    (one-step-ahead win/draw/loss forecasts, input row order).
    """

    def __init__(self, method: Filter, games: Games, state: FilterState, proba: np.ndarray, post: np.ndarray):
        # ``post``: both competitors' state rows after each game, in time order (games.order)
        self.method = method
        self.games = games
        self.state = state
        self.proba = proba
        self._post = post

    def __repr__(self) -> str:
        return f"FilterRun({self.method!r}, {self.games!r})"

    @property
    def expected_score(self) -> np.ndarray:
        """One-step-ahead expected score ``P(win) + P(draw) / 2`` of each game."""
        return self.proba[:, 0] + 0.5 * self.proba[:, 1]

    def predict_proba(self, games: Games) -> np.ndarray:
        """Frozen forecasts (n, 3) of ``games`` from the final state, without learning.

        Each competitor is moved forward from its last appearance to the game's time (so
        uncertainty grows where the method tracks it); newcomers start from the prior.
        """
        method = self.method
        self._check_time_basis(games)
        st, ids = method._aligned(self.state, games)
        return method._frozen_proba(st.values, st.last, np.ascontiguousarray(ids[games.a]),
                                    np.ascontiguousarray(ids[games.b]),
                                    np.ascontiguousarray((~games.neutral).astype(np.float64)),
                                    np.ascontiguousarray(method.times(games), dtype=np.float64))

    def continue_run(self, games: Games) -> "FilterRun":
        """Keep filtering: run ``games`` starting from this run's final state."""
        self._check_time_basis(games)
        return self.method.run(games, state=self.state)

    def _check_time_basis(self, games: Games) -> None:
        """Times are rating-period codes when the games have periods and days otherwise: the
        two cannot be mixed between the fitted games and new ones."""
        if self.method.time_unit == "period" and (self.games.period is None) != (games.period is None):
            fitted = "with" if self.games.period is not None else "without"
            given = "with" if games.period is not None else "without"
            raise ValueError(f"{self.method.name}: fitted on games {fitted} rating periods but given games "
                             f"{given}; group the whole table with Games.with_periods(...) before splitting")

    def _columns(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """``mean``, ``sd`` (if the method tracks one) and the method's shown state columns."""
        m = self.method
        cols = {"mean": values[:, 0]}
        if m.sd_column is not None:
            cols["sd"] = values[:, m.columns.index(m.sd_column)]
        for c in m.shown_columns:
            cols[c] = values[:, m.columns.index(c)]
        cols.update(m.derived_columns(values))
        return cols

    def ratings(self) -> pd.DataFrame:
        """Leaderboard: ``player``, ``mean``, ``sd`` (if tracked), ``games`` and the method's own
        columns (e.g. ``rd`` and ``volatility``), best ``mean`` first; competitors without games
        are left out."""
        st = self.state
        cols = self._columns(st.values)
        df = pd.DataFrame({"player": st.players, "mean": cols.pop("mean")})
        if "sd" in cols:
            df["sd"] = cols.pop("sd")
        df["games"] = st.count
        for c, v in cols.items():
            df[c] = v
        df = df[df["games"] > 0]
        return df.sort_values(["mean", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)

    def trajectories(self) -> pd.DataFrame:
        """Long table of each competitor's state after each of its games (time order):
        ``time``, ``player``, ``mean``, ``sd`` (if tracked) and the state columns, with ``row``
        the game's input row."""
        g = self.games
        k = self._post.shape[1] // 2
        order = g.order
        post = self._post  # already in time order
        rows = np.concatenate([order, order])
        players = np.concatenate([g.a[order], g.b[order]])
        vals = np.vstack([post[:, :k], post[:, k:]])
        # interleave so that a game's two rows are adjacent and time order is kept
        n = order.size
        inter = np.empty(2 * n, dtype=np.int64)
        inter[0::2] = np.arange(n)
        inter[1::2] = np.arange(n, 2 * n)
        df = pd.DataFrame({"time": g.time[rows[inter]], "player": g.players[players[inter]],
                           "row": g.row[rows[inter]]})
        for c, v in self._columns(vals[inter]).items():
            df[c] = v
        return df


def weighted_filters() -> list[str]:
    """Names of this package's filter classes whose update honours game weights (read from each
    class's ``honours_weights`` flag, so the list in error messages cannot go stale)."""
    out, todo = [], list(Filter.__subclasses__())
    while todo:
        cls = todo.pop(0)
        todo.extend(cls.__subclasses__())
        if (cls.honours_weights and not cls.__name__.startswith("_") and cls.__module__.startswith("filters.")
                and cls.__name__ not in out):
            out.append(cls.__name__)
    return sorted(out)
