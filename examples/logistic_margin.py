"""A new observation in one file: the score difference, logistic around the skill difference.

``LogisticMargin(s)`` observes a game through its score difference ``y = score_a - score_b``,

    y | d ~ Logistic(d, s),      density  f(y) = e^(-z) / (s (1 + e^(-z))^2),  z = (y - d) / s,

with ``d = s_a - s_b + home`` in skill units (points, as for :class:`statespace.Margin`). The
logistic has the same bell shape as ``Margin``'s Gaussian but heavier (exponential) tails:
its sd is ``pi s / sqrt(3)`` (:meth:`LogisticMargin.from_sd` matches a Gaussian's sd), and a
blow-out moves the EKF's ratings by a bounded step, since ``|dl/dd| < 1 / s``.

Everything an observation owes the package (``statespace/model/observation.py``), in closed form:

- ``l = -|z| - 2 log(1 + e^(-|z|)) - log s`` (the density is symmetric in ``z``; written with
  ``|z|`` so that no exponential overflows);
- ``dl/dd = tanh(z / 2) / s`` (positive when the margin beat the expectation: ``d`` moves up);
- ``d2l/dd2 = -2 sigma(z) (1 - sigma(z)) / s^2 = -2 e^(-|z|) / (s (1 + e^(-|z|)))^2``, with
  ``sigma`` the logistic function: always negative (log-concave), at most ``1 / (2 s^2)``;
- the forecast with ``w`` the draw half-width (a draw is ``|y| < w``; 0.5 for whole-point
  scores): ``P(a wins | d) = P(y > w) = sigma((d - w) / s)``, ``P(b wins | d) = P(y < -w) =
  sigma((-d - w) / s)``, the draw the rest; for ``d ~ N(mean, var)`` each is averaged by
  Gauss-Hermite quadrature (:func:`statespace.model.observation.gauss_hermite`), whose nodes and
  weights travel in the kernels' parameter vector.

No exact tilted-Gaussian moments exist, so the observation has no ``moments_kernel``: the
filters that moment-match (TrueSkill, Weng-Lin) are for ``Outcome``, while the EKF (one Newton
step), the Laplace smoother and NUTS need only ``l`` and its derivatives.

Run as a script, it simulates random-walk skills observed through logistic margins and scores
the unchanged :class:`filters.EKF` with three observation models of the same games, online on
the last 30%: ``LogisticMargin`` (the true model), ``Margin`` (Gaussian with the same sd) and
the win/draw/loss ``Outcome`` (the ordered logit that is this model's exact win/draw/loss
marginal, so it loses only the size of each margin), next to the forecast at the true skills::

    python examples/logistic_margin.py            # 40 teams, 8,000 games
    python examples/logistic_margin.py --quick    # 20 teams, 1,200 games
"""

from __future__ import annotations

import argparse
import functools
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

import statespace as ss
from filters import EKF
from statespace.model.observation import DERIVS_SIG, FORECAST_SIG, LIK_SIG, Observation, gauss_hermite, kernel

__all__ = ["LogisticMargin", "logistic_margin_loglik", "logistic_margin_forecast", "simulate", "main"]


# ---------------------------------------------------------------- the compiled kernels
# params = [s, draw_width, n, x_1 .. x_n, w_1 .. w_n]: the logistic scale, the draw half-width
# and a Gauss-Hermite rule of n nodes (see LogisticMargin.vector)

