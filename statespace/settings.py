"""The settings protocol every method shares (filters and smoothers alike): read the constructor
arguments back (:meth:`Settings.get_params`), rebuild with some changed
(:meth:`Settings.with_params`), say what :meth:`tune` may fit (:meth:`Settings.tunable`), and the
record a tuned method carries (:class:`TuneResult`)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

__all__ = ["Settings", "TuneResult"]


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
        the observation it cannot honour nor the methods that can."""
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
        for name, p in inspect.signature(type(self).__init__).parameters.items():
            if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or name in self._deprecated_params:
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
    """Outcome of a ``tune``: fitted ``params``, their standard errors ``se``, the best value of
    the objective (``objective``) and its name (``objective_name``), every evaluation in
    ``trace`` (one row per setting tried), ``seconds``."""

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

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v:.6g} ± {self.se.get(k, float('nan')):.2g}" for k, v in self.params.items())
        return (f"TuneResult({shown}; {self.objective_name} {self.objective:.6f} on {self.n_games} games, "
                f"{len(self.trace)} evaluations, {self.seconds:.2f} s)")
