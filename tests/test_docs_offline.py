"""The documentation site works without internet: built pages opened in headless Chromium (the
system's package, driven by Playwright, as in test_lab_browser.py) from a server on 127.0.0.1, with
every request to another host blocked and recorded.

For the index, a derivation notebook and the API page it checks that
(a) no request left the machine and every local request was answered (MathJax's files, fonts);
(b) MathJax (served from the site's ``_static/mathjax``) typeset the page's equations: every
    math element holds MathJax output, none is a MathJax error, and no TeX delimiter is left in
    the visible text;
(c) the notebook page's "Download this notebook (.ipynb)" link resolves to a valid notebook.

Without a browser, from the built HTML alone: (d) the API page shows the docstrings' equations as
math (Sphinx's ``math`` elements, which MathJax typesets), in every kernel's module, and no TeX
command (``\\frac``, ``\\sum``, ...) is left in the page's text outside them, where a reader
would see it raw.

The site: ``STATESPACE_DOCS_HTML`` names a built one (.ci/run sets it after its docs build, so the
site checked is the one CI built, notebooks executed); without it the test builds one into a
temporary folder with notebook execution off (about 40 s), and skips when the docs' packages
(``pip install -e ".[docs]"``) are missing. A missing Chromium or Playwright skips it, except
under ``CI``, where it fails.
"""

from __future__ import annotations

import functools
import html.parser
import http.server
import os
import re
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urljoin, urlparse

import pytest
from _browser import chromium

ROOT = Path(__file__).resolve().parents[1]
LOCAL_HOSTS = {"127.0.0.1", "localhost", ""}
NOTEBOOK_PAGE = "notebooks/01_model.html"
PAGES = ["index.html", NOTEBOOK_PAGE, "api.html"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    given = os.environ.get("STATESPACE_DOCS_HTML")
    if given:
        path = Path(given).resolve()
        assert (path / "index.html").is_file(), f"STATESPACE_DOCS_HTML={given}: no index.html there"
        return path
    # Without a built site, build one: only where the docs' packages are installed (CI's test
    # run has the test extra only, and runs this test again after its docs build).
    for module in ("sphinx", "myst_nb", "furo", "jupyter_server_mathjax"):
        try:
            __import__(module)
        except ImportError:
            pytest.skip(f"{module} is not installed (pip install -e \".[docs]\"), and "
                        "STATESPACE_DOCS_HTML names no built site")
    out = tmp_path_factory.mktemp("docs")
    env = {**os.environ, "STATESPACE_DOCS_EXECUTE": "off"}
    run = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", str(ROOT / "docs"),
                          str(out / "html"), "-d", str(out / "doctrees")],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, f"the docs build failed:\n{run.stderr[-4000:]}"
    return out / "html"


