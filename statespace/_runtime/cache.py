"""Where numba caches the compiled kernels of every package of the project, and when they are stale.

Where. numba's ``cache=True`` looks for a directory it can write, in this order: ``NUMBA_CACHE_DIR``,
the ``__pycache__`` folder beside the source, numba's user-wide cache (``$XDG_CACHE_HOME/numba`` or
``~/.cache/numba`` on Linux); when none is writable it raises at decoration time ("cannot cache
function ...: no locator available"), so ``import statespace`` failed on a read-only install with
an unwritable home, the normal case in a non-root container. :func:`configure_numba_cache` runs
first on import and, when numba has no folder it can write and safely use (``NUMBA_CACHE_DIR``
unset and a package folder's ``__pycache__`` and numba's user-wide cache not both usable; or a
``NUMBA_CACHE_DIR`` that is refused, see "Whose" below), sets ``NUMBA_CACHE_DIR`` to the first of

1. ``<user cache>/statespace/numba`` (``$XDG_CACHE_HOME`` or ``~/.cache``; ``~/Library/Caches`` on
   macOS, ``%LOCALAPPDATA%`` on Windows),
2. ``<system temp>/statespace-<uid>/numba``,
3. a fresh ``tempfile.mkdtemp`` folder, removed at exit (kernels are then compiled on every run),

each a private directory of this user (:func:`private_dir`: mode 0700, owned by the user, checked
with ``lstat``, not a link). When not even a temporary folder can be written, the kernels are
compiled without a disk cache. The choice covers the whole process (numba reads one
``NUMBA_CACHE_DIR``) and its child processes, which inherit the variable.

Whose. numba runs the machine code it finds in its cache, so no folder another user can write is
used (:func:`others_can_write`: the folder must belong to this user or root and be writable by no
one else; each folder above it must belong to this user or root and be writable by no one else
unless sticky, as ``/tmp`` is; a link on the way must belong to this user or root). The packages'
``__pycache__`` folders and numba's user-wide cache are used only when they pass, else the private
fallbacks above, silently (the user chose nothing). A ``NUMBA_CACHE_DIR`` the user set that cannot
be written (read-only, or below a file) or that fails the test is refused with one
:class:`CacheWarning` naming it, and the first private fallback is used instead: numba alone
would fail later ("cannot cache function ...: no locator available") or run code another user
planted there.

When stale. numba keys a cached function on its own source file only (its modification time and
size), not on the files of the functions it calls: a kernel in ``filters`` or ``smoothers`` that
calls ``statespace.model.numeric`` keeps its cached machine code, with the old numerics inlined, after
``_numeric.py`` changes. So the one safe rule is: when any source file of the three packages
changes, every cached kernel of the three goes.

:func:`drop_stale_numba_caches` hashes every ``.py`` file of ``statespace``, ``filters`` and
``smoothers`` (path and contents) and, when the hash differs from the one stamped at the last
drop, deletes the numba cache files (``*.nbi``, ``*.nbc``) of the three packages wherever numba
keeps them (:func:`cache_folders`: their ``__pycache__`` folders, ``NUMBA_CACHE_DIR`` or numba's
user-wide cache), then stamps the new hash beside the ``statespace`` package's own cache files.
``statespace/__init__.py`` calls both functions first thing, so they run before any kernel is
compiled or loaded, whichever package is imported first (``filters`` and ``smoothers`` import
``statespace``). A cache that cannot be cleaned (read-only) is left alone: errors are ignored.

Damaged and unwritable caches. An index or data file that a full disk or a killed process left
damaged is dropped and compiled again, with one warning naming its folder; a cache that cannot be
written is used in memory. Those rules, and the lock that lets several processes share a folder,
are in :mod:`statespace._runtime.cache_files`; :func:`configure_numba_cache` installs them.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from statespace._runtime.cache_files import (LOCK, PACKAGES, CacheWarning, _shared_classes, cache_lock, share, share_numba_cache, warn_once)

__all__ = ["PACKAGES", "STAMP", "LOCK", "CacheWarning", "source_digest", "cache_folders", "drop_stale_numba_caches",
           "configure_numba_cache", "others_can_write", "private_dir", "user_cache_dir", "fresh_private_dir",
           "cache_lock", "share_numba_cache", "share"]

#: The hash of the sources at the last drop, beside the ``statespace`` package's cache files.
STAMP = "numba-deps.sha1"
#: The folder name of this project in the user's cache directory and in the system's temporary one.
APP = "statespace"


# ---------------------------------------------------------------------------- private directories
def private_dir(path: str | os.PathLike) -> str | None:
    """``path`` as a directory only this user can use, or ``None`` if it cannot be one.

    Created with mode 0700 when missing; an existing one must be a real directory (``lstat``: not
    a link), owned by this user and writable, and is made 0700 if it was looser. Caches of compiled
    code are loaded and run, so a folder that another user created first (or a link they planted)
    must not be used."""
    path = os.fspath(path)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            return None
        if hasattr(os, "getuid") and st.st_uid != os.getuid():
            return None
        if stat.S_IMODE(st.st_mode) & 0o077:  # ours, from before: make it private
            os.chmod(path, 0o700)
    except OSError:
        return None
    return path if os.access(path, os.W_OK | os.X_OK) else None


def others_can_write(path: str | os.PathLike) -> str | None:
    """Why another user could put files into the folder ``path`` or put another folder in its
    place, or ``None`` when no one but this user (and root) can: the folder (if it exists) must
    belong to this user or root and be writable by neither group nor others; every folder above
    it must belong to this user or root and be writable by no one else unless it is sticky (as
    ``/tmp`` is: others cannot rename or delete what is ours there); a link on the way must belong
    to this user or root. Windows keeps ACLs, not these modes: ``None`` there."""
    if not hasattr(os, "getuid"):
        return None
    trusted = (os.getuid(), 0)
    lexical, real = Path(os.path.abspath(path)), Path(os.path.realpath(path))
    for folder, follow in ((lexical, False), (real, True)):  # the links as written, then their targets
        for q in (folder, *folder.parents):
            try:
                st = os.stat(q) if follow else os.lstat(q)
            except FileNotFoundError:  # made later, by this user
                continue
            except OSError as exc:
                return f"{q} cannot be examined ({exc.strerror})"
            if st.st_uid not in trusted:
                return f"{q} belongs to another user (uid {st.st_uid})"
            mode = stat.S_IMODE(st.st_mode)
            if follow and mode & 0o022 and (q == folder or not mode & stat.S_ISVTX):
                return f"{q} is writable by other users (mode {mode:04o})"
    return None


def _user_cache_home() -> Path | None:
    """The user's cache directory: ``$XDG_CACHE_HOME`` (if absolute) or ``~/.cache``; on macOS
    ``~/Library/Caches``, on Windows ``%LOCALAPPDATA%``. ``None`` when there is no home."""
    try:
        if sys.platform == "win32":
            local = os.environ.get("LOCALAPPDATA")
            return Path(local) if local else Path.home() / "AppData" / "Local"
        if sys.platform == "darwin":
            return Path.home() / "Library" / "Caches"
        xdg = os.environ.get("XDG_CACHE_HOME", "")
        return Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache"
    except (RuntimeError, KeyError, OSError):  # no home directory known
        return None


def user_cache_dir(name: str, create: bool = True) -> str | None:
    """``<user cache>/statespace/<name>`` (see :func:`_user_cache_home`), both levels private
    (:func:`private_dir`); ``None`` when it cannot be (no home, not writable, not ours). With
    ``create=False`` only the path, nothing is created or checked."""
    home = _user_cache_home()
    if home is None:
        return None
    if not create:
        return str(home / APP / name)
    base = private_dir(home / APP)
    return None if base is None else private_dir(Path(base) / name)


def _temp_cache_dir(name: str) -> str | None:
    """``<system temp>/statespace-<uid>/<name>``, both levels private, or ``None``."""
    try:
        tmp = tempfile.gettempdir()
    except OSError:  # no writable temporary directory at all
        return None
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    base = private_dir(Path(tmp) / f"{APP}-{uid}")
    return None if base is None else private_dir(Path(base) / name)


def fresh_private_dir(prefix: str) -> str | None:
    """A new ``tempfile.mkdtemp`` folder (private by construction), removed when the process exits;
    ``None`` when no temporary folder can be made."""
    try:
        path = tempfile.mkdtemp(prefix=prefix)
    except OSError:
        return None
    pid = os.getpid()

    def remove():  # not from a forked child that inherited the handler
        if os.getpid() == pid:
            shutil.rmtree(path, ignore_errors=True)

    atexit.register(remove)
    return path


# ---------------------------------------------------------------------------- where numba caches
def _package_dirs(root: Path) -> list[Path]:
    return [root / name for name in PACKAGES if (root / name).is_dir()]


def _module_dirs(root: Path) -> list[Path]:
    """Every folder of the packages that holds modules (each package first, then its subfolders
    with a ``.py`` file; data folders such as ``statespace/data`` hold none)."""
    out = []
    for pkg in _package_dirs(root):
        out.append(pkg)
        out.extend(d for d in sorted(pkg.rglob("*")) if d.is_dir() and "__pycache__" not in d.parts
                   and any(d.glob("*.py")))
    return out


def _user_dir_setting() -> str:
    """numba's ``CACHE_DIR``: the environment variable, or the config once numba is imported."""
    env = os.environ.get("NUMBA_CACHE_DIR", "")
    config = sys.modules.get("numba.core.config")
    return env or (getattr(config, "CACHE_DIR", "") if config is not None else "")


