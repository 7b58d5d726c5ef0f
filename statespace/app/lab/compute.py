"""What the rating lab's API computes, through the package's own classes.

Nothing here evaluates a rating formula: a request becomes a :class:`statespace.Games` table
(``Games.from_arrays(time=period, ..., period=period)``: the request's periods are the table's
rating periods, and time is counted in periods), each method is built from
:mod:`statespace.methods.registry` with the request's settings, and the numbers returned are the
fitted run's own: ``run.ratings()`` for the leaderboard, ``run.trajectories()`` for the
history, ``method.init_state(...)`` for the starting values, ``method.predict_proba(state, a,
b)`` for the odds, and :func:`statespace.compare` for the held-out scores.

Rating periods are Glickman's: every game of a period is rated from the ratings before it, so
the order of the games inside a period does not matter (``filters.base.Filter.run``). A
competitor's RD grows by ``c^2`` per period between two periods they play (Glicko-1), by
``sigma^2`` per idle period (Glicko-2), by ``drift`` per period (EKF); TrueSkill adds ``tau^2``
before each game; Elo tracks no uncertainty.

Like :mod:`statespace.app.cli`, this module sits on top of everything: it builds the methods through
the registry, and reads ``filters.ekf.DEFAULT_MODEL`` for the EKF's settings.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from typing import Any

import numpy as np

from statespace.methods.specs import one_line
from . import blame
from .errors import LabInputError
from .schema import LABELS, CompareRequest, MethodSettings, RateRequest, StartingRating

__all__ = ["LabInputError", "build_games", "build_method", "initial_values", "rate", "compare"]

#: the request fields of a starting value, by method: (field for column 0, field for the sd column)
_FIELDS = {name: ("mu", "sigma") if name == "trueskill" else ("rating", "rd") for name in LABELS}
_UNITS = {"elo": "Elo points", "elo_fide": "Elo points", "glicko": "Elo points (rating, RD)",
          "glicko2": "Elo points (rating, RD); volatility on Glicko-2's scale", "trueskill": "TrueSkill units (mu, sigma)",
          "ekf": "Elo points (mean, sd)"}
def _float(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------------- building
def build_games(req: RateRequest | CompareRequest):
    """The request's games as a :class:`statespace.Games`: ``a`` the player, ``b`` the opponent,
    ``score`` the player's result, every game on neutral ground, ``time`` and ``period`` the
    request's period."""
    from statespace.data.games import Games
    from statespace.data.games import DROP_HINT, GamesError

    periods = [g.period for g in req.games]
    try:
        return Games.from_arrays(np.array(periods, dtype=np.int64), [g.player for g in req.games],
                                 [g.opponent for g in req.games], np.array([g.score for g in req.games]),
                                 period=np.array(periods, dtype=np.int64))
    except ValueError as exc:  # the schema checks every row first: a bug or a case it misses
        rows = getattr(exc, "rows", None) if isinstance(exc, GamesError) else None
        message = one_line(exc).replace(DROP_HINT, "")  # the lab drops no rows: it names them
        raise LabInputError(f"games[{rows[0]}]" if rows else "games", message) from None


