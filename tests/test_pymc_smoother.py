"""PyMCSmoother: the random-walk model by MCMC, on tiny simulated tables (few draws, 1-2 chains).

The reference for the drift test is the simulation itself: games drawn from a known
``SkillModel`` (``statespace.simulate``), whose drift must lie inside the 90% posterior interval.
Everything else checks the shared fitted interface, the parameterisation and the plumbing
(compile cache, errors). Kept small: all PyMC fits here take well under a minute on 2 cores.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import statespace as ss
from smoothers.base import SmootherFit, timeline
from smoothers._diagnostics import ess_bulk, rhat_rank
from smoothers._pymc_model import build_model, laplace_point, laplace_start, segment_cumsum, segment_starts
from statespace._runtime.pytensor_config import configure_pytensor, default_compile_dir
from smoothers.pymc_smoother import ConvergenceWarning, PyMCSmoother

TRUE_DRIFT = 0.06


def quick(model=None, **kw):
    """A smoother with tiny settings; diagnostics bounds relaxed (short chains are noisy)."""
    opts = dict(draws=150, tune=150, chains=1, seed=7, progressbar=False, min_ess=1, max_rhat=10)
    opts.update(kw)
    return PyMCSmoother(model, **opts)


@pytest.fixture(scope="module")
def drifting():
    """12 competitors, 600 games over 30 daily rating periods, drift 0.06 per period."""
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=TRUE_DRIFT)
    sim = ss.simulate(model, n_players=12, n_games=600, days=30, seed=11)
    return sim.games.with_periods(1)


@pytest.fixture(scope="module")
def fitted(drifting):
    train, _ = drifting.split(0.8)
    return quick(draws=300, tune=300, chains=2, max_rhat=1.1).fit(train)


@pytest.fixture(scope="module")
def small():
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.05)
    return ss.simulate(model, n_players=6, n_games=80, days=10, seed=3).games


# ---------------------------------------------------------------------------- the posterior
def test_drift_is_recovered(fitted):
    drift = np.asarray(fitted.idata.posterior["drift"]).ravel()
    lo, hi = np.quantile(drift, [0.05, 0.95])
    assert lo < TRUE_DRIFT < hi
    assert fitted.model.drift == pytest.approx(drift.mean())
    assert fitted.model.prior_var == pytest.approx(np.asarray(fitted.idata.posterior["prior_var"]).mean())


def test_fit_info_and_idata(fitted):
    info = fitted.info
    assert isinstance(fitted, SmootherFit)
    assert info["free"] == ("drift_sd", "prior_sd")
    assert info["divergences"] == 0
    assert info["max_rhat"] < 1.1
    assert info["min_ess"] > 0 and info["seconds"] > 0
    post = fitted.idata.posterior
    assert post.sizes["chain"] == 2 and post.sizes["draw"] == 300
    assert post["skill"].shape == (2, 300, fitted.timeline.n_nodes)
    assert fitted.draws.shape == (500, fitted.timeline.n_nodes)  # 600 draws thinned to keep_draws


def test_node_moments_are_the_skill_draws(fitted):
    skill = np.asarray(fitted.idata.posterior["skill"]).reshape(-1, fitted.timeline.n_nodes)
    np.testing.assert_allclose(fitted.mean, skill.mean(axis=0))
    np.testing.assert_allclose(fitted.var, skill.var(axis=0))


def test_skills_are_the_non_centred_random_walk(fitted):
    """skill = prior_mean + prior_sd z at a first node, then + drift_sd sqrt(dt) z per step."""
    tl = fitted.timeline
    post = fitted.idata.posterior
    z = np.asarray(post["z"])[0, 0]
    dsd = float(post["drift_sd"][0, 0])
    psd = float(post["prior_sd"][0, 0])
    skill = np.asarray(post["skill"])[0, 0]
    expected = np.empty(tl.n_nodes)
    for k in range(tl.n_nodes):
        if tl.prev[k] < 0:
            expected[k] = psd * z[k]
        else:
            expected[k] = expected[tl.prev[k]] + dsd * np.sqrt(tl.dt[k]) * z[k]
    np.testing.assert_allclose(skill, expected, atol=1e-12)


def test_segment_cumsum_restarts_at_each_segment():
    first = np.array([True, False, False, True, True, False])
    x = np.array([1.0, 2.0, 3.0, 10.0, 5.0, -1.0])
    np.testing.assert_array_equal(segment_starts(first), [0, 0, 0, 3, 4, 4])
    np.testing.assert_allclose(segment_cumsum(x, segment_starts(first)), [1, 3, 6, 10, 5, 4])


# ---------------------------------------------------------------------------- fitted interface
def test_predict_proba_rows_sum_to_one_and_stay_aligned(fitted, drifting):
    _, test = drifting.split(0.8)
    p = fitted.predict_proba(test)
    assert p.shape == (len(test), 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    assert np.all(p[:, 1] == 0)  # draw model "none"
    perm = np.random.default_rng(0).permutation(len(test))
    np.testing.assert_allclose(fitted.predict_proba(test.take(perm)), p[perm])
    # better than a coin on the held-out games
    y = test.score
    assert np.mean(np.log(np.where(y == 1, p[:, 0], p[:, 2]))) > np.log(0.5)


def test_ratings_and_trajectories_columns(fitted):
    r = fitted.ratings()
    assert list(r.columns) == ["player", "mean", "sd", "lower", "upper", "games"]
    assert len(r) == 12 and np.all(r["sd"] > 0)
    tr = fitted.trajectories(centre=True)
    assert list(tr.columns) == ["time", "player", "mean", "sd", "lower", "upper"]
    assert len(tr) == fitted.timeline.n_nodes


def test_time_basis_must_match(fitted, drifting):
    _, test = drifting.split(0.8)
    no_periods = ss.Games.from_frame(test.to_frame().drop(columns="period"))
    with pytest.raises(ValueError, match="rating periods"):
        fitted.predict_proba(no_periods)


# ---------------------------------------------------------------------------- parameters
def test_time_unit_is_days_over_period_days(small):
    s = PyMCSmoother(period_days=7.0)
    np.testing.assert_allclose(s.times(small), small.days() / 7.0)
    assert s.model == ss.SkillModel("logistic", 1.0)
    assert "PyMCSmoother(" in repr(s) and "drift=prior" in repr(s)


def test_same_seed_same_numbers(small):
    a = quick(draws=40, tune=40, seed=5).fit(small)
    b = quick(draws=40, tune=40, seed=5).fit(small)
    np.testing.assert_array_equal(a.mean, b.mean)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_fixed_parameters_home_advantage_and_half_draws():
    """Fixed drift and prior (not sampled), home advantage inferred, draws scored as half-wins."""
    truth = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.02, draw=("davidson", 0.8), home=0.8)
    games = ss.simulate(truth, n_players=8, n_games=200, days=10, home_fraction=0.7, seed=4).games
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, draw="half")
    fit = quick(model, drift=0.02, prior_var=0.8).fit(games)
    assert fit.info["free"] == ("home",)
    assert "drift_sd" not in fit.idata.posterior and "prior_sd" not in fit.idata.posterior
    assert fit.model.drift == pytest.approx(0.02) and fit.model.prior_var == pytest.approx(0.8)
    assert fit.method.model.drift == 0.02
    assert fit.model.home > 0
    p = fit.predict_proba(games)
    assert np.all(p[:, 1] == 0)  # half-win: draws are scored, never forecast


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("link, draw, name", [("logistic", ("davidson", 0.6), "nu"),
                                              ("probit", ("threshold", 0.4), "margin")])
def test_draw_models_forecast_draws(link, draw, name):
    model = ss.SkillModel(link, 1.0, 0.0, 1.0, drift=0.02, draw=draw)
    games = ss.simulate(model, n_players=8, n_games=200, days=10, seed=5).games
    assert np.any(games.score == 0.5)
    fit = quick(model).fit(games)
    assert name in fit.info["free"] and fit.model.draw.theta > 0
    p = fit.predict_proba(games)
    assert np.all(p[:, 1] > 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled-op", "pytensor-graph"])
@pytest.mark.parametrize("link", ["logistic", "probit"])
@pytest.mark.parametrize("draw", ["none", "half", ("threshold", 0.4), ("davidson", 0.7)])
def test_game_likelihood_is_the_skill_models(link, draw, compiled):
    """The model's game term equals sum(weight * SkillModel.loglik) at the skills given by z (an
    independent implementation of every link and draw model), with home advantage and weights.
    Evaluated without sampling, in PyTensor's Python mode (no C compilation)."""
    truth = ss.SkillModel(link, 1.3, 0.2, 1.0, drift=0.05, draw=("davidson", 0.7) if draw == "half" else draw,
                          home=0.4)
    model = ss.SkillModel(link, 1.3, 0.2, 1.0, drift=0.05, draw=draw, home=0.4)
    rng = np.random.default_rng(1)
    games = ss.simulate(truth, n_players=6, n_games=60, days=8, home_fraction=0.5, seed=2).games
    games = games.with_weights(rng.uniform(0.5, 2.0, len(games)))
    assert (draw == "none") == (not np.any(games.score == 0.5))
    smoother = PyMCSmoother(model, drift=0.05, prior_var=1.0, home=0.4, draw_param=model.draw.theta)
    tl = timeline(games, smoother.times(games))
    pmodel, free = build_model(smoother, games, tl, compiled=compiled)
    assert free == []
    fn = pmodel.compile_fn(pmodel.replace_rvs_by_values(pmodel.potentials)[0], mode="FAST_COMPILE")
    z = rng.normal(size=tl.n_nodes)
    first = tl.prev < 0
    skill = segment_cumsum(first * (0.2 + 1.0 * z) + np.sqrt(0.05 * tl.dt) * z, segment_starts(first))
    diff = skill[tl.game_a] - skill[tl.game_b] + 0.4 * ~games.neutral
    expected = np.sum(games.weight * model.loglik(games.score, diff))
    # probit: PyMC's normal_lcdf (through erfcx) is good to about 1e-6 relative per game; the
    # compiled Op's log cdf is good to full precision (tests/test_loglik_grad.py)
    rel = 1e-10 if link == "logistic" or compiled else 1e-7
    assert float(fn({"z": z})) == pytest.approx(expected, rel=rel)


