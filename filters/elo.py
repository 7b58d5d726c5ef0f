r"""Elo: the fixed-gain filter of the shared logistic model.

Forecast (Elo 1978; the logistic form used by FIDE and most leagues):

.. math::

    E_a = \frac{1}{1 + 10^{-(r_a - r_b + h) / 400}}

with :math:`h` the home advantage (``home``) when ``a`` plays at home. This is the ``SkillModel``
forecast with the logistic link, scale :math:`\alpha = 400 / \ln 10` and no skill uncertainty.

Update, for all games of one rating period computed from the pre-period ratings:

.. math::

    r_a \leftarrow r_a + K \sum_\text{games} (y - E_a)

with :math:`y` a's score, 1, 0.5 or 0. It is one stochastic-gradient step on the log-likelihood
of the logistic model: :math:`\partial \log L / \partial r_a = (y - E_a) \ln 10 / 400`, so
:math:`K = \eta \cdot 400 / \ln 10` for a step size :math:`\eta`. Elo tracks no variance, so the
time update does nothing.

FIDE rules (FIDE Handbook B.02, "FIDE Rating Regulations", 8.3 and 8.56), with ``Elo.fide()``:
:math:`K = 40` until a player has 30 rated games, then 20 while the rating stays under 2400, and
10 once it has reached 2400 (it stays 10 even if the rating drops); a rating difference of more
than 400 points counts as 400 in the update; if :math:`K n > 700` for a player's :math:`n` games
in one period, :math:`K` becomes the largest whole number with :math:`K n \le 700`.

Accepted ranges (:mod:`statespace.model.ranges`, in units of the scale :math:`\alpha`): :math:`K` at
most :math:`10\alpha` (1737 points at the default scale; published gains are 10 to 40), ``home``
within :math:`\pm 10\alpha`, ``initial_rating`` within :math:`\pm 10^6\alpha`. A game's shift is
at most :math:`K` times its weight; a run whose ratings end more than :math:`10^9\alpha` from ``initial_rating`` (a game
weighted :math:`10^{100}` times) is an error, not a result.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model.skillmodel import SkillModel
from statespace.model.numeric import LOGISTIC, cdf
from statespace.model.ranking_forecast import RankingForecast

from . import _checks as C
from . import kernels as K
from . import _lanes as L
from ._point import PointRatingFilter
from .match_loop import match_kernel, side_moments

__all__ = ["Elo"]

#: K, the classic club gain: rating points moved per unit of surprise (a win the forecast gave
#: even odds moves 16 points)
K_FACTOR = 32.0
#: the largest K, in scales: a game the forecast gave even odds then moves a rating 5 scales (870
#: points at 400 / ln 10), after which one game decides the next forecast almost alone
K_MAX_SCALES = 10.0
#: a newcomer's rating
INITIAL_RATING = 1500.0
#: a lead of SCALE points means odds of BASE to 1 (400 and 10: 400 points ahead wins 10 games in 11)
SCALE, BASE = 400.0, 10.0

#: the kernels' parameters, in ``theta`` order (``scale`` is the model's: points / ln(base)); the
#: lanes' ``theta`` (:meth:`Elo.lanes_theta`) holds the scale's reciprocal in its place
PARAMS = ("k", "home", "logistic_scale", "is_fide")
_K, _HOME, _SCALE, _FIDE = range(len(PARAMS))
# state columns
_RATING, _REACHED = 0, 1


@njit(cache=True, inline="always")
def _update(logistic, r_a, r_b, at_home, k, home, scale, score, weight):
    """Elo's update of one game, for both the run loop's site (:func:`_site`) and the grid's lanes
    (:func:`_lanes_site`): the forecast ``E_a = F((r_a - r_b + h) / s)`` and the shift
    ``K w (y - E_a)`` of ``a`` (``b`` moves by its opposite). ``logistic(d, scale)`` is
    ``F(d / s)``: :func:`_logistic` in the run loop, :func:`_lanes_logistic` in the lanes."""
    e = logistic(r_a - r_b + home * at_home, scale)
    return e, k * weight * (score - e)


@njit(cache=True, inline="always")
def _logistic(d, scale):
    """``F(d / s)``, F the logistic cdf of the model's outcome numerics."""
    return cdf(LOGISTIC, d / scale)


@njit(cache=True, inline="always")
def _capped_logistic(d, scale):
    """``F(d / s)`` with ``d`` counted as at most 400 points either way (FIDE B.02 8.3)."""
    return cdf(LOGISTIC, min(400.0, max(-400.0, d)) / scale)


@njit(cache=True, inline="always", error_model="numpy", fastmath=L.FLAGS)
def _lanes_logistic(d, inv_scale):
    """``F(d * (1 / s))`` by :func:`filters._lanes.logistic`, which the lanes vectorise: a product
    with the scale's reciprocal (a vector division costs as much as the rest of the game), within an
    ulp or two of :func:`_logistic`'s quotient."""
    return L.logistic(d * inv_scale)


@njit(cache=True)
def _expected(x, a, b, at_home, theta):
    """``E_a = F((r_a - r_b + h) / s)``, F the logistic cdf of the model's outcome numerics."""
    return _logistic(x[a, _RATING] - x[b, _RATING] + theta[_HOME] * at_home, theta[_SCALE])


