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

The result is a :class:`Comparison`, a :class:`pandas.DataFrame` that shows itself in Jupyter
(the best log loss highlighted, a caption saying what was scored) and plots itself
(``table.plot()``: :func:`statespace.methods.plots.plot_comparison`). Long comparisons show a progress
bar (``progress=``).
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from statespace.model import metrics
from statespace.methods.display import block_html, table_html
from statespace._runtime.progress import bar, check_progress, note
from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.skillmodel import SkillModel
from statespace.methods.protocols import Forecaster, is_online, is_tunable

__all__ = ["compare", "Comparison", "MODES"]

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
                            f"(see statespace.methods.protocols.Method)")
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


def _walk_forward(method, games: Games, test: Games, every, scores: bool = False, tick=None):
    """Refit before each block of held-out games on everything before it; forecast the block.
    Returns the forecasts and, with ``scores``, each refit's :func:`_diff` of its block
    (``None`` when a fit has none). ``tick(k, n)``, when given, is called after block ``k`` of ``n``."""
    blocks = _blocks(test, every)
    proba = np.empty((len(test), 3))
    mean, var = np.empty(len(test)), np.empty(len(test))
    have = scores
    pos = pd.Index(games.row)
    test_pos = pos.get_indexer(test.row)
    t_all = games.days()
    prev = None
    n_blocks = int(blocks.max()) + 1
    for k in range(n_blocks):
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
        if tick is not None:
            tick(k, n_blocks)
    return proba, ((mean, var) if have else None)


def _observes_scores(method) -> bool:
    """Whether the method's model forecasts each side's score (``Margin``, ``Goals``)."""
    model = getattr(method, "model", None)
    return isinstance(model, SkillModel) and model.observation.needs_scores


def _diff(fitted, games: Games):
    """The fitted method's predictive ``(mean, var)`` of the skill difference of ``games``
    (``predict_diff``), ``None`` when it has none."""
    predict_diff = getattr(fitted, "predict_diff", None)
    return None if predict_diff is None else _moments_or_none(lambda: predict_diff(games))


def _moments_or_none(read):
    """``read()``, or ``None`` where the forecast reads more than the skill difference's moments (two
    skills per competitor: ``NotImplementedError``), so that its score metrics are left out."""
    try:
        return read()
    except NotImplementedError:
        return None


def _forecast(method, train: Games, test: Games, games: Games, mode: str, every=None, scores: bool = False,
              tick=None):
    """``(proba, seconds, moments)``: the held-out forecasts, the seconds to fit and forecast, and
    with ``scores`` the predictive ``(mean, var)`` of each held-out game's skill difference
    (``None`` without ``scores`` or when the fitted method has none). Reading the moments of an
    online run replays it, which is not counted in the seconds. ``tick``: passed to
    :func:`_walk_forward` (called after each refit)."""
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
        both = _moments_or_none(lambda: run.diff_moments) if scores and hasattr(run, "diff_moments") else None
        if both is not None:
            moments = both[0][held_out], both[1][held_out]
    elif mode == "walk_forward":
        proba, moments = _walk_forward(method, games, test, every, scores, tick)
        seconds = time.perf_counter() - t0
    else:
        raise ValueError(f"method {method!r} has no online run; use mode='frozen' or 'walk_forward'")
    return proba, seconds, moments


