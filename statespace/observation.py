"""What a game tells about the skill difference: the observation model, as an object.

Every method of this package sees a game through the skill difference ``d = s_a - s_b + home``
(in the model's skill units) and one observation model. An observation model owns its
numerics, written once (as kickscore's observation objects do):

- ``loglik(y, d) -> (l, dl/dd, d2l/dd2)``: the log-likelihood of the game's record ``y`` and its
  first two derivatives in ``d`` (the EKF's linearisation, the Laplace smoother's Newton step,
  NUTS's gradient);
- ``forecast(d, var) -> (P(a wins), P(draw), P(b wins))``: the win/draw/loss forecast with a
  Gaussian uncertainty ``var`` of ``d`` integrated out;
- where exact, ``moments(y, mean, var)``: mean and variance of the tilted Gaussian
  ``N(d; mean, var) L(y | d)`` (assumed-density filtering: TrueSkill's ``v`` and ``w``).

A game's record ``y`` is three numbers: ``score`` (1, 0.5, 0: a's win, draw, loss), ``score_a``
and ``score_b`` (points or goals of each side; NaN when the table has none).

Compiled kernels reach an observation through two first-class numba functions with the fixed
signatures below, and a parameter vector (:meth:`Observation.vector`); so a new observation is
one module, and no filter or smoother changes.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from numba import types

__all__ = ["Observation", "LIK_SIG", "FORECAST_SIG", "LikFn", "ForecastFn"]

_f8 = types.float64
_p = types.float64[::1]

#: ``loglik(params, score, score_a, score_b, d) -> (l, dl/dd, d2l/dd2)``
LIK_SIG = types.UniTuple(_f8, 3)(_p, _f8, _f8, _f8, _f8)
#: ``forecast(params, d, var) -> (P(a wins), P(draw), P(b wins))``
FORECAST_SIG = types.UniTuple(_f8, 3)(_p, _f8, _f8)

LikFn = types.FunctionType(LIK_SIG)
ForecastFn = types.FunctionType(FORECAST_SIG)


class Observation:
    """Base of the observation models (:class:`statespace.Outcome`, :class:`statespace.Margin`,
    :class:`statespace.Goals`).

    A subclass sets ``name``, ``needs_scores`` (whether it reads ``score_a`` and ``score_b``),
    the compiled ``lik_kernel`` and ``forecast_kernel`` (numba functions with :data:`LIK_SIG`
    and :data:`FORECAST_SIG`) and :meth:`vector` (its numbers, in the model's skill units).
    """

    name: ClassVar[str] = "observation"
    needs_scores: ClassVar[bool] = False
    lik_kernel: ClassVar[object]
    forecast_kernel: ClassVar[object]

    def vector(self, scale: float) -> np.ndarray:  # pragma: no cover - abstract
        """Parameter vector of the compiled kernels for a model of skill ``scale``."""
        raise NotImplementedError
