"""The static Bradley-Terry (or Thurstone-Mosteller) fit, and when its maximum-likelihood fit exists.

The Laplace smoother with drift 0: every competitor has one skill, and the posterior mode is the
MAP fit under the prior, or with a wide prior the maximum-likelihood fit (Bradley & Terry 1952;
Zermelo 1929); its existence is Ford's (1957) condition (:func:`ford_groups`).
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import scipy.sparse as sp

from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges

from .base import Smoother, SmootherFit
from .laplace import LaplaceSmoother

__all__ = ["BradleyTerry", "ford_groups"]


class BradleyTerry(LaplaceSmoother):
    """Static Bradley-Terry (or Thurstone-Mosteller) fit: the Laplace smoother with drift 0.

    Each competitor has one skill; the mode is the maximum a posteriori fit under the prior
    ``N(prior_mean, prior_var)`` — with a wide prior (the default ``prior_var``: an sd of 1000 scales)
    it is the maximum-likelihood fit, identified only up to a common shift (pinned by the
    prior to ``prior_mean`` on average). Game weights temper the likelihood,
    ``sum_g w_g l_g``: a weighted maximum-likelihood fit. Static skills have no dynamics, so
    the model's drift, mean reversion and home-advantage drift are all replaced by 0 (forecasts
    do not decay). A skill is the same at every time, so a known competitor is forecast from
    its fitted skill whatever the game's time, before its first fitted game too (only a newcomer
    gets the prior).

    The other settings (``period_days``, ``tol``, ``max_iter``, ``variances``, ``dense_cov_limit``,
    ``blas_threads``, ``progress``) and their accepted ranges are :class:`LaplaceSmoother`'s
    (``max_iter`` a whole number >= 1, ``tol`` a finite number > 0).
    """

    name = "bradley_terry"

    def __init__(self, model: SkillModel | None = None, *, period_days: float = 1.0, tol: float = 1e-8,
                 max_iter: int = 100, variances: str = "auto", dense_cov_limit: int = 3000,
                 exact_variance_limit: int | None = None, blas_threads: int | None = 1, progress: bool | None = None):
        if model is None:
            # a prior sd of 1000 scales (or the widest statespace.model.ranges accepts): flat over every
            # rating a game can tell apart, so the fit is the maximum-likelihood one
            scale = 400.0 / math.log(10.0)
            model = SkillModel("logistic", scale, 1500.0, (min(1e3, ranges.SD_SCALES) * scale) ** 2, 0.0, "half")
        super().__init__(dataclasses.replace(model, drift=0.0, reversion=0.0, home_drift=0.0, draw_drift=0.0), drift=None,
                         period_days=period_days, tol=tol, max_iter=max_iter, variances=variances,
                         dense_cov_limit=dense_cov_limit, exact_variance_limit=exact_variance_limit,
                         blas_threads=blas_threads, progress=progress)

    def tunable(self, games: Games) -> dict:
        """Nothing: static skills have no drift (and the prior is the user's choice)."""
        return {}

    tune = Smoother.tune  # refuses: nothing to tune

    def __repr__(self) -> str:
        return f"BradleyTerry({self.skill_model.link}, scale={self.skill_model.scale:g})"

    def fit(self, games: Games, initial=None, *, warm_start: SmootherFit | None = None) -> SmootherFit:
        """The static fit (see :meth:`LaplaceSmoother.fit`); with a wide prior, warns when the
        maximum-likelihood fit does not exist (:func:`ford_groups`)."""
        m = self.skill_model
        if isinstance(games, Games) and m.prior_var >= 1e4 * m.scale**2:
            groups = ford_groups(games)
            if groups is not None:
                warnings.warn(groups, UserWarning, stacklevel=2)
        return super().fit(games, initial, warm_start=warm_start)


def ford_groups(games: Games) -> str | None:
    """``None`` when the Bradley-Terry maximum-likelihood fit exists, else a message saying why
    it does not.

    Ford (1957): the likelihood has a finite maximum (up to a common shift within each group of
    competitors linked by games) iff no split of a linked group into two parts has one part
    winning every game against the other, i.e. iff the directed graph "a lost to or drew with
    b" has the same components when read strongly as weakly. Otherwise the ratings of the
    winning part run off to infinity and only the prior holds them: with a wide prior they
    come out extreme, their variances huge, and forecasts near 0 or 1."""
    from scipy.sparse.csgraph import connected_components

    n = games.players.size
    won = games.score == 1.0
    lost = games.score == 0.0
    drawn = ~(won | lost)
    # an edge loser -> winner; a draw both ways (it is part win, part loss for both)
    src = np.concatenate([games.b[won], games.a[lost], games.a[drawn], games.b[drawn]])
    dst = np.concatenate([games.a[won], games.b[lost], games.b[drawn], games.a[drawn]])
    graph = sp.coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n)).tocsr()
    n_weak, _ = connected_components(graph, directed=True, connection="weak")
    n_strong, _ = connected_components(graph, directed=True, connection="strong")
    if n_strong == n_weak:
        return None
    out_deg = np.bincount(src, minlength=n)   # games not won
    in_deg = np.bincount(dst, minlength=n)    # games not lost
    never_lost = games.players[(out_deg == 0) & (in_deg > 0)]
    never_won = games.players[(in_deg == 0) & (out_deg > 0)]

    def some(names):
        shown = ", ".join(map(str, names[:5]))
        return f"{names.size} ({shown}{', ...' if names.size > 5 else ''})"

    detail = []
    if never_lost.size:
        detail.append(f"never lost: {some(never_lost)}")
    if never_won.size:
        detail.append(f"never won: {some(never_won)}")
    return (f"BradleyTerry: the maximum-likelihood fit does not exist (Ford 1957): the results split "
            f"{n} competitors into {n_strong} groups where one group won every game against another"
            f"{'; ' + '; '.join(detail) if detail else ''}. Their ratings are held only by the wide "
            f"prior and come out extreme; give a proper prior, e.g. BradleyTerry(SkillModel(..., "
            f"prior_var=...)), or use the random-walk LaplaceSmoother")
