"""Score forecasts: the predictive distribution of the skill difference
(``predict_diff``, ``FilterRun.diff_moments``), the score metrics, their columns in ``compare``,
and the refusal of Margin/Goals by every method that cannot honour them.

References are computed here, independently of the package: Kalman filters written out in NumPy
from the textbook equations (predict ``P_ii += q dt``; update with ``H = e_a - e_b``,
``S = H P H^T + sd^2``, ``K = P H^T / S``; the diagonal filter as a product of each game's
Gaussian site with the pre-period marginals), ``scipy.stats.norm.logpdf`` for the Gaussian
margin's density, and ``scipy.integrate.quad`` over the skill difference for Goals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.stats import norm, poisson

import statespace as ss
from filters import EKF, Elo
from smoothers import LaplaceSmoother, RTSSmoother
from statespace.model import metrics
from statespace.methods import registry

SD, DRIFT, PRIOR_VAR, HOME = 2.5, 0.3, 4.0, 0.7


# ---------------------------------------------------------------- hand-written references
def joint_kalman(t, a, b, y, at_home, n):
    """The exact Kalman filter over all ``n`` competitors (games in time order; games at one time
    form a rating period: all forecast from the pre-period state, then applied one after another
    with no time passing, which for a linear-Gaussian model is the period's batch update).
    Returns the one-step-ahead (mean, var) of each game's difference and the final (m, P, last)."""
    m, P, last = np.zeros(n), np.eye(n) * PRIOR_VAR, np.full(n, np.nan)
    mean, var = np.empty(len(y)), np.empty(len(y))
    for time in np.unique(t):
        games = np.flatnonzero(t == time)
        for i in np.unique(np.r_[a[games], b[games]]):
            if not np.isnan(last[i]):
                P[i, i] += DRIFT * (time - last[i])
            last[i] = time
        for g in games:
            H = np.zeros(n)
            H[a[g]], H[b[g]] = 1.0, -1.0
            mean[g], var[g] = H @ m + HOME * at_home[g], H @ P @ H
        for g in games:
            H = np.zeros(n)
            H[a[g]], H[b[g]] = 1.0, -1.0
            S = H @ P @ H + SD**2
            K = P @ H / S
            m = m + K * (y[g] - H @ m - HOME * at_home[g])
            P = P - np.outer(K, H @ P)
    return mean, var, m, P, last


def diagonal_kalman(t, a, b, y, at_home, n):
    """The diagonal filter: each competitor's marginal N(m_i, v_i); a game's site is the
    two-competitor Kalman update of the pre-period marginals with the cross-covariance dropped,
    divided by the prior; a period multiplies its sites in natural parameters (precision 1/v,
    precision-weighted mean m/v). Returns the one-step-ahead (mean, var) of each difference and
    the final (m, v, last)."""
    m, v, last = np.zeros(n), np.full(n, PRIOR_VAR), np.full(n, np.nan)
    mean, var = np.empty(len(y)), np.empty(len(y))
    for time in np.unique(t):
        games = np.flatnonzero(t == time)
        for i in np.unique(np.r_[a[games], b[games]]):
            if not np.isnan(last[i]):
                v[i] += DRIFT * (time - last[i])
            last[i] = time
        precision, natural = np.zeros(n), np.zeros(n)
        for g in games:
            d = m[a[g]] - m[b[g]] + HOME * at_home[g]
            mean[g], var[g] = d, v[a[g]] + v[b[g]]
            S = var[g] + SD**2
            for i, sign in ((a[g], 1.0), (b[g], -1.0)):
                post_m = m[i] + sign * v[i] / S * (y[g] - d)
                post_v = v[i] - v[i] ** 2 / S
                precision[i] += 1.0 / post_v - 1.0 / v[i]
                natural[i] += post_m / post_v - m[i] / v[i]
        for i in np.unique(np.r_[a[games], b[games]]):
            total = 1.0 / v[i] + precision[i]
            m[i] = (m[i] / v[i] + natural[i]) / total
            v[i] = 1.0 / total
    return mean, var, m, v, last


def margin_model(**changes):
    return ss.SkillModel(scale=1.0, prior_var=PRIOR_VAR, drift=DRIFT, home=HOME,
                         observation=ss.Margin(SD, 0.5), **changes)


def stream(n_players=4, n_games=14, seed=0, same_time=False):
    """Random games with integer scores; times 0, 1, 2, ... (``same_time``: pairs of games share a
    time: rating periods with a competitor in two games of one period)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_games)
    b = (a + 1 + rng.integers(0, n_players - 1, n_games)) % n_players
    t = (np.arange(n_games) // (2 if same_time else 1)).astype(float)
    sa = rng.integers(0, 6, n_games).astype(float)
    sb = rng.integers(0, 6, n_games).astype(float)
    neutral = rng.random(n_games) < 0.5
    return t, a, b, sa, sb, neutral


def as_games(t, a, b, sa, sb, neutral, names=None, periods=False):
    names = np.array([f"P{i}" for i in range(max(a.max(), b.max()) + 1)]) if names is None else names
    return ss.Games.from_arrays(t, names[a], names[b], score_a=sa, score_b=sb, neutral=neutral,
                                period=t.astype(int) if periods else None)


def ids_in(games, names, idx):
    """Competitor ids of ``games`` for the hand filters' indices ``idx`` (``names[idx]``)."""
    return np.array([games.player_id(names[i]) for i in idx])


# ---------------------------------------------------------------- one-step-ahead moments
@pytest.mark.parametrize("same_time", [False, True])
def test_diagonal_ekf_one_step_moments_are_the_hand_kalman_filter(same_time):
    t, a, b, sa, sb, neutral = stream(same_time=same_time)
    games = as_games(t, a, b, sa, sb, neutral, periods=same_time)
    mean, var, *_ = diagonal_kalman(t, a, b, sa - sb, (~neutral).astype(float), 4)
    run = EKF(margin_model()).run(games)
    got_mean, got_var = run.diff_moments
    np.testing.assert_allclose(got_mean, mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_var, var, rtol=1e-12, atol=1e-12)
    # they are what the forecasts were made from
    np.testing.assert_allclose(run.proba, margin_model().proba(got_mean, got_var), rtol=0, atol=1e-15)


@pytest.mark.parametrize("same_time", [False, True])
def test_full_ekf_one_step_moments_include_the_cross_covariance(same_time):
    t, a, b, sa, sb, neutral = stream(same_time=same_time, seed=1)
    games = as_games(t, a, b, sa, sb, neutral, periods=same_time)
    mean, var, *_ = joint_kalman(t, a, b, sa - sb, (~neutral).astype(float), 4)
    got_mean, got_var = EKF(margin_model(), covariance="full").run(games).diff_moments
    np.testing.assert_allclose(got_mean, mean, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_var, var, rtol=1e-10, atol=1e-12)
    # the diagonal filter's variances differ: the cross-covariance matters here
    diag_var = EKF(margin_model()).run(games).diff_moments[1]
    assert np.max(np.abs(diag_var - var)) > 1e-3


def test_one_step_moments_follow_the_input_row_order():
    t, a, b, sa, sb, neutral = stream(seed=2)
    games = as_games(t, a, b, sa, sb, neutral)
    shuffled = games.take(np.random.default_rng(0).permutation(len(games)))
    mean, var = EKF(margin_model()).run(games).diff_moments
    m2, v2 = EKF(margin_model()).run(shuffled).diff_moments
    np.testing.assert_array_equal(m2, mean[shuffled.row])
    np.testing.assert_array_equal(v2, var[shuffled.row])


# ---------------------------------------------------------------- frozen: the exact predictive density
@pytest.mark.parametrize("method", [
    EKF(margin_model(), covariance="full"),
    RTSSmoother(margin_model(), covariance="full"),
    LaplaceSmoother(margin_model()),
], ids=["ekf_full", "rts_full", "laplace"])
def test_margin_frozen_density_is_the_exact_kalman_predictive(method):
    t, a, b, sa, sb, neutral = stream(n_players=3, n_games=8, seed=3)
    names = np.array(["P0", "P1", "P2", "P3"])
    train = as_games(t, a, b, sa, sb, neutral, names=names)
    _, _, m, P, last = joint_kalman(t, a, b, sa - sb, (~neutral).astype(float), 3)
    # later games, one with the newcomer P3 (prior N(0, PRIOR_VAR), independent of everyone)
    ta = np.array([9.0, 10.0, 12.0, 12.0])
    ia, ib = np.array([0, 2, 1, 3]), np.array([1, 0, 2, 0])
    ya, yb = np.array([3.0, 1.0, 0.0, 2.0]), np.array([1.0, 1.0, 4.0, 2.0])
    home = np.array([1.0, 0.0, 1.0, 1.0])
    mp = np.r_[m, 0.0]
    Pp = np.zeros((4, 4))
    Pp[:3, :3], Pp[3, 3] = P, PRIOR_VAR
    gap = lambda i, time: 0.0 if i == 3 else time - last[i]  # noqa: E731
    ref_mean = mp[ia] - mp[ib] + HOME * home
    ref_var = np.array([Pp[i, i] + DRIFT * gap(i, s) + Pp[j, j] + DRIFT * gap(j, s) - 2.0 * Pp[i, j]
                        for i, j, s in zip(ia, ib, ta)])
    ref = norm.logpdf(ya - yb, ref_mean, np.sqrt(SD**2 + ref_var))

    test = ss.Games.from_arrays(np.r_[t, ta], names[np.r_[a, ia]], names[np.r_[b, ib]],
                                score_a=np.r_[sa, ya], score_b=np.r_[sb, yb],
                                neutral=np.r_[neutral, home == 0.0]).take(np.arange(len(t), len(t) + 4))
    fitted = method.fit(train)
    mean, var = fitted.predict_diff(test)
    tol = 1e-10 if isinstance(method, EKF) else 1e-7  # the smoothers stop Newton at a tolerance
    np.testing.assert_allclose(mean, ref_mean, rtol=tol, atol=tol)
    np.testing.assert_allclose(var, ref_var, rtol=tol, atol=tol)
    obs = method.model.observation
    dens = metrics.score_log_density(obs, test, mean, var, per_game=True)
    np.testing.assert_allclose(dens, ref, rtol=tol, atol=tol)
    assert metrics.score_log_density(obs, test, mean, var) == pytest.approx(ref.mean(), rel=tol)
    assert metrics.margin_rmse(obs, test, mean, var) == pytest.approx(
        math.sqrt(np.mean((ya - yb - ref_mean) ** 2)), rel=tol)
    # the forecasts of predict_proba are the observation's at these moments
    np.testing.assert_allclose(fitted.predict_proba(test), obs.proba(mean, var), rtol=0, atol=1e-15)


def test_diagonal_ekf_frozen_moments_move_each_competitor_forward():
    t, a, b, sa, sb, neutral = stream(n_players=3, n_games=8, seed=4)
    names = np.array(["P0", "P1", "P2"])
    train = as_games(t, a, b, sa, sb, neutral, names=names)
    _, _, m, v, last = diagonal_kalman(t, a, b, sa - sb, (~neutral).astype(float), 3)
    test = ss.Games.from_arrays([10.0, 15.0], names[[0, 2]], names[[1, 1]], score_a=[1.0, 2.0],
                                score_b=[0.0, 2.0], neutral=[False, True])
    mean, var = EKF(margin_model()).fit(train).predict_diff(test)
    np.testing.assert_allclose(mean, [m[0] - m[1] + HOME, m[2] - m[1]], rtol=1e-12)
    np.testing.assert_allclose(var, [v[0] + v[1] + DRIFT * (20.0 - last[0] - last[1]),
                                     v[2] + v[1] + DRIFT * (30.0 - last[2] - last[1])], rtol=1e-12)


def test_smoother_with_draws_gives_the_mixture_moments():
    t, a, b, sa, sb, neutral = stream(n_players=3, n_games=8, seed=5)
    train = as_games(t, a, b, sa, sb, neutral)
    fit = LaplaceSmoother(margin_model()).fit(train)
    rng = np.random.default_rng(0)
    fit.draws = fit.mean + np.sqrt(fit.var) * rng.standard_normal((50, fit.mean.size))
    test = ss.Games.from_arrays([20.0], ["P0"], ["P2"], score_a=[1.0], score_b=[0.0], neutral=[False])
    mean, var = fit.predict_diff(test)
    # by hand: each draw's difference at its last node, plus the drift since (the same for every draw)
    tl = fit.timeline
    na, nb = (np.flatnonzero(tl.node_player == list(tl.players).index(p)).max() for p in ("P0", "P2"))
    gap = 20.0 - fit.timeline.node_time[na] + 20.0 - fit.timeline.node_time[nb]
    d = fit.draws[:, na] - fit.draws[:, nb] + HOME
    assert mean[0] == pytest.approx(d.mean(), rel=1e-12)
    assert var[0] == pytest.approx(DRIFT * gap + d.var(), rel=1e-12)


def test_filters_without_a_gaussian_forecast_refuse_the_moments():
    t, a, b, sa, sb, neutral = stream()
    games = as_games(t, a, b, sa, sb, neutral)
    for method in (Elo(), registry.get("glicko")(), registry.get("trueskill")()):
        run = method.run(games)
        with pytest.raises(NotImplementedError, match=method.name):
            run.diff_moments
        with pytest.raises(NotImplementedError, match=method.name):
            run.predict_diff(games)


# ---------------------------------------------------------------- Goals against quadrature
GOALS_CASES = [(math.log(1.35), 1.0, 0.4, 0.3), (0.1, 2.0, -1.5, 2.0), (math.log(3.0), 0.5, 0.0, 0.05),
               (-0.5, 1.0, 2.0, 1.0)]


@pytest.mark.parametrize("base, scale, d, var", GOALS_CASES)
def test_goals_mean_margin_against_quadrature(base, scale, d, var):
    c = 0.5 / scale
    sd = math.sqrt(var)
    ref = integrate.quad(lambda x: (math.exp(base + c * x) - math.exp(base - c * x)) * norm.pdf(x, d, sd),
                         d - 12 * sd, d + 12 * sd, epsabs=1e-14, epsrel=1e-12)[0]
    got = ss.Goals(base).mean_margin(d, var, scale=scale)
    assert float(got) == pytest.approx(ref, rel=1e-9, abs=1e-12)
    # at var = 0: the difference of the two rates
    assert float(ss.Goals(base).mean_margin(d, 0.0, scale=scale)) == pytest.approx(
        math.exp(base + c * d) - math.exp(base - c * d), rel=1e-13, abs=1e-15)


@pytest.mark.parametrize("base, scale, d, var", GOALS_CASES)
def test_goals_score_log_density_against_quadrature(base, scale, d, var):
    c = 0.5 / scale
    sd = math.sqrt(var)
    scores = [(0, 0), (2, 1), (1, 3), (5, 0)]

    def ref(xa, xb):
        f = lambda x: (poisson.pmf(xa, math.exp(base + c * x)) * poisson.pmf(xb, math.exp(base - c * x))  # noqa: E731
                       * norm.pdf(x, d, sd))
        return math.log(integrate.quad(f, d - 12 * sd, d + 12 * sd, epsabs=0, epsrel=1e-12, limit=200)[0])

    sa = np.array([s[0] for s in scores], dtype=float)
    sb = np.array([s[1] for s in scores], dtype=float)
    got = metrics.score_log_density(ss.Goals(base), (sa, sb), np.full(4, d), var, scale=scale, per_game=True)
    np.testing.assert_allclose(got, [ref(*s) for s in scores], rtol=0, atol=1e-8)


def test_margin_mean_margin_is_the_difference_and_outcome_forecasts_no_score():
    np.testing.assert_array_equal(ss.Margin(3.0).mean_margin([1.5, -2.0], [0.0, 9.0]), [1.5, -2.0])
    with pytest.raises(ValueError, match="win/draw/loss only"):
        ss.Outcome().mean_margin(0.0)
    with pytest.raises(ValueError, match="win/draw/loss only"):
        metrics.score_log_density(ss.Outcome(), ([1.0], [0.0]), [0.0], [1.0])
    with pytest.raises(ValueError, match="win/draw/loss only"):
        metrics.margin_rmse(ss.Outcome("probit"), ([1.0], [0.0]), [0.0], [1.0])


def test_score_metrics_name_the_bad_column():
    obs = ss.Margin(2.0)
    no_scores = ss.Games.from_arrays([0.0, 1.0], ["a", "b"], ["b", "a"], [1.0, 0.0])
    with pytest.raises(ValueError, match="'score_a' and 'score_b'"):
        metrics.score_log_density(obs, no_scores, [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="'score_a'.*rows \\[1\\]"):
        metrics.margin_rmse(obs, ([1.0, np.nan], [0.0, 0.0]), [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="'score_b'"):
        metrics.score_log_density(obs, ([1.0, 2.0], [0.0, np.inf]), [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="'mean'"):
        metrics.score_log_density(obs, ([1.0, 2.0], [0.0, 0.0]), [0.0, np.nan], [1.0, 1.0])
    with pytest.raises(ValueError, match="'var'"):
        metrics.margin_rmse(obs, ([1.0, 2.0], [0.0, 0.0]), [0.0, 0.0], [1.0, -1.0])
    with pytest.raises(ValueError, match="'mean'.*one value per game"):
        metrics.margin_rmse(obs, ([1.0, 2.0], [0.0, 0.0]), [0.0], [1.0, 1.0])
    with pytest.raises(TypeError, match="observation"):
        metrics.margin_rmse("margin", ([1.0], [0.0]), [0.0], [1.0])


def test_margin_rmse_per_game_is_the_squared_error():
    obs = ss.Goals(0.2)
    sa, sb = np.array([2.0, 0.0, 1.0]), np.array([1.0, 3.0, 1.0])
    mean, var = np.array([0.3, -0.4, 0.0]), np.array([0.1, 0.5, 0.2])
    expected = np.exp(0.2 + var / 8.0) * (np.exp(mean / 2.0) - np.exp(-mean / 2.0))  # scale 1: c = 1/2
    sq = metrics.margin_rmse(obs, (sa, sb), mean, var, per_game=True)
    np.testing.assert_allclose(sq, (sa - sb - expected) ** 2, rtol=1e-12)
    assert metrics.margin_rmse(obs, (sa, sb), mean, var) == pytest.approx(math.sqrt(sq.mean()), rel=1e-15)


# ---------------------------------------------------------------- relabelling
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n_games=st.integers(2, 10), same_time=st.booleans(),
       perm=st.permutations(range(4)))
def test_relabelling_players_changes_nothing(seed, n_games, same_time, perm):
    t, a, b, sa, sb, neutral = stream(n_players=4, n_games=n_games, seed=seed, same_time=same_time)
    plain = np.array(["P0", "P1", "P2", "P3"])
    # new names sorting in another order, so that the competitors' ids change too
    renamed = np.array([f"z{k}" for k in perm])
    obs = margin_model().observation
    out = []
    for names in (plain, renamed):
        games = as_games(t, a, b, sa, sb, neutral, names=names, periods=same_time)
        run = EKF(margin_model()).run(games)
        mean, var = run.diff_moments
        later = ss.Games.from_arrays([t[-1] + 3.0], names[[0]], names[[3]], score_a=[2.0], score_b=[1.0],
                                     neutral=[False], period=[int(t[-1]) + 3] if same_time else None)
        out.append((mean, var, run.predict_diff(later),
                    metrics.score_log_density(obs, games, mean, var), metrics.margin_rmse(obs, games, mean, var)))
    (m0, v0, f0, s0, r0), (m1, v1, f1, s1, r1) = out
    np.testing.assert_allclose(m1, m0, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(v1, v0, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(np.concatenate(f1), np.concatenate(f0), rtol=1e-13, atol=1e-13)
    assert s1 == pytest.approx(s0, rel=1e-13) and r1 == pytest.approx(r0, rel=1e-13)


# ---------------------------------------------------------------- compare
@pytest.fixture(scope="module")
def scored_games():
    t, a, b, sa, sb, neutral = stream(n_players=6, n_games=90, seed=7)
    return as_games(t, a, b, sa, sb, neutral)


def goals_model():
    return ss.SkillModel(scale=1.0, prior_var=0.5, drift=0.02, home=0.2, observation=ss.Goals(math.log(1.5)))


def test_compare_has_no_score_columns_for_outcome_methods(scored_games):
    table = ss.compare({"elo": Elo(), "ekf": EKF()}, scored_games)
    assert "score_log_density" not in table.columns and "margin_rmse" not in table.columns
    assert "diff_moments" not in table.attrs


@pytest.mark.parametrize("mode", ["frozen", "online"])
def test_compare_scores_margin_and_goals_from_the_predictive_moments(scored_games, mode):
    methods = {"elo": Elo(), "margin": EKF(margin_model()), "goals": EKF(goals_model(), covariance="full")}
    table = ss.compare(methods, scored_games, mode=mode)
    cols = list(table.columns)
    assert cols.index("score_log_density") == cols.index("log_loss_3") + 1
    assert cols.index("margin_rmse") == cols.index("log_loss_3") + 2
    assert np.isnan(table.loc["elo", "score_log_density"]) and np.isnan(table.loc["elo", "margin_rmse"])
    test = table.attrs["test"]
    train, _ = scored_games.split(0.7)
    for name in ("margin", "goals"):
        method = methods[name]
        if mode == "frozen":
            mean, var = method.fit(train).predict_diff(test)
        else:
            mean, var = method.run(scored_games).diff_moments
            mean, var = mean[test.row], var[test.row]
        np.testing.assert_array_equal(table.attrs["diff_moments"][name][0], mean)
        obs, scale = method.model.observation, method.model.scale
        assert table.loc[name, "score_log_density"] == pytest.approx(
            metrics.score_log_density(obs, test, mean, var, scale=scale), rel=1e-14)
        assert table.loc[name, "margin_rmse"] == pytest.approx(
            metrics.margin_rmse(obs, test, mean, var, scale=scale), rel=1e-14)
        # the moments are the ones the scored forecasts were made from
        np.testing.assert_allclose(table.attrs["proba"][name], method.model.proba(mean, var), rtol=0, atol=1e-15)


def test_compare_walk_forward_scores_each_refit(scored_games):
    methods = {"laplace": LaplaceSmoother(margin_model()), "ekf": EKF(margin_model()), "elo": Elo()}
    table = ss.compare(methods, scored_games, mode="walk_forward", every=8)
    test = table.attrs["test"]
    assert np.isnan(table.loc["elo", "margin_rmse"])
    for name in ("laplace", "ekf"):
        mean, var = table.attrs["diff_moments"][name]
        # each block's moments are those its forecasts came from (the refit's predict_diff)
        np.testing.assert_allclose(table.attrs["proba"][name], margin_model().proba(mean, var), rtol=0, atol=1e-15)
        assert table.loc[name, "score_log_density"] == pytest.approx(
            metrics.score_log_density(ss.Margin(SD, 0.5), test, mean, var), rel=1e-14)
    # the smoother was refitted: its moments are not one frozen fit's
    frozen = LaplaceSmoother(margin_model()).fit(scored_games.split(0.7)[0]).predict_diff(test)[0]
    assert not np.allclose(table.attrs["diff_moments"]["laplace"][0], frozen)


# ---------------------------------------------------------------- refusal
# fast settings where a method has them (PyMC samples for minutes by default): a short chain with
# the model's own drift, prior and home advantage fixed, so that only the skills are sampled
FAST = {"pymc": dict(drift=0.05, prior_var=1.0, home=0.0, draws=100, tune=100, chains=1, seed=0, progressbar=False)}
def _refusal_cases():
    for name in registry.names():
        for obs in ("margin", "goals"):
            yield pytest.param(name, obs, id=f"{name}-{obs}")


@pytest.mark.filterwarnings("ignore:pymc. sampling diagnostics are off")  # the short chain of FAST
@pytest.mark.parametrize("name, obs_name", list(_refusal_cases()))
def test_every_method_honours_or_refuses_margin_and_goals(name, obs_name):
    """A method given a Margin/Goals model either refuses it by name (the method and the
    observation) or honours it: its forecasts change when the margins change and the results
    (win/draw/loss) do not, which a method that silently fitted the results alone could not do."""
    obs = ss.Margin(SD, 0.5) if obs_name == "margin" else ss.Goals(math.log(1.5))
    model = ss.SkillModel(scale=1.0, prior_var=1.0, drift=0.05, observation=obs)
    factory = registry.get(name)
    if not getattr(factory, "rates_games", True):  # rates contests only: refuses the games outright
        with pytest.raises(ValueError, match=rf"^{name} rates contests of many entrants"):
            factory().run(ss.Games.from_arrays([0.0], ["P0"], ["P1"], score_a=[2.0], score_b=[1.0]))
        return
    try:
        method = factory(model=model, **FAST.get(name, {}))
    except (TypeError, ValueError) as exc:
        message = str(exc)
        owner = getattr(factory, "__self__", factory)  # a classmethod variant (Elo.fide): its class
        assert type(obs).__name__ in message, message
        assert name in message or (isinstance(owner, type) and owner.__name__ in message), message
        return
    assert method.model.observation == obs
    t, a, b, sa, sb, neutral = stream(n_players=4, n_games=16, seed=8)
    sa, sb = sa + 1.0, sb  # no 0-0 ties: tripling keeps every result
    games = as_games(t, a, b, sa, sb, neutral)
    wider = as_games(t, a, b, 3.0 * sa, 3.0 * sb, neutral)
    np.testing.assert_array_equal(games.score, wider.score)
    test = ss.Games.from_arrays([30.0, 31.0], ["P0", "P1"], ["P1", "P2"], score_a=[1.0, 2.0], score_b=[0.0, 2.0])
    try:
        p = factory(model=model, **FAST.get(name, {})).fit(games).predict_proba(test)
    except (TypeError, ValueError) as exc:
        assert type(obs).__name__ in str(exc), str(exc)
        return
    q = factory(model=model, **FAST.get(name, {})).fit(wider).predict_proba(test)
    assert np.max(np.abs(p - q)) > 1e-6, f"{name} forecasts the same for other margins: it ignored {obs!r}"
    # and games without scores are refused, naming the observation and the columns
    results_only = ss.Games.from_arrays(t, games.a_name, games.b_name, games.score)
    with pytest.raises(ValueError, match=f"{type(obs).__name__}.*score_a"):
        factory(model=model, **FAST.get(name, {})).fit(results_only)


def test_cli_table_prints_the_score_columns_when_present(scored_games):
    from statespace.app.cli import _format_table

    with_scores = _format_table(ss.compare({"elo": Elo(), "margin": EKF(margin_model())}, scored_games))
    header, _, *rows = with_scores.splitlines()
    assert "score log dens" in header and "margin RMSE" in header
    cells = {}
    for name in ("elo", "margin"):
        row = next(r for r in rows if r.startswith(name))
        cells[name] = [row[header.index(h):header.index(h) + len(h)].strip() for h in ("score log dens", "margin RMSE")]
    assert cells["elo"] == ["-", "-"]  # Elo forecasts no score
    assert all(c != "-" and np.isfinite(float(c)) for c in cells["margin"])
    assert "score log dens" not in _format_table(ss.compare({"elo": Elo()}, scored_games))
