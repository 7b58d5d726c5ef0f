r"""What a game tells about the skill difference: the observation model, as an object.

Every method of this package sees a game through the skill difference :math:`d = s_a - s_b + h`
(in the model's skill units) and one observation model. An observation model owns its
numerics, written once (as kickscore's observation objects do):

- ``loglik(y, d) -> (l, dl/dd, d2l/dd2)``: the log-likelihood :math:`\ell(d) = \log L(y \mid d)`
  of the game's record :math:`y` and its first two derivatives
  :math:`\partial \ell / \partial d`, :math:`\partial^2 \ell / \partial d^2` (the EKF's
  linearisation, the Laplace smoother's Newton step, NUTS's gradient);
- ``forecast(d, var) -> (P(a wins), P(draw), P(b wins))``: the win/draw/loss forecast with a
  Gaussian uncertainty :math:`v` (``var``) of :math:`d` integrated out;
- where exact, ``moments(y, mean, var) -> (mean', var')``: mean and variance of the tilted
  Gaussian :math:`\mathcal{N}(d; m, v)\, L(y \mid d)` (assumed-density filtering: TrueSkill's
  :math:`v` and :math:`w` corrections).

A game's record :math:`y` is three numbers: ``score`` (1, 0.5, 0: a's win, draw, loss), ``score_a``
and ``score_b`` (points or goals of each side; NaN when the table has none).

Every observation has ranges (the rule of :mod:`statespace.model.ranges`): its settings are checked at
construction, and those that are lengths in skill units by :meth:`Observation.check_scale` once
the model's scale is known (:meth:`Observation.vector` calls it, so no kernel receives a setting
outside its range); the records it reads by :meth:`Observation.check_games` (a ``GamesError``
naming rows and column, or the rows dropped on request) and by every NumPy method that scores
records. Within those ranges every loop of its numerics is bounded.

Compiled kernels reach an observation through numba functions with the fixed signatures below,
declared with :func:`kernel` (``@kernel(LIK_SIG)``: compiled when first used, and the loops are
compiled for them, :mod:`statespace._runtime.jit`), and a parameter vector (:meth:`Observation.vector`);
so a new observation is one module, and no filter or smoother changes. The NumPy methods of :class:`Observation`
(:meth:`~Observation.loglik`, :meth:`~Observation.proba`, ...) are written once here, from
those kernels.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from numba import types

from statespace.model import ranges as R
from statespace._runtime.jit import entry, kernel

__all__ = ["Observation", "kernel", "LIK_SIG", "DERIVS_SIG", "FORECAST_SIG", "MOMENTS_SIG", "LikFn", "DerivsFn", "ForecastFn",
           "MomentsFn",
           "gauss_hermite"]

_f8 = types.float64
_p = types.float64[::1]
_p2 = types.float64[:, ::1]

#: ``loglik(params, score, score_a, score_b, d) -> (l, dl/dd, d2l/dd2)``
LIK_SIG = types.UniTuple(_f8, 3)(_p, _f8, _f8, _f8, _f8)
#: ``derivs(params, score, score_a, score_b, d) -> (dl/dd, d2l/dd2)``: the derivatives alone (what a
#: filter linearises with, without the cost of ``l``)
DERIVS_SIG = types.UniTuple(_f8, 2)(_p, _f8, _f8, _f8, _f8)
#: ``forecast(params, d, var) -> (P(a wins), P(draw), P(b wins))``
FORECAST_SIG = types.UniTuple(_f8, 3)(_p, _f8, _f8)
#: ``moments(params, score, score_a, score_b, mean, var) -> (mean', var')`` of the tilted
#: Gaussian; NaN where the observation has no exact moments for that record.
MOMENTS_SIG = types.UniTuple(_f8, 2)(_p, _f8, _f8, _f8, _f8, _f8)

LikFn = types.FunctionType(LIK_SIG)
DerivsFn = types.FunctionType(DERIVS_SIG)
ForecastFn = types.FunctionType(FORECAST_SIG)
MomentsFn = types.FunctionType(MOMENTS_SIG)


def gauss_hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes :math:`x_k` and weights :math:`w_k` such that, for :math:`d \sim \mathcal{N}(m, v)`,
    :math:`\mathrm{E}[f(d)] \approx \sum_k w_k f(m + \sqrt{2 v}\, x_k)`: the Gauss-Hermite rule with
    its weights divided by :math:`\sqrt{\pi}`, so that they sum to 1."""
    x, w = np.polynomial.hermite.hermgauss(n)
    return np.ascontiguousarray(x), np.ascontiguousarray(w / math.sqrt(math.pi))


