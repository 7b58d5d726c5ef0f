"""The arrays of a TrueSkill Through Time fit: nodes and games numbered in time order, the
compiled run over them (:mod:`smoothers._ttt_messages`), and the state a refit continues from --
the incremental refit appends a grown history's nodes, games and slices to the earlier fit's
arrays, a full one starts from the earlier games' messages. The schedule is in
:mod:`smoothers.ttt`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from statespace.data.games import Games

from ._ttt_messages import SD_MIN, VAR_MAX, next_nodes, posterior, refit, run
from .base import SmootherFit, extend_timeline, resumable, timeline

__all__ = ["FitLayout"]


class FitLayout:
    """The fitting half of :class:`smoothers.ttt.TrueSkillThroughTime` (a base class of it): a fit
    from scratch or from an earlier fit, which reads the method's settings (``mu``, ``sigma``,
    ``tau``, ``home``, ``beta_kernel``, ``draw_margin``, ``max_iter``, ``tol``, ``incremental``,
    ``refit_tol``) and its ``_model_settings``."""

    def _fit(self, games: Games, warm_start: SmootherFit | None) -> SmootherFit:
        """:meth:`smoothers.ttt.TrueSkillThroughTime.fit` of checked ``games`` and ``warm_start``, ``draw_probability`` given."""
        t0 = time.perf_counter()
        times = self.times(games)
        if warm_start is not None and self.incremental and warm_start._ttt_state.settings == self._model_settings():
            n0, _ = resumable(warm_start.games, games, times)
            grown = extend_timeline(warm_start.timeline, warm_start.games, games, times) if n0 else None
            if grown is not None:
                return self._fit_incremental(games, times, warm_start, n0, *grown, t0)
        tl = timeline(games, times)
        n = len(games)
        # nodes and games numbered in time order: slice s (a distinct time) holds the nodes
        # node_start[s]..node_start[s+1]-1 (competitor order) and the games game_start[s].. (input order)
        node_order = np.argsort(tl.node_time, kind="stable").astype(np.int64)  # internal -> timeline node
        slice_times, node_counts = np.unique(tl.node_time[node_order], return_counts=True)
        node_start = np.concatenate([[0], np.cumsum(node_counts)]).astype(np.int64)
        game_order = np.argsort(times, kind="stable").astype(np.int64)  # internal -> row
        game_slice = np.searchsorted(slice_times, times[game_order])
        game_start = np.searchsorted(game_slice, np.arange(slice_times.size + 1)).astype(np.int64)
        node_slice = np.repeat(np.arange(slice_times.size, dtype=np.int64), node_counts)
        pos = np.empty(tl.n_nodes, dtype=np.int64)
        pos[node_order] = np.arange(tl.n_nodes)
        prev = tl.prev[node_order]
        prev = np.where(prev >= 0, pos[np.maximum(prev, 0)], -1).astype(np.int64)
        nxt = np.empty(tl.n_nodes, dtype=np.int64)
        next_nodes(prev, nxt)
        q = self._steps(tl.dt[node_order])
        ga, gb = pos[tl.game_a[game_order]], pos[tl.game_b[game_order]]
        score, home = self._game_arrays(games, game_order)
        prior_var = max(self.sigma, SD_MIN) ** 2
        msg = np.zeros((n, 4))
        warm_games = 0
        if warm_start is not None:
            warm_games = self._warm_messages(games, times, warm_start, msg)
            msg = msg[game_order]
        parallel = games.period is not None and warm_start is None
        fwd, bwd, lik = np.zeros((tl.n_nodes, 2)), np.zeros((tl.n_nodes, 2)), np.zeros((tl.n_nodes, 2))
        mean_i, var_i, filtered_i, sweeps, change = run(
            node_start, game_start, prev, nxt, q, 1.0 / prior_var, self.mu / prior_var, ga, gb, score, home,
            self.beta_kernel, self.draw_margin, fwd, bwd, lik, msg, parallel, self.max_iter, self.tol)
        mean, var, filtered_var = (_to_timeline(x, node_order) for x in (mean_i, var_i, filtered_i))
        self._check_finite(mean, var)
        info = {"sweeps": int(sweeps), "change": float(change) if sweeps else float("nan"),
                "converged": bool(sweeps) and change <= self.tol, "n_nodes": tl.n_nodes, "n_slices": slice_times.size,
                "filtered_sd": np.sqrt(filtered_var), "warm_games": warm_games,
                "refit": "none" if warm_start is None else "full", "seconds": time.perf_counter() - t0}
        fit = SmootherFit(self, games, tl, mean, var, self.model, self.times, info=info)
        fit._ttt_state = _State(self._model_settings(), times, slice_times, node_order, node_start, node_slice,
                                game_order, game_start, prev, nxt, q, ga, gb, score, home, fwd, bwd, lik, msg,
                                filtered_i)
        return fit
    def _steps(self, dt: np.ndarray) -> np.ndarray:
        """The random walk's variance ``tau^2 dt`` between consecutive nodes (at most ``VAR_MAX``)."""
        return np.minimum(self.tau**2 * dt, VAR_MAX)

    def _game_arrays(self, games: Games, rows: np.ndarray):
        """The scores and home advantages of the games at ``rows``, as the compiled loops take them."""
        return (np.ascontiguousarray(games.score[rows], dtype=np.float64),
                np.where(games.neutral[rows], 0.0, self.home))

    def _check_finite(self, mean: np.ndarray, var: np.ndarray) -> None:
        if not (np.all(np.isfinite(mean)) and np.all(var > 0)):
            raise ArithmeticError(f"{self.name}: the message passing gave a non-finite mean or a non-positive variance "
                                  f"({repr(self)}); this is a bug, please report it with the games")

    def _fit_incremental(self, games: Games, times: np.ndarray, warm: SmootherFit, n0: int, tl, old_to: np.ndarray,
                         new_to: np.ndarray, t0: float) -> SmootherFit:
        """The incremental refit of :meth:`smoothers.ttt.TrueSkillThroughTime.fit`. Nodes and games
        are numbered in time order, and every new one is later than every earlier one, so the
        earlier fit's arrays keep their numbers and the new nodes, games and slices are appended
        (the same numbering as a fit from scratch); then :func:`smoothers._ttt_messages.refit`."""
        st = warm._ttt_state
        n = len(games)
        n_old, n_old_slices = st.prev.size, st.slice_times.size
        # the new nodes by time, then competitor (new_to is by competitor, then time)
        fresh = new_to[np.argsort(tl.node_time[new_to], kind="stable")]
        new_times, counts = np.unique(tl.node_time[fresh], return_counts=True)
        node_order = np.concatenate([old_to[st.node_order], fresh])
        pos = np.empty(tl.n_nodes, dtype=np.int64)
        pos[node_order] = np.arange(tl.n_nodes)
        new_prev = tl.prev[fresh]
        new_prev = np.where(new_prev >= 0, pos[np.maximum(new_prev, 0)], -1).astype(np.int64)
        prev = np.concatenate([st.prev, new_prev])
        nxt = np.concatenate([st.nxt, np.full(fresh.size, -1, dtype=np.int64)])
        linked = np.flatnonzero(new_prev >= 0)
        nxt[new_prev[linked]] = n_old + linked
        q = np.concatenate([st.q, self._steps(tl.dt[fresh])])
        node_start = np.concatenate([st.node_start, n_old + np.cumsum(counts)]).astype(np.int64)
        node_slice = np.concatenate([st.node_slice, n_old_slices + np.repeat(np.arange(new_times.size), counts)])
        # the new games by time, then row; the earlier ones keep their numbers (their rows mapped)
        rows = np.sort(games.order[n0:])
        rows = rows[np.argsort(times[rows], kind="stable")]
        row_of_old = np.empty(n0, dtype=np.int64)
        row_of_old[warm.games.order] = games.order[:n0]
        game_order = np.concatenate([row_of_old[st.game_order], rows])
        game_start = np.concatenate([st.game_start[:-1], n0 + np.searchsorted(times[rows], new_times),
                                     [n]]).astype(np.int64)
        ga = np.concatenate([st.ga, pos[tl.game_a[rows]]])
        gb = np.concatenate([st.gb, pos[tl.game_b[rows]]])
        score, home = self._game_arrays(games, rows)
        score, home = np.concatenate([st.score, score]), np.concatenate([st.home, home])
        grow = np.zeros((fresh.size, 2))
        fwd, bwd, lik = (np.concatenate([x, grow]) for x in (st.fwd, st.bwd, st.lik))
        msg = np.concatenate([st.msg, np.zeros((rows.size, 4))])
        filtered_i = np.concatenate([st.filtered_var, np.empty(fresh.size)])
        prior_var = max(self.sigma, SD_MIN) ** 2
        sweeps, change, settled, visits, earliest = refit(
            n_old_slices, node_start, game_start, node_slice, prev, nxt, q, 1.0 / prior_var, self.mu / prior_var, ga,
            gb, score, home, self.beta_kernel, self.draw_margin, fwd, bwd, lik, msg, filtered_i,
            games.period is not None, self.max_iter, self.tol * 10.0 if self.refit_tol is None else self.refit_tol)
        mean_i, var_i = np.empty(tl.n_nodes), np.empty(tl.n_nodes)
        posterior(fwd, bwd, lik, mean_i, var_i)
        mean, var, filtered_var = (_to_timeline(x, node_order) for x in (mean_i, var_i, filtered_i))
        self._check_finite(mean, var)
        slice_times = np.concatenate([st.slice_times, new_times])
        info = {"sweeps": int(sweeps), "change": float(change) if sweeps else float("nan"),
                "converged": bool(settled), "n_nodes": tl.n_nodes, "n_slices": slice_times.size,
                "filtered_sd": np.sqrt(filtered_var), "warm_games": n0, "refit": "incremental",
                "slice_visits": int(visits), "earliest_slice": int(earliest), "seconds": time.perf_counter() - t0}
        fit = SmootherFit(self, games, tl, mean, var, self.model, self.times, info=info)
        fit._ttt_state = _State(self._model_settings(), times, slice_times, node_order, node_start, node_slice,
                                game_order, game_start, prev, nxt, q, ga, gb, score, home, fwd, bwd, lik, msg,
                                filtered_i)
        return fit

    @staticmethod
    def _warm_messages(games: Games, times: np.ndarray, warm: SmootherFit, msg: np.ndarray) -> int:
        """Copy into ``msg`` (row order) the messages of the warm fit's games that are games of this
        table (the same row, competitors and time); the number copied."""
        old_games, st = warm.games, warm._ttt_state
        old_msg = np.empty_like(st.msg)
        old_msg[st.game_order] = st.msg  # back to the earlier table's rows
        rows, old_times = np.asarray(old_games.row), st.times
        order = np.argsort(rows, kind="stable")
        at = np.searchsorted(rows[order], games.row)
        at = np.minimum(at, rows.size - 1)
        old = order[at]
        same = ((rows[old] == games.row) & (old_games.a_name[old] == games.a_name)
                & (old_games.b_name[old] == games.b_name) & (old_times[old] == times))
        msg[same] = old_msg[old[same]]
        return int(np.count_nonzero(same))


