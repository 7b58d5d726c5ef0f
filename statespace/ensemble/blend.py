r"""``statespace.Blend``: one forecast pooled from several online methods.

``Blend([m1, m2, ...])`` combines the win/draw/loss forecasts of its members (filters: anything with
``run(games)`` whose ``proba`` holds one-step-ahead forecasts, such as :class:`filters.Elo`, a
tuned filter, or a :class:`statespace.ensemble.auto.Candidate`) with weights fitted on the members'
one-step-ahead forecasts of the games the blend is fitted on, and only those::

    blend = statespace.Blend(["elo", "glicko2", "trueskill", "ekf"])    # names of the registry, or methods
    fit = blend.fit(train)            # weights fitted on train's one-step-ahead forecasts
    fit.weights                       # by member name (a member with weight 0 is listed in fit.zero_weight)
    fit.predict_proba(test)           # frozen forecasts, pooled from each member's frozen forecasts
    print(fit.summary())

    tuned = blend.tune(train)         # each member tuned on train (its own tune), then the weights
    tuned.run(games).proba            # online through all games, the weights fixed on train

**Pooling.** ``pool="loglinear"`` (the default) is logarithmic pooling (Genest and Zidek 1986,
"Combining probability distributions: a critique and an annotated bibliography", Statistical
Science 1(1)): :math:`p(o) \propto \prod_k p_k(o)^{w_k}` over the outcomes :math:`o`, with every
:math:`w_k \ge 0` and no constraint on their sum. It is the default because it contains more than a mixture does: the
weights' sum sharpens (``> 1``) or softens (``< 1``) the pool, so temperature scaling of one
member (:math:`w = (t, 0, \ldots)`) and each member alone (:math:`w = e_k`) are special cases, and the
log-likelihood is concave in the weights, so the fit finds the global optimum. A mixture can only
be less sharp than its sharpest member, which throws away the sharpening that independent
evidence in several members allows. ``pool="linear"`` is the linear pool, stacking of predictive
distributions (Yao, Vehtari, Simpson and Gelman 2018, "Using stacking to average Bayesian
predictive distributions", Bayesian Analysis 13(3)): :math:`p = \sum_k w_k p_k` with the weights
on the simplex.

**Outcomes.** Where the games the weights are fitted on have draws, the pool is over win, draw and
loss and the weights maximise the three-outcome log-likelihood (``log_loss_3``); without draws it
is over win and loss, pooling each member's expected score ``P(win) + P(draw) / 2``, and the
weights maximise the two-outcome log-likelihood (the expected-score ``log_loss``, then a
likelihood); the pool then forecasts no draws. A member that forecasts no draws (draws as half a
win: Elo, Glicko, the default EKF) enters the three-outcome log-linear pool through its win/loss
odds only: its factor for a draw is :math:`\sqrt{p_\text{win}\, p_\text{loss}}`, the geometric mean of its other two
(Davidson's 1970 form of the draw probability), so it moves the pool between win and loss and
leaves the draw rate to the members that forecast draws. In the linear pool it adds no mass to a
draw.

**Fitting the weights.** The weights minimise the mean log loss of the pooled one-step-ahead
forecasts of the fitting games after a burn-in (``burn_in``, default 0.3: the first 30% in time
order are run through but not scored, the convention of :func:`filters.tuning.tune` and
:func:`statespace.auto`), by L-BFGS-B with the bounds :math:`0 \le w_k \le` ``W_MAX`` (log-linear; the linear
pool's weights are scaled to sum to 1), from the best of the equal weights and each member alone,
so a fitted blend is never worse on its fitting games than its best member there. A member whose
weight is fitted to 0 adds nothing to the forecasts; :attr:`BlendFit.zero_weight` lists such
members, :meth:`BlendFit.summary` says so, and the table marks them.

**No peeking.** The weights see only the games the blend is fitted or tuned on:

- ``compare([Blend(...)], games, split=0.9)`` (frozen): ``Blend.fit(train)``;
- ``compare([Blend(...)], games, split=0.9, mode="online", tune=True)``: ``compare`` hands
  ``Blend.tune`` the training part (members tuned and weights fitted there) and runs the tuned
  blend, its weights fixed, online through all games;
- ``Blend(..., split=0.9)`` with the same split as ``compare`` fits the weights on the first 90%
  of the games it runs through, so ``mode="online"`` works without ``tune=True``; ``Blend()``
  without a split or fixed weights refuses to run (it would fit on the held-out games), as
  :class:`statespace.Auto` does.

**Members** are online methods: a smoother, which has no one-step-ahead forecasts of the games it
is fitted on, is refused with an error naming it (walk-forward refits of a smoother inside a blend
would cost one refit per game or block, for the weights alone, and are not offered). ``ratings()``,
``trajectories()`` and ``model`` are the first member's: a pool of forecasts has no ratings of its
own.

Like :mod:`statespace.auto`, this module sits on top of everything: it imports ``filters`` only
when a member is given by name (through :mod:`statespace.methods.registry`), and nothing below it in
``statespace`` imports it (``statespace.Blend`` loads it on first use). The pooling rules and the
fit of the weights are in :mod:`~statespace.ensemble.blend_pool`, the fitted result
:class:`BlendFit` in :mod:`~statespace.ensemble.blend_fit`; this module holds the method object
:class:`Blend` and its members.
"""

