"""Sphinx configuration: the statespace-ratings documentation.

Build (one command, from the repository root)::

    python -m pip install -e ".[docs]" && python -m sphinx -b html docs docs/_build/html

Pages are MyST Markdown; the derivation notebooks in ``notebooks/`` are MyST text notebooks
executed by myst-nb at build time (cached in ``docs/_build/.jupyter_cache``), so a failing
``assert`` in a notebook fails the build (CI builds with ``-W``: every warning is an error).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # the packages, also when the project is not installed
_pp = os.environ.get("PYTHONPATH", "")
if str(ROOT) not in _pp.split(os.pathsep):  # and in the notebooks' kernels
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + _pp if _pp else "")

# Notebook kernels and plots: headless, compile caches out of the home directory.
os.environ.setdefault("MPLBACKEND", "Agg")
if "compiledir" not in os.environ.get("PYTENSOR_FLAGS", ""):
    _flags = os.environ.get("PYTENSOR_FLAGS", "")
    os.environ["PYTENSOR_FLAGS"] = (_flags + "," if _flags else "") + (
        "base_compiledir=" + os.path.join(tempfile.gettempdir(), "statespace-docs-pytensor"))


def _kernel_for_this_interpreter() -> None:
    """Make the notebooks' ``python3`` kernel run *this* interpreter (the one with the project
    and its dependencies), whatever other ``python3`` kernelspecs the machine has: a kernelspec
    in a folder that ``JUPYTER_PATH`` puts first. (The notebooks choose retina figures
    themselves, ``%config InlineBackend.figure_formats``, as a student's Jupyter runs them.)"""
    tag = hashlib.sha1(sys.executable.encode()).hexdigest()[:12]     # one folder per interpreter
    base = Path(tempfile.gettempdir()) / f"statespace-docs-kernel-{tag}"
    spec = base / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (statespace-ratings docs)", "language": "python"}))
    paths = os.environ.get("JUPYTER_PATH", "")
    if str(base) not in paths.split(os.pathsep):
        os.environ["JUPYTER_PATH"] = str(base) + (os.pathsep + paths if paths else "")


_kernel_for_this_interpreter()

# -- Project ---------------------------------------------------------------------------------
project = "statespace-ratings"
author = "statespace-ratings developers"
copyright = "statespace-ratings developers (MIT licence)"
try:
    from statespace import __version__ as release
except Exception:  # pragma: no cover - the API pages will say what failed
    release = "0.1.0"
version = release

# -- Extensions ------------------------------------------------------------------------------
extensions = [
    "myst_nb",                 # MyST Markdown pages and MyST text notebooks
    "sphinx.ext.autodoc",      # the API reference from the docstrings
    "sphinx.ext.napoleon",     # NumPy-style "Parameters" sections
    "sphinx.ext.mathjax",      # MathJax 2.7 served from the built site (below): works offline
    "sphinx.ext.viewcode",     # [source] links next to every documented object
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "jupyter_cache", ".jupyter_cache", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]

# -- MyST --------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 4   # [text](page.md#a-heading) links, as the pages use them
myst_dmath_double_inline = True
# MyST would write a MathJax 3/4 configuration (window.MathJax = {...}), which replaces a
# MathJax 2 configuration, and hide each page's top section from MathJax; ours is below.
myst_update_mathjax = False

# -- Math: MathJax 2.7 from the built site, no CDN -------------------------------------------
# A classroom without internet must still see equations, so MathJax is copied at build time
# from the jupyter-server-mathjax wheel (the docs extra) into _static/mathjax: the combined
# TeX + AMS config (its input, HTML-CSS output and tex2jax are inside that one file), the
# extensions and output pieces it loads on demand, and the STIX-Web web fonts, the only fonts
# that wheel ships (about 2 MB; the 2 MB of localisations, the SVG output and the a11y
# extensions are left out). Sphinx refuses a query string in a local asset path, so the
# config file is named in the in-page configuration rather than as ``?config=``.
mathjax_path = "mathjax/MathJax.js"
mathjax2_config = {
    "config": ["TeX-AMS-MML_HTMLorMML-full.js"],
    # Sphinx writes \(...\) and \[...\]; "$" stays text (prices, shell variables in prose).
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]],
                "processEscapes": True, "processEnvironments": True},
    "HTML-CSS": {"availableFonts": ["STIX-Web"], "preferredFont": "STIX-Web",
                 "webFont": "STIX-Web", "imageFont": None},
    "MMLorHTML": {"prefer": "HTML"},   # the same output in every browser
    # the quick preview before typesetting uses MathJax's TeX fonts, which the wheel lacks
    "fast-preview": {"disabled": True},
    "menuSettings": {"zoom": "None"},
    # The hidden MathML kept for screen readers is styled by MathJax's NativeMML rules, whose
    # script, double-struck, fraktur and calligraphic fonts are TeX web fonts that the wheel does
    # not ship (each \mathcal or \mathbb would request a missing file): plain serif instead.
    "NativeMML": {"styles": {sel: {"font-family": "serif"} for sel in (
        '[mathvariant="double-struck"]', '[mathvariant="script"]', '[mathvariant="fraktur"]',
        '[mathvariant="bold-script"]', '[mathvariant="bold-fraktur"]',
        '[class="MJX-tex-caligraphic"]', '[class="MJX-tex-caligraphic-bold"]',
        '[class="MJX-tex-oldstyle"]', '[class="MJX-tex-oldstyle-bold"]')}},
    "showMathMenu": False,             # its language menu would fetch localisations
}

