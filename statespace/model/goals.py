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
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

from statespace.model import outcome_table as T
from statespace.model import ranges as R
from statespace.model.counts import count_outcome, side_loglik, skellam_outcome  # noqa: F401  (skellam_outcome: re-exported)
from statespace._runtime.pytensor_config import configure_pytensor
from statespace._runtime.jit import kernel
from statespace.model.observation import DERIVS_SIG, FORECAST_SIG, LIK_SIG, Observation

__all__ = ["Goals", "BASE_MIN", "BASE_MAX", "DISPERSION_MAX", "GOALS_MAX", "U_MAX", "RHO_MAX", "TAU_MIN"]

#: ``base`` from the log of 0.05 to the log of 1000 expected goals (or points) of a level side: from
#: twenty times fewer than association football's 1.35 a side (a game that ends 0-0 nine times in
#: ten tells nothing more about skill) to about ten times basketball's 110 points. Below, one game's
#: Newton step (the EKF's) from level sides overshoots by up to ``|x - y| / e^base`` scales; above,
#: a forecast sums thousands of terms per quadrature node.
BASE_MIN, BASE_MAX = math.log(0.05), math.log(1000.0)

#: The largest ``dispersion`` :math:`\kappa` (a negative binomial of size :math:`1/\kappa \ge 0.5`,
#: variance :math:`\lambda + 2\lambda^2`): scores are far less spread out (football's goals
#: :math:`\kappa \approx 0.05`-:math:`0.1`, baseball's runs about 0.3). With it a forecast's sums
#: stay under :math:`10^5` terms, and at :data:`U_MAX` the weaker side's chance of a draw or better
#: is below :math:`e^{-46}`.
DISPERSION_MAX = 2.0

#: The most goals (or points) a side may score in one game: ten times anything a side has scored in
#: a game of any sport (basketball's record is under 200 points, an innings of cricket under
#: 1,200 runs); a larger number is a typing error or a wrong column, and would make one game's
#: Newton step jump by tens of thousands of scales.
GOALS_MAX = 10_000.0

#: Half the log-ratio of the two rates, :math:`u = d / (2\alpha)`, beyond which a record is scored and
#: forecast as at :math:`\pm` ``U_MAX`` (a skill difference of 200 scales): the rates there differ by
#: :math:`e^{200}`, every forecast is certain to within :math:`e^{-46}`, and the rates,
#: :math:`e^{\eta_0 + U}` at most :math:`e^{107}`, keep every derivative finite at any accepted scale.
#: The gradient there still points back towards the data.
U_MAX = 100.0

#: The forecast integrates the Gaussian skill uncertainty out by the trapezoid rule on
#: ``z = (d - mean) / sd`` over ``|z| <= Z_MAX`` (the Gaussian mass beyond is 1.2e-15).
Z_MAX = 8.0

#: Widest trapezoid step in ``z``: the error of the rule on a Gaussian bump of width ``w`` sampled
#: every ``h`` falls like ``exp(-2 pi^2 w^2 / h^2)``: e^-31 for the weight itself (``w = 1``) at
#: this step, e^-79 at ``h = w / 2``, the step taken where the probabilities vary faster.
MAX_STEP = 0.8

#: The range of Dixon and Coles' dependence ``rho``: ``tau(1, 1) = 1 - rho`` is a probability factor,
#: so ``rho <= 1``, and ``-1`` already makes a 0-1 or 1-0 score impossible between level sides of one
#: goal each; fitted football values lie near -0.1 (Dixon and Coles 1997: -0.13).
RHO_MAX = 1.0

#: The least a Dixon-Coles factor ``tau`` counts as (its log then about -69): between very unequal
#: sides ``1 + rho lambda`` of a negative ``rho`` would fall below zero (at ``lambda > 1 / |rho|``,
#: eight goals expected at ``rho = -0.13``), where the score's probability is that small anyway.
TAU_MIN = 1e-30

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: the observation's own numbers in its kernel parameters; the forecast table follows them
_N_PARAMS = 4


