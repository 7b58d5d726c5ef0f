"""statespace-ratings: dynamic skill ratings as inference in one state-space model.

Elo, Glicko, TrueSkill, Weng-Lin and the extended Kalman filter are approximate Bayesian
filters of one latent model (random-walk skills observed through an observation model:
win/draw/loss through a logistic or probit link, the score margin or each side's goals; see
:class:`SkillModel` and :mod:`statespace.observation`); smoothers fit the same model to the
whole history. This package holds the model, the game table, simulation, metrics and the
comparison harness; the methods live in the sibling packages ``filters`` and ``smoothers``.

The names below are imported on first use (``statespace.Games`` loads the game table and
pandas, ``statespace.SkillModel`` the compiled observation kernels), so ``import statespace``
itself, and ``statespace --help``, load neither.
"""

from . import _cache
_cache.configure_numba_cache()  # a cache folder numba can write (read-only installs), before any kernel
_cache.drop_stale_numba_caches()

import importlib as _importlib
import sys as _sys
import types as _types

#: public name -> the submodule that defines it (imported on first use)
_LAZY = {
    "Observation": "observation",
    "Davidson": "outcome", "HalfWin": "outcome", "NoDraw": "outcome", "Outcome": "outcome", "Threshold": "outcome",
    "Margin": "margin",
    "Goals": "goals",
    "ELO_SCALE": "model", "SkillModel": "model",
    "DroppedRowsWarning": "games", "Games": "games", "GamesError": "games",
    "Simulation": "simulate", "simulate": "simulate",
    "compare": "compare", "Comparison": "compare",
    "FixedForecast": "fixed",
    "auto": "auto", "Auto": "auto",
    "Blend": "blend",
    "study": "study", "Grid": "study",
    "BoundWarning": "settings", "DrawWarning": "settings",
    "SeenGamesWarning": "seen",
}
#: public submodules
_SUBMODULES = ("scenarios", "metrics", "datasets")

__all__ = [
    "SkillModel", "NoDraw", "HalfWin", "Threshold", "Davidson", "ELO_SCALE",
    "Observation", "Outcome", "Margin", "Goals",
    "Games", "GamesError", "DroppedRowsWarning",
    "BoundWarning", "DrawWarning", "SeenGamesWarning",
    "simulate", "Simulation", "scenarios", "metrics", "datasets", "compare", "Comparison", "FixedForecast", "auto",
    "Auto", "Blend", "study", "Grid",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(_importlib.import_module(f".{_LAZY[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = _importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(_types.ModuleType):
    """The package module: ``statespace.compare``, ``statespace.simulate``, ``statespace.auto`` and
    ``statespace.study`` stay the functions (as when this file imported them eagerly), also after
    something imports the submodules of the same names, which would otherwise set the package
    attribute to the submodule."""

    def __setattr__(self, name, value):
        if name in ("compare", "simulate", "auto", "study") and isinstance(value, _types.ModuleType):
            if name in self.__dict__:  # the function is there already: it stays
                return
            value = getattr(value, name)  # the submodule's function of that name
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package
