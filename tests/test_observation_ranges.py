"""The observations' accepted ranges: settings refused outside them (naming the observation, the
setting, the range and the value), records refused outside their input ranges (a ``GamesError``
naming the row and the column, or dropped on request), and the numerics that used to hang, divide by
zero or give NaN at the edges, against independent references (scipy, mpmath).

The properties over the whole accepted ranges are in ``tests/test_observation_properties.py``.
"""

from __future__ import annotations

import math
import warnings

import mpmath
import numpy as np
import pytest
from scipy import integrate, stats

import statespace as ss
from filters import EKF
from smoothers import LaplaceSmoother
from statespace import Davidson, Goals, Margin, Outcome, SkillModel, Threshold
from statespace.model import counts as _counts, numeric as nx
from statespace.model import goals as G
from statespace.model import margin as M
from statespace.model import ranges as R


def table(score_a, score_b):
    """Games between A, B and C in turn, one a day, with these scores."""
    n = len(score_a)
    a, b = (["A", "B", "C"] * n)[:n], (["B", "C", "A"] * n)[:n]
    return ss.Games.from_arrays(np.arange(n, dtype=float), a, b, score_a=np.asarray(score_a, float),
                                score_b=np.asarray(score_b, float))


# ---------------------------------------------------------------- settings
@pytest.mark.parametrize("make, name", [
    (lambda: Goals(base=1e3), "base"), (lambda: Goals(base=math.log(0.049)), "base"),
    (lambda: Goals(base=math.log(1001.0)), "base"), (lambda: Goals(0.3, dispersion=1e300), "dispersion"),
    (lambda: Goals(0.3, dispersion=2.01), "dispersion"), (lambda: Goals(0.3, dispersion=-1e-300), "dispersion"),
    (lambda: Goals(np.nan), "base"), (lambda: Goals("0.3"), "base"),
    (lambda: Margin(sd=0.0), "sd"), (lambda: Margin(sd=np.inf), "sd"), (lambda: Margin(1.0, draw_width=-0.5), "draw_width"),
    (lambda: Davidson(1.01e4), "nu"), (lambda: Davidson(-1.0), "nu"), (lambda: Threshold(-1e-300), "margin"),
])
def test_a_setting_outside_its_range_is_refused_at_construction(make, name):
    with pytest.raises(ValueError, match=name) as info:
        make()
    assert "must be" in str(info.value)


@pytest.mark.parametrize("obs, scale, name", [
    (Margin(sd=1e-300), 1.0, "sd"), (Margin(sd=1e300), 1.0, "sd"), (Margin(sd=0.99e-3), 1.0, "sd"),
    (Margin(sd=1.01e3), 1.0, "sd"), (Margin(sd=2.0, draw_width=1.01e5), 100.0, "draw_width"),
    (Outcome("probit", ("threshold", 1.01e3)), 1.0, "draw margin"), (Goals(0.3), 0.0, "scale"),
    (Goals(0.3), 1e101, "scale"), (Margin(sd=1.0), 1e-101, "scale"),
])
def test_a_setting_outside_its_range_in_units_of_the_scale_is_refused(obs, scale, name):
    """Margin's sd and draw width and Outcome's threshold margin are lengths in skill units: their
    range is in units of the model's scale, checked by ``check_scale`` (and by ``vector``, so no
    kernel ever gets them); ``Margin(sd=1e-300)`` divided by zero, ``Margin(sd=1e300)`` gave every
    rating 0."""
    with pytest.raises(ValueError, match=name):
        obs.check_scale(scale)
    with pytest.raises(ValueError, match=name):
        obs.vector(scale)


def test_the_ends_of_the_ranges_are_accepted():
    for obs, scale in [(Goals(G.BASE_MIN, G.DISPERSION_MAX), 1e-100), (Goals(G.BASE_MAX), 1e100),
                       (Margin(sd=1e-3 * 7.0, draw_width=R.SD_SCALES * 7.0), 7.0), (Margin(sd=R.SD_SCALES * 7.0), 7.0),
                       (Outcome("logistic", ("threshold", R.SD_SCALES * 0.5)), 0.5),
                       (Outcome("probit", ("davidson", 1e4)), 1.0)]:
        assert obs.check_scale(scale) == scale
        assert np.all(np.isfinite(obs.vector(scale)))


@pytest.mark.parametrize("obs", [Margin(sd=1e-300), Margin(sd=1e300)])
def test_an_ekf_run_with_a_margin_sd_outside_its_range_is_a_clear_error(obs):
    games = table([3, 1, 0], [0, 1, 2])
    with pytest.raises(ValueError, match="Margin: sd must be a finite number in"):
        EKF(SkillModel(scale=1.0, observation=obs)).run(games)