# -- Notebook execution (myst-nb) -----------------------------------------------------------
nb_execution_mode = os.environ.get("STATESPACE_DOCS_EXECUTE", "cache")   # "off" for a quick look
# jupyter-cache keys a notebook on its code: a changed cell re-executes it
nb_execution_cache_path = str(DOCS / "_build" / ".jupyter_cache")
nb_execution_timeout = 600           # per cell, seconds
nb_execution_raise_on_error = True   # a failing assert fails the build
nb_execution_show_tb = True
nb_merge_streams = True
nb_kernel_rgx_aliases = {".*": "python3"}

# -- API reference ---------------------------------------------------------------------------
autodoc_default_options = {
    "members": True,
    "undoc-members": True,
    "show-inheritance": True,
    "member-order": "bysource",
}
autodoc_typehints = "description"
autodoc_typehints_description_target = "documented_params"
autodoc_class_signature = "mixed"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
napoleon_custom_sections = [("Class attributes", "params_style")]  # more added by the hook below

# -- HTML ------------------------------------------------------------------------------------
html_theme = "furo"
html_title = "statespace-ratings"


# -- Docstrings: small layout fixes at build time (the source docstrings stay plain text) -----
import re as _re

_PARAM_LINE = _re.compile(r"^\*{0,2}[A-Za-z_]\w*(\s*,\s*\*{0,2}[A-Za-z_]\w*)*\s*(:.*)?$")
_SECTION_WORDS = {"parameters", "other parameters", "returns", "yields", "raises", "attributes",
                  "class attributes", "notes", "examples", "references", "see also", "warns", "methods"}


