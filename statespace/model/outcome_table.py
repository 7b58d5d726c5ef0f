r"""A win/draw/loss forecast read from a table instead of integrated per game.

An observation whose win/draw/loss probabilities depend on the skill difference through one
scalar :math:`u` (``Goals``: :math:`u = d / (2\alpha)`, half the log-ratio of the two rates) forecasts
a game with a Gaussian :math:`u \sim \mathcal{N}(\mu, s^2)` as

.. math::

    F(\mu, s) = \int f(u)\, \phi\!\left(\frac{u - \mu}{s}\right) \frac{du}{s},

an integral per game whose quadrature costs tens of evaluations of :math:`f`, each a sum over the
counts. :math:`F` is the solution of the heat equation started from :math:`f`
(:math:`\partial F / \partial (s^2 / 2) = \partial^2 F / \partial \mu^2`), smooth in both
arguments, and the same for every game of a run: so it is computed once, on a grid, and each game
reads it by interpolation, at a cost that does not depend on the quadrature.

**The grid.** In units of the width :math:`w` over which :math:`f` changes (the observation's;
``Goals``: :math:`1 / \sqrt{2 e^{\eta_0}}`): :math:`\mu` from :math:`-16 w` to :math:`16 w` in
steps of :math:`w / 16` (:data:`MU_HALF`, :data:`MU_STEPS`); :math:`s` from 0 to :math:`4 w` at
:data:`S_POINTS` points evenly spaced in :math:`t = \log(1 + 4 s^2 / w^2)`, which is dense where
:math:`F` changes fastest in :math:`s` (near 0, where :math:`F` moves like :math:`s^2`) and
sparse where it is smooth. The table holds
:math:`\log F` of each outcome (at least :data:`LOG_FLOOR`), so that a small probability keeps
its relative precision, which is what a log loss reads.

**The build** (:func:`build`): :math:`f` on a fine grid of step :math:`w / 16` (the step of
:math:`\mu`) over :math:`\pm 64 w` (:data:`FINE_POINTS` nodes), and for every :math:`s` of the
table the discrete convolution with the Gaussian by the fast Fourier transform: the transform of
:math:`f` times :math:`e^{-\omega^2 s^2 / 2}`. This is the trapezoid rule on the fine grid, whose
error on a Gaussian of width :math:`s` at least the smallest nonzero one of the table
(:math:`0.15 w`, 2.4 steps) is below :math:`e^{-2 \pi^2 2.4^2} \approx e^{-113}`;
the Gaussian of the widest :math:`s` reaches :math:`8 s = 32 w` from the table's edge, within the
fine grid's :math:`64 w`, so the circular convolution never wraps onto the table.

**The read** (:func:`lookup`): four-point Lagrange interpolation in :math:`\mu` and in :math:`t`
(error of order :math:`h^4 \partial^4 \log F`, :math:`h` a grid step; the first interval of
:math:`t` from its first four rows); the three probabilities are the exponentials normalised to
sum to 1. Where any of the sixteen points read holds a probability below :data:`P_MIN` (the
transform's absolute error leaves it too few digits), or outside the table (:math:`|\mu|` within
two steps of :math:`16 w`, or :math:`s` beyond the last interval of :math:`t`: sides thousands of
rating points apart, or an uncertainty of hundreds), the caller integrates exactly. ``benchmarks/goals_speed.py`` measures the table against
the exact integral.

Layout, after an observation's own ``n`` numbers of its parameter vector (:data:`HEADER` numbers,
then the table): ``[mu step, width, t step, channels C, log F ...]``, ``log F`` of channel ``k``
at ``mu_i``, ``s_j`` at ``(i * S_POINTS + j) * C + k``. Three channels (the probabilities) or six:
three more averages an observation needs (``Goals``: ``E[P(win) P(draw)]``, ``E[P(draw)^2]``,
``E[P(loss) P(draw)]``, for a tilt of the draws applied after averaging).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["build", "lookup", "table_length", "fine_grid", "MU_HALF", "MU_STEPS", "S_POINTS", "FINE_POINTS", "HEADER",
           "LOG_FLOOR", "P_MIN"]

#: the table's ``mu`` reaches ``MU_HALF`` widths either side of 0
MU_HALF = 16
#: steps of ``mu`` per width (the interpolation's error falls like the fourth power of the step)
MU_STEPS = 16
#: points of the table's ``s``, from 0 to 4 widths, evenly spaced in ``t = log(1 + 4 s^2 / w^2)``
S_POINTS = 49
#: nodes of the fine grid the convolution runs on: steps of a width / 16 over 64 widths either side,
#: a power of two for the transform
FINE_POINTS = 2048
#: fine steps per step of ``mu``
_FINE_PER_MU = 1
#: numbers before the table: the step of ``mu``, the width, the step of ``t`` and the number of channels
HEADER = 4
#: the least ``log F`` stored: a probability below ``e^-690`` (1e-300) counts as that
LOG_FLOOR = math.log(1e-300)
#: the least probability read from the table: the transform computes ``F`` to about ``1e-16`` of
#: the largest probability, so a probability of ``1e-9`` keeps seven digits; a game whose
#: interpolation would read a smaller one (sides so unequal that a draw is a billion to one) is
#: integrated exactly, where its small probabilities keep their relative precision
P_MIN = 1e-9
_LOG_P_MIN = math.log(P_MIN)

_N_MU = 2 * MU_HALF * MU_STEPS + 1
#: the largest ``t = log(1 + 4 s^2 / w^2)`` of the table: ``s = 4 w``
_T_MAX = math.log1p(64.0)


def table_length(channels: int = 3) -> int:
    """Numbers :func:`build` returns for ``channels`` averaged functions: :data:`HEADER` and the table."""
    return HEADER + _N_MU * S_POINTS * channels


def fine_grid(width: float) -> np.ndarray:
    """The ``u`` at which :func:`build` needs the outcome probabilities: :data:`FINE_POINTS` nodes,
    steps of ``width / 16``, the middle one at 0."""
    h = width / (MU_STEPS * _FINE_PER_MU)
    return (np.arange(FINE_POINTS, dtype=np.float64) - FINE_POINTS // 2) * h


def build(f: np.ndarray, width: float) -> np.ndarray:
    """The table of ``log F(mu, s)`` (the module docstring) from ``f``: the win/draw/loss
    probabilities at :func:`fine_grid` ``(width)``, and optionally three more positive functions of
    ``u`` to average (shape ``(FINE_POINTS, 3)`` or ``(FINE_POINTS, 6)``); ``HEADER`` numbers and the
    table, ready to follow an observation's parameters."""
    f = np.asarray(f, dtype=np.float64)
    if f.ndim != 2 or f.shape[0] != FINE_POINTS or f.shape[1] not in (3, 6) or not np.all(np.isfinite(f)):
        raise ValueError(f"outcome table: f must be ({FINE_POINTS}, 3) or ({FINE_POINTS}, 6) finite values, got "
                         f"shape {f.shape}")
    channels = f.shape[1]
    h = width / (MU_STEPS * _FINE_PER_MU)
    ht = _T_MAX / (S_POINTS - 1)
    s = 0.5 * width * np.sqrt(np.expm1(np.arange(S_POINTS) * ht))  # t = log(1 + 4 s^2 / w^2) in even steps
    omega = 2.0 * math.pi * np.fft.rfftfreq(FINE_POINTS, h)
    spectrum = np.fft.rfft(f, axis=0)  # (FINE_POINTS // 2 + 1, channels)
    smooth = np.exp(-0.5 * np.square(np.outer(s, omega)))  # the Gaussian's transform, one row per s
    F = np.fft.irfft(spectrum[None, :, :] * smooth[:, :, None], n=FINE_POINTS, axis=1)  # (S_POINTS, FINE, channels)
    mid = FINE_POINTS // 2
    rows = mid + _FINE_PER_MU * np.arange(-MU_HALF * MU_STEPS, MU_HALF * MU_STEPS + 1)
    F = F[:, rows, :]  # (S_POINTS, N_MU, channels)
    with np.errstate(divide="ignore"):
        logs = np.maximum(np.log(np.maximum(F, 0.0)), LOG_FLOOR)
    table = np.transpose(logs, (1, 0, 2))  # (N_MU, S_POINTS, channels)
    head = np.array([width / MU_STEPS, width, ht, float(channels)])
    return np.concatenate([head, table.ravel()])


