"""What a Laplace (whole-history) fit refuses, and why: a search box for the drift that is not one
(:func:`drift_bounds`), games whose weights swamp the prior beyond double precision
(:func:`check_weights`), and a Hessian singular to working precision (:func:`singular`). Each
names the smoother, the setting or the row, and what to change."""

from __future__ import annotations

import numpy as np

from statespace.data.games import Games, GamesError
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges

from .base import Timeline

__all__ = ["MAX_CURVATURE_RATIO", "drift_bounds", "check_weights", "singular"]

#: The largest ratio of a node's weighted likelihood curvature to the prior precision that a fit
#: accepts (see :func:`check_weights`): double precision carries about 16 digits, and at this
#: ratio the prior's pull on the common level still keeps three or more of them.
MAX_CURVATURE_RATIO = 1e13


def drift_bounds(owner: str, bounds, alpha: float) -> tuple[float, float]:
    """``(low, high)`` with ``0 < low < high``, each a drift (:func:`statespace.model.ranges.variance`)."""
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: drift_bounds must be a pair (low, high), got {bounds!r}") from None
    lo = ranges.variance(owner, "drift_bounds[0]", lo, alpha, zero=False)
    hi = ranges.variance(owner, "drift_bounds[1]", hi, alpha, zero=False)
    if not lo < hi:
        raise ValueError(f"{owner}: drift_bounds must satisfy 0 < low < high, got {bounds!r}")
    return lo, hi


def check_weights(name: str, games: Games, tl: Timeline, model: SkillModel) -> None:
    """Refuse games whose weighted likelihood swamps the prior beyond what double precision
    resolves.

    A node's Hessian diagonal adds the prior precision ``1/prior_var`` to its games' curvature
    ``sum_g w_g kappa_g`` (taken at the prior mean, where Newton starts). Once that sum is
    more than ``MAX_CURVATURE_RATIO`` times the prior precision, the prior -- the only thing
    that pins the competitors' common level -- is lost in rounding: the Hessian is singular
    to working precision (with weights of 1e300, exactly) and the variances meaningless."""
    d = model.home * (~games.neutral).astype(float)
    _, h = model.loglik_derivs(games.score.astype(float), d, games.score_a, games.score_b)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        kappa = games.weight * np.maximum(-np.asarray(h, dtype=float), 0.0)
        curvature = np.bincount(tl.game_a, kappa, tl.n_nodes) + np.bincount(tl.game_b, kappa, tl.n_nodes)
        prec0 = 1.0 / model.prior_var if model.prior_var > 0 else 1e-12
        ratio = curvature / prec0
    worst = int(np.argmax(np.where(np.isfinite(ratio), ratio, np.inf)))
    if np.isfinite(ratio[worst]) and ratio[worst] <= MAX_CURVATURE_RATIO:
        return
    who = tl.players[tl.node_player[worst]]
    heaviest = int(np.argmax(games.weight))
    raise GamesError(
        f"{name}: the games of {who!r} weigh {ratio[worst]:.3g} times its prior (their weighted "
        f"curvature sum_g w_g kappa_g against the prior precision 1/prior_var = 1/{model.prior_var:.3g}); above "
        f"{MAX_CURVATURE_RATIO:.0e} double precision cannot resolve the prior's pull and the fit is singular. "
        f"The largest game weight is {games.weight[heaviest]:.3g} (row {int(games.row[heaviest])}): scale the "
        f"weights down (Games.with_weights; a game of weight w counts as w games) or give a narrower prior "
        f"(SkillModel prior_var)", rows=[int(games.row[heaviest])], column="weight")


def singular(name: str, tl: Timeline, model: SkillModel, exc: Exception) -> ranges.ResultRangeError:
    """What a Hessian singular to working precision means: precisions (the prior's, the links'
    ``1/(drift dt)``, the games' curvature) too far apart for double precision, most often a
    long gap under a large drift, whose link then pins nothing."""
    linked = np.flatnonzero(tl.prev >= 0)
    gap = ""
    if linked.size and model.drift > 0:
        k = linked[np.argmax(tl.dt[linked])]
        gap = (f"; the longest gap, {tl.dt[k]:.3g} units of time before a game of "
               f"{tl.players[tl.node_player[k]]!r}, adds a variance of {model.drift * tl.dt[k]:.3g} (drift "
               f"{model.drift:.3g} a unit) against a prior variance of {model.prior_var:.3g}")
    return ranges.ResultRangeError(
        f"{name}: the whole-history Hessian is singular to working precision ({exc}): its precisions are "
        f"further apart than double precision resolves{gap}, so the arithmetic broke down and there is no fit "
        f"to show; give a smaller drift, close the gaps between a competitor's games, or give a narrower prior")
