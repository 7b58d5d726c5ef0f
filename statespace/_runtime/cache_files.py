"""numba's cache files of this project: shared safely between processes, and healed when damaged.

Several processes at once. A process pool (``ProcessPoolExecutor``, Dask workers) shares one cache
folder, and numba's cache has no lock between processes. Each function has one index file
(signature -> data file name) and one data file per signature; ``IndexDataCacheFile.save`` reads
the index, picks the first unused data file number, rewrites the index and then writes the data.
Each file is replaced atomically, but the read-modify-write is not: two processes saving two
signatures of one function (the specialised loops of :mod:`statespace._runtime.jit` are all signatures of
one function, ``_specialised``) can pick the same number, so the index can name a file that holds
the other signature's code, or name it before its data is written. And a process dropping stale
caches can delete files another is between reading the index and reading the data. So every
numba cache of these packages (and every kernel and loop declared through :mod:`statespace._runtime.jit`)
takes an exclusive lock on ``statespace-numba.lock`` in its cache folder while it reads or writes
that folder's index and data (:func:`cache_lock`: ``fcntl.flock``; ``msvcrt.locking`` on Windows;
no lock where neither exists or the file system refuses one, as numba has none), and
:func:`statespace._runtime.cache.drop_stale_numba_caches` holds the same locks while it checks the stamp
and deletes. Only the file reads and writes are locked, not the compilation, so processes still
compile in parallel.

Overloads whose signature holds a dispatcher type (a kernel compiled inside a specialised loop
receives other kernels typed by their dispatcher) are not cached on disk: numba's dispatcher types
compare by object identity and pickle the dispatcher by a random per-process id, so such an entry
never matches in another process, which appends one more entry each time, rebuilds (and compiles)
a copy of every dispatcher named in the index each time it reads it, and fails to write the index
back once such a copy is collected (``ReferenceError: underlying object has vanished``). The
specialised loop that inlines those kernels is cached, which is what the next process loads.

Damaged entries. A full disk, a killed process or a crash of the machine can leave an index
(``.nbi``) or data file (``.nbc``) empty, cut short or overwritten; numba then raises from inside
its load (``EOFError``, ``UnpicklingError``, even ``UnicodeDecodeError``) on every later run. Here
an entry that cannot be read, or whose compiled code cannot be rebuilt, is a cache miss: its files
are removed under the lock (the whole function's when its index is unreadable, else only that
signature's data file and index line), the function is compiled again and saved afresh, and one
:class:`CacheWarning` per folder and process names the folder. Each data file also carries the
SHA-256 of its contents (:data:`DATA_TAG`, then the digest, then numba's pickle), so a file whose
bytes changed in place is caught before its machine code is loaded, not only one that no longer
unpickles. A cache that cannot be written (a full disk, a folder made read-only) costs only the
disk copy: the compiled code is used in memory, with one warning per folder.

:func:`share_numba_cache` installs these rules: for dispatchers created later (wrapping numba's
``Dispatcher.enable_caching``, when ``numba.core.dispatcher`` is imported, so that ``import
statespace`` still does not import numba) and for those already made; it changes only the caches
of functions whose module is in :data:`PACKAGES` or that :mod:`statespace._runtime.jit` declares.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import importlib.abc
import importlib.util
import os
import pickle
import sys
import threading
import warnings

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None
try:
    import msvcrt
except ImportError:  # not Windows
    msvcrt = None

__all__ = ["PACKAGES", "LOCK", "DATA_TAG", "CacheWarning", "warn_once", "cache_lock", "share", "share_numba_cache"]

#: The packages whose compiled code calls each other's.
PACKAGES = ("statespace", "filters", "smoothers")
#: The lock file in each cache folder (see "Several processes at once" above); never deleted, since
#: a process that opened the old file and one that creates a new one would not exclude each other.
LOCK = "statespace-numba.lock"
#: How this project's numba data files begin: this tag, the SHA-256 of the rest, then numba's pickle.
DATA_TAG = b"statespace-nbc-sha256\n"


class CacheWarning(RuntimeWarning):
    """A compile cache was not used as it stood: a damaged entry was dropped and compiled again, a
    write failed, or a cache folder was refused (not writable, or writable by another user). The
    message names the folder."""


_warned: set[tuple[str, str]] = set()
_warned_lock = threading.Lock()


def warn_once(folder, kind: str, message: str, stacklevel: int = 2) -> None:
    """Warn ``message`` (a :class:`CacheWarning`) unless this process already warned ``kind``
    about ``folder``: one warning per folder, however many of its entries are damaged."""
    key = (os.path.abspath(os.fspath(folder)), kind)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, CacheWarning, stacklevel=stacklevel + 1)


def _why(exc: BaseException) -> str:
    """An exception as one short line (a pickle error can quote a long run of bytes)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:100]}" if text else type(exc).__name__


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
    dispatchers, including :class:`statespace._runtime.jit.DirectType`), at any depth of tuples."""
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


# ---------------------------------------------------------------------------- damaged entries
class _Damaged(Exception):
    """A data file whose contents do not match the digest written with them."""


def _seal(payload: bytes) -> bytes:
    return DATA_TAG + hashlib.sha256(payload).digest() + payload


def _unseal(blob: bytes) -> bytes:
    """numba's pickle from a data file: checked against its digest when it has one (a file without
    the tag was written by numba's own class, whose pickle then decides)."""
    if not blob.startswith(DATA_TAG):
        return blob
    digest, payload = blob[len(DATA_TAG):len(DATA_TAG) + 32], blob[len(DATA_TAG) + 32:]
    if hashlib.sha256(payload).digest() != digest:
        raise _Damaged(f"its contents do not match their SHA-256 ({len(blob):,} bytes)")
    return payload


