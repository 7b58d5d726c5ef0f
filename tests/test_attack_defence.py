"""Two skills per competitor, attack and defence (``SkillModel(openness_var=..., openness_drift=...)``,
Goals): the EKF's one-game step against a dense Newton step on the log posterior of the four skills
(scipy's pmfs, derivatives by central differences, numpy's solve), the limit of a known openness
(one skill), order inside a rating period, what it learns from simulated leagues, interpreted
against compiled, random settings, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import statespace as ss
from _dense import log_pmf, newton_step
from filters import EKF
from statespace.model.goals import BASE_MIN, goals_forecast

SCALE = ss.ELO_SCALE
BASE = math.log(1.3)


def _games(rows, period=None, neutral=0):
    df = pd.DataFrame(rows, columns=["time", "a", "b", "score_a", "score_b"])
    df["score"] = np.sign(df["score_a"] - df["score_b"]) * 0.5 + 0.5
    df["neutral"] = neutral  # 0: a plays at home
    if period is not None:
        df["period"] = period
    return ss.Games.from_frame(df)


def _row(state, name):
    return state.values[state.index()[name]]


def _model(openness_var=80.0**2, openness_drift=5.0, dispersion=0.1, home=40.0, table=True, **kw):
    return ss.SkillModel("logistic", SCALE, 1500.0, 200.0**2, 10.0, home=home,
                         observation=ss.Goals(base=BASE, dispersion=dispersion, table=table), openness_var=openness_var,
                         openness_drift=openness_drift, **kw)


@pytest.mark.parametrize("kappa, score", [(0.0, (3, 1)), (0.1, (0, 2)), (0.3, (2, 2))])
def test_one_game_is_a_dense_newton_step(kappa, score):
    """From priors N(m, diag(v)) over (s_a, s_b, o_a, o_b), the EKF's posterior means are one Newton
    step m + (Sigma^-1 + K)^-1 grad l, its variances the diagonal of (Sigma^-1 + K)^-1, with l the
    log pmf of both counts at log-rates base + (s_a - s_b + home +- (o_a + o_b)) / (2 scale) ... here
    from scipy.stats and differentiated numerically; the forecast is Goals' at the shifted base."""
    home = 40.0
    prior = {"x": (1560.0, 120.0, 30.0, 50.0), "y": (1480.0, 90.0, -10.0, 70.0)}
    games = _games([("2020-01-01", "x", "y", *score)])
    run = EKF(_model(dispersion=kappa, home=home)).run(games, initial=prior)
    m = np.array([prior["x"][0], prior["y"][0], prior["x"][2], prior["y"][2]])
    var = np.array([prior["x"][1], prior["y"][1], prior["x"][3], prior["y"][3]]) ** 2

    def loglik(z):
        sa, sb, oa, ob = z
        eta_a = BASE + (sa - sb + home + oa + ob) / (2 * SCALE)
        eta_b = BASE + (-(sa - sb + home) + oa + ob) / (2 * SCALE)
        return log_pmf(score[0], math.exp(eta_a), kappa) + log_pmf(score[1], math.exp(eta_b), kappa)

    mean, cov = newton_step(loglik, m, var)
    x, y = _row(run.state, "x"), _row(run.state, "y")
    got_mean = [x[0], y[0], x[2], y[2]]
    got_sd = [x[1], y[1], x[3], y[3]]
    np.testing.assert_allclose(got_mean, mean, rtol=1e-7)
    np.testing.assert_allclose(np.square(got_sd), np.diag(cov), rtol=1e-5)
    shifted = ss.Goals(base=BASE + (prior["x"][2] + prior["y"][2]) / (2 * SCALE), dispersion=kappa, table=False)
    p = goals_forecast(shifted.vector(SCALE), 1560.0 - 1480.0 + home, 120.0**2 + 90.0**2)
    np.testing.assert_allclose(run.proba[0], p, rtol=1e-10)


