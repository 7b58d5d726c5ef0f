"""What the command line writes: standard output that fails loudly, numbers for people and for
JSON, and the comparison figure.

A command's result is its output: when it cannot be written (standard output closed, a full
disk, an I/O error) the command fails with one line on stderr and exit status 2, rather than
exit 0 with nothing written. A closed pipe (``statespace rate ... | head``) is not an error: the
reader has what it wanted (:func:`statespace.app.cli.main` ends quietly on ``BrokenPipeError``).
"""

from __future__ import annotations

import math
import os

from statespace.methods.specs import PROG, CLIError, one_line

#: the format of a figure whose file name has no suffix
DEFAULT_FORMAT = "png"

#: ``--quiet``'s help (``compare`` and ``rate``)
QUIET_HELP = ("no progress on stderr (by default a bar shows on a terminal once the work has taken a few "
              "seconds, and none when stderr is a file or a pipe)")


class Output:
    """Standard output for a command: ``write`` and ``flush`` as the stream's, but a stream that
    is closed (``None``: Python's ``sys.stdout`` when the process started without one) or that
    fails to write raises :class:`CLIError` saying so. After a failed write the stream's file
    descriptor is pointed at the null device, so that the text still buffered is not written
    again (and failed again) when Python exits."""

    def __init__(self, stream):
        self.stream = stream

    def _fail(self, why: str):
        return CLIError(f"cannot write the output to standard output: {why}")

    def write(self, text: str) -> int:
        if self.stream is None:
            raise self._fail("it is closed")
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            self._silence()
            raise self._fail(one_line(exc.strerror or exc)) from None

    def flush(self) -> None:
        if self.stream is None:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            self._silence()
            raise self._fail(one_line(exc.strerror or exc)) from None
        except ValueError:  # flush of a closed file object: nothing is buffered any more
            pass

    def _silence(self) -> None:
        try:
            fd = self.stream.fileno()
        except (AttributeError, OSError, ValueError):  # no descriptor (a StringIO, pytest's capture)
            return
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, fd)
        finally:
            os.close(null)

    def __getattr__(self, name):  # encoding, isatty, ... of the stream
        if self.stream is None:
            raise AttributeError(name)
        return getattr(self.stream, name)


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def finite(x, text: bool = False):
    """A number for JSON: a NaN or infinity (an undefined standard error, say) is ``None``
    (``null``); with ``text=True`` a number for people, such a value ``"n/a"`` (never ``"nan"``)."""
    import numpy as np

    if isinstance(x, (float, np.floating)):
        if not math.isfinite(float(x)):
            return "n/a" if text else None
        return float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def plot_target(path: str) -> str:
    """The format of the figure ``--plot path`` asks for (from the file name's suffix; PNG without
    one), checked before the work: a folder, a missing folder or an unknown suffix is a
    :class:`CLIError`. The figure is written to ``path`` exactly (matplotlib would add ``.png`` to a
    name without a suffix)."""
    if os.path.isdir(path):
        raise CLIError(f"cannot write plot {path}: it is a folder; give the figure's file name, e.g. "
                       f"{os.path.join(path, 'comparison.png')}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CLIError(f"cannot write plot {path}: no folder {folder}")
    suffix = os.path.splitext(path)[1][1:].lower()
    if not suffix:
        return DEFAULT_FORMAT
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if suffix not in formats:
        raise CLIError(f"cannot write plot {path}: no figure format .{suffix}; end the name in one of "
                       f"{', '.join('.' + f for f in sorted(formats))}")
    return suffix


def write_comparison_plot(path, fmt, table, games, methods, sim, source, out, err) -> None:
    """The comparison figure (:func:`statespace.methods.plots.plot_comparison`) of ``compare``'s table, the
    best method refitted on all games, written to ``path`` in format ``fmt``; one line on ``err``
    names the file written."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from statespace.methods import plots

    best = table.index[0]
    method = methods[best]
    fitted = method.fit(games)
    model = fitted.model if best == "auto" else method.model  # auto's model is the one it chose
    truth = None if sim is None else plots.truth_in_units(sim.truth, sim.model, model)
    fig = plots.plot_comparison(table, fitted, truth,
                                title=f"{source}: {len(games):,} games, {table.attrs['mode']} forecasts "
                                      f"of the last {1 - table.attrs['split']:.0%}; trajectories of "
                                      f"{best} fitted on all games")
    try:
        fig.savefig(path, format=fmt, dpi=200)  # crisp on high-density screens
    except (OSError, ValueError) as exc:
        raise CLIError(f"cannot write plot {path}: {one_line(exc)}") from None
    finally:
        plt.close(fig)
    out.flush()  # the table first, then the line naming the figure
    print(f"{PROG}: wrote {path}", file=err)
