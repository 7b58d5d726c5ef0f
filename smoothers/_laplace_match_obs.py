r"""The ranking observation of a match in the whole-history model, chosen from the smoother's
:class:`statespace.SkillModel`, and its derivatives scattered onto the skill nodes.

A match's sides perform :math:`p_s = \sum_{k \in s} w_k x_{n(k)}` (member :math:`k`'s weight and
the node of its competitor at the match's time); the ranking of the sides is observed through one
of the observations of :mod:`statespace.model.ranking` / :mod:`statespace.model.ranking_pairwise`
at point skills (``var = 0``), per-side noise :math:`\beta = \alpha / \sqrt 2` (:math:`\alpha` the
model's scale, so that a pair's scale :math:`\sqrt{2 \beta^2}` is :math:`\alpha`):

- logistic link: **Plackett-Luce** (:func:`statespace.model.ranking.pl_loglik`) at the match's one
  scale :math:`c = \sqrt{n}\,\beta` (Weng and Lin 2011, Algorithm 4; what
  ``RankingForecast("plackett_luce", beta)`` means). It is a proper likelihood of the whole
  ranking (the pairwise Bradley-Terry decomposition counts a ranking of :math:`n` sides as
  :math:`n (n - 1) / 2` independent games: a composite likelihood, which overstates the evidence
  in the whole-history posterior). Two sides give :math:`c = \alpha`: the model's logistic game,
  a tie being its ``"half"`` draw. Ties need the draw model ``"half"`` (PL's tie rule is half a
  win for a pair); ``"none"`` is accepted for matches without ties; a threshold or Davidson draw
  model has no Plackett-Luce form and is refused.
- probit link: **TrueSkill's Thurstonian chain** of adjacent sides
  (:func:`statespace.model.ranking_pairwise.thurstone_loglik`), draw margin :math:`\varepsilon` the
  ``("threshold", margin)`` draw model's margin (0 with ``"none"`` or ``"half"``, when a tie has no
  likelihood and is refused); two sides give the model's probit game. Davidson is refused.

Minus the Hessian of the log-likelihood in the nodes is :math:`A^\top (-H_\text{sides}) A` per
match, :math:`A_{s k} = w_k` for member :math:`k` of side :math:`s`: every pair of members of a
match is coupled, not only the two competitors of a game. Both observations are log-concave in the
performances, so it is positive semi-definite.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.data.matches import Matches
from statespace.model.outcome import Davidson, HalfWin, NoDraw, Outcome, Threshold
from statespace.model.ranking import pl_loglik
from statespace.model.ranking_forecast import RankingForecast
from statespace.model.ranking_pairwise import thurstone_loglik
from statespace.model.skillmodel import SkillModel

__all__ = ["PLACKETT_LUCE", "THURSTONE", "MatchObservation", "observation_of", "match_derivs", "block_pairs"]

PLACKETT_LUCE = 0
THURSTONE = 1


class MatchObservation:
    """The chosen observation: ``kind`` (:data:`PLACKETT_LUCE` or :data:`THURSTONE`), ``beta`` and
    ``eps`` (model units), and :meth:`forecast`, the :class:`RankingForecast` it means."""

    def __init__(self, kind: int, beta: float, eps: float):
        self.kind, self.beta, self.eps = kind, float(beta), float(eps)

    def forecast(self) -> RankingForecast:
        if self.kind == PLACKETT_LUCE:
            return RankingForecast("plackett_luce", self.beta)
        return RankingForecast("thurstone", self.beta, self.eps)


def observation_of(owner: str, model: SkillModel, matches: Matches | None = None) -> MatchObservation:
    """The ranking observation of ``model`` (module docstring); ``ValueError`` naming ``owner``, the
    model's setting and, for a tie the observation cannot score, the match."""
    obs = model.observation
    if not isinstance(obs, Outcome):
        raise ValueError(f"{owner}: matches of many sides are ranked, and the model's observation {obs!r} reads "
                         f"scores of two sides; give a SkillModel with a link and a draw model (an Outcome)")
    draw = model.draw
    beta = model.scale / math.sqrt(2.0)
    if model.link == "logistic":
        if not isinstance(draw, (HalfWin, NoDraw)):
            raise ValueError(f"{owner}: matches under the logistic link are Plackett-Luce rankings, whose ties are "
                             f"half a win; the draw model {draw!r} has no Plackett-Luce form: give draw='half' "
                             f"(or 'none' for matches without ties)")
        out = MatchObservation(PLACKETT_LUCE, beta, 0.0)
        tie_ok = isinstance(draw, HalfWin)
    else:
        if isinstance(draw, Davidson):
            raise ValueError(f"{owner}: matches under the probit link are TrueSkill's Thurstonian chain, which has no "
                             f"Davidson draws ({draw!r}): give draw=('threshold', margin) or 'none'")
        eps = float(draw.margin) if isinstance(draw, Threshold) else 0.0
        out = MatchObservation(THURSTONE, beta, eps)
        tie_ok = eps > 0.0
    if matches is not None and not tie_ok:
        m = _first_tie(matches)
        if m >= 0:
            raise ValueError(f"{owner}: match {matches.label[m]!r} (time {matches.when[m]}) has tied sides, which the "
                             f"model's draw model {draw!r} gives no likelihood under the {model.link} link: "
                             + ("give draw='half'" if model.link == "logistic" else
                                "give draw=('threshold', margin) with margin > 0"))
    return out


