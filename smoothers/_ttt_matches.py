r"""TrueSkill Through Time over matches of many sides (teams, free-for-all rankings, partial play):
the nodes of a :class:`statespace.data.matches.Matches` table, the fit
(:func:`fit_matches`, what ``TrueSkillThroughTime(...).fit(matches)`` runs) and its result,
:class:`MatchFit`.

The model is TrueSkill's for teams (Herbrich, Minka and Graepel, "TrueSkill: A Bayesian Skill
Rating System", NIPS 2006) through time (Dangauthier et al. 2007), as the ``trueskillthroughtime``
package (Landfried and Mocskos) has it: each competitor's skill at each time it plays is a node,
linked to its previous node by the random walk :math:`\mathcal{N}(0, \tau^2 \Delta t)` (a
newcomer's first node :math:`\mathcal{N}(\mu, \sigma^2)`), as for games (:mod:`smoothers.ttt`).
In a match, member :math:`k` of a side performs :math:`p_k = s_k + \mathcal{N}(0, \beta^2)`, and the
side's performance is the weighted sum :math:`P = \sum_k w_k p_k` (``weight``: partial play in
[0, 1]), so :math:`P \sim \mathcal{N}(\sum_k w_k m_k, \sum_k w_k^2 (v_k + \beta^2))` from the
members' beliefs. The sides, sorted by rank (ties in their stored order), are linked by a chain of
factors on the differences of adjacent sides' performances: :math:`P_i - P_{i+1} > \varepsilon` when
side :math:`i` placed ahead, :math:`|P_i - P_{i+1}| \le \varepsilon` when they tied, with the draw
margin :math:`\varepsilon = \sqrt{n_i + n_{i+1}}\,\beta\,\Phi^{-1}\bigl((1 + p_\text{draw}) / 2\bigr)`
(:math:`n` members of a side; :func:`filters.trueskill.draw_margin`). Two sides of one competitor
each, ranks (0, 1) or (0, 0), are exactly the games of :mod:`smoothers.ttt`.

A match's messages to its members' nodes are computed by EP from their cavities (each node's
belief without this match's message): the sides' performance priors, then the chain's own EP
(each diff factor's messages to its two sides, from their priors times the other diff factor's
message, by TrueSkill's truncated-Gaussian corrections; rounds forward and back until no message
moves, from the messages of the match's previous visit; exact in one round for two sides), then each side's message passed down to its members
(:func:`smoothers._ttt_match_messages._match`). The schedule is the games': a forward pass through
the slices in time order (each slice's forward messages, then its matches one after another), then
backward-forward sweeps until no node's posterior mean or sd moves by more than ``tol`` or
``max_iter`` sweeps. The package does the same, with the chain's EP cut at 10 rounds or a move of
1e-6.

``draw_probability`` left out (``None``) is 0 on matches without a tie and the classic 0.10 on
matches with one (the games' test of whether draws are plausible is not made for matches); the fit
carries the value (``fit.method``). Matches carry no home side: ``home`` other than 0 is refused,
and so are ``initial=`` and ``warm_start=`` (a refit on matches runs from scratch).

**Forecasts are not online.** :attr:`MatchFit.perf_mean` and :attr:`MatchFit.perf_var` are each
side's performance moments from the *smoothed* posterior at its match (every node has read every
match, this one included), so scoring them against the matches' own results flatters the method;
score held-out matches by fitting on the matches before them.
"""

from __future__ import annotations

import time as _time

import numpy as np
import pandas as pd

from statespace.data.matches import Matches
from statespace.methods.display import Ratings, as_ratings
from statespace.model.ranges import check_results
from statespace.model.ranking_forecast import RankingForecast

from ._ttt_match_messages import run_matches
from ._ttt_messages import SD_MIN

__all__ = ["fit_matches", "MatchFit", "match_draw_probability"]

#: what a :class:`statespace.model.ranges.ResultRangeError` of a fit on matches suggests
_RESULTS_HINT = "give a narrower prior (sigma), a smaller tau, or shorter gaps between a competitor's matches"


def _side_order(matches: Matches) -> np.ndarray:
    """Each match's sides by rank, ties in their stored order (CSR by ``match_ptr``)."""
    match_of_side = np.repeat(np.arange(matches.n_matches), np.diff(matches.match_ptr))
    return np.lexsort((matches.rank, match_of_side)).astype(np.int64)