def _numba_user_wide_dir() -> str:
    """numba's user-wide cache directory (its ``UserWideCacheLocator``)."""
    from numba.misc.appdirs import AppDirs

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def _numba_subpath(folder: Path) -> str:
    """numba's ``get_suitable_cache_subpath``: ``<name>_<sha1 of the folder's absolute path>``."""
    path = os.path.abspath(folder)
    return f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}"


def _can_write(path: str | os.PathLike) -> bool:
    """Whether numba could use ``path`` as a cache folder: an existing one must take a temporary
    file (numba's own test); a missing one needs its nearest existing parent writable."""
    p = Path(path)
    if p.is_dir():
        try:
            tempfile.TemporaryFile(dir=p).close()
            return True
        except OSError:
            return False
    while not os.path.lexists(p):
        if p.parent == p:
            return False
        p = p.parent
    return p.is_dir() and os.access(p, os.W_OK | os.X_OK)


def cache_folders(root: Path) -> list[Path]:
    """Where numba keeps the cache files of the packages' modules, folder by folder as its
    locators choose: with ``NUMBA_CACHE_DIR`` set, its folder for each package directory there
    (``<name>_<sha1 of the directory's absolute path>``, numba's ``get_suitable_cache_subpath``);
    else the directory's ``__pycache__`` when writable, else the same folder in numba's
    user-wide cache. The first is the ``statespace`` package's own."""
    folders = []
    user_dir = _user_dir_setting()
    user_wide = None
    for d in _module_dirs(Path(root)):
        if user_dir:
            folders.append(Path(user_dir) / _numba_subpath(d))
        elif _can_write(d / "__pycache__"):
            folders.append(d / "__pycache__")
        else:
            user_wide = user_wide or _numba_user_wide_dir()
            folders.append(Path(user_wide) / _numba_subpath(d))
    return folders


