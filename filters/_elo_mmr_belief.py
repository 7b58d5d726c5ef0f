r"""Elo-MMR's belief of one competitor as a state row: its pseudo-diffusion and its rating update.

Ebtekar and Liu (WWW 2021, Sections 3.2-4; the reference implementation's ``Player``) keep each
competitor's posterior as a Gaussian prior term :math:`\mathcal N(\mu_0, 1/w_0)` times the
logistic terms of its past performances :math:`p_k`, each of weight :math:`w_k`
(:math:`w_k = \pi / (\sqrt 3 \beta)` when new, :math:`\beta` the performance noise). The rating
is their robust average, the zero of

.. math::

    w_0 (\mu - \mu_0) + \sum_k w_k \tanh\bigl(\tfrac{\pi}{2 \sqrt 3 \beta} (\mu - p_k)\bigr) = 0,

and the uncertainty is Gaussian: after a contest :math:`\sigma^{-2} \leftarrow \sigma^{-2} + \beta^{-2}`.

Before each contest the belief diffuses (the paper's pseudo-diffusion, the code's
``add_noise_best``): :math:`\sigma^2 \leftarrow \sigma^2 + \sigma_d^2` and, with
:math:`\kappa = \sigma_\text{old}^2 / \sigma_\text{new}^2` and :math:`\rho = \kappa^{r}` (``r`` the
transfer speed), every logistic weight becomes :math:`w_k \rho \kappa` while the weight they lose
moves to the Gaussian term, centred at the current rating:
:math:`w_0 \leftarrow \kappa (\rho w_0 + (1 - \rho)(w_0 + \sum_k \tilde w_k))`,
:math:`\mu_0 \leftarrow (\rho w_0 \mu_0 + (1 - \rho)(w_0 + \sum_k \tilde w_k) \mu) / (\ldots)`, with
:math:`\tilde w_k = w_k \cdot 2 a / (\pi^2/3)` a term's weight as a precision (:math:`a` its tanh
argument's factor). An infinite transfer speed collapses the belief to the Gaussian
:math:`\mathcal N(\mu, \sigma^2)` (the code's ``add_noise_and_collapse``).

A row holds at most :data:`HISTORY` logistic terms: when a new one would exceed them, the oldest
is folded into the Gaussian term keeping its weight (:math:`\mu_0 \leftarrow (w_0 \mu_0 + \tilde
w p) / (w_0 + \tilde w)`, :math:`w_0 \leftarrow w_0 + \tilde w`), as the reference code does at its
history limit. Each contest multiplies a term's weight by :math:`\rho\kappa`, which tends to
:math:`(\sigma_\infty^2 / (\sigma_\infty^2 + \sigma_d^2))^2 \approx 0.69` at the default settings.
Folding a term of weight :math:`w_k` at :math:`x = a(\mu - p_k)` changes the rating's equation by
:math:`w_k (\tanh x - \tfrac{6}{\pi^2} x)` (at most about 0.18 for :math:`|x| \le 1.5`, a
performance within 1.5 sd of the rating), so it moves the rating by about :math:`\sigma^2 w_k` times that:
:math:`80^2 \cdot \tfrac{\pi}{\sqrt 3 \beta} \cdot 0.69^{H} \cdot 0.18 \approx 10.7 \cdot 0.69^H`
points after :math:`H` contests, below :math:`10^{-6}` from :math:`H \approx 44`; the tests' hero
who plays 110 contests is :math:`3.8 \cdot 10^{-7}` points off keeping every term at :data:`HISTORY`
= 48 and :math:`2.7 \cdot 10^{-6}` at 44, so no fewer terms will do.
"""

from __future__ import annotations

import math

from numba import njit

from ._elo_mmr_perf import TANH_MULTIPLIER, fast_tanh

#: how many logistic terms a state row keeps (see the module docstring)
HISTORY = 48
# state columns: rating, sd, continuous drift variance waiting for the next contest, the Gaussian
# term's mean and weight, the number of logistic terms, then HISTORY (performance, weight) pairs
MU, SIG, PENDING, PRIOR_MU, PRIOR_W, N_TERMS, FIRST = range(7)
COLUMNS = ("mu", "sigma", "drift_var", "prior_mu", "prior_weight", "n_terms") + tuple(
    name for k in range(HISTORY) for name in (f"perf_{k}", f"perf_weight_{k}"))
TOL = 1e-12


@njit(cache=True, inline="always")
def term_precision(w_out, arg):
    """A logistic term's weight as a precision: ``w_out * 2 arg / (pi^2 / 3)``."""
    return w_out * 2.0 * arg / (TANH_MULTIPLIER * TANH_MULTIPLIER)


