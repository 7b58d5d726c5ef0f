"""PyMCSmoother with nutpie: the compiled log posterior nutpie samples, the sampler
``"auto"`` chooses, a nutpie fit against the Laplace smoother and PyMC's NUTS, and Ctrl-C.

The log-density tests need only numba and PyMC; the fits skip when nutpie (the optional extra
``fast``) is not installed.
"""

from __future__ import annotations

import os
import signal
import threading
import warnings

import numpy as np
import pytest

import statespace as ss
from smoothers._pymc_model import build_model, posterior_parts
from smoothers._walk_logp import posterior_logp
from smoothers.base import timeline
from smoothers.pymc_smoother import ConvergenceWarning, PartialSampleWarning, PyMCSmoother, SamplingInterrupted

try:
    import nutpie  # noqa: F401
    HAVE_NUTPIE = True
except ImportError:  # pragma: no cover - the optional extra
    HAVE_NUTPIE = False

needs_nutpie = pytest.mark.skipif(not HAVE_NUTPIE, reason="nutpie is not installed (pip install -e '.[fast]')")


# ---------------------------------------------------------------------------- the log density
@pytest.mark.parametrize("link, draw, fixed", [
    ("logistic", "none", {}),
    ("logistic", "half", {"drift": 0.04, "home": 0.3}),
    ("probit", "half", {"prior_var": 0.8}),
    ("logistic", ("threshold", 0.4), {}),
    ("probit", ("threshold", 0.4), {"draw_param": 0.5, "home": 0.0}),
    ("logistic", ("davidson", 0.7), {"drift": 0.04, "prior_var": 0.8}),
    ("probit", ("davidson", 0.7), {}),
])
def test_compiled_posterior_is_the_pymc_models_log_density(link, draw, fixed):
    """nutpie samples ``posterior_logp``, not the PyMC model: the two are the same function of
    PyMC's value variables (log density up to one constant, and its gradient) for every link,
    draw model and choice of fixed parameters, with home games and weights, at random points;
    and the Laplace standardisation x = shift + stretch u is applied with its chain rule."""
    model = ss.SkillModel(link, 1.3, 0.2, 1.0, drift=0.05, draw=draw, home=0.4)
    rng = np.random.default_rng(5)
    games = ss.simulate(model, n_players=6, n_games=80, days=8, home_fraction=0.5, seed=4).games.with_periods(1)
    if draw == "none":
        games = ss.simulate(ss.SkillModel(link, 1.3, 0.2, 1.0, drift=0.05, home=0.4), n_players=6, n_games=80,
                            days=8, home_fraction=0.5, seed=4).games.with_periods(1)
    games = games.with_weights(rng.uniform(0.5, 2.0, len(games)))
    smoother = PyMCSmoother(model, init="jitter+adapt_diag", **fixed)
    tl = timeline(games, smoother.times(games))
    pmodel, free = build_model(smoother, games, tl)
    parts, names, value_names = posterior_parts(smoother, games, tl, pmodel, free)
    assert names == [n for n in ("drift_sd", "prior_sd", "home", "margin", "nu") if n in free]
    values = [pmodel.rvs_to_values[pmodel[name]] for name in [*names, "z"]]
    assert [v.name for v in values] == value_names
    logp = pmodel.compile_fn(pmodel.logp(), inputs=values, mode="FAST_COMPILE", point_fn=False)
    dlogp = pmodel.compile_fn(pmodel.dlogp(), inputs=values, mode="FAST_COMPILE", point_fn=False)
    k = len(names)
    offsets = []
    rel = 1e-9 if link == "logistic" else 1e-5  # PyMC's normal_lcdf: about 1e-7 relative per game
    for _ in range(4):
        x = rng.normal(scale=0.7, size=k + tl.n_nodes)
        grad = np.empty_like(x)
        ours = posterior_logp(x, grad, *parts)
        point = [x[i] for i in range(k)] + [x[k:]]
        theirs = float(logp(*point))
        offsets.append(ours - theirs)
        expected = dlogp(*point)
        assert np.max(np.abs(grad - expected)) <= rel * (1.0 + np.max(np.abs(expected)))
    assert np.ptp(offsets) <= rel * (1.0 + abs(theirs))  # the same density up to a constant
    # the standardised coordinates: x = shift + stretch u, d/du = stretch d/dx
    shift, stretch = rng.normal(size=x.size), rng.uniform(0.2, 2.0, x.size)
    u = rng.normal(scale=0.5, size=x.size)
    g_u, g_x = np.empty_like(u), np.empty_like(u)
    lp_u = posterior_logp(u, g_u, shift, stretch, *parts[2:])
    lp_x = posterior_logp(shift + stretch * u, g_x, *parts)
    assert lp_u == pytest.approx(lp_x, rel=1e-12)
    np.testing.assert_allclose(g_u, stretch * g_x, rtol=1e-12, atol=1e-12)