# ---------------------------------------------------------------- records
def test_a_goal_count_outside_the_range_is_refused_naming_row_and_column():
    """A count of 1e6 made the EKF's top rating 2.1e5 and every forecast NaN; 1.5 goals were fitted
    as a count."""
    goals = Goals(base=0.3)
    for bad, column in [(1e6, "score_a"), (1.5, "score_a"), (1e300, "score_a"), (10_001.0, "score_a")]:
        games = table([1, 2, 0, 3, 1, bad], [0, 1, 2, 1, 1, 0])
        with pytest.raises(ss.GamesError, match=r"column 'score_a'.*row 5") as info:
            goals.check_games(games, scale=1.0)
        assert info.value.rows == [5] and info.value.column == column and "10000" in str(info.value)
    games = table([1, 2, 0], [0, 1, G.GOALS_MAX])
    assert goals.check_games(games, scale=1.0) is games


def test_a_margin_beyond_its_range_is_refused_naming_row_and_column():
    for scale in (1.0, 1e-3):
        margin = Margin(sd=2.0 * scale)
        top = M.MARGIN_SCALES * scale
        games = table([3, top * 1.01, 0], [0, 0, 2])
        with pytest.raises(ss.GamesError, match=r"margin .*row 1") as info:
            margin.check_games(games, scale=scale)
        assert info.value.rows == [1]
        ok = table([3, top, 0], [0, 0, 2])
        assert margin.check_games(ok, scale=scale) is ok


def test_errors_drop_drops_the_rows_and_counts_them_in_the_warning():
    games = table([1, 2, 1.5, 3, 1e6], [0, 1, 2, 1, 0])
    with pytest.warns(ss.DroppedRowsWarning, match=r"dropped 2 rows of 5.*row 2.*row 4"):
        kept = Goals(0.3).check_games(games, scale=1.0, errors="drop")
    assert kept.row.tolist() == [0, 1, 3]
    assert sorted(kept.dropped["row"].tolist()) == [2, 4]
    with pytest.raises(ss.GamesError, match="no games left"):
        Goals(0.3).check_games(table([1.5], [0]), scale=1.0, errors="drop")


def test_a_table_without_scores_is_refused_for_an_observation_of_scores():
    games = ss.Games.from_arrays([0.0, 1.0], ["A", "B"], ["B", "C"], [1.0, 0.0])
    for obs in (Goals(0.3), Margin(2.0)):
        with pytest.raises(ss.GamesError, match="score_a"):
            obs.check_games(games, owner="ekf")
    assert Outcome().check_games(games) is games


@pytest.mark.parametrize("draw", ["none", ("threshold", 0.0), ("davidson", 0.0)])
def test_a_draw_the_draw_model_gives_no_chance_is_refused(draw):
    """Davidson's nu = 0 made the Laplace smoother divide by zero on a draw; a threshold margin of 0
    gave PyMC's log density -inf."""
    games = ss.Games.from_arrays([0.0, 1.0, 2.0], ["A", "B", "C"], ["B", "C", "A"], [1.0, 0.5, 0.0])
    obs = Outcome("logistic", draw)
    with pytest.raises(ss.GamesError, match=r"draw.*row 1") as info:
        obs.check_games(games)
    assert info.value.rows == [1] and info.value.column == "score"
    with pytest.raises(ss.GamesError, match="draw"):
        LaplaceSmoother(SkillModel(observation=obs)).fit(games)


def test_the_laplace_smoother_refuses_a_count_out_of_range():
    """``score_a = 1e300`` ended in a bare ``RuntimeError: Factor is exactly singular``."""
    games = table([1, 2, 0, 3, 1, 1e300], [0, 1, 2, 1, 1, 0])
    with pytest.raises(ss.GamesError, match="score_a"):
        LaplaceSmoother(SkillModel(scale=1.0, drift=0.001, observation=Goals(base=0.3))).fit(games)
    games = table([3, 1e6, 0], [0, 0, 2])
    with pytest.raises(ss.GamesError, match="margin"):
        LaplaceSmoother(SkillModel(scale=1.0, drift=0.001, observation=Margin(sd=2.0))).fit(games)


# ---------------------------------------------------------------- the numerics at the edges
def test_count_outcome_with_an_infinite_rate_is_its_limit():
    assert _counts.count_outcome(math.inf, 1.0, 0.0) == (1.0, 0.0, 0.0)
    assert _counts.count_outcome(2.0, math.inf, 0.5) == (0.0, 0.0, 1.0)
    assert all(math.isnan(p) for p in _counts.count_outcome(math.nan, 1.0, 0.0))


