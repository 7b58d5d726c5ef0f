"""``Goals``: a game observed as each side's count of goals (or points), Poisson or, with a
dispersion, negative binomial.

The win/draw/loss forecast follows from the distribution of the difference of the two counts
(Skellam for Poisson counts; :mod:`statespace.model.counts`), with the Gaussian uncertainty of the skill
difference integrated out by quadrature over the skill difference.

**Ranges.** ``base`` (the log of a level side's expected count) lies in ``[log 0.05, log 1000]``
(:data:`BASE_MIN`, :data:`BASE_MAX`), ``dispersion`` in ``[0, 2]`` (:data:`DISPERSION_MAX`), and a
game's counts are whole numbers in ``[0, 10000]`` (:data:`GOALS_MAX`). Every loop of the kernels is
bounded under them: each count sum by the smaller rate (at most ``e^base``), the quadrature by
:data:`U_MAX` over the width of the forecast's steepest change.
"""

from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numba import njit

from statespace.model.goal_laws import TAU_MIN, dixon_coles as _dixon_coles, inflate, inflated, shared_log_sum, tilted
from statespace.model.goals_outcome import BASE_MAX, BASE_MIN, COORD_AT, SHIFT_AT, TILT_AT, game_base, MAX_STEP, U_MAX, Z_MAX, _clip_u, _table, forecast_u, outcome_at  # noqa: F401  (re-exported)
from statespace.model import ranges as R
from statespace.model.counts import draw_moments, side_loglik, skellam_outcome  # noqa: F401  (skellam_outcome: re-exported)
from statespace._runtime.pytensor_config import configure_pytensor
from statespace._runtime.jit import kernel
from statespace.model.observation import DERIVS_SIG, FORECAST_SIG, LIK_SIG, Observation

__all__ = ["Goals", "BASE_MIN", "BASE_MAX", "DISPERSION_MAX", "GOALS_MAX", "U_MAX", "RHO_MAX", "TAU_MIN", "COVARIANCE_MAX",
           "INFLATION_MAX", "TILT_MAX", "TILT_AT"]



#: The largest ``dispersion`` :math:`\kappa` (a negative binomial of size :math:`1/\kappa \ge 0.5`,
#: variance :math:`\lambda + 2\lambda^2`): scores are far less spread out (football's goals
#: :math:`\kappa \approx 0.05`-:math:`0.1`, baseball's runs about 0.3). With it a forecast's sums
#: stay under :math:`10^5` terms, and at :data:`U_MAX` the weaker side's chance of a draw or better
#: is below :math:`e^{-46}`.
DISPERSION_MAX = 2.0

#: A smaller ``dispersion`` counts as 0 (stored so): the negative binomial is then the Poisson to
#: far more digits than a double holds, and its ``1 / dispersion`` would overflow.
DISPERSION_MIN = 1e-300

#: The most goals (or points) a side may score in one game: ten times anything a side has scored in
#: a game of any sport (basketball's record is under 200 points, an innings of cricket under
#: 1,200 runs); a larger number is a typing error or a wrong column, and would make one game's
#: Newton step jump by tens of thousands of scales.
GOALS_MAX = 10_000.0

#: The range of Dixon and Coles' dependence ``rho``: ``tau(1, 1) = 1 - rho`` is a probability factor,
#: so ``rho <= 1``, and ``-1`` already makes a 0-1 or 1-0 score impossible between level sides of one
#: goal each; fitted football values lie near -0.1 (Dixon and Coles 1997: -0.13).
RHO_MAX = 1.0

#: The largest shared rate ``covariance`` (the bivariate Poisson's :math:`\lambda_3`, goals both
#: sides score together): as many goals as the largest ``base`` gives a level side.
COVARIANCE_MAX = 1000.0

#: The largest inflation of the draws: 0.95 leaves one game in twenty to the skills.
INFLATION_MAX = 0.95

#: The largest draw tilt either way: the draw's odds times at most ``e^3`` (about 20) or at least
#: ``e^-3``; football's draw rates move by a few hundredths of a unit of log-odds over decades.
TILT_MAX = 3.0



# params = [base, scale, dispersion, rho, covariance, inflation, tilt, shift, coord] and, with the table, outcome_table's numbers

