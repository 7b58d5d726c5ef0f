"""Where numba caches the compiled kernels of every package of the project, and when they are stale.

Where. numba's ``cache=True`` looks for a directory it can write, in this order: ``NUMBA_CACHE_DIR``,
the ``__pycache__`` folder beside the source, numba's user-wide cache (``$XDG_CACHE_HOME/numba`` or
``~/.cache/numba`` on Linux); when none is writable it raises at decoration time ("cannot cache
function ...: no locator available"), so ``import statespace`` failed on a read-only install with
an unwritable home, the normal case in a non-root container. :func:`configure_numba_cache` runs
first on import and, only in that case (``NUMBA_CACHE_DIR`` unset, a package folder not writable
and numba's user-wide cache not writable either), sets ``NUMBA_CACHE_DIR`` to the first of

1. ``<user cache>/statespace/numba`` (``$XDG_CACHE_HOME`` or ``~/.cache``; ``~/Library/Caches`` on
   macOS, ``%LOCALAPPDATA%`` on Windows),
2. ``<system temp>/statespace-<uid>/numba``,
3. a fresh ``tempfile.mkdtemp`` folder, removed at exit (kernels are then compiled on every run),

each a private directory of this user (:func:`private_dir`: mode 0700, owned by the user, checked
with ``lstat``, not a link: numba loads machine code from its cache, so a folder another user
controls would run their code here). When not even a temporary folder can be written, the kernels
are compiled without a disk cache. The choice covers the whole process (numba reads one
``NUMBA_CACHE_DIR``) and its child processes, which inherit the variable.

When stale. numba keys a cached function on its own source file only (its modification time and
size), not on the files of the functions it calls: a kernel in ``filters`` or ``smoothers`` that
calls ``statespace._numeric`` keeps its cached machine code, with the old numerics inlined, after
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

Several processes at once. A process pool (``ProcessPoolExecutor``, Dask workers) shares one cache
folder, and numba's cache has no lock between processes. Each function has one index file
(signature -> data file name) and one data file per signature; ``IndexDataCacheFile.save`` reads
the index, picks the first unused data file number, rewrites the index and then writes the data.
Each file is replaced atomically, but the read-modify-write is not: two processes saving two
signatures of one function (the specialised loops of :mod:`statespace._jit` are all signatures of
one function, ``_specialised``) can pick the same number, so the index can name a file that holds
the other signature's code, or name it before its data is written. And a process dropping stale
caches can delete files another is between reading the index and reading the data. So every
numba cache of these packages (and every kernel and loop declared through :mod:`statespace._jit`)
takes an exclusive lock on ``statespace-numba.lock`` in its cache folder while it reads or writes
that folder's index and data (:func:`cache_lock`: ``fcntl.flock``; ``msvcrt.locking`` on Windows;
no lock where neither exists or the file system refuses one, as numba has none), and
:func:`drop_stale_numba_caches` holds the same locks while it checks the stamp and deletes. Only
the file reads and writes are locked, not the compilation, so processes still compile in parallel.

Overloads whose signature holds a dispatcher type (a kernel compiled inside a specialised loop
receives other kernels typed by their dispatcher) are not cached on disk: numba's dispatcher types
compare by object identity and pickle the dispatcher by a random per-process id, so such an entry
never matches in another process, which appends one more entry each time, rebuilds (and compiles)
a copy of every dispatcher named in the index each time it reads it, and fails to write the index
back once such a copy is collected (``ReferenceError: underlying object has vanished``). The
specialised loop that inlines those kernels is cached, which is what the next process loads.
:func:`share_numba_cache` installs both rules: for dispatchers created later (wrapping numba's
``Dispatcher.enable_caching``, when ``numba.core.dispatcher`` is imported, so that ``import
statespace`` still does not import numba) and for those already made; it changes only the caches
of functions whose module is in :data:`PACKAGES` or that :mod:`statespace._jit` declares.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import importlib.abc
import importlib.util
import os
import shutil
import stat
import sys
import tempfile
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
try:
    import msvcrt
except ImportError:  # not Windows
    msvcrt = None

__all__ = ["PACKAGES", "STAMP", "LOCK", "source_digest", "cache_folders", "drop_stale_numba_caches", "configure_numba_cache",
           "private_dir", "user_cache_dir", "fresh_private_dir", "cache_lock", "share_numba_cache", "share"]

#: The packages whose compiled code calls each other's.
PACKAGES = ("statespace", "filters", "smoothers")
#: The hash of the sources at the last drop, beside the ``statespace`` package's cache files.
STAMP = "numba-deps.sha1"
#: The lock file in each cache folder (see "Several processes at once" above); never deleted, since
#: a process that opened the old file and one that creates a new one would not exclude each other.
LOCK = "statespace-numba.lock"
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


def _compile_without_disk_cache() -> None:
    """Make ``cache=True`` compile in memory when numba finds no cache folder it can write,
    instead of raising "no locator available" at decoration time (the last resort)."""
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.enable_caching
    if getattr(original, "_statespace_fallback", False):
        return

    def enable_caching(self):
        try:
            original(self)
        except RuntimeError:  # no writable cache folder anywhere: no disk cache for this function
            pass

    enable_caching._statespace_fallback = True
    Dispatcher.enable_caching = enable_caching


def configure_numba_cache(root: str | os.PathLike | None = None, *, fallbacks=None) -> str | None:
    """Give numba a cache folder it can write when it has none (see the module docstring).

    Nothing changes when ``NUMBA_CACHE_DIR`` is set, when every folder of the packages under
    ``root`` (default: the folder that holds this package) can cache in its ``__pycache__``, or
    when numba's user-wide cache is writable. Otherwise ``NUMBA_CACHE_DIR`` (and numba's config,
    if numba is already imported) is set to the first private folder of ``fallbacks`` (callables
    returning a path or ``None``; default: the user's cache, the system temp folder, a fresh
    temporary folder), and without any, numba compiles without a disk cache. Returns the folder
    set, or ``None`` when nothing was set. Either way, every cache of the packages is then shared
    safely between processes (:func:`share_numba_cache`)."""
    share_numba_cache()
    try:
        if _user_dir_setting():
            return None
        root = Path(__file__).resolve().parent.parent if root is None else Path(root)
        if all(_can_write(d / "__pycache__") for d in _module_dirs(root)):
            return None
        if _can_write(_numba_user_wide_dir()):
            return None
        if fallbacks is None:
            fallbacks = (lambda: user_cache_dir("numba"), lambda: _temp_cache_dir("numba"),
                         lambda: fresh_private_dir("statespace-numba-"))
        for candidate in fallbacks:
            path = candidate()
            if path is not None:
                os.environ["NUMBA_CACHE_DIR"] = path  # numba re-reads the environment before compiling
                config = sys.modules.get("numba.core.config")
                if config is not None:
                    config.CACHE_DIR = path
                return path
        _compile_without_disk_cache()
    except OSError:
        pass
    return None


# ---------------------------------------------------------------------------- several processes at once
_held = threading.local()  # folder -> depth of the locks this thread holds on it


def _acquire(fd: int) -> bool:
    """Block until this process holds the exclusive lock of the open file ``fd``; ``False`` when the
    platform or the file system has no such lock (the caller then goes on unlocked)."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return True
        if msvcrt is not None:
            while True:  # LK_LOCK gives up after 10 attempts a second apart: keep waiting
                try:
                    msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                    return True
                except OSError as exc:
                    if getattr(exc, "errno", None) not in (13, 36):  # EACCES, EDEADLOCK: held by another
                        return False
    except OSError:  # e.g. ENOLCK on a network file system without locks
        return False
    return False


