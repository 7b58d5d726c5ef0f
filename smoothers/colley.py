r"""Colley's matrix method: a bias-free rating from wins and losses alone.

W. N. Colley (2002), "Colley's bias free college football ranking method: the Colley matrix
explained", Princeton University (https://www.colleyrankings.com/matrate.pdf).

Colley starts every competitor at Laplace's rule of succession, :math:`(1 + w) / (2 + n)` for
:math:`w` wins in :math:`n` games, and replaces the win count by the strength of schedule it
implies; the ratings solve a linear system whose matrix is :math:`2 I` plus the graph Laplacian of
the schedule, so they exist and are unique
for any table of games (connected or not) and average 1/2 over every connected group of
competitors. Margins are ignored: only results count. A draw counts as half a win and half a
loss (Colley's own treatment of ties); game weights scale a game's counts. Win/draw/loss
probabilities come from the shared link (:mod:`smoothers._static`), fitted out of sample.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg, splu

from ._static import StaticRanking, Table

__all__ = ["Colley", "colley_ratings"]

#: Up to this many competitors ``C`` is factorised (exact); above it, Jacobi-preconditioned
#: conjugate gradients solve it to ``CG_RTOL`` (``C``'s strict diagonal dominance keeps that fast),
#: falling back to the factor if they do not converge.
DIRECT_LIMIT = 2000
CG_RTOL = 1e-13


def colley_ratings(t: Table) -> np.ndarray:
    r"""Colley's ratings: the solution of :math:`C r = b` with

    .. math::

        C = 2 I + \operatorname{diag}(n) - N, \qquad b = 1 + \frac{w - l}{2},

    :math:`n_i` the games competitor :math:`i` played, :math:`N_{ij}` the games between :math:`i`
    and :math:`j`, :math:`w_i` and :math:`l_i` its wins and losses (a draw half of each, so
    :math:`w_i - l_i` sums :math:`2 y - 1` over its games, :math:`y` its score 1, 1/2 or 0).
    :math:`C` is symmetric and strictly diagonally dominant,
    hence non-singular (and positive definite); it is solved as a sparse system, by a sparse LU
    factor up to ``DIRECT_LIMIT`` competitors and by preconditioned conjugate gradients above."""
    played = t.played()
    C = (sp.identity(t.n, format="csr") * 2.0 + sp.diags(played) - t.pair_matrix()).tocsc()
    margin = t.weight * (2.0 * t.score - 1.0)
    b = 1.0 + (np.bincount(t.a, margin, minlength=t.n) - np.bincount(t.b, margin, minlength=t.n)) / 2.0
    if t.n > DIRECT_LIMIT:
        inv_diag = 1.0 / C.diagonal()
        r, status = cg(C, b, rtol=CG_RTOL, atol=0.0, maxiter=10 * t.n,
                       M=LinearOperator(C.shape, matvec=lambda v: inv_diag * v, dtype=float))
        if status == 0:
            return r
    return np.atleast_1d(splu(C, permc_spec="MMD_AT_PLUS_A").solve(b))


class Colley(StaticRanking):
    r"""Colley's matrix method (Colley 2002): ratings from wins and losses, a draw half of each.

    The ratings solve :math:`\bigl(2 I + \operatorname{diag}(n) - N\bigr)\, r = 1 + (w - l) / 2`
    (see :func:`colley_ratings`); they average 1/2 (a competitor without games gets 1/2).
    Forecasts map :math:`r_a - r_b` (plus a
    home term) through an ordered-logistic link fitted out of sample on ``link_blocks``
    consecutive blocks of the fit games (:mod:`smoothers._static`)."""

    name = "colley"
    newcomer = 0.5

    def __init__(self, *, link_blocks: int = 5, window: float | None = None):
        super().__init__(link_blocks=link_blocks, window=window)

    def rate(self, t: Table) -> tuple[np.ndarray, dict]:
        return colley_ratings(t), {}
