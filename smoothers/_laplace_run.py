"""What surrounds a Laplace fit for its length: BLAS limited to ``blas_threads`` threads
(:func:`blas_limits`), and the progress lines of a long fit on stderr (:class:`Progress`)."""

from __future__ import annotations

import contextlib
import sys
import time

__all__ = ["blas_limits", "Progress"]


def blas_limits(threads: int | None):
    """A context in which BLAS (OpenBLAS, MKL, BLIS: every one loaded) runs on at most ``threads``
    threads (threadpoolctl); ``None``: BLAS is left as it is. The fits call BLAS on long vectors
    and small dense blocks, where a second thread only spins: it costs CPU time, and on a busy
    machine slows the fit."""
    if threads is None:
        return contextlib.nullcontext()
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=int(threads), user_api="blas")


_CONTROLLER = None


class Progress:
    """Progress lines on stderr for a long fit: with ``progress=None``, when stderr is a terminal
    and once the fit has run for ``_PROGRESS_AFTER`` seconds; always with ``True``; never with
    ``False``."""

    def __init__(self, setting: bool | None, t0: float, name: str):
        if setting is None:
            stream = sys.stderr
            setting = None if (stream is not None and hasattr(stream, "isatty") and stream.isatty()) else False
        self.setting, self.t0, self.name = setting, t0, name

    def __call__(self, message: str) -> None:
        if self.setting is False:
            return
        elapsed = time.perf_counter() - self.t0
        if self.setting is None and elapsed < _PROGRESS_AFTER:
            return
        print(f"{self.name}: {message} [{elapsed:.1f} s]", file=sys.stderr, flush=True)


#: With ``progress=None`` a fit reports its steps on a terminal once it has run this long (seconds).
_PROGRESS_AFTER = 2.0
