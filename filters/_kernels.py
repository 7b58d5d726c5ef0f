"""The compiled run loop that every filter shares, and the kernel signatures it calls.

A filter is three small compiled functions over a state matrix ``x`` (one row per competitor,
columns in the filter's own units) and a parameter vector ``theta``:

- ``predict(x, i, theta, dt)``: time update of competitor ``i`` over ``dt`` units of time;
- ``proba(x, a, b, at_home, theta) -> (win, draw, loss)``: forecast of one game;
- ``game(x, count, theta, a, b, score, at_home, weight) -> (win, draw, loss)`` (optional): forecast
  one game and update on it, the sequential special case of ``proba`` + ``update`` fused so
  that the expected score is computed once and no batch bookkeeping runs; used when every
  game is its own rating period, and it must give the same numbers as the two kernels;
- ``update(x, count, theta, a, b, score, at_home, weight, start, stop, scratch)``: the observation
  update of one rating period, the games ``start:stop`` of the time-sorted arrays, all
  computed from the pre-period state; it also adds each competitor's games to ``count``
  (``scratch`` is zeroed working space, one row per competitor, that the kernel must leave
  zeroed). ``weight`` is each game's likelihood weight (1 unless the games carry weights,
  e.g. from the score margin; see ``Games.with_weights``): filters that honour it temper the
  game's log-likelihood by it.

A filter may keep one *shared* state row besides the competitors' (the EKF's latent home
advantage, ``SkillModel.home_drift > 0``): the loops take its index ``shared`` (-1: none) and
move it forward in time with ``predict`` at every batch, like a competitor who plays every
game; the kernels find it as the last row of ``x`` (in frozen forecasts, the third row of the
two-competitor working copy).

The loops take these as first-class function values with fixed signatures, so each loop is
compiled once, cached on disk, and shared by all filters (a per-filter closure would defeat
numba's cache). With ``NUMBA_DISABLE_JIT=1`` the same code runs as plain Python.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

f8 = types.float64
i8 = types.int64
f8_2d = types.float64[:, ::1]
f8_1d = types.float64[::1]
i8_1d = types.int64[::1]

PREDICT_SIG = types.void(f8_2d, i8, f8_1d, f8)
PROBA_SIG = types.UniTuple(f8, 3)(f8_2d, i8, i8, f8, f8_1d)
UPDATE_SIG = types.void(f8_2d, i8_1d, f8_1d, i8_1d, i8_1d, f8_1d, f8_1d, f8_1d, i8, i8, f8_2d)
GAME_SIG = types.UniTuple(f8, 3)(f8_2d, i8_1d, f8_1d, i8, i8, f8, f8, f8)

PredictFn = types.FunctionType(PREDICT_SIG)
ProbaFn = types.FunctionType(PROBA_SIG)
UpdateFn = types.FunctionType(UPDATE_SIG)
GameFn = types.FunctionType(GAME_SIG)


def predict_kernel(fn):
    """Compile ``fn`` as a predict kernel (explicit signature, cached)."""
    return njit(PREDICT_SIG, cache=True)(fn)


def proba_kernel(fn):
    """Compile ``fn`` as a proba kernel (explicit signature, cached)."""
    return njit(PROBA_SIG, cache=True)(fn)


def update_kernel(fn):
    """Compile ``fn`` as an update kernel (explicit signature, cached)."""
    return njit(UPDATE_SIG, cache=True)(fn)


def game_kernel(fn):
    """Compile ``fn`` as a one-game kernel (explicit signature, cached)."""
    return njit(GAME_SIG, cache=True)(fn)


@njit(PREDICT_SIG, cache=True)
def no_predict(x, i, theta, dt):
    """Time update of a filter that tracks no variance (Elo): nothing changes."""
    return


@njit(types.void(PredictFn, f8_2d, f8_1d, f8_1d, i8, f8), cache=True)
def _advance(predict, x, last, theta, i, t):
    """Move row ``i`` forward to time ``t`` (``predict`` with the time since it was last seen);
    a first appearance keeps its initial row and only records the time."""
    li = last[i]
    if math.isnan(li):
        last[i] = t
    elif t > li:
        predict(x, i, theta, t - li)
        last[i] = t


@njit(types.void(PredictFn, f8_2d, f8_1d, f8_1d, i8, f8), cache=True)
def _advance_shared(predict, x, last, theta, shared, t):
    """Move the shared row (if any) forward to time ``t``; its first time is the first game's."""
    if shared >= 0:
        _advance(predict, x, last, theta, shared, t)


