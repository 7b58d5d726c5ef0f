r"""The filters' side of the one rule for settings (:mod:`statespace.model.ranges`): the checks filters
call, and the team-rating helpers of ``rate``.

Every filter setting is checked at construction against a range stated in units of the filter's
scale :math:`\alpha` (its model's ``scale``: Elo's and Glicko's :math:`400 / \ln 10`, TrueSkill's
:math:`\sqrt 2 \beta`), with a ``ValueError`` that names the filter, the setting, the range and the
value: a standard deviation (TrueSkill's ``sigma`` and ``tau``, Glicko's RD, ``c`` and ``rd_max``)
at most :math:`10^3\alpha` (:func:`length`), a location (a starting rating or mean) within
:math:`\pm 10^6\alpha` (:func:`location`), a home advantage within :math:`\pm 10\alpha`
(:func:`home`), a share (TrueSkill's draw
probability, Weng-Lin's ``kappa``) its own interval. Inside the kernels, a variance is kept in
``[VAR_MIN, VAR_MAX]`` and a mean within ``MEAN_MAX`` whatever the games do, and a run whose
ratings end beyond :math:`10^9\alpha` is an error (:func:`statespace.model.ranges.check_results`).

The team-rating helpers of ``rate`` (:func:`parse_teams`, :func:`parse_weights`) check every
entry and name the offending one (``rating_groups[1][0]``, ``weights[(0, 'x')]``).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

import numpy as np

from statespace.model import ranges as R
from statespace.model.ranges import bound, is_number, number, whole

_is_number = is_number

from .kernels import MEAN_MAX, VAR_MAX, VAR_MIN

__all__ = ["SD_MAX", "SD_MIN", "LOCATION_MAX", "number", "length", "location", "home", "scale", "is_number", "whole",
           "parse_teams", "parse_weights",
           "bound"]

#: the largest standard deviation (or other squared length) a setting may have
SD_MAX = math.sqrt(VAR_MAX)
#: the smallest standard deviation the kernels use: a smaller one acts as this
SD_MIN = math.sqrt(VAR_MIN)
#: the largest magnitude of a location setting (a starting rating, a mean, a home advantage)
LOCATION_MAX = MEAN_MAX


def length(owner: str, name: str, value, alpha: float = 1.0, *, zero: bool = False) -> float:
    """A standard deviation or other length the kernels square: in ``(0, 1e3 alpha]`` (``[0, ...]``
    with ``zero``), :func:`statespace.model.ranges.sd`."""
    return R.sd(owner, name, value, alpha, zero=zero)


def scale(owner: str, name: str, value) -> float:
    """A scale (points per logistic or probit unit): :func:`statespace.model.ranges.scale`."""
    return R.scale(owner, name, value)


def home(owner: str, value, alpha: float = 1.0) -> float:
    """A filter's home advantage: ``|h| <= 10 alpha``, :func:`statespace.model.ranges.home`."""
    return R.home(owner, value, alpha)


def location(owner: str, name: str, value, alpha: float = 1.0) -> float:
    """A starting rating or a mean: ``|x| <= 1e6 alpha``, :func:`statespace.model.ranges.location`."""
    return R.location(owner, name, value, alpha)


# ---------------------------------------------------------------- team ratings of ``rate``
def _rating(owner: str, where: str, v, zero_sigma: bool) -> tuple[float, float]:
    """One rating, ``(mu, sigma)`` or an object with ``.mu`` and ``.sigma``, checked."""
    if hasattr(v, "mu") and hasattr(v, "sigma"):
        pair = (v.mu, v.sigma)
    elif isinstance(v, (str, bytes, Mapping)) or not isinstance(v, Sequence) and not isinstance(v, np.ndarray):
        raise TypeError(f"{owner}: {where} must be a (mu, sigma) pair or a rating with .mu and .sigma, got {v!r}")
    else:
        pair = tuple(v)
        if len(pair) != 2:
            raise TypeError(f"{owner}: {where} must be a (mu, sigma) pair, got {v!r}")
    mu, sigma = pair
    if not (_is_number(mu) and math.isfinite(mu) and abs(mu) <= LOCATION_MAX):
        raise ValueError(f"{owner}: {where} has mu {mu!r}; a rating must be a finite (mu, sigma) with "
                         f"|mu| <= {bound(LOCATION_MAX)}")
    lo_ok = sigma >= 0 if zero_sigma else sigma > 0
    if not (_is_number(sigma) and math.isfinite(sigma) and lo_ok and sigma <= SD_MAX):
        need = "0 <= sigma" if zero_sigma else "0 < sigma"
        raise ValueError(f"{owner}: {where} has sigma {sigma!r}; a rating must be a finite (mu, sigma) with "
                         f"{need} <= {bound(SD_MAX)}")
    return float(mu), float(sigma)


