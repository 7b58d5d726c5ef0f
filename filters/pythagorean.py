r"""Pythagorean expectation (Bill James) as a filter.

B. James, *The Bill James Baseball Abstract* (1980s): a team that scored :math:`PF` points and
allowed :math:`PA` wins a share

.. math::

    W = \frac{PF^x}{PF^x + PA^x}

of its games (:math:`x = 2` for baseball in James's form; about 2.37 for the NFL, A. Schatz,
"Pythagoras on the Gridiron", Football Outsiders 2003; S. J. Miller, "A derivation of the
Pythagorean won-loss formula in baseball", Chance 20(1), 2007, derives it from Weibull-distributed
scores). Two teams meet by James's log5:
:math:`P(a \text{ beats } b) = \frac{W_a (1 - W_b)}{W_a (1 - W_b) + W_b (1 - W_a)}`. Since
:math:`W / (1 - W) = (PF / PA)^x`, log5 is exactly

.. math::

    \operatorname{logit} P(a \text{ beats } b) = x \left(\log \frac{PF_a}{PA_a} - \log \frac{PF_b}{PA_b}\right),

a Bradley-Terry model whose rating is :math:`r = x \log(PF / PA)` on the logistic scale
:math:`\alpha = 1`.

Place in the state-space view: the state is each competitor's two running sums, and the
rating is read off them; nothing about the opponent enters the update (no strength of schedule),
so it is not a filter of the skill model's likelihood but a moment estimate: scoring rates stand
in for the skill. The time update discounts both sums by :math:`2^{-\Delta t / t_{1/2}}` for a
half-life :math:`t_{1/2}` (the classic form has no discount, ``half_life=None``), so that the
rating follows a changing strength, as a random walk's drift does (default 180 days). A
pseudo-count :math:`c` (``prior_points``) on both sums,

.. math::

    r = x \log \frac{PF + c}{PA + c},

gives a newcomer rating 0 and no division by zero. Forecasts go through the model's observation
kernels (logistic link, scale 1, its draw model); the update reads the points (``score_a``,
``score_b``), never the forecast. :math:`x`, :math:`c` and the half-life are fitted on training
games by :meth:`~filters.base.Filter.tune`.
"""

from __future__ import annotations

import math

import numpy as np

from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel

from . import _checks as C
from . import kernels as K
from ._point import PointRatingFilter, proba as _proba

__all__ = ["Pythagorean"]

#: Football Outsiders' NFL exponent (James's baseball exponent is 2)
EXPONENT = 2.37
#: points added to both sums: about a sixth of an NFL game's, so a first game is not a certainty
PRIOR_POINTS = 4.0
#: days over which past points count half: last season's points count about a quarter by the next.
#: What ``tune`` chooses on the first 90% of the NFL games (from starts at 60 and 365 days alike)
HALF_LIFE = 180.0
#: the tuner's upper bound on the half-life; an untuned method without a half-life starts there
HALF_LIFE_MAX = 36500.0

#: the kernels' parameters, in ``theta`` order (``home`` first, as :func:`filters._point.proba` reads it)
PARAMS = ("home", "exponent", "prior_points", "decay")
_HOME, _X, _C, _DECAY = range(len(PARAMS))
_RATING, _PF, _PA = 0, 1, 2


@K.predict_kernel
def _predict(x, i, theta, dt):
    """Both sums times ``2^(-dt / half_life)`` (``decay = ln 2 / half_life``, 0: no discount)."""
    if theta[_DECAY] > 0.0:
        f = math.exp(-theta[_DECAY] * dt)
        x[i, _PF] *= f
        x[i, _PA] *= f
        x[i, _RATING] = theta[_X] * math.log((x[i, _PF] + theta[_C]) / (x[i, _PA] + theta[_C]))


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """The game's points: ``a`` scored ``score_a`` and allowed ``score_b``, ``b`` the reverse."""
    p = _proba(forecast, obs, x, a, b, at_home, theta)
    scratch[a, 1] += score_a
    scratch[a, 2] += score_b
    scratch[b, 1] += score_b
    scratch[b, 2] += score_a
    return p


@K.apply_kernel
def _apply(x, count, theta, i, scratch):
    """``PF += points for``, ``PA += points against``, ``r = x log((PF + c) / (PA + c))``."""
    x[i, _PF] += scratch[i, 1]
    x[i, _PA] += scratch[i, 2]
    x[i, _RATING] = theta[_X] * math.log((x[i, _PF] + theta[_C]) / (x[i, _PA] + theta[_C]))


