r"""The extended Kalman filter's update of a match of many sides: the compiled match kernels of the
diagonal and full-covariance forms (:mod:`filters.match_loop`), and the one observation of the
sides' performances each model means.

**The observation.** Side :math:`s` of a match performs :math:`p_s = \sum_{k \in s} w_k s_k`, so
the sides' performances are :math:`p = A s` with the design matrix :math:`A` (side x member,
entries :math:`w_k`). The result is seen through a log-likelihood :math:`\ell(p)` of the sides'
performances, chosen by the model (:func:`match_setting`):

- logistic link: Plackett-Luce (:func:`statespace.model.ranking.pl_loglik`), the likelihood of the
  whole order (Luce's choice axiom; not the pairwise decomposition, a composite likelihood that
  counts a ranking of :math:`n` sides as :math:`n (n - 1) / 2` independent games and so makes the
  filter overconfident in a free-for-all); two sides are exactly the logistic game at scale
  :math:`\alpha` with a tie as half a win. Its scale is Weng and Lin's
  :math:`c = \sqrt{n}\,\beta`, :math:`\beta = \alpha / \sqrt 2`, so a match of many sides counts
  as noisier than one of two;
- probit link: TrueSkill's Thurstonian chain of adjacent sides
  (:func:`statespace.model.ranking_pairwise.thurstone_loglik`) with the model's threshold draw
  margin :math:`\varepsilon` (0 under any other draw model); two sides are exactly the probit game;
- :class:`statespace.model.margin.Margin`, two sides with scores: :math:`y = p_a - p_b + e`,
  :math:`e \sim \mathcal{N}(0, \sigma^2)`, :math:`y` the difference of the sides' scores (Glickman
  and Stern's model with teams): Gaussian, so the update below is the exact Kalman update.

The ranking's log-likelihood is taken at the performances themselves (``var`` 0): the skills'
uncertainty enters through the Kalman update, not the likelihood's scale.

**The update.** With the members' prior :math:`\mathcal{N}(m, P)`, the gradient :math:`g` and
Hessian :math:`H` of :math:`\ell` at the prior means :math:`A m`, one Newton step on the log
posterior (the EKF; Bell and Cathey 1993) is

.. math::

    P' = (P^{-1} + A^\top \Lambda A)^{-1}, \qquad m' = m + P' A^\top g, \qquad \Lambda = -H,

taken in the sides' space through Woodbury: with :math:`S = A P A^\top` (the sides' performance
covariance), :math:`\Lambda = R R^\top` and :math:`M = R (I + R^\top S R)^{-1} R^\top`,

.. math::

    P' = P - P A^\top M A P, \qquad m' = m + P A^\top (g - M S g),

where :math:`I + R^\top S R` has eigenvalues at least 1 (:func:`newton_sides`). ``_match_full``
does this over every competitor's row of the full covariance (so a match correlates its members
with everyone they are correlated with); ``_match`` (the diagonal form) takes :math:`P` diagonal
and keeps the diagonal of :math:`P'`: the full update from the diagonal prior with the new
cross terms dropped, as the diagonal EKF does for a game (whose update is this one with two
sides of one member). There :math:`S` is diagonal, :math:`S_{ss} = \sum_{k \in s} w_k^2 v_k`.

**Which update runs.** The full form always takes the joint step above (``_match_full``). The
diagonal form takes it for matches of at most :data:`FAST_SIDES` sides, for teams (a side of more
than one member) and under Margin; a ranking of more than :data:`FAST_SIDES` sides of one member
each (a free-for-all) takes :mod:`filters._ekf_match_fast`, the same step to rounding (its
Hessian's structure, tridiagonal for the chain and diagonal plus quasiseparable for
Plackett-Luce, gives the solve and the diagonal of the inverse exactly in :math:`O(n)` after the
sort), where the eigendecomposition costs :math:`O(n^3)` and the Hessian :math:`O(n^2)`. The joint
form stays the definition and the one for small matches, where it costs little and its
eigenvalue projection is the guard; teams stay there because their design matrix mixes the
members of a side, and the matches of teams are small.

The kernels read the observation from ``theta`` (:data:`filters._ekf_layout.PARAMS`:
``match_kind``, ``match_beta``, ``match_eps``); a Margin kernel reads the two sides' scores from
``perf_mean`` before writing the forecast there (:mod:`filters.match_run` fills it with the
table's scores). :func:`check_table` refuses, before the loop, what the kernels cannot rate.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from statespace.model import numeric as nx
from statespace.model.margin import Margin
from statespace.model.outcome import Outcome
from statespace.model.ranking import pl_loglik
from statespace.model.ranking_forecast import RankingForecast
from statespace.model.ranking_pairwise import thurstone_loglik

from . import _ekf_match_fast as FAST
from . import kernels as K
from ._ekf_layout import _MBETA, _MEAN, _MEPS, _MKIND, _SD
from .match_loop import match_kernel, side_moments

__all__ = ["PLACKETT_LUCE", "THURSTONE", "MARGIN", "match_setting", "match_forecast", "check_table",
           "side_derivs", "newton_sides"]

#: ``theta[match_kind]``: the observation of a match (``NONE``: the model rates games only)
NONE, PLACKETT_LUCE, THURSTONE, MARGIN = -1, 0, 1, 2

#: the diagonal form rates a ranking of more sides than this, each of one member, by
#: :mod:`filters._ekf_match_fast` (the same step in O(n log n)); smaller matches and teams take the
#: joint O(n^3) form, the definition
FAST_SIDES = 64


def match_setting(model, iterations: int = 1) -> tuple[int, float, float]:
    """``(kind, beta, eps)`` of the observation the EKF of ``model`` rates a match with (see the
    module docstring); ``beta`` is the per-side noise :math:`\\alpha / \\sqrt 2` (Margin: its ``sd``).
    ``ValueError`` naming the setting when the model's observation of a game is not one a ranking
    of sides reproduces."""
    obs = model.observation
    if iterations > 1:
        raise ValueError(f"ekf: the iterated EKF (iterations={iterations}) rates games only; rate matches of "
                         f"many sides with iterations=1")
    if isinstance(obs, Margin):
        return MARGIN, float(obs.sd), float(obs.draw_width)
    if not isinstance(obs, Outcome):
        raise ValueError(f"ekf: matches of many sides are rated under win/draw/loss (Outcome) or Margin models; "
                         f"the model observes {type(obs).__name__}")
    beta = model.scale / math.sqrt(2.0)
    draw = model.draw_code
    if model.link == "logistic":
        if draw not in (nx.DRAW_NONE, nx.DRAW_HALF):
            raise ValueError(f"ekf: a match of many sides under the logistic link is a Plackett-Luce ranking, whose "
                             f"tie is half a win; the model's draw model is {model.draw!r}: use draw='half'")
        return PLACKETT_LUCE, beta, 0.0
    if draw == nx.DRAW_DAVIDSON:
        raise ValueError(f"ekf: a match of many sides under the probit link is TrueSkill's Thurstonian chain, whose "
                         f"draws are a threshold; the model's draw model is {model.draw!r}: use "
                         f"draw=('threshold', margin)")
    return THURSTONE, beta, float(model.draw.theta) if draw == nx.DRAW_THRESHOLD else 0.0


def match_value(model, name: str) -> float:
    """The number the kernels read under ``name`` (``match_kind``, ``match_beta``, ``match_eps``);
    a model that rates games only gives ``NONE`` (:func:`match_setting` says why, before a run)."""
    try:
        kind, beta, eps = match_setting(model)
    except ValueError:
        kind, beta, eps = NONE, 1.0, 0.0
    return float({"match_kind": kind, "match_beta": beta, "match_eps": eps}[name])


def match_forecast(model, iterations: int = 1) -> RankingForecast:
    r"""The ranking the EKF's forecast of a match means: Plackett-Luce (logistic) or Thurstonian
    (probit) at :math:`\beta = \alpha / \sqrt 2`, so a pair's scale :math:`\sqrt{2 \beta^2 + v_i + v_j}`
    is the game's :math:`\alpha` with the uncertainty added; Margin: Thurstonian with
    :math:`2 \beta^2 = \sigma^2` and the draw half-width as margin, which is the Margin forecast
    :math:`\Phi((m - w) / \sqrt{\sigma^2 + v})` of a two-sided game."""
    kind, beta, eps = match_setting(model, iterations)
    if kind == PLACKETT_LUCE:
        return RankingForecast("plackett_luce", beta)
    if kind == MARGIN:
        return RankingForecast("thurstone", beta / math.sqrt(2.0), eps)
    return RankingForecast("thurstone", beta, eps)


def check_table(name: str, model, matches) -> None:
    """``ValueError`` naming the filter and the first match the kernels cannot rate: under a Margin
    model a match must have two sides, each with a finite score; under the Thurstonian chain
    without a draw margin a tie has no likelihood."""
    kind, _, eps = match_setting(model)
    sides = np.diff(matches.match_ptr)
    if kind == MARGIN:
        bad = np.flatnonzero(sides != 2)
        if bad.size:
            m = int(bad[0])
            raise ValueError(f"{name}: a Margin model observes the score difference of two sides; match "
                             f"{matches.label[m]!r} (time {matches.when[m]}) has {sides[m]} sides")
        missing = np.flatnonzero(~np.isfinite(matches.score))
        if missing.size:
            m = int(np.searchsorted(matches.match_ptr, missing[0], side="right") - 1)
            raise ValueError(f"{name}: a Margin model needs each side's score; match {matches.label[m]!r} (time "
                             f"{matches.when[m]}) has score {matches.score[missing[0]]!r} (column 'score')")
    elif kind == THURSTONE and eps == 0.0:
        match_of_side = np.repeat(np.arange(matches.n_matches), sides)
        # a tie: two sides of one match sharing a place
        _, inverse, counts = np.unique(np.column_stack([match_of_side, matches.rank]), axis=0,
                                       return_inverse=True, return_counts=True)
        tied = np.flatnonzero(counts[inverse.reshape(-1)] > 1)
        if tied.size:
            m = int(match_of_side[tied[0]])
            raise ValueError(f"{name}: match {matches.label[m]!r} (time {matches.when[m]}) has a tie, which the "
                             f"Thurstonian chain without a draw margin cannot rate: give the model "
                             f"draw=('threshold', margin)")


@njit(cache=True)
def side_derivs(theta, mu, rank, y):
    """Gradient ``(n,)`` and Hessian ``(n, n)`` of the match's log-likelihood in the sides'
    performances ``mu`` (``rank`` the sides' places; ``y`` the score difference of side 0 over
    side 1, read by the Margin observation only)."""
    n = mu.shape[0]
    kind = int(theta[_MKIND])
    beta = theta[_MBETA]
    if kind == MARGIN:
        v = beta * beta
        r = (y - (mu[0] - mu[1])) / v
        grad = np.array([r, -r])
        hess = np.array([[-1.0 / v, 1.0 / v], [1.0 / v, -1.0 / v]])
        return grad, hess
    var = np.zeros(n)
    if kind == THURSTONE:
        _, grad, hess = thurstone_loglik(mu, var, beta, theta[_MEPS], rank)
    else:
        _, grad, hess = pl_loglik(mu, var, beta, rank)
    return grad, hess


@njit(cache=True)
def newton_sides(S, g, H):
    """``(u, M)`` of the Newton step in the sides' space (module docstring): the members' means move
    by ``P A^T u``, ``u = g - M S g``, and their covariance by ``-P A^T M A P``. ``Lambda = -H`` is
    made positive semi-definite (its eigenvalues below 0 are rounding: every ranking here is
    log-concave), and ``M = R (I + R^T S R)^-1 R^T`` with ``R = V diag(sqrt(lambda))``."""
    n = g.shape[0]
    lam = -0.5 * (H + H.T)
    vals, vecs = np.linalg.eigh(lam)
    R = np.empty((n, n))
    for j in range(n):
        r = math.sqrt(max(vals[j], 0.0))
        for i in range(n):
            R[i, j] = vecs[i, j] * r
    B = np.eye(n) + R.T @ (0.5 * (S + S.T)) @ R
    M = R @ np.linalg.solve(0.5 * (B + B.T), R.T)
    M = 0.5 * (M + M.T)
    u = g - M @ (S @ g)
    return u, M


@njit(cache=True)
def _score_difference(theta, perf_mean, s0):
    """The Margin observation's ``y = score_a - score_b`` (the scores arrive in ``perf_mean``)."""
    return perf_mean[s0] - perf_mean[s0 + 1] if int(theta[_MKIND]) == MARGIN else 0.0


