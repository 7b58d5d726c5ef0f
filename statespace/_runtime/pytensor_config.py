"""Where PyTensor caches the C code it compiles for PyMC models.

PyTensor caches compiled code in ``base_compiledir`` (``~/.pytensor`` by default). Unless
``PYTENSOR_FLAGS`` already sets ``compiledir`` or ``base_compiledir``, :func:`configure_pytensor`
points it at ``compile_dir`` (default :func:`default_compile_dir`: the user's cache directory,
``$XDG_CACHE_HOME/statespace/pytensor`` or ``~/.cache/statespace/pytensor``; ``~/Library/Caches``
on macOS, ``%LOCALAPPDATA%`` on Windows), kept between runs so the cache stays warm, by setting
``os.environ["PYTENSOR_FLAGS"]`` *before* PyTensor is imported. The default folder is created
private (mode 0700, owned by the user, checked with ``lstat``: PyTensor loads and runs the code it
finds there, so a link or another user's folder is refused, with a warning); when it cannot be
(an unwritable home, as in many containers), a fresh private ``tempfile.mkdtemp`` folder is used
for the run and removed at exit, so every run compiles again: set ``PYTENSOR_FLAGS=base_compiledir=
/path`` (or ``compile_dir=``) to a writable folder of yours to keep the cache warm. This only works
if PyTensor has not been imported yet in the process: PyTensor reads the flag once, at import
(import pymc only after creating or fitting a ``PyMCSmoother``, or set ``PYTENSOR_FLAGS`` yourself).
The model's data enter as ``pm.Data`` (shared variables without static shapes), so the compiled
code does not depend on the table: a warm cache serves every data set with the same link, draw
model and set of inferred parameters (what that saves is measured in docs/benchmarks.md).

A compile directory that ``PYTENSOR_FLAGS`` chooses but that cannot be written, or that another
user could write (:func:`statespace._runtime.cache.others_can_write`), is refused with one
:class:`statespace._runtime.cache.CacheWarning` and replaced as above; and before PyTensor loads anything
from the directory in use, compiled modules that cannot be whole (left empty, cut short or
overwritten) are removed, to be compiled again (:mod:`statespace._runtime.pytensor_heal`).
"""

from __future__ import annotations

import os
import sys
import warnings

from statespace._runtime.cache import (_can_write, fresh_private_dir, others_can_write, private_dir, user_cache_dir)
from statespace._runtime.cache_files import warn_once
from statespace._runtime.pytensor_heal import heal_compiledir

__all__ = ["configure_pytensor", "default_compile_dir"]


def default_compile_dir() -> str | None:
    """The PyTensor cache used when neither ``compile_dir`` nor ``PYTENSOR_FLAGS`` says one:
    ``statespace/pytensor`` in the user's cache directory (the path only: :func:`configure_pytensor`
    creates it private); ``None`` when the user has no home directory."""
    return user_cache_dir("pytensor", create=False)


def _fallback(path: str | None) -> str | None:
    """A fresh private temporary folder (removed at exit) instead of ``path``: with a warning when
    ``path`` exists (a link, another user's folder or not writable: PyTensor would run code found
    there), silently when it could not be created (an unwritable home)."""
    fresh = fresh_private_dir("statespace-pytensor-")
    if fresh is not None and path is not None and os.path.lexists(path):
        warnings.warn(f"the PyTensor cache {path} is not a private directory of this user (mode 0700, owned "
                      f"by you, writable); compiling into {fresh} instead", RuntimeWarning, stacklevel=4)
    return fresh


def _private_dir(path: str) -> str | None:
    """``path`` as a directory only this user can use (:func:`statespace._runtime.cache.private_dir`:
    created, or set, with mode 0700; not a link, not another user's; no folder above it that
    another user could change, :func:`statespace._runtime.cache.others_can_write`), else :func:`_fallback`."""
    return path if private_dir(path) is not None and others_can_write(path) is None else _fallback(path)


def _default_dir() -> str | None:
    """:func:`default_compile_dir`, created private with its ``statespace`` folder, else :func:`_fallback`."""
    path = user_cache_dir("pytensor")
    return path if path is not None and others_can_write(path) is None else _fallback(default_compile_dir())


def _refused(chosen: str) -> str | None:
    """Why the compile directory the flags chose may not be used (PyTensor runs the code it finds
    there, and fails with a traceback on one it cannot write), or ``None``."""
    if not _can_write(chosen):
        return "cannot be written"
    problem = others_can_write(chosen)
    return None if problem is None else f"is not private to this user ({problem})"


def _without_compiledir(flags: str) -> str:
    return ",".join(item for item in flags.split(",") if item.partition("=")[0].strip()
                    not in ("compiledir", "base_compiledir") and item.strip())


def _flags_compiledir(flags: str) -> str | None:
    """The compile directory chosen in a ``PYTENSOR_FLAGS`` string, if any."""
    for item in flags.split(","):
        key, _, value = item.partition("=")
        if key.strip() in ("compiledir", "base_compiledir"):
            return value.strip()
    return None


def configure_pytensor(compile_dir: str | os.PathLike | None = None) -> str | None:
    """Point PyTensor's compile cache at ``compile_dir`` (default :func:`default_compile_dir`)
    through ``PYTENSOR_FLAGS``, unless the flags already choose one. Must run before PyTensor is
    imported; afterwards it only warns when an explicit ``compile_dir`` cannot take effect.
    Returns the compile directory in use (or ``None`` when unknown)."""
    wanted = None if compile_dir is None else os.path.abspath(os.fspath(compile_dir))
    if "pytensor" in sys.modules:
        import pytensor

        current = str(pytensor.config.base_compiledir)
        heal_compiledir(current)
        if wanted is not None and os.path.realpath(current) != os.path.realpath(wanted):
            warnings.warn(f"PyTensor was imported before PyMCSmoother could set its compile directory; "
                          f"compiled code goes to {current}, not {wanted}. Set "
                          f"PYTENSOR_FLAGS=base_compiledir=... before importing pytensor or pymc.",
                          RuntimeWarning, stacklevel=3)
        return current
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    chosen = _flags_compiledir(flags)
    if chosen is not None:
        why = _refused(os.path.expanduser(chosen))
        if why is None:
            if wanted is not None and os.path.realpath(os.path.expanduser(chosen)) != os.path.realpath(wanted):
                warnings.warn(f"PYTENSOR_FLAGS already sets the compile directory ({flags!r}); "
                              f"compile_dir={wanted!r} is ignored", RuntimeWarning, stacklevel=3)
            heal_compiledir(chosen)
            return chosen
        flags = _without_compiledir(flags)
    path = _private_dir(wanted) if wanted is not None else _default_dir()
    if chosen is not None:
        warn_once(chosen, "refused", f"statespace: the PyTensor compile directory {chosen} set in PYTENSOR_FLAGS "
                                     f"{why}; PyTensor compiles into {path or 'its own default'} instead",
                  stacklevel=3)
    if path is None:  # no writable folder at all: PyTensor's own default
        os.environ["PYTENSOR_FLAGS"] = flags
        return None
    os.environ["PYTENSOR_FLAGS"] = (flags + "," if flags.strip() else "") + f"base_compiledir={path}"
    heal_compiledir(path)
    return path