@njit(types.void(PredictFn, ProbaFn, UpdateFn, f8_2d, i8_1d, f8_1d, f8_1d, i8_1d, i8_1d, f8_1d, f8_1d,
                 f8_1d, f8_1d, i8_1d, f8_2d, f8_2d, f8_2d, i8), cache=True)
def run_loop(predict, proba, update, x, count, last, theta, a, b, score, home, weight, t, starts, out_p, out_post,
             scratch, shared):
    """Filter the time-sorted games batch by batch.

    For each batch (rating period) ``starts[k]:starts[k+1]``: every competitor in it is moved
    forward to the batch time ``t[start]`` (``predict`` with the time since its last
    appearance; a first appearance keeps its initial row), every game is forecast from that
    pre-period state into ``out_p``, then ``update`` applies the whole batch; ``out_post``
    records the first ``out_post.shape[1] // 2`` columns of both competitors' rows after the
    batch (a's columns first).
    """
    k = out_post.shape[1] // 2
    nb = starts.shape[0] - 1
    for j in range(nb):
        s = starts[j]
        e = starts[j + 1]
        tb = t[s]
        _advance_shared(predict, x, last, theta, shared, tb)
        for g in range(s, e):
            _advance(predict, x, last, theta, a[g], tb)
            _advance(predict, x, last, theta, b[g], tb)
        for g in range(s, e):
            pw, pd, pl = proba(x, a[g], b[g], home[g], theta)
            out_p[g, 0] = pw
            out_p[g, 1] = pd
            out_p[g, 2] = pl
        update(x, count, theta, a, b, score, home, weight, s, e, scratch)
        for g in range(s, e):
            ia = a[g]
            ib = b[g]
            for c in range(k):
                out_post[g, c] = x[ia, c]
                out_post[g, k + c] = x[ib, c]


@njit(types.void(PredictFn, ProbaFn, f8_2d, f8_1d, f8_1d, i8_1d, i8_1d, f8_1d, f8_1d, f8_2d, f8_2d, i8),
      cache=True)
def forecast_loop(predict, proba, x, last, theta, a, b, home, t, out_p, tmp, shared):
    """Forecast games from a fixed state without updating it (the "frozen" forecast).

    Each game's competitors are copied into the first two rows of ``tmp`` and moved forward to
    the game's time before the forecast, so drift accumulates up to each game but no result is
    learned; the shared row (``shared >= 0``) is copied into the third row and moved forward too.
    """
    k = x.shape[1]
    for g in range(a.shape[0]):
        if shared >= 0:
            for c in range(k):
                tmp[2, c] = x[shared, c]
            ls = last[shared]
            if not math.isnan(ls) and t[g] > ls:
                predict(tmp, 2, theta, t[g] - ls)
        for side in range(2):
            i = a[g] if side == 0 else b[g]
            for c in range(k):
                tmp[side, c] = x[i, c]
            li = last[i]
            if not math.isnan(li) and t[g] > li:
                predict(tmp, side, theta, t[g] - li)
        pw, pd, pl = proba(tmp, 0, 1, home[g], theta)
        out_p[g, 0] = pw
        out_p[g, 1] = pd
        out_p[g, 2] = pl


@njit(types.void(PredictFn, GameFn, types.boolean, f8_2d, i8_1d, f8_1d, f8_1d, i8_1d, i8_1d, f8_1d, f8_1d,
                 f8_1d, f8_1d, f8_2d, f8_2d, i8), cache=True)
def sequential_loop(predict, game, has_predict, x, count, last, theta, a, b, score, home, weight, t, out_p,
                    out_post, shared):
    """:func:`run_loop` when every game is its own rating period, with the fused ``game``
    kernel: one indirect call per game (plus the time updates when the filter has any)."""
    k = out_post.shape[1] // 2
    for g in range(a.shape[0]):
        ia = a[g]
        ib = b[g]
        tg = t[g]
        _advance_shared(predict, x, last, theta, shared, tg)
        if has_predict:
            for side in range(2):
                i = ia if side == 0 else ib
                if tg > last[i]:  # False for NaN: a first appearance keeps its initial row
                    predict(x, i, theta, tg - last[i])
        last[ia] = tg  # times are sorted, so this never moves back
        last[ib] = tg
        pw, pd, pl = game(x, count, theta, ia, ib, score[g], home[g], weight[g])
        out_p[g, 0] = pw
        out_p[g, 1] = pd
        out_p[g, 2] = pl
        for c in range(k):
            out_post[g, c] = x[ia, c]
            out_post[g, k + c] = x[ib, c]


def empty_scratch(n_players: int, width: int = 4) -> np.ndarray:
    """Zeroed working space for update kernels."""
    return np.zeros((n_players, width))
