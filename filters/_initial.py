"""A user's starting values (``initial=``) read into a filter's state rows.

``initial`` maps competitor names to starting values in the method's units: a number (the
rating), a tuple of the first state columns, or a mapping of column names that may also give
``"games"`` already played (e.g. ``{"rating": 2450, "games": 120}``). Each value becomes a row
through the filter's own ``initial_row``, which checks it against the method's ranges.
:meth:`filters.base.Filter.init_state` calls this; it does not import that module.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

__all__ = ["read_initial"]


def read_initial(method, players: np.ndarray, initial: Mapping[str, Any], values: np.ndarray,
                 count: np.ndarray) -> None:
    """The rows of ``values`` and entries of ``count`` of the ``players`` that ``initial`` names,
    set from their starting values (in place); names that do not play here are skipped. A
    ``TypeError`` when ``initial`` is not a mapping; a ``ValueError`` naming the competitor for a
    games count that is not a whole number >= 0 or a column the method does not have."""
    if not isinstance(initial, Mapping):
        raise TypeError(f"{method.name}: initial must map competitor names to values, "
                        f"got {type(initial).__name__}")
    index = {p: i for i, p in enumerate(players)}
    for name, value in initial.items():
        i = index.get(str(name))
        if i is None:
            continue  # a competitor who does not play here: nothing to start
        if isinstance(value, Mapping):
            value = dict(value)
            games = value.pop("games", 0)
            if not (float(games) == int(games) and int(games) >= 0):
                raise ValueError(f"{method.name}: initial games of {name!r} must be a whole number >= 0")
            count[i] = int(games)
            unknown = set(value) - set(method.columns)
            if unknown:
                raise ValueError(f"{method.name}: initial value of {name!r} has unknown keys "
                                 f"{sorted(unknown)}; known: {list(method.columns)} and 'games'")
            row = method.initial_row([value[c] for c in method.columns[: 1 + max(
                [method.columns.index(c) for c in value] or [0])]] if value else [])
        else:
            row = method.initial_row(value)
        values[i] = row
