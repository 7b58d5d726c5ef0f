"""The one latent model every method in this project approximates.

Skill of competitor i at time t is ``s_i(t)``:

- prior at first appearance: ``s_i ~ N(prior_mean, prior_var)``;
- dynamics, a Gaussian random walk: ``s_i(t + dt) = s_i(t) + N(0, drift * dt)``;
  (or, with ``reversion > 0``, an Ornstein-Uhlenbeck process towards ``prior_mean``);
- observation of a game a vs b: with ``d = s_a - s_b + home * [a at home]``,
  ``P(a beats b) = F(d / scale)``, F the logistic function (Bradley-Terry) or the
  standard normal cdf (Thurstone-Mosteller), plus a draw model; the home advantage is a fixed
  number, or (``home_drift > 0``) a latent random walk of its own, shared by all competitors.

``SkillModel`` holds exactly these numbers and knows nothing about inference methods
(filters and smoothers read it; it never reads them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

import numpy as np

from . import _numeric as nx

__all__ = ["SkillModel", "NoDraw", "HalfWin", "Threshold", "Davidson", "DrawModel", "ELO_SCALE"]

#: The Elo/Glicko scale: 400 / ln 10 = 173.7178 rating points per logistic unit, so that
#: a 400-point lead means odds of 10 to 1.
ELO_SCALE = 400.0 / math.log(10.0)


@dataclass(frozen=True)
class NoDraw:
    """No draws: the model gives P(draw) = 0 and an observed draw has no likelihood."""

    code = nx.DRAW_NONE
    theta = 0.0


@dataclass(frozen=True)
class HalfWin:
    """Draws scored as half a win and half a loss (what Elo and Glicko do).

    The forecast is (F, 0, 1 - F); an observed draw contributes
    ``0.5 log F + 0.5 log(1 - F)`` to the log-likelihood.
    """

    code = nx.DRAW_HALF
    theta = 0.0


@dataclass(frozen=True)
class Threshold:
    """Ordered logit/probit: a draw when the performance difference is within ``margin``.

    ``P(win) = F((d - margin) / scale)``, ``P(loss) = F((-d - margin) / scale)``, draw the
    rest. ``margin`` is in skill units (TrueSkill's epsilon; see Herbrich et al. 2006).
    """

    margin: float = 0.0

    code = nx.DRAW_THRESHOLD

    def __post_init__(self) -> None:
        if not (np.isfinite(self.margin) and self.margin >= 0):
            raise ValueError(f"Threshold margin must be finite and >= 0, got {self.margin!r}")

    @property
    def theta(self) -> float:
        return float(self.margin)


@dataclass(frozen=True)
class Davidson:
    """Davidson's (1970) draw model: ``P(draw)`` proportional to ``nu * sqrt(pi_a pi_b)``.

    With ``p = F(d / scale)``: win ``p / D``, loss ``(1 - p) / D``, draw
    ``nu sqrt(p (1 - p)) / D``, ``D = 1 + nu sqrt(p (1 - p))``. At d = 0 the draw probability
    is ``nu / (2 + nu)``.
    """

    nu: float = 0.0

    code = nx.DRAW_DAVIDSON

    def __post_init__(self) -> None:
        if not (np.isfinite(self.nu) and self.nu >= 0):
            raise ValueError(f"Davidson nu must be finite and >= 0, got {self.nu!r}")

    @property
    def theta(self) -> float:
        return float(self.nu)


DrawModel = Union[NoDraw, HalfWin, Threshold, Davidson]

_DRAW_NAMES = {"none": NoDraw, "half": HalfWin, "threshold": Threshold, "davidson": Davidson}


def _as_draw(draw: object) -> DrawModel:
    if isinstance(draw, (NoDraw, HalfWin, Threshold, Davidson)):
        return draw
    if isinstance(draw, str) and draw in _DRAW_NAMES:
        return _DRAW_NAMES[draw]()
    if isinstance(draw, tuple) and len(draw) == 2 and draw[0] in ("threshold", "davidson"):
        return _DRAW_NAMES[draw[0]](float(draw[1]))
    raise ValueError(
        f"draw must be 'none', 'half', 'threshold', 'davidson', a (name, parameter) tuple "
        f"or a draw-model instance, got {draw!r}"
    )


@dataclass(frozen=True)
class SkillModel:
    """The shared random-walk skill model (see the module docstring).

    Parameters
    ----------
    link:
        ``"logistic"`` (Bradley-Terry; Elo, Glicko) or ``"probit"`` (Thurstone-Mosteller;
        TrueSkill).
    scale:
        Skill difference that counts as one unit of the link. Elo and Glicko use
        ``400 / ln 10 = 173.72`` (a 400-point lead gives 10:1 odds); TrueSkill uses
        ``sqrt(2) * beta``.
    prior_mean, prior_var:
        Skill of a newcomer, ``N(prior_mean, prior_var)``.
    drift:
        Variance added to each skill per unit of time (a day, a rating period or a game,
        whatever the method counts time in). 0 means static skills.
    draw:
        ``"none"``, ``"half"``, ``("threshold", margin)``, ``("davidson", nu)`` or an instance of
        :class:`NoDraw`, :class:`HalfWin`, :class:`Threshold`, :class:`Davidson`.
    home:
        Skill added to ``a`` when ``a`` plays at home (a game not flagged neutral).
    reversion:
        Mean reversion per unit of time (0: a pure random walk). With ``lambda > 0`` skills follow
        an Ornstein-Uhlenbeck process towards ``prior_mean`` (see :meth:`predict`): how season
        regression (e.g. FiveThirtyEight's NFL Elo regressing a third towards the mean between
        seasons) appears in a continuous-time model.
    home_drift:
        Variance added per unit of time to the home advantage (0: the home advantage is the fixed
        number ``home``). With ``home_drift > 0`` the home advantage is one more latent state,
        shared by all competitors: it starts at ``home`` at the first game (known exactly) and
        follows its own Gaussian random walk, ``h(t + dt) = h(t) + N(0, home_drift * dt)``, so
        that a league whose home advantage shrinks over the decades is described by the model.
        The EKF tracks it (diagonal covariance) and :func:`statespace.simulate` draws it; the
        Laplace smoother refuses it.

    Skill uncertainty in forecasts
    ------------------------------
    :meth:`proba` takes the mean ``diff`` and the variance ``var`` of the skill difference and
    integrates the Gaussian uncertainty out. For the probit link this is exact:
    ``E[Phi(x / s)] = Phi(m / sqrt(s^2 + v))``. For the logistic link there is no closed form;
    we use Glickman's approximation ``E[logistic(x / s)] ~ logistic(m / sqrt(s^2 + 3 v / pi^2))``
    (the factor ``g(RD)`` of Glicko, Glickman 1999, eq. 3), accurate to about 0.01 in
    probability for ``v <= s^2``. The same effective scale is used inside the draw models.
    """

    link: str = "logistic"
    scale: float = 1.0
    prior_mean: float = 0.0
    prior_var: float = 1.0
    drift: float = 0.0
    draw: DrawModel | str | tuple = field(default="none")
    home: float = 0.0
    reversion: float = 0.0
    home_drift: float = 0.0

    def __post_init__(self) -> None:
        if self.link not in nx.LINKS:
            raise ValueError(f"link must be 'logistic' or 'probit', got {self.link!r}")
        for name in ("scale", "prior_mean", "prior_var", "drift", "home", "reversion", "home_drift"):
            value = getattr(self, name)
            if not isinstance(value, (int, float, np.floating, np.integer)) or not np.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.scale <= 0:
            raise ValueError(f"scale must be > 0, got {self.scale!r}")
        if self.prior_var < 0:
            raise ValueError(f"prior_var must be >= 0, got {self.prior_var!r}")
        if self.drift < 0:
            raise ValueError(f"drift must be >= 0, got {self.drift!r}")
        if self.reversion < 0:
            raise ValueError(f"reversion must be >= 0, got {self.reversion!r}")
        if self.home_drift < 0:
            raise ValueError(f"home_drift must be >= 0, got {self.home_drift!r}")
        object.__setattr__(self, "draw", _as_draw(self.draw))

    # codes that cross into compiled kernels
    @property
    def link_code(self) -> int:
        return nx.LINKS.index(self.link)

    @property
    def draw_code(self) -> int:
        return self.draw.code

    def effective_scale(self, var: np.ndarray | float = 0.0) -> np.ndarray:
        """Scale after integrating a skill-difference variance ``var`` (see class docstring)."""
        var = np.asarray(var, dtype=float)
        if np.any(var < 0):
            raise ValueError("variance of the skill difference must be >= 0")
        k = nx.LOGISTIC_VAR_FACTOR if self.link == "logistic" else 1.0
        return np.sqrt(self.scale**2 + k * var)

    def proba(self, diff: np.ndarray | float, var: np.ndarray | float = 0.0) -> np.ndarray:
        """Win/draw/loss probabilities of ``a`` for a skill difference ``diff = s_a - s_b (+ home)``.

        ``diff`` is the mean and ``var`` the variance of the difference; returns an array of
        shape ``diff.shape + (3,)`` whose last axis sums to 1.
        """
        diff = np.asarray(diff, dtype=float)
        s = np.broadcast_to(self.effective_scale(var), diff.shape)
        flat = nx.outcome_proba_array(self.link_code, self.draw_code, self.draw.theta,
                                      np.ascontiguousarray(diff.reshape(-1)), np.ascontiguousarray(s.reshape(-1)))
        return flat.reshape(diff.shape + (3,))

    def expected_score(self, diff: np.ndarray | float, var: np.ndarray | float = 0.0) -> np.ndarray:
        """``P(win) + P(draw) / 2``."""
        p = self.proba(diff, var)
        return p[..., 0] + 0.5 * p[..., 1]

    def loglik(self, score: np.ndarray | float, diff: np.ndarray | float,
               var: np.ndarray | float = 0.0) -> np.ndarray:
        """Log-likelihood of each observed ``score`` (1, 0.5, 0 for a's win, draw, loss).

        Under ``"half"`` a draw counts as half a win and half a loss; under ``"none"`` a draw
        is impossible and raises ``ValueError``.
        """
        score = np.asarray(score, dtype=float)
        p = self.proba(diff, var)
        score, p0, p1, p2 = np.broadcast_arrays(score, p[..., 0], p[..., 1], p[..., 2])
        tiny = np.finfo(float).tiny
        if self.draw_code in (nx.DRAW_NONE, nx.DRAW_HALF):
            if self.draw_code == nx.DRAW_NONE and np.any(score == 0.5):
                raise ValueError("a draw has no likelihood under draw model 'none'; use 'half', "
                                 "'threshold' or 'davidson'")
            return score * np.log(np.maximum(p0, tiny)) + (1 - score) * np.log(np.maximum(p2, tiny))
        chosen = np.where(score == 1.0, p0, np.where(score == 0.0, p2, p1))
        return np.log(np.maximum(chosen, tiny))

    def loglik_derivs(self, score, diff) -> tuple[np.ndarray, np.ndarray]:
        """First and second derivatives of :meth:`loglik` (no skill uncertainty) with respect to
        the skill difference ``diff``: the gradient and curvature an extended Kalman filter
        linearises with (see ``statespace._numeric.loglik_derivs`` for the formulas)."""
        score, diff = np.broadcast_arrays(np.asarray(score, dtype=float), np.asarray(diff, dtype=float))
        if self.draw_code == nx.DRAW_NONE and np.any(score == 0.5):
            raise ValueError("a draw has no likelihood under draw model 'none'")
        g, h = nx.loglik_derivs_array(self.link_code, self.draw_code, self.draw.theta,
                                      np.ascontiguousarray(score.reshape(-1)), np.ascontiguousarray(diff.reshape(-1)),
                                      self.scale)
        return g.reshape(score.shape), h.reshape(score.shape)

    def predict_var(self, var: np.ndarray | float, dt: np.ndarray | float) -> np.ndarray:
        """Variance of a skill after ``dt`` units of time: ``var + drift * dt`` (see
        :meth:`predict` for the mean-reverting case)."""
        return self.predict(self.prior_mean, var, dt)[1]

    def transition(self, dt) -> tuple[np.ndarray, np.ndarray]:
        """The skill's transition over ``dt`` units of time, ``(a, v)``:
        ``s(t + dt) | s(t) ~ N(prior_mean + a (s(t) - prior_mean), v)``.

        Random walk (``reversion = 0``): ``a = 1``, ``v = q dt``. Ornstein-Uhlenbeck
        (``reversion = lambda > 0``): ``a = exp(-lambda dt)``, ``v = q (1 - a^2) / (2 lambda)``
        (which tends to ``q dt`` as ``lambda -> 0``). :meth:`predict` applies it to a Gaussian;
        a whole-history smoother uses it as the prior between a competitor's consecutive nodes.
        """
        dt = np.asarray(dt, dtype=float)
        if self.reversion == 0:
            return np.ones_like(dt), self.drift * dt
        return (np.exp(-self.reversion * dt),
                self.drift * (-np.expm1(-2.0 * self.reversion * dt)) / (2.0 * self.reversion))

    def predict(self, mean, var, dt) -> tuple[np.ndarray, np.ndarray]:
        """Mean and variance of a skill after ``dt`` units of time.

        Random walk (``reversion = 0``): ``(m, v + q dt)``. With ``reversion = lambda > 0`` the
        dynamics are an Ornstein-Uhlenbeck process pulled towards ``prior_mean`` (the Kalman
        form is kept): with ``a = exp(-lambda dt)`` (see :meth:`transition`),
        ``m <- prior_mean + a (m - prior_mean)``, ``v <- a^2 v + q (1 - a^2) / (2 lambda)``, so
        long breaks (an off-season) regress ratings towards the mean while short ones barely do.
        """
        mean = np.asarray(mean, dtype=float)
        var = np.asarray(var, dtype=float)
        dt = np.asarray(dt, dtype=float)
        if self.reversion == 0:
            return mean + 0.0 * dt, var + self.drift * dt
        a, v = self.transition(dt)
        return self.prior_mean + a * (mean - self.prior_mean), a * a * var + v

    def diff(self, mean_a, mean_b, at_home=False) -> np.ndarray:
        """Mean skill difference ``s_a - s_b + home * at_home`` (with ``home_drift > 0``, ``home``
        is the home advantage's starting value)."""
        return np.asarray(mean_a, float) - np.asarray(mean_b, float) + self.home * np.asarray(at_home, float)
