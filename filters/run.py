"""The fitted interface of a filter run: one-step-ahead forecasts, frozen forecasts of new
games, the predictive distribution of each game's skill difference, leaderboards and
trajectories (the same face as every method's fitted result).

A run holds the filter that made it and calls back into it (to replay itself, forecast new games,
read its columns) through the members of the filter protocol, :class:`filters.base.Filter`, which
builds runs: this module does not import that one, so the dependency runs one way."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.methods.display import FittedDisplay, Ratings, as_ratings
from statespace._runtime.jit import kernel
from statespace.model.observation import FORECAST_SIG
from statespace.methods.seen import check_not_past, warn_seen

if TYPE_CHECKING:
    from .state import FilterState

__all__ = ["FilterRun", "moments_kernel", "state_columns", "leaderboard"]

#: what a warning about forecasts of games inside a run's span offers instead
_HONEST = ("The honest forecasts of the games a run went through are its one-step-ahead forecasts, run.proba "
           "(input row order); to score held-out games use statespace.compare(..., mode='online'), or run the method "
           "through the games before those to forecast and predict from that run.")

#: what :func:`moments_kernel` returns in place of ``P(b wins)``: not a probability, so that a
#: filter whose forecasts do not come from the model's forecast kernel is caught, not misread
_MARK = -1.0


@kernel(FORECAST_SIG)
def moments_kernel(params, d, var):
    """``(d, var, -1)``: the mean and variance of the skill difference a filter hands the model's
    forecast kernel, handed back in the place of the forecast."""
    return d, var, _MARK


def state_columns(method, values: np.ndarray) -> dict[str, np.ndarray]:
    """``mean``, ``sd`` (if ``method`` tracks one), its shown state columns and its derived ones, from
    state rows ``values`` (one row per competitor or per record)."""
    cols = {"mean": values[:, 0]}
    if method.sd_column is not None:
        cols["sd"] = values[:, method.columns.index(method.sd_column)]
    for c in method.shown_columns:
        cols[c] = values[:, method.columns.index(c)]
    cols.update(method.derived_columns(values))
    return cols


def leaderboard(method, state, played: str) -> pd.DataFrame:
    """The leaderboard of a run's ``state`` (games and matches alike): ``player``, ``mean``, ``sd``
    (if tracked), the count of games or matches played (column ``played``) and the method's own
    columns, best ``mean`` first (ties by name); competitors who played nothing left out."""
    st = state.split()[0]
    cols = state_columns(method, st.values)
    df = pd.DataFrame({"player": st.players, "mean": cols.pop("mean")})
    if "sd" in cols:
        df["sd"] = cols.pop("sd")
    df[played] = st.count
    for c, v in cols.items():
        df[c] = v
    df = df[df[played] > 0]
    return df.sort_values(["mean", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)


class FilterRun(FittedDisplay):
    """A filter run over a table of games: the fitted interface shared by every method.

    Attributes: ``method`` (the :class:`~filters.base.Filter` that ran), ``games``, ``state`` (final
    :class:`FilterState`), ``proba`` (one-step-ahead win/draw/loss forecasts, input row order).

    In Jupyter a run shows itself as its one-line summary (the filter with its settings, games,
    competitors, span) above its leaderboard's best competitors; ``plot(players=...)`` draws
    their rating trajectories (:class:`statespace.methods.display.FittedDisplay`).
    """

    def __init__(self, method, games: Games, state: FilterState, proba: np.ndarray,
                 post: np.ndarray | None, start: tuple = (None, None)):
        # ``post``: both competitors' state rows after each game, in time order (games.order), or
        # None until asked for: then the run is replayed from ``start`` (its initial and state)
        self.method = method
        self.games = games
        self.state = state
        self.proba = proba
        self._post_rows = post
        self._start = start
        self._diff = None

    @property
    def _post(self) -> np.ndarray:
        """Both competitors' state rows after each game, in time order (``games.order``)."""
        if self._post_rows is None:
            initial, state = self._start
            self._post_rows = self.method._run(self.games, initial, state, record=True)._post_rows
        return self._post_rows

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

        These are honest forecasts of games played after the run's games. Games inside the run's
        span (dated before its last game, or the run's own games at that time) are forecast from a
        state that has read their results: :class:`statespace.SeenGamesWarning`, naming the
        honest alternative, :attr:`proba` (see :mod:`statespace.methods.seen`).
        """
        self._warn_seen(games, "predict_proba")
        return self._frozen(self.method, games)

    def _warn_seen(self, games: Games, what: str) -> None:
        if isinstance(games, Games):
            self._check_time_basis(games)
            warn_seen(f"{self.method.name}: {what}", self.games, games, _HONEST, stacklevel=4)

    def predict_diff(self, games: Games) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, var)``: the predictive distribution ``N(mean, var)`` of each game's skill
        difference ``d = s_a - s_b + home`` (model units, input row order) from the final state,
        the moments :meth:`predict_proba` forecasts from: ``predict_proba(games)`` is
        ``method.model.proba(mean, var)``.

        Each competitor is moved forward from its last appearance by the model's transition, as
        in :meth:`predict_proba`; the home advantage is included (a latent one with its
        variance), and the full-covariance EKF's cross-covariance of the two competitors too.
        Available for the filters whose forecast is the model's at a Gaussian belief in the
        model's units (the EKF in every covariance form); any other filter raises
        ``NotImplementedError`` (see :attr:`diff_moments`).
        """
        self._check_moments(self.method)
        self._warn_seen(games, "predict_diff")
        out = self._frozen(self.method._forecasting_with(moments_kernel), games)
        return self._read_moments(out)

    @property
    def diff_moments(self) -> tuple[np.ndarray, np.ndarray]:
        """``(mean, var)``: the one-step-ahead predictive distribution of the skill difference
        ``d = s_a - s_b + home`` of every game run (model units, input row order), the moments
        each forecast of :attr:`proba` was computed from (``proba`` is
        ``method.model.proba(mean, var)``).

        Each competitor's belief before a game is its belief after its previous game (or its
        starting value) moved forward to the game's time by the model's transition; the games of
        one rating period all see the pre-period belief; the full-covariance EKF's variance of
        ``d`` includes the two competitors' covariance, ``P_aa + P_bb - 2 P_ab``, and a latent home
        advantage adds its variance. The numbers are the filter's own: the run is replayed (once,
        when first asked for) with a forecast kernel that hands back the mean and variance the
        filter's forecast is given (:func:`moments_kernel`) instead of turning them into
        probabilities; the EKF's updates never read the forecast, and a filter whose update does
        (so that the replay would not be the run: its final state differs) raises
        ``NotImplementedError``.

        Only a filter whose forecast is the model's forecast at a Gaussian belief, in the model's
        units, has these moments: the EKF (``"diagonal"``, ``"full"`` and ``"scalar"``, whose
        belief has the fixed variance it forecasts with). A filter that tracks no variance (Elo)
        or forecasts with its own formula (Glicko, Glicko-2, TrueSkill, Weng-Lin, Stephenson)
        raises ``NotImplementedError`` rather than return moments its forecasts do not use.
        """
        if self._diff is None:
            self._check_moments(self.method)
            initial, state = self._start
            twin = self.method._forecasting_with(moments_kernel)
            replay = twin._run(self.games, initial, state, record=False)
            if not np.array_equal(replay.state.values, self.state.values, equal_nan=True):
                # the filter's update read its forecast, so the replay is not this run
                m = self.method
                raise NotImplementedError(f"{m.name}: {type(m).__name__}'s update reads its forecast, so its "
                                          f"predictive moments cannot be read by replaying the run")
            self._diff = self._read_moments(replay.proba)
        return self._diff

    def _check_moments(self, method) -> None:
        """``NotImplementedError`` for a filter without a variance of the skills."""
        if method.sd_column is None:
            raise NotImplementedError(f"{method.name}: {type(method).__name__} tracks no variance of the skills, "
                                      f"so it has no predictive distribution of the skill difference (use the "
                                      f"EKF, filters.EKF, for forecasts of the score)")
        model = getattr(method, "skill_model", None)
        if model is not None and model.two_skills:
            raise NotImplementedError(f"{method.name}: with two skills per competitor (attack and defence) a "
                                      f"forecast reads the game's goal-rate shift as well as the skill difference, so "
                                      f"the difference's moments alone do not give it")

    def _read_moments(self, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The moments from the replay's output; ``NotImplementedError`` where the filter's
        forecasts did not come from the model's forecast kernel (the mark is missing)."""
        if not np.all(out[:, 2] == _MARK):
            m = self.method
            raise NotImplementedError(f"{m.name}: {type(m).__name__} forecasts with its own formula, not the "
                                      f"model's forecast at a Gaussian skill difference, so it has no predictive "
                                      f"distribution of the difference to give (use the EKF, filters.EKF, for "
                                      f"forecasts of the score)")
        return out[:, 0].copy(), out[:, 1].copy()

    def _frozen(self, method, games: Games) -> np.ndarray:
        """:meth:`Filter._frozen_proba` of ``games`` from the final state (``method``: this run's
        filter, or a copy of it with another forecast kernel)."""
        self._check_time_basis(games)
        st, ids = method._aligned(self.state, games, copy=False)
        return method._frozen_proba(st.values, st.last, np.ascontiguousarray(ids[games.a]),
                                    np.ascontiguousarray(ids[games.b]),
                                    np.ascontiguousarray(method.home_column(games, method.state_levels(st))),
                                    np.ascontiguousarray(method.times(games), dtype=np.float64), len(st.shared))

    def continue_run(self, games: Games, *, allow_past: bool = False) -> "FilterRun":
        """Keep filtering: run ``games`` starting from this run's final state.

        A run moves forward in time, so games dated before the end of this run's games (with
        rating periods on both tables: in an earlier period) are refused with a
        :class:`statespace.GamesError` naming the first such row; ``allow_past=True`` filters them
        from the final state all the same. Games at the run's last time continue it."""
        if allow_past not in (True, False):
            raise ValueError(f"{self.method.name}: continue_run: allow_past must be True or False, got {allow_past!r}")
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        self._check_time_basis(games)
        if not allow_past:
            check_not_past(f"{self.method.name}: continue_run", self.games, games)
        return self.method.run(games, state=self.state)

    def _check_time_basis(self, games: Games) -> None:
        """Times are rating-period codes when the games have periods and days otherwise: the
        two cannot be mixed between the fitted games and new ones, nor dates with plain numbers."""
        self.method._check_time_base(self.state, games)
        if self.method.time_unit == "period" and (self.games.period is None) != (games.period is None):
            fitted = "with" if self.games.period is not None else "without"
            given = "with" if games.period is not None else "without"
            raise ValueError(f"{self.method.name}: fitted on games {fitted} rating periods but given games "
                             f"{given}; group the whole table with Games.with_periods(...) before splitting")

    def _columns(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """``mean``, ``sd`` (if the method tracks one) and the method's shown state columns."""
        return state_columns(self.method, values)

    def ratings(self) -> Ratings:
        """Leaderboard: ``player``, ``mean``, ``sd`` (if tracked), ``games`` and the method's own
        columns (e.g. ``rd`` and ``volatility``), best ``mean`` first; competitors without games
        are left out. A DataFrame (:class:`statespace.methods.display.Ratings`) whose
        ``attrs["summary"]`` is the run's one-line summary, its caption in Jupyter."""
        return as_ratings(leaderboard(self.method, self.state, "games"), self._summary())

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
