r"""The compiled kernels of the extended Kalman filter's diagonal and scalar forms (the equations:
:mod:`filters.ekf`), and the two pieces the full-covariance form (:mod:`filters.ekf_full`) shares
with them: the linearisation of a game's log-likelihood (:func:`linearise`, one Newton step or the
iterated EKF's several) and the skill's transition over a gap (:func:`transition`).

Each kernel reads the parameter vector ``theta`` and the state columns by the indices of
:mod:`filters._ekf_layout`; the latent home advantage (``home_drift > 0``) and draw tendency
(``draw_drift > 0``) are the state's last rows, followed by a block per group of a grouping column
(:func:`_block`).
"""

from __future__ import annotations

import math

from numba import njit

from . import kernels as K
from ._ekf_layout import (_DDRIFT, _DRIFT, _FIXED_VAR, _GBASE, _GBDRIFT, _GDDRIFT, _GDRAW, _GHDRIFT, _GHOME, _GROUPS,
                          _HDRIFT, _HOME, _ITERS, _KAPPA0, _MEAN, _MU0, _ODRIFT, _OPEN, _OPEN_SD, _REV, _SD, _SHIFT_AT,
                          _TILT_AT, _TOL, _TWO)

__all__ = ["gains", "linearise", "transition"]


@njit(cache=True)
def gains(kappa, S):
    """``(1 / (1 + kappa S), kappa / (1 + kappa S))`` for ``kappa >= 0`` (up to inf) and ``S > 0``: the
    share of the innovation the update keeps and the variance-shrink rate; once ``kappa S`` passes
    1e300 they are their limits ``0`` and ``1 / S`` (written out, ``inf / inf`` would be NaN)."""
    ks = kappa * S
    if ks < 1e300:
        den = 1.0 + ks
        return 1.0 / den, kappa / den
    return 0.0, 1.0 / S


@njit(cache=True)
def linearise(derivs, obs, d0, S, theta, score, ya, yb, w):
    """Linearisation point ``d`` (``d0`` for the EKF, the mode for the iterated EKF), ``g = l'(d)``
    and ``kappa = -l''(d) >= 0`` there, for the observation's log-likelihood ``l`` tempered by the
    game's weight ``w``. The iterated EKF solves ``d - d0 - S l'(d) = 0`` by Newton's method, the
    step ``((d0 - d) + S g) / (1 + S kappa)`` taken through :func:`gains` (so that a huge ``kappa``
    or ``S g`` gives no inf / inf); a step that is not finite ends the iteration where it is. The
    gradient is kept within ``+-MEAN_MAX`` (on a tiny scale it overflows, and ``inf * 0`` is NaN)."""
    iters = int(theta[_ITERS])
    d = d0
    g, h = derivs(obs, score, ya, yb, d)
    g = K.clamp_mean(g * w)
    h *= w
    if iters > 1:
        for _ in range(iters - 1):   # the k-th linearisation point is k - 1 Newton steps from d0
            kappa = max(-h, 0.0)
            keep, _ = gains(kappa, S)
            step = (d0 - d) * keep + g * (S * keep if keep > 0.0 else 1.0 / kappa)  # S / (1 + kappa S)
            if not abs(step) < math.inf:
                break
            d += step
            g, h = derivs(obs, score, ya, yb, d)
            g = K.clamp_mean(g * w)
            h *= w
            if abs(step) <= theta[_TOL] * (1.0 + abs(d)):
                break
    return d, g, max(-h, 0.0)


@njit(cache=True)
def transition(theta, dt, q=-1.0):
    """``(a, v)`` of the skill's transition over ``dt``: ``s' = mu_0 + a (s - mu_0) + N(0, v)``;
    the random walk ``(1, q dt)``, or Ornstein-Uhlenbeck ``(e^(-lambda dt), q (1 - a^2) / (2 lambda))``
    (:meth:`statespace.SkillModel.transition`); ``q`` the model's drift unless given (the openness's)."""
    lam = theta[_REV]
    if q < 0.0:
        q = theta[_DRIFT]
    if lam > 0.0:
        return math.exp(-lam * dt), q * (-math.expm1(-2.0 * lam * dt)) / (2.0 * lam)
    return 1.0, q * dt


