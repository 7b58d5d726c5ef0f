"""Where a newcomer's first run goes: import, compilation and the run itself, method by method.

Each measurement is a fresh process with an empty numba cache (a new ``NUMBA_CACHE_DIR``) and, for
a cold one, no bytecode of the packages' sources, as after ``pip install -e .`` from a fresh clone;
the warm ones reuse both; wall and CPU seconds of the child are read from the operating
system (``getrusage`` of finished children), so the figures include start-up and imports as a user
meets them. Small work runs as plain Python until compiling pays (``statespace._runtime.tier``,
``STATESPACE_JIT=auto``, the default); ``STATESPACE_JIT=always`` compiles everything a run calls,
as before that rule, which is where the compile costs below come from:

1. ``import statespace, filters, smoothers`` alone;
2. README's main job, ``statespace compare`` (built-in default), cold, then again warm (the cache
   the cold run left), by default and with ``STATESPACE_JIT=always``;
3. ``statespace compare --methods elo`` cold, both ways;
4. per method of the default list, in one cold process over the main job's games
   (``scenarios.balanced(seed=0)``) with ``STATESPACE_JIT=always``: the first ``fit`` (compilation,
   then the run) and a second ``fit`` (the run alone), their difference the method's compile cost;
   and in another cold process by default, the first ``fit`` (interpreted);
5. ``Games.from_arrays`` of 1,000,000 games between 1,000,000 and between 1,000 string-named
   competitors, its first and second call, and ``predict_proba`` of one game after fitting the first
   with Elo (warm: compiled by a first call on a hundred games with ``STATESPACE_JIT=always``);
   beside them, as a control, the time to allocate and fill 160 MB twice (on a virtual machine
   the first touch of fresh memory is slow: the host backs the guest's pages then).

Usage::

    python benchmarks/first_run.py            # everything (about three minutes on 2 cores)
    python benchmarks/first_run.py --skip-arrays
    python benchmarks/first_run.py --only-arrays --arrays-runs 5   # the million-name call, five children

The Elo loop against a plain numba loop is ``benchmarks/bench_floor.py``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import cpu_name, git_describe, load, versions

_PER_METHOD = r"""
import sys, time, json
t0 = time.perf_counter()
import statespace as ss
from statespace.methods.specs import registry
t_import = time.perf_counter() - t0
games = ss.scenarios.get("balanced", seed=0).games
rows = []
for name, factory in registry(default_only=True).items():
    method = factory()
    t0 = time.perf_counter(); method.fit(games); first = time.perf_counter() - t0
    t0 = time.perf_counter(); method.fit(games); second = time.perf_counter() - t0
    rows.append((name, first, second))
print(json.dumps({"import": t_import, "rows": rows}))
"""

_ARRAYS = r"""
import time, json
import numpy as np
import statespace as ss
from filters import Elo
out = {}
# the control: this machine's first touch of fresh memory (a virtual machine's host backs the
# guest's pages on first use), 160 MB, then the same again
for k in ("first", "second"):
    t0 = time.perf_counter(); x = np.ones(20_000_000); out[f"np.ones(20M), 160 MB, {k} time"] = time.perf_counter() - t0
    del x
rng = np.random.default_rng(0)
n = 1_000_000
for n_names in (1_000_000, 1_000):
    names = np.array([f"p{i}" for i in range(n_names)])
    a = rng.integers(0, n_names, n)
    b = (a + 1 + rng.integers(0, n_names - 1, n)) % n_names
    args = (np.arange(n, dtype=float), names[a], names[b], rng.integers(0, 2, n).astype(float))
    ss.Games.from_arrays(*(x[:100] for x in args))
    t0 = time.perf_counter(); games = ss.Games.from_arrays(*args); out[f"from_arrays {n_names}, first call"] = time.perf_counter() - t0
    t0 = time.perf_counter(); games = ss.Games.from_arrays(*args); out[f"from_arrays {n_names}, second call"] = time.perf_counter() - t0
    if n_names == 1_000_000:
        run = Elo().fit(games)
        one = ss.Games.from_arrays([n + 1.0], [names[a[0]]], [names[b[0]]], [1.0])
        run.predict_proba(one)
        t0 = time.perf_counter(); run.predict_proba(one); out["predict_proba one game"] = time.perf_counter() - t0
print(json.dumps(out))
"""


ROOT = Path(__file__).resolve().parents[1]


def _drop_bytecode() -> None:
    """Delete the packages' own ``.pyc`` files, as a fresh clone has none (``pip install -e .``
    compiles no bytecode of an editable install's sources, and site-packages' is compiled at
    install time): the cold rows pay Python's compilation of our sources as a newcomer does."""
    for package in ("statespace", "filters", "smoothers"):
        for pyc in (ROOT / package).rglob("__pycache__/*.pyc"):
            pyc.unlink(missing_ok=True)


