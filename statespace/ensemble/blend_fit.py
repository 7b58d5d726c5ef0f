"""What :meth:`Blend.fit <statespace.ensemble.blend.Blend.fit>` returns: :class:`BlendFit`, the
fitted weights with the record of their fit, the pooled forecasts of the games, and the fitted
face (frozen forecasts, and the first member's ratings and trajectories)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.ensemble.blend_pool import ZERO, pool_forecasts
from statespace.methods.display import FittedDisplay
from statespace.model.skillmodel import SkillModel


class BlendFit(FittedDisplay):
    """What :meth:`Blend.fit` and :meth:`Blend.run` return.

    - ``method``: the :class:`Blend` fitted; ``blend``: the same blend with its weights (and
      ``draws``) fixed, to run online through other games; ``games``;
    - ``weights``: a Series by member label; ``zero_weight``: the members whose weight is 0 (they
      add nothing to the forecasts); ``objective`` (``"log_loss_3"`` or ``"log_loss"``) and
      ``train_score``: the pooled forecasts' mean log loss on the fitting games after the burn-in;
      ``table``: per member its weight, its own score on the same games and objective
      (NaN for a member that forecasts no draws where the objective is three-outcome) and whether
      its weight is zero, then the row ``blend``; ``info``: the whole record;
    - ``proba``: the pooled one-step-ahead forecasts of ``games`` (input row order); ``runs``:
      each member's run;
    - the fitted face: ``predict_proba(games)`` (frozen: each member's frozen forecasts, pooled);
      ``ratings()``, ``trajectories()``, ``state`` and ``model``: the first member's;
    - in Jupyter: the one-line summary (the blend, games, competitors, span), the weights and the
      first member's leaderboard; ``plot(players=...)``: the first member's trajectories.
    """

    def __init__(self, method, games: Games, runs: dict, info: dict):
        self.method = method
        self.games = games
        self.runs = runs
        self.info = info
        self.draws: bool = info["draws"]
        self.blend = method.with_params(weights=info["weights"], draws=self.draws, split=None)
        self._w = np.array(list(info["weights"].values()))
        self.proba = pool_forecasts([runs[k].proba for k in method.members], self._w, method.pool, self.draws)

    @property
    def weights(self) -> pd.Series:
        return pd.Series(self.info["weights"], name="weight", dtype=float)

    @property
    def zero_weight(self) -> list[str]:
        return [k for k, w in self.info["weights"].items() if w <= ZERO]

    @property
    def objective(self) -> str:
        return self.info["objective"]

    @property
    def train_score(self) -> float:
        return float(self.info["train_score"])

    @property
    def table(self) -> pd.DataFrame:
        rows = [{"member": k, "weight": w, "train_score": self.info["member_scores"][k], "zero_weight": w <= ZERO}
                for k, w in self.info["weights"].items()]
        rows.append({"member": "blend", "weight": float(self._w.sum()), "train_score": self.train_score,
                     "zero_weight": False})
        t = pd.DataFrame(rows).set_index("member")
        t.attrs.update(objective=self.objective, pool=self.method.pool, n_games=self.info["n_games"],
                       n_scored=self.info["n_scored"], draws=self.draws, fitted=self.info["fitted"])
        return t

    @property
    def _first(self):
        return next(iter(self.runs.values()))

    @property
    def model(self) -> SkillModel:
        return self.method.model

    @property
    def state(self):
        return self._first.state

    def predict_proba(self, games: Games) -> np.ndarray:
        """Frozen forecasts ``(n, 3)`` of ``games``: each member's from the end of the fitted games,
        pooled with the weights."""
        return pool_forecasts([self.runs[k].predict_proba(games) for k in self.method.members], self._w,
                              self.method.pool, self.draws)

    def ratings(self) -> pd.DataFrame:
        """The first member's leaderboard (a pool of forecasts has no ratings of its own)."""
        return self._first.ratings()

    def trajectories(self) -> pd.DataFrame:
        """The first member's trajectories."""
        return self._first.trajectories()

    def summary(self) -> str:
        """The weights and each member's score on the fitting games, as text."""
        t = self.table
        what = "fitted" if self.info["fitted"] else "fixed"
        lines = [f"statespace.Blend, {self.method.pool} pool of {len(self.method.members)} members; weights {what} on "
                 f"{t.attrs['n_games']:,} games ({t.attrs['n_scored']:,} scored after the burn-in), one-step-ahead "
                 f"{self.objective} (lower is better)"]
        width = max(len(str(k)) for k in t.index)
        for k, r in t.iterrows():
            score = "-" if not np.isfinite(r["train_score"]) else f"{r['train_score']:.5f}"
            weight = f"{r['weight']:.4f}" + ("  (sum)" if k == "blend" else "")
            lines.append(f"  {str(k).ljust(width)}  {score:>9}  weight {weight}")
        if self.zero_weight:
            lines.append(f"  weight 0 (adds nothing to the forecasts): {', '.join(self.zero_weight)}")
        return "\n".join(lines)

    def _notes(self) -> list[str]:
        """Under the leaderboard in Jupyter: the weights, the training score, whose leaderboard."""
        shown = ", ".join(f"{k} {w:.3g}" for k, w in self.info["weights"].items())
        return [f"{self.method.pool} pool, weights {shown}; training {self.objective} {self.train_score:.5f} on "
                f"{self.info['n_scored']:,} games", f"leaderboard and trajectories: the first member's, "
                                                      f"{next(iter(self.runs))}"]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k} {w:.3g}" for k, w in self.info["weights"].items())
        return (f"BlendFit({self.method.pool}: {shown}; training {self.objective} {self.train_score:.5f} on "
                f"{self.info['n_scored']:,} games)")
