r"""Scores of probabilistic forecasts of game results.

Every function takes the observed ``score`` :math:`y` (1, 0.5, 0 for a win, draw, loss of ``a``)
and the forecast ``proba``: an (n, 3) array of win/draw/loss probabilities, or an (n,) array of
expected scores :math:`E = P(\text{win}) + P(\text{draw}) / 2`.

- :func:`log_loss` and :func:`brier` score the expected score against the result, with a draw
  as the target 0.5: :math:`-\bigl[y \log E + (1 - y) \log(1 - E)\bigr]` and :math:`(E - y)^2`.
  This makes figures comparable with published tables for Elo and Glicko, whose forecasts are
  expected scores.
- :func:`log_loss_3` is the three-outcome log loss :math:`-\log P(\text{observed outcome})`, for
  methods that forecast draws.
- :func:`accuracy`: the share of correct calls; with a band ``(0.45, 0.55)`` an expected score
  inside the band calls a draw, otherwise at 0.5 over decisive games only.
- :func:`calibration_table` and :func:`paired_difference` (a paired standard error for the
  difference of two methods on the same games).

Score forecasts (models that observe each side's score, :class:`statespace.Margin` and
:class:`statespace.Goals`) are scored from the predictive distribution of the skill difference,
its ``mean`` and ``var`` per game (``fitted.predict_diff(games)``, ``run.diff_moments``):

- :func:`score_log_density`: the log predictive density of the observed ``score_a``/``score_b``;
- :func:`margin_rmse`: the root mean squared error of the observed margin ``score_a - score_b``
  against its predictive mean.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.model.observation import Observation

__all__ = ["expected_score", "log_loss", "brier", "log_loss_3", "accuracy", "calibration_table",
           "paired_difference", "score_log_density", "margin_rmse", "EPS"]

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
    r""":math:`E = P(\text{win}) + P(\text{draw}) / 2` of an (n, 3) forecast (an (n,) array is
    returned as is)."""
    proba = np.asarray(proba, dtype=float)
    if proba.ndim == 2:
        if proba.shape[1] != 3:
            raise ValueError(f"expected (n, 3) win/draw/loss forecasts, got shape {proba.shape}")
        return proba[:, 0] + 0.5 * proba[:, 1]
    return proba


def log_loss(score, proba, *, per_game: bool = False):
    r"""Mean binary log loss of the expected score, a draw counting as the target 0.5 (nats):
    :math:`-\frac{1}{n} \sum_g \bigl[y_g \log E_g + (1 - y_g) \log(1 - E_g)\bigr]`."""
    score, proba = _check(score, proba)
    e = np.clip(expected_score(proba), EPS, 1 - EPS)
    loss = -(score * np.log(e) + (1 - score) * np.log(1 - e))
    return loss if per_game else float(loss.mean())


def brier(score, proba, *, per_game: bool = False):
    """Mean squared error of the expected score: :math:`(E - y)^2`."""
    score, proba = _check(score, proba)
    loss = (expected_score(proba) - score) ** 2
    return loss if per_game else float(loss.mean())


def log_loss_3(score, proba, *, per_game: bool = False):
    r"""Three-outcome log loss :math:`-\log P(\text{observed outcome})` (needs (n, 3) forecasts).

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
    """Share of games called right from the expected score :math:`E`.

    With ``band=(lo, hi)`` (default 0.45/0.55) the call is a win for ``a`` when :math:`E >`
    ``hi``, a loss when :math:`E <` ``lo`` and a draw in between; every game counts. With
    ``band=None`` the call is at 0.5 and only decisive games count (draws are left out;
    :math:`E = 0.5` scores half).
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
    r"""Mean of ``loss_a - loss_b`` over the same games, and its standard error.

    The per-game losses of two methods on the same games are strongly correlated, so the
    paired standard error :math:`\operatorname{sd}(\mathtt{loss\_a} - \mathtt{loss\_b}) / \sqrt{n}`
    is far smaller than one computed from each method's spread; a difference of more than about
    two standard errors is unlikely to be noise. Pass per-game losses (e.g. ``log_loss(..., per_game=True)``); NaNs are left out.
    """
    d = np.asarray(loss_a, dtype=float) - np.asarray(loss_b, dtype=float)
    if d.ndim != 1:
        raise ValueError("per-game losses must be one-dimensional and of equal length")
    d = d[~np.isnan(d)]
    if d.size < 2:
        return (float(d.mean()) if d.size else float("nan"), float("nan"))
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(d.size))


# ---------------------------------------------------------------- score forecasts
def _score_inputs(observation, games_or_scores, mean, var, what: str):
    """``(score, score_a, score_b, mean, var)`` as float arrays of one length, checked: an observation
    that forecasts a score, both sides' scores finite, the moments finite with ``var >= 0``."""
    if not isinstance(observation, Observation):
        raise TypeError(f"{what}: observation must be a statespace observation (Margin, Goals), "
                        f"got {type(observation).__name__}")
    if not observation.needs_scores:
        raise ValueError(f"{what}: {observation!r} forecasts win/draw/loss only, not a score; score forecasts "
                         f"come from models that observe the score (statespace.Margin, statespace.Goals)")
    if isinstance(games_or_scores, Games):
        games = games_or_scores
        if not games.has_scores:
            raise ValueError(f"{what}: the games have no 'score_a' and 'score_b' columns (each side's points "
                             f"or goals)")
        score_a, score_b, rows = games.score_a, games.score_b, games.row
    else:
        try:
            score_a, score_b = games_or_scores
        except (TypeError, ValueError):
            raise TypeError(f"{what}: give a statespace.Games with scores or a pair (score_a, score_b) of "
                            f"arrays, got {type(games_or_scores).__name__}") from None
        rows = None
    columns = {"score_a": score_a, "score_b": score_b, "mean": mean, "var": var}
    arrays = {}
    for name, value in columns.items():
        try:
            arrays[name] = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{what}: column '{name}' must hold numbers") from None
    n = arrays["score_a"].size
    for name, x in arrays.items():
        if name == "var" and x.ndim == 0:
            continue  # one variance for every game
        if x.ndim != 1 or x.size != n:
            raise ValueError(f"{what}: column '{name}' must be one-dimensional with one value per game "
                             f"({n}), got shape {x.shape}")
    arrays["var"] = np.broadcast_to(arrays["var"], (n,))
    if rows is None:
        rows = np.arange(n)
    for name, x in arrays.items():
        bad = ~np.isfinite(x)
        if name == "var":
            bad |= x < 0
        if np.any(bad):
            where = np.flatnonzero(bad)
            kind = "finite and >= 0" if name == "var" else "finite numbers"
            raise ValueError(f"{what}: column '{name}' must be {kind}; {where.size} are not (rows "
                             f"{rows[where[:5]].tolist()}{'...' if where.size > 5 else ''})")
    sa, sb = arrays["score_a"], arrays["score_b"]
    score = np.where(sa > sb, 1.0, np.where(sa < sb, 0.0, 0.5))
    return score, sa, sb, arrays["mean"], arrays["var"]


