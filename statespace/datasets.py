"""The real game-result data sets, found by name.

The examples, the real-data notebook and the benchmarks read four public data sets (international
football, the NFL with FiveThirtyEight's published forecasts, English league football, ATP tennis),
each normalised to one ``games.csv`` with the columns :class:`statespace.Games` reads (``time, a, b,
score`` and, where the source has them, ``neutral``, ``score_a``, ``score_b``, ...). The files are
not shipped inside the package. :func:`load` reads ``<data home>/<name>/games.csv``, where the
data home is, first found:

1. the ``root`` argument: a data root holding ``<name>/games.csv``, the data set's folder, or the
   CSV file itself;
2. the folder named by the environment variable ``STATESPACE_DATA``;
3. ``<user cache>/statespace/datasets`` (``$XDG_CACHE_HOME`` or ``~/.cache``; the platform's
   cache folder on macOS and Windows).

A data set that is not there raises :class:`DatasetNotFound`, whose message names the file looked
for, the data set's public source and licence, and where to put it. :func:`catalogue` lists the
data sets with their size, span, source and licence, and whether each is present.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ._cache import user_cache_dir

__all__ = ["Dataset", "DATASETS", "DatasetNotFound", "ENV", "data_home", "path", "load", "catalogue"]

#: Environment variable naming a data root (a folder holding ``<name>/games.csv``).
ENV = "STATESPACE_DATA"
GAMES_FILE = "games.csv"


@dataclass(frozen=True)
class Dataset:
    """One data set: its ``name`` (the folder), a ``title``, its size and span as published with
    it, the public ``source`` it was normalised from, its ``licence``, and ``files`` it holds
    besides ``games.csv``."""

    name: str
    title: str
    games: int
    competitors: int
    span: str
    source: str
    licence: str
    files: tuple[str, ...] = ()


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("intl_football", "men's international football (a is the home side unless neutral)", 49_520, 337,
            "1872-2026", "https://github.com/martj42/international_results (results.csv)", "CC0 1.0"),
    Dataset("nfl", "NFL games with FiveThirtyEight's published pre-game Elo forecasts", 16_810, 123, "1920-2021",
            "https://github.com/fivethirtyeight/nfl-elo-game (data/nfl_games.csv)", "MIT",
            files=("fivethirtyeight_nfl_games.csv",)),
    Dataset("england_football", "English league football, tiers 1-4", 208_028, 147, "1888-2025",
            "https://github.com/jalapic/engsoccerdata (data/england.rda)", "GPL (>= 2)"),
    Dataset("atp_tennis", "ATP tour-level main-draw matches", 193_728, 7_504, "1968-2024",
            "https://github.com/JeffSackmann/tennis_atp (atp_matches_YYYY.csv)",
            "CC BY-NC-SA 4.0 (non-commercial; attribution: Jeff Sackmann / Tennis Abstract)"),
)}


class DatasetNotFound(FileNotFoundError):
    """A data set's file is not where :func:`load` looked; the message says where to get it."""


def _dataset(name: str) -> Dataset:
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}") from None


def data_home(root: str | os.PathLike | None = None) -> Path:
    """The data root: ``root`` if given, else ``$STATESPACE_DATA``, else
    ``<user cache>/statespace/datasets`` (nothing is created); :class:`DatasetNotFound` when none
    applies (no variable and no home directory)."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(ENV, "").strip()
    if env:
        return Path(env).expanduser()
    cache = user_cache_dir("datasets", create=False)
    if cache is None:  # no home directory (some containers): only a path or the variable can say
        raise DatasetNotFound(f"no data home: this user has no home directory; set {ENV} to a folder "
                              f"holding <name>/{GAMES_FILE}, or pass its path")
    return Path(cache)


def path(name: str, root: str | os.PathLike | None = None, file: str = GAMES_FILE) -> Path:
    """Where data set ``name``'s ``file`` is looked for. ``root`` may be a data root, the data
    set's folder, or (for ``games.csv``) the CSV itself; the first that exists is returned, else
    the data-root location (which :func:`load` then reports as missing)."""
    ds = _dataset(name)
    if file != GAMES_FILE and file not in ds.files:
        raise ValueError(f"data set {name!r} has no file {file!r}; it has: {', '.join((GAMES_FILE, *ds.files))}")
    home = data_home(root)
    candidates = [home / name / file, home / file]
    if root is not None and file == GAMES_FILE:
        candidates.insert(0, home)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return home / name / file


def load(name: str, root: str | os.PathLike | None = None, *, errors: str = "drop"):
    """The games of data set ``name`` as :class:`statespace.Games` (see the module docstring for
    where it is looked for). Invalid rows are dropped with a :class:`statespace.DroppedRowsWarning`
    naming them (``errors="drop"``; ATP has three rows of a player against himself), or raise
    with ``errors="raise"``. :class:`DatasetNotFound` when the file is absent."""
    from .games import Games

    ds = _dataset(name)
    where = path(name, root)
    if not where.is_file():
        raise DatasetNotFound(
            f"data set {name!r} not found at {where}. It is not shipped with statespace: get it from "
            f"{ds.source} (licence: {ds.licence}), as a CSV with columns time, a, b, score (see the "
            f"data format in the docs), and put it at {where}; or set {ENV} to a folder holding "
            f"{name}/{GAMES_FILE}, or pass its path.")
    return Games.from_csv(where, errors=errors)


def catalogue(root: str | os.PathLike | None = None):
    """A DataFrame of the data sets: name, title, games, competitors, span, licence, source,
    whether ``games.csv`` is present under the data root, and its path."""
    import pandas as pd

    rows = []
    for ds in DATASETS.values():
        where = path(ds.name, root)
        rows.append({"name": ds.name, "title": ds.title, "games": ds.games, "competitors": ds.competitors,
                     "span": ds.span, "licence": ds.licence, "source": ds.source, "present": where.is_file(),
                     "path": str(where)})
    return pd.DataFrame(rows)
