"""The model: one latent random-walk skill model and the observations of a game.

- :mod:`~statespace.model.skillmodel`: :class:`SkillModel` (link, scale, prior, drift, mean
  reversion, home advantage, draw model) and its one transition.
- :mod:`~statespace.model.observation`: the observation interface. Each observation owns its
  log-likelihood with its first two derivatives, its tilted-Gaussian moments where they are exact
  and its win/draw/loss forecast: :mod:`~statespace.model.outcome` (win/draw/loss through the link
  and a draw model), :mod:`~statespace.model.margin` (the score difference, Gaussian) and
  :mod:`~statespace.model.goals` (each side's goals, Poisson). A new observation is one module here.
- :mod:`~statespace.model.numeric` and :mod:`~statespace.model.gaussian`: the compiled numerics the
  observations share (links, truncated-Gaussian moments).
- :mod:`~statespace.model.ranges`: the one rule for the range of every setting and result;
  :mod:`~statespace.model.counts`: plausible ranges of observed counts.
- :mod:`~statespace.model.simulate` and :mod:`~statespace.model.scenarios`: games drawn from the
  model; :mod:`~statespace.model.metrics`: scores of forecasts (log loss, Brier, accuracy);
  :mod:`~statespace.model.ranking_metrics`: scores of forecasts of rankings of many sides (pair
  inversion, rank deviation, pairwise log loss, top-1 accuracy).
- :mod:`~statespace.model.match_scenarios`: leagues of matches of many sides drawn from the model
  (teams, free-for-all, partial play; Gumbel noise makes logistic orders Plackett-Luce) with each
  member's true skill kept; presets ``ffa_league`` and ``team_league``.
- :mod:`~statespace.model.ranking` and :mod:`~statespace.model.ranking_pairwise`: the observation of
  a ranking of the sides of one match (Plackett-Luce; Bradley-Terry pairs; TrueSkill's Thurstonian
  chain): compiled log-likelihood, gradient and Hessian in the sides' performance means, and
  forecasts (P(i ahead of j), P(i wins), expected place).

Imports: :mod:`statespace.data` and :mod:`statespace._runtime` only; never a method
(``filters``, ``smoothers``) or a room above.
"""

from statespace._runtime.lazy import exports as _exports

__getattr__, __dir__ = _exports(__name__, {
    "SkillModel": "skillmodel", "ELO_SCALE": "skillmodel",
    "Observation": "observation", "Outcome": "outcome", "NoDraw": "outcome", "HalfWin": "outcome",
    "Threshold": "outcome", "Davidson": "outcome", "Margin": "margin", "Goals": "goals",
    "Simulation": "simulate",
})
