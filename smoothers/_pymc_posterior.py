"""What a :class:`smoothers.pymc_smoother.PyMCSmoother` fit holds, read from the sampled
posterior: every node's skill in every draw (the model's non-centred walk applied to the sampled
``z``, :mod:`smoothers._pymc_model`; added to the posterior as ``skill``, with ``drift`` and
``prior_var``), the nodes' posterior means and variances, the evenly thinned draws kept for
forecasts, and the model at the posterior means of its inferred parameters."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from statespace.model.outcome import Davidson, Threshold

from ._pymc_model import segment_cumsum, segment_starts

__all__ = ["posterior_summary", "openness_summary"]


def posterior_summary(smoother, idata, tl):
    """``(mean, var, draws, model)`` of a fit of ``smoother`` on the timeline ``tl`` from its
    sampled ``idata`` (whose posterior gains ``skill``, ``drift`` and ``prior_var``): each node's
    posterior mean and variance, up to ``keep_draws`` draws of every node, and the smoother's
    model with the posterior means of the inferred parameters (the given values of fixed ones)."""
    post = idata.posterior
    m = smoother._base
    first = tl.prev < 0
    start = segment_starts(first)
    nchain, ndraw = post.sizes["chain"], post.sizes["draw"]

    def param(name, fixed):
        if name in post:
            return np.asarray(post[name]).reshape(nchain, ndraw, 1)
        return np.full((nchain, ndraw, 1), fixed)

    drift_sd = param("drift_sd", math.sqrt(smoother.drift) if smoother.drift is not None else 0.0)
    prior_sd = param("prior_sd", math.sqrt(smoother.prior_var) if smoother.prior_var is not None else 0.0)
    z = np.asarray(post["z"])
    inc = (first * prior_sd + drift_sd * np.sqrt(tl.dt)) * z + first * m.prior_mean  # as in the model
    skill = segment_cumsum(inc, start)
    post["skill"] = (("chain", "draw", "node"), skill)
    post["drift"] = (("chain", "draw"), drift_sd[..., 0] ** 2)
    post["prior_var"] = (("chain", "draw"), prior_sd[..., 0] ** 2)

    flat = skill.reshape(nchain * ndraw, tl.n_nodes)
    mean = flat.mean(axis=0)
    var = flat.var(axis=0)
    keep = np.unique(np.linspace(0, flat.shape[0] - 1, min(smoother.keep_draws, flat.shape[0])).round().astype(int))
    draws = np.ascontiguousarray(flat[keep])

    home = float(post["home"].mean()) if "home" in post else (smoother.home if smoother.home is not None else m.home)
    draw = m.draw
    if isinstance(draw, Threshold):
        draw = Threshold(float(post["margin"].mean()) if "margin" in post else smoother.draw_param)
    elif isinstance(draw, Davidson):
        draw = Davidson(float(post["nu"].mean()) if "nu" in post else smoother.draw_param)
    fitted = dataclasses.replace(m, prior_var=float(post["prior_var"].mean()), drift=float(post["drift"].mean()),
                                 draw=draw, home=home)
    return mean, var, draws, fitted


def openness_summary(smoother, idata, tl) -> tuple[np.ndarray, np.ndarray]:
    """Two skills per competitor: each node's openness in every draw (the walk of the sampled
    ``z_open``, added to the posterior as ``openness``) and its posterior mean and variance."""
    post = idata.posterior
    m = smoother._base
    first = tl.prev < 0
    inc = (first * math.sqrt(m.openness_var) + math.sqrt(m.openness_drift) * np.sqrt(tl.dt)) * np.asarray(post["z_open"])
    openness = segment_cumsum(inc, segment_starts(first))
    post["openness"] = (("chain", "draw", "node"), openness)
    flat = openness.reshape(-1, tl.n_nodes)
    return flat.mean(axis=0), flat.var(axis=0)