def compare(methods, games: Games, split: float = 0.7, mode: str | None = None, *, every=30, tune: bool = False,
            tune_options: dict | None = None, progress: bool | None = None, executor=None,
            n_jobs: int | None = None) -> "Comparison":
    """Score ``methods`` on the last ``1 - split`` of ``games`` (see the module docstring).

    ``games`` may be a :class:`statespace.data.matches.Matches` (matches of many sides): this is
    then :func:`statespace.evaluation.compare_matches.compare_matches` (every method online, one
    step ahead; ``mode`` ``None`` or ``"online"``, no executor). For games ``mode`` ``None`` is
    ``"frozen"``.

    ``methods`` is a mapping ``{name: method}`` or a list of methods (named by ``.name``); each
    needs at least ``fit(games)`` returning an object with ``predict_proba(games)``
    (:class:`statespace.methods.protocols.Forecaster`). Online and walk-forward modes run the methods
    that learn game by game (:func:`statespace.methods.protocols.is_online`: the filters) with
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
      observed scores (:func:`statespace.model.metrics.score_log_density`; higher is better), and
      ``margin_rmse``, the root mean squared error of the margin ``score_a - score_b`` against its
      predictive mean (:func:`statespace.model.metrics.margin_rmse`). Both are scored from the
      predictive distribution ``N(mean, var)`` of each held-out game's skill difference: frozen,
      ``fitted.predict_diff(test)``; online, the run's one-step-ahead ``run.diff_moments``;
      walk-forward, each refit's ``predict_diff`` of its block (filters as online). They are NaN
      for a method that forecasts no score (an outcome model, or a fitted result without
      ``predict_diff``); the log density of a Margin model (a density of the margin) and of a
      Goals model (a probability of both counts) are not on one scale. Without such a method or
      such games the columns are absent.

    With ``tune=True`` every method that is a :class:`statespace.methods.protocols.TunableMethod` with
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
    skill differences; ``attrs["mode"]``, ``attrs["split"]`` and, in walk-forward mode,
    ``attrs["every"]`` the arguments.

    The result is a :class:`Comparison` (a DataFrame): in Jupyter it shows the table with the
    best log loss highlighted and a caption (mode, split, held-out games, what ``delta_se``
    means); ``result.plot()`` draws :func:`statespace.methods.plots.plot_comparison`.

    ``progress``: a progress bar on stderr (``tqdm``; in Jupyter, in the cell's output), one step
    per method tuned, per method fitted or run and, in walk-forward mode, per refit block of a
    method that refits. ``True`` always, ``False`` never, ``None`` (default) once the comparison
    has taken more than :data:`statespace._runtime.progress.PROGRESS_AFTER` seconds (5), as
    :func:`statespace.auto`'s ``progress``.

    ``executor``: any :class:`concurrent.futures.Executor` (a process pool, Dask's
    ``client.get_executor()``) on which each method is tuned and fitted as one task
    (:func:`statespace._runtime.pool.run_all`, the machinery of :func:`statespace.evaluation.study.study`); the
    table is the same as without it (up to the timing columns). The progress bar then steps once
    per method as its task ends. A method that fails raises here, as without an executor.
    ``n_jobs=k``: the same on a local process pool of ``k`` workers (``-1``: one per core), made
    here and shut down at the end. Each worker compiles the loops its methods need, so a first
    comparison on games big enough to compile (:mod:`statespace._runtime.tier`) spreads its
    compilation over the cores; small ones run faster in this process, which compiles nothing.
    """
    if isinstance(games, Matches):  # matches of many sides: scored online only
        from statespace.evaluation.compare_matches import compare_matches

        if n_jobs not in (None, 1):
            raise ValueError("n_jobs is for games; matches are compared in this process")

        return compare_matches(methods, games, split, progress=progress, mode=mode, tune=tune,
                               tune_options=tune_options, executor=executor)
    mode = "frozen" if mode is None else mode
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if not isinstance(games, Games):
        raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
    check_progress(progress, "compare")
    from statespace._runtime.pool import check_jobs

    jobs = check_jobs(executor, n_jobs)
    named = _named(methods)
    train, test = games.split(split)
    # score columns: where some method's model forecasts the score and the games have one
    score_columns = games.has_scores and any(_observes_scores(m) for m in named.values())
    rows, probas, losses, diffs = [], {}, {}, {}
    tuned = {}
    tuning = {name: tune and is_tunable(method, train) for name, method in named.items()}
    n_blocks = []  # the number of walk-forward blocks, once a method needs it

    def steps(method) -> int:
        """The progress steps of a method's forecasts: one, or one per walk-forward refit."""
        if mode != "walk_forward" or is_online(method):
            return 1
        if not n_blocks:
            n_blocks.append(int(_blocks(test, every).max()) + 1)
        return n_blocks[0]

    payloads = [(method, train, test, games, mode, every, tuning[name], tune_options, score_columns)
                for name, method in named.items()]
    results = {}
    if executor is not None or (jobs or 1) > 1:  # each method one task, the rows assembled here
        from statespace._runtime.pool import run_all

        with bar(len(payloads), "compare", progress, unit="method") as pbar:
            def done(i, result):
                results[i] = result
                pbar.update(1)

            run_all(_method_task, payloads, done, executor=executor, n_jobs=n_jobs)
    else:  # the same task for each method in turn, its progress step by step (tuning, each refit)
        total = sum(int(tuning[name]) + steps(method) for name, method in named.items())
        with bar(total, "compare", progress, unit="step") as pbar:
            def starting(name, method):
                note(pbar, f"{name}: refit 1/{steps(method)}" if steps(method) > 1 else f"fitting {name}")

            for i, (name, method) in enumerate(named.items()):
                planned = steps(method)

                def after_tuning(tuned_method, name=name, planned=planned):
                    if steps(tuned_method) != planned:  # the tuned method refits where the given one did not, or back
                        pbar.total += steps(tuned_method) - planned
                    pbar.update(1)
                    starting(name, tuned_method)

                def tick(k, n, name=name):
                    pbar.update(1)
                    if k + 1 < n:
                        note(pbar, f"{name}: refit {k + 2}/{n}")

                if tuning[name]:
                    note(pbar, f"tuning {name}")
                else:
                    starting(name, method)
                results[i] = _method_task(payloads[i], after_tuning, tick)
                if steps(results[i][0]) == 1:  # no refit ticked it
                    pbar.update(1)
            note(pbar, "done")
    for i, name in enumerate(named):
        method, proba, seconds, moments, tuning_result, tune_seconds = results[i]
        if tuning_result is not None:
            tuned[name] = tuning_result
        probas[name] = proba
        if score_columns and moments is not None:
            diffs[name] = moments
        row, losses[name] = _row(name, method, proba, seconds, moments, test, score_columns)
        if tune:
            row["tune_seconds"] = tune_seconds
        rows.append(row)
    table = pd.DataFrame(rows).set_index("method")
    best = table["log_loss"].idxmin()
    deltas = [metrics.paired_difference(losses[n], losses[best]) for n in table.index]
    table["delta_log_loss"] = [d for d, _ in deltas]
    table["delta_se"] = [s if n != best else 0.0 for n, (_, s) in zip(table.index, deltas)]
    table = Comparison(table.sort_values("log_loss", kind="stable"))
    table.attrs["proba"] = probas
    if score_columns:
        table.attrs["diff_moments"] = diffs
    table.attrs["test"] = test
    table.attrs["mode"] = mode
    table.attrs["split"] = split
    if mode == "walk_forward":
        table.attrs["every"] = every
    if tune:
        table.attrs["tuned"] = tuned
    return table