def _first_tie(matches: Matches) -> int:
    """The first match with two sides of one rank (-1: none)."""
    side_match = np.repeat(np.arange(matches.n_matches), np.diff(matches.match_ptr))
    key = side_match * (matches.rank.max() + 1) + matches.rank
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    tied = first[counts > 1]
    return int(side_match[tied].min()) if tied.size else -1


def block_pairs(match_ptr, side_ptr, node_of_member) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows and columns of every match's block of node pairs (each member with each member of its
    match, itself included, row-major), in the order :func:`match_derivs` writes their values, and
    each match's offset into them."""
    members = np.diff(side_ptr[match_ptr])
    offsets = np.r_[0, np.cumsum(members.astype(np.int64) ** 2)]
    rows = np.empty(int(offsets[-1]), np.int64)
    cols = np.empty_like(rows)
    _fill_pairs(match_ptr, side_ptr, node_of_member, offsets, rows, cols)
    return rows, cols, offsets


@njit(cache=True)
def _fill_pairs(match_ptr, side_ptr, node, offsets, rows, cols):
    for m in range(match_ptr.size - 1):
        k0 = side_ptr[match_ptr[m]]
        k1 = side_ptr[match_ptr[m + 1]]
        q = offsets[m]
        for k in range(k0, k1):
            for j in range(k0, k1):
                rows[q] = node[k]
                cols[q] = node[j]
                q += 1


@njit(cache=True)
def match_derivs(x, node, match_ptr, side_ptr, weight, rank, kind, beta, eps, offsets, grad, hvals):
    r"""The matches' log-likelihood at the nodes' values ``x``; adds its gradient in the nodes to
    ``grad`` (:math:`A^\top \nabla_p \ell`) and writes minus its Hessian's entries
    :math:`-w_k w_j H_{s(k) s(j)}` to ``hvals`` at each match's ``offsets`` (the pairs of
    :func:`block_pairs`)."""
    total = 0.0
    for m in range(match_ptr.size - 1):
        s0 = match_ptr[m]
        s1 = match_ptr[m + 1]
        n = s1 - s0
        mu = np.zeros(n)
        var = np.zeros(n)
        rk = np.empty(n, np.int64)
        for s in range(s0, s1):
            rk[s - s0] = rank[s]
            for k in range(side_ptr[s], side_ptr[s + 1]):
                mu[s - s0] += weight[k] * x[node[k]]
        if kind == PLACKETT_LUCE:
            ll, g, h = pl_loglik(mu, var, beta, rk)
        else:
            ll, g, h = thurstone_loglik(mu, var, beta, eps, rk)
        total += ll
        q = offsets[m]
        for s in range(s0, s1):
            for k in range(side_ptr[s], side_ptr[s + 1]):
                grad[node[k]] += weight[k] * g[s - s0]
                for t in range(s0, s1):
                    for j in range(side_ptr[t], side_ptr[t + 1]):
                        hvals[q] = -weight[k] * weight[j] * h[s - s0, t - s0]
                        q += 1
    return total
