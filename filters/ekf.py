r"""The extended Kalman filter of any :class:`statespace.SkillModel`, and how Elo, Glicko and
TrueSkill sit inside it (derived at length in ``docs/ekf.md``).

The model: skills random-walk, :math:`s_i(t + \Delta t) = s_i(t) + \mathcal N(0, q\,\Delta t)`
(:math:`q` = ``model.drift``), and a game between :math:`a` and :math:`b` observes its result
:math:`y` through a likelihood :math:`L(y \mid d)` of the difference :math:`d = s_a - s_b + h`
(:math:`h` the home advantage): logistic or probit link, any draw model.

**Predict.** The prior of a competitor idle for :math:`\Delta t`: :math:`v \leftarrow v + q\,\Delta t`
(diagonal), or :math:`P \leftarrow P + Q\,\Delta t` with :math:`Q = q I` (full covariance).

**Update.** Write the prior of the two skills as :math:`\mathcal N(m, \Sigma)` and
:math:`J = e_a - e_b`, so that :math:`d = J s + h` has prior mean :math:`d_0 = J m + h` and variance
:math:`S = J \Sigma J^\top` (:math:`v_a + v_b` when diagonal). Let :math:`g = \ell'(d)` and
:math:`\kappa = -\ell''(d)` be the gradient and curvature of the log-likelihood
:math:`\ell = \log L(y \mid d)`. One Newton step on the log posterior from the prior mean is

.. math::

    m \leftarrow m + \frac{\Sigma J^\top g}{1 + \kappa S}, \qquad
    \Sigma \leftarrow \Sigma - \frac{\kappa}{1 + \kappa S}\, \Sigma J^\top J \Sigma ,

with :math:`g` and :math:`\kappa` at :math:`d_0`: this is the EKF (the measurement linearised at
the prior mean; the Kalman gain is :math:`\Sigma J^\top / (1 + \kappa S)` per unit of
"innovation" :math:`g`). Iterating the Newton step (``iterations > 1``) moves the linearisation
point to the posterior mode :math:`d^* = d_0 + S\,\ell'(d^*)`: the iterated EKF, i.e. the Laplace
approximation of the one-game posterior. Rating periods: each game's Gaussian "site" (precision
:math:`\kappa`, from the pre-period prior) is multiplied into the prior, so the order inside a
period does not matter.

**The family as special cases** (logistic link at scale :math:`\alpha = 400 / \ln 10`, draws as half
a win, where :math:`g = (y - E) / \alpha` and :math:`\kappa = E (1 - E) / \alpha^2`):

- *Elo* is the scalar filter (``covariance="scalar"``): every competitor keeps the same fixed
  variance :math:`u`, the variance each game sees, and the curvature is frozen at its
  steady-state value :math:`\kappa_0 = 1 / (4 \alpha^2)`, so the mean update is
  :math:`m_a \mathrel{+}= \frac{u}{\alpha (1 + 2 u \kappa_0)} (y - E)`: Elo with
  :math:`K = u / (\alpha (1 + 2 u \kappa_0))` rating points per unit of surprise. The default
  :math:`u` is the predicted steady-state variance :math:`u^*` of a filter with drift
  :math:`q` (:func:`steady_state_variance`), which gives Elo's K for that drift.
- *Glicko* is the diagonal filter with the uncertainty integrated into the forecast: per-player
  variance :math:`RD^2`, drift :math:`c^2` per period, and :math:`E` computed with
  :math:`g(RD_j)`; its update :math:`1 / RD'^2 = 1 / RD^2 + q^2 g^2 E (1 - E)` (Glickman's
  :math:`q = \ln 10 / 400`) is exactly :math:`1 / v' = 1 / v + \kappa` with the opponent's
  variance folded into :math:`\kappa`.
- *TrueSkill* is the diagonal filter with the probit link where the Newton step is replaced by
  moment matching (assumed-density filtering): the same :math:`S = 2 \beta^2 + \sigma_a^2 + \sigma_b^2`
  structure, with :math:`v` and :math:`w` in place of :math:`g` and :math:`\kappa`.

Covariance options: ``"diagonal"`` (default; one variance per competitor; O(1) per game),
``"full"`` (one n x n covariance, so that playing a common opponent correlates two competitors;
O(n^2) per game and O(n^2) memory, impractical beyond a few thousand competitors (docs/ekf.md
has its cost), :mod:`filters.ekf_full`), ``"scalar"`` (a shared fixed variance: the steady-state
filter Elo approximates, :class:`ScalarEKF`).

**A drifting home advantage** (``SkillModel.home_drift > 0``, diagonal covariance): the home
advantage :math:`h` is one more state row, the last (:data:`HOME_ROW`), a third participant of
every game at :math:`a`'s home: :math:`J = e_a - e_b + e_h`, so :math:`S = v_a + v_b + v_h` and
:math:`h` moves by :math:`v_h g / (1 + \kappa S)`; between rating periods its variance grows by
``home_drift`` :math:`\times\,\Delta t`.

**Matches of many sides** (teams, free-for-all; diagonal and full forms): the same Newton step
on the ranking's log-likelihood in the sides' performances :math:`p = A s`, mapped to the members
by the design matrix :math:`A` (:mod:`filters._ekf_match`, ``docs/ekf.md``).

The compiled kernels of the diagonal and scalar forms are in :mod:`filters._ekf_kernels`, the
order of ``theta`` and of the state's columns in :mod:`filters._ekf_layout`. The full form
(:mod:`filters.ekf_full`) imports this module; ``EKF(covariance="full")`` finds it by the name it
registers, so this module imports no form's module.
"""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from statespace.data.matches import Matches
from statespace.model.outcome import Outcome
from statespace.model.skillmodel import SkillModel
from statespace.model import numeric as nx
from statespace.model import ranges as R

