r"""Scores of a method's own forecasts of matches: the ranking's log-likelihood and the pairwise log
loss under the observation the method's forecast means, with the order scores of
:mod:`statespace.model.ranking_metrics`.

A method rating matches forecasts side :math:`s` of a match as :math:`p_s \sim \mathcal{N}(\mu_s,
\beta^2 + v_s)` (``perf_mean``, ``perf_var``: :mod:`filters.match_loop`) and says which ranking
observation that means (:class:`statespace.model.ranking_forecast.RankingForecast`: its ``kind``,
``beta`` and ``eps``). Per match of :math:`n` sides, in :math:`O(n^2)` time and :math:`O(n)`
memory (a Codeforces contest has 3,000 sides: no :math:`n \times n` array is made):

- **Ranking log-likelihood** (:func:`ranking_loglik`, nats, higher is better; comparable across
  kinds): the log-probability of the observed ranking under a distribution over rankings that the
  forecast implies, so that summed over every strict order of a match's sides the probability is 1:

  - ``plackett_luce``: Plackett-Luce at Weng and Lin's scale :math:`c = \sqrt{\sum_k (\beta^2 + v_k)}`
    (the value of :func:`statespace.model.ranking.pl_loglik`, ties as its Weng-Lin form);
  - ``bradley_terry``: a forecast of pairs is not yet a distribution over rankings (the sum over all
    pairs of their log-probabilities, :func:`statespace.model.ranking_pairwise.bt_loglik`, counts
    :math:`n(n-1)/2` dependent events as independent). Its ranking is the Plackett-Luce one whose
    pairwise marginals are those Bradley-Terry games (Luce's choice axiom; Marden 1995, Section
    5.1), at the pair scale of the match's mean variance :math:`\sqrt{2\beta^2 + 2\bar v}`: exactly
    the game's probability one against one, and for point ratings (:math:`v = 0`, Elo) exactly
    every pair's forecast;
  - ``thurstone``: the probability of TrueSkill's chain of adjacent results with draw margin
    :math:`\varepsilon` (:func:`statespace.model.ranking_probability.thurstone_order_logprob`, an
    :math:`n`-dimensional Gaussian integral computed by a recursion over the places), not the sum of
    the adjacent factors' log-probabilities (:func:`statespace.model.ranking_pairwise.thurstone_loglik`'s
    value), which counts those dependent events as independent.

  A tie in a Thurstonian ranking at :math:`\varepsilon = 0` has probability 0 and is refused
  (``ValueError`` naming the match).
- **Pairwise log loss** (:func:`forecast_pair_log_loss`, nats, lower is better; comparable across
  kinds): the mean over the match's :math:`n(n-1)/2` pairs of the binary log loss
  :math:`-[y \log E_{ij} + (1 - y) \log(1 - E_{ij})]`, :math:`y` = 1 when i placed ahead of j, 0
  behind and 1/2 for a tie (as :func:`statespace.model.ranking_metrics.pairwise_log_loss` and the
  games' log loss score a draw), with the method's own expected score of i against j,
  :math:`E_{ij} = P(i \text{ ahead of } j) + \tfrac12 P(\text{tie})`:

  - ``bradley_terry``: :math:`F(d_{ij} / c_{ij})`, F the logistic cdf,
    :math:`d_{ij} = \mu_i - \mu_j`, :math:`c_{ij} = \sqrt{2\beta^2 + v_i + v_j}`
    (:func:`statespace.model.ranking_pairwise.bt_forecast`);
  - ``plackett_luce``: :math:`F(d_{ij} / c)` at the match's one scale
    :math:`c = \sqrt{\sum_k (\beta^2 + v_k)}` (:func:`statespace.model.ranking.pl_forecast`: the
    pairwise marginals of Plackett-Luce);
  - ``thurstone``: with :math:`P(i \text{ ahead}) = \Phi((d_{ij} - \varepsilon) / c_{ij})`
    (:func:`statespace.model.ranking_pairwise.thurstone_forecast`) and the tie the rest,
    :math:`E_{ij} = \tfrac12[\Phi((d_{ij} - \varepsilon) / c_{ij}) + \Phi((d_{ij} + \varepsilon) / c_{ij})]`;
    the draw margin pulls the expected score towards 1/2, and at :math:`\varepsilon = 0` it is
    :math:`\Phi(d_{ij} / c_{ij})`. Both :math:`E` and :math:`1 - E` are summed as two positive
    terms in logs, so a far-off pair stays finite.

- **Pair inversion**, **rank deviation** and **top-1** of :mod:`statespace.model.ranking_metrics`
  with the sides' performance means as the strengths.

Each score returns ``(score, per-match values, weights)``, the score the weighted mean of the
values. The order scores and the pairwise log loss weight a match by its number of sides (as
:mod:`statespace.model.ranking_metrics`, Elo-MMR's weighting). The log-likelihood is a sum over the
match's places and so already grows with its size: it is the plain mean over matches (weights 1),
the total log-likelihood over the number of matches, whose ordering of methods is the total's.
Two methods' per-match values on the same matches give the paired standard error of their
difference (:func:`statespace.model.ranking_metrics.paired_se`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import get_num_threads, njit, prange

from statespace.model import numeric as nx
from statespace.model import ranking_metrics as RM
from statespace.model.ranking import Z_MAX, place_groups, rank_order, ratio
from statespace.model.ranking_forecast import RankingForecast
from statespace.model.ranking_pairwise import D_SCALES, pair_scale
from statespace.model.ranking_probability import thurstone_order_logprob

__all__ = ["SCORES", "ranking_loglik", "forecast_pair_log_loss", "match_scores"]

#: the scores of :func:`match_scores`: name -> which way is better ("max" or "min")
SCORES = {"loglik": "max", "pair_log_loss": "min", "pair_inversion": "max", "rank_deviation": "min",
          "top1": "max"}

_KIND = {"plackett_luce": 0, "bradley_terry": 1, "thurstone": 2}
_LOG_HALF = math.log(0.5)
_SQRT2 = math.sqrt(2.0)


@njit(cache=True)
def _pl_value(mu, c, rank):
    r"""Plackett-Luce's :math:`\ell = \sum_k (\operatorname{mean}_{G_k} x - \operatorname{lse}_{T_k} x)`
    at the scale ``c`` (:math:`x = \mu / c`), the places' groups walked from the last up with a
    running log-sum-exp of the sides not ahead."""
    order = rank_order(rank)
    _, start, n_groups = place_groups(rank, order)
    top = -math.inf  # running lse = top + log(acc)
    acc = 0.0
    total = 0.0
    for k in range(n_groups - 1, -1, -1):
        lo, hi = start[k], start[k + 1]
        group = 0.0
        for p in range(lo, hi):
            x = ratio(mu[order[p]], c, Z_MAX)
            group += x
            if x > top:
                acc = acc * math.exp(top - x) + 1.0
                top = x
            else:
                acc += math.exp(x - top)
        total += group / (hi - lo) - (top + math.log(acc))
    return total


@njit(cache=True)
def _scale(kind, beta, v):
    r"""The one scale of a match's Plackett-Luce ranking: Weng and Lin's :math:`\sqrt{\sum_k (\beta^2 + v_k)}`
    for ``plackett_luce``; the pair scale at the match's mean variance,
    :math:`\sqrt{2\beta^2 + 2\bar v}`, for ``bradley_terry``."""
    n = v.shape[0]
    total = 0.0
    for k in range(n):
        total += v[k]
    if kind == 0:
        return math.sqrt(n * beta * beta + total)
    return math.sqrt(2.0 * beta * beta + 2.0 * total / n)


@njit(cache=True)
def _outcome(ri, rj):
    """1 when the side of place ``ri`` is ahead of that of ``rj``, 0 behind, 1/2 tied."""
    return 1.0 if ri < rj else (0.0 if ri > rj else 0.5)


@njit(cache=True)
def _loglik_value(kind, beta, eps, u, v, r):
    """One match's log-probability of its ranking ``r`` (see the module docstring)."""
    if kind == 2:
        return thurstone_order_logprob(u, v, beta, eps, r)
    return _pl_value(u, _scale(kind, beta, v), r)


