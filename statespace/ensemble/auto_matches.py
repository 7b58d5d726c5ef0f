"""``statespace.auto`` on matches of many sides: the match-rating method that forecasts them best.

``auto(matches)`` (a :class:`statespace.data.matches.Matches`; :func:`statespace.auto` comes here
when given one) chooses among the methods that rate matches of many sides (teams, free-for-all
rankings, partial play), on the matches it is given and on nothing else, and returns the chosen
method fitted on all of them, with a table of every candidate (:class:`AutoMatchFit`)::

    fit = statespace.auto(matches)        # tune on the first 70%, choose on the last 30%, refit on all
    print(fit.summary())                  # what was chosen, and why (every candidate's scores)
    fit.table                             # the candidates (DataFrame)
    fit.ratings()                         # the chosen method's leaderboard after every match
    fit.method.run(more_matches)          # the chosen (tuned) filter, online through any matches

**The candidates** (:data:`DEFAULT_CANDIDATES`): multiplayer Elo and Glicko-1 and -2 (pairwise
decomposition), TrueSkill, Weng-Lin (Bradley-Terry and Plackett-Luce), the extended Kalman filter and Elo-MMR,
each at the registry's settings; ``candidates=`` gives others (``{name: method or method spec}``, e.g.
``{"elo": Elo(k=24), "ts": "trueskill:beta=4"}``, or a list of methods named by their ``name``).
A candidate that cannot rate the matches (Elo-MMR rates contests of individuals, not teams) is a
row of the table with its reason in ``error``, never chosen.

**How each is judged.** The matches are split in time order at ``split`` (default 0.7): each
candidate is tuned on the first part (:func:`filters.match_tuning.tune_matches`: its settings by
L-BFGS-B, minimising the pairwise log loss of its one-step-ahead forecasts, the score the choice
is made by; a candidate with nothing to tune is scored at its settings, said in ``note``), then
run online over all the matches, and its forecasts of the matches after the split (each made
before its match, from the state that has seen only the matches before it) are scored by
:func:`statespace.model.ranking_scores.match_scores`. That is the row
``compare_matches(..., split=split, tune=True, tune_options={"objective": "pair_log_loss"})``
gives the candidate. ``objective=None`` tunes each by its own default instead (the ranking
log-likelihood), which for a Thurstonian forecast of a large field is a many-dimensional integral
per match, and so slow.

**The choice is by the pairwise log loss** (``pair_log_loss``, lower is better): the mean over
each match's pairs of sides of the binary log loss of the method's expected score of one side
against the other. It is the score that compares every method on its own numbers: every method
forecasts each pair (who finishes ahead of whom), and the pairwise log loss scores exactly those
probabilities, a proper score of them, whatever the kind of forecast. The ranking log-likelihood
scores the whole ranking, which only a Plackett-Luce forecast gives as such; for a forecast of
pairs (Bradley-Terry) or of a chain of adjacent places (TrueSkill's Thurstonian model) it scores
a model of the ranking built from the method's forecast, a construction that differs with the
kind. Pair inversion, rank deviation and top-1 read the forecast's order alone, not its
probabilities. Candidates within :data:`TIE` of
the lowest are level, and the first of them with the fewest tuned settings is taken.

**Refit.** The chosen candidate is then tuned again on all the matches (``refit=True``, the
default; the search starts from its tuned settings), so its settings use every match, and run
online through them: ``fit.run``. Its forecasts of the validation matches have then seen those
matches in the settings; for honest held-out forecasts give ``refit=False`` (the settings stay
those tuned on the first part) or score with ``compare_matches``. ``tune=False`` scores every
candidate at the settings given (nothing is tuned, nor refit).

Cost: one tuning per candidate on the first part (a few dozen runs of its compiled filter), one
run each over all the matches, and the refit's tuning. A field of fifty sides costs the
Thurstonian and EKF filters the most per match.
"""

from __future__ import annotations

import time
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from filters.match_run import check_matches
from filters.match_tuning import OBJECTIVES, tune_matches
from statespace._runtime.progress import bar, check_progress, note
from statespace.data.matches import Matches
from statespace.ensemble.auto_matches_fit import AutoMatchFit
from statespace.ensemble.auto_search import TIE
from statespace.methods.settings import BoundWarning
from statespace.model.ranking_metrics import paired_se
from statespace.model.ranking_scores import match_scores

__all__ = ["auto_matches", "AutoMatchFit", "DEFAULT_CANDIDATES", "SPLIT", "MAXITER"]

