"""The provenance and the long-table readers of the match data sets (statespace.data.match_sources).

Expected values are written by hand from the source formats (Elo-MMR's contest JSON, the MBML
book's Halo 2 XML) and, for the real files, read off the raw files themselves."""

import gzip
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from statespace.data import match_sources as ms
from statespace.data.columns import GamesError
from statespace.data.integrity import DatasetDamaged

#: a clone of EbTech/Elo-MMR (work tree or bare), for the tests on its real files
ELO_MMR_GIT = Path(os.environ.get("STATESPACE_ELO_MMR_GIT", "/work/.mirror/EbTech+Elo-MMR/repo"))
needs_mirror = pytest.mark.skipif(not (ELO_MMR_GIT / "HEAD").is_file() and not (ELO_MMR_GIT / ".git").exists(),
                                  reason="no clone of EbTech/Elo-MMR")


def contest(standings, cid=7, t=1_266_588_000):
    return {"id": cid, "name": "Round", "time_seconds": t, "standings": standings}


# --- Codeforces ---------------------------------------------------------------------------------

def test_codeforces_four_entrants_with_a_tie():
    d = ms.codeforces_long(contest([["ann", 0, 0], ["bob", 1, 2], ["cy", 1, 2], ["dee", 3, 3]]))
    assert list(d.columns) == ["match", "time", "competitor", "side", "rank", "score", "weight"]
    assert d["competitor"].tolist() == ["ann", "bob", "cy", "dee"]
    assert d["side"].tolist() == d["competitor"].tolist()
    assert d["rank"].tolist() == [0, 1, 1, 3]
    assert (d["match"] == 7).all() and (d["time"] == 1_266_588_000).all()
    assert d["score"].isna().all() and (d["weight"] == 1.0).all()


@pytest.mark.parametrize("standings, words", [
    ([["a", 0, 0], ["b", 1, 2], ["c", 2, 2]], "entry 2 ('c'): starts place 2, but the entry before shares places 1..2"),
    ([["a", 0, 0], ["b", 1, 1], ["c", 1, 2]], "entry 2 ('c'): places 1..2 neither start at 2"),
    ([["a", 0, 0], ["b", 1, 2]], "entry 1: places 1..2 run past the last of 2 entrants"),
    ([["a", 0, 0], ["b", 2, 2]], "entry 1 ('b'): places 2..2 do not contain its position 1"),
    ([["a", 0, 0], ["a", 1, 1]], "handle 'a' is also entry 0"),
    ([["a", 0, 0], ["b", "1", 1]], "entry 1: expected [handle, lo, hi]"),
    ([["a", 0, 0]], "at least 2 entrants, got 1"),
])
def test_codeforces_bad_standings_are_named(standings, words):
    with pytest.raises(GamesError, match="Codeforces contest 7") as err:
        ms.codeforces_long(contest(standings))
    assert words in str(err.value)


def test_codeforces_missing_field_is_named():
    with pytest.raises(GamesError, match="missing field.*time_seconds"):
        ms.codeforces_long({"id": 3, "standings": []})


def test_codeforces_files_hash_the_blobs_of_a_commit(tmp_path):
    repo = tmp_path / "repo"
    (repo / "cache").mkdir(parents=True)
    texts = {"2.json": b'{"id": 2}\n', "10.json": b'{"id": 10}\n'}
    for name, body in texts.items():
        (repo / "cache" / name).write_bytes(body)
    (repo / "cache" / "notes.txt").write_text("not a contest")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "x"], check=True)
    files = ms.codeforces_files(repo, "HEAD")
    assert list(files) == ["2.json", "10.json"]  # contest order, the text file left out
    for name, body in texts.items():
        assert files[name] == {"size": len(body), "sha256": hashlib.sha256(body).hexdigest()}


def test_codeforces_manifest_pins_the_source():
    m = ms.codeforces_manifest()
    assert m["commit"] == "1345c6710c00371a34eaaa6a51c2b752a3a9fb1a" and m["repo"] == "EbTech/Elo-MMR"
    assert len(m["files"]) == 1062
    assert ms.codeforces_url("1.json") == ("https://raw.githubusercontent.com/EbTech/Elo-MMR/"
                                           "1345c6710c00371a34eaaa6a51c2b752a3a9fb1a/cache/1.json")
    assert not any(p.suffix == ".json" and p.name != "manifest.json" for p in ms.CODEFORCES_FOLDER.iterdir())


def test_fetch_codeforces_checks_each_file_against_its_hash(tmp_path, monkeypatch):
    import pooch

    calls = []
    monkeypatch.setattr(pooch, "retrieve", lambda url, known_hash, path, fname, progressbar:
                        calls.append((url, known_hash, fname)) or str(Path(path) / fname))
    got = ms.fetch_codeforces(tmp_path, contests=[1])
    assert got == [tmp_path / "1.json"]
    assert calls == [(ms.codeforces_url("1.json"),
                      "sha256:fcaaf7ff680f3598b04a35879c63d7c4c9bcfe6a068044e4a50d66b4c80e0ff8", "1.json")]
    with pytest.raises(ValueError, match="contest.*999999 are not among the 1,062"):
        ms.fetch_codeforces(tmp_path, contests=[999999])


@needs_mirror
def test_codeforces_real_contest_1():
    body = subprocess.run(["git", "-C", str(ELO_MMR_GIT), "show", f"{ms.CODEFORCES_COMMIT}:cache/1.json"],
                          capture_output=True, check=True).stdout
    assert ms.codeforces_manifest()["files"]["1.json"] == {"size": len(body),
                                                           "sha256": hashlib.sha256(body).hexdigest()}
    d = ms.codeforces_long(json.loads(body))
    assert len(d) == 66 and (d["match"] == 1).all() and (d["time"] == 1266588000).all()
    assert d.loc[0, "competitor"] == "vepifanov" and d.loc[0, "rank"] == 0
    tied = d.set_index("competitor")["rank"]
    assert tied["DarthBeleg"] == tied["steiner"] == 32


