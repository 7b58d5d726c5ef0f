r"""Keener's Perron-Frobenius ratings from smoothed shares of the points scored.

J. P. Keener (1993), "The Perron-Frobenius theorem and the ranking of football teams", SIAM
Review 35(1), 80-93.

A competitor's strength is proportional to the strengths of the opponents it played, each
weighted by how much of the points between them it took: :math:`r = A r / \lambda`. With
positive shares and a connected schedule, :math:`A` is non-negative and irreducible, so by the Perron-Frobenius
theorem its largest eigenvalue is simple with a positive eigenvector, the ratings. The share is
smoothed (one point added to each side, then Keener's :math:`h` pulls lopsided shares towards 1/2, so
that running up the score pays little) and divided by the games the competitor played (Keener's
normalisation: a long schedule should not by itself raise a rating). Game weights scale a game's
points and count. Win/draw/loss probabilities come from the shared link
(:mod:`smoothers._static`), fitted out of sample.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from statespace.model import ranges

from ._static import StaticRanking, Table, components

__all__ = ["Keener", "keener_matrix", "keener_ratings", "KeenerConvergenceError"]


class KeenerConvergenceError(ValueError):
    """The power iteration did not reach the tolerance within ``max_iter`` steps."""


def keener_h(x: np.ndarray) -> np.ndarray:
    """Keener's skewing function ``h(x) = 1/2 + sgn(x - 1/2) sqrt(|2x - 1|) / 2``."""
    return 0.5 + np.sign(x - 0.5) * np.sqrt(np.abs(2.0 * x - 1.0)) / 2.0


def keener_matrix(t: Table) -> sp.csr_matrix:
    r"""Keener's matrix :math:`A` with

    .. math::

        a_{ij} = \frac{1}{n_i}\, h\!\left(\frac{S_{ij} + 1}{S_{ij} + S_{ji} + 2}\right)

    for competitors who met (0 otherwise), :math:`S_{ij}` the points :math:`i` scored against
    :math:`j` over all their games, :math:`n_i` the games :math:`i` played, :math:`h`
    :func:`keener_h`,
    :math:`h(x) = \tfrac12 + \operatorname{sgn}(x - \tfrac12) \sqrt{|2x - 1|} / 2`."""
    w = t.weight
    S = sp.csr_matrix((np.concatenate([w * t.score_a, w * t.score_b]),
                       (np.concatenate([t.a, t.b]), np.concatenate([t.b, t.a]))), shape=(t.n, t.n))
    met = t.pair_matrix(np.ones(t.a.size)).tocoo()  # the pattern of pairs that met
    i, j = met.row, met.col
    s_ij = np.asarray(S[i, j]).ravel()
    s_ji = np.asarray(S[j, i]).ravel()
    a = keener_h((s_ij + 1.0) / (s_ij + s_ji + 2.0)) / t.played()[i]
    return sp.csr_matrix((a, (i, j)), shape=(t.n, t.n))


def keener_ratings(t: Table, tol: float = 1e-10, max_iter: int = 100_000) -> tuple[np.ndarray, int]:
    r"""The Perron vector of :func:`keener_matrix` in each connected group of competitors, scaled to
    average 100 in every group, and the iterations taken.

    Power iteration on :math:`A + I` (the same eigenvectors; the shift keeps the iteration
    converging where :math:`A` is periodic, as for a schedule whose groups only ever play each
    other, and where :math:`A` has an eigenvalue :math:`-\lambda`); all groups iterate at once,
    each rescaled to average 100 every step. Converged when no rating moves by more than ``tol`` times the largest;
    :class:`KeenerConvergenceError` otherwise."""
    A = keener_matrix(t)
    count, label = components(t)
    size = np.bincount(label, minlength=count).astype(float)
    x = np.full(t.n, 100.0)
    for it in range(1, max_iter + 1):
        y = A @ x + x
        y *= (100.0 * size / np.bincount(label, y, minlength=count))[label]
        change = np.max(np.abs(y - x)) if t.n else 0.0
        x = y
        if change <= tol * np.max(x):
            return x, it
    raise KeenerConvergenceError(f"keener: the power iteration did not converge to tol={tol:g} in max_iter={max_iter} "
                                 f"steps (largest change {change:.3g}); raise max_iter or tol")


class Keener(StaticRanking):
    r"""Keener's Perron-Frobenius ratings (Keener 1993) from smoothed shares of the points scored.

    The ratings are the Perron vector of
    :math:`a_{ij} = h\bigl((S_{ij} + 1) / (S_{ij} + S_{ji} + 2)\bigr) / n_i` (see
    :func:`keener_matrix`), found by power iteration to ``tol`` (in ``(0, 1)``, relative to the
    largest rating) within ``max_iter`` steps (a whole number >= 1; a
    :class:`KeenerConvergenceError`, a ``ValueError``, otherwise), scaled to average 100 in each
    connected group of competitors (a competitor without games gets 100). Needs the columns
    ``score_a`` and ``score_b``. Forecasts map :math:`r_a - r_b` (plus a home term) through an
    ordered-logistic link fitted out of sample on ``link_blocks`` consecutive blocks of the fit
    games (:mod:`smoothers._static`)."""

    name = "keener"
    newcomer = 100.0
    needs_scores = True

    def __init__(self, *, tol: float = 1e-10, max_iter: int = 100_000, link_blocks: int = 5,
                 window: float | None = None):
        self.tol = ranges.number(self.name, "tol", tol, 0.0, 1.0, lo_open=True, hi_open=True)
        self.max_iter = ranges.whole(self.name, "max_iter", max_iter, 1)
        super().__init__(link_blocks=link_blocks, window=window)

    def rate(self, t: Table) -> tuple[np.ndarray, dict]:
        r, iterations = keener_ratings(t, self.tol, self.max_iter)
        return r, {"iterations": iterations}
