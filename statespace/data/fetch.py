"""Fetching the data sets too large (or too restrictively licensed) to ship: download the public
source files at a pinned commit with pooch, normalise them to one ``games.csv``, and check the
result against the games this version was tested on.

The check is a content hash (:func:`content_hash`): SHA-256 of the sorted lines ``time,winner,
loser,1`` (``time,a,b,0.5`` for a draw), so it holds whatever the column formatting or the order
of games within a day, and whichever side of a tennis match is called ``a``. The source files
themselves are addressed by commit, so they cannot change under the same address; a download cut
short or altered on the way changes the games. Games that differ raise :class:`ChecksumError`
and nothing fetched is kept (the downloaded files are removed too, so the next attempt downloads
them again). The table that passes is written with the size and SHA-256 of its bytes recorded
beside it (``manifest.json``, :mod:`statespace.data.integrity`), which every later load checks.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["content_hash", "check_games", "Source", "SOURCES", "fetch", "FetchError", "ChecksumError", "ChecksumWarning"]

RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


class FetchError(OSError):
    """A source file could not be downloaded (offline, or the server refused)."""


class ChecksumError(FetchError):
    """A fetched data set's games differ from the ones this version was tested on (nothing fetched
    was kept)."""


class ChecksumWarning(UserWarning):
    """No longer issued (a mismatch is a :class:`ChecksumError`); kept for code that names it."""


def content_hash(frame: pd.DataFrame) -> str:
    """SHA-256 of a game table's results: one line ``time,winner,loser,1`` per game (``time,a,b,0.5``
    for a draw), sorted, joined by newlines. ``frame`` has the columns ``time`` (ISO dates),
    ``a``, ``b`` and ``score``."""
    t = frame["time"].astype(str).to_numpy()
    a = frame["a"].astype(str).to_numpy()
    b = frame["b"].astype(str).to_numpy()
    s = pd.to_numeric(frame["score"]).to_numpy(float)
    lines = [f"{ti},{ai},{bi},0.5" if si == 0.5 else (f"{ti},{ai},{bi},1" if si > 0.5 else f"{ti},{bi},{ai},1")
             for ti, ai, bi, si in zip(t, a, b, s)]
    lines.sort()
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def _iso(dates: pd.Series) -> pd.Series:
    return pd.to_datetime(dates).dt.strftime("%Y-%m-%d")


def _score(goals_a: pd.Series, goals_b: pd.Series) -> np.ndarray:
    return np.where(goals_a > goals_b, 1.0, np.where(goals_a < goals_b, 0.0, 0.5))


def normalise_england(files: list[Path]) -> pd.DataFrame:
    """engsoccerdata's ``england`` table (``data/england.rda``: Date, Season, home, visitor,
    hgoal, vgoal, tier) as ``time, a, b, score, neutral, score_a, score_b, season, tier``, ``a``
    the home side, sorted by date (stable). Reading R's data format needs the ``rdata`` package."""
    try:
        import rdata
    except ImportError:
        raise FetchError("reading engsoccerdata's england.rda needs the rdata package: pip install rdata") from None
    src = rdata.read_rda(str(files[0]))["england"]
    src = src[pd.to_numeric(src["tier"]).between(1, 4)]
    ga, gb = pd.to_numeric(src["hgoal"]).astype(int), pd.to_numeric(src["vgoal"]).astype(int)
    out = pd.DataFrame({"time": _iso(src["Date"]), "a": src["home"].astype(str), "b": src["visitor"].astype(str),
                        "score": _score(ga, gb), "neutral": 0, "score_a": ga, "score_b": gb,
                        "season": pd.to_numeric(src["Season"]).astype(int), "tier": pd.to_numeric(src["tier"]).astype(int)})
    return out.sort_values("time", kind="stable").reset_index(drop=True)


#: the round order within a tennis event (round robin first, then the knock-out rounds)
ROUNDS = {r: i for i, r in enumerate(["RR", "R128", "R64", "R32", "R16", "QF", "SF", "BR", "F"])}


def normalise_atp(files: list[Path]) -> pd.DataFrame:
    """Jeff Sackmann's ``atp_matches_YYYY.csv`` (tour-level main draws) as ``time, a, b, score``:
    walkovers (score ``W/O``) dropped, retirements kept; ``time`` the event's start date, matches
    of one event in round order; the source lists the winner first, so ``a`` is the winner when
    the CRC-32 of ``tourney_id-match_num`` is even (a fixed, reproducible 50/50 assignment)."""
    frames = [pd.read_csv(f, dtype={"winner_id": str, "loser_id": str, "tourney_id": str}, low_memory=False)
              for f in files]
    src = pd.concat(frames, ignore_index=True)
    src = src[~src["score"].astype(str).str.contains("W/O", case=False, na=False)]
    key = src["tourney_id"].astype(str) + "-" + src["match_num"].astype(str)
    flip = np.array([zlib.crc32(k.encode()) & 1 for k in key], dtype=bool)
    w, lo = src["winner_id"].to_numpy(str), src["loser_id"].to_numpy(str)
    out = pd.DataFrame({"time": _iso(src["tourney_date"].astype(str)), "a": np.where(flip, lo, w),
                        "b": np.where(flip, w, lo), "score": np.where(flip, 0.0, 1.0),
                        "_event": pd.factorize(src["tourney_id"])[0],
                        "_round": src["round"].map(ROUNDS).fillna(len(ROUNDS)).to_numpy(),
                        "_match": pd.to_numeric(src["match_num"], errors="coerce").fillna(0).to_numpy()})
    out = out.sort_values(["time", "_event", "_round", "_match"], kind="stable")
    return out.drop(columns=["_event", "_round", "_match"]).reset_index(drop=True)


