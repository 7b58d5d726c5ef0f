"""``PyMCSmoother``: full Bayesian inference of the random-walk skill model with PyMC.

The model (``statespace.SkillModel``; skills in the model's units, time in rating periods
when the games have them, else in days / ``period_days``)::

    sigma_drift ~ HalfNormal(0.5 scale)        (or fixed: sqrt(drift))
    sigma_prior ~ HalfNormal(2 scale)          (or fixed: sqrt(prior_var))
    home        ~ Normal(model.home, scale)    (only when some games are not neutral; or fixed)
    margin      ~ HalfNormal(scale)            (draw model "threshold"; or fixed)
    nu          ~ HalfNormal(2)                (draw model "davidson"; or fixed)

    s_i(t_1)   = prior_mean + sigma_prior z_i1                      (first node of competitor i)
    s_i(t_k)   = s_i(t_{k-1}) + sigma_drift sqrt(t_k - t_{k-1}) z_ik    z ~ N(0, 1)
    d          = s_a(t) - s_b(t) + home [a at home]
    P(a wins)  = F(d / scale)      F logistic (Bradley-Terry) or Phi (Thurstone-Mosteller)

with the model's draw model: "none" (an observed draw is an error), "half" (a draw scores
``0.5 log F + 0.5 log(1 - F)``), "threshold" (ordered logit/probit: win ``F((d - margin) /
scale)``, loss ``F((-d - margin) / scale)``, draw the rest) or "davidson" (win ``p / D``, draw
``nu sqrt(p q) / D``, loss ``q / D``, ``D = 1 + nu sqrt(p q)``). Weighted games
(``Games.with_weights``) temper each game's log-likelihood by its weight, as the filters do. Mean
reversion (``SkillModel.reversion > 0``) is not supported: this is the random-walk model (the
Laplace smoother fits the mean-reverting one).

The non-centred trick. There is one skill variable ("node") per competitor and distinct time at
which it plays (``smoothers.base.timeline``). Sampling the skills themselves gives the funnel
of hierarchical models (the scale of every step depends on ``sigma_drift``), which NUTS
handles badly. Instead the sampler moves independent standard normals ``z``, one per node, and
the skills are a deterministic function of them: with the nodes in one flat vector sorted by
competitor then time,

    increment_k = prior_mean + sigma_prior z_k          if k is a competitor's first node
                  sigma_drift sqrt(dt_k) z_k            otherwise
    skill       = segment cumsum of the increments      (restarting at every first node)

computed as ``cumsum(increment) - C[start_k]``, where ``C`` is the cumulative sum with a
leading 0 and ``start_k`` the index of the first node of node k's competitor: one cumulative
sum over all nodes, no per-competitor loop and no ``[time, competitor]`` matrix (which would be
mostly empty when competitors play at different times).

Speed. With PyMC's own NUTS (and ADVI), the games' log-likelihood and its gradient are one
compiled Op (``smoothers._walk_logp``: the walk, every game and the chain rule back through the
walk in numba, the logistic case's exp/log1p in NumPy's vectorised loops), about three times
faster per gradient than the graph below, which stays for NumPyro (it compiles the graph to
JAX) and as the tests' reference; nutpie gets the same Op through PyTensor's numba backend. NUTS starts from the Laplace smoother
(``init="laplace"``): dispersed chain starts drawn from its approximation and a mass matrix
seeded with its variances.

Identification: a competitor's level is identified only relative to its opponents and through
the prior (``prior_mean``, ``sigma_prior``); compare skills as differences, or centred
(``ratings(centre=True)``, ``trajectories(centre=True)``).

The fit. :meth:`PyMCSmoother.fit` returns a :class:`smoothers.base.SmootherFit`: per-node
posterior means and variances of the skills, up to ``keep_draws`` posterior draws of all nodes
(``predict_proba`` averages the forecast over them, moving each competitor forward from its last
node by the random walk), ``model`` with the posterior means of the inferred parameters (drift,
prior variance, home advantage, draw parameter: these enter forecasts at their means, the skills
through their draws), ``idata`` (the ArviZ ``InferenceData``, with the derived ``skill``,
``drift`` and ``prior_var`` added to its posterior) and ``info`` (sampler, divergences, largest
r-hat and smallest bulk ESS with where they occur, seconds). After MCMC a
:class:`ConvergenceWarning` says what is off: divergent transitions, r-hat above ``max_rhat``,
bulk ESS below ``min_ess`` (r-hat and ESS as ArviZ computes them, vectorised over the nodes).

PyTensor compile cache. PyMC compiles the model with PyTensor, which caches compiled C code in
``base_compiledir`` (``~/.pytensor`` by default). Unless ``PYTENSOR_FLAGS`` already sets
``compiledir`` or ``base_compiledir``, :meth:`PyMCSmoother.fit` points it at ``compile_dir``
(default: ``<system temp>/statespace-pytensor-<user>``, kept between runs so the cache stays
warm) by setting ``os.environ["PYTENSOR_FLAGS"]`` *before* importing PyMC. This only works if
PyTensor has not been imported yet in the process: PyTensor reads the flag once, at import
(import pymc only after creating or fitting a ``PyMCSmoother``, or set ``PYTENSOR_FLAGS``
yourself, e.g. ``PYTENSOR_FLAGS=base_compiledir=/path``). The data enter the model as
``pm.Data`` (shared variables without static shapes), so the compiled code does not depend on
the table: once the cache is warm, a new data set with the same link, draw model and set of
inferred parameters compiles in about a second. A cold cache costs tens of seconds per new model
structure (PyTensor compiles each new C module once).
"""

from __future__ import annotations