def test_vectorised_exp_and_log1p_are_numpys_to_a_few_ulp():
    from smoothers._walk_logp import exp_log1p_neg_abs

    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(20_000) * s for s in (0.01, 1.0, 10.0, 300.0)]
                       + [[0.0, -0.0, 1e-300, -5e-324, 708.0, -709.0, 745.2, 1e308, -np.inf, np.inf]])
    e, l = np.empty_like(x), np.empty_like(x)
    exp_log1p_neg_abs(x, e, l, np.empty(x.size, dtype=np.int64))
    t = np.minimum(np.abs(x), 708.0)
    np.testing.assert_allclose(e, np.exp(-t), rtol=4.5e-16, atol=0)
    np.testing.assert_allclose(l, np.log1p(np.exp(-t)), rtol=7e-16, atol=0)


def test_bradley_terry_kernel_is_the_generic_one():
    """The logistic no-draw path (``bt_games_logp``, log(1 + e) in one pass) against the generic
    per-game kernel on the same games: the same log-likelihood and gradients."""
    from smoothers._walk_logp import WalkGamesLogp, bt_games_logp, walk_games_logp

    model = ss.SkillModel("logistic", 1.3, 0.2, 1.0, drift=0.05, draw="half", home=0.4)
    games = ss.simulate(model, n_players=8, n_games=300, days=12, home_fraction=0.5, seed=2).games.with_periods(1)
    tl = timeline(games, PyMCSmoother(model).times(games))
    op = WalkGamesLogp(prior_mean=0.2, first=tl.prev < 0, sqrt_dt=np.sqrt(tl.dt), node_a=tl.game_a,
                       node_b=tl.game_b, score=games.score, at_home=(~games.neutral).astype(float),
                       weight=np.linspace(0.5, 2, len(games)), link=model.link_code, draw=model.draw_code, scale=1.3)
    z = np.random.default_rng(1).normal(scale=3.0, size=tl.n_nodes)  # far tails too
    s1, g1, s2, g2 = (np.empty(tl.n_nodes) for _ in range(4))
    fast = bt_games_logp(z, 0.9, 0.3, 0.25, 0.2, op.first, op.sqrt_dt, op.bt_a, op.bt_b, op.bt_sign, op.bt_home,
                         op.bt_weight, 1 / 1.3, s1, g1)
    slow = walk_games_logp(z, 0.9, 0.3, 0.25, 0.0, 0.2, op.first, op.sqrt_dt, op.node_a, op.node_b, op.score,
                           op.at_home, op.weight, op.link, op.draw, 1.3, s2, g2)
    np.testing.assert_allclose(fast, slow[:4], rtol=1e-12)
    np.testing.assert_allclose(g1, g2, rtol=1e-11, atol=1e-13)


# ---------------------------------------------------------------------------- which sampler
def test_auto_is_nutpie_when_installed_else_pymc(monkeypatch):
    import smoothers.pymc_smoother as mod

    assert PyMCSmoother(sampler="auto").sampler_for() == ("nutpie" if HAVE_NUTPIE else "nuts")
    assert PyMCSmoother(sampler="auto", likelihood="graph").sampler_for() == "nuts"
    assert PyMCSmoother(ss.SkillModel("logistic", observation=ss.Margin(1.0)), sampler="auto").sampler_for() == "nuts"
    assert PyMCSmoother().sampler_for() == "nuts" and PyMCSmoother(sampler="nutpie").sampler_for() == "nutpie"
    monkeypatch.setattr(mod, "find_spec", lambda name: None)
    assert PyMCSmoother(sampler="auto").sampler_for() == "nuts"
    assert PyMCSmoother(sampler="auto").get_params()["sampler"] == "auto"


# ---------------------------------------------------------------------------- nutpie fits
@pytest.fixture(scope="module")
def drifting():
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.05)
    return ss.simulate(model, n_players=10, n_games=400, days=20, seed=6).games.with_periods(1)


