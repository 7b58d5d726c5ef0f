"""The staged search of :func:`statespace.auto`: which variants each stage tries, the tuning and
scoring of every candidate, the choice among them (:data:`TIE`), and its record
(:class:`AutoResult`). The search reads its options through :class:`SearchOptions` (what
:class:`~statespace.ensemble.auto_method.Auto` holds), so it does not import the method object."""

from __future__ import annotations

import dataclasses
import sys
import time
import warnings
from dataclasses import dataclass, field
from typing import Protocol, Sequence

import numpy as np
import pandas as pd

from statespace.model import metrics
from statespace.ensemble.auto_candidate import Candidate, start_candidate
from statespace.ensemble.auto_variant import COUNTS, GOALS_MAX_MEAN, OBSERVATIONS, Variant, goal_counts
from statespace.data.games import Games
from statespace.methods.settings import BoundWarning, TuneResult
from statespace._runtime.pool import run_all

# public through statespace.auto, whose comments on them are what the API reference shows
DEFAULT_POWERS = (0.0, 0.5, 1.0)
BURN_IN = 0.3
DEFAULT_OBSERVATIONS = OBSERVATIONS
#: the laws of the goal counts the default search tries (the inflated draws, tuned to no inflation
#: on international and English football, are a candidate on request: ``Variant("goals",
#: counts="inflated")``)
DEFAULT_COUNTS = COUNTS[:2]
MIN_GAMES = 50
PROGRESS_AFTER = 5.0
TIE = 1e-5


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


class SearchOptions(Protocol):
    """The options the search reads (and ``last``, which it sets): those of
    :class:`~statespace.ensemble.auto_method.Auto`, checked there."""

    candidates: Sequence[Variant] | None
    observations: Sequence[str] | str | None
    powers: Sequence[float] | None
    drifting_home: bool
    reversion: bool
    objective: str | None
    burn_in: float
    maxiter: int
    progress: bool | None
    n_jobs: int | None
    group: str | None
    last: AutoResult | None


def first_stage(opts: SearchOptions, games: Games) -> tuple[list[Variant], dict]:
    """The first stage's variants under the options of ``opts`` (an :class:`Auto`; all of its
    ``candidates=`` when given) and what the games allow."""
    scores = games.has_scores
    counts = scores and goal_counts(games)
    info = {"scores": scores, "counts": counts, "home": not bool(games.neutral.all()),
            "draws": bool(np.any(games.score == 0.5))}
    if getattr(opts, "group", None) is not None:
        games.groups(opts.group)  # a missing column, or a row without a group: said before any tuning
    if opts.candidates is not None:
        for v in opts.candidates:
            if v.group is not None:
                games.groups(v.group)
            if (v.observation != "outcome" or v.power is not None) and not scores:
                raise ValueError(f"auto: candidate {v.label!r} needs each side's score (columns 'score_a' and "
                                 f"'score_b'); these games have none")
            if v.observation == "goals" and not counts:
                raise ValueError(f"auto: candidate {v.label!r} needs goal counts: whole scores >= 0, at most "
                                 f"{GOALS_MAX_MEAN:g} a side on average")
            if v.home != "none" and not info["home"]:
                raise ValueError(f"auto: candidate {v.label!r} has a home advantage but every game is neutral")
        return list(opts.candidates), info
    obs = opts.observations
    if obs is not None and obs != "all":
        need = [o for o in obs if o != "outcome"]
        if need and not scores:
            raise ValueError(f"auto: observations {need} need each side's score (columns 'score_a' and "
                             f"'score_b'); these games have none")
        if "goals" in obs and not counts:
            raise ValueError(f"auto: the goals observation needs goal counts: whole scores >= 0, at most "
                             f"{GOALS_MAX_MEAN:g} a side on average")
    if opts.powers and not scores:
        raise ValueError(f"auto: powers={list(opts.powers)} weight games by their score margin; these games have "
                         f"no 'score_a' and 'score_b' columns (give powers=() or leave it out)")
    homes = (["fixed", "drifting"] if opts.drifting_home else ["fixed"]) if info["home"] else ["none"]
    revs = [False, True] if opts.reversion else [False]
    return [Variant("outcome", h, r) for h in homes for r in revs], info


def later_stages(opts: SearchOptions, best: Variant, info: dict) -> list[tuple[str, Variant]]:
    """Stages 2 and 3 of the default search under the options of ``opts``, built on the best
    structure."""
    if not info["scores"]:
        return []
    out = []
    powers = DEFAULT_POWERS if opts.powers is None else opts.powers
    for p in powers:
        out.append(("margin weights", Variant("outcome", best.home, best.reversion, p)))
    obs = {None: DEFAULT_OBSERVATIONS, "all": OBSERVATIONS}.get(opts.observations, opts.observations)
    if "margin" in obs:
        out.append(("observation", Variant("margin", best.home, best.reversion)))
    if "goals" in obs and info["counts"]:
        out.extend(("observation", Variant("goals", best.home, best.reversion, counts=c)) for c in DEFAULT_COUNTS)
        out.append(("observation", Variant("goals", best.home, best.reversion, draws="drifting")))
    return out


