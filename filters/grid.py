r"""Many settings of one filter scored in one compiled pass over the games.

:func:`evaluate` runs a filter over the same games once per setting, the settings as an extra
axis of the shared run loop (:mod:`filters.batched`: ``grid_game_loop``, ``grid_site_loop``,
``grid_period_loop``), in parallel over blocks of settings (numba's ``prange``, one block per
thread at a time), and reduces each setting's one-step-ahead forecasts at once to its scores, so
no array of every setting's forecasts is built. It works for every filter through the kernels it
already supplies: a setting enters the loop only as its parameter vector ``theta()``, its
observation vector and its starting state, so the numbers are those of
``method.run(games)`` scored by :mod:`statespace.metrics`:

- ``log_loss``: :math:`-\frac{1}{n} \sum \bigl[y \log E + (1 - y) \log(1 - E)\bigr]`,
  :math:`E = P(\text{win}) + P(\text{draw}) / 2` clipped to ``[1e-15, 1 - 1e-15]``
  (:func:`statespace.model.metrics.log_loss`);
- ``log_loss_3``: :math:`-\frac{1}{n} \sum \log P(\text{observed outcome})` (each probability at
  least 1e-15), NaN when the games have draws but the forecasts never give one a chance
  (:func:`statespace.model.metrics.log_loss_3`);
- ``brier``: :math:`\frac{1}{n} \sum (E - y)^2` (:func:`statespace.model.metrics.brier`),

over the games after a ``burn_in`` share of the earliest (as :func:`filters.tuning.tune` scores
them). A setting whose forecasts are not finite scores NaN.

**Lanes.** A filter class with a lanes kernel (``_lanes_site``, :mod:`filters._lanes`: Elo without
FIDE's rules) runs instead in :func:`filters._lanes.lanes_loop`, which advances one game for a
block of settings at once, the settings the innermost axis, so that the compiler vectorises across
them; its scores equal the batched loops' within rounding (about 1e-14 relative). Settings it does
not cover (:func:`filters._lanes.lanes_usable`) take the batched loops. Measured figures:
``python benchmarks/bench_grid.py`` (``benchmarks/results/bench_grid-*.md``).

Settings that change the run's structure rather than its numbers (the kernels a filter picks,
``Elo(fide=True)``; the times, Glicko's ``period_days``; the state's shape) cannot share one
loop: :func:`evaluate` groups the settings by structure and runs one batched loop per group, so a
grid over such a setting costs a batched loop per value of it. A method that is not a
:class:`~filters.base.Filter` has no kernels to batch: its settings are scored by a Python loop
over ``run`` (:func:`evaluate_by_runs`, also the reference the tests compare against).

This module needs nothing of :mod:`filters.base`, which imports it for :meth:`Filter.grid
<filters.base.Filter.grid>`: a method is batched when it says what its loops are made of
(:func:`batchable`), and the objectives and the burn-in rule come from :mod:`filters.objectives`.

:func:`grid` is :meth:`Filter.grid <filters.base.Filter.grid>`: the Cartesian product of value
lists, one row per setting.
"""

from __future__ import annotations

import itertools
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.model import metrics
from statespace.model.ranges import ResultRangeError

from . import batched as B
from . import kernels as K
from . import _lanes as _L
from .objectives import OBJECTIVES, first_scored, resolve_objective
from .state import GameArrays

__all__ = ["evaluate", "evaluate_by_runs", "grid", "SCORES"]

#: the scores :func:`evaluate` returns, in its columns' order: the objectives of tuning
SCORES = OBJECTIVES


def batchable(method) -> bool:
    """Whether ``method``'s settings can share the batched loops: a filter, which says what its
    loops are made of (:meth:`Filter._batch_structure <filters.base.Filter._batch_structure>`);
    any other method has no kernels to batch."""
    return callable(getattr(method, "_batch_structure", None))


def _structure(method, games: Games, times_memo: dict):
    """What must be equal for settings to share one batched loop, and the observation kernels'
    triple (the filter's ``_batch_structure``); ``(None, None)``: not batchable. ``times_memo``
    keeps each distinct time axis once."""
    if not batchable(method):
        return None, None
    return method._batch_structure(games, times_memo)


