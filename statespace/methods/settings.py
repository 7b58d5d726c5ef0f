"""The settings protocol every method shares (filters and smoothers alike): read the constructor
arguments back (:meth:`Settings.get_params`), rebuild with some changed
(:meth:`Settings.with_params`), say what :meth:`tune` may fit (:meth:`Settings.tunable`), and the
record a tuned method carries (:class:`TuneResult`), and the warnings about settings the games
speak against (:class:`BoundWarning`, :class:`DrawWarning`)."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

__all__ = ["Settings", "TuneResult", "BoundWarning", "DrawWarning"]


class BoundWarning(UserWarning):
    """A tuned setting ended on a bound of its search box (``tune``): the box, not the games,
    probably stopped it; widen ``bounds=`` (``TuneResult.on_bound`` names them)."""


class DrawWarning(UserWarning):
    """A method forecasts draws (an explicit draw probability or margin above 0) on games without
    a single draw, more than its own forecasts make plausible; leaving the setting out learns 0 from
    such games."""


#: class -> (its ``__init__``, the names of its named constructor arguments): reading a signature
#: costs about 50 microseconds, which a grid of many settings would pay once per setting
_NAMES: dict[type, tuple[Any, tuple[str, ...]]] = {}


def _constructor_names(cls: type) -> tuple[str, ...]:
    """The constructor arguments of ``cls`` that have names (not ``self``, ``*args``, ``**kwargs``),
    in order; read again if the class's ``__init__`` is replaced."""
    init = cls.__init__
    hit = _NAMES.get(cls)
    if hit is None or hit[0] is not init:
        names = tuple(name for name, p in inspect.signature(init).parameters.items()
                      if name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
        hit = _NAMES[cls] = (init, names)
    return hit[1]


def _kind_of(value) -> str | None:
    """What ``value`` is, when it is one of the project's objects rather than a setting's value."""
    from statespace.data.games import Games
    from statespace.model.skillmodel import SkillModel
    from statespace.model.observation import Observation

    kinds = ((SkillModel, "a SkillModel"), (Observation, "an observation"), (Games, "a Games table"),
             (pd.DataFrame, "a DataFrame"), (Settings, "a rating method"))
    return next((text for kind, text in kinds if isinstance(value, kind)), None)


def _check_positional(cls: type, args: tuple) -> None:
    """``TypeError`` naming the argument and what ``cls`` takes there, when a positional argument is
    a model, an observation, a table or a method where the constructor's parameter is not ``model``."""
    names = _constructor_names(cls)
    for i, value in enumerate(args):
        if i >= len(names) or names[i] == "model":
            continue
        kind = _kind_of(value)
        if kind is None:
            continue
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        takes = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        model_hint = ""
        if kind == "a SkillModel":
            model_hint = (f"; {cls.__name__} rates with its own model: a SkillModel is taken by filters.EKF(model) "
                          f"and the smoothers (e.g. smoothers.LaplaceSmoother(model))")
        raise TypeError(f"{cls.__name__} ({cls.name!r}) takes {names[i]!r} as argument {i + 1} (its settings: "
                        f"{takes}), got {kind}: {shown}{model_hint}")


class Settings:
    """Constructor arguments as the method's settings. A subclass keeps every argument on an
    attribute of the same name, or names the attribute in ``_param_aliases``."""

    name: ClassVar[str] = "method"
    #: constructor argument -> the attribute that holds it, where the names differ
    _param_aliases: ClassVar[dict[str, str]] = {}
    #: constructor arguments left out of :meth:`get_params` (deprecated spellings of others)
    _deprecated_params: ClassVar[tuple[str, ...]] = ()

    def __new__(cls, *args, **kwargs):
        """Refuse ``model=`` by name where the constructor takes none: such a method rates with its
        own win/draw/loss model, and Python's bare "unexpected keyword argument" would name neither
        the observation it cannot honour nor the methods that can. Refuse a positional argument of
        the wrong kind (a model, an observation, a games table or another method where a number
        is due) with what was passed and what the method takes there."""
        if args:
            _check_positional(cls, args)
        model = kwargs.get("model")
        if model is not None and "model" not in inspect.signature(cls.__init__).parameters:
            obs = getattr(model, "observation", None)
            honoured = ""
            if obs is not None and obs.needs_scores:
                honoured = (f"; a {type(obs).__name__} observation is honoured by filters.EKF(model=...) (covariance "
                            f"'diagonal' or 'full'), smoothers.LaplaceSmoother, smoothers.BradleyTerry, "
                            f"smoothers.RTSSmoother and smoothers.PyMCSmoother")
            raise TypeError(f"{cls.__name__} ({cls.name!r}) takes no model: it rates with its own win/draw/loss "
                            f"model, so it cannot honour model={model!r}{honoured}")
        return super().__new__(cls)

    def get_params(self) -> dict[str, Any]:
        """The constructor arguments that rebuild this method: ``type(m)(**m.get_params())``."""
        out = {}
        for name in _constructor_names(type(self)):
            if name in self._deprecated_params:
                continue
            value = getattr(self, self._param_aliases.get(name, name))
            out[name] = dict(value) if isinstance(value, dict) else value
        return out

    def param_value(self, name: str) -> float:
        """Current value of a tunable parameter."""
        return self.get_params()[name]

    def with_params(self, **changes) -> "Settings":
        """A new method with some settings changed (unknown names: ``ValueError`` listing the
        known ones)."""
        params = self.get_params()
        unknown = set(changes) - set(params)
        if unknown:
            raise ValueError(f"{self.name}: unknown settings {sorted(unknown)}; known: {sorted(params)}")
        return type(self)(**{**params, **changes})

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """Parameters :meth:`tune` fits by default, with their bounds (may depend on the games:
        a home advantage only where some game is not neutral); none unless a method says."""
        return {}


@dataclass
class TuneResult:
    """Outcome of a ``tune``: fitted ``params``, their standard errors ``se`` (NaN where the
    curvature leaves one undefined; shown as ``n/a``), the best value of the objective
    (``objective``) and its name (``objective_name``), every evaluation in ``trace`` (one row per
    setting tried), ``seconds``; ``bounds`` the search box (``{name: (low, high)}``) and
    ``on_bound`` the names of the settings that ended on a bound of it (within 0.1%, on the log
    scale for a box of positive numbers: :func:`filters.tuning.at_bound`), which the box rather
    than the games probably stopped; ``repr`` marks them."""

    params: dict
    se: dict
    objective: float
    objective_name: str
    n_games: int
    trace: pd.DataFrame
    seconds: float
    success: bool
    message: str = ""
    start: dict = field(default_factory=dict)
    bounds: dict = field(default_factory=dict)
    on_bound: tuple = ()

    def bound_of(self, name: str) -> tuple[str, float] | None:
        """``("lower" | "upper", value)`` of the bound ``name`` ended on, or ``None`` (not on a bound,
        or its box unknown)."""
        if name not in self.on_bound or name not in self.bounds:
            return None
        lo, hi = self.bounds[name]
        v = self.params[name]
        if lo > 0:  # searched on the log scale
            return ("lower", lo) if abs(math.log(v / lo)) <= abs(math.log(hi / v)) else ("upper", hi)
        return ("lower", lo) if abs(v - lo) <= abs(hi - v) else ("upper", hi)

    def describe_params(self, digits: int = 6, se: bool = True) -> str:
        """``name=value ± se`` for every fitted setting (``± n/a`` where the standard error is
        undefined, NaN), each on a bound marked ``(at upper bound 400)``; ``se=False`` leaves the
        standard errors out."""
        parts = []
        for k, v in self.params.items():
            text = f"{k}={v:.{digits}g}"
            if se and self.se:
                text += f" ± {format_se(self.se.get(k, float('nan')))}"
            bound = self.bound_of(k)
            if bound is not None:
                text += f" (at {bound[0]} bound {bound[1]:.{digits}g})"
            elif k in self.on_bound:
                text += " (at a bound)"
            parts.append(text)
        return ", ".join(parts)

    def __repr__(self) -> str:
        return (f"TuneResult({self.describe_params()}; {self.objective_name} {self.objective:.6f} on {self.n_games} "
                f"games, {len(self.trace)} evaluations, {self.seconds:.2f} s)")


def format_se(se, digits: int = 2) -> str:
    """A standard error for people: ``digits`` significant digits, ``"n/a"`` when it is undefined
    (NaN or infinite, as where the objective's curvature is not positive)."""
    try:
        value = float(se)
    except (TypeError, ValueError):
        return "n/a"
    return f"{value:.{digits}g}" if math.isfinite(value) else "n/a"