def grouped(v: Variant, group: str) -> Variant | None:
    """The ``"groups"`` stage's candidate: ``v`` with a part of its home advantage and (Goals with
    negative binomial counts) of its draw tendency per group of the column ``group``; None where
    ``v`` has neither to give (no home advantage, and another observation)."""
    out = dataclasses.replace(v, group=group)
    return out if out.group_parts() else None


def choose(opts: SearchOptions, games: Games) -> Candidate:
    """Tune every candidate on ``games`` under the options of ``opts`` (an :class:`Auto`) and
    return the best, tuned (``tuning``: an :class:`AutoResult`, also kept as ``opts.last``)."""
    t0 = time.perf_counter()
    if len(games) < MIN_GAMES:
        raise ValueError(f"auto: needs at least {MIN_GAMES} games to choose on, got {len(games)}")
    first, info = first_stage(opts, games)
    objective = opts.objective or ("log_loss_3" if info["draws"] else "log_loss")
    scored = np.sort(games.order[int(round(opts.burn_in * len(games))):])
    if scored.size == 0:
        raise ValueError(f"auto: burn_in={opts.burn_in} leaves none of the {len(games)} games to score")
    report = _Progress(opts.progress, t0)
    rows: list[dict] = []
    tuned: dict[Variant, Candidate] = {}
    staged = opts.candidates is None
    plan = [("structure" if staged else "given", v) for v in first]
    common = (games, info, objective, opts.burn_in, opts.maxiter, scored)
    count = [0]
    skipped: list[str] = []

    def wave(items: list, total: int) -> None:
        """Tune ``items`` (``(stage, variant, warm)``), on ``opts.n_jobs`` processes when asked; their
        rows kept in the items' order."""
        results: list = [None] * len(items)

        def done(i: int, result) -> None:
            results[i] = result
            row = result[0]
            count[0] += 1
            report(f"{count[0]}/{total} {row['candidate']}: " + (
                f"{objective} {row['train_score']:.5f}" if not row["error"] else f"failed ({row['error']})")
                + f" ({row['tune_seconds']:.1f} s)")

        payloads = [(stage, v, None if warm is None else warm.model) + common for stage, v, warm in items]
        run_all(_tune_task, payloads, done, n_jobs=getattr(opts, "n_jobs", None))
        for (_, v, _), (row, method) in zip(items, results):
            rows.append(row)
            if method is not None:
                tuned[v] = method

    def run_stage(items: list, source, total: int) -> None:
        """Tune ``items`` (``(stage, variant)``), each started from the tuned variant ``source(v)`` (or
        cold): those whose source is among the items wait for it, in a second wave."""
        names = {v for _, v in items}
        ready = [(s, v) for s, v in items if source(v) not in names]
        rest = [(s, v) for s, v in items if source(v) in names]
        for part in (ready, rest):
            if part:
                wave([(s, v, tuned.get(source(v))) for s, v in part], total)

    # the later stages' size (their variants depend on the first stage's best)
    group = getattr(opts, "group", None)
    later_max = len(later_stages(opts, first[0], info)) + (group is not None) if staged else 0
    # given candidates: one with drifting draws or two skills starts from its relative when that is given
    run_stage(plan, (lambda v: None) if staged else _relative, len(plan) + later_max)
    best = _pick(rows)
    if staged and info["scores"] and best is not None:
        best_v = next(v for v in first if v.label == best["candidate"])
        later = [(s, v) for s, v in later_stages(opts, best_v, info) if v not in tuned]
        run_stage(later, lambda v: best_v if v.observation == "outcome" else _relative(v), len(plan) + len(later))
        best = _pick(rows)
    if staged and group is not None and best is not None:  # the pick, with its effects per group
        pick = next(v for v in tuned if v.label == best["candidate"])
        by_group = grouped(pick, group)
        if by_group is not None:
            run_stage([("groups", by_group)], lambda v: pick, len(rows) + 1)
            best = _pick(rows)
        else:
            skipped.append(f"groups: the pick {pick.label!r} has no home advantage and no draw tendency to tilt, "
                           f"so nothing to give each group of {group!r}")
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
    table.attrs.update(objective=objective, burn_in=opts.burn_in, n_games=len(games), n_scored=int(scored.size),
                       draws=info["draws"], not_tried=skipped)
    method = tuned[next(v for v in tuned if v.label == chosen)]
    seconds = time.perf_counter() - t0
    inner = method.tuning
    result = AutoResult(dict(inner.params), {}, float(table.loc[chosen, "train_score"]), objective,
                        int(scored.size), table, seconds, True,
                        f"chose {chosen!r} among {len(table)} candidates", dict(inner.start),
                        table=table, chosen=chosen, variant=method.variant, burn_in=opts.burn_in,
                        methods={v.label: m for v, m in tuned.items()})
    method.tuning = result
    opts.last = result
    report(f"chose {chosen} ({objective} {result.objective:.5f}; {len(table)} candidates, {seconds:.1f} s)",
           final=True)
    return method


