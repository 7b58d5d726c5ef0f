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
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from . import metrics
from .games import Games
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


def _walk_forward(method, games: Games, test: Games, every) -> np.ndarray:
    """Refit before each block of held-out games on everything before it; forecast the block."""
    blocks = _blocks(test, every)
    proba = np.empty((len(test), 3))
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
        prev = fitted
    return proba


def _forecast(method, train: Games, test: Games, games: Games, mode: str, every=None) -> tuple[np.ndarray, float]:
    t0 = time.perf_counter()
    online = is_online(method)
    if mode == "frozen":
        proba = method.fit(train).predict_proba(test)
    elif online:  # online and walk-forward: filters learn from every game before each forecast
        full = method.run(games).proba
        proba = full[pd.Index(games.row).get_indexer(test.row)]
    elif mode == "walk_forward":
        proba = _walk_forward(method, games, test, every)
    else:
        raise ValueError(f"method {method!r} has no online run; use mode='frozen' or 'walk_forward'")
    return proba, time.perf_counter() - t0


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
      the paired standard error over the same games.

    With ``tune=True`` every method that is a :class:`statespace.protocols.TunableMethod` with
    something to tune on these games is first tuned on the training part only (``tune_options`` are passed on, e.g. ``{"burn_in": 0.2}``); the table
    then has ``tune_seconds`` and ``result.attrs["tuned"]`` the fitted settings (each a
    ``filters.tuning.TuneResult``, whose ``objective_name`` says what was minimised). Unless
    ``tune_options`` gives an ``"objective"``, each method gets its own default: the
    three-outcome log loss ``"log_loss_3"`` when its model has a threshold or Davidson draw
    model (TrueSkill, the EKF with threshold draws), the expected-score ``"log_loss"`` otherwise
    (``filters.tuning.default_objective``).

    ``result.attrs["proba"]`` holds each method's (n_test, 3) forecasts and
    ``result.attrs["test"]`` the held-out ``Games``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not isinstance(games, Games):
        raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
    named = _named(methods)
    train, test = games.split(split)
    y = test.score
    rows, probas, losses = [], {}, {}
    tuned = {}
    for name, method in named.items():
        tune_seconds = float("nan")
        if tune and is_tunable(method, train):
            t0 = time.perf_counter()
            method = method.tune(train, **(tune_options or {}))
            tune_seconds = time.perf_counter() - t0
            tuned[name] = method.tuning
        proba, seconds = _forecast(method, train, test, games, mode, every)
        probas[name] = proba
        losses[name] = metrics.log_loss(y, proba, per_game=True)
        rows.append({
            "method": name, "n_test": len(test),
            "log_loss": float(losses[name].mean()),
            "brier": metrics.brier(y, proba),
            "accuracy": metrics.accuracy(y, proba),
            "accuracy_50": metrics.accuracy(y, proba, band=None),
            "log_loss_3": metrics.log_loss_3(y, proba),
            "fit_seconds": seconds,
            **({"tune_seconds": tune_seconds} if tune else {}),
        })
    table = pd.DataFrame(rows).set_index("method")
    best = table["log_loss"].idxmin()
    deltas = [metrics.paired_difference(losses[n], losses[best]) for n in table.index]
    table["delta_log_loss"] = [d for d, _ in deltas]
    table["delta_se"] = [s if n != best else 0.0 for n, (_, s) in zip(table.index, deltas)]
    table = table.sort_values("log_loss", kind="stable")
    table.attrs["proba"] = probas
    table.attrs["test"] = test
    table.attrs["mode"] = mode
    table.attrs["split"] = split
    if tune:
        table.attrs["tuned"] = tuned
    return table
