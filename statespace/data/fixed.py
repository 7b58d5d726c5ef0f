"""Published forecasts as a method: they sit in ``compare``'s table on exactly the same games.

``FixedForecast(proba, games)`` holds one forecast per row of a table (for example
FiveThirtyEight's pre-game Elo probabilities of the NFL, column ``elo_prob1``); ``fit`` learns
nothing and ``predict_proba`` / ``run`` look each game up by its input row, so every table
split from the original one (``games.split``, ``games.take``) finds its forecasts.
"""

from __future__ import annotations

import numpy as np

from statespace.data.games import Games

__all__ = ["FixedForecast"]


class FixedForecast:
    """Forecasts fixed in advance, aligned with the rows of ``games``.

    ``proba``: an (n, 3) array of win/draw/loss probabilities, or an (n,) array of
    ``P(a wins)`` (then no draws are forecast: ``(p, 0, 1 - p)``).
    """

    def __init__(self, proba, games: Games, name: str = "fixed"):
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        p = np.asarray(proba, dtype=float)
        if p.ndim == 1:
            p = np.column_stack([p, np.zeros_like(p), 1.0 - p])
        if p.shape != (len(games), 3):
            raise ValueError(f"{p.shape[0]} forecasts for {len(games)} games")
        bad = np.flatnonzero(~np.isfinite(p).all(axis=1) | (p < 0).any(axis=1) | (p > 1).any(axis=1)
                             | (np.abs(p.sum(axis=1) - 1) > 1e-9))
        if bad.size:
            raise ValueError(f"forecasts must be probabilities summing to 1; rows {games.row[bad[:5]].tolist()} "
                             f"are not")
        self.name = name
        self._by_row = dict(zip(games.row.tolist(), range(len(games))))
        self._proba = p

    def __repr__(self) -> str:
        return f"FixedForecast({self.name!r}, {self._proba.shape[0]} games)"

    def _lookup(self, games: Games) -> np.ndarray:
        try:
            idx = [self._by_row[r] for r in games.row.tolist()]
        except KeyError as exc:
            raise ValueError(f"{self.name}: no forecast for input row {exc.args[0]}; the games must come from "
                             f"the table the forecasts were given with") from None
        return self._proba[idx]

    def fit(self, games: Games, initial=None) -> "FixedForecast":
        """Nothing to learn: the forecasts were made in advance."""
        return self

    def predict_proba(self, games: Games) -> np.ndarray:
        """The fixed forecasts of ``games`` (n, 3)."""
        return self._lookup(games)

    def run(self, games: Games, initial=None):
        """The same forecasts in the filters' ``run`` shape (``.proba``)."""
        out = type("FixedRun", (), {})()
        out.proba = self._lookup(games)
        return out
