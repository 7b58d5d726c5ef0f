"""Rating periods of a game table: the integer period code of each game, from fixed windows of
time, calendar weeks, months or years, one game each, or a column's values
(:meth:`statespace.data.games.Games.with_periods` gives the table with them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.columns import GamesError, _period_codes_from_column, describe_rows

_CALENDAR = ("week", "month", "year")


def period_codes(games, every: int | float | str | None = None, column: str | None = None,
                 origin=None) -> np.ndarray:
    """The period code of each game of ``games`` (a :class:`~statespace.data.games.Games`, in its
    row order), as :meth:`~statespace.data.games.Games.with_periods` describes them."""
    if (every is None) == (column is None):
        raise ValueError("give exactly one of every= (days or 'week'/'month'/'year'/'game') or column=")
    if column is not None:
        if column not in games.extra.columns:
            raise GamesError(f"no column {column!r} to take periods from (extra columns: "
                             f"{', '.join(games.extra.columns) or 'none'})", column=column)
        values = games.extra[column]
        bad = values.isna().to_numpy()
        if bad.any():
            rows = games.row[np.flatnonzero(bad)]
            raise GamesError(f"column '{column}': {bad.sum()} rows with missing period "
                             f"({describe_rows(rows, list(values[bad]), None, None)})", rows, column)
        codes = _period_codes_from_column(values, games.time, games.row, None, None, column)
    elif isinstance(every, str):
        if every == "game":
            codes = np.empty(len(games), dtype=np.int64)
            codes[games.order] = np.arange(len(games))
        elif every in _CALENDAR:
            if not games.is_datetime:
                raise ValueError(f"calendar periods ({every!r}) need dates; these games have numeric times")
            t = pd.DatetimeIndex(games.time)
            if every == "year":
                codes = t.year.to_numpy().astype(np.int64)
            elif every == "month":
                codes = (t.year.to_numpy() * 12 + t.month.to_numpy() - 1).astype(np.int64)
            else:  # 1970-01-01 was a Thursday: shift so weeks start on Monday
                codes = np.floor((games.days() + 3) / 7).astype(np.int64)
        else:
            raise ValueError(f"every must be a number of days or one of 'week', 'month', 'year', 'game'; "
                             f"got {every!r}")
    else:
        length = float(every)
        if not (np.isfinite(length) and length > 0):
            raise ValueError(f"period length must be > 0, got {every!r}")
        t = games.days()
        if origin is not None:
            if isinstance(origin, (int, float, np.integer, np.floating)):
                t = t - origin  # as given: a lone whole number would otherwise read as a year
            else:
                # read as a table's time is (text, a date, ...): through the table's own reader
                t = t - type(games).from_arrays([origin], ["x"], ["y"], [1]).days()[0]
        codes = np.floor(t / length + 1e-9).astype(np.int64)
    return codes