import getpass
import logging
import math
import os
import sys
import tempfile
import time
import warnings
from contextlib import contextmanager
from importlib.util import find_spec

import numpy as np
from numba import njit, prange

from statespace import Games, SkillModel
from statespace import _numeric as nx
from statespace.model import Davidson, Threshold

from .base import SmootherFit, timeline

__all__ = ["PyMCSmoother", "ConvergenceWarning", "configure_pytensor", "default_compile_dir", "segment_cumsum",
           "rhat_rank", "ess_bulk"]

SAMPLERS = ("nuts", "nutpie", "numpyro", "advi")
#: How PyMC's NUTS starts: "laplace" (from :class:`smoothers.LaplaceSmoother`'s fit), or one of
#: PyMC's own ``init`` methods.
INITS = ("laplace", "jitter+adapt_diag", "adapt_diag", "jitter+adapt_diag_grad", "advi+adapt_diag", "adapt_full",
         "jitter+adapt_full")

#: Standard deviations of the parameters' priors; skill-valued ones are in units of ``scale``.
DEFAULT_PRIOR_SCALES = {"drift_sd": 0.5, "prior_sd": 2.0, "home": 1.0, "margin": 1.0, "nu": 2.0}


class ConvergenceWarning(UserWarning):
    """MCMC diagnostics are off: divergences, r-hat above the bound or a low effective sample size."""


# ---------------------------------------------------------------------------------- helpers
def default_compile_dir() -> str:
    """The PyTensor cache used when neither ``compile_dir`` nor ``PYTENSOR_FLAGS`` says one:
    a per-user folder in the system's temporary directory (never the home directory)."""
    try:
        user = getpass.getuser()
    except Exception:  # pragma: no cover - no user name (some containers)
        user = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"statespace-pytensor-{user}")


def _flags_compiledir(flags: str) -> str | None:
    """The compile directory chosen in a ``PYTENSOR_FLAGS`` string, if any."""
    for item in flags.split(","):
        key, _, value = item.partition("=")
        if key.strip() in ("compiledir", "base_compiledir"):
            return value.strip()
    return None


def configure_pytensor(compile_dir: str | os.PathLike | None = None) -> str | None:
    """Point PyTensor's compile cache at ``compile_dir`` (default :func:`default_compile_dir`)
    through ``PYTENSOR_FLAGS``, unless the flags already choose one. Must run before PyTensor is
    imported; afterwards it only warns when an explicit ``compile_dir`` cannot take effect.
    Returns the compile directory in use (or ``None`` when unknown)."""
    wanted = None if compile_dir is None else os.path.abspath(os.fspath(compile_dir))
    if "pytensor" in sys.modules:
        import pytensor

        current = str(pytensor.config.base_compiledir)
        if wanted is not None and os.path.realpath(current) != os.path.realpath(wanted):
            warnings.warn(f"PyTensor was imported before PyMCSmoother could set its compile directory; "
                          f"compiled code goes to {current}, not {wanted}. Set "
                          f"PYTENSOR_FLAGS=base_compiledir=... before importing pytensor or pymc.",
                          RuntimeWarning, stacklevel=3)
        return current
    flags = os.environ.get("PYTENSOR_FLAGS", "")
    chosen = _flags_compiledir(flags)
    if chosen is not None:
        if wanted is not None and os.path.realpath(os.path.expanduser(chosen)) != os.path.realpath(wanted):
            warnings.warn(f"PYTENSOR_FLAGS already sets the compile directory ({flags!r}); "
                          f"compile_dir={wanted!r} is ignored", RuntimeWarning, stacklevel=3)
        return chosen
    path = wanted if wanted is not None else default_compile_dir()
    os.makedirs(path, exist_ok=True)
    os.environ["PYTENSOR_FLAGS"] = (flags + "," if flags.strip() else "") + f"base_compiledir={path}"
    return path


def segment_starts(first: np.ndarray) -> np.ndarray:
    """Index of the segment start of every element, given a boolean mask of segment starts
    (``first[0]`` must be True)."""
    idx = np.where(first, np.arange(first.size), 0)
    return np.maximum.accumulate(idx)


