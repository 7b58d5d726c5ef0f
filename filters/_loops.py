"""How a filter's kernels are driven over games: the calls into the compiled loops of
:mod:`filters.kernels` for a whole run, for one rating period and for frozen forecasts.

Functions over a filter (:class:`filters.base.Filter` calls them; this module does not import it,
so the dependency runs one way). Of the filter they read only what the loops take: its class's
kernels (``_predict``, ``_proba``, ``_update``), ``site_kernels()``, ``observation_kernels()``,
``theta_for(n)``, ``shared_row(n, k)``, ``home_column(games, levels)``, ``state_levels(state)``, ``times(games)``, ``_reads_scores()``, ``scratch_width`` and
``record_columns``. Which loop runs:

- a filter whose rating-period update is joint (``_update``, the full-covariance EKF):
  :func:`filters.kernels.period_loop`;
- games without rating periods (each game its own period): :func:`filters.kernels.game_loop`, with
  no period bookkeeping;
- otherwise the sites of a period's games summed from the pre-period state:
  :func:`filters.kernels.site_loop`.
"""

from __future__ import annotations

import numpy as np

from statespace.data.games import Games

from . import kernels as K
from .state import FilterState, GameArrays

__all__ = ["run", "period", "frozen_proba"]


def run(method, games: Games, st: FilterState, ids: np.ndarray | None,
        record: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``games`` through ``method``'s compiled loop in time order, rating period by rating period,
    from the state ``st``, which moves forward in place. ``ids`` maps the games' competitor ids to
    rows of ``st`` (None: the same). Returns each game's one-step-ahead forecast ``(n, 3)`` (input
    row order) and, with ``record``, both competitors' first ``record_columns`` state columns after
    each game in time order (else None)."""
    g = GameArrays.of(games, ids, method.times(games), method._reads_scores(),
                      method.home_column(games, method.state_levels(st)))
    n, k = len(games), method.record_columns or st.values.shape[1]
    out_p = np.empty((n, 3))
    out_post = np.empty((n, 2 * k if record else 0))
    cls = type(method)
    theta = method.theta_for(len(st.shared))
    shared = method.shared_row(st.values.shape[0], len(st.shared))
    derivs, forecast, obs = method.observation_kernels()
    site, apply, rule = method.site_kernels()
    if cls._update is not None:
        K.period_loop(cls._predict, cls._proba, cls._update, derivs, forecast, obs, st.values, st.count, st.last,
                      theta, g.a, g.b, g.score, g.score_a, g.score_b, g.home, g.weight, g.t, games.batches(), out_p,
                      out_post, shared)
    elif games.period is None:  # every game its own period: no period bookkeeping
        K.game_loop(cls._predict, site, apply, derivs, forecast, cls._predict is not K.no_predict, rule,
                    obs, st.values, st.count, st.last, theta, g.a, g.b, g.score, g.score_a, g.score_b, g.home,
                    g.weight, g.t, out_p, out_post, K.empty_scratch(st.values.shape[0], method.scratch_width),
                    shared)
    else:
        K.site_loop(cls._predict, site, apply, derivs, forecast, rule, obs, st.values, st.count,
                    st.last, theta, g.a, g.b, g.score, g.score_a, g.score_b, g.home, g.weight, g.t, games.batches(),
                    out_p, out_post, K.empty_scratch(st.values.shape[0], method.scratch_width), shared)
    if g.in_order:
        proba = out_p
    else:
        proba = np.empty_like(out_p)
        proba[g.order] = out_p
    return proba, (out_post if record else None)


def period(method, st: FilterState, ids: np.ndarray, batch: Games) -> None:
    """The games of ``batch`` as one rating period of ``method`` on the state ``st`` (changed in
    place): every game computed from the pre-period state, no time passing. ``ids`` maps the
    games' competitor ids to rows of ``st``."""
    g = GameArrays.of(batch, ids, None, method._reads_scores(), method.home_column(batch, method.state_levels(st)))
    derivs, forecast, obs = method.observation_kernels()
    cls = type(method)
    theta = method.theta_for(len(st.shared))
    if cls._update is not None:
        cls._update(derivs, obs, st.values, st.count, theta, g.a, g.b, g.score, g.score_a, g.score_b, g.home,
                    g.weight, 0, len(batch))
    else:
        site, apply, rule = method.site_kernels()
        K.period(site, apply, rule, derivs, forecast, obs, st.values, st.count, theta, g.a, g.b,
                 g.score, g.score_a, g.score_b, g.home, g.weight, 0, len(batch), np.empty((len(batch), 3)),
                 K.empty_scratch(st.values.shape[0], method.scratch_width),
                 method.shared_row(st.values.shape[0], len(st.shared)))


def frozen_proba(method, values, last, a, b, home, t, n_shared: int | None = None) -> np.ndarray:
    """Forecasts ``(n, 3)`` of games (ids ``a``, ``b``) from the state rows ``values`` without
    learning, each competitor moved forward from ``last`` to the game's time ``t`` by
    ``method``'s time update; ``n_shared``: the number of shared rows ending ``values`` (None:
    the method's without groups)."""
    cls = type(method)
    out = np.empty((a.size, 3))
    if n_shared is None:
        n_shared = len(method.shared_names())
    shared = method.shared_row(values.shape[0], n_shared)
    _, forecast, obs = method.observation_kernels()
    K.forecast_loop(cls._predict, cls._proba, forecast, obs, values, last, method.theta_for(n_shared), a, b, home, t,
                    out,
                    np.empty((2 if shared < 0 else 2 + values.shape[0] - shared, values.shape[1])), shared)
    return out
