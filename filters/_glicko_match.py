r"""Glicko-1 and Glicko-2 on a match of many sides: the match is one rating period in which every
side has played every other side.

Glickman's rating-period update (Glickman 1999, eqs. 4-6; "Example of the Glicko-2 system",
steps 3-4) already sums over the games a competitor played in the period, so a ranking of
:math:`n` sides is read as the :math:`n(n-1)/2` games of its pairs, side :math:`s` scoring
:math:`S_{st}` = 1, 1/2 or 0 against :math:`t` as it finished ahead of, level with or behind it.
With the sides' ratings and deviations from the pre-match state (a team's the weighted sum of its
members', :math:`r_s = \sum_k w_k r_k`, :math:`\mathrm{RD}_s^2 = \sum_k w_k^2 \mathrm{RD}_k^2`):

.. math::

    E_{st} = \frac{1}{1 + 10^{-g(\mathrm{RD}_t)(r_s - r_t)/400}}, \qquad
    \frac{1}{d_s^2} = q^2 \sum_{t \ne s} g(\mathrm{RD}_t)^2 E_{st}(1 - E_{st}), \qquad
    G_s = q \sum_{t \ne s} g(\mathrm{RD}_t)(S_{st} - E_{st}).

Two readings of a match, the filter's ``match_as`` setting:

- ``"period"``: every pairing is a whole game, Glickman's formula as it stands (the pairwise
  decomposition of Weng and Lin's Bradley-Terry "full pair" update, JMLR 12, 2011, Section 3.3). A
  free-for-all of :math:`n` entrants is then :math:`n - 1` games for each, as if their results were
  independent: in a large field the deviations collapse within a few matches;
- ``"game"``: the match counts as one game for each side, every pairing weighted :math:`1/(n-1)`
  (the sums above become means over the opponents), as multiplayer Elo shares its :math:`K` over
  the :math:`n - 1` opponents (Cunningham 2019). Ebtekar and Liu's Glicko baseline for contests
  (the Elo-MMR repository, ``multi-skill/src/systems/glicko.rs``) likewise averages the surprise
  over the field and counts the round as one game.

With two sides both are Glicko's own update of that game.

A member :math:`k` of side :math:`s` takes the side's period sums through its weight, as a skill
enters the side's performance: precision :math:`w_k^2 / d_s^2` and gradient :math:`w_k G_s`,
then Glicko-1's step (:func:`filters._glicko_steps.glicko1_step`) or Glicko-2's steps 5-8
(:func:`filters._glicko_steps.glicko2_step`, its volatility from those sums). Every side's sums
are taken before any member moves, so the order of the sides does not matter. The cost is
:math:`O(n^2)` a match, as multiplayer Elo's.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from statespace.model.numeric import DRAW_HALF, LOGISTIC, effective_scale, loglik_derivs
from statespace.model.skillmodel import ELO_SCALE

from ._glicko_steps import _AS_GAME, _RD, glicko1_step, glicko2_step
from .match_loop import match_kernel, side_moments

__all__ = ["period_sums", "match_glicko1", "match_glicko2"]


@njit(cache=True)
def period_sums(perf_mean, perf_var, rank, s0, s1, share, precision, gradient):
    """Each side's Glicko period sums over the other sides of the match, in rating units:
    ``precision[s - s0]`` :math:`= 1/d_s^2` and ``gradient[s - s0]`` :math:`= G_s`, each pair's terms
    the logistic log-likelihood's curvature and gradient at the opponent's effective scale
    :math:`1 / (q\\, g(\\mathrm{RD}_t))` (as a game's site, :func:`filters.glicko._side_site`), times
    the weight ``share`` of each pairing (1, or :math:`1/(n-1)` when the match counts as one game)."""
    n = s1 - s0
    scale = np.empty(n)
    for t in range(n):
        scale[t] = effective_scale(LOGISTIC, ELO_SCALE, perf_var[s0 + t])
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
def _share(theta, n):
    """The weight of each of a side's ``n - 1`` pairings: 1 (``match_as="period"``) or
    ``1 / (n - 1)`` (``match_as="game"``)."""
    return 1.0 / (n - 1) if theta[_AS_GAME] != 0.0 else 1.0


@match_kernel
def match_glicko1(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    """Glicko-1 on one match (the module docstring): the sides' period sums, then each member's step."""
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, _RD)
    precision = np.empty(s1 - s0)
    gradient = np.empty(s1 - s0)
    period_sums(perf_mean, perf_var, rank, s0, s1, _share(theta, s1 - s0), precision, gradient)
    for s in range(s0, s1):
        for k in range(side_ptr[s], side_ptr[s + 1]):
            w = weight[k]
            glicko1_step(x, member[k], w * w * precision[s - s0], w * gradient[s - s0])


@match_kernel
def match_glicko2(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    """Glicko-2 on one match (the module docstring): the sides' period sums, then each member's
    steps 5-8 (a member of weight 0 has an empty period: its RD grows by its volatility)."""
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, _RD)
    precision = np.empty(s1 - s0)
    gradient = np.empty(s1 - s0)
    period_sums(perf_mean, perf_var, rank, s0, s1, _share(theta, s1 - s0), precision, gradient)
    for s in range(s0, s1):
        for k in range(side_ptr[s], side_ptr[s + 1]):
            w = weight[k]
            glicko2_step(x, theta, member[k], w * w * precision[s - s0], w * gradient[s - s0])
