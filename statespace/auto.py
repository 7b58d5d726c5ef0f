"""``statespace.auto``: the best forecast in one call.

``auto(games)`` chooses, on the games it is given and on nothing else, among the variants of the
extended Kalman filter's model that matter on real data, tunes each candidate by its
one-step-ahead likelihood, and returns the chosen filter fitted on the games, with a table of
every candidate and the reason for the choice::

    fit = statespace.auto(train)          # choose on train, fit on train
    print(fit.summary())                  # what was chosen, and why (a table of every candidate)
    fit.table                             # the candidates and their training scores (DataFrame)
    fit.predict_proba(test)               # frozen forecasts, as any fitted method
    fit.method.run(games).proba           # the chosen (tuned) filter, online through any games

    statespace.auto(games, split=0.9)     # choose on the first 90% (by time), fit on all:
                                          # the one-step-ahead forecasts of the last 10% are honest

**What is compared, and on what.** A candidate is an EKF (:class:`filters.EKF`, logistic link at
the Elo scale, diagonal covariance, time in days) of one model variant (:class:`Variant`):

- the observation: :class:`~statespace.Outcome` (win/draw/loss) always; where the games have
  ``score_a`` and ``score_b``, :class:`~statespace.Margin` (the score difference, Gaussian; its
  sd, and its draw width where there are draws, tuned); on request (``observations=``, see
  below), where the scores are goal counts (whole numbers, at most :data:`GOALS_MAX_MEAN` a side
  on average: football, not the NFL's points), :class:`~statespace.Goals` (each side's count,
  Poisson; its base rate tuned);
- the home advantage: none when every game is neutral; otherwise fixed
  (``SkillModel.home``) or drifting (``SkillModel.home_drift``: a latent random walk);
- mean reversion (``SkillModel.reversion``) off or on;
- margin-of-victory weights (Outcome only, games with scores): unweighted, or each game's
  likelihood weighted by the Box–Cox power ``p`` of ``1 + margin``
  (:meth:`statespace.Games.with_weights`; ``p = 0`` is ``log(1 + margin)``), divided by the mean
  weight of the games the choice is made on (kept, so held-out games get the same scale);
- the draw model is not a choice: a threshold where the games have draws (its margin tuned),
  draws as half a win otherwise (on draw-free games the same model as none, and a draw that
  comes later is still rated).

Every candidate is tuned (:func:`filters.tuning.tune`: its drift, prior variance, home
advantage, reversion, home drift, draw margin and observation parameters, by L-BFGS-B) to
minimise one objective over the games after a burn-in (default: the first 30% are run through
but not scored), and the candidates are compared on that same objective: the three-outcome log
loss ``log_loss_3`` (the proper one-step-ahead log-likelihood of win/draw/loss) when the games
have draws, the expected-score ``log_loss`` (the same likelihood when there are no draws)
otherwise; the lowest wins (see the tie rule below). The table says which objective.

**The default search** is staged, to keep the number of tunings small (at most 9):

1. *structure*: the Outcome EKF, unweighted, with every home advantage that applies (fixed,
   drifting; none where every game is neutral) with and without mean reversion: 1, 2 or 4
   candidates; the best of these fixes the home advantage and reversion of the next stages;
2. *margin weights* (games with scores): that structure with weights of each power in
   ``powers`` (default 0, 0.5, 1): 3 candidates;
3. *observation* (games with scores): that structure observed through Margin (and through
   Goals, when ``observations`` asks for it and the scores are goal counts): 1 (or 2) candidates.

The chosen candidate is the best of all stages. Candidates whose training scores are within
:data:`TIE` of the best are level, and the one with the fewest tuned settings among them is
taken (in every stage): a drifting home advantage tuned to no drift, or a reversion tuned to its
lower bound, buys nothing and is not chosen. The margin-weight candidates start their tuning
from the chosen structure's tuned values. Give ``candidates=[Variant(...), ...]`` to compare an
explicit list instead, or narrow the search with ``observations=``, ``powers=``,
``drifting_home=`` and ``reversion=``.

Cost: one tuning per candidate, a few dozen to a few hundred passes of the compiled filter each
(measured on a shared 2-core machine, ``benchmarks/real_data.py``: the whole choice took 4–8 s on
the NFL's 15,129 training games, 8 candidates; 21–37 s on international football's 44,568, 8; 115
s on English football's 187,225, 8; 2 s on ATP's 174,352, 2); progress goes to stderr once the
work has taken more than a few seconds (``progress=True`` always, ``False`` never).

Goals is opt-in (``observations=("outcome", "margin", "goals")``) for its cost, not its
forecasts: its win/draw/loss forecast integrates the skill uncertainty by quadrature over about
forty Skellam sums, so a pass of the filter costs about 90 µs a game against 0.2–0.4 µs for
Outcome and Margin, and its tuning on international football's 44,568 training games took 8
minutes (where it scored 0.0008 better than Margin, three-outcome log loss on the training
games).

**No peeking.** ``auto`` sees only the games it is given (with ``split``, only the first part of
them for the choice). In :func:`statespace.compare` use the method object :class:`Auto`:

- ``compare([Auto(), ...], games, split=0.9)`` (frozen): ``Auto().fit(train)`` chooses on the
  training part;
- ``compare([Auto(), ...], games, split=0.9, mode="online", tune=True)``: ``compare`` hands
  ``Auto.tune`` the training part, which returns the chosen, tuned filter; ``compare`` then runs
  it online through all games. ``Auto(split=0.9)`` with the same split as ``compare`` does the
  same without ``tune=True``; ``Auto()`` without a split refuses to run online (it would choose on
  the held-out games).

Like :mod:`statespace.cli` and :mod:`statespace.registry`, this module sits on top of
everything: it imports the sibling package ``filters`` (when a candidate is built), and nothing
below it in ``statespace`` imports it (the package names ``statespace.auto`` and
``statespace.Auto`` load it on first use; the command line's ``--auto`` uses it).
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np
import pandas as pd

from . import metrics
from .games import Games
from .goals import Goals
from .margin import Margin
from .model import ELO_SCALE, SkillModel
from .settings import Settings, TuneResult

__all__ = ["auto", "Auto", "AutoFit", "Variant", "Candidate", "AutoResult", "DEFAULT_POWERS", "BURN_IN",
           "OBSERVATIONS", "DEFAULT_OBSERVATIONS", "MIN_GAMES", "TIE", "GOALS_MAX_MEAN"]

#: Box–Cox powers of ``1 + margin`` tried for the margin weights by default (0: ``log(1 + margin)``)
DEFAULT_POWERS = (0.0, 0.5, 1.0)
#: share of the earliest games run through but left out of the objective (tuning and choice)
BURN_IN = 0.3
#: the observation models a candidate may use
OBSERVATIONS = ("outcome", "margin", "goals")
#: those the default search tries (where the games allow): Goals is opt-in, see the module docstring
DEFAULT_OBSERVATIONS = ("outcome", "margin")
#: the Goals observation is a candidate where the scores average at most this many a side
GOALS_MAX_MEAN = 5.0
#: fewest games ``auto`` chooses on
MIN_GAMES = 50
#: seconds of work after which progress is reported on stderr (``progress=None``)
PROGRESS_AFTER = 5.0
#: candidates whose training scores are within this of the best (nats per game) are level: the
#: one with the fewest tuned settings among them is chosen (a drifting home advantage whose drift
#: was tuned to its lower bound is the fixed one, and costs a setting)
TIE = 1e-5

#: starting values of the tuning, in rating points (Outcome and Goals; Margin scales them to the
#: margins' spread): prior N(1500, 200^2), drift 10 per day, home 50, reversion 1e-3 per day,
#: home drift 1 per day
_PRIOR_SD, _DRIFT, _HOME, _REVERSION, _HOME_DRIFT = 200.0, 10.0, 50.0, 1e-3, 1.0
_HOMES = ("none", "fixed", "drifting")


# ---------------------------------------------------------------------------------------- variants
@dataclass(frozen=True)
class Variant:
    """One candidate model of :func:`auto`.

    ``observation``: ``"outcome"``, ``"margin"`` or ``"goals"``; ``home``: ``"none"``, ``"fixed"``
    or ``"drifting"``; ``reversion``: mean reversion on; ``power``: the Box–Cox power of the margin
    weights (``None``: unweighted games; Outcome only)."""

    observation: str = "outcome"
    home: str = "fixed"
    reversion: bool = False
    power: float | None = None

    def __post_init__(self) -> None:
        if self.observation not in OBSERVATIONS:
            raise ValueError(f"Variant: observation must be one of {', '.join(OBSERVATIONS)}, got {self.observation!r}")
        if self.home not in _HOMES:
            raise ValueError(f"Variant: home must be one of {', '.join(_HOMES)}, got {self.home!r}")
        if not isinstance(self.reversion, (bool, np.bool_)):
            raise ValueError(f"Variant: reversion must be True or False, got {self.reversion!r}")
        object.__setattr__(self, "reversion", bool(self.reversion))
        if self.power is not None:
            if self.observation != "outcome":
                raise ValueError(f"Variant: margin weights (power={self.power!r}) apply to the outcome observation; "
                                 f"the {self.observation} observation reads the margin itself")
            if not (isinstance(self.power, (int, float, np.integer, np.floating)) and math.isfinite(self.power)):
                raise ValueError(f"Variant: power must be a finite number or None, got {self.power!r}")
            object.__setattr__(self, "power", float(self.power))

    @property
    def label(self) -> str:
        """Short name: ``"outcome, drifting home, reversion, margin weights p=0.5"``."""
        parts = [self.observation]
        if self.home != "none":
            parts.append(f"{self.home} home")
        if self.reversion:
            parts.append("reversion")
        if self.power is not None:
            parts.append(f"margin weights p={self.power:g}")
        return ", ".join(parts)


def _raw_weights(games: Games, power: float) -> np.ndarray:
    """Margin weights before scaling: the formula of :meth:`Games.with_weights` (``m = max(|score_a
    - score_b|, 1)``, ``log(1 + m)`` at ``p = 0``, else ``((1 + m)^p - 1) / p``)."""
    m = np.maximum(np.abs(games.score_a - games.score_b), 1.0)
    return np.log1p(m) if power == 0 else np.expm1(power * np.log1p(m)) / power


def _goal_counts(games: Games) -> bool:
    """Whether the scores are goal counts: whole numbers >= 0, at most :data:`GOALS_MAX_MEAN` a side
    on average (points in the tens are far from Poisson, and the Goals forecast's quadrature over
    the skill uncertainty costs in proportion to the rates)."""
    sides = np.concatenate([games.score_a, games.score_b])
    return bool(np.all(sides >= 0) and np.all(sides == np.round(sides)) and 0 < sides.mean() <= GOALS_MAX_MEAN)


# ---------------------------------------------------------------------------------------- one candidate
class Candidate(Settings):
    """The EKF of one :class:`Variant`'s model, on margin-weighted games when the variant has a
    power: the method :func:`auto` returns as its choice (``AutoFit.method``).

    A filter's face (``fit``, ``run``, ``tune``, ``model``); ``run(games)`` weights the games by
    their margins (with the scale ``weight_mean`` fixed when the choice was made) and runs
    ``filters.EKF(model)`` through them. Besides the EKF's settings, :meth:`tunable` has the
    observation's own: Margin's ``sd`` (and ``draw_width`` where the games have draws), Goals'
    ``base``.
    """

    online: ClassVar[bool] = True
    _OBS_PARAMS = ("sd", "draw_width", "base")

    def __init__(self, variant: Variant, model: SkillModel, weight_mean: float | None = None):
        if not isinstance(variant, Variant):
            raise TypeError(f"variant must be a statespace.auto.Variant, got {type(variant).__name__}")
        if not isinstance(model, SkillModel):
            raise TypeError(f"model must be a statespace.SkillModel, got {type(model).__name__}")
        self.variant = variant
        self.skill_model = model
        self.weight_mean = None if weight_mean is None else float(weight_mean)
        self.name = f"ekf ({variant.label})"
        from filters import EKF  # statespace.auto sits on top of the filters (see the module docstring)

        self.ekf = EKF(model)

    _param_aliases = {"model": "skill_model"}

    @property
    def model(self) -> SkillModel:
        """The filtered :class:`statespace.SkillModel` (rating points; Margin: points of the score)."""
        return self.skill_model

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={_fmt(v)}" for k, v in self.values().items())
        return f"Candidate({self.variant.label}: {shown})"

    def values(self) -> dict[str, float]:
        """The model's numbers that the variant tunes, by name (for tables and messages)."""
        m = self.skill_model
        out = {"drift": m.drift, "prior_var": m.prior_var}
        if self.variant.home != "none":
            out["home"] = m.home
        if self.variant.home == "drifting":
            out["home_drift"] = m.home_drift
        if self.variant.reversion:
            out["reversion"] = m.reversion
        obs = m.observation
        if isinstance(obs, Margin):
            out["sd"] = obs.sd
            out["draw_width"] = obs.draw_width
        elif isinstance(obs, Goals):
            out["base"] = obs.base
        elif type(m.draw).__name__ == "Threshold":
            out["draw_param"] = m.draw.margin
        if self.variant.power is not None:
            out["power"] = self.variant.power
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
        return Candidate(self.variant, self.skill_model, float(np.mean(_raw_weights(games, self.variant.power))))

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
        3 of its start."""
        out = dict(self.ekf.tunable(games))
        obs = self.skill_model.observation
        s = self.skill_model.scale
        if isinstance(obs, Margin):
            out["sd"] = (0.05 * s, 5.0 * s)
            if obs.draw_width > 0 and np.any(games.score == 0.5):
                out["draw_width"] = (1e-3 * s, 1.0 * s)
        elif isinstance(obs, Goals):
            out["base"] = (obs.base - 3.0, obs.base + 3.0)
        return out

    def param_value(self, name: str) -> float:
        if name in self._OBS_PARAMS:
            return float(getattr(self.skill_model.observation, name))
        return float(self.ekf.param_value(name))

    def with_params(self, **changes) -> "Candidate":
        """A new candidate with some of the model's numbers changed (the EKF's names, and ``sd``,
        ``draw_width``, ``base`` of the observation), or a new ``model``/``variant``/``weight_mean``."""
        variant = changes.pop("variant", self.variant)
        weight_mean = changes.pop("weight_mean", self.weight_mean)
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
        return Candidate(variant, model, weight_mean)

    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None, maxiter: int = 200,
             burn_in: float = 0.0, standard_errors: bool = True) -> "Candidate":
        """:func:`filters.tuning.tune` of this candidate (the margin weights' scale set on ``games``
        first, when not set yet); the result carries ``tuning``."""
        from filters.tuning import tune

        method = self if self.weight_mean is not None else self.with_weight_scale(games)
        return tune(method, games, params, bounds, objective=objective, maxiter=maxiter, burn_in=burn_in,
                    standard_errors=standard_errors)[0]


# ---------------------------------------------------------------------------------------- the choice
@dataclass(eq=False)
class AutoResult(TuneResult):
    """What ``Auto.tune`` records on the chosen method (``method.tuning``; ``compare(...,
    tune=True)`` keeps it in ``result.attrs["tuned"]``): the chosen candidate's tuned ``params``
    and training ``objective``, and the choice itself: ``table`` (every candidate, as
    :attr:`AutoFit.table`), ``chosen`` (the chosen candidate's label), ``variant``, and ``methods``:
    every candidate tuned, ``{label: Candidate}`` (to score or reuse the ones not chosen)."""

    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    chosen: str = ""
    variant: Variant | None = None
    burn_in: float = BURN_IN
    methods: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"AutoResult(chose {self.chosen!r} among {len(self.table)} candidates: training "
                f"{self.objective_name} {self.objective:.5f} on {self.n_games:,} games, {self.seconds:.1f} s)")


def _fmt(v) -> str:
    v = float(v)
    return f"{v:.3g}" if v != 0 and (abs(v) < 1e-2 or abs(v) >= 1e4) else f"{v:.4g}"


class Auto:
    """The method object of :func:`auto` (see the module docstring): ``Auto(**options).fit(games)``
    chooses on ``games`` (or on their first ``split``) and returns an :class:`AutoFit`.

    Parameters
    ----------
    split:
        ``None`` (default): choose on all the games given to :meth:`fit`. A fraction in (0, 1):
        choose on the first ``split`` of them (in time order, :meth:`Games.split`), fit on all, so
        that the one-step-ahead forecasts of the rest are honest; :meth:`run` (what
        ``compare(..., mode="online")`` calls with every game) needs it.
    burn_in:
        Share of the choice games run through but not scored, in tuning and in the choice
        (default 0.3), so that settings are not chosen for how fast they forget the start.
    objective:
        ``None`` (default): ``"log_loss_3"`` when the choice games have draws, ``"log_loss"``
        otherwise; or one of :data:`filters.tuning.OBJECTIVES` for every candidate.
    observations:
        Observation models to try, among :data:`OBSERVATIONS` (default
        :data:`DEFAULT_OBSERVATIONS`, those the games allow; Goals is opt-in).
    powers:
        Box–Cox powers of the margin weights to try (default :data:`DEFAULT_POWERS` where the
        games have scores; ``()`` for none).
    drifting_home, reversion:
        Whether the structure stage tries a drifting home advantage and mean reversion (default
        both).
    candidates:
        An explicit list of :class:`Variant` to compare instead of the staged search.
    maxiter:
        L-BFGS-B iterations of each tuning (default 200).
    progress:
        ``True``: one line per candidate on stderr; ``False``: none; ``None`` (default): once the
        work has taken more than :data:`PROGRESS_AFTER` seconds.
    """

    name = "auto"
    online: ClassVar[bool] = True

    def __init__(self, *, split: float | None = None, burn_in: float = BURN_IN, objective: str | None = None,
                 observations: Sequence[str] | None = None, powers: Sequence[float] | None = None,
                 drifting_home: bool = True, reversion: bool = True, candidates: Sequence[Variant] | None = None,
                 maxiter: int = 200, progress: bool | None = None):
        if split is not None and not (isinstance(split, (int, float, np.integer, np.floating))
                                      and not isinstance(split, bool) and 0 < split < 1):
            raise ValueError(f"auto: split must be None or a fraction strictly between 0 and 1, got {split!r}")
        _check_burn_in(burn_in)
        if objective is not None:
            from filters.tuning import OBJECTIVES

            if objective not in OBJECTIVES:
                raise ValueError(f"auto: objective must be None or one of {', '.join(OBJECTIVES)}, got {objective!r}")
        if observations is not None:
            observations = tuple(observations) if not isinstance(observations, str) else (observations,)
            bad = [o for o in observations if o not in OBSERVATIONS]
            if bad or not observations:
                raise ValueError(f"auto: observations must name some of {', '.join(OBSERVATIONS)}, got "
                                 f"{list(observations)!r}")
            if "outcome" not in observations:
                raise ValueError("auto: observations must include 'outcome' (the structure stage compares home "
                                 "advantage and reversion on it); give candidates=[Variant(...)] for another list")
        if powers is not None:
            powers = tuple(powers)
            for p in powers:
                if not (isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, bool)
                        and math.isfinite(p)):
                    raise ValueError(f"auto: powers must be finite numbers, got {p!r}")
            powers = tuple(float(p) for p in dict.fromkeys(powers))
        if candidates is not None:
            candidates = tuple(candidates)
            if not candidates:
                raise ValueError("auto: candidates= is empty: give at least one Variant (or None for the default search)")
            bad = [c for c in candidates if not isinstance(c, Variant)]
            if bad:
                raise TypeError(f"auto: candidates must be statespace.auto.Variant objects, got {bad[0]!r}")
            if len(set(candidates)) != len(candidates):
                raise ValueError("auto: the same Variant is given twice in candidates=")
        if not (isinstance(maxiter, (int, np.integer)) and maxiter >= 1):
            raise ValueError(f"auto: maxiter must be a whole number >= 1, got {maxiter!r}")
        if progress not in (None, True, False):
            raise ValueError(f"auto: progress must be True, False or None, got {progress!r}")
        self.split = None if split is None else float(split)
        self.burn_in = float(burn_in)
        self.objective = objective
        self.observations = observations
        self.powers = powers
        self.drifting_home = bool(drifting_home)
        self.reversion = bool(reversion)
        self.candidates = candidates
        self.maxiter = int(maxiter)
        self.progress = progress
        #: the :class:`AutoResult` of the latest choice this object made (``None`` before any): what
        #: ``compare`` chose for it, which ``compare``'s table does not keep
        self.last: AutoResult | None = None

    def __repr__(self) -> str:
        shown = []
        for k in ("split", "burn_in", "objective", "observations", "powers", "candidates", "progress"):
            v = getattr(self, k)
            default = {"burn_in": BURN_IN}.get(k)
            if v is not None and v != default:
                shown.append(f"{k}={v!r}")
        for k in ("drifting_home", "reversion"):
            if not getattr(self, k):
                shown.append(f"{k}=False")
        return f"Auto({', '.join(shown)})"

    @property
    def model(self):
        raise AttributeError("Auto has no model until it has chosen one: statespace.auto(games).model")

    # ------------------------------------------------------------------ the method's face
    def fit(self, games: Games) -> "AutoFit":
        """Choose on ``games`` (or their first ``split``), then run the chosen filter through all of
        ``games``."""
        _check_games(games)
        choice_games = games if self.split is None else _first_part(games, self.split)
        method = self._choose(choice_games)
        return AutoFit(method, method.run(games), games)

    def run(self, games: Games) -> "AutoFit":
        """:meth:`fit` with a ``split``: the choice sees the first ``split`` of ``games`` only. Without
        one, ``ValueError``: a run goes through every game, and the choice would see them all."""
        if self.split is None:
            raise ValueError("Auto() has no split, so running it through these games would choose on all of them, "
                             "held-out games included: in compare(..., mode='online' or 'walk_forward') pass tune=True "
                             "(Auto is then chosen on the training part), or give Auto(split=...) the same split as "
                             "compare")
        return self.fit(games)

    def tunable(self, games: Games) -> dict[str, tuple[float, float]]:
        """What ``compare(..., tune=True)`` asks: the choice among the candidates is the one
        setting (``{"candidate": (0, n - 1)}``)."""
        return {"candidate": (0.0, float(max(len(self._variants(games)[0]), 1) - 1))}

    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None, maxiter: int | None = None,
             burn_in: float | None = None, standard_errors: bool = False) -> Candidate:
        """Choose on ``games`` (all of them: they are the training part) and return the chosen,
        tuned filter (a :class:`Candidate`, whose ``tuning`` is an :class:`AutoResult`).
        ``objective``, ``maxiter`` and ``burn_in`` override this object's; ``params`` and
        ``bounds`` do not apply (each candidate's tuning sets its own); ``standard_errors`` is
        accepted and ignored (the choice needs none)."""
        if params is not None or bounds is not None:
            raise ValueError("auto: params= and bounds= do not apply (every candidate is tuned on its own settings); "
                             "give auto's options to Auto(...)")
        changes = {k: v for k, v in (("objective", objective), ("maxiter", maxiter), ("burn_in", burn_in))
                   if v is not None}
        me = self if not changes else Auto(**{**self._options(), **changes})
        _check_games(games)
        method = me._choose(games)
        self.last = method.tuning
        return method

    def _options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("split", "burn_in", "objective", "observations", "powers",
                                              "drifting_home", "reversion", "candidates", "maxiter", "progress")}

    # ------------------------------------------------------------------ the choice
    def _variants(self, games: Games) -> tuple[list[Variant], dict]:
        """The first stage's variants (all of them for ``candidates=``) and what the games allow."""
        scores = games.has_scores
        counts = scores and _goal_counts(games)
        info = {"scores": scores, "counts": counts, "home": not bool(games.neutral.all()),
                "draws": bool(np.any(games.score == 0.5))}
        if self.candidates is not None:
            for v in self.candidates:
                if (v.observation != "outcome" or v.power is not None) and not scores:
                    raise ValueError(f"auto: candidate {v.label!r} needs each side's score (columns 'score_a' and "
                                     f"'score_b'); these games have none")
                if v.observation == "goals" and not counts:
                    raise ValueError(f"auto: candidate {v.label!r} needs goal counts: whole scores >= 0, at most "
                                     f"{GOALS_MAX_MEAN:g} a side on average")
                if v.home != "none" and not info["home"]:
                    raise ValueError(f"auto: candidate {v.label!r} has a home advantage but every game is neutral")
            return list(self.candidates), info
        obs = self.observations
        if obs is not None:
            need = [o for o in obs if o != "outcome"]
            if need and not scores:
                raise ValueError(f"auto: observations {need} need each side's score (columns 'score_a' and "
                                 f"'score_b'); these games have none")
            if "goals" in obs and not counts:
                raise ValueError(f"auto: the goals observation needs goal counts: whole scores >= 0, at most "
                                 f"{GOALS_MAX_MEAN:g} a side on average")
        if self.powers and not scores:
            raise ValueError(f"auto: powers={list(self.powers)} weight games by their score margin; these games have "
                             f"no 'score_a' and 'score_b' columns (give powers=() or leave it out)")
        homes = (["fixed", "drifting"] if self.drifting_home else ["fixed"]) if info["home"] else ["none"]
        revs = [False, True] if self.reversion else [False]
        return [Variant("outcome", h, r) for h in homes for r in revs], info

    def _later(self, best: Variant, info: dict) -> list[tuple[str, Variant]]:
        """Stages 2 and 3 of the default search, built on the best structure."""
        if not info["scores"]:
            return []
        out = []
        powers = DEFAULT_POWERS if self.powers is None else self.powers
        for p in powers:
            out.append(("margin weights", Variant("outcome", best.home, best.reversion, p)))
        obs = self.observations if self.observations is not None else DEFAULT_OBSERVATIONS
        if "margin" in obs:
            out.append(("observation", Variant("margin", best.home, best.reversion)))
        if "goals" in obs and info["counts"]:
            out.append(("observation", Variant("goals", best.home, best.reversion)))
        return out

    def _choose(self, games: Games) -> Candidate:
        """Tune every candidate on ``games`` and return the best, tuned (``tuning``: an
        :class:`AutoResult`)."""
        t0 = time.perf_counter()
        if len(games) < MIN_GAMES:
            raise ValueError(f"auto: needs at least {MIN_GAMES} games to choose on, got {len(games)}")
        first, info = self._variants(games)
        objective = self.objective or ("log_loss_3" if info["draws"] else "log_loss")
        scored = np.sort(games.order[int(round(self.burn_in * len(games))):])
        if scored.size == 0:
            raise ValueError(f"auto: burn_in={self.burn_in} leaves none of the {len(games)} games to score")
        report = _Progress(self.progress, t0)
        rows: list[dict] = []
        tuned: dict[Variant, Candidate] = {}
        staged = self.candidates is None
        plan = [("structure" if staged else "given", v) for v in first]

        def evaluate(stage: str, v: Variant, k: int, total: int, warm: Candidate | None = None) -> None:
            t = time.perf_counter()
            start = _start(v, games, info)
            if warm is not None:  # the same model's numbers, tuned on the structure stage
                start = start.with_params(model=warm.model)
            row = {"candidate": v.label, "stage": stage, "observation": v.observation, "home": v.home,
                   "reversion": v.reversion, "power": np.nan if v.power is None else v.power,
                   "objective": objective}
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # overflow in a far-off evaluation
                    method = start.tune(games, objective=objective, burn_in=self.burn_in, maxiter=self.maxiter,
                                        standard_errors=False)
                proba = method.run(games).proba[scored]
                y = games.score[scored]
                row["train_score"] = method.tuning.objective
                row["train_log_loss"] = metrics.log_loss(y, proba)
                row["train_log_loss_3"] = metrics.log_loss_3(y, proba) if info["draws"] else np.nan
                row["settings"] = method.values()
                row["at_bound"] = _at_bound(method, games)
                row["converged"] = bool(method.tuning.success)
                row["error"] = ""
                tuned[v] = method
            except (ValueError, FloatingPointError, ArithmeticError, np.linalg.LinAlgError) as exc:
                row.update(train_score=np.nan, train_log_loss=np.nan, train_log_loss_3=np.nan, settings={},
                           at_bound=(), converged=False, error=" ".join(str(exc).split()))
            row["tune_seconds"] = time.perf_counter() - t
            rows.append(row)
            report(f"{k}/{total} {v.label}: " + (f"{objective} {row['train_score']:.5f}" if not row["error"]
                                                 else f"failed ({row['error']})") + f" ({row['tune_seconds']:.1f} s)")

        # the later stages' size (their variants depend on the first stage's best)
        later_max = len(self._later(first[0], info)) if staged else 0
        total = len(plan) + later_max
        for k, (stage, v) in enumerate(plan, 1):
            evaluate(stage, v, k, total)
        best = _pick(rows)
        if staged and info["scores"] and best is not None:
            best_v = next(v for v in first if v.label == best["candidate"])
            later = [(s, v) for s, v in self._later(best_v, info) if v not in tuned]
            total = len(plan) + len(later)
            for k, (stage, v) in enumerate(later, len(plan) + 1):
                evaluate(stage, v, k, total, warm=tuned[best_v] if v.observation == "outcome" else None)
            best = _pick(rows)
        table = pd.DataFrame(rows).set_index("candidate")
        if best is None:
            raise ValueError("auto: every candidate failed to tune: " + "; ".join(
                f"{name}: {err}" for name, err in table["error"].items()))
        chosen = best["candidate"]
        table["delta"] = table["train_score"] - table.loc[chosen, "train_score"]
        table["chosen"] = table.index == chosen
        table = table.sort_values("train_score", kind="stable", na_position="last")
        cols = ["stage", "observation", "home", "reversion", "power", "objective", "train_score", "delta",
                "train_log_loss", "train_log_loss_3", "chosen", "tune_seconds", "converged", "at_bound", "settings",
                "error"]
        table = table[cols]
        skipped = []
        if staged and info["counts"] and self.observations is None:
            skipped.append("goals: opt-in for its cost (observations=('outcome', 'margin', 'goals'))")
        table.attrs.update(objective=objective, burn_in=self.burn_in, n_games=len(games), n_scored=int(scored.size),
                           draws=info["draws"], not_tried=skipped)
        method = tuned[next(v for v in tuned if v.label == chosen)]
        seconds = time.perf_counter() - t0
        inner = method.tuning
        result = AutoResult(dict(inner.params), {}, float(table.loc[chosen, "train_score"]), objective,
                            int(scored.size), table, seconds, True,
                            f"chose {chosen!r} among {len(table)} candidates", dict(inner.start),
                            table=table, chosen=chosen, variant=method.variant, burn_in=self.burn_in,
                            methods={v.label: m for v, m in tuned.items()})
        method.tuning = result
        self.last = result
        report(f"chose {chosen} ({objective} {result.objective:.5f}; {len(table)} candidates, {seconds:.1f} s)",
               final=True)
        return method


def _pick(rows: list[dict]) -> dict | None:
    """The row chosen among ``rows`` (dicts with ``train_score`` and ``settings``): the fewest tuned
    settings among those within :data:`TIE` of the lowest score, then the lowest score; ``None``
    when none has a score."""
    ok = [r for r in rows if np.isfinite(r["train_score"])]
    if not ok:
        return None
    best = min(r["train_score"] for r in ok)
    return min((r for r in ok if r["train_score"] <= best + TIE), key=lambda r: (len(r["settings"]), r["train_score"]))


class _Progress:
    """Progress lines on stderr: always (``True``), never (``False``), or once the work has taken
    more than :data:`PROGRESS_AFTER` seconds (``None``)."""

    def __init__(self, mode: bool | None, t0: float):
        self.mode, self.t0, self.shown = mode, t0, False

    def __call__(self, text: str, final: bool = False) -> None:
        if self.mode is False:
            return
        if self.mode is None and not self.shown and time.perf_counter() - self.t0 < PROGRESS_AFTER:
            return
        if final and not self.shown and self.mode is None:
            return
        self.shown = True
        print(f"statespace.auto: {text}", file=sys.stderr, flush=True)


def _check_burn_in(burn_in) -> None:
    if not (isinstance(burn_in, (int, float, np.integer, np.floating)) and not isinstance(burn_in, bool)
            and 0 <= burn_in < 1):
        raise ValueError(f"auto: burn_in must be a fraction in [0, 1), got {burn_in!r}")


def _check_games(games) -> None:
    if not isinstance(games, Games):
        raise TypeError(f"auto: expected statespace.Games, got {type(games).__name__}")


def _first_part(games: Games, split: float) -> Games:
    try:
        return games.split(split)[0]
    except ValueError as exc:
        raise ValueError(f"auto: split={split}: {exc}") from None


def _start(v: Variant, games: Games, info: dict) -> Candidate:
    """The untuned candidate of variant ``v``, with starting values from ``games``: logistic at the
    Elo scale, prior N(1500, 200^2), drift 10 per day, home 50, reversion 1e-3 per day, home drift
    1 per day; the threshold draw margin at which equal sides draw as often as in ``games``
    (draws as half a win when they have none). Margin: skills in points, the model's scale the
    margins' sd ``s`` (which sets the tuning bounds), the starting values scaled by
    ``s / 173.7``, the observation's sd ``s`` and draw width 0.5 (0 without draws). Goals: the
    base rate the mean count per side."""
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
            obs, draw = Goals(base=math.log(max(mean, 1e-3))), "none"
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
                           home_drift=_HOME_DRIFT if v.home == "drifting" else 0.0, **kwargs)
    return Candidate(v, model).with_weight_scale(games)


def _at_bound(method: Candidate, games: Games) -> tuple[str, ...]:
    """Tuned settings within 0.1% (log scale for positive boxes) of their search bounds
    (:func:`filters.tuning.at_bound`)."""
    from filters.tuning import at_bound

    box = method.tunable(games)
    return at_bound({k: method.param_value(k) for k in box}, box)


# ---------------------------------------------------------------------------------------- the result
class AutoFit:
    """What :func:`auto` returns: the chosen filter fitted on the games, and why it was chosen.

    - ``method``: the chosen, tuned :class:`Candidate` (``method.run(games)`` runs it online
      through any games; ``method.model`` its :class:`~statespace.SkillModel`);
    - ``run``: its run through the games given (a ``FilterRun``); ``proba``: the one-step-ahead
      forecasts of those games (input row order); ``games``;
    - ``table``: every candidate (index: its label), best training score first: ``stage``,
      ``observation``, ``home``, ``reversion``, ``power`` (NaN: unweighted), ``objective`` (the
      name of what was compared), ``train_score`` (its value on the choice games after the
      burn-in), ``delta`` (against the chosen), ``train_log_loss``, ``train_log_loss_3``,
      ``chosen``, ``tune_seconds``, ``converged``, ``at_bound`` (tuned settings on a bound of their
      search box), ``settings`` (the tuned values), ``error`` (why a candidate failed, if one did);
      ``table.attrs``: ``objective``, ``burn_in``, ``n_games`` and ``n_scored`` of the choice,
      ``draws`` (whether the choice games have any) and ``not_tried`` (candidates the games allow
      but the search left out, and why);
    - ``chosen``: the chosen label; ``variant``; ``settings``; ``objective``; ``seconds``;
      ``candidates``: every candidate tuned, ``{label: Candidate}``;
    - the fitted face: ``predict_proba(games)``, ``ratings()``, ``trajectories()``;
      ``summary()`` the choice as text (``print(fit.summary())``).
    """

    def __init__(self, method: Candidate, run, games: Games):
        self.method = method
        self.run = run
        self.games = games
        self.result: AutoResult = method.tuning

    # the choice
    @property
    def table(self) -> pd.DataFrame:
        return self.result.table

    @property
    def chosen(self) -> str:
        return self.result.chosen

    @property
    def variant(self) -> Variant:
        return self.method.variant

    @property
    def candidates(self) -> dict[str, Candidate]:
        """Every candidate, tuned: ``{label: Candidate}``."""
        return self.result.methods

    @property
    def objective(self) -> str:
        return self.result.objective_name

    @property
    def settings(self) -> dict[str, float]:
        """The chosen model's tuned numbers (and the margin power, where weighted)."""
        return self.method.values()

    @property
    def seconds(self) -> float:
        """Seconds the choice took (every candidate's tuning)."""
        return self.result.seconds

    @property
    def model(self) -> SkillModel:
        return self.method.model

    # the fitted face
    @property
    def proba(self) -> np.ndarray:
        return self.run.proba

    @property
    def state(self):
        return self.run.state

    def predict_proba(self, games: Games) -> np.ndarray:
        """Frozen forecasts ``(n, 3)`` of ``games`` from the end of the fitted games."""
        return self.run.predict_proba(games)

    def ratings(self) -> pd.DataFrame:
        return self.run.ratings()

    def trajectories(self) -> pd.DataFrame:
        return self.run.trajectories()

    def __repr__(self) -> str:
        return (f"AutoFit(chose {self.chosen!r} among {len(self.table)} candidates by training {self.objective} "
                f"{self.result.objective:.5f}; fitted on {len(self.games):,} games)")

    def _why(self) -> str:
        t = self.table
        ok = t[np.isfinite(t["train_score"])]
        others = ok[~ok["chosen"]]
        if not len(others):
            return "the only candidate that could be tuned"
        mine = ok.loc[self.chosen]
        other = others.index[0]
        d = float(others["train_score"].iloc[0] - mine["train_score"])
        k, k_other = len(mine["settings"]), len(others["settings"].iloc[0])
        if d > TIE:
            return (f"the lowest training {self.objective}, {mine['train_score']:.5f}, {d:.5f} below the next "
                    f"({other})")
        if k < k_other:
            return (f"level with {other} (training {self.objective} within {TIE:g}: {d:+.6f}) and fewer tuned "
                    f"settings ({k} against {k_other})")
        return f"level with {other} (training {self.objective} within {TIE:g}: {d:+.6f}); the lower of the two"

    def summary(self) -> str:
        """The choice as text: what was chosen, on which games and objective, why, the tuned
        settings, and every candidate's training score."""
        t = self.table
        a = t.attrs
        what = {"log_loss_3": "the three-outcome log loss, -log P(observed result): the games have draws",
                "log_loss": "the expected-score log loss" + ("" if a.get("draws") else
                                                               ": the games have no draws, so it is the likelihood"),
                "brier": "the Brier score of the expected score"}[self.objective]
        lines = [f"statespace.auto chose: EKF, {self.chosen}",
                 f"  compared on {a['n_games']:,} games (the first {a['burn_in']:.0%} a burn-in, {a['n_scored']:,} "
                 f"scored), one-step-ahead {self.objective}: {what}; lower is better"]
        lines.append("  why: " + self._why())
        units = "points of the score" if self.variant.observation == "margin" else "rating points"
        shown = ", ".join(f"{k} {_fmt(v)}" for k, v in self.settings.items())
        lines.append(f"  tuned settings ({units}; variances per day): {shown}")
        bound = t.loc[self.chosen, "at_bound"]
        if bound:
            lines.append(f"  at a bound of its search box: {', '.join(bound)}")
        lines.append(f"  fitted on {len(self.games):,} games; the choice took {self.seconds:.1f} s")
        lines.append("")
        width = max(len(str(n)) for n in t.index)
        head = f"  {'candidate'.ljust(width)}  {'stage':<14}  {self.objective:>10}  {'Δ':>8}  {'tune s':>6}"
        lines += [head, "  " + "-" * (len(head) - 2)]
        for name, r in t.iterrows():
            if np.isfinite(r["train_score"]):
                score, delta = f"{r['train_score']:.5f}", ("chosen" if r["chosen"] else f"{r['delta']:+.5f}")
            else:
                score, delta = "failed", "-"
            lines.append(f"  {str(name).ljust(width)}  {r['stage']:<14}  {score:>10}  {delta:>8}  "
                         f"{r['tune_seconds']:>6.1f}")
        failed = t[t["error"] != ""]
        for name, r in failed.iterrows():
            lines.append(f"  {name} failed: {r['error']}")
        for note in t.attrs.get("not_tried", []):
            lines.append(f"  not tried: {note}")
        return "\n".join(lines)


def auto(games: Games, *, split: float | None = None, **options) -> AutoFit:
    """Choose the best-forecasting EKF variant on ``games`` (or on their first ``split``) and return
    it fitted on ``games``, with the table of candidates (see the module docstring; ``options``
    are those of :class:`Auto`: ``burn_in``, ``objective``, ``observations``, ``powers``,
    ``drifting_home``, ``reversion``, ``candidates``, ``maxiter``, ``progress``).

    Example::

        import statespace as ss

        sim = ss.simulate(ss.SkillModel("logistic", ss.ELO_SCALE, 1500, 200**2, 50, "half", home=60,
                                        reversion=0.01), 30, 3000, home_fraction=0.5, seed=1)
        fit = ss.auto(sim.games, split=0.8)
        print(fit.summary())
    """
    return Auto(split=split, **options).fit(games)
