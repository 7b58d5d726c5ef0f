"""Data set files checked on every load (statespace.data.integrity, statespace.datasets, statespace.data.fetch).

Each kind of file is tampered with the way a full disk, a bad download or an edit leaves it, always
in a copy under ``tmp_path`` (the shipped files are never touched): a shipped table with its winners
flipped, its last 2,000 rows cut, its ``.gz`` cut short or with bytes appended, its record missing
or garbled; a fetched table replaced by 4 games; a download whose games differ. Each is an error
naming the file and how to get it back, never a silent table, a traceback or a warning; a fetched
file that fails is not kept. A fetched data set is played by a small stand-in source (a few games
served by a stubbed download), so nothing goes to the network.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pytest

from statespace import GamesError
from statespace.data import datasets
from statespace.data import fetch as _fetch, integrity as _integrity
from statespace.data.integrity import DatasetDamaged

NFL_GAMES = 16_810  # docs/data.md's table, from the source's README


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A copy of the shipped data sets, which datasets then uses; no data home, an empty cache."""
    copy = tmp_path / "shipped"
    shutil.copytree(datasets.SHIPPED, copy)
    monkeypatch.setattr(datasets, "SHIPPED", copy)
    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return copy


def _rewrite_gz(path: Path, change) -> None:
    """Decompress ``path``, apply ``change`` to its lines, compress it again: a consistent file."""
    lines = gzip.decompress(path.read_bytes()).decode().splitlines(keepends=True)
    path.write_bytes(gzip.compress("".join(change(lines)).encode()))


def _flip_winners(lines):
    head = lines[0].rstrip("\n").split(",")
    at = head.index("score")
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.rstrip("\n").split(",")
        cells[at] = {"1.0": "0.0", "0.0": "1.0", "1": "0", "0": "1"}.get(cells[at], cells[at])
        out.append(",".join(cells) + "\n")
    return out


TAMPER = {
    "winners flipped": lambda p: _rewrite_gz(p, _flip_winners),
    "last 2,000 rows cut": lambda p: _rewrite_gz(p, lambda lines: lines[:-2000]),
    "gz cut short": lambda p: p.write_bytes(p.read_bytes()[:-5000]),
    "garbage appended": lambda p: p.write_bytes(p.read_bytes() + b"\x00garbage\xff" * 50),
    "one byte changed, same size": lambda p: p.write_bytes(p.read_bytes()[:100] + bytes([p.read_bytes()[100] ^ 1])
                                                           + p.read_bytes()[101:]),
}


def test_every_shipped_file_matches_the_size_and_sha256_recorded_beside_it():
    for ds in datasets.DATASETS.values():
        if not ds.shipped:
            continue
        record = json.loads((datasets.SHIPPED / ds.name / _integrity.MANIFEST).read_text())["files"]
        assert set(record) == {f"{f}.gz" for f in ("games.csv", *ds.files)}
        for name, entry in record.items():
            data = (datasets.SHIPPED / ds.name / name).read_bytes()
            assert entry == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


@pytest.mark.parametrize("how", list(TAMPER))
def test_a_tampered_shipped_file_is_an_error_naming_it_and_how_to_restore_it(shipped, how):
    assert len(datasets.load("nfl")) == NFL_GAMES  # the copy is whole
    games = shipped / "nfl" / "games.csv.gz"
    TAMPER[how](games)
    with pytest.raises(DatasetDamaged) as err:
        datasets.load("nfl")
    assert str(games) in str(err.value) and "reinstall" in str(err.value)
    assert isinstance(err.value, GamesError)
    table = datasets.catalogue().set_index("name")
    assert table.loc["nfl", "where"] == "damaged" and str(games) in table.loc["nfl", "problem"]
    assert table.loc["intl_football", "where"] == "shipped" and table.loc["intl_football", "problem"] == ""