@pytest.fixture(scope="module")
def site_url(site):
    """The built site served over HTTP on a free port of 127.0.0.1, in a thread."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()
    thread.join(10)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test reports failures itself
        pass


@pytest.fixture(scope="module")
def browser():
    with chromium("the offline docs test") as b:
        yield b


_MATHJAX_LOADED = "() => !!(window.MathJax && MathJax.Hub && MathJax.Hub.Queue)"
# Resolves once MathJax has finished its queue (typesetting included) on the page.
_MATHJAX_DONE = "() => new Promise(resolve => MathJax.Hub.Queue(() => resolve(true)))"

# Per Sphinx math element: did MathJax replace its TeX by output? And any error, any raw TeX left.
_MATH_STATE = """() => {
    // Sphinx's math elements (MathJax's own output has spans of class "math" too)
    const maths = [...document.querySelectorAll('.math.notranslate')];
    return {
        n: maths.length,
        typeset: maths.filter(m => m.querySelector('.MathJax, .MathJax_Display, .MathJax_CHTML')).length,
        errors: document.querySelectorAll('.MathJax_Error, merror, .merror').length,
        raw: maths.filter(m => /\\\\\\(|\\\\\\[|\\$\\$/.test(m.innerText)).map(m => m.innerText.slice(0, 80)),
        body: document.querySelector('article') ? document.querySelector('article').innerText : document.body.innerText,
    };
}"""


@pytest.mark.parametrize("page_path", PAGES)
def test_page_renders_offline(browser, site_url, page_path):
    outside: list[str] = []
    failed: list[str] = []
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    try:
        def route(r):
            # only this machine: anything else is recorded and refused, as with no network
            if urlparse(r.request.url).hostname in LOCAL_HOSTS or r.request.url.startswith(("data:", "blob:")):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.set_default_timeout(30_000)  # a bound on the waits, not a speed check
        page.on("response", lambda resp: failed.append(f"{resp.status} {resp.url}") if resp.status >= 400 else None)
        page.on("requestfailed", lambda req: failed.append(f"failed {req.url}")
                if urlparse(req.url).hostname in LOCAL_HOSTS else None)
        page.goto(urljoin(site_url, page_path), wait_until="load")
        state = page.evaluate(_MATH_STATE)
        if state["n"]:  # a page with equations loads MathJax; it must typeset all of them
            try:
                page.wait_for_function(_MATHJAX_LOADED)
            except Exception as exc:  # Playwright's TimeoutError: say what it means here
                raise AssertionError(f"{page_path}: MathJax did not load (requests blocked: "
                                     f"{outside}; failed: {failed})") from exc
            page.evaluate(_MATHJAX_DONE)
            state = page.evaluate(_MATH_STATE)
            assert state["typeset"] == state["n"], (
                f"{page_path}: MathJax typeset {state['typeset']} of {state['n']} equations")
            assert state["errors"] == 0, f"{page_path}: {state['errors']} MathJax errors"
            assert not state["raw"], f"{page_path}: raw TeX left on the page: {state['raw'][:3]}"
        assert "$$" not in state["body"], f"{page_path}: '$$' in the visible text"
        page.wait_for_load_state("networkidle")
        assert not outside, f"{page_path}: requests left the machine: {outside}"
        assert not failed, f"{page_path}: local requests failed: {failed}"
        if page_path == "index.html":
            # the index has equations (its table's update rules): the MathJax branch above ran
            assert state["n"] > 0, "index.html has no math elements: the MathJax check did not run"
    finally:
        context.close()


def test_notebook_page_has_math_and_a_valid_ipynb_download(browser, site_url):
    nbformat = pytest.importorskip("nbformat")
    context = browser.new_context()
    try:
        context.route("**/*", lambda r: r.continue_() if urlparse(r.request.url).hostname in LOCAL_HOSTS
                      else r.abort())
        page = context.new_page()
        page.goto(urljoin(site_url, NOTEBOOK_PAGE), wait_until="load")
        assert page.locator(".math.notranslate").count() > 10, "the notebook page should show its derivations"
        link = page.get_by_role("link", name="Download this notebook (.ipynb)")
        assert link.count() == 1, "no download link on the notebook page"
        href = urljoin(page.url, link.get_attribute("href"))
    finally:
        context.close()
    assert urlparse(href).hostname == "127.0.0.1", href
    with urllib.request.urlopen(href, timeout=30) as resp:
        text = resp.read().decode("utf-8")
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)  # raises on an invalid notebook
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and any("statespace" in c.source for c in code), "the notebook lost its code cells"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


# -- The API page's equations (the docstrings': Sphinx math roles and directives) ---------------

#: Modules on the API page whose docstrings state equations: each must show some as math.
API_MATH_MODULES = [
    "statespace.model.skillmodel", "statespace.model.observation", "statespace.model.outcome", "statespace.model.margin",
    "statespace.model.goals", "statespace.model.metrics",
    "filters.elo", "filters.glicko", "filters.trueskill", "filters.wenglin", "filters.ekf_full",
    "filters.stephenson", "filters.ecf", "filters.dwz", "filters.pythagorean",
    "smoothers.laplace", "smoothers.rts", "smoothers.ttt", "smoothers.pymc_smoother",
    "smoothers._static", "smoothers.colley", "smoothers.massey", "smoothers.keener",
]
#: Equations the page must show as math, by module (TeX as written in the docstrings, spaces aside)
API_EQUATIONS = {
    "filters.elo": [r"E_a = \frac{1}{1 + 10^{-(r_a - r_b + h) / 400}}",
                    r"r_a \leftarrow r_a + K \sum_\text{games} (y - E_a)"],
    "filters.glicko": [r"\frac{1}{d^2} &= q^2 \sum_j g(\mathrm{RD}_j)^2 E_j (1 - E_j)"],
    "statespace.model.outcome": [r"P(a \text{ wins} \mid d) = F(d / \alpha)"],
}
#: a TeX command (a backslash and letters) in the text a reader sees
_TEX_COMMAND = re.compile(r"\\[A-Za-z]+")


class _MathText(html.parser.HTMLParser):
    """The page's text split into Sphinx's math elements (``span.math``, ``div.math``: their TeX,
    by module) and the rest (scripts and styles left out)."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
            "track", "wbr"}

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, bool]] = []   # open elements: (tag, opens a math element)
        self.module = None                         # the automodule whose part of the page this is
        self.math: list[tuple[str | None, str]] = []   # (module, TeX) per math element
        self.outside: list[str] = []
        self._current: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if (attrs.get("id") or "").startswith("module-"):
            self.module = attrs["id"][len("module-"):]
        if tag in self.VOID:
            return
        opens = "math" in (attrs.get("class") or "").split() and self._current is None
        if opens:
            self._current = []
        self.stack.append((tag, opens))

    def handle_endtag(self, tag):
        while self.stack:
            open_tag, opens = self.stack.pop()
            if opens:
                self.math.append((self.module, "".join(self._current)))
                self._current = None
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self._current is not None:
            self._current.append(data)
        elif not any(t in ("script", "style") for t, _ in self.stack):
            self.outside.append(data)


