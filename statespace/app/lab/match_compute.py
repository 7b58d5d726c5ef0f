"""What the lab computes for matches of many sides, through the package's own classes.

The request's rows become a :class:`statespace.data.matches.Matches`
(:meth:`~statespace.data.matches.Matches.from_long`, whose row errors are named here as the
request's fields, ``matches[3].competitor``), the method is built from
:mod:`statespace.methods.registry` with the request's settings, and the numbers returned are the
run's own: ``method.run(matches)`` (a :class:`filters.match_run.MatchRun`), ``ratings()`` for the
leaderboard and ``perf_mean`` / ``perf_var`` for each side's forecast before its match.

The methods offered are found, not listed: every registered method whose filter class has a match
kernel (``_match``, :mod:`filters.match_loop`) and whose default settings can forecast a match
(``match_forecast()``; FIDE Elo's rules cannot). A filter that gains a kernel is offered with no
edit here.
"""

from __future__ import annotations

import inspect
import math
import re
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from statespace.methods.specs import one_line
from . import blame
from .compute import _UNITS, build_method
from .errors import LabInputError, field_path
from .limits import MAX_NAMES
from .match_schema import MAX_SIDES, MatchRequest
from .schema import LABELS, MethodSettings

__all__ = ["match_methods", "method_settings", "build_matches", "rate_matches", "check_work"]

#: display names of match-rating methods the lab's games page does not run (else the class name)
_LABELS = {**LABELS, "wenglin": "Weng-Lin"}


def _filter_class(factory):
    """The class behind a registry factory (a class, or a classmethod variant such as ``Elo.fide``)."""
    return factory if isinstance(factory, type) else getattr(factory, "__self__", None)


def match_methods() -> dict[str, str]:
    """``{name: label}`` of the filters (``filters.REGISTRY``, in its order) that rate matches of
    many sides: the filter class has a match kernel and the method, built with its defaults,
    names the ranking its forecast means. (The filters only: reading the whole registry would
    import every smoother for nothing.)"""
    import filters

    out = {}
    for name, factory in filters.REGISTRY.items():
        if getattr(_filter_class(factory), "_match", None) is None:
            continue
        try:
            method = factory()
            method.match_forecast()
        except ValueError:  # a variant whose rules rate games of two only (FIDE Elo)
            continue
        out[name] = _LABELS.get(name, type(method).__name__)
    return out


