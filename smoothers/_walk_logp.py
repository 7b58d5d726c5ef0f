"""The random-walk model's log-likelihood and gradient as one compiled PyTensor Op.

Why: PyMC's NUTS spends nearly all its time in the gradient of the log density, and the plain
PyTensor graph of the model (a segmented cumulative sum for the non-centred walk, gathers of
the two competitors' skills, the link's log cdf, scatters back, the reversed cumulative sum
of the gradient) runs as many separate C loops over the nodes and games per leapfrog step.
Here one numba loop does all of it, forward and backward, in one pass each, using the same
scalar log-likelihood as the rest of the project (``statespace._numeric.loglik_grad``; for the
logistic link without a draw parameter its array form,
``statespace._numeric.log_sigmoid_and_grad_array``); docs/benchmarks.md has the speed-up.

The Op is written for :class:`statespace.Outcome` observations (win/draw/loss through a link
and a draw model, passed as their codes); :class:`statespace.Margin` and
:class:`statespace.Goals` models go through the PyTensor graph of ``_pymc_model``.

The model (DESIGN.md; ``smoothers._pymc_model`` explains the non-centred form): nodes sorted
by competitor then time, ``first`` marks each competitor's first node, ``dt`` the time since
the competitor's previous node (0 at first nodes),

    increment_k = (first_k prior_sd + drift_sd sqrt(dt_k)) z_k + first_k prior_mean
    skill_k     = sum of the increments of the competitor's nodes up to k
    log L       = sum_g w_g l(score_g, skill_a(g) - skill_b(g) + home at_home_g)

and the gradient follows by the chain rule: dlogL/dincrement_k is the sum of dlogL/dskill over
the competitor's nodes from k on (a reversed cumulative sum), from which the gradients in
``z``, ``prior_sd`` and ``drift_sd`` are one product each.

The pure PyTensor graph stays in ``_pymc_model`` for the samplers that compile the graph
themselves (nutpie to numba, numpyro to JAX), and the tests check that both give the same
log density and gradient.

Importing this module imports PyTensor: ``pymc_smoother`` imports it only after pointing
PyTensor's compile directory where it belongs (``statespace._pytensor_config``).
"""

from __future__ import annotations

import numpy as np
from numba import njit
import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from statespace import _numeric as nx

__all__ = ["walk_games_logp", "WalkGamesLogp"]


@njit(cache=True)
def walk_forward(z, prior_sd, drift_sd, prior_mean, first, sqrt_dt, skill):
    """skill = the segmented cumulative sum of the increments (module docstring)."""
    acc = 0.0
    for k in range(z.shape[0]):
        inc = (first[k] * prior_sd + drift_sd * sqrt_dt[k]) * z[k] + first[k] * prior_mean
        acc = inc if first[k] else acc + inc
        skill[k] = acc


@njit(cache=True)
def walk_backward(g_skill, z, prior_sd, drift_sd, first, sqrt_dt, g_z):
    """Chain rule through :func:`walk_forward`: from d logL / d skill (``g_skill``) to d logL / dz
    (written into ``g_z``, which may be ``g_skill`` itself); returns (d/dprior_sd, d/ddrift_sd)."""
    g_prior = 0.0
    g_drift = 0.0
    acc = 0.0
    for k in range(z.shape[0] - 1, -1, -1):
        acc += g_skill[k]  # d logL / d increment_k: the competitor's later nodes all move with it
        g_prior += first[k] * z[k] * acc
        g_drift += sqrt_dt[k] * z[k] * acc
        g_z[k] = acc * (first[k] * prior_sd + drift_sd * sqrt_dt[k])
        if first[k]:
            acc = 0.0
    return g_prior, g_drift


