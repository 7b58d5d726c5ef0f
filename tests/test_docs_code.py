"""Every code block of README.md and docs/getting_started.md runs as written, from a fresh clone.

Each page's blocks run in order in one empty folder, as a reader would paste them: the Python
blocks in one interpreter (a later block sees the names of the earlier ones), the shell blocks
line by line as ``statespace`` commands. Commands that install the package
or run the test suite or the docs build are what ``.ci/run`` runs: they are checked to be there,
verbatim, instead of being run again from inside the suite. No block may name a path outside the
repository.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "docs/getting_started.md"]
CI = (ROOT / ".ci" / "run").read_text()
CI_LINES = {line.strip() for line in CI.splitlines() if line.strip() and not line.lstrip().startswith("#")}
#: every command ``.ci/run`` runs: its lines and the parts of its ``a && b`` lines
CI_COMMANDS = CI_LINES | {part.strip() for line in CI_LINES for part in line.split("&&")}


def _blocks(text: str) -> list[tuple[str, str]]:
    return [(lang, body) for lang, body in re.findall(r"```(python|bash)\n(.*?)```", text, flags=re.S)]


def _ci_runs(command: str) -> bool:
    """``.ci/run`` runs ``command`` verbatim (the docs build with ``-W`` added: warnings are errors)."""
    return command in CI_COMMANDS or command.replace("python -m sphinx ", "python -m sphinx -W ") in CI_COMMANDS


def _is_ci_command(command: str) -> bool:
    return "pip install" in command or "pytest" in command or "sphinx" in command


def _run(args, cwd: Path, what: str, timeout: float = 900) -> None:
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT)}
    env.pop("STATESPACE_DATA", None)  # the pages must work without any data folder
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{what} failed (exit {done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    print(done.stderr[-3000:])  # the driver's seconds per step (pytest shows it with -s or on failure)


@pytest.mark.parametrize("page", PAGES)
def test_no_block_names_a_path_outside_the_repository(page):
    for lang, body in _blocks((ROOT / page).read_text()):
        assert "../" not in body and "/work/" not in body and "shared/data" not in body, body


#: runs a page's steps in order in one interpreter: Python blocks share one namespace, shell
#: commands run as child processes, and the first failure stops it with the step named
DRIVER = r"""
import json, subprocess, sys, time, traceback
steps = json.load(open(sys.argv[1]))
ns = {"__name__": "__main__"}
for what, kind, text in steps:
    t0 = time.perf_counter()
    if kind == "python":
        try:
            exec(compile(text, what, "exec"), ns)
        except BaseException:
            traceback.print_exc()
            sys.exit(f"FAILED: {what}")
    else:
        done = subprocess.run([sys.executable, "-m", "statespace", *json.loads(text)], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"FAILED: {what} (exit {done.returncode})\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    print(f"{time.perf_counter() - t0:7.1f} s  {what}", file=sys.stderr)
"""


def _steps(page: str) -> list[tuple[str, str, str]]:
    """The page's runnable steps ``(what, kind, text)`` in order; commands ``.ci/run`` runs are
    checked to be there and left out."""
    steps = []
    for i, (lang, body) in enumerate(_blocks((ROOT / page).read_text())):
        if lang == "python":
            steps.append((f"{page}, Python block {i + 1}", "python", body))
            continue
        for line in body.splitlines():
            command = line.split("  #", 1)[0].strip()
            if not command or command.startswith("#"):
                continue
            if _is_ci_command(command):
                assert _ci_runs(command), f"{page}: {command!r} is not what .ci/run runs"
                continue
            if _ci_runs(command):
                continue
            words = shlex.split(command)
            assert words[0] == "statespace", f"{page}: unexpected shell command {command!r}"
            steps.append((f"{page}: {command}", "shell", json.dumps(words[1:])))
    return steps


@pytest.mark.parametrize("page", PAGES)
def test_every_code_block_runs_as_written(page, tmp_path):
    steps = _steps(page)
    assert any(kind == "python" for _, kind, _ in steps) and any(kind == "shell" for _, kind, _ in steps)
    (tmp_path / "steps.json").write_text(json.dumps(steps))
    (tmp_path / "driver.py").write_text(DRIVER)
    _run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path / "steps.json")], tmp_path, page)


def test_the_first_quick_start_command_is_run_by_ci():
    readme = (ROOT / "README.md").read_text()
    first = _blocks(readme.split("## Quick start", 1)[1])[0][1].strip()
    assert _ci_runs(first)