@pytest.mark.parametrize("link", ["logistic", "probit"])
@pytest.mark.parametrize("draw", ["half", ("threshold", 0.4), ("davidson", 0.7)])
def test_compiled_op_has_the_graphs_log_density_and_gradient(link, draw):
    """The compiled Op (one numba pass, used with PyMC's NUTS) and the plain PyTensor graph
    (used by nutpie and numpyro) are two independent implementations of the same log density:
    they agree in value and gradient for every free parameter (walk scales, home advantage,
    draw parameter, every node's z), with weights and home games, at random points."""
    model = ss.SkillModel(link, 1.3, 0.2, 1.0, drift=0.05, draw=draw, home=0.4)
    rng = np.random.default_rng(5)
    games = ss.simulate(model, n_players=6, n_games=80, days=8, home_fraction=0.5, seed=4).games.with_periods(1)
    games = games.with_weights(rng.uniform(0.5, 2.0, len(games)))
    smoother = PyMCSmoother(model)
    tl = timeline(games, smoother.times(games))
    fast, free = build_model(smoother, games, tl, compiled=True)
    plain, free_plain = build_model(smoother, games, tl, compiled=False)
    assert free == free_plain and "home" in free and len(free) == (4 if draw != "half" else 3)
    values = [fast.rvs_to_values[fast[name]] for name in [*free, "z"]]
    logp_fast, dlogp_fast = (fast.compile_fn(f, inputs=values, mode="FAST_COMPILE", point_fn=False)
                             for f in (fast.logp(), fast.dlogp()))
    values = [plain.rvs_to_values[plain[name]] for name in [*free, "z"]]
    logp_plain, dlogp_plain = (plain.compile_fn(f, inputs=values, mode="FAST_COMPILE", point_fn=False)
                               for f in (plain.logp(), plain.dlogp()))
    rel = 1e-10 if link == "logistic" else 1e-5  # PyMC's normal_lcdf: about 1e-7 relative per game
    for _ in range(4):
        point = [rng.normal(scale=0.7, size=v.type.shape if v.type.ndim == 0 else tl.n_nodes) for v in values]
        grad_fast, grad_plain = dlogp_fast(*point), dlogp_plain(*point)
        assert float(logp_fast(*point)) == pytest.approx(float(logp_plain(*point)), rel=rel)
        assert np.max(np.abs(grad_fast - grad_plain)) <= rel * (1.0 + np.max(np.abs(grad_plain)))
        assert np.max(np.abs(grad_fast)) > 0.1  # a gradient that can fail


