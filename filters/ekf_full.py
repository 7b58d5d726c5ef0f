r"""The extended Kalman filter with one full covariance over all competitors.

The state is :math:`\mathcal{N}(m, P)` over every competitor, so that playing a common opponent
correlates two competitors (:math:`O(n^2)` memory and work per game for :math:`n` competitors).
Predict: :math:`P \leftarrow A P A^\top + Q` with the transition of
:func:`filters._ekf_kernels.transition` on the idle competitor's row and column. Update: the
:math:`G` games of a rating period are linearised from the pre-period state
(:func:`filters._ekf_kernels.linearise`), each a Gaussian site of precision :math:`\kappa_j` on
:math:`d_j = J_j s + h_j`; their product with the prior is the rank-:math:`G` Woodbury update

.. math::

    P' &= P - P J^\top M J P, \qquad m' = m + P J^\top \bigl(c - M (J m + A c)\bigr), \\
    M &= K (I + A K)^{-1}, \qquad A = J P J^\top, \qquad K = \operatorname{diag}(\kappa),

with :math:`c_j = g_j + \kappa_j (d_j - d_{0,j}) + \kappa_j J_j m` (the site's linear
coefficient). Since :math:`M (I + A K) = K`, the mean's step is :math:`P J^\top (I - M A)\, c'`
with :math:`c'_j = g_j + \kappa_j (d_j - d_{0,j})`, the form used (it never forms
:math:`\kappa J m`, which overflows for large ratings). It is not a sum of per-competitor sites,
so it runs in :func:`filters.kernels.period_loop`.

Numeric guards: the update is computed in units of each game's prior sds
(:func:`_update`); a game's weight counts up to ``WEIGHT_MAX``, its curvature up to
:math:`10^{10} / (P_{aa} + P_{bb})` (information 1e10 times the prior's already fixes the
difference, and more leaves :math:`I + A K` singular to double precision), the diagonal of
:math:`P` is kept in ``[VAR_MIN, VAR_MAX]``, every covariance within :math:`\pm \sqrt{P_{ii} P_{kk}}`
and the means within ``+-MEAN_MAX`` (:mod:`filters.kernels`); a forecast's variance is at least 0.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.data.games import Games

from . import kernels as K
from ._ekf_kernels import linearise, transition
from ._ekf_match import _match_full
from ._ekf_layout import _HOME, _MEAN, _MU0, _REV, _SD
from .ekf import EKF
from .state import FilterState

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
    v = min(x[i, 2 + i] + add, K.VAR_MAX)
    x[i, 2 + i] = v
    x[i, _SD] = math.sqrt(v)


@K.proba_kernel
def _proba(forecast, obs, x, a, b, at_home, theta):
    """The model's forecast with ``Var(d) = P_aa + P_bb - 2 P_ab`` (at least 0: rounding can leave it
    a hair below)."""
    return forecast(obs, x[a, _MEAN] - x[b, _MEAN] + theta[_HOME] * at_home,
                    max(x[a, 2 + a] + x[b, 2 + b] - 2.0 * x[a, 2 + b], 0.0))


@njit(cache=True)
def _woodbury_core(A, r):
    """``I + R A R`` with ``R = diag(r)``."""
    m = r.size
    B = np.eye(m)
    for j in range(m):
        for k in range(m):
            B[j, k] += r[j] * A[j, k] * r[k]
    return B


@njit(cache=True)
def _positive_definite(B) -> bool:
    """Whether the symmetric ``B`` has a Cholesky factor (all its pivots positive)."""
    m = B.shape[0]
    L = np.zeros((m, m))
    for j in range(m):
        d = B[j, j]
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return False
        L[j, j] = math.sqrt(d)
        for i in range(j + 1, m):
            e = B[i, j]
            for k in range(j):
                e -= L[i, k] * L[j, k]
            L[i, j] = e / L[j, j]
    return True


@K.update_kernel
def _update(derivs, obs, x, count, theta, a, b, score, ya, yb, home, weight, start, stop):
    """The rank-``m`` Woodbury update of the period's games (see the module docstring), in units of
    ``s_j = sqrt(P_aa + P_bb)`` for game ``j`` between ``a`` and ``b`` (at least the sd of its difference,
    and free of the cancellation in ``S_j = P_aa + P_bb - 2 P_ab``): with ``D = diag(s^2)``,
    ``A~ = D^-1/2 A D^-1/2`` (entries at most 2 in size), ``K~ = D K``, ``c~ = D^1/2 c'`` and
    ``P J^T D^-1/2``, the update is ``M~ = K~ (I + A~ K~)^-1``, ``m' = m + (P J^T D^-1/2)(c~ - M~ A~ c~)``,
    ``P' = P - (P J^T D^-1/2) M~ (P J^T D^-1/2)^T``: the same numbers, but the matrices are
    scale-free. Guards: ``A~``, positive semi-definite in exact arithmetic, is made so again when
    rounding leaves ``I + R A~ R`` without a Cholesky factor; ``kappa_j s_j^2 <= 1e10`` and each term of ``c~`` within ``+-1e100`` (a game that fixes
    its difference to 1e-5 of the prior sds, or pulls it 1e100 of them, counts as that); the
    linearisation sees ``S_j`` at least 1e-14 of ``P_aa + P_bb`` (below, it is rounding)."""
    n = x.shape[0]
    m = stop - start
    kt = np.empty(m)
    ct = np.empty(m)
    sq = np.empty(m)
    PJ = np.empty((n, m))
    for j in range(m):
        ia = a[start + j]
        ib = b[start + j]
        d0 = x[ia, _MEAN] - x[ib, _MEAN] + theta[_HOME] * home[start + j]
        both = x[ia, 2 + ia] + x[ib, 2 + ib]
        # the difference's variance, a cancellation: below 1e-14 of the two variances it is rounding
        S = max(both - 2.0 * x[ia, 2 + ib], 1e-14 * both, K.VAR_MIN)
        d, g, kappa = linearise(derivs, obs, d0, S, theta, score[start + j], ya[start + j], yb[start + j],
                                min(weight[start + j], K.WEIGHT_MAX))
        s = math.sqrt(max(both, K.VAR_MIN))
        sq[j] = s
        kt[j] = min(kappa * s * s, 1e10)
        # c~_j = s (g + kappa (d - d0)) = g s + (kappa s^2) (d - d0) / s, term by term within +-1e100
        ct[j] = min(max(g * s, -1e100), 1e100) + min(max(kt[j] * ((d - d0) / s), -1e100), 1e100)
        for i in range(n):
            PJ[i, j] = (x[i, 2 + ia] - x[i, 2 + ib]) / s
    A = np.empty((m, m))
    for j in range(m):
        for k in range(m):
            A[j, k] = (PJ[a[start + j], k] - PJ[b[start + j], k]) / sq[j]
    A = 0.5 * (A + A.T)
    # M~ = K~ (I + A~ K~)^-1 = R (I + R A~ R)^-1 R, R = K~^1/2: the matrix inverted is symmetric with
    # eigenvalues >= 1 while A~ is positive semi-definite
    r = np.sqrt(kt)
    B = _woodbury_core(A, r)
    if not _positive_definite(B):
        # A~, a scaled covariance of the differences, lost its semi-definiteness to rounding (an
        # eigenvalue a hair below 0 makes I + A~ K~ singular): it is made so again
        vals, vecs = np.linalg.eigh(A)
        A = (vecs * np.maximum(vals, 0.0)) @ vecs.T
        B = _woodbury_core(A, r)
    inv = np.linalg.inv(B)
    M = np.empty((m, m))
    for j in range(m):
        for k in range(m):
            M[j, k] = r[j] * inv[j, k] * r[k]
    w = ct - M @ (A @ ct)
    PJM = PJ @ M
    for i in range(n):
        acc = 0.0
        for j in range(m):
            acc += PJ[i, j] * w[j]
        x[i, _MEAN] = K.clamp_mean(x[i, _MEAN] + acc)
    for i in range(n):
        for k in range(n):
            acc = 0.0
            for j in range(m):
                acc += PJM[i, j] * PJ[k, j]
            x[i, 2 + k] -= acc
    for i in range(n):
        x[i, 2 + i] = K.clamp_var(x[i, 2 + i])
        x[i, _SD] = math.sqrt(x[i, 2 + i])
    # a covariance obeys |P_ik| <= sd_i sd_k; rounding in a near-singular update can break it, and an
    # entry that grows past it then grows without bound
    for i in range(n):
        for k in range(n):
            if k != i:
                lim = x[i, _SD] * x[k, _SD]
                x[i, 2 + k] = min(max(x[i, 2 + k], -lim), lim)
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
            gap = min(t[g] - last[i], K.DT_MAX) if (not math.isnan(last[i]) and t[g] > last[i]) else 0.0
            fs, add = transition(theta, gap)
            f[side] = fs
            v[side] = min(fs * fs * v[side] + add, K.VAR_MAX)
            if theta[_REV] > 0.0:
                mean[side] = mu0 + f[side] * (mean[side] - mu0)
        S = max(v[0] + v[1] - 2.0 * f[0] * f[1] * x[ia, 2 + ib], 0.0)
        pw, pd, pl = forecast(obs, mean[0] - mean[1] + theta[_HOME] * home[g], S)
        out[g, 0] = pw
        out[g, 1] = pd
        out[g, 2] = pl
    return out


class FullEKF(EKF, covariance="full"):
    r"""``EKF(model, covariance="full")``: the extended Kalman filter with one :math:`n \times n` covariance
    (see the module docstring); state columns ``mean``, ``sd`` and the covariance row
    ``cov_0 .. cov_{n-1}``. Practical up to a few thousand competitors. A match of many sides is one
    Newton step over every row correlated with its members (:func:`filters._ekf_match._match_full`)."""

    name = "ekf_full"
    record_columns = 2
    _predict = _predict
    _proba = _proba
    _site = None
    _update = _update
    _match = _match_full

    def _frozen_proba(self, values, last, a, b, home, t, n_shared=None) -> np.ndarray:
        _, forecast, obs = self.observation_kernels()
        return _frozen(forecast, obs, values, last, self.theta(), a, b, home, t)

    def init_state(self, players, initial=None, levels=()) -> FilterState:
        st = super().init_state(players, initial)
        n = st.values.shape[0]
        values = np.zeros((n, 2 + n))
        values[:, :2] = st.values
        values[np.arange(n), 2 + np.arange(n)] = values[:, _SD] ** 2
        return FilterState(st.players, np.ascontiguousarray(values), st.count, st.last, _columns(n))

    def _aligned(self, state, games, initial=None, copy: bool = True, levels=()):
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
                         _columns(n0 + n1), time_base=state.time_base)
        index.update({p: n0 + j for j, p in enumerate(new)})
        return st, np.array([index[p] for p in players], dtype=np.int64)

    def covariance_matrix(self, state: FilterState) -> np.ndarray:
        """The competitors' posterior covariance."""
        return state.values[:, 2:].copy()


def _columns(n: int) -> tuple[str, ...]:
    return ("mean", "sd") + tuple(f"cov_{j}" for j in range(n))
