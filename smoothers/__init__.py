"""Offline methods that fit the shared random-walk skill model to the whole history at once.

- :class:`LaplaceSmoother`: the posterior mode by Newton's method on the whole history with a
  sparse Hessian (Whole History Rating), marginal variances, drift fixed or type-II ML;
- :class:`BradleyTerry`: its drift-0 case, the static (MAP / maximum-likelihood) fit;
- :class:`PyMCSmoother`: the Bayesian gold standard, NUTS on the Gaussian-random-walk
  Bradley-Terry model in PyMC (imported lazily: ``from smoothers import PyMCSmoother``);
- :class:`RTSSmoother`: the extended Rauch-Tung-Striebel smoother, the EKF forward and the RTS
  recursion back (exact with ``Margin`` observations and ``covariance="full"``);
- :class:`TrueSkillThroughTime`: TrueSkill's expectation propagation through time (Dangauthier
  et al. 2007), forward and backward sweeps until convergence.

All are :class:`smoothers.base.Smoother` objects (the filters' ``get_params``, ``with_params``,
``tunable``, ``tune``) and return a :class:`smoothers.base.SmootherFit` with the filters' fitted
interface (``predict_proba``, ``ratings``, ``trajectories``).

Modules, by method: ``base`` (the fitted interface) and ``_timeline`` (the nodes of the
whole-history layout and how they grow for a refit); the Laplace smoother: ``laplace`` (the method:
settings, tune, fit, the drift search), ``_laplace_newton`` (Newton on the whole history),
``_laplace_factor`` (variances and the evidence at the mode), ``_laplace_run`` (thread limits,
progress), ``_laplace_checks`` (what a fit refuses), ``_sparse`` (the plan: fill-reducing order and
symbolic pattern), ``_sparse_factor`` (the numeric factor and selected inverse), ``_newton_system``
(Newton's systems by deflated conjugate gradients), ``_chains`` (each competitor's tridiagonal
block); ``bradley_terry`` (the static fit, Ford's condition); the PyMC smoother:
``pymc_smoother`` (the method), ``_pymc_model`` (its model and Laplace start), ``_walk_logp`` (its
compiled likelihood), ``_pymc_sampling`` (the samplers and Ctrl-C), ``_pymc_posterior`` (what a fit
holds), ``_diagnostics`` (r-hat, ESS and the warning); the RTS smoother: ``rts`` (the method),
``_rts_chains`` (the diagonal backward pass), ``_rts_full`` (the full-covariance recursion);
TrueSkill Through Time: ``ttt`` (the method), ``_ttt_messages`` (EP message passing),
``_ttt_fit`` (the fit's arrays and refits); the static rankings: ``_static`` (the shared fit and
its link), ``colley``, ``massey``, ``keener``.

Imports: ``filters`` (the EKF and TrueSkill whose smoothers these are, the run loop),
:mod:`statespace.methods`, :mod:`statespace.model`, :mod:`statespace.data` and
:mod:`statespace._runtime`, by their public names; never the facade ``statespace``,
:mod:`statespace.evaluation`, :mod:`statespace.ensemble` or the application.
"""

from .base import Smoother, SmootherFit, Timeline, timeline
from .bradley_terry import BradleyTerry
from .colley import Colley
from .keener import Keener
from .laplace import LaplaceSmoother
from .massey import Massey
from .rts import RTSSmoother
from .ttt import TrueSkillThroughTime


def _pymc(**kwargs):
    """Full Bayesian fit of the random-walk model by NUTS in PyMC: smoothers.PyMCSmoother, imported when built (its settings are PyMCSmoother's)."""
    from .pymc_smoother import PyMCSmoother

    return PyMCSmoother(**kwargs)


def __getattr__(name):
    if name == "PyMCSmoother":
        from .pymc_smoother import PyMCSmoother

        return PyMCSmoother
    raise AttributeError(f"module 'smoothers' has no attribute {name!r}")


#: The smoothers' names in :mod:`statespace.methods.registry` (``statespace compare --methods``,
#: ``statespace rate --method``); declared here rather than as per-module ``METHODS`` so that
#: listing them never imports PyMC.
REGISTRY = {
    "laplace": LaplaceSmoother,
    "bradley_terry": BradleyTerry,
    "pymc": _pymc,
    "ttt": TrueSkillThroughTime,
    "rts": RTSSmoother,
    "colley": Colley,
    "massey": Massey,
    "keener": Keener,
}

#: Registered but left out of the default method list: PyMC (minutes, not seconds, on real data)
#: and the RTS smoother (its forecasts after the last game are the EKF's own, as a last node keeps
#: its filtered belief: a frozen comparison would repeat the EKF's row).
#: Massey and Keener rate from each side's points, which the default simulated scenario lacks.
NOT_BY_DEFAULT = {"pymc", "rts", "massey", "keener"}

__all__ = ["LaplaceSmoother", "BradleyTerry", "Colley", "Massey", "Keener", "PyMCSmoother", "RTSSmoother",
           "TrueSkillThroughTime", "Smoother", "SmootherFit", "Timeline", "timeline", "REGISTRY", "NOT_BY_DEFAULT"]
