r"""What a method's forecast of a match means: which ranking observation, at which noise.

A method rating matches forecasts each side's performance as :math:`\mathcal{N}(\mu_s, v_s)` from
the pre-match state (``perf_mean``, ``perf_var``: the weighted sums of its members' skill means and
variances, :mod:`filters.match_loop`); the ranking it then predicts is one of the observations of
:mod:`statespace.model.ranking` and :mod:`statespace.model.ranking_pairwise`, with the method's own
per-side performance noise :math:`\beta` (and TrueSkill's draw margin :math:`\varepsilon`), all in
the method's units:

- ``"thurstone"``: TrueSkill's Thurstonian model, P(i ahead of j) :math:`= \Phi\bigl((\mu_i - \mu_j - \varepsilon) / \sqrt{2\beta^2 + v_i + v_j}\bigr)`;
- ``"plackett_luce"``: Plackett-Luce at the match's one scale :math:`c = \sqrt{\sum_k (\beta^2 + v_k)}`;
- ``"bradley_terry"``: every pair a Bradley-Terry game at its own scale :math:`\sqrt{2\beta^2 + v_i + v_j}`
  (Weng and Lin's pairwise decomposition; Elo's logistic with :math:`v = 0`).

``var_factor`` (1 unless a method says otherwise) multiplies every side's variance :math:`v_s` in
those scales: Glicko's forecast averages the logistic over the skills by Glickman's :math:`g`
function, :math:`\sqrt{\alpha^2 + 3 (v_i + v_j) / \pi^2}`, a ``var_factor`` of :math:`3 / \pi^2`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RankingForecast", "KINDS"]

#: the ranking observations a forecast can mean
KINDS = ("thurstone", "plackett_luce", "bradley_terry")


@dataclass(frozen=True)
class RankingForecast:
    """``kind`` (one of :data:`KINDS`), the per-side performance noise ``beta`` (> 0, the method's
    units), the draw margin ``eps`` (>= 0; read by ``"thurstone"`` only) and the factor
    ``var_factor`` (> 0) on the sides' variances."""

    kind: str
    beta: float
    eps: float = 0.0
    var_factor: float = 1.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"RankingForecast: kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not (math.isfinite(self.beta) and self.beta > 0):
            raise ValueError(f"RankingForecast: beta must be a positive finite number, got {self.beta!r}")
        if not (math.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"RankingForecast: eps must be a finite number >= 0, got {self.eps!r}")
        if not (math.isfinite(self.var_factor) and self.var_factor > 0):
            raise ValueError(f"RankingForecast: var_factor must be a positive finite number, got {self.var_factor!r}")
