"""A filter's settings chosen on matches of many sides: maximum one-step-ahead ranking likelihood.

It lives with the filters (as :mod:`filters.tuning` for games) so that both rooms above them use
it: :mod:`statespace.evaluation` (``compare_matches(tune=True)``, through
:mod:`statespace.evaluation.tune_matches`) and :mod:`statespace.ensemble` (``auto`` on matches),
which do not import each other.

``tune_matches(method, matches)`` runs the filter online over the matches for each candidate
setting and minimises a score of its one-step-ahead forecasts under the method's own ranking
observation (the prequential principle of :mod:`filters.tuning`, with matches in place of games),
by scipy's bounded L-BFGS-B over the method's ``tunable()`` box (positive settings searched on the
log scale), from the current settings. The box is what the method's ``tunable`` gives for a table
with no home side and, where some match has tied sides, draws (its draw setting is then tuned too).

The objectives (:data:`OBJECTIVES`), per match as :mod:`statespace.model.ranking_scores` weights them:

- ``"loglik"`` (the default): minus the mean per match of the log-probability of the observed
  rankings under the method's forecast (:func:`~statespace.model.ranking_scores.ranking_loglik`:
  a proper probability of the ranking for every kind of forecast);
- ``"pair_log_loss"``: the pairwise log loss of the expected scores
  (:func:`~statespace.model.ranking_scores.forecast_pair_log_loss`).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pandas as pd

from filters.tuning import at_bound, check_box
from statespace.data.matches import Matches
from statespace.methods.settings import BoundWarning, TuneResult
from statespace.model.ranges import ResultRangeError
from statespace.model.ranking_scores import forecast_pair_log_loss, ranking_loglik

__all__ = ["tune_matches", "OBJECTIVES"]

#: objective -> the score it minimises (the log-likelihood negated)
OBJECTIVES = {"loglik": lambda *a: -ranking_loglik(*a)[0], "pair_log_loss": lambda *a: forecast_pair_log_loss(*a)[0]}

#: the objective of settings that cannot forecast the matches (their runs break down): they lose
_LOSS = 1e6


class _Outline:
    """What a filter's ``tunable(games)`` reads of a table of games, for matches: no side is at
    home (``neutral``), a side tied with another is a draw (``score`` 0.5), and whether sides have
    scores (``has_scores``)."""

    def __init__(self, matches: Matches):
        rank = np.asarray(matches.rank)
        match_of = np.repeat(np.arange(matches.n_matches), np.diff(matches.match_ptr))
        key = match_of * (rank.max() + 1) + rank
        _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
        self.neutral = np.ones(matches.n_matches, dtype=bool)
        self.score = np.where(counts[inverse] > 1, 0.5, 1.0)
        self.has_scores = bool(np.isfinite(np.asarray(matches.score)).any())


def _objective(method, matches: Matches, first: int, objective: str) -> float:
    try:
        run = method.run(matches)
        s0 = int(matches.match_ptr[first])
        value = OBJECTIVES[objective](run.forecast, run.perf_mean[s0:], run.perf_var[s0:],
                                      np.asarray(matches.rank[s0:]), np.asarray(matches.match_ptr[first:]) - s0)
    except (ResultRangeError, ValueError):
        return _LOSS
    return value if math.isfinite(value) else _LOSS


def tune_matches(method, matches: Matches, params=None, bounds=None, *, objective: str | None = None,
                 burn_in: float = 0.0, maxiter: int = 100):
    """Fit ``method``'s settings to ``matches``; returns ``(tuned method, TuneResult)`` (the tuned
    method's ``tuning`` is the result, whose ``objective_name`` says what was minimised: one of
    :data:`OBJECTIVES`, by default ``"loglik"``; see the module docstring). Standard errors are not computed (NaN).

    ``params``: the names to fit (default: all of ``method.tunable``'s for matches); ``bounds``:
    ``{name: (low, high)}`` overriding its box (checked by :func:`filters.tuning.check_box`);
    ``burn_in``: the share of the earliest matches run but left out of the objective. The search
    starts from the current settings; one the method learns from games (``None``, TrueSkill's
    ``draw_probability``) from the middle of its box. A setting
    that ends on a bound of its box is named in the result's ``on_bound`` and said with a
    :class:`~statespace.methods.settings.BoundWarning`. ``ValueError`` naming the method when it
    cannot rate matches, has nothing to tune, or is given an unknown name.
    """
    from scipy.optimize import minimize  # here: importing the module loads no optimiser

    from filters.match_run import check_matches

    check_matches(method, matches)
    method.match_forecast()  # a setting that cannot forecast a match refuses here
    if objective is None:
        objective = "loglik"
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if isinstance(burn_in, bool) or not isinstance(burn_in, (int, float)) or not 0 <= burn_in < 1:
        raise ValueError(f"burn_in must be a share of the matches in [0, 1), got {burn_in!r}")
    default = method.tunable(_Outline(matches))
    names = list(default) if params is None else list(params)
    unknown = [p for p in names if p not in default]
    if unknown:
        raise ValueError(f"{method.name}: cannot tune {unknown} on matches; tunable: {sorted(default)}")
    if not names:
        raise ValueError(f"{method.name}: nothing to tune on matches")
    box = {p: tuple(map(float, default[p])) for p in names}
    for p, b in (bounds or {}).items():
        if p not in box:
            raise ValueError(f"bounds given for {p!r}, which is not being tuned")
        box[p] = check_box(method, p, b)
    logs = {p: box[p][0] > 0 for p in names}
    start = {}
    for p in names:
        lo, hi = box[p]
        value = method.param_value(p)
        if value is None:  # a setting the method learns from games (a draw rate): the middle of the box
            value = math.sqrt(lo * hi) if logs[p] else (lo + hi) / 2
        start[p] = min(max(float(value), lo), hi)
    first = int(burn_in * matches.n_matches)
    x_bounds = [(math.log(box[p][0]), math.log(box[p][1])) if logs[p] else box[p] for p in names]
    trace = []

    def values_of(x):
        x = np.clip(x, [b[0] for b in x_bounds], [b[1] for b in x_bounds])
        return {p: (math.exp(v) if logs[p] else float(v)) for p, v in zip(names, x)}

    def f(x):
        values = values_of(x)
        try:
            candidate = method.with_params(**values)
        except ValueError:  # a combination outside a range that depends on another setting
            value = _LOSS
        else:
            value = _objective(candidate, matches, first, objective)
        trace.append({**values, objective: value})
        return value

    t0 = time.perf_counter()
    x0 = [math.log(start[p]) if logs[p] else start[p] for p in names]
    res = minimize(f, x0, method="L-BFGS-B", bounds=x_bounds, options={"maxiter": maxiter, "eps": 1e-4})
    best = values_of(res.x)
    tuned = method.with_params(**best)
    on_bound = at_bound(best, box)
    result = TuneResult(best, {p: float("nan") for p in names}, float(res.fun), objective, matches.n_matches - first,
                        pd.DataFrame(trace), time.perf_counter() - t0, bool(res.success), str(res.message), start,
                        box, on_bound)
    if on_bound:
        said = "; ".join(f"{k}={best[k]:.6g}" for k in on_bound)
        warnings.warn(f"{method.name}: tuned on matches to a bound of the search box ({said}); widen it with bounds=",
                      BoundWarning, stacklevel=2)
    tuned.tuning = result
    return tuned, result
