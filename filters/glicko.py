r"""Glicko-1 and Glicko-2: variance-tracking filters of the shared logistic model.

Both track a rating :math:`r` and a rating deviation :math:`\mathrm{RD}` (the posterior sd of the
skill) in Elo units, with :math:`q = \ln 10 / 400` (the model's scale is
:math:`\alpha = 1 / q = 400 / \ln 10`).

Glicko-1 (Glickman, "Parameter estimation in large dynamic paired comparison experiments",
Applied Statistics 1999; and "The Glicko system", 1999):

- predict, at the start of a period, :math:`t` periods after the last one played:
  :math:`\mathrm{RD} \leftarrow \min\bigl(\sqrt{\mathrm{RD}^2 + c^2 t},\ \mathrm{RD}_\text{max}\bigr)`
  (the random walk with drift :math:`c^2` per period);
- update, all games of the period from the pre-period values, with
  :math:`g(\mathrm{RD}) = 1 / \sqrt{1 + 3 q^2 \mathrm{RD}^2 / \pi^2}` and
  :math:`E_j = 1 / \bigl(1 + 10^{-g(\mathrm{RD}_j) (r - r_j) / 400}\bigr)`, :math:`s_j` the score
  against opponent :math:`j`:

  .. math::

      \frac{1}{d^2} &= q^2 \sum_j g(\mathrm{RD}_j)^2 E_j (1 - E_j) \\
      r' &= r + \frac{q}{1/\mathrm{RD}^2 + 1/d^2} \sum_j g(\mathrm{RD}_j) (s_j - E_j) \\
      \mathrm{RD}' &= \left(\frac{1}{\mathrm{RD}^2} + \frac{1}{d^2}\right)^{-1/2}

Glicko-2 (Glickman, "Example of the Glicko-2 system", 2022 revision of the 2001 note), on the
scale :math:`\mu = (r - 1500) / 173.7178`, :math:`\phi = \mathrm{RD} / 173.7178`, with a
volatility :math:`\sigma`: steps 3-8 (Glickman's :math:`v`, here :math:`v_\mathrm{G}`, and
:math:`\Delta`, the new volatility by the Illinois algorithm on

.. math::

    f(x) = \frac{e^x (\Delta^2 - \phi^2 - v_\mathrm{G} - e^x)}{2 (\phi^2 + v_\mathrm{G} + e^x)^2} - \frac{x - \ln \sigma^2}{\tau^2},

:math:`\phi^* = \sqrt{\phi^2 + \sigma'^2}`, :math:`\phi' = (1/\phi^{*2} + 1/v_\mathrm{G})^{-1/2}`,
:math:`\mu' = \mu + \phi'^2 \sum_j g(\phi_j)(s_j - E_j)`). A period without games only grows
:math:`\phi \leftarrow \sqrt{\phi^2 + \sigma^2}`; the period a competitor plays is grown inside
the update (step 6, with the new volatility), so ``predict`` over :math:`t` periods adds
:math:`\sigma^2 (t - 1)`.

Rating periods: games with a ``period`` (``Games.with_periods``) are rated period by period
and time is counted in periods. Without one, every game is its own period and time is
``days / period_days`` (numeric times: ``time / period_days``; default 30 days); games at the
same time add no drift between them.

Two expected scores (see :func:`expected_score`): Glickman's update-time form uses only the
opponent's RD, so :math:`E(a, b) + E(b, a) \ne 1` when the RDs differ; his prediction form uses
the combined deviation :math:`g\bigl(\sqrt{\mathrm{RD}_a^2 + \mathrm{RD}_b^2}\bigr)` and is
symmetric. ``predict_proba`` uses the prediction form unless ``form="update"``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model.skillmodel import ELO_SCALE, SkillModel
from statespace.model.numeric import (DRAW_HALF, LOGISTIC, LOGISTIC_VAR_FACTOR, effective_scale, loglik_derivs,
                                      outcome_proba)
from statespace.model.ranking_forecast import RankingForecast

from . import _checks as CH
from . import kernels as K
from ._glicko_match import match_glicko1, match_glicko2
from ._glicko_steps import (INITIAL_VOLATILITY_MAX, PARAMS, RD2_MAX_SCALES, TAU_MAX, V_MAX, VOL_MAX, VOL_MIN, _C,
                            _FORM, _HOME, _R, _RD, _RDMAX, _SIGMA, glicko2_step, new_volatility)
from .base import Filter

__all__ = ["Glicko", "Glicko2", "expected_score", "g"]

Q = math.log(10.0) / 400.0
#: a newcomer's rating and rating deviation (Glickman's defaults): RD 350 says "anywhere from
#: about 800 to 2200 with 95% probability"
INITIAL_RATING = 1500.0
INITIAL_RD = 350.0
#: no deviation grows beyond a newcomer's
RD_MAX = 350.0
#: Glicko-1's RD growth per rating period, sqrt((350^2 - 50^2) / 100) = 34.64: an RD of 50 (a
#: settled player) is back to 350 after 100 idle periods
C = math.sqrt((INITIAL_RD**2 - 50.0**2) / 100.0)
#: Glicko-2's volatility constraint (Glickman advises 0.3 to 1.2; smaller keeps volatilities
#: steadier) and a newcomer's volatility
TAU = 0.5
INITIAL_VOLATILITY = 0.06
#: rating periods without explicit periods last this many days (a month, what Glickman's
#: defaults were made for)
PERIOD_DAYS = 30.0


def g(rd):
    r""":math:`g(\mathrm{RD}) = 1 / \sqrt{1 + 3 q^2 \mathrm{RD}^2 / \pi^2}`, :math:`q = \ln 10 / 400`
    (Glickman 1999, eq. 3): the logistic model's scale over its effective scale with a
    skill-difference variance :math:`\mathrm{RD}^2` (:func:`statespace.model.numeric.effective_scale`)."""
    return (ELO_SCALE / SkillModel("logistic", ELO_SCALE).effective_scale(np.asarray(rd, dtype=float) ** 2))[()]


def expected_score(r_a, rd_a, r_b, rd_b, form: str = "prediction"):
    r"""Glickman's expected score of ``a`` against ``b``, in both of his forms.

    - ``form="update"``: :math:`E = 1 / \bigl(1 + 10^{-g(\mathrm{RD}_b) (r_a - r_b) / 400}\bigr)`,
      used inside the rating update (Glickman 1999, eq. 4). Only the opponent's RD enters, so
      :math:`E(a, b) + E(b, a) \ne 1` when the two RDs differ.
    - ``form="prediction"`` (Glickman, "The Glicko system", p. 5): the forecast of the game;
      symmetric,

      .. math::

          E = \frac{1}{1 + 10^{-g\left(\sqrt{\mathrm{RD}_a^2 + \mathrm{RD}_b^2}\right) (r_a - r_b) / 400}}.

      This is the shared model's forecast with the skill-difference variance
      :math:`\mathrm{RD}_a^2 + \mathrm{RD}_b^2`.
    """
    r_a, rd_a, r_b, rd_b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (r_a, rd_a, r_b, rd_b)))
    if form == "update":
        var = rd_b**2
    elif form == "prediction":
        var = rd_a**2 + rd_b**2
    else:
        raise ValueError(f"form must be 'prediction' or 'update', got {form!r}")
    return SkillModel("logistic", ELO_SCALE, draw="half").proba(r_a - r_b, var)[..., 0][()]


@K.proba_kernel
def _proba(forecast, obs, x, a, b, at_home, theta):
    """The model's forecast with the skill-difference variance ``RD_a^2 + RD_b^2`` (Glickman's
    prediction form, ``g(sqrt(RD_a^2 + RD_b^2))``), or ``RD_b^2`` alone (his update-time form)."""
    d = x[a, _R] - x[b, _R] + theta[_HOME] * at_home
    var = x[b, _RD] * x[b, _RD]
    if theta[_FORM] == 0.0:
        var += x[a, _RD] * x[a, _RD]
    return outcome_proba(LOGISTIC, DRAW_HALF, 0.0, d, effective_scale(LOGISTIC, ELO_SCALE, var))


@njit(cache=True)
def _side_site(scratch, i, rd_i, rd_opp, score, d, weight):
    """One game's site for competitor ``i`` (Glickman 1999, eqs. 4-6): the logistic
    log-likelihood's gradient and curvature at the opponent's effective scale
    ``s_j = sqrt(s^2 + 3 RD_j^2 / pi^2) = 1 / (q g(RD_j))``, so that the precision is
    ``q^2 g(RD_j)^2 E (1 - E)`` (Glickman's ``1 / d^2`` term) and the gradient ``q g(RD_j) (s - E)``."""
    grad, curv = loglik_derivs(LOGISTIC, DRAW_HALF, 0.0, score, d, effective_scale(LOGISTIC, ELO_SCALE,
                                                                                     rd_opp * rd_opp))
    K.gaussian_site(scratch, i, rd_i * rd_i, -weight * curv, weight * grad)


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """Both competitors' Glicko sites from the pre-period values (Glickman 1999, eqs. 4-6)."""
    p = _proba(forecast, obs, x, a, b, at_home, theta)
    d = x[a, _R] - x[b, _R] + theta[_HOME] * at_home
    _side_site(scratch, a, x[a, _RD], x[b, _RD], score, d, weight)
    _side_site(scratch, b, x[b, _RD], x[a, _RD], 1.0 - score, -d, weight)
    return p


# ---------------------------------------------------------------- Glicko-1
@K.predict_kernel
def _predict1(x, i, theta, dt):
    """Glicko-1's step 1: ``RD <- min(sqrt(RD^2 + c^2 t), RD_max)`` after ``t`` periods."""
    rd = math.sqrt(x[i, _RD] * x[i, _RD] + theta[_C] * theta[_C] * dt)
    x[i, _RD] = min(rd, theta[_RDMAX])


@K.predict_kernel
def _predict2(x, i, theta, dt):
    """Glicko-2's idle periods: ``phi^2 += sigma^2`` for each period but the one played (step 6 grows
    that one inside the update), capped at ``RD_max``."""
    if dt > 1.0:
        s = x[i, _SIGMA] * ELO_SCALE
        rd2 = x[i, _RD] * x[i, _RD] + s * s * (dt - 1.0)
        x[i, _RD] = min(math.sqrt(rd2), theta[_RDMAX])


@K.apply_kernel
def _apply2(x, count, theta, i, scratch):
    """Glicko-2 steps 3-8 for competitor ``i`` from the period's sites (:func:`glicko2_step`)."""
    glicko2_step(x, theta, i, scratch[i, 1], scratch[i, 2])


class _GlickoBase(Filter):
    honours_weights = True
    params = PARAMS
    _proba = _proba
    _site = _site
    sd_column = "rd"
    sd_label = "RD"
    time_unit = "period"

    @property
    def shown_columns(self) -> tuple[str, ...]:
        """``rd`` (the same as ``sd``, under Glickman's name) and, for Glicko-2, ``volatility``."""
        return self.columns[1:]

    def _home_bounds(self, games) -> dict[str, tuple[float, float]]:
        return {} if games.neutral.all() else {"home": (-400.0, 400.0)}

    def __init__(self, *, initial_rating, initial_rd, rd_max, home, period_days, form):
        owner = type(self).__name__
        self.initial_rating = CH.location(owner, "initial_rating", initial_rating, ELO_SCALE)
        self.initial_rd = CH.length(owner, "initial_rd", initial_rd, ELO_SCALE)
        self.rd_max = CH.length(owner, "rd_max", rd_max, ELO_SCALE)
        self.home = CH.home(owner, home, ELO_SCALE)
        self.period_days = CH.number(owner, "period_days", period_days, 0.0, lo_open=True)
        if form not in ("prediction", "update"):
            raise ValueError(f"form must be 'prediction' or 'update', got {form!r}")
        self.form = form

    def _describe_rest(self) -> str:
        return f", home={self.home:g}" if self.home else ""

    def kernel_value(self, name: str) -> float:
        """``update_form`` is 1 for Glickman's update-time forecast; a setting the version does
        not have (Glicko-1's ``tau``, Glicko-2's ``c``) is 0."""
        if name == "update_form":
            return float(self.form == "update")
        return getattr(self, name, 0.0)

    def initial_row(self, value) -> np.ndarray:
        r"""A starting value within the settings' ranges: a rating within :math:`\pm 10^6` scales of
        :math:`400 / \ln 10`, an RD in :math:`(0, 10^3]` scales."""
        row = super().initial_row(value)
        CH.location(self.name, "initial rating", row[_R], ELO_SCALE)
        CH.length(self.name, "initial RD", row[_RD], ELO_SCALE)
        return row

    def predict_proba(self, state, a, b, at_home=None, form: str | None = None):
        """Win/draw/loss forecasts; ``form`` overrides the constructor's ``"prediction"`` /
        ``"update"`` choice for this call (see :func:`expected_score`)."""
        if form is None or form == self.form:
            return super().predict_proba(state, a, b, at_home)
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.form = form
        return Filter.predict_proba(other, state, a, b, at_home)

    def match_forecast(self) -> RankingForecast:
        r"""Bradley-Terry pairs in Glickman's prediction form: side :math:`s` ahead of :math:`t` with
        probability :math:`F\bigl((r_s - r_t) / \sqrt{\alpha^2 + 3 (\mathrm{RD}_s^2 + \mathrm{RD}_t^2) / \pi^2}\bigr)`,
        :math:`\alpha = 400 / \ln 10` (:math:`\beta = \alpha / \sqrt 2`, the variances counted
        :math:`3 / \pi^2`: his :math:`g` function)."""
        return RankingForecast("bradley_terry", ELO_SCALE / math.sqrt(2.0), var_factor=LOGISTIC_VAR_FACTOR)


class Glicko(_GlickoBase):
    r"""Glicko-1 (Glickman 1999) as a filter: rating, RD, and RD growth :math:`c` per period.

    Parameters
    ----------
    c:
        RD growth per rating period: :math:`\mathrm{RD}^2 \leftarrow \mathrm{RD}^2 + c^2` per idle
        period. The default :math:`\sqrt{(350^2 - 50^2) / 100} = 34.64` brings an RD of 50 back to
        350 after 100 periods.
    initial_rating, initial_rd:
        A newcomer's rating (1500) and RD (350); ``rd_max`` (350) caps RD growth.
    home:
        Home advantage in rating points.
    period_days:
        Length of a rating period in days (or numeric time units) when the games carry no
        ``period``: each game is then its own period and RD grows with the real time elapsed,
        :math:`c^2` per ``period_days``. The default, 30, is the month-long period Glickman's
        defaults were made for (RD 50 back to 350 in about eight idle years); with 1 day the
        same ``c`` lets ratings swing far too much (docs/glicko.md measures it).
    form:
        Expected score used by ``predict_proba``: ``"prediction"`` (symmetric, default) or
        ``"update"`` (Glickman's update-time form; see :func:`expected_score`).

    Accepted ranges (:mod:`statespace.model.ranges`, in scales :math:`\alpha = 400 / \ln 10 = 173.7`):
    ``c`` in :math:`[0, 10^3\alpha]`, ``initial_rd`` and ``rd_max`` in :math:`(0, 10^3\alpha]`,
    ``initial_rating`` within :math:`\pm 10^6\alpha`, ``home`` within :math:`\pm 10\alpha`, ``period_days`` any finite number
    > 0. An RD below 1e-150 acts as 1e-150 once it is updated (variances are kept at least 1e-300).
    """

    name = "glicko"
    columns = ("rating", "rd")
    _predict = _predict1
    _match = match_glicko1
    rule = K.RULE_GAUSSIAN

    def __init__(self, c: float = C, *, initial_rating: float = INITIAL_RATING,
                 initial_rd: float = INITIAL_RD, rd_max: float = RD_MAX, home: float = 0.0,
                 period_days: float = PERIOD_DAYS, form: str = "prediction"):
        self.c = CH.length(type(self).__name__, "c", c, ELO_SCALE, zero=True)
        super().__init__(initial_rating=initial_rating, initial_rd=initial_rd, rd_max=rd_max, home=home,
                         period_days=period_days, form=form)

    def _describe(self) -> str:
        return f"c={self.c:g}" + self._describe_rest()

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``c`` in [0.5, 500] per period, and ``home`` where some game is not neutral."""
        return {"c": (0.5, 500.0), **self._home_bounds(games)}

    @property
    def model(self) -> SkillModel:
        r"""Logistic link at scale :math:`400 / \ln 10`, prior :math:`\mathcal{N}(1500, 350^2)`,
        drift :math:`c^2` per period, draws as half a win."""
        return SkillModel("logistic", ELO_SCALE, self.initial_rating, self.initial_rd**2, self.c**2, "half",
                          self.home)

    def prior_row(self) -> np.ndarray:
        return np.array([self.initial_rating, self.initial_rd])


class Glicko2(_GlickoBase):
    """Glicko-2 (Glickman, "Example of the Glicko-2 system") as a filter.

    Parameters
    ----------
    tau:
        Constrains the change in volatility over time (0.3 to 1.2 in Glickman's advice; 0.5).
    initial_rating, initial_rd, initial_volatility:
        1500, 350, 0.06.
    eps, max_iter:
        Convergence tolerance (1e-6) and iteration bound of the Illinois algorithm; not
        converging raises ``ArithmeticError`` rather than producing NaN.
    home, period_days, form, rd_max:
        As for :class:`Glicko`.

    Accepted ranges (:mod:`statespace.model.ranges`): ``tau`` in ``(0, 3]`` (Glickman advises 0.3 to 1.2;
    ``tune`` searches up to 2.5), ``initial_volatility`` in ``(0, 1]`` (Glickman's 0.06; 1 adds an
    RD of 173.7 points a period), ``initial_rd`` and ``rd_max`` in ``(0, 1737]`` (10 scales; the
    volatility step runs away after a result that far from the forecast), ``eps`` in
    ``(0, 0.01]``, ``max_iter`` a whole number in ``[1, 1e6]``, the rest as for :class:`Glicko`. A volatility is kept in ``[1e-150, 1e147]``
    (:func:`new_volatility`). Glickman made the volatility for rating periods of many games: with
    one game a period (games without ``period``), a large ``tau`` or starting volatility lets the
    volatility's random walk climb until it runs away (on the NFL's games, ``tau=1.2`` with
    ``initial_volatility=0.3``); such a run ends in a
    :class:`~statespace.model.ranges.ResultRangeError`, not in ratings.
    """

    name = "glicko2"
    columns = ("rating", "rd", "volatility")
    _predict = _predict2
    _match = match_glicko2
    _apply = _apply2
    rule = K.RULE_CUSTOM

    def __init__(self, tau: float = TAU, *, initial_rating: float = INITIAL_RATING, initial_rd: float = INITIAL_RD,
                 initial_volatility: float = INITIAL_VOLATILITY, rd_max: float = RD_MAX, home: float = 0.0,
                 period_days: float = PERIOD_DAYS, form: str = "prediction", eps: float = 1e-6,
                 max_iter: int = 10_000):
        self.tau = CH.number("Glicko2", "tau", tau, 0.0, TAU_MAX, lo_open=True)
        self.initial_volatility = CH.number("Glicko2", "initial_volatility", initial_volatility, 0.0,
                                            INITIAL_VOLATILITY_MAX, lo_open=True)
        self.eps = CH.number("Glicko2", "eps", eps, 0.0, 0.01, lo_open=True)
        self.max_iter = CH.whole("Glicko2", "max_iter", max_iter, 1, 10**6)
        for name, value in (("initial_rd", initial_rd), ("rd_max", rd_max)):
            CH.number("Glicko2", name, value, 0.0, RD2_MAX_SCALES * ELO_SCALE, lo_open=True,
                      unit=f" ({RD2_MAX_SCALES:g} scales of {ELO_SCALE:.6g})")
        super().__init__(initial_rating=initial_rating, initial_rd=initial_rd, rd_max=rd_max, home=home,
                         period_days=period_days, form=form)

    def _describe(self) -> str:
        return f"tau={self.tau:g}" + self._describe_rest()

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``tau`` in [0.05, 2.5], the starting volatility in [0.001, 1] (with few games per
        competitor it sets the drift more than tau does), and ``home`` where some game is not
        neutral."""
        return {"tau": (0.05, 2.5), "initial_volatility": (1e-3, 1.0), **self._home_bounds(games)}

    @property
    def model(self) -> SkillModel:
        r"""Logistic link at scale :math:`400 / \ln 10`, prior :math:`\mathcal{N}(1500, 350^2)`,
        drift :math:`(173.7\,\sigma)^2` per period at the initial volatility (Glicko-2 lets each
        competitor's drift vary)."""
        return SkillModel("logistic", ELO_SCALE, self.initial_rating, self.initial_rd**2,
                          (ELO_SCALE * self.initial_volatility) ** 2, "half", self.home)

    def prior_row(self) -> np.ndarray:
        return np.array([self.initial_rating, self.initial_rd, self.initial_volatility])

    def initial_row(self, value) -> np.ndarray:
        """``initial={name: (rating, rd, volatility)}`` or a prefix of it."""
        row = super().initial_row(value)
        if not row[_SIGMA] > 0:
            raise ValueError(f"{self.name}: volatility must be > 0, got {row[_SIGMA]!r}")
        CH.number(self.name, "initial volatility", row[_SIGMA], 0.0, INITIAL_VOLATILITY_MAX, lo_open=True)
        return row


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find these.
METHODS = {"glicko": Glicko, "glicko2": Glicko2}