class Source:
    """Where a fetched data set comes from: ``repo`` at ``commit``, the ``paths`` in it, the
    ``normalise`` function turning the downloaded files into a game table, and ``content`` the
    :func:`content_hash` of the games this version was tested on."""

    def __init__(self, repo: str, commit: str, paths: list[str], normalise: Callable[[list[Path]], pd.DataFrame],
                 content: str):
        self.repo, self.commit, self.paths, self.normalise, self.content = repo, commit, paths, normalise, content

    def urls(self) -> list[str]:
        return [RAW.format(repo=self.repo, commit=self.commit, path=p) for p in self.paths]


SOURCES: dict[str, Source] = {
    "england_football": Source("jalapic/engsoccerdata", "872c5c354161ace8408f3091b758c6af4cccca94",
                               ["data/england.rda"], normalise_england,
                               "e7a954c45130dd496e167c3f9e4b1f64263675e24ee3ab1a06dcf4d43f3d2ee1"),
    "atp_tennis": Source("JeffSackmann/tennis_atp", "5b6263dc487b4fa4fa35326764bc9b0215042a42",
                         [f"atp_matches_{y}.csv" for y in range(1968, 2025)], normalise_atp,
                         "e8b527ae77da324310dd54b7f8f97b8b428a8abd46893ea2da3d0f017e85516e"),
}


def _discard(paths) -> None:
    for p in paths:
        try:
            Path(p).unlink()
        except OSError:
            pass


def check_games(name: str, path: Path, remedy: str) -> None:
    """Whether the table ``path`` holds the games data set ``name`` was tested on (its content
    hash); :class:`statespace.data.integrity.DatasetDamaged` naming it and ``remedy`` when not."""
    from statespace.data.integrity import DatasetDamaged

    src = SOURCES[name]
    try:
        frame = pd.read_csv(path, dtype={"time": str, "a": str, "b": str}, keep_default_na=False)
        got = content_hash(frame)
    except (OSError, EOFError, ValueError, KeyError, pd.errors.ParserError) as exc:
        raise DatasetDamaged(f"cannot read {path} as data set {name!r} ({type(exc).__name__}: {str(exc)[:120]}); "
                             f"{remedy}") from None
    if got != src.content:
        raise DatasetDamaged(f"{path} does not hold the games of data set {name!r} this version was tested on "
                             f"(content hash {got[:12]}, expected {src.content[:12]}); {remedy}")


def fetch(name: str, folder: Path, progress: bool = False) -> Path:
    """Download data set ``name``'s source files into ``folder/raw``, normalise them to
    ``folder/games.csv``, record its size and SHA-256 in ``folder/manifest.json`` and return its
    path. :class:`FetchError` when a download fails; :class:`ChecksumError` when the games differ
    from the ones this version was tested on, or the files cannot be read (the downloaded files
    are then removed, and any earlier ``games.csv`` with its record)."""
    import pooch

    from statespace.data.integrity import MANIFEST, record

    src = SOURCES[name]
    raw = folder / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    files = []
    for url in src.urls():
        try:
            # the address names a commit, so the file cannot change under it; the games are checked below
            files.append(Path(pooch.retrieve(url, known_hash=None, path=raw, fname=url.rsplit("/", 1)[1],
                                             progressbar=progress)))
        except Exception as exc:  # requests' and urllib's errors alike: offline, refused, not found
            reason = str(exc).split(" (Caused by ")[-1].strip("()") or type(exc).__name__
            raise FetchError(f"could not download {url}: {reason[:160]}") from None
    target = folder / "games.csv"
    again = f"they were removed; fetch again with statespace.datasets.fetch({name!r}, force=True)"
    try:
        games = src.normalise(files)
        got = content_hash(games)
    except FetchError:
        raise
    except Exception as exc:  # a download cut short or altered: whatever its reader raises
        _discard(files + [target, folder / MANIFEST])
        raise ChecksumError(f"data set {name!r}: the files fetched from {src.repo}@{src.commit[:8]} cannot be read "
                            f"({type(exc).__name__}: {str(exc)[:120]}); {again}") from None
    if got != src.content:
        _discard(files + [target, folder / MANIFEST])
        raise ChecksumError(f"data set {name!r}: the games fetched from {src.repo}@{src.commit[:8]} differ from the "
                            f"ones this version was tested on (content hash {got[:12]}, expected {src.content[:12]}); "
                            f"{again}")
    tmp = folder / f".games.csv.{os.getpid()}"
    games.to_csv(tmp, index=False)
    _discard([folder / MANIFEST])  # no moment with the new table under the old record
    os.replace(tmp, target)
    record(folder, [target.name], content=src.content, source=f"{src.repo}@{src.commit}")
    return target
