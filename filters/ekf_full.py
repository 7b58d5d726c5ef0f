r"""The extended Kalman filter with one full covariance over all competitors.

The state is ``N(m, P)`` over every competitor, so that playing a common opponent correlates two
competitors (O(n^2) memory and work per game). Predict: ``P <- A P A^T + Q`` with the transition
of :func:`filters.ekf.transition` on the idle competitor's row and column. Update: the ``m`` games
of a rating period are linearised from the pre-period state (:func:`filters.ekf.linearise`), each
a Gaussian site of precision ``kappa_j`` on ``d_j = J_j s + h_j``; their product with the prior is
the rank-``m`` Woodbury update

    P' = P - P J^T M J P,      m' = m + P J^T (c - M (J m + A c)),
    M = K (I + A K)^{-1},      A = J P J^T,      K = diag(kappa),

with ``c_j = g_j + kappa_j (d_j - d0_j) + kappa_j J_j m`` (the site's linear coefficient). It is not
a sum of per-competitor sites, so it runs in :func:`filters._kernels.period_loop`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace import Games

from . import _kernels as K
from .base import FilterState
from .ekf import _HOME, _MEAN, _MU0, _REV, _SD, EKF, linearise, transition

__all__ = ["FullEKF"]


@K.predict_kernel
def _predict(x, i, theta, dt):
    """``P <- A P A^T + Q`` with ``A = a e_i e_i^T + (I - e_i e_i^T)``, ``Q = q_dt e_i e_i^T``."""
    a, add = transition(theta, dt)
    if theta[_REV] > 0.0:
        x[i, _MEAN] = theta[_MU0] + a * (x[i, _MEAN] - theta[_MU0])
        for j in range(x.shape[0]):
            x[i, 2 + j] *= a
            x[j, 2 + i] *= a
    v = x[i, 2 + i] + add
    x[i, 2 + i] = v
    x[i, _SD] = math.sqrt(v)


@K.proba_kernel
def _proba(forecast, obs, x, a, b, at_home, theta):
    """The model's forecast with ``Var(d) = P_aa + P_bb - 2 P_ab``."""
    return forecast(obs, x[a, _MEAN] - x[b, _MEAN] + theta[_HOME] * at_home,
                    x[a, 2 + a] + x[b, 2 + b] - 2.0 * x[a, 2 + b])


@K.update_kernel
def _update(derivs, obs, x, count, theta, a, b, score, ya, yb, home, weight, start, stop):
    """The rank-``m`` Woodbury update of the period's games (see the module docstring)."""
    n = x.shape[0]
    m = stop - start
    kap = np.empty(m)
    c = np.empty(m)
    u = np.empty(m)
    PJ = np.empty((n, m))
    for j in range(m):
        ia = a[start + j]
        ib = b[start + j]
        u[j] = x[ia, _MEAN] - x[ib, _MEAN]
        d0 = u[j] + theta[_HOME] * home[start + j]
        S = x[ia, 2 + ia] + x[ib, 2 + ib] - 2.0 * x[ia, 2 + ib]
        d, g, kappa = linearise(derivs, obs, d0, S, theta, score[start + j], ya[start + j], yb[start + j],
                                weight[start + j])
        kap[j] = kappa
        c[j] = g + kappa * d - kappa * (d0 - u[j])
        for i in range(n):
            PJ[i, j] = x[i, 2 + ia] - x[i, 2 + ib]
    A = np.empty((m, m))
    for j in range(m):
        for k in range(m):
            A[j, k] = PJ[a[start + j], k] - PJ[b[start + j], k]
    IAK = np.eye(m)
    for j in range(m):
        for k in range(m):
            IAK[j, k] += A[j, k] * kap[k]
    inv = np.linalg.inv(IAK)
    M = np.empty((m, m))
    for j in range(m):
        for k in range(m):
            M[j, k] = kap[j] * inv[j, k]
    r = u + A @ c
    w = c - M @ r
    PJM = PJ @ M
    for i in range(n):
        acc = 0.0
        for j in range(m):
            acc += PJ[i, j] * w[j]
        x[i, _MEAN] += acc
    for i in range(n):
        for k in range(n):
            acc = 0.0
            for j in range(m):
                acc += PJM[i, j] * PJ[k, j]
            x[i, 2 + k] -= acc
    for i in range(n):
        x[i, _SD] = math.sqrt(max(x[i, 2 + i], 1e-300))
    for j in range(m):
        count[a[start + j]] += 1
        count[b[start + j]] += 1


