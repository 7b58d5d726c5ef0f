"""``Margin``: a game observed as its score difference, Gaussian around the skill difference.

The conjugate case: with Gaussian skills the posterior stays Gaussian, so the Kalman filter
and the Rauch-Tung-Striebel smoother are exact and every approximate method can be measured
against them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from statespace.model import ranges as R
from statespace._runtime.jit import kernel
from statespace.model.observation import DERIVS_SIG, FORECAST_SIG, LIK_SIG, MOMENTS_SIG, Observation

__all__ = ["Margin", "SD_MIN_SCALES", "MARGIN_SCALES"]

#: The smallest ``sd``, in units of the model's scale :math:`\alpha`, is this times the largest,
#: :data:`statespace.model.ranges.SD_SCALES`: then one game's precision :math:`1 / \sigma^2` is at most
#: :math:`10^{12}` times the smallest prior precision the model accepts, within the :math:`10^{13}` up to
#: which a Newton step (the Laplace smoother's) still resolves the prior's pull in double precision;
#: a smaller :math:`\sigma` would let one game's margin wipe out every digit of the prior.
SD_MIN_SCALES = 1e-6 * R.SD_SCALES
#: The largest margin ``|score_a - score_b|`` a game may have, in units of the scale: with skills in
#: points (``scale = 1``) a margin of 10,000 points, where the most lopsided results of any sport
#: are a few hundred; only a typing error or a wrong column gives more. A game moves a rating by
#: at most its margin, so a fit stays far inside :data:`statespace.model.ranges.RESULT_SCALES`.
MARGIN_SCALES = 1e4

_SQRT2 = math.sqrt(2.0)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True)
def _phi_cdf(x):
    return 0.5 * math.erfc(-x / _SQRT2)


# params = [sd, draw_width]

@kernel(DERIVS_SIG)
def margin_derivs(params, score, score_a, score_b, d):
    """``y = score_a - score_b``: ``dl/dd = (y - d) / sd^2``, ``d2l/dd2 = -1 / sd^2``."""
    v = params[0] * params[0]
    return ((score_a - score_b) - d) / v, -1.0 / v


@kernel(LIK_SIG)
def margin_loglik(params, score, score_a, score_b, d):
    """``y = score_a - score_b``: ``l = log N(y; d, sd^2)`` and :func:`margin_derivs`."""
    sd = params[0]
    r = (score_a - score_b) - d
    g, h = margin_derivs(params, score, score_a, score_b, d)
    return -0.5 * r * r / (sd * sd) - math.log(sd) - _HALF_LOG_2PI, g, h


@kernel(FORECAST_SIG)
def margin_forecast(params, d, var):
    """With ``t = sqrt(sd^2 + var)`` and ``w`` the draw width: win ``Phi((d - w) / t)``, loss
    ``Phi((-d - w) / t)``, draw ``Phi((w - |d|) / t) - Phi((-w - |d|) / t)`` (evaluated at
    ``|d|``, where both terms keep their digits)."""
    w = params[1]
    t = math.sqrt(params[0] * params[0] + var)
    pw = _phi_cdf((d - w) / t)
    pl = _phi_cdf((-d - w) / t)
    if w == 0.0:
        return pw, 0.0, pl
    u = abs(d)
    return pw, _phi_cdf((w - u) / t) - _phi_cdf((-w - u) / t), pl


@kernel(MOMENTS_SIG)
def margin_moments(params, score, score_a, score_b, mean, var):
    """Conjugate update of ``d ~ N(mean, var)`` by ``y ~ N(d, sd^2)``: gain
    ``k = var / (var + sd^2)``, mean ``mean + k (y - mean)``, variance ``var sd^2 / (var + sd^2)``."""
    v = params[0] * params[0]
    k = var / (var + v)
    return mean + k * ((score_a - score_b) - mean), var * v / (var + v)


def _spread(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``values`` (one per ``True`` of ``where``) placed at those records, ``None`` elsewhere."""
    out = np.full(where.shape, None, dtype=object)
    out[where] = values
    return out


