r"""The one rule for settings and results: every number a method, an observation or the model is
given has a range in which its results mean something, checked once at construction; every
result whose size only broken arithmetic could produce is an error, not output.

Every check raises ``ValueError("<owner>: <name> must be <range>, got <value>")``, naming the
method (or observation), the setting, its accepted range and the value given. Any Python or NumPy
number is accepted (``np.int64(5)``, ``np.float32(0.5)``); ``bool`` is not a number here.

**Ranges in units of the scale.** A rating model has one natural unit, its scale :math:`\alpha`
(Elo's :math:`400/\ln 10 = 173.7` points, Glicko-2's 1, TrueSkill's :math:`\sqrt2\beta`): a
difference of a few :math:`\alpha` is already a near-certain win. The ranges are stated in that
unit, wide enough to hold every published setting many times over and narrow enough that double
precision keeps its meaning:

- a *standard deviation* (a prior sd, TrueSkill's :math:`\sigma` and :math:`\tau`, Glicko's RD and
  :math:`c`, a draw margin): at most :data:`SD_SCALES` = :math:`10^3\,\alpha`, and a *variance*
  (a prior variance, a drift per unit of time) at most :math:`(10^3\alpha)^2`. A prior sd of
  :math:`10^3\alpha` is flat over every rating a game can tell apart, and a drift of
  :math:`10^6\alpha^2` per unit forgets a rating at every step; a larger one says nothing more, and
  a linearised update (Glicko's, the EKF's) moves a rating by up to its variance over
  :math:`\alpha`, so that beyond it one game could move a rating by more than :math:`10^6\alpha`;
- a *location* (a prior mean, a starting rating): :math:`|x| \le 10^6\,\alpha`
  (:data:`LOCATION_SCALES`); a filter's *home advantage*, a shift of the forecast's difference:
  :math:`|h| \le 10\,\alpha` (:data:`HOME_SCALES`: the home side then wins 99.995% of even games;
  Glicko-2's volatility step runs away after results far less likely than that);
- the scale itself: in :math:`[10^{-100}, 10^{100}]` (:data:`SCALE_MIN`, :data:`SCALE_MAX`), any
  unit a user may choose, with room for :math:`10^9\alpha` and its square.

**Results.** A rating more than :data:`RESULT_SCALES` = :math:`10^9\,\alpha` from the prior mean, or
an sd above :math:`10^9\,\alpha`, is a thousand times beyond what any accepted setting moves a
rating to on games of weight 1 and gaps of up to 50 units of time (the property tests of
``tests/test_extremes.py`` run every filter there); only arithmetic that has broken down (a game
weighted :math:`10^{100}` times, a gap of a million years under a large drift, Glicko-2's volatility
running away) produces it. :func:`check_results` turns it into a :class:`ResultRangeError` naming the
method, the competitor and what to change.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SD_SCALES", "LOCATION_SCALES", "RESULT_SCALES", "SCALE_MIN", "SCALE_MAX", "ResultRangeError",
           "is_number", "bound", "number", "whole", "scale", "sd", "variance", "location", "home", "check_results",
           "HOME_SCALES"]

#: the largest standard-deviation setting, in units of the scale (a variance: its square)
SD_SCALES = 1e3
#: the largest magnitude of a location setting (prior mean, starting rating, home advantage), in scales
LOCATION_SCALES = 1e6
#: the largest home advantage (a shift of the forecast's difference), in scales: at 10 the home side
#: wins 99.995% of even games under the logistic link, and a larger one says nothing more
HOME_SCALES = 10.0
#: the largest distance of a rating from the prior mean, and the largest sd, a result may have, in scales
RESULT_SCALES = 1e9
#: the range of a scale (a model's alpha, Elo's points per logistic unit, TrueSkill's beta)
SCALE_MIN, SCALE_MAX = 1e-100, 1e100


class ResultRangeError(ValueError):
    """A fit produced ratings or sds more than :data:`RESULT_SCALES` scales from the prior: the
    arithmetic broke down (see :mod:`statespace.model.ranges`), so there is no result to show."""


def is_number(value) -> bool:
    """A Python or NumPy real number, not a ``bool``."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def bound(x: float) -> str:
    """A bound as written in messages: ``1e150`` rather than ``1e+150``."""
    text = f"{x:g}"
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"{mantissa}e{int(exponent)}"
    return text