def _compile_without_disk_cache(always: bool = False) -> None:
    """Make ``cache=True`` compile in memory when numba finds no cache folder it can write,
    instead of raising "no locator available" at decoration time (the last resort); with
    ``always``, for every function (no folder this process may use is left)."""
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.enable_caching
    if getattr(original, "_statespace_fallback", None) in (True, always):
        return

    def enable_caching(self):
        if always:
            return
        try:
            original(self)
        except RuntimeError:  # no writable cache folder anywhere: no disk cache for this function
            pass

    enable_caching._statespace_fallback = always
    Dispatcher.enable_caching = enable_caching


def _refused(folder: str) -> str | None:
    """Why numba may not cache in ``folder`` (see "Whose" in the module docstring), or ``None``."""
    if not _can_write(folder):
        return "cannot be written"
    problem = others_can_write(folder)
    return None if problem is None else f"is not private to this user ({problem})"


def _defaults_usable(root: Path) -> bool:
    """Whether numba's own choice is safe: each package folder's ``__pycache__`` when it can be
    written, numba's user-wide cache for the others (see "Whose" in the module docstring)."""
    in_tree = [d / "__pycache__" for d in _module_dirs(root)]
    writable = [p for p in in_tree if _can_write(p)]
    if any(others_can_write(p) is not None for p in writable):
        return False
    if len(writable) == len(in_tree):
        return True
    user_wide = _numba_user_wide_dir()
    return _can_write(user_wide) and others_can_write(user_wide) is None