def _child(cmd: list[str], cache: str, jit: str = "auto", cold: bool = False) -> tuple[float, float, str]:
    """Run ``cmd`` with ``NUMBA_CACHE_DIR=cache`` and ``STATESPACE_JIT=jit`` (``cold``: after
    :func:`_drop_bytecode`): (wall s, CPU s of the child, stdout). Python writes bytecode as it does
    for a user (``PYTHONDONTWRITEBYTECODE`` is not passed on)."""
    if cold:
        _drop_bytecode()
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, MPLBACKEND="Agg", STATESPACE_JIT=jit)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    cpu = _children_cpu()  # the child's own CPU time (user + system), from the OS's accounting
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, cpu, out


_last_children = [0.0]


def _children_cpu() -> float:
    """CPU seconds of the children finished since the last call."""
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = r.ru_utime + r.ru_stime
    delta, _last_children[0] = total - _last_children[0], total
    return delta


def main(argv=None) -> int:
    import json

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--skip-arrays", action="store_true", help="leave out the from_arrays / predict_proba timings")
    p.add_argument("--only-arrays", action="store_true", help="only the from_arrays / predict_proba timings")
    p.add_argument("--arrays-runs", type=int, default=1, metavar="K",
                   help="run the from_arrays / predict_proba child K times (default 1), a table each")
    a = p.parse_args(argv)
    exe = sys.executable
    cli = [exe, "-m", "statespace.app.cli"]
    print("The first run: import, compilation and run (fresh processes, empty numba caches)")
    print(f"machine: {cpu_name()}, {os.cpu_count()} logical cores")
    print(f"versions: {versions('numpy', 'numba')}")
    print(f"commit: {git_describe()}")
    print(f"{load()} at the start\n")
    _children_cpu()
    if not a.only_arrays:
        _first_runs(exe, cli)
    if not a.skip_arrays:
        for _ in range(a.arrays_runs):
            with tempfile.TemporaryDirectory() as c5:
                _, _, out = _child([exe, "-c", _ARRAYS], c5, "always")
            print("\n| string ids at array speed (warm) | s |\n|---|---:|")
            for label, sec in json.loads(out.strip().splitlines()[-1]).items():
                print(f"| {label} | {sec:.3f} |")
    return 0


def _first_runs(exe: str, cli: list[str]) -> None:
    """Items 1-4 of the module docstring, printed as tables."""
    import json

    rows = []
    with tempfile.TemporaryDirectory() as c1:
        rows.append(("import statespace, filters, smoothers (cold)",
                     *_child([exe, "-c", "import statespace, filters, smoothers"], c1, cold=True)[:2]))
    for jit in ("auto", "always"):
        with tempfile.TemporaryDirectory() as c2, tempfile.TemporaryDirectory() as c3:
            rows.append((f"statespace compare (cold: empty caches), {jit}",
                         *_child(cli + ["compare"], c2, jit, cold=True)[:2]))
            for k in range(2):
                rows.append((f"statespace compare (warm: the caches it left), {jit}, again ({k + 1})",
                             *_child(cli + ["compare"], c2, jit)[:2]))
            rows.append((f"statespace compare --methods elo (cold), {jit}",
                         *_child(cli + ["compare", "--methods", "elo"], c3, jit, cold=True)[:2]))
    print("| command (STATESPACE_JIT) | wall s | CPU s |\n|---|---:|---:|")
    for label, wall, cpu in rows:
        print(f"| {label} | {wall:.2f} | {cpu:.2f} |")
    with tempfile.TemporaryDirectory() as c4, tempfile.TemporaryDirectory() as c5:
        wall, cpu, out = _child([exe, "-c", _PER_METHOD], c4, "always", cold=True)
        _, _, out_auto = _child([exe, "-c", _PER_METHOD], c5, "auto", cold=True)
    data = json.loads(out.strip().splitlines()[-1])
    auto = {name: first for name, first, _ in json.loads(out_auto.strip().splitlines()[-1])["rows"]}
    print(f"\nPer method of the default list, one cold process with STATESPACE_JIT=always ({wall:.1f} s wall, "
          f"{cpu:.1f} s CPU; import {data['import']:.2f} s): first fit (compilation, then the run) and second fit "
          f"(the run alone), on the main job's 600 games; and the first fit in a cold process by default (auto: "
          f"interpreted)")
    print("\n| method | first fit s (always) | second fit s | compile s (difference) | first fit s (auto) |"
          "\n|---|---:|---:|---:|---:|")
    total = 0.0
    for name, first, second in data["rows"]:
        total += first - second
        print(f"| {name} | {first:.3f} | {second:.4f} | {first - second:.3f} | {auto[name]:.3f} |")
    print(f"| all | | | {total:.2f} | {sum(auto.values()):.2f} |")


if __name__ == "__main__":
    raise SystemExit(main())
