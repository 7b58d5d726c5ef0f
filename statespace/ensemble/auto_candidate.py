"""The method of one :func:`statespace.auto` candidate: :class:`Candidate`, the EKF of a
:class:`Variant`'s model on margin-weighted games, and its untuned start on the choice games."""

from __future__ import annotations

import dataclasses
import math
from typing import ClassVar

import numpy as np

from statespace.ensemble.auto_variant import Variant
from statespace.data.games import Games
from statespace.model.goals import BASE_MAX, BASE_MIN, Goals
from statespace.model.margin import Margin
from statespace.model.skillmodel import ELO_SCALE, SkillModel
from statespace.methods.settings import Settings

#: starting values of the tuning, in rating points (Outcome and Goals; Margin scales them to the
#: margins' spread): prior N(1500, 200^2), drift 10 per day, home 50, reversion 1e-3 per day,
#: home drift 1 per day
_PRIOR_SD, _DRIFT, _HOME, _REVERSION, _HOME_DRIFT = 200.0, 10.0, 50.0, 1e-3, 1.0
#: the Goals dispersion's start and upper bound: variance lambda + kappa lambda^2, so 0.1 adds a
#: tenth of a side's mean squared (negative binomial of size 10), 2 far beyond football's
DISPERSION_START, DISPERSION_MAX = 0.1, 2.0
#: Dixon and Coles' rho: start and bound of its tuning (fitted football values lie near -0.1;
#: Dixon and Coles 1997: -0.13), a quarter of a draw's chance either way between level sides
RHO_START, RHO_BOUND = -0.05, 0.5
#: the latent draw tendency's drift (log-odds^2 per day) where a variant has drifting draws: a
#: twentieth of a unit of log-odds a decade
DRAW_DRIFT_START = 1e-6
#: two skills: the openness's (attack minus defence) starting sd, 40 rating points (a side's goal
#: rate e^(40 / 347) = 1.12 times a level side's), and drift, 1 point^2 a day (about 19 points a year)
OPENNESS_SD_START = 40.0
OPENNESS_DRIFT_START = 1.0
#: effects by group: the start of the spread of the groups' parts, a 30-point sd of the home
#: advantage and a 0.2 sd of the log of the draws' odds (a factor of 1.22 either way)
GROUP_HOME_SD_START, GROUP_DRAW_SD_START = 30.0, 0.2
#: the inflation of the draws: start (one game in twenty a draw beyond the counts' own) and bound
INFLATION_START, INFLATION_BOUND = 0.05, 0.5
#: each law of the counts (:data:`statespace.ensemble.auto_variant.COUNTS`): the Goals settings it
#: tunes besides ``base``, with their starts and search boxes
_LAWS = {"negative binomial": {"dispersion": (DISPERSION_START, (0.0, DISPERSION_MAX))},
         "dixon-coles": {"rho": (RHO_START, (-RHO_BOUND, RHO_BOUND))},
         "inflated": {"dispersion": (DISPERSION_START, (0.0, DISPERSION_MAX)),
                      "inflation": (INFLATION_START, (0.0, INFLATION_BOUND))}}


def _raw_weights(games: Games, power: float) -> np.ndarray:
    """Margin weights before scaling: the formula of :meth:`Games.with_weights` (``m = max(|score_a
    - score_b|, 1)``, ``log(1 + m)`` at ``p = 0``, else ``((1 + m)^p - 1) / p``)."""
    m = np.maximum(np.abs(games.score_a - games.score_b), 1.0)
    return np.log1p(m) if power == 0 else np.expm1(power * np.log1p(m)) / power