@njit(cache=True)
def _loglik_u(params, score_a, score_b, u, with_l):
    """A game's log-likelihood and its first two derivatives in ``u`` (:func:`goals_loglik`); without
    ``with_l`` the log-likelihood is left out where the derivatives do not need it (0 then): the
    bivariate Poisson's sum, a constant of the game, except for an inflated draw, whose derivatives
    are weighted by the share of the likelihood the counts explain."""
    base = game_base(params)
    la, ga, ha = side_loglik(score_a, base + u, params[2])
    lb, gb, hb = side_loglik(score_b, base - u, params[2])
    lt, gt, ht = _dixon_coles(score_a, score_b, base, u, params[3])
    l = la + lb + lt
    if with_l or (params[5] > 0.0 and score_a == score_b):
        l += shared_log_sum(score_a, score_b, base, params[4])
    l, g, h = inflated(score_a, score_b, base, params[5], l, ga - gb + gt, ha + hb + ht)
    if params[TILT_AT] == 0.0:
        return l, g, h
    pd, pd1, pd2 = draw_moments(math.exp(base + u), math.exp(base - u), params[2])
    return tilted(score_a, score_b, params[TILT_AT], l, g, h, pd, pd1, pd2)


@njit(cache=True)
def _shift_derivs(params, score_a, score_b, d):
    """``dl/de`` and ``d2l/dd de`` for the counts' own law, the log-rates ``eta_0 + (e +- d) / (2 scale)``
    (``e`` from ``params[SHIFT_AT]``): ``(g_a + g_b) / (2 scale)`` and ``(h_a - h_b) / (2 scale)^2``."""
    c = 0.5 / params[1]
    u = _clip_u(c * d)
    base = game_base(params)
    _, ga, ha = side_loglik(score_a, base + u, params[2])
    _, gb, hb = side_loglik(score_b, base - u, params[2])
    return c * (ga + gb), c * c * (ha - hb)


@njit(cache=True)
def _two_skill_loop(params, score_a, score_b, d, e, out):
    """Each game's ``(l, dl/dd, dl/de, d2l/dd2, d2l/dd de)`` at ``(d[k], e[k])`` (``params`` a copy:
    its shift is written)."""
    c = 0.5 / params[1]
    for k in range(d.shape[0]):
        params[SHIFT_AT] = e[k]
        l, g, h = _loglik_u(params, score_a[k], score_b[k], _clip_u(c * d[k]), True)
        ge, hde = _shift_derivs(params, score_a[k], score_b[k], d[k])
        out[k, 0], out[k, 1], out[k, 2], out[k, 3], out[k, 4] = l, c * g, ge, c * c * h, hde


@njit(cache=True)
def _shifted_forecast_loop(params, d, var, e, out):
    """Each game's forecast at ``d[k] ~ N(d[k], var[k])`` with the shift ``e[k]`` (``params`` a copy)."""
    for k in range(d.shape[0]):
        params[SHIFT_AT] = e[k]
        pw, pd, pl = forecast_u(params, d[k], var[k])
        out[k, 0], out[k, 1], out[k, 2] = inflate(pw, pd, pl, params[5])


@kernel(DERIVS_SIG)
def goals_derivs(params, score, score_a, score_b, d):
    """``dl/dd`` and ``d2l/dd2`` of :func:`goals_loglik`; with ``params[COORD_AT] = 1`` (two skills per
    side: the game's base moved by the shift ``e`` of :data:`SHIFT_AT`, the log-rates
    ``eta_0 + (e +- d) / (2 scale)``) ``dl/de = (g_a + g_b) / (2 scale)`` and
    ``d2l/dd de = (h_a - h_b) / (2 scale)^2`` instead (``d2l/de2`` is ``d2l/dd2``), for the counts'
    own law (two skills are refused with the other laws, :class:`statespace.SkillModel`)."""
    c = 0.5 / params[1]
    if params[COORD_AT] != 0.0:
        return _shift_derivs(params, score_a, score_b, d)
    _, g, h = _loglik_u(params, score_a, score_b, _clip_u(c * d), False)
    return c * g, c * c * h


