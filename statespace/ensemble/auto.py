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
  negative binomial with variance ``rate + dispersion * rate^2``: its base rate and its
  dispersion tuned, Poisson where the dispersion is tuned to 0);
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

Goals is opt-in (``observations="all"``, or a list naming ``"goals"``) for its cost, not its
forecasts: its win/draw/loss forecast integrates the skill uncertainty by quadrature over
about twenty sums over the two counts per game (longer with the negative binomial's dispersion,
which auto tunes), so its tuning takes 30–90 times Margin's (measured by
``benchmarks/real_data.py``, ``benchmarks/results/real_data-2026-12-01.md``, 2-core machine
shared with the test suite: 229 s against 2.7 s on international football's 44,568 training games,
where Goals scored 0.0029 better than Margin on the training games' three-outcome log loss; 650 s
against 20 s on English football's 187,225, where it scored 0.00013 better).

**No peeking.** ``auto`` sees only the games it is given (with ``split``, only the first part of
them for the choice). In :func:`statespace.compare` use the method object :class:`Auto`:

- ``compare([Auto(), ...], games, split=0.9)`` (frozen): ``Auto().fit(train)`` chooses on the
  training part;
- ``compare([Auto(), ...], games, split=0.9, mode="online", tune=True)``: ``compare`` hands
  ``Auto.tune`` the training part, which returns the chosen, tuned filter; ``compare`` then runs
  it online through all games. ``Auto(split=0.9)`` with the same split as ``compare`` does the
  same without ``tune=True``; ``Auto()`` without a split refuses to run online (it would choose on
  the held-out games).

**A blend of the best** (``blend=True``, off by default): after the choice, the :data:`BLEND_TOP`
best candidates by training score are pooled by :class:`statespace.Blend` (log-linear pooling,
its weights fitted on the same choice games after the same burn-in), and the blend is returned
instead of the single pick only when its training score is lower by more than :data:`TIE`. The
blend's row (stage ``"blend"``, its weights as ``settings``) is in the table either way. Its
weights are fitted on the games they are scored on, as each candidate's settings are tuned on
them: an in-sample comparison, in which a blend that holds the pick as a special case is rarely
worse; judge it on held-out games (``compare``).

