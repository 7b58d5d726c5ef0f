r"""The Laplace (whole-history) smoother: Newton to the posterior mode, and the evidence.

The posterior mode of every node of the random-walk model (see :mod:`smoothers.base`) by
Newton's method on the whole history, as in Whole History Rating (Coulom 2008), minimising

.. math::

    \mathcal{E}(x) = -\sum_\text{games} w_g\, \ell(x_a - x_b + h)
    + \frac12 \sum_\text{first} \frac{(x_k - \mu_0)^2}{\sigma_0^2}
    + \frac12 \sum_\text{links} \frac{\bigl(x_k - \mu_0 - \phi_k (x_\text{prev} - \mu_0)\bigr)^2}{q_k}

:math:`\ell` is the log-likelihood of game :math:`g`'s record under the model's observation
(:mod:`statespace.model.observation`): its result, or for :class:`statespace.Margin` and
:class:`statespace.Goals` its ``score_a`` and ``score_b``, which the smoother passes on.
:math:`w_g` is the game's weight (``Games.with_weights``; 1 by default): its log-likelihood is
tempered by :math:`w_g`, as the filters that honour weights do, so a game of weight 2 is the same
evidence as the game played twice. The links are the model's transition between a competitor's
consecutive nodes, :math:`\Delta t_k` apart (:meth:`statespace.SkillModel.transition`, the step
the EKF predicts with): the random walk :math:`\phi_k = 1`, :math:`q_k = q\,\Delta t_k`, or with
mean reversion :math:`\lambda > 0` the Ornstein-Uhlenbeck step
:math:`\phi_k = e^{-\lambda \Delta t_k}`, :math:`q_k = q (1 - \phi_k^2) / (2 \lambda)`, pulling
skills towards :math:`\mu_0` (``prior_mean``).

Its Hessian is sparse: tridiagonal in time for each competitor (each link adds :math:`1/q_k` to
its node's diagonal, :math:`\phi_k^2 / q_k` to the previous node's and :math:`-\phi_k / q_k`
between them) plus a 2 x 2 coupling :math:`w_g \kappa_g (e_a - e_b)(e_a - e_b)^\top` per game,
:math:`\kappa = -\ell''`. Each Newton step solves one sparse system, with a backtracking line
search so that the log posterior never decreases: below 500 nodes by SuperLU with a
minimum-degree ordering; above, by conjugate gradients preconditioned by each competitor's chain
and deflated by the common level of everyone at each time (``smoothers._newton_system.NewtonSystem``:
compiled, no BLAS, the nodes in time order; its cost per Newton step is linear in the games); when
the fit has a sparse factor of :math:`H` within budget (below) and a CG solve is predicted to cost
more than that factor, the next steps use the factor (its order and pattern, the "plan", built
once per fit: only the numeric pass is repeated).

BLAS runs on ``blas_threads`` threads (1 by default, through threadpoolctl) for the length of a
fit; ``progress`` reports each Newton step on stderr in long fits.

Marginal variances are the diagonal of :math:`H^{-1}` at the mode. Up to ``dense_cov_limit``
nodes the whole inverse is formed (dense), so forecasts also get the two competitors' covariance.
Above, :math:`H = P^\top L D L^\top P` is factorised sparsely (a fill-reducing ordering
:math:`P`: reverse Cuthill-McKee, or when that fills much, SuperLU's minimum degree on
:math:`H + H^\top` -- or with the optional scikit-sparse, CHOLMOD's approximate minimum degree and
for large factors METIS -- whichever fills least; a refit warm-started from a fit on part of the
same history keeps that fit's order) and the *selected inverse* (Takahashi, Fox & Wang 1973;
Erisman & Tinney 1975; as in INLA, Rue & Martino 2007) gives the entries of :math:`H^{-1}` on the
pattern of :math:`L + L^\top`: every marginal variance and every node's covariance with its chain
neighbours, exactly, for about the cost of the factorisation; other covariances (forecasts) come
from sparse solves with the same factor, on demand (``smoothers._sparse_factor``). ``variances="auto"``
does so while the factor stays within a budget (:math:`\sum_j c_j^2 \le 10^9` for the column
counts :math:`c_j` of :math:`L`, and :math:`\operatorname{nnz}(L) \le 2 \cdot 10^7`); beyond it, and
with ``variances="blocks"``, each competitor's variance is taken from its own block of :math:`H`
(its chain with the games' curvature on the diagonal, others held at their mode: WHR's
approximation), which understates uncertainty where opponents are uncertain too.

The drift :math:`q` is fixed, or chosen (``drift="auto"``) by maximising the Laplace
approximation of the marginal likelihood (type-II maximum likelihood):

.. math::

    \log p(y \mid q) \approx \sum \ell(x^*) - \mathcal{E}_\text{prior}(x^*)
    + \frac12 \log\det Q(q) - \frac12 \log\det H(x^*)

with :math:`\sum \ell` the weighted log-likelihood and :math:`Q` the prior precision
(:math:`\log\det Q = \sum_\text{first} \log(1/\sigma_0^2) + \sum_\text{links} \log(1/q_k)`: the map
from nodes to the transitions' innovations is unit triangular). With reversion, :math:`\lambda`
stays fixed while :math:`q` is searched. :math:`\log\det H = \sum \log D` from the same sparse
factor as the variances (exact); with the per-competitor blocks, the sum of the blocks'
log-determinants (an upper bound, Fischer).

``tune(games)`` runs that search once and returns the smoother with the drift fixed at its value.

With drift 0 every competitor has one node and the mode is the (MAP, or with a flat prior the
maximum-likelihood) static Bradley-Terry fit: :class:`smoothers.bradley_terry.BradleyTerry`.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings

import numpy as np

from statespace.data.games import Games
from statespace.model.outcome import Outcome
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges
from statespace.data.matches import Matches

from ._laplace_checks import check_weights, drift_bounds as drift_bounds_of, singular
from ._laplace_factor import FactorAtMode, earlier_nodes
from ._laplace_match_obs import observation_of
from ._laplace_matches import fit_matches
from ._laplace_newton import NewtonMode
from ._laplace_run import Progress, blas_limits
from ._laplace_two import fit_two_skills
from ._newton_system import NewtonSystem
from ._sparse_factor import SparseCovariance
from .base import Smoother, SmootherFit, Timeline, timeline

__all__ = ["LaplaceSmoother", "SparseCovariance"]


class LaplaceSmoother(NewtonMode, FactorAtMode, Smoother):
    r"""Whole-history posterior mode of the random-walk model, with marginal variances.

    Parameters
    ----------
    model:
        The :class:`statespace.SkillModel` (link, scale, prior, drift, draw model, home, mean
        reversion). Default: logistic link in Elo units, prior :math:`\mathcal{N}(1500, 350^2)`, drift 100 per
        day, draws as half a win, no reversion. Drift 0 with reversion > 0 (a noiseless decay)
        is refused, and so is a latent home advantage (``home_drift > 0``): the smoother fits a
        fixed home advantage (the EKF filters a drifting one).
    drift:
        ``None`` (the model's drift), a number (fixed; a variance per unit of time in
        :math:`[0, (s \alpha)^2]`, :math:`\alpha` the model's scale and :math:`s` =
        :data:`statespace.model.ranges.SD_SCALES`: :func:`statespace.model.ranges.variance`),
        or ``"auto"``: type-II maximum likelihood between ``drift_bounds``.
    drift_bounds:
        ``(low, high)``, the search box of ``drift="auto"`` and :meth:`tune` (model units per unit
        of time): :math:`0 < \text{low} < \text{high} \le (s \alpha)^2`. Default
        :math:`(10^{-7} \alpha^2, 10\,\alpha^2)`.
    period_days:
        Time unit of the drift when the games have no rating periods (days; numeric times:
        their own unit): a finite number > 0.
    tol, max_iter:
        Newton stops when no node moves by more than ``tol`` times the model's scale (``tol`` a
        finite number > 0), or after ``max_iter`` steps (a whole number >= 1; then a
        ``RuntimeWarning``).
    variances:
        ``"auto"`` (default): exact marginal variances -- up to ``dense_cov_limit`` nodes from
        the dense inverse, above from the selected inverse of a sparse :math:`L D L^\top` factor of the
        Hessian whenever that factor fits the budget (``_FACTOR_FLOPS``, ``_FACTOR_NNZ`` of
        ``smoothers._laplace_factor``), else the per-competitor blocks; ``"exact"``: the selected inverse
        whatever it costs; ``"blocks"``: the per-competitor chains at every size (cheap,
        understated). The log-determinant in the evidence (``drift="auto"``) comes from the same
        choice: exact with a factor, the blocks' without.
    dense_cov_limit:
        Up to this many nodes (a whole number >= 0) (with ``variances`` other than ``"blocks"``) the whole covariance
        :math:`H^{-1}` is formed densely (``fit.cov`` an array; LAPACK's Cholesky). Above, ``fit.cov``
        computes the covariances asked for from the sparse factor (:class:`SparseCovariance`),
        or is ``None`` with the blocks.
    exact_variance_limit:
        Deprecated: the former name of ``dense_cov_limit`` (above it, variances were the blocks;
        they are now exact wherever the factor is affordable; ``variances="blocks"`` keeps the
        blocks).
    blas_threads:
        BLAS threads during a fit (``None`` or a whole number >= 1; default 1, through threadpoolctl; restored afterwards): the
        fit's BLAS calls are small, and a second OpenBLAS thread only spins (what it cost is in
        docs/smoothers.md). ``None`` leaves BLAS's own setting (e.g. ``OPENBLAS_NUM_THREADS``) alone.
    progress:
        Progress lines on stderr (each Newton step, each drift tried, the variances): ``None``
        (default) on a terminal once the fit has run for 2 s, ``True`` always, ``False`` never.
    """

    name = "laplace"
    _progress = None  # the running fit's progress reporter
    _param_aliases = {"model": "skill_model", "drift": "_drift_arg", "drift_bounds": "_drift_bounds_arg"}
    _deprecated_params = ("exact_variance_limit",)

    def __init__(self, model: SkillModel | None = None, drift=None, *, period_days: float = 1.0,
                 tol: float = 1e-8, max_iter: int = 100, variances: str = "auto", dense_cov_limit: int = 3000,
                 exact_variance_limit: int | None = None, drift_bounds: tuple[float, float] | None = None,
                 blas_threads: int | None = 1, progress: bool | None = None):
        if model is None:
            model = SkillModel("logistic", 400.0 / math.log(10.0), 1500.0, 350.0**2, 100.0, "half")
        if not isinstance(model, SkillModel):
            raise TypeError(f"model must be a statespace.SkillModel, got {type(model).__name__}")
        owner = type(self).__name__
        if drift is not None and not (isinstance(drift, str) and drift == "auto"):
            if not ranges.is_number(drift):
                raise ValueError(f"{owner}: drift must be None, 'auto' or a number (a variance per unit of time), "
                                 f"got {drift!r}")
            model = dataclasses.replace(model, drift=ranges.variance(owner, "drift", drift, model.scale))
        period_days = ranges.number(owner, "period_days", period_days, 0.0, lo_open=True)
        model.refuse_latent_draws(type(self).__name__)
        if model.two_skills and isinstance(drift, str) and drift == "auto":
            raise ValueError(f"{owner}: drift='auto' searches the evidence of one skill per competitor; with two "
                             f"(openness_var, openness_drift) give the drift")
        if model.home_drift > 0:
            raise ValueError(f"{type(self).__name__}: the model has a latent, drifting home advantage (home_drift="
                             f"{model.home_drift!r}), which the smoother does not model: it fits a fixed home "
                             f"advantage; give home_drift=0, or filter the drifting one with the EKF")
        if model.drift == 0 and not (isinstance(drift, str) and drift == "auto") and model.reversion > 0:
            # a noiseless Ornstein-Uhlenbeck decay ties each node to the last exactly: no
            # precision exists for it, and the static single node would ignore the decay
            raise ValueError(f"{type(self).__name__}: drift 0 with reversion {model.reversion!r} > 0 is a "
                             f"deterministic decay, which the smoother cannot fit; give drift > 0 or reversion=0")
        self.skill_model = model
        self.auto_drift = isinstance(drift, str) and drift == "auto"
        self._drift_arg = "auto" if self.auto_drift else None  # a fixed drift is in the model
        self.period_days = period_days
        # tol scales the model's scale: a move below tol * scale ends Newton, so tol <= 0 never would
        self.tol = ranges.number(owner, "tol", tol, 0.0, lo_open=True)
        self.max_iter = ranges.whole(owner, "max_iter", max_iter, 1)
        if variances not in ("auto", "exact", "blocks"):
            raise ValueError(f"variances must be 'auto', 'exact' or 'blocks', got {variances!r}")
        if exact_variance_limit is not None:
            warnings.warn("exact_variance_limit is deprecated: it is now dense_cov_limit (the size up to which the "
                          "whole covariance is formed densely); above it the variances are exact (selected "
                          "inverse of a sparse factor) when affordable; variances='blocks' gives the per-competitor "
                          "chains", DeprecationWarning, stacklevel=2)
            dense_cov_limit = exact_variance_limit
        self.variances = variances
        self.dense_cov_limit = ranges.whole(owner, "dense_cov_limit", dense_cov_limit, 0)
        if progress not in (None, True, False):
            raise ValueError(f"{owner}: progress must be None, True or False, got {progress!r}")
        self.blas_threads = None if blas_threads is None else ranges.whole(owner, "blas_threads", blas_threads, 1)
        self.progress = progress
        s2 = model.scale**2
        self._drift_bounds_arg = None if drift_bounds is None else drift_bounds_of(owner, drift_bounds, model.scale)
        self.drift_bounds = self._drift_bounds_arg or (1e-7 * s2, 10.0 * s2)

    def __repr__(self) -> str:
        m = self.skill_model
        drift = "auto" if self.auto_drift else f"{m.drift:g}"
        rev = f", reversion={m.reversion:g}" if m.reversion else ""
        observed = m.link if isinstance(m.observation, Outcome) else repr(m.observation)
        return f"{type(self).__name__}({observed}, drift={drift}, prior_var={m.prior_var:g}{rev})"

    @property
    def model(self) -> SkillModel:
        return self.skill_model

    # ------------------------------------------------------------ the parameter protocol
    def tunable(self, games: Games) -> dict[str, tuple[float, float]]:
        """``{"drift": drift_bounds}``, which :meth:`tune` fits by type-II maximum likelihood;
        nothing with ``drift="auto"``, whose every fit does that search already, or with two skills per
        competitor (the evidence is of one)."""
        return {} if self.auto_drift or self.skill_model.two_skills else {"drift": tuple(self.drift_bounds)}

    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None, burn_in: float = 0.0,
             standard_errors: bool = True) -> "LaplaceSmoother":
        """A new smoother whose drift is fixed at its type-II maximum-likelihood value on ``games``:
        the search of ``drift="auto"`` run once, between ``bounds["drift"]`` (default
        ``drift_bounds``). The returned method carries ``.tuning``, a
        :class:`statespace.methods.settings.TuneResult` whose ``objective`` is the log evidence at the optimum
        (``objective_name`` ``"log_evidence"``, maximised), ``trace`` the drifts tried and ``se``
        the drift's standard error from the evidence's curvature in log drift (two more fits;
        ``standard_errors=False`` skips them). ``objective`` and ``burn_in`` are the filters'
        options: the evidence scores every game, so only ``None`` / ``"log_evidence"`` and 0 are
        accepted."""
        import pandas as pd
        from statespace.methods.settings import TuneResult

        self.skill_model.refuse_two_skills(f"{self.name}: tune (the drift's evidence)")
        names = ["drift"] if params is None else [params] if isinstance(params, str) else list(params)
        if not names or set(names) != {"drift"}:
            raise ValueError(f"{self.name}: cannot tune {sorted(set(names) - {'drift'})}; tunable: ['drift']")
        if objective not in (None, "log_evidence"):
            raise ValueError(f"{self.name}: tunes the drift by its marginal likelihood (objective 'log_evidence'), "
                             f"not {objective!r}")
        if burn_in != 0:
            raise ValueError(f"{self.name}: burn_in={burn_in!r} applies to one-step-ahead objectives; the marginal "
                             f"likelihood scores every game")
        box = dict(bounds or {})
        if set(box) - {"drift"}:
            raise ValueError(f"bounds given for {sorted(set(box) - {'drift'})}, which is not being tuned")
        lo, hi = drift_bounds_of(f"{self.name}: tune", box.get("drift", self.drift_bounds), self.skill_model.scale)
        t0 = time.perf_counter()
        fit = self.with_params(drift="auto", drift_bounds=(lo, hi)).fit(games)
        drift, log_ev = fit.model.drift, fit.info["log_evidence"]
        se = {"drift": self._drift_se(games, drift, log_ev)} if standard_errors else {}
        result = TuneResult(params={"drift": drift}, se=se, objective=log_ev, objective_name="log_evidence",
                            n_games=len(games), seconds=time.perf_counter() - t0, success=True,
                            trace=pd.DataFrame(fit.info["drift_trace"], columns=["drift", "log_evidence"]),
                            start={"drift": self.skill_model.drift})
        tuned = self.with_params(drift=drift)
        tuned.tuning = result
        return tuned

    def _drift_se(self, games: Games, drift: float, log_ev: float, h: float = 0.05) -> float:
        """The drift's standard error by the delta method: ``drift / sqrt(-c)``, ``c`` the second
        derivative of the log evidence in log drift (a central difference of step ``h``)."""
        ev = [self.with_params(drift=drift * math.exp(step)).fit(games).info["log_evidence"] for step in (-h, h)]
        curvature = (ev[0] - 2.0 * log_ev + ev[1]) / h**2
        return drift / math.sqrt(-curvature) if curvature < 0 else float("nan")

    def match_forecast(self):
        """The ranking observation a fit on matches means (Plackett-Luce for the logistic link,
        the Thurstonian chain for the probit: :mod:`smoothers._laplace_match_obs`), a
        :class:`statespace.model.ranking_forecast.RankingForecast` in model units. A smoother's
        side moments are in-sample, not online forecasts."""
        return observation_of(self.name, self.skill_model).forecast()

    # ------------------------------------------------------------ the fit
    def fit(self, games: Games, initial=None, *, warm_start: SmootherFit | None = None) -> SmootherFit:
        """The posterior mode and marginal variances of every node given ``games``.

        ``warm_start``: an earlier fit whose node means start Newton (nodes it does not have
        start at the prior mean), which makes refits on growing data cheap.

        Given a :class:`statespace.data.matches.Matches` (matches of many sides), the same model
        observed through the ranking of each match's sides (:mod:`smoothers._laplace_matches`):
        a :class:`smoothers._laplace_match_fit.MatchSmootherFit`.
        """
        if isinstance(games, Matches):
            self.skill_model.refuse_two_skills(f"{self.name} on matches of many sides")
            if initial is not None:
                raise ValueError(f"{self.name}: initial= values are not supported by a smoother")
            return fit_matches(self, games, warm_start)
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        if initial is not None:  # accepted for the filters' fit(games, initial) signature, but never used
            raise ValueError(f"{self.name}: initial= values are not supported by a smoother; start Newton "
                             f"from an earlier fit with warm_start= instead")
        if warm_start is not None and not isinstance(warm_start, SmootherFit):
            raise TypeError(f"warm_start must be a SmootherFit (an earlier fit), got {type(warm_start).__name__}")
        if warm_start is not None:
            warm_start._check_time_base(games)
        t0 = time.perf_counter()
        self._progress = Progress(self.progress, t0, type(self).__name__)
        try:
            with blas_limits(self.blas_threads):
                return self._fit(games, warm_start, t0)
        finally:
            self._progress = None

    def _fit(self, games: Games, warm_start: SmootherFit | None, t0: float) -> SmootherFit:
        model = self.skill_model
        times = self._node_times(games, model)
        tl = timeline(games, times)
        check_weights(self.name, games, tl, model)
        try:
            if model.two_skills:  # attack and defence: smoothers._laplace_two
                return fit_two_skills(self, games, tl, warm_start, t0)
            return self._fit_nodes(games, tl, warm_start, t0)
        except (RuntimeError, np.linalg.LinAlgError) as exc:
            if isinstance(exc, RuntimeError) and "singular" not in str(exc):
                raise
            raise singular(self.name, tl, model, exc) from None

    def _fit_nodes(self, games: Games, tl: Timeline, warm_start: SmootherFit | None, t0: float) -> SmootherFit:
        model = self.skill_model
        x0 = self._start(tl, warm_start)
        info: dict = {}
        dense = self._dense(tl)
        # the sparse factor's order and pattern: once per fit (the Hessians of every drift share them)
        plan = self._plan(tl, warm_start) if (self.auto_drift or not dense) else None
        system = NewtonSystem(tl)
        if self.auto_drift:
            model, x0, info = self._type2(games, tl, model, x0, plan, system)
        x, H, it = self._mode(games, tl, model, x0, system, plan)
        how = "dense" if dense else "sparse factor" if plan is not None else "per-competitor blocks"
        self._report(f"variances ({how})")
        factor = self._factor(tl, H, None if dense else plan)
        var, cov, prev_cov, how = self._variances(tl, H, factor)
        info.update({"iterations": it, "exact_variance": how != "blocks", "variances": how,
                     "prev_cov": prev_cov, "n_nodes": tl.n_nodes,
                     "log_evidence": self._log_evidence(games, tl, model, x, H, factor),
                     "seconds": time.perf_counter() - t0, "drift": model.drift,
                     "newton_solves": [kind for kind, _ in system.steps],
                     "cg_iterations": [k for kind, k in system.steps if kind == "cg"]})
        if plan is not None:
            info.update({"factor_ordering": plan.ordering, "factor_nnz": plan.nnz, "factor_flops": plan.flops})
        fit = SmootherFit(self, games, tl, x, var, model, self.times, info=info, cov=cov, static=self._static(model))
        if (self.auto_drift or not dense) and self.variances != "blocks":
            # the plan (or that the factor was over budget), for a refit on a grown history
            fit._laplace_plan = (plan, self._budget(tl))
        return fit

    def _report(self, message: str) -> None:
        if self._progress is not None:
            self._progress(message)

    def _static(self, model: SkillModel) -> bool:
        """Whether the fit has no dynamics (drift 0, not searched): one node per competitor."""
        return model.drift == 0 and not self.auto_drift

    def _node_times(self, games: Games, model: SkillModel) -> np.ndarray:
        times = self.times(games)
        if self._static(model):
            # static: one node per competitor, placed at the data's first time so that it forecasts
            # every game from then on (a node at time 0 missed games dated before 1970 or at
            # negative times, which then got the prior)
            return np.full(len(games), times.min())
        return times

    def _start(self, tl: Timeline, warm: SmootherFit | None) -> np.ndarray:
        x = np.full(tl.n_nodes, self.skill_model.prior_mean)
        if warm is not None:
            node, _ = earlier_nodes(warm, tl)
            have = node >= 0
            x[have] = warm.mean[node[have]]
        return x

    def _type2(self, games, tl, model, x0, plan, system=None):
        lo, hi = self.drift_bounds
        cache = {"x": x0}
        trace = []
        system = NewtonSystem(tl) if system is None else system

        def neg_evidence(log_q):
            m = dataclasses.replace(model, drift=float(math.exp(log_q)))
            x, H, _ = self._mode(games, tl, m, cache["x"], system, plan)
            cache["x"] = x
            ev = self._log_evidence(games, tl, m, x, H, self._factor(tl, H, plan))
            trace.append((m.drift, ev))
            self._report(f"drift {m.drift:.6g}: log evidence {ev:.6f} ({len(trace)} evaluated)")
            return -ev

        from scipy.optimize import minimize_scalar  # here: scipy.optimize takes 0.2 s to import

        res = minimize_scalar(neg_evidence, bounds=(math.log(lo), math.log(hi)), method="bounded",
                              options={"xatol": 1e-3})
        best = dataclasses.replace(model, drift=float(math.exp(res.x)))
        return best, cache["x"], {"drift_trace": trace}