def parse_teams(owner: str, rating_groups: Sequence[Any], *, zero_sigma: bool = False
                ) -> tuple[list[list[tuple[float, float]]], list[list]]:
    """Teams as lists of (mu, sigma), and each team's keys (names, or positions); ``sigma = 0``
    (a skill known exactly) is allowed where ``zero_sigma``. A team is a sequence of ratings or a
    mapping ``name -> rating``; an entry that is not a rating is a ``TypeError`` and a rating out of
    range a ``ValueError``, each naming ``rating_groups[team][key]``."""
    if isinstance(rating_groups, (str, bytes, Mapping)) or not isinstance(rating_groups, (Sequence, np.ndarray)):
        raise TypeError(f"{owner}: rating_groups must be a sequence of teams, got {rating_groups!r}")
    teams, keys = [], []
    for ti, team in enumerate(rating_groups):
        if isinstance(team, Mapping):
            ks = list(team.keys())
            vals = [team[k] for k in ks]
        elif isinstance(team, (Sequence, np.ndarray)) and not isinstance(team, (str, bytes)):
            vals = list(team)
            ks = list(range(len(vals)))
        else:
            raise TypeError(f"{owner}: rating_groups[{ti}] must be a team (a sequence of ratings or a mapping "
                            f"name -> rating), got {team!r}")
        if not vals:
            raise ValueError(f"{owner}: every team needs at least one player; rating_groups[{ti}] is empty")
        teams.append([_rating(owner, f"rating_groups[{ti}][{k!r}]", v, zero_sigma) for k, v in zip(ks, vals)])
        keys.append(ks)
    return teams, keys


def parse_weights(owner: str, weights, teams, keys, hi: float = math.inf) -> list[list[float]]:
    """Partial-play weights shaped like ``teams`` (default 1): a sequence of per-team sequences or a
    mapping ``(team_index, key) -> weight``; each a finite number in ``[0, hi]``, every team with one
    above 0. A key naming no player, an entry of the wrong shape or a bad number is an error naming
    the entry (``weights[(0, 'x')]``, ``weights[1][0]``)."""
    need = f"a finite number in [0, {bound(hi)}]" if hi < math.inf else "a finite number >= 0"

    def value(where, x):
        if not (_is_number(x) and math.isfinite(x) and 0 <= x <= hi):
            raise ValueError(f"{owner}: {where} must be {need}, got {x!r}")
        return float(x)

    if weights is None:
        return [[1.0] * len(t) for t in teams]
    if isinstance(weights, Mapping):
        w = [[1.0] * len(t) for t in teams]
        for key, x in weights.items():
            if not (isinstance(key, tuple) and len(key) == 2):
                raise TypeError(f"{owner}: a weights mapping is keyed by (team_index, player_key); got the key {key!r}")
            ti, k = key
            if not (isinstance(ti, (int, np.integer)) and not isinstance(ti, bool) and 0 <= ti < len(teams)):
                raise ValueError(f"{owner}: weights key {key!r}: team index {ti!r} is not one of 0..{len(teams) - 1}")
            if k not in keys[ti]:
                shown = keys[ti] if len(keys[ti]) <= 10 else keys[ti][:10] + ["..."]
                raise ValueError(f"{owner}: weights key {key!r}: team {ti} has no player {k!r} (its keys: {shown})")
            w[ti][keys[ti].index(k)] = value(f"weights[{key!r}]", x)
    else:
        if isinstance(weights, (str, bytes)) or not isinstance(weights, (Sequence, np.ndarray)):
            raise TypeError(f"{owner}: weights must be a sequence of per-team sequences or a mapping "
                            f"(team_index, player_key) -> weight, got {weights!r}")
        rows = list(weights)
        if len(rows) != len(teams):
            raise ValueError(f"{owner}: weights must have the shape of rating_groups: {len(rows)} teams of "
                             f"weights for {len(teams)} teams")
        w = []
        for ti, (row, team) in enumerate(zip(rows, teams)):
            if isinstance(row, (str, bytes)) or not isinstance(row, (Sequence, np.ndarray)):
                raise TypeError(f"{owner}: weights[{ti}] must be a sequence of the team's weights, got {row!r}")
            row = list(row)
            if len(row) != len(team):
                raise ValueError(f"{owner}: weights must have the shape of rating_groups: weights[{ti}] has "
                                 f"{len(row)} entries for {len(team)} players")
            w.append([value(f"weights[{ti}][{j}]", x) for j, x in enumerate(row)])
    empty = [i for i, team_w in enumerate(w) if not any(x > 0 for x in team_w)]
    if empty:
        raise ValueError(f"{owner}: team {empty[0]} has no player with weight > 0: its performance is undefined")
    return w
