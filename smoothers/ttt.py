r"""TrueSkill Through Time: expectation propagation of TrueSkill's model over the whole history.

Dangauthier, Herbrich, Minka and Graepel, "TrueSkill Through Time: Revisiting the History of
Chess" (NIPS 2007); Landfried and Mocskos, "TrueSkill Through Time: reliable initial skill
estimates and historical comparability with Julia, Python and R" (2021 onwards; the
``trueskillthroughtime`` package, against which ``tests/test_ttt.py`` checks this module).

The model is the TrueSkill filter's (:class:`filters.TrueSkill` with ``dynamics="time"``) laid out
as the smoothers' whole-history model (:mod:`smoothers.base`): one Gaussian skill per competitor
and time slice at which it plays (a node; a rating period, or a distinct time), a newcomer's first
node :math:`\mathcal{N}(\mu, \sigma^2)`, consecutive nodes linked by the random walk
:math:`s_k = s_{k-1} + \mathcal{N}(0, \tau^2 \Delta t)`, and each game one factor on the difference
of its two nodes: performances :math:`p = s + \mathcal{N}(0, \beta^2)`, a win when
:math:`p_a - p_b + h > \varepsilon`, a draw within :math:`\pm\varepsilon` (the draw margin of
``draw_probability``, :func:`filters.trueskill.draw_margin`).

``draw_probability`` left out (``None``, the default) is learned from the games at ``fit`` as the
TrueSkill filter learns it (:mod:`filters.draws`), and by that filter: the one this smoother's
forward pass is, ``filters.TrueSkill(mu, sigma, beta, tau, None, dynamics="time", home=...,
period_days=...)``, whose ``resolved(games).draw_probability`` is 0 when the games have no draw
and the classic 0.10's own forecasts make that implausible, else 0.10. The fit's method carries
the value used (``fit.method.draw_probability``, ``get_params()``, ``repr``), and a refit
compares that value, so a walk-forward's refits stay incremental.

Every node's belief is the product of three kinds of Gaussian messages, kept in natural
parameters (precision :math:`\pi = 1/v`, precision-mean :math:`\tau = m/v` for a mean :math:`m`
and variance :math:`v`; a product of Gaussians adds them, a division subtracts them):

- the *forward* message from its competitor's previous node (or the prior at a first node): that
  node's forward message times its games' messages, widened by :math:`\tau^2 \Delta t` (here
  :math:`\tau` is the dynamics noise, ``tau``);
- the *backward* message from its next node: that node's backward message times its games'
  messages, widened by the same :math:`\tau^2 \Delta t` (uniform, :math:`\pi = 0`, at a last node);
- one *likelihood* message per game it plays.

Widening :math:`(\pi, \tau)` by the variance :math:`u` is :math:`(\pi, \tau) / (1 + \pi u)`: no
division by a precision, and a uniform message stays uniform. A game's message to ``a`` is
recomputed by EP from the cavities (each node's belief divided by the game's own message): with
cavity means :math:`m_a, m_b` and variances :math:`v_a, v_b`,
:math:`c^2 = 2 \beta^2 + v_a + v_b`, :math:`t = (m_a - m_b + h) / c` and TrueSkill's
truncated-Gaussian corrections :math:`v(t)`, :math:`w(t)` (:mod:`statespace.model.gaussian`; the sign
:math:`\varsigma = -1` for a loss of ``a``, else 1; draws use :math:`v_\text{draw}`,
:math:`w_\text{draw}`), the message that moment-matches the tilted distribution is

.. math::

    \pi_a = \frac{w}{c^2 - w v_a}, \qquad \tau_a = \frac{w m_a + \varsigma\, c\, v}{c^2 - w v_a}

(and for ``b`` the same with :math:`v_b`, :math:`m_b` and :math:`-\varsigma`):
:math:`c^2 - w v_a \ge 2 \beta^2 + v_b > 0` since :math:`w` is in (0, 1), so every message has a
positive precision and no division of Gaussians can produce a negative variance. The posterior of a single game is then exactly the
TrueSkill (ADF) update of :func:`filters.trueskill._adf`.

The schedule (Dangauthier et al. 2007, Landfried and Mocskos):

1. a forward pass through the slices in time order (each slice's forward messages, then its
   games' messages): the TrueSkill filter. With rating periods every game of a slice is computed
   from the slice's forward messages alone and their messages multiplied afterwards (the filter's
   rating-period update, so the order of games inside a period does not matter); without, the
   games of a time are taken one after another in input order (the filter's one-game updates);
2. then sweeps, each a backward pass (slices in reverse time order: each slice's backward
   messages, then its games' messages recomputed one after another by EP with the other messages
   fixed) and a forward pass (the same in time order, with the new forward messages), until no
   node's posterior mean or sd moves by more than ``tol`` in a sweep, or ``max_iter`` sweeps.

A slice's games are revisited once per pass, not iterated to convergence inside the pass: the
sweeps do that (the fixed point is the same; Landfried and Mocskos do the same). Convergence is
linear, and its slowest part is the common level of all competitors, which only their priors pin:
it typically moves by a nearly constant factor (about 0.9) per sweep, so the sweeps stop when that
level's last move is below ``tol``, with perhaps ten times that still to go; forecasts depend on
differences of skills and settle sooner. ``fit.info`` reports ``sweeps``, ``change`` (the last
sweep's largest move of a mean or sd), ``converged`` and ``filtered_sd`` (every node's sd after
the first forward pass: the filter's). With rating periods that filter updates a period's games
from one pre-period belief, which overstates their joint evidence, so a smoothed sd can come out
above the filtered one at a node; taken one game at a time (no periods), the smoothed sds are at
most the filtered ones.

**Refits** (``fit(games, warm_start=earlier_fit)``, a walk-forward's; see
:meth:`TrueSkillThroughTime.fit`). When ``games`` extends the earlier fit's games by later ones,
the EP fixed point moves only where the new games' evidence reaches: the new slices, and the
earlier ones as far back as the changed messages carry it, shrinking on the way (a smoothing gain
below 1 along each chain, and across a game by the share of the opponent's uncertainty). So a
refit keeps every earlier message, runs step 1 over the new slices only, and then sweeps as in
step 2 but visits a slice only when a message it reads has changed: after a slice is processed,
each of its nodes whose posterior mean or sd moved by more than ``refit_tol`` flags its previous
node's slice (whose backward message it sends), its next node's (whose forward message it sends)
and its own for the pass in the other direction (its games' cavities include it); the sweeps
stop when nothing is flagged. This is the sweeps' own schedule with the unchanged slices skipped:
a skipped slice would recompute its messages from inputs that moved by at most ``refit_tol``, so
the refit stops at the fixed point up to those moves, as a fit from scratch stops at ``tol``. It
is a thresholded form of residual scheduling (Elidan, McGraw and Koller, "Residual Belief
Propagation: Informed Scheduling for Asynchronous Message Passing", UAI 2006), with slices as the
units and the sweeps' order kept. Nodes and games are numbered in time order inside the compiled
loops, so a refit's new nodes, games and slices are appended to the earlier fit's arrays: the
numbering a fit from scratch would give.

The default ``refit_tol`` is ten times ``tol``: on long histories a fit from scratch stops at
``max_iter`` before ``tol`` (the slow common level), its last sweep still moving nodes by more
than ``tol``, and a refit that propagated every such move would finish that convergence over the
whole history instead of following the new games.

Cost: one compiled loop (``numba.njit(cache=True)``) over flat arrays, O(games + nodes) a sweep;
a refit, the slices it visits plus a copy of the earlier arrays; the measured times are in
``docs/smoothers.md`` (``benchmarks/bench_forward_backward.py``, ``benchmarks/bench_walk_forward.py``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from filters.draws import LearnedDraws, has_draws
from filters import trueskill
from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.model.skillmodel import SkillModel
from statespace.model.outcome import Threshold
from statespace.model.ranking_forecast import RankingForecast
from statespace.model import ranges
from statespace.methods.settings import DrawWarning

from ._ttt_fit import FitLayout
from ._ttt_matches import MatchFit, check_fit_matches, fit_matches, match_draw_probability
from ._ttt_messages import SD_MIN
from .base import Smoother, SmootherFit, resumable

__all__ = ["TrueSkillThroughTime", "MU", "SIGMA", "BETA", "TAU", "DRAW_PROBABILITY", "MAX_ITER", "TOL"]

#: a newcomer's mean skill :math:`\mu` (TrueSkill's 25; the displayed rating :math:`\mu - 3 \sigma` starts at 0)
MU = 25.0
#: a newcomer's uncertainty: the sd :math:`\sigma` of the prior skill (25/3, so that :math:`\mu - 3 \sigma = 0`)
SIGMA = MU / 3.0
#: the performance noise: the skill lead that guarantees about a 76% chance of winning
#: (:math:`\Phi(1 / \sqrt{2})`) between competitors whose skills are known exactly (``SIGMA / 2``)
BETA = SIGMA / 2.0
#: the dynamics noise: the sd by which a skill wanders per unit of time (a rating period, or
#: ``period_days`` days); ``SIGMA / 100``, TrueSkill's default ``tau`` per game, here per unit of time
TAU = SIGMA / 100.0
#: the share of draws between two equally skilled competitors (sets the draw margin): the classic
#: value, as :data:`filters.trueskill.DRAW_PROBABILITY`, used where the games have draws (and where
#: no games are at hand) when ``draw_probability`` is left to the games (``None``, the default)
DRAW_PROBABILITY = 0.10
#: at most this many backward-forward sweeps after the first forward pass (the common level of all
#: competitors, pinned only by their priors, is the slowest part to settle: it typically moves by
#: a nearly constant factor of 0.9 per sweep, so 40-60 sweeps reach ``TOL``)
MAX_ITER = 100
#: the sweeps stop when no posterior mean or sd moved by more than this (skill units: a
#: ten-thousandth of a point on TrueSkill's scale, 2.4e-5 ``beta``; a forecast moves by less than
#: 1e-5 then)
TOL = 1e-4

# ---------------------------------------------------------------------------- the method
class TrueSkillThroughTime(FitLayout, LearnedDraws, Smoother):
    r"""TrueSkill Through Time (Dangauthier et al. 2007): TrueSkill's probit model with a draw
    margin, smoothed over the whole history by expectation propagation (see the module docstring).

    Parameters
    ----------
    mu, sigma:
        A newcomer's skill, :math:`\mathcal{N}\bigl(25, (25/3)^2\bigr)` (:data:`MU`, :data:`SIGMA`):
        :math:`|\mu| \le L \alpha`, :math:`0 < \sigma \le s \alpha` (the ranges of
        :mod:`statespace.model.ranges`, in units of the scale :math:`\alpha` below: :math:`s` =
        :data:`~statespace.model.ranges.SD_SCALES`, :math:`L` = :data:`~statespace.model.ranges.LOCATION_SCALES`).
    beta:
        Performance noise :math:`\beta` (:data:`BETA` = 25/6): a skill lead of :math:`\beta` gives
        about a 76% chance of winning; the model's scale is :math:`\alpha = \sqrt{2}\,\beta`
        (probit link), in ``[ranges.SCALE_MIN, ranges.SCALE_MAX]`` (:math:`[10^{-100}, 10^{100}]`).
    tau:
        Dynamics noise :math:`\tau` (:data:`TAU` = 25/300): the sd a skill wanders per unit of
        time, so the variance :math:`\tau^2 \Delta t` links consecutive nodes :math:`\Delta t` apart
        (the random walk); 0 for skills that never change. :math:`0 \le \tau \le s \alpha`.
    draw_probability:
        The share of draws :math:`p` between equal competitors, in ``[0, 1)``, which sets the draw
        margin :math:`\varepsilon = \sqrt{2}\,\beta\,\Phi^{-1}\bigl((1 + p) / 2\bigr)`
        (:func:`filters.trueskill.draw_margin`).
        ``None`` (the default): learned from the games at :meth:`fit` as ``filters.TrueSkill``
        learns it (:mod:`filters.draws`; decided by the TrueSkill filter that is the forward
        pass, :meth:`resolved`): 0 when the games have no draw and are too many for that to be
        chance (the classic value's forecasts give a table without draws less than 1e-3 of
        chance), else the classic :data:`DRAW_PROBABILITY` = 0.10. The value used is on the fit:
        ``fit.method.draw_probability`` (its ``get_params()`` and ``repr``). Where no games are at
        hand (``model``, ``draw_margin``) the classic 0.10 applies. An explicit value is honoured
        on any games; above 0 on games without a draw that its own filter's forecasts make
        implausible by the same test, ``fit`` warns (:class:`~statespace.methods.settings.DrawWarning`).
    home:
        Home advantage in skill units, added to ``a``'s performance when ``a`` is at home:
        :math:`|h| \le H \alpha` (:math:`H` = :data:`~statespace.model.ranges.HOME_SCALES`, as for
        ``filters.TrueSkill``).
    period_days:
        The unit of time when the games have no rating periods (days; numeric times: their own
        unit), a finite number > 0. With rating periods (``Games.with_periods``) the unit is one
        period.
    max_iter:
        At most this many backward-forward sweeps after the first forward pass (:data:`MAX_ITER` =
        100), a whole number >= 0; ``max_iter=0`` stops after the forward pass, which is the
        TrueSkill filter (``filters.TrueSkill(dynamics="time")``, same settings): the fit is never
        the prior, as the forward pass always runs.
    tol:
        The sweeps stop once no node's posterior mean or sd moved by more than ``tol`` skill units
        in a sweep (:data:`TOL` = 1e-4), a finite number >= 0 (0: every one of ``max_iter`` sweeps
        runs, which ``max_iter`` bounds). ``fit.info`` reports ``sweeps``, ``change`` (the last
        sweep's largest move) and ``converged``.
    incremental, refit_tol:
        How a warm-started refit on a grown history runs (:meth:`fit`): with ``incremental=True``
        (default) the forward pass over the new games, then sweeps confined to the slices around
        the nodes that move by more than ``refit_tol`` (skill units; ``None``, the default: ten
        times ``tol``; else a finite number >= 0); with ``False``, sweeps over the whole history from the earlier messages,
        stopped by ``tol`` and ``max_iter`` as a fit from scratch.

    ``fit(games)`` returns a :class:`smoothers.base.SmootherFit` (``predict_proba``, ``ratings``,
    ``trajectories``: the posterior of every node). Game weights are refused (``ValueError``): a
    tempered likelihood is not a TrueSkill factor.
    """

    name = "ttt"
    honours_weights = False
    # filters.draws.LearnedDraws gives learns_draws, the classic value where no games are at hand
    # (_draw_value) and the DrawWarning check; resolved() is this class's (a filter's _run is not used)
    _draw_setting = "draw_probability"
    _draw_default = DRAW_PROBABILITY

    def __init__(self, mu: float = MU, sigma: float = SIGMA, beta: float = BETA, tau: float = TAU,
                 draw_probability: float | None = None, *, home: float = 0.0, period_days: float = 1.0,
                 max_iter: int = MAX_ITER, tol: float = TOL, incremental: bool = True, refit_tol: float | None = None):
        owner = "TrueSkillThroughTime"
        # beta sets the unit every other range is stated in (statespace.model.ranges): alpha = sqrt(2) beta,
        # a scale, as filters.TrueSkill (the forward pass) takes it
        self.beta = ranges.number(owner, "beta", beta, ranges.SCALE_MIN / math.sqrt(2.0),
                                  ranges.SCALE_MAX / math.sqrt(2.0), unit=" (sqrt(2) beta is the scale)")
        alpha = math.sqrt(2.0) * self.beta
        self.mu = ranges.location(owner, "mu", mu, alpha)
        self.sigma = ranges.sd(owner, "sigma", sigma, alpha)
        self.tau = ranges.sd(owner, "tau", tau, alpha, zero=True)
        self.draw_probability = None if draw_probability is None else ranges.number(
            owner, "draw_probability", draw_probability, 0.0, 1.0, hi_open=True)
        self.home = ranges.home(owner, home, alpha)  # as filters.TrueSkill's, the forward pass
        self.period_days = ranges.number(owner, "period_days", period_days, 0.0, lo_open=True)
        self.max_iter = ranges.whole(owner, "max_iter", max_iter, 0)
        self.tol = ranges.number(owner, "tol", tol, 0.0)
        if not isinstance(incremental, (bool, np.bool_)):
            raise ValueError(f"{owner}: incremental must be True or False, got {incremental!r}")
        self.incremental = bool(incremental)
        self.refit_tol = None if refit_tol is None else ranges.number(owner, "refit_tol", refit_tol, 0.0)

    def __repr__(self) -> str:
        extra = f", home={self.home:g}" if self.home else ""
        p = self.draw_probability
        return (f"TrueSkillThroughTime(mu={self.mu:g}, sigma={self.sigma:g}, beta={self.beta:g}, tau={self.tau:g}, "
                f"draw_probability={'None' if p is None else format(p, 'g')}{extra})")

    @property
    def beta_kernel(self) -> float:
        """The ``beta`` the messages use: at least 1e-150 (as the TrueSkill filter's), so
        :math:`c^2 > 0`."""
        return max(self.beta, SD_MIN)

    @property
    def draw_margin(self) -> float:
        r"""One-vs-one draw margin :math:`\varepsilon = \sqrt{2}\,\beta\,\Phi^{-1}\bigl((p_\text{draw} + 1) / 2\bigr)`
        (skill units; at 0.10 while ``draw_probability`` is left to the games: :meth:`resolved`
        fixes it)."""
        return trueskill.draw_margin(self._draw_value, self.beta_kernel, 2)

    def _forward_filter(self):
        """The filter this smoother's first forward pass is: ``filters.TrueSkill`` with the same
        ``mu``, ``sigma``, ``beta``, ``tau``, ``draw_probability``, ``home`` and ``period_days`` and
        ``dynamics="time"`` (``max_iter=0`` gives its states)."""
        return trueskill.TrueSkill(self.mu, self.sigma, self.beta, self.tau, self.draw_probability,
                                   dynamics="time", home=self.home, period_days=self.period_days)

    def match_forecast(self) -> RankingForecast:
        r"""What a fit's side moments (``MatchFit.perf_mean``, ``perf_var``) predict: TrueSkill's
        Thurstonian ranking with this ``beta`` per side and the one-vs-one draw margin
        (:attr:`draw_margin`). The fit's model gives a side of members with weights :math:`w_k` the
        performance noise :math:`\sum_k w_k^2 \beta^2` and a pair of sides the margin
        :math:`\sqrt{n_a + n_b}\,\beta\,\Phi^{-1}((1 + p)/2)`: the forecast is exact for single
        competitors and the shared convention for teams. A smoother's forecasts are not online."""
        return RankingForecast("thurstone", self.beta_kernel, self.draw_margin)

    def resolved(self, games: Games) -> "TrueSkillThroughTime":
        """This method with ``draw_probability`` fixed as :meth:`fit` fixes it on ``games`` when it
        is left out (``None``): the value the forward pass's filter (:meth:`_forward_filter`) learns
        from them (:meth:`filters.TrueSkill.resolved`; 0 when they have no draw and the classic
        0.10's forecasts make that implausible, else 0.10). ``self`` when it is given."""
        if not self.learns_draws:
            return self
        return self.with_params(draw_probability=self._forward_filter().resolved(games).draw_probability)

    @property
    def model(self) -> SkillModel:
        r"""Probit link at scale :math:`\alpha = \sqrt{2}\,\beta`, prior
        :math:`\mathcal{N}(\mu, \sigma^2)`, drift :math:`q = \tau^2` per unit of time, the threshold
        draw model with the draw margin, and the home advantage: the model of
        ``filters.TrueSkill(dynamics="time")``."""
        return SkillModel("probit", math.sqrt(2.0) * self.beta_kernel, self.mu, max(self.sigma, SD_MIN) ** 2,
                          self.tau**2, Threshold(self.draw_margin), self.home)

    def fit(self, games: Games | Matches, initial=None, *,
            warm_start: SmootherFit | None = None) -> SmootherFit | MatchFit:
        """The posterior of every node given ``games`` (see the class docstring).

        ``games`` may be a :class:`statespace.data.matches.Matches` table (teams, free-for-all
        rankings, partial play): the fit is then a :class:`smoothers._ttt_matches.MatchFit`
        (``ratings()``, ``trajectories()``, ``learning_curves()``, each side's ``perf_mean`` and
        ``perf_var``), by the team model and schedule of :mod:`smoothers._ttt_matches`; there
        ``draw_probability`` left out is 0 without a tie and 0.10 with one, and ``initial``,
        ``warm_start`` and a ``home`` advantage are refused (``ValueError``). A smoother's
        forecasts of the matches it fitted are not online (every node has read every match).

        ``warm_start``: an earlier fit of this method on part of the same history (e.g. the games
        before a date: a walk-forward refit).

        - When the earlier fit has the same model (``mu``, ``sigma``, ``beta``, ``tau``,
          ``draw_probability``, ``home``, ``period_days``), its games are the first games of
          ``games`` in time order (the same records) and every other game comes later (a later
          slice), and the two tables share their competitors' ids (a walk-forward's tables, all
          taken from one table), the refit is *incremental* (``incremental=True``, the default;
          the module docstring's "Refits"): every earlier message is kept, the forward pass (the
          filter) runs over the new slices only, and the sweeps that follow visit only the slices
          that read a node which moved by more than ``refit_tol`` (default ``10 * tol``), until
          none is flagged (``converged``) or after ``max_iter`` sweeps. It costs the new games and
          the slices their evidence changes, plus a copy of the earlier fit's arrays.
          ``fit.info`` adds ``refit`` (``"incremental"``), ``slice_visits`` (slices processed,
          each pass counted) and ``earliest_slice`` (the earliest visited, of ``n_slices``).
        - Otherwise (another model, another table, games at the earlier fit's last time,
          ``incremental=False``) the earlier games' messages (matched by the games' rows,
          competitors and times; the other games start uniform) start EP over the whole history
          (``refit`` is ``"full"``): the first forward pass takes the games one after another,
          and each sweep costs what a fit from scratch's does, O(games + nodes); what it saves is
          sweeps.

        ``max_iter=0`` with a warm start is not the filter.

        ``draw_probability`` left out (``None``) is fixed on ``games`` first (:meth:`resolved`), and
        the fit is the fixed method's: ``fit.method`` carries the value, and "the same model" above
        compares it, so refits on tables that resolve alike stay incremental (a refit after the
        earlier fit learned 0 from games that ``games`` extend without a draw learns 0 without a
        run). An explicit value above 0 on games without a draw may warn (``DrawWarning``; see the
        class docstring).
        """
        if isinstance(games, Matches):
            check_fit_matches(self, initial, warm_start)
            return fit_matches(self.with_params(draw_probability=match_draw_probability(self, games)), games)
        if not isinstance(games, Games):
            raise TypeError(f"expected statespace.Games or statespace.data.matches.Matches, got {type(games).__name__}")
        if initial is not None:
            raise ValueError(f"{self.name}: initial= values are not supported by a smoother; start from an earlier "
                             f"fit with warm_start= instead")
        if np.any(games.weight != 1.0):
            raise ValueError(f"{self.name}: TrueSkillThroughTime does not use game weights; these games carry weights "
                             f"(Games.with_weights): use LaplaceSmoother, BradleyTerry or PyMCSmoother, or drop them")
        if warm_start is not None:
            if not isinstance(warm_start, SmootherFit):
                raise TypeError(f"warm_start must be a SmootherFit (an earlier fit), got {type(warm_start).__name__}")
            if getattr(warm_start, "_ttt_state", None) is None:
                raise ValueError(f"{self.name}: warm_start must be a fit of TrueSkillThroughTime (it starts from that "
                                 f"fit's game messages), got a fit of {warm_start.method!r}")
            warm_start._check_time_base(games)
        if self.learns_draws:
            ruled_out = self._draws_ruled_out(games, warm_start)
            method = self.with_params(draw_probability=0.0) if ruled_out else self.resolved(games)
            fit = method._fit(games, warm_start)
            fit._ttt_state.draws_ruled_out = method.draw_probability == 0.0
            return fit
        if self.draw_probability > 0 and not has_draws(games):
            self._warn_draw_free(games)
        return self._fit(games, warm_start)
    def _draws_ruled_out(self, games: Games, warm: SmootherFit | None) -> bool:
        """Whether ``games`` are known to resolve ``draw_probability`` to 0 without a run: they have
        no draw, and ``warm`` (a fit of the same model but for the draw setting) learned 0 from
        games that are the first of these, with every other game later (:func:`resumable`). The
        forward filter's forecasts of those first games are then the same in a run through
        ``games``, and each later game only lowers the chance of a table without draws."""
        st = getattr(warm, "_ttt_state", None)
        if st is None or not st.draws_ruled_out or has_draws(games):
            return False
        ours = {k: v for k, v in self._model_settings().items() if k != "draw_probability"}
        if ours != {k: v for k, v in st.settings.items() if k != "draw_probability"}:
            return False
        return resumable(warm.games, games, self.times(games))[0] == len(warm.games) > 0

    def _warn_draw_free(self, games: Games) -> None:
        """:class:`DrawWarning` (:meth:`filters.draws.LearnedDraws._check_draw_free`) when the
        forward filter's forecasts at this ``draw_probability`` make ``games``, which have no draw,
        implausible. The filter's own warning, which would name it rather than this method, is
        silenced."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DrawWarning)
            proba = self._forward_filter().run(games).proba
        self._check_draw_free(games, proba)

    def _model_settings(self) -> dict:
        """The settings that define the model (the messages of one are no fixed point of another)."""
        return {k: v for k, v in self.get_params().items() if k not in ("max_iter", "tol", "incremental", "refit_tol")}