@njit(cache=True)
def _clip_u(u):
    """``u`` within ``+-U_MAX`` (see :data:`U_MAX`)."""
    return min(max(u, -U_MAX), U_MAX)


@njit(cache=True)
def _taus(la, lb, rho):
    """Dixon and Coles' factors ``tau`` of the scores 0-0, 0-1, 1-0 and 1-1 at the rates ``la``,
    ``lb`` (1997, eq. 4.2): ``1 - la lb rho``, ``1 + la rho``, ``1 + lb rho``, ``1 - rho``, each at least
    :data:`TAU_MIN`."""
    return (max(1.0 - la * lb * rho, TAU_MIN), max(1.0 + la * rho, TAU_MIN), max(1.0 + lb * rho, TAU_MIN),
            max(1.0 - rho, TAU_MIN))


@njit(cache=True)
def _outcome_at(base, kappa, rho, u):
    """:func:`statespace.model.counts.count_outcome` at the rates ``e^(base +- u)``, ``u`` clipped;
    with Dixon and Coles' ``rho`` (Poisson counts) the four low scores' probabilities times their
    :func:`_taus`: ``P(x, y) = tau(x, y) e^(-la - lb) la^x lb^y / (x! y!)``. Unclipped, the changes
    cancel (a win and a loss each gain ``rho la lb e^(-la - lb)``, a draw loses twice that); a
    clipped factor's residue is divided out."""
    u = _clip_u(u)
    la = math.exp(base + u)
    lb = math.exp(base - u)
    pw, pd, pl = count_outcome(la, lb, kappa)
    if rho == 0.0:
        return pw, pd, pl
    t00, t01, t10, t11 = _taus(la, lb, rho)
    p00 = math.exp(-la - lb)
    d00 = (t00 - 1.0) * p00
    d01 = (t01 - 1.0) * p00 * lb
    d10 = (t10 - 1.0) * p00 * la
    d11 = (t11 - 1.0) * p00 * la * lb
    total = 1.0 + d00 + d01 + d10 + d11
    return (pw + d10) / total, (pd + d00 + d11) / total, (pl + d01) / total


@njit(cache=True)
def _dixon_coles(x, y, base, u, rho):
    """``log tau(x, y)`` of Dixon and Coles at the rates ``e^(base +- u)`` and its first and second
    derivatives in ``u``: 0-0 and 1-1 do not move with ``u`` (``la lb = e^(2 base)``); 0-1,
    ``log(1 + rho la)``, ``rho la / tau`` and ``rho la / tau^2``; 1-0, ``log(1 + rho lb)``,
    ``-rho lb / tau`` and ``rho lb / tau^2`` (``la = e^(base + u)``, ``lb = e^(base - u)``). Zero
    elsewhere, and where a factor is held at :data:`TAU_MIN`."""
    if rho == 0.0 or x > 1.0 or y > 1.0:
        return 0.0, 0.0, 0.0
    la = math.exp(base + u)
    lb = math.exp(base - u)
    t00, t01, t10, t11 = _taus(la, lb, rho)
    if x == 0.0 and y == 0.0:
        return math.log(t00), 0.0, 0.0
    if x == 1.0 and y == 1.0:
        return math.log(t11), 0.0, 0.0
    if x == 0.0:  # 0-1
        if t01 <= TAU_MIN:
            return math.log(t01), 0.0, 0.0
        return math.log(t01), rho * la / t01, rho * la / (t01 * t01)
    if t10 <= TAU_MIN:  # 1-0
        return math.log(t10), 0.0, 0.0
    return math.log(t10), -rho * lb / t10, rho * lb / (t10 * t10)


@njit(cache=True)
def _width(base, kappa):
    """The width in ``u`` over which the win/draw/loss probabilities change around ``u = 0``
    (:func:`goals_forecast`): ``1 / sqrt(2 lambda_0)``, at most 1, wider with the dispersion."""
    lam0 = math.exp(base)
    return min(1.0, max(1.0 / math.sqrt(2.0 * lam0), 0.5 * math.sqrt((1.0 + kappa * lam0) / (2.0 * lam0))))


