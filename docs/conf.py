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
    in a folder that ``JUPYTER_PATH`` puts first. Its inline figures are ``retina`` PNGs (twice
    the pixels; myst-nb shows them at their size from the output's width and height), crisp on
    high-density screens."""
    tag = hashlib.sha1(sys.executable.encode()).hexdigest()[:12]     # one folder per interpreter
    base = Path(tempfile.gettempdir()) / f"statespace-docs-kernel-{tag}"
    spec = base / "kernels" / "python3"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                 "--InlineBackend.figure_formats=retina"],
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
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",     # [source] links next to every documented object
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
root_doc = "index"
exclude_patterns = ["_build", "jupyter_cache", ".jupyter_cache", "**.ipynb_checkpoints", "Thumbs.db", ".DS_Store"]

# -- MyST --------------------------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 4   # [text](page.md#a-heading) links, as the pages use them
myst_dmath_double_inline = True

# -- Notebook execution (myst-nb) -----------------------------------------------------------
nb_execution_mode = os.environ.get("STATESPACE_DOCS_EXECUTE", "cache")   # "off" for a quick look
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


def setup(app):
    app.connect("autodoc-process-docstring", _plain_docstring_layout, priority=400)
