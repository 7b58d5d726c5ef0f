"""MCMC diagnostics for thousands of variables at once: rank-normalised split r-hat and bulk ESS.

The same formulas and numbers as ArviZ's ``az.rhat(method="rank")`` and
``az.ess(method="bulk")`` (Vehtari, Gelman, Simpson, Carpenter & Bürkner 2021, "Rank-normalization,
folding, and localization: an improved R-hat for assessing convergence of MCMC", Bayesian
Analysis 16(2)), vectorised over the variables: ArviZ evaluates them one variable at a time in
Python (docs/benchmarks.md has the timings that keep this module), and
``tests/test_pymc_smoother.py`` checks both against ArviZ to 1e-10. Arrays are ``(variable,
chain, draw)``.

:func:`diagnose` reads a :class:`smoothers.pymc_smoother.PyMCSmoother` sample with them:
divergences, the largest r-hat and the smallest bulk ESS, and a :class:`ConvergenceWarning` when
one is beyond the smoother's bounds.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit, prange

__all__ = ["rhat_rank", "ess_bulk", "split_chains", "z_scale", "diagnose", "ConvergenceWarning"]


def split_chains(x: np.ndarray) -> np.ndarray:
    """(V, chain, draw) -> (V, 2 chain, draw // 2): first and last halves of every chain."""
    half = x.shape[-1] // 2
    return np.concatenate([x[..., :half], x[..., x.shape[-1] - half:]], axis=1)


@njit(cache=True, parallel=True)
def _ranks_from_order(x, order):
    """Ranks (1-based, ties averaged) of each row of ``x`` given each row's sorting permutation
    ``order`` (rows in parallel)."""
    v, k = x.shape
    out = np.empty((v, k))
    for row in prange(v):
        i = 0
        while i < k:
            j = i
            while j + 1 < k and x[row, order[row, j + 1]] == x[row, order[row, i]]:
                j += 1
            r = (i + j) / 2.0 + 1.0
            for m in range(i, j + 1):
                out[row, order[row, m]] = r
            i = j + 1
    return out


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks (1-based, ties averaged) along the last axis of a 2-D array, row by row:
    ``scipy.stats.rankdata(method="average", axis=1)``. NumPy sorts (its sort is several times
    numba's), the ties are averaged in compiled code."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    return _ranks_from_order(x, np.argsort(x, axis=1))


def z_scale(x: np.ndarray) -> np.ndarray:
    """Rank normalisation of each variable over all its chains and draws (Vehtari et al. 2021,
    eq. 14): ``z = Phi^-1((r - 3/8) / (S + 1/4))``, ``r`` the average rank among the ``S`` draws
    (Blom's offset 3/8)."""
    from scipy.special import ndtri

    v = x.shape[0]
    flat = x.reshape(v, -1)
    n = flat.shape[1]
    # average ranks are multiples of 1/2: look the normal scores up instead of computing
    # ndtri for every draw of every node
    scores = ndtri((np.arange(2 * n + 2) / 2.0 - 0.375) / (n + 0.25))
    return scores[(2.0 * _average_ranks(flat)).astype(np.int64)].reshape(x.shape)


def _rhat_basic(x: np.ndarray) -> np.ndarray:
    """Gelman-Rubin ``R = sqrt(((n - 1) / n W + B / n) / W)`` over the last two axes (chains of
    ``n`` draws): ``W`` the mean within-chain variance, ``B / n`` the variance of the chain means."""
    n = x.shape[-1]
    between = n * np.var(x.mean(axis=-1), axis=-1, ddof=1)
    within = np.var(x, axis=-1, ddof=1).mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):  # a constant variable: NaN, as ArviZ
        return np.sqrt((between / within + n - 1) / n)


def rhat_rank(x: np.ndarray, z_bulk: np.ndarray | None = None) -> np.ndarray:
    """Rank-normalised split r-hat of each variable of ``x`` (shape ``(V, chain, draw)``):
    ``max(R(z(split)), R(z(|split - median|)))``, the bulk and the folded (tail) r-hat (Vehtari
    et al. 2021, eq. 15-16), as ``arviz.rhat(method="rank")``. NaN with one chain. ``z_bulk``:
    the rank-normalised split chains, if already computed."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] < 2 or x.shape[2] < 4:
        return np.full(x.shape[0], np.nan)
    split = split_chains(x)
    bulk = _rhat_basic(z_scale(split) if z_bulk is None else z_bulk)
    fold = np.abs(split - np.median(split.reshape(split.shape[0], -1), axis=1)[:, None, None])
    tail = _rhat_basic(z_scale(fold))
    out = np.maximum(bulk, tail)
    out[np.isnan(x).any(axis=(1, 2))] = np.nan
    return out


@njit(cache=True)
def _geyer_tau(rho, n_draw, n_total):
    """Integrated autocorrelation time ``tau = -1 + 2 sum_t rho_t`` of each row of ``rho``
    (autocorrelations at lags 0..n-1), the sum truncated by Geyer's (1992) initial positive
    sequence and made monotone, floored at ``1 / log10(n_total)``: ArviZ's ``_ess``."""
    out = np.empty(rho.shape[0])
    for v in range(rho.shape[0]):
        r = np.zeros(n_draw)
        even = 1.0
        r[0] = even
        odd = rho[v, 1]
        r[1] = odd
        t = 1
        while t < n_draw - 3 and even + odd > 0.0:
            even = rho[v, t + 1]
            odd = rho[v, t + 2]
            if even + odd >= 0:
                r[t + 1] = even
                r[t + 2] = odd
            t += 2
        max_t = t - 2
        if even > 0:
            r[max_t + 1] = even
        t = 1
        while t <= max_t - 2:
            if r[t + 1] + r[t + 2] > r[t - 1] + r[t]:
                r[t + 1] = (r[t - 1] + r[t]) / 2.0
                r[t + 2] = r[t + 1]
            t += 2
        tau = -1.0 + 2.0 * np.sum(r[: max_t + 1]) + np.sum(r[max_t + 1: max_t + 2])
        tau = max(tau, 1.0 / np.log10(n_total))
        out[v] = np.nan if np.isnan(r).any() else tau
    return out


def ess_bulk(x: np.ndarray, z_bulk: np.ndarray | None = None) -> np.ndarray:
    """Bulk effective sample size of each variable of ``x`` (shape ``(V, chain, draw)``),
    ``S / tau`` for the rank-normalised split chains (``z_bulk``, if already computed), with the
    autocorrelations ``rho_t = 1 - (W - mean_chains acov_t) / var+`` from FFT autocovariances
    (Vehtari et al. 2021, eq. 10-12): ``arviz.ess(method="bulk")``."""
    x = np.asarray(x, dtype=float)
    v = x.shape[0]
    if x.shape[2] < 4:
        return np.full(v, np.nan)
    z = z_scale(split_chains(x)) if z_bulk is None else z_bulk
    m, n = z.shape[1], z.shape[2]
    centred = z - z.mean(axis=-1, keepdims=True)
    size = 2 * n
    f = np.fft.rfft(centred, n=size, axis=-1)
    acov = np.fft.irfft(f * np.conjugate(f), n=size, axis=-1)[..., :n] / n
    mean_var = acov[..., 0].mean(axis=-1) * n / (n - 1.0)
    var_plus = mean_var * (n - 1.0) / n
    if m > 1:
        var_plus = var_plus + np.var(z.mean(axis=-1), axis=-1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):  # constant variables are set below
        rho = 1.0 - (mean_var[:, None] - acov.mean(axis=1)) / var_plus[:, None]
    out = (m * n) / _geyer_tau(np.ascontiguousarray(rho), n, m * n)
    flat = z.reshape(v, -1)
    out[np.ptp(flat, axis=1) < np.finfo(float).resolution] = m * n  # constant (as ArviZ)
    out[np.isnan(flat).any(axis=1)] = np.nan
    return out


class ConvergenceWarning(UserWarning):
    """MCMC diagnostics are off: divergences, r-hat above the bound or a low effective sample size."""


def diagnose(smoother, idata, free, tl) -> dict:
    """Divergences, the largest r-hat and the smallest bulk ESS over the sampled parameters
    (the scalars and every node's ``z``); warns with :class:`ConvergenceWarning` when off."""
    out = {}
    stats = idata.sample_stats
    div = int(np.asarray(stats["diverging"]).sum()) if "diverging" in stats else 0
    out["divergences"] = div
    problems = []
    if div:
        problems.append(f"{div} divergent transition{'s' if div > 1 else ''} after tuning "
                        f"(raise target_accept, now {smoother.target_accept:g})")
    post = idata.posterior
    chains = post.sizes["chain"]
    min_ess = smoother.min_ess if smoother.min_ess is not None else 100.0 * chains

    def label(i):  # a scalar parameter, or a node's z named by competitor and time
        if i < len(free):
            return free[i]
        k = i - len(free)
        return f"z[{k}] ({tl.players[tl.node_player[k]]} at t={tl.node_time[k]:g})"

    x = np.concatenate([np.asarray(post[name], dtype=float)[None] for name in free]
                       + [np.moveaxis(np.asarray(post["z"], dtype=float), -1, 0)], axis=0)
    z_bulk = z_scale(split_chains(x)) if x.shape[2] >= 4 else None
    rhat = rhat_rank(x, z_bulk)
    ess = ess_bulk(x, z_bulk)
    if np.all(np.isnan(rhat)):
        out["max_rhat"], out["max_rhat_at"] = float("nan"), None
    else:
        i = int(np.nanargmax(rhat))
        out["max_rhat"], out["max_rhat_at"] = float(rhat[i]), label(i)
        if rhat[i] > smoother.max_rhat:
            problems.append(f"r_hat {rhat[i]:.3f} for {label(i)} (> {smoother.max_rhat:g})")
    if np.all(np.isnan(ess)):
        out["min_ess"], out["min_ess_at"] = float("nan"), None
    else:
        i = int(np.nanargmin(ess))
        out["min_ess"], out["min_ess_at"] = float(ess[i]), label(i)
        if ess[i] < min_ess:
            problems.append(f"bulk ESS {ess[i]:.0f} < {min_ess:.0f} for {label(i)}")
    if problems:
        warnings.warn(f"{smoother.name}: sampling diagnostics are off: " + "; ".join(problems)
                      + " (see fit.idata and fit.info; more tune/draws or chains may help)",
                      ConvergenceWarning, stacklevel=3)
    return out