@K.proba_kernel
def _proba(forecast, obs, x, a, b, at_home, theta):
    """``(E_a, 0, 1 - E_a)``: Elo forecasts no draws (a draw is scored as half a win)."""
    e = _expected(x, a, b, at_home, theta)
    return e, 0.0, 1.0 - e


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """:func:`_update`'s ``K w (y - E_a)`` for :data:`~filters.kernels.RULE_SHIFT`; under FIDE
    rules ``w (y - E_a)`` from the difference capped at 400 points, K applied by :func:`_apply_fide`."""
    if theta[_FIDE] != 0.0:
        e = _expected(x, a, b, at_home, theta)
        r = _update(_capped_logistic, x[a, _RATING], x[b, _RATING], at_home, 1.0, theta[_HOME], theta[_SCALE],
                    score, weight)[1]
    else:
        e, r = _update(_logistic, x[a, _RATING], x[b, _RATING], at_home, theta[_K], theta[_HOME], theta[_SCALE],
                       score, weight)
    scratch[a, 1] += r
    scratch[b, 1] -= r
    return e, 0.0, 1.0 - e


@K.apply_kernel
def _apply_fide(x, count, theta, i, scratch):
    """FIDE's K (B.02 8.56): 40 for the first 30 games, then 20, 10 once 2400 was reached; with
    n games in the period, K * n <= 700."""
    n = scratch[i, 0]
    if count[i] < 30:
        k = 40.0
    elif x[i, _REACHED] != 0.0:
        k = 10.0
    else:
        k = 20.0
    if k * n > 700.0:
        k = math.floor(700.0 / n)
    x[i, _RATING] += k * scratch[i, 1]
    if x[i, _RATING] >= 2400.0:
        x[i, _REACHED] = 1.0


@L.lanes_site_kernel
def _lanes_site(x, theta, obs, a, b, s, score, score_a, score_b, at_home, weight):
    """:func:`_site` without FIDE's rules in lane ``s`` (one setting, :mod:`filters._lanes`; ``theta``
    from :meth:`Elo.lanes_theta`): the same :func:`_update`, its ``F`` :func:`_lanes_logistic`."""
    L.always_inline()
    e, r = _update(_lanes_logistic, x[a, _RATING, s], x[b, _RATING, s], at_home, theta[_K, s], theta[_HOME, s],
                   theta[_SCALE, s], score, weight)
    return e, 0.0, 1.0 - e, r, -r


@match_kernel
def _match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    r"""Multiplayer Elo by pairwise decomposition: every pair of sides of the match is an Elo game
    and a side's gain is shared over its :math:`n - 1` opponents,

    .. math::

        \Delta_s = \frac{K}{n - 1} \sum_{t \ne s} (S_{st} - E_{st}), \qquad
        E_{st} = F\bigl((r_s - r_t) / \alpha\bigr), \qquad r_s = \sum_{k \in s} w_k r_k,

    :math:`S_{st}` 1, 1/2 or 0 as side :math:`s` finished ahead of, level with or behind :math:`t`;
    each member then moves by :math:`w_k \Delta_s`. This is the generalisation of Elo to
    multiplayer games of Cunningham ("Developing a Generalized Elo Rating System for Multiplayer
    Games", 2019: the linear score function) and the pairwise "Elo-like" baseline of Ebtekar and
    Liu (Elo-MMR, WWW 2021, Section 5); one competitor against one is Elo's own update. The ratings
    are read before any member moves, so the order of the sides does not matter."""
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, -1)
    n = s1 - s0
    gain = theta[_K] / (n - 1)
    for s in range(s0, s1):
        surprise = 0.0
        for t in range(s0, s1):
            if t != s:
                y = 1.0 if rank[s] < rank[t] else (0.5 if rank[s] == rank[t] else 0.0)
                surprise += y - _logistic(perf_mean[s] - perf_mean[t], theta[_SCALE])
        shift = gain * surprise
        for k in range(side_ptr[s], side_ptr[s + 1]):
            i = member[k]
            x[i, _RATING] = min(max(x[i, _RATING] + weight[k] * shift, -K.MEAN_MAX), K.MEAN_MAX)


