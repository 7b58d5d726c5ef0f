"""Opening a games CSV file for :meth:`statespace.Games.from_csv`: a pipe as a file, every line
within a stated length, and the ``csv`` module's field limit out of the way.

- The readers go through a file more than once (the header, a scan for text the two CSV engines
  read differently, the engine itself, and the C engine again where pyarrow's reading is not
  kept), so a source that can be read only once (a pipe, a FIFO, ``/dev/stdin``, a shell's process
  substitution ``<(...)``) is first copied, block by block, to a temporary file, removed after.
- A line longer than the limit (``statespace.data.games.MAX_LINE_BYTES``) is a row error before any
  parser sees the file: a parser holds a whole line (a field of it, for the ``csv`` module) in
  memory, so a file without line ends would otherwise be read whole, however large. The check
  reads in bounded memory: a regular file is mapped and only the bytes near each window's end
  are touched (one window per ``limit`` bytes); a pipe's blocks are checked as they are copied,
  and the copy stops at the first line found too long.
- The ``csv`` module refuses a field over its limit (131,072 characters by default, a setting of
  the whole process); :func:`field_limit` raises it to the line limit while a file is read and
  puts it back.
"""

from __future__ import annotations

import csv
import mmap
import os
import stat
import tempfile
from contextlib import contextmanager
from typing import Iterator

from statespace.data.columns import GamesError

#: bytes copied from a pipe at a time
BLOCK = 1 << 20


def _last_end(buf, lo: int, hi: int) -> int:
    """The index of the last line end (``\\n``, else ``\\r``) in ``buf[lo:hi]``, or -1. ``buf`` is
    bytes or an mmap; only the bytes from ``hi`` back to the line end are read."""
    p = buf.rfind(b"\n", lo, hi)
    return p if p >= 0 else buf.rfind(b"\r", lo, hi)


class LineCheck:
    """Finds the first line longer than ``limit`` bytes (its line end not counted) in data fed
    block by block.

    A line that starts at ``s`` is within the limit when a line end lies in ``[s, s + limit]``;
    from ``s`` the check jumps to just after the last line end of that window, so that a file is
    checked with one backward search per ``limit`` bytes or so, and a long line is found whatever
    the line end the jump lands on (every later line start is reached, or a long line before it
    is found first)."""

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.offset = 0  # bytes fed so far
        self.start = 0  # where the current line starts (an absolute offset)

    def feed(self, block) -> int | None:
        """Check the next block; the offset of the first too-long line's start, or ``None``."""
        off, size = self.offset, len(block)
        self.offset += size
        while True:
            lo = max(self.start - off, 0)
            hi = self.start + self.limit + 1 - off  # the window's end, in this block
            if hi > size:  # the window reaches past this block: decided by a later one
                p = _last_end(block, lo, size)
                if p >= 0:
                    self.start = off + p + 1
                return None
            p = _last_end(block, lo, hi)
            if p < 0:
                return self.start
            self.start = off + p + 1

    def finish(self) -> int | None:
        """At the end of the data: the last line (without a line end) checked too."""
        return self.start if self.offset - self.start > self.limit else None


def _line_number(path: str, offset: int) -> int:
    """The 1-based line that starts at byte ``offset`` (line ends counted before it: ``\\n``, and
    a ``\\r`` not followed by ``\\n``)."""
    ends, left, last = 0, offset, b""
    with open(path, "rb") as f:
        while left > 0 and (block := f.read(min(BLOCK, left))):
            left -= len(block)
            ends += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
            if last == b"\r" and block[:1] == b"\n":
                ends -= 1  # a \r\n split between two blocks, counted twice
            last = block[-1:]
    return ends + 1


def _too_long(path: str, offset: int, given: str, limit: int) -> GamesError:
    line = _line_number(path, offset)
    what = "the header (line 1)" if line == 1 else f"row {line - 2} (line {line})"
    return GamesError(f"cannot read {given} as CSV: {what} is longer than {limit:,} bytes, the limit of a line "
                      f"(statespace.data.games.MAX_LINE_BYTES); a games file has one game a line",
                      rows=[] if line == 1 else [line - 2])


def _check_regular(path: str, size: int, limit: int) -> None:
    if size <= limit:  # no line can be longer than the file
        return
    check = LineCheck(limit)
    with open(path, "rb") as f:
        try:
            view = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # a file system without mmap: read in blocks
            view = None
        if view is None:
            bad = None
            while bad is None and (block := f.read(BLOCK)):
                bad = check.feed(block)
        else:
            with view:
                bad = check.feed(view)
        if bad is None:
            bad = check.finish()
    if bad is not None:
        raise _too_long(path, bad, path, limit)


def _copy(path: str, target, tmp: str, limit: int) -> None:
    """Copy a pipe's bytes to ``target`` (the open temporary file ``tmp``), checking each block's
    lines as it comes; stops at the first line found too long."""
    check = LineCheck(limit)
    bad = None
    with open(path, "rb") as src:
        while bad is None and (block := src.read(BLOCK)):
            target.write(block)
            bad = check.feed(block)
    if bad is None:
        bad = check.finish()
    target.flush()
    if bad is not None:
        raise _too_long(tmp, bad, path, limit)


@contextmanager
def readable(path: str, limit: int) -> Iterator[tuple[str, str]]:
    """``(file, shown)``: a regular file holding ``path``'s bytes (``path`` itself, or a temporary
    copy of a pipe, removed on exit) and the name to show in messages (the file's base name, or
    the path given for a pipe); a :class:`GamesError` when a line is longer than ``limit`` bytes."""
    info = os.stat(path)
    if stat.S_ISDIR(info.st_mode):  # the readers' own error (IsADirectoryError)
        yield path, os.path.basename(path)
        return
    if stat.S_ISREG(info.st_mode):
        _check_regular(path, info.st_size, limit)
        yield path, os.path.basename(path)
        return
    fd, tmp = tempfile.mkstemp(prefix="statespace-", suffix=".csv")
    try:
        with os.fdopen(fd, "wb") as target:
            _copy(path, target, tmp, limit)
        yield tmp, path
    finally:
        os.unlink(tmp)


@contextmanager
def field_limit(limit: int) -> Iterator[None]:
    """The ``csv`` module's field limit at least ``limit`` inside the block (then as it was)."""
    old = csv.field_size_limit()
    if old >= limit:
        yield
        return
    csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(old)