def _api_math(site: Path) -> _MathText:
    parser = _MathText()
    parser.feed((site / "api.html").read_text(encoding="utf-8"))
    parser.close()
    return parser


def _squeeze(tex: str) -> str:
    return re.sub(r"\s+", "", tex)


def test_api_page_shows_the_docstrings_equations_as_math(site):
    """The docstrings' equations reach the API page as Sphinx math (``\\(...\\)``, ``\\[...\\]`` in
    math elements, typeset by MathJax), and no TeX command is left in the page's text outside them."""
    page = _api_math(site)
    by_module: dict[str, list[str]] = {}
    for module, tex in page.math:
        by_module.setdefault(module, []).append(tex)
    assert len(page.math) >= 200, f"only {len(page.math)} math elements on the API page"
    missing = [m for m in API_MATH_MODULES if not by_module.get(m)]
    assert not missing, f"modules whose docstrings show no math on the API page: {missing}"
    for module, equations in API_EQUATIONS.items():
        shown = [_squeeze(tex) for tex in by_module[module]]
        for equation in equations:
            assert any(_squeeze(equation) in tex for tex in shown), (
                f"{module}: {equation!r} is not in a math element of the API page")
    # every math element holds TeX in MathJax's delimiters, as Sphinx writes it
    undelimited = [tex for _, tex in page.math if not re.fullmatch(r"\s*(\\\(.*\\\)|\\\[.*\\\])\s*", tex, re.S)]
    assert not undelimited, f"math elements without \\( \\) or \\[ \\]: {undelimited[:3]}"
    text = "".join(page.outside)
    raw = sorted({m.group(0) for m in _TEX_COMMAND.finditer(text)})
    where = [text[max(0, m.start() - 60):m.end() + 20] for m in _TEX_COMMAND.finditer(text)][:3]
    assert not raw, f"TeX commands outside math on the API page: {raw}, e.g. {where}"
