r"""A Laplace smoother's fit on matches of many sides: the nodes' posterior means and variances,
each side's performance moments, the leaderboard and the trajectories.

The sides' moments are the filters' (:class:`filters.match_run.MatchRun`): ``perf_mean[s]``
:math:`= \sum_k w_k m_{n(k)}` and ``perf_var[s]`` :math:`= \sum_k w_k^2 v_{n(k)}`, each member at
its node of the match's time (the members' posterior covariance left out, as the filters leave it
out). They are **not online forecasts**: every node of a whole-history fit has read every match,
the one scored included, so scoring them scores the fit in-sample. For honest forecasts, fit on
the matches before those forecast.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pandas as pd

from statespace.data.matches import Matches
from statespace.methods.display import Ratings, as_ratings
from statespace.model.ranges import check_results
from statespace.model.ranking_forecast import RankingForecast
from statespace.model.skillmodel import SkillModel

__all__ = ["MatchSmootherFit"]

_HINT = "give a narrower prior (prior_var), a smaller drift, or shorter gaps between a competitor's matches"


class MatchSmootherFit:
    """A fitted smoother on matches: ``method``, ``matches``, ``timeline`` (the nodes:
    :class:`smoothers._timeline.Timeline`; its ``game_a``, ``game_b`` are the node pairs the matches
    couple), ``node`` (each member's node), ``mean``, ``var`` (per node), ``cov`` (the nodes'
    covariance when formed, else ``None`` or a :class:`smoothers._sparse_factor.SparseCovariance`),
    ``model`` (the fitted drift), ``info`` and ``static`` (one node per competitor), and each side's
    ``perf_mean``, ``perf_var`` (module docstring: in-sample, not online forecasts); ``forecast`` /
    :meth:`match_forecast` say which ranking observation they mean. A fit whose ratings or sds lie
    beyond :data:`statespace.model.ranges.RESULT_SCALES` scales of the prior mean is a
    :class:`statespace.model.ranges.ResultRangeError`."""

    def __init__(self, method, matches: Matches, mt, mean, var, model: SkillModel, observation, *,
                 info: dict | None = None, cov=None, static: bool = False):
        self.method = method
        self.matches = matches
        self.timeline = mt.tl
        self.node = mt.node
        self.mean = np.asarray(mean, dtype=float)
        self.var = np.asarray(var, dtype=float)
        self.model = model
        self.cov = cov
        self.info = info or {}
        self.static = bool(static)
        self._observation = observation
        tl = self.timeline
        check_results(getattr(method, "name", "smoother"), tl.players[tl.node_player], self.mean,
                      np.sqrt(np.maximum(self.var, 0.0)), alpha=model.scale, centre=model.prior_mean, hint=_HINT)
        w = np.asarray(matches.weight, dtype=float)
        side_of = np.repeat(np.arange(matches.n_sides), np.diff(matches.side_ptr))
        self.perf_mean = np.bincount(side_of, w * self.mean[self.node], matches.n_sides)
        self.perf_var = np.bincount(side_of, w * w * np.maximum(self.var[self.node], 0.0), matches.n_sides)
        self._count = np.bincount(np.asarray(matches.member), minlength=tl.players.size)
        last = np.full(tl.players.size, -1, dtype=np.int64)
        last[tl.node_player] = np.arange(tl.n_nodes)
        self._last = last

    def __repr__(self) -> str:
        return f"MatchSmootherFit({self.method!r}, {self.matches!r})"

    @property
    def forecast(self) -> RankingForecast:
        return self.match_forecast()

    def match_forecast(self) -> RankingForecast:
        """The ranking observation the fit's likelihood and side moments mean, in model units
        (:mod:`smoothers._laplace_match_obs`)."""
        return self._observation.forecast()

    def ratings(self, *, centre: bool = False, level: float = 0.9) -> Ratings:
        """Leaderboard at each competitor's last match: ``player``, ``mean``, ``sd``, ``lower`` /
        ``upper`` (a central ``level`` band), ``matches`` played; best first. ``centre=True``
        subtracts the mean over competitors."""
        tl = self.timeline
        played = self._last >= 0
        node = self._last[played]
        mean = self.mean[node]
        if centre:
            mean = mean - mean.mean()
        sd = np.sqrt(np.maximum(self.var[node], 0.0))
        z = NormalDist().inv_cdf(0.5 + level / 2)
        df = pd.DataFrame({"player": tl.players[played], "mean": mean, "sd": sd, "lower": mean - z * sd,
                           "upper": mean + z * sd, "matches": self._count[played]})
        df = df.sort_values(["mean", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)
        return as_ratings(df, f"{self.method!r} · {self.matches.n_matches:,} matches · {int(df.shape[0]):,} "
                              f"competitors")

    def trajectories(self, *, level: float = 0.9) -> pd.DataFrame:
        """Long table of every node: ``time`` (the smoother's unit: days over ``period_days``),
        ``player``, ``mean``, ``sd``, ``lower``, ``upper``."""
        tl = self.timeline
        sd = np.sqrt(np.maximum(self.var, 0.0))
        z = NormalDist().inv_cdf(0.5 + level / 2)
        return pd.DataFrame({"time": tl.node_time, "player": tl.players[tl.node_player], "mean": self.mean,
                             "sd": sd, "lower": self.mean - z * sd, "upper": self.mean + z * sd})