class Pythagorean(PointRatingFilter):
    """Pythagorean expectation with log5 (see the module docstring).

    Parameters
    ----------
    exponent:
        :math:`x` (2.37, the NFL's; 2 for baseball). In ``[0.01, 100]``.
    prior_points:
        :math:`c`, added to both sums (4 points). In ``[1e-6, 1e12]``.
    half_life:
        Time (days for dated games, else the games' time unit) over which past points count half
        (180); ``None``: no discount, James's running totals. In ``[1e-6, 1e12]``.
    home:
        Logits added to ``a``'s rating when it plays at home (0; ``|home| <= 1e300``).
    draw:
        The model's draw model (``"half"``; or ``("davidson", nu)``, ``("threshold", margin)``
        in logits).

    The games must have ``score_a`` and ``score_b`` (each side's points).
    """

    name = "pythagorean"
    columns = ("rating", "points_for", "points_against")
    time_unit = "day"
    params = PARAMS
    _predict = _predict
    _proba = _proba
    _site = _site
    _apply = _apply
    rule = K.RULE_CUSTOM
    #: it rates from each side's points (``score_a``, ``score_b``), which the games must have
    needs_scores = True

    def __init__(self, exponent: float = EXPONENT, *, prior_points: float = PRIOR_POINTS,
                 half_life: float | None = HALF_LIFE, home: float = 0.0, draw="half"):
        self.exponent = C.number("Pythagorean", "exponent", exponent, 0.01, 100.0)
        self.prior_points = C.number("Pythagorean", "prior_points", prior_points, 1e-6, 1e12)
        self.half_life = None if half_life is None else C.number("Pythagorean", "half_life", half_life, 1e-6,
                                                                 1e12)
        self.home = C.home("Pythagorean", home, 1.0)  # the scale is 1: logits
        self._set_draw("Pythagorean", draw)

    def _describe(self) -> str:
        out = f"exponent={self.exponent:g}, prior_points={self.prior_points:g}"
        if self.half_life is not None:
            out += f", half_life={self.half_life:g}"
        return out + (f", home={self.home:g}" if self.home else "")

    def kernel_value(self, name: str) -> float:
        if name == "decay":
            return 0.0 if self.half_life is None else math.log(2.0) / self.half_life
        return super().kernel_value(name)

    def param_value(self, name: str) -> float:
        """As :meth:`Settings.param_value`; no half-life starts the tuner at its upper bound."""
        if name == "half_life" and self.half_life is None:
            return HALF_LIFE_MAX
        return super().param_value(name)

    @property
    def model(self) -> SkillModel:
        """Logistic link at scale 1 (the rating is a logit), the chosen draw model, no drift."""
        return SkillModel(link="logistic", scale=1.0, prior_mean=0.0, prior_var=0.0, drift=0.0, draw=self.draw,
                          home=self.home)

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``exponent`` in [0.2, 30], ``prior_points`` in [0.01, 1000], ``half_life`` in [7, 36500]
        and ``home`` in [-3, 3] where some game is not neutral."""
        out = {"exponent": (0.2, 30.0), "prior_points": (0.01, 1000.0), "half_life": (7.0, HALF_LIFE_MAX)}
        if not games.neutral.all():
            out["home"] = (-3.0, 3.0)
        return out

    def check_games(self, games: Games) -> None:
        """The points are this method's data: games without ``score_a`` and ``score_b``, or with
        negative or non-finite ones, are a ``ValueError`` naming the columns (and rows)."""
        super().check_games(games)
        if not games.has_scores:
            raise ValueError("pythagorean rates from each side's points: the games have no 'score_a' and "
                             "'score_b' columns (give them to Games.from_frame / from_arrays, or choose a method "
                             "that rates results only)")
        bad = ~(np.isfinite(games.score_a) & np.isfinite(games.score_b) & (games.score_a >= 0)
                & (games.score_b >= 0))
        if bad.any():
            rows = np.flatnonzero(bad)[:5].tolist()
            raise ValueError(f"pythagorean: columns 'score_a' and 'score_b' must be finite points >= 0; rows {rows} "
                             f"are not")

    def prior_row(self) -> np.ndarray:
        return np.array([0.0, 0.0, 0.0])

    def initial_row(self, value) -> np.ndarray:
        """``initial={name: (points_for, points_against)}`` (or a mapping of the two); the rating is
        computed from them."""
        if isinstance(value, (tuple, list, np.ndarray)) and len(value) == 2:
            value = (0.0, *value)
        row = super().initial_row(value)
        if not (row[_PF] >= 0 and row[_PA] >= 0):
            raise ValueError(f"{self.name}: initial points_for and points_against must be >= 0, got {value!r}")
        row[_RATING] = self.exponent * math.log((row[_PF] + self.prior_points) / (row[_PA] + self.prior_points))
        return row


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find it.
METHODS = {"pythagorean": Pythagorean}
#: the default comparison's simulated games carry no points
METHODS_NOT_BY_DEFAULT = {"pythagorean"}