def test_count_outcome_sums_are_bounded_at_any_dispersion():
    """At dispersion 1e300 the tail bound's ratio rounds to 1, and the sum never ended (a run on
    ten games did not finish in eight minutes): it stops after at most ``TERMS_MAX`` terms. Two
    counts that are almost surely 0 draw."""
    p = _counts.count_outcome(1.35, 1.35, 1e300)
    assert sum(p) == pytest.approx(1.0) and p[1] == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("hi, lo, kappa", [(math.exp(50.0), 1e-3, 0.0), (math.exp(50.0), 1e-3, 0.7),
                                           (3e4, 30.0, 2.0), (1000.0, 1000.0, 2.0), (5.0, 5.0, 1e-9)])
def test_count_outcome_against_scipy(hi, lo, kappa):
    """Summed over the smaller count only: against scipy's pmf and survival function of each count."""
    def dist(rate):
        return stats.poisson(rate) if kappa == 0 else stats.nbinom(1 / kappa, 1 / (1 + kappa * rate))
    x, y = dist(hi), dist(lo)
    top = y.isf(1e-20)
    k = np.arange((int(top) if np.isfinite(top) else 20) + 2)
    want = [np.sum(y.pmf(k) * x.sf(k)), np.sum(y.pmf(k) * x.pmf(k)), np.sum(y.pmf(k) * x.cdf(k - 1))]
    np.testing.assert_allclose(_counts.count_outcome(hi, lo, kappa), want, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(_counts.count_outcome(lo, hi, kappa), want[::-1], rtol=1e-9, atol=1e-15)


def goals_reference(base, kappa, scale, d, var):
    """``Goals.proba(d, var)`` by scipy's quadrature over ``d`` of scipy's count distributions, the
    half log-ratio ``u`` kept within 100 (beyond, the weaker side's chance is below e^-46)."""
    def outcome(x, j):
        u = min(max(x / (2 * scale), -100.0), 100.0)
        ra, rb = math.exp(base + u), math.exp(base - u)
        hi, lo, flip = (rb, ra, True) if ra < rb else (ra, rb, False)
        dist = ((lambda r: stats.poisson(r)) if kappa == 0 else (lambda r: stats.nbinom(1 / kappa, 1 / (1 + kappa * r))))
        X, Y = dist(hi), dist(lo)
        q = Y.isf(1e-19)
        k = np.arange((int(q) if np.isfinite(q) else 50) + 2)
        p = [np.sum(Y.pmf(k) * X.sf(k)), np.sum(Y.pmf(k) * X.pmf(k)), np.sum(Y.pmf(k) * X.cdf(k - 1))]
        return (p[::-1] if flip else p)[j]
    s = math.sqrt(var)
    points = sorted(p * scale for p in (-60, -20, -5, -1, 0.0, 1, 5, 20, 60) if abs(p * scale - d) < 12 * s)
    return [integrate.quad(lambda x: stats.norm.pdf(x, d, s) * outcome(x, j), d - 12 * s, d + 12 * s, points=points,
                           limit=2000, epsabs=1e-14, epsrel=1e-12)[0] for j in range(3)]


@pytest.mark.parametrize("base, kappa, scale, d, var", [
    (0.3, 0.0, 1.0, 40.0, 2500.0), (math.log(0.05), 0.0, 1.0, -10.0, 1e4), (0.3, 2.0, 1.0, 0.0, 900.0),
])
def test_goals_forecast_with_a_wide_skill_uncertainty_against_quadrature(base, kappa, scale, d, var):
    """A skill difference whose sd reaches past the clip (``8 sd > 200`` scales): the middle by the
    trapezoid rule, the tails in closed form. Before, the rule's node count grew with the sd."""
    got = Goals(base, dispersion=kappa).proba(d, var, scale=scale)
    np.testing.assert_allclose(got, goals_reference(base, kappa, scale, d, var), atol=1e-12)


@pytest.mark.parametrize("var", [1e8, 1e300, math.inf])
def test_goals_forecast_at_any_variance_is_a_probability_vector(var):
    """At var 1e300 the trapezoid rule wanted about 1e151 nodes; half the mass lies on each side."""
    for obs in (Goals(0.3), Goals(G.BASE_MAX, dispersion=2.0)):
        p = obs.proba([0.0, 1e3, -1e300], var)
        assert np.all(np.isfinite(p)) and np.all(p >= 0)
        np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-12)
    p = Goals(0.3).proba(0.0, var)
    assert p[0] == pytest.approx(0.5 * (1.0 - p[1]), rel=1e-9)