#: the registry's match-rating methods auto compares by default (each at its registered settings)
DEFAULT_CANDIDATES = ("elo", "glicko", "glicko2", "trueskill", "wenglin", "wenglin_pl", "ekf", "elo_mmr")
#: the share of the matches, in time order, each candidate is tuned on (the rest validates)
SPLIT = 0.7
#: L-BFGS-B iterations of each tuning
MAXITER = 50
#: the score the choice is made by, and the other scores of the table
CHOICE = "pair_log_loss"
_ERRORS = (ValueError, ArithmeticError, FloatingPointError, np.linalg.LinAlgError)


def _candidates(candidates) -> dict[str, Any]:
    """``{name: method}`` from ``None`` (the defaults), a mapping or a list; spec strings built."""
    from statespace.methods.specs import CLIError, parse_method

    if candidates is None:
        candidates = {name: name for name in DEFAULT_CANDIDATES}
    if isinstance(candidates, Mapping):
        named = {str(k): v for k, v in candidates.items()}
    elif isinstance(candidates, Sequence) and not isinstance(candidates, str):
        named = {}
        for m in candidates:
            name = m.strip().partition(":")[0] if isinstance(m, str) else getattr(m, "name", None)
            if name is None or name in named:
                raise ValueError(f"auto: candidate {m!r} " + ("has no name" if name is None else
                                 f"has the name {name!r} of another") + ": give candidates as a mapping {name: method}")
            named[name] = m
    else:
        raise ValueError(f"auto: candidates must be a mapping {{name: method}} or a list of methods, got "
                         f"{type(candidates).__name__}")
    if not named:
        raise ValueError("auto: candidates names no method")
    out = {}
    for name, m in named.items():
        if isinstance(m, str):
            try:
                m = parse_method(m)
            except CLIError as exc:
                raise ValueError(f"auto: candidate {name!r}: {exc}") from None
        if not callable(getattr(m, "run", None)):
            raise ValueError(f"auto: candidate {name!r} ({type(m).__name__}) has no run(matches): it is not a "
                             f"rating method")
        out[name] = m
    return out


def _check(method, matches: Matches) -> None:
    """``ValueError`` naming the method when it cannot rate these matches (no match kernel, a
    setting whose forecast means no ranking, or its own check of the table)."""
    check_matches(method, matches)
    method.match_forecast()
    own = getattr(method, "check_match_table", None)
    if callable(own):
        own(matches)


