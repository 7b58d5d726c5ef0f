"""Held-out comparison of rating methods on the same matches of many sides.

``compare_matches(methods, matches, split=0.7)``: every method runs online over all the matches
(:meth:`filters.base.Filter.run` on a :class:`statespace.data.matches.Matches`: each match is
forecast from the state before it, then learnt from), and the forecasts of the matches after the
first ``split`` of them (in time order) are scored by :func:`statespace.model.ranking_scores.match_scores`
under the observation each method's forecast means (``method.match_forecast()``). Only the
methods with a match kernel rate matches (:func:`filters.match_run.match_filters`); any other is
refused, naming it, before anything runs. :func:`match_methods` builds the default list: every
registered method that rates matches.
"""

from __future__ import annotations

import time
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from filters.match_run import check_matches
from statespace._runtime.progress import bar, check_progress, note
from statespace.data.matches import Matches
from statespace.evaluation.tune_matches import tune_matches
from statespace.model.ranking_metrics import paired_se
from statespace.model.ranking_scores import SCORES, match_scores

__all__ = ["compare_matches", "match_methods", "check_method", "held_out"]


def match_methods(factories: Mapping[str, Any]) -> dict[str, Any]:
    """``{name: method}`` of the factories (``{name: factory}``, e.g. the registry's) whose method
    rates matches: its class has a match kernel (``_match``) and its ``match_forecast()`` works at
    the default settings (``elo_fide``'s does not: FIDE's rules are for games of two). A factory
    that is a class, or a classmethod of one, whose class has no match kernel is not called."""
    out = {}
    for name, factory in factories.items():
        cls = factory if isinstance(factory, type) else getattr(factory, "__self__", None)
        if isinstance(cls, type) and getattr(cls, "_match", None) is None:
            continue
        try:
            method = factory()
        except (TypeError, ValueError):  # needs settings: not in a default list
            continue
        if getattr(type(method), "_match", None) is None:
            continue
        try:
            method.match_forecast()
        except (ValueError, NotImplementedError):
            continue
        out[name] = method
    return out


def _named(methods) -> dict[str, Any]:
    if isinstance(methods, Mapping):
        out = {str(k): v for k, v in methods.items()}
    else:
        if not isinstance(methods, Sequence) or isinstance(methods, str):
            methods = [methods]
        out = {}
        for m in methods:
            name = getattr(m, "name", None)
            if name is None:
                raise TypeError(f"{m!r} has no name: give the methods as a mapping {{name: method}}")
            label, k = (repr(m) if name in out else name), 2
            while label in out:
                label, k = f"{name}_{k}", k + 1
            out[label] = m
    if not out:
        raise ValueError("compare_matches needs at least one method")
    return out


def held_out(matches: Matches, split: float) -> int:
    """The index of the first scored match: ``round(split * n_matches)`` (as
    :meth:`statespace.data.matches.Matches.split`); ``ValueError`` when a part is empty."""
    if isinstance(split, bool) or not isinstance(split, (int, float, np.floating)) or not 0 < split < 1:
        raise ValueError(f"split must be a number strictly between 0 and 1, got {split!r}")
    k = int(round(split * matches.n_matches))
    if k == 0 or k == matches.n_matches:
        raise ValueError(f"split {split:g} of {matches.n_matches} matches leaves no "
                         f"{'training' if k == 0 else 'held-out'} matches")
    return k


def check_method(name: str, method, matches: Matches) -> None:
    """``ValueError`` naming the method when it cannot rate these matches: no match kernel, a
    setting whose forecast means no ranking, or matches its own check refuses (a method's
    ``check_match_table(matches)``, where it has one: Elo-MMR's, for contests of individuals)."""
    if not callable(getattr(method, "run", None)):
        raise ValueError(f"method {name!r} ({type(method).__name__}) has no run(matches): only filters with a match "
                         f"kernel rate matches of many sides")
    check_matches(method, matches)
    method.match_forecast()
    own = getattr(method, "check_match_table", None)
    if callable(own):
        own(matches)


