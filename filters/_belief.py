"""What TrueSkill and Weng-Lin share: a Gaussian belief N(mu, sigma^2) per competitor with a
performance noise beta and a dynamics noise tau."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _kernels as K
from ._common import finite
from .base import Filter

#: a newcomer's belief N(MU, SIGMA^2) (TrueSkill's defaults; displayed rating mu - 3 sigma = 0)
MU = 25.0
SIGMA = MU / 3.0
#: the default performance noise is SIGMA / 2 (BETA_SHARE): a skill lead of beta wins about 76% of
#: games between certain competitors; the default dynamics noise is SIGMA / 100 (TAU_SHARE)
BETA_SHARE = 0.5
TAU_SHARE = 0.01

#: the kernels' parameters both filters share, first in their ``theta``: the performance noise,
#: the dynamics noise, the draw margin (skill units), the home advantage and whether ``tau^2``
#: is added per unit of time (1) or per game played (0)
PARAMS = ("beta", "tau", "draw_margin", "home", "per_time")
_BETA, _TAU, _EPS, _HOME, _TIME = range(len(PARAMS))
_MU, _SIGMA = 0, 1


@K.predict_kernel
def predict(x, i, theta, dt):
    """``sigma^2 += tau^2 dt`` (the random walk, with ``dynamics="time"``)."""
    if theta[_TIME] != 0.0:
        s = x[i, _SIGMA]
        x[i, _SIGMA] = math.sqrt(s * s + theta[_TAU] * theta[_TAU] * dt)


@njit(cache=True)
def prior_var(x, i, theta, scratch):
    """The variance a period's games update: ``sigma^2``, plus ``tau^2`` for each of the period's
    games with ``dynamics="game"`` (``scratch[i, 0]`` of them)."""
    s = x[i, _SIGMA]
    v = s * s
    if theta[_TIME] == 0.0:
        v += scratch[i, 0] * theta[_TAU] * theta[_TAU]
    return v


class GaussianBeliefFilter(Filter):
    """Base of filters whose state is ``(mu, sigma)`` with ``beta`` and ``tau``.

    ``dynamics="game"`` adds ``tau^2`` to each participant's variance before every game (the
    classic reading); ``dynamics="time"`` adds ``tau^2`` per unit of time (per rating period when
    the games have periods, else per ``period_days`` days). ``ratings()`` shows ``mu``,
    ``sigma`` and the conservative displayed ``rating = mu - 3 sigma``.
    """

    columns = ("mu", "sigma")
    sd_column = "sigma"
    time_unit = "period"
    _predict = predict
    rule = K.RULE_GAUSSIAN

    def _init_belief(self, label: str, mu, sigma, beta, tau, dynamics, home, period_days) -> None:
        self.mu = finite(f"{label}mu", mu)
        self.sigma = finite(f"{label}sigma", sigma, positive=True)
        self.beta = finite(f"{label}beta", self.sigma * BETA_SHARE if beta is None else beta, positive=True)
        self.tau = finite(f"{label}tau", self.sigma * TAU_SHARE if tau is None else tau, nonneg=True)
        if dynamics not in ("game", "time"):
            raise ValueError(f"{label}dynamics must be 'game' or 'time', got {dynamics!r}")
        self.dynamics = dynamics
        self.home = finite(f"{label}home", home)
        self.period_days = finite(f"{label}period_days", period_days, positive=True)

    def kernel_value(self, name: str) -> float:
        if name == "per_time":
            return float(self.dynamics == "time")
        return super().kernel_value(name)

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``beta`` in [sigma/50, 5 sigma], ``tau`` in [sigma/10^4, sigma/2], ``home`` where some game
        is not neutral, and the draw parameter where the games have draws."""
        s = self.sigma
        out = {"beta": (s / 50.0, 5.0 * s), "tau": (s * 1e-4, s / 2.0)}
        if not games.neutral.all():
            out["home"] = (-3.0 * s, 3.0 * s)
        out.update(self._draw_bounds(games))
        return out

    def _draw_bounds(self, games) -> dict[str, tuple[float, float]]:
        return {}

    def _describe_belief(self) -> list[str]:
        parts = []
        if self.dynamics != "game":
            parts.append(f"dynamics={self.dynamics!r}")
        if self.home:
            parts.append(f"home={self.home:g}")
        return parts

    def prior_row(self) -> np.ndarray:
        return np.array([self.mu, self.sigma])

    def derived_columns(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """The conservative displayed rating ``mu - 3 sigma`` (a lower bound, not the estimate)."""
        return {"rating": values[:, _MU] - 3.0 * values[:, _SIGMA]}

    @property
    def shown_columns(self) -> tuple[str, ...]:
        return ("mu", "sigma")

    def proba_1vs1(self, a, b) -> tuple[float, float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def expected_score(self, a: tuple[float, float], b: tuple[float, float]) -> float:
        """``P(a wins) + P(draw) / 2`` for beliefs ``a = (mu, sigma)`` and ``b``."""
        pw, pd, _ = self.proba_1vs1(a, b)
        return pw + 0.5 * pd