# ---------------------------------------------------------------- compiled loops over games
@entry(types.void(LikFn, _p, _p, _p, _p, _p, _p2), work="score")
def _lik_loop(lik, params, score, score_a, score_b, d, out):
    for i in range(d.shape[0]):
        l, g, h = lik(params, score[i], score_a[i], score_b[i], d[i])
        out[i, 0] = l
        out[i, 1] = g
        out[i, 2] = h


@entry(types.void(ForecastFn, _p, _p, _p, _p2), work="d")
def _forecast_loop(forecast, params, d, var, out):
    for i in range(d.shape[0]):
        pw, pd, pl = forecast(params, d[i], var[i])
        out[i, 0] = pw
        out[i, 1] = pd
        out[i, 2] = pl


@entry(types.void(MomentsFn, _p, _p, _p, _p, _p, _p, _p2), work="score")
def _moments_loop(moments, params, score, score_a, score_b, mean, var, out):
    for i in range(mean.shape[0]):
        m, v = moments(params, score[i], score_a[i], score_b[i], mean[i], var[i])
        out[i, 0] = m
        out[i, 1] = v


def _flat(x) -> np.ndarray:
    """A C-contiguous, writeable float64 vector (the compiled loops' signature), copied only if needed."""
    return np.require(np.asarray(x, dtype=float).reshape(-1), requirements=["C", "W"])