def test_compiled_op_in_numba_mode_is_the_same_function():
    """nutpie compiles the model with PyTensor's numba backend: the Op's numba implementation
    gives the same log density and gradient as its Python-called kernel."""
    from smoothers._walk_logp import register_numba

    register_numba()
    model = ss.SkillModel("probit", 1.3, 0.2, 1.0, drift=0.05, draw=("threshold", 0.4), home=0.4)
    games = ss.simulate(model, n_players=6, n_games=80, days=8, home_fraction=0.5, seed=4).games.with_periods(1)
    smoother = PyMCSmoother(model)
    tl = timeline(games, smoother.times(games))
    pmodel, free = build_model(smoother, games, tl, compiled=True)
    values = [pmodel.rvs_to_values[pmodel[name]] for name in [*free, "z"]]
    rng = np.random.default_rng(2)
    point = [rng.normal(scale=0.7, size=() if v.type.ndim == 0 else tl.n_nodes) for v in values]
    for f in (pmodel.logp(), pmodel.dlogp()):
        py = pmodel.compile_fn(f, inputs=values, mode="FAST_COMPILE", point_fn=False)(*point)
        nb = pmodel.compile_fn(f, inputs=values, mode="NUMBA", point_fn=False)(*point)
        np.testing.assert_allclose(nb, py, rtol=1e-12, atol=1e-12)


