"""Data sets of matches of many competitors, loaded as :class:`statespace.data.matches.Matches`.

- ``halo2_head_to_head``: 6,028 one-on-one Halo 2 beta games; ``halo2_large_team``: 972 team games
  (each side a team, each player's score summed into his team's). Shipped with the package, from
  the book *Model-Based Machine Learning* (Winn, Bishop et al., chapter 3), repository
  ``dotnet/mbmlbook``, MIT licence (:mod:`statespace.data.match_sources` has the commit and the
  normalisation).
- ``codeforces``: the standings of the 1,062 rated Codeforces contests Elo-MMR's experiments used
  (about 3 million entries), from the history of ``EbTech/Elo-MMR``. Not shipped (no licence covers
  redistributing them): fetched on first use into the data home and checked against the
  SHA-256 of every file (:func:`statespace.data.match_sources.fetch_codeforces`).

Times: Halo 2's are its games' end dates; a Codeforces contest's time is its start
(``time_seconds``), read as a date.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from statespace.data import match_sources as S
from statespace.data.home import data_home

__all__ = ["MATCH_DATASETS", "load_matches"]

#: name -> what it holds
MATCH_DATASETS = {
    "halo2_head_to_head": "Halo 2 beta one-on-one games (shipped; MIT, dotnet/mbmlbook)",
    "halo2_large_team": "Halo 2 beta large-team games (shipped; MIT, dotnet/mbmlbook)",
    "codeforces": "Codeforces contest standings as Elo-MMR used them (fetched with checksums from EbTech/Elo-MMR)",
}


def _codeforces_long(root: Path, download: bool, progress: bool) -> pd.DataFrame:
    folder = root / "codeforces"
    names = sorted(S.codeforces_manifest()["files"], key=lambda n: int(n.split(".")[0]))
    if download:  # fetches what is missing; pooch checks each file present against its SHA-256
        S.fetch_codeforces(folder, progress=progress)
    else:
        missing = [n for n in names if not (folder / n).is_file()]
        if missing:
            raise FileNotFoundError(f"codeforces: {len(missing)} of {len(names)} contest files are not in "
                                    f"{folder}; load_matches('codeforces') fetches them (download=True)")
    frames = [S.read_codeforces(folder / n) for n in names]
    out = pd.concat(frames, ignore_index=True)
    out["time"] = pd.to_datetime(out["time"], unit="s")
    return out


def load_matches(name: str, root: str | os.PathLike | None = None, *, download: bool = True,
                 progress: bool = False):
    """The matches of data set ``name`` (one of :data:`MATCH_DATASETS`) as a
    :class:`~statespace.data.matches.Matches`. The Codeforces standings are read from
    ``<data home>/codeforces/`` (``root``, else :func:`statespace.data.datasets.data_home`),
    fetched there first when absent (``download=False``: raise instead)."""
    from statespace.data.matches import Matches

    if name not in MATCH_DATASETS:
        raise ValueError(f"unknown match data set {name!r}; known: {', '.join(MATCH_DATASETS)}")
    if name == "codeforces":
        return Matches.from_long(_codeforces_long(data_home(root), download, progress))
    kind = name.removeprefix("halo2_")
    return Matches.from_long(S.halo_long(S.halo_path(kind)))
