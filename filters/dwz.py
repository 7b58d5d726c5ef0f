r"""The Deutsche Wertungszahl (DWZ) of the German Chess Federation (DSB).

Deutscher Schachbund, "Wertungsordnung" (schachbund.de): 3.3.1 (the expected score), 3.5.2 (the
new rating) and Anhang 1.2 (the development coefficient), with the same bounds stated in
Anhang 2.4. For a player rated :math:`R_o` with index :math:`i` (the number of evaluations so
far) who scores :math:`W` in :math:`n` games of one tournament (a rating period):

- expected score of a game, a normal distribution of the rating difference :math:`D` with
  standard deviation :math:`200 \sqrt{2}` (each player's performance varies by 200 points,
  3.3.1): :math:`P(D) = \Phi\bigl(D / (200 \sqrt{2})\bigr)`; :math:`W_e = \sum_j P(D_j)` (3.3.2).
  Anhang 2.1 gives the logistic :math:`1 / (1 + 10^{-D / 400})` as an approximation for rough
  calculations (``expectation="logistic"``);
- :math:`E_0 = (R_o / 1000)^4 + J`, :math:`J = 5` (youths up to 20), 10 (21 to 25), 15 (older);
- :math:`f_B = R_o / 2000` within :math:`[0.5, 1]` for youths with :math:`W \ge W_e`, else 1
  (acceleration);
- :math:`S_{Br} = e^{(1300 - R_o) / 150} - 1` for :math:`R_o < 1300` and :math:`W < W_e`, else 0
  (braking);
- :math:`E = E_0 f_B + S_{Br}`, rounded to a whole number, at least 5, and at most :math:`5 i`
  while :math:`i \le 5` and 30 after (:math:`S_{Br} = 0`), or at most 150 (:math:`S_{Br} > 0`); a
  rating from another system counts as index 1;
- the new rating (3.5.2), and the index grows by one:

  .. math::

      R_n = R_o + \frac{800\, (W - W_e)}{E + n}.

Place in the state-space view: :math:`W - W_e` is the sum of the games' score residuals, so the
DWZ is Elo's fixed-gain filter on the Thurstone-Mosteller (probit) model at scale
:math:`\alpha = 200 \sqrt{2}`, with a gain :math:`800 / (E + n)` per period that is set by rule
rather than by a tracked variance: it falls as the rating and the index grow (:math:`E` up to 30)
and as the tournament lengthens (the :math:`+\,n`), much as a Kalman gain falls with the prior
precision plus the data's. A custom combination rule (:data:`~filters.kernels.RULE_CUSTOM`)
applies it, since :math:`E` depends on the period's total. Ages are not in the games: the age
constant :math:`J` is a setting (15, adults) and ``youth=True`` applies the acceleration factor.
Not modelled: first ratings of unrated players (the iterative Erst-DWZ; a newcomer starts at
``initial_rating``) and the integer rounding of ratings (kept as real numbers).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model.skillmodel import ELO_SCALE, SkillModel
from statespace.model.numeric import LOGISTIC, PROBIT, cdf

from . import _checks as C
from . import kernels as K
from ._point import PointRatingFilter, proba as _proba

__all__ = ["DWZ"]

#: the sd of the rating difference in the expected score (3.3.1): 200 points per player
SIGMA = 200.0 * math.sqrt(2.0)
#: the age constant J of players over 25 (youths 5, juniors 10)
J_ADULT = 15.0
INITIAL_RATING = 1500.0
#: bounds of the development coefficient (Anhang 1.2)
E_MIN, E_MAX, E_MAX_BRAKED, E_PER_INDEX = 5.0, 30.0, 150.0, 5.0
#: braking applies below this rating, rising by a factor e every BRAKE_SCALE points lower
BRAKE_BELOW, BRAKE_SCALE = 1300.0, 150.0

#: the kernels' parameters, in ``theta`` order (``home`` first, as :func:`filters._point.proba` reads it)
PARAMS = ("home", "j", "youth", "round_e", "normal")
_HOME, _J, _YOUTH, _ROUND, _NORMAL = range(len(PARAMS))
_R, _INDEX = 0, 1


def development_coefficient(r_o, index, surplus, j=J_ADULT, youth=False, round_e=True):
    """``E`` of Anhang 1.2 for a rating ``r_o`` with ``index`` evaluations and ``surplus = W - W_e``
    (the function the compiled rule calls)."""
    return _development(float(r_o), float(index), float(surplus), float(j), 1.0 if youth else 0.0,
                        1.0 if round_e else 0.0)


@njit(cache=True)
def _development(r_o, index, surplus, j, youth, round_e):
    """``E = E_0 f_B + S_Br`` with its bounds (Anhang 1.2)."""
    e0 = (r_o / 1000.0) ** 4 + j
    f_b = min(max(r_o / 2000.0, 0.5), 1.0) if youth != 0.0 and surplus >= 0.0 else 1.0
    s_br = 0.0
    if r_o < BRAKE_BELOW and surplus < 0.0:
        # e^x - 1 beyond x = 700 is far above the cap of 150
        s_br = math.expm1(min((BRAKE_BELOW - r_o) / BRAKE_SCALE, 700.0))
    e = e0 * f_b + s_br
    if round_e != 0.0:
        e = math.floor(e + 0.5)
    if s_br > 0.0:
        return min(max(e, E_MIN), E_MAX_BRAKED)
    return min(max(e, E_MIN), E_MAX if index > 5.0 else E_PER_INDEX * max(index, 1.0))


@njit(cache=True)
def _expected(x, a, b, at_home, theta):
    """``P(D) = Phi(D / (200 sqrt 2))`` (or the logistic approximation), ``D = R_a - R_b + H``."""
    d = x[a, _R] - x[b, _R] + theta[_HOME] * at_home
    if theta[_NORMAL] != 0.0:
        return cdf(PROBIT, d / SIGMA)
    return cdf(LOGISTIC, d / ELO_SCALE)


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """The game's score residual ``s - P(D)``, added to ``a``'s ``W - W_e`` and taken from ``b``'s."""
    p = _proba(forecast, obs, x, a, b, at_home, theta)
    r = score - _expected(x, a, b, at_home, theta)
    scratch[a, 1] += r
    scratch[b, 1] -= r
    return p