@njit(cache=True)
def _frozen(forecast, obs, x, last, theta, a, b, home, t):
    """Frozen forecasts: each competitor moved forward by its own idle time (the cross term
    only shrinks, by the mean reversion), then :func:`_proba`'s forecast."""
    n = a.shape[0]
    out = np.empty((n, 3))
    mu0 = theta[_MU0]
    for g in range(n):
        ia = a[g]
        ib = b[g]
        f = np.ones(2)
        v = np.array([x[ia, 2 + ia], x[ib, 2 + ib]])
        mean = np.array([x[ia, _MEAN], x[ib, _MEAN]])
        for side in range(2):
            i = ia if side == 0 else ib
            gap = t[g] - last[i] if (not math.isnan(last[i]) and t[g] > last[i]) else 0.0
            fs, add = transition(theta, gap)
            f[side] = fs
            v[side] = fs * fs * v[side] + add
            if theta[_REV] > 0.0:
                mean[side] = mu0 + f[side] * (mean[side] - mu0)
        S = v[0] + v[1] - 2.0 * f[0] * f[1] * x[ia, 2 + ib]
        pw, pd, pl = forecast(obs, mean[0] - mean[1] + theta[_HOME] * home[g], S)
        out[g, 0] = pw
        out[g, 1] = pd
        out[g, 2] = pl
    return out


class FullEKF(EKF):
    """``EKF(model, covariance="full")``: the extended Kalman filter with one n x n covariance
    (see the module docstring); state columns ``mean``, ``sd`` and the covariance row
    ``cov_0 .. cov_{n-1}``. Practical up to a few thousand competitors."""

    name = "ekf_full"
    record_columns = 2
    _predict = _predict
    _proba = _proba
    _site = None
    _update = _update

    def _frozen_proba(self, values, last, a, b, home, t) -> np.ndarray:
        _, forecast, obs = self.observation_kernels()
        return _frozen(forecast, obs, values, last, self.theta(), a, b, home, t)

    def init_state(self, players, initial=None) -> FilterState:
        st = super().init_state(players, initial)
        n = st.values.shape[0]
        values = np.zeros((n, 2 + n))
        values[:, :2] = st.values
        values[np.arange(n), 2 + np.arange(n)] = st.values[:, _SD] ** 2
        return FilterState(st.players, np.ascontiguousarray(values), st.count, st.last, _columns(n))

    def _aligned(self, state, games, initial=None, copy: bool = True):
        players = games.players if isinstance(games, Games) else np.asarray(games, dtype=object)
        index = state.index()
        new = [p for p in players if p not in index]
        if not new:
            return state.copy() if copy else state, np.array([index[p] for p in players], dtype=np.int64)
        index = dict(index)
        extra = self.init_state(np.asarray(new, dtype=object), initial)
        n0, n1 = len(state.players), len(new)
        values = np.zeros((n0 + n1, 2 + n0 + n1))
        values[:n0, :2] = state.values[:, :2]
        values[n0:, :2] = extra.values[:, :2]
        values[:n0, 2:2 + n0] = state.values[:, 2:]
        values[n0:, 2 + n0:] = extra.values[:, 2:]
        st = FilterState(np.concatenate([state.players, extra.players]), np.ascontiguousarray(values),
                         np.concatenate([state.count, extra.count]), np.concatenate([state.last, extra.last]),
                         _columns(n0 + n1))
        index.update({p: n0 + j for j, p in enumerate(new)})
        return st, np.array([index[p] for p in players], dtype=np.int64)

    def covariance_matrix(self, state: FilterState) -> np.ndarray:
        """The competitors' posterior covariance."""
        return state.values[:, 2:].copy()


def _columns(n: int) -> tuple[str, ...]:
    return ("mean", "sd") + tuple(f"cov_{j}" for j in range(n))
