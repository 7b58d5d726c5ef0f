r"""Stephenson's rating system: Glicko with a per-game deviation increase, a bonus and a
neighbourhood term.

A. Stephenson, "Comparing predictive performance of chess ratings with the PlayerRatings
package" (vignette of the R package PlayerRatings, 2012), appendix "Stephenson System". With
:math:`q = \ln 10 / 400`, a competitor with rating :math:`r` and variance :math:`v` who plays
:math:`n` games in a rating period against opponents :math:`(r_j, v_j)` with scores :math:`y_j`:

- predict: :math:`v \leftarrow \min(v + c^2 t,\ \mathrm{RD}_\text{max}^2)` after :math:`t` idle
  periods (Glicko's step 1);
- :math:`k_j = 1 / \sqrt{1 + 3 q^2 v_j / \pi^2}`,
  :math:`e_j = 1 / \bigl(1 + 10^{-k_j (r - r_j + \gamma) / 400}\bigr)` (:math:`\gamma` the home
  advantage), :math:`d = q^2 \sum_j k_j^2 e_j (1 - e_j)`;
- the update:

  .. math::

      v^* &= \left(\frac{1}{v + h^2 n} + d\right)^{-1} \\
      r^* &= r + q\, v^* \sum_j k_j (y_j - e_j + b) + \lambda \Bigl(\frac{1}{n} \sum_j r_j - r\Bigr)

In the vignette's terms ``cval`` :math:`= c`, ``hval`` :math:`= h`, ``bval`` :math:`= 100 b` and
``lambda`` is 100 times the neighbourhood weight :math:`\lambda`; :math:`h = b = \lambda = 0` is
Glicko-1. In this package's terms each game is Glicko's site (:mod:`filters.glicko`), the
variance widened by :math:`h^2` per game as TrueSkill's :math:`\tau` is, and two extra sums (the
bonus in the gradient, the opponents' ratings) that a custom combination rule applies.
"""

from __future__ import annotations

import math

from numba import njit

from statespace.model.numeric import LOGISTIC_VAR_FACTOR
from statespace.model.skillmodel import ELO_SCALE

from . import _checks as C
from . import kernels as K
from .glicko import _HOME, _R, _RD, Glicko, _predict1, _proba, _side_site

__all__ = ["Stephenson"]

#: Glicko's kernel parameters first (so that its kernels read them), then Stephenson's three
PARAMS = Glicko.params + ("h", "bonus", "neighbourhood")
_H, _BONUS, _LAMBDA = len(Glicko.params), len(Glicko.params) + 1, len(Glicko.params) + 2
#: scratch column of the sum of opponents' ratings
_OPP = K.SCRATCH_WIDTH


@njit(cache=True)
def _side(x, theta, scratch, i, j, score, d, weight):
    """Glicko's site for ``i`` against ``j``, plus the bonus ``q k_j b``, the variance widened by
    ``h^2`` per game and the opponent's rating for the neighbourhood mean."""
    _side_site(scratch, i, x[i, _RD], x[j, _RD], score, d, weight)
    k_over_s = 1.0 / math.sqrt(ELO_SCALE * ELO_SCALE + LOGISTIC_VAR_FACTOR * x[j, _RD] * x[j, _RD])
    scratch[i, 2] += weight * k_over_s * theta[_BONUS]
    scratch[i, 3] = x[i, _RD] * x[i, _RD] + theta[_H] * theta[_H] * scratch[i, 0]
    scratch[i, _OPP] += x[j, _R]


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """Both competitors' sites from the pre-period values (the module docstring's sums)."""
    p = _proba(forecast, obs, x, a, b, at_home, theta)
    d = x[a, _R] - x[b, _R] + theta[_HOME] * at_home
    _side(x, theta, scratch, a, b, score, d, weight)
    _side(x, theta, scratch, b, a, 1.0 - score, -d, weight)
    return p


