"""Where PyTensor caches the C code it compiles for PyMC models.

PyTensor caches compiled code in ``base_compiledir`` (``~/.pytensor`` by default). Unless
``PYTENSOR_FLAGS`` already sets ``compiledir`` or ``base_compiledir``, :func:`configure_pytensor`
points it at ``compile_dir`` (default :func:`default_compile_dir`: ``<system temp>/statespace-
pytensor-<user>``, kept between runs so the cache stays warm) by setting
``os.environ["PYTENSOR_FLAGS"]`` *before* PyTensor is imported. This only works if PyTensor has not
been imported yet in the process: PyTensor reads the flag once, at import (import pymc only after
creating or fitting a ``PyMCSmoother``, or set ``PYTENSOR_FLAGS`` yourself, e.g.
``PYTENSOR_FLAGS=base_compiledir=/path``). The model's data enter as ``pm.Data`` (shared variables
without static shapes), so the compiled code does not depend on the table: a warm cache serves
every data set with the same link, draw model and set of inferred parameters (what that saves is
measured in docs/benchmarks.md).
"""

from __future__ import annotations

import getpass
import os
import stat
import sys
import tempfile
import warnings

__all__ = ["configure_pytensor", "default_compile_dir"]


def default_compile_dir() -> str:
    """The PyTensor cache used when neither ``compile_dir`` nor ``PYTENSOR_FLAGS`` says one:
    a per-user folder in the system's temporary directory (never the home directory)."""
    try:
        user = getpass.getuser()
    except Exception:  # pragma: no cover - no user name (some containers)
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"statespace-pytensor-{user}")


def _private_dir(path: str) -> str:
    """``path`` as a directory only this user can use (created, or set, with mode 0700). PyTensor
    loads compiled code from its cache, so a folder that another user created first (or a link)
    would run their code here: then a fresh private directory is used instead, with a warning."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        owner_ok = not hasattr(os, "getuid") or st.st_uid == os.getuid()
        if stat.S_ISDIR(st.st_mode) and owner_ok:
            if st.st_mode & 0o077:  # ours, from before: make it private
                os.chmod(path, 0o700)
            return path
    except OSError:
        pass
    fresh = tempfile.mkdtemp(prefix="statespace-pytensor-")
    warnings.warn(f"the PyTensor cache {path} is not a private directory of this user (mode 0700, owned "
                  f"by you); compiling into {fresh} instead", RuntimeWarning, stacklevel=3)
    return fresh


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
        if wanted is not None and os.path.realpath(current) != os.path.realpath(wanted):
            warnings.warn(f"PyTensor was imported before PyMCSmoother could set its compile directory; "
                          f"compiled code goes to {current}, not {wanted}. Set "
                          f"PYTENSOR_FLAGS=base_compiledir=... before importing pytensor or pymc.",
                          RuntimeWarning, stacklevel=3)
        return current
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    chosen = _flags_compiledir(flags)
    if chosen is not None:
        if wanted is not None and os.path.realpath(os.path.expanduser(chosen)) != os.path.realpath(wanted):
            warnings.warn(f"PYTENSOR_FLAGS already sets the compile directory ({flags!r}); "
                          f"compile_dir={wanted!r} is ignored", RuntimeWarning, stacklevel=3)
        return chosen
    path = wanted if wanted is not None else _private_dir(default_compile_dir())
    os.environ["PYTENSOR_FLAGS"] = (flags + "," if flags.strip() else "") + f"base_compiledir={path}"
    return path