@njit(cache=True)
def _outcome_grid(base, kappa, rho, u, out):
    """``out[k] = _outcome_at(base, kappa, rho, u[k])``: the probabilities the forecast table is
    built from."""
    for k in range(u.shape[0]):
        out[k, 0], out[k, 1], out[k, 2] = _outcome_at(base, kappa, rho, u[k])


@lru_cache(maxsize=16)
def _table(base: float, kappa: float, rho: float) -> np.ndarray:
    """The forecast table of these settings (:mod:`statespace.model.outcome_table`): the same for
    every scale, since it is read in ``u``. Kept for the last few settings (a tuning changes them
    at every evaluation; a run reads them once)."""
    width = float(_width(base, kappa))
    u = T.fine_grid(width)
    f = np.empty((u.shape[0], 3))
    _outcome_grid(base, kappa, rho, u, f)
    out = T.build(f, width)
    out.flags.writeable = False
    return out


# params = [base, scale, dispersion, rho] and, with the table, outcome_table's numbers

@kernel(DERIVS_SIG)
def goals_derivs(params, score, score_a, score_b, d):
    """``dl/dd`` and ``d2l/dd2`` of :func:`goals_loglik`."""
    c = 0.5 / params[1]
    u = _clip_u(c * d)
    _, ga, ha = side_loglik(score_a, params[0] + u, params[2])
    _, gb, hb = side_loglik(score_b, params[0] - u, params[2])
    _, gt, ht = _dixon_coles(score_a, score_b, params[0], u, params[3])
    return c * (ga - gb + gt), c * c * (ha + hb + ht)


@kernel(LIK_SIG)
def goals_loglik(params, score, score_a, score_b, d):
    """With ``u = d / (2 scale)``, ``eta_a = base + u``, ``eta_b = base - u`` the log-means of
    the two counts ``x, y`` (score_a, score_b): ``l = l_side(x, eta_a) + l_side(y, eta_b)``,
    ``dl/dd = (g_a - g_b) / (2 scale)``, ``d2l/dd2 = (h_a + h_b) / (2 scale)^2`` with each side's
    log pmf and its derivatives ``g``, ``h`` in ``eta`` from :func:`statespace.model.counts.side_loglik`;
    Poisson, ``l = x log lambda_a - lambda_a - log x! + y log lambda_b - lambda_b - log y!``, at
    dispersion 0; with Dixon and Coles' ``rho`` plus ``log tau(x, y)`` (:func:`_dixon_coles`). A ``u``
    beyond :data:`U_MAX` counts as ``+-U_MAX``."""
    c = 0.5 / params[1]
    u = _clip_u(c * d)
    la, ga, ha = side_loglik(score_a, params[0] + u, params[2])
    lb, gb, hb = side_loglik(score_b, params[0] - u, params[2])
    lt, gt, ht = _dixon_coles(score_a, score_b, params[0], u, params[3])
    return la + lb + lt, c * (ga - gb + gt), c * c * (ha + hb + ht)


@njit(cache=True)
def _forecast_z(base, kappa, rho, mu, s, h):
    """The trapezoid rule on ``z`` (``u = mu + s z``, steps of ``h`` in ``u``) over ``|z| <= Z_MAX``,
    its Gaussian weights normalised to sum to 1: at most ``2 Z_MAX s / h + 1`` nodes."""
    step = h / s
    n = int(math.ceil(Z_MAX / step))
    pw = 0.0
    pd = 0.0
    pl = 0.0
    mass = 0.0
    for k in range(-n, n + 1):
        z = k * step
        weight = math.exp(-0.5 * z * z)
        w, dr, lo = _outcome_at(base, kappa, rho, mu + s * z)
        pw += weight * w
        pd += weight * dr
        pl += weight * lo
        mass += weight
    return pw / mass, pd / mass, pl / mass


