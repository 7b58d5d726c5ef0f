r"""Massey's least-squares ratings from score margins.

K. Massey (1997), "Statistical models applied to the rating of sports teams", honors thesis,
Bluefield College (https://masseyratings.com/theory/massey97.pdf).

Every game is read as one noisy equation
:math:`r_a - r_b\ (+\ h\, [a \text{ at home}]) = \mathtt{score\_a} - \mathtt{score\_b}`; the
ratings are its least-squares solution. The normal equations are singular (adding a constant to
every rating of a connected group changes no margin), and Massey makes them non-singular by
replacing the last equation with :math:`\sum_i r_i = 0`. With a schedule that falls into several connected
groups the same is done once in each group: each group's ratings sum to zero (a group's level is
not comparable with another's, and zero, the average rating, is the neutral choice). Game weights
make it weighted least squares. Win/draw/loss probabilities come from the shared link
(:mod:`smoothers._static`), fitted out of sample.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from ._static import StaticRanking, Table, components

__all__ = ["Massey", "massey_ratings"]


def massey_ratings(t: Table, home: bool = True) -> tuple[np.ndarray, float | None]:
    r"""Massey's ratings and home advantage :math:`h` (``None`` when not fitted).

    The least-squares problem :math:`X \begin{bmatrix} r \\ h \end{bmatrix} = y` (a row per
    game: :math:`+1` at ``a``, :math:`-1` at ``b``, the home flag in the last column;
    :math:`y` = ``score_a - score_b``, the margins) has normal equations
    :math:`M \begin{bmatrix} r \\ h \end{bmatrix} = p` with :math:`M = X^\top W X`,
    :math:`p = X^\top W y` (:math:`W` the weights). In each connected group of competitors the
    row of its last competitor is replaced by ones over the group's ratings (0 at :math:`h`) and
    its entry of :math:`p` by 0, which pins the group's ratings to sum 0 (the replaced row is the
    negated sum of the group's other rows, so nothing is lost).

    :math:`h` is eliminated: with :math:`L` the ratings' block of the modified :math:`M` and
    :math:`u` its home column, :math:`r = r_0 - h\, r_1` where :math:`L r_0 = p`, :math:`L r_1 = u`
    (one sparse LU factor, two solves), and

    .. math::

        h = \frac{c_p - u^\top r_0}{c - u^\top r_1}

    from the home row :math:`u^\top r + c\, h = c_p` (:math:`c` and :math:`c_p` its last entries of
    :math:`M` and :math:`p`). Where that Schur complement vanishes the schedule cannot tell the
    home advantage from the ratings; :math:`h = 0` is then one least-squares solution (returned as
    ``None``)."""
    w = t.weight
    m = t.score_a - t.score_b
    n = t.n
    count, label = components(t)
    # the last competitor of each group: its row becomes the group's sum-to-zero row
    last = np.full(count, -1, dtype=np.int64)
    np.maximum.at(last, label, np.arange(n))
    replaced = np.zeros(n, dtype=bool)
    replaced[last] = True
    played = t.played()
    rows = np.concatenate([np.arange(n), t.a, t.b])
    cols = np.concatenate([np.arange(n), t.b, t.a])
    vals = np.concatenate([played, -w, -w])
    keep = ~replaced[rows]
    rows = np.concatenate([rows[keep], last[label]])
    cols = np.concatenate([cols[keep], np.arange(n)])
    vals = np.concatenate([vals[keep], np.ones(n)])
    L = sp.csc_matrix((vals, (rows, cols)), shape=(n, n))
    p = np.bincount(t.a, w * m, minlength=n) - np.bincount(t.b, w * m, minlength=n)
    p[replaced] = 0.0
    # minimum degree on L + L^T: L's pattern is symmetric but for the replaced rows, and
    # this order fills far less than the default column order on large schedules
    lu = splu(L, permc_spec="MMD_AT_PLUS_A")
    r0 = lu.solve(p)
    if not home or not np.any(t.home[w > 0]):
        return r0, None
    z = t.home * w
    u = np.bincount(t.a, z, minlength=n) - np.bincount(t.b, z, minlength=n)
    c = float((z * t.home).sum())
    q = float((z * m).sum())
    u_mod = u.copy()
    u_mod[replaced] = 0.0
    r1 = lu.solve(u_mod)
    schur = c - float((u * r1).sum())
    if not schur > 1e-10 * c:
        return r0, None
    h = (q - float((u * r0).sum())) / schur
    return r0 - h * r1, h


class Massey(StaticRanking):
    r"""Massey's least-squares ratings (Massey 1997) from margins:
    :math:`r_a - r_b\ (+\ h\, [a \text{ at home}]) = \mathtt{score\_a} - \mathtt{score\_b}`.

    Ratings are in points (margin units) and sum to zero in every connected group of competitors
    (a competitor without games gets 0). ``home=True`` (default) fits Massey's home advantage
    :math:`h` alongside the ratings where games have home sides, so that a team's home games do
    not inflate its rating; ``fit(...).info["home"]`` holds it. Needs the columns ``score_a`` and
    ``score_b``. Forecasts map :math:`r_a - r_b` (plus a home term) through an ordered-logistic link
    fitted out of sample on ``link_blocks`` consecutive blocks of the fit games
    (:mod:`smoothers._static`)."""

    name = "massey"
    newcomer = 0.0
    needs_scores = True

    def __init__(self, *, home: bool = True, link_blocks: int = 5, window: float | None = None):
        if not isinstance(home, (bool, np.bool_)):
            raise ValueError(f"massey: home must be True or False, got {home!r}")
        self.home = bool(home)
        super().__init__(link_blocks=link_blocks, window=window)

    def rate(self, t: Table) -> tuple[np.ndarray, dict]:
        r, h = massey_ratings(t, self.home)
        return r, {"home": h}
