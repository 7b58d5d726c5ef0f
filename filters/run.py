"""The fitted interface of a filter run: one-step-ahead forecasts, frozen forecasts of new
games, leaderboards and trajectories (the same face as every method's fitted result)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from statespace import Games

if TYPE_CHECKING:
    from .base import Filter, FilterState

__all__ = ["FilterRun"]


class FilterRun:
    """A filter run over a table of games: the fitted interface shared by every method.

    Attributes: ``method``, ``games``, ``state`` (final :class:`FilterState`), ``proba``
    (one-step-ahead win/draw/loss forecasts, input row order).
    """

    def __init__(self, method: Filter, games: Games, state: FilterState, proba: np.ndarray,
                 post: np.ndarray | None, start: tuple = (None, None)):
        # ``post``: both competitors' state rows after each game, in time order (games.order), or
        # None until asked for: then the run is replayed from ``start`` (its initial and state)
        self.method = method
        self.games = games
        self.state = state
        self.proba = proba
        self._post_rows = post
        self._start = start

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
        """
        method = self.method
        self._check_time_basis(games)
        st, ids = method._aligned(self.state, games, copy=False)
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
        two cannot be mixed between the fitted games and new ones, nor dates with plain numbers."""
        self.method._check_time_base(self.state, games)
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
        st = st.split()[0]
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
