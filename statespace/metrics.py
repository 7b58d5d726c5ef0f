"""Scores of probabilistic forecasts of game results.

Every function takes the observed ``score`` (1, 0.5, 0 for a win, draw, loss of ``a``) and the
forecast ``proba``: an (n, 3) array of win/draw/loss probabilities, or an (n,) array of expected
scores ``E = P(win) + P(draw) / 2``.

- :func:`log_loss` and :func:`brier` score the expected score against the result, with a draw
  as the target 0.5: ``-[y log E + (1 - y) log(1 - E)]`` and ``(E - y)^2``. This makes figures
  comparable with published tables for Elo and Glicko, whose forecasts are expected scores.
- :func:`log_loss_3` is the three-outcome log loss ``-log P(observed outcome)``, for methods
  that forecast draws.
- :func:`accuracy`: the share of correct calls; with a band ``(0.45, 0.55)`` an expected score
  inside the band calls a draw, otherwise at 0.5 over decisive games only.
- :func:`calibration_table` and :func:`paired_difference` (a paired standard error for the
  difference of two methods on the same games).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["expected_score", "log_loss", "brier", "log_loss_3", "accuracy", "calibration_table",
           "paired_difference", "EPS"]

#: Probabilities are clipped to [EPS, 1 - EPS] before taking logs.
EPS = 1e-15


def _check(score, proba) -> tuple[np.ndarray, np.ndarray]:
    score = np.asarray(score, dtype=float)
    proba = np.asarray(proba, dtype=float)
    if score.ndim != 1:
        raise ValueError("score must be one-dimensional")
    if proba.shape[0] != score.shape[0]:
        raise ValueError(f"{proba.shape[0]} forecasts for {score.shape[0]} results")
    if not np.all(np.isin(score, (0.0, 0.5, 1.0))):
        raise ValueError("scores must be 0, 0.5 or 1")
    if np.any(~np.isfinite(proba)) or np.any(proba < -1e-12) or np.any(proba > 1 + 1e-12):
        bad = np.flatnonzero(np.any(~np.isfinite(np.atleast_2d(proba.T).T) | (np.atleast_2d(proba.T).T < 0)
                                    | (np.atleast_2d(proba.T).T > 1), axis=-1))
        raise ValueError(f"forecasts must be probabilities in [0, 1]; rows {bad[:5].tolist()} are not")
    return score, proba


def expected_score(proba) -> np.ndarray:
    """``P(win) + P(draw) / 2`` of an (n, 3) forecast (an (n,) array is returned as is)."""
    proba = np.asarray(proba, dtype=float)
    if proba.ndim == 2:
        if proba.shape[1] != 3:
            raise ValueError(f"expected (n, 3) win/draw/loss forecasts, got shape {proba.shape}")
        return proba[:, 0] + 0.5 * proba[:, 1]
    return proba


def log_loss(score, proba, *, per_game: bool = False):
    """Mean binary log loss of the expected score, a draw counting as the target 0.5 (nats)."""
    score, proba = _check(score, proba)
    e = np.clip(expected_score(proba), EPS, 1 - EPS)
    loss = -(score * np.log(e) + (1 - score) * np.log(1 - e))
    return loss if per_game else float(loss.mean())


def brier(score, proba, *, per_game: bool = False):
    """Mean squared error of the expected score: ``(E - y)^2``."""
    score, proba = _check(score, proba)
    loss = (expected_score(proba) - score) ** 2
    return loss if per_game else float(loss.mean())


def log_loss_3(score, proba, *, per_game: bool = False):
    """Three-outcome log loss ``-log P(observed outcome)`` (needs (n, 3) forecasts).

    Returns NaN when the data have draws but the forecasts give them probability 0 everywhere
    (the method does not model draws, so this score does not apply to it).
    """
    score, proba = _check(score, proba)
    if proba.ndim != 2 or proba.shape[1] != 3:
        raise ValueError("log_loss_3 needs (n, 3) win/draw/loss forecasts")
    if np.any(score == 0.5) and not np.any(proba[:, 1] > 0):
        return np.full(score.shape, np.nan) if per_game else float("nan")
    col = np.where(score == 1.0, 0, np.where(score == 0.5, 1, 2))
    p = np.clip(proba[np.arange(score.size), col], EPS, 1.0)
    loss = -np.log(p)
    return loss if per_game else float(loss.mean())


def accuracy(score, proba, *, band: tuple[float, float] | None = (0.45, 0.55), per_game: bool = False):
    """Share of games called right from the expected score ``E``.

    With ``band=(lo, hi)`` (default 0.45/0.55) the call is a win for ``a`` when ``E > hi``, a
    loss when ``E < lo`` and a draw in between; every game counts. With ``band=None`` the call
    is at 0.5 and only decisive games count (draws are left out; ``E = 0.5`` scores half).
    """
    score, proba = _check(score, proba)
    e = expected_score(proba)
    if band is None:
        decisive = score != 0.5
        hit = np.where(e == 0.5, 0.5, ((e > 0.5) == (score == 1.0)).astype(float))
        if per_game:
            return np.where(decisive, hit, np.nan)
        return float(hit[decisive].mean()) if decisive.any() else float("nan")
    lo, hi = band
    if not 0 <= lo <= hi <= 1:
        raise ValueError(f"band must satisfy 0 <= lo <= hi <= 1, got {band}")
    call = np.where(e > hi, 1.0, np.where(e < lo, 0.0, 0.5))
    hit = (call == score).astype(float)
    return hit if per_game else float(hit.mean())


def calibration_table(score, proba, *, bins: int = 10) -> pd.DataFrame:
    """Forecast against outcome in equal-width bins of the expected score.

    Columns: ``bin_lo``, ``bin_hi``, ``n``, ``mean_forecast``, ``mean_score`` and ``se`` (the
    standard error of ``mean_score``); empty bins are left out. A calibrated method has
    ``mean_score`` within about two ``se`` of ``mean_forecast`` in every bin.
    """
    score, proba = _check(score, proba)
    e = expected_score(proba)
    edges = np.linspace(0, 1, bins + 1)
    idx = np.clip(np.searchsorted(edges, e, side="right") - 1, 0, bins - 1)
    rows = []
    for k in range(bins):
        m = idx == k
        n = int(m.sum())
        if n == 0:
            continue
        y = score[m]
        se = float(y.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
        rows.append((edges[k], edges[k + 1], n, float(e[m].mean()), float(y.mean()), se))
    return pd.DataFrame(rows, columns=["bin_lo", "bin_hi", "n", "mean_forecast", "mean_score", "se"])


def paired_difference(loss_a, loss_b) -> tuple[float, float]:
    """Mean of ``loss_a - loss_b`` over the same games, and its standard error.

    The per-game losses of two methods on the same games are strongly correlated, so the
    paired standard error ``sd(loss_a - loss_b) / sqrt(n)`` is far smaller than one computed
    from each method's spread; a difference of more than about two standard errors is unlikely
    to be noise. Pass per-game losses (e.g. ``log_loss(..., per_game=True)``); NaNs are left out.
    """
    d = np.asarray(loss_a, dtype=float) - np.asarray(loss_b, dtype=float)
    if d.ndim != 1:
        raise ValueError("per-game losses must be one-dimensional and of equal length")
    d = d[~np.isnan(d)]
    if d.size < 2:
        return (float(d.mean()) if d.size else float("nan"), float("nan"))
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))
