r"""The whole-history layout's nodes (:class:`Timeline`) for a table of games, and how it grows when
a table is extended by later games (:func:`resumable`, :func:`extend_timeline`), so that a refit
on a grown history (walk-forward) reuses the earlier fit's nodes. See :mod:`smoothers.base` for the
model the nodes carry."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from statespace.data.games import Games

__all__ = ["Timeline", "timeline", "resumable", "extend_timeline"]

@dataclass(frozen=True)
class Timeline:
    """Nodes of the whole-history model for a table of games.

    - ``players``: competitor names; ``node_player``, ``node_time``: each node's competitor id
      and time (in the smoother's time unit), sorted by competitor then time;
    - ``prev``: the previous node of the same competitor (-1 for a first node), ``dt`` the time
      between them;
    - ``game_a``, ``game_b``: the nodes each game (input row order) observes.
    """

    players: np.ndarray
    node_player: np.ndarray
    node_time: np.ndarray
    prev: np.ndarray
    dt: np.ndarray
    game_a: np.ndarray
    game_b: np.ndarray

    @property
    def n_nodes(self) -> int:
        return int(self.node_player.size)


def timeline(games: Games, times: np.ndarray) -> Timeline:
    """Nodes for ``games`` at ``times`` (one per game, in the smoother's unit, input row order)."""
    n = len(games)
    player = np.concatenate([games.a, games.b])
    t = np.concatenate([times, times]).astype(float)
    order = np.lexsort((t, player))
    ps, ts = player[order], t[order]
    new = np.r_[True, (ps[1:] != ps[:-1]) | (ts[1:] != ts[:-1])]
    node_of_sorted = np.cumsum(new) - 1
    node_player = ps[new]
    node_time = ts[new]
    node_of = np.empty(2 * n, dtype=np.int64)
    node_of[order] = node_of_sorted
    first = np.r_[True, node_player[1:] != node_player[:-1]]
    prev = np.where(first, -1, np.arange(node_player.size) - 1)
    dt = np.where(first, 0.0, node_time - np.r_[node_time[:1], node_time[:-1]])
    return Timeline(games.players, node_player.astype(np.int64), node_time, prev.astype(np.int64), dt,
                    node_of[:n], node_of[n:])


def _prefix(order: np.ndarray, n: int):
    """``order[:n]``, or a slice when it is ``0, 1, ..., n - 1`` (a table in time order: its
    columns are then compared without a gather)."""
    head = order[:n]
    if n and head[0] == 0 and head[-1] == n - 1 and np.all(head[1:] > head[:-1]):
        return slice(0, n)
    return head


def resumable(old: Games, games: Games, times: np.ndarray) -> tuple[int, str]:
    """How many of the first games of ``games`` (time order) are the games of ``old``, an earlier
    fit's table, with every other game of ``games`` later than all of them (``times``: each game
    of ``games``' time in the smoother's unit, input row order), and why: ``(len(old),
    "resumed after ... games")``, or ``(0, "refitted: ...")`` when ``games`` does not extend ``old``
    that way. The same records: times, competitors (ids when both tables name them alike, else
    names), scores, neutral grounds, weights, points and periods."""
    n0 = len(old)
    if n0 > len(games):
        return 0, "refitted: the earlier fit has more games"
    po, pn = _prefix(old.order, n0), _prefix(games.order, n0)
    same_ids = old.players is games.players or (old.players.size == games.players.size
                                                and np.array_equal(old.players, games.players))
    if same_ids:
        sides = np.array_equal(old.a[po], games.a[pn]) and np.array_equal(old.b[po], games.b[pn])
    else:
        sides = (np.array_equal(old.players[old.a[po]], games.players[games.a[pn]])
                 and np.array_equal(old.players[old.b[po]], games.players[games.b[pn]]))
    same = (sides and np.array_equal(old.time[po], games.time[pn])
            and np.array_equal(old.score[po], games.score[pn])
            and np.array_equal(old.neutral[po], games.neutral[pn])
            and np.array_equal(old.weight[po], games.weight[pn])
            and old.has_scores == games.has_scores
            and (not games.has_scores or (np.array_equal(old.score_a[po], games.score_a[pn], equal_nan=True)
                                          and np.array_equal(old.score_b[po], games.score_b[pn], equal_nan=True)))
            and (old.period is None) == (games.period is None)
            and (old.period is None or np.array_equal(old.period[po], games.period[pn])))
    if not same:
        return 0, "refitted: the earlier fit's games are not the first games of these"
    if n0 < len(games) and not times[games.order[n0:]].min() > times[games.order[:n0]].max():
        return 0, "refitted: new games at the earlier fit's last time"
    return n0, f"resumed after {n0} games"


@njit(cache=True)
def _merge_nodes(old_player, old_time, new_player, new_time, node_player, node_time, prev, dt, old_to, new_to):
    """Merge two node lists sorted by competitor, then time, where every new node of a competitor
    comes after its old ones; fill the merged list's competitor, time, previous node and time
    since it, and where each old and new node went."""
    i = 0
    j = 0
    n_old = old_player.size
    n_new = new_player.size
    for w in range(n_old + n_new):
        if j == n_new or (i < n_old and old_player[i] <= new_player[j]):
            node_player[w] = old_player[i]
            node_time[w] = old_time[i]
            old_to[i] = w
            i += 1
        else:
            node_player[w] = new_player[j]
            node_time[w] = new_time[j]
            new_to[j] = w
            j += 1
        if w > 0 and node_player[w - 1] == node_player[w]:
            prev[w] = w - 1
            dt[w] = node_time[w] - node_time[w - 1]
        else:
            prev[w] = -1
            dt[w] = 0.0


@njit(cache=True)
def _map_games(kept, old_order, old_a, old_b, old_to, game_a, game_b):
    """``game_a[kept[i]] = old_to[old_a[old_order[i]]]`` (and ``b``): the earlier table's games,
    each at its row of the new table, observing the new numbers of its nodes."""
    for i in range(kept.size):
        g = old_order[i]
        game_a[kept[i]] = old_to[old_a[g]]
        game_b[kept[i]] = old_to[old_b[g]]


def extend_timeline(tl: Timeline, old: Games, games: Games,
                    times: np.ndarray) -> tuple[Timeline, np.ndarray, np.ndarray] | None:
    """The timeline of ``games`` built from ``tl``, the timeline of ``old``, when ``games``
    extends ``old`` as :func:`resumable` checks (``old``'s games first, every other game later)
    and both tables share their competitors' ids: equal to ``timeline(games, times)``, with the
    node of the new timeline of each node of ``tl`` and the new nodes (by competitor, then time).
    Nodes are sorted by competitor, then time, and each new node comes after its competitor's
    earlier ones, so the new list is the merge of the old one and the new games' nodes by
    competitor (old first). The cost is the sort of the new games' nodes and one pass over the
    nodes and games. ``None`` when the competitors' ids differ (build the timeline afresh)."""
    if not (tl.players is games.players or (tl.players.size == games.players.size
                                            and np.array_equal(tl.players, games.players))):
        return None
    n0 = len(old)
    rows = games.order[n0:]
    m = rows.size
    player = np.concatenate([games.a[rows], games.b[rows]]).astype(np.int64)
    t = np.concatenate([times[rows], times[rows]]).astype(float)
    order = np.lexsort((t, player))
    ps, ts = player[order], t[order]
    new = np.r_[True, (ps[1:] != ps[:-1]) | (ts[1:] != ts[:-1])] if m else np.zeros(0, dtype=bool)
    new_player, new_time = ps[new], ts[new]
    n_nodes = tl.n_nodes + new_player.size
    node_player = np.empty(n_nodes, dtype=np.int64)
    node_time = np.empty(n_nodes)
    prev = np.empty(n_nodes, dtype=np.int64)
    dt = np.empty(n_nodes)
    old_to = np.empty(tl.n_nodes, dtype=np.int64)
    new_to = np.empty(new_player.size, dtype=np.int64)
    _merge_nodes(tl.node_player, np.ascontiguousarray(tl.node_time, dtype=np.float64), new_player, new_time,
                 node_player, node_time, prev, dt, old_to, new_to)
    game_a = np.empty(len(games), dtype=np.int64)
    game_b = np.empty(len(games), dtype=np.int64)
    _map_games(np.ascontiguousarray(games.order[:n0]), old.order, tl.game_a, tl.game_b, old_to, game_a, game_b)
    node_of = np.empty(2 * m, dtype=np.int64)
    node_of[order] = new_to[np.cumsum(new) - 1]
    game_a[rows], game_b[rows] = node_of[:m], node_of[m:]
    return Timeline(games.players, node_player, node_time, prev, dt, game_a, game_b), old_to, new_to
