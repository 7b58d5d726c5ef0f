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
graph for them). With two skills per competitor (``SkillModel(openness_var=..., openness_drift=...)``,
Goals: attack and defence) the openness is a second non-centred walk of its own standard normals
``z_open`` (prior mean 0, the model's ``openness_var`` and ``openness_drift``, fixed), each game's
goal-rate shift the two sides' summed openness (:meth:`statespace.Goals.symbolic_loglik`'s
``shift``); the fit is a :class:`smoothers._laplace_two.TwoSkillFit` (ratings with ``openness``,
``attack``, ``defence``; the posterior gains ``openness``), its chains started from the Laplace
smoother's two-skill fit.

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

Where the parts live: the model and its Laplace start in ``smoothers._pymc_model``, running the
samplers and watching for Ctrl-C in ``smoothers._pymc_sampling``, what a fit holds in
``smoothers._pymc_posterior``, r-hat, ESS and the :class:`ConvergenceWarning` in
``smoothers._diagnostics``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from importlib.util import find_spec

import numpy as np

from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.outcome import Outcome
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges
from statespace.model import numeric as nx
from statespace.model.outcome import Davidson, Threshold

from ._diagnostics import ConvergenceWarning, diagnose, ess_bulk, rhat_rank
from ._pymc_matches import fit_matches
from ._pymc_model import segment_cumsum, segment_starts
from ._laplace_two import TwoSkillFit
from ._pymc_posterior import openness_summary, posterior_summary
# the interrupt watch is reached here by tests/test_interrupts.py
from ._pymc_sampling import PartialSampleWarning, SamplingInterrupted, _InterruptWatch, _watch_interrupts  # noqa: F401
from ._pymc_sampling import sample_or_interrupt
from statespace._runtime.pytensor_config import configure_pytensor, default_compile_dir
from statespace._runtime.progress import interactive
from .base import Smoother, SmootherFit, timeline

__all__ = ["PyMCSmoother", "ConvergenceWarning", "SamplingInterrupted", "PartialSampleWarning", "configure_pytensor",
           "default_compile_dir", "segment_cumsum", "segment_starts", "rhat_rank", "ess_bulk"]

SAMPLERS = ("nuts", "auto", "nutpie", "numpyro", "advi")
#: How PyMC's NUTS starts: "laplace" (from :class:`smoothers.LaplaceSmoother`'s fit), or one of
#: PyMC's own ``init`` methods.
INITS = ("laplace", "jitter+adapt_diag", "adapt_diag", "jitter+adapt_diag_grad", "advi+adapt_diag", "adapt_full",
         "jitter+adapt_full")

#: Standard deviations of the parameters' priors; skill-valued ones are in units of ``scale``.
DEFAULT_PRIOR_SCALES = {"drift_sd": 0.5, "prior_sd": 2.0, "home": 1.0, "margin": 1.0, "nu": 2.0}


def _fixed(value, check) -> float | None:
    """``None`` (the parameter gets a prior) or ``check(value)``, the number it is fixed at."""
    return None if value is None else check(value)


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
        less CPU per fit; see "Speed" and docs/benchmarks.md), ``"auto"`` (nutpie when it is
        installed and the model is a win/draw/loss one, else PyMC's NUTS; :meth:`sampler_for`
        says which, and ``fit.info["sampler"]`` which ran), ``"numpyro"`` (NUTS in JAX, if
        installed) or ``"advi"`` (mean-field ADVI, then draws from the approximation: fast, but it
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
        model.refuse_latent_draws("PyMCSmoother")
        if getattr(model.observation, "tilt", 0.0) != 0.0:
            raise ValueError(f"PyMCSmoother: the Goals observation's draw tilt (tilt={model.observation.tilt!r}) has "
                             f"no PyTensor graph; give tilt=0, or use the LaplaceSmoother or the EKF, which read it")
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

    def fit(self, games: Games) -> SmootherFit:
        """Sample the posterior of every node (and of the inferred parameters) for ``games``; given
        a :class:`statespace.data.matches.Matches`, the ranking of each match's sides
        (:mod:`smoothers._pymc_matches`)."""
        if isinstance(games, Matches):
            return fit_matches(self, games)
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
        self._check_draws(games)
        self._check_sampler()
        t0 = time.perf_counter()
        tl = timeline(games, self.times(games))
        progress = interactive() if self.progressbar is None else bool(self.progressbar)
        idata, _, free, partial = sample_or_interrupt(self, games, tl, progress)
        t_sampled = time.perf_counter()

        mean, var, draws, fitted = posterior_summary(self, idata, tl)
        post = idata.posterior

        import pytensor

        info = {"sampler": self.sampler_for(), "n_nodes": tl.n_nodes, "n_games": len(games),
                "chains": int(post.sizes["chain"]), "draws": int(post.sizes["draw"]), "free": tuple(free),
                "compile_dir": str(pytensor.config.base_compiledir),
                "sampling_seconds": post.attrs.get("sampling_time"), "partial": False}
        if partial is not None:
            info.update(partial)
        if self.sampler != "advi":
            info.update(diagnose(self, idata, free, tl))
        info["seconds"] = time.perf_counter() - t0
        # where the time went: before sampling (model, compilation or the compile cache, Laplace
        # start, worker processes), the sampler's own clock, and the summaries and diagnostics
        sampling = info["sampling_seconds"] or 0.0
        info["setup_seconds"] = max(0.0, t_sampled - t0 - sampling)
        info["summary_seconds"] = time.perf_counter() - t_sampled
        if self._base.two_skills:  # attack and defence: the openness's posterior beside the skill's
            open_mean, open_var = openness_summary(self, idata, tl)
            fit = TwoSkillFit(self, games, tl, mean, var, fitted, self.times, open_mean, open_var, info=info)
        else:
            fit = SmootherFit(self, games, tl, mean, var, fitted, self.times, draws=draws, info=info)
        fit.idata = idata
        return fit