def number(owner: str, name: str, value, lo: float = -math.inf, hi: float = math.inf, *,
           lo_open: bool = False, hi_open: bool = False, unit: str = "") -> float:
    """``value`` as a float if it is a finite number in the interval from ``lo`` to ``hi`` (open at
    an end when asked), else ``ValueError("<owner>: <name> must be a finite number in [lo, hi], got
    <value>")``; ``unit`` follows the interval in the message (``" (1e3 scales)"``)."""
    ok = is_number(value) and math.isfinite(value)
    if ok:
        v = float(value)
        ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
    if not ok:
        interval = f"{'(' if lo_open else '['}{bound(lo)}, {bound(hi)}{')' if hi_open else ']'}"
        if lo == -math.inf and hi == math.inf:
            need = "a finite number"
        elif hi == math.inf:
            need = f"a finite number {'>' if lo_open else '>='} {bound(lo)}"
        else:
            need = f"a finite number in {interval}"
        shown = value if not is_number(value) else (float(value) if not isinstance(value, (int, np.integer))
                                                     else int(value))
        raise ValueError(f"{owner}: {name} must be {need}{unit}, got {shown!r}")
    return float(value)


def whole(owner: str, name: str, value, lo: int, hi: float = math.inf) -> int:
    """A whole number (an int of any kind, or a float with no fractional part) in ``[lo, hi]``."""
    ok = is_number(value) and math.isfinite(value) and float(value) == int(value) and lo <= value <= hi
    if not ok:
        top = "" if hi == math.inf else f", {bound(hi)}"
        need = f"a whole number >= {lo}" if hi == math.inf else f"a whole number in [{lo}{top}]"
        raise ValueError(f"{owner}: {name} must be {need}, got {value!r}")
    return int(value)


def scale(owner: str, name: str, value) -> float:
    """A scale (points per logistic or probit unit): in ``[1e-100, 1e100]``."""
    return number(owner, name, value, SCALE_MIN, SCALE_MAX)


def _scales(k: float, alpha: float) -> str:
    """`` (1e3 scales)`` or `` (1e3 scales of 173.7)``: the bound in the unit it is stated in."""
    return f" ({bound(k)} scales)" if alpha == 1.0 else f" ({bound(k)} scales of {alpha:.6g})"


def sd(owner: str, name: str, value, alpha: float = 1.0, *, zero: bool = False) -> float:
    """A standard deviation setting: in ``(0, 1e3 alpha]`` (``[0, 1e3 alpha]`` with ``zero``)."""
    return number(owner, name, value, 0.0, SD_SCALES * alpha, lo_open=not zero, unit=_scales(SD_SCALES, alpha))


def variance(owner: str, name: str, value, alpha: float = 1.0, *, zero: bool = True) -> float:
    """A variance setting (a prior variance, a drift per unit of time): in ``[0, (1e3 alpha)^2]``
    (``(0, ...]`` without ``zero``)."""
    # a few ulps of room: 1e6 * alpha**2 and (1e3 * alpha)**2 round apart
    return number(owner, name, value, 0.0, (SD_SCALES * alpha) ** 2 * (1.0 + 1e-15), lo_open=not zero,
                  unit=f" (an sd of {bound(SD_SCALES)} scales{'' if alpha == 1.0 else f' of {alpha:.6g}'})")


def location(owner: str, name: str, value, alpha: float = 1.0) -> float:
    """A location setting (a prior mean, a starting rating, a home advantage): ``|x| <= 1e6 alpha``."""
    hi = LOCATION_SCALES * alpha
    return number(owner, name, value, -hi, hi, unit=_scales(LOCATION_SCALES, alpha))


def home(owner: str, value, alpha: float = 1.0, name: str = "home") -> float:
    """A home advantage of a win/draw/loss forecast: ``|h| <= 10 alpha`` (:data:`HOME_SCALES`)."""
    hi = HOME_SCALES * alpha
    return number(owner, name, value, -hi, hi, unit=_scales(HOME_SCALES, alpha))


def check_results(owner: str, players, mean, sd=None, *, alpha: float, centre: float = 0.0,
                  hint: str = "") -> None:
    """:class:`ResultRangeError` when a rating lies more than ``RESULT_SCALES * alpha`` from
    ``centre`` (the prior mean), an sd is above ``RESULT_SCALES * alpha``, or either is not finite;
    the message names the method, the first such competitor (``players[i]``, or its index), its
    value, the bound and ``hint`` (what to change). ``mean`` and ``sd`` are arrays of any shape
    whose first axis is the competitor."""
    hi = RESULT_SCALES * alpha
    checks = [("rating", np.abs(np.asarray(mean, dtype=float) - centre), np.asarray(mean, dtype=float))]
    if sd is not None:
        s = np.asarray(sd, dtype=float)
        checks.append(("sd", s, s))
    for what, size, shown in checks:
        bad = ~(size <= hi)  # NaN counts as bad
        if bad.any():
            i = np.unravel_index(int(np.argmax(bad.ravel())), bad.shape)
            row = i[0]
            who = players[row] if players is not None and row < len(players) else f"#{row}"
            raise ResultRangeError(
                f"{owner}: the {what} of {who!r} came out as {float(shown[i]):.4g}, beyond {bound(RESULT_SCALES)} "
                f"scales ({hi:.4g}) from the prior mean {centre:g}: the arithmetic broke down, so there is no result "
                f"to show{'; ' + hint if hint else ''}")
