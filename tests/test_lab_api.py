"""The rating lab's JSON API (statespace.app.lab), through FastAPI's test client.

Reference numbers: Glickman's worked example, a player rated 1500 (RD 200) who beats a 1400
(RD 30) and loses to a 1550 (RD 100) and a 1700 (RD 300) in one rating period.
- Glicko-1: Glickman, "The Glicko system" (Boston University, 1999), pp. 3-4, prints r' = 1464
  and RD' = 151.4.
- Glicko-2 (volatility 0.06, tau 0.5): Glickman, "Example of the Glicko-2 system" (2022
  revision), prints mu' = -0.2069, r' = 1464.06 (= 173.7178 x -0.2069 + 1500, from the rounded
  mu'), RD' = 151.52 and sigma' = 0.05999 (0.0599960 cut to five decimals; see
  examples/glicko_worked_examples.py, which redoes the paper's arithmetic).
Each number is checked to the rounding it is printed with.
"""

from __future__ import annotations

import argparse
import html.parser
import io
import json
import math
import re
import socket

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

import statespace  # noqa: E402
from filters import EKF, Elo, Glicko, Glicko2, TrueSkill  # noqa: E402
from filters.ekf import DEFAULT_MODEL  # noqa: E402
from statespace import Games  # noqa: E402
from statespace.app.lab import create_app  # noqa: E402
from statespace.app.lab.app import STATIC  # noqa: E402
from statespace.app.lab.schema import MAX_BODY_BYTES, MAX_GAMES, club_example, glickman_example  # noqa: E402

RATE, COMPARE = "/api/v1/rate", "/api/v1/compare"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(["testserver"]))


def _player(result: dict, method: str, name: str = "Player") -> dict:
    rows = [r for r in result["methods"][method]["leaderboard"] if r["player"] == name]
    assert len(rows) == 1, result["methods"][method]["leaderboard"]
    return rows[0]


# ---------------------------------------------------------------------------- Glickman's example
def test_glickmans_example_glicko1(client):
    r = client.post(RATE, json=glickman_example())
    assert r.status_code == 200, r.text
    p = _player(r.json(), "glicko")
    assert round(p["rating"]) == 1464  # printed: r' = 1464
    assert round(p["rating"], 1) == 1464.1  # the issue's 1464.1 (full precision 1464.1065)
    assert round(p["rd"], 1) == 151.4  # printed: RD' = 151.4
    assert p["games"] == 3


def test_glickmans_example_glicko2(client):
    r = client.post(RATE, json=glickman_example())
    p = _player(r.json(), "glicko2")
    mu = (p["rating"] - 1500) / 173.7178
    assert round(mu, 4) == -0.2069  # printed: mu' = -0.2069, hence r' = 1464.06
    assert abs(p["rating"] - 1464.06) < 0.01  # the printed r', from the rounded mu'
    assert round(p["rating"], 2) == 1464.05  # full precision 1464.0507 (the issue's 1464.05)
    assert round(p["rd"], 2) == 151.52  # printed: RD' = 151.52
    assert math.floor(p["volatility"] * 1e5) == 5999  # printed: sigma' = 0.05999 (cut, not rounded)
    assert abs(p["volatility"] - 0.0599960) < 1e-6


def test_glickmans_example_equals_the_python_api(client):
    """The API's numbers are the Python API's, to the last bit."""
    result = client.post(RATE, json=glickman_example()).json()
    games = Games.from_arrays([1, 1, 1], ["Player"] * 3, ["A", "B", "C"], [1, 0, 0], period=[1, 1, 1])
    init = {"Player": (1500, 200), "A": (1400, 30), "B": (1550, 100), "C": (1700, 300)}
    g1 = Glicko().run(games, initial=init).ratings().set_index("player")
    g2 = Glicko2(tau=0.5).run(games, initial={k: (*v, 0.06) for k, v in init.items()}).ratings().set_index("player")
    for method, board in (("glicko", g1), ("glicko2", g2)):
        for row in result["methods"][method]["leaderboard"]:
            assert row["rating"] == board.loc[row["player"], "mean"]
            assert row["rd"] == board.loc[row["player"], "sd"]
    assert result["methods"]["glicko"]["spec"] == repr(Glicko())


