"""Progress of long work (``compare``'s fits and tunings, walk-forward refits, PyMC sampling),
in notebooks and terminals alike, on stderr.

One convention for every ``progress=`` option of the package (as :func:`statespace.auto`'s):

- ``True``: always shown;
- ``False``: never (nothing is written);
- ``None`` (default): shown once the work has taken more than :data:`PROGRESS_AFTER` seconds,
  so that quick work stays quiet.

Bars are ``tqdm.auto``'s: a widget in Jupyter when ``ipywidgets`` is installed, a text bar on
stderr otherwise (in a terminal, and in a notebook without ``ipywidgets``, where the text bar is
shown in the cell's output).
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["PROGRESS_AFTER", "check_progress", "bar", "note", "in_notebook", "interactive"]

#: seconds of work after which ``progress=None`` shows a bar (as :data:`statespace.auto.PROGRESS_AFTER`)
PROGRESS_AFTER = 5.0


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


def bar(total: int | None, desc: str, progress: bool | None, *, unit: str = "it"):
    """A progress bar over ``total`` steps (``tqdm.auto``; ``update(1)`` a step, ``set_postfix_str``
    for what is being done, ``close()`` at the end; also a context manager).

    ``progress`` follows the module's convention: ``False`` gives a disabled bar that writes
    nothing, ``None`` one that appears only after :data:`PROGRESS_AFTER` seconds, ``True`` one shown
    at once. The bar writes to stderr (in a notebook with ``ipywidgets``, a widget) and is left
    on screen when done.
    """
    tqdm = _tqdm_class()
    return tqdm(total=total, desc=desc, unit=unit, disable=progress is False, file=sys.stderr,
                delay=PROGRESS_AFTER if progress is None else 0.0, leave=True, dynamic_ncols=True)


def note(pbar, text: str) -> None:
    """Show ``text`` after the bar (what is being done now). The bar is redrawn at once only when
    it is already on screen: a bar of ``progress=None`` still within its first
    :data:`PROGRESS_AFTER` seconds stays hidden (the text shows at its first redraw)."""
    if pbar.disable:
        return
    shown = pbar.delay <= 0 or pbar.format_dict["elapsed"] >= pbar.delay
    pbar.set_postfix_str(text, refresh=shown)