def method_settings(name: str) -> list[str]:
    """The settings the lab takes for method ``name``: the lab's own for its methods
    (:class:`statespace.app.lab.schema.MethodSettings`), else the factory's keyword parameters."""
    if name in MethodSettings.model_fields:
        model = next(a for a in MethodSettings.model_fields[name].annotation.__args__ if a is not type(None))
        return list(model.model_fields)
    from statespace.methods import registry

    params = inspect.signature(registry.get(name)).parameters.values()
    return [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _refusal(name: str, offered: dict[str, str]) -> str:
    """Why ``name`` cannot rate matches: not a filter, no match kernel, or rules for two."""
    import filters
    from statespace.methods.registry import BUILTIN_INDEX

    choose = f"methods that rate matches: {', '.join(offered)}"
    factory = filters.REGISTRY.get(name)
    if factory is None:
        if name in BUILTIN_INDEX:  # a smoother or a blend: the lab rates matches with filters
            return f"{name} is not a filter with a match kernel; {choose}"
        return f"unknown method {name!r}; {choose}"
    if getattr(_filter_class(factory), "_match", None) is None:
        return f"{name} rates games of two competitors only (it has no match kernel); {choose}"
    try:
        factory().match_forecast()
    except ValueError as exc:
        return f"{one_line(exc)}; {choose}"
    return f"{name} cannot rate matches here; {choose}"


def _method(req: MatchRequest):
    """``(method, label, settings, fields)``: the method asked for, built with its settings, or a
    :class:`LabInputError` on ``method`` or on the setting at fault (``settings.k``)."""
    offered = match_methods()
    name = req.method
    if name not in offered:
        raise LabInputError("method", _refusal(name, offered))
    known = method_settings(name)
    for key in req.settings:
        if key not in known:
            raise LabInputError(f"settings.{key}", f"is not a setting of {offered[name]} ({name}); its settings: "
                                                   f"{', '.join(known) or 'none'}")
    settings = dict(req.settings)
    if name in MethodSettings.model_fields:  # the lab's own checks of its methods' settings, as for games
        try:
            given = getattr(MethodSettings.model_validate({name: settings}), name)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise LabInputError(field_path(("settings", *err["loc"][1:])), str(err["msg"])) from None
        settings = given.model_dump(exclude_none=True)
    fields = {key: f"settings.{key}" for key in settings}
    try:
        method = build_method(name, settings, fields)
    except LabInputError as exc:
        raise LabInputError("settings" if exc.field == f"settings.{name}" else exc.field, exc.message) from None
    except TypeError as exc:
        raise LabInputError("settings", f"{offered[name]}: {one_line(exc)}") from None
    return method, offered[name], settings, fields


def check_work(req: MatchRequest) -> None:
    """The limits counted from the rows before computing: at most :data:`MAX_NAMES` distinct
    competitors (422 on ``matches``)."""
    names = {r.competitor for r in req.matches}
    if len(names) > MAX_NAMES:
        raise LabInputError("matches", f"{len(names):,} distinct competitors, over the limit of {MAX_NAMES:,} per "
                                       "request; rate fewer competitors at a time")


def _frame(req: MatchRequest) -> pd.DataFrame:
    """The rows as the long frame ``Matches.from_long`` reads.

    A row without a side is its competitor's own side, labelled with the competitor's name; a
    named side of the same match with that label would silently take the competitor in, so it
    is an error on that row."""
    rows = req.matches
    data: dict[str, list] = {"match": [r.match for r in rows], "competitor": [r.competitor for r in rows],
                             "rank": [r.rank for r in rows]}
    if any(r.time is not None for r in rows):
        data["time"] = [r.time for r in rows]
    else:  # no times: the matches in the order of their first rows, one step apart
        first: dict[str, int] = {}
        data["time"] = [float(first.setdefault(r.match, len(first))) for r in rows]
    if any(r.side is not None for r in rows):
        alone = {(r.match, r.competitor) for r in rows if r.side is None}
        for i, r in enumerate(rows):
            if r.side is not None and (r.match, r.side) in alone:
                raise LabInputError(f"matches[{i}].side", f'side "{r.side}" of match "{r.match}" has the name of a '
                                                          f'competitor who plays alone in it; name the side otherwise')
        data["side"] = [r.competitor if r.side is None else r.side for r in rows]
    if any(r.weight is not None for r in rows):
        data["weight"] = [1.0 if r.weight is None else r.weight for r in rows]
    return pd.DataFrame(data)


_PROBLEM = re.compile(r"^column '([^']+)': .*?\(row (\d+)")


def _row_errors(exc) -> list[tuple[str, str]]:
    """A ``GamesError`` of the table as ``(field, message)`` pairs, one per problem it lists
    (``matches[3].competitor``; its rows are the request's, counted from 0); the error as one
    pair, on its first row and column, where its message has no such list."""
    text = one_line(exc)
    parts = text.removeprefix("invalid matches: ").split(" | ")
    found = [_PROBLEM.match(p) for p in parts]
    if text.startswith("invalid matches: ") and all(found):
        return [(f"matches[{m.group(2)}].{m.group(1)}", p) for m, p in zip(found, parts)]
    rows = exc.rows
    where = f"matches[{rows[0]}]" if rows else "matches"
    return [(f"{where}.{exc.column}" if rows and exc.column else where, text)]


def build_matches(req: MatchRequest):
    """The rows as a :class:`statespace.data.matches.Matches`; a ``GamesError`` of the table, or
    a match over :data:`MAX_SIDES` sides, is a :class:`LabInputError` on the first row it names
    (``matches[3].rank``)."""
    from statespace.data.columns import GamesError
    from statespace.data.matches import Matches

    frame = _frame(req)
    try:
        matches = Matches.from_long(frame)
    except GamesError as exc:
        raise LabInputError(*_row_errors(exc)[0], more=_row_errors(exc)[1:]) from None
    sides = np.diff(matches.match_ptr)
    if sides.max() > MAX_SIDES:
        m = int(np.argmax(sides))
        row = int(matches.row[matches.side_ptr[matches.match_ptr[m]]])
        raise LabInputError(f"matches[{row}].match", f'match "{matches.label[m]}" has {int(sides[m]):,} sides, over '
                                                     f"the limit of {MAX_SIDES:,} sides per match")
    return matches


def _float(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _when(value) -> float | str:
    return pd.Timestamp(value).isoformat() if isinstance(value, np.datetime64) else float(value)


def _forecasts(run, req: MatchRequest) -> list[dict]:
    """Each match's sides with their forecast strength before it, their place and the place the
    forecast gives (competition ranking of the strengths, strongest first)."""
    from statespace.data.matches_long import competition_ranks

    mt = run.matches
    named = {(r.match, r.side) for r in req.matches if r.side is not None}
    given_time = any(r.time is not None for r in req.matches)
    side_match = np.repeat(np.arange(mt.n_matches), np.diff(mt.match_ptr))
    predicted = competition_ranks(side_match, -np.asarray(run.perf_mean))
    has_sd = run.method.sd_column is not None
    out = []
    for m in range(mt.n_matches):
        label = str(mt.label[m])
        sides = []
        for s in range(mt.match_ptr[m], mt.match_ptr[m + 1]):
            members = [str(mt.names[i]) for i in mt.member[mt.side_ptr[s]:mt.side_ptr[s + 1]]]
            side = str(mt.side_label[s])
            sides.append({"side": side if (label, side) in named else None, "members": members,
                          "rank": int(mt.rank[s]) + 1, "strength": float(run.perf_mean[s]),
                          "sd": _float(math.sqrt(run.perf_var[s])) if has_sd else None,
                          "predicted_rank": int(predicted[s]) + 1})
        strengths = {x["strength"] for x in sides}
        out.append({"match": label, "time": _when(mt.when[m]) if given_time else None, "sides": sides,
                    "favourite_won": None if len(strengths) == 1 else
                    any(x["predicted_rank"] == 1 and x["rank"] == 1 for x in sides)})
    return out


def _leaderboard(run) -> list[dict]:
    board = run.ratings()
    return [{"rank": i, "player": str(r["player"]), "rating": float(r["mean"]),
             "rd": _float(r["sd"]) if "sd" in r else None, "matches": int(r["matches"])}
            for i, r in enumerate(board.to_dict(orient="records"), start=1)]


def rate_matches(req: MatchRequest) -> dict:
    """``method.run(matches)`` of the request: the leaderboard and each match's forecasts (shape:
    :class:`statespace.app.lab.match_schema.MatchResponse`)."""
    method, label, settings, fields = _method(req)
    matches = build_matches(req)
    name = req.method
    try:
        run = method.run(matches)
    except ValueError as exc:
        def fit(given: dict, _with_start: bool):
            build_method(name, given, fields).run(matches)

        field = blame.fit_field(name, settings, fields, False, fit)
        field = {"games": "matches", f"settings.{name}": "settings"}.get(field, field)
        raise LabInputError(field, f"{label}: {one_line(exc)}") from None
    return {"method": name, "label": label, "spec": repr(method),
            "units": _UNITS.get(name, f"{label}'s own units (rating: its mean, rd: its sd)"),
            "n_matches": matches.n_matches, "players": sorted(str(p) for p in matches.names),
            "leaderboard": _leaderboard(run), "matches": _forecasts(run, req)}
