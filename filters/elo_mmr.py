r"""Elo-MMR: Bayesian ratings of free-for-all contests with a robust (logistic) update.

Ebtekar and Liu, "Elo-MMR: A Rating System for Massive Multiplayer Competitions" (WWW 2021,
arXiv:2101.00400), with the reference implementation's defaults (``EloMMR::default()``: the
logistic variant, transfer speed 1, ties counted as a win and a loss). Each contest, for every
entrant at once:

1. **Pseudo-diffusion** (:mod:`filters._elo_mmr_belief`): the belief widens by
   :math:`\sigma_d^2 = w \sigma_\ell^2 + \delta\,\Delta t` (``weight_limit`` :math:`w`, ``sig_limit``
   :math:`\sigma_\ell`, ``drift_per_day`` :math:`\delta`, days since the last contest), the weights
   of its past performance terms decay and what they lose moves to its Gaussian prior term.
2. **Performance** (:mod:`filters._elo_mmr_perf`): entrant :math:`i`'s performance :math:`p_i`
   is the zero of :math:`\sum_j` of a logistic term of every entrant :math:`j` (each with
   :math:`j`'s rating and scale :math:`\sqrt{\sigma_j^2 + \beta^2}`), a win, loss or tie term as
   :math:`j` finished behind, ahead or level, with the performance noise
   :math:`\beta^2 = (1 + 1/w) \sigma_\ell^2 + \delta / w`.
3. **Rating**: the performance joins the entrant's history as a logistic term of scale
   :math:`\beta`, the rating is the robust average of the Gaussian term and the history,
   :math:`\sigma^{-2} \leftarrow \sigma^{-2} + \beta^{-2}`.

At the defaults :math:`\beta = 80\sqrt 6 = 195.96` and :math:`\sigma` tends to :math:`\sigma_\ell = 80`.
As the reference code does, a contest whose entrants all tie is not rated (nobody's belief moves).

Contests of ``exact_below`` entrants or more solve their performances together from an
interpolant of the equations' shared sum (:func:`filters._elo_mmr_perf.solve_grid`, within
:math:`10^{-8}` points of the exact solve); smaller ones exactly, :math:`O(n^2)`. A state row keeps
the latest :data:`~filters._elo_mmr_belief.HISTORY` performance terms and folds older ones into the
Gaussian term (:mod:`filters._elo_mmr_belief`). Elo-MMR rates individuals: sides of more than one
competitor and partial-play weights are refused. The reference code's subsampling of opponents
(its ``fast`` variant) and the Gaussian variant are not implemented.
"""

from __future__ import annotations

import math

import numpy as np

from statespace.data.matches import Matches
from statespace.model.ranking_forecast import RankingForecast
from statespace.model.skillmodel import SkillModel

from . import _checks as C
from . import kernels as K
from ._elo_mmr_belief import COLUMNS, HISTORY, MU, PENDING, SIG, diffuse, push_term, robust_average
from ._elo_mmr_perf import TANH_MULTIPLIER, solve_exact, solve_grid
from .base import Filter
from .match_loop import match_kernel, side_moments

__all__ = ["EloMMR"]

#: a newcomer's belief N(MU0, SIGMA0^2) and the reference code's defaults (Codeforces' units)
MU0, SIGMA0 = 1500.0, 350.0
SIG_LIMIT, WEIGHT_LIMIT, TRANSFER_SPEED = 80.0, 0.2, 1.0
#: contests of fewer entrants are solved exactly
EXACT_BELOW = 64

PARAMS = ("sig_limit", "weight_limit", "drift_per_day", "transfer_speed", "split_ties", "exact_below")
_SL, _WL, _DRIFT, _TS, _SPLIT, _EXACT = range(len(PARAMS))


@K.predict_kernel
def _predict(x, i, theta, dt):
    """The continuous drift :math:`\\delta\\,\\Delta t` waits in the row until the next contest's
    diffusion (the reference code adds it there, with the discrete drift)."""
    if theta[_DRIFT] > 0.0:
        x[i, PENDING] = min(x[i, PENDING] + theta[_DRIFT] * dt, K.VAR_MAX)


