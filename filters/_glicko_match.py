r"""Glicko-1 and Glicko-2 on a match of many sides: the match is one game for each side, shared
over its pairings.

Glickman's rating-period update (Glickman 1999, eqs. 4-6; "Example of the Glicko-2 system",
steps 3-4) sums over the games a competitor played in the period. A ranking of :math:`n` sides is
read as the games of its pairs, side :math:`s` scoring :math:`S_{st}` = 1, 1/2 or 0 against
:math:`t` as it finished ahead of, level with or behind it, each pairing a game of weight
:math:`1/(n-1)`, so that the match counts as one game for each side. With the sides' ratings and
deviations from the pre-match state (a team's the weighted sum of its members',
:math:`r_s = \sum_k w_k r_k`, :math:`\mathrm{RD}_s^2 = \sum_k w_k^2 \mathrm{RD}_k^2`):

.. math::

    E_{st} = \frac{1}{1 + 10^{-g(\mathrm{RD}_t)(r_s - r_t)/400}}, \qquad
    \frac{1}{d_s^2} = \frac{q^2}{n - 1} \sum_{t \ne s} g(\mathrm{RD}_t)^2 E_{st}(1 - E_{st}), \qquad
    G_s = \frac{q}{n - 1} \sum_{t \ne s} g(\mathrm{RD}_t)(S_{st} - E_{st}).

Why one game and not :math:`n - 1`: the results of a ranking's pairs are far from independent
(who finished 3rd of 3,000 beat 2,997 others at once); read as :math:`n - 1` whole games of one
period, a field of 50 collapses the deviations within a few matches and Glicko-2's volatility
then runs away (ratings of :math:`10^{298}` on ``ffa_league``). Sharing the match over the pairings
is what multiplayer Elo does with its :math:`K` (Cunningham 2019) and what Ebtekar and Liu's Glicko
baseline for contests does (the Elo-MMR repository, ``multi-skill/src/systems/glicko.rs``: the
mean surprise over the field, the round counted as one game). With two sides it is Glicko's own
update of that game.

A member :math:`k` of side :math:`s` takes the side's sums through its weight, as its skill enters
the side's performance: precision :math:`w_k^2 / d_s^2` and gradient :math:`w_k G_s`, then
Glicko-1's step (the Gaussian product, :func:`filters.kernels.gaussian_product`) or Glicko-2's steps 5-8
(:func:`filters._glicko_steps.glicko2_step`, its volatility from those sums; a member of weight 0
has an empty period, its RD growing by its volatility). Every side's sums are taken before any
member moves, so the order of the sides does not matter. The cost is :math:`O(n^2)` a match, as
multiplayer Elo's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from statespace.model.numeric import DRAW_HALF, LOGISTIC, effective_scale, loglik_derivs
from statespace.model.skillmodel import ELO_SCALE

from . import kernels as K
from ._glicko_steps import _RD, glicko2_step
from .match_loop import match_kernel, side_moments

__all__ = ["match_sums", "match_glicko1", "match_glicko2"]


@njit(cache=True)
def match_sums(perf_mean, perf_var, rank, s0, s1, precision, gradient):
    """Each side's Glicko sums over the other sides of the match, in rating units, each pairing a
    game of weight :math:`1/(n-1)`: ``precision[s - s0]`` :math:`= 1/d_s^2` and ``gradient[s - s0]``
    :math:`= G_s`, a pairing's terms the logistic log-likelihood's curvature and gradient at the
    opponent's effective scale :math:`1 / (q\\, g(\\mathrm{RD}_t))` (as a game's site,
    :func:`filters.glicko._side_site`)."""
    n = s1 - s0
    scale = np.empty(n)
    for t in range(n):
        scale[t] = effective_scale(LOGISTIC, ELO_SCALE, perf_var[s0 + t])
    share = 1.0 / (n - 1)
    for s in range(n):
        prec = 0.0
        grad = 0.0
        for t in range(n):
            if t != s:
                rs, rt = rank[s0 + s], rank[s0 + t]
                y = 1.0 if rs < rt else (0.5 if rs == rt else 0.0)
                g, c = loglik_derivs(LOGISTIC, DRAW_HALF, 0.0, y, perf_mean[s0 + s] - perf_mean[s0 + t], scale[t])
                grad += g
                prec -= c
        precision[s] = share * prec
        gradient[s] = share * grad


@njit(cache=True)
def _rate_match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var, version2):
    """Either version on one match: the sides' moments and sums, then each member's step (Glicko-1's
    Gaussian product, or Glicko-2's steps 5-8 when ``version2``)."""
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, _RD)
    precision = np.empty(s1 - s0)
    gradient = np.empty(s1 - s0)
    match_sums(perf_mean, perf_var, rank, s0, s1, precision, gradient)
    for s in range(s0, s1):
        for k in range(side_ptr[s], side_ptr[s + 1]):
            i, w = member[k], weight[k]
            if version2:
                glicko2_step(x, theta, i, w * w * precision[s - s0], w * gradient[s - s0])
            else:
                K.gaussian_product(x, i, x[i, _RD] * x[i, _RD], w * w * precision[s - s0], w * gradient[s - s0])


@match_kernel
def match_glicko1(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    """Glicko-1 on one match (the module docstring)."""
    _rate_match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var, False)


@match_kernel
def match_glicko2(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    """Glicko-2 on one match (the module docstring)."""
    _rate_match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var, True)