@needs_nutpie
def test_nutpie_fit_agrees_with_laplace_and_pymc(drifting):
    """Drift and prior fixed (the Laplace smoother's model exactly): nutpie's centred posterior
    means are within Monte Carlo error of PyMC's NUTS and close to the Laplace smoother's; the
    fit is a complete one, named by the sampler it ran."""
    from smoothers import LaplaceSmoother

    opts = dict(drift=0.05, prior_var=1.0, draws=500, tune=300, chains=2, seed=3, progressbar=False)
    fit = PyMCSmoother(sampler="auto", **opts).fit(drifting)
    ref = PyMCSmoother(sampler="nuts", **opts).fit(drifting)
    lap = LaplaceSmoother(ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.05)).fit(drifting)
    assert fit.info["sampler"] == "nutpie" and ref.info["sampler"] == "nuts"
    assert fit.info["partial"] is False and (fit.info["chains"], fit.info["draws"]) == (2, 500)
    assert fit.info["divergences"] == 0 and fit.info["max_rhat"] < 1.05
    assert fit.info["sampling_seconds"] > 0 and "n_steps" in fit.idata.sample_stats

    def centred(f):
        r = f.ratings(centre=True).set_index("player")
        return r.loc[sorted(r.index), "mean"].to_numpy()

    sd = np.sqrt(np.asarray(fit.var))
    mc = sd / np.sqrt(fit.info["min_ess"])  # Monte Carlo error of a node's mean, at worst
    diff_nuts = np.abs(fit.mean - ref.mean) / sd
    assert np.max(diff_nuts) < 0.35, np.max(diff_nuts)  # two MC estimates: a few MC errors (~0.05 sd) apart
    assert np.max(np.abs(centred(fit) - centred(lap))) < 0.1
    assert np.median(np.abs(fit.mean - lap.mean) / sd) < 0.2 and np.all(mc < 0.1 * sd + 1e-12)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@needs_nutpie
def test_nutpie_infers_every_parameter_with_home_and_draws():
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.05, draw=("threshold", 0.3), home=0.3)
    games = ss.simulate(model, n_players=8, n_games=300, days=10, home_fraction=0.6, seed=2).games.with_periods(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = PyMCSmoother(model, sampler="nutpie", draws=200, tune=200, chains=2, seed=1,
                           progressbar=False).fit(games)
    post = fit.idata.posterior
    assert {"drift_sd", "prior_sd", "home", "margin", "z", "skill", "drift"} <= set(post.data_vars)
    assert fit.info["free"] == ("drift_sd", "prior_sd", "home", "margin")
    assert 0.0 < fit.model.home < 1.0 and 0.05 < fit.model.draw.theta < 1.0 and fit.info["sampler"] == "nutpie"
    proba = fit.predict_proba(games.take(range(20)))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


@needs_nutpie
def test_nutpie_same_seed_same_numbers(drifting):
    opts = dict(sampler="nutpie", draws=60, tune=60, chains=2, seed=11, progressbar=False, min_ess=1, max_rhat=10)
    a, b = (PyMCSmoother(**opts).fit(drifting) for _ in range(2))
    np.testing.assert_array_equal(a.mean, b.mean)


@needs_nutpie
def test_nutpie_ctrl_c_is_sampling_interrupted(drifting):
    """A real SIGINT while nutpie samples: nutpie stops its threads and returns what it has; the
    fit raises SamplingInterrupted (a KeyboardInterrupt) as with PyMC, and keep_partial=True keeps
    a sample cut short after tuning, marked partial."""
    import nutpie

    real = nutpie.sample
    calls = []

    def ctrl_c_later(*args, **kwargs):  # the signal once nutpie is sampling
        delay = 0.5 if not calls else 2.5
        calls.append(delay)
        threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT)).start()
        return real(*args, **kwargs)

    handler = signal.getsignal(signal.SIGINT)
    opts = dict(sampler="nutpie", draws=10**6, tune=100, chains=2, seed=1, progressbar=False, min_ess=1, max_rhat=10)
    try:
        nutpie.sample = ctrl_c_later
        with pytest.raises(SamplingInterrupted, match="interrupted") as exc:
            PyMCSmoother(**opts).fit(drifting)
        assert isinstance(exc.value, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is handler
        with pytest.warns(PartialSampleWarning, match="interrupted"):
            fit = PyMCSmoother(keep_partial=True, **opts).fit(drifting)
    finally:
        nutpie.sample = real
    assert fit.info["partial"] is True and fit.info["interrupted"] is True
    assert 0 < fit.info["draws"] < 10**6 and np.all(np.isfinite(fit.mean))
