"""What the rating lab's API computes, through the package's own classes.

Nothing here evaluates a rating formula: a request becomes a :class:`statespace.Games` table
(``Games.from_arrays(time=period, ..., period=period)``: the request's periods are the table's
rating periods, and time is counted in periods), each method is built from
:mod:`statespace.registry` with the request's settings, and the numbers returned are the
fitted run's own: ``run.ratings()`` for the leaderboard, ``run.trajectories()`` for the
history, ``method.init_state(...)`` for the starting values, ``method.predict_proba(state, a,
b)`` for the odds, and :func:`statespace.compare` for the held-out scores.

Rating periods are Glickman's: every game of a period is rated from the ratings before it, so
the order of the games inside a period does not matter (``filters.base.Filter.run``). A
competitor's RD grows by ``c^2`` per period between two periods they play (Glicko-1), by
``sigma^2`` per idle period (Glicko-2), by ``drift`` per period (EKF); TrueSkill adds ``tau^2``
before each game; Elo tracks no uncertainty.

Like :mod:`statespace.cli`, this module sits on top of everything: it builds the methods through
the registry, and reads ``filters.ekf.DEFAULT_MODEL`` for the EKF's settings.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import threading
from typing import Any

import numpy as np

from .._specs import _one_line
from .schema import LABELS, CompareRequest, MethodSettings, RateRequest, StartingRating

__all__ = ["LabInputError", "build_games", "build_method", "initial_values", "rate", "compare"]

#: the request fields of a starting value, by method: (field for column 0, field for the sd column)
_FIELDS = {name: ("mu", "sigma") if name == "trueskill" else ("rating", "rd") for name in LABELS}
_UNITS = {"elo": "Elo points", "elo_fide": "Elo points", "glicko": "Elo points (rating, RD)",
          "glicko2": "Elo points (rating, RD); volatility on Glicko-2's scale", "trueskill": "TrueSkill units (mu, sigma)",
          "ekf": "Elo points (mean, sd)"}
#: the compiled kernels and the registry are loaded on first use; one computation at a time
_LOCK = threading.Lock()


class LabInputError(ValueError):
    """A request the models accepted but the games cannot be rated with; ``field`` names the
    field (and row) as the API's messages do (``players[2].name``), or is ``None``."""

    def __init__(self, field: str | None, message: str):
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


def _float(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------------- building
def build_games(req: RateRequest | CompareRequest):
    """The request's games as a :class:`statespace.Games`: ``a`` the player, ``b`` the opponent,
    ``score`` the player's result, every game on neutral ground, ``time`` and ``period`` the
    request's period."""
    from statespace import Games

    periods = [g.period for g in req.games]
    try:
        return Games.from_arrays(np.array(periods, dtype=np.int64), [g.player for g in req.games],
                                 [g.opponent for g in req.games], np.array([g.score for g in req.games]),
                                 period=np.array(periods, dtype=np.int64))
    except ValueError as exc:  # the models check every row first: a bug or a case they miss
        raise LabInputError("games", _one_line(exc)) from None


def _settings(req, name: str) -> dict[str, Any]:
    """The settings given for method ``name`` (``tau`` at the top level is Glicko-2's)."""
    given = getattr(req.settings or MethodSettings(), name)
    kwargs = {} if given is None else given.model_dump(exclude_none=True)
    if name == "glicko2" and req.tau is not None:
        if "tau" in kwargs and kwargs["tau"] != req.tau:
            raise LabInputError("tau", f"{req.tau:g} differs from settings.glicko2.tau {kwargs['tau']:g}; give one")
        kwargs["tau"] = req.tau
    return kwargs


def build_method(name: str, settings: dict[str, Any]):
    """The method registered under ``name`` (:func:`statespace.registry.get`) with ``settings``.

    For ``ekf`` the settings ``drift``, ``initial_rating`` and ``initial_rd`` replace the
    corresponding numbers of ``filters.ekf.DEFAULT_MODEL`` (``drift``, ``prior_mean``,
    ``prior_var = initial_rd^2``); ``iterations`` goes to the filter."""
    from statespace import registry

    factory = registry.get(name)
    kwargs = dict(settings)
    try:
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
    except ValueError as exc:
        raise LabInputError(f"settings.{name}", _one_line(exc)) from None


def _methods(req, games) -> dict[str, Any]:
    names = list(req.methods) if req.methods else list(LABELS)
    seen: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in seen:
            raise LabInputError(f"methods[{i}]", f'"{name}" is given twice (first at methods[{seen[name]}])')
        seen[name] = i
    return {name: build_method(name, _settings(req, name)) for name in names}


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
def rate(req: RateRequest) -> dict:
    """Run each method through the games from the starting values: leaderboards, histories and,
    with ``pair``, the odds of ``pair.a`` against ``pair.b`` from the final ratings (shape:
    :class:`statespace.lab.schema.RateResponse`)."""
    with _LOCK:
        games = build_games(req)
        _check_players(req.players, games)
        if req.pair is not None:
            known = set(games.players.tolist())
            for side in ("a", "b"):
                who = getattr(req.pair, side)
                if who not in known:
                    raise LabInputError(f"pair.{side}", f'"{who}" plays in no game')
        methods = _methods(req, games)
        results, odds = {}, {}
        for name, method in methods.items():
            initial, notes = initial_values(name, method, req.players)
            try:
                run = method.run(games, initial=initial)
            except ValueError as exc:
                raise LabInputError(None, f"{LABELS[name]}: {' '.join(str(exc).split())}") from None
            results[name] = {"method": name, "label": LABELS[name], "spec": repr(method), "units": _UNITS[name],
                             "leaderboard": _leaderboard(name, run), "history": _history(method, run, games, initial),
                             "notes": notes}
            if req.pair is not None:
                odds[name] = _odds(run, method, req.pair.a, req.pair.b)
        return {"n_games": len(games), "players": sorted(str(p) for p in games.players),
                "periods": sorted({int(p) for p in games.period}), "methods": results,
                "odds": None if req.pair is None else {"a": req.pair.a, "b": req.pair.b, "by_method": odds}}


_COMPARE_COLUMNS = ("n_test", "log_loss", "brier", "accuracy", "accuracy_50", "log_loss_3", "delta_log_loss",
                    "delta_se", "fit_seconds")


def compare(req: CompareRequest) -> dict:
    """:func:`statespace.compare` of the methods on the games (shape:
    :class:`statespace.lab.schema.CompareResponse`)."""
    import statespace

    with _LOCK:
        games = build_games(req)
        methods = _methods(req, games)
        # no progress bar on the server's terminal, where statespace.compare offers one
        quiet = {"progress": False} if "progress" in inspect.signature(statespace.compare).parameters else {}
        try:
            table = statespace.compare(methods, games, split=req.split, mode=req.mode,
                                       every=30 if req.every is None else req.every, **quiet)
        except ValueError as exc:
            raise LabInputError(None, f"compare: {' '.join(str(exc).split())}") from None
        rows = []
        for name, r in table.iterrows():
            row = {"method": str(name)}
            for c in _COMPARE_COLUMNS:
                row[c] = int(r[c]) if c == "n_test" else _float(r[c])
            rows.append(row)
        n_test = len(table.attrs["test"])
        return {"split": float(table.attrs["split"]), "mode": str(table.attrs["mode"]), "n_train": len(games) - n_test,
                "n_test": n_test, "table": rows}