@match_kernel
def _match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    """One contest (the module docstring's three steps); the sides' forecasts are written after
    the diffusion, from the belief the contest is rated with."""
    n = s1 - s0
    tied = True
    for s in range(s0 + 1, s1):
        if rank[s] != rank[s0]:
            tied = False
    if tied:
        side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, SIG)
        return
    w = theta[_WL]
    sl2 = theta[_SL] * theta[_SL]
    beta2 = (1.0 + 1.0 / w) * sl2 + theta[_DRIFT] / w
    beta = math.sqrt(beta2)
    w_new = TANH_MULTIPLIER / beta
    arg = 0.5 * w_new
    for s in range(s0, s1):
        i = member[side_ptr[s]]
        noise = w * sl2 + x[i, PENDING]
        x[i, PENDING] = 0.0
        diffuse(x, i, noise, theta[_TS], arg)
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, SIG)
    mu = np.empty(n)
    wt = np.empty(n)
    rk = np.empty(n, np.int64)
    for q in range(n):
        i = member[side_ptr[s0 + q]]
        mu[q] = x[i, MU]
        wt[q] = TANH_MULTIPLIER / math.sqrt(x[i, SIG] * x[i, SIG] + beta2)
        rk[q] = rank[s0 + q]
    perf = np.empty(n)
    kappa = 1.0 if theta[_SPLIT] != 0.0 else 2.0
    if n < theta[_EXACT]:
        solve_exact(mu, wt, rk, kappa, beta, perf)
    else:
        solve_grid(mu, wt, rk, kappa, beta, perf)
    work = np.empty(HISTORY)
    for q in range(n):
        i = member[side_ptr[s0 + q]]
        push_term(x, i, perf[q], w_new, arg)
        x[i, MU] = robust_average(x, i, arg, beta, work)
        s = x[i, SIG]
        x[i, SIG] = 1.0 / math.sqrt(1.0 / (s * s) + 1.0 / beta2)


