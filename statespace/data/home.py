"""Where data sets live on this machine: the data home searched before the shipped copies (the
folder a user names, ``$STATESPACE_DATA``, else the user cache), for the games' data sets
(:mod:`statespace.data.datasets`) and the matches' (:mod:`statespace.data.match_datasets`) alike."""

from __future__ import annotations

import os
from pathlib import Path

from statespace._runtime.cache import user_cache_dir

__all__ = ["ENV", "GAMES_FILE", "DatasetNotFound", "data_home"]

#: Environment variable naming a data root (a folder holding ``<name>/games.csv``).
ENV = "STATESPACE_DATA"
GAMES_FILE = "games.csv"


class DatasetNotFound(FileNotFoundError):
    """A data set's file is neither where :func:`load` looked nor could be fetched; the message
    says where to get it and where to put it."""


def data_home(root: str | os.PathLike | None = None) -> Path:
    """The data root searched before the shipped copies: ``root`` if given, else
    ``$STATESPACE_DATA``, else ``<user cache>/statespace/datasets`` (nothing is created);
    :class:`DatasetNotFound` when none applies (no variable and no home directory)."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get(ENV, "").strip()
    if env:
        return Path(env).expanduser()
    return _cache_home()


def _cache_home() -> Path:
    cache = user_cache_dir("datasets", create=False)
    if cache is None:  # no home directory (some containers): only a path or the variable can say
        raise DatasetNotFound(f"no data home: this user has no home directory; set {ENV} to a folder "
                              f"holding <name>/{GAMES_FILE}, or pass its path")
    return Path(cache)