def evaluate_by_runs(methods: Sequence, games: Games, burn_in: float = 0.0) -> np.ndarray:
    """``(S, 3)`` scores (:data:`SCORES`) of each method's ``run(games)`` by
    :mod:`statespace.metrics`, one run at a time (a Python loop); NaN where a run's forecasts are
    not finite or its arithmetic broke down (a :class:`~statespace.model.ranges.ResultRangeError`), as
    in the lanes of :func:`evaluate`."""
    first = first_scored(games, burn_in)
    scored = np.sort(games.order[first:])
    out = np.full((len(methods), 3), np.nan)
    y = games.score[scored]
    for s, m in enumerate(methods):
        try:
            p = m.run(games).proba[scored]
        except ResultRangeError:
            continue
        if not np.all(np.isfinite(p)):
            continue
        out[s] = [metrics.log_loss(y, p), metrics.log_loss_3(y, p), metrics.brier(y, p)]
    return out


def evaluate(methods: Sequence, games: Games, burn_in: float = 0.0, *, lanes: bool = True) -> np.ndarray:
    """``(S, 3)`` scores (:data:`SCORES`, in that column order) of each of ``methods`` (filters of
    one class, their settings resolved: see :meth:`Filter.grid`) on ``games``, the forecasts of
    the games after the ``burn_in`` share of the earliest: one batched compiled pass per group of
    settings that share a structure (see the module docstring), in parallel over settings; through
    the lanes of the filter's class where it has them (``lanes=False``: the batched loops always)."""
    if not isinstance(games, Games):
        raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
    methods = list(methods)
    first = first_scored(games, burn_in)
    out = np.full((len(methods), 3), np.nan)
    if not methods:
        return out
    groups: dict = {}
    loose = []
    memo: dict = {}
    obs = [None] * len(methods)
    for s, m in enumerate(methods):
        key, kernels = _structure(m, games, memo)
        if key is None:
            loose.append(s)
        else:
            groups.setdefault(key, []).append(s)
            obs[s] = kernels[2]
    if loose:
        out[loose] = evaluate_by_runs([methods[s] for s in loose], games, burn_in)
    for rows in groups.values():
        group = [methods[s] for s in rows]
        vectors = np.stack([obs[s] for s in rows])
        if lanes and _L.lanes_usable(group[0]):
            out[rows] = _lanes(group, vectors, games, first)
        else:
            out[rows] = _batched(group, vectors, games, first)
    return out


def _lanes(methods: list, obs: np.ndarray, games: Games, first: int) -> np.ndarray:
    """:func:`filters._lanes.lanes_loop` over ``methods`` (one structure, :func:`_structure`, whose
    class has a lanes kernel: :func:`filters._lanes.lanes_usable`); ``obs`` their observation vectors."""
    from numba import get_num_threads

    m0 = methods[0]
    for m in methods:
        m.check_games(games)
    S = len(methods)
    theta = np.ascontiguousarray(np.stack([_L.lanes_theta(m) for m in methods]), dtype=np.float64)
    prior = np.ascontiguousarray(np.stack([m.prior_row() for m in methods]), dtype=np.float64)
    g = GameArrays.of(games, None, m0.times(games), m0._reads_scores())
    starts = games.batches()
    n_draws = float(np.count_nonzero(g.score[first:] == 0.5))
    out = np.empty((S, 3))
    _L.lanes_loop(type(m0)._lanes_site, np.ascontiguousarray(obs, dtype=np.float64), prior, theta,
                  games.n_players, g.a, g.b, g.score, g.score_a, g.score_b, g.home, g.weight, starts,
                  bool(np.all(np.diff(starts) == 1)), first, n_draws,
                  _L.lane_width(S, get_num_threads()), out)
    return out


def _batched(methods: list, obs: np.ndarray, games: Games, first: int) -> np.ndarray:
    """The batched loop over ``methods``, which share one structure (:func:`_structure`); ``obs``
    their observation vectors."""
    m0 = methods[0]
    for m in methods:
        m.check_games(games)
    S = len(methods)
    obs = np.ascontiguousarray(obs, dtype=np.float64)
    # one setting's starting state: the newcomers' rows (and the shared rows), as a run starts
    levels = m0.group_levels(games)
    x0 = np.ascontiguousarray(np.stack([m.init_state(games.players, levels=levels).values for m in methods]),
                              dtype=np.float64)
    n_shared = len(m0.shared_names(levels))
    theta = np.ascontiguousarray(np.stack([m.theta_for(n_shared) for m in methods]), dtype=np.float64)
    g = GameArrays.of(games, None, m0.times(games), m0._reads_scores(), m0.home_column(games, levels))
    # the scores read the results in the loop's (time) order
    score = g.score
    derivs, forecast, _ = m0.observation_kernels()
    cls = type(m0)
    rows = x0.shape[1]
    shared = m0.shared_row(rows, n_shared)
    out = np.empty((S, 3))
    blocks = B.grid_blocks(S)
    if cls._update is not None:
        B.grid_period_loop(cls._predict, cls._proba, cls._update, derivs, forecast, obs, x0, theta, g.a, g.b, score,
                           g.score_a, g.score_b, g.home, g.weight, g.t, games.batches(), shared, first, blocks, out)
    else:
        site, apply, rule = m0.site_kernels()
        if games.period is None:
            B.grid_game_loop(cls._predict, site, apply, derivs, forecast, cls._predict is not K.no_predict, rule,
                             obs, x0, theta, g.a, g.b, score, g.score_a, g.score_b, g.home, g.weight, g.t,
                             m0.scratch_width, shared, first, blocks, out)
        else:
            B.grid_site_loop(cls._predict, site, apply, derivs, forecast, rule, obs, x0, theta, g.a, g.b, score,
                             g.score_a, g.score_b, g.home, g.weight, g.t, games.batches(), m0.scratch_width, shared,
                             first, blocks, out)
    return out


