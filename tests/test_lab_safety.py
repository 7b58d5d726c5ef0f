"""The rating lab's safety: it answers only requests addressed to it (a web page that points its
own name at 127.0.0.1, DNS rebinding, is refused), it refuses a request over its work limits
before computing anything, no request holds a global lock over the others, and ``serve`` loads
every method's compiled kernels before it prints its address.

The limits' numbers are checked against counts made here from the request (names, name-periods)
and against the size of real answers; the Host rule against RFC 9110's Host syntax (name, then
an optional ``:port``; IPv6 literals in brackets).
"""

from __future__ import annotations

import gc
import io
import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from statespace.app.lab import create_app  # noqa: E402
from statespace.app.lab import limits  # noqa: E402
from statespace.app.lab.guard import allowed_hosts, split_host  # noqa: E402
from statespace.app.lab.schema import MAX_GAMES, METHODS, club_example, glickman_example  # noqa: E402

RATE, COMPARE = "/api/v1/rate", "/api/v1/compare"
#: the smallest request: one game, one method
ONE = {"games": [{"period": 1, "player": "A", "opponent": "B", "score": 1}], "methods": ["elo"]}


def _shape(r, status: int, field: str | None) -> dict:
    assert r.status_code == status, r.text
    got = r.json()
    assert set(got) == {"detail", "errors"} and got["errors"], got
    assert all(set(e) == {"field", "message"} for e in got["errors"]), got
    assert got["errors"][0]["field"] == field, got
    return got


# ---------------------------------------------------------------------------- Host
@pytest.fixture(scope="module")
def served():
    """The app as serve() builds it for 127.0.0.1:8765, through a client addressed there."""
    app = create_app(allowed_hosts("127.0.0.1", 8765))
    return TestClient(app, base_url="http://127.0.0.1:8765")


def test_a_rebinding_host_is_refused_in_the_error_shape(served):
    assert served.get("/").status_code == 200
    for host in ("evil.example:8000", "evil.example", "127.0.0.1.evil.example:8765", "localhost.evil:8765"):
        got = _shape(served.get("/", headers={"host": host}), 421, "headers.host")
        assert host in got["detail"] and "127.0.0.1:8765" in got["detail"]
        _shape(served.post(RATE, json=ONE, headers={"host": host}), 421, "headers.host")
    assert served.post(RATE, json=ONE).status_code == 200


@pytest.mark.parametrize("host, ok", [
    ("127.0.0.1:8765", True), ("127.0.0.1", True), ("LOCALHOST:8765", True), ("localhost", True),
    ("[::1]:8765", True), ("[::1]", True),
    ("127.0.0.1:8766", False), ("localhost:80", False), ("[::1]:1", False), ("127.0.0.1:8765x", False),
    ("::1", True), ("", False), ("testserver", False),
])
def test_the_served_address_with_or_without_its_port(served, host, ok):
    r = served.get("/api/v1/examples", headers={"host": host})
    assert r.status_code == (200 if ok else 421), (host, r.text)


def test_allowed_hosts_and_host_syntax():
    hosts = allowed_hosts("127.0.0.1", 8765)
    assert {"127.0.0.1:8765", "localhost:8765", "[::1]:8765"} <= set(hosts)
    assert "[::1]:9000" in allowed_hosts("::1", 9000)
    assert "lab.example:9000" in allowed_hosts("127.0.0.1", 9000, ["lab.example"])
    assert split_host("Example.ORG:8000") == ("example.org", 8000)
    assert split_host("[::1]:8000") == ("[::1]", 8000) and split_host("[::1]") == ("[::1]", None)
    assert split_host("a:b")[1] == -1 and split_host("a:٣")[1] == -1  # not an ASCII port


def test_the_default_app_answers_the_loopback_names_on_any_port():
    client = TestClient(create_app())  # the test client's Host is "testserver": refused
    _shape(client.get("/"), 421, "headers.host")
    assert client.get("/", headers={"host": "localhost:5"}).status_code == 200
    assert client.get("/", headers={"host": "127.0.0.1:41234"}).status_code == 200


def test_serve_passes_its_address_and_warms_up_before_it_says_it_is_ready(monkeypatch):
    import uvicorn

    import statespace.app.lab.warmup as warmup
    from statespace.app.lab import serve

    out = io.StringIO()
    seen = {}

    def fake_warm_up():
        seen["printed before the warm-up"] = out.getvalue()
        return []

    def fake_run(self, sockets=None):
        seen["app"] = self.config.app
        seen["port"] = sockets[0].getsockname()[1]

    monkeypatch.setattr(warmup, "warm_up", fake_warm_up)
    monkeypatch.setattr(uvicorn.Server, "run", fake_run)
    serve("127.0.0.1", 0, out=out, allow_hosts=["lab.example"])
    assert "serving on" not in seen["printed before the warm-up"]
    assert f"serving on http://127.0.0.1:{seen['port']}/" in out.getvalue()
    hosts = seen["app"].state.allowed_hosts
    assert {f"127.0.0.1:{seen['port']}", f"localhost:{seen['port']}", f"lab.example:{seen['port']}"} <= set(hosts)
    assert "testserver" not in hosts

    seen.clear()
    monkeypatch.setattr(warmup, "warm_up", lambda: pytest.fail("warm_up=False still warmed up"))
    serve("127.0.0.1", 0, out=io.StringIO(), warm_up=False)
    assert "app" in seen


def test_cli_allow_host():
    from statespace.app.cli import _Parser
    from statespace.app.lab import cli

    parser = _Parser(prog="statespace")
    cli.add_parser(parser.add_subparsers(dest="command", parser_class=_Parser))
    args = parser.parse_args(["lab", "--allow-host", "a.lan", "--allow-host", "b.lan"])
    assert args.allow_hosts == ["a.lan", "b.lan"]


