"""A read-only install with an unwritable home: ``import statespace`` and a fit work.

numba's ``cache=True`` raised at import ("cannot cache function ...: no locator available") when
neither the packages' ``__pycache__`` nor numba's user-wide cache could be written, the normal
case in a non-root container. ``statespace._runtime.cache.configure_numba_cache`` then gives numba a
private per-user folder (see its module docstring for the order). The main test copies the three
packages (without caches) to a temporary folder, makes them read-only (files 0444, folders 0555)
and the home folder too, and imports and fits in a subprocess. As root, file modes do not stop
writes: the subprocess then runs as an unprivileged user in a user namespace (``unshare``), or the
test is skipped when that is not possible. The other tests check the pieces in this process:
private folders, the fallback order, the stale-cache policy in the folder chosen, and the PyTensor
cache in the user's cache directory.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from statespace._runtime import cache as _cache

ROOT = Path(__file__).resolve().parents[1]
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG cache paths and POSIX modes")

FIT = textwrap.dedent("""
    import json, os, sys, time
    t0 = time.perf_counter()
    import numpy as np
    import statespace, filters, smoothers
    from filters import Elo
    from smoothers import LaplaceSmoother
    from statespace._runtime.pytensor_config import configure_pytensor
    imported = time.perf_counter() - t0
    games = statespace.scenarios.get("balanced", seed=1).games
    elo = Elo().fit(games).ratings()["mean"].to_numpy()
    laplace = LaplaceSmoother().fit(games).ratings()["mean"].to_numpy()
    hits = 0
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("statespace", "filters", "smoothers"):
            for obj in vars(module).values():
                stats = getattr(obj, "stats", None)
                if stats is not None and hasattr(stats, "cache_hits"):
                    hits += sum(stats.cache_hits.values())
    print(json.dumps({"file": statespace.__file__, "uid": os.getuid(), "numba_cache": os.environ.get("NUMBA_CACHE_DIR"),
                      "pytensor": configure_pytensor(), "finite": bool(np.isfinite(elo).all() and np.isfinite(laplace).all()),
                      "n": len(elo), "cache_hits": hits, "import_seconds": imported}))