def _set_cache_dir(path: str) -> None:
    os.environ["NUMBA_CACHE_DIR"] = path  # numba re-reads the environment before compiling
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = path


def configure_numba_cache(root: str | os.PathLike | None = None, *, fallbacks=None) -> str | None:
    """Give numba a cache folder it can write and only this user can (see the module docstring).

    Nothing changes when ``NUMBA_CACHE_DIR`` is set to such a folder, or, unset, when every
    folder of the packages under ``root`` (default: the folder that holds this package) can cache
    in its ``__pycache__`` and the ones that cannot have numba's user-wide cache, all private.
    Otherwise ``NUMBA_CACHE_DIR`` (and numba's config, if numba is already imported) is set to the
    first private folder of ``fallbacks`` (callables returning a path or ``None``; default: the
    user's cache, the system temp folder, a fresh temporary folder), and without any, numba
    compiles without a disk cache. A ``NUMBA_CACHE_DIR`` of the user's that is refused gets one
    :class:`CacheWarning` naming it and the folder used instead. Returns the folder set, or
    ``None`` when nothing was set. Either way, every cache of the packages is then shared safely
    between processes and healed when damaged (:func:`share_numba_cache`)."""
    share_numba_cache()
    try:
        setting = _user_dir_setting()
        why = None
        if setting:
            why = _refused(setting)
            if why is None:
                return None
        else:
            root = Path(__file__).resolve().parents[2] if root is None else Path(root)
            if _defaults_usable(root):
                return None
        if fallbacks is None:
            fallbacks = (lambda: user_cache_dir("numba"), lambda: _temp_cache_dir("numba"),
                         lambda: fresh_private_dir("statespace-numba-"))
        for candidate in fallbacks:
            path = candidate()
            if path is not None and others_can_write(path) is None:
                _set_cache_dir(path)
                if why is not None:
                    warn_once(setting, "refused", f"statespace: NUMBA_CACHE_DIR={setting} {why}; numba "
                                                  f"caches the compiled kernels in {path} instead", stacklevel=3)
                return path
        if why is not None:  # the user's folder may not be used, and no other is left
            _set_cache_dir("")
            _compile_without_disk_cache(always=True)
            warn_once(setting, "refused", f"statespace: NUMBA_CACHE_DIR={setting} {why}, and no private "
                                          f"folder is left: the kernels are compiled without a disk cache",
                      stacklevel=3)
        else:
            _compile_without_disk_cache()
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------- when stale
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


def _stamped(stamp: Path, digest: str) -> bool:
    """Whether ``stamp`` holds ``digest``; a stamp emptied or overwritten with anything (bytes
    that are not text included) is simply not it, and the caches are dropped."""
    try:
        return stamp.read_bytes() == digest.encode()
    except FileNotFoundError:
        return False


def drop_stale_numba_caches(root: str | os.PathLike | None = None) -> bool:
    """Delete every numba cache file of the packages under ``root`` (default: the folder that
    holds this package) when their sources changed since the last call; returns whether it
    dropped them. Never raises ``OSError`` (read-only installs)."""
    try:
        root = Path(__file__).resolve().parents[2] if root is None else Path(root)
        folders = cache_folders(root)
        if not folders:
            return False
        digest = source_digest(root)
        stamp = folders[0] / STAMP  # beside the statespace package's own cache files
        if _stamped(stamp, digest):
            return False
        stamp.parent.mkdir(parents=True, exist_ok=True)
        # under the lock: processes started together drop once (the first stamps, the others
        # then see the stamp), and no process is between reading an index and its data
        with cache_lock(stamp.parent):
            if _stamped(stamp, digest):
                return False
            for folder in folders:
                if folder.is_dir():
                    with cache_lock(folder):
                        for f in list(folder.glob("*.nbi")) + list(folder.glob("*.nbc")):
                            f.unlink(missing_ok=True)
            tmp = stamp.with_name(f"{STAMP}.{os.getpid()}")
            tmp.write_text(digest)
            os.replace(tmp, stamp)  # atomic: an import outside the lock reads the old stamp or the new one
        return True
    except OSError:  # a read-only cache: numba does not cache there either
        return False
