"""The batched loops of the grid: the run loops of :mod:`filters.kernels` once per setting.

The settings are an extra axis, run in parallel over blocks of settings (numba's ``prange``). Each
setting gets its own state, counts, times and accumulators, copied from ``x0[s]``; its forecasts go
to a buffer of one setting's games at a time and are reduced at once to its scores
(:func:`filters.scores.objectives`), so no (settings, games) array is built. The bodies they call
are the run loops' own functions (compiled here without a cache of their own: the batched loops
that call them are cached). :func:`filters.grid.evaluate` picks the loop.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange, types

from statespace._runtime.jit import entry
from statespace.model.observation import DerivsFn, ForecastFn

from .kernels import (ApplyFn, PredictFn, ProbaFn, SiteFn, UpdateFn, f8_1r, f8_2d, game_loop, i8, i8_1r, period_loop,
                      site_loop)
from .scores import objectives

__all__ = ["grid_blocks", "grid_game_loop", "grid_site_loop", "grid_period_loop"]

_game_body = njit(game_loop.__wrapped__)
_site_body = njit(site_loop.__wrapped__)
_period_body = njit(period_loop.__wrapped__)

f8_3d = types.float64[:, :, ::1]


def grid_blocks(n_settings: int) -> int:
    """How many blocks of settings the batched loops share among numba's threads: four per thread."""
    return max(1, min(n_settings, 4 * numba.get_num_threads()))


@njit(cache=True, inline="always")
def _block_buffers(x0, width, n):
    """A block's working arrays, allocated once for all its settings (``x0[s]``: setting ``s``'s
    starting state): the state, the games counted and last time of each row, the accumulators
    ``(rows, width)``, one setting's forecasts of the ``n`` games ``(n, 3)`` and an empty posterior
    record ``(n, 0)``."""
    rows, cols = x0.shape[1], x0.shape[2]
    return (np.empty((rows, cols)), np.empty(rows, np.int64), np.empty(rows), np.empty((rows, width)),
            np.empty((n, 3)), np.empty((n, 0)))


@njit(cache=True, inline="always")
def _block_settings(k, blocks, n_settings):
    """The settings of block ``k`` of ``blocks``: consecutive, the blocks' sizes differing by at most one."""
    return range(k * n_settings // blocks, (k + 1) * n_settings // blocks)


@njit(cache=True, inline="always")
def _reset(x, x0, count, last, scratch):
    """One setting's starting state ``x0`` into the block's buffers, counts and accumulators zeroed."""
    x[:, :] = x0
    count[:] = 0
    last[:] = np.nan
    scratch[:, :] = 0.0


@entry(types.void(PredictFn, SiteFn, ApplyFn, DerivsFn, ForecastFn, types.boolean, i8, f8_2d, f8_3d, f8_2d, i8_1r,
                  i8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, i8, i8, i8, i8, f8_2d), parallel=True, interpret=False)
def grid_game_loop(predict, site, apply, derivs, forecast, has_predict, rule, obs, x0, theta, a, b, score, ya, yb,
                   home, weight, t, width, shared, first, blocks, out):
    """:func:`~filters.kernels.game_loop` for every setting ``s`` (observation vector ``obs[s]``,
    initial state ``x0[s]``, parameters ``theta[s]``), in parallel over ``blocks`` blocks of settings;
    ``out[s]`` gets the objectives of its forecasts of games ``first:`` (time order;
    :func:`~filters.scores.objectives`).

    A few blocks per thread (:func:`grid_blocks`): a block's buffers (one setting's forecasts, state
    and accumulators) are allocated once for its settings, and a thread that finishes early takes
    another block."""
    for k in prange(blocks):
        x, count, last, scratch, out_p, out_post = _block_buffers(x0, width, a.shape[0])
        for s in _block_settings(k, blocks, x0.shape[0]):
            _reset(x, x0[s], count, last, scratch)
            _game_body(predict, site, apply, derivs, forecast, has_predict, rule, obs[s], x, count, last, theta[s],
                       a, b, score, ya, yb, home, weight, t, out_p, out_post, scratch, shared)
            objectives(out_p, score, first, out, s)


@entry(types.void(PredictFn, SiteFn, ApplyFn, DerivsFn, ForecastFn, i8, f8_2d, f8_3d, f8_2d, i8_1r, i8_1r, f8_1r,
                  f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, i8_1r, i8, i8, i8, i8, f8_2d), parallel=True, interpret=False)
def grid_site_loop(predict, site, apply, derivs, forecast, rule, obs, x0, theta, a, b, score, ya, yb, home, weight,
                   t, starts, width, shared, first, blocks, out):
    """:func:`~filters.kernels.site_loop` for every setting, blocks of settings in parallel, as
    :func:`grid_game_loop`."""
    for k in prange(blocks):
        x, count, last, scratch, out_p, out_post = _block_buffers(x0, width, a.shape[0])
        for s in _block_settings(k, blocks, x0.shape[0]):
            _reset(x, x0[s], count, last, scratch)
            _site_body(predict, site, apply, derivs, forecast, rule, obs[s], x, count, last, theta[s], a, b, score,
                       ya, yb, home, weight, t, starts, out_p, out_post, scratch, shared)
            objectives(out_p, score, first, out, s)


@entry(types.void(PredictFn, ProbaFn, UpdateFn, DerivsFn, ForecastFn, f8_2d, f8_3d, f8_2d, i8_1r, i8_1r, f8_1r,
                  f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, i8_1r, i8, i8, i8, f8_2d), parallel=True, interpret=False)
def grid_period_loop(predict, proba, update, derivs, forecast, obs, x0, theta, a, b, score, ya, yb, home, weight, t,
                     starts, shared, first, blocks, out):
    """:func:`~filters.kernels.period_loop` for every setting, blocks of settings in parallel, as
    :func:`grid_game_loop`."""
    for k in prange(blocks):
        x, count, last, scratch, out_p, out_post = _block_buffers(x0, 1, a.shape[0])
        for s in _block_settings(k, blocks, x0.shape[0]):
            _reset(x, x0[s], count, last, scratch)
            _period_body(predict, proba, update, derivs, forecast, obs[s], x, count, last, theta[s], a, b, score,
                         ya, yb, home, weight, t, starts, out_p, out_post, shared)
            objectives(out_p, score, first, out, s)
