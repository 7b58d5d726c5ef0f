"""The rating lab's error contract (docs/lab.md, "Limits and errors"): every error is
``{"detail", "errors": [{"field", "message"}]}`` with the field path of the value at fault
(``players[0].rating``, ``games[3].player``, ``settings.ekf.drift``), parse errors included,
with the position the parser gives.

Expected positions are counted here from the bytes sent (Python's ``str.index``), and expected
fields from the request's own layout; a method's accepted range is its own business (its
constructor or ``init_state``), so the tests only ask that its refusal lands on the right field,
as a 422, never a 200 or a 500.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from statespace.app.lab import create_app  # noqa: E402
from statespace.app.lab.schema import club_example, glickman_example  # noqa: E402

RATE, COMPARE = "/api/v1/rate", "/api/v1/compare"
JSON = {"Content-Type": "application/json"}
GAMES = [{"period": 1, "player": "A", "opponent": "B", "score": "1"},
         {"period": 2, "player": "B", "opponent": "C", "score": "0.5"}]


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(["testserver"]))


def _error(r, status: int, field: str | None) -> dict:
    """The documented shape, the status and the first error's field; the server keeps serving."""
    assert r.status_code == status, r.text
    got = r.json()
    assert set(got) == {"detail", "errors"} and got["errors"], got
    assert all(set(e) == {"field", "message"} for e in got["errors"]), got
    first = got["errors"][0]
    assert first["field"] == field, got
    assert got["detail"].startswith(f"{field}: {first['message']}" if field else first["message"]), got
    assert "np.float64" not in r.text and "errors=\\\"drop\\\"" not in r.text and "--drop-invalid" not in r.text
    return first


def _post(client, raw: bytes, path: str = RATE, headers: dict = JSON):
    return client.post(path, content=raw, headers=headers)


# ---------------------------------------------------------------------------- parsing
def test_malformed_json_gives_line_column_and_character(client):
    raw = b'{"games": ['
    m = _error(_post(client, raw), 400, "body")
    assert m["message"] == f"malformed JSON at line 1, column {len(raw) + 1} (character {len(raw)}): Expecting value"
    raw = b'{\n  "games": [\n    {"period": 1,, "player": "A"}]}'
    at = raw.index(b",,") + 1
    col = at - raw.rindex(b"\n", 0, at)
    m = _error(_post(client, raw), 400, "body")
    assert f"at line 3, column {col} (character {at})" in m["message"]


def test_a_binary_body_names_the_byte_and_its_place(client):
    raw = b'{"games": \xff\xfe\x00}'
    at = raw.index(b"\xff")
    m = _error(_post(client, raw), 400, "body")
    assert m["message"] == f"is not UTF-8 text: byte 0xff at line 1, column {at + 1} (character {at})"


def test_json_nested_100000_deep(client):
    raw = b'{"games": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    m = _error(_post(client, raw), 400, "body")
    # the object is level 1, so the 100th bracket (9 after the first, at character 10) opens level 101
    assert "nested more than 100 levels deep at line 1, column 110 (character 109)" in m["message"]
    raw = b'{"games": ' + b"[" * 150 + b"]" * 150 + b"}"  # parses, but is still refused
    assert "(character 109)" in _error(_post(client, raw), 400, "body")["message"]


def test_long_integers(client):
    twenty = 12345678901234567890
    body = {"games": [{**GAMES[0], "period": twenty}]}
    _error(client.post(RATE, json=body), 422, "games[0].period")
    body = {"games": GAMES, "players": [{"name": "A", "rating": twenty}], "methods": ["elo"]}
    _error(client.post(RATE, json=body), 422, "players[0].rating")
    raw = json.dumps({"games": GAMES}).encode().replace(b'"period": 2', b'"period": 2' + b"0" * 5000)
    m = _error(_post(client, raw), 400, "body")
    at = raw.index(b"2" + b"0" * 5000)
    assert m["message"] == f"a number with 5001 digits at line 1, column {at + 1} (character {at}): the lab reads " \
                           "numbers of up to 4300 digits"


@pytest.mark.parametrize("content_type", ["text/plain", "text/plain; charset=utf-8",
                                          "application/x-www-form-urlencoded", None])
def test_json_not_sent_as_json_is_415(client, content_type):
    headers = {} if content_type is None else {"Content-Type": content_type}
    m = _error(_post(client, json.dumps(glickman_example()).encode(), headers=headers), 415, "headers.content-type")
    assert "Content-Type: application/json" in m["message"]
    assert _post(client, json.dumps({"games": GAMES, "methods": ["elo"]}).encode(),
                 headers={"Content-Type": "application/json; charset=utf-8"}).status_code == 200


def test_an_empty_body(client):
    assert _error(_post(client, b""), 422, "body")["message"] == "is required: send a JSON object"


# ---------------------------------------------------------------------------- names
@pytest.mark.parametrize("game, field", [
    ('{"period": 1, "player": "A\\ud800", "opponent": "B", "score": 1}', "games[0].player"),
    ('{"period": 1, "player": "A", "opponent": "\\udc00B", "score": 1}', "games[0].opponent"),
    ('{"period": 1, "player": "A", "opponent": "B", "score": "\\ud800"}', "games[0].score"),
])
def test_a_lone_surrogate_is_refused_on_its_field(client, game, field):
    m = _error(_post(client, ('{"games": [' + game + "]}").encode()), 422, field)
    assert "lone surrogate" in m["message"]


def test_a_lone_surrogate_in_a_key(client):
    raw = b'{"games": [{"period": 1, "player": "A", "opponent": "B", "score": 1, "\\ud800": 1}]}'
    m = _error(_post(client, raw), 422, "games[0].\\ud800")
    assert "lone surrogate \\ud800" in m["message"]