@njit(cache=True)
def walk_games_logp(z, prior_sd, drift_sd, home, theta, prior_mean, first, sqrt_dt, node_a, node_b, score,
                    at_home, weight, link, draw, scale, skill, g_z):
    """Log-likelihood of the games given the standardised increments ``z``, for any link and
    draw model (through ``statespace._numeric.loglik_grad``); writes the skills into ``skill``
    and d logL / dz into ``g_z``; returns
    ``(logL, dlogL/dprior_sd, dlogL/ddrift_sd, dlogL/dhome, dlogL/dtheta)``."""
    walk_forward(z, prior_sd, drift_sd, prior_mean, first, sqrt_dt, skill)
    g_z[:] = 0.0  # d logL / d skill until the backward pass
    ll = 0.0
    g_home = 0.0
    g_theta = 0.0
    for i in range(score.shape[0]):
        a = node_a[i]
        b = node_b[i]
        lv, gd, gt = nx.loglik_grad(link, draw, theta, score[i], skill[a] - skill[b] + home * at_home[i], scale)
        w = weight[i]
        ll += w * lv
        gd *= w
        g_z[a] += gd
        g_z[b] -= gd
        g_home += gd * at_home[i]
        g_theta += w * gt
    g_prior, g_drift = walk_backward(g_z, z, prior_sd, drift_sd, first, sqrt_dt, g_z)
    return ll, g_prior, g_drift, g_home, g_theta


@njit(cache=True)
def walk_oriented_diffs(z, prior_sd, drift_sd, home, prior_mean, first, sqrt_dt, node_a, node_b, sign, at_home,
                        scale, skill, x):
    """Forward pass of the Bradley-Terry path: skills, then x_i = sign_i (s_a - s_b + home
    at_home_i) / scale for every oriented game (see :class:`WalkGamesLogp`)."""
    walk_forward(z, prior_sd, drift_sd, prior_mean, first, sqrt_dt, skill)
    for i in range(x.shape[0]):
        x[i] = sign[i] * (skill[node_a[i]] - skill[node_b[i]] + home * at_home[i]) / scale


@njit(cache=True)
def walk_scatter_backward(gd, node_a, node_b, at_home, z, prior_sd, drift_sd, first, sqrt_dt, g_z):
    """Backward pass of the Bradley-Terry path, from d logL / d diff of every oriented game:
    returns (d/dprior_sd, d/ddrift_sd, d/dhome) and writes d logL / dz into ``g_z``."""
    g_z[:] = 0.0
    g_home = 0.0
    for i in range(gd.shape[0]):
        g_z[node_a[i]] += gd[i]
        g_z[node_b[i]] -= gd[i]
        g_home += gd[i] * at_home[i]
    g_prior, g_drift = walk_backward(g_z, z, prior_sd, drift_sd, first, sqrt_dt, g_z)
    return g_prior, g_drift, g_home


