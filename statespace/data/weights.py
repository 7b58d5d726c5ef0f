r"""Likelihood weights of a game table: given per game, or from each game's score margin
:math:`\delta = \max(|\mathtt{score\_a} - \mathtt{score\_b}|, 1)` as
:math:`w = \log(1 + \delta)` (FiveThirtyEight's margin-of-victory multiplier for NFL Elo) or its
Box-Cox transform :math:`w = \bigl((1 + \delta)^p - 1\bigr) / p`, scaled to mean 1
(:meth:`statespace.data.games.Games.with_weights` gives the table with them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.columns import _SIDE_SCORES, GamesError, describe_rows


def game_weights(games, weights=None, margin: tuple[str, str] | None = None, power: float = 0.0) -> np.ndarray:
    """The weight of each game of ``games`` (a :class:`~statespace.data.games.Games`, in its row
    order), as :meth:`~statespace.data.games.Games.with_weights` describes them."""
    if (weights is None) == (margin is None):
        raise ValueError("give exactly one of weights= or margin=(column_a, column_b)")
    if not (isinstance(power, (int, float, np.integer, np.floating)) and np.isfinite(power)):
        raise ValueError(f"power must be a finite number, got {power!r}")
    if power != 0 and margin is None:
        raise ValueError("power= shapes the margin weights: give it with margin=(column_a, column_b)")
    if margin is not None:
        if tuple(margin) == _SIDE_SCORES and games.has_scores:
            sa, sb = games.score_a, games.score_b
        else:
            missing = [c for c in margin if c not in games.extra.columns]
            if missing:
                raise GamesError(f"no column {missing[0]!r} for the margin (extra columns: "
                                 f"{', '.join(games.extra.columns) or 'none'})", column=missing[0])
            sa = pd.to_numeric(games.extra[margin[0]], errors="coerce").to_numpy(float)
            sb = pd.to_numeric(games.extra[margin[1]], errors="coerce").to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(sa - sb))
        if bad.size:
            raise GamesError(f"columns {margin}: {bad.size} rows without a numeric score "
                             f"({describe_rows(games.row[bad], list(sa[bad]), None, None)})",
                             games.row[bad].tolist(), margin[0])
        # a draw (margin 0) counts as a one-point game rather than not at all
        m = np.maximum(np.abs(sa - sb), 1.0)
        w = np.log1p(m) if power == 0 else np.expm1(power * np.log1p(m)) / power
        w = w / w.mean()
    else:
        w = np.array(weights, dtype=float)  # a copy: the caller's array stays theirs (and writeable)
        if w.shape != (len(games),):
            raise ValueError(f"{w.size} weights for {len(games)} games")
        bad = np.flatnonzero(~np.isfinite(w) | (w <= 0))
        if bad.size:
            raise GamesError(f"weights must be finite and > 0 "
                             f"({describe_rows(games.row[bad], list(w[bad]), None, None)})",
                             games.row[bad].tolist(), "weight")
    return w
