"""statespace-ratings: dynamic skill ratings as inference in one state-space model.

Elo, Glicko, TrueSkill, Weng-Lin and the extended Kalman filter are approximate Bayesian
filters of one latent model (random-walk skills observed through an observation model:
win/draw/loss through a logistic or probit link, the score margin or each side's goals; see
:class:`SkillModel` and :mod:`statespace.observation`); smoothers fit the same model to the
whole history. This package holds the model, the game table, simulation, metrics and the
comparison harness; the methods live in the sibling packages ``filters`` and ``smoothers``.
"""

from . import _cache
_cache.configure_numba_cache()  # a cache folder numba can write (read-only installs), before any kernel
_cache.drop_stale_numba_caches()

from .observation import Observation
from .outcome import Davidson, HalfWin, NoDraw, Outcome, Threshold
from .margin import Margin
from .goals import Goals
from .model import ELO_SCALE, SkillModel
from .games import DroppedRowsWarning, Games, GamesError
from .simulate import Simulation, simulate
from . import scenarios
from . import metrics
from .compare import compare
from .fixed import FixedForecast

__all__ = [
    "SkillModel", "NoDraw", "HalfWin", "Threshold", "Davidson", "ELO_SCALE",
    "Observation", "Outcome", "Margin", "Goals",
    "Games", "GamesError", "DroppedRowsWarning",
    "simulate", "Simulation", "scenarios", "metrics", "compare", "FixedForecast",
]
__version__ = "0.1.0"