def _release(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    elif msvcrt is not None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


@contextlib.contextmanager
def cache_lock(folder: str | os.PathLike):
    """Hold the exclusive inter-process lock of the numba cache folder ``folder`` (the file
    :data:`LOCK` in it, created when missing; the folder itself is not created).

    Reentrant within a thread (a nested use only counts), exclusive between processes and between
    threads (each thread opens its own descriptor). Goes on without a lock when the lock file
    cannot be opened (no folder yet: nothing to read; a read-only folder: nobody writes there) or
    the system has no lock."""
    folder = os.path.abspath(os.fspath(folder))
    held = _held.__dict__.setdefault("depth", {})
    if folder in held:
        held[folder] += 1
        try:
            yield
        finally:
            held[folder] -= 1
        return
    fd = None
    try:
        fd = os.open(os.path.join(folder, LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        pass
    locked = fd is not None and _acquire(fd)
    held[folder] = 1
    try:
        yield
    finally:
        del held[folder]
        if fd is not None:
            try:
                if locked:
                    _release(fd)
            finally:
                os.close(fd)


def _names_an_object(sig) -> bool:
    """Whether the argument types of ``sig`` hold a type of a live object (numba's ``WeakType``:
    dispatchers, including :class:`statespace._jit.DirectType`), at any depth of tuples."""
    from numba.core import sigutils, types

    try:
        args = sigutils.normalize_signature(sig)[0]
    except (TypeError, ValueError):
        return False
    stack = list(args)
    while stack:
        t = stack.pop()
        if isinstance(t, types.WeakType):
            return True
        if isinstance(t, types.BaseTuple):
            stack.extend(t.types)
    return False


_SHARED: dict[str, type] = {}


def _shared_classes() -> tuple[type, type]:
    """numba's ``FunctionCache`` and ``IndexDataCacheFile`` with the rules of the module docstring
    (made when first needed, so that this module does not import numba)."""
    if not _SHARED:
        from numba.core.caching import FunctionCache, IndexDataCacheFile

        class LockedIndexDataCacheFile(IndexDataCacheFile):
            """The index and data files of one function, read and written under the folder's lock."""

            def save(self, key, data):
                with cache_lock(self._cache_path):
                    super().save(key, data)

            def load(self, key):
                with cache_lock(self._cache_path):
                    return super().load(key)

            def flush(self):
                with cache_lock(self._cache_path):
                    super().flush()

        class SharedFunctionCache(FunctionCache):
            """A function's disk cache, shared safely between processes; overloads typed by live
            objects stay in memory."""

            def load_overload(self, sig, target_context):
                if _names_an_object(sig):
                    return None
                return super().load_overload(sig, target_context)

            def save_overload(self, sig, data):
                if not _names_an_object(sig):
                    super().save_overload(sig, data)

        _SHARED["file"] = LockedIndexDataCacheFile
        _SHARED["cache"] = SharedFunctionCache
    return _SHARED["cache"], _SHARED["file"]


def share(dispatcher) -> None:
    """Give ``dispatcher``'s disk cache (if it has numba's own ``FunctionCache``) the rules of the
    module docstring. Anything else is left as it is."""
    cache = getattr(dispatcher, "_cache", None)
    if cache is None or type(cache).__name__ != "FunctionCache":  # no disk cache (NullCache)
        return
    shared_cache, locked_file = _shared_classes()
    if type(cache) is shared_cache.__bases__[0] and type(cache._cache_file) is locked_file.__bases__[0]:
        cache.__class__ = shared_cache  # subclasses without state of their own: only the methods change
        cache._cache_file.__class__ = locked_file


def _ours(dispatcher) -> bool:
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    return module.partition(".")[0] in PACKAGES


def _wrap_enable_caching() -> None:
    """Make ``Dispatcher.enable_caching`` call :func:`share` for this project's functions, and share
    the caches of the dispatchers of this project already made."""
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.enable_caching
    if not getattr(original, "_statespace_shared", False):
        def enable_caching(self):
            original(self)
            if _ours(self):
                share(self)

        enable_caching._statespace_shared = True
        Dispatcher.enable_caching = enable_caching
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in PACKAGES and module is not None:
            for value in list(vars(module).values()):
                if isinstance(value, Dispatcher) and _ours(value):
                    share(value)


class _AfterDispatcherImport(importlib.abc.MetaPathFinder):
    """Runs :func:`_wrap_enable_caching` right after ``numba.core.dispatcher`` is imported."""

    NAME = "numba.core.dispatcher"

    def find_spec(self, fullname, path, target=None):
        if fullname != self.NAME:
            return None
        sys.meta_path.remove(self)  # let the other finders find it; once is enough
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module

        def exec_then_wrap(module):
            exec_module(module)
            _wrap_enable_caching()

        spec.loader.exec_module = exec_then_wrap
        return spec


def share_numba_cache() -> None:
    """Install the rules of the module docstring ("Several processes at once") for every numba
    cache of this project: now if ``numba.core.dispatcher`` is imported, else when it is."""
    if "numba.core.dispatcher" in sys.modules:
        _wrap_enable_caching()
    elif not any(isinstance(f, _AfterDispatcherImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterDispatcherImport())


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


def drop_stale_numba_caches(root: str | os.PathLike | None = None) -> bool:
    """Delete every numba cache file of the packages under ``root`` (default: the folder that
    holds this package) when their sources changed since the last call; returns whether it
    dropped them. Never raises ``OSError`` (read-only installs)."""
    try:
        root = Path(__file__).resolve().parent.parent if root is None else Path(root)
        folders = cache_folders(root)
        if not folders:
            return False
        digest = source_digest(root)
        stamp = folders[0] / STAMP  # beside the statespace package's own cache files
        if stamp.exists() and stamp.read_text() == digest:
            return False
        stamp.parent.mkdir(parents=True, exist_ok=True)
        # under the lock: processes started together drop once (the first stamps, the others
        # then see the stamp), and no process is between reading an index and its data
        with cache_lock(stamp.parent):
            if stamp.exists() and stamp.read_text() == digest:
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
