r"""What every smoother shares: the whole-history layout of the random-walk model, and the
fitted interface (the same face as the filters': ``predict_proba``, ``ratings``, ``trajectories``).

The layout: one skill variable per competitor and distinct time at which it plays (a "node";
with rating periods, per period). Consecutive nodes of a competitor are linked by the model's
transition (:meth:`statespace.SkillModel.transition`): the random walk of drift :math:`q`,
:math:`s_k - s_{k-1} \sim \mathcal{N}(0, q\,\Delta t)`, or with ``reversion``
:math:`\lambda > 0` the Ornstein-Uhlenbeck step

.. math::

    s_k \mid s_{k-1} \sim \mathcal{N}\left(\mu_0 + a\,(s_{k-1} - \mu_0),\ \frac{q\,(1 - a^2)}{2 \lambda}\right),
    \qquad a = e^{-\lambda \Delta t},

with :math:`\mu_0` the prior mean; a competitor's first node has the prior
:math:`\mathcal{N}(\mu_0, \sigma_0^2)` (``prior_mean``, ``prior_var``); each game observes the
difference of two nodes (plus home).
Smoothers infer the posterior of all nodes at once; forecasting a game at time ``t`` moves a
competitor's last node at or before ``t`` forward by the same transition
(:meth:`statespace.SkillModel.predict`).

Each competitor's mean level is identified only through the prior (adding a constant to a
competitor's whole trajectory and its opponents' changes no likelihood only if everyone moves
together), so compare skills as differences, or centre them per time (``centre=True``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from numba import njit

from statespace import Games, SkillModel
from statespace._display import FittedDisplay, Ratings, as_ratings
from statespace.settings import Settings

__all__ = ["Smoother", "Timeline", "SmootherFit", "timeline", "resumable", "extend_timeline"]



class Smoother(Settings):
    """What every smoother's method object shares: the filters' parameter protocol
    (:meth:`get_params`, :meth:`with_params`, :meth:`tunable`, :meth:`tune`; as
    :class:`filters.base.Filter`) and the time unit of the whole-history layout (:meth:`times`).

    Subclasses set ``name``, keep every constructor argument on an attribute of the same name
    (or say which in ``_param_aliases``) and implement ``fit(games) -> SmootherFit``.
    """

    name: ClassVar[str] = "smoother"
    #: game weights temper the likelihood (``Games.with_weights``): true of every smoother
    honours_weights: ClassVar[bool] = True

    def tune(self, games: Games, params=None, bounds=None, **options) -> "Smoother":
        """A new method with its parameters fitted to ``games``; a smoother with nothing to tune
        refuses with ``ValueError``."""
        raise ValueError(f"{self.name}: nothing to tune; {type(self).__name__} takes its settings as given"
                         f"{self._why_not_tunable()} (change them with with_params(...))")

    def _why_not_tunable(self) -> str:
        return ""

    def times(self, games: Games) -> np.ndarray:
        """Each game's time in the smoother's unit (input row order): the rating-period code when
        the games have periods, else days / ``period_days``."""
        if games.period is not None:
            return games.period.astype(np.float64)
        return games.days() / self.period_days


@dataclass(frozen=True)
class Timeline:
    """Nodes of the whole-history model for a table of games.

    - ``players``: competitor names; ``node_player``, ``node_time``: each node's competitor id
      and time (in the smoother's time unit), sorted by competitor then time;
    - ``prev``: the previous node of the same competitor (-1 for a first node), ``dt`` the time
      between them;
    - ``game_a``, ``game_b``: the nodes each game (input row order) observes.
    """

    players: np.ndarray
    node_player: np.ndarray
    node_time: np.ndarray
    prev: np.ndarray
    dt: np.ndarray
    game_a: np.ndarray
    game_b: np.ndarray

    @property
    def n_nodes(self) -> int:
        return int(self.node_player.size)


def timeline(games: Games, times: np.ndarray) -> Timeline:
    """Nodes for ``games`` at ``times`` (one per game, in the smoother's unit, input row order)."""
    n = len(games)
    player = np.concatenate([games.a, games.b])
    t = np.concatenate([times, times]).astype(float)
    order = np.lexsort((t, player))
    ps, ts = player[order], t[order]
    new = np.r_[True, (ps[1:] != ps[:-1]) | (ts[1:] != ts[:-1])]
    node_of_sorted = np.cumsum(new) - 1
    node_player = ps[new]
    node_time = ts[new]
    node_of = np.empty(2 * n, dtype=np.int64)
    node_of[order] = node_of_sorted
    first = np.r_[True, node_player[1:] != node_player[:-1]]
    prev = np.where(first, -1, np.arange(node_player.size) - 1)
    dt = np.where(first, 0.0, node_time - np.r_[node_time[:1], node_time[:-1]])
    return Timeline(games.players, node_player.astype(np.int64), node_time, prev.astype(np.int64), dt,
                    node_of[:n], node_of[n:])


@njit(cache=True)
def _last_at_or_before(node_player, node_time, ids, t, out):
    """For each query ``(ids[i], t[i])`` with ``ids[i] >= 0``, the last node of competitor ``ids[i]``
    at or before ``t[i]`` (``node_player``, ``node_time`` sorted by competitor, then time), or -1."""
    n = node_player.size
    for i in range(ids.size):
        p = ids[i]
        if p < 0:
            continue
        lo, hi = 0, n  # the competitor's run: [first, end)
        while lo < hi:
            mid = (lo + hi) >> 1
            if node_player[mid] < p:
                lo = mid + 1
            else:
                hi = mid
        first = lo
        hi = n
        while lo < hi:  # the run's nodes at or before t[i] end at lo
            mid = (lo + hi) >> 1
            if node_player[mid] < p or (node_player[mid] == p and node_time[mid] <= t[i]):
                lo = mid + 1
            else:
                hi = mid
        out[i] = lo - 1 if lo > first else -1


def _prefix(order: np.ndarray, n: int):
    """``order[:n]``, or a slice when it is ``0, 1, ..., n - 1`` (a table in time order: its
    columns are then compared without a gather)."""
    head = order[:n]
    if n and head[0] == 0 and head[-1] == n - 1 and np.all(head[1:] > head[:-1]):
        return slice(0, n)
    return head


def resumable(old: Games, games: Games, times: np.ndarray) -> tuple[int, str]:
    """How many of the first games of ``games`` (time order) are the games of ``old``, an earlier
    fit's table, with every other game of ``games`` later than all of them (``times``: each game
    of ``games``' time in the smoother's unit, input row order), and why: ``(len(old),
    "resumed after ... games")``, or ``(0, "refitted: ...")`` when ``games`` does not extend ``old``
    that way. The same records: times, competitors (ids when both tables name them alike, else
    names), scores, neutral grounds, weights, points and periods."""
    n0 = len(old)
    if n0 > len(games):
        return 0, "refitted: the earlier fit has more games"
    po, pn = _prefix(old.order, n0), _prefix(games.order, n0)
    same_ids = old.players is games.players or (old.players.size == games.players.size
                                                and np.array_equal(old.players, games.players))
    if same_ids:
        sides = np.array_equal(old.a[po], games.a[pn]) and np.array_equal(old.b[po], games.b[pn])
    else:
        sides = (np.array_equal(old.players[old.a[po]], games.players[games.a[pn]])
                 and np.array_equal(old.players[old.b[po]], games.players[games.b[pn]]))
    same = (sides and np.array_equal(old.time[po], games.time[pn])
            and np.array_equal(old.score[po], games.score[pn])
            and np.array_equal(old.neutral[po], games.neutral[pn])
            and np.array_equal(old.weight[po], games.weight[pn])
            and old.has_scores == games.has_scores
            and (not games.has_scores or (np.array_equal(old.score_a[po], games.score_a[pn], equal_nan=True)
                                          and np.array_equal(old.score_b[po], games.score_b[pn], equal_nan=True)))
            and (old.period is None) == (games.period is None)
            and (old.period is None or np.array_equal(old.period[po], games.period[pn])))
    if not same:
        return 0, "refitted: the earlier fit's games are not the first games of these"
    if n0 < len(games) and not times[games.order[n0:]].min() > times[games.order[:n0]].max():
        return 0, "refitted: new games at the earlier fit's last time"
    return n0, f"resumed after {n0} games"


@njit(cache=True)
def _merge_nodes(old_player, old_time, new_player, new_time, node_player, node_time, prev, dt, old_to, new_to):
    """Merge two node lists sorted by competitor, then time, where every new node of a competitor
    comes after its old ones; fill the merged list's competitor, time, previous node and time
    since it, and where each old and new node went."""
    i = 0
    j = 0
    n_old = old_player.size
    n_new = new_player.size
    for w in range(n_old + n_new):
        if j == n_new or (i < n_old and old_player[i] <= new_player[j]):
            node_player[w] = old_player[i]
            node_time[w] = old_time[i]
            old_to[i] = w
            i += 1
        else:
            node_player[w] = new_player[j]
            node_time[w] = new_time[j]
            new_to[j] = w
            j += 1
        if w > 0 and node_player[w - 1] == node_player[w]:
            prev[w] = w - 1
            dt[w] = node_time[w] - node_time[w - 1]
        else:
            prev[w] = -1
            dt[w] = 0.0


@njit(cache=True)
def _map_games(kept, old_order, old_a, old_b, old_to, game_a, game_b):
    """``game_a[kept[i]] = old_to[old_a[old_order[i]]]`` (and ``b``): the earlier table's games,
    each at its row of the new table, observing the new numbers of its nodes."""
    for i in range(kept.size):
        g = old_order[i]
        game_a[kept[i]] = old_to[old_a[g]]
        game_b[kept[i]] = old_to[old_b[g]]


def extend_timeline(tl: Timeline, old: Games, games: Games,
                    times: np.ndarray) -> tuple[Timeline, np.ndarray, np.ndarray] | None:
    """The timeline of ``games`` built from ``tl``, the timeline of ``old``, when ``games``
    extends ``old`` as :func:`resumable` checks (``old``'s games first, every other game later)
    and both tables share their competitors' ids: equal to ``timeline(games, times)``, with the
    node of the new timeline of each node of ``tl`` and the new nodes (by competitor, then time).
    Nodes are sorted by competitor, then time, and each new node comes after its competitor's
    earlier ones, so the new list is the merge of the old one and the new games' nodes by
    competitor (old first). The cost is the sort of the new games' nodes and one pass over the
    nodes and games. ``None`` when the competitors' ids differ (build the timeline afresh)."""
    if not (tl.players is games.players or (tl.players.size == games.players.size
                                            and np.array_equal(tl.players, games.players))):
        return None
    n0 = len(old)
    rows = games.order[n0:]
    m = rows.size
    player = np.concatenate([games.a[rows], games.b[rows]]).astype(np.int64)
    t = np.concatenate([times[rows], times[rows]]).astype(float)
    order = np.lexsort((t, player))
    ps, ts = player[order], t[order]
    new = np.r_[True, (ps[1:] != ps[:-1]) | (ts[1:] != ts[:-1])] if m else np.zeros(0, dtype=bool)
    new_player, new_time = ps[new], ts[new]
    n_nodes = tl.n_nodes + new_player.size
    node_player = np.empty(n_nodes, dtype=np.int64)
    node_time = np.empty(n_nodes)
    prev = np.empty(n_nodes, dtype=np.int64)
    dt = np.empty(n_nodes)
    old_to = np.empty(tl.n_nodes, dtype=np.int64)
    new_to = np.empty(new_player.size, dtype=np.int64)
    _merge_nodes(tl.node_player, np.ascontiguousarray(tl.node_time, dtype=np.float64), new_player, new_time,
                 node_player, node_time, prev, dt, old_to, new_to)
    game_a = np.empty(len(games), dtype=np.int64)
    game_b = np.empty(len(games), dtype=np.int64)
    _map_games(np.ascontiguousarray(games.order[:n0]), old.order, tl.game_a, tl.game_b, old_to, game_a, game_b)
    node_of = np.empty(2 * m, dtype=np.int64)
    node_of[order] = new_to[np.cumsum(new) - 1]
    game_a[rows], game_b[rows] = node_of[:m], node_of[m:]
    return Timeline(games.players, node_player, node_time, prev, dt, game_a, game_b), old_to, new_to


class SmootherFit(FittedDisplay):
    """A fitted smoother: posterior means and variances (and optionally draws) of every node.

    Attributes: ``method``, ``games``, ``timeline``, ``mean``, ``var`` (per node), ``draws``
    (``(n_draws, n_nodes)`` or ``None``), ``cov`` (the nodes' full covariance, or ``None``),
    ``model`` (the :class:`SkillModel` with the fitted drift and prior), ``info`` (a dict of fit
    diagnostics), ``time_base`` (the fitted games' :attr:`statespace.Games.time_base`: games on the
    other base are refused). Forecasts use the covariance of the two nodes when it is known (it
    matters when the common level is loosely pinned, e.g. a static fit with a flat prior).

    ``static=True`` (a fit without dynamics: one node per competitor, the same skill at every
    time) forecasts a known competitor from its node whatever the game's time, also before the
    first fitted game; otherwise a competitor has no node before its first game and starts
    there from the prior.

    In Jupyter a fit shows itself as its one-line summary (the smoother with its settings, games,
    competitors, span) above its leaderboard's best competitors; ``plot(players=...)`` draws
    their trajectories (:class:`statespace._display.FittedDisplay`).
    """

    def __init__(self, method, games: Games, tl: Timeline, mean: np.ndarray, var: np.ndarray, model: SkillModel,
                 times_fn, draws: np.ndarray | None = None, info: dict | None = None, cov: np.ndarray | None = None,
                 static: bool = False):
        self.method = method
        self.cov = cov  # full posterior covariance of the nodes, when the smoother has it
        self.games = games
        self.time_base = games.time_base
        self.static = bool(static)
        self.timeline = tl
        self.mean = np.asarray(mean, dtype=float)
        self.var = np.asarray(var, dtype=float)
        self.model = model
        self.draws = draws
        self.info = info or {}
        self._times = times_fn
        self._index = {p: i for i, p in enumerate(tl.players)}
        # last node of each competitor, for forecasts and leaderboards
        last = np.full(tl.players.size, -1, dtype=np.int64)
        last[tl.node_player] = np.arange(tl.n_nodes)  # nodes are sorted by player then time
        self._last = last
        self._games_count = np.bincount(np.concatenate([games.a, games.b]), minlength=tl.players.size)

    def __repr__(self) -> str:
        return f"SmootherFit({self.method!r}, {self.games!r})"

    # ------------------------------------------------------------ locating nodes
    def _node_at(self, ids: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Each competitor's last node at or before ``t`` (-1: none, a newcomer then); in a
        static fit, its only node at any time."""
        tl = self.timeline
        out = np.full(ids.size, -1, dtype=np.int64)
        known = ids >= 0
        if not known.any():
            return out
        if self.static:
            out[known] = self._last[ids[known]]
            return out
        if tl.n_nodes:
            # nodes are sorted by competitor, then time: each competitor's nodes are one run, and
            # a bisection inside the run finds the last at or before t (O(log nodes) a query)
            _last_at_or_before(tl.node_player, np.ascontiguousarray(tl.node_time, dtype=np.float64),
                               np.ascontiguousarray(ids, dtype=np.int64), np.ascontiguousarray(t, dtype=np.float64),
                               out)
        return out

    def _check_time_base(self, games: Games) -> None:
        games.check_time_base(self.time_base, getattr(self.method, "name", "smoother"))

    def _ids(self, names) -> np.ndarray:
        return np.array([self._index.get(str(p), -1) for p in names], dtype=np.int64)

    def _moments(self, node: np.ndarray, t: np.ndarray):
        """Mean and variance at time ``t`` moved forward from ``node`` by the model's transition
        (the prior for -1), and the time moved."""
        m = self.model
        have = node >= 0
        mean = np.where(have, self.mean[np.maximum(node, 0)], m.prior_mean)
        var = np.where(have, self.var[np.maximum(node, 0)], m.prior_var)
        gap = np.where(have, np.maximum(t - self.timeline.node_time[np.maximum(node, 0)], 0.0), 0.0)
        mean, var = m.predict(mean, var, gap)
        return mean, var, gap

    # ------------------------------------------------------------ the fitted interface
    def predict_proba(self, games: Games) -> np.ndarray:
        """Win/draw/loss forecasts (n, 3) of ``games``, each at its own time: a competitor's
        last fitted node at or before the game is moved forward by the model's transition (the
        random walk, or the Ornstein-Uhlenbeck step with reversion); newcomers start from the
        prior. Without posterior draws, the model's forecast at :meth:`predict_diff`; with them,
        the probability is averaged over draws."""
        if self.draws is None:
            return self.model.proba(*self.predict_diff(games))
        diffs, noise = self._draw_diffs(games)
        return self.model.proba(diffs, np.broadcast_to(noise, diffs.shape)).mean(axis=0)

    def predict_diff(self, games: Games) -> tuple[np.ndarray, np.ndarray]:
        r"""``(mean, var)``: the predictive distribution of each game's skill difference
        :math:`d = s_a - s_b + h` (model units, input row order), the moments :meth:`predict_proba`
        integrates over, located the same way (each competitor's last node at or before the game
        moved forward by the model's transition; newcomers from the prior).

        Without draws: :math:`m = m_a - m_b + h`, :math:`v = v_a + v_b - 2 c_{ab}`, with
        :math:`c_{ab}` the two nodes' posterior covariance carried forward by the transitions'
        decays when the fit has the covariance (``cov``), else 0. With posterior draws
        :math:`k = 1, \ldots, K` (each a Gaussian :math:`\mathcal{N}(d_k, u_k)`: the draw's
        difference, and the transition noise since each node, or the prior for a newcomer), the
        moments of their equal mixture by the law of total variance:

        .. math::

            m = \frac{1}{K} \sum_k d_k, \qquad
            v = \frac{1}{K} \sum_k u_k + \frac{1}{K} \sum_k (d_k - m)^2."""
        if self.draws is not None:
            diffs, noise = self._draw_diffs(games)
            return diffs.mean(axis=0), np.broadcast_to(noise, diffs.shape[1:]) + diffs.var(axis=0)
        t, na, nb = self._game_nodes(games)
        model = self.model
        ma, va, ga = self._moments(na, t)
        mb, vb, gb = self._moments(nb, t)
        var = va + vb
        if self.cov is not None:
            both = (na >= 0) & (nb >= 0)
            # the transitions' noise is independent per competitor, so only their decays carry
            # the nodes' covariance forward
            decay = model.transition(ga)[0] * model.transition(gb)[0]
            var = np.where(both, var - 2.0 * decay * self.cov[np.maximum(na, 0), np.maximum(nb, 0)], var)
        return model.diff(ma, mb, ~games.neutral), np.maximum(var, 0.0)

    def _game_nodes(self, games: Games) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each game's time and both competitors' last fitted nodes at or before it (-1: none)."""
        self._check_time_base(games)
        t = self._times(games)
        return t, self._node_at(self._ids(games.a_name), t), self._node_at(self._ids(games.b_name), t)

    def _draw_diffs(self, games: Games) -> tuple[np.ndarray, np.ndarray]:
        """With posterior draws: each draw's skill difference of each game, (draws, n), each side
        moved forward by the transition since its node (a newcomer: the prior mean), and the
        variance that movement adds (the prior variance for a newcomer), summed over the sides."""
        t, na, nb = self._game_nodes(games)
        model = self.model
        sides = []
        for node in (na, nb):
            gap = np.where(node >= 0, np.maximum(t - self.timeline.node_time[np.maximum(node, 0)], 0.0), 0.0)
            sides.append(model.predict(np.where(node >= 0, self.draws[:, np.maximum(node, 0)], model.prior_mean),
                                       np.where(node < 0, model.prior_var, 0.0), gap))
        (da, ua), (db, ub) = sides
        return da - db + model.home * ~games.neutral, ua + ub

    def ratings(self, at=None, *, centre: bool = False, level: float = 0.9) -> Ratings:
        """Leaderboard: ``player``, ``mean``, ``sd``, ``lower``/``upper`` (a central ``level``
        credible band), ``games``, at each competitor's last game or at time ``at`` (in the
        games' time: a date or number). ``centre=True`` subtracts the mean over competitors.
        A DataFrame (:class:`statespace._display.Ratings`) whose ``attrs["summary"]`` is the
        fit's one-line summary, its caption in Jupyter."""
        tl = self.timeline
        ids = np.arange(tl.players.size)
        if at is None:
            node = self._last
            t = tl.node_time[node]
        else:
            t_at = float(self._times_at(at))
            t = np.full(ids.size, t_at)
            node = self._node_at(ids, t)
        mean, var, _ = self._moments(node, t)
        if centre:
            mean = mean - mean.mean()
        from scipy.stats import norm

        z = norm.ppf(0.5 + level / 2)
        sd = np.sqrt(var)
        df = pd.DataFrame({"player": tl.players, "mean": mean, "sd": sd, "lower": mean - z * sd,
                           "upper": mean + z * sd, "games": self._games_count})
        df = df[df["games"] > 0]
        df = df.sort_values(["mean", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)
        return as_ratings(df, self._summary())

    def _times_at(self, at):
        probe = Games.from_arrays([at], ["_x_"], ["_y_"], [1.0])
        if not self.games.is_datetime and isinstance(at, (int, float, np.integer, np.floating)):
            # a number is a numeric time here, even one that alone would read as a year
            probe = probe._replace(time=np.array([float(at)]))
        if probe.is_datetime != self.games.is_datetime:
            raise ValueError("at= must be a date for dated games and a number for numeric times")
        if self.games.period is not None:
            raise ValueError("ratings(at=...) needs games without rating periods; use at=None")
        return self._times(probe)[0]

    def trajectories(self, *, centre: bool = False, level: float = 0.9) -> pd.DataFrame:
        """Long table of every node: ``time`` (in the smoother's unit), ``player``, ``mean``,
        ``sd``, ``lower``, ``upper``. ``centre=True`` subtracts, at each node, the mean of all
        competitors' latest means at that time, so that levels are comparable over time."""
        from scipy.stats import norm

        tl = self.timeline
        mean = self.mean.copy()
        if centre:
            mean = mean - self._centres(tl.node_time)
        sd = np.sqrt(self.var)
        z = norm.ppf(0.5 + level / 2)
        return pd.DataFrame({"time": tl.node_time, "player": tl.players[tl.node_player], "mean": mean,
                             "sd": sd, "lower": mean - z * sd, "upper": mean + z * sd})

    def _centres(self, times: np.ndarray) -> np.ndarray:
        """Mean over competitors (seen so far) of their latest posterior mean at each time."""
        tl = self.timeline
        ut = np.unique(times)
        centre = np.empty(ut.size)
        ids = np.arange(tl.players.size)
        for k, t in enumerate(ut):
            node = self._node_at(ids, np.full(ids.size, t))
            seen = node >= 0
            centre[k] = self.mean[node[seen]].mean() if seen.any() else 0.0
        return centre[np.searchsorted(ut, times)]