def _tune(method, matches: Matches, burn_in: float, maxiter: int, objective: str | None):
    """``(tuned method, TuneResult or None, note)``: a method that cannot be tuned stays as it is."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BoundWarning)  # the table names the settings on a bound
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow in a far-off evaluation
            tuned, result = tune_matches(method, matches, burn_in=burn_in, maxiter=maxiter,
                                           objective=objective)
    except ValueError as exc:
        return method, None, f"not tuned ({' '.join(str(exc).split())}): scored at its settings"
    return tuned, result, ""


def _score(method, matches: Matches, k: int) -> tuple[dict, dict]:
    """The scores of ``method``'s online forecasts of the matches from ``k`` on, and each score's
    per-match values and weights."""
    run = method.run(matches)
    s0 = int(matches.match_ptr[k])
    ptr = np.asarray(matches.match_ptr[k:]) - s0
    scores = match_scores(run.forecast, run.perf_mean[s0:], run.perf_var[s0:], np.asarray(matches.rank[s0:]), ptr)
    return ({"observation": run.forecast.kind, **{s: v[0] for s, v in scores.items()}},
            {s: (v[1], v[2]) for s, v in scores.items()})


def _pick(rows: list[dict]) -> dict | None:
    """The first row with the fewest tuned settings among those within :data:`TIE` of the lowest
    validation score; ``None`` when none has one."""
    ok = [r for r in rows if np.isfinite(r[CHOICE])]
    if not ok:
        return None
    best = min(r[CHOICE] for r in ok)
    return min((r for r in ok if r[CHOICE] <= best + TIE), key=lambda r: len(r["settings"]))


def auto_matches(matches: Matches, *, split: float = SPLIT, candidates=None, tune: bool = True,
                 burn_in: float = 0.0, maxiter: int = MAXITER, refit: bool = True,
                 objective: str | None = CHOICE, progress: bool | None = None) -> AutoMatchFit:
    """Choose the candidate with the lowest validation pairwise log loss on ``matches`` and return it
    fitted on all of them (see the module docstring).

    ``split``: the share of the matches (time order) the candidates are tuned on; the rest
    validates (both parts must hold matches). ``candidates``: ``None`` (:data:`DEFAULT_CANDIDATES`),
    ``{name: method or spec}`` or a list of methods. ``tune``: tune each candidate on the first
    part (default) or score it at its settings. ``burn_in``: the share of the tuning matches run
    but left out of each tuning's objective; ``maxiter``: L-BFGS-B iterations of each tuning.
    ``refit``: tune the chosen again on all the matches. ``objective``: what each tuning minimises,
    one of :data:`filters.match_tuning.OBJECTIVES` (default the pairwise log loss; ``None``: each
    method's own default). ``progress``: a bar on stderr, one step
    per candidate (``True``, ``False``, ``None``: once the work has taken a few seconds).
    ``ValueError`` for bad options, and when no candidate can be scored (naming each one's
    reason)."""
    t0 = time.perf_counter()
    if not isinstance(matches, Matches):
        raise TypeError(f"auto: expected statespace.data.matches.Matches, got {type(matches).__name__}")
    for flag, value in (("tune", tune), ("refit", refit)):
        if not isinstance(value, bool):
            raise ValueError(f"auto: {flag} must be True or False, got {value!r}")
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)) or maxiter < 1:
        raise ValueError(f"auto: maxiter must be a whole number >= 1, got {maxiter!r}")
    if objective is not None and objective not in OBJECTIVES:
        raise ValueError(f"auto: objective must be None or one of {', '.join(OBJECTIVES)}, got {objective!r}")
    check_progress(progress, "auto")
    try:
        train, _ = matches.split(split)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"auto: split={split!r}: {exc}") from None
    k = train.n_matches
    named = _candidates(candidates)
    rows, values, weights, tuned = [], {}, {}, {}
    with bar(len(named), "auto", progress, unit="candidate") as pbar:
        for name, method in named.items():
            note(pbar, f"{'tuning' if tune else 'scoring'} {name}")
            row = {"candidate": name, "observation": "", CHOICE: np.nan, "settings": {}, "at_bound": (),
                   "tune_seconds": np.nan, "seconds": np.nan, "note": "", "error": ""}
            try:
                _check(method, matches)
                if tune:
                    t = time.perf_counter()
                    method, result, row["note"] = _tune(method, train, burn_in, maxiter, objective)
                    row["tune_seconds"] = time.perf_counter() - t
                    if result is not None:
                        row.update(settings=dict(result.params), at_bound=tuple(result.on_bound))
                t = time.perf_counter()
                scores, values[name] = _score(method, matches, k)
                row["seconds"] = time.perf_counter() - t
                row.update(scores)
                weights = {s: w for s, (_, w) in values[name].items()}
                tuned[name] = method
            except _ERRORS as exc:
                row["error"] = " ".join(str(exc).split())
            rows.append(row)
            pbar.update(1)
        best = _pick(rows)
        if best is None:
            raise ValueError("auto: no candidate could be scored on these matches: " + "; ".join(
                f"{r['candidate']}: {r['error']}" for r in rows))
        chosen = best["candidate"]
        table = _table(rows, values, weights, chosen)
        method, refit_result = tuned[chosen], None
        if tune and refit and best["settings"]:
            note(pbar, f"refitting {chosen} on all the matches")
            refitted, refit_result, _ = _tune(method, matches, burn_in, maxiter, objective)
            method = refitted
        run = method.run(matches)
        note(pbar, f"chose {chosen}")
    table.attrs.update(choice=CHOICE, objective=objective if tune else None, split=split, n_train=k,
                       n_validation=matches.n_matches - k, tuned=tune, refit=refit_result is not None, values=values,
                       weights=weights)
    return AutoMatchFit(method, run, matches, table, chosen, tuned, refit_result, time.perf_counter() - t0)


def _table(rows: list[dict], values: dict, weights: dict, chosen: str) -> pd.DataFrame:
    """The candidates' table: best validation score first, failed ones last; ``delta`` and the
    paired standard error ``pair_log_loss_se`` against the chosen, over the same matches."""
    table = pd.DataFrame(rows).set_index("candidate")
    table["delta"] = table[CHOICE] - table.at[chosen, CHOICE]
    table["pair_log_loss_se"] = [paired_se(values[n][CHOICE][0], values[chosen][CHOICE][0], weights[CHOICE])
                                 if n in values and n != chosen else (0.0 if n == chosen else np.nan)
                                 for n in table.index]
    table["chosen"] = table.index == chosen
    scores = [c for c in ("loglik", "pair_inversion", "rank_deviation", "top1") if c in table.columns]
    cols = ["observation", CHOICE, "delta", "pair_log_loss_se", *scores, "chosen", "settings", "at_bound",
            "tune_seconds", "seconds", "note", "error"]
    return table[cols].sort_values(CHOICE, kind="stable", na_position="last")