class Observation:
    """Base of the observation models (:class:`statespace.Outcome`, :class:`statespace.Margin`,
    :class:`statespace.Goals`).

    A subclass has a ``name``, ``needs_scores`` (whether it reads ``score_a`` and ``score_b``),
    the compiled ``lik_kernel``, ``derivs_kernel`` and ``forecast_kernel`` (numba functions with
    :data:`LIK_SIG`, :data:`DERIVS_SIG` and :data:`FORECAST_SIG`, stored as ``staticmethod`` so that instance access returns the
    compiled function itself), optionally ``moments_kernel`` (:data:`MOMENTS_SIG`, where the
    tilted moments are exact), all named in its class statement (:meth:`__init_subclass__`) or
    set in its body, and :meth:`vector` (its numbers, in the model's skill units).
    Subclasses are frozen dataclasses: immutable, compared and hashed by their parameters.

    The NumPy methods below take arrays that broadcast against each other and ``scale``, the
    model's skill scale (what :meth:`vector` needs).
    """

    name: ClassVar[str] = "observation"
    needs_scores: ClassVar[bool] = False
    lik_kernel: ClassVar[object]
    derivs_kernel: ClassVar[object]
    forecast_kernel: ClassVar[object]
    moments_kernel: ClassVar[object] = None

    def __init_subclass__(cls, *, name: str | None = None, needs_scores: bool | None = None, loglik=None,
                          derivs=None, forecast=None, moments=None, **kwargs) -> None:
        """What a subclass is, said once in its class statement::

            @dataclass(frozen=True)
            class Goals(Observation, name="goals", needs_scores=True,
                        loglik=goals_loglik, derivs=goals_derivs, forecast=goals_forecast):

        sets ``name``, ``needs_scores``, ``lik_kernel``, ``derivs_kernel``, ``forecast_kernel`` and
        ``moments_kernel`` (a kernel as a ``staticmethod``); what is not given is inherited, or set
        in the class body."""
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.name = name
        if needs_scores is not None:
            cls.needs_scores = needs_scores
        for attr, fn in (("lik_kernel", loglik), ("derivs_kernel", derivs), ("forecast_kernel", forecast),
                         ("moments_kernel", moments)):
            if fn is not None:
                setattr(cls, attr, staticmethod(fn))

    def vector(self, scale: float) -> np.ndarray:  # pragma: no cover - abstract
        """Parameter vector of the compiled kernels for a model of skill ``scale``."""
        raise NotImplementedError

    def symbolic_loglik(self, d, score, score_a, score_b, *, scale: float = 1.0, theta=None):
        """The per-game log-likelihood as a PyTensor graph of the skill differences ``d`` (the
        PyMC smoother's graph); an observation without one cannot be fitted by PyMC's graph."""
        raise NotImplementedError(f"{type(self).__name__} has no symbolic_loglik (its log-likelihood in "
                                  f"PyTensor), which the PyMC smoother's graph needs")

    # ------------------------------------------------------------ settings and records in range
    def check_scale(self, scale) -> float:
        """The model's ``scale`` :math:`\\alpha`, checked (:func:`statespace.model.ranges.scale`), with every
        setting this observation states in units of it (:meth:`_check_settings`); ``ValueError``
        naming the observation, the setting, its range and the value. A model calls it where it
        meets its observation; :meth:`vector` calls it too, so that no compiled kernel ever receives
        a setting outside its range."""
        alpha = R.scale(type(self).__name__, "scale", scale)
        self._check_settings(alpha)
        return alpha

    def _check_settings(self, alpha: float) -> None:
        """Raise ``ValueError`` for a setting outside its range at scale ``alpha`` (a subclass's
        settings in units of the scale; the base has none)."""

    def _problems(self, score: np.ndarray, score_a: np.ndarray, score_b: np.ndarray, alpha: float) -> list[tuple]:
        """``(column, reason, bad, shown)`` for each kind of record this observation cannot score at
        scale ``alpha``: ``bad`` a boolean mask over the records, ``shown`` what a message shows of
        each (a subclass extends the list). Here: an observation of each side's score needs finite
        ``score_a`` and ``score_b``."""
        if not self.needs_scores:
            return []
        return [(name, f"a missing or infinite {name} (each side's score must be a finite number)",
                 ~np.isfinite(values), values) for name, values in (("score_a", score_a), ("score_b", score_b))]

    def _check_record(self, score: np.ndarray, score_a: np.ndarray, score_b: np.ndarray, scale=1.0) -> None:
        """:class:`~statespace.data.games.GamesError` (a ``ValueError``) for records this observation cannot
        score, naming their positions, the column, the reason and the values."""
        from statespace.data.columns import GamesError

        name = type(self).__name__
        if self.needs_scores and score_a.size and np.all(np.isnan(score_a)) and np.all(np.isnan(score_b)):
            raise GamesError(f"{name} observes each side's score: give score_a and score_b", column="score_a")
        for column, why, bad, shown in self._problems(score, score_a, score_b, float(scale)):
            bad = np.asarray(bad).reshape(-1)
            if bad.any():
                at = np.flatnonzero(bad)
                values = np.asarray(shown).reshape(-1)[at[:5]].tolist()
                raise GamesError(f"{name}: {at.size} record{'s' if at.size > 1 else ''} with {why} (at position"
                                 f"{'s' if at.size > 1 else ''} {at[:5].tolist()}{', ...' if at.size > 5 else ''}: "
                                 f"{values})", rows=at.tolist(), column=column)

    def check_games(self, games, *, scale: float = 1.0, owner: str | None = None, errors: str = "raise"):
        """``games`` (a :class:`statespace.Games`) checked for this observation at the model's
        ``scale``: every record it can score and that lies in its input range (:meth:`_problems`:
        an observation of scores needs ``score_a`` and ``score_b``; :class:`~statespace.Goals` takes
        whole counts up to its :data:`~statespace.model.goals.GOALS_MAX`, :class:`~statespace.Margin`
        margins up to :data:`~statespace.model.margin.MARGIN_SCALES` scales).

        ``errors="raise"`` (default): a :class:`~statespace.data.games.GamesError` naming the method
        (``owner``) or the observation, each problem's column, reason and rows (the rows of the
        input table, :attr:`Games.row`) and the way past them; ``errors="drop"``: the games without
        those rows, with a :class:`~statespace.data.games.DroppedRowsWarning` counting and naming them
        (and the rows added to the table's ``dropped``). Returns the games to rate."""
        import warnings

        import pandas as pd

        from statespace.data.games import DROP_HINT, DroppedRowsWarning, GamesError
        from statespace.data.columns import describe_rows

        if errors not in ("raise", "drop"):
            raise ValueError(f"errors must be 'raise' or 'drop', got {errors!r}")
        who = owner or type(self).__name__
        if self.needs_scores and not games.has_scores:
            raise GamesError(f"{who}: the model observes {type(self).__name__} but the games have no 'score_a' and "
                             f"'score_b' columns (each side's points or goals)", column="score_a")
        alpha = self.check_scale(scale)
        problems = [(column, why, np.asarray(bad, dtype=bool), np.asarray(shown)) for column, why, bad, shown in
                    self._problems(games.score, games.score_a, games.score_b, alpha) if np.any(bad)]
        if not problems:
            return games
        if errors == "raise":
            parts = [f"column '{column}': {int(bad.sum())} row{'s' if bad.sum() > 1 else ''} with {why} "
                     f"({describe_rows(games.row[bad], shown[bad].tolist(), None, None)})"
                     for column, why, bad, shown in problems]
            rows = sorted(set(np.concatenate([games.row[bad] for _, _, bad, _ in problems]).tolist()))
            raise GamesError(f"{who}: games that {type(self).__name__} cannot score: " + " | ".join(parts) + DROP_HINT,
                             rows=rows, column=problems[0][0])
        invalid = np.zeros(len(games), dtype=bool)
        for _, _, bad, _ in problems:
            invalid |= bad
        if invalid.all():
            raise GamesError(f"{who}: no games left after dropping the rows {type(self).__name__} cannot score")
        listed = [(int(r), column, why) for column, why, bad, _ in problems for r in games.row[bad]]
        warnings.warn(f"{who}: dropped {int(invalid.sum())} row{'s' if invalid.sum() > 1 else ''} of {len(games)} "
                      f"that {type(self).__name__} cannot score: "
                      + ", ".join(f"row {r} ({c}: {why})" for r, c, why in listed[:10])
                      + (", ..." if len(listed) > 10 else ""), DroppedRowsWarning, stacklevel=2)
        kept = games.take(np.flatnonzero(~invalid))
        dropped = pd.DataFrame(listed, columns=["row", "column", "reason"])
        if games.dropped is not None and len(games.dropped):
            dropped = pd.concat([games.dropped, dropped], ignore_index=True)
        return kept._replace(dropped=dropped.sort_values("row", kind="stable").reset_index(drop=True))

    def _record(self, score, d, score_a, score_b, scale=1.0):
        """Broadcast a record and ``d``; NaN for what was not given."""
        nan = np.nan
        arrays = np.broadcast_arrays(np.asarray(nan if score is None else score, dtype=float),
                                     np.asarray(d, dtype=float),
                                     np.asarray(nan if score_a is None else score_a, dtype=float),
                                     np.asarray(nan if score_b is None else score_b, dtype=float))
        self._check_record(arrays[0], arrays[2], arrays[3], scale)
        return arrays

    # ------------------------------------------------------------ NumPy methods from the kernels
    def loglik(self, score, d, score_a=None, score_b=None, *, scale: float = 1.0):
        r""":math:`(\ell,\ \partial \ell / \partial d,\ \partial^2 \ell / \partial d^2)` of each record
        at skill difference ``d`` (arrays of the broadcast shape): the compiled ``lik_kernel`` over
        every game."""
        score, d, score_a, score_b = self._record(score, d, score_a, score_b, scale)
        out = np.empty((d.size, 3))
        _lik_loop(type(self).lik_kernel, self.vector(scale), _flat(score), _flat(score_a), _flat(score_b),
                  _flat(d), out)
        return tuple(out[:, k].reshape(d.shape) for k in range(3))

    def proba(self, d, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        """Win/draw/loss forecast for a skill difference of mean ``d`` and variance ``var``:
        shape ``broadcast(d, var).shape + (3,)``, the last axis summing to 1."""
        d, var = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(var, dtype=float))
        if np.any(var < 0):
            raise ValueError("variance of the skill difference must be >= 0")
        out = np.empty((d.size, 3))
        _forecast_loop(type(self).forecast_kernel, self.vector(scale), _flat(d), _flat(var), out)
        return out.reshape(d.shape + (3,))

    def expected_score(self, d, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        r""":math:`E = P(a \text{ wins}) + P(\text{draw}) / 2`."""
        p = self.proba(d, var, scale=scale)
        return p[..., 0] + 0.5 * p[..., 1]

    def log_predictive(self, score, d, var=0.0, score_a=None, score_b=None, *, scale: float = 1.0):
        r""":math:`\log \mathrm{E}\bigl[L(y \mid x)\bigr]` for :math:`x \sim \mathcal{N}(d, v)`
        (``var``): the log-likelihood of each record with the skill uncertainty integrated out (at
        ``var = 0`` the log-likelihood itself).

        The base integrates by Gauss-Hermite quadrature (64 nodes) over the compiled
        log-likelihood; a subclass with a closed form overrides it.
        """
        score, d, score_a, score_b, var = np.broadcast_arrays(
            *self._record(score, d, score_a, score_b, scale), np.asarray(var, dtype=float))
        if np.any(var < 0):
            raise ValueError("variance of the skill difference must be >= 0")
        if not np.any(var > 0):
            return self.loglik(score, d, score_a, score_b, scale=scale)[0]
        x, w = _GH64
        sd = np.sqrt(2.0 * var)[..., None]
        nodes = d[..., None] + sd * x
        rec = [np.broadcast_to(np.asarray(r)[..., None], nodes.shape) for r in (score, score_a, score_b)]
        l = self.loglik(rec[0], nodes, rec[1], rec[2], scale=scale)[0]
        top = np.max(l, axis=-1, keepdims=True)
        return top[..., 0] + np.log(np.sum(w * np.exp(l - top), axis=-1))

    def mean_margin(self, d, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        r""":math:`\mathrm{E}[\mathtt{score\_a} - \mathtt{score\_b}]` under the forecast for a skill
        difference :math:`x \sim \mathcal{N}(d, v)`: the predictive mean of the margin, with the
        skill uncertainty integrated out. Only an observation that forecasts each side's score has
        one; the base refuses."""
        raise NotImplementedError(f"{type(self).__name__} has no mean_margin: it does not say how to forecast "
                                  f"the score's margin")

    def _moments_of_d(self, d, var) -> tuple[np.ndarray, np.ndarray]:
        """``d`` and ``var`` as float arrays of their broadcast shape, checked: finite, ``var >= 0``."""
        d, var = np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(var, dtype=float))
        if not np.all(np.isfinite(d)):
            raise ValueError("the mean of the skill difference must be finite")
        if not np.all(np.isfinite(var)) or np.any(var < 0):
            raise ValueError("the variance of the skill difference must be finite and >= 0")
        return d, var

    def moments(self, score, mean, var, score_a=None, score_b=None, *, scale: float = 1.0):
        r"""Mean and variance of the tilted Gaussian :math:`\mathcal{N}(d; m, v)\, L(y \mid d)`
        (``mean``, ``var``), normalised: exact where the subclass has a ``moments_kernel``, else
        ``NotImplementedError``."""
        if type(self).moments_kernel is None:
            raise NotImplementedError(f"{type(self).__name__} has no exact tilted-Gaussian moments; "
                                      "use its loglik derivatives (a Laplace / EKF step) instead")
        score, mean, score_a, score_b, var = np.broadcast_arrays(
            *self._record(score, mean, score_a, score_b, scale), np.asarray(var, dtype=float))
        if np.any(var < 0):
            raise ValueError("variance of the skill difference must be >= 0")
        out = np.empty((mean.size, 2))
        _moments_loop(type(self).moments_kernel, self.vector(scale), _flat(score), _flat(score_a),
                      _flat(score_b), _flat(mean), _flat(var), out)
        return out[:, 0].reshape(mean.shape), out[:, 1].reshape(mean.shape)


#: Gauss-Hermite rule of the base's predictive log-likelihood (see :meth:`Observation.log_predictive`)
_GH64 = gauss_hermite(64)