@njit(cache=True)
def _log_add(a, b):
    """``log(e^a + e^b)``."""
    top = max(a, b)
    return top + math.log1p(math.exp(min(a, b) - top))


@njit(cache=True, inline="always")
def _softplus(z):
    """``log(1 + e^z)`` without overflow."""
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@njit(cache=True, inline="always")
def _logistic_pair_loss(y, z):
    """``-[y log F(z) + (1 - y) log F(-z)]``, F the logistic cdf (``-log F(z) = softplus(-z)``): one
    exponential for a decided pair, two for a tie."""
    if y == 1.0:
        return _softplus(-z)
    if y == 0.0:
        return _softplus(z)
    return y * _softplus(-z) + (1.0 - y) * _softplus(z)


#: below this a Thurstonian pair's smaller probability is taken in logs (its tail formula)
_TINY = 1e-280


@njit(cache=True, inline="always")
def _thurstone_pair_loss(y, a, b):
    """``-[y log E + (1 - y) log(1 - E)]`` with ``E = (Phi(a) + Phi(b)) / 2`` and
    ``1 - E = (Phi(-a) + Phi(-b)) / 2``: the smaller of the two from ``erfc`` (no cancellation), the
    other as ``log1p`` of minus it, so that a loss close to 0 keeps its digits; where the smaller
    underflows, both in logs (:func:`statespace.model.numeric.log_cdf`, Mills' ratio)."""
    if a + b >= 0.0:  # E >= 1/2: 1 - E is the smaller
        q = 0.25 * (math.erfc(a / _SQRT2) + math.erfc(b / _SQRT2))
        if q > _TINY:
            return -y * math.log1p(-q) - (1.0 - y) * math.log(q)
    else:
        p = 0.25 * (math.erfc(-a / _SQRT2) + math.erfc(-b / _SQRT2))
        if p > _TINY:
            return -y * math.log(p) - (1.0 - y) * math.log1p(-p)
    ahead = _LOG_HALF + _log_add(nx.log_cdf(nx.PROBIT, a), nx.log_cdf(nx.PROBIT, b))
    behind = _LOG_HALF + _log_add(nx.log_cdf(nx.PROBIT, -a), nx.log_cdf(nx.PROBIT, -b))
    return -(y * ahead + (1.0 - y) * behind)