@njit(cache=True)
def _forecast_u(base, kappa, rho, mu, s, h):
    """For ``u ~ N(mu, s^2)`` wider than the clip (``Z_MAX s > U_MAX``): the outcome is constant
    beyond ``+-U_MAX`` (clipped), so ``E[f(u)] = f(U) P(u > U) + f(-U) P(u < -U) + int_{-U}^{U} f
    phi``, the tails by ``erfc`` and the middle by the trapezoid rule on a grid of ``N = ceil(2 U /
    h)`` steps in ``u`` with the Euler-Maclaurin end correction ``-(h^2 / 12) (F'(U) - F'(-U))``,
    ``F = f phi``, ``F'(+-U) = f(+-U) phi'(+-U)`` (``f`` is flat at the clip). ``s > U_MAX / Z_MAX``,
    so the weight is smooth on the grid. Normalised by the same rule applied to 1."""
    n = int(math.ceil(2.0 * U_MAX / h))
    step = 2.0 * U_MAX / n
    top = _outcome_at(base, kappa, rho, U_MAX)
    bottom = _outcome_at(base, kappa, rho, -U_MAX)
    acc = np.zeros(4)  # P(win), P(draw), P(loss) and the mass, unnormalised
    for k in range(n + 1):
        u = -U_MAX + k * step
        t = (u - mu) / s
        weight = math.exp(-0.5 * t * t) * (0.5 if k == 0 or k == n else 1.0) * step * _INV_SQRT_2PI / s
        if k == 0:
            f = bottom
        elif k == n:
            f = top
        else:
            f = _outcome_at(base, kappa, rho, u)
        for j in range(3):
            acc[j] += weight * f[j]
        acc[3] += weight
    up = 0.5 * math.erfc((U_MAX - mu) / (s * math.sqrt(2.0)))
    down = 0.5 * math.erfc((U_MAX + mu) / (s * math.sqrt(2.0)))
    # phi'(u) = -phi(u) (u - mu) / s^2 at both ends, times h^2 / 12
    t_up = (U_MAX - mu) / s
    t_down = (-U_MAX - mu) / s
    d_up = -math.exp(-0.5 * t_up * t_up) * _INV_SQRT_2PI / s * t_up / s * step * step / 12.0
    d_down = -math.exp(-0.5 * t_down * t_down) * _INV_SQRT_2PI / s * t_down / s * step * step / 12.0
    for j in range(3):
        acc[j] += up * top[j] + down * bottom[j] - (top[j] * d_up - bottom[j] * d_down)
    acc[3] += up + down - (d_up - d_down)
    return acc[0] / acc[3], acc[1] / acc[3], acc[2] / acc[3]