def test_a_pair_of_surrogates_is_one_character(client):
    raw = b'{"games": [{"period": 1, "player": "A\\ud83d\\ude00", "opponent": "B", "score": 1}], "methods": ["elo"]}'
    r = _post(client, raw)
    assert r.status_code == 200 and "A\U0001F600" in r.json()["players"]


def test_two_spellings_of_one_name_in_a_game_name_the_row(client):
    games = [GAMES[0], {"period": 1, "player": "Zo\u00eb", "opponent": "Zoe\u0308", "score": "1"}]
    m = _error(client.post(RATE, json={"games": games}), 422, "games[1]")
    assert 'player "Zo\\u00eb" against "Zoe\\u0308"' in m["message"] and "NFC" in m["message"]


def test_a_starting_value_in_the_other_spelling_is_the_same_competitor(client):
    games = [{"period": 1, "player": "Zo\u00eb", "opponent": "B", "score": "1"}]
    body = {"games": games, "players": [{"name": "Zoe\u0308", "rating": 1700}], "methods": ["elo"]}
    r = client.post(RATE, json=body)
    assert r.status_code == 200, r.text
    start = [h for h in r.json()["methods"]["elo"]["history"] if h["player"] == "Zo\u00eb" and h["period"] is None]
    assert start[0]["rating"] == 1700


# ---------------------------------------------------------------------------- a method's refusal on its field
@pytest.mark.parametrize("settings, field", [
    ({"ekf": {"drift": 1e308}}, "settings.ekf.drift"),
    ({"ekf": {"iterations": 2, "drift": 1e308, "initial_rd": 200}}, "settings.ekf.drift"),
    ({"trueskill": {"tau": 1e150}}, "settings.trueskill.tau"),
    ({"elo": {"k": 1e190}}, "settings.elo.k"),
    ({"glicko2": {"tau": 1e308}}, "settings.glicko2.tau"),
    ({"glicko": {"c": 50, "initial_rd": 1e300}}, "settings.glicko.initial_rd"),
])
@pytest.mark.parametrize("path", [RATE, COMPARE])
def test_an_extreme_setting_is_422_on_its_field(client, settings, field, path):
    method = next(iter(settings))
    m = _error(client.post(path, json={"games": GAMES, "settings": settings, "methods": [method]}), 422, field)
    assert "1e+" in m["message"]


def test_the_top_level_tau_is_its_own_field(client):
    _error(client.post(RATE, json={"games": GAMES, "tau": 1e308, "methods": ["glicko2"]}), 422, "tau")


@pytest.mark.parametrize("player, field", [
    ({"rating": 1e308}, "rating"), ({"rd": 1e300}, "rd"), ({"volatility": 1e300}, "volatility"),
    ({"mu": 1e300, "sigma": 2}, "mu"), ({"rating": 1500, "sigma": 1e300}, "sigma"),
])
def test_an_extreme_starting_value_is_422_on_its_field(client, player, field):
    body = {"games": GAMES, "players": [{"name": "A"}, {"name": "C", **player}]}
    m = _error(client.post(RATE, json=body), 422, f"players[1].{field}")
    assert "1e+" in m["message"]


def test_a_fit_that_fails_is_422_on_the_setting_that_makes_it_fail(client, monkeypatch):
    """A fit's ``ValueError`` (e.g. ``ResultRangeError``: ratings beyond 1e6 scales) when only
    one of the settings given makes it fail."""
    from filters import Elo
    from statespace.model.ranges import ResultRangeError

    original = Elo.run

    def run(self, games, initial=None, state=None):
        if self.k > 100:
            raise ResultRangeError("Elo: the rating of 'A' came out as 1e+300")
        return original(self, games, initial, state)

    monkeypatch.setattr(Elo, "run", run)
    body = {"games": GAMES, "methods": ["elo"], "settings": {"elo": {"initial_rating": 1400, "k": 500}}}
    m = _error(client.post(RATE, json=body), 422, "settings.elo.k")
    assert m["message"] == "Elo: Elo: the rating of 'A' came out as 1e+300"
    assert client.post(RATE, json={**body, "settings": {"elo": {"k": 50}}}).status_code == 200


def test_a_split_with_an_empty_part(client):
    _error(client.post(COMPARE, json={"games": GAMES[:1]}), 422, "split")


# ---------------------------------------------------------------------------- the rest of the app
def test_unknown_paths_and_methods_in_the_shape(client):
    assert "/nope" in _error(client.get("/nope"), 404, None)["message"]
    assert "/static/nope.js" in _error(client.get("/static/nope.js"), 404, None)["message"]
    assert _error(client.get(RATE), 405, None)["message"] == "GET is not a method of /api/v1/rate"


def test_openapi_lists_each_error_response(client):
    doc = client.get("/openapi.json").json()
    for path in (RATE, COMPARE):
        responses = doc["paths"][path]["post"]["responses"]
        assert {"400", "413", "415", "421", "422", "500", "503"} <= set(responses), path
        for code in ("400", "413", "415", "421", "422", "500", "503"):
            schema = responses[code]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (path, code)
    assert "421" in doc["paths"]["/api/v1/examples"]["get"]["responses"]
    info = doc["info"]["description"]
    assert "5,000 distinct names" in info and "10,000,000 bytes" in info and "415" in info and "421" in info


def test_the_server_keeps_serving_after_each_error(client):
    for raw in (b"\xff", b"[" * 5000, b'{"games": "x"}'):
        assert _post(client, raw).status_code in (400, 422)
    r = client.post(RATE, json={**club_example(), "methods": ["glicko"]})
    assert r.status_code == 200 and r.json()["n_games"] == 15
