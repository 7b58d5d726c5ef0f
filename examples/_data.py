"""What the real-data examples share: a data set of ``statespace.datasets`` by name, skipped with a
message when it is absent, with invalid rows dropped and reported."""

from __future__ import annotations

import sys
import warnings

import statespace
from statespace import Games
from statespace.data import datasets


def load_or_skip(name: str, root: str | None = None) -> Games | None:
    """The games of data set ``name`` (under ``root`` if given, else where
    :func:`statespace.datasets.load` looks), or ``None`` (said on stderr) when it is absent. Invalid
    rows (ATP has 3 of a player against himself) are dropped and listed on stdout."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", statespace.DroppedRowsWarning)
            games = datasets.load(name, root)
    except datasets.DatasetNotFound as exc:
        print(f"\n{name}: {str(exc).rstrip('.')}; skipped", file=sys.stderr)
        return None
    if len(games.dropped):
        print(f"\n{name}: dropped {games.dropped['row'].nunique()} invalid rows "
              f"({', '.join(sorted(set(games.dropped['reason'])))})")
    return games
