"""Scores of ranking forecasts (statespace.model.ranking_metrics) against direct computations.

The references below are written from the definitions of Elo-MMR's experiments (Ebtekar & Liu,
WWW 2021, Section 5, and the ``metrics`` module of ``EbTech/Elo-MMR``): Elo-MMR counts each
contest's *ordered* pairs (``n (n - 1)`` of them), a pair tied in the standings as correct, a
separated pair as correct when the winner's rating is strictly higher, and weights each contest by
its number of entrants; rank deviation clamps each entrant's position by rating into its standing's
``[lo, hi]``. The references here loop over ordered pairs and positions as that text does, so
they share no code with the module.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from statespace.model.ranking_metrics import (pair_order, paired_se, pairwise_log_loss, rank_deviation,
                                              top1_accuracy)


def elo_mmr_pairs(strength, places):
    """Elo-MMR's pair figure for one contest: over ordered pairs, (correct + tied) / (n (n - 1))."""
    n = len(strength)
    correct = tied = 0
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            if places[i] == places[j]:
                tied += 1
            elif places[i] < places[j] and strength[i] > strength[j]:
                correct += 2  # Elo-MMR adds 2 for each (winner, loser) pair, seen once
    return 100.0 * (correct + tied) / (n * (n - 1))


def elo_mmr_deviation(strength, places):
    n = len(strength)
    standing = sorted(range(n), key=lambda k: places[k])  # the standings, in place order
    by_rating = sorted(standing, key=lambda k: -strength[k])  # Python's sort is stable
    total = 0
    for i, k in enumerate(by_rating):
        lo = places[k]
        hi = lo + sum(1 for p in places if p == lo) - 1
        total += abs(i - min(max(i, lo), hi))
    return 100.0 * total / (n * (n - 1))


def competition_ranks(result):
    """Places from results (higher is better): 'competition ranking', ties share the first place."""
    return [sum(1 for r in result if r > x) for x in result]


@st.composite
def contests(draw):
    sizes = draw(st.lists(st.integers(2, 7), min_size=1, max_size=5))
    strength, rank = [], []
    for n in sizes:
        strength += draw(st.lists(st.sampled_from([-1.0, 0.0, 0.5, 2.0, 3.0]), min_size=n, max_size=n))
        rank += competition_ranks(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    ptr = np.concatenate([[0], np.cumsum(sizes)])
    return np.array(strength), np.array(rank), ptr


@settings(max_examples=60, deadline=None)
@given(contests())
def test_pair_order_and_rank_deviation_equal_elo_mmrs_definitions(c):
    strength, rank, ptr = c
    score, values, weights = pair_order(strength, rank, ptr)
    dev, dvalues, _ = rank_deviation(strength, rank, ptr)
    for m in range(ptr.size - 1):
        s, r = strength[ptr[m]:ptr[m + 1]], rank[ptr[m]:ptr[m + 1]]
        assert values[m] == pytest.approx(elo_mmr_pairs(s, r), abs=1e-12)
        assert dvalues[m] == pytest.approx(elo_mmr_deviation(s, r), abs=1e-12)
        assert weights[m] == len(s)
    assert score == pytest.approx(np.average(values, weights=np.diff(ptr)))
    assert 0.0 <= score <= 100.0 and 0.0 <= dev <= 100.0


def test_worked_contest():
    """Four entrants, places 0, 1, 1, 3 (a tie for second). Ratings 3, 1, 2, 0 order all 5
    separated pairs as the result and the tied pair counts as ordered: 6/6. Ratings 0, 1, 2, 3
    invert all 5 separated pairs: only the tie is left, 1/6."""
    ptr = np.array([0, 4])
    rank = np.array([0, 1, 1, 3])
    assert pair_order(np.array([3.0, 1.0, 2.0, 0.0]), rank, ptr)[0] == pytest.approx(100.0)
    # ratings 0, 1, 2, 3: separated pairs (0,1) (0,2) (0,3) (1,3) (2,3) all inverted, the tie kept
    assert pair_order(np.array([0.0, 1.0, 2.0, 3.0]), rank, ptr)[0] == pytest.approx(100.0 / 6)
    # by rating the order is 3, 2, 1, 0: positions 0..3 against places [3], [1,2], [1,2], [0]
    assert rank_deviation(np.array([0.0, 1.0, 2.0, 3.0]), rank, ptr)[0] == pytest.approx(100.0 * 6 / 12)


def test_pairwise_log_loss_of_two_sides_is_the_binary_log_loss():
    ptr = np.array([0, 2, 4])
    strength = np.array([1.0, 0.0, 0.3, 0.3])
    rank = np.array([0, 1, 0, 0])  # the first match won by the stronger side, the second tied
    loss, values, _ = pairwise_log_loss(strength, rank, ptr, scale=2.0)
    p = 1 / (1 + math.exp(-0.5))
    assert values[0] == pytest.approx(-math.log(p))
    assert values[1] == pytest.approx(math.log(2.0))  # an even forecast of a tie
    assert loss == pytest.approx((values[0] * 2 + values[1] * 2) / 4)
    far = pairwise_log_loss(np.array([0.0, 1e6]), np.array([0, 1]), np.array([0, 2]), scale=1.0)[0]
    assert math.isfinite(far) and far == pytest.approx(1e6)


def test_top1_and_paired_se():
    ptr = np.array([0, 3, 5])
    rank = np.array([1, 0, 2, 0, 0])
    acc, values, weights = top1_accuracy(np.array([0.0, 2.0, 1.0, 5.0, 5.0]), rank, ptr)
    assert list(values) == [1.0, 1.0] and acc == 1.0
    acc, values, _ = top1_accuracy(np.array([3.0, 2.0, 1.0, 5.0, 5.0]), rank, ptr)
    assert list(values) == [0.0, 1.0] and acc == pytest.approx(2 / 5)
    # identical values: no difference, no error; one match differing: a direct formula
    assert paired_se([1.0, 2.0], [1.0, 2.0], [3, 2]) == 0.0
    d = np.array([1.0, 0.0])
    w = np.array([3.0, 1.0])
    mean = (3 * 1.0) / 4
    assert paired_se(d, [0.0, 0.0], w) == pytest.approx(math.sqrt(9 * (1 - mean) ** 2 + mean**2) / 4)


@pytest.mark.parametrize("strength, rank, ptr, fragment", [
    (np.array([0.0, 1.0]), np.array([0, 2]), np.array([0, 2]), "rank of side 1 is 2"),
    (np.array([0.0, np.nan]), np.array([0, 1]), np.array([0, 2]), "strength of side 1"),
    (np.array([0.0, 1.0, 2.0]), np.array([0, 1, 0]), np.array([0, 1, 3]), "at least 2 sides"),
])
def test_bad_layout_names_the_side(strength, rank, ptr, fragment):
    with pytest.raises(ValueError, match=fragment):
        pair_order(strength, rank, ptr)


def test_a_large_contest_equals_the_definition():
    """One 300-entrant contest with many ties in strength and in the result: the counting by a
    tree over the strengths equals the pairs counted one by one."""
    rng = np.random.default_rng(3)
    strength = rng.integers(0, 40, 300).astype(float)
    rank = np.array(competition_ranks(list(rng.integers(0, 60, 300))))
    values = pair_order(strength, rank, np.array([0, 300]))[1]
    assert values[0] == pytest.approx(elo_mmr_pairs(strength, rank), abs=1e-9)