# --- Halo 2 -------------------------------------------------------------------------------------

HEAD = ('<Inputs1 xmlns:x="johnwinn.org/serialization1.0"><Games>{}</Games></Inputs1>')


def team(tid, scores):
    pairs = "".join(f'<x:key x:class="System.String">{p}</x:key><Int32>{s}</Int32>' for p, s in scores)
    return f'<Team Id="{tid}"><PlayerScores>{pairs}</PlayerScores></Team>'


def team_game(gid, teams, end="07/13/2004 17:02:13"):
    return f'<TeamGame Id="{gid}" EndTime="{end}" Variant="Slayer"><Teams>{"".join(teams)}</Teams></TeamGame>'


def test_halo_two_team_game():
    xml = HEAD.format(team_game(5, [team("Team0", [("p1", 1), ("p2", 0), ("p3", 2)]),
                                    team("Team1", [("q1", 4), ("q2", 0)])]))
    d = ms.halo_long(xml.encode())
    assert d["competitor"].tolist() == ["p1", "p2", "p3", "q1", "q2"]
    assert d["side"].tolist() == ["Team0"] * 3 + ["Team1"] * 2
    assert d["score"].tolist() == [3, 3, 3, 4, 4]  # a team's score is the sum of its players'
    assert d["rank"].tolist() == [1, 1, 1, 0, 0]
    assert (d["match"] == 5).all() and (d["weight"] == 1).all()
    assert (d["time"] == pd.Timestamp("2004-07-13 17:02:13")).all()


def test_halo_tie_and_three_teams_and_gzip():
    games = (team_game(1, [team("A", [("a", 2)]), team("B", [("b", 1), ("c", 1)])])
             + team_game(2, [team("A", [("a", 5)]), team("B", [("b", 3)]), team("C", [("c", 3)]),
                             team("D", [("d", 1)])]))
    d = ms.halo_long(gzip.compress(HEAD.format(games).encode()))
    assert d["rank"].tolist() == [0, 0, 0, 0, 1, 1, 3]


def test_halo_head_to_head_absent_score_is_zero(tmp_path):
    xml = HEAD.format('<TwoPlayerGame Player1="x" Player2="y" Player2Score="2" Id="9" EndTime="08/06/2004 18:19:55"/>'
                      '<TwoPlayerGame Player1="x" Player2="z" Player1Score="3" Player2Score="3" Id="10" '
                      'EndTime="08/07/2004 01:00:00"/>')
    path = tmp_path / "h2h.objml"
    path.write_text(xml)
    d = ms.halo_long(path)
    assert d["side"].tolist() == ["x", "y", "x", "z"]
    assert d["score"].tolist() == [0, 2, 3, 3]
    assert d["rank"].tolist() == [1, 0, 0, 0]


@pytest.mark.parametrize("games, words", [
    (team_game(4, [team("A", [("a", 1)]), team("B", [("a", 2)])]), "game 4: a play(s) more than once"),
    (team_game(4, [team("A", [("a", 1)])]), "game 4: 1 side(s)"),
    (team_game(4, [team("A", [("a", 1)]), team("B", [("b", "x")])]), "game 4: team B's score of b"),
    (team_game(4, [team("A", [("a", 1)]), team("B", [("b", 1)])], end="2004-07-13"), "game 4: EndTime"),
    (team_game(4, [team("A", [("a", 1)]), team("B", [("b", 1)])]) * 2, "game 4 appears twice"),
])
def test_halo_bad_games_are_named(games, words):
    with pytest.raises(GamesError) as err:
        ms.halo_long(HEAD.format(games).encode())
    assert words in str(err.value)


def test_halo_shipped_files_read_and_are_checked(tmp_path, monkeypatch):
    # counts and first games read off the source files by hand
    h2h = ms.halo_long(ms.halo_path("head_to_head"))
    assert h2h["match"].nunique() == 6028 and len(h2h) == 2 * 6028
    first = h2h[h2h["match"] == 281884].set_index("competitor")
    assert first.loc["Gamer00000", "rank"] == 1 and first.loc["Gamer00001", "rank"] == 0
    assert h2h[h2h["match"] == 281902]["score"].tolist() == [0, 2]
    team = ms.halo_long(ms.halo_path("large_team"))
    assert team["match"].nunique() == 972
    g = team[team["match"] == 215385]
    assert len(g) == 12 and set(g["score"]) == {1.0} and set(g["rank"]) == {0}  # 1-1: a draw
    assert (ms.HALO_FOLDER / "LICENSE").read_text().startswith("MIT License")
    assert (ms.HALO_FOLDER / "SOURCE_COMMIT").read_text().strip() == ms.HALO_COMMIT
    copy = tmp_path / "halo2"
    shutil.copytree(ms.HALO_FOLDER, copy)
    damaged = copy / ms.HALO_FILES["large_team"]
    raw = bytearray(damaged.read_bytes())
    raw[100] ^= 1
    damaged.write_bytes(bytes(raw))
    monkeypatch.setattr(ms, "HALO_FOLDER", copy)
    with pytest.raises(DatasetDamaged, match="Halo2-LargeTeam.objml.gz is damaged"):
        ms.halo_path("large_team")
    with pytest.raises(ValueError, match="unknown Halo 2 file kind 'free_for_all'"):
        ms.halo_path("free_for_all")
