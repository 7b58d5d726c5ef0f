"""Small helpers shared by the filters' team-rating APIs (checks and parsing: ``filters._checks``)."""

from __future__ import annotations

from typing import Mapping


def shape_like(rating_groups, keys, new) -> list:
    """Results in the caller's shape: dicts for mapping teams, tuples otherwise."""
    out = []
    for team, ks, vals in zip(rating_groups, keys, new):
        out.append({k: r for k, r in zip(ks, vals)} if isinstance(team, Mapping) else tuple(vals))
    return out
