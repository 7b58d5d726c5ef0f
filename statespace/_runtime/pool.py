"""Running many items on an executor for :func:`statespace.evaluation.study.study`,
:func:`statespace.compare` (``executor=``, ``n_jobs=``) and :func:`statespace.auto` (``n_jobs=``):
:func:`run_all`, and the clear error of a process pool that broke.

A broken pool is not the failure of one task: once a worker process ends abruptly (killed, out of
memory, crashed, or dead on start), the pool refuses every task still to run, so recording each as
a failed row would end the study as if it had done its work. It ends the run instead, with
:class:`concurrent.futures.process.BrokenProcessPool` (the executor's own error type) saying why.
The usual cause on the ``spawn`` start method (the default on macOS and Windows, and what
``n_jobs=`` uses everywhere): each worker starts by importing the main script, so a script that
starts the pool at its top level, without ``if __name__ == "__main__":``, makes every worker try to
start the pool again, which ``multiprocessing`` refuses, and the workers die.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
from typing import Any, Callable, Sequence

#: why a process pool breaks, as :func:`run_all`'s error says it
GUARD_HINT = ("each worker process starts by importing the main script, so a script must start the work "
              "under `if __name__ == \"__main__\":` (see 'Safe importing of main module' in Python's "
              "multiprocessing docs)")


def check_jobs(executor, n_jobs) -> int | None:
    """``n_jobs`` as a number of workers (``-1``: one per core), or ``None``; ``ValueError`` for a
    bad value, or with an ``executor`` too."""
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise ValueError(f"n_jobs must be a whole number >= 1, or -1 for one worker per core; got {n_jobs!r}")
    if executor is not None:
        raise ValueError("give either executor or n_jobs, not both")
    return (os.cpu_count() or 1) if n_jobs == -1 else n_jobs


def broken_message(ended: int, total: int) -> str:
    """What a broken pool's error says, after ``ended`` of ``total`` items ended."""
    if ended == 0:
        cause = (f"before any task ended, which is what a script without a main guard does: {GUARD_HINT}; "
                 f"otherwise a worker was killed (out of memory?) or crashed")
    else:
        cause = f"a worker was killed (out of memory?) or crashed; or {GUARD_HINT}"
    return (f"the process pool broke: a worker process ended abruptly, {ended} of {total} tasks had ended and the "
            f"rest were not run ({cause})")


def run_all(fn: Callable, items: Sequence, done: Callable[[int, Any], None], *, executor=None,
            n_jobs: int | None = None, failed: Callable[[int, BaseException], Any] | None = None) -> None:
    """Call ``fn(item)`` for every item and ``done(i, result)`` in this process as each ends (in
    the order they end): in this process one after the other (no ``executor``, ``n_jobs`` None or
    1), on ``executor`` (any :class:`concurrent.futures.Executor`), or on a process pool of
    ``n_jobs`` workers (``spawn``; ``-1``: one per core) made here and shut down at the end.

    A future that fails (the exception raised by ``fn`` or by the executor: an item that does not
    pickle) calls ``done(i, failed(i, exc))`` when ``failed`` is given and raises otherwise. A
    broken executor (:class:`concurrent.futures.BrokenExecutor`: a worker process lost) is no
    item's failure: the results that ended are passed to ``done``, then it raises an exception of
    its type saying why (:func:`broken_message`). When
    interrupted (``KeyboardInterrupt``), or when ``done`` raises, the futures not yet started are
    cancelled and the exception passes on; results already passed to ``done`` are kept by
    whatever ``done`` did with them."""
    jobs = check_jobs(executor, n_jobs)
    items = list(items)
    if executor is None and (jobs is None or jobs == 1 or len(items) <= 1):
        for i, item in enumerate(items):
            try:
                result = fn(item)
            except Exception as exc:
                if failed is None:
                    raise
                result = failed(i, exc)
            done(i, result)
        return
    own = executor is None
    if own:
        executor = cf.ProcessPoolExecutor(max_workers=min(jobs, len(items)),
                                          mp_context=multiprocessing.get_context("spawn"))
    futures = {}
    ended, broken = 0, None
    try:
        futures = {executor.submit(fn, item): i for i, item in enumerate(items)}
        for future in cf.as_completed(futures):
            i = futures[future]
            try:
                result = future.result()
            except cf.BrokenExecutor as exc:  # the results that did come are still passed on, then it raises
                broken = broken or exc
                continue
            except Exception as exc:
                if failed is None:
                    raise
                result = failed(i, exc)
            done(i, result)
            ended += 1
        if broken is not None:
            raise broken
    except BaseException as exc:
        for future in futures:
            future.cancel()
        if own:
            executor.shutdown(wait=False, cancel_futures=True)
            own = False
        if isinstance(exc, cf.BrokenExecutor):
            raise type(exc)(broken_message(ended, len(items))) from exc
        raise
    finally:
        if own:
            executor.shutdown(wait=True)
