r"""The steady state of the EKF's diagonal variance, where Elo's fixed gain comes from: the expected
curvature between equal competitors and the fixed point of the variance's predict-update cycle
(:mod:`filters.ekf` re-exports both; the derivation is in ``docs/notebooks/02_elo.md``).
"""

from __future__ import annotations

import math

import numpy as np

from statespace.model import numeric as nx
from statespace.model.skillmodel import SkillModel

__all__ = ["expected_curvature", "steady_state_variance"]


def expected_curvature(model: SkillModel) -> float:
    """``kappa_0 = E[-l''(0)]``: the curvature of the log-likelihood between equal competitors,
    averaged over the outcomes (``1 / (4 s^2)`` for the logistic link without draws)."""
    p = model.proba(0.0)
    kappa = 0.0
    for score, prob in zip((1.0, 0.5, 0.0), p):
        if prob > 0 and not (score == 0.5 and model.draw_code == nx.DRAW_NONE):
            _, h = model.loglik_derivs(score, 0.0)
            kappa += prob * max(-float(h), 0.0)
    return float(kappa)


def steady_state_variance(model: SkillModel, dt: float = 1.0, *, predicted: bool = False) -> float:
    r"""The fixed point of the diagonal filter's variance for a competitor who meets an equal
    opponent (the same variance, :math:`d = 0`) after every ``dt`` of drift.

    Such a competitor's variance goes through the time update :math:`u = v + q\,\Delta t`
    (:math:`q` = ``model.drift``, :math:`\Delta t` = ``dt``) and then the game's update with
    :math:`S = 2u` (the opponent's variance is also :math:`u`) and the curvature frozen at its
    expected value between equal competitors, :math:`\kappa_0` (:func:`expected_curvature`,
    :math:`1/(4 \alpha^2)` for the logistic link at scale :math:`\alpha` with draws as half a win):

    .. math::

        v = u - \frac{\kappa_0 u^2}{1 + 2\kappa_0 u}, \qquad u = v + q\,\Delta t .

    Putting :math:`v = u - q\,\Delta t` into the first equation and multiplying by
    :math:`1 + 2\kappa_0 u` gives the quadratic (the one-dimensional discrete algebraic Riccati
    equation of the filter's variance, Kalman 1960; derived step by step in
    ``docs/notebooks/02_elo.md``)

    .. math::

        \kappa_0 u^2 - 2\kappa_0\, q\Delta t\, u - q\Delta t = 0,

    whose roots have the product :math:`-q\Delta t/\kappa_0 < 0`; the positive one gives

    .. math::

        u^* = q\Delta t + \sqrt{(q\Delta t)^2 + q\Delta t/\kappa_0}, \qquad
        v^* = u^* - q\Delta t = \sqrt{(q\Delta t)^2 + q\Delta t/\kappa_0} .

    Returns :math:`v^*`, the posterior variance after each game (``predicted=False``), or
    :math:`u^*`, the predicted variance each game sees (``predicted=True``). The scalar filter's
    default variance is :math:`u^*` with ``dt = 1``: its gain :math:`u^*/(1 + 2 u^* \kappa_0)` is
    then the diagonal filter's steady gain (``tests/test_ekf.py`` runs that filter to its steady
    state). Mean reversion (``model.reversion``) is ignored: the random walk's steady state. For
    draw models whose curvature depends on the result, :math:`\kappa_0` is its expectation, so the
    fixed point is that of the expected recursion.
    """
    if model.drift <= 0:
        raise ValueError(f"the steady state needs drift > 0, got drift={model.drift!r} (with drift 0 give "
                         f"covariance='scalar' its variance=)")
    if not (isinstance(dt, (int, float, np.integer, np.floating)) and 0 < dt < math.inf):
        raise ValueError(f"steady_state_variance: dt must be a finite number > 0, got {dt!r}")
    kappa = expected_curvature(model)
    qdt = model.drift * float(dt)
    # hypot and sqrt(q) / sqrt(kappa): no overflow of (q dt)^2 or q dt / kappa before the root
    root = math.hypot(qdt, math.sqrt(qdt) / math.sqrt(kappa)) if kappa > 0 else math.inf
    return float(qdt + root if predicted else root)
