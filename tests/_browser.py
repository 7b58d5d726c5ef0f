"""Headless Chromium for the browser tests (the rating lab, the offline docs site): the system's
Chromium (Debian's package at /usr/bin/chromium) driven by Playwright.

A missing Playwright or Chromium skips a test, except under ``CI``, where ``.ci/run`` installs
Chromium and a missing browser is a failure."""

from __future__ import annotations

import contextlib
import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"
# no first-run, sync, update or background traffic: the tests count every request the page makes
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def need(condition: bool, reason: str, what: str) -> None:
    """Skip with ``reason`` unless ``condition``; under ``CI`` fail instead, naming ``what`` must run."""
    if condition:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI installs it: {what} must run there)")
    pytest.skip(reason)


@contextlib.contextmanager
def chromium(what: str):
    """A launched headless Chromium (Playwright's ``Browser``), closed on exit; ``what``: the test
    that needs it, for the message when it is missing under CI."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    need(sync_playwright is not None, "playwright is not installed", what)
    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    need(executable is not None, f"no Chromium at {CHROMIUM}", what)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