@K.apply_kernel
def _apply(x, count, theta, i, scratch):
    """``v* = (1 / (v + h^2 m) + d)^(-1)``, ``r* = r + v* G + lambda (mean_j r_j - r)``; both variances
    kept in ``[VAR_MIN, VAR_MAX]`` (a tiny RD's square underflows to 0) and the rating within
    ``+-MEAN_MAX``, as the built-in rules keep them."""
    v_star = K.clamp_var(1.0 / (1.0 / K.clamp_var(scratch[i, 3]) + scratch[i, 1]))
    r = x[i, _R]
    x[i, _R] = K.clamp_mean(r + v_star * scratch[i, 2] + theta[_LAMBDA] * (scratch[i, _OPP] / scratch[i, 0] - r))
    x[i, _RD] = math.sqrt(v_star)


class Stephenson(Glicko):
    r"""Stephenson's (2012) extension of Glicko-1 (see the module docstring).

    Parameters
    ----------
    c:
        RD growth per idle rating period, as Glicko's :math:`c` (the vignette's ``cval``; default
        10, lower than Glicko's because :math:`h` also widens the deviations).
    h:
        RD growth per game played: :math:`v \leftarrow v + h^2` for each game of the period
        (``hval``, 10).
    bonus:
        Points of expected score added to every result, :math:`b` (the vignette's ``bval / 100``;
        default 0): players who play more climb, whatever the results (rating inflation).
    neighbourhood:
        Share of the gap to the mean rating of the period's opponents closed at each update,
        :math:`\lambda` (the vignette's ``lambda / 100``; default 0.02).
    initial_rating, initial_rd, rd_max, home, period_days, form:
        As for :class:`filters.Glicko` (the vignette starts newcomers at 2200 with RD 300).

    Accepted ranges: ``c`` and ``h`` in :math:`[0, 10^3\alpha]` (:math:`\alpha = 400 / \ln 10`), ``bonus`` in ``[0, 1]`` (a share of a game's
    expected score, which is at most 1), ``neighbourhood`` in ``[0, 1]`` (a share of the gap: above
    1 the update overshoots the opponents' mean and diverges), the rest as for Glicko.
    """

    name = "stephenson"
    params = PARAMS
    scratch_width = K.SCRATCH_WIDTH + 1
    _predict = _predict1
    _site = _site
    _apply = _apply
    rule = K.RULE_CUSTOM
    #: Stephenson's rules (the neighbourhood pull, the bonus) are written for games of two; no
    #: match kernel, so matches of many sides are refused (Glicko's is not inherited)
    _match = None

    def __init__(self, c: float = 10.0, h: float = 10.0, bonus: float = 0.0, neighbourhood: float = 0.02, *,
                 initial_rating: float = 1500.0, initial_rd: float = 350.0, rd_max: float = 350.0,
                 home: float = 0.0, period_days: float = 30.0, form: str = "prediction"):
        super().__init__(c, initial_rating=initial_rating, initial_rd=initial_rd, rd_max=rd_max, home=home,
                         period_days=period_days, form=form)
        self.h = C.length("Stephenson", "h", h, ELO_SCALE, zero=True)
        # shares: of a game's expected score, and of the gap to the opponents' mean rating
        self.bonus = C.number("Stephenson", "bonus", bonus, 0.0, 1.0)
        self.neighbourhood = C.number("Stephenson", "neighbourhood", neighbourhood, 0.0, 1.0)

    def _describe(self) -> str:
        return f"c={self.c:g}, h={self.h:g}, bonus={self.bonus:g}, neighbourhood={self.neighbourhood:g}"

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """Glicko's ``c`` (and ``home``), ``h`` in [0, 100] and ``neighbourhood`` in [0, 0.2]."""
        return {**super().tunable(games), "h": (0.0, 100.0), "neighbourhood": (0.0, 0.2)}


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find it.
METHODS = {"stephenson": Stephenson}
