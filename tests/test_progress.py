"""Progress bars only where someone watches (statespace._runtime.progress): a terminal or a notebook gets
the live bar, a file or a pipe never gets its carriage-return redraws."""

from __future__ import annotations

import io
import sys

import pytest

from statespace._runtime import progress as _progress
from statespace.app.cli import main


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def at_once(monkeypatch):
    """``progress=None`` bars due at once (no wait for slow work)."""
    monkeypatch.setattr(_progress, "PROGRESS_AFTER", 0.0)


def work(progress):
    with _progress.bar(3, "work", progress) as b:
        _progress.note(b, "step one")
        b.update(3)


def test_default_progress_writes_nothing_to_a_file(capsys, at_once):
    work(None)
    assert capsys.readouterr().err == ""


def test_default_progress_shows_on_a_terminal(monkeypatch, at_once):
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    work(None)
    text = screen.getvalue()
    assert "\r" in text and "3/3" in text and "step one" in text


def test_asked_for_progress_in_a_file_is_whole_lines(capsys):
    work(True)
    err = capsys.readouterr().err
    assert "\r" not in err
    lines = err.splitlines()
    assert lines and all(line.startswith("work:") for line in lines)
    assert "3/3" in lines[-1] and any("step one" in line for line in lines)


def test_no_progress_is_nothing(monkeypatch):
    screen = Terminal()
    monkeypatch.setattr(sys, "stderr", screen)
    work(False)
    assert screen.getvalue() == ""


def test_the_command_line_writes_no_bar_to_a_log(capsys, at_once):
    """compare's bar, due at once, stays out of stderr that is not a terminal."""
    code = main(["compare", "--scenario", "balanced", "--methods", "elo"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert err == ""


def test_datasets_fetch_shows_its_download_bar_only_on_a_terminal(monkeypatch, capsys, tmp_path):
    from statespace.data import datasets

    seen = []
    monkeypatch.setattr(datasets, "fetch", lambda name, progress=True: seen.append(progress) or tmp_path)
    assert main(["datasets", "--fetch", "atp_tennis"]) == 0
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(["datasets", "--fetch", "atp_tennis"]) == 0
    assert seen == [False, True]