@njit(cache=True)
def diffuse(x, i, noise_var, transfer_speed, arg):
    """Row ``i``'s pseudo-diffusion by ``noise_var`` (the module docstring); ``arg`` is the terms'
    tanh factor ``pi / (2 sqrt(3) beta)``."""
    s2 = x[i, SIG] * x[i, SIG]
    new = s2 + noise_var
    x[i, SIG] = math.sqrt(new)
    n = int(x[i, N_TERMS])
    if math.isinf(transfer_speed):
        x[i, PRIOR_MU] = x[i, MU]
        x[i, PRIOR_W] = 1.0 / new
        x[i, N_TERMS] = 0.0
        return
    decay = s2 / new
    transfer = decay ** transfer_speed
    w0 = x[i, PRIOR_W]
    moved = w0
    for k in range(n):  # the precision moved is the terms' before they decay
        wk = x[i, FIRST + 2 * k + 1]
        moved += term_precision(wk, arg)
        x[i, FIRST + 2 * k + 1] = wk * (transfer * decay)
    kept = transfer * w0
    moved *= 1.0 - transfer
    total = kept + moved
    x[i, PRIOR_MU] = (kept * x[i, PRIOR_MU] + moved * x[i, MU]) / total
    x[i, PRIOR_W] = decay * total


@njit(cache=True)
def push_term(x, i, perf, w_out, arg):
    """Append the term ``(perf, w_out)`` to row ``i``, first folding the oldest into the Gaussian
    term when the row already holds :data:`HISTORY`."""
    n = int(x[i, N_TERMS])
    if n == HISTORY:
        wl = term_precision(x[i, FIRST + 1], arg)
        w0 = x[i, PRIOR_W]
        x[i, PRIOR_MU] = (w0 * x[i, PRIOR_MU] + wl * x[i, FIRST]) / (w0 + wl)
        x[i, PRIOR_W] = w0 + wl
        for c in range(FIRST, FIRST + 2 * (HISTORY - 1)):
            x[i, c] = x[i, c + 2]
        n -= 1
    x[i, FIRST + 2 * n] = perf
    x[i, FIRST + 2 * n + 1] = w_out
    x[i, N_TERMS] = n + 1.0


@njit(cache=True)
def robust_average(x, i, arg, scale, t):
    r"""Row ``i``'s rating: the zero of :math:`f(\mu) = w_0 (\mu - \mu_0) + \sum_k w_k \tanh(a (\mu - p_k))`
    (increasing in :math:`\mu`, its zero between the smallest and largest of :math:`\mu_0, p_k`),
    by safeguarded Newton from the current rating.

    The current rating is a warm start: the diffusion scales every term of :math:`f` at the old
    rating alike (the Gaussian term's moved weight is centred there), so only the new term and a
    fold move the zero. Every term has :math:`|f_k''| \le 2a f_k'` (the Gaussian term
    :math:`f_0'' = 0`), so a Newton step :math:`s` leaves an error of at most about
    :math:`a s^2`: the iteration stops once that is below ``TOL * scale`` (quadratic convergence:
    about three passes over the terms). The first pass computes each :math:`t_k = \tanh(a(\mu - p_k))`
    into the work array ``t`` (at least :data:`HISTORY` long); a step :math:`s` then moves them by the
    addition formula :math:`t_k \leftarrow (t_k + T) / (1 + t_k T)`, :math:`T = \tanh(a s)`, one
    ``exp`` in all instead of one per term."""
    n = int(x[i, N_TERMS])
    w0 = x[i, PRIOR_W]
    m0 = x[i, PRIOR_MU]
    lo = m0
    hi = m0
    for k in range(n):
        p = x[i, FIRST + 2 * k]
        lo = min(lo, p)
        hi = max(hi, p)
    if hi <= lo:
        return lo
    z = min(max(x[i, MU], lo), hi)
    tol = TOL * scale
    done = math.sqrt(tol / arg)  # a step this small leaves an error below tol
    at = math.nan  # the rating the work array's t_k are at
    for _ in range(200):
        f = w0 * (z - m0)
        df = w0
        if at == at and abs(z - at) <= scale:
            tt = fast_tanh(arg * (z - at))
            for k in range(n):
                tk = (t[k] + tt) / (1.0 + t[k] * tt)
                t[k] = tk
                wk = x[i, FIRST + 2 * k + 1]
                f += wk * tk
                df += wk * arg * (1.0 - tk * tk)
        else:
            for k in range(n):
                tk = fast_tanh(arg * (z - x[i, FIRST + 2 * k]))
                t[k] = tk
                wk = x[i, FIRST + 2 * k + 1]
                f += wk * tk
                df += wk * arg * (1.0 - tk * tk)
        at = z
        if f == 0.0:
            return z
        if f > 0.0:
            hi = z
        else:
            lo = z
        if df > 0.0:
            step = f / df
            if abs(step) <= done:
                return z - step
            nz = z - step
        else:
            nz = 0.5 * (lo + hi)
        if not (lo < nz < hi):
            nz = 0.5 * (lo + hi)
        if hi - lo <= tol:
            return nz
        z = nz
    return z
