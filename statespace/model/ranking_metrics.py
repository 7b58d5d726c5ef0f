r"""Scores of forecasts of rankings: how well pre-match ratings order the sides of each match.

A table of matches in the shared layout (``match_ptr``: the sides of match ``m`` are rows
``match_ptr[m]:match_ptr[m + 1]``; ``rank``: each side's place, 0 first, ties sharing a place) is
scored against ``strength``, one number per side known before the match (a rating, or a side's
performance mean) where higher means stronger. Each score is a mean over matches weighted by the
number of sides ``n``, the weighting of Elo-MMR's experiments (Ebtekar & Liu, *Elo-MMR: A Rating
System for Massive Multiplayer Competitions*, WWW 2021, Section 5; the ``metrics`` module of its
repository ``EbTech/Elo-MMR``), so a contest of 3,000 entrants counts 3,000 times one of 2. Every
function returns the overall score with the per-match values and weights, from which paired
standard errors of two methods follow (:func:`paired_se`).

- **Pair inversion** (:func:`pair_order`), in percent: of the :math:`n (n - 1) / 2` pairs of sides
  of a match, the share the strengths order as the result did. A pair tied in the result counts as
  ordered (nothing to invert); a pair the result separates counts when the side ahead has the
  strictly higher strength. Elo-MMR's "pair inversion" figure is this share (78.6% for Elo-MMR on
  Codeforces).
- **Rank deviation** (:func:`rank_deviation`), in percent of the field: sort the sides by strength
  (equal strengths in the order of the result, as Elo-MMR's stable sort of its standings); a side at position :math:`i` whose result spans places
  :math:`[lo, hi]` (ties) is :math:`\operatorname{dist}(i, [lo, hi])` places off; the mean of
  these over the match's sides, divided by :math:`n - 1`.
- **Pairwise log loss** (:func:`pairwise_log_loss`), in nats: the mean over a match's pairs of the
  binary log loss of :math:`P(i \text{ ahead of } j) = F((s_i - s_j) / \alpha)`, F the logistic
  cdf at scale :math:`\alpha`, the target 1 for the side ahead and 0.5 for a tie (as a draw is
  scored in :mod:`statespace.model.metrics`). Elo-MMR's cross-entropy figure is the same sum over
  separated pairs only, in bits, at :math:`\alpha = 400 / \ln 10`.
- **Top-1 accuracy** (:func:`top1_accuracy`): whether the strongest side (the first among equals)
  finished first (rank 0, a shared first place included).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["pair_order", "rank_deviation", "pairwise_log_loss", "top1_accuracy", "paired_se"]


def _layout(strength, rank, match_ptr):
    strength = np.ascontiguousarray(strength, dtype=np.float64)
    rank = np.ascontiguousarray(rank, dtype=np.int64)
    match_ptr = np.ascontiguousarray(match_ptr, dtype=np.int64)
    if strength.shape != rank.shape or strength.ndim != 1:
        raise ValueError(f"strength and rank must be 1-d arrays of one value a side, got shapes {strength.shape} "
                         f"and {rank.shape}")
    if match_ptr.ndim != 1 or match_ptr.size < 1 or match_ptr[0] != 0 or match_ptr[-1] != strength.size \
            or np.any(np.diff(match_ptr) < 2):
        raise ValueError("match_ptr must run from 0 to the number of sides, every match with at least 2 sides")
    size = np.repeat(np.diff(match_ptr), np.diff(match_ptr))
    if np.any((rank < 0) | (rank >= size)):
        bad = int(np.flatnonzero((rank < 0) | (rank >= size))[0])
        raise ValueError(f"rank of side {bad} is {rank[bad]}: a side's place is in 0..(sides of its match - 1)")
    if not np.all(np.isfinite(strength)):
        bad = int(np.flatnonzero(~np.isfinite(strength))[0])
        raise ValueError(f"strength of side {bad} is {strength[bad]!r}: strengths must be finite")
    return strength, rank, match_ptr


def _mean(values, weights):
    return float(np.sum(values * weights) / np.sum(weights)), values, weights


@njit(cache=True)
def _pair_order(strength, rank, match_ptr, out):
    """Per match, in O(n log n): walk the places in order; a side's separated pairs ordered as the
    result are the sides strictly ahead of it with a strictly higher strength, counted in a
    Fenwick tree over the strengths' order (equal strengths share a slot)."""
    for m in range(match_ptr.size - 1):
        lo, hi = match_ptr[m], match_ptr[m + 1]
        n = hi - lo
        s = strength[lo:hi]
        r = rank[lo:hi]
        # the strengths' slots, 1-based, equal strengths in one slot
        by_strength = np.argsort(s, kind="mergesort")
        slot = np.empty(n, dtype=np.int64)
        k = 0
        for pos in range(n):
            if pos > 0 and s[by_strength[pos]] != s[by_strength[pos - 1]]:
                k += 1
            slot[by_strength[pos]] = k + 1
        tree = np.zeros(k + 2, dtype=np.int64)
        by_place = np.argsort(r, kind="mergesort")
        inserted = 0
        ordered = 0.0
        tied = 0.0
        start = 0
        while start < n:
            stop = start
            while stop < n and r[by_place[stop]] == r[by_place[start]]:
                stop += 1
            g = stop - start
            tied += g * (g - 1) / 2.0
            for q in range(start, stop):  # sides ahead with a higher strength: inserted minus those at most as strong
                i = slot[by_place[q]]
                at_most = 0
                while i > 0:
                    at_most += tree[i]
                    i -= i & (-i)
                ordered += inserted - at_most
            for q in range(start, stop):
                i = slot[by_place[q]]
                while i < tree.size:
                    tree[i] += 1
                    i += i & (-i)
            inserted += g
            start = stop
        out[m] = 100.0 * (ordered + tied) / (n * (n - 1) / 2.0)


