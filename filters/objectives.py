"""What the one-step-ahead forecasts of a filter are scored by: the objectives of tuning and the
columns of the batched grid, the default objective of a method, and the burn-in.

- ``"log_loss"``: binary log loss of the expected score, a draw as the target 0.5;
- ``"log_loss_3"``: ``-log P(observed outcome)``, the three-outcome log-likelihood;
- ``"brier"``: squared error of the expected score

(:mod:`statespace.model.metrics`; why the default is what it is: :mod:`filters.tuning`). Both
:mod:`filters.grid` and :mod:`filters.tuning` read these rules from here, so that the grid, which
tuning starts from, needs nothing of tuning.
"""

from __future__ import annotations

import numpy as np

from statespace.data.games import Games
from statespace.model.outcome import Davidson, Threshold

__all__ = ["OBJECTIVES", "default_objective", "resolve_objective", "first_scored"]

#: the objectives :func:`filters.tuning.tune` minimises and the scores :func:`filters.grid.evaluate`
#: returns, in its columns' order
OBJECTIVES = ("log_loss", "log_loss_3", "brier")


def default_objective(method, games: Games | None = None) -> str:
    """The objective :func:`filters.tuning.tune` uses when none is given: ``"log_loss_3"`` (the
    three-outcome log-likelihood) when ``method.model`` has a threshold or Davidson draw model,
    whose parameter only the three-outcome likelihood identifies, and ``games`` (when given) have a
    draw; ``"log_loss"`` (expected score, a draw as 0.5) for every other method (no draws, draws as
    half a win, or no ``model`` at all) and on games without a draw, where it is the two-outcome
    log-likelihood and no draw parameter is tuned.

    The rule looks at the draw model's type, not its parameter: a threshold margin of 0 still
    gets ``"log_loss_3"`` on games with draws, since tuning starts it inside its bounds."""
    draw = getattr(getattr(method, "model", None), "draw", None)
    if not isinstance(draw, (Threshold, Davidson)):
        return "log_loss"
    if games is not None and not np.any(games.score == 0.5):
        return "log_loss"
    return "log_loss_3"


def resolve_objective(method, objective: str | None = None, games: Games | None = None) -> str:
    """``objective`` checked against :data:`OBJECTIVES`, or :func:`default_objective` of
    ``method`` (on ``games``, when given) when it is ``None``: the one place where a default
    objective is chosen."""
    if objective is None:
        return default_objective(method, games)
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)} (or None for the "
                         f"method's default); got {objective!r}")
    return objective


def first_scored(games: Games, burn_in: float) -> int:
    """How many of the earliest games (time order) a ``burn_in`` share leaves out of the scores, as
    :func:`filters.tuning.tune` counts them; ``ValueError`` unless ``0 <= burn_in < 1``."""
    if not 0 <= burn_in < 1:
        raise ValueError(f"burn_in must be in [0, 1), got {burn_in!r}")
    return int(round(burn_in * len(games)))
