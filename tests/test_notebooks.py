"""The derivation notebooks (docs/notebooks/*.md, MyST text notebooks) run end to end.

Each notebook derives its equations, checks them with ``assert`` and plots them; a failing
assert (or any error) fails its test. The notebooks are read with jupytext and executed with
nbclient in a kernel that runs *this* interpreter (a kernelspec written to a temporary folder
that ``JUPYTER_PATH`` puts first), so a fresh virtual environment with the ``test`` extra is
enough. PyMC's compiled code goes to a temporary folder (``PYTENSOR_FLAGS``) unless the flags
already name one.
"""

from __future__ import annotations

import json
import re
import os
import sys
import time
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("[0-9][0-9]_*.md"))
TIMEOUT = 600  # seconds per cell


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """Environment of the notebook kernels: a ``python3`` kernelspec for this interpreter, the
    project importable, headless plots, PyTensor's cache in a temporary folder, the development
    data sets as the data home when they are there."""
    base = tmp_path_factory.mktemp("jupyter")
    spec = base / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (statespace-ratings tests)", "language": "python"}))
    saved = dict(os.environ)
    os.environ["JUPYTER_PATH"] = os.pathsep.join([str(base), *filter(None, [saved.get("JUPYTER_PATH")])])
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [saved.get("PYTHONPATH")])])
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ.pop("STATESPACE_DATA", None)  # the real-data notebook reads the shipped data sets
    flags = saved.get("PYTENSOR_FLAGS", "")
    if "compiledir" not in flags:
        cache = tmp_path_factory.getbasetemp().parent / "statespace-nb-pytensor"
        os.environ["PYTENSOR_FLAGS"] = (flags + "," if flags else "") + f"base_compiledir={cache}"
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_there_are_seven_notebooks():
    assert [p.name[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07"], NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, kernel_env):
    nb = jupytext.read(path)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", "the jupytext header must name the python3 kernel"
    n_asserts = sum(c.source.count("assert ") for c in nb.cells if c.cell_type == "code")
    assert n_asserts >= 3, f"{path.name}: a derivation notebook checks its equations with asserts"
    client = nbclient.NotebookClient(nb, timeout=TIMEOUT, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:  # the failing cell, its traceback
        pytest.fail(f"{path.name} failed:\n{exc}", pytrace=False)
    seconds = time.perf_counter() - t0
    figures = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if "image/png" in o.get("data", {}))
    assert figures >= 1, f"{path.name} draws no figure"
    print(f"{path.name}: {seconds:.1f} s, {figures} figure(s)")


def test_the_real_data_notebook_reads_the_shipped_data_sets_and_no_path():
    """Notebook 07 loads international football and the NFL from the package (no stand-ins, no
    folder outside the repository): it runs the same on any machine."""
    text = (ROOT / "docs" / "notebooks" / "07_real_data.md").read_text()
    assert 'ss.datasets.load("intl_football")' in text and 'ss.datasets.load("nfl")' in text
    assert 'ss.datasets.reference("nfl"' in text
    for word in ("STATESPACE_DATA", "stand-in", "simulate(", "../shared", "from_csv("):
        assert word not in text, word


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_a_lesson(path):
    """Each notebook is a lesson of one course: a learning goal at the top, the glossary's notation
    (notebook 1 holds it, the others link it), 3-5 exercises with hidden solutions, references that
    point to the bibliography, and a named SEED for any random draw (so a student can change it)."""
    text = path.read_text()
    head = text[: len(text) // 3]
    assert "**Learning goal.**" in head, f"{path.name}: no learning goal near the top"
    if path.name.startswith("01"):
        assert "\n## Notation\n" in text, "notebook 1 holds the course's glossary under '## Notation'"
    else:
        assert "01_model.md#notation" in text, f"{path.name}: does not link the glossary (01_model.md#notation)"
    assert "\n## Try this\n" in text and "\n## References\n" in text, f"{path.name}: no exercises or references"
    exercises = text[text.index("\n## Try this\n"): text.index("\n## References\n")]
    n_exercises = len(re.findall(r"^\d+\. ", exercises, flags=re.M))
    n_solutions = exercises.count("<details><summary>Solution</summary>")
    assert 3 <= n_exercises <= 5 and n_solutions == n_exercises, (path.name, n_exercises, n_solutions)
    references = text[text.index("\n## References\n"):]
    assert "../bibliography.md" in references, f"{path.name}: references do not point to the bibliography"
    code = "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "code")
    if re.search(r"default_rng\(|seed=", code):
        assert re.search(r"^[^#\n]*\bSEED\b[^\n=]*=(?!=)", code, flags=re.M), f"{path.name}: random draws without a SEED"
        assert not re.search(r"(default_rng\(|seed=)\d", code), f"{path.name}: a seed written as a number, not SEED"