@njit(cache=True)
def _pair_loss_value(kind, beta, eps, u, v, r):
    """One match's mean over its pairs of the log loss of the expected score (module docstring)."""
    n = u.shape[0]
    total = 0.0
    if kind == 0:  # one scale for the match
        c = _scale(0, beta, v)
        for i in range(n):
            for j in range(i + 1, n):
                total += _logistic_pair_loss(_outcome(r[i], r[j]), ratio(u[i] - u[j], c, D_SCALES))
    elif kind == 1:
        for i in range(n):
            for j in range(i + 1, n):
                z = ratio(u[i] - u[j], pair_scale(v, beta, i, j), D_SCALES)
                total += _logistic_pair_loss(_outcome(r[i], r[j]), z)
    else:
        for i in range(n):
            for j in range(i + 1, n):
                cij = pair_scale(v, beta, i, j)
                a = ratio(u[i] - u[j] - eps, cij, D_SCALES)
                b = ratio(u[i] - u[j] + eps, cij, D_SCALES)
                total += _thurstone_pair_loss(_outcome(r[i], r[j]), a, b)
    return total / (n * (n - 1) / 2.0)


@njit(cache=True, parallel=True)
def _per_match(kind, beta, eps, mu, var, rank, match_ptr, loglik, loss, n_threads):
    """Each match's log-likelihood into ``loglik`` and pairwise log loss into ``loss`` (an
    empty array: not computed), the matches shared over numba's threads in turn (thread ``p`` of
    ``T`` takes matches ``p, p + T, ...``: a history's large contests fall to every thread)."""
    n_matches = match_ptr.size - 1
    for p in prange(n_threads):
        for m in range(p, n_matches, n_threads):
            lo, hi = match_ptr[m], match_ptr[m + 1]
            if loglik.size:
                loglik[m] = _loglik_value(kind, beta, eps, mu[lo:hi], var[lo:hi], rank[lo:hi])
            if loss.size:
                loss[m] = _pair_loss_value(kind, beta, eps, mu[lo:hi], var[lo:hi], rank[lo:hi])