def _method_task(payload, after_tuning=None, tick=None):
    """One method of a :func:`compare` run (in this process, or as a task on an executor): tuned
    on the training part when asked, then forecast as :func:`_forecast` does. Returns ``(method,
    proba, seconds, moments, tuning, tune_seconds)``: the (tuned) method, its forecasts, seconds
    and moments, its ``TuneResult`` (``None`` untuned) and the seconds tuning took (NaN untuned).
    ``after_tuning(method)`` is called with the tuned method, ``tick`` after each walk-forward
    refit (:func:`_walk_forward`): the serial run's progress."""
    method, train, test, games, mode, every, tuning, tune_options, score_columns = payload
    tune_seconds, result = float("nan"), None
    if tuning:
        t0 = time.perf_counter()
        method = method.tune(train, **(tune_options or {}))
        tune_seconds = time.perf_counter() - t0
        result = method.tuning
        if after_tuning is not None:
            after_tuning(method)
    scores = score_columns and _observes_scores(method)
    proba, seconds, moments = _forecast(method, train, test, games, mode, every, scores, tick)
    return method, proba, seconds, moments, result, tune_seconds


def _row(name, method, proba, seconds, moments, test: Games, score_columns: bool) -> tuple[dict, np.ndarray]:
    """One method's row of the table from its held-out forecasts, and its per-game log losses."""
    y = test.score
    losses = metrics.log_loss(y, proba, per_game=True)
    row = {
        "method": name, "n_test": len(test),
        "log_loss": float(losses.mean()),
        "brier": metrics.brier(y, proba),
        "accuracy": metrics.accuracy(y, proba),
        "accuracy_50": metrics.accuracy(y, proba, band=None),
        "log_loss_3": metrics.log_loss_3(y, proba),
    }
    if score_columns:
        row["score_log_density"] = row["margin_rmse"] = float("nan")
        if moments is not None:
            obs, scale = method.model.observation, method.model.scale
            row["score_log_density"] = metrics.score_log_density(obs, test, *moments, scale=scale)
            try:
                row["margin_rmse"] = metrics.margin_rmse(obs, test, *moments, scale=scale)
            except NotImplementedError:  # an extension's observation need not forecast the margin's mean
                pass
    row["fit_seconds"] = seconds
    return row, losses


# ---------------------------------------------------------------------------- the result
#: the columns a Comparison shows in Jupyter: (column, heading, better: "min" or "max" or None)
_SHOWN = (("log_loss", "log loss", "min"), ("brier", "Brier", "min"), ("accuracy", "accuracy", "max"),
          ("log_loss_3", "log loss 3", "min"), ("score_log_density", "score log dens", "max"),
          ("margin_rmse", "margin RMSE", "min"), ("fit_seconds", "fit s", None), ("tune_seconds", "tune s", None))

