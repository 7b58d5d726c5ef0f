"""Held-out comparison of rating methods on the same games.

``compare(methods, games, split=0.7, mode="frozen" | "online")``: the first ``split`` of the
games (in time order) trains, the rest is scored.

- ``frozen``: each method is fitted on the training part and forecasts every held-out game
  from its final state (moved forward to each game's time, so tracked uncertainty grows),
  learning nothing from the held-out results.
- ``online``: each held-out game is forecast from everything before it, then learned from
  (filters run through all games; only the held-out forecasts are scored).
- ``walk_forward``: the held-out part is cut into blocks of ``every`` (a number of days, or
  ``"week"``, ``"month"``, ``"year"``); before each block every smoother is refitted on all games
  so far (warm-started from its previous fit when it accepts ``warm_start``) and forecasts the
  block, while filters run online as above. This is the fair way to put filters and
  smoothers in one table: a smoother frozen at the end of training loses simply because the
  held-out window is long.

Models that observe the score (``Margin``, ``Goals``) are also scored on their forecasts of the
score, from each held-out game's predictive distribution of the skill difference (the columns
``score_log_density`` and ``margin_rmse``; see :func:`compare`).
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from . import metrics
from .games import Games
from .model import SkillModel
from .protocols import Forecaster, is_online, is_tunable

__all__ = ["compare", "MODES"]

MODES = ("frozen", "online", "walk_forward")


def _named(methods) -> dict[str, Any]:
    if isinstance(methods, Mapping):
        out = dict(methods)
    else:
        if not isinstance(methods, Sequence) or isinstance(methods, str):
            methods = [methods]
        out = {}
        for m in methods:
            try:
                name = m.name
            except AttributeError:
                raise TypeError(f"{m!r} has no name: give the methods as a mapping {{name: method}}") from None
            if name in out:  # same kind twice: tell them apart by their settings
                name = repr(m)
            base, k = name, 2
            while name in out:
                name, k = f"{base}_{k}", k + 1
            out[name] = m
    if not out:
        raise ValueError("compare needs at least one method")
    for name, m in out.items():
        if not isinstance(m, Forecaster):
            raise TypeError(f"method {name!r} ({type(m).__name__}) has no fit(games): it is not a rating method "
                            f"(see statespace.protocols.Method)")
    return out


def _blocks(test: Games, every) -> np.ndarray:
    """Block number of each held-out game (input row order), consecutive in time."""
    if isinstance(every, str):
        codes = test.with_periods(every).period
    else:
        length = float(every)
        if not (np.isfinite(length) and length > 0):
            raise ValueError(f"every must be a number of days > 0 or 'week'/'month'/'year', got {every!r}")
        t = test.days()
        codes = np.floor((t - t.min()) / length).astype(np.int64)
    return np.unique(codes, return_inverse=True)[1]


def _walk_forward(method, games: Games, test: Games, every, scores: bool = False):
    """Refit before each block of held-out games on everything before it; forecast the block.
    Returns the forecasts and, with ``scores``, each refit's :func:`_diff` of its block
    (``None`` when a fit has none)."""
    blocks = _blocks(test, every)
    proba = np.empty((len(test), 3))
    mean, var = np.empty(len(test)), np.empty(len(test))
    have = scores
    pos = pd.Index(games.row)
    test_pos = pos.get_indexer(test.row)
    t_all = games.days()
    prev = None
    for k in range(blocks.max() + 1):
        in_block = np.flatnonzero(blocks == k)
        start = t_all[test_pos[in_block]].min()
        before = np.flatnonzero(t_all < start)
        # games of the same day as the block start belong to the block, not to its history
        train_k = games.take(before)
        block = test.take(in_block)
        if prev is not None and "warm_start" in inspect.signature(method.fit).parameters:
            fitted = method.fit(train_k, warm_start=prev)
        else:
            fitted = method.fit(train_k)
        proba[in_block] = fitted.predict_proba(block)
        if have:
            moments = _diff(fitted, block)
            have = moments is not None
            if have:
                mean[in_block], var[in_block] = moments
        prev = fitted
    return proba, ((mean, var) if have else None)


def _observes_scores(method) -> bool:
    """Whether the method's model forecasts each side's score (``Margin``, ``Goals``)."""
    model = getattr(method, "model", None)
    return isinstance(model, SkillModel) and model.observation.needs_scores


def _diff(fitted, games: Games):
    """The fitted method's predictive ``(mean, var)`` of the skill difference of ``games``
    (``predict_diff``), ``None`` when it has none."""
    predict_diff = getattr(fitted, "predict_diff", None)
    return None if predict_diff is None else predict_diff(games)


def _forecast(method, train: Games, test: Games, games: Games, mode: str, every=None, scores: bool = False):
    """``(proba, seconds, moments)``: the held-out forecasts, the seconds to fit and forecast, and
    with ``scores`` the predictive ``(mean, var)`` of each held-out game's skill difference
    (``None`` without ``scores`` or when the fitted method has none). Reading the moments of an
    online run replays it, which is not counted in the seconds."""
    t0 = time.perf_counter()
    online = is_online(method)
    moments = None
    if mode == "frozen":
        fitted = method.fit(train)
        proba = fitted.predict_proba(test)
        seconds = time.perf_counter() - t0
        if scores:
            moments = _diff(fitted, test)
    elif online:  # online and walk-forward: filters learn from every game before each forecast
        run = method.run(games)
        held_out = pd.Index(games.row).get_indexer(test.row)
        proba = run.proba[held_out]
        seconds = time.perf_counter() - t0
        if scores and hasattr(run, "diff_moments"):
            mean, var = run.diff_moments
            moments = mean[held_out], var[held_out]
    elif mode == "walk_forward":
        proba, moments = _walk_forward(method, games, test, every, scores)
        seconds = time.perf_counter() - t0
    else:
        raise ValueError(f"method {method!r} has no online run; use mode='frozen' or 'walk_forward'")
    return proba, seconds, moments


def compare(methods, games: Games, split: float = 0.7, mode: str = "frozen", *, every=30, tune: bool = False,
            tune_options: dict | None = None) -> pd.DataFrame:
    """Score ``methods`` on the last ``1 - split`` of ``games`` (see the module docstring).

    ``methods`` is a mapping ``{name: method}`` or a list of methods (named by ``.name``); each
    needs at least ``fit(games)`` returning an object with ``predict_proba(games)``
    (:class:`statespace.protocols.Forecaster`). Online and walk-forward modes run the methods
    that learn game by game (:func:`statespace.protocols.is_online`: the filters) with
    ``method.run``.
    ``every``: the block length of ``mode="walk_forward"`` (days, or ``"week"``/``"month"``/
    ``"year"``; default 30 days). Returns one row per method (index ``method``), best log loss first, with columns

    - ``n_test``, ``log_loss``, ``brier``, ``accuracy`` (0.45/0.55 band, draws called),
      ``accuracy_50`` (at 0.5, decisive games), ``log_loss_3`` (three outcomes; NaN for a
      method that forecasts no draws on data with draws), ``fit_seconds``;
    - ``delta_log_loss`` and ``delta_se``: each method's log loss minus the best one's, with
      the paired standard error over the same games;
    - where the games have ``score_a`` and ``score_b`` and some method's model observes the score
      (``model.observation`` a :class:`~statespace.Margin` or :class:`~statespace.Goals`), two more
      columns after ``log_loss_3``: ``score_log_density``, the mean log predictive density of the
      observed scores (:func:`statespace.metrics.score_log_density`; higher is better), and
      ``margin_rmse``, the root mean squared error of the margin ``score_a - score_b`` against its
      predictive mean (:func:`statespace.metrics.margin_rmse`). Both are scored from the
      predictive distribution ``N(mean, var)`` of each held-out game's skill difference: frozen,
      ``fitted.predict_diff(test)``; online, the run's one-step-ahead ``run.diff_moments``;
      walk-forward, each refit's ``predict_diff`` of its block (filters as online). They are NaN
      for a method that forecasts no score (an outcome model, or a fitted result without
      ``predict_diff``); the log density of a Margin model (a density of the margin) and of a
      Goals model (a probability of both counts) are not on one scale. Without such a method or
      such games the columns are absent.

    With ``tune=True`` every method that is a :class:`statespace.protocols.TunableMethod` with
    something to tune on these games is first tuned on the training part only (``tune_options`` are passed on, e.g. ``{"burn_in": 0.2}``); the table
    then has ``tune_seconds`` and ``result.attrs["tuned"]`` the fitted settings (each a
    ``filters.tuning.TuneResult``, whose ``objective_name`` says what was minimised). Unless
    ``tune_options`` gives an ``"objective"``, each method gets its own default: the
    three-outcome log loss ``"log_loss_3"`` when its model has a threshold or Davidson draw
    model (TrueSkill, the EKF with threshold draws), the expected-score ``"log_loss"`` otherwise
    (``filters.tuning.default_objective``).

    ``result.attrs["proba"]`` holds each method's (n_test, 3) forecasts,
    ``result.attrs["test"]`` the held-out ``Games`` and, with the score columns,
    ``result.attrs["diff_moments"]`` each scored method's ``(mean, var)`` of the held-out games'
    skill differences.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not isinstance(games, Games):
        raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
    named = _named(methods)
    train, test = games.split(split)
    y = test.score
    # score columns: where some method's model forecasts the score and the games have one
    score_columns = games.has_scores and any(_observes_scores(m) for m in named.values())
    rows, probas, losses, diffs = [], {}, {}, {}
    tuned = {}
    for name, method in named.items():
        tune_seconds = float("nan")
        if tune and is_tunable(method, train):
            t0 = time.perf_counter()
            method = method.tune(train, **(tune_options or {}))
            tune_seconds = time.perf_counter() - t0
            tuned[name] = method.tuning
        scores = score_columns and _observes_scores(method)
        proba, seconds, moments = _forecast(method, train, test, games, mode, every, scores)
        probas[name] = proba
        losses[name] = metrics.log_loss(y, proba, per_game=True)
        row = {
            "method": name, "n_test": len(test),
            "log_loss": float(losses[name].mean()),
            "brier": metrics.brier(y, proba),
            "accuracy": metrics.accuracy(y, proba),
            "accuracy_50": metrics.accuracy(y, proba, band=None),
            "log_loss_3": metrics.log_loss_3(y, proba),
        }
        if score_columns:
            row["score_log_density"] = row["margin_rmse"] = float("nan")
            if moments is not None:
                diffs[name] = moments
                obs, scale = method.model.observation, method.model.scale
                row["score_log_density"] = metrics.score_log_density(obs, test, *moments, scale=scale)
                try:
                    row["margin_rmse"] = metrics.margin_rmse(obs, test, *moments, scale=scale)
                except NotImplementedError:  # an extension's observation need not forecast the margin's mean
                    pass
        row["fit_seconds"] = seconds
        if tune:
            row["tune_seconds"] = tune_seconds
        rows.append(row)
    table = pd.DataFrame(rows).set_index("method")
    best = table["log_loss"].idxmin()
    deltas = [metrics.paired_difference(losses[n], losses[best]) for n in table.index]
    table["delta_log_loss"] = [d for d, _ in deltas]
    table["delta_se"] = [s if n != best else 0.0 for n, (_, s) in zip(table.index, deltas)]
    table = table.sort_values("log_loss", kind="stable")
    table.attrs["proba"] = probas
    if score_columns:
        table.attrs["diff_moments"] = diffs
    table.attrs["test"] = test
    table.attrs["mode"] = mode
    table.attrs["split"] = split
    if tune:
        table.attrs["tuned"] = tuned
    return table