# ---------------------------------------------------------------------------- warm-up
def _overloads() -> int:
    """Compiled (or loaded) signatures of every numba dispatcher in this process."""
    from numba.core.dispatcher import Dispatcher

    total = 0
    for d in gc.get_objects():
        try:
            if isinstance(d, Dispatcher):  # a dead weak proxy among the objects raises ReferenceError
                total += len(d.overloads)
        except ReferenceError:
            continue
    return total


def test_after_the_warm_up_a_request_compiles_and_loads_nothing():
    from statespace.app.lab.warmup import warm_up

    assert set(warm_up()) >= {f"rate:{m}" for m in METHODS} | {"compare:frozen", "compare:online",
                                                                 "compare:walk_forward"}
    client = TestClient(create_app(["testserver"]))
    before = _overloads()
    club = club_example()
    shuffled = {**club, "games": club["games"][::-1],
                "players": [{"name": "Ana", "rating": 1700, "rd": 90, "volatility": 0.07, "mu": 27, "sigma": 5}],
                "settings": {"elo": {"k": 24}, "trueskill": {"beta": 5, "draw_probability": 0.2}, "ekf": {"drift": 50}}}
    for path, body in ((RATE, club), (RATE, shuffled), (RATE, glickman_example()),
                       (COMPARE, {"games": shuffled["games"], "mode": "online"}),
                       (COMPARE, {"games": club["games"], "mode": "walk_forward", "every": 1})):
        assert client.post(path, json=body).status_code == 200
    assert _overloads() == before


# ---------------------------------------------------------------------------- work limits
@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(["testserver"]))


def test_the_issues_request_is_refused_before_computing(client, monkeypatch):
    """10,000 games, each in its own period between two new names: 20,000 names and an answer
    of tens of MB (6 methods x 40,000 history points)."""
    from statespace.app.lab import compute

    monkeypatch.setattr(compute, "rate", lambda req: pytest.fail("computed a request over the limits"))
    games = [{"period": i, "player": f"a{i}", "opponent": f"b{i}", "score": 1} for i in range(MAX_GAMES)]
    body = json.dumps({"games": games}, separators=(",", ":"))
    assert len(body) < 1_000_000
    got = _shape(client.post(RATE, content=body, headers={"Content-Type": "application/json"}), 422, "games")
    messages = [e["message"] for e in got["errors"]]
    assert messages[0].startswith(f"20,000 distinct names, over the limit of {limits.MAX_NAMES:,}")
    # 6 methods x (20,000 starting points + 20,000 name-periods)
    assert "6 methods x 40,000 history points: 20,000 names and 20,000 name-periods" in messages[1]
    assert "over the limit of 10.0 MB" in messages[1]


def test_too_many_names_for_compare(client):
    n = limits.MAX_NAMES // 2 + 1
    games = [{"period": 1, "player": f"a{i}", "opponent": f"b{i}", "score": 1} for i in range(n)]
    got = _shape(client.post(COMPARE, json={"games": games}), 422, "games")
    assert f"{2 * n:,} distinct names, over the limit of {limits.MAX_NAMES:,}" in got["detail"]


def test_an_answer_over_the_size_limit_names_the_numbers(client, monkeypatch):
    monkeypatch.setattr(limits, "MAX_RESPONSE_BYTES", 20_000)
    got = _shape(client.post(RATE, json=club_example()), 422, "games")
    # 5 names, each playing in each of 3 periods: 5 + 15 history points per method
    assert "(6 methods x 20 history points: 5 names and 15 name-periods)" in got["detail"]
    assert "over the limit of 20,000 bytes" in got["detail"]
    assert client.post(RATE, json={**club_example(), "methods": ["elo"]}).status_code == 200


@pytest.mark.parametrize("body", [club_example(), glickman_example(), {**club_example(), "methods": ["glicko2"]}])
def test_the_predicted_answer_size_bounds_the_real_one(client, body):
    from statespace.app.lab.schema import RateRequest

    predicted = limits.work(RateRequest.model_validate(body)).response_bytes
    r = client.post(RATE, json=body)
    assert r.status_code == 200
    assert len(r.content) <= predicted <= 3 * len(r.content) + 5_000


def test_work_counts_names_and_name_periods():
    from statespace.app.lab.schema import RateRequest

    rows = [(1, "A", "B"), (1, "A", "C"), (5, "Zo\u00eb", "A"), (5, "Zoe\u0308", "B")]
    req = RateRequest.model_validate({"games": [{"period": t, "player": a, "opponent": b, "score": 1}
                                                for t, a, b in rows], "methods": ["elo", "glicko"]})
    w = limits.work(req)
    # names A, B, C, Zoë (one name in two spellings); (name, period): A1 B1 C1 Zoë5 A5 B5
    assert (w.games, w.names, w.periods, w.name_periods, w.methods) == (4, 4, 2, 6, 2)


# ---------------------------------------------------------------------------- no global lock
def test_a_busy_worker_does_not_block_another_request():
    app = create_app(["testserver"], workers=2, wait=0.05)
    client = TestClient(app)
    with app.state.workers.turn():  # one request computing
        assert client.post(RATE, json=ONE).status_code == 200
        with app.state.workers.turn():  # both workers busy: a waiting request is told to retry
            r = client.post(RATE, json=ONE)
            got = _shape(r, 503, None)
            assert "busy" in got["detail"] and r.headers["retry-after"] == "5"
    assert client.post(COMPARE, json={"games": club_example()["games"], "methods": ["elo"]}).status_code == 200