def test_mean_reversion_and_a_drifting_home_advantage_are_refused():
    with pytest.raises(ValueError, match="reversion"):
        PyMCSmoother(ss.SkillModel(reversion=0.1))
    with pytest.raises(ValueError, match="home_drift"):
        PyMCSmoother(ss.SkillModel(home_drift=0.1))


def test_draws_under_draw_model_none_are_an_error():
    games = ss.Games.from_arrays([0, 1, 2], ["a", "b", "c"], ["b", "c", "a"], [1, 0.5, 0.5])
    with pytest.raises(ValueError, match=r"2 draws \(rows 1, 2\).*'none'"):
        PyMCSmoother().fit(games)


def test_bad_arguments():
    with pytest.raises(ValueError, match="sampler"):
        PyMCSmoother(sampler="gibbs")
    with pytest.raises(ValueError, match="drift"):
        PyMCSmoother(drift=-1.0)
    with pytest.raises(ValueError, match="prior scale"):
        PyMCSmoother(prior_scales={"nope": 1.0})
    with pytest.raises(ValueError, match="init must be one of"):
        PyMCSmoother(init="warm")


@pytest.mark.parametrize("draw", ["half", ("threshold", 0.3)])
def test_laplace_start_is_the_laplace_mode_in_sampler_coordinates(draw):
    """init='laplace': the mean of the chains' starting points, mapped back through the
    non-centred walk, is the Laplace smoother's posterior mode (fitted independently here), and
    the mass matrix starts from its variances; chains start at different points."""
    from smoothers import LaplaceSmoother

    model = ss.SkillModel("logistic", 1.0, 0.3, 0.8, drift=0.05, draw=draw, home=0.2)
    games = ss.simulate(model, n_players=7, n_games=120, days=10, home_fraction=0.5, seed=8).games.with_periods(1)
    smoother = PyMCSmoother(model, chains=3, drift=0.05, prior_var=0.8)
    tl = timeline(games, smoother.times(games))
    pmodel, free = build_model(smoother, games, tl)
    mean, var = laplace_point(smoother, games, tl, pmodel)
    _, inits = laplace_start(smoother, games, tl, pmodel, np.random.default_rng(0))
    lap = LaplaceSmoother(model).fit(games)
    first = tl.prev < 0
    np.testing.assert_allclose(var["z"][first], np.minimum(lap.var[first] / 0.8, 1.0))
    prev = tl.prev[~first]
    step_var = lap.var[~first] + lap.var[prev] - 2 * lap.cov[np.flatnonzero(~first), prev]  # the dense covariance
    np.testing.assert_allclose(var["z"][~first], np.clip(step_var / (0.05 * tl.dt[~first]), 1e-4, 1.0), rtol=1e-9)
    assert 0.05 < np.median(var["z"][~first]) < 1.0  # the data say something about single steps
    if draw != "half":
        assert mean["margin_log__"] == pytest.approx(np.log(0.3))
    increments = (first * np.sqrt(0.8) + np.sqrt(0.05 * tl.dt)) * mean["z"] + first * 0.3
    np.testing.assert_allclose(segment_cumsum(increments, segment_starts(first)), lap.mean, atol=1e-9)
    assert len(inits) == 3 and not np.allclose(inits[0]["z"], inits[1]["z"])
    assert set(inits[0]) == {v.name for v in pmodel.continuous_value_vars} and "home" in free


