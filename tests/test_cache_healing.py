"""Compile caches that heal themselves (statespace._runtime.cache, statespace._runtime.cache_files).

A numba cache entry damaged the ways a full disk, a killed process or a crash leave it (an index
``.nbi`` or data ``.nbc`` file emptied, cut in half, overwritten with random bytes, or one byte
changed) is dropped and compiled again with one warning naming its folder, never a crash; a cache
that cannot be written is used in memory; a cache folder that cannot be written or that another
user could write is refused; and the test suite's own cache folders are private.

Most tests compile a one-line probe in this process, in a cache folder of their own under
``tmp_path`` (numba's setting and the environment restored afterwards): compiling it costs
milliseconds. One test runs the real kernels (Elo on four games) in subprocesses.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from conftest import private_worker_cache
from statespace._runtime import cache as _cache
from statespace._runtime.cache import CacheWarning

ROOT = Path(__file__).resolve().parents[1]
posix = pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX owners and modes")
as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root")


@pytest.fixture
def numba_cache(tmp_path, monkeypatch):
    """NUMBA_CACHE_DIR (and numba's setting) pointed at ``tmp_path/numba``; restored afterwards."""
    from numba.core import config
    from numba.core.dispatcher import Dispatcher

    folder = tmp_path / "numba"
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(folder))
    monkeypatch.setattr(config, "CACHE_DIR", str(folder))
    monkeypatch.setattr(Dispatcher, "enable_caching", Dispatcher.enable_caching)
    return folder


def _probe_module(tmp_path: Path, monkeypatch):
    """A module file of its own holding ``twice``, imported under a unique name (in
    ``sys.modules``, where numba's cached code looks its module up)."""
    import importlib.util

    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    name = f"heal_probe_{tmp_path.name.replace('-', '_').replace('[', '_').replace(']', '_')}"
    path = src / f"{name}.py"
    path.write_text("def twice(x):\n    return 2 * x\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def _dispatcher(module):
    """A new dispatcher of the probe with this project's disk cache (as statespace._runtime.jit makes them):
    a new one reads the disk again, as a new process would."""
    import numba

    disp = numba.njit(cache=True)(module.twice)
    _cache.share(disp)
    return disp


def _run(disp) -> tuple[tuple, list[str]]:
    """The probe on a float and an int, and the CacheWarnings raised meanwhile."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = (disp(1.5), disp(2))
    return out, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


def _hits(disp) -> int:
    return sum(disp.stats.cache_hits.values())


def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "emptied":
        path.write_bytes(b"")
    elif how == "halved":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":  # bytes of a fixed pseudo-random stream, so a failure reproduces
        path.write_bytes(random.Random(len(data)).randbytes(max(len(data), 64)))
    elif how == "one byte":  # the same size, one byte of the compiled code's pickle changed
        at = len(data) - 40
        path.write_bytes(data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:])
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("kind, how", [("nbi", "emptied"), ("nbi", "halved"), ("nbi", "garbage"), ("nbc", "emptied"),
                                       ("nbc", "halved"), ("nbc", "garbage"), ("nbc", "one byte")])
def test_a_damaged_entry_is_dropped_and_compiled_again_with_one_warning(numba_cache, tmp_path, monkeypatch, kind, how):
    module = _probe_module(tmp_path, monkeypatch)
    assert _run(_dispatcher(module)) == ((3.0, 4), [])  # compiled and saved: two signatures
    folder, = [p for p in numba_cache.iterdir() if p.is_dir()]
    index, = folder.glob("*.nbi")
    data = sorted(folder.glob("*.nbc"))
    assert len(data) == 2
    _damage(index if kind == "nbi" else data[0], how)  # data[0]: the float signature's file

    again = _dispatcher(module)
    out, warned = _run(again)
    assert out == (3.0, 4)
    assert len(warned) == 1 and str(folder) in warned[0] and "compiled again" in warned[0]
    # a damaged index loses the function's entries; a damaged data file only its own signature's
    assert _hits(again) == (0 if kind == "nbi" else 1)

    healed = _dispatcher(module)  # the next reader finds both entries whole, and says nothing
    assert _run(healed) == ((3.0, 4), [])
    assert _hits(healed) == 2


def test_several_damaged_entries_of_one_folder_give_one_warning(numba_cache, tmp_path, monkeypatch):
    module = _probe_module(tmp_path, monkeypatch)
    _run(_dispatcher(module))
    folder, = [p for p in numba_cache.iterdir() if p.is_dir()]
    first, second = sorted(folder.glob("*.nbc"))
    _damage(first, "emptied")
    _damage(second, "garbage")
    out, warned = _run(_dispatcher(module))
    assert out == (3.0, 4) and len(warned) == 1


def test_the_data_digest_is_checked_before_the_pickle_is_read():
    from statespace._runtime.cache_files import DATA_TAG, _Damaged, _seal, _unseal

    sealed = _seal(b"payload")
    assert sealed.startswith(DATA_TAG) and _unseal(sealed) == b"payload"
    with pytest.raises(_Damaged):
        _unseal(sealed[:-1] + b"P")
    assert _unseal(b"numba's own pickle") == b"numba's own pickle"  # written by numba's class: pickle decides


def test_a_cache_that_cannot_be_written_is_used_in_memory_with_one_warning(numba_cache, tmp_path, monkeypatch):
    """A full disk: every write of the cache fails; the functions still compile and run."""
    module = _probe_module(tmp_path, monkeypatch)
    real_open = open

    def full_disk(file, mode="r", *args, **kwargs):
        if "w" in mode and str(numba_cache) in str(file):
            raise OSError(28, "No space left on device")
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", full_disk)
    out, warned = _run(_dispatcher(module))
    assert out == (3.0, 4)
    assert len(warned) == 1 and "No space left on device" in warned[0] and "in memory" in warned[0]


def test_a_stamp_overwritten_with_bytes_that_are_not_text_drops_the_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    root = tmp_path / "root"
    for pkg in _cache.PACKAGES:
        (root / pkg).mkdir(parents=True)
        (root / pkg / "m.py").write_text("X = 1\n")
    assert _cache.drop_stale_numba_caches(root)
    stamp = _cache.cache_folders(root)[0] / _cache.STAMP
    stamp.write_bytes(b"\xff\xfe" + os.urandom(30))
    (stamp.parent / "f-1.py311.nbi").write_bytes(b"")
    assert _cache.drop_stale_numba_caches(root)  # no UnicodeDecodeError at import
    assert not (stamp.parent / "f-1.py311.nbi").exists()
    assert not _cache.drop_stale_numba_caches(root)


# ---------------------------------------------------------------------------- folders
@pytest.fixture
def restored(monkeypatch):
    """numba's setting, the environment and Dispatcher.enable_caching restored after the test."""
    from numba.core import config
    from numba.core.dispatcher import Dispatcher

    monkeypatch.setattr(config, "CACHE_DIR", config.CACHE_DIR)
    monkeypatch.setenv("NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", ""))
    monkeypatch.setattr(Dispatcher, "enable_caching", Dispatcher.enable_caching)
    return monkeypatch