class Candidate(Settings):
    """The EKF of one :class:`Variant`'s model, on margin-weighted games when the variant has a
    power: the method :func:`auto` returns as its choice (``AutoFit.method``).

    A filter's face (``fit``, ``run``, ``tune``, ``model``); ``run(games)`` weights the games by
    their margins (with the scale ``weight_mean`` fixed when the choice was made) and runs
    ``filters.EKF(model)`` through them. Besides the EKF's settings, :meth:`tunable` has the
    observation's own: Margin's ``sd`` (and ``draw_width`` where the games have draws), Goals'
    ``base`` and ``dispersion``.
    """

    online: ClassVar[bool] = True
    _OBS_PARAMS = ("sd", "draw_width", "base", "dispersion", "rho", "inflation")

    def __init__(self, variant: Variant, model: SkillModel, weight_mean: float | None = None,
                 group_settings: dict | None = None):
        if not isinstance(variant, Variant):
            raise TypeError(f"variant must be a statespace.ensemble.auto.Variant, got {type(variant).__name__}")
        if not isinstance(model, SkillModel):
            raise TypeError(f"model must be a statespace.SkillModel, got {type(model).__name__}")
        self.variant = variant
        self.skill_model = model
        self.weight_mean = None if weight_mean is None else float(weight_mean)
        self.group_settings = dict(group_settings or {})
        self.name = f"ekf ({variant.label})"
        from filters import EKF  # statespace.auto sits on top of the filters (see its docstring)

        self.ekf = EKF(model, group=variant.group, **self.group_settings)

    _param_aliases = {"model": "skill_model"}

    @property
    def model(self) -> SkillModel:
        """The filtered :class:`statespace.SkillModel` (rating points; Margin: points of the score)."""
        return self.skill_model

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={fmt(v)}" for k, v in self.values().items())
        return f"Candidate({self.variant.label}: {shown})"

    def values(self) -> dict[str, float]:
        """The model's numbers that the variant tunes, by name (for tables and messages)."""
        m = self.skill_model
        out = {"drift": m.drift, "prior_var": m.prior_var}
        if self.variant.home != "none":
            out["home"] = m.home
        if self.variant.home == "drifting":
            out["home_drift"] = m.home_drift
        if self.variant.draws == "drifting":
            out["draw_drift"] = m.draw_drift
        if self.variant.skills == 2:
            out["openness_var"] = m.openness_var
            out["openness_drift"] = m.openness_drift
        if self.variant.reversion:
            out["reversion"] = m.reversion
        obs = m.observation
        if isinstance(obs, Margin):
            out["sd"] = obs.sd
            out["draw_width"] = obs.draw_width
        elif isinstance(obs, Goals):
            out["base"] = obs.base
            out.update({k: getattr(obs, k) for k in _LAWS[self.variant.counts]})
        elif type(m.draw).__name__ == "Threshold":
            out["draw_param"] = m.draw.margin
        if self.variant.power is not None:
            out["power"] = self.variant.power
        out.update({k: v for k, v in self.group_settings.items() if v > 0})
        return out

    # games
    def weighted(self, games: Games) -> Games:
        """``games`` with this variant's margin weights (unchanged when it has none)."""
        if self.variant.power is None:
            return games
        if not games.has_scores:
            raise ValueError(f"{self.name}: margin weights need each side's score (columns 'score_a' and "
                             f"'score_b'); these games have none")
        if self.weight_mean is None:
            raise ValueError(f"{self.name}: the margin weights' scale is not set (weight_mean); it is fixed on "
                             f"the games the choice is made on")
        return games.with_weights(weights=_raw_weights(games, self.variant.power) / self.weight_mean)

    def with_weight_scale(self, games: Games) -> "Candidate":
        """This candidate with its margin weights scaled to mean 1 on ``games``."""
        if self.variant.power is None:
            return self
        if not games.has_scores:
            raise ValueError(f"{self.name}: margin weights need each side's score (columns 'score_a' and "
                             f"'score_b'); these games have none")
        return Candidate(self.variant, self.skill_model, float(np.mean(_raw_weights(games, self.variant.power))),
                         self.group_settings)

    def fit(self, games: Games, initial=None):
        """Run through ``games`` (:meth:`run`)."""
        return self.run(games, initial=initial)

    def run(self, games: Games, initial=None, state=None):
        """``filters.EKF(model).run`` on the weighted games: a ``FilterRun`` whose ``proba`` is
        aligned with ``games``' rows."""
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        return self.ekf.run(self.weighted(games), initial=initial, state=state)

    # settings
    def tunable(self, games: Games) -> dict[str, tuple[float, float]]:
        """The EKF's (:meth:`filters.EKF.tunable`) and the observation's: Margin ``sd`` in
        ``[0.05, 5]`` times the model's scale (the margins' sd when the choice set it) and
        ``draw_width`` in ``[0.001, 1]`` times it where the games have draws; Goals ``base`` within
        3 of its start (and within Goals' own range) and, by the variant's law of the counts,
        ``dispersion`` in ``[0, DISPERSION_MAX]`` (0: Poisson), Dixon and Coles' ``rho`` in
        ``[-RHO_BOUND, RHO_BOUND]``, the draws' ``inflation`` in ``[0, INFLATION_BOUND]``."""
        out = dict(self.ekf.tunable(games))
        obs = self.skill_model.observation
        s = self.skill_model.scale
        if isinstance(obs, Margin):
            out["sd"] = (0.05 * s, 5.0 * s)
            if obs.draw_width > 0 and np.any(games.score == 0.5):
                out["draw_width"] = (1e-3 * s, 1.0 * s)
        elif isinstance(obs, Goals):
            out["base"] = (max(obs.base - 3.0, BASE_MIN), min(obs.base + 3.0, BASE_MAX))  # within Goals' range
            out.update({k: box for k, (_, box) in _LAWS[self.variant.counts].items()})
        return out

    def param_value(self, name: str) -> float:
        if name in self.group_settings:
            return float(self.group_settings[name])
        if name in self._OBS_PARAMS:
            return float(getattr(self.skill_model.observation, name))
        return float(self.ekf.param_value(name))

    def with_params(self, **changes) -> "Candidate":
        """A new candidate with some of the model's numbers changed (the EKF's names, and ``sd``,
        ``draw_width``, ``base``, ``dispersion``, ``rho``, ``inflation`` of the observation), or a new ``model``/``variant``/``weight_mean``."""
        variant = changes.pop("variant", self.variant)
        weight_mean = changes.pop("weight_mean", self.weight_mean)
        group_settings = {**self.group_settings, **changes.pop("group_settings", {}),
                          **{k: float(changes.pop(k)) for k in list(changes) if k in self.group_settings}}
        model = changes.pop("model", self.skill_model)
        obs_changes = {k: changes.pop(k) for k in list(changes) if k in self._OBS_PARAMS}
        if obs_changes:
            obs = model.observation
            unknown = [k for k in obs_changes if not hasattr(obs, k)]
            if unknown:
                raise ValueError(f"{self.name}: the {type(obs).__name__} observation has no {unknown[0]!r}")
            model = dataclasses.replace(model, observation=dataclasses.replace(
                obs, **{k: float(v) for k, v in obs_changes.items()}))
        if changes:
            model = self.ekf.with_params(model=model, **changes).model
        return Candidate(variant, model, weight_mean, group_settings)

    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None, maxiter: int = 200,
             burn_in: float = 0.0, standard_errors: bool = True, start: str = "grid") -> "Candidate":
        """:func:`filters.tuning.tune` of this candidate (the margin weights' scale set on ``games``
        first, when not set yet); the result carries ``tuning``."""
        from filters.tuning import tune

        method = self if self.weight_mean is not None else self.with_weight_scale(games)
        return tune(method, games, params, bounds, objective=objective, maxiter=maxiter, burn_in=burn_in,
                    standard_errors=standard_errors, start=start)[0]


