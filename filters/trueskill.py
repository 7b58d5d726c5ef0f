r"""TrueSkill: assumed-density filtering of the shared probit model.

Herbrich, Minka and Graepel, "TrueSkill: A Bayesian skill rating system" (NIPS 2006). Each
competitor's skill has a Gaussian belief :math:`\mathcal{N}(\mu, \sigma^2)`; a game is decided by
performances :math:`p = s + \mathcal{N}(0, \beta^2)`; a draw is a performance difference within
the draw margin :math:`\varepsilon`.

- ``beta``: the performance noise :math:`\beta`. A skill lead of :math:`\beta` wins about 76% of
  the time (:math:`\Phi(1 / \sqrt{2})`); the model's scale is :math:`\alpha = \sqrt{2}\,\beta`
  (probit link).
- ``tau``: the dynamics noise, :math:`\sigma^2 \leftarrow \sigma^2 + \tau^2` before every game (the
  classic reading) or per unit of elapsed time (``dynamics="time"``: the random-walk reading, so
  idle time matters).
- ``draw_probability``: the share of draws between equal competitors; it sets the margin
  :math:`\varepsilon = \sqrt{n}\,\beta\,\Phi^{-1}\bigl((p_\text{draw} + 1) / 2\bigr)` for the
  :math:`n` players of the two sides (:math:`\sqrt{2}\,\beta \ldots` one-vs-one). Left out
  (``None``, the default) it is learned from the games the filter is fit, run or tuned on: 0 when
  they have no draw (and are too many for that to be chance), else the classic
  :data:`DRAW_PROBABILITY` = 0.10 (which ``tune`` then fits); see :mod:`filters.draws`.

Forecast of a one-vs-one game, with :math:`c^2 = 2 \beta^2 + \sigma_a^2 + \sigma_b^2` and
:math:`d = \mu_a - \mu_b\ (+\,h)`:

.. math::

    P(a \text{ wins}) = \Phi\left(\frac{d - \varepsilon}{c}\right), \qquad
    P(b \text{ wins}) = \Phi\left(\frac{-d - \varepsilon}{c}\right),

draw the rest; the shared model's forecast with the threshold draw model.

Update (Table 1 of the paper), for a win of ``a`` with :math:`t = d / c`:

.. math::

    \mu_a \leftarrow \mu_a + \frac{\sigma_a^2}{c}\, v\!\left(t, \frac{\varepsilon}{c}\right), \qquad
    \sigma_a^2 \leftarrow \sigma_a^2 \left(1 - \frac{\sigma_a^2}{c^2}\, w\!\left(t, \frac{\varepsilon}{c}\right)\right)

(and mirrored for ``b``; draws use :math:`v_\text{draw}`, :math:`w_\text{draw}`; see
:mod:`statespace.model.gaussian`).

Rating periods: every game of the period is an ADF update of the pre-period belief; the
period's messages are multiplied (their precisions and precision-means add), so the result
does not depend on the order of games inside a period and equals ADF for a single game.

Teams and free-for-all (:meth:`TrueSkill.rate`, :meth:`TrueSkill.quality`) use expectation
propagation on the full factor graph (:mod:`filters._ep_match`), as do matches of many sides
(:meth:`TrueSkill.run` on :class:`statespace.data.matches.Matches`).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
from numba import njit

from statespace.model.skillmodel import SkillModel
from statespace.model.outcome import Threshold
from statespace.model.gaussian import v_draw, v_win, w_draw, w_win
from statespace.model.numeric import DRAW_THRESHOLD, PROBIT, outcome_proba
from statespace.model.ranking_forecast import RankingForecast

from . import _checks as C
from . import kernels as K
from ._belief import _BETA, _EPS, _HOME, MU, PARAMS, SIGMA, GaussianBeliefFilter, prior_var
from ._common import shape_like
from .draws import LearnedDraws
from ._ep_match import ep_match, trueskill_match

__all__ = ["TrueSkill", "draw_margin"]

_MU, _SIGMA = 0, 1
#: the share of draws between equal competitors (sets the draw margin): the classic default, used
#: where the games have draws (and where no games are at hand) when ``draw_probability`` is left out
DRAW_PROBABILITY = 0.10


def draw_margin(draw_probability: float, beta: float, n_players: int = 2) -> float:
    r""":math:`\varepsilon = \sqrt{n}\,\beta\,\Phi^{-1}\bigl((p_\text{draw} + 1) / 2\bigr)` (Herbrich et
    al. 2006; :math:`n` players on the two sides, 2 for one-vs-one), computed as
    :math:`\sqrt{n}\,\beta\,\Phi^{-1}\bigl(1 - (1 - p_\text{draw}) / 2\bigr)` from the upper tail
    (``-ndtri(q)``, which is scipy's ``norm.isf``): :math:`(p_\text{draw} + 1) / 2` rounds to 1 for
    :math:`p_\text{draw}` within 1e-16 of 1, where :math:`\Phi^{-1}` would give inf; the tail keeps
    every digit."""
    if not (isinstance(draw_probability, (int, float, np.integer, np.floating))
            and 0 <= draw_probability < 1):
        raise ValueError(f"draw_probability must be in [0, 1), got {draw_probability!r}")
    from scipy.special import ndtri  # here, so that importing filters does not load scipy.special

    return float(-ndtri((1.0 - draw_probability) / 2.0) * math.sqrt(n_players) * beta)


@njit(cache=True)
def _win_draw_loss(mu_a, s2_a, mu_b, s2_b, d_home, beta, eps):
    """The model's threshold-probit forecast at ``c^2 = 2 beta^2 + sigma_a^2 + sigma_b^2`` (``beta`` at
    least 1e-150, :attr:`~filters._belief.GaussianBeliefFilter.beta_kernel`, so ``c > 0``)."""
    c = math.sqrt(2.0 * beta * beta + s2_a + s2_b)
    return outcome_proba(PROBIT, DRAW_THRESHOLD, eps, mu_a - mu_b + d_home, c)


@njit(cache=True)
def _adf(mu_a, s2_a, mu_b, s2_b, score, d_home, beta, eps):
    """One-vs-one ADF posterior (mu_a, s2_a, mu_b, s2_b) for a's score 1, 0.5 or 0 (``beta`` at least
    1e-150, so ``c > 0``; an infinite ``t`` is taken care of by :mod:`statespace.model.gaussian`)."""
    c2 = 2.0 * beta * beta + s2_a + s2_b
    c = math.sqrt(c2)
    diff = mu_a - mu_b + d_home
    e = eps / c
    if score == 0.5:
        t = diff / c
        v = v_draw(t, e)
        w = w_draw(t, e)
        sign = 1.0
    else:
        sign = 1.0 if score == 1.0 else -1.0
        t = sign * diff / c
        v = v_win(t, e)
        w = w_win(t, e)
    return (mu_a + sign * s2_a / c * v, s2_a * (1.0 - s2_a / c2 * w),
            mu_b - sign * s2_b / c * v, s2_b * (1.0 - s2_b / c2 * w))


@K.proba_kernel
def _proba(forecast, obs, x, a, b, at_home, theta):
    """The model's forecast with the skill-difference variance ``sigma_a^2 + sigma_b^2``."""
    return _win_draw_loss(x[a, _MU], x[a, _SIGMA] * x[a, _SIGMA], x[b, _MU], x[b, _SIGMA] * x[b, _SIGMA],
                          theta[_HOME] * at_home, theta[_BETA], theta[_EPS])


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """The ADF posterior of the game from the period's prior, as a site ``posterior / prior``."""
    p = _proba(forecast, obs, x, a, b, at_home, theta)
    va = prior_var(x, a, theta, scratch)
    vb = prior_var(x, b, theta, scratch)
    ma, pa, mb, pb = _adf(x[a, _MU], va, x[b, _MU], vb, score, theta[_HOME] * at_home, theta[_BETA], theta[_EPS])
    K.moment_site(scratch, a, va, ma - x[a, _MU], pa)
    K.moment_site(scratch, b, vb, mb - x[b, _MU], pb)
    return p


