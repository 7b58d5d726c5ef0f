"""Data set files checked on every load against the size and SHA-256 recorded beside them.

Each folder of data set files holds a ``manifest.json``: ``{"files": {name: {"size": bytes,
"sha256": hex}}, ...}`` (and, for a fetched data set, the ``content`` hash of its games and the
``source`` it was fetched from). The shipped data sets' manifests travel in the package
(``statespace/data/<name>/manifest.json``); :func:`statespace.data.fetch.fetch` writes one beside
every file it fetches. :func:`verify` compares a file with its record: the size first (a stat),
then the SHA-256, computed once per process and file (remembered under the file's size,
modification and change times and inode, so a file changed since is hashed again). A file that
differs, a record that is missing or unreadable, raise :class:`DatasetDamaged`, a
:class:`statespace.GamesError` whose message names the file and how to get it back; a damaged
file is never read, so it cannot end in a decompression traceback or, altered consistently, in
a silently different table.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from statespace.data.columns import GamesError

__all__ = ["MANIFEST", "DatasetDamaged", "digest", "record", "read_manifest", "verify"]

#: The record of sizes and hashes in each data set folder.
MANIFEST = "manifest.json"
_verified: dict[str, tuple[tuple[int, int, int, int], str]] = {}


class DatasetDamaged(GamesError):
    """A data set's file does not match the size and SHA-256 recorded beside it (or has no such
    record, or does not hold the games this version was tested on); the message names the file
    and how to get it back."""


def digest(path: str | os.PathLike) -> tuple[int, str]:
    """Size in bytes and SHA-256 (hex) of the file ``path``."""
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
            size += len(block)
    return size, h.hexdigest()


def record(folder: str | os.PathLike, names, **extra) -> Path:
    """Write ``folder/manifest.json`` with the size and SHA-256 of each file of ``names`` in
    ``folder`` and the ``extra`` fields; atomically (a temporary file, then a rename)."""
    folder = Path(folder)
    files = {}
    for name in names:
        size, sha = digest(folder / name)
        files[name] = {"size": size, "sha256": sha}
    target = folder / MANIFEST
    tmp = folder / f".{MANIFEST}.{os.getpid()}"
    tmp.write_text(json.dumps({"files": files, **extra}, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, target)
    return target


def read_manifest(folder: str | os.PathLike, remedy: str) -> dict | None:
    """The manifest of ``folder``, ``None`` when there is none; :class:`DatasetDamaged` (naming it
    and the ``remedy``) when it cannot be read as one."""
    path = Path(folder) / MANIFEST
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise DatasetDamaged(f"cannot read {path} ({exc.strerror}); {remedy}") from None
    try:
        data = json.loads(text)
        files = data["files"]
        if not isinstance(files, dict) or not all(isinstance(v.get("size"), int) and isinstance(v.get("sha256"), str)
                                                  for v in files.values()):
            raise ValueError("files: each needs a whole size and a sha256")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DatasetDamaged(f"{path} is not a record of sizes and hashes ({type(exc).__name__}: "
                             f"{str(exc)[:80]}); {remedy}") from None
    return data


def verify(path: str | os.PathLike, remedy: str, manifest: dict | None = None) -> None:
    """Check the file ``path`` against the size and SHA-256 recorded in the manifest of its folder
    (or ``manifest``, read already); :class:`DatasetDamaged` naming it and ``remedy`` when it
    differs or has no record."""
    path = Path(path)
    if manifest is None:
        manifest = read_manifest(path.parent, remedy)
    entry = None if manifest is None else manifest["files"].get(path.name)
    if entry is None:
        raise DatasetDamaged(f"{path} has no recorded size and SHA-256 (no entry in {path.parent / MANIFEST}), "
                             f"so it cannot be checked; {remedy}")
    try:
        st = os.stat(path)
    except OSError as exc:
        raise DatasetDamaged(f"cannot read {path} ({exc.strerror}); {remedy}") from None
    if st.st_size != entry["size"]:
        raise DatasetDamaged(f"{path} is damaged: {st.st_size:,} bytes where {entry['size']:,} were recorded; {remedy}")
    key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
    seen = _verified.get(str(path))
    if seen == (key, entry["sha256"]):
        return
    size, sha = digest(path)
    if (size, sha) != (entry["size"], entry["sha256"]):
        raise DatasetDamaged(f"{path} is damaged: its SHA-256 is {sha[:16]}..., {entry['sha256'][:16]}... was "
                             f"recorded; {remedy}")
    _verified[str(path)] = (key, sha)
