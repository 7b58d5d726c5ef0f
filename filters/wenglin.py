r"""Weng-Lin: Bayesian moment-approximation filters of the shared logistic and probit models.

Weng and Lin, "A Bayesian approximation method for online ranking", JMLR 12 (2011) 267-300,
Algorithms 1 (Bradley-Terry, full pair), 3 (Thurstone-Mosteller, full pair) and 4
(Plackett-Luce). Each competitor's skill has a Gaussian belief :math:`\mathcal{N}(\mu, \sigma^2)`;
a game is decided by performances :math:`s + \mathcal{N}(0, \beta^2)`; instead of TrueSkill's
message passing, the posterior mean and variance come from Woodroofe-Stein identities, one closed
form per pair.

One-vs-one, with :math:`c^2 = \sigma_a^2 + \sigma_b^2 + 2 \beta^2` (the paper's :math:`c_{iq}`),
:math:`d = \mu_a - \mu_b\ (+\,h)` and :math:`t = d / c`, a game moves ``a`` by

.. math::

    \mu_a &\leftarrow \mu_a + \frac{\sigma_a^2}{c}\, \Omega \\
    \sigma_a^2 &\leftarrow \sigma_a^2 \max\left(1 - \gamma_a \frac{\sigma_a^2}{c^2} \Delta,\ \kappa\right),
    \qquad \gamma_a = \frac{\sigma_a}{c}

and ``b`` by the mirror image (:math:`-\Omega`, its own :math:`\sigma_b` and
:math:`\gamma_b = \sigma_b / c`):

- Bradley-Terry: :math:`p = 1 / (1 + e^{-t})`, :math:`\Omega = y - p` for a's score :math:`y`
  (1, 1/2 for a draw as in the paper's ties, 0), :math:`\Delta = p (1 - p)`;
- Thurstone-Mosteller: a win :math:`\Omega = v(t, \varepsilon / c)`,
  :math:`\Delta = w(t, \varepsilon / c)`, a loss the same at :math:`-t` with the sign of
  :math:`\Omega` flipped, a draw :math:`\tilde v`, :math:`\tilde w` (the truncated-Gaussian
  corrections of :mod:`statespace.model.gaussian`); :math:`\varepsilon` is the draw margin in skill
  units;
- Plackett-Luce: for two teams exactly Bradley-Terry (it differs only with three or more).

:math:`\kappa` (``kappa``, 1e-4, as in the paper) bounds the variance-shrink factor from below so
that :math:`\sigma^2` stays positive. :math:`\tau` (``tau``) is the dynamics noise:
:math:`\sigma^2 \leftarrow \sigma^2 + \tau^2` before every game (``dynamics="game"``, openskill's
and TrueSkill's reading) or per unit of time through ``predict`` (``dynamics="time"``).

Forecast of a one-vs-one game (what ``predict_proba`` returns), the shared model's forecast
with the skill-difference variance :math:`v = \sigma_a^2 + \sigma_b^2` added to the squared scale:

- Bradley-Terry and Plackett-Luce: :math:`P(a \text{ wins}) = 1 / (1 + e^{-d / c})`,
  :math:`P(\text{draw}) = 0`, :math:`P(b \text{ wins}) = 1 / (1 + e^{d / c})` (the half-win draw
  model);
- Thurstone-Mosteller: :math:`P(a \text{ wins}) = \Phi\bigl((d - \varepsilon) / c\bigr)`,
  :math:`P(b \text{ wins}) = \Phi\bigl((-d - \varepsilon) / c\bigr)`, draw the rest (the threshold
  draw model with margin :math:`\varepsilon`).

For the probit link this is exactly ``model.proba(d, var)``. For the logistic link it is
Weng and Lin's :math:`c` (the variance enters the scale unweighted), not the Glickman factor
:math:`g` (:math:`3 v / \pi^2`) that :meth:`statespace.SkillModel.proba` uses; it equals
``SkillModel("logistic", scale=c).proba(d)``.

Rating periods: every game of a period is one Weng-Lin update of the pre-period belief, and the
period's games are combined as independent Gaussian likelihood messages in natural parameters
(the per-game ``posterior / prior`` precisions and precision-means add), as
:mod:`filters.trueskill` does. The result does not depend on the order of the games and equals
the paper's update for a period of one game. (The other candidate, adding the :math:`\Omega` and
:math:`\Delta` of every game as the full-pair algorithm does for the teams of one game, pushes
:math:`\sum \Delta` past 1 for a newcomer with about 16 games in a period (:math:`\Delta` is about
0.06 a game at the default prior), and then :math:`\kappa` cuts its :math:`\sigma` to 1% of its
value; the product of messages never does.)

Teams and free-for-all: :meth:`WengLin.rate` implements the three algorithms over teams
(team strength :math:`\sum_j \mu_{ij}`, team variance :math:`\sum_j \sigma_{ij}^2`; each player
takes the share :math:`\sigma_{ij}^2 / \sigma_i^2` of its team's update). Matches of many sides
(:class:`statespace.data.matches.Matches`) run through the compiled match loop with the same
algorithms (:mod:`filters._wenglin_match`, which ``rate`` calls too); there a side's strength is the
weighted sum of its members (partial play), which with weights 1 is ``rate``'s update.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numba import njit

from statespace.model.skillmodel import SkillModel
from statespace.model.outcome import Threshold
from statespace.model.numeric import DRAW_HALF, DRAW_THRESHOLD, LOGISTIC, PROBIT, outcome_proba
from statespace.model.ranking_forecast import RankingForecast

from . import _checks as C
from . import kernels as K
from ._belief import _BETA, _EPS, _HOME, MU, SIGMA, GaussianBeliefFilter, prior_var
from ._common import shape_like
from ._wenglin_match import _KAPPA, _MODEL, BT, PARAMS, PL, TM, _match, omega_delta as _omega_delta, sides_omega_delta
from .draws import LearnedDraws

__all__ = ["WengLin"]

# state columns
_MU, _SIGMA = 0, 1
#: the floor of the variance-shrink factor (the paper's value): sigma^2 never falls below KAPPA of
#: itself in one game
KAPPA = 1e-4
#: Thurstone-Mosteller's classic draw margin in skill units (openskill's): used where the games have
#: draws (and where no games are at hand) when ``epsilon`` is left out
EPSILON = 0.1
MODELS = ("bradley_terry", "thurstone_mosteller", "plackett_luce")
_ALIASES = {"bt": "bradley_terry", "tm": "thurstone_mosteller", "pl": "plackett_luce"}
_SHORT = {"bradley_terry": "bt", "thurstone_mosteller": "tm", "plackett_luce": "pl"}


@njit(cache=True)
def _win_draw_loss(mu_a, s2_a, mu_b, s2_b, d_home, beta, eps, model):
    """One-vs-one forecast (see the module docstring): the outcome model's forecast at
    ``c = sqrt(2 beta^2 + sigma_a^2 + sigma_b^2)`` (``beta`` at least 1e-150,
    :attr:`~filters._belief.GaussianBeliefFilter.beta_kernel`, so ``c > 0``)."""
    c = math.sqrt(2.0 * beta * beta + s2_a + s2_b)
    d = mu_a - mu_b + d_home
    if model == TM:
        return outcome_proba(PROBIT, DRAW_THRESHOLD, eps, d, c)
    return outcome_proba(LOGISTIC, DRAW_HALF, 0.0, d, c)


@njit(cache=True)
def _posterior(mu_a, s2_a, mu_b, s2_b, score, d_home, beta, eps, kappa, model):
    """One-vs-one Weng-Lin update: (mu_a, s2_a, mu_b, s2_b) after a's score 1, 0.5 or 0 (``beta`` at
    least 1e-150, so ``c > 0``; an infinite ``t`` is taken care of by :mod:`statespace.model.gaussian`)."""
    c2 = 2.0 * beta * beta + s2_a + s2_b
    c = math.sqrt(c2)
    g, w = _omega_delta((mu_a - mu_b + d_home) / c, eps / c, score, model)
    fa = 1.0 - math.sqrt(s2_a) / c * s2_a / c2 * w
    fb = 1.0 - math.sqrt(s2_b) / c * s2_b / c2 * w
    return (mu_a + s2_a / c * g, s2_a * max(fa, kappa),
            mu_b - s2_b / c * g, s2_b * max(fb, kappa))


@K.proba_kernel
def _proba(forecast, obs, x, a, b, at_home, theta):
    """The variant's forecast at ``c^2 = 2 beta^2 + sigma_a^2 + sigma_b^2`` (see the module docstring)."""
    return _win_draw_loss(x[a, _MU], x[a, _SIGMA] * x[a, _SIGMA], x[b, _MU], x[b, _SIGMA] * x[b, _SIGMA],
                          theta[_HOME] * at_home, theta[_BETA], theta[_EPS], int(theta[_MODEL]))


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """The game's Weng-Lin posterior from the period's prior, as a site ``posterior / prior``."""
    p = _proba(forecast, obs, x, a, b, at_home, theta)
    va = prior_var(x, a, theta, scratch)
    vb = prior_var(x, b, theta, scratch)
    ma, pa, mb, pb = _posterior(x[a, _MU], va, x[b, _MU], vb, score, theta[_HOME] * at_home, theta[_BETA],
                                theta[_EPS], theta[_KAPPA], int(theta[_MODEL]))
    K.moment_site(scratch, a, va, ma - x[a, _MU], pa)
    K.moment_site(scratch, b, vb, mb - x[b, _MU], pb)
    return p


