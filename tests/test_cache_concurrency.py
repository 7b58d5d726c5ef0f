"""Several processes sharing one numba cache folder at once (process pools, Dask workers).

numba's cache has no lock between processes: saving a signature reads a function's index, picks
the first unused data file number and rewrites the index, so two processes saving two signatures
of one function (every specialised loop of ``statespace._runtime.jit`` is a signature of ``_specialised``)
can pick the same file. ``statespace._runtime.cache`` locks each cache folder around numba's index and data
files (see its module docstring). These tests check the lock itself (threads, deterministic) and
the whole: fresh processes started together on one fresh ``NUMBA_CACHE_DIR`` (set explicitly, not
the per-worker folder of tests/conftest.py) compile, save and load the same and different loops
and must give exactly this process's forecasts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from statespace._runtime import cache as _cache

ROOT = Path(__file__).resolve().parents[1]

#: cheap kernels for one entry: each call with another kernel is another specialised loop, i.e.
#: another signature saved in the one index of ``_specialised``
N_KERNELS = 8
EXTENSION = "from numba import types\nfrom statespace._runtime.jit import entry, kernel\n\nSIG = types.float64(types.float64)\n\n" + "".join(
    f"\n@kernel(SIG)\ndef k{j}(x):\n    return x * {j + 1}.0 + {j}.0\n\n" for j in range(N_KERNELS)) + textwrap.dedent(f"""

    @entry(types.float64(types.FunctionType(SIG), types.float64[:]))
    def total(fn, xs):
        s = 0.0
        for x in xs:
            s += fn(x)
        return s


    KERNELS = [{", ".join(f"k{j}" for j in range(N_KERNELS))}]
""")

CHILD = """
import json, sys, time
import numpy as np
import filters
from statespace.model import scenarios
from cc_extension import KERNELS, total

i, start, names, first, last = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3].split(","), int(sys.argv[4]), int(sys.argv[5])
games = scenarios.balanced(seed=1).games
order = list(range(first, last))
order = order[i:] + order[:i]  # each child saves the loops in another order
while time.time() < start:  # start the compilations together
    time.sleep(0.005)
out = {"kernels": {j: total(KERNELS[j], np.arange(5.0)) for j in order}}
for name in (names if i % 2 == 0 else names[::-1]):
    out[name] = getattr(filters, name)().run(games).proba.tolist()
print(json.dumps(out))
"""


def _kernel_total(j: int) -> float:
    """``sum over x = 0..4 of (j + 1) x + j``: what ``total(k_j, arange(5))`` computes."""
    return float(sum((j + 1) * x + j for x in range(5)))


def _start_children(folder: Path, cache_dir: Path, children: list[tuple[str, int, int]]) -> list[subprocess.Popen]:
    """One process per ``(filters, first kernel, end kernel)``, all on ``cache_dir``."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    env["NUMBA_CACHE_DIR"] = str(cache_dir)  # one folder for all of them
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(folder)])
    start = time.time() + 3.0  # after every child has imported the packages
    return [subprocess.Popen([sys.executable, "-c", CHILD, str(i), str(start), names, str(first), str(end)], env=env,
                             cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i, (names, first, end) in enumerate(children)]


def _results(children: list[subprocess.Popen]) -> list[dict]:
    out = []
    for child in children:
        stdout, stderr = child.communicate(timeout=600)
        assert child.returncode == 0, f"a child sharing the cache failed:\n{stderr}"
        out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def test_processes_sharing_one_cache_compile_save_and_load_the_same_loops(tmp_path):
    import filters
    from statespace.model import scenarios

    (tmp_path / "cc_extension.py").write_text(EXTENSION)
    games = scenarios.balanced(seed=1).games
    expected = {"Elo": filters.Elo().run(games).proba}
    cache_dir = tmp_path / "numba-cache"
    half = N_KERNELS // 2
    rounds = [
        # cold: four processes start on an empty folder (each checks the stale-cache stamp, one
        # drops and stamps) and compile and save the same loops in different orders (only Elo's
        # filter loops: each filter costs seconds of compilation per process)
        [("Elo", 0, half)] * 4,
        # warm: all load Elo's loops while two of them compile and save new loops
        [("Elo", half, N_KERNELS), ("Elo", 0, half)] * 2,
    ]
    for children in rounds:
        for res, (names, first, end) in zip(_results(_start_children(tmp_path, cache_dir, children)), children):
            assert {int(j): v for j, v in res["kernels"].items()} == {j: _kernel_total(j) for j in range(first, end)}
            for name in names.split(","):
                np.testing.assert_array_equal(np.array(res[name]), expected[name], err_msg=name)
    assert list(cache_dir.glob(f"*/{_cache.LOCK}")), "the children did not lock the cache folders"


def test_no_cache_file_names_an_object_of_another_process(tmp_path):
    """A kernel compiled inside a specialised loop gets the other kernels typed by their dispatcher:
    such an overload is not written to disk (it could never match in another process, and reading
    it back rebuilds a copy of each dispatcher it names)."""
    import pickle

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path)
    env["PYTHONPATH"] = str(ROOT)
    code = "import filters\nfrom statespace.model import scenarios\nfilters.Elo().run(scenarios.balanced(seed=1).games)"
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    indexes = list(tmp_path.glob("*/*.nbi"))
    assert any("_specialised" in p.name for p in indexes)  # the loop itself is cached
    offending = []
    for path in indexes:
        with open(path, "rb") as f:
            pickle.load(f)  # numba's version
            text = repr(f.read())
        if "CPUDispatcher" in text:  # a pickled dispatcher names its class
            offending.append(path.name)
    assert offending == []