def test_odds_are_predict_proba_of_the_final_state(client):
    req = glickman_example()
    result = client.post(RATE, json=req).json()
    games = Games.from_arrays([1, 1, 1], ["Player"] * 3, ["A", "B", "C"], [1, 0, 0], period=[1, 1, 1])
    init = {"Player": (1500, 200), "A": (1400, 30), "B": (1550, 100), "C": (1700, 300)}
    method = Glicko()
    run = method.run(games, initial=init)
    p = method.predict_proba(run.state, "Player", "A")[0]
    odds = result["odds"]["by_method"]["glicko"]
    assert (result["odds"]["a"], result["odds"]["b"]) == ("Player", "A")
    assert [odds["win"], odds["draw"], odds["loss"]] == p.tolist()
    assert odds["expected_score"] == pytest.approx(p[0] + p[1] / 2, abs=1e-15)
    # the other way round: the complement (Glicko's prediction form is symmetric)
    back = client.post(RATE, json={**req, "pair": {"a": "A", "b": "Player"}}).json()["odds"]["by_method"]["glicko"]
    assert back["win"] == pytest.approx(odds["loss"], abs=1e-12)


def test_history_starts_at_the_given_values_and_follows_trajectories(client):
    result = client.post(RATE, json=glickman_example()).json()
    history = [h for h in result["methods"]["glicko"]["history"] if h["player"] == "Player"]
    assert history[0] == {"player": "Player", "period": None, "rating": 1500.0, "rd": 200.0, "volatility": None}
    assert [h["period"] for h in history] == [None, 1]
    assert history[1]["rating"] == _player(result, "glicko")["rating"]


