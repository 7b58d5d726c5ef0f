"""Input files and output of the command line: long fields and lines, pipes, the figure's file
name, and output that cannot be written (statespace.data.csvfile, statespace.app.cli_output)."""

from __future__ import annotations

import json
import os
import sys
import threading
import tracemalloc

import pytest

import statespace.data.games as games_module
from statespace import Games, GamesError
from statespace.data.csvfile import LineCheck
from statespace.app.cli import main

HEADER = b"time,a,b,score\n"
ROWS = [(f"2021-01-{d:02d}", a, b, s) for d, a, b, s in
        [(1, "ann", "bob", 1), (2, "bob", "cyd", 0.5), (3, "cyd", "ann", 0), (4, "ann", "cyd", 1)]]


def csv_bytes(rows=ROWS) -> bytes:
    return HEADER + b"".join(f"{t},{a},{b},{s}\n".encode() for t, a, b, s in rows)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line_error(code, err, *fragments):
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("statespace: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])


def feed(path_or_fd, data: bytes) -> threading.Thread:
    """Write ``data`` to a FIFO path or a pipe's write end in a thread (the reader may stop early)."""
    def write():
        try:
            if isinstance(path_or_fd, int):
                with os.fdopen(path_or_fd, "wb") as f:
                    f.write(data)
            else:
                with open(path_or_fd, "wb") as f:
                    f.write(data)
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def within(seconds: float, fn, *args):
    """``fn(*args)`` in a thread: its result or its exception, or a failure when it blocks (a
    reader that opens a FIFO a second time waits for a writer that never comes)."""
    box = {}

    def call():
        try:
            box["result"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=call, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} still blocked after {seconds} s")
    if "error" in box:
        raise box["error"]
    return box["result"]


# ---------------------------------------------------------------------------- long fields and lines
def test_a_field_longer_than_the_csv_modules_limit_reads(tmp_path, capsys):
    """A name of 200,000 characters (beyond the csv module's 131,072) is a name like any other."""
    name = "z" * 200_000
    path = tmp_path / "long_name.csv"
    path.write_bytes(csv_bytes([("2021-01-01", name, "bob", 1), ("2021-01-02", "bob", "cyd", 0)]))
    games = Games.from_csv(path)
    assert len(games) == 2 and name in set(games.players)
    code, out, err = run(capsys, "rate", path, "--json")
    assert code == 0, err
    board = json.loads(out)["ratings"]
    assert board[0]["competitor"] == name and board[0]["games"] == 1


def test_a_line_over_the_limit_is_a_row_error_read_in_bounded_memory(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(games_module, "MAX_LINE_BYTES", 4096, raising=False)
    path = tmp_path / "no_newline.csv"
    # two good rows, then 3 MB without a line end (a file cut short, or not a games file at all)
    path.write_bytes(csv_bytes(ROWS[:2]) + b"2021-01-03,ann," + b"x" * 3_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(GamesError, match=r"row 2 \(line 4\) is longer than 4,096 bytes") as info:
            Games.from_csv(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # the line is never held
    assert info.value.rows == [2] and "no_newline.csv" in str(info.value)
    code, out, err = run(capsys, "rate", path)
    assert_one_line_error(code, err, "row 2 (line 4)", "MAX_LINE_BYTES")
    assert out == ""


def test_a_long_header_and_a_long_middle_line(tmp_path, monkeypatch):
    monkeypatch.setattr(games_module, "MAX_LINE_BYTES", 100, raising=False)
    header = tmp_path / "header.csv"
    header.write_bytes(b"time,a,b,score," + b"c" * 200 + b"\n" + csv_bytes()[len(HEADER):])
    with pytest.raises(GamesError, match=r"the header \(line 1\) is longer than 100 bytes"):
        Games.from_csv(header)
    middle = tmp_path / "middle.csv"
    rows = [*ROWS[:2], ("2021-01-03", "cyd", "d" * 150, 0), *ROWS[3:]]
    middle.write_bytes(csv_bytes(rows).replace(b"\n", b"\r\n"))  # Windows line ends count as one
    with pytest.raises(GamesError, match=r"row 2 \(line 4\)"):
        Games.from_csv(middle)
    ok = tmp_path / "ok.csv"
    ok.write_bytes(csv_bytes(rows[:2] + rows[3:]))
    assert len(Games.from_csv(ok)) == 3


@pytest.mark.parametrize("lines", [[0], [5], [10], [11], [3, 10, 0, 11, 2, 40], [10] * 7, [11, 0]])
@pytest.mark.parametrize("block", [1, 3, 7, 1000])
def test_line_check_finds_the_first_long_line(lines, block):
    """LineCheck against the plain definition (split at line ends), fed in blocks of any size."""
    limit = 10
    data = b"".join(b"x" * n + (b"\r\n" if i % 2 else b"\n") for i, n in enumerate(lines)) + b"tail"
    check = LineCheck(limit)
    found = None
    for i in range(0, len(data), block):
        found = check.feed(data[i:i + block])
        if found is not None:
            break
    if found is None:
        found = check.finish()
    expected, start = None, 0  # the plain definition: split at \n, a \r before it not counted
    for piece in data.split(b"\n"):
        if len(piece.rstrip(b"\r")) > limit:
            expected = start
            break
        start += len(piece) + 1
    assert found == expected


# ---------------------------------------------------------------------------- pipes
def test_a_fifo_reads_as_the_file_does(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    file = tmp_path / "games.csv"
    file.write_bytes(csv_bytes())
    fifo = tmp_path / "games.fifo"
    os.mkfifo(fifo)
    writer = feed(str(fifo), csv_bytes())
    piped = within(60, Games.from_csv, fifo)
    writer.join(10)
    assert piped.to_frame().equals(Games.from_csv(file).to_frame())
    assert not os.listdir(tmp_path / "tmp")  # the copy is gone


def test_process_substitution_in_the_cli(tmp_path, capsys):
    """``statespace rate <(cat games.csv)``: the shell passes /dev/fd/N, a pipe."""
    file = tmp_path / "games.csv"
    file.write_bytes(csv_bytes())
    code, expected, err = run(capsys, "rate", file, "--json")
    assert code == 0, err
    read, write = os.pipe()
    try:
        writer = feed(write, csv_bytes())
        code, out, err = within(60, run, capsys, "rate", f"/dev/fd/{read}", "--json")
        writer.join(10)
    finally:
        os.close(read)
    assert code == 0, err
    got, want = json.loads(out), json.loads(expected)
    assert got["ratings"] == want["ratings"] and got["source"] == f"/dev/fd/{read}"


def test_a_long_line_in_a_pipe_stops_the_copy(tmp_path, monkeypatch):
    monkeypatch.setattr(games_module, "MAX_LINE_BYTES", 4096, raising=False)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    fifo = tmp_path / "games.fifo"
    os.mkfifo(fifo)
    writer = feed(str(fifo), csv_bytes(ROWS[:1]) + b"2021-01-02," + b"y" * 5_000_000)
    with pytest.raises(GamesError, match=r"games.fifo as CSV: row 1 \(line 3\) is longer than 4,096 bytes"):
        within(60, Games.from_csv, fifo)
    writer.join(10)
    assert os.listdir(tmp_path) == ["games.fifo"]


# ---------------------------------------------------------------------------- output
@pytest.fixture
def tiny_figure(monkeypatch):
    """compare's figure replaced by a small one: these tests are about where it is written."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    from statespace.methods import plots

    monkeypatch.setattr(plots, "plot_comparison", lambda *a, **k: Figure(figsize=(1, 1)))


def test_plot_is_written_to_exactly_the_name_given(tmp_path, capsys, tiny_figure):
    target = tmp_path / "figure"
    code, out, err = run(capsys, "compare", "--scenario", "balanced", "--methods", "elo", "--plot", target)
    assert code == 0, err
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "figure.png").exists()
    assert err.strip() == f"statespace: wrote {target}"
    pdf = tmp_path / "figure.pdf"
    code, out, err = run(capsys, "compare", "--scenario", "balanced", "--methods", "elo", "--plot", pdf)
    assert code == 0 and pdf.read_bytes()[:5] == b"%PDF-"


@pytest.mark.parametrize("name, fragment", [(".", "is a folder"), ("figure.nosuch", "no figure format .nosuch")])
def test_plot_to_a_folder_or_unknown_format_fails_before_the_work(tmp_path, capsys, monkeypatch, name, fragment):
    compare_module = sys.modules["statespace.evaluation.compare"]
    monkeypatch.setattr(compare_module, "compare", lambda *a, **k: pytest.fail("compared before the check"))
    target = tmp_path if name == "." else tmp_path / name
    code, out, err = run(capsys, "compare", "--scenario", "balanced", "--methods", "elo", "--plot", target)
    assert_one_line_error(code, err, "cannot write plot", fragment)
    assert os.listdir(tmp_path) == []


def test_closed_stdout_is_an_error(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)  # what Python sets when the process has no fd 1
    code = main(["rate", "--scenario", "balanced", "--json"])
    err = capsys.readouterr().err
    assert_one_line_error(code, err, "cannot write the output to standard output: it is closed")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_disk_is_an_error(capsys, monkeypatch):
    with open("/dev/full", "w") as full:
        monkeypatch.setattr(sys, "stdout", full)
        code = main(["rate", "--scenario", "balanced", "--json"])
        monkeypatch.undo()
        err = capsys.readouterr().err
    assert_one_line_error(code, err, "cannot write the output to standard output: No space left on device")