@njit(cache=True)
def _fast(theta, side_ptr, s0, s1):
    """Whether the match takes :mod:`filters._ekf_match_fast`: a ranking of more than
    :data:`FAST_SIDES` sides of one member each."""
    if s1 - s0 <= FAST_SIDES or int(theta[_MKIND]) not in (PLACKETT_LUCE, THURSTONE):
        return False
    for s in range(s0, s1):
        if side_ptr[s + 1] - side_ptr[s] != 1:
            return False
    return True


@njit(cache=True)
def _match_singles(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean):
    """The diagonal step of a match of single members by :mod:`filters._ekf_match_fast`: member
    ``i`` moves by ``sqrt(v_i) step_i`` to variance ``v_i shrink_i`` (the same numbers as the joint
    form's ``w v u`` and ``v - (w v)^2 M``, to rounding)."""
    n = s1 - s0
    t = np.empty(n)
    for s in range(n):
        k = side_ptr[s0 + s]
        t[s] = weight[k] * x[member[k], _SD]
    mu = perf_mean[s0:s1].copy()
    rk = rank[s0:s1].copy()
    if int(theta[_MKIND]) == THURSTONE:
        step, shrink = FAST.chain_newton(mu, t, theta[_MBETA], theta[_MEPS], rk)
    else:
        step, shrink = FAST.pl_newton(mu, t, theta[_MBETA], rk)
    for s in range(n):
        i = member[side_ptr[s0 + s]]
        sd = x[i, _SD]
        x[i, _MEAN] = K.clamp_mean(x[i, _MEAN] + sd * step[s])
        x[i, _SD] = math.sqrt(K.clamp_var(sd * (sd * shrink[s])))