_SHARED: dict[str, type] = {}


def _shared_classes() -> tuple[type, type]:
    """numba's ``FunctionCache`` and ``IndexDataCacheFile`` with the rules of the module docstring
    (made when first needed, so that this module does not import numba)."""
    if not _SHARED:
        from numba.core.caching import FunctionCache, IndexDataCacheFile

        class LockedIndexDataCacheFile(IndexDataCacheFile):
            """The index and data files of one function, read and written under the folder's lock;
            an entry that cannot be read is dropped (a miss), a write that fails is skipped."""

            def save(self, key, data):
                with cache_lock(self._cache_path):
                    try:
                        self._load_index()
                    except Exception as exc:  # noqa: BLE001 - whatever a damaged index raises
                        self.drop(None, exc)
                    try:
                        super().save(key, data)
                    except OSError as exc:
                        self._unwritable(exc)

            def load(self, key):
                with cache_lock(self._cache_path):
                    try:
                        overloads = self._load_index()
                    except Exception as exc:  # noqa: BLE001
                        self.drop(None, exc)
                        return None
                    name = overloads.get(key)
                    if name is None:
                        return None
                    try:
                        return self._load_data(name)
                    except OSError:  # removed while the index still names it (numba's own rule)
                        return None
                    except Exception as exc:  # noqa: BLE001
                        self.drop(key, exc)
                        return None

            def flush(self):
                with cache_lock(self._cache_path):
                    try:
                        super().flush()
                    except OSError as exc:
                        self._unwritable(exc)

            def _save_data(self, name, data):
                with self._open_for_write(self._data_path(name)) as f:
                    f.write(_seal(self._dump(data)))

            def _load_data(self, name):
                with open(self._data_path(name), "rb") as f:
                    blob = f.read()
                return pickle.loads(_unseal(blob))

            def drop(self, key, exc: BaseException) -> None:
                """Remove the entry of ``key`` (its data file and index line), or with ``key``
                ``None`` or an unreadable index every file of this function; warn once."""
                base = self._index_name[:-len(".nbi")]
                with cache_lock(self._cache_path):
                    victims, what = [], self._index_name
                    try:
                        overloads = None if key is None else self._load_index()
                    except Exception:  # noqa: BLE001 - the index too
                        overloads = None
                    if overloads is not None and key in overloads:
                        what = overloads.pop(key)
                        victims.append(self._data_path(what))
                        try:
                            self._save_index(overloads)
                        except OSError:
                            victims.append(self._index_path)
                    else:
                        victims.append(self._index_path)
                        victims.extend(glob.glob(os.path.join(glob.escape(self._cache_path),
                                                              glob.escape(base) + ".*.nbc")))
                    for path in victims:
                        try:
                            os.unlink(path)
                        except OSError:
                            pass
                warn_once(self._cache_path, "damaged",
                          f"statespace: the numba cache in {self._cache_path} held an entry that cannot be "
                          f"read ({what}: {_why(exc)}); it was removed and the function compiled again. "
                          f"Other damaged entries in this folder are dropped the same way without another "
                          f"warning.")

            def _unwritable(self, exc: OSError) -> None:
                warn_once(self._cache_path, "unwritable",
                          f"statespace: cannot write the numba cache in {self._cache_path} "
                          f"({exc.strerror or _why(exc)}); the compiled code is used in memory only")

        class SharedFunctionCache(FunctionCache):
            """A function's disk cache, shared safely between processes and healed when damaged;
            overloads typed by live objects stay in memory."""

            def load_overload(self, sig, target_context):
                if _names_an_object(sig):
                    return None
                try:
                    return super().load_overload(sig, target_context)
                except Exception as exc:  # noqa: BLE001 - the entry read but did not rebuild
                    try:
                        key = self._index_key(sig, target_context.codegen())
                    except Exception:  # noqa: BLE001
                        key = None
                    self._cache_file.drop(key, exc)
                    return None

            def save_overload(self, sig, data):
                if _names_an_object(sig):
                    return
                try:
                    super().save_overload(sig, data)
                except OSError as exc:  # the folder went away or became read-only
                    self._cache_file._unwritable(exc)

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


def _adopt(dispatcher) -> None:
    """:func:`statespace._runtime.tier.adopt`, imported when first needed: ``tier`` imports numba,
    whose import runs :func:`_wrap_enable_caching`, so importing ``tier`` there would find it half made
    when ``tier`` is the first module to import numba."""
    from statespace._runtime.tier import adopt

    adopt(dispatcher)


def _wrap_enable_caching() -> None:
    """Make ``Dispatcher.enable_caching`` call :func:`share` for this project's functions, and share
    the caches of the dispatchers of this project already made. Both also make their calls from
    Python tiered (:func:`statespace._runtime.tier.adopt`): ``cache=True`` is how every compiled
    function of these packages is declared, so this is the one place that sees them all made."""
    from numba.core.dispatcher import Dispatcher

    original = Dispatcher.enable_caching
    if not getattr(original, "_statespace_shared", False):
        def enable_caching(self):
            original(self)
            if _ours(self):
                share(self)
                _adopt(self)

        enable_caching._statespace_shared = True
        Dispatcher.enable_caching = enable_caching
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] in PACKAGES and module is not None:
            for value in list(vars(module).values()):
                if isinstance(value, Dispatcher) and _ours(value):
                    share(value)
                    _adopt(value)


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
    """Install the rules of the module docstring for every numba cache of this project: now if ``numba.core.dispatcher`` is imported, else when it is."""
    if "numba.core.dispatcher" in sys.modules:
        _wrap_enable_caching()
    elif not any(isinstance(f, _AfterDispatcherImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterDispatcherImport())