""")


def _make_read_only(path: Path) -> None:
    for p in sorted(path.rglob("*"), reverse=True):
        os.chmod(p, 0o555 if p.is_dir() else 0o444)
    os.chmod(path, 0o555)


def _make_writable(path: Path) -> None:
    os.chmod(path, 0o755)
    for p in path.rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)


def _unprivileged(tmp_path: Path) -> list[str]:
    """A command prefix under which a read-only folder refuses writes: none for a normal user;
    for root, an unprivileged user in a user namespace. Skips when neither works."""
    probe = tmp_path / "probe"
    probe.mkdir()
    probe.chmod(0o555)
    candidates = [[]] if os.geteuid() != 0 else []
    if shutil.which("unshare"):
        candidates.append(["unshare", "--user", "--map-user=1000", "--map-group=1000"])
    try:
        for prefix in candidates:
            res = subprocess.run(prefix + [sys.executable, "-c", f"open({str(probe / 'x')!r}, 'w')"],
                                 capture_output=True, text=True)
            if res.returncode != 0 and "PermissionError" in res.stderr:
                return prefix
    finally:
        probe.chmod(0o755)
    pytest.skip("folder modes do not stop writes here (root without user namespaces)")


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX permissions")
def test_import_and_fit_with_a_read_only_install_and_home(tmp_path):
    prefix = _unprivileged(tmp_path)
    install, home, tmp = tmp_path / "install", tmp_path / "home", tmp_path / "tmp"
    for pkg in _cache.PACKAGES:
        shutil.copytree(ROOT / pkg, install / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    home.mkdir()
    tmp.mkdir()
    _make_read_only(install)
    _make_read_only(home)
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTENSOR_FLAGS", "NUMBA_DISABLE_JIT")}
    env.update(HOME=str(home), TMPDIR=str(tmp), PYTHONPATH=str(install))
    try:
        runs = []
        for _ in range(2):  # the second run finds the kernels the first one cached
            t0 = time.perf_counter()
            res = subprocess.run(prefix + [sys.executable, "-c", FIT], cwd=tmp, env=env, capture_output=True,
                                 text=True, timeout=600)
            assert res.returncode == 0, res.stderr
            runs.append(json.loads(res.stdout.strip().splitlines()[-1]) | {"seconds": time.perf_counter() - t0})
        first, second = runs
        print(f"read-only install: first run {first['seconds']:.1f} s (import {first['import_seconds']:.1f} s), "
              f"second {second['seconds']:.1f} s (import {second['import_seconds']:.1f} s)")
        assert Path(first["file"]).parent == install / "statespace"  # the copy, not the working tree
        assert first["finite"] and first["n"] > 0 and second["finite"]
        numba_dir = tmp / f"statespace-{first['uid']}" / "numba"  # home unwritable: the temp fallback
        assert first["numba_cache"] == second["numba_cache"] == str(numba_dir)
        for d in (numba_dir.parent, numba_dir):
            assert stat.S_IMODE(os.lstat(d).st_mode) == 0o700
        assert list(numba_dir.rglob("*.nbi")) and (numba_dir / _cache._numba_subpath(install / "statespace")
                                                   / _cache.STAMP).is_file()
        assert first["cache_hits"] == 0 and second["cache_hits"] > 0
        assert not list(install.rglob("__pycache__"))  # nothing written into the install
        # PyTensor: the home cache is unwritable, so a fresh private folder, gone after the run
        assert Path(first["pytensor"]).parent == tmp and Path(first["pytensor"]).name.startswith("statespace-pytensor-")
        assert not Path(first["pytensor"]).exists()
    finally:
        _make_writable(install)
        _make_writable(home)


# ---------------------------------------------------------------------------- the pieces
@linux
def test_private_dir_refuses_links_and_other_users_folders(tmp_path):
    made = _cache.private_dir(tmp_path / "a" / "b")
    assert made == str(tmp_path / "a" / "b") and stat.S_IMODE(os.stat(made).st_mode) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o777)
    assert _cache.private_dir(loose) == str(loose) and stat.S_IMODE(os.stat(loose).st_mode) == 0o700
    (tmp_path / "link").symlink_to(loose)
    assert _cache.private_dir(tmp_path / "link") is None
    (tmp_path / "file").write_text("")
    assert _cache.private_dir(tmp_path / "file") is None
    assert _cache.private_dir(tmp_path / "file" / "below") is None
    if os.geteuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir(mode=0o700)
        os.chown(theirs, 65534, 65534)
        assert _cache.private_dir(theirs) is None


@linux
def test_user_cache_dir_is_xdg_or_dot_cache_and_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    path = _cache.user_cache_dir("numba")
    assert path == str(tmp_path / "xdg" / "statespace" / "numba")
    assert stat.S_IMODE(os.stat(tmp_path / "xdg" / "statespace").st_mode) == 0o700
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert _cache.user_cache_dir("x", create=False) == str(tmp_path / "home" / ".cache" / "statespace" / "x")
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / ".cache").write_text("not a folder")  # an unusable home cache
    assert _cache.user_cache_dir("x") is None


@pytest.fixture
def no_writable_cache(tmp_path, monkeypatch):
    """A root whose package folders cannot cache (their ``__pycache__`` is a file), a user cache
    under a file (numba's user-wide one and ours unusable), no NUMBA_CACHE_DIR; numba's settings
    and the environment are restored afterwards."""
    from numba.core import config
    from numba.core.dispatcher import Dispatcher

    root = tmp_path / "root"
    for pkg in _cache.PACKAGES:
        (root / pkg).mkdir(parents=True)
        (root / pkg / "__pycache__").write_text("")
    (tmp_path / "blocked").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "blocked" / "cache"))
    monkeypatch.setitem(os.environ, "NUMBA_CACHE_DIR", "")
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(Dispatcher, "enable_caching", Dispatcher.enable_caching)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return root


@linux
def test_fallback_order_user_cache_then_temp_then_fresh(no_writable_cache, tmp_path, monkeypatch):
    from numba.core import config

    root = no_writable_cache
    uid = os.getuid()
    assert _cache.configure_numba_cache(root) == str(tmp_path / "tmp" / f"statespace-{uid}" / "numba")
    assert os.environ["NUMBA_CACHE_DIR"] == config.CACHE_DIR == str(tmp_path / "tmp" / f"statespace-{uid}" / "numba")
    assert _cache.configure_numba_cache(root) is None  # set: left alone from now on

    monkeypatch.setitem(os.environ, "NUMBA_CACHE_DIR", "")
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))  # a usable user cache comes first (here
    monkeypatch.setattr(_cache, "_numba_user_wide_dir",           # numba's own folder in it is not)
                        lambda: str(tmp_path / "blocked" / "numba"))
    assert _cache.configure_numba_cache(root) == str(tmp_path / "xdg" / "statespace" / "numba")

    monkeypatch.setitem(os.environ, "NUMBA_CACHE_DIR", "")
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "blocked" / "cache"))
    squatted = tmp_path / "tmp" / f"statespace-{uid}"
    shutil.rmtree(squatted)
    squatted.symlink_to(tmp_path / "xdg")  # planted by someone else: not used
    fresh = _cache.configure_numba_cache(root)
    assert Path(fresh).parent == tmp_path / "tmp" and Path(fresh).name.startswith("statespace-numba-")
    assert stat.S_IMODE(os.stat(fresh).st_mode) == 0o700


def test_nothing_changes_when_numba_can_cache(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    for pkg in _cache.PACKAGES:
        (tmp_path / pkg).mkdir()
    before = dict(os.environ)
    assert _cache.configure_numba_cache(tmp_path) is None
    assert dict(os.environ) == before


@linux
def test_without_any_writable_folder_kernels_compile_without_a_disk_cache(no_writable_cache, tmp_path):
    from numba import njit

    module = tmp_path / "root" / "statespace" / "kernel_probe.py"
    module.write_text("def twice(x):\n    return 2 * x\n")
    spec = importlib.util.spec_from_file_location("kernel_probe", module)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with pytest.raises(RuntimeError, match="no locator available"):  # what import statespace hit
        njit(cache=True)(mod.twice)
    assert _cache.configure_numba_cache(no_writable_cache, fallbacks=()) is None
    assert njit(cache=True)(mod.twice)(21) == 42


@linux
def test_the_stale_cache_policy_follows_numbas_user_wide_cache(no_writable_cache, tmp_path, monkeypatch):
    """Package folders that cannot cache: numba uses its user-wide cache, and so does the policy
    (the cache files and the stamp are there)."""
    root = no_writable_cache
    (root / "statespace" / "x.py").write_text("X = 1\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    user_wide = Path(_cache._numba_user_wide_dir())
    assert user_wide == tmp_path / "xdg" / "numba"
    folders = _cache.cache_folders(root)
    assert all(f.parent == user_wide for f in folders)
    folders[0].mkdir(parents=True)
    (folders[0] / "x.nbi").write_text("")
    assert _cache.drop_stale_numba_caches(root)
    assert not (folders[0] / "x.nbi").exists() and (folders[0] / _cache.STAMP).is_file()
    assert not _cache.drop_stale_numba_caches(root)
    (root / "statespace" / "x.py").write_text("X = 2\n")
    assert _cache.drop_stale_numba_caches(root)


# ---------------------------------------------------------------------------- the PyTensor cache
@linux
@pytest.mark.parametrize("case", ["home", "xdg", "unwritable"])
def test_pytensor_cache_is_private_in_the_user_cache_directory(case, tmp_path):
    """In a fresh interpreter: ``statespace/pytensor`` in ``$XDG_CACHE_HOME`` or ``~/.cache``,
    both levels 0700; when that cannot be written, a fresh private temporary folder, removed at
    exit (never a guessable shared path)."""
    code = textwrap.dedent("""
        import json, os, stat
        from statespace._runtime.pytensor_config import configure_pytensor
        path = configure_pytensor()
        assert os.environ["PYTENSOR_FLAGS"] == f"base_compiledir={path}"
        print(json.dumps({"path": path, "modes": [stat.S_IMODE(os.lstat(p).st_mode)
                                                  for p in (path, os.path.dirname(path))]}))
    """)
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTENSOR_FLAGS", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), TMPDIR=str(tmp_path))
    expected = home / ".cache" / "statespace" / "pytensor"
    if case == "xdg":
        env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
        expected = tmp_path / "xdg" / "statespace" / "pytensor"
    elif case == "unwritable":
        (home / ".cache").write_text("")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "Warning" not in res.stderr
    out = json.loads(res.stdout.strip().splitlines()[-1])
    if case == "unwritable":
        assert Path(out["path"]).parent == tmp_path and Path(out["path"]).name.startswith("statespace-pytensor-")
        assert out["modes"][0] == 0o700 and not Path(out["path"]).exists()
    else:
        assert out["path"] == str(expected) and out["modes"] == [0o700, 0o700]