@dataclass(frozen=True)
class Margin(Observation, name="margin", needs_scores=True,
             loglik=margin_loglik, derivs=margin_derivs, forecast=margin_forecast, moments=margin_moments):
    r"""The score difference :math:`y` = ``score_a - score_b``, Gaussian around the skill
    difference :math:`d`, with the standard deviation :math:`\sigma` (``sd``):

    .. math::

        y \mid d \sim \mathcal{N}(d, \sigma^2)

    so skills are measured in points (a skill difference of 7 forecasts a 7-point win). This is
    the state-space model of Glickman and Stern (1998, "A state-space model for National
    Football League scores", JASA 93), and Harville's (1977) before it.

    Parameters
    ----------
    sd:
        Standard deviation of a game's margin around the skill difference, in points: how much a
        single game scatters (about 13-14 points in the NFL).
    draw_width:
        Half-width :math:`w` of a drawn margin: the forecast calls :math:`|y| < w` a draw. The
        default 0.5 suits integer scores (a draw is exactly :math:`y = 0`); 0 forbids draws.

    Forecast with :math:`d \sim \mathcal{N}(m, v)` (``mean``, ``var``),
    :math:`t = \sqrt{\sigma^2 + v}`, :math:`w` = ``draw_width``:
    :math:`P(a \text{ wins}) = \Phi\bigl((m - w) / t\bigr)`,
    :math:`P(b \text{ wins}) = \Phi\bigl((-m - w) / t\bigr)`, draw the rest.
    The tilted Gaussian is exact (conjugate); see :func:`margin_moments`.

    Kernel parameters (:meth:`vector`): ``[sd, draw_width]`` (the model's scale is not used).
    """

    sd: float
    draw_width: float = 0.5

    def __post_init__(self) -> None:
        # in points: their range in units of the model's scale is checked where the scale is known
        # (check_scale, which SkillModel and vector call)
        object.__setattr__(self, "sd", R.number("Margin", "sd", self.sd, 0.0, lo_open=True))
        object.__setattr__(self, "draw_width", R.number("Margin", "draw_width", self.draw_width, 0.0))

    def _check_settings(self, alpha: float) -> None:
        """``sd`` from :data:`SD_MIN_SCALES` to :data:`statespace.model.ranges.SD_SCALES` scales, ``draw_width``
        from 0 to :data:`statespace.model.ranges.SD_SCALES` scales (:func:`statespace.model.ranges.sd`)."""
        of = "" if alpha == 1.0 else f" of {alpha:.6g}"
        R.number("Margin", "sd", self.sd, SD_MIN_SCALES * alpha, R.SD_SCALES * alpha,
                 unit=f" ({R.bound(SD_MIN_SCALES)} to {R.bound(R.SD_SCALES)} scales{of})")
        R.sd("Margin", "draw_width", self.draw_width, alpha, zero=True)

    def _problems(self, score, score_a, score_b, alpha):
        """Besides finite scores: a margin ``|score_a - score_b|`` within :data:`MARGIN_SCALES` scales."""
        out = super()._problems(score, score_a, score_b, alpha)
        with np.errstate(invalid="ignore"):
            far = np.abs(score_a - score_b) > MARGIN_SCALES * alpha
        shown = np.array([f"score_a {x:g}, score_b {y:g}" for x, y in zip(score_a[far], score_b[far])], dtype=object)
        out.append(("score_a", f"a margin |score_a - score_b| beyond {R.bound(MARGIN_SCALES)} scales "
                               f"({MARGIN_SCALES * alpha:.6g})", far, _spread(shown, far)))
        return out

    def vector(self, scale: float) -> np.ndarray:
        self.check_scale(scale)
        return np.array([self.sd, self.draw_width])

    def symbolic_loglik(self, d, score, score_a, score_b, *, scale: float = 1.0, theta=None):
        r"""Each game's log-likelihood as a PyTensor graph of the skill differences ``d`` (what
        PyMC's model of the games sums),

        .. math::

            \log \mathcal{N}(y; d, \sigma^2) = -\frac{(y - d)^2}{2 \sigma^2} - \log \sigma - \frac{\log(2 \pi)}{2},

        with :math:`y` = ``score_a - score_b``, the formula of :func:`margin_loglik`.
        ``score_a`` and ``score_b`` are PyTensor vectors (or arrays); ``score``, ``scale`` and
        ``theta`` are not read. Only arithmetic: nothing is imported."""
        v = self.sd * self.sd
        r = (score_a - score_b) - d
        return -0.5 * r * r / v - math.log(self.sd) - _HALF_LOG_2PI

    def log_predictive(self, score, d, var=0.0, score_a=None, score_b=None, *, scale: float = 1.0):
        r""":math:`\log \mathcal{N}(y;\ d,\ \sigma^2 + v)`: exact."""
        score, d, score_a, score_b, var = np.broadcast_arrays(
            *self._record(score, d, score_a, score_b, scale), np.asarray(var, dtype=float))
        if np.any(var < 0):
            raise ValueError("variance of the skill difference must be >= 0")
        v = self.sd**2 + var
        r = score_a - score_b - d
        return -0.5 * r * r / v - 0.5 * np.log(v) - _HALF_LOG_2PI

    def mean_margin(self, d, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        r""":math:`\mathrm{E}[y] = \mathrm{E}\bigl[\mathrm{E}[y \mid x]\bigr] = \mathrm{E}[x] = d` for
        :math:`x \sim \mathcal{N}(d, v)`: the margin is Gaussian around the skill difference, so its
        predictive mean is the difference's mean whatever :math:`v` (``var``)."""
        d, _ = self._moments_of_d(d, var)
        return d.copy()