# ---------------------------------------------------------------------------- same numbers as Python
def _random_request(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    names = [f"p{i}" for i in range(9)]
    games = []
    for _ in range(80):
        a, b = rng.choice(len(names), 2, replace=False)
        games.append({"period": int(rng.integers(1, 7)), "player": names[a], "opponent": names[b],
                      "score": str(rng.choice(["1", "0.5", "0"]))})
    players = [{"name": "p0", "rating": 1620.0, "rd": 80.0, "volatility": 0.05, "games": 40},
               {"name": "p3", "rating": 1410.5}, {"name": "p5", "mu": 27.0, "sigma": 5.0}]
    settings = {"elo": {"k": 24}, "glicko": {"c": 50}, "trueskill": {"beta": 5, "draw_probability": 0.2},
                "ekf": {"drift": 60, "initial_rd": 300}}
    return {"games": games, "players": players, "tau": 0.7, "settings": settings,
            "methods": ["elo", "elo_fide", "glicko", "glicko2", "trueskill", "ekf"], "pair": {"a": "p0", "b": "p1"}}


def _python_methods() -> dict:
    import dataclasses

    return {"elo": Elo(k=24), "elo_fide": Elo.fide(), "glicko": Glicko(c=50), "glicko2": Glicko2(tau=0.7),
            "trueskill": TrueSkill(beta=5, draw_probability=0.2),
            "ekf": EKF(dataclasses.replace(DEFAULT_MODEL, drift=60, prior_var=300.0**2))}


def _python_initial() -> dict:
    elo = {"p0": {"rating": 1620.0, "games": 40}, "p3": {"rating": 1410.5}}
    glicko = {"p0": {"rating": 1620.0, "rd": 80.0, "games": 40}, "p3": {"rating": 1410.5}}
    return {"elo": elo, "elo_fide": elo, "glicko": glicko,
            "glicko2": {"p0": {"rating": 1620.0, "rd": 80.0, "volatility": 0.05, "games": 40},
                        "p3": {"rating": 1410.5}},
            "trueskill": {"p0": {"games": 40}, "p5": {"mu": 27.0, "sigma": 5.0}},
            "ekf": {"p0": {"mean": 1620.0, "sd": 80.0, "games": 40}, "p3": {"mean": 1410.5}}}


@pytest.mark.parametrize("seed", [0, 1])
def test_rate_equals_the_python_api_on_random_games(client, seed):
    req = _random_request(seed)
    r = client.post(RATE, json=req)
    assert r.status_code == 200, r.text
    result = r.json()
    games = Games.from_arrays([g["period"] for g in req["games"]], [g["player"] for g in req["games"]],
                              [g["opponent"] for g in req["games"]], [float(g["score"]) for g in req["games"]],
                              period=[g["period"] for g in req["games"]])
    initial = _python_initial()
    for name, method in _python_methods().items():
        got = result["methods"][name]
        assert got["spec"] == repr(method)
        run = method.run(games, initial=initial[name])
        board = run.ratings()
        assert [row["player"] for row in got["leaderboard"]] == board["player"].tolist(), name
        assert [row["rating"] for row in got["leaderboard"]] == board["mean"].tolist(), name
        if "sd" in board:
            assert [row["rd"] for row in got["leaderboard"]] == board["sd"].tolist(), name
        assert [row["games"] for row in got["leaderboard"]] == board["games"].tolist(), name
        traj = run.trajectories().drop_duplicates(subset=["player", "time"], keep="last")
        after = {(h["player"], h["period"]): h["rating"] for h in got["history"] if h["period"] is not None}
        assert after == {(p, int(t)): m for p, t, m in zip(traj["player"], traj["time"], traj["mean"])}, name
        p = method.predict_proba(run.state, "p0", "p1")[0]
        odds = result["odds"]["by_method"][name]
        assert [odds["win"], odds["draw"], odds["loss"]] == p.tolist(), name
    # the unused starting values are said, not dropped silently
    assert any("not used: rating, rd" in n for n in result["methods"]["trueskill"]["notes"])
    assert result["methods"]["elo"]["notes"] == ["Elo starts from rating; not used: mu, rd, sigma"]
    assert result["methods"]["glicko2"]["notes"] == ["Glicko-2 starts from rating, rd and volatility; "
                                                     "not used: mu, sigma"]


def test_compare_equals_statespace_compare(client):
    req = _random_request(2)
    body = {"games": req["games"], "tau": 0.7, "settings": req["settings"], "methods": list(_python_methods()),
            "split": 0.6, "mode": "online"}
    r = client.post(COMPARE, json=body)
    assert r.status_code == 200, r.text
    got = r.json()
    games = Games.from_arrays([g["period"] for g in req["games"]], [g["player"] for g in req["games"]],
                              [g["opponent"] for g in req["games"]], [float(g["score"]) for g in req["games"]],
                              period=[g["period"] for g in req["games"]])
    table = statespace.compare(_python_methods(), games, split=0.6, mode="online")
    assert (got["split"], got["mode"], got["n_test"]) == (0.6, "online", len(table.attrs["test"]))
    assert got["n_train"] + got["n_test"] == len(games)
    assert [row["method"] for row in got["table"]] == list(table.index)
    for row in got["table"]:
        for column in ("log_loss", "brier", "accuracy", "accuracy_50", "delta_log_loss", "delta_se"):
            assert row[column] == table.loc[row["method"], column], (row["method"], column)
        expected = table.loc[row["method"], "log_loss_3"]
        assert row["log_loss_3"] == (None if not math.isfinite(expected) else expected)


def test_club_example_runs_every_method(client):
    r = client.post(RATE, json=club_example())
    assert r.status_code == 200, r.text
    result = r.json()
    assert list(result["methods"]) == ["elo", "elo_fide", "glicko", "glicko2", "trueskill", "ekf"]
    assert result["periods"] == [1, 2, 3] and result["n_games"] == 15
    assert all(sum(row["games"] for row in m["leaderboard"]) == 30 for m in result["methods"].values())


def test_games_in_a_period_are_rated_together(client):
    """A rating period rates its games from the pre-period ratings: their order does not matter."""
    req = club_example()
    shuffled = {**req, "games": list(reversed(req["games"]))}
    a = client.post(RATE, json={**req, "methods": ["glicko", "glicko2"]}).json()
    b = client.post(RATE, json={**shuffled, "methods": ["glicko", "glicko2"]}).json()
    for m in ("glicko", "glicko2"):
        assert a["methods"][m]["leaderboard"] == b["methods"][m]["leaderboard"]


# ---------------------------------------------------------------------------- bad input
def _glickman(**changes) -> dict:
    req = json.loads(json.dumps(glickman_example()))
    for path, value in changes.items():
        target = req
        keys = path.split("__")
        for k in keys[:-1]:
            target = target[int(k)] if k.isdigit() else target[k]
        last = keys[-1]
        target[int(last) if last.isdigit() else last] = value
    return req


BAD = [
    ("score 2", _glickman(games__2__score="2"), 422, 'games[2].score: must be "1", "0.5" or "0"'),
    ("score true", _glickman(games__0__score=True), 422, "games[0].score: must be"),
    ("score missing", {"games": [{"period": 1, "player": "A", "opponent": "B"}]}, 422, "games[0].score: is required"),
    ("self play", _glickman(games__1__opponent="Player"), 422, 'games[1]: player "Player" against itself'),
    ("negative rating", _glickman(players__0__rating=-5), 422, "players[0].rating: must be a positive number"),
    ("zero rd", _glickman(players__1__rd=0), 422, "players[1].rd: must be a positive number"),
    ("text rd", _glickman(players__1__rd="abc"), 422, 'players[1].rd: must be a positive number, got "abc"'),
    ("period 1.5", _glickman(games__0__period=1.5), 422, "games[0].period: must be a whole number"),
    ("empty name", _glickman(games__0__player=" "), 422, "games[0].player: must be a name"),
    ("unknown method", _glickman(methods=["glicko", "glicko3"]), 422, "methods[1]: unknown method 'glicko3'"),
    ("twice a method", _glickman(methods=["glicko", "glicko"]), 422, 'methods[1]: "glicko" is given twice'),
    ("unknown field", _glickman(games__0__colour="white"), 422, "games[0].colour: is not a known field"),
    ("unknown setting", _glickman(settings={"elo": {"kk": 3}}), 422, "settings.elo.kk: is not a known field"),
    ("bad setting", _glickman(settings={"elo": {"k": -3}}), 422, "settings.elo.k: must be a positive number"),
    ("tau twice", _glickman(settings={"glicko2": {"tau": 0.3}}), 422, "tau: 0.5 differs from settings.glicko2.tau"),
    ("name twice", _glickman(players__1__name="Player"), 422, 'players[1].name: "Player" is given twice'),
    ("name not playing", _glickman(players__1__name="Z"), 422, 'players[1].name: "Z" plays in no game'),
    ("pair not playing", _glickman(pair={"a": "Player", "b": "Z"}), 422, 'pair.b: "Z" plays in no game'),
    ("pair of one", _glickman(pair={"a": "A", "b": "A"}), 422, 'pair: player "A" against itself'),
    ("no games", {"games": []}, 422, "games: give at least one game"),
    ("not an object", [1, 2], 422, "body: must be a JSON object"),
    ("games not a list", {"games": {"period": 1}}, 422, "games: must be a list"),
]


@pytest.mark.parametrize("label, body, status, message", BAD, ids=[b[0] for b in BAD])
def test_bad_request_names_the_field_and_row_and_the_next_request_succeeds(client, label, body, status, message):
    r = client.post(RATE, json=body)
    assert r.status_code == status, r.text
    got = r.json()
    assert message in got["detail"], got
    assert got["errors"] and message.split(":")[0] in [e["field"] for e in got["errors"]]
    ok = client.post(RATE, json=glickman_example())
    assert ok.status_code == 200 and round(_player(ok.json(), "glicko")["rd"], 1) == 151.4


@pytest.mark.parametrize("raw, message", [
    (b'{"games": [', "body: malformed JSON"),
    (b"{'games': []}", "body: malformed JSON"),
    (b"", "body: is required"),
])
def test_malformed_json(client, raw, message):
    r = client.post(RATE, content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code in (400, 422) and message in r.json()["detail"], r.text
    assert client.post(RATE, json=glickman_example()).status_code == 200


def test_nan_is_not_a_rating(client):
    body = json.dumps(glickman_example()).replace('"rating": 1400', '"rating": NaN').encode()
    r = client.post(RATE, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "players[1].rating: must be a positive number, got nan" in r.json()["detail"]


def test_scores_in_every_accepted_spelling(client):
    games = [{"period": 1, "player": "A", "opponent": "B", "score": s} for s in ("1", "0.5", "½", "1/2", "0", 1, 0.5, 0)]
    r = client.post(RATE, json={"games": games, "methods": ["elo"]})
    assert r.status_code == 200, r.text
    assert {row["player"]: row["games"] for row in r.json()["methods"]["elo"]["leaderboard"]} == {"A": 8, "B": 8}


def test_body_over_the_limit_is_413_and_the_server_keeps_serving(client):
    big = b'{"games": [' + b" " * (MAX_BODY_BYTES + 10) + b"]}"
    r = client.post(RATE, content=big, headers={"Content-Type": "application/json"})
    assert r.status_code == 413 and "over the limit of 1,000,000 bytes" in r.json()["detail"]

    def chunks():  # no Content-Length: counted as it arrives
        yield b'{"games": ['
        for _ in range(200):
            yield b" " * 10_000
        yield b"]}"

    r = client.post(RATE, content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413, r.text
    assert client.post(RATE, json=glickman_example()).status_code == 200


def test_too_many_games_is_422(client):
    game = {"period": 1, "player": "a", "opponent": "b", "score": 1}
    body = json.dumps({"games": [game] * (MAX_GAMES + 1)}, separators=(",", ":")).encode()
    assert len(body) < MAX_BODY_BYTES  # the games limit is met before the size limit
    r = client.post(RATE, content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and f"games: at most {MAX_GAMES} games per request" in r.json()["detail"]


# ---------------------------------------------------------------------------- OpenAPI, page, assets
def test_openapi_lists_the_paths_and_documents_the_request(client):
    doc = client.get("/openapi.json").json()
    assert {"/api/v1/rate", "/api/v1/compare"} <= set(doc["paths"])
    assert "post" in doc["paths"]["/api/v1/rate"] and "post" in doc["paths"]["/api/v1/compare"]
    assert "1,000,000 bytes" in doc["info"]["description"]
    schemas = doc["components"]["schemas"]
    assert schemas["RateRequest"]["examples"][0]["players"][0] == {"name": "Player", "rating": 1500, "rd": 200,
                                                                   "volatility": 0.06}
    assert "description" in schemas["StartingRating"]["properties"]["rd"]
    assert {"413", "422", "400"} <= set(doc["paths"]["/api/v1/rate"]["post"]["responses"])


def test_no_cdn_documentation_pages(client):
    """FastAPI's /docs and /redoc load their scripts from a CDN: the lab serves neither."""
    assert client.get("/docs").status_code == 404 and client.get("/redoc").status_code == 404


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.links += [v for k, v in attrs if k in ("src", "href") and v]


def test_page_and_every_asset_it_references_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    parser = _Links()
    parser.feed(page.text)
    assert "static/lab.js" in parser.links and "static/lab.css" in parser.links
    for link in parser.links:
        assert not re.match(r"^(https?:)?//", link), f"the page loads {link} from another host"
        if link.startswith("data:"):
            continue
        assert client.get("/" + link.lstrip("/")).status_code == 200, link
    # nor do the script and the style sheet fetch anything from another host (the SVG namespace
    # is a name, not a request)
    for name in ("lab.js", "lab.css"):
        text = (STATIC / name).read_text(encoding="utf-8").replace("http://www.w3.org/2000/svg", "")
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text), name


def test_examples_endpoint_gives_the_page_its_two_examples(client):
    got = client.get("/api/v1/examples").json()
    assert got == {"glickman": glickman_example(), "club": club_example()}


# ---------------------------------------------------------------------------- the command
def _lab_args(argv):
    from statespace.app.cli import _Parser
    from statespace.app.lab import cli

    parser = _Parser(prog="statespace")
    cli.add_parser(parser.add_subparsers(dest="command", parser_class=_Parser))
    return parser.parse_args(["lab", *argv])


def test_cli_without_fastapi_says_how_to_install(monkeypatch):
    import statespace.app.lab as lab
    from statespace.app.lab import cli

    monkeypatch.setattr(lab, "missing_dependencies", lambda: ["fastapi"])
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(_lab_args([]), out, err) == 2
    assert err.getvalue() == 'statespace: error: the rating lab needs fastapi: pip install "statespace-ratings[lab]"\n'


def test_cli_port_in_use_is_one_line_and_exit_2():
    from statespace.app.lab import cli

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        out, err = io.StringIO(), io.StringIO()
        assert cli.main(_lab_args(["--port", str(port)]), out, err) == 2
    assert err.getvalue().startswith(f"statespace: error: cannot listen on 127.0.0.1:{port}: ")
    assert err.getvalue().count("\n") == 1


def test_cli_refuses_a_port_out_of_range():
    from statespace.methods.specs import CLIError

    with pytest.raises(CLIError, match="--port must be a whole number from 0 to 65535"):
        _lab_args(["--port", "70000"])
    assert _lab_args(["--port", "0", "--open"]).open_browser is True
    assert isinstance(_lab_args([]), argparse.Namespace) and _lab_args([]).host == "127.0.0.1"
