"""The lanes path of the batched grid (filters._lanes): many settings advanced together, the settings
the innermost axis. Its scores equal each setting's own run scored by statespace.metrics
(filters.grid.evaluate_by_runs) on random small tables, its exponential agrees with math.exp to
2 ulp, and what it does not cover takes the batched loops with unchanged numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import statespace as ss
from filters import Elo, Glicko
from filters import _lanes as L
from filters.grid import evaluate, evaluate_by_runs


def _table(seed: int, n_players: int, n_games: int, draws: bool, home: bool, weights: bool, late: bool,
           periods: bool) -> ss.Games:
    """A random table: results drawn at random (the scores need no model), competitors arriving late
    (``late``: the first games use only the first two competitors) and so on."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_games)
    b = (a + rng.integers(1, n_players, n_games)) % n_players
    if late:
        k = n_games // 3
        a[:k] = rng.integers(0, 2, k)
        b[:k] = 1 - a[:k]
    score = rng.choice([0.0, 0.5, 1.0] if draws else [0.0, 1.0], n_games)
    neutral = rng.random(n_games) < 0.5 if home else np.ones(n_games, bool)
    games = ss.Games.from_arrays(np.arange(n_games, dtype=float), [f"p{i}" for i in a], [f"p{i}" for i in b],
                                 score, neutral=neutral)
    if weights:
        games = games.with_weights(rng.uniform(0.2, 3.0, n_games))
    if periods:
        games = games.with_periods(max(1, n_games // 7))
    return games


def _settings(rng, n: int) -> list:
    return [Elo(k=float(k), home=float(h), initial_rating=float(r), scale=float(s))
            for k, h, r, s in zip(rng.uniform(1, 120, n), rng.uniform(-100, 150, n), rng.uniform(1000, 2000, n),
                                  rng.uniform(200, 600, n))]


def _agree(lanes, runs):
    np.testing.assert_array_equal(np.isnan(lanes), np.isnan(runs))
    np.testing.assert_allclose(lanes, runs, rtol=1e-12, atol=0, equal_nan=True)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31), draws=st.booleans(), home=st.booleans(), weights=st.booleans(), late=st.booleans(),
       periods=st.booleans(), burn_in=st.sampled_from([0.0, 0.25]), n_settings=st.integers(1, 21))
def test_lanes_equal_each_run_scored(seed, draws, home, weights, late, periods, burn_in, n_settings):
    games = _table(seed, 9, 120, draws, home, weights, late, periods)
    methods = _settings(np.random.default_rng(seed + 1), n_settings)
    assert L.lanes_usable(methods[0])
    _agree(evaluate(methods, games, burn_in), evaluate_by_runs(methods, games, burn_in))


def test_lanes_span_several_blocks_and_differ_per_setting():
    # 70 settings: blocks of several widths (lane_width), each lane its own numbers
    games = _table(5, 12, 300, True, True, True, True, False)
    methods = _settings(np.random.default_rng(2), 70)
    got = evaluate(methods, games, 0.1)
    _agree(got, evaluate_by_runs(methods, games, 0.1))
    assert len(np.unique(got[:, 0])) == 70


def test_non_finite_forecasts_score_nan_in_their_lane_only():
    games = _table(3, 6, 80, True, True, False, False, False)
    methods = _settings(np.random.default_rng(4), 5)
    methods[2].k = float("nan")  # past the constructor's check: its ratings, then forecasts, go NaN
    got = evaluate(methods, games)
    assert np.all(np.isnan(got[2]))
    _agree(got, evaluate_by_runs(methods, games))


def test_without_draws_log_loss_3_is_kept():
    games = _table(8, 7, 150, False, True, False, False, False)
    methods = _settings(np.random.default_rng(9), 4)
    got = evaluate(methods, games)
    assert np.all(np.isfinite(got))
    _agree(got, evaluate_by_runs(methods, games))


def test_paths_not_covered_fall_back_with_the_same_numbers():
    games = _table(11, 8, 200, True, True, False, False, True)
    fide = [Elo.fide(), Elo.fide(home=30.0)]
    glicko = [Glicko(c=30.0), Glicko(c=60.0)]
    assert not L.lanes_usable(fide[0]) and not L.lanes_usable(glicko[0])
    for methods in (fide, glicko):
        np.testing.assert_allclose(evaluate(methods, games), evaluate_by_runs(methods, games), rtol=0, atol=1e-12,
                                   equal_nan=True)
    # a mixed list: Elo's settings in lanes, FIDE's in the batched loop, each row its own
    mixed = [Elo(k=20.0), Elo.fide(), Elo(k=40.0)]
    _agree(evaluate(mixed, games), evaluate_by_runs(mixed, games))
    # the batched loops still give Elo's numbers when the lanes are turned off
    plain = [Elo(k=20.0), Elo(k=40.0)]
    np.testing.assert_allclose(evaluate(plain, games, lanes=False), evaluate_by_runs(plain, games), rtol=0,
                               atol=1e-12, equal_nan=True)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units of the last place of ``want`` (the spacing of subnormals below the normals)."""
    return np.abs(got - want) / np.spacing(want)


def test_exp_within_two_ulp_of_math_exp():
    @L.njit(error_model="numpy", fastmath=L.FLAGS)
    def many(x, out):
        for i in range(x.shape[0]):
            out[i] = L.exp_nonpos(x[i])

    x = np.concatenate([-np.linspace(0.0, 746.0, 400_001), -np.geomspace(1e-300, 1.0, 2001),
                        [-0.0, -745.13321910194110842, -745.2, -708.39641853226408, -1e-17, -0.5 * math.log(2.0),
                         -1.5 * math.log(2.0), -760.0, -1e300, -np.inf]])
    out = np.empty_like(x)
    many(x, out)
    want = np.array([math.exp(v) for v in x])
    assert _ulps(out, want).max() <= 2.0
    nan = np.array([np.nan])
    many(nan, out[:1])
    assert np.isnan(out[0])


def test_logistic_matches_the_model_cdf():
    from statespace.model.numeric import LOGISTIC, cdf

    @L.njit(error_model="numpy", fastmath=L.FLAGS)
    def many(z, out):
        for i in range(z.shape[0]):
            out[i] = L.logistic(z[i])

    z = np.concatenate([np.linspace(-800.0, 800.0, 200_001), [0.0, -0.0, np.inf, -np.inf]])
    out = np.empty_like(z)
    many(z, out)
    want = np.array([cdf(LOGISTIC, v) for v in z])
    assert _ulps(out, want).max() <= 4.0
    many(np.array([np.nan]), out[:1])
    assert np.isnan(out[0])


def test_split_exponent_is_exact():
    @L.njit
    def split(v):
        return L.split_exponent(v)

    for v in [1.0, 1.5, 2.0, 1e-200, 3.7e-240, 0.999999, 2.2250738585072014e-308, 1e300]:
        m, e = split(v)
        assert 1.0 <= m < 2.0 and m * 2.0**e == v


def test_lane_width_shares_blocks_evenly():
    assert L.lane_width(1000, 2) == 504  # one block a thread, 500 rounded up to whole vectors
    assert L.lane_width(1, 2) == 8
    assert L.lane_width(5000, 2) == 504  # 2500 a thread: 5 blocks of 500 each
    for n, threads in [(1000, 2), (70, 2), (7, 4), (513, 3), (5000, 2)]:
        w = L.lane_width(n, threads)
        assert w % 8 == 0 and 8 <= w <= L.MAX_WIDTH
        blocks = -(-n // w)
        assert blocks >= min(threads, -(-n // 8))