def segment_cumsum(x: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``x`` along the last axis restarting at each segment (NumPy; the
    same formula as the PyTensor graph): ``cumsum(x) - C[start]``, ``C`` with a leading 0."""
    c = np.cumsum(x, axis=-1)
    c0 = np.concatenate([np.zeros(x.shape[:-1] + (1,)), c], axis=-1)
    return c - c0[..., start]


# ---------------------------------------------------------------------------------- diagnostics
# ArviZ's rank-normalised split r-hat (``az.rhat``, method "rank") and bulk ESS (``az.ess``,
# method "bulk"), Vehtari et al. (2021), computed for all variables at once: ArviZ loops over
# variables in Python, which takes seconds for thousands of nodes. Same formulas, same numbers
# (tests/test_pymc_smoother.py checks them against ArviZ).
def _split_chains(x: np.ndarray) -> np.ndarray:
    """(V, chain, draw) -> (V, 2 chain, draw // 2): first and last halves of every chain."""
    half = x.shape[-1] // 2
    return np.concatenate([x[..., :half], x[..., x.shape[-1] - half:]], axis=1)


@njit(cache=True, parallel=True)
def _average_ranks(x):
    """Ranks (1-based, ties averaged) along the last axis of a 2-D array, row by row; as
    ``scipy.stats.rankdata(method="average", axis=1)``, several times faster (rows in parallel)."""
    v, k = x.shape
    out = np.empty((v, k))
    for row in prange(v):
        order = np.argsort(x[row])
        i = 0
        while i < k:
            j = i
            while j + 1 < k and x[row, order[j + 1]] == x[row, order[i]]:
                j += 1
            r = (i + j) / 2.0 + 1.0
            for m in range(i, j + 1):
                out[row, order[m]] = r
            i = j + 1
    return out


def _z_scale(x: np.ndarray) -> np.ndarray:
    """Normal scores of the ranks over all chains and draws of each variable (Blom, c = 3/8)."""
    from scipy.special import ndtri

    v = x.shape[0]
    flat = x.reshape(v, -1)
    n = flat.shape[1]
    # average ranks are multiples of 1/2: look the normal scores up instead of computing
    # ndtri for every draw of every node
    scores = ndtri((np.arange(2 * n + 2) / 2.0 - 0.375) / (n + 0.25))
    return scores[(2.0 * _average_ranks(flat)).astype(np.int64)].reshape(x.shape)


def _rhat_basic(x: np.ndarray) -> np.ndarray:
    n = x.shape[-1]
    between = n * np.var(x.mean(axis=-1), axis=-1, ddof=1)
    within = np.var(x, axis=-1, ddof=1).mean(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):  # a constant variable: NaN, as ArviZ
        return np.sqrt((between / within + n - 1) / n)


def rhat_rank(x: np.ndarray, z_bulk: np.ndarray | None = None) -> np.ndarray:
    """Rank-normalised split r-hat of each variable of ``x`` (shape ``(V, chain, draw)``):
    the larger of the bulk and the folded (tail) r-hat, as ``arviz.rhat``. NaN with one chain."""
    x = np.asarray(x, dtype=float)
    if x.shape[1] < 2 or x.shape[2] < 4:
        return np.full(x.shape[0], np.nan)
    split = _split_chains(x)
    bulk = _rhat_basic(_z_scale(split) if z_bulk is None else z_bulk)
    fold = np.abs(split - np.median(split.reshape(split.shape[0], -1), axis=1)[:, None, None])
    tail = _rhat_basic(_z_scale(fold))
    out = np.maximum(bulk, tail)
    out[np.isnan(x).any(axis=(1, 2))] = np.nan
    return out


@njit(cache=True)
def _geyer_tau(rho, n_draw, n_total):
    """Integrated autocorrelation time of each row of ``rho`` (autocorrelations at lags 0..n-1)
    by Geyer's initial positive and monotone sequences, as ArviZ's ``_ess``."""
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
    """Bulk effective sample size of each variable of ``x`` (shape ``(V, chain, draw)``), as
    ``arviz.ess(method="bulk")``: ESS of the rank-normalised split chains (``z_bulk``, if
    already computed)."""
    x = np.asarray(x, dtype=float)
    v = x.shape[0]
    if x.shape[2] < 4:
        return np.full(v, np.nan)
    z = _z_scale(_split_chains(x)) if z_bulk is None else z_bulk
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


def _as_seed(seed):
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(2**31 - 1))
    return seed


@contextmanager
def _quiet_pymc(quiet: bool):
    """PyMC logs its progress at INFO level; keep it quiet when no progress bar is wanted."""
    logger = logging.getLogger("pymc")
    old = logger.level
    if quiet:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(old)


def _check_float(name: str, value, *, nonnegative: bool = True) -> float | None:
    """``None`` (the parameter gets a prior) or a finite number (it is fixed)."""
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be None (a prior) or a number, got {value!r}") from None
    if not np.isfinite(v) or (nonnegative and v < 0):
        raise ValueError(f"{name} must be None (a prior) or a finite number{' >= 0' if nonnegative else ''}, "
                         f"got {value!r}")
    return v


# ---------------------------------------------------------------------------------- the method
class PyMCSmoother:
    """The Gaussian-random-walk Bradley-Terry (or Thurstone-Mosteller) model fitted by MCMC in
    PyMC, non-centred (see the module docstring for the equations and the cumulative-sum trick).

    Parameters
    ----------
    model:
        The :class:`statespace.SkillModel` giving the link, scale, prior mean, draw model and home
        advantage (default: logistic at scale 1, i.e. logistic units, no draws).
    drift, prior_var:
        ``None`` (default): inferred, with a HalfNormal prior on their square roots; a number:
        fixed at that value. ``drift`` is the variance per unit of time.
    home:
        ``None`` (default): inferred with a Normal prior centred on ``model.home`` when some games
        are not neutral (otherwise ``model.home`` is kept); a number: fixed.
    draw_param:
        The draw model's parameter (threshold margin or Davidson nu): ``None`` infers it (HalfNormal
        prior), a number fixes it. Ignored for "none" and "half".
    sampler:
        ``"nuts"`` (PyMC's NUTS), ``"nutpie"`` or ``"numpyro"`` (NUTS from those packages, if
        installed) or ``"advi"`` (mean-field ADVI, then draws from the approximation: fast, but
        it underestimates posterior variances).
    draws, tune, chains, cores, target_accept, seed:
        Passed to the sampler (``tune`` is ignored by ADVI; ``advi_iterations`` sets its length).
        ``cores=None`` (default): the chains run in parallel, one process per chain up to the
        number of CPU cores, as in PyMC.
    progressbar:
        ``None``: shown when stderr is a terminal.
    period_days:
        Time unit for games without rating periods: days / ``period_days``.
    compile_dir:
        PyTensor's compile cache (see the module docstring); default a per-user folder in the
        system's temporary directory, unless ``PYTENSOR_FLAGS`` sets one.
    keep_draws:
        Posterior draws kept on the fitted object for ``predict_proba`` (evenly thinned).
    max_rhat, min_ess:
        Diagnostics bounds for the :class:`ConvergenceWarning` (``min_ess`` default: 100 per
        chain, as recommended by Vehtari et al. 2021).
    prior_scales:
        Overrides of :data:`DEFAULT_PRIOR_SCALES` (prior sds; skill-valued ones in units of scale).
    init:
        How PyMC's NUTS starts (``sampler="nuts"`` only; nutpie and numpyro use their own).
        ``"laplace"`` (default): fit :class:`smoothers.LaplaceSmoother` first (a fraction of a
        second), start each chain at a draw from its Gaussian approximation mapped to the
        sampler's coordinates, and seed the diagonal mass matrix with its variances, so the first
        tuning iterations are not spent finding the scale of each competitor's first node (about
        an eighth fewer gradient evaluations in all). Otherwise one of PyMC's ``init`` methods,
        e.g. PyMC's default ``"jitter+adapt_diag"``.
    likelihood:
        How the games' log-likelihood is computed: ``"compiled"`` (one compiled Op, see "Speed"
        above; PyMC's NUTS and ADVI, and nutpie through PyTensor's numba backend), ``"graph"``
        (the plain PyTensor graph), or ``"auto"`` (default: compiled, except for numpyro).

    ``fit(games)`` returns a :class:`smoothers.base.SmootherFit` whose ``idata`` attribute is the
    ArviZ ``InferenceData`` (with the derived ``skill``, ``drift`` and ``prior_var`` added to its
    posterior) and whose ``model`` has the posterior means of the inferred parameters.
    """

    name = "pymc"

    def __init__(self, model: SkillModel | None = None, *, drift: float | None = None,
                 prior_var: float | None = None, home: float | None = None, draw_param: float | None = None,
                 sampler: str = "nuts", draws: int = 1000, tune: int = 1000, chains: int = 2, cores: int | None = None,
                 target_accept: float = 0.9, seed=None, progressbar: bool | None = None,
                 period_days: float = 1.0, compile_dir: str | os.PathLike | None = None,
                 keep_draws: int = 500, advi_iterations: int = 20_000, max_rhat: float = 1.05,
                 min_ess: float | None = None, prior_scales: dict | None = None, init: str = "laplace",
                 likelihood: str = "auto"):
        if model is None:
            model = SkillModel("logistic", 1.0)
        if not isinstance(model, SkillModel):
            raise TypeError(f"model must be a statespace.SkillModel or None, got {type(model).__name__}")
        if getattr(model, "reversion", 0.0) != 0.0:
            raise ValueError(f"PyMCSmoother fits the random-walk model (reversion = 0), got reversion="
                             f"{model.reversion!r}; use LaplaceSmoother or the EKF for mean-reverting skills")
        if getattr(model, "home_drift", 0.0) != 0.0:
            raise ValueError(f"PyMCSmoother fits a constant home advantage (home_drift = 0), got home_drift="
                             f"{model.home_drift!r}; use the EKF for a drifting home advantage")
        if likelihood not in ("auto", "compiled", "graph"):
            raise ValueError(f"likelihood must be 'auto', 'compiled' or 'graph', got {likelihood!r}")
        if likelihood == "compiled" and sampler == "numpyro":
            raise ValueError("likelihood='compiled' needs PyMC's own sampler or nutpie; numpyro compiles the "
                             "PyTensor graph to JAX (use likelihood='graph' or 'auto')")
        if init not in INITS:
            raise ValueError(f"init must be one of {', '.join(map(repr, INITS))}, got {init!r}")
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(map(repr, SAMPLERS))}, got {sampler!r}")
        if cores is None:  # chains in parallel, one per core, as PyMC does
            cores = max(1, min(int(chains), os.cpu_count() or 1))
        for name, value in (("draws", draws), ("chains", chains), ("cores", cores), ("keep_draws", keep_draws),
                            ("advi_iterations", advi_iterations)):
            if int(value) != value or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if int(tune) != tune or tune < 0:
            raise ValueError(f"tune must be an integer >= 0, got {tune!r}")
        if not 0 < target_accept < 1:
            raise ValueError(f"target_accept must be strictly between 0 and 1, got {target_accept!r}")
        if not (np.isfinite(period_days) and period_days > 0):
            raise ValueError(f"period_days must be > 0, got {period_days!r}")
        scales = dict(DEFAULT_PRIOR_SCALES)
        for k, v in (prior_scales or {}).items():
            if k not in scales:
                raise ValueError(f"unknown prior scale {k!r}; known: {', '.join(scales)}")
            if not (np.isfinite(v) and v > 0):
                raise ValueError(f"prior scale {k!r} must be > 0, got {v!r}")
            scales[k] = float(v)
        self._base = model
        self.drift = _check_float("drift", drift)
        self.prior_var = _check_float("prior_var", prior_var)
        self.home = _check_float("home", home, nonnegative=False)
        self.draw_param = _check_float("draw_param", draw_param)
        self.sampler = sampler
        self.draws, self.tune, self.chains, self.cores = int(draws), int(tune), int(chains), int(cores)
        self.target_accept = float(target_accept)
        self.seed = seed
        self.progressbar = progressbar
        self.period_days = float(period_days)
        self.compile_dir = compile_dir
        self.keep_draws = int(keep_draws)
        self.advi_iterations = int(advi_iterations)
        self.max_rhat = float(max_rhat)
        self.min_ess = None if min_ess is None else float(min_ess)
        self.prior_scales = scales
        self.init = init
        self.likelihood = likelihood

    # ------------------------------------------------------------------ description
    @property
    def model(self) -> SkillModel:
        """The :class:`SkillModel` assumed before fitting: the given model with the fixed values
        of ``drift``, ``prior_var``, ``home`` and the draw parameter substituted (inferred ones
        keep the given model's values; the fitted model is ``fit(games).model``)."""
        m = self._base
        draw = m.draw
        if self.draw_param is not None and isinstance(draw, Threshold):
            draw = Threshold(self.draw_param)
        elif self.draw_param is not None and isinstance(draw, Davidson):
            draw = Davidson(self.draw_param)
        return SkillModel(m.link, m.scale, m.prior_mean, m.prior_var if self.prior_var is None else self.prior_var,
                          m.drift if self.drift is None else self.drift, draw,
                          m.home if self.home is None else self.home)

    def get_params(self) -> dict:
        """The constructor arguments that rebuild this method."""
        return {"model": self._base, "drift": self.drift, "prior_var": self.prior_var, "home": self.home,
                "draw_param": self.draw_param, "sampler": self.sampler, "draws": self.draws, "tune": self.tune,
                "chains": self.chains, "cores": self.cores, "target_accept": self.target_accept, "seed": self.seed,
                "progressbar": self.progressbar, "period_days": self.period_days, "compile_dir": self.compile_dir,
                "keep_draws": self.keep_draws, "advi_iterations": self.advi_iterations, "max_rhat": self.max_rhat,
                "min_ess": self.min_ess, "prior_scales": dict(self.prior_scales)}

    def __repr__(self) -> str:
        m = self._base
        draw = nx.DRAWS[m.draw_code]

        def show(v):
            return "prior" if v is None else repr(v)

        return (f"PyMCSmoother(link={m.link!r}, scale={m.scale:g}, drift={show(self.drift)}, "
                f"prior_var={show(self.prior_var)}, home={show(self.home)}, draw={draw!r}, "
                f"sampler={self.sampler!r}, draws={self.draws}, tune={self.tune}, chains={self.chains})")

    # ------------------------------------------------------------------ time
    def times(self, games: Games) -> np.ndarray:
        """Each game's time in this smoother's unit (input row order): the rating-period code
        when the games have periods, else days / ``period_days``."""
        if games.period is not None:
            return games.period.astype(np.float64)
        return games.days() / self.period_days

    def _times_fn(self, fitted: Games):
        with_periods = fitted.period is not None

        def times(games: Games) -> np.ndarray:
            if (games.period is not None) != with_periods:
                a = "with" if with_periods else "without"
                b = "with" if games.period is not None else "without"
                raise ValueError(f"{self.name}: fitted on games {a} rating periods but given games {b}; group "
                                 f"the whole table with Games.with_periods(...) before splitting")
            if games.is_datetime != fitted.is_datetime:
                raise ValueError(f"{self.name}: fitted on {'dated' if fitted.is_datetime else 'numeric'} times "
                                 f"but given {'dated' if games.is_datetime else 'numeric'} ones")
            return self.times(games)

        return times

    # ------------------------------------------------------------------ fitting
    def _check_draws(self, games: Games) -> None:
        if self._base.draw_code != nx.DRAW_NONE:
            return
        drawn = np.flatnonzero(games.score == 0.5)
        if drawn.size:
            rows = ", ".join(str(r) for r in games.row[drawn[:5]]) + (" ..." if drawn.size > 5 else "")
            raise ValueError(f"{self.name}: column 'score' has {drawn.size} draw{'s' if drawn.size > 1 else ''} "
                             f"(rows {rows}) but the model's draw model is 'none', which gives a draw no "
                             f"likelihood; use draw='half', 'threshold' or 'davidson' in the SkillModel")

    def _build(self, games: Games, tl, compiled: bool | None = None):
        """The PyMC model; returns (pm model, names of the inferred scalar parameters).

        ``compiled``: the games' log-likelihood as one compiled Op (``_walk_logp``; the default
        for PyMC's own NUTS and ADVI and for nutpie, about three times as fast per gradient) or
        as a plain PyTensor graph (the default for numpyro, which compiles the graph to JAX)."""
        if compiled is None:
            compiled = self.likelihood == "compiled" or (self.likelihood == "auto" and self.sampler != "numpyro")
        configure_pytensor(self.compile_dir)  # before the first import of pytensor (idempotent)
        import pymc as pm
        import pytensor.tensor as pt

        m = self._base
        s = m.scale
        ps = self.prior_scales
        at_home = ~games.neutral
        code = m.draw_code
        free = []
        with pm.Model(coords={"node": np.arange(tl.n_nodes)}) as pmodel:
            if self.drift is None:
                drift_sd = pm.HalfNormal("drift_sd", sigma=ps["drift_sd"] * s)
                free.append("drift_sd")
            else:
                drift_sd = np.float64(math.sqrt(self.drift))
            if self.prior_var is None:
                prior_sd = pm.HalfNormal("prior_sd", sigma=ps["prior_sd"] * s)
                free.append("prior_sd")
            else:
                prior_sd = np.float64(math.sqrt(self.prior_var))
            if self.home is not None:
                home = self.home
            elif at_home.any():
                home = pm.Normal("home", mu=m.home, sigma=ps["home"] * s)
                free.append("home")
            else:
                home = m.home
            use_home = bool(at_home.any()) and not (isinstance(home, float) and home == 0.0)
            theta = None
            fixed_theta = None if self.draw_param is None else np.float64(self.draw_param)  # not float32
            if code == nx.DRAW_THRESHOLD:
                theta = fixed_theta if fixed_theta is not None else pm.HalfNormal("margin", sigma=ps["margin"] * s)
            elif code == nx.DRAW_DAVIDSON:
                theta = fixed_theta if fixed_theta is not None else pm.HalfNormal("nu", sigma=ps["nu"])
            if theta is not None and self.draw_param is None:
                free.append("margin" if code == nx.DRAW_THRESHOLD else "nu")

            z = pm.Normal("z", 0.0, 1.0, dims="node")
            if compiled:
                from ._walk_logp import WalkGamesLogp, register_numba

                if self.sampler == "nutpie":
                    register_numba()
                op = WalkGamesLogp(prior_mean=m.prior_mean, first=tl.prev < 0, sqrt_dt=np.sqrt(tl.dt),
                                   node_a=tl.game_a, node_b=tl.game_b, score=games.score,
                                   at_home=at_home if use_home else np.zeros(len(games)), weight=games.weight,
                                   link=m.link_code, draw=code, scale=s)
                ll = op(z, prior_sd, drift_sd, home if use_home else 0.0, theta if theta is not None else 0.0)[0]
            else:
                ll = self._graph_walk_loglik(pm, pt, games, tl, z, prior_sd, drift_sd,
                                             home if use_home else None, theta)
            pm.Potential("games", ll)
        return pmodel, free

    def _graph_walk_loglik(self, pm, pt, games: Games, tl, z, prior_sd, drift_sd, home, theta):
        """The games' log-likelihood as a plain PyTensor graph of ``z`` (the reference the compiled
        Op is tested against, and what numpyro compiles). All data enter as ``pm.Data`` (shared
        variables without static shapes), so the compiled code does not depend on the data and
        PyTensor's cache serves every data set."""
        first = tl.prev < 0
        at_home = ~games.neutral
        score = games.score
        # decisive games seen from the winner: d = s_winner - s_loser + home * (+1 winner at home,
        # -1 loser at home, 0 neutral); draws from a's side
        dec = np.flatnonzero(score != 0.5)
        drw = np.flatnonzero(score == 0.5)
        won = score[dec] == 1.0
        win_home = np.where(won, 1.0, -1.0) * at_home[dec]
        first_d = pm.Data("first", first.astype(float))
        sqrt_dt = pm.Data("sqrt_dt", np.sqrt(tl.dt))
        start = pm.Data("start", segment_starts(first))
        win = pm.Data("win_node", np.where(won, tl.game_a[dec], tl.game_b[dec]))
        lose = pm.Data("lose_node", np.where(won, tl.game_b[dec], tl.game_a[dec]))
        # non-centred random walk, one flat vector of nodes sorted by competitor then time:
        # increments, then one cumulative sum restarted at each competitor's first node
        # (dt = 0 at first nodes, so one scale per node covers both cases)
        inc = (first_d * prior_sd + drift_sd * sqrt_dt) * z + first_d * self._base.prior_mean
        csum = pt.cumsum(inc)
        skill = csum - pt.concatenate([pt.zeros(1), csum])[start]
        weighted = bool(np.any(games.weight != 1.0))
        return self._graph_loglik(pm, pt, skill, win, lose, home, theta, win_home,
                                  tl.game_a[drw], tl.game_b[drw], at_home[drw].astype(float),
                                  games.weight[dec] if weighted else None, games.weight[drw] if weighted else None)

    def _graph_loglik(self, pm, pt, skill, win, lose, home, theta, win_home, draw_a, draw_b, draw_home,
                      win_weight=None, draw_weight=None):
        """The games' log-likelihood (a scalar graph) for the model's link and draw model; with
        weights, each game's log-likelihood is multiplied by its weight (tempered, as the filters do)."""
        from pymc.distributions.dist_math import log_diff_normal_cdf, normal_lcdf

        m = self._base
        s = m.scale
        code = m.draw_code
        logistic = m.link == "logistic"

        def log_f(x):
            return -pt.softplus(-x) if logistic else normal_lcdf(0.0, 1.0, x)

        def total(terms, weight, name):
            return pt.sum(terms) if weight is None else pt.sum(pm.Data(name, weight) * terms)

        dd = skill[win] - skill[lose]
        if home is not None and np.any(win_home != 0):
            dd = dd + home * pm.Data("win_home", win_home)
        dd = dd / s
        dr = None
        if draw_a.size:
            dr = skill[pm.Data("draw_a", draw_a)] - skill[pm.Data("draw_b", draw_b)]
            if home is not None and np.any(draw_home != 0):
                dr = dr + home * pm.Data("draw_home", draw_home)
            dr = dr / s
        if code in (nx.DRAW_NONE, nx.DRAW_HALF):
            dec_terms = log_f(dd)
            draw_terms = None if dr is None else 0.5 * (log_f(dr) + log_f(-dr))
        elif code == nx.DRAW_THRESHOLD:
            mu = theta / s
            dec_terms = log_f(dd - mu)
            if dr is None:
                draw_terms = None
            elif logistic:
                # F(x) - F(y) = F(x) F(-y) (1 - e^{-(x - y)}) for the logistic cdf
                draw_terms = log_f(mu - dr) + log_f(mu + dr) + pt.log1mexp(-2.0 * mu)
            else:
                draw_terms = log_diff_normal_cdf(0.0, 1.0, mu - dr, -mu - dr)
        else:  # Davidson
            g_dec = pt.log(theta) + 0.5 * (log_f(dd) + log_f(-dd))
            dec_terms = log_f(dd) - pt.softplus(g_dec)
            if dr is None:
                draw_terms = None
            else:
                g_dr = pt.log(theta) + 0.5 * (log_f(dr) + log_f(-dr))
                draw_terms = g_dr - pt.softplus(g_dr)
        ll = total(dec_terms, win_weight, "win_weight")
        if draw_terms is not None:
            ll = ll + total(draw_terms, draw_weight, "draw_weight")
        return ll

    def _check_sampler(self) -> None:
        needed = {"nutpie": ["nutpie"], "numpyro": ["numpyro", "jax"]}.get(self.sampler, [])
        missing = [p for p in needed if find_spec(p) is None]
        if missing:
            raise ImportError(f"sampler={self.sampler!r} needs the optional package"
                              f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
                              f"pip install {' '.join(missing)}  (or use sampler='nuts')")

    def _laplace_point(self, games: Games, tl, pmodel) -> tuple[dict, dict]:
        """The Laplace approximation in the sampler's coordinates: (mean, variance) per value
        variable of ``pmodel``, from :class:`smoothers.LaplaceSmoother` fitted to the same model.

        A first node's z is (s - prior_mean) / sigma_prior with variance var(s) / sigma_prior^2; a
        later node's z is the step (s_k - s_k-1) / (sigma_drift sqrt(dt)), with variance
        (var(s_k) + var(s_k-1) - 2 cov(s_k, s_k-1)) / (sigma_drift^2 dt) from the smoother's
        neighbour covariances (``info["prev_cov"]``); both capped at the prior's 1. Scalars: the Laplace
        values (the drift by type-II maximum likelihood when it is inferred, the rest the model's)
        with variance 0.1^2 on their sampling scale (log for the positive ones)."""
        import dataclasses

        from .laplace import LaplaceSmoother

        m = self._base
        draw = m.draw
        if self.draw_param is not None and isinstance(draw, (Threshold, Davidson)):
            draw = type(draw)(self.draw_param)
        model = dataclasses.replace(m, prior_var=self.prior_var if self.prior_var is not None else m.prior_var,
                                    home=self.home if self.home is not None else m.home, draw=draw)
        lap = LaplaceSmoother(model, drift="auto" if self.drift is None else self.drift,
                              period_days=self.period_days).fit(games)
        if lap.timeline.n_nodes != tl.n_nodes:  # pragma: no cover - the same timeline by construction
            raise RuntimeError("Laplace start: the smoother's nodes differ from the sampler's")
        first = tl.prev < 0
        prior_sd = math.sqrt(lap.model.prior_var)
        drift_sd = math.sqrt(lap.model.drift)
        step_sd = np.where(first, prior_sd, drift_sd * np.sqrt(tl.dt))
        step = np.where(first, lap.mean - m.prior_mean, lap.mean - lap.mean[np.maximum(tl.prev, 0)])
        ok = step_sd > 0
        z = np.where(ok, step / np.where(ok, step_sd, 1.0), 0.0)
        prev = np.maximum(tl.prev, 0)
        step_var = np.where(first, lap.var, lap.var + lap.var[prev] - 2.0 * np.nan_to_num(lap.info["prev_cov"]))
        z_var = np.where(ok, np.clip(step_var / np.where(ok, step_sd, 1.0) ** 2, 1e-4, 1.0), 1.0)
        s = m.scale
        start = {"drift_sd_log__": math.log(max(drift_sd, 1e-3 * s)), "prior_sd_log__": math.log(max(prior_sd, 1e-3 * s)),
                 "home": model.home, "margin_log__": math.log(max(model.draw.theta, 1e-3 * s)),
                 "nu_log__": math.log(max(model.draw.theta, 1e-3)), "z": z}
        variance = {"home": (0.1 * s) ** 2, "z": z_var}
        names = [v.name for v in pmodel.continuous_value_vars]
        return ({n: start[n] for n in names}, {n: variance.get(n, 0.01) for n in names})

    def _laplace_start(self, games: Games, tl, pmodel, rng: np.random.Generator):
        """NUTS's step (diagonal mass matrix seeded with the Laplace variances) and one initial
        point per chain, each a draw from the Laplace approximation (:meth:`_laplace_point`), so
        the chains start dispersed, as r-hat assumes."""
        from pymc.step_methods.hmc.quadpotential import QuadPotentialDiagAdapt

        import pymc as pm

        mean, var = self._laplace_point(games, tl, pmodel)
        flat_mean = np.concatenate([np.atleast_1d(v) for v in mean.values()])
        flat_var = np.concatenate([np.broadcast_to(var[n], np.shape(np.atleast_1d(mean[n]))) for n in mean])
        potential = QuadPotentialDiagAdapt(flat_mean.size, flat_mean, flat_var, 10)
        nuts = pm.NUTS(vars=pmodel.continuous_value_vars, potential=potential, target_accept=self.target_accept,
                       model=pmodel)
        inits = [{n: mean[n] + np.sqrt(var[n]) * rng.standard_normal(np.shape(mean[n])) for n in mean}
                 for _ in range(self.chains)]
        return nuts, inits

    def _sample(self, pmodel, progress: bool, games: Games, tl):
        import pymc as pm

        seed = _as_seed(self.seed)
        with pmodel, _quiet_pymc(not progress):
            if self.sampler == "advi":
                approx = pm.fit(n=self.advi_iterations, method="advi", random_seed=seed, progressbar=progress)
                return approx.sample(self.draws, random_seed=seed), approx
            kw = {}
            if self.sampler in ("nutpie", "numpyro"):
                kw["nuts_sampler"] = self.sampler
            elif self.init == "laplace":
                kw["step"], kw["initvals"] = self._laplace_start(games, tl, pmodel, np.random.default_rng(seed))
            else:
                kw["init"] = self.init
            if "step" not in kw:  # a given step has its own
                kw["target_accept"] = self.target_accept
            idata = pm.sample(draws=self.draws, tune=self.tune, chains=self.chains, cores=self.cores,
                              random_seed=seed, progressbar=progress,
                              compute_convergence_checks=False, return_inferencedata=True, **kw)
            return idata, None

    def fit(self, games: Games) -> SmootherFit:
        """Sample the posterior of every node (and of the inferred parameters) for ``games``."""
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        self._check_draws(games)
        self._check_sampler()
        t0 = time.perf_counter()
        times_fn = self._times_fn(games)
        tl = timeline(games, times_fn(games))
        pmodel, free = self._build(games, tl)
        progress = sys.stderr.isatty() if self.progressbar is None else bool(self.progressbar)
        idata, _ = self._sample(pmodel, progress, games, tl)

        post = idata.posterior
        m = self._base
        first = tl.prev < 0
        start = segment_starts(first)
        nchain, ndraw = post.sizes["chain"], post.sizes["draw"]

        def param(name, fixed):
            if name in post:
                return np.asarray(post[name]).reshape(nchain, ndraw, 1)
            return np.full((nchain, ndraw, 1), fixed)

        drift_sd = param("drift_sd", math.sqrt(self.drift) if self.drift is not None else 0.0)
        prior_sd = param("prior_sd", math.sqrt(self.prior_var) if self.prior_var is not None else 0.0)
        z = np.asarray(post["z"])
        inc = (first * prior_sd + drift_sd * np.sqrt(tl.dt)) * z + first * m.prior_mean  # as in the model
        skill = segment_cumsum(inc, start)
        post["skill"] = (("chain", "draw", "node"), skill)
        post["drift"] = (("chain", "draw"), drift_sd[..., 0] ** 2)
        post["prior_var"] = (("chain", "draw"), prior_sd[..., 0] ** 2)

        flat = skill.reshape(nchain * ndraw, tl.n_nodes)
        mean = flat.mean(axis=0)
        var = flat.var(axis=0)
        keep = np.unique(np.linspace(0, flat.shape[0] - 1, min(self.keep_draws, flat.shape[0])).round().astype(int))
        draws = np.ascontiguousarray(flat[keep])

        home = float(post["home"].mean()) if "home" in post else (self.home if self.home is not None else m.home)
        draw = m.draw
        if isinstance(draw, Threshold):
            draw = Threshold(float(post["margin"].mean()) if "margin" in post else self.draw_param)
        elif isinstance(draw, Davidson):
            draw = Davidson(float(post["nu"].mean()) if "nu" in post else self.draw_param)
        fitted = SkillModel(m.link, m.scale, m.prior_mean, float(post["prior_var"].mean()), float(post["drift"].mean()),
                            draw, home)

        import pytensor

        info = {"sampler": self.sampler, "n_nodes": tl.n_nodes, "n_games": len(games), "chains": int(nchain),
                "draws": int(ndraw), "free": tuple(free), "compile_dir": str(pytensor.config.base_compiledir),
                "sampling_seconds": post.attrs.get("sampling_time")}
        if self.sampler != "advi":
            info.update(self._diagnose(idata, free, tl))
        info["seconds"] = time.perf_counter() - t0
        fit = SmootherFit(self, games, tl, mean, var, fitted, times_fn, draws=draws, info=info)
        fit.idata = idata
        return fit

    # ------------------------------------------------------------------ diagnostics
    def _diagnose(self, idata, free, tl) -> dict:
        """Divergences, the largest r-hat and the smallest bulk ESS over the sampled parameters
        (the scalars and every node's ``z``); warns with :class:`ConvergenceWarning` when off."""
        out = {}
        stats = idata.sample_stats
        div = int(np.asarray(stats["diverging"]).sum()) if "diverging" in stats else 0
        out["divergences"] = div
        problems = []
        if div:
            problems.append(f"{div} divergent transition{'s' if div > 1 else ''} after tuning "
                            f"(raise target_accept, now {self.target_accept:g})")
        post = idata.posterior
        chains = post.sizes["chain"]
        min_ess = self.min_ess if self.min_ess is not None else 100.0 * chains

        def label(i):  # a scalar parameter, or a node's z named by competitor and time
            if i < len(free):
                return free[i]
            k = i - len(free)
            return f"z[{k}] ({tl.players[tl.node_player[k]]} at t={tl.node_time[k]:g})"

        x = np.concatenate([np.asarray(post[name], dtype=float)[None] for name in free]
                           + [np.moveaxis(np.asarray(post["z"], dtype=float), -1, 0)], axis=0)
        z_bulk = _z_scale(_split_chains(x)) if x.shape[2] >= 4 else None
        rhat = rhat_rank(x, z_bulk)
        ess = ess_bulk(x, z_bulk)
        if np.all(np.isnan(rhat)):
            out["max_rhat"], out["max_rhat_at"] = float("nan"), None
        else:
            i = int(np.nanargmax(rhat))
            out["max_rhat"], out["max_rhat_at"] = float(rhat[i]), label(i)
            if rhat[i] > self.max_rhat:
                problems.append(f"r_hat {rhat[i]:.3f} for {label(i)} (> {self.max_rhat:g})")
        if np.all(np.isnan(ess)):
            out["min_ess"], out["min_ess_at"] = float("nan"), None
        else:
            i = int(np.nanargmin(ess))
            out["min_ess"], out["min_ess_at"] = float(ess[i]), label(i)
            if ess[i] < min_ess:
                problems.append(f"bulk ESS {ess[i]:.0f} < {min_ess:.0f} for {label(i)}")
        if problems:
            warnings.warn(f"{self.name}: sampling diagnostics are off: " + "; ".join(problems)
                          + " (see fit.idata and fit.info; more tune/draws or chains may help)",
                          ConvergenceWarning, stacklevel=3)
        return out
