"""Two public data sets of matches of many competitors, read into the long table of matches (one
row per competitor of a match: ``match, time, competitor, side, rank, score, weight``) that
:meth:`statespace.data.matches.Matches.from_long` reads. Not registered in
:data:`statespace.data.datasets.DATASETS` yet.

**Codeforces standings, as Elo-MMR used them.** The repository ``EbTech/Elo-MMR`` held, at commit
``1345c6710c00371a34eaaa6a51c2b752a3a9fb1a`` (27 July 2020, "ratings updated to Round #659"),
1,062 files ``cache/<contest id>.json`` (163 MB), one per rated Codeforces contest:
``{"id", "name", "time_seconds", "standings": [[handle, lo, hi], ...]}``, the standings in order,
``lo..hi`` the 0-based places a handle shares with those tied with it. The files were removed from
the repository's tree on 5 January 2021 (commit ``d0fdf8be``); they stay in its history.
*Licence*: that commit holds no licence file; the MIT licence (``LICENSE``, "Copyright (c) 2021
Elo-MMR Project") was added on 15 February 2021 (commit ``125dd2c3``) and speaks of "this software
and associated documentation files". The standings themselves are Codeforces' data, pulled from
the Codeforces API under Codeforces' terms. No licence clearly covers redistributing them, so
they are **not shipped**: :func:`fetch_codeforces` downloads them from raw.githubusercontent.com at
the pinned commit and checks each file against the size and SHA-256 recorded in
``statespace/data/codeforces/manifest.json`` (written by :func:`write_codeforces_manifest` from a
clone of the repository).

**Halo 2, from Model-Based Machine Learning** (Winn, Bishop et al., chapter 3 "Meeting Your
Match"). The repository ``dotnet/mbmlbook`` at commit ``4a8f76a3605b28406670db0684f14d1f521f291d``
(the files are unchanged since they were added in ``369edf8b``, 1 May 2019) holds, in
``src/3. Meeting Your Match/Data/``, ``Halo2-HeadToHead.objml`` (6,028 one-on-one Slayer games)
and ``Halo2-LargeTeam.objml`` (972 team games, each player's score within his team), in the
book's XML serialisation. *Licence*: the repository's ``LICENSE`` is MIT ("Copyright (c) 2019
.NET Foundation"), and its README says the repository holds "the source code for these models
together with the sample data"; the data files carry no other notice. That permits
redistribution, so both files are **shipped**, gzipped and untouched, in
``statespace/data/halo2/`` beside the licence, ``SOURCE_COMMIT`` and their ``manifest.json``
(:func:`halo_path` checks them on every read). The repository's two other Halo 2 files
(free-for-all and small-team games) are not shipped yet.

Normalisation: the Halo 2 game's score of a side is the book's ``Team.Score``, the sum of its
players' scores (a head-to-head game's missing ``Player1Score`` or ``Player2Score`` is 0, the
book's default); the rank is the competition rank of the scores, higher first (scores 5, 3, 3, 1
are ranks 0, 1, 1, 3), as the book's ``Outcome`` orders them. A Codeforces rank is the source's
``lo``, which is already a competition rank (places 0, 1, 1, 3). Every weight is 1: neither
source records partial play.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd

from statespace.data.columns import GamesError

__all__ = ["COLUMNS", "CODEFORCES_REPO", "CODEFORCES_COMMIT", "HALO_REPO", "HALO_COMMIT", "HALO_FILES",
           "codeforces_long", "read_codeforces", "codeforces_files", "write_codeforces_manifest",
           "codeforces_manifest", "codeforces_url", "fetch_codeforces", "halo_long", "halo_path"]

#: the columns of the long table of matches, in order
COLUMNS = ("match", "time", "competitor", "side", "rank", "score", "weight")
RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
HERE = Path(__file__).resolve().parent

CODEFORCES_REPO = "EbTech/Elo-MMR"
CODEFORCES_COMMIT = "1345c6710c00371a34eaaa6a51c2b752a3a9fb1a"
CODEFORCES_DIR = "cache"
CODEFORCES_LICENCE = ("none at the pinned commit (the repository's MIT licence, added in 2021, covers its "
                      "software); the standings are Codeforces' data from the Codeforces API: not redistributed, "
                      "fetched from the source")
CODEFORCES_FOLDER = HERE / "codeforces"

HALO_REPO = "dotnet/mbmlbook"
HALO_COMMIT = "4a8f76a3605b28406670db0684f14d1f521f291d"
HALO_DIR = "src/3. Meeting Your Match/Data"
HALO_FOLDER = HERE / "halo2"
#: the shipped Halo 2 files by kind
HALO_FILES = {"head_to_head": "Halo2-HeadToHead.objml.gz", "large_team": "Halo2-LargeTeam.objml.gz"}


def _frame(match, time, competitor, side, rank, score) -> pd.DataFrame:
    n = len(competitor)
    return pd.DataFrame({"match": match, "time": time, "competitor": competitor, "side": side,
                         "rank": np.asarray(rank, dtype=np.int64), "score": np.asarray(score, dtype=float),
                         "weight": np.ones(n)}, columns=list(COLUMNS))


# --- Codeforces -----------------------------------------------------------------------------------

def _whole(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def codeforces_long(contest_json: dict) -> pd.DataFrame:
    """One Elo-MMR Codeforces contest file (``{"id", "name", "time_seconds", "standings":
    [[handle, lo, hi], ...]}``) as the long table: one row per handle, ``match`` the contest id,
    ``time`` its ``time_seconds`` (seconds since 1970, UTC), ``competitor`` and ``side`` the
    handle, ``rank`` its ``lo`` (0-based, shared by a tie), ``score`` NaN, ``weight`` 1.

    The standings must be in order and consistent: entry ``i`` has ``lo <= i <= hi``, and starts a
    new place (``lo == i``, the entry before ending at ``hi == i - 1``) or shares the places of the
    entry before (the same ``lo`` and ``hi``), the last ending at the last entrant;
    a :class:`GamesError` names the contest, the entry and the value otherwise, or when a field is
    missing, a handle repeats, or there are fewer than two entrants."""
    if not isinstance(contest_json, dict):
        raise GamesError(f"a Codeforces contest is a JSON object, not {type(contest_json).__name__}")
    missing = [k for k in ("id", "time_seconds", "standings") if k not in contest_json]
    cid = contest_json.get("id", "?")
    if missing:
        raise GamesError(f"Codeforces contest {cid}: missing field(s) {', '.join(missing)}", column=missing[0])
    if not _whole(cid):
        raise GamesError(f"Codeforces contest id must be a whole number, not {cid!r}", column="id")
    t = contest_json["time_seconds"]
    if not _whole(t):
        raise GamesError(f"Codeforces contest {cid}: time_seconds must be a whole number, not {t!r}",
                         column="time_seconds")
    standings = contest_json["standings"]
    if not isinstance(standings, list) or len(standings) < 2:
        got = len(standings) if isinstance(standings, list) else type(standings).__name__
        raise GamesError(f"Codeforces contest {cid}: standings must list at least 2 entrants, got {got}",
                         column="standings")
    handles, lo = [], np.empty(len(standings), dtype=np.int64)
    seen: dict[str, int] = {}
    prev = None
    for i, entry in enumerate(standings):
        where = f"Codeforces contest {cid}, standings entry {i}"
        if not (isinstance(entry, (list, tuple)) and len(entry) == 3 and isinstance(entry[0], str)
                and entry[0] != "" and _whole(entry[1]) and _whole(entry[2])):
            raise GamesError(f"{where}: expected [handle, lo, hi] (text, whole, whole), got {entry!r}",
                             rows=[i], column="standings")
        handle, a, b = entry
        if not a <= i <= b:
            raise GamesError(f"{where} ({handle!r}): places {a}..{b} do not contain its position {i}",
                             rows=[i], column="standings")
        if a != i and (a, b) != prev:
            raise GamesError(f"{where} ({handle!r}): places {a}..{b} neither start at {i} nor equal the "
                             f"places {prev[0]}..{prev[1]} of the entry before", rows=[i], column="standings")
        if a == i and prev is not None and prev[1] != i - 1:
            raise GamesError(f"{where} ({handle!r}): starts place {i}, but the entry before shares places "
                             f"{prev[0]}..{prev[1]}", rows=[i], column="standings")
        if handle in seen:
            raise GamesError(f"{where}: handle {handle!r} is also entry {seen[handle]}", rows=[seen[handle], i],
                             column="standings")
        seen[handle] = i
        handles.append(handle)
        lo[i], prev = a, (a, b)
    n = len(handles)
    if prev[1] != n - 1:
        raise GamesError(f"Codeforces contest {cid}, standings entry {n - 1}: places {prev[0]}..{prev[1]} run past "
                         f"the last of {n} entrants", rows=[n - 1], column="standings")
    return _frame(np.full(n, int(cid), dtype=np.int64), np.full(n, int(t), dtype=np.int64), handles, handles, lo,
                  np.full(n, np.nan))


def read_codeforces(path: str | os.PathLike) -> pd.DataFrame:
    """:func:`codeforces_long` of the contest file ``path``; a :class:`GamesError` naming it when
    it is not JSON."""
    try:
        data = json.loads(Path(path).read_bytes())
    except ValueError as exc:
        raise GamesError(f"{path} is not a JSON contest file ({exc})") from None
    return codeforces_long(data)


def _git(git_dir, *args: str, data: bytes | None = None) -> bytes:
    try:
        return subprocess.run(["git", "-C", str(git_dir), *args], input=data, capture_output=True,
                              check=True).stdout
    except subprocess.CalledProcessError as exc:
        raise ValueError(f"git {' '.join(args)} failed in {git_dir}: {exc.stderr.decode(errors='replace').strip()}") \
            from None


def codeforces_files(git_dir: str | os.PathLike, commit: str = CODEFORCES_COMMIT) -> dict[str, dict]:
    """The contest files of a clone of Elo-MMR (``git_dir``, a work tree or a bare git directory)
    at ``commit``: ``{"<id>.json": {"size": bytes, "sha256": hex}}`` for each ``cache/*.json``,
    read from git's objects (no checkout needed)."""
    listing = _git(git_dir, "ls-tree", "-z", "--full-tree", commit, f"{CODEFORCES_DIR}/").split(b"\0")
    blobs = {}
    for line in filter(None, listing):
        meta, name = line.split(b"\t", 1)
        name = name.decode()
        if meta.split()[1] == b"blob" and name.endswith(".json"):
            blobs[name.rsplit("/", 1)[1]] = meta.split()[2].decode()
    if not blobs:
        raise ValueError(f"{git_dir} at {commit} has no {CODEFORCES_DIR}/*.json")
    out = _git(git_dir, "cat-file", "--batch", data="\n".join(blobs.values()).encode() + b"\n")
    files, pos = {}, 0
    for name, blob in blobs.items():
        header_end = out.index(b"\n", pos)
        header = out[pos:header_end].split()
        if header[0].decode() != blob or header[1] != b"blob":
            raise ValueError(f"{git_dir}: object {blob} of {name} is missing ({b' '.join(header).decode()})")
        size = int(header[2])
        body = out[header_end + 1:header_end + 1 + size]
        files[name] = {"size": size, "sha256": hashlib.sha256(body).hexdigest()}
        pos = header_end + 1 + size + 1
    return dict(sorted(files.items(), key=lambda kv: int(kv[0].split(".")[0]) if kv[0][:-5].isdigit() else 0))


def write_codeforces_manifest(git_dir: str | os.PathLike, folder: str | os.PathLike = CODEFORCES_FOLDER) -> Path:
    """Write ``folder/manifest.json``: the source, commit, licence and address of Elo-MMR's contest
    files and :func:`codeforces_files` of the clone ``git_dir`` (the format
    :mod:`statespace.data.integrity` reads)."""
    files = codeforces_files(git_dir)
    manifest = {"source": f"https://github.com/{CODEFORCES_REPO}", "repo": CODEFORCES_REPO,
                "commit": CODEFORCES_COMMIT, "path": CODEFORCES_DIR, "licence": CODEFORCES_LICENCE,
                "url": RAW.format(repo=CODEFORCES_REPO, commit=CODEFORCES_COMMIT, path=CODEFORCES_DIR + "/{name}"),
                "files": files}
    target = Path(folder) / "manifest.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    # one file per line: a readable diff when the pin moves
    body = ",\n".join(f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}" for k, v in files.items())
    head = json.dumps({k: v for k, v in manifest.items() if k != "files"}, indent=1)[:-2]
    target.write_text(f'{head},\n "files": {{\n{body}\n }}\n}}\n')
    return target


def codeforces_manifest() -> dict:
    """The recorded Codeforces contest files (``statespace/data/codeforces/manifest.json``)."""
    return json.loads((CODEFORCES_FOLDER / "manifest.json").read_text())


def codeforces_url(name: str) -> str:
    """The pinned raw.githubusercontent.com address of contest file ``name`` (e.g. ``"1.json"``)."""
    return RAW.format(repo=CODEFORCES_REPO, commit=CODEFORCES_COMMIT, path=f"{CODEFORCES_DIR}/{name}")


def fetch_codeforces(folder: str | os.PathLike, contests=None, progress: bool = False) -> list[Path]:
    """Download Elo-MMR's contest files (all, or the contest ids ``contests``) into ``folder``,
    each checked against its recorded SHA-256 (pooch removes a file that differs and raises);
    the paths, in contest order. A :class:`ValueError` names a contest id not recorded;
    :class:`statespace.data.fetch.FetchError` a download that fails."""
    import pooch

    from statespace.data.fetch import FetchError

    files = codeforces_manifest()["files"]
    names = list(files) if contests is None else [f"{c}.json" for c in contests]
    unknown = [n[:-5] for n in names if n not in files]
    if unknown:
        raise ValueError(f"Codeforces contest(s) {', '.join(unknown[:10])} are not among the {len(files):,} recorded "
                         f"at {CODEFORCES_REPO}@{CODEFORCES_COMMIT[:12]}")
    Path(folder).mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        url = codeforces_url(name)
        try:
            out.append(Path(pooch.retrieve(url, known_hash=f"sha256:{files[name]['sha256']}", path=folder,
                                           fname=name, progressbar=progress)))
        except Exception as exc:  # offline, refused, or the hash differs (pooch's ValueError)
            raise FetchError(f"could not fetch {url}: {str(exc)[:200]}") from None
    return out


# --- Halo 2 ---------------------------------------------------------------------------------------

_X = "{johnwinn.org/serialization1.0}"


def halo_path(kind: str) -> Path:
    """The shipped Halo 2 file of ``kind`` (``"head_to_head"`` or ``"large_team"``), checked
    against its recorded size and SHA-256 (:class:`statespace.data.integrity.DatasetDamaged`
    when it differs)."""
    from statespace.data.integrity import verify

    if kind not in HALO_FILES:
        raise ValueError(f"unknown Halo 2 file kind {kind!r}; known: {', '.join(HALO_FILES)}")
    where = HALO_FOLDER / HALO_FILES[kind]
    verify(where, "the copy shipped with statespace is damaged: reinstall the package or restore it from "
                  "version control")
    return where


def _score(game: str, what: str, text: str | None) -> int:
    if text is None:
        return 0  # the book's C# int default: an absent score is 0
    try:
        return int(text.strip())
    except ValueError:
        raise GamesError(f"Halo 2 game {game}: {what} must be a whole number, not {text!r}", column=what) from None


def _players_of(game: str, team: ET.Element) -> list[tuple[str, int]]:
    """The (gamer, score) pairs of a team: ``PlayerScores`` alternates ``x:key`` and ``Int32``."""
    tid = team.get("Id")
    scores = team.find("PlayerScores")
    items = list(scores) if scores is not None else []
    if not items or len(items) % 2:
        raise GamesError(f"Halo 2 game {game}, team {tid}: PlayerScores must alternate gamer and score, "
                         f"got {len(items)} element(s)", column="PlayerScores")
    out = []
    for key, value in zip(items[::2], items[1::2]):
        if key.tag != f"{_X}key" or not (key.text or "").strip():
            raise GamesError(f"Halo 2 game {game}, team {tid}: expected a gamer's name, got <{key.tag}> "
                             f"{key.text!r}", column="PlayerScores")
        out.append((key.text.strip(), _score(game, f"team {tid}'s score of {key.text.strip()}", value.text)))
    return out


def _ranks(scores: list[int]) -> list[int]:
    """Competition ranks, higher score first: how many scores are strictly higher."""
    return [sum(o > s for o in scores) for s in scores]


def halo_long(source: str | os.PathLike | bytes) -> pd.DataFrame:
    """A Halo 2 file of the MBML book (``Halo2-HeadToHead.objml`` or ``Halo2-LargeTeam.objml``,
    gzipped or not; a path, or its bytes) as the long table: one row per player of a game,
    ``match`` the game's ``Id``, ``time`` its ``EndTime`` (a timestamp, as written: month first,
    no time zone), ``side`` the player (head to head) or the team's ``Id``, ``score`` the side's
    score (a team's: the sum of its players'), ``rank`` the competition rank of the scores in the
    game (higher first, equal scores tie), ``weight`` 1. A :class:`GamesError` names the game and
    the field of anything that does not read (a game of fewer than two sides, a player twice in
    one game, a game id repeated)."""
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    else:
        raw = Path(source).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        root = ET.fromstring(raw)
    except ET.ParseError as exc:
        raise GamesError(f"{source if not isinstance(source, bytes) else 'the Halo 2 data'} is not the book's "
                         f"XML ({exc})") from None
    games = root.find("Games")
    if games is None:
        raise GamesError("the Halo 2 data has no <Games> element", column="Games")
    cols = {k: [] for k in ("match", "time", "competitor", "side", "rank", "score")}
    seen_games: set[int] = set()
    for g in games:
        gid = g.get("Id")
        try:
            match = int(gid)
        except (TypeError, ValueError):
            raise GamesError(f"Halo 2 game with Id {gid!r}: the Id must be a whole number", column="Id") from None
        if match in seen_games:
            raise GamesError(f"Halo 2 game {gid} appears twice", column="Id")
        seen_games.add(match)
        try:
            when = pd.to_datetime(g.get("EndTime"), format="%m/%d/%Y %H:%M:%S")
        except (TypeError, ValueError):
            raise GamesError(f"Halo 2 game {gid}: EndTime {g.get('EndTime')!r} is not MM/DD/YYYY hh:mm:ss",
                             column="EndTime") from None
        if g.tag == "TwoPlayerGame":
            players = [g.get("Player1"), g.get("Player2")]
            if not all(players):
                raise GamesError(f"Halo 2 game {gid}: missing Player1 or Player2", column="Player1")
            sides = [(p, [(p, _score(gid, f"Player{i + 1}Score", g.get(f"Player{i + 1}Score")))])
                     for i, p in enumerate(players)]
        elif g.tag == "TeamGame":
            teams = g.find("Teams")
            sides = [(t.get("Id"), _players_of(gid, t)) for t in (teams if teams is not None else [])]
            if any(not tid for tid, _ in sides):
                raise GamesError(f"Halo 2 game {gid}: a team without an Id", column="Team")
            if len({tid for tid, _ in sides}) < len(sides):
                raise GamesError(f"Halo 2 game {gid}: two teams share an Id", column="Team")
        else:
            raise GamesError(f"Halo 2 game {gid}: unknown game element <{g.tag}>", column=g.tag)
        if len(sides) < 2:
            raise GamesError(f"Halo 2 game {gid}: {len(sides)} side(s), a game needs at least 2", column="Teams")
        members = [p for _, ps in sides for p, _ in ps]
        if len(set(members)) < len(members):
            twice = sorted({p for p in members if members.count(p) > 1})
            raise GamesError(f"Halo 2 game {gid}: {', '.join(twice)} play(s) more than once", column="PlayerScores")
        totals = [sum(s for _, s in ps) for _, ps in sides]
        for (side, ps), total, rank in zip(sides, totals, _ranks(totals)):
            for player, _ in ps:
                cols["match"].append(match)
                cols["time"].append(when)
                cols["competitor"].append(player)
                cols["side"].append(side)
                cols["rank"].append(rank)
                cols["score"].append(total)
    return _frame(np.asarray(cols["match"], dtype=np.int64), pd.to_datetime(pd.Series(cols["time"], dtype=object)),
                  cols["competitor"], cols["side"], cols["rank"], cols["score"])