def test_goals_beyond_the_clip_are_scored_as_at_the_clip():
    """A skill difference beyond 200 scales: the rates e^(base +- u) overflowed (NaN forecasts and
    derivatives); now as at u = 100, the gradient still pointing back towards the data."""
    obs = Goals(0.3, dispersion=0.5)
    far = obs.loglik(np.nan, [1e4, 1e300], 1.0, 2.0)
    at = obs.loglik(np.nan, 2.0 * G.U_MAX, 1.0, 2.0)
    for got, want in zip(far, at):
        np.testing.assert_array_equal(got, [want, want])
    assert np.all(np.isfinite(far)) and np.all(far[1] < 0)
    np.testing.assert_array_equal(obs.proba([1e4, -1e300]), obs.proba([2.0 * G.U_MAX, -2.0 * G.U_MAX]))
    np.testing.assert_allclose(obs.proba([1e4, -1e300]), [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], atol=1e-40)


@pytest.mark.parametrize("m", [1e-300, 1e-20, 9.9e-6])
@pytest.mark.parametrize("z", [0.0, -2.0, 40.0])
def test_a_probit_draw_at_a_tiny_margin_against_mpmath(m, z):
    """The difference of two normal cdfs lost every digit below a margin of 1e-17 scales (PyMC's graph
    gave -inf, the kernel a value that ignored the margin); now its expansion in the margin. The
    reference: ``D = int_{-m-z}^{m-z} N(x) dx = m N(z) int_{-1}^{1} e^(-z m s - m^2 s^2 / 2) ds`` by
    mpmath's quadrature, and ``dD/dz = N(-m - z) - N(m - z) = -2 N(z) e^(-m^2 / 2) sinh(m z)``."""
    mpmath.mp.dps = 30
    mm, zz = mpmath.mpf(m), mpmath.mpf(z)
    D = mm * mpmath.npdf(zz) * mpmath.quad(lambda s: mpmath.exp(-zz * mm * s - mm**2 * s**2 / 2), [-1, 1])
    want = float(mpmath.log(D))
    grad = float(-2 * mpmath.npdf(zz) * mpmath.exp(-mm**2 / 2) * mpmath.sinh(mm * zz) / D)
    l, g, _ = nx.loglik_grad(nx.PROBIT, nx.DRAW_THRESHOLD, m, 0.5, z, 1.0)
    assert l == pytest.approx(want, abs=1e-10)
    assert g == pytest.approx(grad, rel=1e-9, abs=1e-12)
    import pytensor
    import pytensor.tensor as pt

    graph = Outcome("probit", ("threshold", m)).symbolic_loglik(pt.as_tensor(np.array([z])), np.array([0.5]))
    assert float(pytensor.function([], graph, mode="FAST_COMPILE")()[0]) == pytest.approx(want, abs=1e-10)


def test_a_davidson_draw_at_nu_zero_is_no_zero_division():
    l, g, g_nu = nx.loglik_grad(nx.LOGISTIC, nx.DRAW_DAVIDSON, 0.0, 0.5, 0.3, 1.0)
    assert l == -math.inf and math.isfinite(g) and g_nu == math.inf


def test_an_ekf_run_at_the_top_dispersion_and_base_finishes():
    """``Goals(base=0.3, dispersion=1e300)`` on ten games ran for more than eight minutes: refused
    now, and the top of the range runs (each forecast sums at most about 1e5 terms)."""
    games = table([0, 3, 900, 1], [1, 0, 1000, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = EKF(SkillModel(scale=1.0, observation=Goals(base=G.BASE_MAX, dispersion=G.DISPERSION_MAX))).run(games)
    assert np.all(np.isfinite(run.proba)) and np.allclose(run.proba.sum(axis=1), 1.0)


@pytest.mark.parametrize("points, base", [(0, G.BASE_MIN), (110, math.log(110.0)), (5000, G.BASE_MAX)])
def test_auto_starts_and_tunes_goals_within_their_range(points, base):
    """``auto``'s goals candidate starts at the log of the mean count, and tunes ``base`` within 3 of
    it: both kept within Goals' range (a basketball-like mean of 110 points reached log 110 + 3 = 7.7,
    all-zero counts log 1e-3)."""
    from statespace.ensemble.auto_candidate import start_candidate
    from statespace.ensemble.auto_variant import Variant

    games = table([points] * 6, [points] * 6)
    candidate = start_candidate(Variant("goals", home="none"), games, {"draws": True})
    assert candidate.skill_model.observation.base == pytest.approx(base)
    lo, hi = candidate.tunable(games)["base"]
    assert G.BASE_MIN <= lo < hi <= G.BASE_MAX
    assert lo == pytest.approx(max(base - 3.0, G.BASE_MIN)) and hi == pytest.approx(min(base + 3.0, G.BASE_MAX))
