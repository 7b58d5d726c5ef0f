"""The scores of one setting's forecasts, computed inside the compiled grid loops.

:func:`objectives` reduces a setting's one-step-ahead forecasts to the mean scores of
:mod:`statespace.model.metrics` (``log_loss``, ``log_loss_3``, ``brier``) without an array of logs;
:func:`finish_objectives` turns the sums into the scores. The batched loops (:mod:`filters.batched`)
call the first once per setting; the lanes (:mod:`filters._lanes`) keep the same sums lane by lane
and call the second.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["EPS", "LN2", "objectives", "finish_objectives"]

EPS = 1e-15  # statespace.model.metrics.EPS: probabilities clipped before their logs, as the metrics do


#: the running products of :func:`objectives` are folded into their logs below this (each factor is at
#: least about EPS, so a product never underflows)
_FOLD = 1e-200


@njit(cache=True)
def objectives(out_p, score, first, out, s):
    """The mean scores of the forecasts ``out_p`` (time order) of games ``first:``, written to
    ``out[s]``: :func:`statespace.model.metrics.log_loss`, ``log_loss_3`` and ``brier`` of those games.

    - log loss of the expected score ``E = P(win) + P(draw) / 2``, clipped to ``[EPS, 1 - EPS]``:
      ``-[y log E + (1 - y) log(1 - E)]``;
    - three-outcome log loss ``-log P(observed)``, each probability at least ``EPS``; NaN when the
      scored games have a draw but no forecast gives draws a chance;
    - Brier score ``(E - y)^2``.

    A sum of logs is the log of a product: the factors of each loss are multiplied and the running
    product is folded into its log only when it falls below :data:`_FOLD`, so a game costs a few
    multiplications rather than logs (which would cost more than the filter's own update). A draw
    contributes ``0.5 log(E (1 - E))`` (its own product). Non-finite forecasts give NaN (the
    metrics refuse them)."""
    n = out_p.shape[0]
    log_win = 0.0  # sum of log E for wins, log(1 - E) for losses
    prod_win = 1.0
    log_draw = 0.0  # sum of log(E (1 - E)) for draws
    prod_draw = 1.0
    log_obs = 0.0  # sum of log P(observed)
    prod_obs = 1.0
    br = 0.0
    check = 0.0
    n_draws = 0.0
    most_draw = 0.0  # the largest forecast of a draw
    for g in range(first, n):
        pw = out_p[g, 0]
        pd = out_p[g, 1]
        pl = out_p[g, 2]
        check += pw + pd + pl  # NaN or inf once any forecast is
        most_draw = max(most_draw, pd)
        y = score[g]
        e = pw + 0.5 * pd
        br += (e - y) * (e - y)
        ec = min(max(e, EPS), 1.0 - EPS)
        # indicators of a win, a loss and a draw (y is 1, 0 or 0.5) as numbers, so that each factor
        # is selected by arithmetic (products with exact zeros and ones), not by branches the
        # results' random order would mispredict
        iw = max(2.0 * y - 1.0, 0.0)
        il = max(1.0 - 2.0 * y, 0.0)
        idr = 1.0 - iw - il
        n_draws += idr
        prod_win *= iw * ec + il * (1.0 - ec) + idr
        prod_draw *= idr * (ec * (1.0 - ec)) + (1.0 - idr)
        prod_obs *= min(max(iw * pw + il * pl + idr * pd, EPS), 1.0)
        if prod_win < _FOLD:
            log_win += math.log(prod_win)
            prod_win = 1.0
        if prod_draw < _FOLD:
            log_draw += math.log(prod_draw)
            prod_draw = 1.0
        if prod_obs < _FOLD:
            log_obs += math.log(prod_obs)
            prod_obs = 1.0
    finish_objectives(log_win + math.log(prod_win), log_draw + math.log(prod_draw), log_obs + math.log(prod_obs),
                      br, check, n_draws, most_draw, n - first, out, s)


#: ln 2, to turn a binary exponent into a natural log
LN2 = math.log(2.0)


@njit(cache=True, inline="always")
def finish_objectives(log_win, log_draw, log_obs, br, check, n_draws, most_draw, m, out, s):
    """``out[s]`` from the sums over ``m`` scored games (:func:`objectives`): ``log_win`` of
    ``log E`` (wins) and ``log(1 - E)`` (losses), ``log_draw`` of ``log(E (1 - E))`` (draws),
    ``log_obs`` of ``log P(observed)``, ``br`` of ``(E - y)^2``; ``check`` the sum of every
    probability (not finite: NaN scores), ``n_draws`` and ``most_draw`` the number of draws and the
    largest forecast of one (log_loss_3 is NaN when there are draws and no forecast gives one a
    chance)."""
    if not math.isfinite(check) or m <= 0:
        out[s, 0] = np.nan
        out[s, 1] = np.nan
        out[s, 2] = np.nan
        return
    out[s, 0] = -(log_win + 0.5 * log_draw) / m
    out[s, 1] = np.nan if n_draws > 0.0 and not most_draw > 0.0 else -log_obs / m
    out[s, 2] = br / m
