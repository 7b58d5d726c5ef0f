"""The rating lab's matches of many sides (POST /api/v1/rate-matches), through FastAPI's test client.

Reference numbers: multiplayer Elo by pairwise decomposition (Cunningham 2019; filters/elo.py's
``_match``), worked by hand from equal ratings of 1500, where every pair's expected score is 1/2:
a side moves by K / (n - 1) times the sum over its opponents of (S - E), each member by its weight
times that. Four players placed 1, 2, 2, 4 with K = 24: the winner gains 8 x (3 - 1.5) = 12, the
two tied second 8 x (1.5 - 1.5) = 0, the last loses 12. Two against two with K = 32: the winners'
side gains 32 x (1 - 1/2) = 16, so each of its members does. Longer tables are checked against
``Elo(k).run(Matches.from_long(frame))`` of the Python API.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from filters import Elo, TrueSkill  # noqa: E402
from statespace.app.lab import create_app, match_compute  # noqa: E402
from statespace.app.lab.app import STATIC  # noqa: E402
from statespace.app.lab.match_schema import MAX_MATCH_ROWS, ffa_example, team_example  # noqa: E402
from statespace.app.lab.schema import MAX_BODY_BYTES  # noqa: E402
from statespace.data.matches import Matches  # noqa: E402

RATE = "/api/v1/rate-matches"
METHODS = "/api/v1/match-methods"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(["testserver"]))


def _rows(text: str) -> list[dict]:
    """``match,competitor,side,rank[,weight]`` lines as request rows (an empty side left out)."""
    out = []
    for line in text.strip().splitlines():
        match, competitor, side, rank, *weight = [c.strip() for c in line.split(",")]
        row = {"match": match, "competitor": competitor, "rank": int(rank)}
        if side:
            row["side"] = side
        if weight:
            row["weight"] = float(weight[0])
        out.append(row)
    return out


def _board(result: dict) -> dict[str, float]:
    return {r["player"]: r["rating"] for r in result["leaderboard"]}


def _error(r, status: int, field: str | None) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert body["errors"][0]["field"] == field, body
    assert body["detail"].startswith(f"{field}: " if field else body["errors"][0]["message"])
    return body["errors"][0]


# ---------------------------------------------------------------------------- ratings
def test_one_free_for_all_of_four_by_hand(client):
    rows = _rows("m1,Ana,,1\nm1,Ben,,2\nm1,Chloe,,2\nm1,Dan,,4")
    r = client.post(RATE, json={"matches": rows, "method": "elo", "settings": {"k": 24}})
    assert r.status_code == 200, r.text
    got = _board(r.json())
    assert got == pytest.approx({"Ana": 1512.0, "Ben": 1500.0, "Chloe": 1500.0, "Dan": 1488.0}, abs=1e-9)
    assert [x["matches"] for x in r.json()["leaderboard"]] == [1, 1, 1, 1]
    (match,) = r.json()["matches"]
    assert [(s["members"], s["rank"], s["side"]) for s in match["sides"]] == [
        (["Ana"], 1, None), (["Ben"], 2, None), (["Chloe"], 2, None), (["Dan"], 4, None)]
    # before the first match everyone is 1500: no favourite
    assert {s["strength"] for s in match["sides"]} == {1500.0} and match["favourite_won"] is None


def test_one_team_match_by_hand(client):
    rows = _rows("g1,Ana,red,1\ng1,Ben,red,1\ng1,Chloe,blue,2\ng1,Dan,blue,2")
    r = client.post(RATE, json={"matches": rows, "method": "elo"})
    assert r.status_code == 200, r.text
    assert _board(r.json()) == pytest.approx({"Ana": 1516.0, "Ben": 1516.0, "Chloe": 1484.0, "Dan": 1484.0},
                                             abs=1e-9)
    sides = r.json()["matches"][0]["sides"]
    assert [(s["side"], s["members"], s["strength"]) for s in sides] == [
        ("red", ["Ana", "Ben"], 3000.0), ("blue", ["Chloe", "Dan"], 3000.0)]


FFA = """
m1,Ana,,1
m1,Ben,,2
m1,Chloe,,2
m1,Dan,,4
m2,Dan,,1
m2,Ana,,2
m2,Ben,,3
m3,Chloe,,1
m3,Ben,,2
m3,Eve,,2
m3,Ana,,3
"""

TEAMS = """
g1,Ana,red,1
g1,Ben,red,1
g1,Chloe,blue,2
g1,Dan,blue,2,0.5
g2,Ana,A,2
g2,Chloe,A,2
g2,Ben,B,1
g2,Dan,B,1
g2,Eve,,3
"""


def _python_api(rows: list[dict], k: float):
    frame = pd.DataFrame(rows)
    if "time" not in frame:
        frame["time"] = pd.factorize(frame["match"])[0].astype(float)
    if "side" in frame:
        frame["side"] = frame["side"].fillna(frame["competitor"])
    if "weight" in frame:
        frame["weight"] = frame["weight"].fillna(1.0)
    return Elo(k=k).run(Matches.from_long(frame))


@pytest.mark.parametrize("text", [FFA, TEAMS], ids=["free-for-all", "teams"])
def test_matches_by_elo_are_the_python_apis(client, text):
    rows = _rows(text)
    r = client.post(RATE, json={"matches": rows, "method": "elo", "settings": {"k": 20}})
    assert r.status_code == 200, r.text
    got = r.json()
    run = _python_api(rows, 20)
    board = run.ratings()
    assert [(x["player"], x["rating"], x["matches"]) for x in got["leaderboard"]] == list(
        zip(board["player"], board["mean"], board["matches"]))
    assert got["spec"] == "Elo(k=20)" and got["n_matches"] == run.matches.n_matches
    strengths = [s["strength"] for m in got["matches"] for s in m["sides"]]
    assert strengths == list(run.perf_mean)
    # the order each match's forecast predicts: strongest first, equal strengths sharing a place
    for m in got["matches"]:
        for s in m["sides"]:
            assert s["predicted_rank"] == 1 + sum(t["strength"] > s["strength"] for t in m["sides"])


def test_a_row_without_a_side_plays_alone_among_teams(client):
    got = client.post(RATE, json={"matches": _rows(TEAMS), "method": "elo"}).json()
    g2 = got["matches"][1]
    assert [(s["side"], s["members"], s["rank"]) for s in g2["sides"]] == [
        ("B", ["Ben", "Dan"], 1), ("A", ["Ana", "Chloe"], 2), (None, ["Eve"], 3)]


def test_times_as_given(client):
    rows = [{**row, "time": float(i // 4)} for i, row in enumerate(_rows(FFA)[:7])]
    r = client.post(RATE, json={"matches": rows, "method": "elo"})
    assert r.status_code == 200, r.text
    assert [m["time"] for m in r.json()["matches"]] == [0.0, 1.0] and len(r.json()["leaderboard"]) == 4
    rows = [{**row, "time": ["2024-05-02", "2024-05-01"][i // 4]} for i, row in enumerate(_rows(FFA)[:7])]
    got = client.post(RATE, json={"matches": rows, "method": "elo"}).json()
    assert [(m["match"], m["time"][:10]) for m in got["matches"]] == [("m2", "2024-05-01"), ("m1", "2024-05-02")]


# ---------------------------------------------------------------------------- methods
def test_the_methods_offered_are_those_with_a_match_kernel(client, monkeypatch):
    import filters

    def kernels():
        out = set()
        for name, factory in filters.REGISTRY.items():
            cls = factory if isinstance(factory, type) else factory.__self__
            if getattr(cls, "_match", None) is not None and not getattr(factory, "__self__", None):
                out.add(name)
        return out

    offered = {m["method"] for m in client.get(METHODS).json()["methods"]}
    assert "elo" in offered and "elo_fide" not in offered and "stephenson" not in offered and "glicko2" in offered
    assert offered >= kernels()  # every filter class with a kernel (FIDE's variant of Elo refuses)
    # a filter without its kernel is no longer offered, and is refused
    monkeypatch.setattr(TrueSkill, "_match", None)
    assert "trueskill" not in {m["method"] for m in client.get(METHODS).json()["methods"]}
    err = _error(client.post(RATE, json={**team_example(), "method": "trueskill"}), 422, "method")
    assert "no match kernel" in err["message"]


def test_a_method_without_a_match_kernel_is_refused(client):
    err = _error(client.post(RATE, json={**ffa_example(), "method": "stephenson", "settings": {}}), 422, "method")
    assert err["message"].startswith("stephenson rates games of two competitors only")
    assert "methods that rate matches:" in err["message"] and "elo" in err["message"]


def test_fides_elo_is_refused_with_its_reason(client):
    err = _error(client.post(RATE, json={**ffa_example(), "method": "elo_fide", "settings": {}}), 422, "method")
    assert "FIDE's rules rate games of two players" in err["message"]


def test_an_unknown_method_is_422(client):
    err = _error(client.post(RATE, json={**ffa_example(), "method": "elo2"}), 422, "method")
    assert err["message"].startswith("unknown method 'elo2'") and "elo" in err["message"]


def test_settings_are_checked_on_their_field(client):
    err = _error(client.post(RATE, json={**ffa_example(), "settings": {"kk": 3}}), 422, "settings.kk")
    assert "not a setting of Elo" in err["message"] and "k" in err["message"]
    _error(client.post(RATE, json={**ffa_example(), "settings": {"k": -1}}), 422, "settings.k")
    _error(client.post(RATE, json={**ffa_example(), "settings": {"k": [1]}}), 422, "settings.k")


# ---------------------------------------------------------------------------- rows at fault
def test_a_bad_rank_names_its_row(client):
    rows = _rows(FFA)
    for bad in (0, 1.5, "first", None):
        rows[2] = {**rows[2], "rank": bad}
        err = _error(client.post(RATE, json={"matches": rows}), 422, "matches[2].rank")
        assert "whole number >= 1" in err["message"]


def test_a_competitor_twice_in_one_match_names_the_row_and_column(client):
    rows = _rows(FFA)
    rows[5] = {**rows[5], "competitor": "Dan"}  # m2: Dan at rows 4 and 5
    err = _error(client.post(RATE, json={"matches": rows}), 422, "matches[4].competitor")
    assert "twice in one match" in err["message"] and "row 5" in err["message"]


def test_each_problem_of_the_table_on_its_own_row(client):
    rows = _rows("m1,Ana,,1\nm1,Ben,,2\nm2,Ana,,1\nm2,Ana,,2")
    r = client.post(RATE, json={"matches": rows})
    assert r.status_code == 422, r.text
    errors = r.json()["errors"]
    assert [e["field"] for e in errors] == ["matches[2].competitor", "matches[2].rank", "matches[2].competitor"]
    assert ["twice in one match" in errors[0]["message"], "disagree on its rank" in errors[1]["message"],
            "fewer than 2 sides" in errors[2]["message"]] == [True, True, True]
    assert r.json()["detail"].endswith("(and 2 more errors)")


def test_rows_of_a_side_that_disagree_on_its_rank(client):
    rows = _rows(TEAMS)
    rows[1] = {**rows[1], "rank": 2}
    err = _error(client.post(RATE, json={"matches": rows}), 422, "matches[0].rank")
    assert "disagree on its rank" in err["message"]


def test_a_match_of_one_side(client):
    rows = _rows("g1,Ana,red,1\ng1,Ben,red,1")
    err = _error(client.post(RATE, json={"matches": rows}), 422, "matches[0].side")
    assert "fewer than 2 sides" in err["message"]


def test_a_side_named_as_a_lone_competitor_of_its_match(client):
    rows = _rows("g1,Ana,Eve,1\ng1,Ben,Eve,1\ng1,Eve,,2")
    err = _error(client.post(RATE, json={"matches": rows}), 422, "matches[0].side")
    assert "plays alone" in err["message"]


def test_times_given_on_some_rows_only(client):
    rows = _rows(FFA)
    rows = [{**row, "time": 1} for row in rows[:4]] + rows[4:]
    err = _error(client.post(RATE, json={"matches": rows}), 422, "matches[4].time")
    assert "missing time" in err["message"]


def test_bad_values_of_one_row(client):
    rows = _rows(FFA)
    _error(client.post(RATE, json={"matches": [{**rows[0], "weight": 1.5}, *rows[1:]]}), 422, "matches[0].weight")
    _error(client.post(RATE, json={"matches": [*rows[:3], {**rows[3], "competitor": ""}]}), 422,
           "matches[3].competitor")
    _error(client.post(RATE, json={"matches": [*rows[:3], {**rows[3], "player": "x"}]}), 422, "matches[3].player")
    _error(client.post(RATE, json={"matches": []}), 422, "matches")


# ---------------------------------------------------------------------------- limits
def test_too_many_rows_is_422_before_computing(client, monkeypatch):
    monkeypatch.setattr(match_compute, "rate_matches", lambda req: pytest.fail("computed a request over the limit"))
    row = {"match": 1, "competitor": "a", "rank": 1}
    body = json.dumps({"matches": [row] * (MAX_MATCH_ROWS + 1)}, separators=(",", ":")).encode()
    assert len(body) < MAX_BODY_BYTES  # the rows' limit is met before the size limit
    r = client.post(RATE, content=body, headers={"Content-Type": "application/json"})
    _error(r, 422, "matches")
    assert f"at most {MAX_MATCH_ROWS} rows per request" in r.json()["detail"]


def test_a_body_over_the_size_limit_is_413(client):
    big = b'{"matches": [' + b" " * (MAX_BODY_BYTES + 10) + b"]}"
    err = _error(client.post(RATE, content=big, headers={"Content-Type": "application/json"}), 413, "body")
    assert f"rows of matches (at most {MAX_MATCH_ROWS:,})" in err["message"]


def test_the_warm_up_rates_the_matches_through_every_method(monkeypatch):
    from statespace.app.lab import compute, warmup

    monkeypatch.setattr(compute, "rate", lambda req: {"methods": {}})
    monkeypatch.setattr(compute, "compare", lambda req: None)
    monkeypatch.setattr(match_compute, "match_methods", lambda: {"elo": "Elo"})
    rated = []
    real = match_compute.rate_matches
    monkeypatch.setattr(match_compute, "rate_matches", lambda req: rated.append(req.method) or real(req))
    assert "matches:elo" in warmup.warm_up() and rated == ["elo", "elo"]


def test_too_many_names_or_sides(client, monkeypatch):
    monkeypatch.setattr(match_compute, "MAX_NAMES", 4)
    err = _error(client.post(RATE, json={"matches": _rows(FFA)}), 422, "matches")
    assert "5 distinct competitors, over the limit of 4" in err["message"]
    monkeypatch.setattr(match_compute, "MAX_SIDES", 3)
    err = _error(client.post(RATE, json={"matches": _rows(FFA)[:4]}), 422, "matches[0].match")
    assert 'match "m1" has 4 sides, over the limit of 3' in err["message"]


# ---------------------------------------------------------------------------- documentation and page
def test_openapi_documents_the_matches(client):
    doc = client.get("/openapi.json").json()
    post = doc["paths"][RATE]["post"]
    assert {"400", "413", "415", "421", "422", "500", "503"} <= set(post["responses"])
    schemas = doc["components"]["schemas"]
    assert schemas["MatchRequest"]["examples"] == [ffa_example(), team_example()]
    assert all("description" in p for p in schemas["MatchRow"]["properties"].values())
    assert "rows" in doc["info"]["description"] and METHODS in doc["info"]["description"]


def test_the_examples_rate(client):
    examples = client.get(METHODS).json()["examples"]
    assert examples == {"ffa": ffa_example(), "teams": team_example()}
    for body in examples.values():
        assert client.post(RATE, json=body).status_code == 200


def test_the_page_has_the_matches_mode_and_loads_nothing_from_elsewhere(client):
    page = client.get("/").text
    assert 'id="matches"' in page and "static/matches.js" in page
    assert client.get("/static/matches.js").status_code == 200
    text = (STATIC / "matches.js").read_text(encoding="utf-8")
    assert "api/v1/rate-matches" in text
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text)
    assert "match,competitor,side,rank" in page