@pytest.mark.parametrize("how", ["missing", "garbled", "without this file"])
def test_a_shipped_file_without_a_readable_record_is_an_error(shipped, how):
    manifest = shipped / "nfl" / _integrity.MANIFEST
    if how == "missing":
        manifest.unlink()
    elif how == "garbled":
        manifest.write_bytes(b"\xff\xfe{not json")
    else:
        data = json.loads(manifest.read_text())
        del data["files"]["games.csv.gz"]
        manifest.write_text(json.dumps(data))
    with pytest.raises(DatasetDamaged, match="games.csv.gz|manifest.json"):
        datasets.load("nfl")


def test_the_published_forecasts_file_is_checked_too(shipped):
    TAMPER["last 2,000 rows cut"](shipped / "nfl" / "fivethirtyeight_nfl_games.csv.gz")
    games = datasets.load("nfl")
    with pytest.raises(DatasetDamaged, match="fivethirtyeight_nfl_games.csv.gz"):
        datasets.reference("nfl", games)


def test_the_command_line_says_so_in_one_line(shipped, capsys):
    from statespace.app.cli import main

    TAMPER["gz cut short"](shipped / "nfl" / "games.csv.gz")
    assert main(["rate", "--dataset", "nfl", "--top", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "games.csv.gz is damaged" in err and "Traceback" not in err


def test_the_hash_is_computed_once_per_process_and_again_when_the_file_changes(shipped, monkeypatch):
    calls = []
    digest = _integrity.digest
    monkeypatch.setattr(_integrity, "digest", lambda path: calls.append(path) or digest(path))
    path = datasets.check("nfl", shipped / "nfl" / "games.csv.gz")
    datasets.check("nfl", path)
    assert len(calls) == 1  # the second check: a stat only
    TAMPER["one byte changed, same size"](path)
    with pytest.raises(DatasetDamaged):
        datasets.check("nfl", path)
    assert len(calls) == 2


# ---------------------------------------------------------------------------- fetched data sets
GAMES = ["time,a,b,score\n", "2000-01-01,ann,bob,1\n", "2000-01-02,bob,cid,0.5\n", "2000-01-03,cid,ann,0\n",
         "2000-01-04,ann,cid,1\n", "2000-01-05,bob,ann,0\n", "2000-01-06,cid,bob,1\n"]
#: the content hash of GAMES, written out by hand: the sorted lines "time,winner,loser,1" and
#: "time,a,b,0.5" for the draw, joined by newlines (statespace.data.fetch.content_hash's definition)
CONTENT = hashlib.sha256("\n".join(sorted([
    "2000-01-01,ann,bob,1", "2000-01-02,bob,cid,0.5", "2000-01-03,ann,cid,1", "2000-01-04,ann,cid,1",
    "2000-01-05,ann,bob,1", "2000-01-06,cid,bob,1"])).encode()).hexdigest()


@pytest.fixture
def source(tmp_path, monkeypatch):
    """atp_tennis played by a stand-in: its one source file served by a stubbed download from
    ``served`` (edit it to serve other bytes); returns (``served``, the cache folder)."""
    pooch = pytest.importorskip("pooch")
    served = tmp_path / "served.csv"
    served.write_text("".join(GAMES))

    def retrieve(url, known_hash, path, fname, progressbar):
        target = Path(path) / fname
        if not target.exists():  # as pooch: a file already downloaded is reused
            shutil.copy(served, target)
        return str(target)

    def normalise(files):
        return pd.read_csv(files[0], dtype={"time": str, "a": str, "b": str})

    monkeypatch.setattr(pooch, "retrieve", retrieve)
    monkeypatch.setitem(_fetch.SOURCES, "atp_tennis",
                        _fetch.Source("someone/games", "0" * 40, ["games.csv"], normalise, CONTENT))
    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return served, tmp_path / "cache" / "statespace" / "datasets" / "atp_tennis"


def test_a_fetched_file_is_recorded_and_checked_on_every_load(source):
    _, folder = source
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning of any kind
        assert len(datasets.load("atp_tennis")) == 6
    record = json.loads((folder / _integrity.MANIFEST).read_text())
    data = (folder / "games.csv").read_bytes()
    assert record["files"]["games.csv"] == {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert record["content"] == CONTENT

    (folder / "games.csv").write_text("".join(GAMES[:5]))  # the cached table replaced by 4 games
    with pytest.raises(DatasetDamaged) as err:
        datasets.load("atp_tennis")
    assert str(folder / "games.csv") in str(err.value) and "statespace datasets --fetch atp_tennis" in str(err.value)
    assert datasets.catalogue().set_index("name").loc["atp_tennis", "where"] == "damaged"

    assert datasets.fetch("atp_tennis", progress=False) == folder / "games.csv"  # fetched again, no force needed
    assert len(datasets.load("atp_tennis")) == 6
    assert datasets.catalogue().set_index("name").loc["atp_tennis", "where"] == "cached"


def test_a_download_whose_games_differ_is_an_error_and_nothing_is_kept(source):
    served, folder = source
    served.write_text("".join(GAMES[:-1]))  # one game short
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an error, not a ChecksumWarning
        with pytest.raises(datasets.DatasetNotFound, match=f"differ.*expected {CONTENT[:12]}"):
            datasets.load("atp_tennis")
    assert not (folder / "games.csv").exists() and not (folder / _integrity.MANIFEST).exists()
    assert not list((folder / "raw").iterdir())  # the bad download is not reused either

    served.write_text("".join(GAMES))  # the source serves the right file again: the next fetch works
    assert len(datasets.load("atp_tennis")) == 6


def test_a_download_that_cannot_be_read_is_an_error_and_removed(source):
    served, folder = source
    served.write_bytes(b"\x1f\x8b\x08garbage")  # not even CSV
    with pytest.raises(datasets.DatasetNotFound, match="cannot be read"):
        datasets.fetch("atp_tennis", progress=False)
    assert not list((folder / "raw").iterdir())


@pytest.mark.parametrize("games, ok", [(GAMES, True), (GAMES[:5], False)])
def test_a_cached_file_without_a_record_must_hold_the_tested_games(source, games, ok):
    """Fetched by an older version, or put in the cache by hand for offline use."""
    _, folder = source
    folder.mkdir(parents=True)
    (folder / "games.csv").write_text("".join(games))
    if ok:
        assert len(datasets.load("atp_tennis")) == 6
        assert json.loads((folder / _integrity.MANIFEST).read_text())["content"] == CONTENT  # recorded now
    else:
        with pytest.raises(DatasetDamaged, match="does not hold the games"):
            datasets.load("atp_tennis", download=False)
        assert not (folder / _integrity.MANIFEST).exists()


def test_a_record_from_another_version_asks_for_a_new_fetch(source):
    _, folder = source
    datasets.load("atp_tennis")
    record = json.loads((folder / _integrity.MANIFEST).read_text())
    (folder / _integrity.MANIFEST).write_text(json.dumps(record | {"content": "f" * 64}))
    with pytest.raises(DatasetDamaged, match="another version"):
        datasets.load("atp_tennis")


# ---------------------------------------------------------------------------- a data home
def test_a_data_home_file_is_checked_when_a_record_lies_beside_it(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "nfl").mkdir(parents=True)
    (home / "nfl" / "games.csv").write_text("".join(GAMES))
    monkeypatch.setenv(datasets.ENV, str(home))
    assert len(datasets.load("nfl")) == 6  # no record: the user's own file, read as it is
    _integrity.record(home / "nfl", ["games.csv"])
    (home / "nfl" / "games.csv").write_text("".join(GAMES[:5]))
    with pytest.raises(DatasetDamaged, match="delete .*manifest.json"):
        datasets.load("nfl")
