"""The PyMC smoother on matches of many sides (smoothers._pymc_matches): the PyTensor ranking
log-likelihood against the Laplace smoother's compiled one, and a small team history's posterior
means against the Laplace fit's.

Slow (PyMC's import and PyTensor's compilation, then NUTS): they run when STATESPACE_SLOW=1 is set
(the project registers no ``slow`` marker, and the suite's time budget is spent)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from statespace.data.matches import Matches
from statespace.model.skillmodel import SkillModel
from smoothers import LaplaceSmoother, PyMCSmoother

from test_laplace_matches import FRAME

slow = pytest.mark.skipif(os.environ.get("STATESPACE_SLOW") != "1",
                          reason="slow (PyMC compile and sampling): set STATESPACE_SLOW=1 to run")


@slow
@pytest.mark.parametrize("model", [SkillModel("logistic", 1.0, 0.0, 1.0, 0.3, "half"),
                                   SkillModel("probit", 0.8, 0.0, 1.0, 0.3, ("threshold", 0.3))])
def test_pytensor_ranking_loglik_is_the_laplace_kernels(model):
    import pymc as pm
    import pytensor
    import pytensor.tensor as pt

    from smoothers._laplace_match_obs import observation_of
    from smoothers._laplace_matches import _Objective, match_timeline
    from smoothers._pymc_matches import ranking_layout, ranking_loglik

    matches = Matches.from_long(FRAME)
    obs = observation_of("test", model, matches)
    mt = match_timeline(matches, np.asarray(matches.time))
    skill = pt.vector("skill")
    ll = ranking_loglik(pm, pt, skill, mt.node, np.asarray(matches.weight), ranking_layout(matches, obs), obs,
                        matches.n_sides)
    f = pytensor.function([skill], [ll, pytensor.grad(ll, skill)], mode="FAST_COMPILE")
    for seed in range(3):
        x = np.random.default_rng(seed).normal(size=mt.tl.n_nodes)
        value, grad = f(x)
        ref, ref_grad, _ = _Objective(matches, mt, obs)(x)
        np.testing.assert_allclose(value, ref, rtol=1e-7)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-6, atol=1e-7)


@slow
def test_pymc_posterior_means_on_team_matches_match_the_laplace_fit():
    import arviz as az

    model = SkillModel("logistic", 1.0, 0.0, 1.0, 0.3, "half")
    matches = Matches.from_long(FRAME)
    laplace = LaplaceSmoother(model).fit(matches)
    pymc = PyMCSmoother(model, drift=0.3, prior_var=1.0, draws=1000, tune=500, chains=2, cores=1, seed=7,
                        progressbar=False).fit(matches)
    np.testing.assert_array_equal(pymc.timeline.node_player, laplace.timeline.node_player)
    ess = np.asarray(az.ess(pymc.idata, var_names=["skill"])["skill"])
    sd = np.sqrt(pymc.var)
    mcse = sd / np.sqrt(ess)
    # the Laplace mean is the mode: a posterior this close to Gaussian puts its mean within a tenth
    # of an sd of it; the rest is Monte Carlo error
    assert np.all(np.abs(pymc.mean - laplace.mean) <= 4 * mcse + 0.1 * sd), np.abs(pymc.mean - laplace.mean) / sd
    np.testing.assert_allclose(sd, np.sqrt(laplace.var), rtol=0.15)
    assert pymc.info["divergences"] == 0
    assert np.all(np.isfinite(pymc.perf_mean)) and pymc.match_forecast().kind == "plackett_luce"
