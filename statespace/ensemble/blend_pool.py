r"""The pooling rules of :class:`~statespace.ensemble.blend.Blend` and the fit of their weights:
:func:`pool_forecasts` (log-linear, :math:`p \propto \prod_k p_k^{w_k}`, or linear,
:math:`p = \sum_k w_k p_k`, over win/draw/loss or over the expected score) and
:func:`fit_weights`, the weights that minimise the pooled forecasts' mean log loss, by L-BFGS-B
(see :mod:`statespace.ensemble.blend` for the sources and the reasons)."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from statespace.model import metrics

# POOLS and W_MAX are public through statespace.ensemble.blend, whose comments on them are what the
# API reference shows
POOLS = ("loglinear", "linear")
W_MAX = 20.0
#: probabilities are clipped to [EPS, 1] before taking logs (as in :mod:`statespace.metrics`)
EPS = metrics.EPS
#: a weight at or below this is reported as zero
ZERO = 1e-9


def forecasts_draws(p: np.ndarray) -> bool:
    """Whether a member's forecasts ``p`` (``(n, 3)``) give any draw a chance."""
    return bool(np.any(p[:, 1] > 0))


def _log_terms(probas: Sequence[np.ndarray], draws: bool) -> np.ndarray:
    """``(K, n, m)`` logs of each member's factors: three outcomes (a draw-less member's draw
    factor ``sqrt(p_win p_loss)``) with ``draws``, else win and loss of the expected score."""
    out = []
    for p in probas:
        p = np.asarray(p, dtype=float)
        if draws:
            logs = np.log(np.clip(p, EPS, 1.0))
            if not forecasts_draws(p):
                logs[:, 1] = 0.5 * (logs[:, 0] + logs[:, 2])
        else:
            e = np.clip(p[:, 0] + 0.5 * p[:, 1], EPS, 1.0 - EPS)
            logs = np.column_stack([np.log(e), np.log1p(-e)])
        out.append(logs)
    return np.stack(out)


def _linear_terms(probas: Sequence[np.ndarray], draws: bool) -> np.ndarray:
    """``(K, n, m)`` member probabilities the linear pool mixes (expected scores without draws)."""
    out = []
    for p in probas:
        p = np.asarray(p, dtype=float)
        if draws:
            out.append(p)
        else:
            e = p[:, 0] + 0.5 * p[:, 1]
            out.append(np.column_stack([e, 1.0 - e]))
    return np.stack(out)


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    ez = np.exp(z)
    return ez / ez.sum(axis=1, keepdims=True)


def _as_three(q: np.ndarray, draws: bool) -> np.ndarray:
    if draws:
        return q
    return np.column_stack([q[:, 0], np.zeros(len(q)), q[:, 1]])


def pool_forecasts(probas: Sequence[np.ndarray], weights, pool: str = "loglinear", draws: bool = True) -> np.ndarray:
    r"""The pooled ``(n, 3)`` win/draw/loss forecast of the members' ``probas`` (each ``(n, 3)``).

    ``pool="loglinear"``: :math:`p \propto \prod_k q_k^{w_k}`; ``"linear"``:
    :math:`\sum_k w_k q_k / \sum_k w_k`. With ``draws`` the :math:`q_k` are the members' three
    outcomes (a member with no draw forecast in ``probas`` gets the draw factor
    :math:`\sqrt{p_\text{win}\, p_\text{loss}}` in the log-linear pool), without them
    each member's expected score and its complement, and the pool forecasts no draw.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size != len(probas):
        raise ValueError(f"pool_forecasts: {w.size} weights for {len(probas)} members")
    if pool == "loglinear":
        return _as_three(_softmax(np.tensordot(w, _log_terms(probas, draws), axes=1)), draws)
    if pool == "linear":
        total = w.sum()
        if not total > 0:
            raise ValueError("pool_forecasts: the linear pool's weights sum to 0")
        return _as_three(np.tensordot(w / total, _linear_terms(probas, draws), axes=1), draws)
    raise ValueError(f"pool must be one of {', '.join(POOLS)}, got {pool!r}")


def _outcome_index(score: np.ndarray, draws: bool) -> np.ndarray:
    if draws:
        return np.where(score == 1.0, 0, np.where(score == 0.5, 1, 2))
    return np.where(score == 1.0, 0, 1)


def _objective(pool: str, terms: np.ndarray, obs: np.ndarray):
    """``f(w) -> (mean negative log-likelihood, gradient)`` of the pool over ``terms`` (``(K, n,
    m)``: logs for the log-linear pool, probabilities for the linear one)."""
    n = terms.shape[1]
    rows = np.arange(n)
    at_obs = terms[:, rows, obs]  # (K, n)
    if pool == "loglinear":
        def f(w):
            z = np.tensordot(w, terms, axes=1)
            zmax = z.max(axis=1, keepdims=True)
            lse = np.log(np.exp(z - zmax).sum(axis=1)) + zmax[:, 0]
            p = np.exp(z - lse[:, None])
            value = -np.mean(z[rows, obs] - lse)
            grad = -(at_obs - np.einsum("knm,nm->kn", terms, p)).mean(axis=1)
            return float(value), grad
    else:
        def f(w):
            total = max(float(w.sum()), 1e-300)
            s = np.maximum(w @ at_obs / total, EPS)
            value = -np.mean(np.log(s))
            grad = -(at_obs / (s * total)).mean(axis=1) + 1.0 / total
            return float(value), grad
    return f


def fit_weights(pool: str, probas: list[np.ndarray], score: np.ndarray, draws: bool, maxiter: int):
    """The fitted weights (the linear pool's summing to 1), the optimiser's result and its start."""
    from scipy.optimize import minimize  # here, so that importing statespace does not load the optimiser

    k = len(probas)
    terms = _log_terms(probas, draws) if pool == "loglinear" else _linear_terms(probas, draws)
    f = _objective(pool, terms, _outcome_index(score, draws))
    starts = [np.full(k, 1.0 / k)] + [np.eye(k)[j] for j in range(k)]
    values = [f(s)[0] for s in starts]
    start = starts[int(np.nanargmin(values))]
    bounds = [(0.0, W_MAX if pool == "loglinear" else 1.0)] * k
    res = minimize(f, start, jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": maxiter})
    w = np.clip(res.x, 0.0, None)
    if not f(w)[0] <= min(values):  # the optimiser ends at its best point; keep the start if not
        w = start.copy()
    w[w <= ZERO] = 0.0
    if pool == "linear":
        w = w / w.sum()
    return w, res, start
