"""What the real-data examples share: reading ``<root>/<name>/games.csv`` of the project's shared
data folder (never copied into the project), with invalid rows dropped and reported."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import statespace
from statespace import Games


def load_dataset(root: Path, name: str) -> Games | None:
    """The games of data set ``name`` under ``root``, or ``None`` (said on stderr) when absent.
    Invalid rows (ATP has 3 of a player against himself) are dropped and listed on stdout."""
    path = Path(root).expanduser() / name / "games.csv"
    if not path.is_file():
        print(f"\n{name}: not found at {path}; skipped", file=sys.stderr)
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", statespace.DroppedRowsWarning)
        games = Games.from_csv(path, errors="drop")
    if len(games.dropped):
        print(f"\n{name}: dropped {games.dropped['row'].nunique()} invalid rows "
              f"({', '.join(sorted(set(games.dropped['reason'])))})")
    return games
