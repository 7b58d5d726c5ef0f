r"""The PyMC smoother on matches of many sides: the non-centred random walk of
:mod:`smoothers._pymc_model` observed by the ranking of each match's sides, as one
``pm.Potential`` of the ranking log-likelihood written in PyTensor.

The nodes and the observation are the Laplace smoother's on matches
(:func:`smoothers._laplace_matches.match_timeline`, :func:`smoothers._laplace_match_obs.observation_of`):
side performances :math:`p_s = \sum_{k \in s} w_k s_{n(k)}`, and

- logistic link: Plackett-Luce at the match's scale :math:`c = \sqrt{n}\,\beta`,
  :math:`\beta = \alpha / \sqrt 2`, with Weng and Lin's ties,
  :math:`\ell = \sum_q (x_q - \operatorname{lse}_{s:\,r_s \ge r_q} x_s) / A_q`, :math:`x = p / c`,
  :math:`A_q` the size of side :math:`q`'s tied group (the sum over the places of
  :func:`statespace.model.ranking.pl_loglik`, written per side); each log-sum-exp is shifted by
  :math:`x_q` itself, which is exact and overflows only for sides :math:`\sim 700\,c` apart;
- probit link: TrueSkill's chain of adjacent sides (in the order of
  :func:`statespace.model.ranking.rank_order`), a win :math:`\log\Phi((d - \varepsilon) / \alpha)`,
  a tie :math:`\log(\Phi((\varepsilon - d) / \alpha) - \Phi((-\varepsilon - d) / \alpha))`.

The drift and the prior variance are fixed or inferred as for games (HalfNormal priors on their
square roots); the draw margin is the model's (not inferred on matches). NUTS starts from PyMC's
``jitter+adapt_diag`` (the Laplace start of games is not mapped for matches).
"""

from __future__ import annotations

import math
import time

import numpy as np

from statespace.data.matches import Matches
from statespace._runtime.pytensor_config import configure_pytensor

from ._laplace_match_fit import MatchSmootherFit
from ._laplace_match_obs import PLACKETT_LUCE, observation_of
from ._laplace_matches import match_timeline
from ._pymc_model import segment_cumsum, segment_starts, walk_scales

__all__ = ["ranking_layout", "ranking_loglik", "build_match_model", "fit_matches"]


def ranking_layout(matches: Matches, obs) -> dict:
    """Index arrays of the ranking likelihood: each member's side; for Plackett-Luce each side's
    scale, each (side q, side s not ahead of q) pair and each side's tie group size; for the
    chain each adjacent pair (ahead, behind) and whether it is a tie."""
    mp, rank = np.asarray(matches.match_ptr), np.asarray(matches.rank)
    n_sides = np.diff(mp)
    out = {"side_of_member": np.repeat(np.arange(matches.n_sides), np.diff(matches.side_ptr)),
           "scale": np.repeat(np.sqrt(n_sides) * obs.beta, n_sides)}  # Plackett-Luce's c of each side's match
    q_idx, s_idx, group, a_idx, b_idx, tie = [], [], np.empty(matches.n_sides), [], [], []
    for m in range(matches.n_matches):
        sides = np.arange(mp[m], mp[m + 1])
        r = rank[sides]
        for q in sides:
            behind = sides[r >= rank[q]]
            q_idx.extend([q] * behind.size)
            s_idx.extend(behind)
            group[q] = np.sum(r == rank[q])
        order = sides[np.argsort(r, kind="mergesort")]
        a_idx.extend(order[:-1])
        b_idx.extend(order[1:])
        tie.extend(rank[order[:-1]] == rank[order[1:]])
    out.update(q=np.array(q_idx, np.int64), s=np.array(s_idx, np.int64), group=group,
               a=np.array(a_idx, np.int64), b=np.array(b_idx, np.int64), tie=np.array(tie, bool))
    return out


def ranking_loglik(pm, pt, skill, node, weight, layout: dict, obs, n_sides: int):
    """The matches' ranking log-likelihood (a scalar PyTensor graph) at the node skills ``skill``
    (module docstring)."""
    perf = pt.zeros(n_sides)
    perf = pt.inc_subtensor(perf[layout["side_of_member"]], weight * skill[node])
    if obs.kind == PLACKETT_LUCE:
        x = perf / layout["scale"]
        q, s = layout["q"], layout["s"]
        shifted = pt.zeros(n_sides)
        shifted = pt.inc_subtensor(shifted[q], pt.exp(x[s] - x[q]))
        return pt.sum(-pt.log(shifted) / layout["group"])  # x_q - lse_q = -log sum_s e^(x_s - x_q)
    c, eps = obs.beta * math.sqrt(2.0), obs.eps
    std = pm.Normal.dist(0.0, 1.0)
    # wins and ties as two index sets (not a switch, whose unused branch's NaN would reach the gradient)
    a, b, tie = layout["a"], layout["b"], layout["tie"]
    d = perf[a[~tie]] - perf[b[~tie]]
    total = pt.sum(pm.logcdf(std, (d - eps) / c))
    if tie.any():
        d = perf[a[tie]] - perf[b[tie]]
        total = total + pt.sum(pm.math.logdiffexp(pm.logcdf(std, (eps - d) / c), pm.logcdf(std, (-eps - d) / c)))
    return total