class WalkGamesLogp(Op):
    """``op(z, prior_sd, drift_sd, home, theta)`` -> ``[logL, dlogL/dz, dlogL/dprior_sd,
    dlogL/ddrift_sd, dlogL/dhome, dlogL/dtheta]``; its gradient is the stored outputs, so a
    logp-and-gradient evaluation runs the compiled loop once. The data (timeline and games)
    are fixed attributes of the Op, so two Ops never compare equal (no ``__props__``)."""

    def __init__(self, *, prior_mean, first, sqrt_dt, node_a, node_b, score, at_home, weight, link, draw,
                 scale):
        self.prior_mean = float(prior_mean)
        self.first = np.ascontiguousarray(first, dtype=np.float64)
        self.sqrt_dt = np.ascontiguousarray(sqrt_dt, dtype=np.float64)
        self.node_a = np.ascontiguousarray(node_a, dtype=np.int64)
        self.node_b = np.ascontiguousarray(node_b, dtype=np.int64)
        self.score = np.ascontiguousarray(score, dtype=np.float64)
        self.at_home = np.ascontiguousarray(at_home, dtype=np.float64)
        self.weight = np.ascontiguousarray(weight, dtype=np.float64)
        self.link, self.draw, self.scale = int(link), int(draw), float(scale)
        self.bradley_terry = self.link == nx.LOGISTIC and self.draw in (nx.DRAW_NONE, nx.DRAW_HALF)
        if self.bradley_terry:
            # every term is w log F(x), x = sign (s_a - s_b + home) / scale: a win (+1), a loss
            # (-1), a draw under "half" both at half weight
            half = self.score == 0.5
            idx = np.concatenate([np.arange(self.score.size), np.flatnonzero(half)])
            self.bt_sign = np.concatenate([np.where(self.score == 0.0, -1.0, 1.0), -np.ones(half.sum())])
            self.bt_weight = self.weight[idx] * np.where(half[idx], 0.5, 1.0)
            self.bt_a, self.bt_b, self.bt_home = self.node_a[idx], self.node_b[idx], self.at_home[idx]
            self.bt_factor = self.bt_sign * self.bt_weight / self.scale  # d(w log F(x)) / d diff = factor F(-x)

    def make_node(self, z, prior_sd, drift_sd, home, theta):
        z = pt.as_tensor_variable(z, dtype="float64")
        scalars = [pt.as_tensor_variable(v, dtype="float64") for v in (prior_sd, drift_sd, home, theta)]
        outputs = [pt.dscalar(), pt.dvector(), pt.dscalar(), pt.dscalar(), pt.dscalar(), pt.dscalar()]
        return Apply(self, [z, *scalars], outputs)

    def perform(self, node, inputs, outputs):
        z, prior_sd, drift_sd, home, theta = inputs
        z = np.ascontiguousarray(z, dtype=np.float64)
        prior_sd, drift_sd, home = float(prior_sd), float(drift_sd), float(home)
        skill = np.empty_like(z)
        g_z = np.empty_like(z)
        if self.bradley_terry:
            # the common case with the transcendental functions in NumPy's vectorised loops rather
            # than scalar calls in a compiled loop; the walk stays compiled
            x = np.empty(self.bt_sign.size)
            walk_oriented_diffs(z, prior_sd, drift_sd, home, self.prior_mean, self.first, self.sqrt_dt, self.bt_a,
                                self.bt_b, self.bt_sign, self.bt_home, self.scale, skill, x)
            log_f, gd = nx.log_sigmoid_and_grad_array(x)  # log F(x) and F(-x)
            ll = float(self.bt_weight @ log_f)
            gd *= self.bt_factor
            g_prior, g_drift, g_home = walk_scatter_backward(gd, self.bt_a, self.bt_b, self.bt_home, z, prior_sd,
                                                             drift_sd, self.first, self.sqrt_dt, g_z)
            g_theta = 0.0
        else:
            ll, g_prior, g_drift, g_home, g_theta = walk_games_logp(
                z, prior_sd, drift_sd, home, float(theta), self.prior_mean, self.first, self.sqrt_dt, self.node_a,
                self.node_b, self.score, self.at_home, self.weight, self.link, self.draw, self.scale, skill, g_z)
        outputs[0][0] = np.asarray(ll)
        outputs[1][0] = g_z
        for out, value in zip(outputs[2:], (g_prior, g_drift, g_home, g_theta)):
            out[0] = np.asarray(value)

    def infer_shape(self, fgraph, node, shapes):
        return [(), shapes[0], (), (), (), ()]

    def grad(self, inputs, output_grads):
        # only logL is differentiated (NUTS needs first derivatives); the gradient outputs
        # come from the same Apply node, merged with the forward one at compile time
        outs = self(*inputs)
        g = output_grads[0]
        return [g * outs[1], g * outs[2], g * outs[3], g * outs[4], g * outs[5]]


def _numba_impl(op, node=None, **kwargs):
    """The Op for PyTensor's numba backend (what nutpie compiles a PyMC model with): the same
    compiled kernel, its data bound as constants, so nutpie's Rust sampler calls it with no
    Python in between."""
    from numba import njit as _njit

    first, sqrt_dt, node_a, node_b = op.first, op.sqrt_dt, op.node_a, op.node_b
    score, at_home, weight = op.score, op.at_home, op.weight
    prior_mean, link, draw, scale = op.prior_mean, op.link, op.draw, op.scale

    @_njit
    def walk_games(z, prior_sd, drift_sd, home, theta):
        skill = np.empty_like(z)
        g_z = np.empty_like(z)
        ll, g_prior, g_drift, g_home, g_theta = walk_games_logp(
            z, prior_sd[()], drift_sd[()], home[()], theta[()], prior_mean, first, sqrt_dt, node_a, node_b,
            score, at_home, weight, link, draw, scale, skill, g_z)
        return (np.array(ll), g_z, np.array(g_prior), np.array(g_drift), np.array(g_home), np.array(g_theta))

    return walk_games


def register_numba() -> None:
    """Teach PyTensor's numba backend the Op (idempotent)."""
    from pytensor.link.numba.dispatch import numba_funcify

    if WalkGamesLogp not in numba_funcify.registry:
        numba_funcify.register(WalkGamesLogp)(_numba_impl)