def _plain_docstring_layout(app, what, name, obj, options, lines):
    """Run before napoleon (priority 400 < 500) on every docstring:

    1. prose that follows a NumPy ``Parameters`` block without a section header of its own gets
       a ``Notes`` header, so that napoleon does not read each of its sentences as a parameter;
    2. an underlined heading that is not a NumPy section ends the section before it (it is
       registered as a custom napoleon section, shown as a rubric);
    3. ``name: description`` on one line inside such a section becomes NumPy's ``name`` and an
       indented description;
    4. an indented block after an unindented paragraph (the docstrings' displayed equations,
       ``E(x) = ...``) is shown as a literal block, as written, instead of a block quote in
       which ``*`` and ``-`` would be read as markup.
    """
    out: list[str] = []
    i, n = 0, len(lines)
    in_params = False
    while i < n:
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < n else ""
        is_header = (line.strip() and _re.fullmatch(r"-{3,}", nxt.strip() or "x")
                     and not line.startswith(" ") and len(nxt.strip()) >= len(line.strip()) - 2)
        if is_header:
            title = line.strip()
            if title.lower() in _SECTION_WORDS:
                in_params = title.lower() in {"parameters", "other parameters", "attributes", "class attributes"}
                out += [line, nxt]
            else:  # a heading of the docstring's own: a napoleon section shown as a rubric
                in_params = False
                if app is not None and title not in app.config.napoleon_custom_sections:
                    app.config.napoleon_custom_sections = [*app.config.napoleon_custom_sections, title]
                out += [line, nxt]
            i += 2
            continue
        m = _re.match(r"^(\w+):\s+(\S.*)$", line) if in_params else None
        if m:  # "name: description" on one line: NumPy's "name" + indented description
            out += [m.group(1), "    " + m.group(2)]
            i += 1
            continue
        prev_blank = not out or not out[-1].strip()
        if (in_params and line.strip() and not line.startswith(" ") and prev_blank
                and not _PARAM_LINE.match(line.strip())):
            in_params = False
            out += ["Notes", "-----"]
        if (line.startswith("    ") and line.strip() and prev_blank and not in_params):
            # the last non-blank line before this block
            j = len(out) - 1
            while j >= 0 and not out[j].strip():
                j -= 1
            before = out[j] if j >= 0 else ""
            if (before and not before.startswith(" ") and not before.rstrip().endswith("::")
                    and not before.lstrip().startswith((".. ", "- ", "* ", ":")) and not _re.match(r"^\d+\.\s", before)):
                out += ["::", ""]
        out.append(line)
        i += 1
    lines[:] = out


# -- MathJax's files and the notebooks' .ipynb downloads, written into the built site ---------
_MATHJAX_KEEP = ("MathJax.js", "LICENSE", "config/TeX-AMS-MML_HTMLorMML-full.js",
                 "extensions", "jax", "fonts")
_MATHJAX_SKIP = ("extensions/a11y", "jax/output/SVG")


def _mathjax_source() -> Path:
    """The MathJax 2.7 folder of the installed jupyter-server-mathjax (found without importing
    it: its package imports jupyter_server)."""
    import importlib.util

    spec = importlib.util.find_spec("jupyter_server_mathjax")
    if spec is None or not spec.submodule_search_locations:
        from sphinx.errors import ExtensionError
        raise ExtensionError("the docs serve MathJax from the jupyter-server-mathjax package, which "
                             "is not installed: python -m pip install -e \".[docs]\"")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


def _copy_mathjax(app) -> None:
    if app.builder.format != "html":
        return
    import shutil

    src, dest = _mathjax_source(), Path(app.outdir) / "_static" / "mathjax"
    for rel in _MATHJAX_KEEP:
        if (src / rel).is_dir():
            shutil.copytree(src / rel, dest / rel, dirs_exist_ok=True,
                            ignore=lambda d, names: [n for n in names if any(
                                (Path(d) / n) == src / skip for skip in _MATHJAX_SKIP)])
        else:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, dest / rel)


_NB_PREFIX = "notebooks/"


def _notebook_download(app, pagename, templatename, context, doctree) -> None:
    """Each derivation notebook page: write the notebook as ``.ipynb`` (jupytext's conversion of
    the MyST text notebook, without outputs: Jupyter runs it) beside the page, and put a download
    link under the page's title."""
    if not pagename.startswith(_NB_PREFIX) or app.builder.format != "html":
        return
    source = DOCS / (pagename + ".md")
    if not source.is_file() or "body" not in context:
        return
    import jupytext
    import nbformat

    nb = jupytext.read(source)
    target = Path(app.outdir) / (pagename + ".ipynb")
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(target))
    name = target.name
    link = (f'<p class="notebook-download"><a href="{name}" download="{name}">'
            f"Download this notebook (.ipynb)</a> · "
            f'<a href="{context["pathto"]("notebooks_in_jupyter")}">using the notebooks in Jupyter</a></p>\n')
    body = context["body"]
    end = body.find("</h1>")
    # under the title; a page without one gets the link first
    context["body"] = (body[:end + 5] + "\n" + link + body[end + 5:]) if end >= 0 else link + body


def setup(app):
    app.connect("autodoc-process-docstring", _plain_docstring_layout, priority=400)
    app.connect("builder-inited", _copy_mathjax)
    app.connect("html-page-context", _notebook_download)