def fmt(v) -> str:
    """A number for tables and messages: 4 significant digits, 3 where it is printed in e-notation."""
    v = float(v)
    return f"{v:.3g}" if v != 0 and (abs(v) < 1e-2 or abs(v) >= 1e4) else f"{v:.4g}"


def start_candidate(v: Variant, games: Games, info: dict) -> Candidate:
    """The untuned candidate of variant ``v``, with starting values from ``games``: logistic at the
    Elo scale, prior N(1500, 200^2), drift 10 per day, home 50, reversion 1e-3 per day, home drift
    1 per day; the threshold draw margin at which equal sides draw as often as in ``games``
    (draws as half a win when they have none). Margin: skills in points, the model's scale the
    margins' sd ``s`` (which sets the tuning bounds), the starting values scaled by
    ``s / 173.7``, the observation's sd ``s`` and draw width 0.5 (0 without draws). Goals: the
    base rate the mean count per side, and its law's settings from their starts: dispersion
    :data:`DISPERSION_START` (negative binomial), Dixon and Coles' rho :data:`RHO_START`
    (Poisson), and with inflated draws the inflation :data:`INFLATION_START`; drifting draws, the
    draw tendency's drift :data:`DRAW_DRIFT_START`; two skills, the openness's sd
    :data:`OPENNESS_SD_START` and drift :data:`OPENNESS_DRIFT_START`."""
    draws = info["draws"]
    home = _HOME if v.home != "none" else 0.0
    if v.observation == "margin":
        y = games.score_a - games.score_b
        s = float(np.std(y)) if np.std(y) > 0 else 1.0
        r = s / ELO_SCALE
        obs = Margin(sd=s, draw_width=0.5 if draws else 0.0)
        model = SkillModel("logistic", s, 0.0, (_PRIOR_SD * r) ** 2, _DRIFT * r * r, home=home * r,
                           reversion=_REVERSION if v.reversion else 0.0,
                           home_drift=_HOME_DRIFT * r * r if v.home == "drifting" else 0.0, observation=obs)
    else:
        if v.observation == "goals":
            mean = float(np.mean(np.concatenate([games.score_a, games.score_b])))
            base = min(max(math.log(max(mean, 1e-300)), BASE_MIN), BASE_MAX)  # within Goals' range
            obs = Goals(base=base, **{k: start for k, (start, _) in _LAWS[v.counts].items()})
            draw = "none"
        else:
            obs = None
            if draws:
                p = min(max(float(np.mean(games.score == 0.5)), 1e-3), 0.9)
                q = (1.0 + p) / 2.0
                draw = ("threshold", ELO_SCALE * math.log(q / (1.0 - q)))  # P(draw | d = 0) = p
            else:
                draw = "half"
        kwargs = {"observation": obs} if obs is not None else {"draw": draw}
        model = SkillModel("logistic", ELO_SCALE, 1500.0, _PRIOR_SD**2, _DRIFT, home=home,
                           reversion=_REVERSION if v.reversion else 0.0,
                           home_drift=_HOME_DRIFT if v.home == "drifting" else 0.0,
                           draw_drift=DRAW_DRIFT_START if v.draws == "drifting" else 0.0,
                           openness_var=OPENNESS_SD_START**2 if v.skills == 2 else 0.0,
                           openness_drift=OPENNESS_DRIFT_START if v.skills == 2 else 0.0, **kwargs)
    r = model.scale / ELO_SCALE  # Margin's skills are in points of the score
    group = {} if v.group is None else {"group_home_var": (GROUP_HOME_SD_START * r) ** 2 if "home" in v.group_parts()
                                        else 0.0,
                                        "group_draw_var": GROUP_DRAW_SD_START ** 2 if "draw" in v.group_parts() else 0.0}
    return Candidate(v, model, group_settings=group).with_weight_scale(games)
