"""The PyMC model of :class:`smoothers.pymc_smoother.PyMCSmoother` and its Laplace start.

The non-centred random walk. There is one skill variable ("node") per competitor and distinct
time at which it plays (``smoothers.base.timeline``). Sampling the skills themselves is hard for
NUTS in two ways: with the drift inferred, the funnel of hierarchical models (the scale of every
step depends on ``sigma_drift``); and even with the drift fixed, neighbouring nodes of one
competitor are tied far more tightly by the random walk than the games inform them, a long narrow
ridge (Papaspiliopoulos, Roberts and Sköld 2007; notebook 6 measures it). Instead the sampler moves independent standard normals ``z``, one per node, and the
skills are a deterministic function of them: with the nodes in one flat vector sorted by
competitor then time,

    increment_k = prior_mean + sigma_prior z_k          if k is a competitor's first node
                  sigma_drift sqrt(dt_k) z_k            otherwise
    skill       = segment cumsum of the increments      (restarting at every first node)

computed as ``cumsum(increment) - C[start_k]``, where ``C`` is the cumulative sum with a leading 0
and ``start_k`` the index of the first node of node k's competitor: one cumulative sum over all
nodes, no per-competitor loop and no ``[time, competitor]`` matrix (which would be mostly empty
when competitors play at different times).

The games' log-likelihood is either one compiled Op (``smoothers._walk_logp``: the walk, every
game and the chain rule back through the walk; PyMC's NUTS and ADVI;
:class:`statespace.Outcome` observations only) or the plain PyTensor
graph below (:func:`graph_walk_loglik`), which NumPyro compiles to JAX, the tests use as the
Op's reference, and :class:`statespace.Margin` and :class:`statespace.Goals` models use. The
graph writes no likelihood formula of its own: each game's term is the observation's
``symbolic_loglik``, and the graph sums them.

The Laplace start (:func:`laplace_point`, :func:`laplace_start`): the Laplace smoother's
Gaussian approximation mapped to the sampler's coordinates gives each chain's initial point and
NUTS's initial diagonal mass matrix.

nutpie (:func:`nutpie_model`) samples the same model without PyTensor: the whole log posterior
is ``smoothers._walk_logp.posterior_logp``, in coordinates standardised by the Laplace start.
"""

from __future__ import annotations

import math

import numpy as np

from statespace.data.games import Games
from statespace.model.outcome import Outcome
from statespace.model.skillmodel import SkillModel
from statespace.model import numeric as nx
from statespace.model.outcome import Davidson, Threshold

from statespace._runtime.pytensor_config import configure_pytensor

__all__ = ["segment_starts", "segment_cumsum", "walk_scales", "build_model", "graph_walk_loglik", "graph_loglik", "laplace_point",
           "laplace_start", "posterior_parts", "nutpie_model"]


def segment_starts(first: np.ndarray) -> np.ndarray:
    """Index of the segment start of every element, given a boolean mask of segment starts
    (``first[0]`` must be True)."""
    idx = np.where(first, np.arange(first.size), 0)
    return np.maximum.accumulate(idx)