class EloMMR(Filter):
    r"""Elo-MMR (Ebtekar and Liu, WWW 2021) over free-for-all contests of individuals.

    Parameters
    ----------
    mu, sigma:
        A newcomer's belief (1500, 350).
    sig_limit:
        :math:`\sigma_\ell` (80): the uncertainty a regular entrant's sigma tends to; with
        ``weight_limit`` it sets the performance noise :math:`\beta^2 = (1 + 1/w)\sigma_\ell^2`
        and the drift :math:`w \sigma_\ell^2` added before each contest.
    weight_limit:
        :math:`w` in (0, 1e6] (0.2): a contest's weight.
    drift_per_day:
        :math:`\delta` >= 0 (0): variance added per day between a competitor's contests (and
        :math:`\delta / w` to :math:`\beta^2`, as the reference code does).
    transfer_speed:
        :math:`r` >= 0 (1; ``math.inf`` collapses the belief to a Gaussian at each contest): how
        fast diffusion moves weight from past performances to the Gaussian term.
    split_ties:
        Count a tie as half a win and half a loss (default: as a win and a loss, the code's default).
    exact_below:
        Contests of fewer entrants (default 64) solve their performance equations exactly,
        :math:`O(n^2)`; larger ones from the interpolant of their shared sum (within
        :math:`10^{-8}` points).

    Run it on :class:`statespace.data.matches.Matches` of single competitors (``run``/``fit``).
    It rates contests only (:attr:`rates_games` is False): given :class:`statespace.Games` it
    refuses them with a ``ValueError``; ``Matches.from_games(games)`` rates them as contests of two.
    """

    name = "elo_mmr"
    columns = COLUMNS
    sd_column = "sigma"
    time_unit = "day"
    params = PARAMS
    record_columns = 2
    rates_games = False
    _predict = _predict
    _match = _match

    def __init__(self, mu: float = MU0, sigma: float = SIGMA0, *, sig_limit: float = SIG_LIMIT,
                 weight_limit: float = WEIGHT_LIMIT, drift_per_day: float = 0.0,
                 transfer_speed: float = TRANSFER_SPEED, split_ties: bool = False, exact_below: int = EXACT_BELOW):
        owner = "EloMMR"
        self.sig_limit = C.scale(owner, "sig_limit", sig_limit)
        self.weight_limit = C.number(owner, "weight_limit", weight_limit, 1e-6, 1e6)
        alpha = self.beta
        self.drift_per_day = C.number(owner, "drift_per_day", drift_per_day, 0.0, (1e3 * alpha) ** 2)
        self.mu = C.location(owner, "mu", mu, alpha)
        self.sigma = C.length(owner, "sigma", sigma, alpha)
        self.transfer_speed = (math.inf if C.is_number(transfer_speed) and transfer_speed == math.inf
                               else C.number(owner, "transfer_speed", transfer_speed, 0.0, unit=" (or math.inf)"))
        self.split_ties = bool(split_ties)
        self.exact_below = C.whole(owner, "exact_below", exact_below, 2)

    @property
    def beta(self) -> float:
        r"""The performance noise :math:`\beta = \sqrt{(1 + 1/w)\sigma_\ell^2 + \delta / w}`."""
        w = self.weight_limit
        return math.sqrt((1.0 + 1.0 / w) * self.sig_limit ** 2 + getattr(self, "drift_per_day", 0.0) / w)

    def kernel_value(self, name: str) -> float:
        if name == "split_ties":
            return float(self.split_ties)
        return super().kernel_value(name)

    def _describe(self) -> str:
        parts = []
        for name, default in (("mu", MU0), ("sigma", SIGMA0), ("sig_limit", SIG_LIMIT),
                              ("weight_limit", WEIGHT_LIMIT), ("drift_per_day", 0.0),
                              ("transfer_speed", TRANSFER_SPEED)):
            if getattr(self, name) != default:
                parts.append(f"{name}={getattr(self, name):g}")
        if self.split_ties:
            parts.append("split_ties=True")
        if self.exact_below != EXACT_BELOW:
            parts.append(f"exact_below={self.exact_below}")
        return ", ".join(parts)

    @property
    def model(self) -> SkillModel:
        r"""Logistic link at the pairwise forecast's scale (:meth:`match_forecast`:
        :math:`\sqrt 2 \beta'`), prior :math:`\mathcal N(\mu, \sigma^2)`, drift ``drift_per_day``."""
        return SkillModel(link="logistic", scale=math.sqrt(2.0) * self.match_forecast().beta, prior_mean=self.mu,
                          prior_var=self.sigma ** 2, drift=self.drift_per_day, draw="half")

    @property
    def shown_columns(self) -> tuple[str, ...]:
        return ()

    def prior_row(self) -> np.ndarray:
        """A newcomer: rating ``mu``, sd ``sigma``, Gaussian term N(mu, sigma^2), no history."""
        row = np.zeros(len(COLUMNS))
        row[0], row[1] = self.mu, max(self.sigma, C.SD_MIN)
        row[3], row[4] = self.mu, 1.0 / row[1] ** 2
        return row

    def initial_row(self, value) -> np.ndarray:
        """A starting ``(mu, sigma)``: the Gaussian term N(mu, sigma^2) and no history."""
        values = np.atleast_1d(np.asarray(value, dtype=float)) if np.ndim(value) <= 1 else None
        if values is None or values.size > 2:
            raise ValueError(f"{self.name}: initial value {value!r} must be a rating or a (mu, sigma) pair")
        row = super().initial_row(values)
        row[3], row[4] = row[0], 1.0 / row[1] ** 2
        return row

    def match_forecast(self) -> RankingForecast:
        r"""Bradley-Terry pairs. Elo-MMR forecasts :math:`i` ahead of :math:`j` with probability
        :math:`F\bigl(\tfrac{\pi}{\sqrt 3} (\mu_i - \mu_j) / \sqrt{2\beta^2 + v_i + v_j}\bigr)`
        (its logistic performances, F the logistic cdf), ours is :math:`F((\mu_i - \mu_j) / \sqrt{2\beta'^2
        + v_i + v_j})`: no :math:`\beta'` makes them equal for every :math:`v`, so :math:`\beta'` makes
        them equal for two regular entrants, whose variance at a contest is the limit
        :math:`v_\infty = (1 + w)\sigma_\ell^2`: :math:`\beta'^2 = \tfrac{3}{\pi^2}(\beta^2 + v_\infty)
        - v_\infty` (79.6 at the defaults); where that is not positive (a weight near 1 or
        more), :math:`\beta' = \tfrac{\sqrt 3}{\pi}\beta`, equal for skills known exactly."""
        v = (1.0 + self.weight_limit) * self.sig_limit ** 2
        b2 = 3.0 / math.pi ** 2 * (self.beta ** 2 + v) - v
        if not b2 > 0.01 * self.beta ** 2:
            b2 = 3.0 / math.pi ** 2 * self.beta ** 2
        return RankingForecast("bradley_terry", math.sqrt(b2))

    def check_match_table(self, matches: Matches) -> None:
        """``ValueError`` naming the method and the first match with a side of several competitors or
        a partial-play weight other than 1 (Elo-MMR rates individuals who play whole contests)."""
        members = np.diff(matches.side_ptr)
        side_of_match = np.repeat(np.arange(matches.n_matches), np.diff(matches.match_ptr))
        team = np.flatnonzero(members != 1)
        if team.size:
            m = int(side_of_match[team[0]])
            raise ValueError(f"{self.name} rates contests of individuals: {matches.match_text(m)} has a side of "
                             f"{int(members[team[0]])} competitors; use a method that rates teams (TrueSkill, "
                             f"WengLin, Elo, Glicko)")
        bad = np.flatnonzero(matches.weight != 1.0)
        if bad.size:
            m = int(np.searchsorted(matches.side_ptr[matches.match_ptr], bad[0], side="right") - 1)
            raise ValueError(f"{self.name} does not use partial-play weights: {matches.match_text(m)} gives "
                             f"{matches.names[matches.member[bad[0]]]!r} weight "
                             f"{matches.weight[bad[0]]:g}; use weights of 1")

    def run(self, games, initial=None, state=None):
        """As :meth:`filters.base.Filter.run`; matches are checked first (:meth:`check_match_table`)."""
        if isinstance(games, Matches):
            self.check_match_table(games)
        return super().run(games, initial=initial, state=state)


METHODS = {"elo_mmr": EloMMR}
#: it rates contests of many entrants, not the games the default comparison scores
METHODS_NOT_BY_DEFAULT = {"elo_mmr"}
