"""What TrueSkill and Weng-Lin share: a Gaussian belief N(mu, sigma^2) per competitor with a
performance noise beta and a dynamics noise tau."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _checks as C
from . import kernels as K
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
    """``sigma^2 += tau^2 dt`` (the random walk, with ``dynamics="time"``), kept at most ``VAR_MAX``
    (a long idle time would overflow it)."""
    if theta[_TIME] != 0.0:
        s = x[i, _SIGMA]
        x[i, _SIGMA] = math.sqrt(min(s * s + theta[_TAU] * theta[_TAU] * dt, K.VAR_MAX))


@njit(cache=True)
def prior_var(x, i, theta, scratch):
    """The variance a period's games update: ``sigma^2``, plus ``tau^2`` for each of the period's
    games with ``dynamics="game"`` (``scratch[i, 0]`` of them); kept at most ``VAR_MAX`` (a big
    tau's many games overflow; it is at least ``VAR_MIN``, as every sigma of the state is at
    least ``SD_MIN``)."""
    s = x[i, _SIGMA]
    v = s * s
    if theta[_TIME] == 0.0:
        v += scratch[i, 0] * theta[_TAU] * theta[_TAU]
    return min(v, K.VAR_MAX)


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

    def _init_belief(self, owner: str, mu, sigma, beta, tau, dynamics, home, period_days) -> None:
        r"""The shared settings, each checked against its accepted range (:mod:`statespace.model.ranges`) in
        units of the scale :math:`\alpha = \sqrt 2 \beta`: :math:`\alpha` in :math:`[10^{-100}, 10^{100}]`
        (``sigma / 2`` when not given), ``sigma`` in :math:`(0, 10^3\alpha]`, ``tau`` in
        :math:`[0, 10^3\alpha]`, ``mu`` within :math:`\pm 10^6\alpha`, ``home`` within :math:`\pm 10\alpha`; ``period_days`` any
        finite number > 0."""
        if beta is None:  # beta defaults to sigma's share, so sigma's range is the scale's over that share
            beta = C.number(owner, "sigma", sigma, C.R.SCALE_MIN / (math.sqrt(2.0) * BETA_SHARE),
                            C.R.SCALE_MAX / (math.sqrt(2.0) * BETA_SHARE),
                            unit=f" (beta, a scale, defaults to sigma * {BETA_SHARE:.6g})") * BETA_SHARE
        # sqrt(2) beta is the model's scale: within statespace.model.ranges' range of scales
        self.beta = C.number(owner, "beta", beta, C.R.SCALE_MIN / math.sqrt(2.0), C.R.SCALE_MAX / math.sqrt(2.0),
                             unit=" (sqrt(2) beta is the scale)")
        alpha = math.sqrt(2.0) * self.beta
        self.sigma = C.length(owner, "sigma", sigma, alpha)
        self.mu = C.location(owner, "mu", mu, alpha)
        self.tau = C.length(owner, "tau", self.sigma * TAU_SHARE if tau is None else tau, alpha, zero=True)
        if dynamics not in ("game", "time"):
            raise ValueError(f"{owner}: dynamics must be 'game' or 'time', got {dynamics!r}")
        self.dynamics = dynamics
        self.home = C.home(owner, home, alpha)
        self.period_days = C.number(owner, "period_days", period_days, 0.0, lo_open=True)

    def kernel_value(self, name: str) -> float:
        """``per_time`` is 1 with ``dynamics="time"``; ``beta`` is :attr:`beta_kernel`."""
        if name == "per_time":
            return float(self.dynamics == "time")
        if name == "beta":
            return self.beta_kernel
        return super().kernel_value(name)

    @property
    def beta_kernel(self) -> float:
        """The ``beta`` the kernels use: a ``beta`` below ``SD_MIN`` = 1e-150 acts as 1e-150, so that
        ``c^2 = 2 beta^2 + sigma_a^2 + sigma_b^2`` is never 0 (its square would underflow)."""
        return max(self.beta, C.SD_MIN)

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
        """A newcomer's ``(mu, sigma)``; a sigma below ``SD_MIN`` = 1e-150 acts as 1e-150 (its square
        would underflow to 0)."""
        return np.array([self.mu, max(self.sigma, C.SD_MIN)])

    def initial_row(self, value) -> np.ndarray:
        r"""A starting ``(mu, sigma)`` within the settings' ranges (in scales :math:`\alpha = \sqrt 2 \beta`):
        ``mu`` within :math:`\pm 10^6\alpha`, sigma in :math:`(0, 10^3\alpha]` (below 1e-150 it acts as 1e-150)."""
        row = super().initial_row(value)
        alpha = math.sqrt(2.0) * self.beta
        C.location(self.name, "initial mu", row[_MU], alpha)
        row[_SIGMA] = max(C.length(self.name, "initial sigma", row[_SIGMA], alpha), C.SD_MIN)
        return row

    def derived_columns(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """The conservative displayed rating ``mu - 3 sigma`` (a lower bound, not the estimate)."""
        return {"rating": values[:, _MU] - 3.0 * values[:, _SIGMA]}

    @property
    def shown_columns(self) -> tuple[str, ...]:
        return ("mu", "sigma")

    def proba_1vs1(self, a, b) -> tuple[float, float, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _rate_pair(self, owner: str, a, b, posterior):
        r"""``rate_1vs1``'s new ``((mu, sigma), (mu, sigma))`` of ``a`` and ``b``: both variances widened
        by :math:`\tau^2` first, as ``rate`` does, then ``posterior(mu_a, var_a, mu_b, var_b) ->
        (mu_a', var_a', mu_b', var_b')``, kept within the guards of :mod:`filters.kernels`."""
        (a,), (b,) = C.parse_teams(owner, [[a], [b]])[0]
        t2 = self.tau**2
        ma, va, mb, vb = posterior(a[0], K.clamp_var(a[1] ** 2 + t2), b[0], K.clamp_var(b[1] ** 2 + t2))
        return ((K.clamp_mean(ma), math.sqrt(K.clamp_var(va))), (K.clamp_mean(mb), math.sqrt(K.clamp_var(vb))))

    def expected_score(self, a: tuple[float, float], b: tuple[float, float]) -> float:
        """``P(a wins) + P(draw) / 2`` for beliefs ``a = (mu, sigma)`` and ``b``."""
        pw, pd, _ = self.proba_1vs1(a, b)
        return pw + 0.5 * pd