def segment_cumsum(x: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``x`` along the last axis restarting at each segment (NumPy; the
    same formula as the PyTensor graph): ``cumsum(x) - C[start]``, ``C`` with a leading 0."""
    c = np.cumsum(x, axis=-1)
    c0 = np.concatenate([np.zeros(x.shape[:-1] + (1,)), c], axis=-1)
    return c - c0[..., start]


def walk_scales(smoother, pm, free: list):
    """The walk's ``(drift_sd, prior_sd)`` inside a PyMC model: each fixed (the smoother's value)
    or a HalfNormal random variable (its name appended to ``free``)."""
    s, ps = smoother._base.scale, smoother.prior_scales
    if smoother.drift is None:
        drift_sd = pm.HalfNormal("drift_sd", sigma=ps["drift_sd"] * s)
        free.append("drift_sd")
    else:
        drift_sd = np.float64(math.sqrt(smoother.drift))
    if smoother.prior_var is None:
        prior_sd = pm.HalfNormal("prior_sd", sigma=ps["prior_sd"] * s)
        free.append("prior_sd")
    else:
        prior_sd = np.float64(math.sqrt(smoother.prior_var))
    return drift_sd, prior_sd


def build_model(smoother, games: Games, tl, compiled: bool | None = None):
    """The PyMC model; returns (pm model, names of the inferred scalar parameters).

    ``compiled``: the games' log-likelihood as one compiled Op (``_walk_logp``; the default
    for PyMC's own NUTS and ADVI, :class:`statespace.Outcome` observations only)
    or as a plain PyTensor graph (the default for numpyro, which compiles the graph to JAX, and
    for other observations); ``None``: as ``smoother.likelihood`` says."""
    m = smoother._base
    outcome = isinstance(m.observation, Outcome)
    if compiled is None:
        compiled = smoother.likelihood == "compiled" or (smoother.likelihood == "auto" and outcome
                                                         and smoother.sampler != "numpyro")
    if compiled and not outcome:
        raise ValueError(f"the compiled likelihood Op is written for Outcome observations (win/draw/loss); "
                         f"the model observes {m.observation!r}: use likelihood='graph' or 'auto'")
    configure_pytensor(smoother.compile_dir)  # before the first import of pytensor (idempotent)
    import pymc as pm
    import pytensor.tensor as pt

    s = m.scale
    ps = smoother.prior_scales
    at_home = ~games.neutral
    code = m.draw_code if outcome else nx.DRAW_NONE  # only an Outcome has a draw parameter
    free = []
    with pm.Model(coords={"node": np.arange(tl.n_nodes)}) as pmodel:
        drift_sd, prior_sd = walk_scales(smoother, pm, free)
        if smoother.home is not None:
            home = smoother.home
        elif at_home.any():
            home = pm.Normal("home", mu=m.home, sigma=ps["home"] * s)
            free.append("home")
        else:
            home = m.home
        use_home = bool(at_home.any()) and not (isinstance(home, float) and home == 0.0)
        theta = None
        fixed_theta = None if smoother.draw_param is None else np.float64(smoother.draw_param)  # not float32
        if code == nx.DRAW_THRESHOLD:
            theta = fixed_theta if fixed_theta is not None else pm.HalfNormal("margin", sigma=ps["margin"] * s)
        elif code == nx.DRAW_DAVIDSON:
            theta = fixed_theta if fixed_theta is not None else pm.HalfNormal("nu", sigma=ps["nu"])
        if theta is not None and smoother.draw_param is None:
            free.append("margin" if code == nx.DRAW_THRESHOLD else "nu")

        z = pm.Normal("z", 0.0, 1.0, dims="node")
        # two skills: the openness's own non-centred walk, N(0, openness_var) at a first node
        z_open = pm.Normal("z_open", 0.0, 1.0, dims="node") if m.two_skills else None
        if compiled:
            from ._walk_logp import WalkGamesLogp

            op = WalkGamesLogp(prior_mean=m.prior_mean, first=tl.prev < 0, sqrt_dt=np.sqrt(tl.dt),
                               node_a=tl.game_a, node_b=tl.game_b, score=games.score,
                               at_home=at_home if use_home else np.zeros(len(games)), weight=games.weight,
                               link=m.link_code, draw=code, scale=s)
            ll = op(z, prior_sd, drift_sd, home if use_home else 0.0, theta if theta is not None else 0.0)[0]
        else:
            ll = graph_walk_loglik(m, pm, pt, games, tl, z, prior_sd, drift_sd, home if use_home else None, theta,
                                   z_open)
        pm.Potential("games", ll)
    return pmodel, free

def graph_walk_loglik(model: SkillModel, pm, pt, games: Games, tl, z, prior_sd, drift_sd, home, theta, z_open=None):
    """The games' log-likelihood as a plain PyTensor graph of ``z`` (the reference the compiled
    Op is tested against, what numpyro compiles, and the only form for observations other than
    :class:`statespace.Outcome`): the non-centred walk (module docstring), then
    :func:`graph_loglik`. All data enter as ``pm.Data`` (shared variables without static
    shapes), so the compiled code does not depend on the data and PyTensor's cache serves every
    data set. ``z_open`` (two skills per competitor): the openness's standard normals, the same walk
    with prior mean 0, sd ``sqrt(openness_var)`` and drift ``openness_drift``."""
    first = tl.prev < 0
    first_d = pm.Data("first", first.astype(float))
    sqrt_dt = pm.Data("sqrt_dt", np.sqrt(tl.dt))
    start = pm.Data("start", segment_starts(first))
    # non-centred random walk, one flat vector of nodes sorted by competitor then time:
    # increments, then one cumulative sum restarted at each competitor's first node
    # (dt = 0 at first nodes, so one scale per node covers both cases)
    inc = (first_d * prior_sd + drift_sd * sqrt_dt) * z + first_d * model.prior_mean
    csum = pt.cumsum(inc)
    skill = csum - pt.concatenate([pt.zeros(1), csum])[start]
    openness = None
    if z_open is not None:
        inc_o = (first_d * math.sqrt(model.openness_var) + math.sqrt(model.openness_drift) * sqrt_dt) * z_open
        csum_o = pt.cumsum(inc_o)
        openness = csum_o - pt.concatenate([pt.zeros(1), csum_o])[start]
    return graph_loglik(model, pm, pt, games, tl, skill, home, theta, openness)

def graph_loglik(model: SkillModel, pm, pt, games: Games, tl, skill, home, theta, openness=None):
    """The games' log-likelihood (a scalar graph) at the node skills ``skill``:
    ``sum_g w_g l_g(d_g)``, ``d_g = skill[a_g] - skill[b_g] + home [a at home]``, with ``l_g`` the
    observation's per-game PyTensor log-likelihood (``model.observation.symbolic_loglik``: the
    formulas live in the observation modules) and ``w_g`` the game's weight (tempered, as the
    filters do; left out when every weight is 1). ``home``: ``None`` when no game has a home
    advantage; ``theta``: the draw parameter of an :class:`statespace.Outcome` (``None``: the
    observation's own); ``openness`` (two skills): each node's openness, the game's goal-rate shift
    the two sides' sum."""
    obs = model.observation
    at_home = ~games.neutral
    d = skill[pm.Data("node_a", tl.game_a)] - skill[pm.Data("node_b", tl.game_b)]
    if home is not None and at_home.any():
        d = d + home * pm.Data("at_home", at_home.astype(float))
    score = pm.Data("score", games.score)
    score_a = score_b = None
    if obs.needs_scores:
        score_a, score_b = pm.Data("score_a", games.score_a), pm.Data("score_b", games.score_b)
    kw = {}
    if openness is not None:
        kw["shift"] = openness[pm.Data("node_a_open", tl.game_a)] + openness[pm.Data("node_b_open", tl.game_b)]
    terms = obs.symbolic_loglik(d, score, score_a, score_b, scale=model.scale, theta=theta, **kw)
    if np.any(games.weight != 1.0):
        return pt.sum(pm.Data("weight", games.weight) * terms)
    return pt.sum(terms)

def laplace_point(smoother, games: Games, tl, pmodel) -> tuple[dict, dict]:
    """The Laplace approximation in the sampler's coordinates: (mean, variance) per value
    variable of ``pmodel``, from :class:`smoothers.LaplaceSmoother` fitted to the same model.

    A first node's z is (s - prior_mean) / sigma_prior with variance var(s) / sigma_prior^2; a
    later node's z is the step (s_k - s_k-1) / (sigma_drift sqrt(dt)), with variance
    (var(s_k) + var(s_k-1) - 2 cov(s_k, s_k-1)) / (sigma_drift^2 dt) from the smoother's
    neighbour covariances (``info["prev_cov"]``); both capped at the prior's 1. Scalars: the Laplace
    values (the drift by type-II maximum likelihood when it is inferred, the rest the model's)
    with variance 0.1^2 on their sampling scale (log for the positive ones)."""
    import dataclasses

    from .laplace import LaplaceSmoother

    m = smoother._base
    draw = m.draw
    if smoother.draw_param is not None and isinstance(draw, (Threshold, Davidson)):
        draw = type(draw)(smoother.draw_param)
    model = dataclasses.replace(m, prior_var=smoother.prior_var if smoother.prior_var is not None else m.prior_var,
                                home=smoother.home if smoother.home is not None else m.home, draw=draw)
    # two skills: the Laplace smoother's drift evidence is of one skill, so it starts at the model's drift
    auto = "auto" if not m.two_skills else m.drift
    lap = LaplaceSmoother(model, drift=auto if smoother.drift is None else smoother.drift,
                          period_days=smoother.period_days).fit(games)
    if lap.timeline.n_nodes != tl.n_nodes:  # pragma: no cover - the same timeline by construction
        raise RuntimeError("Laplace start: the smoother's nodes differ from the sampler's")
    first = tl.prev < 0
    prior_sd = math.sqrt(lap.model.prior_var)
    drift_sd = math.sqrt(lap.model.drift)
    step_sd = np.where(first, prior_sd, drift_sd * np.sqrt(tl.dt))
    step = np.where(first, lap.mean - m.prior_mean, lap.mean - lap.mean[np.maximum(tl.prev, 0)])
    ok = step_sd > 0
    z = np.where(ok, step / np.where(ok, step_sd, 1.0), 0.0)
    prev = np.maximum(tl.prev, 0)
    # without the neighbours' covariance (the two-skill fit keeps none) the steps' variance is overstated
    prev_cov = np.nan_to_num(lap.info.get("prev_cov", np.zeros(tl.n_nodes)))
    step_var = np.where(first, lap.var, lap.var + lap.var[prev] - 2.0 * prev_cov)
    z_var = np.where(ok, np.clip(step_var / np.where(ok, step_sd, 1.0) ** 2, 1e-4, 1.0), 1.0)
    s = m.scale
    start = {"drift_sd_log__": math.log(max(drift_sd, 1e-3 * s)), "prior_sd_log__": math.log(max(prior_sd, 1e-3 * s)),
             "home": model.home, "margin_log__": math.log(max(model.draw.theta, 1e-3 * s)),
             "nu_log__": math.log(max(model.draw.theta, 1e-3)), "z": z}
    variance = {"home": (0.1 * s) ** 2, "z": z_var}
    if m.two_skills:  # the openness's steps, as the skill's (prior mean 0)
        o_sd = np.where(first, math.sqrt(m.openness_var), math.sqrt(m.openness_drift) * np.sqrt(tl.dt))
        o_step = np.where(first, lap.open_mean, lap.open_mean - lap.open_mean[prev])
        o_ok = o_sd > 0
        start["z_open"] = np.where(o_ok, o_step / np.where(o_ok, o_sd, 1.0), 0.0)
        o_var = np.where(first, lap.open_var, lap.open_var + lap.open_var[prev])
        variance["z_open"] = np.where(o_ok, np.clip(o_var / np.where(o_ok, o_sd, 1.0) ** 2, 1e-4, 1.0), 1.0)
    names = [v.name for v in pmodel.continuous_value_vars]
    return ({n: start[n] for n in names}, {n: variance.get(n, 0.01) for n in names})

def laplace_start(smoother, games: Games, tl, pmodel, rng: np.random.Generator):
    """NUTS's step (diagonal mass matrix seeded with the Laplace variances) and one initial
    point per chain, each a draw from the Laplace approximation (:meth:`_laplace_point`), so
    the chains start dispersed, as r-hat assumes."""
    from pymc.step_methods.hmc.quadpotential import QuadPotentialDiagAdapt

    import pymc as pm

    mean, var = laplace_point(smoother, games, tl, pmodel)
    flat_mean = np.concatenate([np.atleast_1d(v) for v in mean.values()])
    flat_var = np.concatenate([np.broadcast_to(var[n], np.shape(np.atleast_1d(mean[n]))) for n in mean])
    potential = QuadPotentialDiagAdapt(flat_mean.size, flat_mean, flat_var, 10)
    nuts = pm.NUTS(vars=pmodel.continuous_value_vars, potential=potential, target_accept=smoother.target_accept,
                   model=pmodel)
    inits = [{n: mean[n] + np.sqrt(var[n]) * rng.standard_normal(np.shape(mean[n])) for n in mean}
             for _ in range(smoother.chains)]
    return nuts, inits


def posterior_parts(smoother, games: Games, tl, pmodel, free):
    """What :func:`smoothers._walk_logp.posterior_logp` takes after ``(u, grad)``: ``(shift,
    stretch, slots, fixed, priors, *data)``, with ``names`` (the inferred scalars in the order
    of the sampler's coordinates, then ``z``) and the value variables' names; see
    :func:`nutpie_model`. The coordinates are standardised by the Laplace approximation when
    ``smoother.init == "laplace"``, else ``x = u`` (``shift`` 0, ``stretch`` 1)."""
    from ._walk_logp import WalkGamesLogp

    m = smoother._base
    s = m.scale
    ps = smoother.prior_scales
    at_home = ~games.neutral
    code = m.draw_code
    home_fixed = smoother.home if smoother.home is not None else float(m.home)
    use_home = bool(at_home.any()) and not ("home" not in free and home_fixed == 0.0)
    theta_name = "margin" if code == nx.DRAW_THRESHOLD else "nu" if code == nx.DRAW_DAVIDSON else None
    order = ["drift_sd", "prior_sd", "home", theta_name]
    names = [name for name in order if name is not None and name in free]
    if sorted(names) != sorted(free):  # pragma: no cover - build_model's parameters by construction
        raise RuntimeError(f"nutpie model: parameters {free} are not {names}")
    slots = np.array([names.index(n) if n in names else -1 for n in order] + [len(names)], dtype=np.int64)
    fixed = np.array([math.sqrt(smoother.drift) if smoother.drift is not None else 0.0,
                      math.sqrt(smoother.prior_var) if smoother.prior_var is not None else 0.0,
                      home_fixed if use_home else 0.0,
                      smoother.draw_param if smoother.draw_param is not None else 0.0])
    priors = np.array([ps["drift_sd"] * s, ps["prior_sd"] * s, float(m.home), ps["home"] * s,
                       ps["margin"] * s if code == nx.DRAW_THRESHOLD else ps["nu"]])
    op = WalkGamesLogp(prior_mean=m.prior_mean, first=tl.prev < 0, sqrt_dt=np.sqrt(tl.dt), node_a=tl.game_a,
                       node_b=tl.game_b, score=games.score, at_home=at_home if use_home else np.zeros(len(games)),
                       weight=games.weight, link=m.link_code, draw=code, scale=s)
    bt = op.bradley_terry
    empty_i, empty_f = np.zeros(0, dtype=np.int64), np.zeros(0)
    data = (op.prior_mean, op.first, op.sqrt_dt, op.node_a, op.node_b, op.score, op.at_home, op.weight, op.link,
            op.draw, op.scale, bt, op.bt_a if bt else empty_i, op.bt_b if bt else empty_i,
            op.bt_sign if bt else empty_f, op.bt_home if bt else empty_f, op.bt_weight if bt else empty_f)
    value_names = [{"drift_sd": "drift_sd_log__", "prior_sd": "prior_sd_log__", "home": "home",
                    "margin": "margin_log__", "nu": "nu_log__"}[n] for n in names] + ["z"]
    n_x = len(names) + tl.n_nodes
    if smoother.init == "laplace":
        mean, var = laplace_point(smoother, games, tl, pmodel)
        shift = np.concatenate([np.atleast_1d(mean[v]) for v in value_names]).astype(float)
        stretch = np.sqrt(np.concatenate([np.broadcast_to(var[v], np.shape(np.atleast_1d(mean[v])))
                                          for v in value_names]).astype(float))
    else:
        shift, stretch = np.zeros(n_x), np.ones(n_x)
    return (shift, stretch, slots, fixed, priors, *data), names, value_names


def nutpie_model(smoother, games: Games, tl, pmodel, free, seed):
    """The model of :func:`build_model` for nutpie, without PyTensor: nutpie's Rust NUTS calls
    :func:`smoothers._walk_logp.posterior_logp` (the whole log posterior and its gradient, one
    cached numba function, the GIL released) through ``nutpie.from_pyfunc``, so nothing is
    compiled per fit (``nutpie.compile_pymc_model`` compiles the PyTensor graph to numba on every
    fit; docs/benchmarks.md has the cost). :class:`statespace.Outcome` observations only, as the
    compiled Op.

    With ``init="laplace"`` the sampler's coordinates are standardised by the Laplace
    approximation (:func:`laplace_point`: PyMC's value variables ``x = mean + sd u``) and every
    chain starts at a draw of it, ``u ~ N(0, I)``; otherwise ``x = u``, starting from PyMC's
    initial point with a uniform(-1, 1) jitter, as PyMC's ``jitter+adapt_diag``. The posterior
    holds the same variables, under the same names, as PyMC's (``drift_sd``, ``prior_sd``,
    ``home``, ``margin`` or ``nu`` where inferred, and ``z``). ``free``: :func:`build_model`'s
    inferred scalar parameters; ``tests/test_pymc_nutpie.py`` checks that the density is the
    PyMC model's. Returns the ``nutpie`` model."""
    from nutpie.compiled_pyfunc import from_pyfunc

    from ._walk_logp import posterior_logp

    parts, names, value_names = posterior_parts(smoother, games, tl, pmodel, free)
    shift, stretch = parts[0], parts[1]
    n_x = shift.size
    k = len(names)
    if smoother.init == "laplace":
        start = np.zeros(n_x)
    else:
        point = pmodel.initial_point()
        start = np.concatenate([np.atleast_1d(point[v]) for v in value_names]).astype(float)

    def make_logp():
        def logp(u, **_):
            grad = np.empty(n_x)
            return posterior_logp(u, grad, *parts), grad
        return logp

    def make_expand(*_):
        def expand(u, **_):
            x = shift + stretch * np.asarray(u)
            out = {n: np.asarray(x[i] if n == "home" else math.exp(x[i])) for i, n in enumerate(names)}
            out["z"] = x[k:]
            return out
        return expand

    def initial_point(chain_seed):
        rng = np.random.default_rng([0 if seed is None else int(seed), int(chain_seed)])
        if smoother.init == "laplace":
            return rng.standard_normal(n_x)  # a draw of the Laplace approximation
        return start + rng.uniform(-1.0, 1.0, n_x)

    return from_pyfunc(n_x, make_logp, make_expand, [np.dtype("float64")] * (k + 1), [()] * k + [(tl.n_nodes,)],
                       names + ["z"], coords={"node": np.arange(tl.n_nodes)}, dims={"z": ("node",)},
                       make_initial_point_fn=initial_point)