Like :mod:`statespace.app.cli` and :mod:`statespace.methods.registry`, this module sits on top of
everything: it imports the sibling package ``filters`` (when a candidate is built), and nothing
below it in ``statespace`` imports it (the package names ``statespace.auto`` and
``statespace.Auto`` load it on first use; the command line's ``--auto`` uses it).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Any, ClassVar, Sequence

import numpy as np
import pandas as pd

from statespace.ensemble import auto_search as _auto_search, auto_variant as _auto_variant
from statespace.model import metrics
from statespace.methods.display import FittedDisplay
from statespace.ensemble.auto_candidate import Candidate, fmt
from statespace.ensemble.auto_search import AutoResult, choose, first_stage
from statespace.ensemble.auto_variant import Variant
from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel
from statespace.methods.seen import already_checked, warn_seen

#: what a warning about forecasts of the fitted games offers instead
_HONEST = ("The honest forecasts of the games auto was given are fit.proba, each made before its game (with "
           "split=, those of the games after the split are honest held-out forecasts); to score a method on "
           "held-out games use statespace.compare(..., mode='online'), or fit auto on the games before those to "
           "forecast.")

__all__ = ["auto", "Auto", "AutoFit", "Variant", "Candidate", "AutoResult", "DEFAULT_POWERS", "BURN_IN",
           "OBSERVATIONS", "DEFAULT_OBSERVATIONS", "MIN_GAMES", "TIE", "GOALS_MAX_MEAN", "BLEND_TOP"]

# the constants live with the code that uses them; their comments here are what the API reference shows
#: Box–Cox powers of ``1 + margin`` tried for the margin weights by default (0: ``log(1 + margin)``)
DEFAULT_POWERS = _auto_search.DEFAULT_POWERS
#: share of the earliest games run through but left out of the objective (tuning and choice)
BURN_IN = _auto_search.BURN_IN
#: the observation models a candidate may use
OBSERVATIONS = _auto_variant.OBSERVATIONS
#: those the default search tries (where the games allow): Goals is opt-in, see the module docstring
DEFAULT_OBSERVATIONS = _auto_search.DEFAULT_OBSERVATIONS
#: the Goals observation is a candidate where the scores average at most this many a side
GOALS_MAX_MEAN = _auto_variant.GOALS_MAX_MEAN
#: fewest games ``auto`` chooses on
MIN_GAMES = _auto_search.MIN_GAMES
#: seconds of work after which progress is reported on stderr (``progress=None``)
PROGRESS_AFTER = _auto_search.PROGRESS_AFTER
#: candidates whose training scores are within this of the best (nats per game) are level: the
#: one with the fewest tuned settings among them is chosen (a drifting home advantage whose drift
#: was tuned to its lower bound is the fixed one, and costs a setting)
TIE = _auto_search.TIE
#: with ``blend=True``, how many of the best candidates (by training score) are pooled
BLEND_TOP = 3


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
        :data:`DEFAULT_OBSERVATIONS`, those the games allow; Goals is opt-in); one the games do
        not allow is an error. ``"all"``: every one the games allow (Margin where they have
        scores, Goals where the scores are goal counts), without the error.
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
    blend:
        ``True``: also pool the :data:`BLEND_TOP` best candidates (:class:`statespace.Blend`) and
        return the blend when its training score is lower by more than :data:`TIE` (see the module
        docstring); default ``False``.
    """

    name = "auto"
    online: ClassVar[bool] = True

    def __init__(self, *, split: float | None = None, burn_in: float = BURN_IN, objective: str | None = None,
                 observations: Sequence[str] | str | None = None, powers: Sequence[float] | None = None,
                 drifting_home: bool = True, reversion: bool = True, candidates: Sequence[Variant] | None = None,
                 maxiter: int = 200, progress: bool | None = None, blend: bool = False):
        if split is not None and not (isinstance(split, (int, float, np.integer, np.floating))
                                      and not isinstance(split, bool) and 0 < split < 1):
            raise ValueError(f"auto: split must be None or a fraction strictly between 0 and 1, got {split!r}")
        _check_burn_in(burn_in)
        if objective is not None:
            from filters.tuning import OBJECTIVES

            if objective not in OBJECTIVES:
                raise ValueError(f"auto: objective must be None or one of {', '.join(OBJECTIVES)}, got {objective!r}")
        if observations == "all":
            pass
        elif observations is not None:
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
                raise TypeError(f"auto: candidates must be statespace.ensemble.auto.Variant objects, got {bad[0]!r}")
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
        if blend not in (True, False):
            raise ValueError(f"auto: blend must be True or False, got {blend!r}")
        self.blend = bool(blend)
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
        if self.blend:
            shown.append("blend=True")
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
        method = choose(self, choice_games)
        if self.blend:
            method = _blended(self, method, choice_games)
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
        return {"candidate": (0.0, float(max(len(first_stage(self, games)[0]), 1) - 1))}

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
        method = choose(me, games)
        if me.blend:
            method = _blended(me, method, games)
        self.last = method.tuning
        return method

    def _options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("split", "burn_in", "objective", "observations", "powers",
                                              "drifting_home", "reversion", "candidates", "maxiter", "progress", "blend")}


def _check_burn_in(burn_in) -> None:
    if not (isinstance(burn_in, (int, float, np.integer, np.floating)) and not isinstance(burn_in, bool)
            and 0 <= burn_in < 1):
        raise ValueError(f"auto: burn_in must be a fraction in [0, 1), got {burn_in!r}")


def _check_games(games) -> None:
    if not isinstance(games, Games):
        raise TypeError(f"auto: expected statespace.Games, got {type(games).__name__}")


def _blended(opts: Auto, method: Candidate, games: Games):
    """With ``blend=True``: the :data:`BLEND_TOP` best candidates pooled on ``games``, their row added
    to the table; the blend (weights fixed, ``tuning`` the updated :class:`AutoResult`) when its
    training score beats the pick's by more than :data:`TIE`, else the pick."""
    from statespace.ensemble.blend import Blend

    result = method.tuning
    table = result.table
    ok = table[np.isfinite(table["train_score"].to_numpy(dtype=float))]
    top = list(ok.index[:BLEND_TOP])
    if len(top) < 2:
        table.attrs["not_tried"] = [*table.attrs.get("not_tried", []), "blend: fewer than 2 candidates were tuned"]
        return method
    t0 = time.perf_counter()
    fit = Blend({label: result.methods[label] for label in top}, burn_in=opts.burn_in).fit(games)
    scored = np.sort(games.order[int(round(opts.burn_in * len(games))):])
    y, p = games.score[scored], fit.proba[scored]
    draws = table.attrs.get("draws", False)
    score = float(getattr(metrics, result.objective_name)(y, p))
    label = f"blend of the best {len(top)}"
    better = score < result.objective - TIE
    row = pd.DataFrame([{"stage": "blend", "observation": "-", "home": "-", "reversion": False, "power": np.nan,
                         "objective": result.objective_name, "train_score": score, "delta": np.nan,
                         "train_log_loss": metrics.log_loss(y, p),
                         "train_log_loss_3": metrics.log_loss_3(y, p) if draws else np.nan, "chosen": False,
                         "tune_seconds": time.perf_counter() - t0,
                         "converged": fit.info["result"] is None or bool(fit.info["result"].success), "at_bound": (),
                         "settings": dict(fit.info["weights"]), "error": ""}], index=pd.Index([label]))
    attrs = dict(table.attrs)
    table = pd.concat([table, row.astype({c: table[c].dtype for c in ("power", "train_score") if c in table})])
    chosen = label if better else result.chosen
    table["chosen"] = table.index == chosen
    table["delta"] = table["train_score"] - table.loc[chosen, "train_score"]
    table = table.sort_values("train_score", kind="stable", na_position="last")
    table.attrs.update(attrs)
    if not better:
        result.table = table
        return method
    out = fit.blend
    out.tuning = dataclasses.replace(result, params=dict(fit.info["weights"]), se={}, objective=score, table=table,
                                     chosen=label, variant=None,
                                     message=f"chose {label!r} (statespace.Blend of {', '.join(top)}) among "
                                             f"{len(table)} candidates")
    return out


