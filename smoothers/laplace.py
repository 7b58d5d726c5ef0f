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

Marginal variances are the diagonal of ``H^{-1}`` at the mode. Up to ``dense_cov_limit`` nodes
the whole inverse is formed (dense), so forecasts also get the two competitors' covariance.
Above, ``H = P^T L D L^T P`` is factorised sparsely (a fill-reducing ordering ``P``: reverse
Cuthill-McKee, or SuperLU's minimum degree on ``H + H^T`` when that fills less) and the
*selected inverse* (Takahashi, Fox & Wang 1973; Erisman & Tinney 1975; as in INLA, Rue &
Martino 2007) gives the entries of ``H^{-1}`` on the pattern of ``L + L^T``: every marginal
variance and every node's covariance with its chain neighbours, exactly, for about the cost
of the factorisation; other covariances (forecasts) come from sparse solves with the same factor,
on demand. ``variances="auto"`` does so while the factor stays within a budget (``sum_j
c_j^2 <= 1e9`` for the column counts ``c_j`` of ``L``, about 2-4 s here, and ``nnz(L) <=
2e7``); beyond it, and with ``variances="blocks"``, each competitor's variance is taken from
its own block of ``H`` (its chain with the games' curvature on the diagonal, others held at
their mode: WHR's approximation), which understates uncertainty where opponents are
uncertain too.

The drift ``q`` is fixed, or chosen (``drift="auto"``) by maximising the Laplace approximation
of the marginal likelihood (type-II maximum likelihood):

    log p(y | q) ~ sum l(x*) - E_prior(x*) + 1/2 log det Q(q) - 1/2 log det H(x*)

with ``sum l`` the weighted log-likelihood and ``Q`` the prior precision (``log det Q =
sum_first log 1/sigma_0^2 + sum_links log 1/q_k``: the map from nodes to the transitions'
innovations is unit triangular). With reversion, ``lambda`` stays fixed while ``q`` is searched.
``log det H = sum log D`` from the same sparse factor as the variances (exact); with the
per-competitor blocks, the sum of the blocks' log-determinants (an upper bound, Fischer).

With drift 0 every competitor has one node and the mode is the (MAP, or with a flat prior the
maximum-likelihood) static Bradley-Terry fit: :class:`BradleyTerry` (weighted like the rest).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import lapack
from scipy.optimize import minimize_scalar
from numba import njit
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import LinearOperator, cg, spilu, splu

from statespace import Games, SkillModel
from statespace import _numeric as nx

from .base import SmootherFit, Timeline, timeline

__all__ = ["LaplaceSmoother", "BradleyTerry", "ford_groups", "SparseCovariance"]


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
        is refused, and so is a latent home advantage (``home_drift > 0``): the smoother fits a
        fixed home advantage (the EKF filters a drifting one).
    drift:
        ``None`` (the model's drift), a number (fixed), or ``"auto"``: type-II maximum likelihood
        between ``drift_bounds`` (in the model's units per unit of time).
    period_days:
        Time unit of the drift when the games have no rating periods (days; numeric times:
        their own unit).
    tol, max_iter:
        Newton stops when no node moves by more than ``tol`` times the model's scale.
    variances:
        ``"auto"`` (default): exact marginal variances -- up to ``dense_cov_limit`` nodes from
        the dense inverse, above from the selected inverse of a sparse ``L D L^T`` factor of the
        Hessian whenever that factor fits the budget (module constants ``_FACTOR_FLOPS``,
        ``_FACTOR_NNZ``), else the per-competitor blocks; ``"exact"``: the selected inverse
        whatever it costs; ``"blocks"``: the per-competitor chains at every size (cheap,
        understated). The log-determinant in the evidence (``drift="auto"``) comes from the same
        choice: exact with a factor, the blocks' without.
    dense_cov_limit:
        Up to this many nodes (with ``variances`` other than ``"blocks"``) the whole covariance
        ``H^-1`` is formed densely (``fit.cov`` an array; LAPACK's Cholesky). Above, ``fit.cov``
        computes the covariances asked for from the sparse factor (:class:`SparseCovariance`),
        or is ``None`` with the blocks.
    exact_variance_limit:
        Deprecated: the former name of ``dense_cov_limit`` (above it, variances were the blocks;
        they are now exact wherever the factor is affordable; ``variances="blocks"`` keeps the
        blocks).
    """

    name = "laplace"
    honours_weights = True  # the filters' flag: game weights temper the likelihood (see the module docstring)

    def __init__(self, model: SkillModel | None = None, drift=None, *, period_days: float = 1.0,
                 tol: float = 1e-8, max_iter: int = 100, variances: str = "auto", dense_cov_limit: int = 3000,
                 exact_variance_limit: int | None = None, drift_bounds: tuple[float, float] | None = None):
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
        if model.home_drift > 0:
            raise ValueError(f"{type(self).__name__}: the model has a latent, drifting home advantage (home_drift="
                             f"{model.home_drift!r}), which the smoother does not model: it fits a fixed home "
                             f"advantage; give home_drift=0, or filter the drifting one with the EKF")
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
        if variances not in ("auto", "exact", "blocks"):
            raise ValueError(f"variances must be 'auto', 'exact' or 'blocks', got {variances!r}")
        if exact_variance_limit is not None:
            warnings.warn("exact_variance_limit is deprecated: it is now dense_cov_limit (the size up to which the "
                          "whole covariance is formed densely); above it the variances are exact (selected "
                          "inverse of a sparse factor) when affordable; variances='blocks' gives the per-competitor "
                          "chains", DeprecationWarning, stacklevel=2)
            dense_cov_limit = exact_variance_limit
        if not (isinstance(dense_cov_limit, (int, np.integer)) and dense_cov_limit >= 0):
            raise ValueError(f"dense_cov_limit must be an integer >= 0, got {dense_cov_limit!r}")
        self.variances = variances
        self.dense_cov_limit = int(dense_cov_limit)
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
        dense = self._dense(tl)
        # the sparse factor's order and pattern: once per fit (the Hessians of every drift share them)
        plan = self._plan(tl) if (self.auto_drift or not dense) else None
        if self.auto_drift:
            model, x0, info = self._type2(games, tl, model, x0, plan)
        x, H, it = self._mode(games, tl, model, x0)
        factor = self._factor(tl, H, None if dense else plan)
        var, cov, prev_cov, how = self._variances(tl, H, factor)
        info.update({"iterations": it, "exact_variance": how != "blocks", "variances": how,
                     "prev_cov": prev_cov, "n_nodes": tl.n_nodes,
                     "log_evidence": self._log_evidence(games, tl, model, x, H, factor),
                     "seconds": time.perf_counter() - t0, "drift": model.drift})
        if plan is not None:
            info.update({"factor_ordering": plan.ordering, "factor_nnz": plan.nnz, "factor_flops": plan.flops})
        fit = SmootherFit(self, games, tl, x, var, model, self.times, info=info, cov=cov)
        return fit

    def _dense(self, tl: Timeline) -> bool:
        """Whether the final fit's covariance is formed densely (small fits)."""
        return self.variances != "blocks" and tl.n_nodes <= self.dense_cov_limit

    def _plan(self, tl: Timeline) -> "_SparsePlan | None":
        """The sparse factorisation's order and symbolic pattern, if it is to be used: ``None``
        for the per-competitor blocks, or when the factor is over the budget (``"auto"``; and
        always for small fits, which have the dense factor to fall back on)."""
        if self.variances == "blocks":
            return None
        if self.variances == "exact" and not self._dense(tl):
            return _SparsePlan.build(tl, math.inf, math.inf)
        return _SparsePlan.build(tl, _FACTOR_FLOPS, _FACTOR_NNZ)

    def _factor(self, tl: Timeline, H, plan: "_SparsePlan | None"):
        """The factor of H that the variances and log det H come from: the sparse one if planned,
        else the dense Cholesky factor for a small fit, else ``None`` (the blocks)."""
        if plan is not None:
            factor = plan.factor(H)
            if factor is not None:
                return factor
        if self._dense(tl):
            return _DenseFactor(H)
        return None

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

    def _variances(self, tl: Timeline, H, factor: "_DenseFactor | _SparseFactor | None"):
        """Marginal variances, the covariance (an array, a :class:`SparseCovariance` or ``None``),
        each node's covariance with its previous node (NaN for first nodes) and which method."""
        n = tl.n_nodes
        linked = np.flatnonzero(tl.prev >= 0)
        prev_cov = np.full(n, np.nan)
        if isinstance(factor, _DenseFactor):
            cov = factor.inverse()
            prev_cov[linked] = cov[linked, tl.prev[linked]]
            return np.diag(cov).copy(), cov, prev_cov, "dense"
        if factor is not None:
            var, prev_cov[linked] = factor.selected_inverse(linked, tl.prev[linked])
            return var, SparseCovariance(factor, var), prev_cov, "selected inverse"
        # per-competitor blocks: tridiagonal (the chain plus the games' curvature on the diagonal)
        diag, off, link = _chains(H, tl.prev)
        var = _tridiagonal_inverse_diag(diag, off, link)
        d, l = _chain_factor(diag, off, link)
        # in a chain's L D L^T the previous node's column holds only l_k: Z[k, k-1] = -l_k Z[k, k]
        prev_cov[linked] = -l[linked] * var[linked]
        return var, None, prev_cov, "blocks"

    def _log_evidence(self, games, tl, model, x, H, factor: "_DenseFactor | _SparseFactor | None") -> float:
        Q, lin, prior_const, logdet_q = self._prior(tl, model)
        E = self._objective(games, tl, model, Q, lin, x)
        return -E - prior_const + 0.5 * logdet_q - 0.5 * _logdet(H, tl.prev, factor)

    def _type2(self, games, tl, model, x0, plan):
        import dataclasses

        lo, hi = self.drift_bounds
        cache = {"x": x0}
        trace = []

        def neg_evidence(log_q):
            m = dataclasses.replace(model, drift=float(math.exp(log_q)))
            x, H, _ = self._mode(games, tl, m, cache["x"])
            cache["x"] = x
            ev = self._log_evidence(games, tl, m, x, H, self._factor(tl, H, plan))
            trace.append((m.drift, ev))
            return -ev

        res = minimize_scalar(neg_evidence, bounds=(math.log(lo), math.log(hi)), method="bounded",
                              options={"xatol": 1e-3})
        best = dataclasses.replace(model, drift=float(math.exp(res.x)))
        return best, cache["x"], {"drift_trace": trace}


_CG_FROM = 500  # nodes: from here Newton's steps use conjugate gradients (below, a sparse LU)
_DIRECT_LIMIT = 4000  # nodes: up to here the LU backs up a stalled CG
# The budget of variances="auto" for the sparse L D L^T factor and its selected inverse, in the column counts c_j
# of L (strictly below the diagonal): both passes cost about sum_j c_j^2 multiply-adds and hold nnz(L) entries
# (L, the selected inverse and their row indices: 24 bytes each). Measured on the 2-core development machine
# (docs/smoothers.md): the benchmark's 4,000 nodes 4.0e7 (0.04 s for both passes), English football's 416,056
# nodes 6.2e8 (1.9 s, plus 1.6 s for the minimum-degree ordering), international football 4.6e9 (about 15 s,
# over the budget), ATP 4.5e11 (1.5e8 entries: out of reach, the blocks).
_FACTOR_FLOPS = 1e9
_FACTOR_NNZ = 2e7
_RCM_ENOUGH = 1e8  # flops: a reverse Cuthill-McKee ordering this cheap is kept without trying minimum degree
# "auto" goes straight to the blocks when _crossing_work exceeds this many times the flops budget: measured
# (flops of minimum degree, of reverse Cuthill-McKee) / _crossing_work = (0.18, 11) on English football, (0.72, 1.3)
# NFL, (0.90, 110) international football, (1.2, 1.0) the benchmark, (8.0, 52) ATP (5.6e10: skipped)
_SKIP = 20.0


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


def _logdet(H, prev, factor: "_DenseFactor | _SparseFactor | None") -> float:
    """log det H: exact from a factor (dense Cholesky, or the sparse ``sum log D``); without one,
    the per-competitor blocks' approximation (log det of each chain's block), the same
    approximation as the variances."""
    if factor is not None:
        return factor.logdet
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


# ------------------------------------------------------------ exact variances: sparse L D L^T and its selected inverse
class _DenseFactor:
    """``H = C C^T`` by LAPACK's dense Cholesky (small fits): log det H and the whole inverse."""

    def __init__(self, H):
        c, info = lapack.dpotrf(H.toarray(), lower=1)
        if info != 0:  # pragma: no cover - H is positive definite (the prior's Q is)
            raise np.linalg.LinAlgError(f"LaplaceSmoother: the Hessian is not positive definite (dpotrf {info})")
        self.c = c
        self.logdet = float(2.0 * np.sum(np.log(np.diag(c))))

    def inverse(self) -> np.ndarray:
        inv, info = lapack.dpotri(self.c, lower=1)
        if info != 0:  # pragma: no cover
            raise np.linalg.LinAlgError(f"LaplaceSmoother: dpotri {info}")
        low = np.tril(inv)
        return low + np.tril(low, -1).T


def _structure(tl: Timeline):
    """The sparsity pattern H can have (whatever the values): the diagonal, each link between a
    competitor's consecutive nodes and each game's pair of nodes, both triangles, as CSC
    (indptr, indices: int64, sorted)."""
    n = tl.n_nodes
    links = np.flatnonzero(tl.prev >= 0)
    ga, gb = tl.game_a, tl.game_b
    rows = np.concatenate([np.arange(n), links, tl.prev[links], ga, gb])
    cols = np.concatenate([np.arange(n), tl.prev[links], links, gb, ga])
    S = sp.csc_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    S.sum_duplicates()
    return S.indptr.astype(np.int64), S.indices.astype(np.int64), S


@njit(cache=True)
def _fill_counts(indptr, indices, order, pos, max_nnz):
    """Elimination tree and column counts (strictly below the diagonal) of L for the symmetric
    pattern (indptr, indices) taken in the order ``order`` (``pos`` its inverse): each row's
    pattern is its row subtree, walked up the tree (Liu 1986; Davis 2006, ch. 4). Stops early
    (``ok`` False) once the count passes ``max_nnz``."""
    n = order.size
    parent = np.full(n, -1, np.int64)
    ancestor = np.full(n, -1, np.int64)
    for k in range(n):
        v = order[k]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            while i != -1 and i < k:  # path compression towards k
                nxt = ancestor[i]
                ancestor[i] = k
                if nxt == -1:
                    parent[i] = k
                i = nxt
    counts = np.zeros(n, np.int64)
    mark = np.full(n, -1, np.int64)
    total = 0
    for k in range(n):
        mark[k] = k
        v = order[k]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            while i < k and mark[i] != k:  # L[k, i] != 0: walk up to k
                counts[i] += 1
                total += 1
                mark[i] = k
                i = parent[i]
        if total > max_nnz:
            return parent, counts, False
    return parent, counts, True


@njit(cache=True)
def _fill_pattern(indptr, indices, order, pos, parent, counts):
    """Row indices of L column by column (sorted), from the same row subtrees."""
    n = order.size
    colptr = np.zeros(n + 1, np.int64)
    for j in range(n):
        colptr[j + 1] = colptr[j] + counts[j]
    nxt = colptr[:n].copy()
    rowind = np.empty(colptr[n], np.int64)
    mark = np.full(n, -1, np.int64)
    for k in range(n):
        mark[k] = k
        v = order[k]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            while i < k and mark[i] != k:
                rowind[nxt[i]] = k
                nxt[i] += 1
                mark[i] = k
                i = parent[i]
    return colptr, rowind


@njit(cache=True)
def _ldl_numeric(indptr, indices, data, order, pos, colptr, rowind):
    """H[order][:, order] = L D L^T on the symbolic pattern (colptr, rowind): left-looking, one
    dense work column; each earlier column k that reaches row j is kept on a list by its next
    row. Returns L's values (unit diagonal implied), D, and False if a pivot is not positive."""
    n = order.size
    L = np.zeros(rowind.size)
    d = np.zeros(n)
    x = np.zeros(n)
    head = np.full(n, -1, np.int64)
    link = np.full(n, -1, np.int64)
    nextpos = np.zeros(n, np.int64)
    for j in range(n):
        v = order[j]
        for p in range(indptr[v], indptr[v + 1]):
            i = pos[indices[p]]
            if i >= j:
                x[i] += data[p]
        k = head[j]
        while k != -1:
            knext = link[k]
            q = nextpos[k]  # L[j, k]
            f = L[q] * d[k]
            x[j] -= f * L[q]
            for r in range(q + 1, colptr[k + 1]):
                x[rowind[r]] -= f * L[r]
            q += 1
            nextpos[k] = q
            if q < colptr[k + 1]:
                row = rowind[q]
                link[k] = head[row]
                head[row] = k
            k = knext
        dj = x[j]
        x[j] = 0.0
        if not dj > 0.0:
            return L, d, False
        d[j] = dj
        for q in range(colptr[j], colptr[j + 1]):
            r = rowind[q]
            L[q] = x[r] / dj
            x[r] = 0.0
        nextpos[j] = colptr[j]
        if colptr[j] < colptr[j + 1]:
            row = rowind[colptr[j]]
            link[j] = head[row]
            head[row] = j
    return L, d, True


@njit(cache=True)
def _selected_inverse(colptr, rowind, L, d):
    """Z = H^-1 on the pattern of L (strictly lower: z, diagonal: zd), columns from last to
    first (Takahashi et al. 1973; Erisman & Tinney 1975): for column j with pattern S,

        Z[i, j] = - sum_{k in S} L[k, j] Z[i, k]   (i in S),   Z[j, j] = 1 / D[j] - sum_{k in S} L[k, j] Z[k, j],

    where every Z[i, k] needed lies in the pattern already computed (S is a clique of L's graph:
    for k < i in S, i is in column k), found by walking column k's sorted rows along S. Returns
    ok False if an entry is missing (a pattern that is not L's)."""
    n = d.size
    z = np.empty(rowind.size)
    zd = np.empty(n)
    acc = np.zeros(n)
    for j in range(n - 1, -1, -1):
        p0 = colptr[j]
        m = colptr[j + 1] - p0
        for t in range(m):
            acc[t] = 0.0
        for t in range(m):
            k = rowind[p0 + t]
            lkj = L[p0 + t]
            s = lkj * zd[k]
            q = colptr[k]
            end = colptr[k + 1]
            for u in range(t + 1, m):
                r = rowind[p0 + u]
                while q < end and rowind[q] != r:
                    q += 1
                if q == end:
                    return zd, z, False
                zr = z[q]  # Z[r, k]
                acc[u] += lkj * zr  # Z[r, j] gets L[k, j] Z[r, k]
                s += L[p0 + u] * zr  # Z[k, j] gets L[r, j] Z[k, r]
                q += 1
            acc[t] += s
        s = 0.0
        for t in range(m):
            z[p0 + t] = -acc[t]
            s -= L[p0 + t] * acc[t]
        zd[j] = 1.0 / d[j] - s
    return zd, z, True


@njit(cache=True)
def _pattern_entries(colptr, rowind, z, zd, a, b):
    """Z[a_t, b_t] (positions in the factor's order) where the pair lies in the pattern; NaN elsewhere."""
    out = np.full(a.size, np.nan)
    for t in range(a.size):
        i, j = a[t], b[t]
        if i == j:
            out[t] = zd[i]
            continue
        lo, hi = (i, j) if i < j else (j, i)
        left, right = colptr[lo], colptr[lo + 1]
        while left < right:  # binary search of row hi in column lo
            mid = (left + right) // 2
            if rowind[mid] < hi:
                left = mid + 1
            else:
                right = mid
        if left < colptr[lo + 1] and rowind[left] == hi:
            out[t] = z[left]
    return out


@njit(cache=True)
def _forward_paths(colptr, rowind, L, parent, nodes):
    """y_s = L^-1 e_s for each position s in ``nodes``: nonzero only on the path from s to the
    root of the elimination tree (every row of a column of L is an ancestor of it), so each
    forward solve touches that path's columns only. Returns the paths' offsets, positions and
    values, concatenated."""
    n = parent.size
    offsets = np.zeros(nodes.size + 1, np.int64)
    for u in range(nodes.size):
        k = nodes[u]
        m = 0
        while k != -1:
            m += 1
            k = parent[k]
        offsets[u + 1] = offsets[u] + m
    where = np.empty(offsets[-1], np.int64)
    vals = np.empty(offsets[-1])
    y = np.zeros(n)
    for u in range(nodes.size):
        k = nodes[u]
        t = offsets[u]
        while k != -1:
            where[t] = k
            t += 1
            k = parent[k]
        y[nodes[u]] = 1.0
        for t in range(offsets[u], offsets[u + 1]):  # the path is increasing: forward substitution
            j = where[t]
            yj = y[j]
            if yj != 0.0:
                for q in range(colptr[j], colptr[j + 1]):
                    y[rowind[q]] -= L[q] * yj
        for t in range(offsets[u], offsets[u + 1]):
            vals[t] = y[where[t]]
            y[where[t]] = 0.0
    return offsets, where, vals


@njit(cache=True)
def _path_dots(offsets, where, vals, d, ia, ib):
    """(H^-1)[a, b] = y_a^T D^-1 y_b for the pairs (ia[t], ib[t]) of paths, ``ia`` sorted."""
    n = d.size
    w = np.zeros(n)
    out = np.empty(ia.size)
    current = -1
    for t in range(ia.size):
        if ia[t] != current:
            if current >= 0:
                for q in range(offsets[current], offsets[current + 1]):
                    w[where[q]] = 0.0
            current = ia[t]
            for q in range(offsets[current], offsets[current + 1]):
                w[where[q]] = vals[q] / d[where[q]]
        acc = 0.0
        for q in range(offsets[ib[t]], offsets[ib[t] + 1]):
            acc += w[where[q]] * vals[q]
        out[t] = acc
    return out


def _crossing_work(tl: Timeline) -> float:
    """sum over nodes of w^2, w the number of competitors' links that cross the node's time (those
    still "alive" then): the work of factorising with the nodes in time order, a band of width
    about w. A rough guide to the fill of any ordering: every time cut is a separator of w nodes."""
    linked = np.flatnonzero(tl.prev >= 0)
    start = np.sort(tl.node_time[tl.prev[linked]])
    end = np.sort(tl.node_time[linked])
    w = np.searchsorted(start, tl.node_time, side="left") - np.searchsorted(end, tl.node_time, side="left")
    return float(np.sum(w.astype(float) ** 2))


class _SparsePlan:
    """A fill-reducing order of the nodes and the symbolic pattern of L for every Hessian of a
    timeline (their pattern is fixed: chains plus games); ``factor(H)`` factorises one."""

    def __init__(self, order, pos, parent, colptr, rowind, ordering: str, flops: float):
        self.order, self.pos, self.parent = order, pos, parent
        self.colptr, self.rowind = colptr, rowind
        self.ordering = ordering
        self.flops = flops
        self.n = order.size

    @property
    def nnz(self) -> int:
        """Entries of L, its unit diagonal included (as SuperLU counts them)."""
        return int(self.rowind.size) + self.n

    @classmethod
    def build(cls, tl: Timeline, max_flops: float, max_nnz: float) -> "_SparsePlan | None":
        """Reverse Cuthill-McKee first (about free, and as good as anything on a dense schedule);
        if its factor costs more than ``_RCM_ENOUGH``, also SuperLU's multiple minimum degree on
        ``H + H^T`` (its ordering alone, taken from an incomplete factorisation that keeps
        nothing). The cheaper one within the budget (``sum c_j^2 <= max_flops``, ``nnz <=
        max_nnz``), or ``None`` if neither fits -- or at once if the chains crossing each node's
        time (``_crossing_work``) say the factor is far out of the budget, as on ATP, where the
        minimum-degree ordering alone takes 4 s."""
        n = tl.n_nodes
        if _crossing_work(tl) > _SKIP * max_flops:
            return None
        indptr, indices, S = _structure(tl)
        lim = float(max_nnz) - n
        best = None

        def consider(order, name):
            nonlocal best
            order = np.ascontiguousarray(order, dtype=np.int64)
            pos = np.empty(n, np.int64)
            pos[order] = np.arange(n)
            parent, counts, ok = _fill_counts(indptr, indices, order, pos, lim)
            if not ok:
                return math.inf
            flops = float(np.sum(counts.astype(float) ** 2))
            if flops <= max_flops and (best is None or flops < best[3]):
                best = (order, pos, (parent, counts), flops, name)
            return flops

        flops = consider(reverse_cuthill_mckee(S.tocsr(), symmetric_mode=True), "reverse Cuthill-McKee")
        if flops > _RCM_ENOUGH:
            # SuperLU's ordering alone: with every entry dropped the incomplete factorisation is free;
            # the values make the matrix diagonally dominant (the ordering reads only the pattern)
            M = S.copy()
            M.data[:] = -1.0
            M.setdiag(np.diff(S.indptr).astype(float) + 1.0)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ilu = spilu(M.tocsc(), drop_tol=1e300, fill_factor=1.0, permc_spec="MMD_AT_PLUS_A",
                                diag_pivot_thresh=0.0, options={"SymmetricMode": True})
                consider(np.argsort(ilu.perm_c), "minimum degree (SuperLU MMD_AT_PLUS_A)")
            except RuntimeError:  # pragma: no cover - SuperLU refusing a diagonally dominant matrix
                pass
        if best is None:
            return None
        order, pos, (parent, counts), flops, name = best
        colptr, rowind = _fill_pattern(indptr, indices, order, pos, parent, counts)
        return cls(order, pos, parent, colptr, rowind, name, flops)

    @classmethod
    def from_order(cls, tl: Timeline, order: np.ndarray, name: str = "given") -> "_SparsePlan":
        """The plan for a given order of the nodes (whatever its fill)."""
        indptr, indices, _ = _structure(tl)
        order = np.ascontiguousarray(order, dtype=np.int64)
        pos = np.empty(order.size, np.int64)
        pos[order] = np.arange(order.size)
        parent, counts, _ = _fill_counts(indptr, indices, order, pos, math.inf)
        colptr, rowind = _fill_pattern(indptr, indices, order, pos, parent, counts)
        return cls(order, pos, parent, colptr, rowind, name, float(np.sum(counts.astype(float) ** 2)))

    def factor(self, H) -> "_SparseFactor | None":
        H = H.tocsc()
        L, d, ok = _ldl_numeric(H.indptr.astype(np.int64), H.indices.astype(np.int64), H.data, self.order, self.pos,
                                self.colptr, self.rowind)
        if not ok:  # pragma: no cover - H is positive definite at any point (the prior's Q is)
            warnings.warn("LaplaceSmoother: the Hessian is not numerically positive definite; variances from "
                          "the per-competitor blocks", RuntimeWarning, stacklevel=3)
            return None
        return _SparseFactor(self, L, d)


class _SparseFactor:
    """``H[order][:, order] = L D L^T``: log det H, the selected inverse, and solves."""

    def __init__(self, plan: _SparsePlan, L: np.ndarray, d: np.ndarray):
        self.plan, self.L, self.d = plan, L, d
        self.logdet = float(np.sum(np.log(d)))

    def selected_inverse(self, a: np.ndarray, b: np.ndarray):
        """Every node's variance and the covariances of the node pairs (a, b), which must lie in
        the pattern of L + L^T (a node and its previous node always do: H links them)."""
        p = self.plan
        zd, z, ok = _selected_inverse(p.colptr, p.rowind, self.L, self.d)
        if not ok:  # pragma: no cover - the pattern is L's by construction
            raise RuntimeError("selected inverse: the factor's pattern is not closed")
        entries = _pattern_entries(p.colptr, p.rowind, z, zd, p.pos[a], p.pos[b])
        return zd[p.pos], entries

    def covariances(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """(H^-1)[a_t, b_t] for node index arrays a, b: ``y_a^T D^-1 y_b`` with ``y = L^-1 e``, one
        sparse forward solve per distinct node (along its elimination-tree path)."""
        p = self.plan
        a = np.asarray(a, np.int64).ravel()
        b = np.asarray(b, np.int64).ravel()
        nodes, inv = np.unique(np.concatenate([a, b]), return_inverse=True)
        ia, ib = inv[:a.size], inv[a.size:]
        offsets, where, vals = _forward_paths(p.colptr, p.rowind, self.L, p.parent, p.pos[nodes])
        order = np.argsort(ia, kind="stable")
        out = np.empty(a.size)
        out[order] = _path_dots(offsets, where, vals, self.d, ia[order], ib[order])
        return out


class SparseCovariance:
    """The nodes' posterior covariance ``H^-1`` held as the sparse factor of ``H``: what
    ``fit.cov`` is when there are more nodes than ``dense_cov_limit`` and the factor was
    affordable. ``cov[i, j]`` (node indices: integers or broadcastable integer arrays) returns
    those covariances, ``y_i^T D^-1 y_j`` with ``y = L^-1 e`` (one sparse forward solve per
    distinct node, along its path in the elimination tree); ``cov.diagonal()`` the marginal
    variances; ``np.asarray(cov)`` the dense matrix (small fits only)."""

    ndim = 2
    dtype = np.dtype(float)

    def __init__(self, factor: _SparseFactor, var: np.ndarray):
        self._factor = factor
        self._var = var
        self.shape = (factor.plan.n, factor.plan.n)

    def __repr__(self) -> str:
        return f"SparseCovariance({self.shape[0]} nodes, factor with {self._factor.plan.nnz:,} entries)"

    def diagonal(self) -> np.ndarray:
        return self._var.copy()

    def __getitem__(self, key):
        if not (isinstance(key, tuple) and len(key) == 2):
            raise IndexError("index the covariance with cov[i, j] (node indices)")
        i, j = np.broadcast_arrays(np.asarray(key[0]), np.asarray(key[1]))
        if not (np.issubdtype(i.dtype, np.integer) and np.issubdtype(j.dtype, np.integer)):
            raise IndexError("SparseCovariance takes integer node indices")
        n = self.shape[0]
        i = np.where(i < 0, i + n, i)
        j = np.where(j < 0, j + n, j)
        if i.size and (i.min() < 0 or j.min() < 0 or i.max() >= n or j.max() >= n):
            raise IndexError(f"node index out of range for {n} nodes")
        out = self._factor.covariances(i, j).reshape(i.shape)
        return float(out) if out.ndim == 0 else out

    def __array__(self, dtype=None, copy=None):
        idx = np.arange(self.shape[0])
        full = self[idx[:, None], idx[None, :]]
        return full if dtype is None else full.astype(dtype)


class BradleyTerry(LaplaceSmoother):
    """Static Bradley-Terry (or Thurstone-Mosteller) fit: the Laplace smoother with drift 0.

    Each competitor has one skill; the mode is the maximum a posteriori fit under the prior
    ``N(prior_mean, prior_var)`` — with a wide prior (the default ``prior_var=1e6`` scale^2)
    it is the maximum-likelihood fit, identified only up to a common shift (pinned by the
    prior to ``prior_mean`` on average). Game weights temper the likelihood,
    ``sum_g w_g l_g``: a weighted maximum-likelihood fit. Static skills have no dynamics, so
    the model's drift, mean reversion and home-advantage drift are all replaced by 0 (forecasts
    do not decay).
    """

    name = "bradley_terry"

    def __init__(self, model: SkillModel | None = None, **kwargs):
        import dataclasses

        if model is None:
            model = SkillModel("logistic", 400.0 / math.log(10.0), 1500.0, 1e6 * (400.0 / math.log(10.0)) ** 2,
                               0.0, "half")
        super().__init__(dataclasses.replace(model, drift=0.0, reversion=0.0, home_drift=0.0), drift=None, **kwargs)

    def __repr__(self) -> str:
        return f"BradleyTerry({self.skill_model.link}, scale={self.skill_model.scale:g})"

    def fit(self, games: Games, initial=None, *, warm_start: SmootherFit | None = None) -> SmootherFit:
        """The static fit (see :meth:`LaplaceSmoother.fit`); with a wide prior, warns when the
        maximum-likelihood fit does not exist (:func:`ford_groups`)."""
        m = self.skill_model
        if isinstance(games, Games) and m.prior_var >= 1e4 * m.scale**2:
            groups = ford_groups(games)
            if groups is not None:
                warnings.warn(groups, UserWarning, stacklevel=2)
        return super().fit(games, initial, warm_start=warm_start)


def ford_groups(games: Games) -> str | None:
    """``None`` when the Bradley-Terry maximum-likelihood fit exists, else a message saying why
    it does not.

    Ford (1957): the likelihood has a finite maximum (up to a common shift within each group of
    competitors linked by games) iff no split of a linked group into two parts has one part
    winning every game against the other, i.e. iff the directed graph "a lost to or drew with
    b" has the same components when read strongly as weakly. Otherwise the ratings of the
    winning part run off to infinity and only the prior holds them: with a wide prior they
    come out extreme, their variances huge, and forecasts near 0 or 1."""
    from scipy.sparse.csgraph import connected_components

    n = games.players.size
    won = games.score == 1.0
    lost = games.score == 0.0
    drawn = ~(won | lost)
    # an edge loser -> winner; a draw both ways (it is part win, part loss for both)
    src = np.concatenate([games.b[won], games.a[lost], games.a[drawn], games.b[drawn]])
    dst = np.concatenate([games.a[won], games.b[lost], games.b[drawn], games.a[drawn]])
    graph = sp.coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n)).tocsr()
    n_weak, _ = connected_components(graph, directed=True, connection="weak")
    n_strong, _ = connected_components(graph, directed=True, connection="strong")
    if n_strong == n_weak:
        return None
    out_deg = np.bincount(src, minlength=n)   # games not won
    in_deg = np.bincount(dst, minlength=n)    # games not lost
    never_lost = games.players[(out_deg == 0) & (in_deg > 0)]
    never_won = games.players[(in_deg == 0) & (out_deg > 0)]

    def some(names):
        shown = ", ".join(map(str, names[:5]))
        return f"{names.size} ({shown}{', ...' if names.size > 5 else ''})"

    detail = []
    if never_lost.size:
        detail.append(f"never lost: {some(never_lost)}")
    if never_won.size:
        detail.append(f"never won: {some(never_won)}")
    return (f"BradleyTerry: the maximum-likelihood fit does not exist (Ford 1957): the results split "
            f"{n} competitors into {n_strong} groups where one group won every game against another"
            f"{'; ' + '; '.join(detail) if detail else ''}. Their ratings are held only by the wide "
            f"prior and come out extreme; give a proper prior, e.g. BradleyTerry(SkillModel(..., "
            f"prior_var=...)), or use the random-walk LaplaceSmoother")