@njit(cache=True)
def _sigmoid(x):
    """``1 / (1 + e^(-x))`` without overflow for either sign of ``x``."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@kernel(LIK_SIG)
def logistic_margin_loglik(params, score, score_a, score_b, d):
    """``(l, dl/dd, d2l/dd2)`` of ``y = score_a - score_b`` under ``Logistic(d, s)`` (the module
    docstring has the formulas). ``score`` (win/draw/loss) is not read: the margin says more."""
    s = params[0]
    z = ((score_a - score_b) - d) / s
    e = math.exp(-abs(z))
    l = -abs(z) - 2.0 * math.log1p(e) - math.log(s)
    return l, math.tanh(0.5 * z) / s, -2.0 * e / ((s * (1.0 + e)) ** 2)


@kernel(DERIVS_SIG)
def logistic_margin_derivs(params, score, score_a, score_b, d):
    """``(dl/dd, d2l/dd2)`` of :func:`logistic_margin_loglik`, without ``l`` (what the EKF reads)."""
    _, g, h = logistic_margin_loglik(params, score, score_a, score_b, d)
    return g, h


@njit(cache=True)
def _outcome_given_d(s, w, d):
    """``(P(y > w), P(|y| < w), P(y < -w))`` at a known ``d``; the draw is evaluated at ``|d|``,
    where neither of its two terms cancels to nothing."""
    pw = _sigmoid((d - w) / s)
    pl = _sigmoid((-d - w) / s)
    if w == 0.0:
        return pw, 0.0, pl
    u = abs(d)
    return pw, _sigmoid((w - u) / s) - _sigmoid((-w - u) / s), pl


@kernel(FORECAST_SIG)
def logistic_margin_forecast(params, d, var):
    """Win/draw/loss of ``a`` for ``d ~ N(d, var)``: :func:`_outcome_given_d` averaged over the
    Gauss-Hermite nodes ``d + sqrt(2 var) x_k`` with weights ``w_k`` (summing to 1); exact
    closed form at ``var = 0``."""
    s = params[0]
    w = params[1]
    if var <= 0.0:
        return _outcome_given_d(s, w, d)
    n = int(params[2])
    sd = math.sqrt(2.0 * var)
    pw = 0.0
    pd = 0.0
    pl = 0.0
    for k in range(n):
        a, b, c = _outcome_given_d(s, w, d + sd * params[3 + k])
        wk = params[3 + n + k]
        pw += wk * a
        pd += wk * b
        pl += wk * c
    total = pw + pd + pl  # 1 up to rounding: keep the triple a distribution exactly
    return pw / total, pd / total, pl / total


# ---------------------------------------------------------------- the observation object
@functools.lru_cache(maxsize=8)
def _rule(nodes: int) -> np.ndarray:
    x, w = gauss_hermite(nodes)
    return np.concatenate([x, w])


def _number(name: str, value, *, positive: bool) -> float:
    """``value`` as a float; ``ValueError`` naming the setting unless finite and > 0 (>= 0)."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        value = float(value)
        ok = math.isfinite(value) and (value > 0 if positive else value >= 0)
    if not ok:
        raise ValueError(f"LogisticMargin: {name} must be a finite number {'> 0' if positive else '>= 0'}, "
                         f"got {value!r}")
    return value