def build_match_model(smoother, matches: Matches, mt, obs):
    """The PyMC model of ``matches`` on the nodes ``mt``; returns (pm model, inferred scalars)."""
    configure_pytensor(smoother.compile_dir)
    import pymc as pm
    import pytensor.tensor as pt

    m, tl = smoother._base, mt.tl
    free = []
    with pm.Model(coords={"node": np.arange(tl.n_nodes)}) as pmodel:
        drift_sd, prior_sd = walk_scales(smoother, pm, free)
        first = (tl.prev < 0).astype(float)
        z = pm.Normal("z", 0.0, 1.0, dims="node")
        inc = (first * prior_sd + drift_sd * np.sqrt(tl.dt)) * z + first * m.prior_mean
        csum = pt.cumsum(inc)
        skill = csum - pt.concatenate([pt.zeros(1), csum])[segment_starts(tl.prev < 0)]
        ll = ranking_loglik(pm, pt, skill, mt.node, np.asarray(matches.weight), ranking_layout(matches, obs), obs,
                            matches.n_sides)
        pm.Potential("matches", ll)
    return pmodel, free


def fit_matches(smoother, matches: Matches) -> MatchSmootherFit:
    """``PyMCSmoother.fit(matches)``: NUTS on the model of :func:`build_match_model`; node means and
    variances of the sampled skills in a :class:`smoothers._laplace_match_fit.MatchSmootherFit`
    (with ``idata``)."""
    if smoother.sampler not in ("nuts", "auto"):
        raise ValueError(f"{smoother.name}: matches of many sides are sampled with PyMC's NUTS (sampler='nuts'), "
                         f"not {smoother.sampler!r}")
    t0 = time.perf_counter()
    model = smoother.model
    obs = observation_of(smoother.name, model, matches)
    mt = match_timeline(matches, np.asarray(matches.time, dtype=float) / smoother.period_days)
    pmodel, free = build_match_model(smoother, matches, mt, obs)
    import pymc as pm

    init = "jitter+adapt_diag" if smoother.init == "laplace" else smoother.init
    with pmodel:
        idata = pm.sample(draws=smoother.draws, tune=smoother.tune_steps, chains=smoother.chains,
                          cores=smoother.cores, random_seed=smoother.seed, init=init,
                          target_accept=smoother.target_accept, progressbar=bool(smoother.progressbar),
                          compute_convergence_checks=False, return_inferencedata=True)
    post = idata.posterior
    nchain, ndraw = post.sizes["chain"], post.sizes["draw"]
    tl = mt.tl
    first = tl.prev < 0

    def param(name, fixed):
        return np.asarray(post[name]).reshape(nchain, ndraw, 1) if name in post else np.full((nchain, ndraw, 1), fixed)

    drift_sd = param("drift_sd", math.sqrt(smoother.drift) if smoother.drift is not None else 0.0)
    prior_sd = param("prior_sd", math.sqrt(smoother.prior_var) if smoother.prior_var is not None else 0.0)
    inc = (first * prior_sd + drift_sd * np.sqrt(tl.dt)) * np.asarray(post["z"]) + first * model.prior_mean
    skill = segment_cumsum(inc, segment_starts(first))
    post["skill"] = (("chain", "draw", "node"), skill)
    flat = skill.reshape(nchain * ndraw, tl.n_nodes)
    fitted = model
    if free:
        import dataclasses

        fitted = dataclasses.replace(model, drift=float(np.mean(drift_sd ** 2)), prior_var=float(np.mean(prior_sd ** 2)))
    info = {"sampler": "nuts", "n_nodes": tl.n_nodes, "n_matches": matches.n_matches, "chains": int(nchain),
            "draws": int(ndraw), "free": tuple(free), "seconds": time.perf_counter() - t0,
            "divergences": int(np.asarray(idata.sample_stats["diverging"]).sum())}
    fit = MatchSmootherFit(smoother, matches, mt, flat.mean(axis=0), flat.var(axis=0), fitted, obs, info=info)
    fit.idata = idata
    return fit
