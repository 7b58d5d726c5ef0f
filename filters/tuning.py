"""Hyperparameter fitting for every filter: maximise the one-step-ahead (prequential) likelihood.

A filter's forecasts of each game made before seeing it are an honest out-of-sample score of
its settings on the very games it learns from (Dawid's prequential principle). ``tune`` runs the
compiled filter over the games for each candidate setting and minimises the mean log loss of
those forecasts with L-BFGS-B on transformed coordinates (log scale for positive parameters),
within bounds. Each evaluation is one pass of the compiled loop (docs/benchmarks.md gives its
cost), so a few hundred evaluations are cheap. L-BFGS-B starts from the best point of a coarse
grid over the box (and the current settings), scored in one batched compiled pass over the games
(:mod:`filters.grid`), so that tuning does not end in a poor local minimum near the starting
values (``start="current"``: from the current settings alone).

Objectives (per game, averaged):

- ``"log_loss"``: binary log loss of the expected score, a draw as the target 0.5 — the score
  ``compare`` reports, defined for every method;
- ``"log_loss_3"``: ``-log P(observed outcome)``, the proper log-likelihood for methods that
  model draws;
- ``"brier"``: squared error of the expected score.

The default (``objective=None``, see :func:`default_objective`) is ``"log_loss_3"`` when the
method's :class:`statespace.SkillModel` has a draw model with a parameter (``Threshold``: the EKF
with ``draw=("threshold", margin)``, TrueSkill, Weng–Lin Thurstone–Mosteller; or ``Davidson``)
and the games have draws, and ``"log_loss"`` otherwise (no draws in the games, no draw model, or
draws scored as half a win: Elo, Glicko, Glicko-2, Weng–Lin Bradley–Terry / Plackett–Luce, the
default EKF). The expected score hardly depends on a draw margin, so the expected-score loss
leaves that parameter (and its effect on the update) loosely identified; the three-outcome
likelihood pins it down. On games without a draw there is no draw parameter to identify (none is
tuned) and ``"log_loss"`` is the two-outcome log-likelihood itself. The objective used is
recorded in :attr:`TuneResult.objective_name`.

Settings a method learns from the games (``TrueSkill(draw_probability=None)``: 0 on games
without a draw) are fixed first, on the tuning games (the method's ``resolved(games)``), so the
tuned method carries the numbers it was tuned with. A fitted setting that ends on a bound of its
search box is named in :attr:`TuneResult.on_bound` and reported with a
:class:`statespace.methods.settings.BoundWarning` suggesting wider ``bounds=``.

Standard errors come from the curvature of the summed loss at the optimum (the inverse of the
numerical Hessian of ``n * objective``), which is the usual asymptotic standard error when the
objective is a log-likelihood (``"log_loss_3"``, or ``"log_loss"`` on data without draws).

:func:`tune` works on any method with ``name``, ``tunable``, ``param_value``, ``with_params`` and
``run``; only a filter's grid start is scored in the batched pass (:func:`filters.grid.batchable`).
It imports :mod:`filters.grid` and :mod:`filters.objectives`, never :mod:`filters.base`, which
imports it for :meth:`Filter.tune <filters.base.Filter.tune>`.
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.model import metrics
from statespace.model.ranges import ResultRangeError
from statespace.methods.settings import BoundWarning, DrawWarning, TuneResult

from .draws import caller_stacklevel
from .grid import SCORES, batchable, box_grid, evaluate
from .objectives import OBJECTIVES, default_objective, first_scored, resolve_objective

__all__ = ["tune", "OBJECTIVES", "default_objective", "resolve_objective", "at_bound", "BoundWarning"]


def _score(method, games: Games, objective: str, scored=None) -> tuple[float, np.ndarray]:
    """The mean of ``objective`` over the (scored) games; 1e6 where it is not finite or the run's
    arithmetic broke down (a :class:`~statespace.model.ranges.ResultRangeError`): such settings lose."""
    try:
        proba = method.run(games).proba
    except ResultRangeError:
        n = len(games) if scored is None else len(scored)
        return 1e6, np.full(n, 1e6)
    if scored is not None:
        proba = proba[scored]
        games_score = games.score[scored]
    else:
        games_score = games.score
    if objective == "log_loss":
        per = metrics.log_loss(games_score, proba, per_game=True)
    elif objective == "log_loss_3":
        per = metrics.log_loss_3(games_score, proba, per_game=True)
    else:
        per = metrics.brier(games_score, proba, per_game=True)
    value = float(np.mean(per))
    return (value if np.isfinite(value) else 1e6), per


def tune(method, games: Games, params=None, bounds=None, *, objective: str | None = None, maxiter: int = 200,
         burn_in: float = 0.0, standard_errors: bool = True, start: str = "grid"):
    """Fit ``method``'s hyperparameters to ``games``; returns ``(new_method, TuneResult)``.

    ``params``: names to fit (default: the method's :meth:`tunable` set). ``bounds``: mapping
    ``name -> (low, high)`` overriding the defaults. ``objective``: one of :data:`OBJECTIVES`;
    ``None`` (default) means ``"log_loss_3"`` when the method's model has a threshold or Davidson
    draw model and the games have draws, and ``"log_loss"`` otherwise (:func:`default_objective`);
    the result's ``objective_name`` says which was used. ``burn_in``: the share of the earliest
    games (in time order) run through the filter but left out of the objective, so that settings
    are not chosen for how fast they forget the starting ratings.

    Settings the method learns from the games (its ``resolved(games)``, e.g. TrueSkill's
    ``draw_probability=None``) are fixed on ``games`` first. Fitted settings that end on a bound
    of their search box are listed in the result's ``on_bound`` (its ``repr`` marks them) and
    reported with a :class:`~statespace.methods.settings.BoundWarning`; a standard error the curvature
    leaves undefined is NaN (shown as ``n/a``).

    ``start``: where L-BFGS-B starts. ``"grid"`` (default): from the best of a coarse grid over
    the search box (:func:`filters.grid.box_grid`: up to :data:`GRID_POINTS` settings, even on the
    log scale where the box is positive) and the method's current settings, all scored in one
    batched compiled pass (:func:`filters.grid.evaluate`), so that a poor local minimum near the
    current settings is not where tuning ends; when that best point is not the current settings,
    L-BFGS-B runs from the current settings too and the lower end is kept, so the result is never
    worse than ``start="current"``'s. A method that is not a filter has no batched pass and starts
    from its current settings. ``"current"``: from the method's current settings (clipped to the
    box). The grid's evaluations are in the trace; the result's ``start`` is the
    method's settings (clipped to the box) either way.
    """
    if start not in ("grid", "current"):
        raise ValueError(f"start must be 'grid' or 'current', got {start!r}")
    if not isinstance(games, Games):
        raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
    resolved = getattr(method, "resolved", None)
    if callable(resolved):
        method = resolved(games)
    objective = resolve_objective(method, objective, games)
    default = method.tunable(games)
    names = list(default) if params is None else list(params)
    unknown = [p for p in names if p not in default]
    if unknown:
        raise ValueError(f"{method.name}: cannot tune {unknown}; tunable: {sorted(default)}")
    if not names:
        raise ValueError(f"{method.name}: nothing to tune")
    box = {p: tuple(map(float, default[p])) for p in names}
    for p, b in (bounds or {}).items():
        if p not in box:
            raise ValueError(f"bounds given for {p!r}, which is not being tuned")
        box[p] = check_box(method, p, b)
    current = {}
    for p in names:
        lo, hi = box[p]
        v = float(method.param_value(p))
        current[p] = min(max(v, lo), hi)
    logs = {p: box[p][0] > 0 for p in names}
    scored = None
    if burn_in > 0:  # first_scored checks 0 <= burn_in < 1 (and counts the burn-in as the grid does)
        scored = np.sort(games.order[first_scored(games, burn_in):])
    else:
        first_scored(games, burn_in)
    trace_rows = []
    begin = current
    t0 = time.perf_counter()
    if start == "grid" and batchable(method):
        begin = _grid_start(method, games, objective, burn_in, box, logs, current, trace_rows)

    def to_x(values):
        return np.array([math.log(values[p]) if logs[p] else values[p] for p in names])

    def from_x(x):
        return {p: (math.exp(xi) if logs[p] else float(xi)) for p, xi in zip(names, x)}

    x_bounds = [(math.log(box[p][0]), math.log(box[p][1])) if logs[p] else box[p] for p in names]

    def f(x):
        values = from_x(np.clip(x, [b[0] for b in x_bounds], [b[1] for b in x_bounds]))
        candidate = _built(method, values)
        value = 1e6 if candidate is None else _score(candidate, games, objective, scored)[0]
        trace_rows.append({**values, objective: value})
        return value

    with warnings.catch_warnings():
        # an explicit draw setting on games without draws: said once, by the run at the optimum below
        warnings.simplefilter("ignore", DrawWarning)
        res = _minimize(f, to_x(begin), x_bounds, maxiter)
        if begin != current:
            # from another start L-BFGS-B stops elsewhere on a flat floor, within its tolerance of
            # the minimum but not always below the current start's end: keeping the better of the
            # two makes the grid start never worse than start="current"
            res_current = _minimize(f, to_x(current), x_bounds, maxiter)
            if res_current.fun < res.fun:
                res = res_current
        best = from_x(res.x)
        se = _standard_errors(method, games, objective, best, box, scored) if standard_errors else {}
    value, _ = _score(method.with_params(**best), games, objective, scored)
    seconds = time.perf_counter() - t0
    n_scored = len(games) if scored is None else len(scored)
    on_bound = at_bound(best, box)
    result = TuneResult(best, se, value, objective, n_scored, pd.DataFrame(trace_rows), seconds,
                        bool(res.success), str(res.message), current, dict(box), on_bound)
    if on_bound:
        said = "; ".join(f"{k}={best[k]:.6g} at its {side} bound {b:.6g}"
                         for k in on_bound for side, b in [result.bound_of(k)])
        warnings.warn(f"{getattr(method, 'name', type(method).__name__)}: tuned setting"
                      f"{'s' if len(on_bound) > 1 else ''} on a bound of the search box ({said}): the box, not "
                      f"the games, probably stopped {'them' if len(on_bound) > 1 else 'it'}; widen it with "
                      f"bounds={{{', '.join(repr(k) + ': (low, high)' for k in on_bound)}}}",
                      BoundWarning, stacklevel=caller_stacklevel())
    tuned = method.with_params(**best)
    tuned.tuning = result
    return tuned, result


def _minimize(f, x0, x_bounds, maxiter):
    """L-BFGS-B on ``f`` from ``x0`` in the box ``x_bounds`` (finite-difference step 1e-4 on the
    search scale)."""
    from scipy.optimize import minimize  # here, so that importing filters does not load the optimiser

    return minimize(f, x0, method="L-BFGS-B", bounds=x_bounds, options={"maxiter": maxiter, "eps": 1e-4})


#: the most settings the coarse grid of ``tune(start="grid")`` scores (``m`` values a dimension,
#: ``m^k`` at most this for ``k`` tuned settings)
GRID_POINTS = 128


def _grid_start(method, games, objective, burn_in, box, logs, current, trace_rows) -> dict:
    """The best of the coarse grid over ``box`` and the ``current`` settings by ``objective``, all
    scored in one batched pass; each evaluation added to ``trace_rows``. A non-finite score counts
    as 1e6, as in the optimisation."""
    points = box_grid(box, logs, GRID_POINTS) + [current]
    built = [_built(method, p) for p in points]
    ok = [i for i, m in enumerate(built) if m is not None]
    values = np.full(len(points), 1e6)
    if ok:
        values[ok] = evaluate([built[i] for i in ok], games, burn_in)[:, SCORES.index(objective)]
    values = np.where(np.isfinite(values), values, 1e6)
    for p, v in zip(points, values):
        trace_rows.append({**p, objective: float(v)})
    # the current settings win a tie, so that a flat objective leaves them where they were
    best = len(points) - 1 if values[-1] <= values.min() else int(np.argmin(values))
    return dict(points[best])


def check_box(method, name: str, box) -> tuple[float, float]:
    """The search box ``(low, high)`` of setting ``name`` as floats, checked before any search: two
    finite numbers, ``low < high``, and both ends inside the setting's accepted range (the method
    is built at each end, so its own rule, :mod:`statespace.model.ranges`, decides); else a
    ``ValueError`` naming the method, the setting, the box and the range."""
    owner = getattr(method, "name", type(method).__name__)
    try:
        lo, hi = (float(x) for x in box)
    except (TypeError, ValueError):
        raise ValueError(f"{owner}: the search box of {name!r} must be two numbers (low, high), got {box!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"{owner}: the search box of {name!r} must be finite, got ({lo:g}, {hi:g})")
    if not lo < hi:
        raise ValueError(f"{owner}: the search box of {name!r} must satisfy low < high, got ({lo:g}, {hi:g})")
    for end in (lo, hi):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                method.with_params(**{name: end})
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{owner}: the search box of {name!r}, ({lo:g}, {hi:g}), leaves the setting's accepted "
                             f"range at {end:g}: {exc}") from None
    return lo, hi


def _built(method, values: dict):
    """``method`` with ``values``, or ``None`` where the combination leaves an accepted range that
    depends on another setting (TrueSkill's home advantage is bounded in scales of its ``beta``):
    each end of the box is inside the range alone (:func:`check_box`), so such a point scores as a
    loss rather than end the search."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DrawWarning)
        try:
            return method.with_params(**values)
        except ValueError:
            return None


def at_bound(params, box, tol: float = 1e-3) -> tuple[str, ...]:
    """Names of the settings in ``params`` that ended on a bound of their search box ``box``
    (``{name: (low, high)}``). For a box of positive numbers (searched on the log scale, as
    :func:`tune` does) ``|log(v / bound)| < tol``; otherwise ``|v - bound| < tol (high - low)``, but a
    bound of 0 only when the value is 0 (within ``1e-12 (high - low)``: L-BFGS-B stops exactly on a
    bound it presses against), since near 0 a share of the width says nothing: in a box
    ``(0, 1e6)`` a drift of 4.7 is not "at" 0. A setting that ends on a bound was probably stopped
    by the box, not by the data."""
    out = []
    for k, v in params.items():
        lo, hi = box.get(k, (-np.inf, np.inf))
        if lo > 0:
            near = min(abs(math.log(v / lo)), abs(math.log(hi / v))) < tol
        else:
            near = any(abs(v - b) < (tol if b != 0 else 1e-12) * (hi - lo) for b in (lo, hi))
        if near:
            out.append(k)
    return tuple(out)


def _standard_errors(method, games, objective, best, box, scored=None) -> dict:
    """Standard errors from the numerical Hessian of the summed loss at ``best``."""
    names = list(best)
    n = len(games) if scored is None else len(scored)
    x0 = np.array([best[p] for p in names])
    steps = np.array([max(abs(v) * 1e-3, 1e-6 * (box[p][1] - box[p][0])) for p, v in zip(names, x0)])

    def total(x):
        vals = {p: float(v) for p, v in zip(names, x)}
        for p in names:
            lo, hi = box[p]
            vals[p] = min(max(vals[p], lo), hi)
        candidate = _built(method, vals)  # a step across a range another setting bounds: no curvature there
        return math.nan if candidate is None else n * _score(candidate, games, objective, scored)[0]

    k = len(names)
    H = np.empty((k, k))
    f0 = total(x0)
    for i in range(k):
        ei = np.zeros(k)
        ei[i] = steps[i]
        fp, fm = total(x0 + ei), total(x0 - ei)
        H[i, i] = (fp - 2 * f0 + fm) / steps[i] ** 2
        for j in range(i):
            ej = np.zeros(k)
            ej[j] = steps[j]
            H[i, j] = H[j, i] = (total(x0 + ei + ej) - total(x0 + ei - ej) - total(x0 - ei + ej)
                                 + total(x0 - ei - ej)) / (4 * steps[i] * steps[j])
    try:
        cov = np.linalg.inv(H)
        se = np.sqrt(np.where(np.diag(cov) > 0, np.diag(cov), np.nan))
    except np.linalg.LinAlgError:
        se = np.full(k, np.nan)
    return {p: float(s) for p, s in zip(names, se)}
