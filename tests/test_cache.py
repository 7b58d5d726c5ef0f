"""statespace._runtime.cache: one rule decides when numba's on-disk caches are stale, for every package.

numba keys a cached function on its own file only, so a kernel in ``smoothers`` that calls
``statespace.model.numeric`` would keep the old numerics after ``numeric.py`` changes. These tests
work on a copy of the three packages in a temporary folder (run in subprocesses with
``PYTHONPATH`` pointing there): a probe kernel in the copy's ``smoothers`` calls a function
added to the copy's ``statespace/model/numeric.py``, whose constant is then changed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba
import pytest

from statespace._runtime import cache as _cache

ROOT = Path(__file__).resolve().parents[1]

PROBE_CALLEE = """

from numba import njit as _probe_njit


@_probe_njit(cache=True)
def _probe_constant():
    return {value}
"""

PROBE_CALLER = """from numba import njit

from statespace.model import numeric as nx


@njit(cache=True)
def probe():
    return nx._probe_constant()
"""

RUN = """
import json, statespace
from smoothers._probe import probe
value = probe()
print(json.dumps({"file": statespace.__file__, "value": value, "cache_hits": sum(probe.stats.cache_hits.values())}))
"""


def _cache_files(root: Path) -> list[Path]:
    return sorted(p for pkg in _cache.PACKAGES for p in (root / pkg).rglob("*.nb[ic]"))


@pytest.fixture
def copy(tmp_path, monkeypatch):
    """The three packages copied without their caches, with the probe (callee value 1.0); numba's
    cache in the packages' own folders here too (as in :func:`_run`'s processes)."""
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba.core.config, "CACHE_DIR", "")  # read when numba was imported (xdist workers set it)
    for pkg in _cache.PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    numeric = tmp_path / "statespace" / "model" / "numeric.py"
    numeric.write_text(numeric.read_text() + PROBE_CALLEE.format(value="1.0"))
    (tmp_path / "smoothers" / "_probe.py").write_text(PROBE_CALLER)
    return tmp_path


def _run(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NUMBA_DISABLE_JIT")}
    env["PYTHONPATH"] = str(root)
    res = subprocess.run([sys.executable, "-c", RUN], cwd=root, env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert Path(out["file"]).resolve().parent == (root / "statespace").resolve()  # the copy, not the install
    return out


def _set_constant(root: Path, value: str) -> None:
    numeric = root / "statespace" / "model" / "numeric.py"
    text = numeric.read_text()
    head, _, tail = text.rpartition("    return ")
    numeric.write_text(head + "    return " + value + "\n")
    assert tail.strip() != value


def test_editing_the_shared_numerics_drops_the_cached_kernels_of_every_package(copy):
    first = _run(copy)
    assert first["value"] == 1.0 and first["cache_hits"] == 0
    cached = _cache_files(copy)
    assert any(p.parent.parent.name == "smoothers" for p in cached)  # the probe was cached
    assert any("statespace" in p.parts for p in cached)

    again = _run(copy)  # nothing changed: served from the cache
    assert again["value"] == 1.0 and again["cache_hits"] == 1
    assert _cache_files(copy) == cached

    os.utime(copy / "statespace" / "model" / "numeric.py")  # touched, same contents: the caches stay valid
    assert not _cache.drop_stale_numba_caches(copy)

    _set_constant(copy, "2.0")
    assert _cache.drop_stale_numba_caches(copy)  # the sources changed: every cache file goes
    assert _cache_files(copy) == []
    assert not _cache.drop_stale_numba_caches(copy)  # stamped: once only

    fresh = _run(copy)
    assert fresh["value"] == 2.0 and fresh["cache_hits"] == 0


def test_importing_statespace_drops_them_by_itself(copy):
    assert _run(copy)["value"] == 1.0
    _set_constant(copy, "3.0")
    assert _run(copy)["value"] == 3.0  # the import dropped the smoothers' cached probe


def test_without_the_drop_numba_would_serve_the_stale_kernel(copy):
    """The premise of the module: stamp the new sources as already seen, and numba, which checks
    only the probe's own file, serves the old constant."""
    assert _run(copy)["value"] == 1.0
    _set_constant(copy, "4.0")
    stamp = copy / "statespace" / "__pycache__" / _cache.STAMP
    stamp.write_text(_cache.source_digest(copy))
    assert _run(copy)["value"] == 1.0


def test_user_cache_dir_is_covered(copy, tmp_path_factory, monkeypatch):
    user = tmp_path_factory.mktemp("numba-cache")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(user))
    folders = _cache.cache_folders(copy)
    assert all(f.parent == user for f in folders)
    dirs = _cache._module_dirs(copy)
    assert {f.name.rsplit("_", 1)[0] for f in folders} == {d.name for d in dirs}
    assert set(_cache.PACKAGES) <= {d.name for d in dirs} and all(any(d.glob("*.py")) for d in dirs)
    stale = folders[0]
    stale.mkdir(parents=True)
    (stale / "x.nbi").write_text("")
    assert _cache.drop_stale_numba_caches(copy)
    assert not (stale / "x.nbi").exists()


def test_read_only_installs_do_not_fail(copy, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError("read-only file system")

    monkeypatch.setattr(Path, "write_text", refuse)
    monkeypatch.setattr(Path, "unlink", refuse)
    (copy / "statespace" / "__pycache__").mkdir(exist_ok=True)
    (copy / "statespace" / "__pycache__" / "x.nbi").touch()
    assert _cache.drop_stale_numba_caches(copy) is False
    assert _cache.drop_stale_numba_caches(copy / "missing") is False
