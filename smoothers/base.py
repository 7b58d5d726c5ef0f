r"""What every smoother shares: the whole-history layout of the random-walk model, and the
fitted interface (the same face as the filters': ``predict_proba``, ``ratings``, ``trajectories``).

The layout (its nodes built in :mod:`smoothers._timeline`): one skill variable per competitor
and distinct time at which it plays (a "node"; with rating periods, per period). Consecutive nodes of a competitor are linked by the model's
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

from typing import ClassVar

import numpy as np
import pandas as pd
from numba import njit

from statespace.data.games import Games
from statespace.model.skillmodel import SkillModel
from statespace.methods.display import FittedDisplay, Ratings, as_ratings
from statespace.model.ranges import check_results
from statespace.methods.seen import warn_seen
from statespace.methods.settings import Settings

from ._timeline import Timeline, extend_timeline, resumable, timeline

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


#: what a :class:`statespace.model.ranges.ResultRangeError` of a fit suggests
_RESULTS_HINT = ("give a narrower prior (prior_var), a smaller drift, smaller game weights (Games.with_weights), or "
                 "shorter gaps between a competitor's games")
#: what a warning about forecasts of fitted games offers instead
_HONEST = ("A smoother's fit has no honest forecasts of its own games (every node has read every game): to score "
           "held-out games use statespace.compare(..., mode='walk_forward'), which refits on the games before each "
           "block, or fit on the games before those to forecast.")


class SmootherFit(FittedDisplay):
    """A fitted smoother: posterior means and variances (and optionally draws) of every node.

    Attributes: ``method``, ``games``, ``timeline``, ``mean``, ``var`` (per node), ``draws``
    (``(n_draws, n_nodes)`` or ``None``), ``cov`` (the nodes' full covariance, or ``None``),
    ``model`` (the :class:`SkillModel` with the fitted drift and prior), ``info`` (a dict of fit
    diagnostics), ``time_base`` (the fitted games' :attr:`statespace.Games.time_base`: games on the
    other base are refused, and so are games without rating periods after a fit on games with them,
    or the reverse, as times count periods with them and days without). A fit whose ratings or sds
    lie beyond :data:`statespace.model.ranges.RESULT_SCALES` scales from the prior mean is a
    :class:`statespace.model.ranges.ResultRangeError`, not a fit. Forecasts use the covariance of the two nodes when it is known (it
    matters when the common level is loosely pinned, e.g. a static fit with a flat prior).

    ``static=True`` (a fit without dynamics: one node per competitor, the same skill at every
    time) forecasts a known competitor from its node whatever the game's time, also before the
    first fitted game; otherwise a competitor has no node before its first game and starts
    there from the prior.

    In Jupyter a fit shows itself as its one-line summary (the smoother with its settings, games,
    competitors, span) above its leaderboard's best competitors; ``plot(players=...)`` draws
    their trajectories (:class:`statespace.methods.display.FittedDisplay`).
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
        check_results(getattr(method, "name", "smoother"), tl.players[tl.node_player], self.mean,
                      np.sqrt(np.maximum(self.var, 0.0)), alpha=model.scale, centre=model.prior_mean, hint=_RESULTS_HINT)

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
        """``ValueError`` naming both when ``games`` are on another time base than the fitted games,
        or have rating periods where they had none (or the reverse)."""
        name = getattr(self.method, "name", "smoother")
        games.check_time_base(self.time_base, name)
        if (self.games.period is None) != (games.period is None):
            fitted = "with" if self.games.period is not None else "without"
            given = "with" if games.period is not None else "without"
            raise ValueError(f"{name}: fitted on games {fitted} rating periods but given games {given} (times count "
                             f"rating periods with them and days without); group the whole table with "
                             f"Games.with_periods(...) before splitting")

    def _warn_seen(self, games: Games, what: str) -> None:
        if isinstance(games, Games):
            self._check_time_base(games)
            warn_seen(f"{getattr(self.method, 'name', 'smoother')}: {what}", self.games, games, _HONEST, stacklevel=4)

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
        the probability is averaged over draws.

        These are honest forecasts of games played after the fitted games. Games inside the fitted
        span (dated before the last fitted game, or the fitted games themselves at that time) are
        forecast from nodes that have read their results: :class:`statespace.SeenGamesWarning`,
        naming the honest alternative (see :mod:`statespace.methods.seen`)."""
        self._warn_seen(games, "predict_proba")
        if self.draws is None:
            return self.model.proba(*self._predict_diff(games))
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
            v = \frac{1}{K} \sum_k u_k + \frac{1}{K} \sum_k (d_k - m)^2.

        Games inside the fitted span warn as in :meth:`predict_proba`."""
        self._warn_seen(games, "predict_diff")
        return self._predict_diff(games)

    def _predict_diff(self, games: Games) -> tuple[np.ndarray, np.ndarray]:
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
        A DataFrame (:class:`statespace.methods.display.Ratings`) whose ``attrs["summary"]`` is the
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