@kernel(FORECAST_SIG)
def goals_forecast(params, d, var):
    """:func:`statespace.model.counts.count_outcome` at the rates of ``d``, averaged over ``d ~ N(d, var)``.

    The probabilities change fastest in ``u = d / (2 scale)`` around ``u = 0``, where both rates
    are ``lambda_0 = e^base`` and the Poisson difference has sd ``sqrt(2 lambda_0)``: there they move
    over a width ``w = 1 / sqrt(2 lambda_0)`` of ``u`` (at most 1, the width of ``1 - exp(-e^u)`` when
    a rate is small; the negative binomial's is wider, but its small counts are steep enough to
    want the same step). The trapezoid rule takes steps of
    ``h = w / 2`` in ``u`` (at most :data:`MAX_STEP` sds): on ``z = (u - mean) / sd`` over ``|z| <=
    Z_MAX`` (:func:`_forecast_z`), or where that reaches past the clip ``+-U_MAX`` over
    ``[-U_MAX, U_MAX]`` with the Gaussian tails in closed form (:func:`_forecast_u`). Either way at
    most ``2 U_MAX / h + 1 <= 4 U_MAX sqrt(2 e^base) + 1`` nodes, about 18,000 at the largest
    ``base``, whatever the variance.
    """
    base = params[0]
    kappa = params[2]
    rho = params[3]
    c = 0.5 / params[1]
    mu = min(max(c * d, -1e300), 1e300)  # c d may overflow: +-1e300 is far beyond the clip
    if not var > 0.0:
        return _outcome_at(base, kappa, rho, mu)
    s = c * math.sqrt(var)
    if mu - Z_MAX * s >= U_MAX:  # all the mass beyond the clip
        return _outcome_at(base, kappa, rho, U_MAX)
    if mu + Z_MAX * s <= -U_MAX:
        return _outcome_at(base, kappa, rho, -U_MAX)
    if params.shape[0] > _N_PARAMS:  # the table, where it reaches
        found, pw, pd, pl = T.lookup(params, _N_PARAMS, mu, s)
        if found:
            return pw, pd, pl
    h = min(MAX_STEP * s, 0.5 * _width(base, kappa))
    if Z_MAX * s <= U_MAX:
        return _forecast_z(base, kappa, rho, mu, s, h)
    return _forecast_u(base, kappa, rho, mu, s, h)


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
        :data:`DISPERSION_MAX` (2).

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

    table:
        True (default): the win/draw/loss forecast of a game whose skill difference is uncertain
        is read from a table of the integral over that uncertainty, built once per setting
        (:mod:`statespace.model.outcome_table`; a few milliseconds), so a forecast costs the same
        whatever the quadrature would; False: integrated per game by the trapezoid rule
        (:func:`goals_forecast`), the reference the table is measured against
        (``benchmarks/goals_speed.py``). The likelihood and its derivatives are exact either way.

    Kernel parameters (:meth:`vector`): ``[base, scale, dispersion, rho]``, then the table's.
    """

    base: float
    dispersion: float = 0.0
    rho: float = 0.0
    table: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "base", R.number("Goals", "base", self.base, BASE_MIN, BASE_MAX,
                                                  unit=" (the log of 0.05 to 1000 expected goals a side)"))
        object.__setattr__(self, "dispersion", R.number("Goals", "dispersion", self.dispersion, 0.0, DISPERSION_MAX))
        object.__setattr__(self, "rho", R.number("Goals", "rho", self.rho, -RHO_MAX, RHO_MAX))
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
        own = np.array([self.base, self.check_scale(scale), self.dispersion, self.rho])
        if not self.table:
            return own
        return np.concatenate([own, _table(self.base, self.dispersion, self.rho)])

    def symbolic_loglik(self, d, score, score_a, score_b, *, scale: float = 1.0, theta=None):
        r"""Each game's log-likelihood as a PyTensor graph of the skill differences ``d`` (what
        PyMC's model of the games sums): with :math:`u = d / (2 \alpha)`,
        :math:`\eta_a = \eta_0 + u`, :math:`\eta_b = \eta_0 - u`, the log pmf of both counts
        :math:`x, y` (``score_a``, ``score_b``): Poisson,

        .. math::

            x \eta_a - e^{\eta_a} - \log x! + y \eta_b - e^{\eta_b} - \log y!,

        or at dispersion :math:`\kappa = 1 / r > 0` the negative binomial's

        .. math::

            \log \Gamma(x + r) - \log \Gamma(r) - \log x! + x (\eta - \log r) - (x + r) \log(1 + \kappa e^\eta)

        per side, plus Dixon and Coles' :math:`\log \tau(x, y)` with ``rho`` (the formulas of
        :func:`goals_loglik`, :math:`u` within :math:`\pm` :data:`U_MAX` as there). ``score`` and
        ``theta`` are not read.
        PyTensor is imported here, when a graph is built."""
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
        out = side(score_a, self.base + u) + side(score_b, self.base - u)
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
        rate (Maher 1982), so this is the mean of the Skellam difference averaged over ``x``."""
        d, var = self._moments_of_d(d, var)
        c = 0.5 / R.scale("Goals", "scale", scale)
        return 2.0 * np.exp(self.base + 0.5 * c * c * var) * np.sinh(c * d)