def has_ties(matches: Matches) -> bool:
    """Whether some match has two sides of one rank."""
    order = _side_order(matches)
    match_of_side = np.repeat(np.arange(matches.n_matches), np.diff(matches.match_ptr))[order]
    r = matches.rank[order]
    return bool(np.any((r[1:] == r[:-1]) & (match_of_side[1:] == match_of_side[:-1])))


def match_draw_probability(method, matches: Matches) -> float:
    """The ``draw_probability`` a fit on ``matches`` uses: the method's, or where it is left out
    (``None``) the classic value (``method._draw_default``) on matches with a tie, else 0."""
    if method.draw_probability is not None:
        return float(method.draw_probability)
    return float(method._draw_default) if has_ties(matches) else 0.0


def check_fit_matches(method, initial, warm_start) -> None:
    """What a fit on matches refuses: ``initial=``, ``warm_start=`` and a home advantage."""
    if initial is not None or warm_start is not None:
        raise ValueError(f"{method.name}: a fit on matches of many sides runs from scratch; initial= and warm_start= "
                         f"are for games (statespace.Games)")
    if method.home != 0.0:
        raise ValueError(f"{method.name}: matches of many sides have no home side, so home={method.home:g} cannot "
                         f"apply; use home=0")


def fit_matches(method, matches: Matches) -> "MatchFit":
    """The posterior of every node given ``matches`` (the module docstring), by ``method`` (a
    :class:`smoothers.ttt.TrueSkillThroughTime` with ``draw_probability`` given)."""
    t0 = _time.perf_counter()
    mt = matches
    t_match = np.asarray(mt.time, dtype=np.float64) / method.period_days
    side_of_member = np.repeat(np.arange(mt.n_sides), np.diff(mt.side_ptr))
    match_of_side = np.repeat(np.arange(mt.n_matches), np.diff(mt.match_ptr))
    t_member = t_match[match_of_side[side_of_member]]
    player = np.asarray(mt.member, dtype=np.int64)
    # nodes numbered in time order (slice = a distinct time), competitor order inside a slice
    key = np.lexsort((player, t_member))
    new = np.r_[True, (player[key][1:] != player[key][:-1]) | (t_member[key][1:] != t_member[key][:-1])]
    member_node = np.empty(player.size, dtype=np.int64)
    member_node[key] = np.cumsum(new) - 1
    node_player, node_time = player[key][new], t_member[key][new]
    n_nodes = node_player.size
    slice_times, counts = np.unique(node_time, return_counts=True)
    node_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    match_start = np.searchsorted(t_match, slice_times, side="left")
    match_start = np.concatenate([match_start, [mt.n_matches]]).astype(np.int64)
    # each node's previous node of the same competitor, and the random walk's step between them
    by_player = np.lexsort((node_time, node_player))
    same = np.r_[False, node_player[by_player][1:] == node_player[by_player][:-1]]
    prev = np.full(n_nodes, -1, dtype=np.int64)
    prev[by_player[same]] = by_player[np.flatnonzero(same) - 1]
    nxt = np.full(n_nodes, -1, dtype=np.int64)
    nxt[prev[prev >= 0]] = np.flatnonzero(prev >= 0)
    dt = np.where(prev >= 0, node_time - node_time[np.maximum(prev, 0)], 0.0)
    q = method._steps(dt)
    prior_var = max(method.sigma, SD_MIN) ** 2
    beta = method.beta_kernel
    # the margin of a pair of sides is eps_unit * sqrt(members of both): the one-vs-one margin / sqrt(2)
    eps_unit = method.draw_margin / np.sqrt(2.0)
    mean, var, filtered_var, sweeps, change = run_matches(
        node_start, match_start, prev, nxt, q, 1.0 / prior_var, method.mu / prior_var, np.asarray(mt.match_ptr),
        _side_order(mt), np.asarray(mt.side_ptr), member_node, np.asarray(mt.weight), np.asarray(mt.rank), beta,
        eps_unit, method.max_iter, method.tol)
    if not (np.all(np.isfinite(mean)) and np.all(var > 0)):
        raise ArithmeticError(f"{method.name}: the message passing gave a non-finite mean or a non-positive variance "
                              f"({method!r}); this is a bug, please report it with the matches")
    info = {"sweeps": int(sweeps), "change": float(change) if sweeps else float("nan"),
            "converged": bool(sweeps) and change <= method.tol, "n_nodes": int(n_nodes),
            "n_slices": int(slice_times.size), "filtered_sd": np.sqrt(filtered_var),
            "seconds": _time.perf_counter() - t0}
    return MatchFit(method, mt, node_player, node_time, mean, var, member_node, info)