def _configure(setting, fallback: Path, root=None):
    """configure_numba_cache with NUMBA_CACHE_DIR = ``setting`` and one private fallback; returns
    the folder chosen and the CacheWarnings."""
    os.environ["NUMBA_CACHE_DIR"] = str(setting)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = _cache.configure_numba_cache(root, fallbacks=(lambda: _cache.private_dir(fallback),))
    return chosen, [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]


@posix
def test_a_numba_cache_dir_that_cannot_be_written_falls_back_with_one_warning(restored, tmp_path):
    from numba.core import config

    (tmp_path / "file").write_text("")
    unwritable = tmp_path / "file" / "numba"  # below a file: not even root can make it
    chosen, warned = _configure(unwritable, tmp_path / "private")
    assert chosen == str(tmp_path / "private") == os.environ["NUMBA_CACHE_DIR"] == config.CACHE_DIR
    assert len(warned) == 1 and str(unwritable) in warned[0] and "cannot be written" in warned[0]


@posix
@pytest.mark.parametrize("case", ["world-writable", "group-writable", "in a world-writable parent",
                                  "link to a world-writable folder"])
def test_a_numba_cache_dir_others_can_write_is_refused(restored, tmp_path, case):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod({"group-writable": 0o770}.get(case, 0o777))
    setting = {"world-writable": shared, "group-writable": shared, "in a world-writable parent": shared / "numba",
               "link to a world-writable folder": tmp_path / "link"}[case]
    if case == "link to a world-writable folder":
        setting.symlink_to(shared)
    chosen, warned = _configure(setting, tmp_path / "private")
    assert chosen == str(tmp_path / "private")
    assert len(warned) == 1 and str(setting) in warned[0] and "writable by other users" in warned[0]


