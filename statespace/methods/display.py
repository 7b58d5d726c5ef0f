"""How fitted results, leaderboards and comparisons show themselves (in Jupyter: HTML).

Written once for every kind of fitted result (``FilterRun``, ``SmootherFit`` and ``StaticFit``,
``BlendFit``, ``AutoFit``), which take :class:`FittedDisplay` as a mixin:

- :func:`summary_line`: the one-line model summary, ``"Elo(k=32) · 3,000 games · 30 competitors
  · 2000-01-01 to 2000-12-26"`` (the method with its settings, the games fitted, the competitors
  who played, the span of the games' times);
- ``fitted._repr_html_()``: that line and a compact leaderboard, the :data:`TOP` best competitors
  of ``fitted.ratings()`` and ``… n more``;
- ``fitted.plot(players=...)``: :func:`statespace.methods.plots.plot_trajectories`;
- :class:`Ratings`: what ``ratings()`` returns, a :class:`pandas.DataFrame` (a subclass) that
  carries the summary line in ``attrs["summary"]`` and shows it as a caption above pandas'
  own table;
- :func:`table_html`: the escaped HTML table that these and :class:`statespace.evaluation.compare.Comparison`
  share.

Everything shown is escaped: competitor names (and method labels) may contain ``<`` or ``&``.

Like the rest of :mod:`statespace`, this module imports neither ``filters`` nor ``smoothers``
(``plot`` imports :mod:`statespace.methods.plots`, and matplotlib, when called).
"""

from __future__ import annotations

import html
import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = ["TOP", "summary_line", "span_text", "number_format", "table_html", "fitted_html", "Ratings",
           "as_ratings", "FittedDisplay"]

#: competitors shown in a fitted result's compact leaderboard (the rest are counted: "… n more")
TOP = 10

#: the separator of the summary line's parts
SEP = " \u00b7 "


# ---------------------------------------------------------------------------- text
def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def span_text(games) -> str:
    """The span of ``games``' times: ``"2000-01-01 to 2000-12-26"`` (dates; with the time of day
    when some game has one), ``"time 0 to 59"`` (numbers), ``"2000-03-04"`` when all games share
    one time, ``"no games"`` for an empty table."""
    if len(games) == 0:
        return "no games"
    t = games.time[games.order]
    lo, hi = t[0], t[-1]
    if np.issubdtype(np.asarray(t).dtype, np.datetime64):
        days = np.asarray(t).astype("datetime64[D]")
        whole_days = bool(np.all(days == np.asarray(t)))
        unit = "D" if whole_days else "m"
        lo, hi = (np.datetime_as_string(np.datetime64(x, unit)).replace("T", " ") for x in (lo, hi))
        return lo if lo == hi else f"{lo} to {hi}"
    lo, hi = f"{float(lo):g}", f"{float(hi):g}"
    return f"time {lo}" if lo == hi else f"time {lo} to {hi}"


def summary_line(method, games) -> str:
    """The one-line model summary: ``repr(method)`` (the method with its settings), the number of
    games, the number of competitors who played in them, and :func:`span_text`, joined by
    ``" · "``."""
    played = np.unique(np.concatenate([games.a, games.b])).size if len(games) else 0
    parts = [repr(method), _count(len(games), "game", "games"), _count(int(played), "competitor", "competitors"),
             span_text(games)]
    if games.period is not None and len(games):
        parts.append(_count(int(np.unique(games.period).size), "rating period", "rating periods"))
    return SEP.join(parts)


def number_format(values) -> str:
    """A format for a column of numbers, by its largest magnitude: integers as such (with a
    thousands separator), else one decimal from 1,000 up (Elo points), two from 10, three from 1,
    four below (TrueSkill's ``25 ± 8.3``, win probabilities)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return "{:.4g}"
    if np.all(v == np.round(v)) and np.abs(v).max() < 1e15:
        return "{:,.0f}"
    big = float(np.abs(v).max())
    decimals = 4 if big < 1 else 3 if big < 10 else 2 if big < 1000 else 1
    return "{:." + str(decimals) + "f}"


def _cell(value, fmt: str | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "\u2013"
    if fmt is not None and isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return fmt.format(value)
    return str(value)


# ---------------------------------------------------------------------------- HTML
_CSS = ("<style>.statespace-display table.statespace-table{border-collapse:collapse;margin:0.3em 0}"
        ".statespace-display .statespace-table th,.statespace-display .statespace-table td"
        "{padding:0.15em 0.6em;text-align:right;border:none}"
        ".statespace-display .statespace-table th{border-bottom:1px solid #999}"
        ".statespace-display .statespace-table td.text,.statespace-display .statespace-table th.text"
        "{text-align:left}"
        ".statespace-display .statespace-table td.best{font-weight:bold}"
        ".statespace-display .statespace-table tr.best td{background:rgba(255,200,0,0.18)}"
        ".statespace-display .statespace-summary{font-family:monospace;margin:0.2em 0}"
        ".statespace-display .statespace-note{color:#666;font-size:0.9em;margin:0.2em 0}</style>")


def table_html(header: Sequence[str], rows: Sequence[Sequence[Any]], *, text_columns: Sequence[int] = (0,),
               best_cells: set[tuple[int, int]] = frozenset(), best_rows: set[int] = frozenset(),
               caption: str | None = None) -> str:
    """An HTML table of already formatted cells, every cell and the caption escaped.

    ``text_columns``: columns aligned left (the rest right: numbers); ``best_cells`` (row,
    column) are shown bold and ``best_rows`` shaded (class ``best``)."""
    esc = html.escape
    out = ['<table class="statespace-table dataframe">']
    if caption:
        out.append(f'<caption style="caption-side:top;text-align:left">{esc(caption)}</caption>')
    out.append("<thead><tr>" + "".join(f'<th class="{"text" if j in text_columns else "num"}">{esc(str(h))}</th>'
                                       for j, h in enumerate(header)) + "</tr></thead><tbody>")
    for i, row in enumerate(rows):
        cells = []
        for j, c in enumerate(row):
            cls = ["text" if j in text_columns else "num"] + (["best"] if (i, j) in best_cells else [])
            cells.append(f'<td class="{" ".join(cls)}">{esc(str(c))}</td>')
        tr = '<tr class="best">' if i in best_rows else "<tr>"
        out.append(tr + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def block_html(title: str | None, body: str, notes: Sequence[str] = ()) -> str:
    """``title`` (the summary line), ``body`` (HTML, already escaped) and ``notes`` (text lines),
    in one ``<div>`` with the package's small stylesheet."""
    parts = ['<div class="statespace-display">', _CSS]
    if title:
        parts.append(f'<p class="statespace-summary">{html.escape(title)}</p>')
    parts.append(body)
    parts += [f'<p class="statespace-note">{html.escape(n)}</p>' for n in notes]
    parts.append("</div>")
    return "".join(parts)