_MODE_TEXT = {"frozen": "frozen forecasts (fitted on the training part, nothing learnt from held-out results)",
              "online": "online forecasts (each game forecast from every game before it)",
              "walk_forward": "walk-forward forecasts (smoothers refitted before each block{every}; filters online)"}


class Comparison(pd.DataFrame):
    """What :func:`compare` returns: the table (a :class:`pandas.DataFrame`, one row per method,
    best log loss first; a thin subclass: every DataFrame operation works, keeps the class and
    ``attrs``), which also

    - shows itself in Jupyter: the scores, the best log loss highlighted (its row shaded, the
      best value of each score in bold) and a caption saying the mode, the split, the number of
      held-out games and what ``delta_se`` is (the paired standard error of each method's log
      loss minus the best one's, over the same games);
    - plots itself: :meth:`plot` is :func:`statespace.methods.plots.plot_comparison` (calibration of
      every method on the held-out games; with ``fitted``, its trajectories too). pandas' own
      plotting of the table is :attr:`plot_frame` (``table.plot_frame.bar(y="log_loss")``);
      a column's ``table["log_loss"].plot`` is pandas' as always.
    """

    @property
    def _constructor(self):
        return Comparison

    def plot(self, fitted=None, truth=None, **options):
        """:func:`statespace.methods.plots.plot_comparison` of this table: ``fitted`` (optional) adds its
        trajectories with ``truth``; ``options``: ``top``, ``bins``, ``title``. Returns the
        Figure."""
        from statespace.methods import plots

        return plots.plot_comparison(self, fitted, truth, **options)

    @property
    def plot_frame(self):
        """pandas' plotting accessor of the table (``pandas.DataFrame.plot``), which :meth:`plot`
        replaces on a Comparison."""
        return pd.DataFrame(self).plot

    def caption(self) -> str:
        """What the table scored, in one paragraph (the caption shown in Jupyter)."""
        a = self.attrs
        parts = []
        mode = a.get("mode")
        if mode in _MODE_TEXT:
            every = a.get("every")
            every = "" if every is None else (f" of {every:g} days" if isinstance(every, (int, float)) else
                                              f" of a {every}")
            parts.append(_MODE_TEXT[mode].format(every=every))
        test = a.get("test")
        n_test = len(test) if test is not None else (int(self["n_test"].iloc[0]) if "n_test" in self and len(self)
                                                     else None)
        split = a.get("split")
        if n_test is not None:
            held = f"of {n_test:,} held-out games"
            if isinstance(split, (int, float)):
                held += f" (the last {1 - split:.0%} in time; split={split:g})"
            parts.append(held)
        text = " ".join(parts).strip()
        text = (text[:1].upper() + text[1:] + ". ") if text else ""
        text += ("Lower log loss and Brier are better; \u0394 log loss is each method's log loss minus the "
                 "best one's, \u00b1 its paired standard error over the same games.")
        return text

    def _repr_html_(self) -> str | None:
        """The table with the best log loss highlighted and the caption (pandas' own HTML with
        the caption when the score columns are not all there)."""
        if "log_loss" not in self.columns or not len(self):
            table = super()._repr_html_()
            return None if table is None else block_html(None, table, [self.caption()])
        shown = [(c, h, b) for c, h, b in _SHOWN if c in self.columns and self[c].notna().any()]
        deltas = "delta_log_loss" in self.columns and "delta_se" in self.columns
        header = ["method"] + [h for _, h, _ in shown] + (["\u0394 log loss \u00b1 se"] if deltas else [])
        best_row = int(np.nanargmin(self["log_loss"].to_numpy(dtype=float)))
        best_cells = set()
        for j, (c, _, better) in enumerate(shown, start=1):
            v = self[c].to_numpy(dtype=float)
            if better and np.isfinite(v).any():
                target = np.nanmin(v) if better == "min" else np.nanmax(v)
                best_cells |= {(i, j) for i in np.flatnonzero(v == target)}
        rows = []
        for i, (name, r) in enumerate(self.iterrows()):
            row = [str(name)]
            for c, _, _ in shown:
                v = r[c]
                row.append("\u2013" if pd.isna(v) else f"{v:.3f}" if c.endswith("seconds") else f"{v:.4f}")
            if deltas:
                row.append("best" if i == best_row else
                           f"{r['delta_log_loss']:+.4f} \u00b1 {r['delta_se']:.4f}")
            rows.append(row)
        return block_html(None, table_html(header, rows, best_cells=best_cells, best_rows={best_row}),
                          [self.caption()])
