"""Data: the game table and where games come from.

- :mod:`~statespace.data.games`: :class:`Games`, the one table every method reads (who played whom,
  when, the result, optional scores, home flags, weights and rating periods), and its readers.
- :mod:`~statespace.data.row_errors`: the checks behind the readers (:class:`GamesError` names the
  rows and the column; :class:`DroppedRowsWarning` when bad rows are dropped on request);
  :mod:`~statespace.data.clean_columns`: the fast path of a table with no bad row.
- :mod:`~statespace.data.columns`, :mod:`~statespace.data.csvfile`,
  :mod:`~statespace.data.csv_arrow`, :mod:`~statespace.data.ids`: column names, CSV reading (with
  pyarrow when installed) and the competitor ids behind the table;
  :mod:`~statespace.data.periods` and :mod:`~statespace.data.weights`: rating periods and game
  weights.
- :mod:`~statespace.data.matches`: :class:`Matches`, matches of two or more sides (teams,
  free-for-all rankings, partial play) in one CSR layout, read from a long table
  (:mod:`~statespace.data.matches_long`) or from :class:`Games`.
- :mod:`~statespace.data.datasets`: the real data sets (two shipped in this folder, two fetched
  with a checksum), with :mod:`~statespace.data.fetch` and :mod:`~statespace.data.integrity`.
- :mod:`~statespace.data.match_datasets`: data sets of matches (Halo 2, shipped; Elo-MMR's
  Codeforces standings, fetched with checksums), read by :mod:`~statespace.data.match_sources`.
- :mod:`~statespace.data.fixed`: published forecasts (FiveThirtyEight's) scored like a method.

Imports: :mod:`statespace._runtime` only. Data knows no model: nothing here imports
:mod:`statespace.model`, a method or the application.
"""

from statespace._runtime.lazy import exports as _exports

__getattr__, __dir__ = _exports(__name__, {
    "Games": "games", "GamesError": "games", "DroppedRowsWarning": "games", "FixedForecast": "fixed",
    "Matches": "matches",
})