class TrueSkill(LearnedDraws, GaussianBeliefFilter):
    r"""TrueSkill (Herbrich, Minka and Graepel 2006) as a filter of the probit model.

    Parameters
    ----------
    mu, sigma:
        A newcomer's belief, :math:`\mathcal{N}\bigl(25, (25/3)^2\bigr)`.
    beta:
        Performance noise :math:`\beta` (default ``sigma / 2``): a skill lead of :math:`\beta` wins
        about 76% of games between certain competitors.
    tau:
        Dynamics noise :math:`\tau` (default ``sigma / 100``), added as variance :math:`\tau^2`
        before each game, or per unit of time with ``dynamics="time"``.
    draw_probability:
        Draw rate between equal competitors, in ``[0, 1)``, which sets the draw margin. ``None``
        (default): learned from the games the filter is fit, run or tuned on — 0 when they have
        no draw and are too many for that to be chance (the forecasts at 0.10 give a table
        without draws less than 1e-3 of chance: about 150 games at the default settings), so no
        forecast wastes probability on draws that never happen and ``tune`` scores the
        two-outcome log loss; else the classic :data:`DRAW_PROBABILITY` = 0.10 (the
        ``trueskill`` package's default; ``tune`` fits the rate from there on games with draws).
        Only whether the games have a draw is read, not their draw rate, so an online run's
        forecasts learn no rate from later games. The value used is on the result:
        ``fit(games).method.draw_probability`` (its ``get_params()`` and ``repr``), or
        :meth:`resolved`. Where no games are at hand (``rate``, ``quality``, ``proba_1vs1``,
        ``model``, the state verbs ``update`` and ``predict_proba``) the classic 0.10 applies.

        An explicit value above 0 is honoured on any games, not refused: it is a valid model (and
        the reference library's default, which reproductions need), and a short table or a
        walk-forward window lacks draws by chance. A run on games without a draw warns
        (:class:`statespace.methods.settings.DrawWarning`, naming the fix) when its own forecasts make
        a table without draws implausible by the same test (see :mod:`filters.draws`).
    dynamics:
        ``"game"`` (classic: :math:`\tau^2` per game played) or ``"time"`` (:math:`\tau^2` per rating
        period when the games have periods, else per ``period_days`` days).
    home:
        Home advantage in skill units.

    ``ratings()`` gives ``mean`` = :math:`\mu`, ``sd`` = :math:`\sigma` and the conservative
    displayed ``rating`` :math:`= \mu - 3 \sigma` (a lower bound, not the skill estimate).

    Accepted ranges (:mod:`statespace.model.ranges`, in units of the scale :math:`\alpha = \sqrt 2 \beta`):
    the scale :math:`\alpha` in :math:`[10^{-100}, 10^{100}]`, ``sigma`` in :math:`(0, 10^3\alpha]`, ``tau`` in
    :math:`[0, 10^3\alpha]`, ``mu`` within :math:`\pm 10^6\alpha`, ``home`` within :math:`\pm 10\alpha`, ``draw_probability``
    in ``[0, 1)`` or ``None``, ``period_days`` any finite number > 0. Variances are kept in
    ``[1e-300, 1e300]``: a ``sigma`` below 1e-150 acts as 1e-150.
    """

    name = "trueskill"
    params = PARAMS
    _proba = _proba
    _site = _site
    _match = trueskill_match
    _draw_setting = "draw_probability"
    _draw_default = DRAW_PROBABILITY

    def __init__(self, mu: float = MU, sigma: float = SIGMA, beta: float | None = None,
                 tau: float | None = None, draw_probability: float | None = None, *, dynamics: str = "game",
                 home: float = 0.0, period_days: float = 1.0):
        self._init_belief("TrueSkill", mu, sigma, beta, tau, dynamics, home, period_days)
        self.draw_probability = None if draw_probability is None else C.number(
            "TrueSkill", "draw_probability", draw_probability, 0.0, 1.0, hi_open=True)

    def _describe(self) -> str:
        p = self.draw_probability
        parts = [f"beta={self.beta:g}", f"tau={self.tau:g}", f"draw_probability={'None' if p is None else format(p, 'g')}"]
        return ", ".join(parts + self._describe_belief())

    def _draw_bounds(self, games) -> dict[str, tuple[float, float]]:
        return {"draw_probability": (1e-4, 0.9)} if np.any(games.score == 0.5) else {}

    @property
    def draw_margin(self) -> float:
        r"""One-vs-one draw margin :math:`\varepsilon = \sqrt{2}\,\beta\,\Phi^{-1}\bigl((p_\text{draw} + 1) / 2\bigr)`
        (at 0.10 while ``draw_probability`` is left to the games: :meth:`resolved` fixes it)."""
        return draw_margin(self._draw_value, self.beta_kernel, 2)

    @property
    def model(self) -> SkillModel:
        r"""Probit link at scale :math:`\alpha = \sqrt{2}\,\beta`, prior :math:`\mathcal{N}(\mu, \sigma^2)`,
        drift :math:`q = \tau^2` (per game or per unit of time) and the threshold draw model with
        the draw margin."""
        return SkillModel("probit", math.sqrt(2.0) * self.beta_kernel, self.mu, self.sigma**2, self.tau**2,
                          Threshold(self.draw_margin), self.home)

    def match_forecast(self) -> RankingForecast:
        r"""TrueSkill's Thurstonian chain: :math:`\beta` and the one-vs-one draw margin
        :math:`\varepsilon` (a pair of sides of :math:`n` players in all has :math:`\varepsilon \sqrt{n / 2}`)."""
        return RankingForecast("thurstone", self.beta_kernel, self.draw_margin)

    # ------------------------------------------------------------ one-vs-one helpers
    def proba_1vs1(self, a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float, float]:
        """(P(a wins), P(draw), P(b wins)) for beliefs ``a = (mu, sigma)`` and ``b`` (sigma may be 0)."""
        (a,), (b,) = C.parse_teams("TrueSkill", [[a], [b]], zero_sigma=True)[0]
        return _win_draw_loss(a[0], a[1] ** 2, b[0], b[1] ** 2, 0.0, self.beta_kernel, self.draw_margin)

    def rate_1vs1(self, a, b, drawn: bool = False):
        r"""New (mu, sigma) of ``a`` (the winner, or one side of a draw) and ``b``; adds
        :math:`\tau^2` first, as ``rate`` does."""
        return self._rate_pair("TrueSkill", a, b, lambda ma, va, mb, vb: _adf(
            ma, va, mb, vb, 0.5 if drawn else 1.0, 0.0, self.beta_kernel, self.draw_margin))

    def quality_1vs1(self, a, b) -> float:
        r"""Draw probability relative to the most even game:
        :math:`\sqrt{2 \beta^2 / c^2}\, \exp\bigl(-(\mu_a - \mu_b)^2 / (2 c^2)\bigr)`,
        :math:`c^2 = 2 \beta^2 + \sigma_a^2 + \sigma_b^2`."""
        (a,), (b,) = C.parse_teams("TrueSkill", [[a], [b]], zero_sigma=True)[0]
        c2 = 2 * self.beta_kernel**2 + a[1] ** 2 + b[1] ** 2
        return math.sqrt(2 * self.beta_kernel**2 / c2) * math.exp(-((a[0] - b[0]) ** 2) / (2 * c2))

    # ------------------------------------------------------------ teams and free-for-all
    def rate(self, rating_groups: Sequence[Any], ranks: Sequence[float] | None = None, weights=None,
             min_delta: float = 1e-4, max_iter: int = 10):
        r"""Rate one game among teams (or free-for-all, teams of one) by expectation propagation.

        ``rating_groups``: a sequence of teams, each a sequence of ``(mu, sigma)`` or a mapping
        ``name -> (mu, sigma)`` (``|mu| <= 1e300``, sigma in ``(0, 1e150]``). ``ranks``: lower is
        better, equal ranks tie (default: the order given). ``weights``: partial play, a sequence
        of per-team sequences or a mapping ``(team_index, key) -> weight`` (default 1), each the
        share of the game the player took part in, in ``[0, 1]`` (Herbrich et al. 2006). Returns
        the teams in the same shape with new ``(mu, sigma)``; :math:`\tau^2` is added to every
        variance first. A malformed rating or weight is a ``TypeError`` or ``ValueError`` naming the entry. The
        messages are kept in natural parameters (:mod:`filters._ep_match`): where a mean over a variance
        passes 1e308 (a mean of 1e150 with a sigma below 1e-79, say) the call raises
        ``ArithmeticError`` rather than return NaN.
        """
        teams, keys = C.parse_teams("TrueSkill", rating_groups)
        n = len(teams)
        if n < 2:
            raise ValueError("rate needs at least two teams")
        ranks = list(range(n)) if ranks is None else [float(r) for r in ranks]
        if len(ranks) != n:
            raise ValueError(f"{len(ranks)} ranks for {n} teams")
        if not all(math.isfinite(r) for r in ranks):
            raise ValueError(f"ranks must be finite numbers, got {list(ranks)!r}")
        if not (isinstance(max_iter, (int, np.integer)) and max_iter >= 1):
            raise ValueError(f"max_iter must be a whole number >= 1, got {max_iter!r}")
        if not (isinstance(min_delta, (int, float)) and math.isfinite(min_delta) and min_delta > 0):
            raise ValueError(f"min_delta must be a finite number > 0, got {min_delta!r}")
        w = C.parse_weights("TrueSkill", weights, teams, keys, hi=1.0)
        eps_one = draw_margin(self._draw_value, self.beta_kernel, 1)
        x = np.array([rating for team in teams for rating in team], dtype=np.float64).reshape(-1, 2)
        side_ptr = np.concatenate([[0], np.cumsum([len(team) for team in teams])]).astype(np.int64)
        places = np.unique(np.asarray(ranks), return_inverse=True)[1].astype(np.int64).reshape(-1)
        ep_match(x, side_ptr, np.arange(x.shape[0], dtype=np.int64), np.array([v for ws in w for v in ws], np.float64),
                 places, 0, n, self.beta_kernel, self.tau, eps_one, float(min_delta), min(int(max_iter), 2**62))
        out = [[(float(x[k, 0]), float(x[k, 1])) for k in range(side_ptr[t], side_ptr[t + 1])] for t in range(n)]
        if not all(math.isfinite(mu) and math.isfinite(sd) for team in out for mu, sd in team):
            # the messages are kept in natural parameters, mu / sigma^2: past 1e308 they overflow
            raise ArithmeticError(f"TrueSkill.rate: the message passing overflowed: a mean over a variance "
                                  f"(mu / sigma^2, with tau^2 and the partial-play weights) passes 1e308 for "
                                  f"these ratings (largest |mu| "
                                  f"{max(abs(m) for team in teams for m, _ in team):g}, smallest sigma "
                                  f"{min(sd for team in teams for _, sd in team):g}); rate differences of "
                                  f"more moderate size")
        return shape_like(rating_groups, keys, out)

    def quality(self, rating_groups: Sequence[Any], weights=None) -> float:
        """Match quality: the draw probability of this game relative to the most even one
        (Herbrich et al. 2006, eq. 4). Takes what :meth:`rate` takes and refuses what it refuses:
        fewer than two teams, a malformed rating or weight (naming the entry); arithmetic that
        overflows is an ``ArithmeticError``, not a NaN."""
        teams, keys = C.parse_teams("TrueSkill", rating_groups)
        if len(teams) < 2:
            raise ValueError(f"TrueSkill.quality needs at least two teams (a game), as rate does; got {len(teams)}")
        w = C.parse_weights("TrueSkill", weights, teams, keys, hi=1.0)
        mu = np.array([m for team in teams for m, _ in team])
        var = np.array([s * s for team in teams for _, s in team])
        n_players, n_teams = mu.size, len(teams)
        A = np.zeros((n_players, n_teams - 1))
        start = 0
        offsets = []
        for team in teams:
            offsets.append(start)
            start += len(team)
        for k in range(n_teams - 1):
            for j, wj in enumerate(w[k]):
                A[offsets[k] + j, k] = wj
            for j, wj in enumerate(w[k + 1]):
                A[offsets[k + 1] + j, k] = -wj
        ata = self.beta_kernel**2 * A.T @ A
        middle = ata + A.T @ np.diag(var) @ A
        # in logs: at beta 1e100 the determinants themselves pass 1e308 while their ratio is ~1
        with np.errstate(over="ignore", invalid="ignore"):  # a result that is not a number is refused below
            e_arg = -0.5 * mu @ A @ np.linalg.solve(middle, A.T @ mu)
            log_q = e_arg + 0.5 * (np.linalg.slogdet(ata)[1] - np.linalg.slogdet(middle)[1])
        if math.isnan(log_q):
            raise ArithmeticError(f"TrueSkill.quality: the arithmetic overflowed for these ratings (largest |mu| "
                                  f"{float(np.max(np.abs(mu))):g}, largest sigma {float(np.sqrt(var.max())):g}); "
                                  f"rate differences of more moderate size")
        return float(math.exp(min(log_q, 0.0)))


#: Names under which ``statespace compare --methods`` and ``statespace rate --method`` find these.
METHODS = {"trueskill": TrueSkill}