def leaderboard_html(ratings: pd.DataFrame, top: int = TOP) -> str:
    """The first ``top`` rows of a leaderboard as a compact table (rank, then its columns; the
    credible band ``lower``/``upper`` of a smoother is left out: ``sd`` says the same), and
    ``… n more`` for the rest."""
    shown = [c for c in ratings.columns if c not in ("lower", "upper")]
    head = ratings.head(top)
    formats = {c: (None if c == "player" or not pd.api.types.is_numeric_dtype(ratings[c])
                   else number_format(ratings[c].to_numpy()))
               for c in shown}
    rows = [[str(k + 1)] + [_cell(r[c], formats[c]) for c in shown] for k, (_, r) in enumerate(head.iterrows())]
    text = [j + 1 for j, c in enumerate(shown) if formats[c] is None]
    out = table_html(["#"] + shown, rows, text_columns=text)
    more = len(ratings) - len(head)
    if more > 0:
        out += f'<p class="statespace-note">\u2026 {more:,} more</p>'
    if len(ratings) == 0:
        out += '<p class="statespace-note">no competitor has played</p>'
    return out


def fitted_html(title: str, ratings: pd.DataFrame, notes: Sequence[str] = (), top: int = TOP) -> str:
    """A fitted result's HTML: the summary line ``title``, the compact leaderboard of ``ratings``
    and the text ``notes``."""
    return block_html(title, leaderboard_html(ratings, top), notes)


# ---------------------------------------------------------------------------- leaderboards
class Ratings(pd.DataFrame):
    """What ``fitted.ratings()`` returns: a :class:`pandas.DataFrame` (a thin subclass; every
    DataFrame operation works and keeps it) whose ``attrs["summary"]`` is the fitted result's
    one-line summary (:func:`summary_line`), shown as a caption above the table in Jupyter.

    It equals the plain frame of the same numbers (``r.equals(df)``;
    ``pandas.testing.assert_frame_equal(r, df)``); ``pandas.DataFrame(r)`` is the plain frame
    (``assert_frame_equal(df, r)`` with the plain frame first checks the class: pass
    ``check_frame_type=False`` or the plain frame).
    """

    @property
    def _constructor(self):
        return Ratings

    def _repr_html_(self) -> str | None:
        table = super()._repr_html_()
        if table is None:  # pandas' HTML display is switched off
            return None
        summary = self.attrs.get("summary")
        return block_html(summary, table) if summary else table


def as_ratings(df: pd.DataFrame, summary: str) -> Ratings:
    """``df`` as :class:`Ratings` with the summary line ``summary``."""
    out = Ratings(df)
    out.attrs["summary"] = summary
    return out


# ---------------------------------------------------------------------------- the mixin
class FittedDisplay:
    """The display of a fitted result (a mixin): ``_repr_html_`` (Jupyter's rich output: the
    summary line and the compact leaderboard) and :meth:`plot`. A class that uses it has
    ``method``, ``games``, ``ratings()`` and ``trajectories()``; it may override
    :meth:`_summary` (the line) and :meth:`_notes` (text lines under the table)."""

    def _summary(self) -> str:
        return summary_line(self.method, self.games)

    def _notes(self) -> list[str]:
        return []

    def _repr_html_(self) -> str:
        return fitted_html(self._summary(), self.ratings(), self._notes())

    def plot(self, players: Sequence[str] | str | None = None, *, top: int = 6, ax=None, **options):
        """Rating trajectories (:func:`statespace.methods.plots.plot_trajectories`): the named
        ``players``, or the ``top`` best by final rating, each a step line (and a band of
        ``band`` sd where the method tracks one); ``options``: ``truth``, ``band``, ``colors``.
        Draws on ``ax`` when given, else on a new figure; returns the Axes."""
        from statespace.methods import plots

        return plots.plot_trajectories(self, players=players, top=top, ax=ax, **options)