class MatchFit:
    """A TrueSkill Through Time fit on matches: ``method`` (with the ``draw_probability`` used),
    ``matches``, ``info`` (``sweeps``, ``change``, ``converged``, ``n_nodes``, ``n_slices``,
    ``filtered_sd``: every node's sd after the first forward pass), the nodes' posterior
    (``node_player``, ``node_time`` in the method's unit: days / ``period_days``, ``mean``,
    ``var``), and each side's performance moments at its match (:attr:`perf_mean`,
    :attr:`perf_var`, rows of the matches' side arrays; **smoothed, not online**: see
    :mod:`smoothers._ttt_matches`)."""

    def __init__(self, method, matches: Matches, node_player, node_time, mean, var, member_node, info):
        self.method = method
        self.matches = matches
        self.node_player = node_player
        self.node_time = node_time
        self.mean = mean
        self.var = var
        self.info = info
        self._member_node = member_node
        names = np.asarray(matches.names, dtype=object)
        check_results(method.name, names[node_player], mean, np.sqrt(var), alpha=method.model.scale,
                      centre=method.mu, hint=_RESULTS_HINT)

    def __repr__(self) -> str:
        return f"MatchFit({self.method!r}, {self.matches!r})"

    @property
    def forecast(self) -> RankingForecast:
        """Which ranking :attr:`perf_mean` and :attr:`perf_var` predict (the method's
        :meth:`~smoothers.ttt.TrueSkillThroughTime.match_forecast`)."""
        return self.method.match_forecast()

    @property
    def perf_mean(self) -> np.ndarray:
        r"""Each side's performance mean :math:`\sum_k w_k m_k`, :math:`m_k` its members' smoothed
        posterior means at the match (not a forecast made before the match)."""
        return self._side_sum(self.matches.weight * self.mean[self._member_node])

    @property
    def perf_var(self) -> np.ndarray:
        r"""Each side's skill variance :math:`\sum_k w_k^2 v_k` (smoothed posterior variances; the
        performance noise is the forecast's ``beta``, as :mod:`filters.match_loop` has it)."""
        return self._side_sum(self.matches.weight**2 * self.var[self._member_node])

    def _side_sum(self, x: np.ndarray) -> np.ndarray:
        sides = np.repeat(np.arange(self.matches.n_sides), np.diff(self.matches.side_ptr))
        return np.bincount(sides, weights=x, minlength=self.matches.n_sides)

    def trajectories(self) -> pd.DataFrame:
        """Long table of every node (each competitor at each time it played), by competitor then
        time: ``time`` (the method's unit), ``player``, ``mean``, ``sd``: the learning curves."""
        order = np.lexsort((self.node_time, self.node_player))
        names = np.asarray(self.matches.names, dtype=object)
        return pd.DataFrame({"time": self.node_time[order], "player": names[self.node_player[order]],
                             "mean": self.mean[order], "sd": np.sqrt(self.var[order])})

    def learning_curves(self) -> dict:
        """Each competitor's ``[(time, mean, sd), ...]`` in time order (the package's
        ``History.learning_curves()``, with numbers in place of its Gaussians)."""
        out: dict = {}
        for t, p, m, s in self.trajectories().itertuples(index=False):
            out.setdefault(p, []).append((t, m, s))
        return out

    def ratings(self) -> Ratings:
        """Leaderboard at each competitor's last match: ``player``, ``mean``, ``sd``, ``matches``
        (how many it played), best ``mean`` first."""
        last = np.full(self.matches.n_players, -1, dtype=np.int64)
        order = np.lexsort((self.node_time, self.node_player))
        last[self.node_player[order]] = order
        played = np.bincount(self.matches.member, minlength=self.matches.n_players)
        seen = np.flatnonzero(last >= 0)
        df = pd.DataFrame({"player": np.asarray(self.matches.names, dtype=object)[seen],
                           "mean": self.mean[last[seen]], "sd": np.sqrt(self.var[last[seen]]),
                           "matches": played[seen]})
        df = df.sort_values(["mean", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)
        return as_ratings(df, f"{self.method!r} · {self.matches.n_matches:,} matches · {seen.size:,} competitors")
