r"""``Outcome``: a game observed as win, draw or loss (Bradley-Terry / Thurstone-Mosteller).

With :math:`d = s_a - s_b + h`, :math:`\alpha` the link's scale (``scale``) and :math:`F` the
link's cdf (logistic or standard normal), without a draw model

.. math::

    P(a \text{ wins} \mid d) = F(d / \alpha)

plus one of four draw models (:class:`NoDraw`, :class:`HalfWin`, :class:`Threshold`,
:class:`Davidson`). The numerics are the scalar kernels of :mod:`statespace.model.numeric`; this
module wraps them in the observation interface of :mod:`statespace.model.observation`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np

from statespace.model import gaussian as _g
from statespace.model import ranges as R
from statespace.model import numeric as nx
from statespace._runtime.pytensor_config import configure_pytensor
from statespace._runtime.jit import kernel
from statespace.model.observation import DERIVS_SIG, FORECAST_SIG, LIK_SIG, MOMENTS_SIG, Observation

__all__ = ["Outcome", "NoDraw", "HalfWin", "Threshold", "Davidson", "DrawModel", "NU_MAX"]

#: The largest Davidson :math:`\nu`: level sides then draw with probability
#: :math:`\nu / (2 + \nu) = 0.9998`, more than any sport's draw rate (chess between masters, about 0.6,
#: is :math:`\nu \approx 3`); a larger :math:`\nu` says nothing more.
NU_MAX = 1e4


# ---------------------------------------------------------------- draw models
@dataclass(frozen=True)
class NoDraw:
    r"""No draws: the model gives :math:`P(\text{draw}) = 0` and an observed draw has no likelihood."""

    code = nx.DRAW_NONE
    theta = 0.0


@dataclass(frozen=True)
class HalfWin:
    r"""Draws scored as half a win and half a loss (what Elo and Glicko do).

    The forecast is :math:`(F, 0, 1 - F)`; an observed draw contributes
    :math:`\tfrac12 \log F + \tfrac12 \log(1 - F)` to the log-likelihood.
    """

    code = nx.DRAW_HALF
    theta = 0.0


@dataclass(frozen=True)
class Threshold:
    r"""Ordered logit/probit: a draw when the performance difference is within ``margin``,
    :math:`\varepsilon`.

    :math:`P(\text{win}) = F\bigl((d - \varepsilon) / \alpha\bigr)`,
    :math:`P(\text{loss}) = F\bigl((-d - \varepsilon) / \alpha\bigr)`, draw the rest.
    :math:`\varepsilon` is in skill units (TrueSkill's draw margin; see Herbrich et al. 2007).
    """

    margin: float = 0.0

    code = nx.DRAW_THRESHOLD

    def __post_init__(self) -> None:
        # a length in skill units: its top, 1e4 scales (statespace.model.ranges), is checked where the
        # scale is known (Outcome.check_scale)
        object.__setattr__(self, "margin", R.number("Threshold", "margin", self.margin, 0.0))

    @property
    def theta(self) -> float:
        return float(self.margin)


@dataclass(frozen=True)
class Davidson:
    r"""Davidson's (1970) draw model: :math:`P(\text{draw})` proportional to
    :math:`\nu \sqrt{\pi_a \pi_b}` (``nu`` :math:`= \nu`).

    With :math:`p = F(d / \alpha)`: win :math:`p / D`, loss :math:`(1 - p) / D`, draw
    :math:`\nu \sqrt{p (1 - p)} / D`, :math:`D = 1 + \nu \sqrt{p (1 - p)}`. At :math:`d = 0` the
    draw probability is :math:`\nu / (2 + \nu)`.
    """

    nu: float = 0.0

    code = nx.DRAW_DAVIDSON

    def __post_init__(self) -> None:
        object.__setattr__(self, "nu", R.number("Davidson", "nu", self.nu, 0.0, NU_MAX))

    @property
    def theta(self) -> float:
        return float(self.nu)


DrawModel = Union[NoDraw, HalfWin, Threshold, Davidson]

_DRAW_NAMES = {"none": NoDraw, "half": HalfWin, "threshold": Threshold, "davidson": Davidson}


def as_draw(draw: object) -> DrawModel:
    """A draw model from its instance, its name or a ``(name, parameter)`` tuple."""
    if isinstance(draw, (NoDraw, HalfWin, Threshold, Davidson)):
        return draw
    if isinstance(draw, str) and draw in _DRAW_NAMES:
        return _DRAW_NAMES[draw]()
    if isinstance(draw, tuple) and len(draw) == 2 and draw[0] in ("threshold", "davidson"):
        return _DRAW_NAMES[draw[0]](float(draw[1]))
    raise ValueError(
        f"draw must be 'none', 'half', 'threshold', 'davidson', a (name, parameter) tuple "
        f"or a draw-model instance, got {draw!r}"
    )


# ---------------------------------------------------------------- compiled kernels
# params = [link code, draw code, draw parameter theta, scale]

@kernel(DERIVS_SIG)
def outcome_derivs(params, score, score_a, score_b, d):
    """``(dl/dd, d2l/dd2)`` from :func:`statespace.model.numeric.loglik_derivs` (the formulas are there)."""
    return nx.loglik_derivs(int(params[0]), int(params[1]), params[2], score, d, params[3])


@kernel(LIK_SIG)
def outcome_loglik(params, score, score_a, score_b, d):
    """``(l, dl/dd, d2l/dd2)``: ``l`` from :func:`statespace.model.numeric.loglik_grad`, the
    derivatives from :func:`statespace.model.numeric.loglik_derivs` (the formulas are there)."""
    link = int(params[0])
    draw = int(params[1])
    l = nx.loglik_grad(link, draw, params[2], score, d, params[3])[0]
    g, h = outcome_derivs(params, score, score_a, score_b, d)
    return l, g, h


@kernel(FORECAST_SIG)
def outcome_forecast(params, d, var):
    """:func:`statespace.model.numeric.outcome_proba` at the effective scale
    :func:`statespace.model.numeric.effective_scale` of a difference of variance ``var``."""
    link = int(params[0])
    s = nx.effective_scale(link, params[3], var)
    return nx.outcome_proba(link, int(params[1]), params[2], d, s)


@kernel(MOMENTS_SIG)
def outcome_moments(params, score, score_a, score_b, mean, var):
    """Tilted-Gaussian moments for the probit link (Herbrich, Minka and Graepel 2007, Table 1).

    With ``c = sqrt(scale^2 + var)``, ``t = mean / c`` and ``eps = margin / c`` (0 without a
    threshold): a win gives ``mean + var / c * v_win(t, eps)``, a loss
    ``mean - var / c * v_win(-t, eps)``, a threshold draw ``mean + var / c * v_draw(t, eps)``;
    the variance is ``var (1 - var / c^2 * w)`` with the matching ``w``. NaN where not exact
    (logistic link, Davidson draws, draws scored as half a win).
    """
    link = int(params[0])
    draw = int(params[1])
    if link != nx.PROBIT or draw == nx.DRAW_DAVIDSON:
        return math.nan, math.nan
    c = math.sqrt(params[3] * params[3] + var)
    t = mean / c
    eps = params[2] / c if draw == nx.DRAW_THRESHOLD else 0.0
    if score == 1.0:
        v = _g.v_win(t, eps)
        w = _g.w_win(t, eps)
    elif score == 0.0:
        v = -_g.v_win(-t, eps)
        w = _g.w_win(-t, eps)
    elif draw == nx.DRAW_THRESHOLD:
        v = _g.v_draw(t, eps)
        w = _g.w_draw(t, eps)
    else:
        return math.nan, math.nan
    return mean + var / c * v, var * (1.0 - var / (c * c) * w)


# ---------------------------------------------------------------- the observation
@dataclass(frozen=True)
class Outcome(Observation, name="outcome", needs_scores=False,
              loglik=outcome_loglik, derivs=outcome_derivs, forecast=outcome_forecast, moments=outcome_moments):
    r"""Win/draw/loss of ``a`` through a link and a draw model.

    :math:`P(a \text{ wins} \mid d) = F(d / \alpha)` with :math:`\alpha` the scale and :math:`F`
    the logistic function (``link="logistic"``, Bradley-Terry; Elo and Glicko) or the standard
    normal cdf :math:`\Phi` (``"probit"``, Thurstone-Mosteller; TrueSkill, Herbrich et al. 2007),
    and a draw model:

    - ``"none"``: no draws; ``"half"``: a draw scored as half a win and half a loss;
    - ``("threshold", margin)``: ordered logit/probit with the margin :math:`\varepsilon`, win
      :math:`F\bigl((d - \varepsilon) / \alpha\bigr)`, loss
      :math:`F\bigl((-d - \varepsilon) / \alpha\bigr)`, draw the rest (TrueSkill's draw margin);
    - ``("davidson", nu)``: Davidson (1970), :math:`P(\text{draw})` proportional to
      :math:`\nu \sqrt{p (1 - p)}`, :math:`p = F(d / \alpha)`.

    Forecast with skill uncertainty :math:`d \sim \mathcal{N}(m, v)` (``mean``, ``var``): the scale
    becomes :math:`\sqrt{\alpha^2 + v}` for the probit link (exact) and
    :math:`\sqrt{\alpha^2 + 3 v / \pi^2}` for the logistic link (Glickman 1999, the factor
    :math:`g(\mathrm{RD})`; :math:`3 / \pi^2` matches the logistic distribution's variance,
    :math:`\pi^2 / 3`). Exact tilted moments exist for the probit link (TrueSkill's :math:`v` and
    :math:`w`); see :func:`outcome_moments`.

    Kernel parameters (:meth:`vector`): ``[link code, draw code, draw parameter, scale]``.
    """

    link: str = "logistic"
    draw: Union[DrawModel, str, tuple] = "none"

    def __post_init__(self) -> None:
        if self.link not in nx.LINKS:
            raise ValueError(f"link must be 'logistic' or 'probit', got {self.link!r}")
        object.__setattr__(self, "draw", as_draw(self.draw))

    @property
    def link_code(self) -> int:
        return nx.LINKS.index(self.link)

    @property
    def draw_code(self) -> int:
        return self.draw.code

    def vector(self, scale: float) -> np.ndarray:
        return np.array([self.link_code, self.draw_code, self.draw.theta, self.check_scale(scale)])

    def effective_scale(self, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        """Scale of the link after integrating a skill-difference variance ``var`` (see the
        class docstring)."""
        var = np.asarray(var, dtype=float)
        if np.any(var < 0):
            raise ValueError("variance of the skill difference must be >= 0")
        k = nx.LOGISTIC_VAR_FACTOR if self.link == "logistic" else 1.0
        return np.sqrt(scale**2 + k * var)

    def _check_settings(self, alpha: float) -> None:
        """A threshold draw margin is a length in skill units: at most :data:`statespace.model.ranges.SD_SCALES`
        (``1e4``) scales, as every sd-like setting (:func:`statespace.model.ranges.sd`)."""
        if self.draw_code == nx.DRAW_THRESHOLD:
            R.sd("Outcome", "draw margin", self.draw.theta, alpha, zero=True)

    def _problems(self, score, score_a, score_b, alpha):
        """A draw (``score`` 0.5) where the draw model gives draws no chance, so that an observed one
        has no likelihood: draw model ``"none"``, a threshold margin of 0 (or so small a fraction of
        the scale that it is 0 in double precision), Davidson's :math:`\nu = 0`."""
        code, theta = self.draw_code, self.draw.theta
        if code == nx.DRAW_NONE:
            why = "draw model 'none' (use 'half', 'threshold' or 'davidson')"
        elif code == nx.DRAW_THRESHOLD and theta / alpha == 0.0:
            why = f"a threshold draw margin of {theta:g} (no chance of a draw)"
        elif code == nx.DRAW_DAVIDSON and theta == 0.0:
            why = "Davidson's nu = 0 (no chance of a draw)"
        else:
            return []
        return [("score", f"a draw, which has no likelihood under {why}", score == 0.5, score)]

    def log_predictive(self, score, d, var=0.0, score_a=None, score_b=None, *, scale: float = 1.0):
        r""":math:`\log P(\text{result})` under the forecast :meth:`proba` (probabilities floored at
        the smallest normal float); under ``"half"`` a draw counts as half a win and half a loss."""
        score = np.asarray(score, dtype=float)
        self._check_record(score, np.full(score.shape, np.nan), np.full(score.shape, np.nan), scale)
        p = self.proba(d, var, scale=scale)
        score, p0, p1, p2 = np.broadcast_arrays(score, p[..., 0], p[..., 1], p[..., 2])
        tiny = np.finfo(float).tiny
        if self.draw_code in (nx.DRAW_NONE, nx.DRAW_HALF):
            return score * np.log(np.maximum(p0, tiny)) + (1 - score) * np.log(np.maximum(p2, tiny))
        chosen = np.where(score == 1.0, p0, np.where(score == 0.0, p2, p1))
        return np.log(np.maximum(chosen, tiny))

    def symbolic_loglik(self, d, score, score_a=None, score_b=None, *, scale: float = 1.0, theta=None):
        r"""Each game's log-likelihood as a PyTensor graph of the skill differences ``d`` (skill
        units; what PyMC's model of the games sums): the formulas of
        :func:`statespace.model.numeric.loglik_grad`, written with PyTensor operations.

        With :math:`z = d / \alpha`, :math:`y` = ``score`` (1, 0.5, 0), :math:`\log F` the link's
        log cdf (logistic :math:`-\operatorname{softplus}(-x)`; probit PyMC's ``normal_lcdf``):

        - none / half: :math:`y \log F(z) + (1 - y) \log F(-z)`;
        - threshold, :math:`\delta = \theta / \alpha` (:math:`\theta` the margin): win
          :math:`\log F(z - \delta)`, loss :math:`\log F(-z - \delta)` (both
          :math:`\log F\bigl((2y - 1) z - \delta\bigr)`), draw
          :math:`\log\bigl(F(\delta - z) - F(-\delta - z)\bigr)`, for the logistic link
          :math:`\log F(\delta - z) + \log F(\delta + z) + \log(1 - e^{-2 \delta})` (exact, since
          :math:`F(u) - F(w) = F(u)\, F(-w)\, (1 - e^{w - u})`), for the probit link PyMC's
          ``log_diff_normal_cdf`` (below :math:`\delta = 10^{-5}` its expansion
          :math:`\log 2\delta + \log \varphi(z) + \log\bigl(\sinh(\delta z) / \delta z\bigr)`, within
          :math:`\delta^2 / 2`);
        - davidson (Davidson 1970),
          :math:`g = \log \nu + \tfrac12 \bigl(\log F(z) + \log F(-z)\bigr) = \log\bigl(\nu \sqrt{F(z) F(-z)}\bigr)`,
          :math:`\log D = \operatorname{softplus}(g)`: win :math:`\log F(z) - \log D`, loss
          :math:`\log F(-z) - \log D`, draw :math:`g - \log D`.

        ``score`` is a PyTensor vector (or an array) of the games' results; ``score_a`` and
        ``score_b`` are not read. ``theta``: the draw parameter (threshold margin in skill units,
        or Davidson's nu), a PyTensor scalar when it is inferred; ``None``: this observation's
        own. A branch a game does not take is evaluated where it is finite (the draw term of a
        decisive game at ``z = 0``) and discarded by ``switch``, so it adds nothing to the value
        or the gradient. PyTensor and PyMC are imported here, when a graph is built."""
        configure_pytensor()  # before PyTensor's first import: its compile cache out of the home directory
        import pytensor.tensor as pt
        from pymc.distributions.dist_math import log_diff_normal_cdf, normal_lcdf

        logistic = self.link == "logistic"

        def log_f(x):
            return -pt.softplus(-x) if logistic else normal_lcdf(0.0, 1.0, x)

        code = self.draw_code
        if theta is None:
            theta = self.draw.theta
        y = pt.as_tensor_variable(score)
        z = d / scale
        if code in (nx.DRAW_NONE, nx.DRAW_HALF):
            return y * log_f(z) + (1.0 - y) * log_f(-z)
        drawn = pt.eq(y, 0.5)
        if code == nx.DRAW_THRESHOLD:
            m = theta / scale
            decisive = log_f((2.0 * y - 1.0) * z - m)
            zd = pt.switch(drawn, z, 0.0)
            if logistic:
                tie = log_f(m - zd) + log_f(m + zd) + pt.log1mexp(-2.0 * m)
            else:
                # below a margin of 1e-5 scales the difference of two cdfs loses its digits (it is 0
                # below 1e-17): there its expansion in m, log 2m + log N(t) + log(sinh(mt) / mt),
                # t = |z| (statespace.model.numeric._probit_draw_small); each branch at a margin where it is finite
                small = pt.clip(m, 1e-300, nx._MARGIN_MIN)
                big = pt.maximum(m, nx._MARGIN_MIN)
                t = pt.abs(zd)
                x = small * t
                mid = pt.clip(x, 1e-4, 20.0)
                log_sinhc = pt.switch(x < 1e-4, x * x / 6.0, pt.switch(x < 20.0, pt.log(pt.sinh(mid) / mid),
                                                                       x - pt.log(2.0 * pt.maximum(x, 20.0))))
                near = pt.log(2.0 * small) - 0.5 * t * t - 0.5 * math.log(2.0 * math.pi) + log_sinhc
                tie = pt.switch(pt.lt(m, nx._MARGIN_MIN), near, log_diff_normal_cdf(0.0, 1.0, big - zd, -big - zd))
            return pt.switch(drawn, tie, decisive)
        lp = log_f(z)
        lq = log_f(-z)
        g = pt.log(theta) + 0.5 * (lp + lq)
        return pt.switch(drawn, g, y * lp + (1.0 - y) * lq) - pt.softplus(g)

    def moments(self, score, mean, var, score_a=None, score_b=None, *, scale: float = 1.0):
        """Exact tilted-Gaussian mean and variance for the probit link (no draw, threshold
        draws, or "half" with wins and losses only); ``NotImplementedError`` otherwise."""
        if self.link != "probit":
            raise NotImplementedError("the logistic link has no closed-form tilted-Gaussian moments")
        if self.draw_code == nx.DRAW_DAVIDSON:
            raise NotImplementedError("Davidson draws have no closed-form tilted-Gaussian moments")
        if self.draw_code == nx.DRAW_HALF and np.any(np.asarray(score) == 0.5):
            raise NotImplementedError("a draw scored as half a win has no closed-form tilted-Gaussian moments")
        return super().moments(score, mean, var, score_a, score_b, scale=scale)

    def mean_margin(self, d, var=0.0, *, scale: float = 1.0):
        """An :class:`Outcome` forecasts win/draw/loss only, not a score: ``ValueError``."""
        raise ValueError(f"{self!r} forecasts win/draw/loss only, not a score: the mean margin needs a model "
                         f"that observes the score (statespace.Margin or statespace.Goals)")