@match_kernel
def _match(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    """The diagonal EKF's match: the Newton step from ``N(m, diag(v))`` with the diagonal of the
    result kept; member ``k`` of side ``s`` moves by ``w_k v_k u_s`` to variance
    ``v_k - (w_k v_k)^2 M_ss``. A ranking of more than :data:`FAST_SIDES` single members takes
    :func:`_match_singles` instead, the same numbers to rounding in O(n log n) (module docstring)."""
    y = _score_difference(theta, perf_mean, s0)
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, _SD)
    n = s1 - s0
    if _fast(theta, side_ptr, s0, s1):
        _match_singles(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean)
        return
    g, H = side_derivs(theta, perf_mean[s0:s1].copy(), rank[s0:s1].copy(), y)
    S = np.zeros((n, n))
    for s in range(n):
        S[s, s] = perf_var[s0 + s]
    u, M = newton_sides(S, g, H)
    for s in range(n):
        for k in range(side_ptr[s0 + s], side_ptr[s0 + s + 1]):
            i = member[k]
            wv = weight[k] * x[i, _SD] * x[i, _SD]
            x[i, _MEAN] = K.clamp_mean(x[i, _MEAN] + wv * u[s])
            # w v (w v M): (w v)^2 overflows (underflows) at variances far above (below) 1, where M is about 1 / v
            x[i, _SD] = math.sqrt(K.clamp_var(x[i, _SD] * x[i, _SD] - wv * (wv * M[s, s])))