class WengLin(LearnedDraws, GaussianBeliefFilter):
    r"""Weng and Lin's (2011) Bayesian approximation filters: Bradley-Terry, Thurstone-Mosteller
    (full pair) and Plackett-Luce.

    Parameters
    ----------
    model:
        ``"bradley_terry"`` (logistic link; default), ``"thurstone_mosteller"`` (probit link,
        draw margin ``epsilon``) or ``"plackett_luce"`` (logistic; the same as Bradley-Terry for
        one-vs-one games, different for three or more teams in :meth:`rate`). ``"bt"``, ``"tm"``
        and ``"pl"`` are accepted too.
    mu, sigma:
        A newcomer's belief, :math:`\mathcal{N}\bigl(25, (25/3)^2\bigr)`.
    beta:
        Performance noise :math:`\beta` (default ``sigma / 2``); the model's scale is
        :math:`\alpha = \sqrt{2}\,\beta`.
    tau:
        Dynamics noise :math:`\tau` (default ``sigma / 100``): :math:`\tau^2` is added to
        :math:`\sigma^2` before each game, or per unit of time with ``dynamics="time"``.
    kappa:
        Lower bound :math:`\kappa` of the variance-shrink factor (1e-4, the paper's value), keeping
        :math:`\sigma^2 > 0`; in ``(0, 1]``.
    epsilon:
        Thurstone-Mosteller only: the draw margin in skill units. ``None`` (default): learned from
        the games the filter is fit, run or tuned on — 0 when they have no draw and are too many
        for that to be chance (the forecasts at 0.1 give a table without draws less than 1e-3 of
        chance: about 600 games at the default settings), else openskill's :data:`EPSILON` = 0.1
        (which ``tune`` fits from there on games with draws); the value used is on the result
        (``fit(games).method.epsilon``), and where no games are at hand (``rate``, ``model``, the
        state verbs) 0.1 applies. An explicit margin above 0 is honoured; a run on games without a
        draw warns (:class:`statespace.methods.settings.DrawWarning`) when its own forecasts make that
        implausible (as for TrueSkill's ``draw_probability``; see :mod:`filters.draws`).
        Bradley-Terry and Plackett-Luce score a draw as :math:`y = 1/2` (a shared rank) and take no
        margin.
    dynamics:
        ``"game"`` (:math:`\tau^2` per game played) or ``"time"`` (:math:`\tau^2` per rating period
        when the games have periods, else per ``period_days`` days).
    home:
        Home advantage :math:`h` in skill units, added to :math:`\mu_a - \mu_b` when ``a`` plays at
        home.

    ``predict_proba`` gives, with :math:`c = \sqrt{\sigma_a^2 + \sigma_b^2 + 2 \beta^2}` and
    :math:`d = \mu_a - \mu_b + h`: Bradley-Terry / Plackett-Luce
    :math:`\bigl(\operatorname{logistic}(d / c),\ 0,\ \operatorname{logistic}(-d / c)\bigr)`;
    Thurstone-Mosteller
    :math:`\bigl(\Phi((d - \varepsilon) / c),\ \text{the rest},\ \Phi((-d - \varepsilon) / c)\bigr)`.
    This is the shared model's forecast with skill-difference variance
    :math:`\sigma_a^2 + \sigma_b^2` added to the squared scale :math:`2 \beta^2` (for the logistic
    link Weng and Lin's :math:`c`, not Glickman's :math:`g` that ``SkillModel.proba`` uses).

    ``ratings()`` gives ``mean`` = :math:`\mu`, ``sd`` = :math:`\sigma` and the conservative
    displayed ``rating`` :math:`= \mu - 3 \sigma` (openskill's ``ordinal()``).

    Accepted ranges (:mod:`statespace.model.ranges`, in units of the scale :math:`\alpha = \sqrt 2 \beta`):
    the scale :math:`\alpha` in :math:`[10^{-100}, 10^{100}]`, ``sigma`` in :math:`(0, 10^3\alpha]`, ``tau`` and
    ``epsilon`` (or ``None``) in :math:`[0, 10^3\alpha]`, ``mu`` within
    :math:`\pm 10^6\alpha`, ``home`` within :math:`\pm 10\alpha`, ``kappa`` in ``(0, 1]``, ``period_days`` any finite number > 0. Variances
    are kept in ``[1e-300, 1e300]``: a ``sigma`` below 1e-150 acts as 1e-150.

    The chosen variant is ``model_name`` (and ``name``: ``wenglin_bt``, ``wenglin_tm``,
    ``wenglin_pl``); the ``model`` property is, as for every filter, the :class:`SkillModel`.
    """

    name = "wenglin"
    params = PARAMS
    _proba = _proba
    _site = _site
    _match = _match
    _draw_setting = "epsilon"
    _draw_default = EPSILON

    @classmethod
    def plackett_luce(cls, **kwargs) -> "WengLin":
        """Weng-Lin's Plackett-Luce model (``WengLin(model="plackett_luce", ...)``)."""
        if "model" in kwargs:  # the one setting this variant fixes
            raise ValueError(f"WengLin.plackett_luce: the Weng-Lin model is Plackett-Luce here; got "
                             f"model={kwargs['model']!r} (use WengLin(model=...))")
        return cls(model="plackett_luce", **kwargs)

    def __init__(self, model: str = "bradley_terry", mu: float = MU, sigma: float = SIGMA,
                 beta: float | None = None, tau: float | None = None, kappa: float = KAPPA,
                 epsilon: float | None = None, *, dynamics: str = "game", home: float = 0.0,
                 period_days: float = 1.0):
        if not isinstance(model, str) or _ALIASES.get(model.lower(), model.lower()) not in MODELS:
            raise ValueError(f"WengLin: model must be one of {', '.join(map(repr, MODELS))} "
                             f"(or 'bt', 'tm', 'pl'), got {model!r}")
        self.model_name = _ALIASES.get(model.lower(), model.lower())
        self.model_code = MODELS.index(self.model_name)
        self.name = f"wenglin_{_SHORT[self.model_name]}"
        self._init_belief("WengLin", mu, sigma, beta, tau, dynamics, home, period_days)
        self.kappa = C.number("WengLin", "kappa", kappa, 0.0, 1.0, lo_open=True)
        if self.model_code == TM:
            # a margin in skill units, bounded as an sd is: its ratio to the smallest scale stays finite
            self.epsilon = None if epsilon is None else C.length("WengLin", "epsilon", epsilon, math.sqrt(2.0) * self.beta,
                                                                    zero=True)
        elif epsilon is not None:
            raise ValueError(f"WengLin: epsilon (a draw margin) applies to model='thurstone_mosteller' "
                             f"only; {self.model_name} scores a draw as half a win")
        else:
            self.epsilon = 0.0

    _param_aliases = {"model": "model_name"}

    def _models_draws(self) -> bool:
        return self.model_code == TM

    def _draw_bounds(self, games) -> dict[str, tuple[float, float]]:
        if self.model_code == TM and np.any(games.score == 0.5):
            return {"epsilon": (1e-4, 5.0 * self.beta)}
        return {}

    def get_params(self):
        params = super().get_params()
        if self.model_code != TM:
            params["epsilon"] = None  # only Thurstone-Mosteller takes a margin
        return params

    def _describe(self) -> str:
        parts = [f"model={self.model_name!r}", f"mu={self.mu:g}", f"sigma={self.sigma:g}", f"beta={self.beta:g}",
                 f"tau={self.tau:g}", f"kappa={self.kappa:g}"]
        if self.model_code == TM:
            parts.append(f"epsilon={'None' if self.epsilon is None else format(self.epsilon, 'g')}")
        return ", ".join(parts + self._describe_belief())

    @property
    def model(self) -> SkillModel:
        r"""The shared model each variant assumes: scale :math:`\alpha = \sqrt{2}\,\beta`
        (performance noise of both sides), prior :math:`\mathcal{N}(\mu, \sigma^2)`, drift
        :math:`q = \tau^2` (per game or per unit of time); Bradley-Terry / Plackett-Luce: logistic
        link, draws scored as half a win; Thurstone-Mosteller: probit link, threshold draw model
        with margin :math:`\varepsilon` (``epsilon``).

        The filter's forecast adds the skill variance to the squared scale,
        :math:`c^2 = 2 \beta^2 + \sigma_a^2 + \sigma_b^2`: exactly ``model.proba(d, var)`` for the
        probit link, ``SkillModel("logistic", scale=c).proba(d)`` for the logistic one."""
        if self.model_code == TM:
            return SkillModel("probit", math.sqrt(2.0) * self.beta, self.mu, self.sigma**2, self.tau**2,
                              Threshold(self._draw_value), self.home)
        return SkillModel("logistic", math.sqrt(2.0) * self.beta, self.mu, self.sigma**2, self.tau**2,
                          "half", self.home)

    def kernel_value(self, name: str) -> float:
        return self._draw_value if name == "draw_margin" else super().kernel_value(name)

    def match_forecast(self) -> RankingForecast:
        """The ranking a match's forecast means (:mod:`filters._wenglin_match`): Bradley-Terry pairs
        or Plackett-Luce at ``beta``, Thurstone's pairs at ``beta`` with the draw margin ``epsilon``."""
        if self.model_code == TM:
            return RankingForecast("thurstone", self.beta_kernel, self._draw_value)
        return RankingForecast("plackett_luce" if self.model_code == PL else "bradley_terry", self.beta_kernel)

    # ------------------------------------------------------------ one-vs-one helpers
    def proba_1vs1(self, a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float, float]:
        """(P(a wins), P(draw), P(b wins)) for beliefs ``a = (mu, sigma)`` and ``b`` (no home; sigma may be 0)."""
        (a,), (b,) = C.parse_teams("WengLin", [[a], [b]], zero_sigma=True)[0]
        return _win_draw_loss(a[0], a[1] ** 2, b[0], b[1] ** 2, 0.0, self.beta_kernel, self._draw_value,
                              self.model_code)

    def rate_1vs1(self, a, b, drawn: bool = False):
        r"""New (mu, sigma) of ``a`` (the winner, or one side of a draw) and ``b``; adds
        :math:`\tau^2` first, as ``rate`` does."""
        return self._rate_pair("WengLin", a, b, lambda ma, va, mb, vb: _posterior(
            ma, va, mb, vb, 0.5 if drawn else 1.0, 0.0, self.beta_kernel, self._draw_value, self.kappa,
            self.model_code))

    # ------------------------------------------------------------ teams and free-for-all
    def rate(self, rating_groups: Sequence[Any], ranks: Sequence[float] | None = None, weights=None):
        r"""Rate one game among teams (free-for-all: teams of one) with the model's algorithm.

        ``rating_groups``: a sequence of teams, each a sequence of ``(mu, sigma)`` (or objects with
        ``.mu`` and ``.sigma``) or a mapping ``name -> (mu, sigma)``. ``ranks``: lower is better,
        equal ranks tie (default: the order given). ``weights``: a sequence of per-team
        sequences or a mapping ``(team_index, key) -> weight`` (default 1), each >= 0.

        :math:`\tau^2` is added to every variance first. A team's strength is
        :math:`\sum_j \mu_{ij}` and its variance :math:`\sigma_i^2 = \sum_j \sigma_{ij}^2` (weights
        do not enter them); the team's :math:`\Omega_i` and :math:`\Delta_i` come from the pairs of
        teams (Bradley-Terry and Thurstone-Mosteller full pair: every other team :math:`q` with its
        own :math:`c_{iq}^2 = \sigma_i^2 + \sigma_q^2 + 2 \beta^2`; Plackett-Luce: one
        :math:`c^2 = \sum_i (\sigma_i^2 + \beta^2)` over the ordering), and player :math:`j` of team
        :math:`i` gets

        .. math::

            \mu_{ij} &\leftarrow \mu_{ij} + w_{ij} \frac{\sigma_{ij}^2}{\sigma_i^2}\, \Omega_i \\
            \sigma_{ij}^2 &\leftarrow \sigma_{ij}^2 \max\left(1 - w_{ij} \frac{\sigma_{ij}^2}{\sigma_i^2}\, \Delta_i,\ \kappa\right)

        With weights 1 this is the paper's update. A weight scales the player's share of its
        team's update, for wins and losses alike (0: the player is not updated, beyond ``tau``).
        openskill instead first rescales each team's weights to [1, 2] (a one-player team gets
        2) and multiplies the share by the weight when :math:`\Omega_i \ge 0` but divides it when
        :math:`\Omega_i < 0`; with ``weight_bounds=None`` its winners' updates equal these.
        (:meth:`run` over :class:`statespace.data.matches.Matches` reads weights as partial play
        instead: in the team's strength and sum of variances, :mod:`filters._wenglin_match`.)

        Returns the teams in the same shape with new ``(mu, sigma)``. Ratings have ``|mu| <= 1e300``
        and sigma in ``(0, 1e150]``; a malformed rating or weight is a ``TypeError`` or ``ValueError``
        naming the entry. Variances are kept in ``[1e-300, 1e300]`` (a team's sum too) and means
        within ``+-1e300``, as the filter's kernels keep them.
        """
        teams, keys = C.parse_teams("WengLin", rating_groups)
        n = len(teams)
        if n < 2:
            raise ValueError("rate needs at least two teams")
        if ranks is None:
            r = np.arange(n, dtype=float)
        else:
            r = np.asarray(ranks, dtype=float).reshape(-1)
            if r.size != n:
                raise ValueError(f"{r.size} ranks for {n} teams")
            if not np.all(np.isfinite(r)):
                raise ValueError(f"ranks must be finite numbers, got {list(ranks)!r}")
        w = C.parse_weights("WengLin", weights, teams, keys)
        t2 = self.tau**2
        mus = [np.array([m for m, _ in team]) for team in teams]
        vs = [np.clip(np.array([s * s + t2 for _, s in team]), K.VAR_MIN, K.VAR_MAX) for team in teams]
        with np.errstate(over="ignore"):  # a sum past the bounds is inf, then kept at the bound
            mu_t = np.clip(np.array([m.sum() for m in mus]), -K.MEAN_MAX, K.MEAN_MAX)
            s2_t = np.minimum(np.array([v.sum() for v in vs]), K.VAR_MAX)
        omega, delta = np.empty(n), np.empty(n)
        sides_omega_delta(mu_t, s2_t, r, self.beta_kernel, self._draw_value, self.model_code, omega, delta)
        result = []
        for i in range(len(teams)):
            share = np.asarray(w[i]) * np.minimum(vs[i] / s2_t[i], 1.0)
            with np.errstate(over="ignore"):  # a huge weight: inf, kept at the mean's bound below
                new_mu = np.clip(mus[i] + share * omega[i], -K.MEAN_MAX, K.MEAN_MAX)
                new_sigma = np.sqrt(np.clip(vs[i] * np.maximum(1.0 - share * delta[i], self.kappa),
                                            K.VAR_MIN, K.VAR_MAX))
            result.append([(float(m), float(s)) for m, s in zip(new_mu, new_sigma)])
        return shape_like(rating_groups, keys, result)


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find these.
#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find these
#: (``wenglin_pl``, the Plackett-Luce model that ranks a free-for-all in O(n), for matches; not in
#: the default comparison of games, where it adds nothing to Bradley-Terry's row)
METHODS = {"wenglin": WengLin, "wenglin_pl": WengLin.plackett_luce}
METHODS_NOT_BY_DEFAULT = {"wenglin_pl"}