@njit(cache=True)
def _weights(t):
    """Four-point Lagrange weights at the nodes -1, 0, 1, 2 for ``t`` in ``[0, 1)``."""
    return (-t * (t - 1.0) * (t - 2.0) / 6.0, (t + 1.0) * (t - 1.0) * (t - 2.0) / 2.0,
            -(t + 1.0) * t * (t - 2.0) / 2.0, (t + 1.0) * t * (t - 1.0) / 6.0)


@njit(cache=True)
def lookup(params, at, mu, s, extra):
    """``(found, P(win), P(draw), P(loss), m3, m4, m5)`` at ``mu``, ``s`` from the table that starts
    at ``params[at]`` (:func:`build`'s numbers): the three probabilities normalised to sum to 1,
    and with ``extra`` (a table of six channels) the averages of the other three functions (else
    0); ``found`` is False outside the table (the caller integrates)."""
    hmu = params[at]
    width = params[at + 1]
    ht = params[at + 2]
    nc = int(params[at + 3])
    x = mu / hmu + 0.5 * (_N_MU - 1)
    r = 2.0 * s / width
    y = math.log1p(r * r) / ht
    if not (x >= 1.0 and x < _N_MU - 2.0 and y < S_POINTS - 1.0):
        return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    read = 6 if extra and nc == 6 else 3
    i = int(x)
    j = min(max(int(y) - 1, 0), S_POINTS - 4)  # the four rows from j; from the first at the bottom
    wx = _weights(x - i)
    wy = _weights(y - j - 1.0)
    base = at + HEADER
    l0 = l1 = l2 = l3 = l4 = l5 = 0.0
    for a in range(4):
        row = base + (i - 1 + a) * S_POINTS * nc
        for b in range(4):
            w = wx[a] * wy[b]
            k = row + (j + b) * nc
            if min(params[k], min(params[k + 1], params[k + 2])) < _LOG_P_MIN:
                return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            l0 += w * params[k]
            l1 += w * params[k + 1]
            l2 += w * params[k + 2]
            if read == 6:
                if min(params[k + 3], min(params[k + 4], params[k + 5])) < _LOG_P_MIN:
                    return False, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
                l3 += w * params[k + 3]
                l4 += w * params[k + 4]
                l5 += w * params[k + 5]
    top = max(l0, max(l1, l2))
    p0 = math.exp(l0 - top)
    p1 = math.exp(l1 - top)
    p2 = math.exp(l2 - top)
    total = p0 + p1 + p2
    if read == 3:
        return True, p0 / total, p1 / total, p2 / total, 0.0, 0.0, 0.0
    return True, p0 / total, p1 / total, p2 / total, math.exp(l3), math.exp(l4), math.exp(l5)