class Elo(PointRatingFilter):
    r"""Elo rating as a filter of the logistic random-walk model.

    Parameters
    ----------
    k:
        Gain :math:`K`: points moved per unit of surprise (:math:`y - E`). 32 is the classic club
        value. In :math:`[0, 10\alpha]` (1737 points at the default scale).
    home:
        Home advantage in rating points, added to ``a`` in games not flagged neutral
        (:math:`|h| \le 10\alpha`).
    initial_rating:
        Rating of a newcomer (1500; within :math:`\pm 10^6\alpha`).
    scale:
        Points per factor ``base`` in odds: with the defaults a 400-point lead means 10:1.
    base:
        Base of the exponent (10); ``scale`` and ``base`` are finite, ``base > 1``, and the logistic
        scale :math:`\alpha = \mathtt{scale} / \ln(\mathtt{base})` must lie in :math:`[10^{-100}, 10^{100}]`.
    fide:
        Apply the FIDE rules (see the module docstring and :meth:`fide`); ``k`` is then ignored.

    Draws count as half a win (:math:`y = 0.5`); Elo forecasts no draws, so ``predict_proba``
    gives :math:`(E, 0, 1 - E)`.
    """

    name = "elo"
    honours_weights = True
    _param_aliases = {"fide": "is_fide"}
    columns = ("rating", "reached_2400")
    params = PARAMS
    _proba = _proba
    _site = _site
    _match = _match
    rule = K.RULE_SHIFT
    #: many settings at once in :func:`filters.grid.evaluate` (FIDE's rules take the batched loops)
    _lanes_site = _lanes_site

    def __init__(self, k: float = K_FACTOR, *, home: float = 0.0, initial_rating: float = INITIAL_RATING,
                 scale: float = SCALE, base: float = BASE, fide: bool = False):
        self.scale = C.number("Elo", "scale", scale, 0.0, lo_open=True)
        self.base = C.number("Elo", "base", base, 1.0, lo_open=True)
        alpha = C.scale("Elo", "scale / ln(base)", self.scale / math.log(self.base))
        self.k = C.number("Elo", "k", k, 0.0, K_MAX_SCALES * alpha, unit=f" ({K_MAX_SCALES:g} scales of {alpha:.6g})")
        self.home = C.home("Elo", home, alpha)
        self.initial_rating = C.location("Elo", "initial_rating", initial_rating, alpha)
        self.is_fide = bool(fide)
        if self.is_fide:
            self.name = "elo_fide"
        else:  # trajectories show the rating alone (reached_2400 is a FIDE column)
            self.record_columns = 1

    @classmethod
    def fide(cls, **kwargs) -> "Elo":
        r"""Elo with the FIDE rules: :math:`K` 40 / 20 / 10, the 400-point cap and :math:`K n \le 700`."""
        return cls(fide=True, **kwargs)

    def _describe(self) -> str:
        if self.is_fide:
            return "fide=True" + (f", home={self.home:g}" if self.home else "")
        return f"k={self.k:g}" + (f", home={self.home:g}" if self.home else "")

    @property
    def model(self) -> SkillModel:
        r"""Logistic link, scale :math:`\alpha = \mathtt{scale} / \ln(\mathtt{base})`
        (:math:`400 / \ln 10 = 173.72`), draws as half a win, no drift and no prior variance (Elo
        tracks none)."""
        return SkillModel(link="logistic", scale=self.logistic_scale, prior_mean=self.initial_rating,
                          prior_var=0.0, drift=0.0, draw="half", home=self.home)

    @property
    def shown_columns(self) -> tuple[str, ...]:
        return ("reached_2400",) if self.is_fide else ()

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``k`` in [1, 200] (not under FIDE rules, whose K is set by rule) and ``home`` in
        [-400, 400] where some game is not neutral."""
        out = {} if self.is_fide else {"k": (1.0, 200.0)}
        if not games.neutral.all():
            out["home"] = (-400.0, 400.0)
        return out

    def match_forecast(self) -> RankingForecast:
        r"""Bradley-Terry pairs at the logistic scale: :math:`\beta = \alpha / \sqrt 2` (so that a
        pair's scale :math:`\sqrt{2\beta^2}` is :math:`\alpha`). FIDE's rules are for games of two."""
        if self.is_fide:
            raise ValueError("elo_fide: FIDE's rules rate games of two players; rate matches of many sides with "
                             "Elo(k=...)")
        return RankingForecast("bradley_terry", self.logistic_scale / math.sqrt(2.0))

    def site_kernels(self):
        """FIDE rules combine a period's games by :func:`_apply_fide` (K set per player)."""
        return (_site, _apply_fide, K.RULE_CUSTOM) if self.is_fide else super().site_kernels()

    def lanes_theta(self) -> np.ndarray:
        """The parameters of :func:`_lanes_site`: :meth:`theta` with ``1 / logistic_scale`` in the
        scale's place."""
        theta = self.theta()
        theta[_SCALE] = 1.0 / self.logistic_scale
        return theta

    @property
    def logistic_scale(self) -> float:
        r"""The model's scale, :math:`\alpha = \mathtt{scale} / \ln(\mathtt{base})` points per
        logistic unit (173.72)."""
        return self.scale / math.log(self.base)

    def prior_row(self) -> np.ndarray:
        return np.array([self.initial_rating, 0.0])

    def initial_row(self, value) -> np.ndarray:
        """``initial={name: rating}`` (or ``{name: {"rating": r, "games": n}}``); under FIDE rules a
        starting rating of 2400 or more counts as having reached 2400. ``|rating| <= 1e300``."""
        row = super().initial_row(value)
        C.location(self.name, "initial rating", row[_RATING], self.logistic_scale)
        if np.ndim(value) == 0 or len(np.atleast_1d(value)) == 1:
            row[_REACHED] = 1.0 if self.is_fide and row[_RATING] >= 2400 else 0.0
        return row


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find these.
METHODS = {"elo": Elo, "elo_fide": Elo.fide}