def _slow_index_saves(file_class, cache_path: Path):
    """Two of numba's cache files for one function; the first pauses inside its index write."""
    entered, go_on = threading.Event(), threading.Event()

    class Slow(file_class):
        def _save_index(self, overloads):
            entered.set()
            go_on.wait(5)
            super()._save_index(overloads)

    return Slow(str(cache_path), "f-1.py311", "stamp"), file_class(str(cache_path), "f-1.py311", "stamp"), entered, go_on


def _race(file_class, cache_path: Path) -> tuple[object, object, bool]:
    """The first file saves key A and pauses in its index write; meanwhile the second saves key B.
    Returns what each key loads back and whether B's save finished during the pause."""
    first, second, entered, go_on = _slow_index_saves(file_class, cache_path)
    t1 = threading.Thread(target=first.save, args=("A", "data of A"))
    t1.start()
    assert entered.wait(5)
    t2 = threading.Thread(target=second.save, args=("B", "data of B"))
    t2.start()
    t2.join(0.5)
    b_done_during_pause = not t2.is_alive()
    go_on.set()
    t1.join(5)
    t2.join(5)
    return second.load("A"), second.load("B"), b_done_during_pause


def test_numba_alone_can_give_one_key_the_data_of_another(tmp_path):
    """The race the lock exists for, with numba's own class: both saves pick data file 1."""
    from numba.core.caching import IndexDataCacheFile

    a, b, b_done = _race(IndexDataCacheFile, tmp_path)
    assert b_done
    assert a is None or a != "data of A" or b != "data of B"  # one key lost or served the other's data


def test_the_locked_cache_file_keeps_every_key_with_its_own_data(tmp_path):
    _, locked = _cache._shared_classes()
    a, b, b_done = _race(locked, tmp_path)
    assert not b_done  # B waited for A's whole save
    assert (a, b) == ("data of A", "data of B")
    assert (tmp_path / _cache.LOCK).is_file()


def test_the_lock_is_reentrant_in_a_thread_and_exclusive_between_threads(tmp_path):
    order = []
    with _cache.cache_lock(tmp_path):
        with _cache.cache_lock(tmp_path):  # nested: no deadlock
            order.append("nested")
        other = threading.Thread(target=lambda: _locked_append(tmp_path, order))
        other.start()
        other.join(0.3)
        assert other.is_alive()  # waits for this thread's lock
        order.append("outer done")
    other.join(5)
    assert order == ["nested", "outer done", "other"]


def _locked_append(folder, order):
    with _cache.cache_lock(folder):
        order.append("other")


def test_a_lock_in_a_missing_folder_goes_on_unlocked(tmp_path):
    with _cache.cache_lock(tmp_path / "missing"):
        pass
    assert not (tmp_path / "missing").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_the_lock_excludes_another_process(tmp_path):
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom statespace._runtime import cache as _cache\n"
         f"with _cache.cache_lock({str(tmp_path)!r}):\n    print('held', flush=True)\n    time.sleep(1.5)\n"],
        env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    got = threading.Event()

    def take():
        with _cache.cache_lock(tmp_path):
            got.set()

    t = threading.Thread(target=take)
    t.start()
    assert not got.wait(0.5)  # the other process holds it
    holder.wait(30)
    t.join(5)
    assert got.is_set()