def _tune_task(payload) -> tuple[dict, Candidate | None]:
    """One candidate tuned and scored on the training games: its table row and the tuned candidate
    (``None`` when tuning failed). A module-level function of picklable arguments, so that
    ``auto(n_jobs=...)`` runs it on a process pool."""
    stage, v, warm, games, info, objective, burn_in, maxiter, scored = payload
    t = time.perf_counter()
    start = start_candidate(v, games, info)
    if warm is not None:  # the same model's numbers, tuned on an earlier candidate; a latent effect the
        # relative lacks (drifting draws, two skills) from its start
        start = start.with_params(model=dataclasses.replace(warm, **{
            k: getattr(warm, k) or getattr(start.model, k) for k in ("draw_drift", "openness_var", "openness_drift")}))
    row = {"candidate": v.label, "stage": stage, "observation": v.observation, "home": v.home,
           "reversion": v.reversion, "power": np.nan if v.power is None else v.power, "objective": objective}
    method = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow in a far-off evaluation
            warnings.simplefilter("ignore", BoundWarning)  # auto reports each candidate's settings on a bound
            # a candidate started from a tuned relative starts there; a cold one at its starting values
            # (start="grid" falls back to them: a Candidate is not batchable, filters.grid.batchable)
            method = start.tune(games, objective=objective, burn_in=burn_in, maxiter=maxiter, standard_errors=False,
                                start="grid" if warm is None else "current")
            # a candidate that extends its relative by settings whose log-scale gradient vanishes at the
            # bottom of their box (two skills' openness, the groups' parts) is also tuned from there, the
            # relative itself (nested): the better of the two, so it never ends worse than what it extends
            nested = _nested_settings(v, start) if warm is not None else ()
            if nested:
                box = start.tunable(games)
                other = start.with_params(**{k: box[k][0] for k in nested if k in box}).tune(
                    games, objective=objective, burn_in=burn_in, maxiter=maxiter, standard_errors=False,
                    start="current")
                if other.tuning.objective < method.tuning.objective:
                    method = other
        proba = method.run(games).proba[scored]
        y = games.score[scored]
        row["train_score"] = method.tuning.objective
        row["train_log_loss"] = metrics.log_loss(y, proba)
        row["train_log_loss_3"] = metrics.log_loss_3(y, proba) if info["draws"] else np.nan
        row["settings"] = method.values()
        row["at_bound"] = _at_bound(method, games)
        row["converged"] = bool(method.tuning.success)
        row["error"] = ""
    except (ValueError, FloatingPointError, ArithmeticError, np.linalg.LinAlgError) as exc:
        method = None
        row.update(train_score=np.nan, train_log_loss=np.nan, train_log_loss_3=np.nan, settings={},
                   at_bound=(), converged=False, error=" ".join(str(exc).split()))
    row["tune_seconds"] = time.perf_counter() - t
    return row, method


def _nested_settings(v: Variant, start: Candidate) -> tuple[str, ...]:
    """The settings by which ``v`` extends its relative (:func:`_relative`) and at whose lower bound it
    is that relative: two skills' openness, the groups' parts; () for others."""
    if v.skills == 2:
        return ("openness_var", "openness_drift")
    if v.group is not None:
        return tuple(start.group_settings)
    return ()


def _relative(v: Variant) -> Variant | None:
    """For effects per group, the same variant without them; for drifting draws or two skills, the
    same Goals variant with fixed draws and one skill (whose tuned numbers it starts from), else
    None. (The margin weights start from the best structure.)"""
    if v.group is not None:
        return dataclasses.replace(v, group=None)
    if v.draws == "drifting" or v.skills == 2:
        return dataclasses.replace(v, draws="fixed", skills=1)
    return None


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


def _at_bound(method: Candidate, games: Games) -> tuple[str, ...]:
    """Tuned settings within 0.1% (log scale for positive boxes) of their search bounds
    (:func:`filters.tuning.at_bound`)."""
    from filters.tuning import at_bound

    box = method.tunable(games)
    return at_bound({k: method.param_value(k) for k in box}, box)