def _to_timeline(x: np.ndarray, node_order: np.ndarray) -> np.ndarray:
    """Per-node values numbered in time order, renumbered as the timeline's nodes."""
    out = np.empty_like(x)
    out[node_order] = x
    return out


@dataclass
class _State:
    """What a refit continues from, nodes and games numbered in time order (as
    :func:`smoothers._ttt_messages.run`): the settings; each game's time (the smoother's unit, input row order); the slices' times, each
    internal node's timeline node (``node_order``), the slices' first nodes (``node_start``) and
    each node's slice; each internal game's row (``game_order``) and the slices' first games; each
    node's previous and next node and step variance; each game's nodes, score and home advantage;
    the nodes' forward, backward and likelihood messages and the games' messages (natural
    parameters); the filtered variances; whether the fit learned ``draw_probability`` 0."""

    settings: dict
    times: np.ndarray
    slice_times: np.ndarray
    node_order: np.ndarray
    node_start: np.ndarray
    node_slice: np.ndarray
    game_order: np.ndarray
    game_start: np.ndarray
    prev: np.ndarray
    nxt: np.ndarray
    q: np.ndarray
    ga: np.ndarray
    gb: np.ndarray
    score: np.ndarray
    home: np.ndarray
    fwd: np.ndarray
    bwd: np.ndarray
    lik: np.ndarray
    msg: np.ndarray
    filtered_var: np.ndarray
    #: whether ``draw_probability`` 0 was learned from these games (``None`` given): a refit on
    #: games that extend them without a draw learns 0 too, without a run
    draws_ruled_out: bool = False
