r"""Simulated leagues of matches of many sides, with the true skills kept.

:func:`simulate_matches` draws a table of :class:`~statespace.data.matches.Matches` from a
:class:`~statespace.model.skillmodel.SkillModel`:

- one match per unit of time (match ``m`` at time ``m``); each competitor's skill starts at
  :math:`\mathcal{N}(\mu_0, \sigma_0^2)` (``prior_mean``, ``prior_var``) at its first match and
  moves between its consecutive matches by the model's transition (:meth:`SkillModel.transition`:
  the random walk with variance ``drift`` per unit of time, or the Ornstein-Uhlenbeck step with
  ``reversion > 0``);
- a match has ``sides`` sides of ``team_size`` distinct competitors drawn uniformly at random;
  member :math:`k` plays a share :math:`w_k` of the match (1, or with ``partial > 0`` uniform on
  :math:`[1 - \text{partial}, 1]`);
- side :math:`s` performs :math:`p_s = \sum_k w_k s_k + \varepsilon_s` with independent noise, and
  the sides are ranked by performance, higher first (ties have probability zero).

The noise makes two sides' order follow the model's link at its scale :math:`\alpha`,
:math:`P(p_a > p_b) = F((\mu_a - \mu_b) / \alpha)` with :math:`\mu_s = \sum_k w_k s_k`:

- probit: :math:`\varepsilon_s \sim \mathcal{N}(0, \alpha^2 / 2)`, so
  :math:`\varepsilon_b - \varepsilon_a \sim \mathcal{N}(0, \alpha^2)` and the pair's order is
  :math:`\Phi(d / \alpha)` (Thurstone's case V); the order of many sides is Thurstonian;
- logistic: :math:`\varepsilon_s` Gumbel (largest extreme value) with scale :math:`\alpha`; the
  difference of two independent Gumbels is logistic, so the pair's order is
  :math:`1 / (1 + e^{-d / \alpha})` exactly, and the order of all the sides is Plackett-Luce with
  strengths :math:`e^{\mu_s / \alpha}`: the winner is side :math:`s` with probability
  :math:`\mathrm{softmax}(\mu / \alpha)_s`, the next among the rest likewise (Yellott, J. I.
  1977, "The relationship between Luce's choice axiom, Thurstone's theory of comparative
  judgment, and the double exponential distribution", J. Math. Psych. 15, 109-144; Train, K.
  2009, *Discrete Choice Methods with Simulation*, 2nd ed., ch. 3 and 7.3).

The model's draw model, home advantage and observation other than the link are not used: no
match is drawn, no side is at home. Every draw comes from ``numpy.random.default_rng(seed)``: the
same seed gives the same league.

Presets: :func:`ffa_league` (free-for-all) and :func:`team_league` (two teams of four).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from statespace.data.matches import Matches
from statespace.model import ranges as R
from statespace.model.skillmodel import SkillModel

__all__ = ["MatchSimulation", "simulate_matches", "ffa_league", "team_league"]

_OWNER = "simulate_matches"


@dataclass(frozen=True)
class MatchSimulation:
    """A simulated table of matches and the truth behind it.

    - ``matches``: the :class:`Matches` (competitor ids 0..n_players-1, named ``P000``...; match
      ``m`` of the league at time ``m``, labelled ``M0000``...);
    - ``truth``: float64 ``(n_members,)`` aligned with ``matches.member`` and ``matches.weight``:
      the true skill of each member at its match (the skill the match was played at);
    - ``model``: the generating model; ``name`` and ``description`` for presets.
    """

    matches: Matches
    truth: np.ndarray
    model: SkillModel
    name: str = "simulation"
    description: str = ""

    def side_strength(self) -> np.ndarray:
        """Each side's true mean performance :math:`\\mu_s = \\sum_k w_k s_k`, float64
        ``(n_sides,)`` aligned with ``matches.rank``."""
        m = self.matches
        side_of_member = np.repeat(np.arange(m.n_sides), np.diff(m.side_ptr))
        return np.bincount(side_of_member, weights=m.weight * self.truth, minlength=m.n_sides)


def _check(n_players, n_matches, sides, team_size, partial) -> tuple[int, int, int, int, float]:
    n_players = R.whole(_OWNER, "n_players", n_players, 2)
    n_matches = R.whole(_OWNER, "n_matches", n_matches, 1)
    sides = R.whole(_OWNER, "sides", sides, 2)
    team_size = R.whole(_OWNER, "team_size", team_size, 1)
    if sides * team_size > n_players:
        raise ValueError(f"{_OWNER}: sides * team_size must be <= n_players (every member of a match is a "
                         f"distinct competitor), got {sides} * {team_size} = {sides * team_size} > {n_players}")
    partial = R.number(_OWNER, "partial", partial, 0.0, 1.0, hi_open=True)
    return n_players, n_matches, sides, team_size, partial


def simulate_matches(model: SkillModel, n_players: int, n_matches: int, sides: int, team_size: int = 1,
                     seed=None, partial: float = 0.0, *, name: str = "simulation",
                     description: str = "") -> MatchSimulation:
    """Draw ``n_matches`` matches of ``sides`` sides of ``team_size`` among ``n_players``
    competitors from ``model`` (see the module docstring for the generative model).

    ``seed`` is an int, ``None`` or a ``numpy.random.Generator``. Raises ``ValueError`` naming the
    argument when ``n_players``, ``n_matches``, ``sides`` (>= 2) or ``team_size`` (>= 1) is not a
    whole number in range, when ``sides * team_size > n_players`` or ``partial`` is outside [0, 1).
    """
    if not isinstance(model, SkillModel):
        raise ValueError(f"{_OWNER}: model must be a SkillModel, got {type(model).__name__}")
    n_players, n_matches, sides, team_size, partial = _check(n_players, n_matches, sides, team_size, partial)
    rng = np.random.default_rng(seed)
    per_match = sides * team_size
    n_rows = n_matches * per_match

    member = np.empty(n_rows, dtype=np.int64)
    for m in range(n_matches):
        member[m * per_match:(m + 1) * per_match] = rng.choice(n_players, per_match, replace=False)
    weight = np.ones(n_rows) if partial == 0 else rng.uniform(1.0 - partial, 1.0, n_rows)

    # each competitor's skill at each of its matches: a draw from the prior at the first, then
    # the model's transition over the gap since its previous match
    time = np.repeat(np.arange(n_matches, dtype=float), per_match)
    skill = np.empty(n_rows)
    current = np.full(n_players, np.nan)
    last = np.full(n_players, np.nan)
    mu0, sd0 = model.prior_mean, math.sqrt(model.prior_var)
    for r in range(n_rows):
        i = member[r]
        if np.isnan(last[i]):
            current[i] = mu0 + sd0 * rng.standard_normal()
        else:
            a, v = model.transition(time[r] - last[i])
            current[i] = mu0 + float(a) * (current[i] - mu0) + math.sqrt(float(v)) * rng.standard_normal()
        last[i] = time[r]
        skill[r] = current[i]

    strength = (weight * skill).reshape(n_matches * sides, team_size).sum(axis=1)
    if model.link == "logistic":
        noise = rng.gumbel(0.0, model.scale, strength.size)
    else:
        noise = rng.normal(0.0, model.scale / math.sqrt(2.0), strength.size)
    perf = (strength + noise).reshape(n_matches, sides)
    # place of each side: how many sides of its match performed better (no ties almost surely)
    order = np.argsort(-perf, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(sides)[None, :], axis=1)

    width = len(str(n_players - 1))
    names = np.array([f"P{i:0{width}d}" for i in range(n_players)], dtype=object)
    mwidth = len(str(n_matches - 1))
    match_id = np.repeat(np.arange(n_matches), per_match)
    side_no = np.tile(np.repeat(np.arange(sides), team_size), n_matches)
    frame = pd.DataFrame({
        "match": [f"M{m:0{mwidth}d}" for m in match_id], "time": time, "competitor": names[member],
        "side": [f"S{s}" for s in side_no], "rank": np.repeat(rank.reshape(-1), team_size),
        "weight": weight})
    matches = Matches.from_long(frame, score=None)
    # from_long reorders sides and members; its row field says where each member came from
    truth = skill[np.asarray(matches.row)]
    truth.flags.writeable = False
    return MatchSimulation(matches, truth, model, name, description)


def ffa_league(seed=None) -> MatchSimulation:
    """Free-for-all: 1,000 matches of 50 single entrants among 500 competitors; logistic link at
    scale 1 (Plackett-Luce orders), skills N(0, 1) drifting with variance 0.01 per match."""
    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.01)
    return simulate_matches(model, 500, 1000, 50, 1, seed=seed, name="ffa_league",
                            description=ffa_league.__doc__)


def team_league(seed=None) -> MatchSimulation:
    """Teams: 1,000 matches of 2 teams of 4 among 200 competitors; logistic link at scale 1,
    skills N(0, 1) drifting with variance 0.01 per match."""
    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.01)
    return simulate_matches(model, 200, 1000, 2, 4, seed=seed, name="team_league",
                            description=team_league.__doc__)