from __future__ import annotations

import math
import time
from types import SimpleNamespace
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.ensemble import blend_pool as _pool
from statespace.ensemble.blend_fit import BlendFit
from statespace.ensemble.blend_pool import fit_weights, forecasts_draws, pool_forecasts
from statespace.methods.protocols import is_online
from statespace.methods.settings import Settings, TuneResult
from statespace.model import metrics
from statespace.model.outcome import Davidson, Threshold
from statespace.model.skillmodel import SkillModel

__all__ = ["Blend", "BlendFit", "pool_forecasts", "POOLS", "DEFAULT_MEMBERS", "BURN_IN", "W_MAX"]

# the pooling's constants live with its code (statespace.ensemble.blend_pool); their comments here
# are what the API reference shows
#: the pooling rules: logarithmic (the default) and linear
POOLS = _pool.POOLS
#: registry names of the members of ``Blend()`` (and of ``statespace compare --methods blend``)
DEFAULT_MEMBERS = ("elo", "glicko2", "trueskill", "ekf")
#: share of the earliest fitting games run through but left out of the weights' objective
BURN_IN = 0.3
#: upper bound of a log-linear weight: a member's forecast raised to this power is far sharper than
#: any forecast worth having, and the bound keeps the fit finite where a few games are separable
W_MAX = _pool.W_MAX


# ---------------------------------------------------------------------------- members
def _resolve(members) -> dict[str, Any]:
    """``{label: method}`` from a list of methods or registry names, a ``"elo+ekf"`` string, or a
    mapping; a method's label is its ``name`` (``_2``, ``_3`` ... for repeats)."""
    if members is None:
        members = list(DEFAULT_MEMBERS)
    elif isinstance(members, str):
        members = [m for m in members.replace("+", " ").replace(",", " ").split()]
    if isinstance(members, Mapping):
        items = [(str(k), v) for k, v in members.items()]
    else:
        if not isinstance(members, Sequence) and not hasattr(members, "__iter__"):
            raise TypeError(f"blend: members must be a list of methods or method names, got {type(members).__name__}")
        items = []
        for j, m in enumerate(members):
            label = m if isinstance(m, str) else getattr(m, "name", None)
            items.append((label if isinstance(label, str) else f"member{j + 1}", m))
    out: dict[str, Any] = {}
    for label, m in items:
        if isinstance(m, str):
            from statespace.methods import registry  # a name: the registry's factory, with its default settings

            try:
                m = registry.get(m.strip())()
            except ValueError as exc:
                raise ValueError(f"blend: member {label!r}: {exc}") from None
        base, n = label, 2
        while label in out:
            label, n = f"{base}_{n}", n + 1
        out[label] = m
    if not out:
        raise ValueError("blend: needs at least one member (an online method, e.g. filters.Elo(), or a registry "
                         "name such as 'elo')")
    for label, m in out.items():
        if not (is_online(m) and callable(getattr(m, "run", None))):
            raise ValueError(f"blend: member {label!r} ({type(m).__name__}) is not an online method: a blend fits "
                             f"its weights on one-step-ahead forecasts, which only methods with run(games) make "
                             f"(the filters); a smoother is fitted to the whole history and is not accepted")
    return out


