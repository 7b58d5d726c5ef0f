"""The filter protocol: one fitted interface for every online rating method.

A :class:`Filter` subclass supplies its compiled kernels (see :mod:`filters.kernels`), its
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

Where the parts live (each module imports only those above it here; none imports this one):

- :mod:`filters.state`: :class:`FilterState` and ``GameArrays``, the records a run reads and
  writes; :mod:`filters.kernels`: the compiled loops;
- ``filters._loops``: the calls into those loops (a run, a rating period, frozen forecasts);
  ``filters._initial``: reading ``initial=`` values; :mod:`filters.run`: :class:`FilterRun`;
- :mod:`filters.objectives`, :mod:`filters.grid`, :mod:`filters.tuning`: the scores, the batched
  grid and tuning, functions over any method with the members they use;
- this module: the :class:`Filter` class, whose methods call the modules above (``grid`` and
  ``tune`` included), so that a filter module needs only this one and :mod:`filters.kernels`.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any, ClassVar, Mapping

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges as R
from statespace.methods.registry import collect
from statespace.methods.settings import Settings

from . import _loops
from . import kernels as K
from ._initial import read_initial
from ._shared_hooks import SharedRowHooks
from .grid import grid as _grid
from .match_run import run_matches
from .run import FilterRun
from .state import FilterState, GameArrays  # noqa: F401  (GameArrays: its old import path)
from .tuning import tune as _tune

__all__ = ["Filter", "FilterState", "FilterRun"]


class Filter(SharedRowHooks, Settings):
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
    #: the sd's name in messages, where it differs from the column's (Glicko's "RD")
    sd_label: ClassVar[str | None] = None
    time_unit: ClassVar[str] = "period"
    #: with ``time_unit = "period"``, the length of a unit of time in days for games without
    #: rating periods (None: count games instead)
    period_days: float | None = None
    #: the names of ``theta``'s entries, in order (see :meth:`theta`)
    params: ClassVar[tuple[str, ...]] = ()
    #: the compiled kernels (see :mod:`filters.kernels`): a filter made of sites sets ``_site``
    #: and ``rule`` (and ``_apply`` for :data:`~filters.kernels.RULE_CUSTOM`); a filter whose
    #: period update is joint sets ``_update`` instead
    _predict: ClassVar[Any] = K.no_predict
    _proba: ClassVar[Any]
    _site: ClassVar[Any] = None
    _apply: ClassVar[Any] = K.no_apply
    rule: ClassVar[int] = K.RULE_CUSTOM
    #: accumulator columns a site writes (see :mod:`filters.kernels`)
    scratch_width: ClassVar[int] = K.SCRATCH_WIDTH
    _update: ClassVar[Any] = None
    #: how many leading state columns a run records after each game (None: all of them)
    record_columns: ClassVar[int | None] = None
    #: the kernels read each side's points (``score_a``, ``score_b``) although the model's
    #: observation is win/draw/loss (a filter that rates from points, as Pythagorean does)
    needs_scores: ClassVar[bool] = False

    # ------------------------------------------------------------------ to implement
    @property
    def model(self) -> SkillModel:  # pragma: no cover - abstract
        """The :class:`statespace.SkillModel` this filter assumes, in its own units."""
        raise NotImplementedError

    def _reads_scores(self) -> bool:
        """Whether a run hands ``score_a`` and ``score_b`` to the kernels."""
        return self.needs_scores or self.model.observation.needs_scores

    def theta(self) -> np.ndarray:
        """Parameter vector passed to the kernels: :meth:`kernel_value` of each name in
        :attr:`params`, in order."""
        return np.array([float(self.kernel_value(n)) for n in self.params], dtype=np.float64)

    def kernel_value(self, name: str) -> float:
        """The number the kernels read under ``name`` (default: the attribute of that name)."""
        return getattr(self, name)

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
        if self.sd_column is not None and not row[self.columns.index(self.sd_column)] > 0:
            shown = self.sd_label or self.sd_column
            raise ValueError(f"{self.name}: {shown} must be > 0, got {row[self.columns.index(self.sd_column)]!r}")
        return row

    @property
    def shown_columns(self) -> tuple[str, ...]:
        """State columns shown in leaderboards and trajectories besides ``mean`` and ``sd``
        (default: every column after the first that is not the sd column)."""
        return tuple(c for c in self.columns[1:] if c != self.sd_column)

    # ------------------------------------------------------------------ tuning
    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None,
             maxiter: int = 200, burn_in: float = 0.0, standard_errors: bool = True,
             start: str = "grid") -> "Filter":
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
        more runs for ``k`` parameters), leaving ``se`` empty. ``start``: ``"grid"`` (default)
        starts the optimiser from the best of a coarse grid over the search box scored in one
        batched compiled pass (:meth:`grid`), ``"current"`` from this method's settings.
        """
        self._refuse_if_match_only()
        return _tune(self, games, params, bounds, objective=objective, maxiter=maxiter, burn_in=burn_in,
                     standard_errors=standard_errors, start=start)[0]

    def grid(self, games: Games, *, objective: str | None = None, burn_in: float = 0.0, **values) -> pd.DataFrame:
        """One-step-ahead scores of every setting of the Cartesian product of ``values`` on
        ``games``, e.g. ``Elo().grid(games, k=np.linspace(5, 80, 1000))`` or ``k=[16, 32],
        home=[0, 50, 100]``: a DataFrame, one row per setting, columns the settings then
        ``log_loss``, ``log_loss_3`` (where defined) and ``brier``, equal to scoring
        ``self.with_params(**setting).run(games)`` with :mod:`statespace.metrics` on the games after
        the ``burn_in`` share of the earliest. The settings run as an extra axis of one compiled
        pass, in parallel over settings (:mod:`filters.grid`); ``df.attrs["best"]`` is the setting
        with the lowest ``objective`` (default: the one :meth:`tune` would use)."""
        self._refuse_if_match_only()
        return _grid(self, games, objective=objective, burn_in=burn_in, **values)

    #: whether the update tempers each game's likelihood by the games' weights
    honours_weights: ClassVar[bool] = False
    #: whether the filter rates games (``Games``); ``False``: it rates only matches of many sides
    #: (:class:`statespace.data.matches.Matches`) and refuses games with a ``ValueError``
    rates_games: ClassVar[bool] = True
    #: the compiled update of one match of many sides (:mod:`filters.match_loop`); ``None``: the
    #: filter rates games of two competitors only and refuses matches
    _match: ClassVar[Any] = None

    def match_forecast(self):
        """The ranking observation this filter's forecast of a match means, in its units
        (:class:`statespace.model.ranking_forecast.RankingForecast`)."""
        raise ValueError(f"{self.name} does not rate matches of many sides")

    def check_games(self, games: Games) -> None:
        """Raise ``ValueError`` for games this method cannot rate: records its model's observation
        cannot score (:meth:`statespace.Observation.check_games`: a ``GamesError`` naming the rows
        and column), weighted games for a method that ignores weights; any games for a method
        that rates only matches (:attr:`rates_games`)."""
        self._refuse_if_match_only()
        model = self.model
        model.observation.check_games(games, scale=model.scale, owner=self.name)
        if not self.honours_weights and np.any(games.weight != 1.0):
            raise ValueError(f"{self.name} does not use game weights; these games carry weights "
                             f"(Games.with_weights); use a method that honours them — the filters "
                             f"{', '.join(weighted_filters())} or any smoother (smoothers.LaplaceSmoother, "
                             f"BradleyTerry, PyMCSmoother) — or drop the weights")

    def _refuse_if_match_only(self) -> None:
        if not self.rates_games:
            raise ValueError(f"{self.name} rates contests of many entrants (statespace.data.matches.Matches) and "
                             f"not games; convert games with Matches.from_games")

    def site_kernels(self):
        """``(site, apply, rule)`` the loops combine games with (the class's, unless a setting
        chooses another rule, as FIDE's K does for Elo)."""
        cls = type(self)
        return cls._site, cls._apply, cls.rule

    #: a forecast kernel the loops call in place of the observation's (``None``: the observation's);
    #: set only on a copy (:meth:`_forecasting_with`)
    _forecast_override: Any = None

    def observation_kernels(self):
        """``(derivs, forecast, obs)``: the compiled log-likelihood derivatives and forecast of the model's
        observation and its parameter vector, which the loops hand to every kernel."""
        return self._observation_of(self.model)[0]

    def _observation_of(self, model: SkillModel):
        """(:meth:`observation_kernels`, :meth:`_reads_scores`) of ``model``."""
        o = model.observation
        forecast = o.forecast_kernel if self._forecast_override is None else self._forecast_override
        kernels = (o.derivs_kernel, forecast, np.ascontiguousarray(model.obs_vector(), dtype=np.float64))
        return kernels, self.needs_scores or o.needs_scores

    def _batch_structure(self, games: Games, times_memo: dict):
        """``(key, kernels)``: what must be equal for settings to share one batched loop of
        :mod:`filters.grid` (the kernels, the times, the state's shape and the observation's vector
        length: settings differing only in ``theta``, the observation's numbers and the starting
        state share it), and :meth:`observation_kernels`. ``times_memo`` keeps each distinct time
        axis once (the base class's times depend only on the time unit and the period length)."""
        cls = type(self)
        if cls.observation_kernels is Filter.observation_kernels and cls._reads_scores is Filter._reads_scores:
            kernels, reads = self._observation_of(self.model)  # both read the model, built anew at each read
        else:
            kernels = self.observation_kernels()
            reads = self._reads_scores()
        derivs, forecast, obs = kernels
        site, apply, rule = self.site_kernels()
        if cls.times is Filter.times:
            tkey = (self.time_unit, self.period_days)
            if tkey not in times_memo:
                times_memo[tkey] = self.times(games).tobytes()
            times = times_memo[tkey]
        else:
            times = self.times(games).tobytes()
        prior = self.prior_row()
        return (cls, cls._predict, cls._proba, cls._update, site, apply, rule, derivs, forecast, obs.size,
                self.params, self.shared_names(self.group_levels(games)), self.group, self.scratch_width, prior.size,
                reads, times), kernels

    def _forecasting_with(self, forecast) -> "Filter":
        """A copy of this filter whose loops call ``forecast`` (:data:`~statespace.model.observation.FORECAST_SIG`)
        where they would call the observation's forecast kernel; the updates are unchanged (they
        read the observation's derivatives, never its forecast). :class:`FilterRun` replays a run
        with a kernel that hands back the moments it is given, to read the predictive distribution
        of each game's skill difference."""
        twin = copy.copy(self)
        twin._forecast_override = forecast
        return twin

    def derived_columns(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """Extra leaderboard columns computed from state rows (e.g. TrueSkill's mu - 3 sigma)."""
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    def _describe(self) -> str:
        return ""

    # ------------------------------------------------------------------ state verbs
    def init_state(self, players, initial: Mapping[str, Any] | None = None, levels: tuple = ()) -> FilterState:
        """State of ``players`` (names) before any game (and of the groups ``levels`` of a grouping
        column, :meth:`group_levels`, where the filter keeps shared rows per group).

        ``initial`` maps names to starting values in the method's units: a number (the
        rating), a tuple of the first state columns, or a mapping of column names that may
        also give ``"games"`` already played (e.g. ``{"rating": 2450, "games": 120}``).
        """
        players = np.asarray(players, dtype=object)
        values = np.tile(self.prior_row(), (players.size, 1)).astype(np.float64)
        count = np.zeros(players.size, np.int64)
        if initial:
            read_initial(self, players, initial, values, count)
        core = FilterState(players, np.ascontiguousarray(values), count, np.full(players.size, np.nan),
                           tuple(self.columns))
        names = self.shared_names(levels)
        if not names:
            return core
        clash = sorted(set(names) & {str(p) for p in players})
        if clash:
            raise ValueError(f"{self.name}: a competitor is named {clash[0]!r}, the name of a shared state row; "
                             f"rename it")
        rows = np.array([self.initial_row(initial[n]) if initial and n in initial else self.shared_prior(n)
                         for n in names], dtype=np.float64)
        shared = FilterState(np.array(names, dtype=object), rows, np.zeros(len(names), np.int64),
                             np.full(len(names), np.nan), tuple(self.columns))
        return FilterState.join(core, shared)

    def predict(self, state: FilterState, dt: float) -> FilterState:
        """Time update of every competitor by ``dt`` units of time (a new state)."""
        if not (dt >= 0 and math.isfinite(dt)):
            raise ValueError(f"dt must be a finite number >= 0, got {dt!r}")
        out = state.copy()
        theta = self.theta_for(len(state.shared))
        for i in range(out.values.shape[0]):
            type(self)._predict(out.values, i, theta, float(dt))
        out.last[~np.isnan(out.last)] += dt
        return out

    def update(self, state: FilterState, batch: Games) -> FilterState:
        """Observation update with all games of ``batch`` as one rating period (a new state).

        Every game is computed from the pre-period state; no time passes.
        """
        self.check_games(batch)
        self._check_time_base(state, batch)
        out, ids = self._aligned(state, batch)
        _loops.period(self, out, ids, batch)
        self.check_results(out)
        return out

    def predict_proba(self, state: FilterState, a, b, at_home=None, group=None) -> np.ndarray:
        """Win/draw/loss forecasts (n, 3) of ``a`` against ``b`` (names) from ``state``; ``group``:
        each game's group (a filter with a grouping column, :attr:`group`, needs it; a group the state
        has not seen starts at the prior)."""
        self._refuse_if_match_only()
        a = np.atleast_1d(np.asarray(a, dtype=object))
        b = np.atleast_1d(np.asarray(b, dtype=object))
        home = np.zeros(a.size) if at_home is None else np.broadcast_to(np.asarray(at_home, float), a.shape)
        names, codes = np.unique(np.concatenate([a, b]).astype(str), return_inverse=True)
        groups = self._game_groups(group, a.size)
        levels = () if groups is None else tuple(np.unique(groups))
        st, ids = self._aligned(state, names.astype(object), copy=False, levels=levels)
        if groups is not None:
            home = self.encode_home(home, groups, self.state_levels(st))
        last = np.full(st.values.shape[0], np.nan)  # no time passes
        return self._frozen_proba(st.values, last, np.ascontiguousarray(ids[codes[:a.size]]),
                                  np.ascontiguousarray(ids[codes[a.size:]]), np.array(home, dtype=np.float64),
                                  np.zeros(a.size), len(st.shared))

    def _frozen_proba(self, values, last, a, b, home, t, n_shared: int | None = None) -> np.ndarray:
        """Forecasts of games (ids ``a``, ``b``) from ``values`` without learning, each
        competitor moved forward from ``last`` to the game's time ``t``; ``n_shared``: the number
        of shared rows at the end of ``values`` (default: :meth:`shared_names`' without groups)."""
        return _loops.frozen_proba(self, values, last, a, b, home, t, n_shared)

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
        to newcomers). Each competitor's state after each game (:meth:`FilterRun.trajectories`)
        is not kept: the run is replayed, recording it, when first asked for.

        Given :class:`statespace.data.matches.Matches` (matches of many sides: teams, free-for-all)
        it rates them one by one through the filter's match kernel and returns a
        :class:`filters.match_run.MatchRun` (each side's one-step-ahead forecast); a filter
        without one refuses them, naming itself and the match.
        """
        if initial is not None and isinstance(initial, Mapping):
            initial = dict(initial)  # kept for the replay: later changes to the caller's mapping do not reach it
        if isinstance(games, Matches):
            if state is not None:
                raise ValueError(f"{self.name}: a run over matches starts from the prior; continuing a state is "
                                 f"for games")
            return run_matches(self, games, initial)
        return self._run(games, initial, state, record=False)

    def _run(self, games: Games, initial, state, record: bool) -> "FilterRun":
        """:meth:`run`; ``record``: keep both competitors' state after each game."""
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        self.check_games(games)
        if state is None:
            st = self.init_state(games.players, initial, self.group_levels(games))
            ids = np.arange(games.n_players)
        else:
            self._check_time_base(state, games)
            st, ids = self._aligned(state, games, initial)
        # the state's last-appearance times are now in this table's time base
        st = dataclasses.replace(st, time_base=games.time_base)
        proba, post = _loops.run(self, games, st, None if state is None else ids, record)
        self.check_results(st)
        return FilterRun(self, games, st, proba, post, (initial, state))

    # ------------------------------------------------------------------ helpers
    def check_results(self, state: FilterState) -> None:
        """:class:`~statespace.model.ranges.ResultRangeError` when a rating of ``state`` lies more than
        :math:`10^9` scales from the prior mean, or an sd above :math:`10^9` scales
        (:func:`statespace.model.ranges.check_results`): only broken arithmetic gets there."""
        m = self.model
        values = state.values
        sd = None if self.sd_column is None else values[:, self.columns.index(self.sd_column)]
        names = list(state.players) + list(state.shared)
        R.check_results(self.name, names, values[:, 0], sd, alpha=m.scale, centre=m.prior_mean,
                        hint=f"{self!r}'s settings, or the games' weights and gaps, are beyond what its arithmetic "
                             f"carries (see the accepted ranges in help({type(self).__name__}))")

    def _check_time_base(self, state: FilterState, games: Games) -> None:
        """``ValueError`` when ``state`` was run on dates and ``games`` have numeric times, or the
        reverse: the gap from a competitor's last appearance would mix days since 1970 with plain
        numbers."""
        games.check_time_base(getattr(state, "time_base", None), self.name)

    def times(self, games: Games) -> np.ndarray:
        """Each game's time in this filter's time unit (caller's row order)."""
        if self.time_unit == "day":
            return games.days()
        if self.time_unit == "period" and games.period is not None:
            return games.period.astype(np.float64)
        if self.time_unit == "period" and self.period_days is not None:
            return games.days() / self.period_days
        return games.steps()  # game count: each game one step

    def _aligned(self, state: FilterState, games, initial=None, copy: bool = True,
                 levels: tuple = ()) -> tuple[FilterState, np.ndarray]:
        """Copy of ``state`` extended with newcomers of ``games`` (a :class:`Games` or an array of
        names), placed before the shared rows, and with the shared rows of groups it has not seen
        (of ``games``, or ``levels``) after them; ids mapping the games' competitor ids (or the
        names) to rows of the state. ``copy=False``: ``state`` itself when there is no newcomer
        (for callers that only read it)."""
        players = games.players if isinstance(games, Games) else np.asarray(games, dtype=object)
        if isinstance(games, Games):  # frozen forecasts and continued runs come through here
            self._check_time_base(state, games)
            levels = self.group_levels(games)
        known = self.state_levels(state)
        if tuple(state.shared) != self.shared_names(known):
            raise ValueError(f"{self.name}: this state's shared rows {list(state.shared)} are not this filter's "
                             f"{list(self.shared_names(known))}; it comes from a filter with another model")
        index = state.index()
        new = [p for p in players if p not in index]
        out = state.copy() if copy else state
        known_set = set(known)
        unseen = tuple(g for g in levels if g not in known_set)
        if unseen:  # a new group's rows start at the prior, after the others
            core, shared = out.split()
            names = self.shared_names(unseen)[len(self.shared_names()):]  # the groups' own rows
            rows = FilterState(np.array(names, dtype=object), np.array([self.shared_prior(n) for n in names]),
                               np.zeros(len(names), np.int64), np.full(len(names), np.nan), state.columns)
            out = FilterState.join(core, shared.then(rows))
        if new:
            index = dict(index)
            core, shared = out.split()
            out = FilterState.join(core.then(self.init_state(np.asarray(new, dtype=object), initial).split()[0]),
                                   shared)
            index.update({p: len(state.players) + j for j, p in enumerate(new)})
        ids = np.array([index[p] for p in players], dtype=np.int64)
        return out, ids


def weighted_filters() -> list[str]:
    """Names of the filter classes users construct by name (the ``METHODS`` of this package's
    modules, :func:`statespace.methods.registry.collect`) whose update honours game weights (read
    from each class's ``honours_weights`` flag, so the list in error messages cannot go stale).
    The registry finds the filter modules by name when asked, so this module, which they import,
    imports none of them."""
    methods, _ = collect(__package__)
    return sorted({f.__name__ for f in methods.values()
                   if isinstance(f, type) and issubclass(f, Filter) and f.honours_weights})