def _first_part(games: Games, split: float) -> Games:
    try:
        return games.split(split)[0]
    except ValueError as exc:
        raise ValueError(f"auto: split={split}: {exc}") from None



class AutoFit(FittedDisplay):
    """What :func:`auto` returns: the chosen filter fitted on the games, and why it was chosen.

    - ``method``: the chosen, tuned :class:`Candidate` (``method.run(games)`` runs it online
      through any games; ``method.model`` its :class:`~statespace.SkillModel`), or with
      ``blend=True`` possibly a :class:`statespace.Blend` of the best candidates, its weights fixed
      (``variant`` then ``None``, ``settings`` its weights, ``model`` its first member's);
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
      ``summary()`` the choice as text (``print(fit.summary())``);
    - in Jupyter: the one-line summary (the chosen filter with its settings, games, competitors,
      span), what was chosen among how many, and the leaderboard; ``plot(players=...)``: the
      trajectories (:class:`statespace.methods.display.FittedDisplay`).
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
    def variant(self) -> Variant | None:
        """The chosen candidate's :class:`Variant` (``None`` when a blend was chosen)."""
        return getattr(self.method, "variant", None)

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
        """Frozen forecasts ``(n, 3)`` of ``games`` from the end of the fitted games: honest forecasts
        of games played after them. Games inside the fitted span (with ``split=``, the held-out part
        too: ``auto`` fits on every game it is given) are forecast from a state that has read their
        results: :class:`statespace.SeenGamesWarning`, naming the honest forecasts, :attr:`proba`
        (see :mod:`statespace.methods.seen`)."""
        if isinstance(games, Games):
            games.check_time_base(self.games.time_base, "auto")
            warn_seen("auto: predict_proba", self.games, games, _HONEST, stacklevel=3)
        with already_checked():
            return self.run.predict_proba(games)

    def ratings(self) -> pd.DataFrame:
        return self.run.ratings()

    def trajectories(self) -> pd.DataFrame:
        return self.run.trajectories()

    def __repr__(self) -> str:
        return (f"AutoFit(chose {self.chosen!r} among {len(self.table)} candidates by training {self.objective} "
                f"{self.result.objective:.5f}; fitted on {len(self.games):,} games)")

    def _notes(self) -> list[str]:
        """Under the leaderboard in Jupyter: what was chosen, and where the reasons are."""
        return [f"statespace.auto chose {self.chosen!r} among {len(self.table)} candidates by training "
                f"{self.objective} {self.result.objective:.5f}; print(fit.summary()) says why"]

    def _why(self) -> str:
        t = self.table
        ok = t[np.isfinite(t["train_score"])]
        others = ok[~ok["chosen"]]
        if self.variant is not None:  # a candidate was chosen: the blend's row is not one of its rivals
            others = others[others["stage"] != "blend"]
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
        picked = f"EKF, {self.chosen}" if self.variant is not None else \
            f"{self.chosen} (statespace.Blend, log-linear pool of {', '.join(self.method.members)})"
        lines = [f"statespace.auto chose: {picked}",
                 f"  compared on {a['n_games']:,} games (the first {a['burn_in']:.0%} a burn-in, {a['n_scored']:,} "
                 f"scored), one-step-ahead {self.objective}: {what}; lower is better"]
        lines.append("  why: " + self._why())
        shown = ", ".join(f"{k} {fmt(v)}" for k, v in self.settings.items())
        if self.variant is None:
            lines.append(f"  weights: {shown}")
        else:
            units = "points of the score" if self.variant.observation == "margin" else "rating points"
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
    ``drifting_home``, ``reversion``, ``candidates``, ``maxiter``, ``progress``, ``blend``).

    Example::

        import statespace as ss

        sim = ss.simulate(ss.SkillModel("logistic", ss.ELO_SCALE, 1500, 200**2, 50, "half", home=60,
                                        reversion=0.01), 30, 3000, home_fraction=0.5, seed=1)
        fit = ss.auto(sim.games, split=0.8)
        print(fit.summary())
    """
    return Auto(split=split, **options).fit(games)
