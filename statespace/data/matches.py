"""``Matches``: an immutable table of matches of two or more sides, each side one or more
competitors with partial-play weights, each match's result a ranking of its sides (ties allowed),
optionally with scores.

The layout every reader of matches shares (NumPy arrays, CSR style):

- ``time``: float64 ``(n_matches,)``, non-decreasing (days since 1970-01-01 for dates, as
  :meth:`statespace.Games.days` counts them; plain numbers as given); ``when``: the same times
  as read (``datetime64[ns]`` UTC or float64);
- ``match_ptr``: int64 ``(n_matches + 1,)``: the sides of match ``m`` are rows
  ``match_ptr[m]:match_ptr[m + 1]`` of the side arrays (at least 2 sides);
- ``side_ptr``: int64 ``(n_sides + 1,)``: the members of side ``s`` are rows
  ``side_ptr[s]:side_ptr[s + 1]`` of the member arrays (at least 1 member);
- ``member``: int64 ``(n_members,)`` competitor ids into ``names``; ``weight``: float64
  ``(n_members,)`` partial-play weights in [0, 1] (1 = played the whole match); a competitor
  appears at most once per match;
- ``rank``: int64 ``(n_sides,)``: the side's place in its match, 0 = first, ties share a rank
  (competition ranking: 0, 0, 2, 3 ...); ``score``: float64 ``(n_sides,)``, NaN when absent;
- ``names``: the competitor names by id (sorted by code point, as :class:`statespace.Games`
  sorts its ``players``); ``label``: each match's id as text; ``side_label``: each side's;
  ``row``: each member's row in the input it was read from (0-based).

A side's performance is the weighted sum of its members' skills, :math:`p_s = \\sum_k w_k s_k`;
a two-sided match of single competitors with ranks (0, 1) is the game a-vs-b won by a, ranks
(0, 0) a draw (:meth:`Matches.from_games`, which keeps the side of ``a``, the home side, first).
:meth:`Matches.from_long` stores the sides of a match by rank and then by their smallest
competitor id, the members of a side by id, so the order of the input rows within a match does
not count; a reader takes each side's place from ``rank``, never from its position.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from statespace.data.columns import GamesError
from statespace.data.matches_long import read_long

__all__ = ["Matches"]

_FIELDS = ("time", "when", "match_ptr", "side_ptr", "member", "weight", "rank", "score", "names", "label",
           "side_label", "row")


def _frozen(x, dtype=None) -> np.ndarray:
    """``x`` as a read-only contiguous array (a copy: the table owns its arrays)."""
    x = np.array(x, dtype=dtype)
    x.flags.writeable = False
    return x


class Matches:
    """Validated matches of many sides (see the module docstring for the layout).

    Build with :meth:`from_long` or :meth:`from_games`; every array is read-only and the
    attributes cannot be rebound."""

    __slots__ = _FIELDS

    def __init__(self, *, time, when, match_ptr, side_ptr, member, weight, rank, score, names, label,
                 side_label, row):
        for name, value, dtype in (("time", time, np.float64), ("when", when, None),
                                   ("match_ptr", match_ptr, np.int64), ("side_ptr", side_ptr, np.int64),
                                   ("member", member, np.int64), ("weight", weight, np.float64),
                                   ("rank", rank, np.int64), ("score", score, np.float64),
                                   ("names", names, object), ("label", label, object),
                                   ("side_label", side_label, object), ("row", row, np.int64)):
            object.__setattr__(self, name, _frozen(value, dtype))

    def __setattr__(self, name, value):
        raise AttributeError(f"Matches is immutable: cannot set {name!r}")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_long(cls, frame: pd.DataFrame, *, match: str = "match", time: str = "time",
                  competitor: str = "competitor", side: str | None = "side", rank: str | None = "rank",
                  score: str | None = "score", weight: str | None = "weight") -> "Matches":
        """Read a long table: one row per competitor of a match.

        Columns (their names given by the keywords): ``match`` (the match's id), ``time`` (as
        :class:`statespace.Games` reads times; the rows of a match share it), ``competitor``,
        optional ``side`` (the competitor's side within its match; without the column, or where
        it is empty, a competitor is a side of its own: a free-for-all), ``rank`` (places: only their order counts,
        stored as competition ranks from 0) and/or ``score`` (a side's points; without ranks a
        higher score places first and equal scores tie), optional ``weight`` (partial play in
        [0, 1], default 1). The rows of one side share its rank and score.

        Every invalid value raises :class:`~statespace.data.columns.GamesError` naming the rows
        (0-based positions in ``frame``) and the column: nothing is dropped
        (:mod:`statespace.data.matches_long`). Matches are sorted by time (stable: a tie keeps
        the order of the matches' first rows).
        """
        names = dict(match=match, time=time, competitor=competitor, side=side, rank=rank, score=score,
                     weight=weight)
        return cls(**read_long(frame, names))

    @classmethod
    def from_games(cls, games) -> "Matches":
        """A :class:`statespace.Games` as two-sided matches of single competitors, in time order
        (:attr:`statespace.Games.order`): the side of ``a`` first, ranks (0, 1) for a win of
        ``a``, (1, 0) for a loss, (0, 0) for a draw; sides' scores from ``score_a`` and
        ``score_b`` (NaN without them); the games' competitor ids and names; each match labelled
        with its game's input row. Home advantage and the games' likelihood weights are not part
        of a match: members play whole matches (weight 1)."""
        order = np.asarray(games.order)
        n = order.size
        if n == 0:
            raise GamesError("the games table is empty: no matches")
        s = games.score[order]
        # a's side places second only on a loss, b's only on a's win; a draw ties them at 0
        ranks = np.column_stack([s == 0.0, s == 1.0]).astype(np.int64).reshape(-1)
        member = np.column_stack([games.a[order], games.b[order]]).reshape(-1)
        score = np.column_stack([games.score_a[order], games.score_b[order]]).reshape(-1)
        label = np.array([str(r) for r in games.row[order]], dtype=object)
        return cls(time=games.days()[order], when=games.time[order], match_ptr=np.arange(0, 2 * n + 1, 2),
                   side_ptr=np.arange(2 * n + 1), member=member, weight=np.ones(2 * n), rank=ranks, score=score,
                   names=games.players, label=label, side_label=np.asarray(games.players, dtype=object)[member],
                   row=np.repeat(games.row[order], 2))

    # ------------------------------------------------------------------ views
    @property
    def n_matches(self) -> int:
        return int(self.match_ptr.size - 1)

    @property
    def n_sides(self) -> int:
        return int(self.side_ptr.size - 1)

    @property
    def n_players(self) -> int:
        return int(self.names.size)

    def __len__(self) -> int:
        return self.n_matches

    def __repr__(self) -> str:
        return (f"Matches({self.n_matches} matches, {self.n_sides} sides, {self.n_players} competitors"
                f"{', pairwise' if self.is_pairwise else ''})")

    @property
    def is_pairwise(self) -> bool:
        """Whether every match is two sides of one competitor each (the games of
        :class:`statespace.Games`)."""
        return bool(np.all(np.diff(self.match_ptr) == 2) and np.all(np.diff(self.side_ptr) == 1))

    def match_text(self, m: int) -> str:
        """``match 'label' (time 2004-07-13 17:02:13)``: how messages name match ``m`` (a date shown
        as a timestamp, a number as itself)."""
        when = self.when[m]
        if isinstance(when, np.datetime64):
            when = pd.Timestamp(when)
        return f"match {self.label[m]!r} (time {when})"

    def sides(self, m: int) -> list[np.ndarray]:
        """The member ids of each side of match ``m`` (in stored order: by rank)."""
        if not -self.n_matches <= m < self.n_matches:
            raise IndexError(f"match {m} out of range for {self.n_matches} matches")
        m %= self.n_matches
        ptr = self.side_ptr
        return [self.member[ptr[s]:ptr[s + 1]] for s in range(self.match_ptr[m], self.match_ptr[m + 1])]

    def to_long(self) -> pd.DataFrame:
        """The table as a long frame (one row per member, matches in time order): columns
        ``match, time, competitor, side, rank, score, weight`` that :meth:`from_long` reads back
        to the same table."""
        per_side = np.diff(self.side_ptr)
        side_of_member = np.repeat(np.arange(self.n_sides), per_side)
        match_of_side = np.repeat(np.arange(self.n_matches), np.diff(self.match_ptr))
        match_of_member = match_of_side[side_of_member]
        return pd.DataFrame({
            "match": self.label[match_of_member], "time": self.when[match_of_member],
            "competitor": self.names[self.member], "side": self.side_label[side_of_member],
            "rank": self.rank[side_of_member], "score": self.score[side_of_member], "weight": self.weight})

    # ------------------------------------------------------------------ derived tables
    def take(self, indices: Iterable[int]) -> "Matches":
        """The matches at positions ``indices`` (in time order, as stored), with the same
        competitor ids and names."""
        idx = np.asarray(list(indices) if not isinstance(indices, np.ndarray) else indices, dtype=np.int64)
        if idx.size == 0:
            raise GamesError("the matches table is empty: no matches selected")
        if idx.min() < -self.n_matches or idx.max() >= self.n_matches:
            raise IndexError(f"match positions out of range for {self.n_matches} matches")
        idx %= self.n_matches
        mp, sp = self.match_ptr, self.side_ptr
        sides = _ranges(mp[idx], mp[idx + 1])
        members = _ranges(sp[sides], sp[sides + 1])
        return Matches(time=self.time[idx], when=self.when[idx],
                       match_ptr=np.r_[0, np.cumsum(mp[idx + 1] - mp[idx])],
                       side_ptr=np.r_[0, np.cumsum(sp[sides + 1] - sp[sides])],
                       member=self.member[members], weight=self.weight[members], rank=self.rank[sides],
                       score=self.score[sides], names=self.names, label=self.label[idx],
                       side_label=self.side_label[sides], row=self.row[members])

    def split(self, fraction: float = 0.7) -> tuple["Matches", "Matches"]:
        """Split in time order: the first ``fraction`` of matches and the rest (as
        :meth:`statespace.Games.split`; ties in time keep the stored order). Both parts share
        competitor ids."""
        if not 0 < fraction < 1:
            raise ValueError(f"split fraction must be strictly between 0 and 1, got {fraction!r}")
        k = int(round(fraction * self.n_matches))
        if k == 0 or k == self.n_matches:
            raise ValueError(f"split({fraction}) of {self.n_matches} matches leaves one part empty")
        return self.take(np.arange(k)), self.take(np.arange(k, self.n_matches))


def _ranges(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(start[i], stop[i])`` over ``i``."""
    lengths = stop - start
    offsets = np.repeat(start - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    return (np.arange(int(lengths.sum())) + offsets).astype(np.int64)
