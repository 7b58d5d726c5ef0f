"""The declared interfaces of a rating method and of its fitted result.

Every filter (:class:`filters.base.Filter`) and every smoother (:mod:`smoothers`) has one face, so
that :func:`statespace.compare`, :mod:`statespace.methods.plots` and the command line need no special
cases::

    fitted = method.fit(train)          # Method.fit -> Fitted
    p = fitted.predict_proba(test)      # (n, 3): P(a wins), P(draw), P(b wins), test's row order
    fitted.ratings()                    # DataFrame: player, mean, sd (if tracked), games, ...
    fitted.trajectories()               # long DataFrame: time, player, mean, sd (if tracked), ...

These are :class:`typing.Protocol` classes: a method satisfies them by having the members, not by
inheriting from them, so a third-party method (see :mod:`statespace.methods.registry`) needs no import
from this package. The layers:

- :class:`Forecaster`: the least :func:`~statespace.compare` scores: ``fit(games)`` returning a
  :class:`Forecast` (``predict_proba``). :class:`statespace.FixedForecast` and test oracles are
  forecasters without being full methods.
- :class:`Method`: what every filter and smoother shares today: ``name``, ``model`` (the
  :class:`~statespace.SkillModel` it assumes, in its own units) and ``fit(games) -> Fitted``.
- :class:`Configurable`: ``get_params()`` and ``with_params(**changes)`` (every filter; the
  smoothers once they share the filters' parameter protocol).
- :class:`OnlineMethod`: a method that also filters: ``run(games)`` returns a :class:`Run`
  whose ``proba`` holds every game's one-step-ahead forecast (made before its own update).
- :class:`TunableMethod`: ``tunable(games)`` and ``tune(games, ...)``, which returns a new method
  carrying ``tuning`` (a :class:`filters.tuning.TuneResult`).
- :class:`Fitted`: ``method``, ``games``, ``predict_proba``, ``ratings``, ``trajectories``
  (:class:`filters.base.FilterRun`, :class:`smoothers.base.SmootherFit`).

Where behaviour differs (``compare``'s online and walk-forward modes, the CLI's default method
list in online mode) the code asks :func:`is_online`, which reads the class attribute
``online: ClassVar[bool]`` when the method's class declares it and otherwise whether the
method satisfies :class:`Online` (has ``run``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Protocol, runtime_checkable

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from statespace.data.games import Games
    from statespace.model.skillmodel import SkillModel

__all__ = ["Forecast", "Forecaster", "Fitted", "Run", "Online", "Method", "Configurable", "OnlineMethod",
           "TunableMethod", "is_online", "is_tunable"]


@runtime_checkable
class Forecast(Protocol):
    """Anything that forecasts games: ``predict_proba(games)`` -> ``(n, 3)`` win/draw/loss
    probabilities aligned with ``games``' rows."""

    def predict_proba(self, games: Games) -> np.ndarray: ...


@runtime_checkable
class Fitted(Forecast, Protocol):
    """A fitted method: ``method.fit(games)``.

    - ``method``: the method that was fitted; ``games``: the games it was fitted on;
    - ``predict_proba(games)``: frozen forecasts ``(n, 3)`` (nothing learnt from ``games``);
    - ``ratings()``: leaderboard ``player, mean, [sd], games, ...``, best first, in the method's
      units;
    - ``trajectories()``: long table ``time, player, mean, [sd], ...`` for plots.
    """

    method: Any
    games: Games

    def ratings(self) -> pd.DataFrame: ...

    def trajectories(self) -> pd.DataFrame: ...


@runtime_checkable
class Forecaster(Protocol):
    """The least :func:`statespace.compare` scores: ``fit(games)`` returns a :class:`Forecast`."""

    def fit(self, games: Games) -> Forecast: ...


@runtime_checkable
class Method(Forecaster, Protocol):
    """A rating method: every filter and every smoother.

    ``name``: short name (the registry's and ``compare``'s default label); ``model``: the
    :class:`~statespace.SkillModel` it assumes, in its own units; ``fit(games)``: the fitted
    :class:`Fitted`.
    """

    name: str

    @property
    def model(self) -> SkillModel: ...

    def fit(self, games: Games) -> Fitted: ...


@runtime_checkable
class Configurable(Protocol):
    """Settings as constructor arguments: ``get_params()`` rebuilds the method,
    ``with_params(**changes)`` returns a new method with some of them changed."""

    def get_params(self) -> dict[str, Any]: ...

    def with_params(self, **changes: Any) -> Configurable: ...


@runtime_checkable
class Run(Protocol):
    """A filter's pass through a table of games: ``proba`` holds each game's forecast made
    before its own update (one step ahead), aligned with the input rows."""

    proba: np.ndarray


@runtime_checkable
class Online(Protocol):
    """Has the filtering view: ``run(games)`` -> :class:`Run`."""

    def run(self, games: Games) -> Run: ...


@runtime_checkable
class OnlineMethod(Method, Online, Protocol):
    """A method that filters (learns game by game): every filter. A class may state it with
    ``online: ClassVar[bool] = True`` (read by :func:`is_online`)."""


@runtime_checkable
class TunableMethod(Protocol):
    """A method whose settings can be fitted to games.

    ``tunable(games)``: ``{parameter: (low, high)}`` fitted by default (may be empty for these
    games); ``tune(games, ...)``: a new method with fitted settings, carrying ``tuning`` (a
    :class:`filters.tuning.TuneResult`: ``params``, ``se``, ``objective_name``, ``seconds``...).
    """

    def tunable(self, games: Games) -> Mapping[str, tuple[float, float]]: ...

    def tune(self, games: Games, *args: Any, **kwargs: Any) -> Any: ...


def is_online(method: Any) -> bool:
    """Whether ``method`` learns game by game (``compare`` then uses ``method.run``).

    The class attribute ``online`` (a bool) decides when the class declares it; otherwise a
    method is online when it satisfies :class:`Online` (has ``run``), as methods written before
    the flag existed (and :class:`statespace.FixedForecast`) do.
    """
    flag = getattr(type(method), "online", None)
    if isinstance(flag, bool):
        return flag
    return isinstance(method, Online)


def is_tunable(method: Any, games: Games) -> bool:
    """Whether ``compare(..., tune=True)`` tunes ``method`` on ``games``: it satisfies
    :class:`TunableMethod` and has something to tune there."""
    return isinstance(method, TunableMethod) and bool(method.tunable(games))