def _settings(req, name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """The settings given for method ``name`` and each one's field (``tau`` at the top level is
    Glicko-2's)."""
    given = getattr(req.settings or MethodSettings(), name)
    kwargs = {} if given is None else given.model_dump(exclude_none=True)
    fields = {key: f"settings.{name}.{key}" for key in kwargs}
    if name == "glicko2" and req.tau is not None:
        if "tau" in kwargs and kwargs["tau"] != req.tau:
            raise LabInputError("tau", f"{req.tau:g} differs from settings.glicko2.tau {kwargs['tau']:g}; give one")
        kwargs["tau"] = req.tau
        fields.setdefault("tau", "tau")
    return kwargs, fields


def _build(name: str, settings: dict[str, Any]):
    from statespace.methods import registry

    factory = registry.get(name)
    kwargs = dict(settings)
    if name == "ekf":
        from filters.ekf import DEFAULT_MODEL

        changes = {}
        if "drift" in kwargs:
            changes["drift"] = kwargs.pop("drift")
        if "initial_rating" in kwargs:
            changes["prior_mean"] = kwargs.pop("initial_rating")
        if "initial_rd" in kwargs:
            changes["prior_var"] = kwargs.pop("initial_rd") ** 2
        return factory(dataclasses.replace(DEFAULT_MODEL, **changes), **kwargs)
    return factory(**kwargs)


def build_method(name: str, settings: dict[str, Any], fields: dict[str, str] | None = None):
    """The method registered under ``name`` (:func:`statespace.methods.registry.get`) with ``settings``.

    For ``ekf`` the settings ``drift``, ``initial_rating`` and ``initial_rd`` replace the
    corresponding numbers of ``filters.ekf.DEFAULT_MODEL`` (``drift``, ``prior_mean``,
    ``prior_var = initial_rd^2``); ``iterations`` goes to the filter. A setting the method
    refuses (any ``ValueError``) is a :class:`LabInputError` on that setting's field
    (``settings.ekf.drift``; ``fields`` maps a setting to its field where it is not
    ``settings.<name>.<setting>``)."""
    try:
        return _build(name, settings)
    except ValueError as exc:
        field = blame.setting_field(name, settings, fields or {}, lambda one: _build(name, one))
        raise LabInputError(field, one_line(exc)) from None


def _methods(req) -> dict[str, tuple[Any, dict[str, Any], dict[str, str]]]:
    """``{name: (method, settings, fields)}`` of the methods asked for, in order."""
    names = list(req.methods) if req.methods else list(LABELS)
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise LabInputError(f"methods[{i}]", f'"{name}" is given twice (first at methods[{seen[name]}])')
        seen[name] = i
    out = {}
    for name in names:
        settings, fields = _settings(req, name)
        out[name] = (build_method(name, settings, fields), settings, fields)
    return out


def _check_players(players: list[StartingRating], games) -> None:
    known = set(games.players.tolist())
    seen: dict[str, int] = {}
    for i, p in enumerate(players):
        if p.name in seen:
            raise LabInputError(f"players[{i}].name", f'"{p.name}" is given twice (first at players[{seen[p.name]}])')
        seen[p.name] = i
        if p.name not in known:
            raise LabInputError(f"players[{i}].name", f'"{p.name}" plays in no game')


def initial_values(name: str, method, players: list[StartingRating]) -> tuple[dict[str, dict], list[str]]:
    """``(initial, notes)``: the ``initial=`` mapping :meth:`filters.base.Filter.run` takes
    (``{competitor: {column: value, ..., "games": n}}`` in the method's own state columns, a
    value left out filled with the method's newcomer value from ``prior_row()``), and a note
    naming the given fields the method does not use (volatility, Glicko-2's own, left out)."""
    first, second = _FIELDS[name]
    cols = method.columns
    where = {first: 0}
    if method.sd_column is not None:
        where[second] = cols.index(method.sd_column)
    if "volatility" in cols:
        where["volatility"] = cols.index("volatility")
    initial: dict[str, dict] = {}
    unused: set[str] = set()
    for p in players:
        row = np.array(method.prior_row(), dtype=float)
        last = -1
        for field in ("rating", "rd", "volatility", "mu", "sigma"):
            value = getattr(p, field)
            if value is None:
                continue
            if field not in where:
                unused.add(field)
                continue
            row[where[field]] = value
            last = max(last, where[field])
        value: dict[str, Any] = {cols[j]: float(row[j]) for j in range(last + 1)}
        if p.games is not None:
            value["games"] = p.games
        if value:
            initial[p.name] = value
    unused.discard("volatility")  # Glicko-2's own: the page and the schema say so, no note on every other method
    notes = []
    if unused:
        order = sorted(where, key=where.get)
        used = order[0] if len(order) == 1 else ", ".join(order[:-1]) + " and " + order[-1]
        notes.append(f"{LABELS[name]} starts from {used}; not used: {', '.join(sorted(unused))}"
                     + (" (TrueSkill starts from mu and sigma, in its own units)" if name == "trueskill" else ""))
    return initial, notes


# ---------------------------------------------------------------------------- reading results
def _state_columns(method, values: np.ndarray) -> dict[str, np.ndarray]:
    """rating, rd (the sd column) and volatility from rows of a state (method's own units)."""
    cols = method.columns
    out = {"rating": values[:, 0]}
    if method.sd_column is not None:
        out["rd"] = values[:, cols.index(method.sd_column)]
    if "volatility" in cols:
        out["volatility"] = values[:, cols.index("volatility")]
    return out


def _leaderboard(name: str, run) -> list[dict]:
    board = run.ratings()
    rows = []
    for rank, r in enumerate(board.to_dict(orient="records"), start=1):
        row = {"rank": rank, "player": str(r["player"]), "rating": _float(r["mean"]),
               "rd": _float(r["sd"]) if "sd" in r else None, "games": int(r["games"])}
        if "volatility" in r:
            row["volatility"] = _float(r["volatility"])
        if name == "trueskill":  # TrueSkill's derived column "rating" is mu - 3 sigma
            row["conservative"] = _float(r["rating"])
        if "reached_2400" in r:
            row["reached_2400"] = bool(r["reached_2400"])
        rows.append(row)
    return rows


def _history(method, run, games, initial) -> list[dict]:
    """The starting values (period null) and the values after each period a competitor played
    (the last row of each competitor and period of ``run.trajectories()``: every game of a
    period records the post-period state)."""
    start = method.init_state(games.players, initial).split()[0]
    points: dict[str, list[dict]] = {str(p): [] for p in start.players}
    for i, p in enumerate(start.players):
        vals = _state_columns(method, start.values[i:i + 1])
        points[str(p)].append({"player": str(p), "period": None, **{k: _float(v[0]) for k, v in vals.items()}})
    traj = run.trajectories()
    traj = traj.drop_duplicates(subset=["player", "time"], keep="last")
    keep = [c for c in ("mean", "sd", "volatility") if c in traj.columns]
    rename = {"mean": "rating", "sd": "rd"}
    for player, t, *vals in traj[["player", "time", *keep]].itertuples(index=False, name=None):
        point = {"player": str(player), "period": int(t)}
        point.update({rename.get(c, c): _float(v) for c, v in zip(keep, vals)})
        points[str(player)].append(point)
    return [pt for name in sorted(points) for pt in points[name]]


def _odds(run, method, a: str, b: str) -> dict:
    p = method.predict_proba(run.state, a, b)[0]
    return {"win": float(p[0]), "draw": float(p[1]), "loss": float(p[2]), "expected_score": float(p[0] + p[1] / 2)}


# ---------------------------------------------------------------------------- endpoints
def _result(name: str, method, games, players: list[StartingRating], pair) -> tuple[dict, dict | None]:
    """One method's result and, with ``pair``, its odds."""
    initial, notes = initial_values(name, method, players)
    run = method.run(games, initial=initial)
    result = {"method": name, "label": LABELS[name], "spec": repr(method), "units": _UNITS[name],
              "leaderboard": _leaderboard(name, run), "history": _history(method, run, games, initial), "notes": notes}
    return result, None if pair is None else _odds(run, method, pair.a, pair.b)


def _rated(name: str, method, settings: dict, fields: dict, games, req: RateRequest) -> tuple[dict, dict | None]:
    """:func:`_result`, a ``ValueError`` of the method's made a :class:`LabInputError` on the
    field at fault (:mod:`statespace.app.lab.blame`): a starting value (``players[i].rating``), a
    setting, or the games."""
    initial, _ = initial_values(name, method, req.players)
    try:
        method.init_state(games.players, initial)
    except ValueError as exc:
        def start(players):
            method.init_state([p.name for p in players], initial_values(name, method, players)[0])

        field = blame.starting_field(req.players, start) or "players"
        raise LabInputError(field, f"{LABELS[name]}: {one_line(exc)}") from None
    try:
        return _result(name, method, games, req.players, req.pair)
    except ValueError as exc:
        def fit(given: dict, with_start: bool):
            _result(name, _build(name, given), games, req.players if with_start else [], req.pair)

        field = blame.fit_field(name, settings, fields, bool(initial), fit)
        raise LabInputError(field, f"{LABELS[name]}: {one_line(exc)}") from None


def rate(req: RateRequest) -> dict:
    """Run each method through the games from the starting values: leaderboards, histories and,
    with ``pair``, the odds of ``pair.a`` against ``pair.b`` from the final ratings (shape:
    :class:`statespace.app.lab.schema.RateResponse`)."""
    games = build_games(req)
    _check_players(req.players, games)
    if req.pair is not None:
        known = set(games.players.tolist())
        for side in ("a", "b"):
            who = getattr(req.pair, side)
            if who not in known:
                raise LabInputError(f"pair.{side}", f'"{who}" plays in no game')
    results, odds = {}, {}
    for name, (method, settings, fields) in _methods(req).items():
        results[name], pair_odds = _rated(name, method, settings, fields, games, req)
        if pair_odds is not None:
            odds[name] = pair_odds
    return {"n_games": len(games), "players": sorted(str(p) for p in games.players),
            "periods": sorted({int(p) for p in games.period}), "methods": results,
            "odds": None if req.pair is None else {"a": req.pair.a, "b": req.pair.b, "by_method": odds}}


_COMPARE_COLUMNS = ("n_test", "log_loss", "brier", "accuracy", "accuracy_50", "log_loss_3", "delta_log_loss",
                    "delta_se", "fit_seconds")


def compare(req: CompareRequest) -> dict:
    """:func:`statespace.compare` of the methods on the games (shape:
    :class:`statespace.app.lab.schema.CompareResponse`)."""
    from statespace.evaluation.compare import compare as compare_methods

    games = build_games(req)
    methods = _methods(req)
    try:
        games.split(req.split)
    except ValueError as exc:
        raise LabInputError("split", one_line(exc)) from None
    # no progress bar on the server's terminal, where statespace.compare offers one
    quiet = {"progress": False} if "progress" in inspect.signature(compare_methods).parameters else {}
    every = 30 if req.every is None else req.every

    def scored(chosen: dict):
        return compare_methods(chosen, games, split=req.split, mode=req.mode, every=every, **quiet)

    try:
        table = scored({name: m for name, (m, _, _) in methods.items()})
    except ValueError as exc:
        for name, (method, settings, fields) in methods.items():
            def fit(given: dict, _with_start: bool, name=name):
                scored({name: _build(name, given)})

            try:
                fit(settings, False)
            except ValueError as own:
                raise LabInputError(blame.fit_field(name, settings, fields, False, fit),
                                    f"{LABELS[name]}: {one_line(own)}") from None
        raise LabInputError(None, f"compare: {one_line(exc)}") from None
    rows = []
    for name, r in table.iterrows():
        row = {"method": str(name)}
        for c in _COMPARE_COLUMNS:
            row[c] = int(r[c]) if c == "n_test" else _float(r[c])
        rows.append(row)
    n_test = len(table.attrs["test"])
    return {"split": float(table.attrs["split"]), "mode": str(table.attrs["mode"]), "n_train": len(games) - n_test,
            "n_test": n_test, "table": rows}