@posix
def test_a_private_numba_cache_dir_is_kept_silently_also_below_a_sticky_folder(restored, tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)  # as /tmp
    mine = sticky / "mine"
    mine.mkdir(mode=0o700)
    assert _configure(mine, tmp_path / "private") == (None, [])
    assert os.environ["NUMBA_CACHE_DIR"] == str(mine)


@posix
@as_root
def test_a_numba_cache_dir_of_another_user_is_refused(restored, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, 65534, 65534)
    chosen, warned = _configure(theirs, tmp_path / "private")
    assert chosen == str(tmp_path / "private") and len(warned) == 1 and "another user" in warned[0]
    link = tmp_path / "link"  # a link planted by another user, to a folder of ours
    link.symlink_to(tmp_path / "private")
    os.lchown(link, 65534, 65534)
    assert "belongs to another user" in _cache.others_can_write(link)


@posix
def test_without_any_private_folder_a_refused_cache_dir_means_no_disk_cache(restored, tmp_path):
    from numba import njit

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    os.environ["NUMBA_CACHE_DIR"] = str(shared)
    with pytest.warns(CacheWarning, match="without a disk cache"):
        assert _cache.configure_numba_cache(fallbacks=()) is None
    module = _probe_module(tmp_path, restored)
    disp = njit(cache=True)(module.twice)
    assert disp(21) == 42
    assert not list(shared.rglob("*.nb*"))  # nothing read from or written to the shared folder


@posix
def test_package_folders_others_can_write_are_not_numbas_cache(restored, tmp_path):
    """NUMBA_CACHE_DIR unset and the packages' own __pycache__ writable by anyone: a private
    folder instead, without a warning (the user chose nothing)."""
    root = tmp_path / "root"
    for pkg in _cache.PACKAGES:
        (root / pkg / "__pycache__").mkdir(parents=True)
        (root / pkg / "m.py").write_text("")
        (root / pkg / "__pycache__").chmod(0o777)
    os.environ.pop("NUMBA_CACHE_DIR")
    from numba.core import config
    config.CACHE_DIR = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chosen = _cache.configure_numba_cache(root, fallbacks=(lambda: _cache.private_dir(tmp_path / "private"),))
    assert chosen == str(tmp_path / "private") and not caught
    for pkg in _cache.PACKAGES:
        (root / pkg / "__pycache__").chmod(0o755)
    os.environ.pop("NUMBA_CACHE_DIR")
    config.CACHE_DIR = ""
    assert _cache.configure_numba_cache(root, fallbacks=()) is None  # private again: numba's own choice


# ---------------------------------------------------------------------------- the test suite's own folders
@posix
def test_the_worker_cache_folder_is_private_and_refuses_a_planted_one(tmp_path):
    uid = os.getuid()
    base = tmp_path / f"statespace-tests-{uid}"
    assert private_worker_cache("gw0", str(tmp_path)) == str(base / "gw0" / "numba")
    assert stat.S_IMODE(os.lstat(base).st_mode) == 0o700

    base.chmod(0o777)  # writable by anyone meanwhile: whatever is inside may be planted
    fresh = private_worker_cache("gw0", str(tmp_path))
    assert not fresh.startswith(str(base)) and stat.S_IMODE(os.stat(fresh).st_mode) == 0o700

    shutil.rmtree(base)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    base.symlink_to(tmp_path / "elsewhere")  # a planted link
    assert not private_worker_cache("gw0", str(tmp_path)).startswith(str(base))
    if os.geteuid() == 0:
        base.unlink()
        base.mkdir(mode=0o755)
        os.chown(base, 65534, 65534)  # made first by another user
        assert not private_worker_cache("gw0", str(tmp_path)).startswith(str(base))


@posix
def test_this_runs_cache_folder_is_private():
    folder = os.environ.get("NUMBA_CACHE_DIR")
    if not folder:
        pytest.skip("no NUMBA_CACHE_DIR in this run (numba caches beside the sources)")
    assert _cache.others_can_write(folder) is None


# ---------------------------------------------------------------------------- the package's own kernels
RUN = """
import json, warnings
warnings.simplefilter("always")
from statespace.model import numeric as nx
print(json.dumps([nx.cdf(0, 0.3), nx.cdf(1, 0.3), nx.log_cdf(0, -2.0)]))
"""


