"""The real game-result data sets, loaded by name.

Four public data sets of pairwise results, each normalised to the columns :class:`statespace.Games`
reads (``time, a, b, score`` and, where the source has them, ``neutral``, ``score_a``, ``score_b``,
...):

- ``intl_football`` (men's international football, CC0 1.0) and ``nfl`` (the NFL with
  FiveThirtyEight's published pre-game forecasts, MIT) are **shipped inside the package**, their
  licences (both permit redistribution) beside them in ``statespace/data/<name>/LICENSE``;
- ``england_football`` (GPL >= 2) and ``atp_tennis`` (CC BY-NC-SA 4.0, non-commercial) are
  **fetched on first use** from their public sources at a pinned commit (with pooch) into the user
  cache, normalised, and checked against the games this version was tested on (a content hash, see
  :mod:`statespace.data.fetch`).

:func:`load` looks, first found:

1. the ``root`` argument: a data root holding ``<name>/games.csv``, the data set's folder, or the
   CSV file itself (nothing else is tried);
2. the folder named by the environment variable ``STATESPACE_DATA``, when it holds the file;
3. the copy shipped in the package;
4. ``<user cache>/statespace/data/datasets/<name>/games.csv`` (``$XDG_CACHE_HOME`` or ``~/.cache``;
   the platform's cache folder on macOS and Windows), fetched there on first use.

A data set that cannot be found or fetched raises :class:`DatasetNotFound`, whose message names
the file looked for, the public source and licence, and where to put the file by hand.

Every load checks the file first (:mod:`statespace.data.integrity`): a shipped file against the size and
SHA-256 recorded beside it in the package; a fetched one against those :func:`fetch` recorded in
its cache folder (one found there without a record, fetched by an older version or put there by
hand, must hold the games this version was tested on, and is then recorded); a file of a data home
when a ``manifest.json`` lies beside it. A file that differs raises :class:`DatasetDamaged` (a
:class:`statespace.GamesError`) naming it and how to get it back: ``fetch(name)`` (or ``statespace
datasets --fetch NAME``) fetches a damaged copy again. The hash is computed once per process and
file, so later loads cost a ``stat``.
:func:`catalogue` (and ``statespace datasets``) lists them with size, span, licence and where each
is. :func:`load_matches` loads the data sets of matches of many sides by name (:data:`MATCH_DATASETS`:
Halo 2's head-to-head and large-team games, Codeforces' contests; :mod:`statespace.data.match_datasets`).
:func:`reference` gives a data set's published forecasts (FiveThirtyEight's for the NFL) as a
:class:`statespace.FixedForecast` aligned with the loaded games.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from statespace._runtime.cache import user_cache_dir
from statespace.data.home import ENV, GAMES_FILE, DatasetNotFound, _cache_home, data_home
from statespace.data.integrity import MANIFEST, DatasetDamaged, read_manifest, record, verify
from statespace.data.match_datasets import MATCH_DATASETS, load_matches

__all__ = ["Dataset", "DATASETS", "DatasetNotFound", "DatasetDamaged", "ENV", "data_home", "path", "load", "reference",
           "fetch", "catalogue", "check", "MATCH_DATASETS", "load_matches"]

#: the package folder of the shipped data sets (``<name>/games.csv.gz`` and its ``LICENSE``)
SHIPPED = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Dataset:
    """One data set: its ``name``, a ``title``, its size and span, the public ``source`` it was
    normalised from, its ``licence``, ``files`` it holds besides ``games.csv``, and whether it is
    ``shipped`` in the package (else fetched on first use)."""

    name: str
    title: str
    games: int
    competitors: int
    span: str
    source: str
    licence: str
    files: tuple[str, ...] = ()
    shipped: bool = False


DATASETS: dict[str, Dataset] = {d.name: d for d in (
    Dataset("intl_football", "men's international football (a is the home side unless neutral)", 49_520, 337,
            "1872-2026", "https://github.com/martj42/international_results (results.csv)", "CC0 1.0",
            shipped=True),
    Dataset("nfl", "NFL games with FiveThirtyEight's published pre-game Elo forecasts", 16_810, 123, "1920-2021",
            "https://github.com/fivethirtyeight/nfl-elo-game (data/nfl_games.csv)", "MIT",
            files=("fivethirtyeight_nfl_games.csv",), shipped=True),
    Dataset("england_football", "English league football, tiers 1-4", 208_028, 147, "1888-2025",
            "https://github.com/jalapic/engsoccerdata (data/england.rda)", "GPL (>= 2)"),
    Dataset("atp_tennis", "ATP tour-level main-draw matches", 193_728, 7_504, "1968-2024",
            "https://github.com/JeffSackmann/tennis_atp (atp_matches_YYYY.csv)",
            "CC BY-NC-SA 4.0 (non-commercial; attribution: Jeff Sackmann / Tennis Abstract)"),
)}


def _dataset(name: str) -> Dataset:
    try:
        return DATASETS[name]
    except KeyError:
        raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATASETS)}") from None


def _in_root(name: str, root: Path, file: str, explicit: bool) -> Path | None:
    candidates = [root / name / file, root / file]
    if explicit and file == GAMES_FILE:
        candidates.insert(0, root)
    return next((c for c in candidates if c.is_file()), None)


def path(name: str, root: str | os.PathLike | None = None, file: str = GAMES_FILE) -> Path:
    """Where data set ``name``'s ``file`` is (see the module docstring for the order): ``root``
    may be a data root, the data set's folder, or (for ``games.csv``) the CSV itself. When it is
    nowhere, the place it would be fetched to (or, with ``root``, looked for), which :func:`load`
    then fills or reports as missing."""
    ds = _dataset(name)
    if file != GAMES_FILE and file not in ds.files:
        raise ValueError(f"data set {name!r} has no file {file!r}; it has: {', '.join((GAMES_FILE, *ds.files))}")
    if root is not None:
        home = Path(root).expanduser()
        return _in_root(name, home, file, explicit=True) or home / name / file
    env = os.environ.get(ENV, "").strip()
    if env:
        found = _in_root(name, Path(env).expanduser(), file, explicit=False)
        if found is not None:
            return found
    if ds.shipped:
        return SHIPPED / name / f"{file}.gz"
    return _cache_home() / name / file


def _not_found(ds: Dataset, where: Path, why: str = "") -> DatasetNotFound:
    how = ("is fetched on first use from its public source" if not ds.shipped else "is shipped with statespace")
    return DatasetNotFound(
        f"data set {ds.name!r} not found at {where}{why}. It {how}: {ds.source} (licence: {ds.licence}). "
        f"To use it offline, put it there as a CSV with columns time, a, b, score (see the data format in the "
        f"docs), or set {ENV} to a folder holding {ds.name}/{GAMES_FILE}, or pass its path.")


def fetch(name: str, *, force: bool = False, progress: bool = True) -> Path:
    """Download data set ``name`` from its public source into the user cache (see the module
    docstring) and return the path of its ``games.csv``; an existing copy is kept unless
    ``force`` or unless it fails its check (then it is fetched again). Shipped data sets need no
    fetching: their packaged path is returned, checked. :class:`DatasetNotFound` when the download
    fails (offline) or the games fetched are not the ones this version was tested on (nothing
    fetched is kept then), saying where to put the file."""
    from statespace.data import fetch as _fetch

    ds = _dataset(name)
    if ds.shipped:
        return check(name, SHIPPED / name / f"{GAMES_FILE}.gz")
    private = user_cache_dir("datasets")  # created private when it can be
    folder = (Path(private) if private is not None else _cache_home()) / name
    target = folder / GAMES_FILE
    if target.is_file() and not force:
        try:
            return check(name, target)
        except DatasetDamaged:
            pass  # asked for the data set: fetch it again
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return _fetch.fetch(name, folder, progress=progress)
    except (_fetch.FetchError, OSError) as exc:
        raise _not_found(ds, target, f" and could not be fetched ({exc})") from None


def _refetch(name: str) -> str:
    return (f"fetch it again with statespace.datasets.fetch({name!r}) (command line: statespace datasets "
            f"--fetch {name})")


def _kind(where: Path) -> str:
    """``shipped``, ``cached`` or ``data home``: whose file ``where`` is."""
    if where.is_relative_to(SHIPPED):
        return "shipped"
    if where.is_relative_to(_safe_cache()):
        return "cached"
    return "data home"


def check(name: str, where: str | os.PathLike) -> Path:
    """Check data set ``name``'s file ``where`` (see the module docstring) and return it as a
    path; :class:`DatasetDamaged` naming it and how to get it back when it fails."""
    from statespace.data import fetch as _fetch

    where = Path(where)
    kind = _kind(where)
    if kind == "shipped":
        verify(where, "the copy shipped with statespace is damaged: reinstall the package (pip install "
                      "--force-reinstall --no-deps statespace-ratings) or restore it from version control")
    elif kind == "cached" and name in _fetch.SOURCES:
        src = _fetch.SOURCES[name]
        remedy = _refetch(name)
        manifest = read_manifest(where.parent, remedy)
        if manifest is None:  # fetched by an older version, or put there by hand: the games decide
            _fetch.check_games(name, where, remedy)
            try:
                record(where.parent, [where.name], content=src.content, source=f"{src.repo}@{src.commit}")
            except OSError:  # a read-only cache: checked by its games again next time
                pass
        elif manifest.get("content") != src.content:
            raise DatasetDamaged(f"{where} was fetched for another version of statespace (content hash "
                                 f"{str(manifest.get('content'))[:12]}, this version expects {src.content[:12]}); "
                                 f"{remedy}")
        else:
            verify(where, remedy, manifest)
    elif (where.parent / MANIFEST).is_file():
        verify(where, f"restore it, or delete {where.parent / MANIFEST} to read the file as it is")
    return where


def load(name: str, root: str | os.PathLike | None = None, *, errors: str = "drop", download: bool = True):
    """The games of data set ``name`` as :class:`statespace.Games` (see the module docstring for
    where it is looked for). Invalid rows are dropped with a :class:`statespace.DroppedRowsWarning`
    naming them (``errors="drop"``; ATP has three rows of a player against himself), or raise
    with ``errors="raise"``. A fetched data set absent from the cache is downloaded first
    (``download=False``: raise instead). :class:`DatasetNotFound` when it cannot be had.

    >>> from statespace import datasets
    >>> games = datasets.load("intl_football")
    >>> len(games) > 49_000
    True
    """
    from statespace.data.games import Games

    ds = _dataset(name)
    where = path(name, root)
    if not where.is_file():
        if root is not None or ds.shipped or not download:
            raise _not_found(ds, where)
        where = fetch(name)
    return Games.from_csv(check(name, where), errors=errors)


def reference(name: str, games=None):
    """The published forecasts of data set ``name`` as a :class:`statespace.FixedForecast` aligned
    with ``games`` (default: ``load(name)``), so that they sit in :func:`statespace.compare`'s
    table on exactly the same games. Only the NFL has them: FiveThirtyEight's pre-game Elo
    probability that ``a`` (their ``team1``) wins, column ``elo_prob1``."""
    import pandas as pd

    from statespace.data.fixed import FixedForecast

    ds = _dataset(name)
    if "fivethirtyeight_nfl_games.csv" not in ds.files:
        raise ValueError(f"data set {name!r} has no published forecasts; only 'nfl' has (FiveThirtyEight's)")
    if games is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            games = load(name)
    where = check(name, path(name, file="fivethirtyeight_nfl_games.csv"))
    try:
        src = pd.read_csv(where, dtype={"team1": str, "team2": str})
    except (OSError, EOFError, ValueError, pd.errors.ParserError) as exc:  # a data home's copy, unrecorded
        raise DatasetDamaged(f"cannot read {where} as CSV ({type(exc).__name__}: {str(exc)[:120]})") from None
    if games.row.size and games.row.max() >= len(src):
        raise ValueError(f"games has rows beyond the {len(src):,} of {name!r}'s published forecasts: "
                         f"load the games with datasets.load({name!r})")
    frame = games.to_frame()
    same = (src["team1"].to_numpy()[games.row] == frame["a"].to_numpy()) & \
           (src["team2"].to_numpy()[games.row] == frame["b"].to_numpy())
    if not same.all():
        raise ValueError(f"the published forecasts do not match these games in {int((~same).sum())} rows: "
                         f"load the games with datasets.load({name!r})")
    return FixedForecast(src["elo_prob1"].to_numpy(float)[games.row], games, name="FiveThirtyEight")


def catalogue(root: str | os.PathLike | None = None):
    """A DataFrame of the data sets: name, title, games, competitors, span, licence, source,
    ``where`` (``shipped``, ``cached``, ``data home``, ``fetched on first use``, or ``damaged``
    when the file fails its check, see the module docstring), whether ``games.csv`` is
    ``present``, its ``path``, and the ``problem`` of a damaged one (else empty)."""
    import pandas as pd

    rows = []
    for ds in DATASETS.values():
        where = path(ds.name, root)
        present, problem = where.is_file(), ""
        if not present:
            kind = "missing" if root is not None else "fetched on first use"
        else:
            kind = _kind(where)
            try:
                check(ds.name, where)
            except DatasetDamaged as exc:
                kind, problem = "damaged", str(exc)
        rows.append({"name": ds.name, "title": ds.title, "games": ds.games, "competitors": ds.competitors,
                     "span": ds.span, "licence": ds.licence, "source": ds.source, "where": kind,
                     "present": present, "path": str(where), "problem": problem})
    return pd.DataFrame(rows)


def _safe_cache() -> Path:
    try:
        return _cache_home()
    except DatasetNotFound:
        return Path("/nonexistent-statespace-cache")
