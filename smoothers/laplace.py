r"""The Laplace (whole-history) smoother and the static Bradley-Terry fit.

The posterior mode of every node of the random-walk model (see :mod:`smoothers.base`) by
Newton's method on the whole history, as in Whole History Rating (Coulom 2008):

    E(x) = - sum_games w_g l(x_a - x_b + h) + 1/2 sum_first (x_k - mu_0)^2 / sigma_0^2
           + 1/2 sum_links (x_k - mu_0 - phi_k (x_prev - mu_0))^2 / q_k

``w_g`` is the game's weight (``Games.with_weights``; 1 by default): its log-likelihood is
tempered by ``w_g``, as the filters that honour weights do, so a game of weight 2 is the same
evidence as the game played twice. The links are the model's transition between a competitor's
consecutive nodes, ``dt_k`` apart (:meth:`statespace.SkillModel.transition`, the step the EKF
predicts with): the random walk ``phi_k = 1``, ``q_k = q dt_k``, or with mean reversion
``lambda > 0`` the Ornstein-Uhlenbeck step ``phi_k = exp(-lambda dt_k)``,
``q_k = q (1 - phi_k^2) / (2 lambda)``, pulling skills towards ``mu_0 = prior_mean``.

Its Hessian is sparse: tridiagonal in time for each competitor (each link adds ``1/q_k`` to its
node's diagonal, ``phi_k^2 / q_k`` to the previous node's and ``-phi_k / q_k`` between them)
plus a 2 x 2 coupling ``w_g kappa_g (e_a - e_b)(e_a - e_b)^T`` per game, ``kappa = -l''``. Each
Newton step
solves one sparse system (below 500 nodes SuperLU with a minimum-degree ordering, else conjugate
gradients preconditioned by each competitor's chain), with a backtracking line search so that
the log posterior never decreases.

Marginal variances are the diagonal of ``H^{-1}`` at the mode: exactly (dense inverse) up to
``exact_variance_limit`` nodes; above it each competitor's variance is taken from its own
block of ``H`` (its chain with the games' curvature on the diagonal, others held at their
mode: WHR's approximation), which understates uncertainty where opponents are uncertain too.

The drift ``q`` is fixed, or chosen (``drift="auto"``) by maximising the Laplace approximation
of the marginal likelihood (type-II maximum likelihood):

    log p(y | q) ~ sum l(x*) - E_prior(x*) + 1/2 log det Q(q) - 1/2 log det H(x*)

with ``sum l`` the weighted log-likelihood and ``Q`` the prior precision (``log det Q =
sum_first log 1/sigma_0^2 + sum_links log 1/q_k``: the map from nodes to the transitions'
innovations is unit triangular). With reversion, ``lambda`` stays fixed while ``q`` is searched.

With drift 0 every competitor has one node and the mode is the (MAP, or with a flat prior the
maximum-likelihood) static Bradley-Terry fit: :class:`BradleyTerry` (weighted like the rest).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from numba import njit
from scipy.sparse.linalg import LinearOperator, cg, splu

from statespace import Games, SkillModel
from statespace import _numeric as nx

from .base import SmootherFit, Timeline, timeline

__all__ = ["LaplaceSmoother", "BradleyTerry"]


def _loglik(model: SkillModel, score: np.ndarray, diff: np.ndarray, weight: np.ndarray) -> float:
    return float(np.sum(weight * model.loglik(score, diff)))


class LaplaceSmoother:
    """Whole-history posterior mode of the random-walk model, with marginal variances.

    Parameters
    ----------
    model:
        The :class:`statespace.SkillModel` (link, scale, prior, drift, draw model, home, mean
        reversion). Default: logistic link in Elo units, prior N(1500, 350^2), drift 100 per
        day, draws as half a win, no reversion. Drift 0 with reversion > 0 (a noiseless decay)
        is refused.
    drift:
        ``None`` (the model's drift), a number (fixed), or ``"auto"``: type-II maximum likelihood
        between ``drift_bounds`` (in the model's units per unit of time).
    period_days:
        Time unit of the drift when the games have no rating periods (days; numeric times:
        their own unit).
    tol, max_iter:
        Newton stops when no node moves by more than ``tol`` times the model's scale.
    exact_variance_limit:
        Up to this many nodes, marginal variances are exact (dense inverse of the Hessian).
    """

    name = "laplace"
    honours_weights = True  # the filters' flag: game weights temper the likelihood (see the module docstring)

    def __init__(self, model: SkillModel | None = None, drift=None, *, period_days: float = 1.0,
                 tol: float = 1e-8, max_iter: int = 100, exact_variance_limit: int = 3000,
                 drift_bounds: tuple[float, float] | None = None):
        if model is None:
            model = SkillModel("logistic", 400.0 / math.log(10.0), 1500.0, 350.0**2, 100.0, "half")
        if not isinstance(model, SkillModel):
            raise TypeError(f"model must be a statespace.SkillModel, got {type(model).__name__}")
        if drift is not None and drift != "auto":
            if not (isinstance(drift, (int, float)) and np.isfinite(drift) and drift >= 0):
                raise ValueError(f"drift must be None, 'auto' or a number >= 0, got {drift!r}")
            import dataclasses

            model = dataclasses.replace(model, drift=float(drift))
        if not (np.isfinite(period_days) and period_days > 0):
            raise ValueError(f"period_days must be > 0, got {period_days!r}")
        if model.drift == 0 and drift != "auto" and model.reversion > 0:
            # a noiseless Ornstein-Uhlenbeck decay ties each node to the last exactly: no
            # precision exists for it, and the static single node would ignore the decay
            raise ValueError(f"{type(self).__name__}: drift 0 with reversion {model.reversion!r} > 0 is a "
                             f"deterministic decay, which the smoother cannot fit; give drift > 0 or reversion=0")
        self.skill_model = model
        self.auto_drift = drift == "auto"
        self.period_days = float(period_days)
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.exact_variance_limit = int(exact_variance_limit)
        s2 = model.scale**2
        self.drift_bounds = drift_bounds or (1e-7 * s2, 10.0 * s2)

    def __repr__(self) -> str:
        m = self.skill_model
        drift = "auto" if self.auto_drift else f"{m.drift:g}"
        rev = f", reversion={m.reversion:g}" if m.reversion else ""
        return f"{type(self).__name__}({m.link}, drift={drift}, prior_var={m.prior_var:g}{rev})"

    @property
    def model(self) -> SkillModel:
        return self.skill_model

    def times(self, games: Games) -> np.ndarray:
        """Each game's time in the smoother's unit (rating periods, else days / period_days)."""
        if games.period is not None:
            return games.period.astype(float)
        return games.days() / self.period_days

    # ------------------------------------------------------------ the fit
    def fit(self, games: Games, initial=None, *, warm_start: SmootherFit | None = None) -> SmootherFit:
        """The posterior mode and marginal variances of every node given ``games``.

        ``warm_start``: an earlier fit whose node means start Newton (nodes it does not have
        start at the prior mean), which makes refits on growing data cheap.
        """
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        if initial is not None:  # accepted for the filters' fit(games, initial) signature, but never used
            raise ValueError(f"{self.name}: initial= values are not supported by a smoother; start Newton "
                             f"from an earlier fit with warm_start= instead")
        if warm_start is not None and not isinstance(warm_start, SmootherFit):
            raise TypeError(f"warm_start must be a SmootherFit (an earlier fit), got {type(warm_start).__name__}")
        t0 = time.perf_counter()
        model = self.skill_model
        times = self._node_times(games, model)
        tl = timeline(games, times)
        x0 = self._start(tl, warm_start)
        info: dict = {}
        if self.auto_drift:
            model, x0, info = self._type2(games, tl, model, x0)
        x, H, it = self._mode(games, tl, model, x0)
        var, exact, cov = self._variances(tl, H)
        info.update({"iterations": it, "exact_variance": exact, "n_nodes": tl.n_nodes,
                     "log_evidence": self._log_evidence(games, tl, model, x, H),
                     "seconds": time.perf_counter() - t0, "drift": model.drift})
        fit = SmootherFit(self, games, tl, x, var, model, self.times, info=info, cov=cov)
        return fit

    def _node_times(self, games: Games, model: SkillModel) -> np.ndarray:
        times = self.times(games)
        if model.drift == 0 and not self.auto_drift:
            # static: one node per competitor, placed at the data's first time so that it forecasts
            # every game from then on (a node at time 0 missed games dated before 1970 or at
            # negative times, which then got the prior)
            return np.full(len(games), times.min())
        return times

    def _start(self, tl: Timeline, warm: SmootherFit | None) -> np.ndarray:
        x = np.full(tl.n_nodes, self.skill_model.prior_mean)
        if warm is not None:
            names = tl.players[tl.node_player]
            node = warm._node_at(warm._ids(names), tl.node_time)
            have = node >= 0
            x[have] = warm.mean[node[have]]
        return x

    def _prior(self, tl: Timeline, model: SkillModel):
        """The prior's energy ``1/2 x^T Q x - lin^T x + const`` (minus its log density, without
        the normalising terms): Q (sparse), lin, const, and log det Q."""
        first = tl.prev < 0
        n = tl.n_nodes
        prec0 = 1.0 / model.prior_var if model.prior_var > 0 else 1e-12
        diag = np.where(first, prec0, 0.0)
        links = np.flatnonzero(~first)
        prev = tl.prev[links]
        phi, q = model.transition(tl.dt[links])
        w = 1.0 / q
        np.add.at(diag, links, w)
        np.add.at(diag, prev, phi * phi * w)
        rows = np.concatenate([np.arange(n), links, prev])
        cols = np.concatenate([np.arange(n), prev, links])
        vals = np.concatenate([diag, -phi * w, -phi * w])
        Q = sp.csc_matrix((vals, (rows, cols)), shape=(n, n))
        lin = np.where(first, prec0 * model.prior_mean, 0.0)
        # the transition's mean, mu + phi (x_prev - mu) = phi x_prev + shift, is affine in the
        # nodes: the shift (0 for the random walk) enters the linear and constant terms
        shift = model.prior_mean * (1.0 - phi)
        np.add.at(lin, links, w * shift)
        np.add.at(lin, prev, -phi * w * shift)
        const = (0.5 * model.prior_mean**2 * float(first.sum()) / max(model.prior_var, 1e-300)
                 + 0.5 * float(np.sum(w * shift * shift)))
        logdet = float(first.sum() * math.log(prec0) + np.sum(np.log(w)))
        return Q, lin, const, logdet

    def _objective(self, games, tl, model, Q, lin, x) -> float:
        """Negative log posterior (up to a constant), each game's log-likelihood weighted."""
        d = x[tl.game_a] - x[tl.game_b] + model.home * (~games.neutral)
        return -_loglik(model, games.score, d, games.weight) + 0.5 * x @ (Q @ x) - lin @ x

    @staticmethod
    def _hessian(Q, tl: Timeline, kappa: np.ndarray):
        """Q plus each game's (weighted) curvature on the 2 x 2 block of its two nodes."""
        ga, gb = tl.game_a, tl.game_b
        rows = np.concatenate([ga, gb, ga, gb])
        cols = np.concatenate([ga, gb, gb, ga])
        vals = np.concatenate([kappa, kappa, -kappa, -kappa])
        n = tl.n_nodes
        return (Q + sp.csc_matrix((vals, (rows, cols)), shape=(n, n))).tocsc()

    def _mode(self, games, tl, model, x):
        Q, lin, _, _ = self._prior(tl, model)
        ga, gb = tl.game_a, tl.game_b
        home = model.home * (~games.neutral)
        score = games.score.astype(float)
        weight = games.weight
        E = self._objective(games, tl, model, Q, lin, x)
        it = 0
        H = None
        for it in range(1, self.max_iter + 1):
            d = x[ga] - x[gb] + home
            g, h = model.loglik_derivs(score, d)
            g = weight * g
            kappa = weight * np.maximum(-h, 0.0)
            grad = Q @ x - lin
            np.add.at(grad, ga, -g)
            np.add.at(grad, gb, g)
            H = self._hessian(Q, tl, kappa)
            step = -_solve(H, grad, tl.prev)
            # backtracking: accept the largest of 1, 1/2, ... that lowers the objective
            a = 1.0
            for _ in range(30):
                x_new = x + a * step
                E_new = self._objective(games, tl, model, Q, lin, x_new)
                if E_new <= E + 1e-12 * abs(E):
                    break
                a *= 0.5
            x, E = x_new, E_new
            if np.max(np.abs(a * step)) <= self.tol * model.scale:
                break
        else:
            warnings.warn(f"LaplaceSmoother: Newton did not converge in {self.max_iter} iterations", RuntimeWarning,
                          stacklevel=3)
        # Hessian at the final mode
        d = x[ga] - x[gb] + home
        _, h = model.loglik_derivs(score, d)
        H = self._hessian(Q, tl, weight * np.maximum(-h, 0.0))
        return x, H, it

    def _variances(self, tl: Timeline, H) -> tuple[np.ndarray, bool, np.ndarray | None]:
        n = tl.n_nodes
        if n <= self.exact_variance_limit:
            cov = np.linalg.inv(H.toarray())
            return np.diag(cov).copy(), True, cov
        # per-competitor blocks: tridiagonal (the chain plus the games' curvature on the diagonal)
        return _tridiagonal_inverse_diag(*_chains(H, tl.prev)), False, None

    def _log_evidence(self, games, tl, model, x, H) -> float:
        Q, lin, prior_const, logdet_q = self._prior(tl, model)
        E = self._objective(games, tl, model, Q, lin, x)
        return -E - prior_const + 0.5 * logdet_q - 0.5 * _logdet(H, tl.prev)

    def _type2(self, games, tl, model, x0):
        import dataclasses

        lo, hi = self.drift_bounds
        cache = {"x": x0}
        trace = []

        def neg_evidence(log_q):
            m = dataclasses.replace(model, drift=float(math.exp(log_q)))
            x, H, _ = self._mode(games, tl, m, cache["x"])
            cache["x"] = x
            ev = self._log_evidence(games, tl, m, x, H)
            trace.append((m.drift, ev))
            return -ev

        res = minimize_scalar(neg_evidence, bounds=(math.log(lo), math.log(hi)), method="bounded",
                              options={"xatol": 1e-3})
        best = dataclasses.replace(model, drift=float(math.exp(res.x)))
        return best, cache["x"], {"drift_trace": trace}


_CG_FROM = 500  # nodes: from here Newton's steps use conjugate gradients (below, a sparse LU)
_DIRECT_LIMIT = 4000  # nodes: up to here log det H is exact (sparse LU), and LU backs up a stalled CG


def _chains(H, prev):
    """The per-competitor tridiagonal blocks of H: diagonal, and off[k] = H[k, prev[k]]."""
    diag = np.ascontiguousarray(H.diagonal())
    linked = prev >= 0
    off = np.zeros(diag.size)
    links = np.flatnonzero(linked)
    off[links] = np.asarray(H[links, prev[links]]).ravel()
    return diag, off, linked


@njit(cache=True)
def _chain_factor(diag, off, linked):
    """LDL^T of every chain (Thomas algorithm): pivots d and multipliers l."""
    n = diag.size
    d = np.empty(n)
    l = np.zeros(n)
    for k in range(n):
        if linked[k]:
            l[k] = off[k] / d[k - 1]
            d[k] = diag[k] - l[k] * off[k]
        else:
            d[k] = diag[k]
    return d, l


@njit(cache=True)
def _chain_solve(d, l, linked, b):
    n = b.size
    y = np.empty(n)
    for k in range(n):
        y[k] = b[k] - (l[k] * y[k - 1] if linked[k] else 0.0)
    x = np.empty(n)
    for k in range(n - 1, -1, -1):
        x[k] = y[k] / d[k]
        if k + 1 < n and linked[k + 1]:
            x[k] -= l[k + 1] * x[k + 1]
    return x


def _solve(H, b, prev):
    """Solve H x = b: sparse LU for small systems; otherwise conjugate gradients preconditioned
    by the per-competitor chains (exact when competitors do not interact), which needs a few
    dozen products with H instead of a factorisation whose fill-in explodes on real schedules
    (100 competitors x 40 periods: about 20 iterations, 5 ms, against 60 ms for the LU). Should
    CG stall, a system of up to ``_DIRECT_LIMIT`` nodes is solved by the LU instead."""
    n = b.size
    if n >= _CG_FROM:
        diag, off, linked = _chains(H, prev)
        d, l = _chain_factor(diag, off, linked)
        M = LinearOperator((n, n), matvec=lambda r: _chain_solve(d, l, linked, np.ascontiguousarray(r)))
        x, info = cg(H, b, rtol=1e-12, atol=0.0, maxiter=10 * int(math.sqrt(n)) + 200, M=M)
        if info == 0:
            return x
        if n > _DIRECT_LIMIT:
            warnings.warn(f"LaplaceSmoother: conjugate gradients stopped before 1e-12 (info {info})",
                          RuntimeWarning, stacklevel=3)
            return x
    lu = splu(H, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
    return lu.solve(b)


def _logdet(H, prev) -> float:
    """log det H: exact (sparse LU) for small systems; above, the chains' block approximation
    (log det of the per-competitor blocks), the same approximation as the variances."""
    if H.shape[0] <= _DIRECT_LIMIT:
        lu = splu(H, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options={"SymmetricMode": True})
        return float(np.sum(np.log(np.abs(lu.U.diagonal()))))
    d, _ = _chain_factor(*_chains(H, prev))
    return float(np.sum(np.log(d)))


@njit(cache=True)
def _tridiagonal_inverse_diag(diag, off, linked):
    """Diagonal of the inverse of each competitor's tridiagonal block (chains of nodes where
    ``linked[k]`` says node k continues node k - 1): with forward pivots f and backward pivots g
    of the chain, ``(A^-1)_kk = 1 / (f_k + g_k - a_k)``."""
    n = diag.size
    f = np.empty(n)
    g = np.empty(n)
    for k in range(n):
        f[k] = diag[k] - (off[k] * off[k] / f[k - 1] if linked[k] else 0.0)
    for k in range(n - 1, -1, -1):
        nxt = k + 1 < n and linked[k + 1]
        g[k] = diag[k] - (off[k + 1] * off[k + 1] / g[k + 1] if nxt else 0.0)
    out = np.empty(n)
    for k in range(n):
        out[k] = 1.0 / (f[k] + g[k] - diag[k])
    return out


class BradleyTerry(LaplaceSmoother):
    """Static Bradley-Terry (or Thurstone-Mosteller) fit: the Laplace smoother with drift 0.

    Each competitor has one skill; the mode is the maximum a posteriori fit under the prior
    ``N(prior_mean, prior_var)`` — with a wide prior (the default ``prior_var=1e6`` scale^2)
    it is the maximum-likelihood fit, identified only up to a common shift (pinned by the
    prior to ``prior_mean`` on average). Game weights temper the likelihood,
    ``sum_g w_g l_g``: a weighted maximum-likelihood fit. Static skills have no dynamics, so
    the model's drift and mean reversion are both replaced by 0 (forecasts do not decay).
    """

    name = "bradley_terry"

    def __init__(self, model: SkillModel | None = None, **kwargs):
        import dataclasses

        if model is None:
            model = SkillModel("logistic", 400.0 / math.log(10.0), 1500.0, 1e6 * (400.0 / math.log(10.0)) ** 2,
                               0.0, "half")
        super().__init__(dataclasses.replace(model, drift=0.0, reversion=0.0), drift=None, **kwargs)

    def __repr__(self) -> str:
        return f"BradleyTerry({self.skill_model.link}, scale={self.skill_model.scale:g})"