@kernel(LIK_SIG)
def goals_loglik(params, score, score_a, score_b, d):
    """With ``u = d / (2 scale)``, ``eta_a = base + u``, ``eta_b = base - u`` the log-means of
    the two counts ``x, y`` (score_a, score_b): ``l = l_side(x, eta_a) + l_side(y, eta_b)``,
    ``dl/dd = (g_a - g_b) / (2 scale)``, ``d2l/dd2 = (h_a + h_b) / (2 scale)^2`` with each side's
    log pmf and its derivatives ``g``, ``h`` in ``eta`` from :func:`statespace.model.counts.side_loglik`;
    Poisson, ``l = x log lambda_a - lambda_a - log x! + y log lambda_b - lambda_b - log y!``, at
    dispersion 0; with Dixon and Coles' ``rho`` plus ``log tau(x, y)``, with the bivariate Poisson's
    shared rate plus its sum over the shared goals, and with inflated draws as
    :func:`statespace.model.goal_laws.inflated` (:mod:`statespace.model.goal_laws`). A ``u``
    beyond :data:`U_MAX` counts as ``+-U_MAX``."""
    c = 0.5 / params[1]
    l, g, h = _loglik_u(params, score_a, score_b, _clip_u(c * d), True)
    return l, c * g, c * c * h


@kernel(FORECAST_SIG)
def goals_forecast(params, d, var):
    """:func:`statespace.model.goals_outcome.forecast_u` (the probabilities averaged over
    ``d ~ N(d, var)``, the draw's odds tilted by ``params[6]``; read from the forecast table where it
    reaches) with the draws inflated by ``params[5]`` (:func:`statespace.model.goal_laws.inflate`)."""
    pw, pd, pl = forecast_u(params, d, var)
    return inflate(pw, pd, pl, params[5])


def _values(x) -> np.ndarray:
    """The numbers of ``x``: a NumPy array, or a PyTensor constant's or shared variable's data."""
    if hasattr(x, "get_value"):
        return np.asarray(x.get_value(), dtype=np.float64)
    if hasattr(x, "data"):
        return np.asarray(x.data, dtype=np.float64)
    return np.asarray(x, dtype=np.float64)


def _shared_log_sums(score_a, score_b, base: float, lam3: float) -> np.ndarray:
    """:func:`statespace.model.goal_laws.shared_log_sum` of each game (the counts are data, known
    when the graph is built)."""
    xa, xb = _values(score_a), _values(score_b)
    out = np.array([shared_log_sum(x, y, base, lam3) for x, y in zip(xa.ravel(), xb.ravel())])
    return out.reshape(xa.shape)