def test_pymc_init_methods_still_sample(small):
    fit = quick(draws=30, tune=30, init="jitter+adapt_diag").fit(small)
    assert np.all(np.isfinite(fit.mean)) and fit.info["draws"] == 30


def test_missing_optional_sampler_is_a_clear_error(small, monkeypatch):
    import smoothers.pymc_smoother as mod

    monkeypatch.setattr(mod, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="pip install numpyro jax"):
        PyMCSmoother(sampler="numpyro").fit(small)


def test_convergence_warning_names_what_is_off(small):
    with pytest.warns(ConvergenceWarning, match=r"bulk ESS \d+ < 1000000 for \w+"):
        quick(draws=40, tune=40, chains=2, min_ess=1e6).fit(small)


@pytest.mark.parametrize("chains, draws", [(2, 100), (4, 37), (1, 51)])
def test_diagnostics_equal_arviz(chains, draws):
    """The vectorised r-hat and bulk ESS are ArviZ's (rank-normalised, split; Vehtari et al. 2021)."""
    import warnings

    import arviz as az

    rng = np.random.default_rng(chains)
    phi = np.linspace(-0.3, 0.95, 6)[:, None]
    e = rng.normal(size=(6, chains, draws))
    x = e.copy()
    for t in range(1, draws):  # AR(1) chains with different autocorrelations
        x[..., t] = phi * x[..., t - 1] + e[..., t]
    x[0, 0] += 0.7  # one chain off: r-hat > 1
    x[1] = np.round(x[1])  # ties
    x[2] = 3.0  # constant
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_rhat = np.array([float(az.rhat(v)) if chains > 1 else np.nan for v in x])
        ref_ess = np.array([float(az.ess(v, method="bulk")) for v in x])
    np.testing.assert_allclose(rhat_rank(x), ref_rhat, rtol=1e-10, equal_nan=True)
    np.testing.assert_allclose(ess_bulk(x), ref_ess, rtol=1e-10)


def test_advi_is_fast_and_has_no_mcmc_diagnostics(small):
    fit = quick(sampler="advi", advi_iterations=1500, draws=100).fit(small)
    assert "divergences" not in fit.info
    assert fit.draws.shape == (100, fit.timeline.n_nodes)
    assert np.all(np.isfinite(fit.mean)) and np.all(fit.var > 0)