def test_a_warm_cache_of_the_packages_kernels_damaged_still_runs_with_one_warning(tmp_path):
    """Two of the package's kernels fill a fresh cache in one process; the data file of one and
    the index of the other are then damaged; the next process gives the same values, with one
    warning naming the folder (the rules reach the package's own kernels, not only a probe's).
    A copy of the packages keeps the sources still meanwhile (a change would drop the cache)."""
    for pkg in _cache.PACKAGES:
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "numba"), PYTHONPATH=str(tmp_path))

    def run():
        res = subprocess.run([sys.executable, "-c", RUN], cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=600)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout.strip().splitlines()[-1]), res.stderr

    warm, stderr = run()
    assert warm == pytest.approx([0.574442516811659, 0.6179114221889526, -2.1269280110429727], abs=1e-12) \
        and "CacheWarning" not in stderr  # logistic(0.3), Phi(0.3), log logistic(-2): numpy checks them below
    data = next((tmp_path / "numba").rglob("numeric.cdf-*.1.nbc"))
    folder = data.parent  # the folder numba gives statespace/model/numeric.py
    _damage(data, "garbage")
    _damage(next(folder.glob("numeric.log_cdf-*.nbi")), "halved")
    healed, stderr = run()
    assert healed == warm
    assert stderr.count("CacheWarning") == 1 and str(folder) in stderr and "Traceback" not in stderr


def test_the_probe_values_are_the_functions_they_name():
    from math import erf, exp, log, sqrt

    assert 1 / (1 + exp(-0.3)) == pytest.approx(0.574442516811659, abs=1e-15)
    assert 0.5 * (1 + erf(0.3 / sqrt(2))) == pytest.approx(0.6179114221889526, abs=1e-15)
    assert -log(1 + exp(2.0)) == pytest.approx(-2.1269280110429727, abs=1e-15)


# ---------------------------------------------------------------------------- PyTensor's cache
elf = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ELF shared objects")


def _shared_object() -> Path:
    """A real ELF shared object to stand for a PyTensor module (an extension of the standard library)."""
    import _ctypes

    return Path(_ctypes.__file__)


def _pytensor_tree(base: Path) -> tuple[Path, Path]:
    """A compile directory laid out as PyTensor's: two module folders, each with its shared object."""
    compiledir = base / "compiledir_Linux-x86_64"
    found = []
    for name in ("tmpintact", "tmpdamaged"):
        (compiledir / name).mkdir(parents=True)
        shutil.copy(_shared_object(), compiledir / name / f"m{name}.so")
        (compiledir / name / "key.pkl").write_bytes(b"")
        found.append(compiledir / name)
    return found[0], found[1]


@elf
@pytest.mark.parametrize("how", ["emptied", "halved", "garbage"])
def test_a_damaged_pytensor_module_is_removed_before_pytensor_can_load_it(tmp_path, how):
    from statespace._runtime.pytensor_heal import elf_problem, heal_compiledir

    assert elf_problem(_shared_object()) is None
    intact, damaged = _pytensor_tree(tmp_path)
    _damage(damaged / "mtmpdamaged.so", how)
    assert elf_problem(damaged / "mtmpdamaged.so") is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert heal_compiledir(tmp_path) == [damaged]
    warned = [str(w.message) for w in caught if issubclass(w.category, CacheWarning)]
    assert len(warned) == 1 and str(tmp_path) in warned[0] and "mtmpdamaged.so" in warned[0]
    assert not damaged.exists() and (intact / "mtmpintact.so").is_file()  # the whole one stays


@elf
def test_configure_pytensor_heals_the_directory_it_chooses(tmp_path, monkeypatch):
    from statespace._runtime.pytensor_config import configure_pytensor

    monkeypatch.delitem(sys.modules, "pytensor", raising=False)  # as before PyTensor's first import
    base = tmp_path / "pytensor"
    _, damaged = _pytensor_tree(base)
    base.chmod(0o700)
    _damage(damaged / "mtmpdamaged.so", "halved")
    monkeypatch.setenv("PYTENSOR_FLAGS", f"floatX=float64,base_compiledir={base}")
    with pytest.warns(CacheWarning, match="cannot be loaded"):
        assert configure_pytensor() == str(base)
    assert not damaged.exists()


@posix
def test_a_pytensor_compile_directory_others_can_write_is_refused(tmp_path, monkeypatch):
    from statespace._runtime.pytensor_config import configure_pytensor

    monkeypatch.delitem(sys.modules, "pytensor", raising=False)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("PYTENSOR_FLAGS", f"floatX=float64,compiledir={shared}")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.warns(CacheWarning, match="writable by other users"):
        used = configure_pytensor()
    assert used == str(tmp_path / "cache" / "statespace" / "pytensor")
    assert os.environ["PYTENSOR_FLAGS"] == f"floatX=float64,base_compiledir={used}"