@dataclass(frozen=True)
class Goals(Observation, name="goals", needs_scores=True,
            loglik=goals_loglik, derivs=goals_derivs, forecast=goals_forecast):
    r"""Each side's count, Poisson, with rates set by the skill difference :math:`d`, the scale
    :math:`\alpha` and the log-rate :math:`\eta_0` (``base``) of level sides:

    .. math::

        \mathtt{score\_a} &\sim \operatorname{Poisson}(\lambda_a), \qquad \log \lambda_a = \eta_0 + \frac{d}{2 \alpha} \\
        \mathtt{score\_b} &\sim \operatorname{Poisson}(\lambda_b), \qquad \log \lambda_b = \eta_0 - \frac{d}{2 \alpha}

    independently (Maher 1982, "Modelling association football scores", Statistica
    Neerlandica 36, with attack and defence folded into one skill per side); with a
    ``dispersion`` :math:`\kappa > 0` each count is negative binomial with the same mean and
    variance :math:`\lambda + \kappa \lambda^2` (the NB2 model; Hilbe 2011, "Negative binomial
    regression"; for football scores Reep, Pollard and Benjamin 1971): goals more spread out than
    Poisson, as between sides of very unequal strength, without pulling :math:`\eta_0` down.
    :math:`d` already holds the model's home advantage, so :math:`h` (``home``) is a log-rate ratio
    times :math:`2 \alpha`. A skill difference of :math:`\alpha` multiplies a's rate by
    :math:`e^{1/2}` and divides b's by it: the log-ratio of the two rates is :math:`d / \alpha`.

    Win/draw/loss: the sign of ``score_a - score_b``, a Skellam variable at dispersion 0 (Karlis and
    Ntzoufras 2003, "Analysis of sports data by using bivariate Poisson models", JRSS D 52); with
    skill uncertainty :math:`d \sim \mathcal{N}(m, v)` averaged by quadrature over :math:`d`
    (:func:`goals_forecast`). No exact tilted moments (:meth:`moments` raises
    ``NotImplementedError``).

    Parameters
    ----------
    base:
        :math:`\eta_0`, the log of each side's expected count when the sides are level
        (:math:`d = 0`): :math:`\log 1.35` for about 1.35 goals a side, as in association football;
        in :math:`[\log 0.05, \log 1000]` (:data:`BASE_MIN`, :data:`BASE_MAX`).
    dispersion:
        :math:`\kappa \ge 0`: 0 (default) for Poisson counts; above, negative binomial with
        variance :math:`\lambda + \kappa \lambda^2` (:math:`\kappa = 1 / \mathtt{size}`), at most
        :data:`DISPERSION_MAX` (2); below 1e-300 (:data:`DISPERSION_MIN`) it is 0.

    The games' ``score_a`` and ``score_b`` are counts: whole numbers from 0 to :data:`GOALS_MAX`
    (10,000); anything else is refused naming its row and column (:meth:`check_games`).

    rho:
        Dixon and Coles' dependence of the low scores (1997, "Modelling association football
        scores and inefficiencies in the football betting market", JRSS C 46(2), eq. 4.2), for
        Poisson counts: the probabilities of 0-0, 0-1, 1-0 and 1-1 times
        :math:`\tau = 1 - \lambda_a \lambda_b \rho`, :math:`1 + \lambda_a \rho`,
        :math:`1 + \lambda_b \rho`, :math:`1 - \rho` (each at least :data:`TAU_MIN`); 0 (default)
        for independent counts; in :math:`[-1, 1]`. A negative :math:`\rho` (football's is near
        :math:`-0.1`) makes 0-0 and 1-1 more likely and 1-0, 0-1 less: more draws than independent
        Poisson counts give.

    covariance:
        :math:`\lambda_3 \ge 0`, the bivariate Poisson's shared goals (Karlis and Ntzoufras 2003,
        "Analysis of sports data by using bivariate Poisson models", The Statistician 52(3)):
        :math:`\mathtt{score\_a} = W_a + W_3`, :math:`\mathtt{score\_b} = W_b + W_3` with
        :math:`W_3 \sim \operatorname{Poisson}(\lambda_3)`, so
        :math:`\operatorname{Cov} = \lambda_3`; for Poisson counts without ``rho``; at most
        :data:`COVARIANCE_MAX`. The difference of the counts, and so the forecast, does not depend
        on it, and with one skill per side neither do the derivatives in :math:`d` (see
        :mod:`statespace.model.goal_laws`): it changes the likelihood of the scores.
    inflation:
        :math:`p \in [0, 0.95]`, the diagonal inflation of Karlis and Ntzoufras (2003): with
        probability :math:`p` the game is a draw, its score Poisson of a level side's rate
        :math:`e^{\eta_0}` each, else it follows the law above; win and loss scaled by
        :math:`1 - p`, a draw moves the skills less. With any law of the counts.
    tilt:
        :math:`\theta \in [-3, 3]`: the draw's odds times :math:`e^\theta`,
        :math:`P'(x, y) = P(x, y) e^{\theta [x = y]} / Z` (exponential tilting of the diagonal, every
        score's probability kept positive, fewer draws for a negative :math:`\theta`); with
        Poisson or negative binomial counts (not with ``rho`` or ``inflation``). The forecast over
        the skill uncertainty averages the tilted probabilities (from the forecast table, to
        second order in the spread of the draw probability over the uncertainty).
        :class:`filters.EKF` with ``SkillModel(draw_drift=...)`` makes it a latent random
        walk.
    table:
        True (default): the win/draw/loss forecast of a game whose skill difference is uncertain
        is read from a table of the integral over that uncertainty, built once per setting
        (:mod:`statespace.model.outcome_table`; a few milliseconds), so a forecast costs the same
        whatever the quadrature would; False: integrated per game by the trapezoid rule
        (:func:`goals_forecast`), the reference the table is measured against
        (``benchmarks/goals_speed.py``). The likelihood and its derivatives are exact either way.

    Kernel parameters (:meth:`vector`): ``[base, scale, dispersion, rho, covariance, inflation, tilt,
    shift, coord]`` (the last two written by a filter with two skills per side, 0 else), then the table's.
    """

    #: where the kernel parameters hold the draw tilt (a latent draw tendency is written there)
    tilt_at: ClassVar[int] = TILT_AT
    #: where the kernel parameters hold a game's goal-rate shift and which derivatives to give (two
    #: skills per side, :attr:`statespace.SkillModel.openness_var`)
    shift_at: ClassVar[int] = SHIFT_AT
    coord_at: ClassVar[int] = COORD_AT

    base: float
    dispersion: float = 0.0
    rho: float = 0.0
    covariance: float = 0.0
    inflation: float = 0.0
    tilt: float = 0.0
    table: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "base", R.number("Goals", "base", self.base, BASE_MIN, BASE_MAX,
                                                  unit=" (the log of 0.05 to 1000 expected goals a side)"))
        dispersion = R.number("Goals", "dispersion", self.dispersion, 0.0, DISPERSION_MAX)
        # below 1e-300 the negative binomial is the Poisson to 300 digits, and 1 / dispersion overflows
        object.__setattr__(self, "dispersion", dispersion if dispersion >= DISPERSION_MIN else 0.0)
        object.__setattr__(self, "rho", R.number("Goals", "rho", self.rho, -RHO_MAX, RHO_MAX))
        object.__setattr__(self, "covariance", R.number("Goals", "covariance", self.covariance, 0.0, COVARIANCE_MAX))
        object.__setattr__(self, "inflation", R.number("Goals", "inflation", self.inflation, 0.0, INFLATION_MAX))
        object.__setattr__(self, "tilt", R.number("Goals", "tilt", self.tilt, -TILT_MAX, TILT_MAX))
        if self.tilt != 0.0 and (self.rho != 0.0 or self.inflation != 0.0):
            raise ValueError(f"Goals: tilt={self.tilt:g} (the draw's odds) changes the draws as rho={self.rho:g} and "
                             f"inflation={self.inflation:g} do; set those to 0")
        if self.covariance != 0.0 and (self.dispersion != 0.0 or self.rho != 0.0):
            raise ValueError(f"Goals: covariance={self.covariance:g} (the bivariate Poisson's shared goals) is for "
                             f"Poisson counts without Dixon and Coles' rho; got dispersion={self.dispersion:g}, "
                             f"rho={self.rho:g}: set them to 0")
        if not isinstance(self.table, (bool, np.bool_)):
            raise ValueError(f"Goals: table must be True or False, got {self.table!r}")
        object.__setattr__(self, "table", bool(self.table))
        if self.rho != 0.0 and self.dispersion != 0.0:
            raise ValueError(f"Goals: rho={self.rho:g} (Dixon and Coles' correction) is for Poisson counts, and "
                             f"dispersion={self.dispersion:g} makes them negative binomial; set one of them to 0")

    def _problems(self, score, score_a, score_b, alpha):
        """Besides finite scores: counts, whole numbers in ``[0, GOALS_MAX]``."""
        out = super()._problems(score, score_a, score_b, alpha)
        for name, x in (("score_a", score_a), ("score_b", score_b)):
            with np.errstate(invalid="ignore"):
                bad = np.isfinite(x) & ~((x >= 0) & (x <= GOALS_MAX) & (x == np.floor(x)))
            out.append((name, f"a {name} that is not a count (score_a and score_b are counts: whole numbers "
                              f">= 0 and at most {GOALS_MAX:.0f})", bad, x))
        return out

    def vector(self, scale: float) -> np.ndarray:
        own = self._own(scale)
        if not self.table:
            return own
        return np.concatenate([own, _table(self.base, self.dispersion, self.rho)])

    def _own(self, scale: float) -> np.ndarray:
        """The observation's own kernel parameters, without the forecast table (what the likelihood reads)."""
        return np.array([self.base, self.check_scale(scale), self.dispersion, self.rho, self.covariance, self.inflation,
                         self.tilt, 0.0, 0.0])

    def two_skill_loglik(self, d, e, score_a, score_b, *, scale: float = 1.0) -> np.ndarray:
        r"""With two skills per side (:attr:`statespace.SkillModel.two_skills`): each game's
        :math:`(\ell, \partial_d \ell, \partial_e \ell, \partial_d^2 \ell, \partial_d \partial_e \ell)`,
        shape ``(n, 5)``, at skill difference ``d`` and goal-rate shift ``e`` (the two sides' summed
        openness): the log-rates :math:`\eta_0 + (e \pm d) / (2 \alpha)`; :math:`\partial_e^2 \ell`
        is :math:`\partial_d^2 \ell` (the counts' own law, which two skills require)."""
        d, e, xa, xb = (np.ascontiguousarray(np.ravel(v), dtype=np.float64) for v in np.broadcast_arrays(
            np.asarray(d, float), np.asarray(e, float), np.asarray(score_a, float), np.asarray(score_b, float)))
        out = np.empty((d.size, 5))
        _two_skill_loop(self._own(scale), xa, xb, d, e, out)  # the likelihood reads no table: not copied
        return out

    def proba_shifted(self, d, var, e, *, scale: float = 1.0) -> np.ndarray:
        """:meth:`proba` of each game with its goal-rate shift ``e`` (two skills per side): ``(n, 3)``;
        integrated per game (the forecast table is of the observation's own base)."""
        d, var, e = (np.ascontiguousarray(np.ravel(v), dtype=np.float64) for v in np.broadcast_arrays(
            np.asarray(d, float), np.asarray(var, float), np.asarray(e, float)))
        out = np.empty((d.size, 3))
        _shifted_forecast_loop(self.vector(scale), d, var, e, out)
        return out

    def symbolic_loglik(self, d, score, score_a, score_b, *, scale: float = 1.0, theta=None, shift=None):
        r"""Each game's log-likelihood as a PyTensor graph of the skill differences ``d`` (what
        PyMC's model of the games sums): with :math:`u = d / (2 \alpha)`,
        :math:`\eta_a = \eta_0 + u`, :math:`\eta_b = \eta_0 - u`, the log pmf of both counts
        :math:`x, y` (``score_a``, ``score_b``): Poisson,

        .. math::

            x \eta_a - e^{\eta_a} - \log x! + y \eta_b - e^{\eta_b} - \log y!,

        or at dispersion :math:`\kappa = 1 / r > 0` the negative binomial's

        .. math::

            \log \Gamma(x + r) - \log \Gamma(r) - \log x! + x (\eta - \log r) - (x + r) \log(1 + \kappa e^\eta)

        per side, plus Dixon and Coles' :math:`\log \tau(x, y)` with ``rho``, the bivariate
        Poisson's sum over the shared goals and the inflation of the draws (the formulas of
        :func:`goals_loglik`, :math:`u` within :math:`\pm` :data:`U_MAX` as there). ``score`` and
        ``theta`` are not read. ``shift``: each game's goal-rate shift :math:`e` (two skills per side,
        the summed openness of the two sides: :math:`\eta_{a,b} = \eta_0 + (e \pm d) / (2 \alpha)`, the
        law of :meth:`two_skill_loglik`; the counts' own law only).
        PyTensor is imported here, when a graph is built."""
        if self.tilt != 0.0:
            raise NotImplementedError(f"Goals: the PyTensor graph has no draw tilt (tilt={self.tilt:g}); its "
                                      f"kernels (the EKF, the Laplace smoother) read it")
        configure_pytensor()  # before PyTensor's first import: its compile cache out of the home directory
        import pytensor.tensor as pt

        c = 0.5 / R.scale("Goals", "scale", scale)
        kappa = self.dispersion

        def side(x, eta):
            if kappa == 0.0:
                return x * eta - pt.exp(eta) - pt.gammaln(x + 1.0)
            r = 1.0 / kappa
            return (pt.gammaln(x + r) - math.lgamma(r) - pt.gammaln(x + 1.0) + x * (eta - math.log(r))
                    - (x + r) * pt.log1p(kappa * pt.exp(eta)))

        u = pt.clip(c * d, -U_MAX, U_MAX)  # as the kernels: scored as at +-U_MAX beyond (see U_MAX)
        base = self.base
        if shift is not None:
            if self.rho != 0.0 or self.covariance != 0.0 or self.inflation != 0.0:
                raise ValueError("Goals: a goal-rate shift (two skills per side) is modelled with the counts' own "
                                 "law; give rho=0, covariance=0 and inflation=0")
            base = pt.clip(self.base + c * shift, BASE_MIN, BASE_MAX)  # as game_base
        out = side(score_a, base + u) + side(score_b, base - u)
        if self.rho != 0.0:  # Dixon and Coles' log tau(x, y) of the four low scores, as _dixon_coles
            rho, la, lb = self.rho, pt.exp(self.base + u), pt.exp(self.base - u)

            def log_tau(t):
                return pt.log(pt.maximum(t, TAU_MIN))

            x, y = pt.as_tensor_variable(score_a), pt.as_tensor_variable(score_b)
            t11 = math.log(max(1.0 - rho, TAU_MIN))
            tau = pt.switch(pt.eq(x, 1) & pt.eq(y, 1), t11, 0.0)
            tau = pt.switch(pt.eq(x, 1) & pt.eq(y, 0), log_tau(1.0 + lb * rho), tau)
            tau = pt.switch(pt.eq(x, 0) & pt.eq(y, 1), log_tau(1.0 + la * rho), tau)
            out = out + pt.switch(pt.eq(x, 0) & pt.eq(y, 0), log_tau(1.0 - la * lb * rho), tau)
        if self.covariance != 0.0:  # a constant of each game (la lb = e^(2 base)): summed here, as the kernels
            out = out + _shared_log_sums(score_a, score_b, self.base, self.covariance)
        if self.inflation != 0.0:  # log((1 - p) P + p D(x) [x = y]), as goal_laws.inflated
            p = self.inflation
            x, y = pt.as_tensor_variable(score_a), pt.as_tensor_variable(score_b)
            kept = math.log1p(-p) + out
            log_d = math.log(p) + x * self.base - math.exp(self.base) - pt.gammaln(x + 1.0)
            top = pt.maximum(kept, log_d)  # log(e^kept + e^log_d) from the larger: both may be far below -745
            out = pt.switch(pt.eq(x, y), top + pt.log(pt.exp(kept - top) + pt.exp(log_d - top)), kept)
        return out

    def mean_margin(self, d, var=0.0, *, scale: float = 1.0) -> np.ndarray:
        r""":math:`\mathrm{E}[\mathtt{score\_a} - \mathtt{score\_b}] = \mathrm{E}[\lambda_a - \lambda_b]`
        for :math:`x \sim \mathcal{N}(d, v)`: with :math:`c = 1 / (2 \alpha)` the rates are
        log-normal, :math:`\mathrm{E}[e^{\eta_0 + c x}] = e^{\eta_0 + c d + c^2 v / 2}` (the
        log-normal mean), so

        .. math::

            \mathrm{E}[\lambda_a - \lambda_b]
            &= e^{\eta_0} \left(e^{c d + c^2 v / 2} - e^{-c d + c^2 v / 2}\right) \\
            &= 2 e^{\eta_0 + c^2 v / 2} \sinh(c d),

        the last form taken (no cancellation of two large terms). Mean of a Poisson count is its
        rate (Maher 1982), so this is the mean of the Skellam difference averaged over ``x``; the
        bivariate Poisson's shared goals add to both counts and cancel, an inflated draw
        (``inflation`` :math:`p`) has margin 0: times :math:`1 - p`; a tilt scales the mass off the
        draws by :math:`(1 - P'_D) / (1 - P_D)` (read from the averaged forecast, as it is)."""
        d, var = self._moments_of_d(d, var)
        c = 0.5 / R.scale("Goals", "scale", scale)
        out = (1.0 - self.inflation) * 2.0 * np.exp(self.base + 0.5 * c * c * var) * np.sinh(c * d)
        if self.tilt == 0.0:
            return out
        # tilting scales the non-draw mass by 1 / Z = (1 - P'_D) / (1 - P_D): taken from the averaged forecast
        untilted = dataclasses.replace(self, tilt=0.0).proba(d, var, scale=scale)[..., 1]
        tilted_pd = self.proba(d, var, scale=scale)[..., 1]
        return out * (1.0 - tilted_pd) / (1.0 - untilted)