@K.apply_kernel
def _apply(x, count, theta, i, scratch):
    """``R_n = R_o + 800 (W - W_e) / (E + n)`` and one more evaluation on the index (3.5.2)."""
    surplus = scratch[i, 1]
    e = _development(x[i, _R], x[i, _INDEX], surplus, theta[_J], theta[_YOUTH], theta[_ROUND])
    x[i, _R] = K.clamp_mean(x[i, _R] + 800.0 * surplus / (e + scratch[i, 0]))
    x[i, _INDEX] += 1.0


class DWZ(PointRatingFilter):
    r"""The DSB's Deutsche Wertungszahl as a filter (see the module docstring).

    Parameters
    ----------
    j:
        The age constant :math:`J` of :math:`E_0`: 15 for players over 25 (default), 10 for 21 to
        25, 5 for youths. In ``[0, 1000]``.
    youth:
        Apply the youths' acceleration factor :math:`f_B` (False).
    round_e:
        Round :math:`E` to a whole number, as the Wertungsordnung does (True).
    expectation:
        ``"normal"`` (the Wertungsordnung's :math:`\Phi\bigl(D / (200 \sqrt{2})\bigr)`, default) or
        ``"logistic"`` (its approximation :math:`1 / (1 + 10^{-D / 400})`, Anhang 2.1); also the
        forecasts' link.
    home:
        Rating points added to ``a`` when it plays at home (0; ``|home| <= 1e300``).
    initial_rating:
        A newcomer's rating (1500; index 0, which the bounds count as 1).
    draw:
        The model's draw model (``"half"``, as the DWZ scores a draw; or ``("davidson", nu)``,
        ``("threshold", margin)`` in rating points).

    Rating periods: games with a ``period`` are evaluated period by period (a tournament);
    otherwise every game is its own evaluation.
    """

    name = "dwz"
    columns = ("rating", "index")
    params = PARAMS
    _proba = _proba
    _site = _site
    _apply = _apply
    rule = K.RULE_CUSTOM

    def __init__(self, j: float = J_ADULT, *, youth: bool = False, round_e: bool = True,
                 expectation: str = "normal", home: float = 0.0, initial_rating: float = INITIAL_RATING,
                 draw="half"):
        self.j = C.number("DWZ", "j", j, 0.0, 1000.0)
        if not isinstance(youth, (bool, np.bool_)):
            raise ValueError(f"DWZ: youth must be True or False, got {youth!r}")
        if not isinstance(round_e, (bool, np.bool_)):
            raise ValueError(f"DWZ: round_e must be True or False, got {round_e!r}")
        self.youth = bool(youth)
        self.round_e = bool(round_e)
        if expectation not in ("normal", "logistic"):
            raise ValueError(f"DWZ: expectation must be 'normal' or 'logistic', got {expectation!r}")
        self.expectation = expectation
        self.home = C.home("DWZ", home, ELO_SCALE)
        self.initial_rating = C.location("DWZ", "initial_rating", initial_rating, ELO_SCALE)
        self._set_draw("DWZ", draw)

    def _describe(self) -> str:
        return (f"j={self.j:g}" + (", youth=True" if self.youth else "") + (
            f", expectation={self.expectation!r}" if self.expectation != "normal" else "")
            + (f", home={self.home:g}" if self.home else ""))

    def kernel_value(self, name: str) -> float:
        if name == "normal":
            return 1.0 if self.expectation == "normal" else 0.0
        return super().kernel_value(name)

    @property
    def model(self) -> SkillModel:
        r"""Probit link at :math:`\alpha = 200 \sqrt{2}` rating points (logistic at
        :math:`400 / \ln 10` with ``expectation="logistic"``), the chosen draw model, no drift, no
        prior variance."""
        if self.expectation == "normal":
            link, scale = "probit", SIGMA
        else:
            link, scale = "logistic", ELO_SCALE
        return SkillModel(link=link, scale=scale, prior_mean=self.initial_rating, prior_var=0.0, drift=0.0,
                          draw=self.draw, home=self.home)

    @property
    def shown_columns(self) -> tuple[str, ...]:
        return ("index",)

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``j`` in [1, 200] (a larger :math:`J` means a smaller gain) and ``home`` in [-400, 400] where
        some game is not neutral."""
        out = {"j": (1.0, 200.0)}
        if not games.neutral.all():
            out["home"] = (-400.0, 400.0)
        return out

    def prior_row(self) -> np.ndarray:
        return np.array([self.initial_rating, 0.0])

    def initial_row(self, value) -> np.ndarray:
        """``initial={name: rating}``, ``(rating, index)`` or ``{"rating": r, "index": i}``; a rating
        within ``+-1e300``, an index a whole number >= 0."""
        row = super().initial_row(value)
        C.location(self.name, "initial rating", row[_R], ELO_SCALE)
        C.whole(self.name, "initial index", row[_INDEX], 0, 10**9)
        return row


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find it.
METHODS = {"dwz": DWZ}
