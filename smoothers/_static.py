r"""What the classic static rating systems share (Colley, Massey, Keener): a rule that turns a table
of games into one number per competitor, a link that turns rating differences into win/draw/loss
probabilities, the out-of-sample fit of that link, and the fitted object.

Each system is a :class:`StaticRanking` whose kernel, :meth:`StaticRanking.rate`, maps a compact
:class:`Table` (competitors numbered ``0..n-1``) to its ratings. The systems produce ratings,
not probabilities; this module adds the link, an ordered logistic in the rating difference
:math:`x = \beta (r_a - r_b) + \gamma\, [a \text{ at home}]` (``home`` 1 when ``a`` plays at home,
0 on neutral ground):

.. math::

    P(a \text{ wins}) = \operatorname{logistic}(x - \delta), \qquad
    P(b \text{ wins}) = \operatorname{logistic}(-x - \delta), \qquad
    P(\text{draw}) = \text{the rest}

with :math:`\beta \ge 0` (a higher rating means stronger), :math:`\delta \ge 0` fitted only when
the games have draws (else :math:`\delta = 0` and no draw is forecast) and :math:`\gamma` only when
some game has a home side. In the shared model's terms (:class:`statespace.SkillModel`) this is the
logistic link at scale :math:`\alpha = 1 / \beta`, home advantage :math:`h = \gamma / \beta` and a
threshold draw margin :math:`\varepsilon = \delta / \beta`, with the rating itself as the skill
and no uncertainty (:math:`v = 0`).

Fitting the link on the games the ratings were computed from overstates its confidence (every
game has already pulled its competitors' ratings apart in the direction of its result), so the
link is fitted out of sample within the fit games: they are cut, in time order, into
``link_blocks`` consecutive blocks of (nearly) equal counts (with a ``window``, blocks as long as
the window, see :class:`StaticRanking`); for every block after the first the
ratings are computed from the fit games strictly earlier than the block's first game, and the
block's rating differences (a competitor without earlier games gets the rule's average rating,
as a newcomer does at forecast time) and results are collected. The first block has no history
and only supplies the second's. The link's parameters maximise the (weighted) likelihood of the
collected results (scipy's L-BFGS-B). The final ratings are then computed from all fit games.
No game after the fit games is read, so in :func:`statespace.compare` (frozen, or refitted block
by block in ``walk_forward`` mode) the link never sees a held-out result.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, log_expit

from statespace.data.games import Games, GamesError
from statespace.model.skillmodel import SkillModel
from statespace.model import ranges
from statespace.methods.display import Ratings, as_ratings
from statespace.model.outcome import Threshold
from filters.state import GameArrays

from .base import Smoother, SmootherFit, Timeline

__all__ = ["StaticRanking", "StaticFit", "Table", "Link", "fit_link", "components"]

#: Rating differences below this fraction of the largest rating are the rounding of the rating
#: solve (double precision, a few hundred operations), not a difference of skill.
ROUNDING = 1e-10


class Table(GameArrays):
    """A table of games with its competitors numbered ``0..n-1`` (only those with games): the
    columns of :class:`filters.state.GameArrays` in the rows' own order (``a``, ``b`` the
    competitors' numbers, ``score`` 1, 0.5, 0 for ``a``, ``score_a``, ``score_b`` points, NaN
    without scores, ``home`` 1.0 where ``a`` plays at home, ``weight``; no times), built by
    ``Table.of(games, numbers, None)`` with ``numbers`` mapping competitor ids to ``0..n-1``."""

    @cached_property
    def n(self) -> int:
        """The number of competitors (each number has a game)."""
        return int(max(self.a.max(), self.b.max())) + 1

    def pair_matrix(self, values: np.ndarray | None = None) -> sp.csr_matrix:
        """:math:`N` with :math:`N_{ij}` the sum of ``values`` (default: the weights) over games
        between :math:`i` and :math:`j`, symmetric, zero diagonal."""
        v = self.weight if values is None else values
        rows = np.concatenate([self.a, self.b])
        cols = np.concatenate([self.b, self.a])
        return sp.csr_matrix((np.concatenate([v, v]), (rows, cols)), shape=(self.n, self.n))

    def played(self) -> np.ndarray:
        """Games played by each competitor (weighted)."""
        return (np.bincount(self.a, self.weight, minlength=self.n)
                + np.bincount(self.b, self.weight, minlength=self.n))


def components(t: Table) -> tuple[int, np.ndarray]:
    """The connected components of the game graph: ``(count, label of each competitor)``."""
    return connected_components(t.pair_matrix(np.ones(t.a.size)), directed=False)


@dataclass(frozen=True)
class Link:
    r"""The fitted ordered-logistic link: ``beta`` (:math:`\beta`, per rating unit), ``gamma``
    (:math:`\gamma`, home, on the logit scale), ``delta`` (:math:`\delta`, draw threshold, logit
    scale), and the games it was fitted on."""

    beta: float
    gamma: float
    delta: float
    n_games: int
    log_loss: float
    converged: bool

    def model(self, newcomer: float) -> SkillModel:
        """The same link as a :class:`statespace.SkillModel` in rating units (a rating is a skill
        known exactly; a competitor without games gets ``newcomer``)."""
        # a link that found no signal (beta = 0) still needs a finite scale
        beta = max(self.beta, 1e-12)
        draw = Threshold(self.delta / beta) if self.delta > 0 else "none"
        return SkillModel("logistic", 1.0 / beta, newcomer, 0.0, 0.0, draw, home=self.gamma / beta)


def _nll(params, x, home, y, w, free_home, free_draw):
    """Weighted negative log-likelihood of the ordered logistic and its gradient in
    ``(beta, gamma, delta)``; ``x`` the (standardised) rating differences."""
    b, g, dl = params
    if not free_home:
        g = 0.0
    if not free_draw:
        dl = 0.0
    z = b * x + g * home
    win, loss, draw = y == 1.0, y == 0.0, y == 0.5
    ll = np.empty_like(z)
    dz = np.empty_like(z)
    dd = np.zeros_like(z)
    u = z[win] - dl
    ll[win] = log_expit(u)
    dz[win] = expit(-u)
    dd[win] = -expit(-u)
    v = -z[loss] - dl
    ll[loss] = log_expit(v)
    dz[loss] = -expit(-v)
    dd[loss] = -expit(-v)
    if draw.any():
        # sigma(z + dl) - sigma(z - dl) = sigma(z + dl) sigma(dl - z) (1 - exp(-2 dl)): stable in logs
        hi, lo = z[draw] + dl, z[draw] - dl
        ll[draw] = log_expit(hi) + log_expit(-lo) + np.log(-np.expm1(-2.0 * dl))
        dz[draw] = expit(-hi) - expit(lo)
        dd[draw] = expit(-hi) + expit(lo) + 2.0 / np.expm1(2.0 * dl)
    # elementwise sums, not BLAS dot products: a threaded BLAS call on a busy machine costs far
    # more than these short vectors are worth
    total = w.sum()
    wz = w * dz
    f = -(w * ll).sum() / total
    grad = -np.array([(wz * x).sum(), (wz * home).sum() if free_home else 0.0,
                      (w * dd).sum() if free_draw else 0.0]) / total
    return f, grad


def fit_link(diff: np.ndarray, home: np.ndarray, y: np.ndarray, w: np.ndarray, *, draws: bool,
             has_home: bool) -> Link:
    r"""Maximum-likelihood ordered-logistic link of results ``y`` (1, 0.5, 0) on rating
    differences ``diff`` and home flags ``home`` (weights ``w``). ``draws``: fit :math:`\delta`
    (else 0); ``has_home``: fit :math:`\gamma` (else 0). Without games the link is flat
    (:math:`\beta = 0`)."""
    n = diff.size
    if n == 0 or w.sum() <= 0:
        return Link(0.0, 0.0, 0.0, 0, float("nan"), False)
    # standardised differences keep the optimiser's scale the same for every rating system
    spread = float(np.sqrt(np.average(diff**2, weights=w))) or 1.0
    x = diff / spread
    free_home = bool(has_home and np.any(home[w > 0] != 0))
    free_draw = bool(draws and np.any(y[w > 0] == 0.5))
    rate = np.average(y == 0.5, weights=w) if free_draw else 0.0
    # at beta = 0, P(draw) = tanh(delta / 2)
    start = np.array([0.0, 0.0, 2.0 * np.arctanh(min(max(rate, 1e-3), 0.99)) if free_draw else 0.0])
    bounds = [(0.0, None), (None, None) if free_home else (0.0, 0.0), (1e-8, None) if free_draw else (0.0, 0.0)]
    from scipy.optimize import minimize  # here: scipy.optimize takes 0.2 s to import

    res = minimize(_nll, start, args=(x, home, y, w, free_home, free_draw), jac=True, method="L-BFGS-B",
                   bounds=bounds)
    b, g, dl = res.x
    return Link(float(b) / spread, float(g) if free_home else 0.0, float(dl) if free_draw else 0.0, int(n),
                float(res.fun), bool(res.success))


class StaticFit(SmootherFit):
    """A fitted static rating system: one rating per competitor (the same at every time) and the
    fitted link (``link``, a :class:`Link`; ``model`` is the same link as a
    :class:`statespace.SkillModel`). ``predict_proba`` maps each game's rating difference through
    the link; a competitor without fit games gets the rule's average rating. ``ratings()`` and
    ``trajectories()`` have no ``sd``: the rules give no uncertainty. ``info``: the link's
    out-of-sample data (``link_diff``, ``link_home``, ``link_result``, ``link_rows``: the
    scored games' rows in the fit table) and what the kernel reports."""

    def __init__(self, *args, link: Link, first_time: np.ndarray, **kwargs):
        super().__init__(*args, **kwargs)
        self.link = link
        self.first_time = first_time  # each node's first fit game (its node time is the last)

    def ratings(self, at=None, *, centre: bool = False) -> Ratings:
        """Leaderboard ``player``, ``mean`` (the rating), ``games``, best first. A static rating is
        the same at every time, so ``at`` changes nothing; ``centre=True`` subtracts the mean
        rating. A DataFrame (:class:`statespace.methods.display.Ratings`) whose ``attrs["summary"]`` is
        the fit's one-line summary, its caption in Jupyter."""
        tl = self.timeline
        mean = self.mean - (self.mean.mean() if centre and self.mean.size else 0.0)
        df = pd.DataFrame({"player": tl.players[tl.node_player], "mean": mean,
                           "games": self._games_count[tl.node_player]})
        df = df.sort_values(["mean", "player"], ascending=[False, True], kind="stable").reset_index(drop=True)
        return as_ratings(df, self._summary())

    def trajectories(self, *, centre: bool = False) -> pd.DataFrame:
        """``time`` (days), ``player``, ``mean``: each competitor's one rating at its first and at
        its last fit game (one row when they coincide), so that plots draw it as a flat line."""
        tl = self.timeline
        mean = self.mean - (self.mean.mean() if centre and self.mean.size else 0.0)
        first = self.first_time
        two = first < tl.node_time
        time = np.concatenate([first, tl.node_time[two]])
        node = np.concatenate([np.arange(tl.n_nodes), np.flatnonzero(two)])
        order = np.lexsort((time, node))
        return pd.DataFrame({"time": time[order], "player": tl.players[tl.node_player[node[order]]],
                             "mean": mean[node[order]]})


class StaticRanking(Smoother):
    """Base of the static rating systems: the link and its out-of-sample fit (see the module
    docstring). A subclass sets ``name``, ``newcomer`` (the rule's average rating, given to a
    competitor without games), ``needs_scores`` and implements :meth:`rate`.

    ``link_blocks``: the number of consecutive time blocks the fit games are cut into to fit the
    link out of sample (a whole number >= 2; default 5).

    ``window``: rate from the games of the last ``window`` days only (a finite number > 0; time
    units for games without dates) before the point rated from — the end of the fit games for the final ratings, a block's
    first game for the link's history — as the rules are written for one season's table; ``None``
    (default): every fit game, whatever its age. With a window the link's blocks are as long as the
    window, the last ``link_blocks - 1`` of them before the end of the fit games (each rated from
    the window before it), so that the link is fitted at the horizon it forecasts at."""

    name: ClassVar[str] = "static"
    newcomer: ClassVar[float] = 0.0
    needs_scores: ClassVar[bool] = False

    def __init__(self, *, link_blocks: int = 5, window: float | None = None):
        # at least 2: the link is fitted on every block after the first, from the ratings before it
        self.link_blocks = ranges.whole(self.name, "link_blocks", link_blocks, 2)
        self.window = None if window is None else ranges.number(self.name, "window", window, 0.0, lo_open=True)

    def _recent(self, rows: np.ndarray, days: np.ndarray, end: float) -> np.ndarray:
        """Those of ``rows`` within the last ``window`` days before ``end`` (all without a window)."""
        return rows if self.window is None else rows[days[rows] > end - self.window]

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({shown})"

    @property
    def model(self) -> SkillModel:
        """The link's form before fitting (logistic, unit scale, the rule's average rating as a
        newcomer's); the fitted link is ``fit(...).model``."""
        return SkillModel("logistic", 1.0, self.newcomer, 0.0, 0.0, "none")

    def times(self, games: Games) -> np.ndarray:
        """Each game's time in days (the ratings ignore time beyond the games' order)."""
        return games.days()

    def rate(self, t: Table) -> tuple[np.ndarray, dict]:
        """The kernel: ratings of ``t``'s ``n`` competitors and anything to report (a dict)."""
        raise NotImplementedError

    # ------------------------------------------------------------ checks
    def check_games(self, games: Games) -> None:
        """``ValueError`` for games this rule cannot rate: scores missing where it needs them
        (naming the columns and rows), negative weights."""
        if not isinstance(games, Games):
            raise TypeError(f"{self.name}: expected statespace.Games, got {type(games).__name__}")
        if self.needs_scores:
            if not games.has_scores:
                raise ValueError(f"{self.name}: {type(self).__name__} rates from each side's points and needs the "
                                 f"columns 'score_a' and 'score_b', which these games lack; give both columns, or use "
                                 f"a rule that needs only results (colley)")
            bad = np.flatnonzero(np.isnan(games.score_a) | np.isnan(games.score_b))
            if bad.size:
                raise ValueError(f"{self.name}: 'score_a'/'score_b' missing in rows {games.row[bad[:5]].tolist()}"
                                 f"{' ...' if bad.size > 5 else ''}")
        if np.any(games.weight < 0):
            raise ValueError(f"{self.name}: game weights must be >= 0 (column 'weight')")

    # ------------------------------------------------------------ fitting
    def _table(self, games: Games, rows: np.ndarray) -> tuple[Table, np.ndarray]:
        """The compact table of ``games``' rows ``rows`` and the competitor id of each compact id."""
        sub = games.take(rows)
        ids = np.unique(np.concatenate([sub.a, sub.b]))
        numbers = np.zeros(games.players.size, dtype=np.int64)
        numbers[ids] = np.arange(ids.size)
        return Table.of(sub, numbers, None), ids

    def _ratings_of(self, games: Games, rows: np.ndarray) -> tuple[np.ndarray, dict]:
        """Ratings of every competitor of ``games`` (the ``newcomer`` rating for those without games
        among ``rows``) from the games ``rows``."""
        full = np.full(games.players.size, float(self.newcomer))
        rows = rows[games.weight[rows] > 0]  # a game of weight 0 rates nobody
        if rows.size == 0:
            return full, {}
        t, ids = self._table(games, rows)
        try:
            r, info = self.rate(t)
        except RuntimeError as exc:
            if "singular" not in str(exc):
                raise
            # the rules' systems are non-singular for any positive weights in exact arithmetic: only
            # weights too far apart for double precision make SuperLU's factor singular
            heaviest = int(rows[np.argmax(games.weight[rows])])
            raise GamesError(f"{self.name}: the rating system's linear system is singular to working precision "
                             f"(SuperLU: {exc}): the game weights run from {games.weight[rows].min():.3g} to "
                             f"{games.weight[heaviest]:.3g} (row {int(games.row[heaviest])}), further apart than double "
                             f"precision resolves; scale the weights (Games.with_weights)",
                             rows=[int(games.row[heaviest])], column="weight") from None
        full[ids] = r
        return full, info

    def fit(self, games: Games) -> StaticFit:
        """Ratings from all of ``games`` and the link fitted out of sample within them (see the
        module docstring)."""
        self.check_games(games)
        n = len(games)
        order = games.order
        days = games.days()
        t_sorted = days[order]
        if self.window is None:
            k = min(self.link_blocks, n)
            cuts = np.round(np.linspace(0, n, k + 1)).astype(np.int64)
        else:  # blocks as long as the window, the last ``link_blocks - 1`` before the end are scored
            k = self.link_blocks
            starts = t_sorted[-1] - self.window * np.arange(k - 1, 0, -1) if n else np.zeros(0)
            cuts = np.concatenate([[0], np.searchsorted(t_sorted, starts, side="right"), [n]]).astype(np.int64)
        diffs, homes, ys, ws, scored = [], [], [], [], []
        for j in range(1, k):
            block = order[cuts[j]:cuts[j + 1]]
            if block.size == 0:
                continue
            # the history is the games strictly before the block's first game: a game at the same
            # time as the block's first belongs with the block, never with what rates it
            n_before = int(np.searchsorted(t_sorted, t_sorted[cuts[j]], side="left"))
            if n_before == 0:
                continue
            r, _ = self._ratings_of(games, self._recent(np.sort(order[:n_before]), days, t_sorted[cuts[j]]))
            d = r[games.a[block]] - r[games.b[block]]
            # ratings equal up to the rounding of their solve differ by noise, which would separate
            # results by its sign alone
            diffs.append(np.where(np.abs(d) <= ROUNDING * np.abs(r).max(initial=0.0), 0.0, d))
            homes.append((~games.neutral[block]).astype(float))
            ys.append(games.score[block])
            ws.append(games.weight[block])
            scored.append(block)
        cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0))
        d, h, y, w = cat(diffs), cat(homes), cat(ys), cat(ws)
        link = fit_link(d, h, y, w, draws=bool(np.any(games.score == 0.5)), has_home=bool(np.any(~games.neutral)))
        r, info = self._ratings_of(games, self._recent(np.arange(n), days, float(t_sorted[-1]) if n else 0.0))
        info = {**info, "link": link, "link_diff": d, "link_home": h, "link_result": y,
                "link_rows": cat(scored).astype(np.int64)}
        return self._fitted(games, r, link, info)

    def _fitted(self, games: Games, r: np.ndarray, link: Link, info: dict) -> StaticFit:
        played = np.bincount(np.concatenate([games.a, games.b]), minlength=games.players.size) > 0
        active = np.flatnonzero(played)
        days = games.days()
        last = np.full(games.players.size, -np.inf)
        np.maximum.at(last, games.a, days)
        np.maximum.at(last, games.b, days)
        first = np.full(games.players.size, np.inf)
        np.minimum.at(first, games.a, days)
        np.minimum.at(first, games.b, days)
        node_of = np.full(games.players.size, -1, dtype=np.int64)
        node_of[active] = np.arange(active.size)
        tl = Timeline(games.players, active.astype(np.int64), last[active], np.full(active.size, -1, dtype=np.int64),
                      np.zeros(active.size), node_of[games.a], node_of[games.b])
        return StaticFit(self, games, tl, r[active], np.zeros(active.size), link.model(float(self.newcomer)),
                         self.times, info=info, static=True, link=link, first_time=first[active])
