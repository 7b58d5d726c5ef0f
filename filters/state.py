"""What a filter run carries: the belief state and the games as the compiled loops read them.

:class:`FilterState` is a filter's belief about every competitor (rows of numbers in the method's
units, with each competitor's game count and last appearance); :class:`GameArrays` is a table of
games as contiguous columns in time order. Both are plain records: the filter protocol
(:mod:`filters.base`), the run loops (:mod:`filters._loops`), the batched grid (:mod:`filters.grid`)
and the fitted run (:mod:`filters.run`) read and write them, and this module imports none of those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from statespace.data.games import Games

__all__ = ["FilterState", "GameArrays"]


@dataclass(frozen=True)
class FilterState:
    """A filter's belief about every competitor: rows of ``values`` in the method's units.

    ``count`` is the number of games each competitor has played; ``last`` the time of its
    last appearance (NaN before the first), in the filter's time units. After the competitors'
    rows come the ``shared`` rows, one per latent state every game sees (the EKF's drifting home
    advantage), named by ``shared``: not competitors, so not in ``players`` or leaderboards.
    ``time_base`` is the :attr:`statespace.Games.time_base` of the games that set ``last``
    (``None`` before any run): games on the other base are refused, their times not comparable.
    """

    players: np.ndarray
    values: np.ndarray
    count: np.ndarray
    last: np.ndarray
    columns: tuple[str, ...]
    shared: tuple[str, ...] = ()
    time_base: str | None = None

    def frame(self) -> pd.DataFrame:
        """The competitors' rows (see :meth:`shared_row` for the shared ones)."""
        n = len(self.players)
        df = pd.DataFrame(self.values[:n], columns=list(self.columns))
        df.insert(0, "player", self.players)
        df["games"] = self.count[:n]
        return df

    def shared_row(self, name: str) -> np.ndarray:
        """The state row of the shared latent state ``name``."""
        if name not in self.shared:
            raise ValueError(f"this state has no shared row {name!r} (shared rows: {list(self.shared)})")
        return self.values[len(self.players) + self.shared.index(name)]

    def index(self) -> dict:
        """``{name: row}`` of the competitors, built once per state (a state is not changed in
        place), so that forecasting a few games from a big state costs in proportion to them."""
        cached = self.__dict__.get("_index")
        if cached is None:
            cached = {p: i for i, p in enumerate(self.players)}
            object.__setattr__(self, "_index", cached)
        return cached

    def copy(self) -> "FilterState":
        return FilterState(self.players.copy(), self.values.copy(), self.count.copy(), self.last.copy(),
                           self.columns, self.shared, self.time_base)

    def split(self) -> tuple["FilterState", "FilterState"]:
        """(the competitors' rows, the shared rows) as two states."""
        n = len(self.players)
        return (FilterState(self.players, self.values[:n], self.count[:n], self.last[:n], self.columns,
                            time_base=self.time_base),
                FilterState(np.array(self.shared, dtype=object), self.values[n:], self.count[n:], self.last[n:],
                            self.columns, time_base=self.time_base))

    def then(self, more: "FilterState") -> "FilterState":
        """These rows followed by ``more``'s (two states of the same columns and no shared rows: the
        competitors' or the shared part of a :meth:`split`), as one."""
        return FilterState(np.concatenate([self.players, more.players]), np.vstack([self.values, more.values]),
                           np.concatenate([self.count, more.count]), np.concatenate([self.last, more.last]),
                           self.columns, time_base=self.time_base)

    @staticmethod
    def join(core: "FilterState", shared: "FilterState") -> "FilterState":
        """Competitors' rows followed by shared rows (the inverse of :meth:`split`)."""
        return FilterState(core.players, np.ascontiguousarray(np.vstack([core.values, shared.values])),
                           np.concatenate([core.count, shared.count]), np.concatenate([core.last, shared.last]),
                           core.columns, tuple(shared.players), core.time_base)


@dataclass(frozen=True)
class GameArrays:
    """A table's columns as the compiled loops take them: contiguous, in time order (the rows'
    own order when they are already sorted, the usual case, so no permutation is paid)."""

    a: np.ndarray
    b: np.ndarray
    score: np.ndarray
    score_a: np.ndarray
    score_b: np.ndarray
    home: np.ndarray
    weight: np.ndarray
    t: np.ndarray
    order: np.ndarray
    in_order: bool

    @classmethod
    def of(cls, games: Games, ids: np.ndarray | None, times: np.ndarray | None,
           scores: bool = True, home: np.ndarray | None = None) -> "GameArrays":
        """``ids`` maps the games' competitor ids to state rows (None: the same); ``times`` in the
        filter's unit (None: a single period, all at time 0, kept in the given order); ``scores``:
        whether the kernels read ``score_a`` and ``score_b`` (else they get the ``score`` column in
        their place, which no kernel of such an observation reads); ``home``: the home column the
        kernels read (default :meth:`Games.home`; :meth:`filters.base.Filter.home_column`)."""
        order = games.order if times is not None else np.arange(len(games))
        in_order = games.in_time_order if times is not None else True

        def by_time(x, dtype=np.float64):
            """The column in time order; the table's own array when it already is (the loops only
            read it)."""
            if in_order and x.dtype == dtype and x.flags.c_contiguous:
                return x
            return np.array(x if in_order else x[order], dtype=dtype, order="C")

        n = len(games)
        score = by_time(games.score)
        return cls(a=by_time(games.a if ids is None else ids[games.a], np.int64),
                   b=by_time(games.b if ids is None else ids[games.b], np.int64), score=score,
                   score_a=by_time(games.score_a) if scores else score,
                   score_b=by_time(games.score_b) if scores else score,
                   home=by_time(games.home() if home is None else home),
                   weight=by_time(games.weight),
                   t=by_time(np.zeros(n) if times is None else times),
                   order=order, in_order=in_order)
