r"""The laws of two goal counts beyond independence, as :class:`statespace.Goals` reads them:
Dixon and Coles' low-score correction, the bivariate Poisson's shared component, the
inflation of the draws and the tilt of their odds. Compiled; every sum bounded by the smaller count.

With ``u = d / (2 scale)`` the own rates of the two sides are :math:`\lambda_a = e^{\eta_0 + u}`,
:math:`\lambda_b = e^{\eta_0 - u}`, so :math:`\lambda_a \lambda_b = e^{2 \eta_0}` whatever the skills.

- **Dixon and Coles** (1997, "Modelling association football scores and inefficiencies in the
  football betting market", JRSS C 46(2), eq. 4.2): the Poisson probabilities of 0-0, 0-1, 1-0
  and 1-1 times :math:`\tau = 1 - \lambda_a \lambda_b \rho`, :math:`1 + \lambda_a \rho`,
  :math:`1 + \lambda_b \rho`, :math:`1 - \rho`.
- **Bivariate Poisson** (Karlis and Ntzoufras 2003, "Analysis of sports data by using bivariate
  Poisson models", The Statistician 52(3), eq. 1): :math:`X = W_a + W_3`, :math:`Y = W_b + W_3`
  with independent Poisson :math:`W_a, W_b, W_3` of rates :math:`\lambda_a, \lambda_b, \lambda_3`
  (:math:`\operatorname{Cov}(X, Y) = \lambda_3`):

  .. math::

      P(x, y) = e^{-(\lambda_a + \lambda_b + \lambda_3)} \frac{\lambda_a^x}{x!} \frac{\lambda_b^y}{y!}
      \sum_{k=0}^{\min(x, y)} \binom{x}{k} \binom{y}{k} k! \left(\frac{\lambda_3}{\lambda_a \lambda_b}\right)^k.

  :math:`X - Y = W_a - W_b` whatever :math:`\lambda_3`, so the win/draw/loss forecast is the
  independent one; and with one skill per side the sum depends on the rates only through
  :math:`\lambda_a \lambda_b = e^{2 \eta_0}`, so :math:`\lambda_3` leaves the derivatives in ``d``
  (the filters' updates) as they are and changes the likelihood of the scores by a constant of
  the game: :math:`-\lambda_3 + \log \sum_k`.
- **Diagonal inflation** (Karlis and Ntzoufras 2003, section 2.2): with probability :math:`p` the
  game is a draw whose score follows :math:`D`, else it follows the model above:
  :math:`P'(x, y) = (1 - p) P(x, y) + p D(x) [x = y]`; here :math:`D` is the Poisson count of a
  level side, rate :math:`e^{\eta_0}` (one of their choices of :math:`D`, with no further parameter).
  Win and loss are scaled by :math:`1 - p` and the draw gains :math:`p`; a draw moves the skills
  less, by the share :math:`q = (1 - p) P(x, x) / P'(x, x)` of it the model explains:
  :math:`\ell' = q \ell_u`, :math:`\ell'' = q \ell_{uu} + q (1 - q) \ell_u^2`.
- **Tilted draws** (this package's one-parameter family, not from a paper: the exponential tilt of
  the diagonal, as Davidson's draw parameter is of the outcome): every score as the law above
  gives it, the draws' times :math:`e^\theta`, :math:`P'(x, y) = P(x, y) e^{\theta [x = y]} / Z`,
  :math:`Z = 1 + (e^\theta - 1) P_D`. Always a law, either way, where a negative inflation is not.
  With :math:`P_D` and its derivatives in :math:`u` (:func:`statespace.model.counts.draw_moments`):
  :math:`\ell' = \ell + \theta [x = y] - \log Z`, :math:`\ell'_u = \ell_u - (e^\theta - 1) P_D' / Z`,
  :math:`\ell'_{uu} = \ell_{uu} - (e^\theta - 1) P_D'' / Z + ((e^\theta - 1) P_D' / Z)^2`.
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["TAU_MIN", "taus", "dixon_coles", "shared_log_sum", "inflate", "inflated"]

#: The least a Dixon-Coles factor ``tau`` counts as (its log then about -69): between very unequal
#: sides ``1 + rho lambda`` of a negative ``rho`` would fall below zero (at ``lambda > 1 / |rho|``,
#: eight goals expected at ``rho = -0.13``), where the score's probability is that small anyway.
TAU_MIN = 1e-30


@njit(cache=True)
def taus(la, lb, rho):
    """Dixon and Coles' factors ``tau`` of the scores 0-0, 0-1, 1-0 and 1-1 at the rates ``la``,
    ``lb`` (1997, eq. 4.2): ``1 - la lb rho``, ``1 + la rho``, ``1 + lb rho``, ``1 - rho``, each at least
    :data:`TAU_MIN`."""
    return (max(1.0 - la * lb * rho, TAU_MIN), max(1.0 + la * rho, TAU_MIN), max(1.0 + lb * rho, TAU_MIN),
            max(1.0 - rho, TAU_MIN))


@njit(cache=True)
def dixon_coles(x, y, base, u, rho):
    """``log tau(x, y)`` of Dixon and Coles at the rates ``e^(base +- u)`` and its first and second
    derivatives in ``u``: 0-0 and 1-1 do not move with ``u`` (``la lb = e^(2 base)``); 0-1,
    ``log(1 + rho la)``, ``rho la / tau`` and ``rho la / tau^2``; 1-0, ``log(1 + rho lb)``,
    ``-rho lb / tau`` and ``rho lb / tau^2`` (``la = e^(base + u)``, ``lb = e^(base - u)``). Zero
    elsewhere, and where a factor is held at :data:`TAU_MIN`."""
    if rho == 0.0 or x > 1.0 or y > 1.0:
        return 0.0, 0.0, 0.0
    la = math.exp(base + u)
    lb = math.exp(base - u)
    t00, t01, t10, t11 = taus(la, lb, rho)
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
def shared_log_sum(x, y, base, lam3):
    """The bivariate Poisson's ``-lam3 + log sum_k C(x, k) C(y, k) k! (lam3 / (la lb))^k`` for whole
    counts ``x``, ``y`` with ``la lb = e^(2 base)``: 0 at ``lam3 = 0``. In one pass over the
    ``min(x, y) + 1`` terms, the log of each from the last by the ratio ``(x - k) (y - k) r / (k + 1)``,
    ``r = lam3 e^(-2 base)``, summed relative to the largest so far (no overflow: every term taken
    over the largest is at most 1)."""
    if lam3 == 0.0:
        return 0.0
    n = int(min(x, y))
    log_r = math.log(lam3) - 2.0 * base
    t = 0.0  # log of the k = 0 term
    top = 0.0
    acc = 1.0  # the sum so far over e^top
    for k in range(n):
        t += math.log((x - k) * (y - k)) + log_r - math.log(k + 1.0)
        if t > top:
            acc = acc * math.exp(top - t) + 1.0
            top = t
        else:
            acc += math.exp(t - top)
    return -lam3 + top + math.log(acc)


@njit(cache=True)
def inflate(pw, pd, pl, p):
    """Win/draw/loss with the draws inflated by ``p``: ``((1 - p) pw, (1 - p) pd + p, (1 - p) pl)``."""
    if p == 0.0:
        return pw, pd, pl
    return (1.0 - p) * pw, (1.0 - p) * pd + p, (1.0 - p) * pl


@njit(cache=True)
def inflated(x, y, base, p, l, g, h):
    """``(l', g', h')``: a game's log-likelihood ``l`` and its derivatives ``g``, ``h`` (in any
    variable the draw distribution does not depend on) under the inflation ``p`` of the draws,
    the draw's score ``D`` Poisson of rate ``e^base``: ``log(1 - p) + l`` and ``g``, ``h`` for a win or
    a loss; for a draw ``x = y``, ``l' = log((1 - p) e^l + p D(x))``, ``g' = q g``,
    ``h' = q h + q (1 - q) g^2`` with ``q = (1 - p) e^l / e^l'``."""
    if p == 0.0:
        return l, g, h
    a = math.log1p(-p) + l
    if x != y:
        return a, g, h
    lam = math.exp(base)
    b = math.log(p) + x * base - lam - math.lgamma(x + 1.0)
    top = max(a, b)
    lp = top + math.log(math.exp(a - top) + math.exp(b - top))
    q = math.exp(a - lp)
    return lp, q * g, q * h + q * (1.0 - q) * g * g


@njit(cache=True)
def tilt(pw, pd, pl, theta):
    """Win/draw/loss with the draw's odds times ``e^theta``: ``(pw, e^theta pd, pl) / (pw + e^theta pd + pl)``."""
    if theta == 0.0:
        return pw, pd, pl
    e = math.exp(theta)
    z = pw + e * pd + pl
    return pw / z, e * pd / z, pl / z


@njit(cache=True)
def tilted(x, y, theta, l, g, h, pd, pd1, pd2):
    """``(l', g', h')`` of the draw-tilted law ``P'(x, y) = P(x, y) e^(theta [x = y]) / Z``,
    ``Z = 1 + (e^theta - 1) P_D``, from the untilted ``l`` and its derivatives ``g``, ``h`` in ``u`` and
    the draw probability ``P_D`` with its derivatives ``pd1``, ``pd2`` in ``u``
    (:func:`statespace.model.counts.draw_moments`): ``l' = l + theta [x = y] - log Z``,
    ``g' = g - (e^theta - 1) P_D' / Z``, ``h' = h - (e^theta - 1) P_D'' / Z + ((e^theta - 1) P_D' / Z)^2``."""
    if theta == 0.0:
        return l, g, h
    em1 = math.expm1(theta)
    z = 1.0 + em1 * pd
    r1 = em1 * pd1 / z
    out = l - math.log(z) + (theta if x == y else 0.0)
    return out, g - r1, h - em1 * pd2 / z + r1 * r1
