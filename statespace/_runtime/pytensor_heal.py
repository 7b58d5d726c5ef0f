"""Compiled modules in PyTensor's cache that cannot be whole are removed before PyTensor loads them.

PyTensor keeps each compiled C module as a shared object (``<compiledir>/<module dir>/m<hash>.so``
beside its ``key.pkl`` and source). One left empty or overwritten by a full disk or a killed
process makes every later compile of that graph fail with an ``ImportError`` traceback; one cut
short kills the process outright (a bus error, when the loader maps pages past the end of the
file). So before PyTensor loads anything from a compile directory, :func:`heal_compiledir` reads
the headers of every shared object there (ELF, on Linux and the BSDs: the program and section
header tables, and every segment they describe, must lie inside the file) and removes the module
folder of one that fails, with one :class:`statespace._runtime.cache.CacheWarning` per folder naming it;
PyTensor then compiles that module again. It holds PyTensor's own lock of the directory
(``<compiledir>/.lock``, the ``filelock`` package PyTensor uses) meanwhile, so a module another
process is still writing is never taken for a damaged one; when the lock is not free within a few
seconds nothing is removed. Only headers are read (a few hundred bytes a module), once per
directory and process.
"""

from __future__ import annotations

import os
import shutil
import struct
import sys
from pathlib import Path

from statespace._runtime.cache_files import warn_once

__all__ = ["elf_problem", "heal_compiledir"]

#: Platforms whose shared objects are ELF files.
ELF_PLATFORMS = ("linux", "freebsd", "openbsd", "netbsd")
_healed: set[str] = set()


def elf_problem(path: str | os.PathLike) -> str | None:
    """Why the ELF shared object ``path`` cannot be whole (no ELF header, or a header table or
    segment past the end of the file), or ``None``. Format: the System V ABI, "ELF Header" and
    "Program Header" (``e_phoff``, ``e_shoff``, ``p_offset + p_filesz``)."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 52 or head[:4] != b"\x7fELF" or head[4] not in (1, 2) or head[5] not in (1, 2):
                return f"not a shared object ({size:,} bytes without an ELF header)"
            end = "<" if head[5] == 1 else ">"
            if head[4] == 2:  # 64-bit
                phoff, shoff = struct.unpack_from(end + "QQ", head, 0x20)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", head, 0x36)
                entry, offset = end + "IIQQQQ", (2, 5)  # p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz
            else:
                phoff, shoff = struct.unpack_from(end + "II", head, 0x1C)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", head, 0x2A)
                entry, offset = end + "IIIIII", (1, 4)  # p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz
            for table, count, width in (("program", phnum, phentsize), ("section", shnum, shentsize)):
                start = phoff if table == "program" else shoff
                if count and start + count * width > size:
                    return f"cut short: its {table} header table ends at byte {start + count * width:,} of {size:,}"
            f.seek(phoff)
            headers = f.read(phnum * phentsize)
        for k in range(phnum):
            fields = struct.unpack_from(entry, headers, k * phentsize)
            if fields[offset[0]] + fields[offset[1]] > size:
                return f"cut short: a segment ends at byte {fields[offset[0]] + fields[offset[1]]:,} of {size:,}"
    except (OSError, struct.error) as exc:
        return f"unreadable ({exc})"
    return None


def _lock(folder: Path):
    """PyTensor's lock of the compile directory ``folder`` (``None`` when it is not free soon, or
    when ``filelock`` is missing: then PyTensor is too)."""
    try:
        from filelock import FileLock, Timeout
    except ImportError:
        return None
    lock = FileLock(str(folder / ".lock"))
    try:
        lock.acquire(timeout=10)
    except (Timeout, OSError):
        return None
    return lock


def heal_compiledir(base: str | os.PathLike | None) -> list[Path]:
    """Remove the module folders of the shared objects that cannot be whole (:func:`elf_problem`)
    in the PyTensor compile directory ``base`` (a ``base_compiledir``, whose ``compiledir_*``
    folders are searched, or a ``compiledir``), under PyTensor's lock, once per process; one
    warning per ``base`` names it. Returns the folders removed."""
    if base is None or not sys.platform.startswith(ELF_PLATFORMS):
        return []
    base = Path(os.path.abspath(os.path.expanduser(os.fspath(base))))
    if str(base) in _healed or not base.is_dir():
        return []
    _healed.add(str(base))
    removed, first = [], None
    for compiledir in [base, *sorted(base.glob("compiledir_*"))]:
        modules = sorted(compiledir.glob("*/*.so"))
        if not modules:
            continue
        lock = _lock(compiledir)
        if lock is None:
            continue
        try:
            for module in modules:
                problem = elf_problem(module)
                if problem is not None and module.parent != compiledir and module.parent.is_dir():
                    shutil.rmtree(module.parent, ignore_errors=True)
                    removed.append(module.parent)
                    first = first or f"{module.relative_to(base)}: {problem}"
        finally:
            lock.release()
    if removed:
        warn_once(base, "damaged", f"statespace: the PyTensor cache in {base} held {len(removed)} compiled "
                                   f"module(s) that cannot be loaded ({first}); removed, they are compiled again",
                  stacklevel=3)
    return removed
