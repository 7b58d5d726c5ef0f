"""When numba's on-disk caches are stale, for every package of the project.

numba keys a cached function on its own source file only (its modification time and size), not
on the files of the functions it calls: a kernel in ``filters`` or ``smoothers`` that calls
``statespace._numeric`` keeps its cached machine code, with the old numerics inlined, after
``_numeric.py`` changes. So the one safe rule is: when any source file of the three packages
changes, every cached kernel of the three goes.

:func:`drop_stale_numba_caches` hashes every ``.py`` file of ``statespace``, ``filters`` and
``smoothers`` (path and contents) and, when the hash differs from the one stamped at the last
drop, deletes the numba cache files (``*.nbi``, ``*.nbc``) of the three packages, in their
``__pycache__`` folders or under ``NUMBA_CACHE_DIR`` when that is set, then stamps the new hash.
``statespace/__init__.py`` calls it first thing, so it runs before any kernel is compiled or
loaded, whichever package is imported first (``filters`` and ``smoothers`` import ``statespace``).
A read-only install cannot be cleaned, and numba does not cache there either: errors are ignored.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["PACKAGES", "STAMP", "source_digest", "cache_folders", "drop_stale_numba_caches"]

#: The packages whose compiled code calls each other's.
PACKAGES = ("statespace", "filters", "smoothers")
#: The hash of the sources at the last drop, in ``statespace/__pycache__``.
STAMP = "numba-deps.sha1"


def _package_dirs(root: Path) -> list[Path]:
    return [root / name for name in PACKAGES if (root / name).is_dir()]


def source_digest(root: Path) -> str:
    """SHA-1 of the path and contents of every ``.py`` file of the packages under ``root``."""
    h = hashlib.sha1()
    for pkg in _package_dirs(root):
        for path in sorted(p for p in pkg.rglob("*.py") if "__pycache__" not in p.parts):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def cache_folders(root: Path) -> list[Path]:
    """Where numba keeps the cache files of the packages' modules: every ``__pycache__`` folder
    in them, or with ``NUMBA_CACHE_DIR`` set, numba's folder for each package directory there
    (``<name>_<sha1 of the directory's absolute path>``, numba's ``get_suitable_cache_subpath``)."""
    folders = []
    user_dir = os.environ.get("NUMBA_CACHE_DIR")
    for pkg in _package_dirs(root):
        dirs = [pkg] + [d for d in pkg.rglob("*") if d.is_dir() and "__pycache__" not in d.parts]
        for d in dirs:
            if user_dir:
                path = os.path.abspath(d)
                folders.append(Path(user_dir) / f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}")
            else:
                folders.append(d / "__pycache__")
    return folders


def drop_stale_numba_caches(root: str | os.PathLike | None = None) -> bool:
    """Delete every numba cache file of the packages under ``root`` (default: the folder that
    holds this package) when their sources changed since the last call; returns whether it
    dropped them. Never raises ``OSError`` (read-only installs)."""
    try:
        root = Path(__file__).resolve().parent.parent if root is None else Path(root)
        digest = source_digest(root)
        stamp = root / "statespace" / "__pycache__" / STAMP
        if stamp.exists() and stamp.read_text() == digest:
            return False
        for folder in cache_folders(root):
            if folder.is_dir():
                for f in list(folder.glob("*.nbi")) + list(folder.glob("*.nbc")):
                    f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        tmp = stamp.with_name(f"{STAMP}.{os.getpid()}")
        tmp.write_text(digest)
        os.replace(tmp, stamp)  # atomic: a concurrent import reads the old stamp or the new one
        return True
    except OSError:  # a read-only install: numba does not cache there either
        return False
