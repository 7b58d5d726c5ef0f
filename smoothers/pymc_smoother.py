r"""``PyMCSmoother``: full Bayesian inference of the random-walk skill model with PyMC.

The model (``statespace.SkillModel``; skills in the model's units, time in rating periods
when the games have them, else in days / ``period_days``), with :math:`\alpha` the model's scale,
:math:`\mu_0` its prior mean and :math:`h_\text{model}` its home advantage:

.. math::

    \sigma_\text{drift} &\sim \operatorname{HalfNormal}(0.5\,\alpha) \quad \text{(or fixed: } \sqrt{q}\text{, } q \text{ the drift)} \\
    \sigma_\text{prior} &\sim \operatorname{HalfNormal}(2\,\alpha) \quad \text{(or fixed: } \sigma_0\text{, the prior's sd)} \\
    h &\sim \mathcal{N}(h_\text{model}, \alpha^2) \quad \text{(only when some games are not neutral; or fixed)} \\
    \varepsilon &\sim \operatorname{HalfNormal}(\alpha) \quad \text{(draw model "threshold"; or fixed)} \\
    \nu &\sim \operatorname{HalfNormal}(2) \quad \text{(draw model "davidson"; or fixed)}

    s_i(t_1) &= \mu_0 + \sigma_\text{prior}\, z_{i1} \quad \text{(first node of competitor } i\text{)} \\
    s_i(t_k) &= s_i(t_{k-1}) + \sigma_\text{drift} \sqrt{t_k - t_{k-1}}\, z_{ik}, \qquad z \sim \mathcal{N}(0, 1) \\
    d &= s_a(t) - s_b(t) + h\, [a \text{ at home}] \\
    P(a \text{ wins}) &= F(d / \alpha) \quad \text{(} F \text{ logistic (Bradley-Terry) or } \Phi \text{ (Thurstone-Mosteller))}

with the model's draw model: "none" (an observed draw is an error), "half" (a draw scores
:math:`\tfrac12 \log F + \tfrac12 \log(1 - F)`), "threshold" (ordered logit/probit with the margin
:math:`\varepsilon`: win :math:`F\bigl((d - \varepsilon) / \alpha\bigr)`, loss
:math:`F\bigl((-d - \varepsilon) / \alpha\bigr)`, draw the rest) or "davidson" (with
:math:`p = F(d / \alpha)`, :math:`\bar p = 1 - p`: win :math:`p / D`, draw
:math:`\nu \sqrt{p \bar p} / D`, loss :math:`\bar p / D`, :math:`D = 1 + \nu \sqrt{p \bar p}`). Weighted games
(``Games.with_weights``) temper each game's log-likelihood by its weight, as the filters do. Mean
reversion (``SkillModel.reversion > 0``) is not supported: this is the random-walk model (the
Laplace smoother fits the mean-reverting one).

Other observations: with a :class:`statespace.Margin` or :class:`statespace.Goals` model each game's
term is that observation's log-likelihood of ``score_a`` and ``score_b`` (Gaussian margin;
Poisson or, with a dispersion, negative binomial counts), read through its ``symbolic_loglik``
in the PyTensor graph (the compiled Op is for win/draw/loss only; ``likelihood="auto"`` picks the
graph for them).

The sampler moves one standard normal per node and the skills are their segmented cumulative
sum (the non-centred random walk, ``smoothers._pymc_model``).

Speed. With PyMC's own NUTS (and ADVI), the games' log-likelihood and its gradient are one
compiled Op (``smoothers._walk_logp``: the walk, every game and the chain rule back through the
walk); the plain PyTensor graph stays for NumPyro (it compiles the graph to JAX), for nutpie with
``likelihood="graph"``, and as the tests' reference. nutpie (``sampler="nutpie"`` or ``"auto"``)
samples the whole log posterior as one cached numba function
(``smoothers._walk_logp.posterior_logp``, the logistic case's ``exp`` and ``log1p`` in vectorised
loops; ``smoothers._pymc_model.nutpie_model``): no PyTensor compilation per fit, no Python
between leapfrog steps, the chains in threads. NUTS starts from the Laplace smoother
(``init="laplace"``): dispersed chain starts drawn from its approximation and a mass matrix
seeded with its variances. docs/benchmarks.md measures each of these
(``benchmarks/bench_pymc.py``).

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
bulk ESS below ``min_ess`` (r-hat and ESS as ArviZ computes them, vectorised over the nodes: ``smoothers._diagnostics``).

Interrupts. PyMC catches a ``KeyboardInterrupt`` (Ctrl-C) while it samples and returns what it has
(a few hundred of the draws asked for, or fewer chains), and during tuning it fails with "Not
enough samples". ``fit`` watches for Ctrl-C while it compiles and samples and raises
:class:`SamplingInterrupted` (a ``KeyboardInterrupt``) instead, so that no partial sample passes
for a complete one; so does a sample with fewer chains or draws than asked for, however it came
short. With ``keep_partial=True`` a sample cut short after tuning is kept: ``fit.info["partial"]``
is True, ``fit.info["chains"]`` and ``fit.info["draws"]`` say what it holds, and a
:class:`PartialSampleWarning` says so (an interrupt during tuning leaves no draws to keep and still
raises). The same holds with nutpie, which stops its threads on Ctrl-C and returns chains of
different lengths: a partial fit keeps the draws every kept chain has.

PyTensor compile cache: :func:`statespace._runtime.pytensor_config.configure_pytensor` points it at
``compile_dir`` (default: ``statespace/pytensor`` in the user's cache directory, created private,
or a private temporary folder when that cannot be written) before PyTensor is first imported.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import signal
import threading
import time
import warnings
from contextlib import contextmanager
from importlib.util import find_spec

import numpy as np

from statespace.data.games import Games
from statespace.model.outcome import Outcome
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges
from statespace.model import numeric as nx
from statespace.model.outcome import Davidson, Threshold

from ._diagnostics import ess_bulk, rhat_rank, split_chains, z_scale
from ._pymc_model import build_model, laplace_start, nutpie_model, segment_cumsum, segment_starts
from statespace._runtime.pytensor_config import configure_pytensor, default_compile_dir
from statespace._runtime.progress import interactive
from .base import Smoother, SmootherFit, timeline

__all__ = ["PyMCSmoother", "ConvergenceWarning", "SamplingInterrupted", "PartialSampleWarning", "configure_pytensor", "default_compile_dir", "segment_cumsum",
           "segment_starts", "rhat_rank", "ess_bulk"]

SAMPLERS = ("nuts", "auto", "nutpie", "numpyro", "advi")
#: How PyMC's NUTS starts: "laplace" (from :class:`smoothers.LaplaceSmoother`'s fit), or one of
#: PyMC's own ``init`` methods.
INITS = ("laplace", "jitter+adapt_diag", "adapt_diag", "jitter+adapt_diag_grad", "advi+adapt_diag", "adapt_full",
         "jitter+adapt_full")

#: Standard deviations of the parameters' priors; skill-valued ones are in units of ``scale``.
DEFAULT_PRIOR_SCALES = {"drift_sd": 0.5, "prior_sd": 2.0, "home": 1.0, "margin": 1.0, "nu": 2.0}


class ConvergenceWarning(UserWarning):
    """MCMC diagnostics are off: divergences, r-hat above the bound or a low effective sample size."""


class SamplingInterrupted(KeyboardInterrupt):
    """The sampler was interrupted (Ctrl-C) or stopped short: the sample is not the one asked for.

    A ``KeyboardInterrupt``, so that whatever stops on Ctrl-C stops on it too (the command line
    exits with status 130). ``chains`` and ``draws`` say what the sampler returned (0 when
    nothing)."""

    def __init__(self, message: str, chains: int = 0, draws: int = 0):
        super().__init__(message)
        self.chains, self.draws = int(chains), int(draws)


class PartialSampleWarning(UserWarning):
    """``keep_partial=True`` kept a sample cut short: fewer chains or draws than asked for."""


class _InterruptWatch:
    """Whether Ctrl-C (SIGINT) arrived while the watch was on (:func:`_watch_interrupts`)."""

    interrupted = False

    def stop_sampler(self, *args, **kwargs) -> None:
        """PyMC's per-draw ``callback``: ends the chain being sampled once Ctrl-C has arrived.
        (Sampling chains one after another, PyMC ends only the current chain on Ctrl-C and goes
        on with the next one; with this each following chain stops at its first draw.)"""
        if self.interrupted:
            raise KeyboardInterrupt


@contextmanager
def _watch_interrupts():
    """Record SIGINT while the block runs, then let the handler in place act as before (Python's
    default raises ``KeyboardInterrupt``). Only from the main thread, and only over a Python-level
    handler (an ignored SIGINT stays ignored)."""
    watch = _InterruptWatch()
    if threading.current_thread() is not threading.main_thread():
        yield watch
        return
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):
        yield watch
        return

    def handler(signum, frame):
        watch.interrupted = True
        previous(signum, frame)

    signal.signal(signal.SIGINT, handler)
    try:
        yield watch
    finally:
        signal.signal(signal.SIGINT, previous)


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


def _fixed(value, check) -> float | None:
    """``None`` (the parameter gets a prior) or ``check(value)``, the number it is fixed at."""
    return None if value is None else check(value)


def _complete_draws(idata):
    """nutpie stopped early (Ctrl-C) returns chains of different lengths, padded with NaN: keep
    the chains with at least one draw, each cut to the draws they all have (what a partial fit
    holds, as PyMC's own partial traces)."""
    post = idata.posterior
    if "z" not in post or post.sizes["draw"] == 0:
        return idata
    done = np.isfinite(np.asarray(post["z"])).all(axis=-1)  # (chain, draw)
    if done.all():
        return idata
    lengths = np.where(done.all(axis=1), done.shape[1], np.argmin(done, axis=1))
    chains = np.flatnonzero(lengths > 0)
    keep = int(lengths[chains].min()) if chains.size else 0
    sel = {"chain": chains, "draw": np.arange(keep)}
    for group in idata.groups():
        data = idata[group]
        if "chain" in data.dims and "draw" in data.dims:
            idata[group] = data.isel(sel)
    return idata


class PyMCSmoother(Smoother):
    r"""The Gaussian-random-walk Bradley-Terry (or Thurstone-Mosteller) model fitted by MCMC in
    PyMC, non-centred (see the module docstring for the equations and the cumulative-sum trick).

    Parameters
    ----------
    model:
        The :class:`statespace.SkillModel` giving the link, scale, prior mean, draw model and home
        advantage (default: logistic at scale 1, i.e. logistic units, no draws).
    drift, prior_var:
        ``None`` (default): inferred, with a HalfNormal prior on their square roots; a number:
        fixed at that value, a variance in :math:`[0, (s \alpha)^2]` (:math:`\alpha` the
        model's scale; :func:`statespace.model.ranges.variance`). ``drift`` is the variance per unit of
        time.
    home:
        ``None`` (default): inferred with a Normal prior centred on ``model.home`` when some games
        are not neutral (otherwise ``model.home`` is kept); a number: fixed, with
        :math:`|h| \le L \alpha` (:math:`s` = :data:`statespace.model.ranges.SD_SCALES`,
        :math:`L` = :data:`statespace.model.ranges.LOCATION_SCALES`).
    draw_param:
        The draw model's parameter (threshold margin or Davidson nu): ``None`` infers it (HalfNormal
        prior), a number (finite, >= 0) fixes it. Ignored for "none" and "half".
    sampler:
        ``"nuts"`` (default: PyMC's NUTS), ``"nutpie"`` (nutpie's NUTS, the optional extra
        ``fast``: for win/draw/loss models on the compiled log density, nothing compiled per fit,
        about twice as fast here; see "Speed"), ``"auto"`` (nutpie when it is installed and the
        model is a win/draw/loss one, else PyMC's NUTS; :meth:`sampler_for` says which, and
        ``fit.info["sampler"]`` which ran), ``"numpyro"`` (NUTS in JAX, if installed) or
        ``"advi"`` (mean-field ADVI, then draws from the approximation: fast, but it
        underestimates posterior variances).
    draws, tune, chains, cores, target_accept, seed:
        Passed to the sampler (``tune`` is ignored by ADVI; ``advi_iterations`` sets its length).
        ``tune`` defaults to 500 tuning steps per chain: the chains start from the Laplace
        approximation (``init``), and on the 5,000-game benchmark 500 give the same r-hat and
        bulk ESS as 1,000 (docs/benchmarks.md). ``cores=None`` (default): the chains run in
        parallel, one process (nutpie: one thread) per chain up to the number of CPU cores.
        ``draws``, ``chains``, ``cores``: whole numbers >= 1; ``tune`` >= 0; ``target_accept`` in
        ``(0, 1)``.
    progressbar:
        The sampler's progress bar (PyMC's, or nutpie's): ``True`` shown, ``False`` not (and
        PyMC's log kept quiet); ``None`` (default): shown when someone is watching, i.e. stderr is
        a terminal or this runs in a Jupyter kernel (:func:`statespace._runtime.progress.interactive`).
    period_days:
        Time unit for games without rating periods: days / ``period_days`` (a finite number > 0).
    compile_dir:
        PyTensor's compile cache (see the module docstring); default ``statespace/pytensor`` in the
        user's cache directory (created private), unless ``PYTENSOR_FLAGS`` sets one.
    keep_draws:
        Posterior draws kept on the fitted object for ``predict_proba`` (evenly thinned; a whole
        number >= 1, as ``advi_iterations``).
    max_rhat, min_ess:
        Diagnostics bounds for the :class:`ConvergenceWarning` (``max_rhat`` a finite number > 1,
        as r-hat is at least 1; ``min_ess`` ``None`` or a finite number >= 0, default: 100 per
        chain, as recommended by Vehtari et al. 2021).
    prior_scales:
        Overrides of :data:`DEFAULT_PRIOR_SCALES` (prior sds, each a finite number > 0; skill-valued
        ones in units of scale).
    init:
        How NUTS starts (PyMC's NUTS and nutpie; numpyro uses its own).
        ``"laplace"`` (default): fit :class:`smoothers.LaplaceSmoother` first, start each chain
        at a draw from its Gaussian approximation mapped to the sampler's coordinates, and seed
        the diagonal mass matrix with its variances (nutpie: sample in coordinates standardised
        by them), so the first tuning iterations are not spent finding the scale of each
        competitor's first node. Otherwise one of PyMC's ``init`` methods, e.g. PyMC's default
        ``"jitter+adapt_diag"`` (nutpie: PyMC's initial point with a uniform(-1, 1) jitter).
    likelihood:
        How the games' log-likelihood is computed: ``"compiled"`` (one compiled Op, see "Speed"
        above; PyMC's NUTS and ADVI, and nutpie through PyTensor's numba backend; for
        :class:`statespace.Outcome` observations only, any other is a ``ValueError``),
        ``"graph"`` (the plain PyTensor graph of the observation's ``symbolic_loglik``), or
        ``"auto"`` (default: compiled, except for numpyro and for observations other than
        :class:`statespace.Outcome`, which get the graph).
    keep_partial:
        ``False`` (default): a sample cut short (Ctrl-C, or fewer chains or draws than asked for)
        raises :class:`SamplingInterrupted`. ``True``: a sample cut short after tuning is kept and
        marked (``fit.info["partial"]``, with :class:`PartialSampleWarning`); see "Interrupts" in the
        module docstring.

    ``fit(games)`` returns a :class:`smoothers.base.SmootherFit` whose ``idata`` attribute is the
    ArviZ ``InferenceData`` (with the derived ``skill``, ``drift`` and ``prior_var`` added to its
    posterior) and whose ``model`` has the posterior means of the inferred parameters.

    The parameter protocol of :class:`smoothers.base.Smoother`: ``get_params()`` (every argument
    above; the number of tuning steps is the attribute ``tune_steps``), ``with_params(...)``;
    nothing is tunable (:meth:`tune` refuses): the posterior infers what is not fixed.
    """

    name = "pymc"
    _param_aliases = {"model": "_base", "tune": "tune_steps"}

    def __init__(self, model: SkillModel | None = None, *, drift: float | None = None,
                 prior_var: float | None = None, home: float | None = None, draw_param: float | None = None,
                 sampler: str = "nuts", draws: int = 1000, tune: int = 500, chains: int = 2, cores: int | None = None,
                 target_accept: float = 0.9, seed=None, progressbar: bool | None = None,
                 period_days: float = 1.0, compile_dir: str | os.PathLike | None = None,
                 keep_draws: int = 500, advi_iterations: int = 20_000, max_rhat: float = 1.05,
                 min_ess: float | None = None, prior_scales: dict | None = None, init: str = "laplace",
                 likelihood: str = "auto", keep_partial: bool = False):
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
        if likelihood == "compiled" and not isinstance(model.observation, Outcome):
            raise ValueError(f"likelihood='compiled' is the compiled Op for Outcome observations (win/draw/loss); "
                             f"the model observes {model.observation!r}: use likelihood='graph' or 'auto' "
                             f"(the PyTensor graph of the observation's symbolic_loglik)")
        if likelihood == "compiled" and sampler == "numpyro":
            raise ValueError("likelihood='compiled' needs PyMC's own sampler or nutpie; numpyro compiles the "
                             "PyTensor graph to JAX (use likelihood='graph' or 'auto')")
        if init not in INITS:
            raise ValueError(f"init must be one of {', '.join(map(repr, INITS))}, got {init!r}")
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(map(repr, SAMPLERS))}, got {sampler!r}")
        owner, alpha = "PyMCSmoother", model.scale
        chains = ranges.whole(owner, "chains", chains, 1)
        if cores is None:  # chains in parallel, one per core, as PyMC does
            cores = max(1, min(chains, os.cpu_count() or 1))
        for name, value in (("draws", draws), ("cores", cores), ("keep_draws", keep_draws),
                            ("advi_iterations", advi_iterations)):
            ranges.whole(owner, name, value, 1)
        ranges.whole(owner, "tune", tune, 0)
        target_accept = ranges.number(owner, "target_accept", target_accept, 0.0, 1.0, lo_open=True, hi_open=True)
        period_days = ranges.number(owner, "period_days", period_days, 0.0, lo_open=True)
        max_rhat = ranges.number(owner, "max_rhat", max_rhat, 1.0, lo_open=True)
        min_ess = None if min_ess is None else ranges.number(owner, "min_ess", min_ess, 0.0)
        scales = dict(DEFAULT_PRIOR_SCALES)
        for k, v in (prior_scales or {}).items():
            if k not in scales:
                raise ValueError(f"{owner}: unknown prior scale {k!r}; known: {', '.join(scales)}")
            scales[k] = ranges.number(owner, f"prior scale {k!r}", v, 0.0, lo_open=True)
        self._base = model
        self.drift = _fixed(drift, lambda v: ranges.variance(owner, "drift", v, alpha))
        self.prior_var = _fixed(prior_var, lambda v: ranges.variance(owner, "prior_var", v, alpha))
        self.home = _fixed(home, lambda v: ranges.location(owner, "home", v, alpha))
        self.draw_param = _fixed(draw_param, lambda v: ranges.number(owner, "draw_param", v, 0.0))
        self.sampler = sampler
        self.draws, self.tune_steps, self.chains, self.cores = int(draws), int(tune), int(chains), int(cores)
        self.target_accept = float(target_accept)
        self.seed = seed
        self.progressbar = progressbar
        self.period_days = float(period_days)
        self.compile_dir = compile_dir
        self.keep_draws = int(keep_draws)
        self.advi_iterations = int(advi_iterations)
        self.max_rhat = max_rhat
        self.min_ess = min_ess
        self.prior_scales = scales
        self.init = init
        self.likelihood = likelihood
        if keep_partial not in (True, False):
            raise ValueError(f"keep_partial must be True or False, got {keep_partial!r}")
        self.keep_partial = bool(keep_partial)

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
        return dataclasses.replace(m, prior_var=m.prior_var if self.prior_var is None else self.prior_var,
                                   drift=m.drift if self.drift is None else self.drift, draw=draw,
                                   home=m.home if self.home is None else self.home)

    def __repr__(self) -> str:
        m = self._base
        if isinstance(m.observation, Outcome):
            observed = f"link={m.link!r}, scale={m.scale:g}, draw={nx.DRAWS[m.draw_code]!r}"
        else:
            observed = f"observation={m.observation!r}, scale={m.scale:g}"

        def show(v):
            return "prior" if v is None else repr(v)

        return (f"PyMCSmoother({observed}, drift={show(self.drift)}, "
                f"prior_var={show(self.prior_var)}, home={show(self.home)}, "
                f"sampler={self.sampler!r}, draws={self.draws}, tune={self.tune_steps}, chains={self.chains})")

    def _why_not_tunable(self) -> str:
        return (": the posterior infers drift, prior_var, home and draw_param unless they are given as numbers "
                "(the argument tune= is the number of NUTS tuning steps, attribute tune_steps)")

    # ------------------------------------------------------------------ fitting
    def _check_draws(self, games: Games) -> None:
        """A record the observation cannot score is an error before any compilation: a draw under
        draw model "none" (named by row), or missing / invalid ``score_a``, ``score_b`` for
        :class:`statespace.Margin` and :class:`statespace.Goals`."""
        m = self._base
        if not isinstance(m.observation, Outcome):
            m.observation.loglik(games.score, 0.0, games.score_a, games.score_b, scale=m.scale)  # raises if invalid
            return
        if m.draw_code != nx.DRAW_NONE:
            return
        drawn = np.flatnonzero(games.score == 0.5)
        if drawn.size:
            rows = ", ".join(str(r) for r in games.row[drawn[:5]]) + (" ..." if drawn.size > 5 else "")
            raise ValueError(f"{self.name}: column 'score' has {drawn.size} draw{'s' if drawn.size > 1 else ''} "
                             f"(rows {rows}) but the model's draw model is 'none', which gives a draw no "
                             f"likelihood; use draw='half', 'threshold' or 'davidson' in the SkillModel")

    def _check_sampler(self) -> None:
        needed = {"nutpie": ["nutpie"], "numpyro": ["numpyro", "jax"]}.get(self.sampler, [])
        missing = [p for p in needed if find_spec(p) is None]
        if missing:
            raise ImportError(f"sampler={self.sampler!r} needs the optional package"
                              f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
                              f"pip install {' '.join(missing)}  (or use sampler='nuts')")

    def sampler_for(self) -> str:
        """The sampler a fit runs: ``sampler`` itself, or for ``"auto"`` nutpie when it is
        installed and the model is a win/draw/loss one (:class:`statespace.Outcome`, the
        compiled log density; ``likelihood`` not ``"graph"``), else PyMC's NUTS."""
        if self.sampler != "auto":
            return self.sampler
        fast = isinstance(self._base.observation, Outcome) and self.likelihood != "graph"
        return "nutpie" if fast and find_spec("nutpie") is not None else "nuts"

    def _nutpie_fast(self) -> bool:
        """nutpie on the compiled log density (:func:`smoothers._pymc_model.nutpie_model`) rather
        than on PyMC's model compiled by PyTensor's numba backend (``likelihood="graph"``)."""
        return isinstance(self._base.observation, Outcome) and self.likelihood != "graph"

    def _sample_nutpie(self, pmodel, free, progress: bool, games: Games, tl, seed):
        """nutpie's NUTS on the compiled log density: nothing compiled per fit, chains in threads
        (``cores`` at a time), every chain started from the Laplace approximation."""
        import nutpie

        compiled = nutpie_model(self, games, tl, pmodel, free, seed)
        t0 = time.perf_counter()
        idata = nutpie.sample(compiled, draws=self.draws, tune=self.tune_steps, chains=self.chains, cores=self.cores,
                              seed=seed, target_accept=self.target_accept, progress_bar=progress, save_warmup=False)
        elapsed = time.perf_counter() - t0
        idata = _complete_draws(idata)
        idata.posterior.attrs["sampling_time"] = elapsed
        idata.posterior.attrs["tuning_steps"] = self.tune_steps
        return idata

    def _sample(self, pmodel, progress: bool, games: Games, tl, watch: _InterruptWatch | None = None, free=()):
        import pymc as pm

        seed = _as_seed(self.seed)
        sampler = self.sampler_for()
        if sampler == "nutpie" and self._nutpie_fast():
            return self._sample_nutpie(pmodel, list(free), progress, games, tl, seed), None
        with pmodel, _quiet_pymc(not progress):
            if sampler == "advi":
                approx = pm.fit(n=self.advi_iterations, method="advi", random_seed=seed, progressbar=progress)
                return approx.sample(self.draws, random_seed=seed), approx
            kw = {}
            if sampler in ("nutpie", "numpyro"):
                kw["nuts_sampler"] = sampler
            else:
                if watch is not None:
                    kw["callback"] = watch.stop_sampler
                if self.init == "laplace":
                    kw["step"], kw["initvals"] = laplace_start(self, games, tl, pmodel, np.random.default_rng(seed))
                else:
                    kw["init"] = self.init
            if "step" not in kw:  # a given step has its own
                kw["target_accept"] = self.target_accept
            idata = pm.sample(draws=self.draws, tune=self.tune_steps, chains=self.chains, cores=self.cores,
                              random_seed=seed, progressbar=progress,
                              compute_convergence_checks=False, return_inferencedata=True, **kw)
            return idata, None

    def _sample_or_interrupt(self, games: Games, tl, progress: bool):
        """Build the model and sample it, watching for Ctrl-C (see "Interrupts" in the module
        docstring). Returns ``(idata, approx, free, partial)``: ``free`` the inferred scalar
        parameters, ``partial`` the ``info`` of a sample cut short and kept (``keep_partial=True``),
        else ``None``; raises :class:`SamplingInterrupted` for an interrupted or short sample
        otherwise."""
        what = "ADVI" if self.sampler == "advi" else "sampling"
        with _watch_interrupts() as watch:
            try:
                pmodel, free = build_model(self, games, tl)
                idata, approx = self._sample(pmodel, progress, games, tl, watch, free)
            except KeyboardInterrupt as exc:
                if isinstance(exc, SamplingInterrupted):
                    raise
                raise SamplingInterrupted(f"{self.name}: {what} interrupted") from exc
            except Exception as exc:  # PyMC's "Not enough samples" (Ctrl-C during tuning), a broken compile...
                if watch.interrupted:
                    raise SamplingInterrupted(f"{self.name}: {what} interrupted before any draw to keep, "
                                              f"during compilation or tuning ({type(exc).__name__}: {exc})") from exc
                raise
        post = idata.posterior
        chains, draws = int(post.sizes["chain"]), int(post.sizes["draw"])
        if approx is not None:  # ADVI: the draws come from the approximation; its iterations may be short
            hist = getattr(approx, "hist", None)  # the loss of each iteration run
            done = self.advi_iterations if hist is None else len(hist)
            short = watch.interrupted or done < self.advi_iterations
            partial = {"advi_iterations": int(done)}
            said = f"ADVI stopped after {done:,} of {self.advi_iterations:,} iterations"
        else:
            short = watch.interrupted or chains < self.chains or draws < self.draws
            partial = {"chains": chains, "draws": draws}
            said = (f"the sample holds {chains} of {self.chains} chain{'s' if self.chains > 1 else ''} and "
                    f"{draws:,} of {self.draws:,} draws per chain")
        if not short:
            return idata, approx, free, None
        cause = "interrupted" if watch.interrupted else "cut short"
        if not self.keep_partial or min(chains, draws) == 0:
            raise SamplingInterrupted(f"{self.name}: {what} {cause}: {said}; not a complete fit "
                                      f"(keep_partial=True keeps such a sample)", chains, draws)
        warnings.warn(f"{self.name}: {what} {cause}: {said}; kept as a partial fit (keep_partial=True; "
                      f"fit.info['partial'] is True)", PartialSampleWarning, stacklevel=3)
        return idata, approx, free, {"partial": True, "interrupted": bool(watch.interrupted), **partial}

    def fit(self, games: Games) -> SmootherFit:
        """Sample the posterior of every node (and of the inferred parameters) for ``games``."""
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        self._check_draws(games)
        self._check_sampler()
        t0 = time.perf_counter()
        tl = timeline(games, self.times(games))
        progress = interactive() if self.progressbar is None else bool(self.progressbar)
        idata, _, free, partial = self._sample_or_interrupt(games, tl, progress)
        t_sampled = time.perf_counter()

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
        fitted = dataclasses.replace(m, prior_var=float(post["prior_var"].mean()), drift=float(post["drift"].mean()),
                                     draw=draw, home=home)

        import pytensor

        info = {"sampler": self.sampler_for(), "n_nodes": tl.n_nodes, "n_games": len(games), "chains": int(nchain),
                "draws": int(ndraw), "free": tuple(free), "compile_dir": str(pytensor.config.base_compiledir),
                "sampling_seconds": post.attrs.get("sampling_time"), "partial": False}
        if partial is not None:
            info.update(partial)
        if self.sampler != "advi":
            info.update(self._diagnose(idata, free, tl))
        info["seconds"] = time.perf_counter() - t0
        # where the time went: before sampling (model, compilation or the compile cache, Laplace
        # start, worker processes), the sampler's own clock, and the summaries and diagnostics
        sampling = info["sampling_seconds"] or 0.0
        info["setup_seconds"] = max(0.0, t_sampled - t0 - sampling)
        info["summary_seconds"] = time.perf_counter() - t_sampled
        fit = SmootherFit(self, games, tl, mean, var, fitted, self.times, draws=draws, info=info)
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
        z_bulk = z_scale(split_chains(x)) if x.shape[2] >= 4 else None
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