def pair_order(strength, rank, match_ptr) -> tuple[float, np.ndarray, np.ndarray]:
    """Pair inversion: the percentage of pairs of sides ordered as the result (ties in the result
    count as ordered), each match weighted by its number of sides. Returns (score, per-match
    values, weights)."""
    strength, rank, match_ptr = _layout(strength, rank, match_ptr)
    out = np.empty(match_ptr.size - 1)
    _pair_order(strength, rank, match_ptr, out)
    return _mean(out, np.diff(match_ptr).astype(np.float64))


@njit(cache=True)
def _rank_deviation(strength, rank, match_ptr, out):
    for m in range(match_ptr.size - 1):
        lo, hi = match_ptr[m], match_ptr[m + 1]
        n = hi - lo
        tied = np.zeros(n, dtype=np.int64)  # sides sharing each place
        for s in range(lo, hi):
            tied[rank[s]] += 1
        # by strength, equal strengths in the order of the result (Elo-MMR sorts its standings,
        # which are in place order, by rating with a stable sort)
        by_place = np.argsort(rank[lo:hi], kind="mergesort")
        order = by_place[np.argsort(-strength[lo:hi][by_place], kind="mergesort")]
        total = 0.0
        for pos in range(n):
            first = rank[lo + order[pos]]
            last = first + tied[first] - 1
            if pos < first:
                total += first - pos
            elif pos > last:
                total += pos - last
        out[m] = 100.0 * total / n / (n - 1)


def rank_deviation(strength, rank, match_ptr) -> tuple[float, np.ndarray, np.ndarray]:
    """Rank deviation: how many places from its result each side's position by strength is, as a
    percentage of the other sides, averaged over the match's sides; matches weighted by their
    number of sides. Returns (score, per-match values, weights)."""
    strength, rank, match_ptr = _layout(strength, rank, match_ptr)
    out = np.empty(match_ptr.size - 1)
    _rank_deviation(strength, rank, match_ptr, out)
    return _mean(out, np.diff(match_ptr).astype(np.float64))


@njit(cache=True)
def _log_logistic(z):
    """``log F(z)`` for the logistic cdf F, finite for every finite z."""
    return -math.log1p(math.exp(-z)) if z >= 0.0 else z - math.log1p(math.exp(z))


@njit(cache=True)
def _pairwise_log_loss(strength, rank, match_ptr, scale, out):
    for m in range(match_ptr.size - 1):
        lo, hi = match_ptr[m], match_ptr[m + 1]
        n = hi - lo
        total = 0.0
        for i in range(lo, hi):
            for j in range(i + 1, hi):
                z = (strength[i] - strength[j]) / scale
                if rank[i] < rank[j]:
                    total -= _log_logistic(z)
                elif rank[i] > rank[j]:
                    total -= _log_logistic(-z)
                else:
                    total -= 0.5 * (_log_logistic(z) + _log_logistic(-z))
        out[m] = total / (n * (n - 1) / 2.0)


def pairwise_log_loss(strength, rank, match_ptr, scale: float) -> tuple[float, np.ndarray, np.ndarray]:
    """Mean binary log loss (nats) over the pairs of sides of each match of the logistic forecast
    ``F((s_i - s_j) / scale)`` that ``i`` finishes ahead of ``j`` (a tie: target 0.5); matches
    weighted by their number of sides. Returns (score, per-match values, weights)."""
    strength, rank, match_ptr = _layout(strength, rank, match_ptr)
    if not (isinstance(scale, (int, float, np.floating, np.integer)) and not isinstance(scale, bool)
            and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    out = np.empty(match_ptr.size - 1)
    _pairwise_log_loss(strength, rank, match_ptr, float(scale), out)
    return _mean(out, np.diff(match_ptr).astype(np.float64))


def top1_accuracy(strength, rank, match_ptr) -> tuple[float, np.ndarray, np.ndarray]:
    """Whether the strongest side of each match (the first of equals) finished first; matches
    weighted by their number of sides. Returns (score, per-match values 0 or 1, weights)."""
    strength, rank, match_ptr = _layout(strength, rank, match_ptr)
    starts = match_ptr[:-1]
    out = np.empty(starts.size)
    for m, (lo, hi) in enumerate(zip(starts, match_ptr[1:])):
        out[m] = float(rank[lo + int(np.argmax(strength[lo:hi]))] == 0)
    return _mean(out, np.diff(match_ptr).astype(np.float64))


def paired_se(values_a, values_b, weights) -> float:
    """Standard error of the weighted mean difference of two methods' per-match values on the same
    matches: ``sqrt(sum w^2 (d - dbar)^2) / sum w`` with ``d = a - b``, the matches independent."""
    d = np.asarray(values_a, dtype=np.float64) - np.asarray(values_b, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    mean = np.sum(w * d) / np.sum(w)
    return float(np.sqrt(np.sum(w**2 * (d - mean) ** 2)) / np.sum(w))
