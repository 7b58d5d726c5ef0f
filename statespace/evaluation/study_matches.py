"""Matches of many sides in a study (:func:`statespace.evaluation.study.study`): the match sources,
their tasks and their rows.

A study's sources may be tables of matches of many sides (teams, free-for-all rankings):

- ``"dataset:NAME"``, ``{"dataset": NAME}`` or the bare name, for a match data set of
  :data:`statespace.data.match_datasets.MATCH_DATASETS` (``halo2_large_team``, ...);
- ``"scenario:NAME"``, ``{"scenario": NAME}`` or the bare name, for a simulated league of
  :mod:`statespace.model.match_scenarios` (``ffa_league``, ``team_league``; they take no
  parameters);
- ``{"scenario": "simulate_matches", **params}``: a league drawn by
  :func:`statespace.model.match_scenarios.simulate_matches` with the parameters
  :data:`SIMULATE_DEFAULTS` names (each optional): the league's shape (``n_players``,
  ``n_matches``, ``sides``, ``team_size``, ``partial``) and its :class:`SkillModel`
  (``link``, ``scale``, ``prior_mean``, ``prior_var``, ``drift``, ``reversion``).

A simulated league is drawn with each of the grid's seeds; a data set is the same whatever the
seed (its rows have no seed, as a games data set's). Matches are scored online only (each match
forecast from the matches before it), so a match source runs once per method and seed in the mode
``online``, whatever the grid's ``modes``.

Each task is one row of :func:`statespace.evaluation.compare_matches.compare_matches` for its
method on the source's matches, split at the grid's ``split`` (tuned first on the training
matches with ``tune``, ``tune_options`` passed to the tuning): the row's columns are its ranking
scores ``loglik``, ``pair_log_loss``, ``pair_inversion``, ``rank_deviation`` and ``top1``, with
``n_test`` the held-out matches and ``n_sides`` their sides; the games' scores (``log_loss``, ...)
are missing in it, as the ranking scores are in a games row. A method that cannot rate matches (one
without a match kernel) is refused by ``compare_matches`` naming it, and its row records that error.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

__all__ = ["MATCH_SCENARIOS", "SIMULATE_DEFAULTS", "MATCH_SCORES", "match_source_spec", "is_match_source",
           "MATCH_MODES", "load_matches", "match_row", "match_summary"]

#: the simulated leagues a source may name (``simulate_matches`` with parameters)
MATCH_SCENARIOS = ("ffa_league", "team_league", "simulate_matches")
#: ``simulate_matches``'s parameters and their values when a source leaves one out
SIMULATE_DEFAULTS = {"n_players": 100, "n_matches": 500, "sides": 4, "team_size": 1, "partial": 0.0,
                     "link": "logistic", "scale": 1.0, "prior_mean": 0.0, "prior_var": 1.0, "drift": 0.01,
                     "reversion": 0.0}
#: the ranking scores of compare_matches a match row carries
MATCH_SCORES = ("loglik", "pair_log_loss", "pair_inversion", "rank_deviation", "top1")
#: a row's games scores, missing in a match row (the study's rows all have them)
#: the modes a match source runs in, whatever the grid's ``modes``: matches are scored online only
MATCH_MODES = ("online",)
_GAMES_SCORES = ("log_loss", "brier", "accuracy", "accuracy_50", "log_loss_3")
_MODEL = ("link", "scale", "prior_mean", "prior_var", "drift", "reversion")


def _check_simulation(name: str, params: Mapping[str, Any]) -> None:
    """``ValueError`` naming the source when ``params`` are not parameters of a league that can be
    drawn: an unknown name, or a value out of range (checked by drawing one match)."""
    from statespace.model import ranges as R
    from statespace.model.match_scenarios import simulate_matches
    from statespace.model.skillmodel import SkillModel

    bad = sorted(set(params) - set(SIMULATE_DEFAULTS))
    if bad:
        raise ValueError(f"source {name!r}: simulate_matches has no parameter{'s' if len(bad) > 1 else ''} "
                         f"{', '.join(map(repr, bad))} (it takes {', '.join(SIMULATE_DEFAULTS)})")
    p = {**SIMULATE_DEFAULTS, **params}
    try:
        R.whole("simulate_matches", "n_matches", p["n_matches"], 1)
        model = SkillModel(**{k: p[k] for k in _MODEL})
        simulate_matches(model, p["n_players"], 1, p["sides"], p["team_size"], seed=0, partial=p["partial"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"source {name!r}: {' '.join(str(exc).split())}") from None


def match_source_spec(name: str, source) -> dict | None:
    """The normal spec of a match source, ``{"match_dataset": NAME}`` or ``{"match_scenario": NAME,
    **params}``, or ``None`` when ``source`` names no matches (a source of games). ``ValueError``
    naming the source for a match data set with parameters or a league with bad ones."""
    from statespace.data.match_datasets import MATCH_DATASETS

    if isinstance(source, str):
        kind, colon, value = source.partition(":")
        if not colon:
            if source in MATCH_DATASETS:
                return {"match_dataset": source}
            return {"match_scenario": source} if source in MATCH_SCENARIOS else None
        source = {kind.strip(): value.strip()}
    if not isinstance(source, Mapping):
        return None
    if "dataset" in source and source["dataset"] in MATCH_DATASETS:
        if set(source) - {"dataset"}:
            extra = sorted(set(source) - {"dataset"})
            raise ValueError(f"source {name!r}: a data set takes no parameters, got {extra}")
        return {"match_dataset": source["dataset"]}
    if "scenario" in source and source["scenario"] in MATCH_SCENARIOS:
        params = {k: v for k, v in source.items() if k != "scenario"}
        if "seed" in params:
            raise ValueError(f"source {name!r}: the seed of a scenario comes from the grid's seeds, not its spec")
        if source["scenario"] != "simulate_matches":
            if params:
                raise ValueError(f"source {name!r}: match scenario {source['scenario']} takes no parameters, got "
                                 f"{sorted(params)}; give scenario = 'simulate_matches' with its parameters")
        else:
            _check_simulation(name, params)
        return {"match_scenario": source["scenario"], **params}
    return None


def is_match_source(spec) -> bool:
    """Whether a normal source spec (:func:`match_source_spec`'s) holds matches of many sides."""
    return isinstance(spec, dict) and ("match_dataset" in spec or "match_scenario" in spec)


def load_matches(spec, seed):
    """The matches of a match source spec (built where the task runs)."""
    from statespace.model import match_scenarios as S

    if "match_dataset" in spec:
        from statespace.data.match_datasets import load_matches as load

        return load(spec["match_dataset"])
    name = spec["match_scenario"]
    if name != "simulate_matches":
        return getattr(S, name)(seed=seed).matches
    from statespace.model.skillmodel import SkillModel

    p = {**SIMULATE_DEFAULTS, **{k: v for k, v in spec.items() if k != "match_scenario"}}
    model = SkillModel(**{k: p[k] for k in _MODEL})
    return S.simulate_matches(model, p["n_players"], p["n_matches"], p["sides"], p["team_size"], seed=seed,
                              partial=p["partial"]).matches


def match_row(task, row: dict) -> dict:
    """``row`` (the task's key columns) with the scores of :func:`compare_matches` for the task's
    method on its matches; exceptions pass on (the study records them as the row's error)."""
    from statespace.evaluation.compare_matches import compare_matches

    matches = load_matches(task.source, task.seed)
    table = compare_matches({task.method_name: task.method}, matches, task.split, tune=task.tune,
                            tune_options=task.tune_options, progress=False)
    scored = table.iloc[0]
    row["n_test"] = int(scored["n_matches"])
    row.update({c: math.nan for c in _GAMES_SCORES})
    row.update({c: float(scored[c]) for c in MATCH_SCORES})
    row["n_sides"] = int(scored["n_sides"])
    row["fit_seconds"] = float(scored["seconds"])
    row["tune_seconds"] = float(scored["tune_seconds"]) if "tune_seconds" in table.columns else math.nan
    tuned = table.attrs.get("tuned", {}).get(task.method_name)
    row["tuned"] = None if tuned is None else json.dumps({k: float(v) for k, v in tuned.params.items()})
    row["error"] = None
    return row


def match_summary(table, out):
    """``out`` (:func:`statespace.evaluation.study.summary`'s table) with, where the study has
    match rows, the mean ``pair_log_loss`` per method, source and mode and its standard error over
    the seeds (as the log loss's); unchanged otherwise."""
    if "pair_log_loss" not in table.columns or table["pair_log_loss"].isna().all():
        return out
    keys = ["method", "source", "mode"]
    ok = table[table["error"].isna()]
    stats = ok.groupby(keys, sort=False)["pair_log_loss"].agg(["mean", "std", "count"])
    stats["pair_log_loss_se"] = stats["std"] / stats["count"].pow(0.5)
    stats = stats.rename(columns={"mean": "pair_log_loss"})[["pair_log_loss", "pair_log_loss_se"]]
    at = list(out.columns).index("n")
    merged = out.merge(stats.reset_index(), on=keys, how="left")
    return merged[[*out.columns[:at], "pair_log_loss", "pair_log_loss_se", *out.columns[at:]]]
