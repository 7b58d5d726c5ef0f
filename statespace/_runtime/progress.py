"""Progress of long work (``compare``'s fits and tunings, walk-forward refits, PyMC sampling),
in notebooks and terminals alike, on stderr.

One convention for every ``progress=`` option of the package (as :func:`statespace.auto`'s):

- ``True``: always shown;
- ``False``: never (nothing is written);
- ``None`` (default): shown where someone watches (stderr is a terminal, or this runs in a
  Jupyter kernel: :func:`interactive`) once the work has taken more than
  :data:`PROGRESS_AFTER` seconds, so that quick work stays quiet; never in a file or a pipe (a
  log, a CI job), which would fill with the bar's redraws.

Bars are ``tqdm.auto``'s: a widget in Jupyter when ``ipywidgets`` is installed, a text bar on
stderr otherwise (in a terminal, and in a notebook without ``ipywidgets``, where the text bar is
shown in the cell's output). A bar redraws itself with carriage returns, which only a terminal or
a notebook honours: asked for (``True``) where stderr is a file or a pipe, the bar's state is
written as whole lines instead, one at most every :data:`LINE_EVERY` seconds (and the last).
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["PROGRESS_AFTER", "check_progress", "bar", "note", "in_notebook", "interactive"]

#: seconds of work after which ``progress=None`` shows a bar (as :data:`statespace.ensemble.auto.PROGRESS_AFTER`)
PROGRESS_AFTER = 5.0
#: seconds between the lines of a bar written to a file or a pipe (``progress=True`` only)
LINE_EVERY = 30.0


def check_progress(progress, who: str) -> bool | None:
    """``progress`` itself when it is ``True``, ``False`` or ``None``; ``ValueError`` otherwise."""
    if progress is None or progress is True or progress is False:
        return progress
    raise ValueError(f"{who}: progress must be True, False or None, got {progress!r}")


def in_notebook() -> bool:
    """Whether this runs in a Jupyter kernel (an IPython kernel: a notebook, JupyterLab, VS Code)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - ipykernel needs IPython
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def interactive() -> bool:
    """Whether someone is watching: stderr is a terminal, or this runs in a Jupyter kernel."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        tty = False
    return bool(tty) or in_notebook()


def _tqdm_class():
    """``tqdm.auto.tqdm``, without its warnings about missing ``ipywidgets`` (it then falls back to
    the text bar) or about the notebook bar being experimental."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm
    return tqdm


class _Lines:
    """A text stream for a bar where stderr is not a terminal: each of tqdm's redraws (a carriage
    return, the bar, spaces over a longer earlier bar) becomes one line without them."""

    def __init__(self, stream):
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"

    def write(self, text: str) -> None:
        for part in text.split("\r"):
            part = part.rstrip()  # the padding, and the newline that ends the bar
            if part:
                self.stream.write(part + "\n")

    def flush(self) -> None:
        self.stream.flush()


def bar(total: int | None, desc: str, progress: bool | None, *, unit: str = "it"):
    """A progress bar over ``total`` steps (``tqdm.auto``; ``update(1)`` a step, ``set_postfix_str``
    for what is being done, ``close()`` at the end; also a context manager).

    ``progress`` follows the module's convention: ``False`` gives a disabled bar that writes
    nothing, ``None`` one that appears only after :data:`PROGRESS_AFTER` seconds and only where
    someone watches (:func:`interactive`), ``True`` one shown at once. The bar writes to stderr
    (in a notebook with ``ipywidgets``, a widget) and is left on screen when done; where stderr
    is not a terminal (``True`` only) it writes lines (:class:`_Lines`), one at most every
    :data:`LINE_EVERY` seconds.
    """
    tqdm = _tqdm_class()
    watched = progress is not False and interactive()
    if watched or progress is not True:
        return tqdm(total=total, desc=desc, unit=unit, disable=not watched, file=sys.stderr,
                    delay=PROGRESS_AFTER if progress is None else 0.0, leave=True, dynamic_ncols=True)
    return tqdm(total=total, desc=desc, unit=unit, file=_Lines(sys.stderr), mininterval=LINE_EVERY,
                maxinterval=LINE_EVERY, leave=True, ncols=100)


def note(pbar, text: str) -> None:
    """Show ``text`` after the bar (what is being done now). The bar is redrawn at once only when
    it is already on screen: a bar of ``progress=None`` still within its first
    :data:`PROGRESS_AFTER` seconds stays hidden (the text shows at its first redraw)."""
    if pbar.disable:
        return
    shown = pbar.delay <= 0 or pbar.format_dict["elapsed"] >= pbar.delay
    pbar.set_postfix_str(text, refresh=shown)
