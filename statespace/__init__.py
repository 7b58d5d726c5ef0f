"""statespace-ratings: dynamic skill ratings as inference in one state-space model.

Elo, Glicko, TrueSkill, Weng-Lin and the extended Kalman filter are approximate Bayesian
filters of one latent model (random-walk skills observed through an observation model:
win/draw/loss through a logistic or probit link, the score margin or each side's goals; see
:class:`SkillModel` and :mod:`statespace.model.observation`); smoothers fit the same model to the
whole history. The methods live in the sibling packages ``filters`` and ``smoothers``.

This module is the user's facade only: the names below, imported on first use
(``statespace.Games`` loads the game table and pandas, ``statespace.SkillModel`` the compiled
observation kernels), so ``import statespace`` itself, and ``statespace --help``, load neither.
No module of the project imports it.

The package is split in rooms by what they hold. A room imports only rooms to its right::

    app -> ensemble, evaluation -> smoothers -> filters -> methods -> model -> data -> _runtime

- :mod:`statespace._runtime`: compile and cache plumbing (numba, PyTensor, progress);
- :mod:`statespace.data`: the game table and where games come from (readers, ids, data sets,
  published forecasts); it knows no model;
- :mod:`statespace.model`: :class:`SkillModel`, the observations and their numerics, the ranges of
  settings, simulation, scenarios and the scores of forecasts;
- :mod:`statespace.methods`: the kit every method is built with (the interface, settings, the
  registry of built-in methods, method-spec strings, display and plots);
- ``filters`` and ``smoothers`` (sibling packages): the methods;
- :mod:`statespace.evaluation`: compare and study (held-out scoring of methods);
- :mod:`statespace.ensemble`: methods made of methods (auto, blend); evaluation and ensemble do not
  import each other;
- :mod:`statespace.app`: the command line and the lab; nothing imports it.

``tests/test_rooms.py`` checks the arrow, that no module imports another room's underscore name
and that no module is over 500 lines.
"""

from statespace._runtime import cache as _cache
_cache.configure_numba_cache()  # a cache folder numba can write (read-only installs), before any kernel
_cache.drop_stale_numba_caches()

#: public name -> the submodule that defines it (imported on first use)
_LAZY = {
    "Observation": "model.observation",
    "Davidson": "model.outcome", "HalfWin": "model.outcome", "NoDraw": "model.outcome", "Outcome": "model.outcome",
    "Threshold": "model.outcome",
    "Margin": "model.margin",
    "Goals": "model.goals",
    "ELO_SCALE": "model.skillmodel", "SkillModel": "model.skillmodel",
    "DroppedRowsWarning": "data.games", "Games": "data.games", "GamesError": "data.games",
    "Matches": "data.matches",
    "Simulation": "model.simulate", "simulate": "model.simulate",
    "compare": "evaluation.compare", "Comparison": "evaluation.compare",
    "compare_matches": "evaluation.compare_matches",
    "FixedForecast": "data.fixed",
    "auto": "ensemble.auto", "Auto": "ensemble.auto",
    "Blend": "ensemble.blend",
    "study": "evaluation.study", "Grid": "evaluation.study",
    "BoundWarning": "methods.settings", "DrawWarning": "methods.settings",
    "SeenGamesWarning": "methods.seen",
}
#: public submodules (name -> where it lives)
_SUBMODULES = {"scenarios": "model.scenarios", "metrics": "model.metrics", "datasets": "data.datasets"}

__all__ = [
    "SkillModel", "NoDraw", "HalfWin", "Threshold", "Davidson", "ELO_SCALE",
    "Observation", "Outcome", "Margin", "Goals",
    "Games", "GamesError", "DroppedRowsWarning", "Matches",
    "BoundWarning", "DrawWarning", "SeenGamesWarning",
    "simulate", "Simulation", "scenarios", "metrics", "datasets", "compare", "Comparison", "compare_matches",
    "FixedForecast", "auto", "Auto", "Blend", "study", "Grid",
]
from statespace._runtime.version import __version__  # noqa: E402


from statespace._runtime.lazy import exports as _exports  # noqa: E402

__getattr__, __dir__ = _exports(__name__, _LAZY, _SUBMODULES)