from . import _checks as C
from . import kernels as K
from ._ekf_kernels import _predict, _predict_scalar, _proba, _proba_scalar, _site, _site_scalar
from . import _ekf_match as EM
from ._ekf_layout import _MEAN, _OPEN, _SD, PARAMS
from .base import Filter
from ._ekf_shared import DRAW_ROW, GROUP_SETTINGS, HOME_ROW, SharedRows, check_group
from .state import FilterState
from ._ekf_steady import expected_curvature, steady_state_variance

__all__ = ["EKF", "ScalarEKF", "steady_state_variance", "HOME_ROW", "DRAW_ROW"]

#: the most Newton steps of the iterated EKF (they converge in a handful; a bound keeps a game's cost bounded)
MAX_ITERATIONS = 10_000
#: the default model: Elo's logistic scale (400 / ln 10 points per logistic unit), a newcomer at
#: N(1500, 350^2) as in Glicko, drift 100 points^2 per day (a 10-point sd a day, about 190 a
#: year), draws as half a win
DEFAULT_MODEL = SkillModel("logistic", 400.0 / math.log(10.0), 1500.0, 350.0**2, 100.0, "half")


class EKF(SharedRows, Filter):
    r"""Extended Kalman filter of a :class:`statespace.SkillModel` (see the module docstring).

    Parameters
    ----------
    model:
        The model filtered: link, scale, prior, drift (variance per unit of time), draw model
        and home advantage, in the model's own units. Default: logistic at Elo scale, prior
        N(1500, 350^2), drift 100 per day, draws as half a win. With ``home_drift > 0`` the
        home advantage is a latent random walk (see :class:`statespace.SkillModel`): the filter
        keeps it as one more state row (:data:`HOME_ROW`, the last row of the state, with its
        own mean and sd; :meth:`home_advantage` reads it), starting at ``model.home`` with sd 0
        (or ``initial={HOME_ROW: (mean, sd)}``) and learned from every game not on neutral
        ground, on ``a``'s side. Diagonal covariance only.
    covariance:
        ``"diagonal"``, ``"full"`` or ``"scalar"``.
    iterations:
        How many points the update is linearised at: 1 for the EKF (the prior mean); ``k > 1``
        for the iterated EKF, whose ``k``-th point is ``k - 1`` Newton steps towards the
        posterior mode (fewer if a step is below ``tol``): the Laplace approximation as ``k`` grows.
    variance:
        The fixed variance of ``covariance="scalar"``, the variance each game sees (default: the
        predicted steady-state variance ``steady_state_variance(model, predicted=True)``, that
        of a competitor who meets an equal opponent after every unit of time).
    period_days:
        Time unit of the drift when the games carry no rating periods (1: drift per day; with
        numeric times, per unit of time).
    group:
        A column of the games (an extra column such as a league, tier or competition) whose groups
        each have their own part of the home advantage and of the draw tendency
        (:mod:`filters._ekf_shared`): a group's home advantage is the common one (``model.home``,
        or the latent walk of ``home_drift > 0``) plus its own part, a latent row that starts at
        ``N(0, group_home_var)`` and walks with ``group_home_drift``, learned from its group's games
        only; the draw tendency likewise (Goals; ``group_draw_var``, ``group_draw_drift``, around the
        common tilt). Rows ``"(home advantage: <group>)"``, ``"(draw tendency: <group>)"``;
        :meth:`group_effects` reads them. A group first met in a later table, or in
        :meth:`predict_proba`, starts at the prior. Diagonal covariance only.
    group_home_var, group_home_drift, group_draw_var, group_draw_drift, group_base_var, group_base_drift:
        The groups' parts: their spread at the start and their drifts per unit of time (home and the
        goal base: rating points^2, within the model's variance range, the base's part shifting both
        sides' log-rates by itself over ``2 scale``; draws: the tilt's log-odds^2, at most 9 and
        :data:`~statespace.model.skillmodel.DRAW_DRIFT_MAX`). Default 0; with a grouping column
        some must be > 0, without one all 0. All 0 is the ungrouped filter. A goal base per group
        (Goals, its counts' own law, no draw tilt) moves each game's base, so its forecast is
        integrated per game, not read from the table (about ten times the cost).

    Accepted ranges (:mod:`statespace.model.ranges`, in units of the model's scale :math:`\alpha`): the
    model's own (:class:`~statespace.SkillModel`: variances up to :math:`(10^3\alpha)^2`, locations
    within :math:`\pm 10^6\alpha`), a threshold draw margin in :math:`[0, 10^3\alpha]`,
    ``iterations`` a whole number in ``[1, 10000]``, ``tol`` in ``(0, 1]``, ``period_days`` any
    finite number > 0, ``variance`` in :math:`(0, (10^3\alpha)^2]`. A run whose ratings end more
    than :math:`10^9\alpha` from the prior mean (a gap of a million years under a large drift) is a
    :class:`~statespace.model.ranges.ResultRangeError`.
    """

    name = "ekf"
    honours_weights = True
    columns = ("mean", "sd")
    sd_column = "sd"
    time_unit = "period"
    params = PARAMS
    _predict = _predict
    _proba = _proba
    _site = _site
    _match = EM._match
    rule = K.RULE_GAUSSIAN

    #: the class of each covariance form but the diagonal, by name: a form registers itself where
    #: it is defined (``class FullEKF(EKF, covariance="full")``), so this factory imports no module
    #: of a form (:mod:`filters.ekf_full` imports this one; the package imports both)
    _forms: ClassVar[dict[str, type]] = {}

    def __init_subclass__(cls, covariance: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if covariance is not None:
            EKF._forms[covariance] = cls

    def __new__(cls, model: SkillModel | None = None, covariance: str = "diagonal", **kwargs):
        """``EKF(covariance=...)`` builds the class of that covariance form: :class:`EKF` itself
        (diagonal), :class:`ScalarEKF` or :class:`filters.ekf_full.FullEKF`."""
        if cls is EKF and covariance in EKF._forms:
            cls = EKF._forms[covariance]
        return super().__new__(cls)

    def __init__(self, model: SkillModel | None = None, covariance: str = "diagonal", *, iterations: int = 1,
                 tol: float = 1e-12, variance: float | None = None, period_days: float = 1.0,
                 group: str | None = None, group_home_var: float = 0.0, group_home_drift: float = 0.0,
                 group_draw_var: float = 0.0, group_draw_drift: float = 0.0, group_base_var: float = 0.0,
                 group_base_drift: float = 0.0):
        if model is None:
            model = DEFAULT_MODEL
        if not isinstance(model, SkillModel):
            raise TypeError(f"model must be a statespace.SkillModel, got {type(model).__name__}")
        if covariance not in ("diagonal", "full", "scalar"):
            raise ValueError(f"covariance must be 'diagonal', 'full' or 'scalar', got {covariance!r}")
        if model.home_drift > 0 and covariance != "diagonal":
            raise ValueError(f"a latent home advantage (home_drift={model.home_drift!r} > 0) is filtered with "
                             f"covariance='diagonal' only, got covariance={covariance!r}; use home_drift=0 "
                             f"(a fixed home advantage) with {covariance!r}")
        if model.draw_drift > 0 and covariance != "diagonal":
            raise ValueError(f"a latent draw tendency (draw_drift={model.draw_drift!r} > 0) is filtered with "
                             f"covariance='diagonal' only, got covariance={covariance!r}")
        if model.two_skills and covariance != "diagonal":
            raise ValueError(f"two skills per competitor (openness_var={model.openness_var!r}, openness_drift="
                             f"{model.openness_drift!r}) are filtered with covariance='diagonal' only, got "
                             f"covariance={covariance!r}")
        if model.two_skills and iterations != 1:
            raise ValueError(f"EKF: two skills per competitor (attack and defence) take one Newton step a game; "
                             f"got iterations={iterations!r}, give iterations=1")
        group_settings = check_group(group, model, covariance, {
            "group_home_var": group_home_var, "group_home_drift": group_home_drift,
            "group_draw_var": group_draw_var, "group_draw_drift": group_draw_drift,
            "group_base_var": group_base_var, "group_base_drift": group_base_drift})
        if isinstance(iterations, (float, np.floating)) or not C.is_number(iterations):
            raise ValueError(f"EKF: iterations must be a whole number in [1, {MAX_ITERATIONS}], got {iterations!r}")
        C.whole("EKF", "iterations", iterations, 1, MAX_ITERATIONS)
        C.number("EKF", "tol", tol, 0.0, 1.0, lo_open=True)
        C.number("EKF", "period_days", period_days, 0.0, lo_open=True)
        # the model's own settings are checked by SkillModel (statespace.model.ranges, in scales)
        if isinstance(model.observation, Outcome) and model.draw_code == nx.DRAW_THRESHOLD:
            C.length("EKF", "the threshold draw margin", model.draw.theta, model.scale, zero=True)
        self.skill_model = model
        self.covariance = covariance
        self.iterations = int(iterations)
        self.tol = float(tol)
        self.period_days = float(period_days)
        self.group = group
        for k, v in group_settings.items():
            setattr(self, k, v)
        self._variance_given = variance is not None
        if covariance == "scalar" and not isinstance(model.observation, Outcome):
            raise ValueError(f"covariance='scalar' freezes the curvature of a win/draw/loss (Outcome) model; "
                             f"the model observes {type(model.observation).__name__}: use 'diagonal' or 'full'")
        if covariance == "scalar":
            if variance is None:  # a huge drift's steady state is beyond the variances the kernels keep
                variance = min(steady_state_variance(model, predicted=True), (R.SD_SCALES * model.scale) ** 2)
            R.variance("EKF", "variance", variance, model.scale, zero=False)
        elif variance is not None:
            raise ValueError("variance= is the fixed variance of covariance='scalar' only")
        self.variance = None if variance is None else float(variance)
        if self.iterations > 1:
            self.name = type(self).name + "_iterated"

    def _describe(self) -> str:
        m = self.skill_model
        parts = [m.link if self._outcome else repr(m.observation), f"drift={m.drift:g}",
                 f"covariance={self.covariance!r}"]
        if self.iterations > 1:
            parts.append(f"iterations={self.iterations}")
        if m.home:
            parts.append(f"home={m.home:g}")
        if m.home_drift:
            parts.append(f"home_drift={m.home_drift:g}")
        if m.draw_drift:
            parts.append(f"draw_drift={m.draw_drift:g}")
        if m.two_skills:
            parts.append(f"openness_var={m.openness_var:g}, openness_drift={m.openness_drift:g}")
        if self.group is not None:
            parts.append(f"group={self.group!r}")
            parts.extend(f"{k}={getattr(self, k):g}" for k in GROUP_SETTINGS if getattr(self, k))
        return ", ".join(parts)

    @property
    def model(self) -> SkillModel:
        """The filtered :class:`statespace.SkillModel`."""
        return self.skill_model

    @property
    def columns(self) -> tuple[str, ...]:
        """``mean`` and ``sd``; with two skills per competitor (:attr:`SkillModel.two_skills`) then
        the openness (attack minus defence) and its sd."""
        return ("mean", "sd", "openness", "openness_sd") if self.skill_model.two_skills else ("mean", "sd")

    @property
    def scratch_width(self) -> int:
        """Two Gaussian beliefs' accumulators with two skills per competitor (:func:`filters.kernels.second_site`)."""
        return 2 * K.SCRATCH_WIDTH if self.skill_model.two_skills else K.SCRATCH_WIDTH

    @property
    def shown_columns(self) -> tuple[str, ...]:
        return ("openness", "openness_sd") if self.skill_model.two_skills else ()

    def derived_columns(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """With two skills per competitor, ``attack = (mean - prior_mean + openness) / 2`` and
        ``defence = (mean - prior_mean - openness) / 2``: a's goals have log-rate
        ``base + (attack_a - defence_b + home / 2) / scale`` (:class:`statespace.SkillModel`)."""
        if not self.skill_model.two_skills:
            return {}
        level = values[:, _MEAN] - self.skill_model.prior_mean
        return {"attack": 0.5 * (level + values[:, _OPEN]), "defence": 0.5 * (level - values[:, _OPEN])}

    # settings: the model's numbers are tuned through the model
    _MODEL_PARAMS = ("drift", "prior_var", "home", "draw_param", "reversion", "home_drift", "draw_drift",
                     "openness_var", "openness_drift")
    _param_aliases = {"model": "skill_model"}

    def get_params(self):
        params = super().get_params()
        if not self._variance_given:
            params["variance"] = None  # recomputed from the (possibly new) drift
        return params

    def param_value(self, name: str) -> float:
        if name == "draw_param":
            return self.skill_model.draw.theta
        if name in self._MODEL_PARAMS:
            return getattr(self.skill_model, name)
        return super().param_value(name)

    def with_params(self, **changes) -> "EKF":
        """Settings of the filter or numbers of its model (``drift``, ``prior_var``, ``home``,
        ``draw_param``, ``reversion``, ``home_drift``, ``draw_drift``, ``openness_var``,
        ``openness_drift``), or a whole new ``model``."""
        model = changes.pop("model", self.skill_model)
        own = {k: v for k, v in changes.items() if k not in self._MODEL_PARAMS}
        fields = {k: float(v) for k, v in changes.items() if k in self._MODEL_PARAMS and k != "draw_param"}
        if fields:
            model = dataclasses.replace(model, **fields)
        if "draw_param" in changes:
            model = dataclasses.replace(model, draw=type(model.draw)(float(changes["draw_param"])))
        return super().with_params(model=model, **own)

    def tunable(self, games) -> dict[str, tuple[float, float]]:
        """``drift`` in [1e-6, 10] scale^2 per unit of time, ``prior_var`` in [1e-3, 100] scale^2,
        ``home`` in [-5, 5] scale where some game is not neutral, ``reversion`` in [1e-6, 1] per
        unit of time when the model has one, ``home_drift`` in [1e-9, 0.1] scale^2 per unit of time
        when the model has a latent home advantage, ``draw_drift`` in [1e-10, 1e-2] with a latent draw
        tendency, ``openness_var`` in [1e-4, 10] scale^2 and ``openness_drift`` in [1e-8, 1] scale^2 per
        unit of time with two skills per competitor, and the draw model's
        parameter (threshold margin in [1e-3, 5] scale, Davidson nu in [1e-3, 20]) where the games
        have draws."""
        s2 = self.skill_model.scale ** 2
        out = {"drift": (1e-6 * s2, 10.0 * s2), "prior_var": (1e-3 * s2, 100.0 * s2)}
        if not games.neutral.all():
            out["home"] = (-5.0 * self.skill_model.scale, 5.0 * self.skill_model.scale)
        if self.skill_model.reversion > 0:  # opted in: fit the mean reversion too
            out["reversion"] = (1e-6, 1.0)
        if self.skill_model.home_drift > 0:  # opted in: fit how fast the home advantage moves
            out["home_drift"] = (1e-9 * s2, 0.1 * s2)
        if self.skill_model.draw_drift > 0:  # opted in: fit how fast the draw tendency moves
            out["draw_drift"] = (1e-10, 1e-2)
        out.update(self._group_box())
        if self.skill_model.two_skills:  # opted in: fit the openness's spread and how fast it moves
            out["openness_var"] = (1e-4 * s2, 10.0 * s2)
            out["openness_drift"] = (1e-8 * s2, 1.0 * s2)
        if self._outcome and np.any(games.score == 0.5):
            if self.skill_model.draw_code == nx.DRAW_THRESHOLD:
                out["draw_param"] = (1e-3 * self.skill_model.scale, 5.0 * self.skill_model.scale)
            elif self.skill_model.draw_code == nx.DRAW_DAVIDSON:
                out["draw_param"] = (1e-3, 20.0)
        return out

    @property
    def _outcome(self) -> bool:
        """Whether the model observes win/draw/loss (:class:`statespace.Outcome`)."""
        return isinstance(self.skill_model.observation, Outcome)

    def check_games(self, games) -> None:
        """A draw cannot be rated under draw model 'none'; an observation of the two sides'
        scores (``Margin``, ``Goals``) needs the columns ``score_a`` and ``score_b``."""
        super().check_games(games)
        obs = self.skill_model.observation
        if obs.needs_scores and not games.has_scores:
            raise ValueError(f"{self.name}: the model observes {type(obs).__name__} but the games have no "
                             f"'score_a' and 'score_b' columns (each side's points or goals)")
        if self._outcome and self.skill_model.draw_code == nx.DRAW_NONE and np.any(games.score == 0.5):
            rows = games.row[np.flatnonzero(games.score == 0.5)[:5]].tolist()
            raise ValueError(f"{self.name}: the model's draw model is 'none' but the games have draws "
                             f"(column 'score', rows {rows}...); use draw='half', 'threshold' or 'davidson'")

    def kernel_value(self, name: str) -> float:
        m = self.skill_model
        if name in ("drift", "home", "reversion", "prior_mean", "home_drift", "draw_drift", "openness_drift"):
            return getattr(m, name)
        if name == "tilt_at":
            tilted = m.draw_drift > 0 or "draw" in self._block()
            return float(getattr(type(m.observation), "tilt_at", -1)) if tilted else -1.0
        if name == "shift_at":
            return float(type(m.observation).shift_at) if m.two_skills or "base" in self._block() else -1.0
        if name == "two_skills":
            return 1.0 if m.two_skills else 0.0
        if name == "groups":
            return 0.0  # a grouped run counts its state's (theta_for)
        if name in ("group_home", "group_draw", "group_base"):
            return 1.0 if name[6:] in self._block() else 0.0
        if name == "fixed_var":
            return self.variance or 0.0
        if name == "kappa0":
            return expected_curvature(m) if self.covariance == "scalar" else 0.0
        if name.startswith("match_"):
            return EM.match_value(m, name)
        return super().kernel_value(name)

    def match_forecast(self):
        """Plackett-Luce (logistic link) or the Thurstonian chain (probit; Margin's score difference)
        at :math:`\\beta = \\alpha / \\sqrt 2` (Margin: :math:`2 \\beta^2 = \\sigma^2`): the observation
        the match update linearises (:mod:`filters._ekf_match` says why, and which models refuse)."""
        return EM.match_forecast(self.skill_model, self.iterations)

    def run(self, games, initial=None, state=None):
        """:meth:`filters.base.Filter.run`; a table of matches is first checked for matches its
        observation cannot rate (:func:`filters._ekf_match.check_table`)."""
        if isinstance(games, Matches) and self.skill_model.draw_drift > 0:
            raise ValueError(f"{self.name}: a latent draw tendency (draw_drift > 0) is filtered on games of two sides "
                             f"only; give draw_drift=0 to rate matches of many sides")
        if isinstance(games, Matches) and self.group is not None:
            raise ValueError(f"{self.name}: a home advantage and draw tendency per group (group={self.group!r}) are "
                             f"filtered on games of two sides only; give group=None to rate matches of many sides")
        if isinstance(games, Matches) and self.skill_model.two_skills:
            raise ValueError(f"{self.name}: two skills per competitor (attack and defence) are filtered on games of "
                             f"two sides only; give openness_var=0 and openness_drift=0 to rate matches of many sides")
        if isinstance(games, Matches) and type(self)._match is not None:
            EM.check_table(self.name, self.skill_model, games)
        return super().run(games, initial, state)

    def initial_row(self, value) -> np.ndarray:
        r"""A starting value within the settings' ranges (in scales :math:`\alpha`, the model's
        ``scale``): a mean within :math:`\pm 10^6\alpha`, an sd in :math:`(0, 10^3\alpha]`."""
        row = super().initial_row(value)
        alpha = self.skill_model.scale
        C.location(self.name, "initial mean", row[_MEAN], alpha)
        C.length(self.name, "initial sd", row[_SD], alpha)
        if self.skill_model.two_skills:
            C.location(self.name, "initial openness", row[_OPEN], alpha)
            C.length(self.name, "initial openness sd", row[_OPEN + 1], alpha, zero=True)
        return row

    def prior_row(self) -> np.ndarray:
        m = self.skill_model
        sd = math.sqrt(self.variance) if self.covariance == "scalar" else math.sqrt(m.prior_var)
        if m.two_skills:  # the openness starts at N(0, openness_var)
            return np.array([m.prior_mean, min(sd, C.SD_MAX), 0.0, min(math.sqrt(m.openness_var), C.SD_MAX)])
        return np.array([m.prior_mean, min(sd, C.SD_MAX)])  # a prior variance above 1e300 acts as 1e300

    def covariance_matrix(self, state: FilterState) -> np.ndarray:
        """The competitors' posterior covariance: here its diagonal."""
        return np.diag(state.values[:, _SD] ** 2)

    @property
    def gain(self) -> float:
        r"""Scalar filter: the fixed gain :math:`u / (1 + 2 u \kappa_0)`, :math:`u` = :attr:`variance`
        (skill units per unit of log-likelihood gradient). With the logistic link at scale
        :math:`\alpha` and draws as half a win the gradient is :math:`(y - E) / \alpha`, so this filter is
        Elo with :math:`K` = ``gain`` :math:`/ \alpha`."""
        if self.covariance != "scalar":
            raise ValueError("gain is defined for covariance='scalar'")
        return self.variance / (1.0 + 2.0 * self.variance * expected_curvature(self.skill_model))


class ScalarEKF(EKF, covariance="scalar"):
    """``EKF(model, covariance="scalar")``: every competitor keeps the same fixed variance and the
    curvature is frozen at its steady-state value, so the gain is fixed: Elo's filter (see the
    module docstring and :attr:`gain`)."""

    name = "ekf_scalar"
    _predict = _predict_scalar
    _proba = _proba_scalar
    _site = _site_scalar
    _match = None  # a match of many sides is rated by the diagonal and full forms
    rule = K.RULE_SHIFT


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find these.
METHODS = {"ekf": EKF}