@dataclass(frozen=True)
class LogisticMargin(Observation):
    """The score difference ``y = score_a - score_b``, logistic around the skill difference:

        y | d ~ Logistic(d, s)

    so skills are measured in points, as with :class:`statespace.Margin` (whose Gaussian has the
    same sd when ``s = sd sqrt(3) / pi``, see :meth:`from_sd`), but with heavier tails.

    Parameters
    ----------
    s:
        Scale of the logistic, in points (> 0): a single game's margin has sd ``pi s / sqrt(3)``.
    draw_width:
        Half-width of a drawn margin: the forecast calls ``|y| < draw_width`` a draw (0.5: a draw
        is ``y = 0`` with whole-point scores; 0 forbids draws).
    nodes:
        Gauss-Hermite nodes of the forecast. The integrand changes over a width ``s`` of ``d``, so
        the rule is exact to rounding while ``var`` (the variance of ``d``) is a few ``s^2`` and
        loses digits beyond: with 96 nodes the error is below 1e-9 up to ``var = 8 s^2`` and about
        3e-7 at ``16 s^2``. Raise it for very uncertain forecasts (wide priors).

    Kernel parameters (:meth:`vector`): ``[s, draw_width, nodes, x_1..x_n, w_1..w_n]``; the
    model's scale is not used (skills are in points).
    """

    s: float
    draw_width: float = 0.5
    nodes: int = 96

    name = "logistic_margin"
    needs_scores = True
    lik_kernel = staticmethod(logistic_margin_loglik)
    derivs_kernel = staticmethod(logistic_margin_derivs)
    forecast_kernel = staticmethod(logistic_margin_forecast)

    def mean_margin(self, d, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        """``E[y] = E[d] = d``: the logistic is symmetric around the skill difference (what
        ``metrics.margin_rmse`` and ``compare``'s ``margin_rmse`` column read)."""
        return np.broadcast_arrays(np.asarray(d, dtype=float), np.asarray(var, dtype=float))[0].copy()

    def __post_init__(self) -> None:
        object.__setattr__(self, "s", _number("s", self.s, positive=True))
        object.__setattr__(self, "draw_width", _number("draw_width", self.draw_width, positive=False))
        if not (isinstance(self.nodes, (int, np.integer)) and not isinstance(self.nodes, bool)
                and 1 <= self.nodes <= 400):
            raise ValueError(f"LogisticMargin: nodes must be a whole number in [1, 400], got {self.nodes!r}")
        object.__setattr__(self, "nodes", int(self.nodes))

    @classmethod
    def from_sd(cls, sd: float, **kwargs) -> "LogisticMargin":
        """The logistic margin whose sd is ``sd``: ``s = sd sqrt(3) / pi``."""
        return cls(_number("sd", sd, positive=True) * math.sqrt(3.0) / math.pi, **kwargs)

    @property
    def sd(self) -> float:
        """Standard deviation of a game's margin around ``d``: ``pi s / sqrt(3)``."""
        return math.pi * self.s / math.sqrt(3.0)

    def vector(self, scale: float) -> np.ndarray:
        return np.concatenate([[self.s, self.draw_width, float(self.nodes)], _rule(self.nodes)])


# ---------------------------------------------------------------- the worked example
@dataclass(frozen=True)
class Simulation:
    games: ss.Games
    true_d: np.ndarray  # each game's true skill difference (the oracle forecast's input)


def simulate(n_teams: int = 40, n_days: int = 400, *, s: float = 5.0, prior_sd: float = 6.0, drift: float = 0.05,
             seed: int = 0) -> Simulation:
    """Random-walk skills observed through logistic margins.

    Every team plays once a day (``n_teams // 2`` games, a random pairing, neutral ground);
    between days each skill moves by ``N(0, drift)``. A game's margin is ``d + Logistic(0, s)``
    rounded to whole points (so ``y = 0`` is a draw, about ``1 / (4 s)`` of close games), and
    its scores are ``score_a = 20 + max(y, 0)``, ``score_b = 20 + max(-y, 0)``.
    """
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, prior_sd, n_teams)
    names = np.array([f"T{i:02d}" for i in range(n_teams)])
    per_day = n_teams // 2
    n = n_days * per_day
    a = np.empty(n, np.int64)
    b = np.empty(n, np.int64)
    d = np.empty(n)
    for day in range(n_days):
        if day:
            skill += rng.normal(0.0, math.sqrt(drift), n_teams)
        pair = rng.permutation(n_teams)[: 2 * per_day].reshape(per_day, 2)
        g = slice(day * per_day, (day + 1) * per_day)
        a[g], b[g] = pair[:, 0], pair[:, 1]
        d[g] = skill[pair[:, 0]] - skill[pair[:, 1]]
    y = np.round(d + rng.logistic(0.0, s, n))
    t = np.repeat(np.arange(n_days, dtype=float), per_day)
    games = ss.Games.from_arrays(t, names[a], names[b], neutral=np.ones(n, bool),
                                 score_a=20.0 + np.maximum(y, 0.0), score_b=20.0 + np.maximum(-y, 0.0))
    return Simulation(games, d)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="The EKF with a logistic score-margin observation, against Margin "
                                            "and Outcome, on simulated logistic margins.")
    p.add_argument("--quick", action="store_true", help="20 teams, 120 days (a smoke test)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    n_teams, n_days = (20, 120) if args.quick else (40, 400)
    s, prior_sd, drift = 5.0, 6.0, 0.05
    sim = simulate(n_teams, n_days, s=s, prior_sd=prior_sd, drift=drift, seed=args.seed)
    games = sim.games

    logistic = LogisticMargin(s)
    models = {
        "LogisticMargin (true model)": logistic,
        "Margin (Gaussian, same sd)": ss.Margin(sd=logistic.sd),
        "Outcome (ordered logit)": None,
    }
    methods = {}
    for label, obs in models.items():
        if obs is None:  # win/draw/loss only: P(win) = sigma((d - 0.5) / s), the true marginal
            model = ss.SkillModel("logistic", s, 0.0, prior_sd**2, drift, draw=("threshold", 0.5))
        else:
            model = ss.SkillModel(scale=1.0, prior_mean=0.0, prior_var=prior_sd**2, drift=drift, observation=obs)
        methods[label] = EKF(model)
    table = ss.compare(methods, games, split=0.7, mode="online")
    test = table.attrs["test"]

    oracle = logistic.proba(sim.true_d[test.row])  # test.row: the held-out games' rows in the input
    for name, proba in table.attrs["proba"].items():
        if not (np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)):
            raise AssertionError(f"{name}: forecasts are not probabilities")
    print(f"{len(games):,} games of {n_teams} teams over {n_days} days; margins Logistic(d, s={s:g}) "
          f"(sd {logistic.sd:.2f}), drift {drift:g} per day")
    print(f"held out, online: the last {len(test):,} games, each forecast before it is learned\n")
    print(f"{'EKF observing':<30} {'log loss':>9} {'3-way':>9} {'Brier':>8}")
    for name, row in table.iterrows():
        print(f"{name:<30} {row['log_loss']:9.4f} {row['log_loss_3']:9.4f} {row['brier']:8.4f}")
    print(f"{'(forecast at the true skills)':<30} {ss.metrics.log_loss(test.score, oracle):9.4f} "
          f"{ss.metrics.log_loss_3(test.score, oracle):9.4f} {ss.metrics.brier(test.score, oracle):8.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
