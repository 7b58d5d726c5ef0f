"""The random-walk model's log-likelihood and gradient as one compiled PyTensor Op.

Why: PyMC's NUTS spends nearly all its time in the gradient of the log density, and the plain
PyTensor graph of the model (a segmented cumulative sum for the non-centred walk, gathers of
the two competitors' skills, the link's log cdf, scatters back, the reversed cumulative sum
of the gradient) runs as many separate C loops over the nodes and games per leapfrog step.
Here one numba loop does all of it, forward and backward, in one pass each, using the same
scalar log-likelihood as the rest of the project (``statespace.model.numeric.loglik_grad``; for the
logistic link without a draw parameter its array form,
``statespace.model.numeric.log_sigmoid_and_grad_array``); docs/benchmarks.md has the speed-up.

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
themselves (numpyro to JAX; nutpie to numba with ``likelihood="graph"``), and the tests check
that both give the same log density and gradient.

For nutpie, :func:`posterior_logp` is the whole log posterior (the priors with PyMC's
log transforms, N(0, 1) on z, the games) and its gradient in one cached numba call that releases
the GIL: nutpie's Rust sampler calls it through ``nutpie.from_pyfunc``
(``_pymc_model.nutpie_model``), so a fit compiles nothing and runs no Python between leapfrog
steps. Its Bradley-Terry path (:func:`bt_games_logp`) evaluates ``exp`` and ``log1p`` in loops
the compiler vectorises (:func:`exp_log1p_neg_abs`), faster than numba's scalar libm calls and
the Op's NumPy path (docs/benchmarks.md measures the three; ``tests/test_pymc_nutpie.py`` checks
it against the PyMC model's own log density).

Importing this module imports PyTensor: ``pymc_smoother`` imports it only after pointing
PyTensor's compile directory where it belongs (``statespace._runtime.pytensor_config``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
import pytensor.tensor as pt
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from statespace.model import numeric as nx

__all__ = ["walk_games_logp", "bt_games_logp", "posterior_logp", "WalkGamesLogp"]


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
    draw model (through ``statespace.model.numeric.loglik_grad``); writes the skills into ``skill``
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


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 in two parts (fdlibm): k ln2 exact in the first
_LN2_LO = 1.90821492927058770002e-10
#: exp(r)'s Taylor coefficients from the highest power: 1/13!, 1/12!, ..., 1/1!, 1/0!
_EXP_TAYLOR = np.array([1.0 / math.factorial(k) for k in range(13, -1, -1)])
#: atanh(u) / u = sum_j v^j / (2j + 1) in v = u^2, from the highest power: 1/31, 1/29, ..., 1/3, 1
_ATANH_SERIES = np.array([1.0 / k for k in range(31, 0, -2)])


@njit(cache=True, inline="always")
def _horner(coeffs, x):
    """The polynomial with coefficients ``coeffs`` (highest power first) at ``x``, by Horner's
    rule. Inlined into its caller, whose compiler flags (contraction into fused multiply-adds) it
    takes; a global array of coefficients is a constant there, so the loop unrolls."""
    p = coeffs[0]
    for j in range(1, coeffs.size):
        p = p * x + coeffs[j]
    return p


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract"})
def exp_log1p_neg_abs(x, e, l, bits):
    """``e = exp(-|x|)`` and ``l = log1p(e)`` elementwise, in loops the compiler vectorises
    (numba calls libm's scalar ``exp`` and ``log1p`` one element at a time, a loop the compiler
    cannot vectorise: the Bradley-Terry likelihood spends most of its time there). ``exp(-t) = 2^-k
    exp(k ln 2 - t)`` with ``|k ln 2 - t| <= ln 2 / 2`` and the exponential's Taylor polynomial of
    degree 13 (truncation below 5e-18); ``2^-k`` from its bits (``bits``, an int64 work array);
    ``log1p(e) = 2 atanh(u)``, ``u = e / (2 + e) <= 1/3``, by its series to ``u^31`` (truncation
    below 6e-17). Both within 3 ulp of NumPy's ``exp`` / ``log1p`` (``tests/test_pymc_nutpie.py``);
    ``|x|`` is capped at 708 (``e`` about 3e-308: ``log F`` is then ``min(x, 0)`` to the last bit)."""
    n = x.shape[0]
    for i in range(n):
        t = min(abs(x[i]), 708.0)
        k = math.floor(t * _LOG2E + 0.5)
        r = k * _LN2_HI - t + k * _LN2_LO
        e[i] = _horner(_EXP_TAYLOR, r)
        bits[i] = (1023 - np.int64(k)) << 52
    two_k = bits.view(np.float64)
    for i in range(n):
        ei = e[i] * two_k[i]
        e[i] = ei
        u = ei / (2.0 + ei)
        l[i] = 2.0 * u * _horner(_ATANH_SERIES, u * u)


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"contract", "reassoc"})
def _log_f_and_grad(x, e, l, weight, factor, gd):
    """``sum w log F(x)`` and ``gd = factor F(-x)`` from ``e = exp(-|x|)``, ``l = log1p(e)``
    (vectorised; the sum in the compiler's order)."""
    ll = 0.0
    for i in range(x.shape[0]):
        ll += weight[i] * (min(x[i], 0.0) - l[i])
        gd[i] = (e[i] if x[i] >= 0.0 else 1.0) / (1.0 + e[i]) * factor[i]
    return ll


@njit(cache=True, nogil=True)
def bt_games_logp(z, prior_sd, drift_sd, home, prior_mean, first, sqrt_dt, node_a, node_b, sign, at_home, weight,
                  inv_scale, skill, g_z):
    """The Bradley-Terry case (logistic link, draw model "none" or "half"), compiled: every term
    is ``w log F(x)``, ``x = sign (s_a - s_b + home at_home) / scale`` (the oriented games of
    :class:`WalkGamesLogp`), ``log F(x) = min(x, 0) - log1p(e^-|x|)`` and ``d/dx = F(-x)``, the
    transcendental functions in vectorised loops (:func:`exp_log1p_neg_abs`). Writes the skills
    into ``skill`` and d logL / dz into ``g_z``; returns ``(logL, dlogL/dprior_sd,
    dlogL/ddrift_sd, dlogL/dhome)``."""
    walk_forward(z, prior_sd, drift_sd, prior_mean, first, sqrt_dt, skill)
    m = sign.shape[0]
    x = np.empty(m)
    for i in range(m):
        x[i] = sign[i] * (skill[node_a[i]] - skill[node_b[i]] + home * at_home[i]) * inv_scale
    e = np.empty(m)
    l = np.empty(m)
    exp_log1p_neg_abs(x, e, l, np.empty(m, dtype=np.int64))
    factor = np.empty(m)
    for i in range(m):
        factor[i] = weight[i] * sign[i] * inv_scale
    gd = np.empty(m)
    ll = _log_f_and_grad(x, e, l, weight, factor, gd)  # gd: d logL / d diff of every oriented game
    g_prior, g_drift, g_home = walk_scatter_backward(gd, node_a, node_b, at_home, z, prior_sd, drift_sd, first,
                                                     sqrt_dt, g_z)
    return ll, g_prior, g_drift, g_home


@njit(cache=True, nogil=True)
def posterior_logp(u, grad, shift, stretch, slots, fixed, priors, prior_mean, first, sqrt_dt, node_a, node_b, score,
                   at_home, weight, link, draw, scale, bt, bt_a, bt_b, bt_sign, bt_home, bt_weight):
    """The whole log posterior density of :func:`smoothers._pymc_model.build_model`'s model (up
    to a constant) and its gradient, in one compiled call without the GIL: what nutpie samples
    (``smoothers._pymc_model.nutpie_model``), with no PyTensor and nothing compiled per fit.

    The sampler's coordinates ``u`` are PyMC's value variables ``x = shift + stretch * u``
    (``stretch`` the Laplace posterior sds: the sampler starts in nearly standardised
    coordinates): ``x[slots[0..3]]`` are ``log drift_sd``, ``log prior_sd``, ``home``,
    ``log theta`` (threshold margin or Davidson nu) where inferred (slot -1: fixed at
    ``fixed[0..3]``), ``x[slots[4]:]`` every node's z. The priors are PyMC's: HalfNormal
    (``priors[0]``, ``priors[1]``, ``priors[4]`` the sigmas) on the log scale with its Jacobian,
    Normal(``priors[2]``, ``priors[3]``) for home, N(0, 1) for z; the games' term is
    :func:`bt_games_logp` when ``bt`` (the logistic link without a draw parameter, on the oriented
    games ``bt_*``), else :func:`walk_games_logp`. Writes d logp / du into ``grad``; returns logp."""
    n_x = u.shape[0]
    x = np.empty(n_x)
    for k in range(n_x):
        x[k] = shift[k] + stretch[k] * u[k]
    lp = 0.0
    values = np.empty(4)
    for j in range(4):
        if slots[j] < 0:
            values[j] = fixed[j]
        elif j == 2:  # home: Normal(mu, sigma)
            values[j] = x[slots[j]]
            lp -= 0.5 * ((values[j] - priors[2]) / priors[3]) ** 2
        else:  # HalfNormal(sigma) on the log scale: -(v / sigma)^2 / 2 + log v (the Jacobian)
            values[j] = math.exp(x[slots[j]])
            sigma = priors[4] if j == 3 else priors[j]
            lp += -0.5 * (values[j] / sigma) ** 2 + x[slots[j]]
    drift_sd, prior_sd, home, theta = values[0], values[1], values[2], values[3]
    off = slots[4]
    z = x[off:]
    n = z.shape[0]
    skill = np.empty(n)
    g_z = np.empty(n)
    if bt:
        ll, g_prior, g_drift, g_home = bt_games_logp(z, prior_sd, drift_sd, home, prior_mean, first, sqrt_dt, bt_a,
                                                     bt_b, bt_sign, bt_home, bt_weight, 1.0 / scale, skill, g_z)
        g_theta = 0.0
    else:
        ll, g_prior, g_drift, g_home, g_theta = walk_games_logp(z, prior_sd, drift_sd, home, theta, prior_mean, first,
                                                                sqrt_dt, node_a, node_b, score, at_home, weight, link,
                                                                draw, scale, skill, g_z)
    lp += ll
    for k in range(n):
        lp -= 0.5 * z[k] * z[k]
        grad[off + k] = g_z[k] - z[k]
    if slots[0] >= 0:
        grad[slots[0]] = g_drift * drift_sd - (drift_sd / priors[0]) ** 2 + 1.0
    if slots[1] >= 0:
        grad[slots[1]] = g_prior * prior_sd - (prior_sd / priors[1]) ** 2 + 1.0
    if slots[2] >= 0:
        grad[slots[2]] = g_home - (home - priors[2]) / priors[3] ** 2
    if slots[3] >= 0:
        grad[slots[3]] = g_theta * theta - (theta / priors[4]) ** 2 + 1.0
    for k in range(n_x):
        grad[k] *= stretch[k]
    return lp


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
    """The Op for PyTensor's numba backend (what ``nutpie.compile_pymc_model`` compiles a PyMC
    model with): the same compiled kernel, its data bound as constants. The smoother's nutpie path
    no longer goes through it (:func:`posterior_logp` compiles nothing per fit); kept, and tested,
    for a PyMC model holding the Op compiled in numba mode."""
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
