"""Small helpers shared by filters: parameter checks and parsing of team ratings."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np


def finite(name: str, value, positive: bool = False, nonneg: bool = False) -> float:
    """``value`` as a float, or ``ValueError`` naming ``name`` if it is not finite (and > 0 or
    >= 0 when asked)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
        and np.isfinite(value)
    if not ok or (positive and value <= 0) or (nonneg and value < 0):
        need = "> 0" if positive else ">= 0" if nonneg else ""
        raise ValueError(f"{name} must be a finite number{' ' + need if need else ''}, got {value!r}")
    return float(value)


def parse_teams(rating_groups: Sequence[Any], *, zero_sigma: bool = False
                ) -> tuple[list[list[tuple[float, float]]], list[list]]:
    """Teams as lists of (mu, sigma), and each team's keys (names, or positions); ``sigma = 0``
    (a skill known exactly) is allowed where ``zero_sigma``."""
    teams, keys = [], []
    for team in rating_groups:
        if isinstance(team, Mapping):
            ks = list(team.keys())
            vals = [team[k] for k in ks]
        else:
            vals = list(team)
            ks = list(range(len(vals)))
        if not vals:
            raise ValueError("every team needs at least one player")
        parsed = []
        for v in vals:
            mu, sigma = (v.mu, v.sigma) if hasattr(v, "mu") else v
            if not (np.isfinite(mu) and np.isfinite(sigma) and (sigma > 0 or (zero_sigma and sigma == 0))):
                need = "sigma >= 0" if zero_sigma else "sigma > 0"
                raise ValueError(f"a rating must be a finite (mu, {need}), got {v!r}")
            parsed.append((float(mu), float(sigma)))
        teams.append(parsed)
        keys.append(ks)
    return teams, keys


def parse_weights(weights, teams, keys) -> list[list[float]]:
    """Partial-play weights shaped like ``teams`` (default 1): a sequence of per-team sequences
    or a mapping ``(team_index, key) -> weight``."""
    if weights is None:
        return [[1.0] * len(t) for t in teams]
    if isinstance(weights, Mapping):
        w = [[1.0] * len(t) for t in teams]
        for (ti, k), value in weights.items():
            w[ti][keys[ti].index(k)] = float(value)
    else:
        w = [[float(x) for x in team_w] for team_w in weights]
    if [len(x) for x in w] != [len(t) for t in teams]:
        raise ValueError("weights must have the shape of rating_groups")
    if any(x < 0 or not np.isfinite(x) for team_w in w for x in team_w):
        raise ValueError("weights must be finite and >= 0")
    empty = [i for i, team_w in enumerate(w) if not any(x > 0 for x in team_w)]
    if empty:
        raise ValueError(f"team {empty[0]} has no player with weight > 0: its performance is undefined")
    return w


def shape_like(rating_groups, keys, new) -> list:
    """Results in the caller's shape: dicts for mapping teams, tuples otherwise."""
    out = []
    for team, ks, vals in zip(rating_groups, keys, new):
        out.append({k: r for k, r in zip(ks, vals)} if isinstance(team, Mapping) else tuple(vals))
    return out