def score_log_density(observation, games_or_scores, mean, var=0.0, *, scale: float = 1.0,
                      per_game: bool = False):
    r"""Mean log predictive density of the observed scores (nats per game; higher is better):

    .. math::

        \frac{1}{n} \sum_g \log \mathrm{E}\bigl[L(\mathtt{score\_a}_g, \mathtt{score\_b}_g \mid x)\bigr],
        \qquad x \sim \mathcal{N}(m_g, v_g),

    the observation's likelihood with the Gaussian uncertainty of the skill difference (mean
    :math:`m_g`, variance :math:`v_g`) integrated out
    (:meth:`statespace.Observation.log_predictive`: for :class:`~statespace.Margin` the closed
    form :math:`\log \mathcal{N}(y;\ m,\ \sigma^2 + v)`, :math:`y` = ``score_a - score_b``, with
    :math:`\sigma` the margin's ``sd``; for :class:`~statespace.Goals`
    the log of the joint Poisson probability of both counts averaged over ``x``, by Gauss-Hermite
    quadrature). It is the logarithmic score of the forecast distribution of the score (Gneiting
    and Raftery 2007, "Strictly proper scoring rules, prediction, and estimation", JASA 102): a
    density of the margin for Margin, a probability of the pair of counts for Goals, so values of
    the two observations are not on one scale.

    ``games_or_scores``: a :class:`statespace.Games` with ``score_a`` and ``score_b``, or a pair
    ``(score_a, score_b)`` of arrays; ``mean``, ``var``: the predictive moments of each game's
    skill difference (home advantage included; ``fitted.predict_diff(games)`` or
    ``run.diff_moments``); ``scale``: the model's skill scale (Goals reads it). ``per_game=True``
    returns each game's log density. A missing or non-finite score, mean or variance (or a negative
    variance) is a ``ValueError`` naming the column and rows; an observation that forecasts no
    score (:class:`~statespace.Outcome`) is a ``ValueError``.
    """
    score, sa, sb, mean, var = _score_inputs(observation, games_or_scores, mean, var, "score_log_density")
    dens = observation.log_predictive(score, mean, var, sa, sb, scale=scale)
    return dens if per_game else float(dens.mean())


def margin_rmse(observation, games_or_scores, mean, var=0.0, *, scale: float = 1.0, per_game: bool = False):
    r"""Root mean squared error of the observed margin :math:`y` = ``score_a - score_b`` against
    its predictive mean (points or goals):

    .. math::

        \sqrt{\frac{1}{n} \sum_g \bigl(y_g - \mathrm{E}[y_g]\bigr)^2}, \qquad
        \mathrm{E}[y_g] = \mathtt{observation.mean\_margin}(m_g, v_g)

    (:meth:`statespace.Observation.mean_margin`: the mean :math:`m_g` itself for
    :class:`~statespace.Margin`, :math:`2 e^{\eta_0 + c^2 v / 2} \sinh(c\, m)` with
    :math:`c = 1 / (2 \alpha)` and :math:`\eta_0` the ``base`` for :class:`~statespace.Goals`).
    Arguments as :func:`score_log_density`; ``per_game=True`` returns each game's squared error
    :math:`\bigl(y_g - \mathrm{E}[y_g]\bigr)^2` (the RMSE is the square root of their mean, and
    :func:`paired_difference` of two methods' squared errors compares their mean squared errors).
    """
    _, sa, sb, mean, var = _score_inputs(observation, games_or_scores, mean, var, "margin_rmse")
    err = (sa - sb) - observation.mean_margin(mean, var, scale=scale)
    sq = err * err
    return sq if per_game else float(np.sqrt(sq.mean()))
