r"""The compiled loop over matches of many sides, and the signature of a filter's match kernel.

A match has two or more sides; a side is one or more competitors, each with a partial-play weight
:math:`w \in [0, 1]`; the result is each side's place (0 first, ties sharing a place). A side's
performance is the weighted sum of its members' skills, :math:`p_s = \sum_k w_k s_k`, so a match
is one observation of a design vector over the skills (:mod:`statespace.data.matches` holds the
layout: ``match_ptr`` into the sides, ``side_ptr`` into the members).

A filter rates matches through ONE compiled function, its *match kernel*, declared with
:func:`match_kernel` and set as the filter class's ``_match``:

``update(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var)``

- ``x`` (float64 ``(n_rows, width)``): the state, one row per competitor in the filter's own
  columns (the same rows as for games); ``theta``: the filter's parameter vector (:meth:`theta`);
- ``side_ptr``, ``member``, ``weight``, ``rank``: the whole table's arrays (read only); the match's
  sides are rows ``s0 .. s1 - 1`` of ``rank``, side ``s``'s members are rows
  ``side_ptr[s] .. side_ptr[s + 1] - 1`` of ``member`` and ``weight``;
- before updating, the kernel writes each side's *forecast*, the moments of its performance
  from the pre-match state, to ``perf_mean[s]`` (:math:`\sum_k w_k \mu_k`) and ``perf_var[s]``
  (:math:`\sum_k w_k^2 \sigma_k^2`, the skill uncertainty only: 0 for a filter that keeps no
  variance); then it updates the members' rows of ``x`` in place.

Before a match the loop moves each member forward in time with the filter's predict kernel
(:data:`filters.kernels.PREDICT_SIG`, the same as for games) by the time since its last match
(0 at its first), so the dynamics are written once for games and matches. Matches are rated
one at a time in time order (a match is its own rating period).

The sides' forecasts are what matches are scored on (:mod:`statespace.model.ranking_scores`):
each filter names the ranking observation its forecast means (:meth:`filters.base.Filter.match_forecast`).
As the game loops, the loop is compiled for the very kernel it is given where it can
(:func:`statespace._runtime.jit.entry`) and runs as plain Python with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from statespace._runtime.jit import entry, kernel

from .kernels import DT_MAX, PredictFn, f8_1d, f8_1r, f8_2d, i8, i8_1r

__all__ = ["MATCH_SIG", "MatchFn", "match_kernel", "match_loop", "side_moments", "empty_post"]

MATCH_SIG = types.void(f8_2d, f8_1d, i8_1r, i8_1r, f8_1r, i8_1r, i8, i8, f8_1d, f8_1d)
MatchFn = types.FunctionType(MATCH_SIG)


def match_kernel(fn):
    """Compile ``fn`` as a match kernel (:data:`MATCH_SIG`; compiled on first use and cached)."""
    return kernel(MATCH_SIG)(fn)


@njit(cache=True)
def side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, sd_col):
    r"""Each side's performance moments from the state: ``perf_mean[s]`` :math:`= \sum_k w_k x_{k,0}`
    and ``perf_var[s]`` :math:`= \sum_k w_k^2 x_{k,\mathrm{sd}}^2` for the sides ``s0 .. s1 - 1``
    (``sd_col < 0``: a filter without a variance, ``perf_var`` 0)."""
    for s in range(s0, s1):
        m = 0.0
        v = 0.0
        for k in range(side_ptr[s], side_ptr[s + 1]):
            i = member[k]
            w = weight[k]
            m += w * x[i, 0]
            if sd_col >= 0:
                sd = x[i, sd_col]
                v += w * w * sd * sd
        perf_mean[s] = m
        perf_var[s] = v


@entry(types.void(PredictFn, MatchFn, f8_2d, types.int64[::1], f8_1d, f8_1d, f8_1r, i8_1r, i8_1r, i8_1r, f8_1r,
                  i8_1r, f8_1d, f8_1d, f8_2d, i8), work="member")
def match_loop(predict, update, x, count, last, theta, time, match_ptr, side_ptr, member, weight, rank,
               perf_mean, perf_var, post, record):
    """Every match in order: each member moved forward in time by ``predict`` over the time since
    its last match (``last``, NaN before the first; at most ``DT_MAX`` at once), then the match
    kernel ``update``, which writes the sides' forecasts to ``perf_mean``/``perf_var`` and updates
    the members' rows. ``count`` counts each competitor's matches. With ``record`` the first
    ``post.shape[1]`` state columns of each member after its match go to ``post`` (one row per
    member row of the table)."""
    n_matches = match_ptr.shape[0] - 1
    for m in range(n_matches):
        s0 = match_ptr[m]
        s1 = match_ptr[m + 1]
        t = time[m]
        for k in range(side_ptr[s0], side_ptr[s1]):
            i = member[k]
            if not math.isnan(last[i]):
                dt = min(max(t - last[i], 0.0), DT_MAX)
                predict(x, i, theta, dt)
            last[i] = t
            count[i] += 1
        update(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var)
        if record:
            for k in range(side_ptr[s0], side_ptr[s1]):
                for c in range(post.shape[1]):
                    post[k, c] = x[member[k], c]


def empty_post(n_members: int, width: int, record: bool) -> np.ndarray:
    """The ``post`` array :func:`match_loop` records into (no rows when not recording)."""
    return np.empty((n_members if record else 0, width))