# ---------------------------------------------------------------------------- compile cache
def test_compile_cache_is_private_in_the_user_cache_directory():
    """The rule (it was a folder of the system's temporary directory): ``statespace/pytensor``
    in the user's cache directory, created private; a fresh interpreter's choices, including the
    fallback when the home cache cannot be written, are in tests/test_readonly_install.py."""
    default = default_compile_dir()
    assert Path(default).parts[-2:] == ("statespace", "pytensor")
    configure_pytensor()  # a no-op (or a warning-free check) once pytensor is imported
    import pytensor

    if os.path.realpath(pytensor.config.base_compiledir) == os.path.realpath(default):
        assert stat.S_IMODE(os.stat(default).st_mode) == 0o700


def test_compile_dir_is_set_before_pytensor_is_imported(tmp_path):
    """In a fresh interpreter with an empty home: the cache goes to compile_dir, not ~/.pytensor,
    and a compile directory already chosen in PYTENSOR_FLAGS is respected."""
    code = textwrap.dedent(f"""
        import sys
        from statespace._runtime.pytensor_config import configure_pytensor
        configure_pytensor({str(tmp_path / 'cache')!r})
        assert 'pytensor' not in sys.modules
        import pytensor
        print(pytensor.config.base_compiledir)
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTENSOR_FLAGS"}
    env["HOME"] = str(tmp_path / "home")
    (tmp_path / "home").mkdir()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path / "cache")
    assert not (tmp_path / "home" / ".pytensor").exists()
    env["PYTENSOR_FLAGS"] = f"base_compiledir={tmp_path / 'mine'}"
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code.replace(repr(str(tmp_path / "cache")), "")],
                         env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(tmp_path / "mine")


def test_timeline_nodes_feed_the_model(small):
    """The game likelihood reads each game's two nodes; a node per competitor and time."""
    tl = timeline(small, PyMCSmoother().times(small))
    assert tl.n_nodes == len({(p, t) for p, t in zip(np.r_[small.a, small.b], np.r_[small.days(), small.days()])})


def test_get_params_rebuild_the_smoother_with_every_argument():
    """get_params() gives every constructor argument (init and likelihood included), so
    type(m)(**m.get_params()) is the same smoother; nothing is tunable."""
    m = PyMCSmoother(ss.SkillModel("probit", 2.0, draw="threshold"), drift=0.1, home=0.3, sampler="advi", draws=50,
                     tune=20, chains=3, cores=1, target_accept=0.8, seed=3, progressbar=False, period_days=7.0,
                     compile_dir="/nonexistent/cache", keep_draws=10, advi_iterations=100, max_rhat=1.1, min_ess=50,
                     prior_scales={"home": 2.0}, init="adapt_diag", likelihood="graph")
    params = m.get_params()
    assert params["init"] == "adapt_diag" and params["likelihood"] == "graph" and params["tune"] == 20
    clone = PyMCSmoother(**params)
    assert clone.get_params() == params and repr(clone) == repr(m)
    default = PyMCSmoother()
    assert PyMCSmoother(**default.get_params()).get_params() == default.get_params()
    fewer = m.with_params(draws=10)
    assert fewer.draws == 10 and fewer.init == "adapt_diag" and fewer.likelihood == "graph"
    with pytest.raises(ValueError, match="known: "):
        m.with_params(bogus=1)
    assert m.tunable(None) == {}
    with pytest.raises(ValueError, match="nothing to tune"):
        m.tune(None)


# ---------------------------------------------------------------------------- Margin and Goals: through the graph
def side_score_walk(kind: str, n_players=8, n_games=120, periods=10, seed=0):
    """Random-walk skills (prior N(0, 4), drift 0.05 per period) observed through each side's
    score: Gaussian margins of sd 2 (``"margin"``) or Poisson goals, base 0.3 at scale 2
    (``"goals"``); half the games at a's home (advantage 0.5). Returns the games (with periods)
    and every game's true skill difference."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 2.0, n_players)
    a = rng.integers(0, n_players, n_games)
    b = (a + 1 + rng.integers(0, n_players - 1, n_games)) % n_players
    at_home = rng.random(n_games) < 0.5
    period = np.arange(n_games) * periods // n_games
    d = np.empty(n_games)
    for g in range(n_games):
        if g and period[g] > period[g - 1]:
            skill += rng.normal(0.0, np.sqrt(0.05), n_players)
        d[g] = skill[a[g]] - skill[b[g]]
    if kind == "margin":
        y = np.round(d + 0.5 * at_home + rng.normal(0.0, 2.0, n_games))
        sa, sb = np.maximum(y, 0) + 10.0, np.maximum(-y, 0) + 10.0
    else:
        sa = rng.poisson(np.exp(0.3 + (d + 0.5 * at_home) / 4)).astype(float)
        sb = rng.poisson(np.exp(0.3 - (d + 0.5 * at_home) / 4)).astype(float)
    names = np.array([f"P{i}" for i in range(n_players)])
    games = ss.Games.from_arrays(period.astype(float), names[a], names[b], neutral=~at_home, period=period,
                                 score_a=sa, score_b=sb)
    return games, d


SIDE_MODELS = {"margin": ss.SkillModel(scale=1.0, prior_var=4.0, drift=0.05, home=0.5, observation=ss.Margin(2.0)),
               "goals": ss.SkillModel(scale=2.0, prior_var=4.0, drift=0.05, home=0.5, observation=ss.Goals(0.3))}


@pytest.mark.parametrize("kind", ["margin", "goals"])
def test_margin_and_goals_graph_is_the_observations_likelihood(kind):
    """For Margin and Goals the graph's game term is sum(weight * SkillModel.loglik) of score_a and
    score_b at the skills given by z, home advantage and weights included (no sampling; PyTensor's
    Python mode); likelihood='auto' takes the graph, 'compiled' is refused."""
    model = SIDE_MODELS[kind]
    games, _ = side_score_walk(kind)
    rng = np.random.default_rng(1)
    games = games.with_weights(rng.uniform(0.5, 2.0, len(games)))
    smoother = PyMCSmoother(model, drift=0.05, prior_var=4.0, home=0.5)
    tl = timeline(games, smoother.times(games))
    pmodel, free = build_model(smoother, games, tl)  # likelihood="auto"
    assert free == []
    assert not any("WalkGamesLogp" in str(v.owner.op) for v in pmodel.potentials if v.owner)
    fn = pmodel.compile_fn(pmodel.replace_rvs_by_values(pmodel.potentials)[0], mode="FAST_COMPILE")
    z = rng.normal(size=tl.n_nodes)
    first = tl.prev < 0
    skill = segment_cumsum(first * 2.0 * z + np.sqrt(0.05 * tl.dt) * z, segment_starts(first))
    diff = skill[tl.game_a] - skill[tl.game_b] + 0.5 * ~games.neutral
    expected = np.sum(games.weight * model.loglik(games.score, diff, 0.0, games.score_a, games.score_b))
    assert float(fn({"z": z})) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="compiled"):
        build_model(smoother, games, tl, compiled=True)


def test_compiled_likelihood_is_refused_for_other_observations():
    for obs in (ss.Margin(2.0), ss.Goals(0.3)):
        with pytest.raises(ValueError, match=f"Outcome.*{type(obs).__name__}"):
            PyMCSmoother(ss.SkillModel(observation=obs), likelihood="compiled")
    m = PyMCSmoother(SIDE_MODELS["margin"], likelihood="graph")
    assert "Margin(sd=2.0" in repr(m) and m.model.observation == ss.Margin(2.0)
    games, _ = side_score_walk("margin")
    no_scores = ss.Games.from_arrays(games.time, games.a, games.b, games.score)
    with pytest.raises(ValueError, match="score_a and score_b"):
        quick(SIDE_MODELS["margin"]).fit(no_scores)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_margin_fit_recovers_the_skill_differences():
    """NUTS (graph likelihood, Laplace start) on a small Gaussian-margin stream: the posterior
    mean skill differences of the games follow the true ones, and the fitted model keeps its
    observation."""
    model = SIDE_MODELS["margin"]
    games, d = side_score_walk("margin")
    fit = quick(model, drift=0.05, prior_var=4.0, draws=100, tune=100).fit(games)
    tl = fit.timeline
    mean_d = fit.mean[tl.game_a] - fit.mean[tl.game_b]
    assert np.corrcoef(mean_d, d)[0, 1] > 0.85
    assert fit.model.observation == ss.Margin(2.0) and fit.info["free"] == ("home",)
    p = fit.predict_proba(games)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


# ---------------------------------------------------------------------------- two skills (attack and defence)
TWO = dataclasses.replace(SIDE_MODELS["goals"], openness_var=0.5, openness_drift=0.02)


def test_two_skill_graph_is_the_two_skill_likelihood():
    """With two skills the graph's game term is the sum of Goals.two_skill_loglik (the kernels' NumPy
    face) at the skills and openness of the two non-centred walks of z and z_open (no sampling)."""
    games, _ = side_score_walk("goals")
    smoother = PyMCSmoother(TWO, drift=0.05, prior_var=4.0, home=0.5)
    tl = timeline(games, smoother.times(games))
    pmodel, free = build_model(smoother, games, tl)
    assert free == [] and {v.name for v in pmodel.free_RVs} == {"z", "z_open"}
    fn = pmodel.compile_fn(pmodel.replace_rvs_by_values(pmodel.potentials)[0], mode="FAST_COMPILE")
    rng = np.random.default_rng(2)
    z, zo = rng.normal(size=tl.n_nodes), rng.normal(size=tl.n_nodes)
    first = tl.prev < 0
    start = segment_starts(first)
    skill = segment_cumsum(first * 2.0 * z + np.sqrt(0.05 * tl.dt) * z, start)
    openness = segment_cumsum(first * np.sqrt(0.5) * zo + np.sqrt(0.02 * tl.dt) * zo, start)
    d = skill[tl.game_a] - skill[tl.game_b] + 0.5 * ~games.neutral
    e = openness[tl.game_a] + openness[tl.game_b]
    expected = TWO.observation.two_skill_loglik(d, e, games.score_a, games.score_b, scale=TWO.scale)[:, 0].sum()
    assert float(fn({"z": z, "z_open": zo})) == pytest.approx(expected, rel=1e-12)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")
def test_two_skill_nuts_is_the_laplace_fit():
    """NUTS on a small league with attack and defence against the Laplace smoother's Gaussian
    approximation of the same posterior: each competitor's skill and openness means within 0.3 of
    a posterior sd, sds within 30%; the fit reports attack and defence."""
    from smoothers import LaplaceSmoother
    from smoothers._laplace_two import TwoSkillFit

    games, _ = side_score_walk("goals", n_players=6, n_games=300, periods=3, seed=3)
    fit = quick(TWO, drift=0.05, prior_var=4.0, home=0.5, draws=300, tune=200, chains=2).fit(games)
    lap = LaplaceSmoother(TWO).fit(games)
    assert isinstance(fit, TwoSkillFit) and "openness" in fit.idata.posterior
    a = fit.ratings().set_index("player")
    b = lap.ratings().set_index("player").loc[a.index]
    for col, sd in (("mean", "sd"), ("openness", "openness_sd")):
        assert np.all(np.abs(a[col] - b[col]) < 0.3 * b[sd]), (col, a[col] - b[col], b[sd])
        np.testing.assert_allclose(a[sd], b[sd], rtol=0.3)
    np.testing.assert_allclose(a["attack"] - a["defence"], a["openness"], atol=1e-12)
    p = fit.predict_proba(games)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