def _number(value, what: str, low: float, high: float, closed_high: bool = False) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        value = float(value)
        ok = math.isfinite(value) and low <= value and (value <= high if closed_high else value < high)
    if not ok:
        raise ValueError(f"blend: {what} must be a number in [{low:g}, {high:g}{']' if closed_high else ')'}, "
                         f"got {value!r}")
    return value


def _draw_aware(method, draws: bool) -> bool:
    draw = getattr(getattr(method, "model", None), "draw", None)
    return draws and isinstance(draw, (Threshold, Davidson))


# ---------------------------------------------------------------------------- the method
class Blend(Settings):
    """A forecast pooled from online methods, its weights fitted on their one-step-ahead
    forecasts of the fitting games (see the module docstring).

    Parameters
    ----------
    members:
        The methods pooled: a list of online methods or registry names (``["elo", "ekf"]``, or one
        string ``"elo+ekf"``), or a mapping ``{label: method}``; default :data:`DEFAULT_MEMBERS`
        (Elo, Glicko-2, TrueSkill and the EKF with their default settings). Each member is labelled
        by its ``name``. An empty list or a member that is not online is a ``ValueError`` naming it.
    pool:
        ``"loglinear"`` (default) or ``"linear"``.
    burn_in:
        Share of the fitting games (in time order) left out of the weights' objective (and of each
        member's tuning in :meth:`tune`); default 0.3.
    split:
        ``None`` (default): the weights are fitted on all the games given to :meth:`fit`. A
        fraction in (0, 1): on their first ``split`` only (:meth:`Games.split`), which lets
        :meth:`run` (what ``compare(..., mode="online")`` calls with every game) fit without seeing
        the held-out games.
    weights:
        Fixed weights (a mapping by label or a sequence in the members' order), used as they are:
        :meth:`fit` and :meth:`run` then fit nothing. ``None`` (default): fitted. :meth:`tune` and
        :attr:`BlendFit.blend` return blends with their fitted weights fixed.
    draws:
        Whether the pool is over win, draw and loss (``True``) or over the expected score
        (``False``); ``None`` (default): decided by the games the weights are fitted on (whether
        any is a draw). Blends with fixed weights from :meth:`tune` carry the decision.
    maxiter:
        L-BFGS-B iterations of the weights' fit (default 200).
    """

    name = "blend"
    online: ClassVar[bool] = True

    def __init__(self, members=None, *, pool: str = "loglinear", burn_in: float = BURN_IN, split: float | None = None,
                 weights=None, draws: bool | None = None, maxiter: int = 200):
        self.members = _resolve(members)
        if pool not in POOLS:
            raise ValueError(f"blend: pool must be one of {', '.join(POOLS)}, got {pool!r}")
        self.pool = pool
        self.burn_in = _number(burn_in, "burn_in", 0.0, 1.0)
        if split is not None:
            split = _number(split, "split", 0.0, 1.0)
            if split == 0.0:
                raise ValueError("blend: split must be None or a fraction strictly between 0 and 1, got 0")
        self.split = split
        self.weights = None if weights is None else self._check_weights(weights)
        if draws not in (None, True, False):
            raise ValueError(f"blend: draws must be True, False or None, got {draws!r}")
        self.draws = draws
        if not (isinstance(maxiter, (int, np.integer)) and not isinstance(maxiter, bool) and maxiter >= 1):
            raise ValueError(f"blend: maxiter must be a whole number >= 1, got {maxiter!r}")
        self.maxiter = int(maxiter)

    def _check_weights(self, weights) -> dict[str, float]:
        labels = list(self.members)
        if isinstance(weights, Mapping):
            unknown = [k for k in weights if k not in self.members]
            missing = [k for k in labels if k not in weights]
            if unknown or missing:
                raise ValueError(f"blend: weights must give one number per member ({', '.join(labels)}); "
                                 + (f"unknown {unknown}" if unknown else f"missing {missing}"))
            values = [weights[k] for k in labels]
        else:
            values = list(weights)
            if len(values) != len(labels):
                raise ValueError(f"blend: {len(values)} weights for {len(labels)} members ({', '.join(labels)})")
        out = {}
        for label, v in zip(labels, values):
            out[label] = _number(v, f"the weight of {label!r}", 0.0, math.inf)
        if self.pool == "linear" and not sum(out.values()) > 0:
            raise ValueError("blend: the linear pool's weights sum to 0")
        return out

    def __repr__(self) -> str:
        shown = [repr(self.members)]
        for k, default in (("pool", "loglinear"), ("burn_in", BURN_IN), ("split", None), ("weights", None),
                           ("draws", None), ("maxiter", 200)):
            v = getattr(self, k)
            if v != default:
                shown.append(f"{k}={v!r}")
        return f"Blend({', '.join(shown)})"

    @property
    def labels(self) -> list[str]:
        return list(self.members)

    @property
    def model(self) -> SkillModel:
        """The first member's :class:`~statespace.SkillModel` (a pool has no model of its own)."""
        return next(iter(self.members.values())).model

    def values(self) -> dict[str, float]:
        """The fixed weights by member (empty when they are to be fitted)."""
        return dict(self.weights or {})

    # ------------------------------------------------------------------ the method's face
    def fit(self, games: Games) -> BlendFit:
        """Fit the weights on ``games`` (or their first ``split``; nothing with fixed weights), run
        every member through ``games`` and return the :class:`BlendFit`."""
        _check_games(games)
        runs = {label: m.run(games) for label, m in self.members.items()}
        if self.split is None:
            fitting, fitting_runs = games, runs
        else:
            try:
                fitting = games.split(self.split)[0]
            except ValueError as exc:
                raise ValueError(f"blend: split={self.split}: {exc}") from None
            # an online member's forecasts of the first games are the same in a run through them
            # alone and in the run through all games, so the fitting part reads that run's rows
            first = np.sort(games.order[:len(fitting)])
            fitting_runs = {label: SimpleNamespace(proba=run.proba[first]) for label, run in runs.items()}
        return BlendFit(self, games, runs, self._weigh(fitting, fitting_runs))

    def run(self, games: Games) -> BlendFit:
        """:meth:`fit`, for ``compare``'s online modes: needs fixed weights or a ``split`` (else a
        ``ValueError``: the weights would be fitted on every game, held-out ones included)."""
        if self.weights is None and self.split is None:
            raise ValueError("Blend() has neither fixed weights nor a split, so running it through these games would "
                             "fit its weights on all of them, held-out games included: in compare(..., mode='online') "
                             "pass tune=True (the blend is then tuned and weighted on the training part), or give "
                             "Blend(split=...) the same split as compare (statespace compare: --tune, or "
                             "blend:split=0.7 with --split 0.7)")
        return self.fit(games)

    def _weigh(self, games: Games, runs: dict) -> dict:
        """The weights (fitted on ``games``' one-step-ahead forecasts ``runs`` unless fixed) and the
        record of the fit."""
        t0 = time.perf_counter()
        draws = self.draws if self.draws is not None else bool(np.any(games.score == 0.5))
        start = int(round(self.burn_in * len(games)))
        scored = np.sort(games.order[start:])
        if scored.size == 0:
            raise ValueError(f"blend: burn_in={self.burn_in} leaves none of the {len(games)} games to score")
        probas = [runs[label].proba[scored] for label in self.members]
        y = games.score[scored]
        if self.weights is not None:
            w, res, start_w = np.array(list(self.weights.values())), None, None
        else:
            w, res, start_w = fit_weights(self.pool, probas, y, draws, self.maxiter)
        pooled = pool_forecasts(probas, w, self.pool, draws)
        objective = "log_loss_3" if draws else "log_loss"
        score = getattr(metrics, objective)
        members = {label: (score(y, p) if (not draws or forecasts_draws(p)) else float("nan"))
                   for label, p in zip(self.members, probas)}
        return {"weights": dict(zip(self.members, map(float, w))), "draws": draws, "objective": objective,
                "train_score": score(y, pooled), "member_scores": members, "n_games": len(games),
                "n_scored": int(scored.size), "fitted": self.weights is None, "result": res,
                "start": None if start_w is None else dict(zip(self.members, map(float, start_w))),
                "seconds": time.perf_counter() - t0}

    # ------------------------------------------------------------------ settings
    def tunable(self, games: Games) -> dict[str, tuple[float, float]]:
        """The weights, ``{"weight[label]": (0, bound)}``: what ``compare(..., tune=True)`` asks
        (:meth:`tune` also tunes every member its own way)."""
        high = W_MAX if self.pool == "loglinear" else 1.0
        return {f"weight[{label}]": (0.0, high) for label in self.members}

    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None, maxiter: int | None = None,
             burn_in: float | None = None, standard_errors: bool = False) -> "Blend":
        """Tune each member on ``games`` (its own ``tune``, where it has something to tune there;
        ``burn_in`` this blend's unless given), then fit the weights on the tuned members'
        one-step-ahead forecasts of ``games``. Returns a new blend of the tuned members with the
        weights fixed (and ``draws`` decided), carrying ``tuning`` (a :class:`TuneResult` whose
        ``params`` are the weights by label; ``members`` the members' own results).

        ``objective``: passed to every member's tuning; ``None`` (default): the three-outcome
        ``"log_loss_3"`` for a member whose model has a threshold or Davidson draw model when the
        games have draws, the expected-score ``"log_loss"`` otherwise (a draw margin is not
        identified by draw-free games). The weights always maximise the pool's log-likelihood.
        ``params`` and ``bounds`` do not apply (each member tunes its own settings);
        ``standard_errors`` is passed to the members.
        """
        if params is not None or bounds is not None:
            raise ValueError("blend: params= and bounds= do not apply (each member tunes its own settings)")
        _check_games(games)
        burn_in = self.burn_in if burn_in is None else _number(burn_in, "burn_in", 0.0, 1.0)
        t0 = time.perf_counter()
        draws = bool(np.any(games.score == 0.5))
        tuned, results = {}, {}
        for label, m in self.members.items():
            tunable = getattr(m, "tunable", None)
            if callable(getattr(m, "tune", None)) and callable(tunable) and tunable(games):
                kind = objective or ("log_loss_3" if _draw_aware(m, draws) else "log_loss")
                options = {"objective": kind, "burn_in": burn_in, "standard_errors": standard_errors}
                if maxiter is not None:
                    options["maxiter"] = maxiter
                m = m.tune(games, **options)
                results[label] = getattr(m, "tuning", None)
            tuned[label] = m
        me = Blend(tuned, pool=self.pool, burn_in=burn_in, weights=self.weights, draws=self.draws,
                   maxiter=self.maxiter if maxiter is None else maxiter)
        fit = me.fit(games)
        out = fit.blend
        info = fit.info
        res = info["result"]
        result = TuneResult(dict(info["weights"]), {}, float(info["train_score"]), info["objective"], info["n_scored"],
                            pd.DataFrame([info["member_scores"]]), time.perf_counter() - t0,
                            True if res is None else bool(res.success),
                            "fixed weights" if res is None else str(res.message), dict(info["start"] or {}))
        result.members = results
        result.table = fit.table
        out.tuning = result
        return out


def _check_games(games) -> None:
    if not isinstance(games, Games):
        raise TypeError(f"blend: expected statespace.Games, got {type(games).__name__}")


#: the registry's entry (:mod:`statespace.methods.registry` lists this module with the built-in packages):
#: a blend of the default filters, or of members named ``members="elo+ekf"``. Not compared by
#: default: its row pools the rows of its members
REGISTRY = {"blend": Blend}
NOT_BY_DEFAULT = {"blend"}