@match_kernel
def _match_full(x, theta, side_ptr, member, weight, rank, s0, s1, perf_mean, perf_var):
    """The full-covariance EKF's match (state columns ``mean``, ``sd``, then the covariance row):
    the Newton step over every competitor, ``m += P A^T u``, ``P -= (P A^T) M (P A^T)^T``; the
    sides' forecast variance is ``w^T P w`` over the side's members, covariances included. As for
    a game (:mod:`filters.ekf_full`) the diagonal of the rows that move is kept in
    ``[VAR_MIN, VAR_MAX]`` and their covariances within ``+-sqrt(P_ii P_kk)``."""
    y = _score_difference(theta, perf_mean, s0)
    side_moments(x, side_ptr, member, weight, s0, s1, perf_mean, perf_var, -1)
    n_rows = x.shape[0]
    n = s1 - s0
    PA = np.zeros((n_rows, n))  # P A^T: each row's covariance with each side's performance
    for s in range(n):
        for k in range(side_ptr[s0 + s], side_ptr[s0 + s + 1]):
            c = 2 + member[k]
            w = weight[k]
            for r in range(n_rows):
                PA[r, s] += w * x[r, c]
    S = np.zeros((n, n))
    for s in range(n):
        for t in range(n):
            acc = 0.0
            for k in range(side_ptr[s0 + s], side_ptr[s0 + s + 1]):
                acc += weight[k] * PA[member[k], t]
            S[s, t] = acc
    S = 0.5 * (S + S.T)
    for s in range(n):
        perf_var[s0 + s] = max(S[s, s], 0.0)
    g, H = side_derivs(theta, perf_mean[s0:s1].copy(), rank[s0:s1].copy(), y)
    u, M = newton_sides(S, g, H)
    # only the rows correlated with some side move (the others' P A^T is 0): the update is the block of
    # those rows, so a match among competitors who never met the rest costs nothing for the rest
    rows = np.flatnonzero(np.sum(np.abs(PA), axis=1) > 0.0)
    PAa = PA[rows]
    step = PAa @ u
    drop = (PAa @ M) @ PAa.T
    na = rows.shape[0]
    for j in range(na):
        r = rows[j]
        x[r, _MEAN] = K.clamp_mean(x[r, _MEAN] + step[j])
        for jj in range(na):
            x[r, 2 + rows[jj]] -= drop[j, jj]
    for j in range(na):
        r = rows[j]
        x[r, 2 + r] = K.clamp_var(x[r, 2 + r])
        x[r, _SD] = math.sqrt(x[r, 2 + r])
    for j in range(na):
        r = rows[j]
        for c in range(n_rows):
            if c != r:
                lim = x[r, _SD] * x[c, _SD]
                x[r, 2 + c] = min(max(x[r, 2 + c], -lim), lim)
                x[c, 2 + r] = min(max(x[c, 2 + r], -lim), lim)