def _values(name: str, v) -> list:
    """A setting's values as a list (one value stands for a list of one)."""
    if isinstance(v, (str, bytes)) or np.ndim(v) == 0:
        return [v.item() if isinstance(v, np.generic) else v]
    values = [x.item() if isinstance(x, np.generic) else x for x in np.asarray(v, dtype=object).ravel()]
    if not values:
        raise ValueError(f"grid: no values given for {name!r}")
    return values


def grid(method, games: Games, *, objective: str | None = None, burn_in: float = 0.0,
         **values) -> pd.DataFrame:
    """Scores of every setting of the Cartesian product of ``values`` (``name=[v1, v2, ...]``;
    one value: that value), the method's other settings kept: a DataFrame, one row per setting in
    the product's order (the last name varies fastest), columns the settings' names then
    ``log_loss``, ``log_loss_3`` (left out when it is NaN for every setting: the games have draws
    and the method never forecasts one) and ``brier`` (see the module docstring). ``objective``
    (default :func:`filters.tuning.default_objective`) names the score ``df.attrs["best"]`` (the
    best setting, a dict) is chosen by; ``df.attrs["objective"]`` says which.

    Settings the method learns from the games (TrueSkill's ``draw_probability=None``) are fixed
    on ``games`` first, as :func:`filters.tuning.tune` does. An unknown name or a value out of
    its range is the ``ValueError`` the method's own constructor raises for it."""
    if not isinstance(games, Games):
        raise TypeError(f"expected statespace.Games, got {type(games).__name__}")
    if not values:
        raise ValueError(f"{method.name}: grid needs at least one setting with values, e.g. k=[16, 32]")
    first_scored(games, burn_in)
    resolved = getattr(method, "resolved", None)
    if callable(resolved):
        method = resolved(games)
    objective = resolve_objective(method, objective, games)
    names = list(values)
    lists = [_values(n, values[n]) for n in names]
    combos = list(itertools.product(*lists))
    methods = []
    for combo in combos:
        setting = dict(zip(names, combo))
        try:  # the method's own checks: unknown names and values out of range
            methods.append(method.with_params(**setting))
        except (TypeError, ValueError) as e:
            raise type(e)(f"grid setting {setting}: {e}") from None
    scores = evaluate(methods, games, burn_in)
    df = pd.DataFrame(combos, columns=names)
    for j, name in enumerate(SCORES):
        if name == "log_loss_3" and np.all(np.isnan(scores[:, j])):
            continue
        df[name] = scores[:, j]
    j = SCORES.index(objective)
    col = scores[:, j]
    df.attrs["objective"] = objective
    df.attrs["best"] = dict(zip(names, combos[int(np.nanargmin(col))])) if np.any(np.isfinite(col)) else None
    return df


def box_grid(box: Mapping[str, tuple[float, float]], logs: Mapping[str, bool], cap: int = 128) -> list[dict]:
    """A coarse grid over the search box ``box`` (``{name: (low, high)}``) for :func:`filters.tuning.tune`
    to start from: ``m`` values a dimension, ``m`` the largest with ``m^k <= cap`` for ``k`` names
    (at least 2, at most 16), at the midpoints of ``m`` equal cells of each range (on the log scale
    where ``logs[name]``), so no point lies on a bound. Returns the settings, one dict each."""
    k = len(box)
    m = 2
    while m < 16 and (m + 1) ** k <= cap:
        m += 1
    axes = []
    for name, (lo, hi) in box.items():
        if logs[name]:
            lo, hi = np.log(lo), np.log(hi)
        mid = lo + (np.arange(m) + 0.5) * (hi - lo) / m
        axes.append(np.exp(mid) if logs[name] else mid)
    return [dict(zip(box, map(float, combo))) for combo in itertools.product(*axes)]