def compare_matches(methods, matches: Matches, split: float = 0.7, *, progress: bool | None = None,
                    mode: str | None = None, tune: bool = False, tune_options: dict | None = None,
                    executor=None) -> pd.DataFrame:
    """Score ``methods`` on the last ``1 - split`` of ``matches``, each forecast one step ahead.

    ``methods``: a mapping ``{name: method}`` or a list of methods (named by ``.name``). Each
    runs online over all the matches (``method.run(matches)``); the sides' performance moments
    before each held-out match are scored under the method's own ranking observation
    (:mod:`statespace.model.ranking_scores`). A method that cannot rate matches raises its
    ``ValueError`` (naming it) before any method runs.

    Returns a DataFrame, one row per method (index ``method``), best pairwise log loss first:

    - ``observation``: the ranking observation of the method's forecast (``match_forecast().kind``);
    - ``loglik``: the mean per match of the log-probability of the observed ranking under the
      method's forecast (higher is better; a probability of the same event for every method, so
      comparable across observations: :func:`statespace.model.ranking_scores.ranking_loglik`);
    - ``pair_log_loss``: the mean binary log loss of the method's expected score over each match's
      pairs of sides (nats; lower is better; comparable across observations);
    - ``pair_inversion`` (% of pairs ordered as the result, higher is better), ``rank_deviation``
      (% of the field, lower is better), ``top1`` (the share of matches the strongest forecast
      side won): by the sides' performance means;
    - each score's ``<score>_se``: the paired standard error over the same matches of the row's
      score minus the best row's for that score (0 on the best row);
    - ``n_matches`` and ``n_sides``: the matches scored and their sides; ``seconds``: the run.

    The scores weight matches as :mod:`statespace.model.ranking_scores` says (by their number of
    sides; the log-likelihood by match). ``result.attrs``: ``split``, ``n_train``, ``values``
    (per method, each score's per-match values) and ``weights`` (per score).

    ``progress``: a bar on stderr, one step per method (``True``, ``False``, or ``None``: once the
    work has taken a few seconds, where someone watches; :mod:`statespace._runtime.progress`).
    With ``tune=True`` each method is first tuned on the training matches only
    (:func:`statespace.evaluation.tune_matches.tune_matches`, ``tune_options`` passed on, e.g.
    ``{"burn_in": 0.2}``); the table then has ``tune_seconds`` and ``result.attrs["tuned"]`` each
    method's ``TuneResult``.

    ``mode`` and ``executor`` are :func:`statespace.evaluation.compare.compare`'s, which comes
    here with matches: only ``mode`` ``None`` or ``"online"``, and no executor.
    """
    if not isinstance(matches, Matches):
        raise TypeError(f"expected statespace.data.matches.Matches, got {type(matches).__name__}")
    if mode not in (None, "online"):
        raise ValueError(f"matches are scored online only (each match forecast from the matches before it), "
                         f"got mode={mode!r}")
    if executor is not None:
        raise ValueError("compare_matches runs its methods in this process: give no executor")
    check_progress(progress, "compare_matches")
    named = _named(methods)
    k = held_out(matches, split)
    for name, method in named.items():
        check_method(name, method, matches)
    s0 = int(matches.match_ptr[k])
    ptr = np.asarray(matches.match_ptr[k:]) - s0
    rank = np.asarray(matches.rank[s0:])
    rows, values, weights, tuned = [], {}, {}, {}
    train = matches.take(np.arange(k)) if tune else None
    with bar(len(named) * (2 if tune else 1), "compare", progress, unit="step") as pbar:
        for name, method in named.items():
            extra = {}
            if tune:
                note(pbar, f"tuning {name}")
                t0 = time.perf_counter()
                method, tuned[name] = tune_matches(method, train, **(tune_options or {}))
                extra["tune_seconds"] = time.perf_counter() - t0
                pbar.update(1)
            note(pbar, f"running {name}")
            t0 = time.perf_counter()
            run = method.run(matches)
            seconds = time.perf_counter() - t0
            forecast = run.forecast
            scores = match_scores(forecast, run.perf_mean[s0:], run.perf_var[s0:], rank, ptr)
            values[name] = {s: v for s, (_, v, _) in scores.items()}
            weights = {s: w for s, (_, _, w) in scores.items()}
            rows.append({"method": name, "observation": forecast.kind,
                         **{s: score for s, (score, _, _) in scores.items()},
                         "n_matches": int(ptr.size - 1), "n_sides": int(rank.size), "seconds": seconds, **extra})
            pbar.update(1)
        note(pbar, "done")
    table = pd.DataFrame(rows).set_index("method")
    for score, better in SCORES.items():
        se = np.zeros(len(table))
        for i, name in enumerate(table.index):
            col = table[score]
            best = col.idxmax() if better == "max" else col.idxmin()
            se[i] = 0.0 if best == name else paired_se(values[name][score], values[best][score], weights[score])
        table.insert(table.columns.get_loc(score) + 1, f"{score}_se", se)
    table = table.sort_values("pair_log_loss", kind="stable")
    table.attrs.update(split=split, n_train=k, values=values, weights=weights)
    if tune:
        table.attrs["tuned"] = tuned
    return table