def _inputs(forecast, perf_mean, perf_var, rank, match_ptr):
    if not isinstance(forecast, RankingForecast):
        raise ValueError(f"forecast must be a statespace.model.ranking_forecast.RankingForecast, got "
                         f"{type(forecast).__name__}")
    mu, rank, match_ptr = RM._layout(perf_mean, rank, match_ptr)
    var = np.ascontiguousarray(perf_var, dtype=np.float64)
    if var.shape != mu.shape:
        raise ValueError(f"perf_var must be one value a side, like perf_mean: got shapes {var.shape} and {mu.shape}")
    bad = ~np.isfinite(var) | (var < 0)
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        raise ValueError(f"perf_var of side {at} must be a finite number >= 0, got {var[at]!r}")
    return mu, var, rank, match_ptr


def _check_ties(forecast, rank, match_ptr) -> None:
    """A Thurstonian tie without a draw margin has no likelihood: refuse it, naming the match."""
    if forecast.kind != "thurstone" or forecast.eps / forecast.beta > 0:
        return
    for m in range(match_ptr.size - 1):
        r = rank[match_ptr[m]:match_ptr[m + 1]]
        if np.unique(r).size < r.size:
            raise ValueError(f"match {m} has tied sides (ranks {r.tolist()[:10]}{' ...' if r.size > 10 else ''}): "
                             f"a tie has no likelihood under the Thurstonian forecast without a draw margin "
                             f"(eps = {forecast.eps:g})")


def ranking_loglik(forecast, perf_mean, perf_var, rank, match_ptr) -> tuple[float, np.ndarray, np.ndarray]:
    """The log-likelihood of each match's observed ranking under ``forecast``'s observation (see the
    module docstring); the mean over matches (weights 1). Returns (score, per-match values,
    weights)."""
    mu, var, rank, match_ptr = _inputs(forecast, perf_mean, perf_var, rank, match_ptr)
    _check_ties(forecast, rank, match_ptr)
    out = np.empty(match_ptr.size - 1)
    _per_match(_KIND[forecast.kind], float(forecast.beta), float(forecast.eps), mu, var * forecast.var_factor, rank,
               match_ptr, out, np.empty(0), get_num_threads())
    weights = np.ones(out.size)
    return float(np.mean(out)), out, weights


def forecast_pair_log_loss(forecast, perf_mean, perf_var, rank, match_ptr) -> tuple[float, np.ndarray, np.ndarray]:
    """The mean binary log loss over each match's pairs of ``forecast``'s own expected score (see
    the module docstring), matches weighted by their number of sides. Returns (score, per-match
    values, weights)."""
    mu, var, rank, match_ptr = _inputs(forecast, perf_mean, perf_var, rank, match_ptr)
    out = np.empty(match_ptr.size - 1)
    _per_match(_KIND[forecast.kind], float(forecast.beta), float(forecast.eps), mu, var * forecast.var_factor, rank,
               match_ptr, np.empty(0), out, get_num_threads())
    weights = np.diff(match_ptr).astype(np.float64)
    return float(np.sum(out * weights) / np.sum(weights)), out, weights


def match_scores(forecast, perf_mean, perf_var, rank, match_ptr) -> dict[str, tuple[float, np.ndarray, np.ndarray]]:
    """Every score of :data:`SCORES` of the forecasts ``perf_mean``/``perf_var`` of the matches
    ``rank``/``match_ptr``: name -> (score, per-match values, weights)."""
    mu, var, rank, match_ptr = _inputs(forecast, perf_mean, perf_var, rank, match_ptr)
    return {"loglik": ranking_loglik(forecast, mu, var, rank, match_ptr),
            "pair_log_loss": forecast_pair_log_loss(forecast, mu, var, rank, match_ptr),
            "pair_inversion": RM.pair_order(mu, rank, match_ptr),
            "rank_deviation": RM.rank_deviation(mu, rank, match_ptr),
            "top1": RM.top1_accuracy(mu, rank, match_ptr)}