@njit(cache=True, inline="always")
def _common_rows(theta):
    """The rows of the common block: the latent home advantage (``home_drift > 0``) then the
    latent draw tendency (``draw_drift > 0``)."""
    return (1 if theta[_HDRIFT] > 0.0 else 0) + (1 if theta[_DDRIFT] > 0.0 else 0)


@njit(cache=True, inline="always")
def _group_rows(theta):
    """The rows of a group's block: its home advantage, its draw tendency, its goal base, where it has them."""
    return int(theta[_GHOME]) + int(theta[_GDRAW]) + int(theta[_GBASE])


@njit(cache=True)
def _block(x, theta, at_home):
    """``(at_home, rc, rg)``: a game's home flag, the first shared row (the common block's) and the
    first row of its group's block. The shared rows are the state's last rows: the common block,
    then (with a grouping column) ``G = theta[groups]`` group blocks. A grouped run writes the
    game's group ``j`` into its home column as ``at_home + 2 j`` (:meth:`filters.ekf.EKF.home_column`)."""
    groups = int(theta[_GROUPS])
    kg = _group_rows(theta)
    rc = x.shape[0] - _common_rows(theta) - groups * kg
    j = 0
    if groups > 0:
        j = int(at_home // 2.0)
        at_home -= 2.0 * j
    return at_home, rc, rc + _common_rows(theta) + j * kg


@K.predict_kernel
def _predict(x, i, theta, dt):
    """``m <- mu_0 + a (m - mu_0)``, ``v <- a^2 v + q_dt``; the shared rows (:func:`_block`) are
    random walks of their own: the common home advantage and draw tendency with ``home_drift`` and
    ``draw_drift``, a group's with ``group_home_drift`` and ``group_draw_drift`` (0: a fixed
    unknown offset). Variances are kept at most ``VAR_MAX`` (a long idle time overflows ``q dt``)."""
    kc = _common_rows(theta)
    kg = _group_rows(theta)
    first = x.shape[0] - kc - int(theta[_GROUPS]) * kg
    if i >= first:
        off = i - first
        if off < kc:
            q = theta[_HDRIFT] if theta[_HDRIFT] > 0.0 and off == 0 else theta[_DDRIFT]
        else:
            pos = (off - kc) % kg
            if theta[_GHOME] > 0.0 and pos == 0:
                q = theta[_GHDRIFT]
            elif theta[_GDRAW] > 0.0 and pos == int(theta[_GHOME]):
                q = theta[_GDDRIFT]
            else:
                q = theta[_GBDRIFT]
        x[i, _SD] = math.sqrt(min(x[i, _SD] * x[i, _SD] + q * dt, K.VAR_MAX))
        return
    a, add = transition(theta, dt)
    if theta[_REV] > 0.0:
        x[i, _MEAN] = theta[_MU0] + a * (x[i, _MEAN] - theta[_MU0])
    x[i, _SD] = math.sqrt(min(a * a * x[i, _SD] * x[i, _SD] + add, K.VAR_MAX))
    if theta[_TWO] > 0.0:  # the openness (two skills): its own walk, pulled towards 0 at the same rate
        _, add_o = transition(theta, dt, theta[_ODRIFT])
        x[i, _OPEN] *= a
        x[i, _OPEN_SD] = math.sqrt(min(a * a * x[i, _OPEN_SD] * x[i, _OPEN_SD] + add_o, K.VAR_MAX))


@njit(cache=True, inline="always")
def _home_rows(theta, rc, rg):
    """The rows of a game's latent home advantage: the common one and the group's; -1 where absent."""
    return (rc if theta[_HDRIFT] > 0.0 else -1), (rg if theta[_GHOME] > 0.0 else -1)


@njit(cache=True)
def _home(x, at_home, rc, rg, theta):
    """The home term of a game's difference and its variance, ``(h_c + h_g) at_home``: the common
    part the fixed ``home`` or (``home_drift > 0``) row ``rc``'s mean and variance (0 where a
    group's row holds all of it), plus the group's row ``rg`` where blocks have one."""
    c, g = _home_rows(theta, rc, rg)
    if c >= 0:
        m, v = x[c, _MEAN], x[c, _SD] * x[c, _SD]
    else:
        m, v = (0.0 if g >= 0 else theta[_HOME]), 0.0
    if g >= 0:
        m += x[g, _MEAN]
        v += x[g, _SD] * x[g, _SD]
    return m * at_home, v * at_home * at_home


@njit(cache=True, inline="always")
def _tilt_rows(theta, rc, rg):
    """The rows of a game's draw tendency: the common one (``draw_drift > 0``) and the group's (where
    blocks have one); -1 where absent."""
    c = rc + (1 if theta[_HDRIFT] > 0.0 else 0) if theta[_DDRIFT] > 0.0 else -1
    g = rg + int(theta[_GHOME]) if theta[_GDRAW] > 0.0 else -1
    return c, g


@njit(cache=True)
def _proba_at(forecast, obs, x, a, b, at_home, rc, rg, theta):
    """:func:`_proba` of a game whose home column is decoded (:func:`_block`)."""
    tc, tg = _tilt_rows(theta, rc, rg)
    if tc >= 0 or tg >= 0:  # the draw tilt: the common tendency plus the group's
        obs[int(theta[_TILT_AT])] = (x[tc, _MEAN] if tc >= 0 else 0.0) + (x[tg, _MEAN] if tg >= 0 else 0.0)
    if theta[_SHIFT_AT] >= 0.0:  # the game's goal-rate shift at its mean: two skills, a goal base per group
        rb = _base_row(theta, rg)
        obs[int(theta[_SHIFT_AT])] = ((x[a, _OPEN] + x[b, _OPEN] if theta[_TWO] > 0.0 else 0.0)
                                      + (x[rb, _MEAN] if rb >= 0 else 0.0))
    h, vh = _home(x, at_home, rc, rg, theta)
    return forecast(obs, x[a, _MEAN] - x[b, _MEAN] + h, x[a, _SD] * x[a, _SD] + x[b, _SD] * x[b, _SD] + vh)


@K.proba_kernel
def _proba(forecast, obs, x, a, b, at_home, theta):
    """The model's forecast at the prior: mean ``m_a - m_b + h``, variance ``v_a + v_b (+ v_h)``;
    with a latent draw tendency its mean (the common row's plus the group's) is written into the
    observation's vector first, where the observation reads its draw tilt (``theta[tilt_at]``)."""
    at_home, rc, rg = _block(x, theta, at_home)
    return _proba_at(forecast, obs, x, a, b, at_home, rc, rg, theta)


@njit(cache=True, inline="always")
def _base_row(theta, rg):
    """The row of a game's group's part of the goal base (rating points of the shift ``e``: the log-rates
    move by ``e / (2 scale)``); -1 where blocks have none."""
    return rg + int(theta[_GHOME]) + int(theta[_GDRAW]) if theta[_GBASE] > 0.0 else -1


@njit(cache=True)
def _home_site(scratch, i, v, sign, g, dd, kappa, rest):
    """The latent home advantage's site, the posterior ``N(m + sign v shift, v - f v^2 sign^2)`` over
    its prior ``N(m, v)`` in natural parameters: precision ``f sign^2 / (1 - f v sign^2)``, gradient
    ``sign shift / (1 - f v sign^2)`` (always summed: it takes part in every game at home). With
    ``shift = (g + kappa dd) / (1 + kappa S)``, ``f = kappa / (1 + kappa S)`` and ``rest = S - v sign^2``
    (the two competitors' variances) these are ``kappa sign^2 / (1 + kappa rest)`` and
    ``sign (g + kappa dd) / (1 + kappa rest)``, taken in that form through :func:`gains` (``1 - f v``
    rounds to 0 when the home advantage's variance dwarfs the competitors')."""
    keep, rate = gains(kappa, rest)
    # the gradient within +-MEAN_MAX: (d - d0) over a tiny variance may overflow, and two games at home
    # of one period could sum an inf and a -inf
    K.gaussian_site(scratch, i, v, sign * sign * rate, K.clamp_mean(sign * (g * keep + dd * rate)))


@K.site_kernel
def _site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """One Newton step on the game's log posterior from the prior ``N(m, diag(v))``: with
    ``S = v_a + v_b (+ v_h)`` and ``g``, ``kappa`` at the linearisation point ``d``, the
    difference's posterior mean moves by ``S * shift``, ``shift = (g + kappa (d - d0)) / (1 + kappa S)``;
    each participant ``i`` (sign ``+1`` for a, ``-1`` for b, ``at_home`` for the latent home
    advantage) moves by ``sign v_i shift`` to variance ``v_i - kappa v_i^2 sign^2 / (1 + kappa S)``.

    Guards: ``S`` is at least ``VAR_MIN``, and ``shift`` is taken as
    ``g / (1 + kappa S) + (d - d0) kappa / (1 + kappa S)`` through :func:`gains`, finite for a curvature
    that overflowed (a heavy game on a tiny scale)."""
    at_home, rc, rg = _block(x, theta, at_home)
    p = _proba_at(forecast, obs, x, a, b, at_home, rc, rg, theta)
    if theta[_SHIFT_AT] >= 0.0:
        _site_two(derivs, obs, x, theta, a, b, score, score_a, score_b, at_home, rc, rg, weight, scratch)
        return p
    h, vh = _home(x, at_home, rc, rg, theta)
    d0 = x[a, _MEAN] - x[b, _MEAN] + h
    va = x[a, _SD] * x[a, _SD]
    vb = x[b, _SD] * x[b, _SD]
    S = max(va + vb + vh, K.VAR_MIN)  # > 0: a prior_var of 0 gives skills known exactly
    d, g, kappa = linearise(derivs, obs, d0, S, theta, score, score_a, score_b, weight)
    keep, f = gains(kappa, S)
    dd = d - d0
    shift = g * keep + dd * f
    K.moment_site(scratch, a, va, va * shift, va - f * va * va)
    K.moment_site(scratch, b, vb, -vb * shift, vb - f * vb * vb)
    if vh > 0.0:  # the latent home advantage's rows take part on a's side, with coefficient at_home
        for r in _home_rows(theta, rc, rg):
            if r >= 0:
                v = x[r, _SD] * x[r, _SD]
                _home_site(scratch, r, v, at_home, g, dd, kappa, max(S - v * at_home * at_home, 0.0))
                scratch[r, 0] += 1.0
    tc, tg = _tilt_rows(theta, rc, rg)
    if tc >= 0 or tg >= 0:
        _draw_site(scratch, x, tc, tg, p[1], score, weight)
    return p


@njit(cache=True)
def _site_two(derivs, obs, x, theta, a, b, score, score_a, score_b, at_home, rc, rg, w, scratch):
    r"""The site of a game whose goal rates have a latent shift: two skills per competitor (skill ``s``
    and openness ``o``, each row's columns ``_MEAN, _SD`` and ``_OPEN, _OPEN_SD``) and/or a group's
    part of the goal base ``beta`` (a shared row): one Newton step on the log posterior of
    ``z = (d, e)``, ``d = s_a - s_b + h`` and ``e = o_a + o_b + beta``, from the prior
    ``N(z0, S)``, ``S = diag(S_d, S_e)`` (``S_d = v_a + v_b (+ v_h)``, ``S_e = w_a + w_b (+ w_beta)``:
    the diagonal filter's rows are independent). With the gradient ``g`` and curvature ``K = -H`` (2 x 2) of the
    weighted log-likelihood at ``z0`` (the observation's derivatives in ``d`` and, with its
    ``coord`` set, in ``e``) the posterior of ``z`` has mean ``z0 + S (I + K S)^{-1} g`` and the
    state, prior ``N(m, Sigma)`` with ``z = J x``, the mean ``m + Sigma J^T (I + K S)^{-1} g`` and the
    covariance ``Sigma - Sigma J^T M J Sigma``, ``M = K (I + S K)^{-1}``; with
    ``D = det(I + K S) = 1 + k_dd S_d + k_ee S_e + (k_dd k_ee - k_de^2) S_d S_e``:
    ``(I + K S)^{-1} g = ((1 + k_ee S_e) g_d - k_de S_e g_e, (1 + k_dd S_d) g_e - k_de S_d g_d) / D``,
    ``M_dd = (k_dd + S_e det K) / D``, ``M_ee = (k_ee + S_d det K) / D``. Each row keeps its diagonal:
    ``m_a += v_a step_d``, ``m_b -= v_b step_d``, the latent home advantage ``+= at_home v_h step_d``,
    ``o_a, o_b`` (and ``beta``) ``+= w step_e``; variances ``v - v^2 M_dd``, ``w - w^2 M_ee`` (the 2 x 2 form of
    :func:`_site`'s step; with ``k_de = 0`` it is two of them). ``K`` is kept positive
    semi-definite (the counts' own law gives one: a sum of ``-h_a (1, 1)(1, 1)^T`` and
    ``-h_b (1, -1)(1, -1)^T``); where ``D`` would overflow, the cross term is left out and each
    coordinate steps through :func:`gains`. ``rc``, ``rg``: the game's shared rows (:func:`_block`)."""
    h, vh = _home(x, at_home, rc, rg, theta)
    d0 = x[a, _MEAN] - x[b, _MEAN] + h
    va = x[a, _SD] * x[a, _SD]
    vb = x[b, _SD] * x[b, _SD]
    two = theta[_TWO] > 0.0
    wa = x[a, _OPEN_SD] * x[a, _OPEN_SD] if two else 0.0
    wb = x[b, _OPEN_SD] * x[b, _OPEN_SD] if two else 0.0
    rb = _base_row(theta, rg)
    wbase = x[rb, _SD] * x[rb, _SD] if rb >= 0 else 0.0
    sd_ = max(va + vb + vh, K.VAR_MIN)
    se = wa + wb + wbase
    coord = int(theta[_SHIFT_AT]) + 1
    gd, hdd = derivs(obs, score, score_a, score_b, d0)
    obs[coord] = 1.0
    ge, hde = derivs(obs, score, score_a, score_b, d0)
    obs[coord] = 0.0
    gd = K.clamp_mean(gd * w)
    ge = K.clamp_mean(ge * w)
    kdd = max(-hdd * w, 0.0)
    kee = kdd  # the curvature in e equals the one in d (the counts' own law)
    kde = min(max(-hde * w, -kdd), kdd)  # |k_de| <= k_dd: K positive semi-definite
    det_k = kdd * kee - kde * kde
    big = 1.0 + kdd * sd_ + kee * se + det_k * sd_ * se
    if big < 1e300:
        step_d = ((1.0 + kee * se) * gd - kde * se * ge) / big
        step_e = ((1.0 + kdd * sd_) * ge - kde * sd_ * gd) / big
        m_dd = (kdd + se * det_k) / big
        m_ee = (kee + sd_ * det_k) / big
    else:
        keep_d, m_dd = gains(kdd, sd_)
        keep_e, m_ee = gains(kee, max(se, K.VAR_MIN))
        step_d = gd * keep_d
        step_e = ge * keep_e
    K.moment_site(scratch, a, va, va * step_d, max(va - m_dd * va * va, K.VAR_MIN))
    K.moment_site(scratch, b, vb, -vb * step_d, max(vb - m_dd * vb * vb, K.VAR_MIN))
    for i, wi in ((a, wa), (b, wb)):
        if wi > 0.0:  # an openness known exactly (openness_var = 0, no drift yet) takes no site
            K.second_site(scratch, i, wi, wi * step_e, max(wi - m_ee * wi * wi, K.VAR_MIN))
    if wbase > 0.0:  # the group's part of the goal base
        K.posterior_site(scratch, rb, wbase, wbase * step_e, max(wbase - m_ee * wbase * wbase, K.VAR_MIN))
        scratch[rb, 0] += 1.0
    if vh > 0.0:  # the latent home advantage's rows take part on a's side, with coefficient at_home
        for r in _home_rows(theta, rc, rg):
            if r >= 0:
                v = x[r, _SD] * x[r, _SD]
                K.posterior_site(scratch, r, v, at_home * v * step_d,
                                 max(v - m_dd * v * v * at_home * at_home, K.VAR_MIN))
                scratch[r, 0] += 1.0


@njit(cache=True)
def _draw_site(scratch, x, tc, tg, pd, score, w):
    """The latent draw tendency's sites (rows ``tc``, the common one, and ``tg``, the group's; -1 where
    absent): one Newton step on the log-likelihood of whether the game was drawn,
    ``[draw] log p'_D + [not] log(1 - p'_D)`` with ``p'_D`` the forecast's draw probability tilted by
    ``theta = theta_c + theta_g`` at its mean, whose derivatives in the tilt are ``g = [draw] - p'_D``
    and ``kappa = p'_D (1 - p'_D)``; ``theta``'s variance ``S`` is the rows' sum, and each row takes
    :func:`_home_site`'s share of the step (sign 1, at the prior mean). The curvature of the score
    given the outcome is left to the skills' step (a block-diagonal linearisation). Weighted by the
    game's weight."""
    g = ((1.0 if score == 0.5 else 0.0) - pd) * w
    kappa = pd * (1.0 - pd) * w
    S = (x[tc, _SD] * x[tc, _SD] if tc >= 0 else 0.0) + (x[tg, _SD] * x[tg, _SD] if tg >= 0 else 0.0)
    for r in (tc, tg):
        if r >= 0:
            v = x[r, _SD] * x[r, _SD]
            _home_site(scratch, r, v, 1.0, g, 0.0, kappa, max(S - v, 0.0))
            scratch[r, 0] += 1.0


@K.predict_kernel
def _predict_scalar(x, i, theta, dt):
    """The fixed variance does not grow; mean reversion still pulls the mean."""
    if theta[_REV] > 0.0:
        a, _ = transition(theta, dt)
        x[i, _MEAN] = theta[_MU0] + a * (x[i, _MEAN] - theta[_MU0])


@K.proba_kernel
def _proba_scalar(forecast, obs, x, a, b, at_home, theta):
    """The model's forecast with the fixed variance: ``Var(d) = 2 v``."""
    return forecast(obs, x[a, _MEAN] - x[b, _MEAN] + theta[_HOME] * at_home, 2.0 * theta[_FIXED_VAR])


@K.site_kernel
def _site_scalar(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
    """The diagonal site with every variance fixed at ``v`` and the curvature frozen at its
    steady-state value ``kappa_0``: a fixed gain, as Elo's (mean shifts, :data:`~filters.kernels.RULE_SHIFT`)."""
    p = _proba_scalar(forecast, obs, x, a, b, at_home, theta)
    d0 = x[a, _MEAN] - x[b, _MEAN] + theta[_HOME] * at_home
    v = theta[_FIXED_VAR]
    S = 2.0 * v
    d, g, _ = linearise(derivs, obs, d0, S, theta, score, score_a, score_b, weight)
    kappa = weight * theta[_KAPPA0]
    keep, f = gains(kappa, S)  # (g + kappa (d - d0)) / (1 + kappa S), finite for any kappa
    shift = min(max(v * (g * keep + (d - d0) * f), -K.STEP_MAX), K.STEP_MAX)  # see RULE_SHIFT
    scratch[a, 1] += shift
    scratch[b, 1] -= shift
    return p