def test_a_known_openness_is_one_skill():
    """openness_var and openness_drift tiny: the forecasts and skills are the one-skill filter's (both
    forecasts integrated per game: the table is of the observation's own base, which a shift moves)."""
    rng = np.random.default_rng(3)
    rows = [(f"2020-01-{1 + k // 3:02d}", f"t{rng.integers(6)}", f"u{rng.integers(6)}", int(rng.poisson(1.3)),
             int(rng.poisson(1.3))) for k in range(60)]
    games = _games(rows)
    two = EKF(_model(openness_var=1e-290, openness_drift=1e-290, table=False)).run(games)
    one = EKF(_model(openness_var=0.0, openness_drift=0.0, table=False)).run(games)
    np.testing.assert_allclose(two.proba, one.proba, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(two.state.values[:, :2], one.state.values, rtol=1e-9)
    assert np.abs(two.state.values[:, 2]).max() < 1e-100


def test_order_inside_a_period_does_not_matter():
    rows = [("2020-01-01", "a", "b", 1, 1), ("2020-01-01", "c", "d", 2, 0), ("2020-01-01", "e", "f", 0, 0),
            ("2020-01-08", "a", "c", 1, 2), ("2020-01-08", "b", "d", 3, 3)]
    one = _games(rows, period=[1, 1, 1, 2, 2])
    other = _games([rows[2], rows[0], rows[1], rows[4], rows[3]], period=[1, 1, 1, 2, 2])
    ekf = EKF(_model(home_drift=1.0))
    s1, s2 = ekf.run(one).state, ekf.run(other).state
    for name in "abcdef":
        np.testing.assert_allclose(_row(s1, name), _row(s2, name), rtol=1e-12)


def _league(n_teams=16, n_games=3000, spread=0.35, seed=0):
    """A simulated league: each team an attack and a defence, N(0, spread^2) in log-rate each, fixed;
    a's goals Poisson(exp(base + 0.1 + A_a - D_b)), b's Poisson(exp(base - 0.1 + A_b - D_a)). Returns the
    games and the two skills in rating points (times the scale)."""
    rng = np.random.default_rng(seed)
    att, dfc = rng.normal(0.0, spread, n_teams), rng.normal(0.0, spread, n_teams)
    a = rng.integers(0, n_teams, n_games)
    b = (a + rng.integers(1, n_teams, n_games)) % n_teams
    xa = rng.poisson(np.exp(BASE + 0.1 + att[a] - dfc[b]))
    xb = rng.poisson(np.exp(BASE - 0.1 + att[b] - dfc[a]))
    rows = [(k // 8, f"t{i}", f"t{j}", x, y) for k, (i, j, x, y) in enumerate(zip(a, b, xa, xb))]
    return _games(rows), att * SCALE, dfc * SCALE


def test_it_learns_attack_and_defence_from_a_simulated_league():
    """Filtered without drift, the attack and defence it reports follow the simulated ones, and it
    forecasts the last third better than one skill per team (log loss)."""
    games, att, dfc = _league()
    kw = dict(observation=ss.Goals(base=BASE), home=0.2 * SCALE)
    two = EKF(ss.SkillModel("logistic", SCALE, 0.0, (0.5 * SCALE) ** 2, 0.0, openness_var=(0.5 * SCALE) ** 2,
                            **kw)).run(games)
    one = EKF(ss.SkillModel("logistic", SCALE, 0.0, (0.5 * SCALE) ** 2, 0.0, **kw)).run(games)
    board = two.ratings().set_index("player").loc[[f"t{i}" for i in range(len(att))]]
    assert np.corrcoef(board["attack"], att)[0, 1] > 0.9
    assert np.corrcoef(board["defence"], dfc)[0, 1] > 0.9
    np.testing.assert_allclose(board["attack"] + board["defence"], board["mean"], rtol=1e-12)
    np.testing.assert_allclose(board["attack"] - board["defence"], board["openness"], rtol=1e-12, atol=1e-9)
    last = slice(2000, None)

    def loss(run):
        y = games.score[last]
        p = run.proba[last]
        return -np.mean(np.log(np.where(y == 1, p[:, 0], np.where(y == 0.5, p[:, 1], p[:, 2]))))

    assert loss(two) < loss(one) - 0.005


def test_interpreted_equals_compiled(monkeypatch):
    """The Python twins (STATESPACE_JIT=never) give the compiled numbers (statespace._runtime.tier)."""
    games, _, _ = _league(n_teams=8, n_games=300, seed=2)
    model = _model(home_drift=0.5, reversion=1e-3)
    runs = {}
    for mode in ("never", "always"):
        monkeypatch.setenv("STATESPACE_JIT", mode)
        runs[mode] = EKF(model).run(games)
    np.testing.assert_allclose(runs["never"].proba, runs["always"].proba, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(runs["never"].state.values, runs["always"].state.values, rtol=1e-9, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.floats(1e-6, 1e5), st.floats(0.0, 1e4), st.floats(0.0, 2.0), st.floats(BASE_MIN, 5.0),
       st.integers(0, 2**31))
def test_every_accepted_setting_gives_meaningful_numbers(openness_sd, openness_drift, kappa, base, seed):
    """Over the accepted ranges (openness sd from a millionth of a point to 1e5, scale 173.7):
    probabilities in [0, 1] summing to 1, finite ratings, positive finite variances."""
    rng = np.random.default_rng(seed)
    rows = [(k // 4, f"t{rng.integers(5)}", f"u{rng.integers(5)}", int(rng.integers(0, 12)), int(rng.integers(0, 12)))
            for k in range(40)]
    model = ss.SkillModel("logistic", SCALE, 1500.0, 300.0**2, 20.0, home=30.0,
                          observation=ss.Goals(base=base, dispersion=kappa), openness_var=openness_sd**2,
                          openness_drift=openness_drift)
    run = EKF(model).run(_games(rows))
    assert np.all((run.proba >= 0) & (run.proba <= 1))
    np.testing.assert_allclose(run.proba.sum(axis=1), 1.0, atol=1e-9)
    values = run.state.values
    assert np.all(np.isfinite(values))
    assert np.all(values[:, [1, 3]] > 0)


def test_refusals_name_the_setting():
    model = _model()
    games = _games([("2020-01-01", "x", "y", 1, 1), ("2020-01-02", "x", "y", 0, 2)])
    with pytest.raises(ValueError, match="openness_var"):
        ss.SkillModel(observation=ss.Margin(sd=1.0), openness_var=1.0)
    with pytest.raises(ValueError, match="rho=0"):
        ss.SkillModel(observation=ss.Goals(base=BASE, rho=-0.1), openness_var=1.0)
    with pytest.raises(ValueError, match="draw_drift=0"):
        ss.SkillModel(observation=ss.Goals(base=BASE), openness_var=1.0, draw_drift=1e-3)
    with pytest.raises(ValueError, match="openness_drift"):
        ss.SkillModel(observation=ss.Goals(base=BASE), openness_drift=-1.0)
    with pytest.raises(ValueError, match="diagonal"):
        EKF(model, covariance="full")
    with pytest.raises(ValueError, match="iterations=1"):
        EKF(model, iterations=3)
    from smoothers import RTSSmoother

    for make in (lambda: RTSSmoother(model), lambda: ss.simulate(model, 4, 10, seed=0)):
        with pytest.raises(ValueError, match="two skills"):
            make()
    run = EKF(model).run(games)
    assert run.state.columns == ("mean", "sd", "openness", "openness_sd")
    assert {"attack", "defence", "openness"} <= set(run.ratings().columns)


def test_compare_scores_the_forecasts_and_leaves_the_score_metrics_out():
    """The difference's moments alone do not give a two-skill forecast: ``diff_moments`` says so, and
    ``compare`` scores the win/draw/loss forecasts with the score metrics left NaN (not wrong)."""
    games, _, _ = _league(n_teams=8, n_games=400, seed=5)
    kw = dict(observation=ss.Goals(base=BASE), home=0.2 * SCALE)
    two = EKF(ss.SkillModel("logistic", SCALE, 0.0, (0.5 * SCALE) ** 2, 1.0, openness_var=(0.3 * SCALE) ** 2, **kw))
    one = EKF(ss.SkillModel("logistic", SCALE, 0.0, (0.5 * SCALE) ** 2, 1.0, **kw))
    with pytest.raises(NotImplementedError, match="two skills"):
        two.run(games).diff_moments
    table = ss.compare({"two": two, "one": one}, games, split=0.7)
    assert np.isfinite(table["log_loss"]).all()
    assert table.loc["two", ["score_log_density", "margin_rmse"]].isna().all()
    assert table.loc["one", ["score_log_density", "margin_rmse"]].notna().all()


# ------------------------------------------------------------------ the Laplace smoother


def test_static_laplace_fit_is_the_dense_maximum_a_posteriori_fit():
    """Drift 0: the Laplace smoother's mode and variances against a dense fit of Maher's model by
    scipy.optimize in the attack/defence parametrisation (a's goals Poisson(exp(base + (A_a - D_b +
    h / 2) / scale)) from scipy.stats, priors s = mu0 + A + D ~ N(mu0, v), o = A - D ~ N(0, v_o));
    the variances against the inverse of that objective's Hessian by central differences."""
    from scipy.optimize import minimize

    from smoothers import LaplaceSmoother

    games, _, _ = _league(n_teams=6, n_games=150, seed=4)
    v, vo, home, kappa = (0.6 * SCALE) ** 2, (0.4 * SCALE) ** 2, 0.3 * SCALE, 0.05
    model = ss.SkillModel("logistic", SCALE, 1500.0, v, 0.0, home=home, openness_var=vo,
                          observation=ss.Goals(base=BASE, dispersion=kappa))
    fit = LaplaceSmoother(model, tol=1e-12).fit(games)
    names = sorted(set(games.a_name) | set(games.b_name))
    ia = np.searchsorted(names, games.a_name)
    ib = np.searchsorted(names, games.b_name)
    k = len(names)

    def energy(z):  # minus the log posterior in (A, D)
        A, D = z[:k], z[k:]
        la = np.exp(BASE + (A[ia] - D[ib] + home / 2) / SCALE)
        lb = np.exp(BASE + (A[ib] - D[ia] - home / 2) / SCALE)
        lik = log_pmf(games.score_a, la, kappa).sum() + log_pmf(games.score_b, lb, kappa).sum()
        return -lik + 0.5 * np.sum((A + D) ** 2) / v + 0.5 * np.sum((A - D) ** 2) / vo

    res = minimize(lambda z: energy(z * SCALE), np.zeros(2 * k), method="BFGS", jac="3-point", options={"gtol": 1e-8})
    # BFGS may end on "precision loss" just short of gtol (scipy-version dependent): what matters is
    # that it stopped at a stationary point, checked by central differences
    step = np.eye(2 * k) * 1e-5
    grad = np.array([(energy((res.x + e) * SCALE) - energy((res.x - e) * SCALE)) / 2e-5 for e in step])
    assert np.max(np.abs(grad)) < 1e-5, (res.message, grad)
    res.x = res.x * SCALE
    A, D = res.x[:k], res.x[k:]
    board = fit.ratings().set_index("player").loc[names]
    np.testing.assert_allclose(board["attack"], A, atol=1e-4)  # rating points (BFGS stops within its gtol)
    np.testing.assert_allclose(board["defence"], D, atol=1e-4)
    h = 0.5
    eye = np.eye(2 * k) * h
    hess = np.array([[(energy(res.x + e + f) - energy(res.x + e - f) - energy(res.x - e + f) + energy(res.x - e - f))
                      / (4 * h * h) for f in eye] for e in eye])
    cov = np.linalg.inv(hess)
    var_s = np.array([cov[i, i] + cov[k + i, k + i] + 2 * cov[i, k + i] for i in range(k)])  # s = mu0 + A + D
    var_o = np.array([cov[i, i] + cov[k + i, k + i] - 2 * cov[i, k + i] for i in range(k)])  # o = A - D
    np.testing.assert_allclose(board["sd"] ** 2, var_s, rtol=1e-4)
    np.testing.assert_allclose(board["openness_sd"] ** 2, var_o, rtol=1e-4)


def test_laplace_with_a_known_openness_is_the_one_skill_fit():
    """Dynamic fit, openness_var and openness_drift tiny: the skills' means and variances are the
    one-skill smoother's."""
    from smoothers import LaplaceSmoother

    games, _, _ = _league(n_teams=6, n_games=200, seed=6)
    kw = dict(home=0.2 * SCALE, observation=ss.Goals(base=BASE, dispersion=0.1, table=False))
    one = LaplaceSmoother(ss.SkillModel("logistic", SCALE, 1500.0, (0.5 * SCALE) ** 2, 20.0, **kw), tol=1e-12).fit(games)
    two = LaplaceSmoother(ss.SkillModel("logistic", SCALE, 1500.0, (0.5 * SCALE) ** 2, 20.0, openness_var=1e-200,
                                        openness_drift=1e-200, **kw), tol=1e-12).fit(games)
    np.testing.assert_allclose(two.mean, one.mean, rtol=1e-9)
    np.testing.assert_allclose(two.var, one.var, rtol=1e-6)
    np.testing.assert_allclose(np.abs(two.open_mean).max(), 0.0, atol=1e-6)
    later = games.take(np.arange(len(games) - 20, len(games)))
    with pytest.warns(ss.SeenGamesWarning):
        np.testing.assert_allclose(two.predict_proba(later), one.predict_proba(later), atol=1e-8)


def test_laplace_learns_attack_and_defence_and_the_large_path_agrees():
    """A dynamic fit recovers the simulated attack and defence; the sparse factor (above the dense
    limit) and the per-chain blocks give the same mode, the factor the same variances as the dense
    inverse."""
    from smoothers import LaplaceSmoother

    games, att, dfc = _league(n_teams=10, n_games=1200, seed=7)
    model = ss.SkillModel("logistic", SCALE, 0.0, (0.5 * SCALE) ** 2, 1.0, home=0.2 * SCALE, openness_var=(0.5 * SCALE) ** 2,
                          openness_drift=0.5, observation=ss.Goals(base=BASE))
    dense = LaplaceSmoother(model, tol=1e-10).fit(games)
    sparse = LaplaceSmoother(model, tol=1e-10, dense_cov_limit=0).fit(games)
    blocks = LaplaceSmoother(model, tol=1e-10, variances="blocks").fit(games)
    assert (dense.info["variances"], sparse.info["variances"], blocks.info["variances"]) == (
        "dense", "selected inverse", "blocks")
    np.testing.assert_allclose(sparse.mean, dense.mean, atol=1e-6)
    np.testing.assert_allclose(blocks.open_mean, dense.open_mean, atol=1e-6)
    np.testing.assert_allclose(sparse.var, dense.var, rtol=1e-8)
    np.testing.assert_allclose(sparse.open_var, dense.open_var, rtol=1e-8)
    assert np.all(blocks.var <= dense.var * (1 + 1e-9))  # a chain's own block understates its variance
    board = dense.ratings().set_index("player").loc[[f"t{i}" for i in range(len(att))]]
    assert np.corrcoef(board["attack"], att)[0, 1] > 0.9
    assert np.corrcoef(board["defence"], dfc)[0, 1] > 0.9


def test_auto_tries_attack_and_defence_when_asked():
    """``Variant(..., skills=2)``: a Goals candidate with the openness tuned, started from the one-skill
    candidate; on a league simulated with attack and defence it is the choice. Refused with another law."""
    from statespace.ensemble.auto import Variant

    games, _, _ = _league(n_teams=8, n_games=900, seed=3)
    fit = ss.auto(games, split=0.8, progress=False, candidates=[Variant("goals", "fixed"),
                                                               Variant("goals", "fixed", skills=2)])
    assert fit.chosen == "goals, fixed home, attack/defence"
    scores = fit.table["train_score"]
    assert scores["goals, fixed home, attack/defence"] < scores["goals, fixed home"]
    assert fit.method.model.two_skills and fit.method.model.openness_var > 0
    with pytest.raises(ValueError, match="two skills"):
        Variant("goals", counts="dixon-coles", skills=2)
    with pytest.raises(ValueError, match="skills must be 1 or 2"):
        Variant("goals", skills=3)
