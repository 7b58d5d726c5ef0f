"""The compiled run loop that every filter shares, and the kernel signatures it calls.

A filter is its per-game *site*: from the two competitors' pre-game beliefs and one game's
record, the contribution that game makes to each competitor's belief. The loop below builds
both the rating-period update (sites summed from the pre-period state, then applied once per
competitor) and the one-game path (a period of one game) from that same function, so the two
cannot disagree. A filter supplies compiled functions over a state matrix ``x`` (one row per
competitor, columns in the filter's own units) and a parameter vector ``theta``:

- ``predict(x, i, theta, dt)``: time update of row ``i`` over ``dt`` units of time;
- ``proba(forecast, obs, x, a, b, at_home, theta) -> (win, draw, loss)``: the forecast of one
  game from the current state (``forecast`` and ``obs`` are the model's observation kernel and
  its parameter vector, :mod:`statespace.model.observation`);
- ``site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch)
  -> (win, draw, loss)``: forecast one game and add its contributions to the accumulator rows
  ``scratch[a]`` and ``scratch[b]``, reading only the pre-period state (``x`` is not written);
- ``apply(x, count, theta, i, scratch)``: turn row ``i``'s accumulated sites into its new belief
  (needed only by filters whose combination rule is not one of the built-in ones below).

Accumulator columns: ``scratch[i, 0]`` is the number of games ``i`` plays in the current period
(set by the loop before any site runs; sites may read it). The built-in combination rules:

- :data:`RULE_SHIFT` (Elo, the scalar EKF): the mean moves by the sum of the sites' shifts,
  ``x[i, 0] += scratch[i, 1]``;
- :data:`RULE_GAUSSIAN` (Glicko-1, TrueSkill, Weng-Lin, the diagonal EKF): a Gaussian belief
  ``N(x[i, 0], x[i, 1]^2)`` times Gaussian sites in natural parameters. A site adds its precision
  to ``scratch[i, 1]`` and its gradient (precision times mean shift) to ``scratch[i, 2]``, and
  sets ``scratch[i, 3]`` to the prior variance it was computed from (the pre-period variance,
  widened where the filter adds noise per game played); then with ``P = 1 / scratch[i, 3] +
  scratch[i, 1]``: ``mean += scratch[i, 2] / P``, ``sd = P^(-1/2)`` (:func:`gaussian_site`). A
  competitor's only game of the period may instead be kept as its posterior moments
  (:func:`moment_site`, flagged in ``scratch[i, 4]``), which the product of one site would give. With
  ``2 * SCRATCH_WIDTH`` accumulator columns a row may hold a second Gaussian belief in state columns
  2 and 3 (the EKF's second skill), its sites in columns ``SCRATCH_WIDTH`` on (:func:`second_site`);
- :data:`RULE_CUSTOM` (FIDE's K, Glicko-2's volatility): the filter's own ``apply``.

Numeric guards: :data:`RULE_GAUSSIAN` keeps a mean within ``+-MEAN_MAX`` and a variance
within ``[VAR_MIN, VAR_MAX]``; a :data:`RULE_SHIFT` site shifts a rating by at most ``STEP_MAX`` a
game (so that a rating stays finite over any table of fewer than 1e18 games, with no clamp per
game); the loops count a game's weight up to ``WEIGHT_MAX`` and move time forward by at most
``DT_MAX`` at once; a custom rule keeps its state within the same bounds (:func:`clamp_mean`,
:func:`clamp_var`). The settings' accepted ranges (:mod:`filters._checks`) follow from these bounds.

A rule that is not a sum of sites over the whole period at all (the full-covariance EKF's joint
update) supplies ``update(derivs, obs, x, count, theta, a, b, score, score_a, score_b, home, weight,
start, stop)`` instead and runs in :func:`period_loop`.

A filter may keep *shared* state rows besides the competitors' (the EKF's latent home advantage
and draw tendency), the last rows of the state: the loops take the index ``shared`` of the first
(-1: none), move every shared row forward in time at every period, and apply a shared row's
accumulated sites when a site marked it (``scratch[row, 0] > 0``).

The loops take these kernels as their first arguments, as first-class function values of fixed
signatures (:mod:`statespace._runtime.jit`): nothing is compiled at import; a loop called with a
built-in filter's kernels runs compiled for those very kernels (direct calls, cached on disk per
filter and observation), and with any other kernels (a closure) one loop compiled for all of them
runs, calling them through function pointers. With ``NUMBA_DISABLE_JIT=1`` the same code runs as
plain Python. The grid runs these loops once per setting in :mod:`filters.batched`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, types

from statespace._runtime.jit import entry, kernel
from statespace.model.observation import DerivsFn, ForecastFn

f8 = types.float64
i8 = types.int64
f8_2d = types.float64[:, ::1]
f8_1d = types.float64[::1]
i8_1d = types.int64[::1]
# the games' columns: read only, so a table's own (frozen) arrays can be passed without a copy
f8_1r = types.Array(types.float64, 1, "C", readonly=True)
i8_1r = types.Array(types.int64, 1, "C", readonly=True)

PREDICT_SIG = types.void(f8_2d, i8, f8_1d, f8)
PROBA_SIG = types.UniTuple(f8, 3)(ForecastFn, f8_1d, f8_2d, i8, i8, f8, f8_1d)
SITE_SIG = types.UniTuple(f8, 3)(DerivsFn, ForecastFn, f8_1d, f8_2d, f8_1d, i8, i8, f8, f8, f8, f8, f8, f8_2d)
APPLY_SIG = types.void(f8_2d, i8_1d, f8_1d, i8, f8_2d)
UPDATE_SIG = types.void(DerivsFn, f8_1d, f8_2d, i8_1d, f8_1d, i8_1r, i8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, i8, i8)

PredictFn = types.FunctionType(PREDICT_SIG)
ProbaFn = types.FunctionType(PROBA_SIG)
SiteFn = types.FunctionType(SITE_SIG)
ApplyFn = types.FunctionType(APPLY_SIG)
UpdateFn = types.FunctionType(UPDATE_SIG)

RULE_CUSTOM = 0
RULE_SHIFT = 1
RULE_GAUSSIAN = 2
#: accumulator columns every filter has (games in the period, three sums, a flag)
SCRATCH_WIDTH = 5

# Guards of the built-in rules, so that no setting or game reachable through the API
# makes a rating NaN or infinite: a Gaussian belief's variance is kept in [VAR_MIN, VAR_MAX] (an sd
# from 1e-150 to 1e150: the square of either, and sums of a few squares, are normal floats), its
# mean within +-MEAN_MAX, a shift site moves a rating by at most STEP_MAX a game (1e18 games to
# reach the largest float), a game's weight counts at most WEIGHT_MAX (so that a period's sums of
# weighted gradients and curvatures stay finite), and no time step exceeds DT_MAX (a time that
# overflowed to inf would otherwise meet a zero drift as inf * 0).
VAR_MIN = 1e-300
VAR_MAX = 1e300
MEAN_MAX = 1e300
STEP_MAX = 1e290
WEIGHT_MAX = 1e100
DT_MAX = 1e300


def predict_kernel(fn):
    """Compile ``fn`` as a predict kernel (its signature declared, compiled on first use and cached)."""
    return kernel(PREDICT_SIG)(fn)


def proba_kernel(fn):
    """Compile ``fn`` as a forecast kernel (its signature declared, compiled on first use and cached)."""
    return kernel(PROBA_SIG)(fn)


def site_kernel(fn):
    """Compile ``fn`` as a per-game site kernel (its signature declared, compiled on first use and cached)."""
    return kernel(SITE_SIG)(fn)


def apply_kernel(fn):
    """Compile ``fn`` as a custom combination rule (its signature declared, compiled on first use and cached)."""
    return kernel(APPLY_SIG)(fn)


def update_kernel(fn):
    """Compile ``fn`` as a whole-period update (its signature declared, compiled on first use and cached)."""
    return kernel(UPDATE_SIG)(fn)


@kernel(PREDICT_SIG)
def no_predict(x, i, theta, dt):
    """Time update of a filter that tracks no variance (Elo): nothing changes."""
    return


@kernel(APPLY_SIG)
def no_apply(x, count, theta, i, scratch):
    """Placeholder ``apply`` of the filters that use a built-in rule."""
    return


@njit(cache=True)
def clamp_mean(m):
    """``m`` kept within ``+-MEAN_MAX`` (a NaN stays NaN, so that a bug is not hidden)."""
    return min(max(m, -MEAN_MAX), MEAN_MAX)


@njit(cache=True)
def clamp_var(v):
    """``v`` kept within ``[VAR_MIN, VAR_MAX]`` (a NaN stays NaN)."""
    return min(max(v, VAR_MIN), VAR_MAX)


@njit(cache=True)
def gaussian_site(scratch, i, prior_var, precision, gradient, at=0):
    """Add a Gaussian site to row ``i`` (:data:`RULE_GAUSSIAN`): its precision, its gradient
    (precision times the mean shift it asks for) and the prior variance it was computed from, in
    accumulator columns ``at + 1`` to ``at + 3`` (``at = SCRATCH_WIDTH``: a second belief). Both
    must be finite (a period's sum of an inf and a -inf would be NaN)."""
    scratch[i, at + 1] += precision
    scratch[i, at + 2] += gradient
    scratch[i, at + 3] = prior_var


@njit(cache=True, inline="always")
def posterior_site(scratch, i, prior_var, mean_shift, post_var, at=0):
    """The site ``posterior / prior`` of the posterior ``N(m + mean_shift, post_var)`` over the prior
    ``N(m, prior_var)`` (:func:`gaussian_site`): precision ``1 / post_var - 1 / prior_var``, gradient
    ``mean_shift / post_var`` kept within ``+-MEAN_MAX`` (a shift over a tiny variance may overflow);
    both variances at least ``VAR_MIN``."""
    post_var = max(post_var, VAR_MIN)
    prior_var = max(prior_var, VAR_MIN)
    gaussian_site(scratch, i, prior_var, 1.0 / post_var - 1.0 / prior_var, clamp_mean(mean_shift / post_var), at)


@njit(cache=True)
def moment_site(scratch, i, prior_var, mean_shift, post_var):
    """A one-game posterior ``N(m + mean_shift, post_var)`` from the prior ``N(m, prior_var)`` as a
    site (:data:`RULE_GAUSSIAN`): the site ``posterior / prior``, precision
    ``1 / post_var - 1 / prior_var`` and gradient ``mean_shift / post_var``; when this is
    competitor ``i``'s only game of the period the product is that posterior itself, so it is
    kept as such (``scratch[i, 4] = 1``: columns 1 and 2 hold ``post_var`` and ``mean_shift``).

    Both variances count as at least ``VAR_MIN`` (a variance that underflowed to 0, from a tiny prior
    sd or many games shrinking it, would divide by zero); a posterior is never wider than its prior,
    so they stay within ``VAR_MAX`` when the prior does."""
    if scratch[i, 0] == 1.0:
        scratch[i, 1] = max(post_var, VAR_MIN)
        scratch[i, 2] = mean_shift
        scratch[i, 4] = 1.0
    else:
        posterior_site(scratch, i, prior_var, mean_shift, post_var)


@njit(cache=True, inline="always")
def gaussian_product(x, i, prior_var, precision, gradient, col=0):
    """Row ``i``'s Gaussian belief ``N(x[i, col], prior_var)`` (its sd in ``x[i, col + 1]``) times sites
    of summed ``precision`` and ``gradient`` (:data:`RULE_GAUSSIAN`): the new mean within
    ``+-MEAN_MAX`` and variance at least ``VAR_MIN`` (the prior variance, inverted, too; the precision
    at most ``1 / VAR_MIN``)."""
    total = min(1.0 / max(prior_var, VAR_MIN) + precision, 1.0 / VAR_MIN)
    x[i, col] = clamp_mean(x[i, col] + gradient / total)
    x[i, col + 1] = math.sqrt(max(1.0 / total, VAR_MIN))


@njit(cache=True, inline="always")
def second_site(scratch, i, prior_var, mean_shift, post_var):
    """:func:`posterior_site` for a row's second Gaussian belief (state columns 2 and 3; the EKF's
    openness with two skills per competitor), in accumulator columns ``SCRATCH_WIDTH`` to
    ``SCRATCH_WIDTH + 3``: marked, summed precision, summed gradient, prior variance."""
    scratch[i, SCRATCH_WIDTH] = 1.0
    posterior_site(scratch, i, prior_var, mean_shift, post_var, SCRATCH_WIDTH)


@njit(cache=True, inline="always")
def _combine(rule, apply, x, count, theta, i, scratch):
    """Apply row ``i``'s accumulated sites by the filter's rule, then clear the row. A Gaussian rule's
    new mean is kept within ``+-MEAN_MAX`` and its variance at least ``VAR_MIN`` (the prior
    variance, inverted, too; the precision at most ``1 / VAR_MIN``, so that the mean's step is never
    inf / inf; a variance never grows here, and a one-game posterior arrives bounded from
    :func:`moment_site`). A shift needs no guard: its sites are at most ``STEP_MAX`` each."""
    if rule == RULE_SHIFT:
        x[i, 0] += scratch[i, 1]
        scratch[i, 0] = 0.0
        scratch[i, 1] = 0.0
    elif rule == RULE_GAUSSIAN:
        if scratch[i, 4] != 0.0:  # the period's one game, kept as its posterior (moment_site)
            x[i, 0] = clamp_mean(x[i, 0] + scratch[i, 2])
            x[i, 1] = math.sqrt(scratch[i, 1])
        else:
            gaussian_product(x, i, scratch[i, 3], scratch[i, 1], scratch[i, 2])
        for c in range(SCRATCH_WIDTH):
            scratch[i, c] = 0.0
        if scratch.shape[1] >= 2 * SCRATCH_WIDTH and scratch[i, SCRATCH_WIDTH] != 0.0:  # a second belief's sites
            gaussian_product(x, i, scratch[i, SCRATCH_WIDTH + 3], scratch[i, SCRATCH_WIDTH + 1],
                             scratch[i, SCRATCH_WIDTH + 2], 2)
            for c in range(SCRATCH_WIDTH, 2 * SCRATCH_WIDTH):
                scratch[i, c] = 0.0
    else:
        apply(x, count, theta, i, scratch)
        for c in range(scratch.shape[1]):
            scratch[i, c] = 0.0


@njit(cache=True, inline="always")
def _advance(predict, x, last, theta, i, t):
    """Move row ``i`` forward to time ``t`` (``predict`` with the time since it was last seen);
    a first appearance keeps its initial row and only records the time."""
    li = last[i]
    if math.isnan(li):
        last[i] = t
    elif t > li:
        predict(x, i, theta, min(t - li, DT_MAX))
        last[i] = t


@njit(cache=True, inline="always")
def _advance_shared(predict, x, last, theta, t, shared):
    """Move the shared rows (from ``shared``; none at -1) forward to time ``t``."""
    if shared >= 0:
        for r in range(shared, x.shape[0]):
            _advance(predict, x, last, theta, r, t)


@njit(cache=True, inline="always")
def _advance_period(predict, x, last, theta, a, b, start, stop, t, shared):
    """Move the shared rows and every competitor of games ``start:stop`` forward to time ``t``."""
    _advance_shared(predict, x, last, theta, t, shared)
    for g in range(start, stop):
        _advance(predict, x, last, theta, a[g], t)
        _advance(predict, x, last, theta, b[g], t)


@njit(cache=True)
def period(site, apply, rule, derivs, forecast, obs, x, count, theta, a, b, score, ya, yb, home, weight, start, stop,
           out_p, scratch, shared):
    """One rating period, the games ``start:stop``: every site from the pre-period state, then
    each competitor's sites combined once; forecasts into ``out_p[start:stop]``."""
    for g in range(start, stop):
        scratch[a[g], 0] += 1.0
        scratch[b[g], 0] += 1.0
    for g in range(start, stop):
        pw, pd, pl = site(derivs, forecast, obs, x, theta, a[g], b[g], score[g], ya[g], yb[g], home[g],
                          min(weight[g], WEIGHT_MAX), scratch)
        out_p[g, 0] = pw
        out_p[g, 1] = pd
        out_p[g, 2] = pl
    for g in range(start, stop):
        for side in range(2):
            i = a[g] if side == 0 else b[g]
            n = scratch[i, 0]
            if n != 0.0:
                _combine(rule, apply, x, count, theta, i, scratch)
                count[i] += int(n)
    _combine_shared(rule, apply, x, count, theta, scratch, shared)


@njit(cache=True, inline="always")
def _combine_shared(rule, apply, x, count, theta, scratch, shared):
    """Apply each shared row's sites, where a site marked it."""
    if shared >= 0:
        for r in range(shared, x.shape[0]):
            if scratch[r, 0] != 0.0:
                _combine(rule, apply, x, count, theta, r, scratch)


@njit(cache=True)
def _record(out_post, x, a, b, start, stop):
    """Both competitors' first ``out_post.shape[1] // 2`` state columns after games ``start:stop``."""
    k = out_post.shape[1] // 2
    for g in range(start, stop):
        for c in range(k):
            out_post[g, c] = x[a[g], c]
            out_post[g, k + c] = x[b[g], c]


@entry(types.void(PredictFn, SiteFn, ApplyFn, DerivsFn, ForecastFn, i8, f8_1d, f8_2d, i8_1d, f8_1d, f8_1d, i8_1r,
                 i8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, i8_1r, f8_2d, f8_2d, f8_2d, i8), work="a")
def site_loop(predict, site, apply, derivs, forecast, rule, obs, x, count, last, theta, a, b, score, ya, yb, home,
              weight, t, starts, out_p, out_post, scratch, shared):
    """Filter the time-sorted games period by period (``starts[k]:starts[k+1]``): every
    competitor of the period is moved forward to its time ``t[start]`` (a first appearance
    keeps its initial row), then :func:`period`; ``out_post`` records both competitors' state
    after their period."""
    for j in range(starts.shape[0] - 1):
        s = starts[j]
        e = starts[j + 1]
        _advance_period(predict, x, last, theta, a, b, s, e, t[s], shared)
        period(site, apply, rule, derivs, forecast, obs, x, count, theta, a, b, score, ya, yb, home, weight, s, e,
               out_p, scratch, shared)
        _record(out_post, x, a, b, s, e)


@entry(types.void(PredictFn, SiteFn, ApplyFn, DerivsFn, ForecastFn, types.boolean, i8, f8_1d, f8_2d, i8_1d, f8_1d,
                 f8_1d, i8_1r, i8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_2d, f8_2d, f8_2d, i8), work="a")
def game_loop(predict, site, apply, derivs, forecast, has_predict, rule, obs, x, count, last, theta, a, b, score, ya,
              yb, home, weight, t, out_p, out_post, scratch, shared):
    """:func:`site_loop` when every game is its own rating period, without the period
    bookkeeping: the same ``site`` and combination rule, one game at a time."""
    k = out_post.shape[1] // 2
    for g in range(a.shape[0]):
        ia = a[g]
        ib = b[g]
        tg = t[g]
        _advance_shared(predict, x, last, theta, tg, shared)
        if has_predict:
            _advance(predict, x, last, theta, ia, tg)
            _advance(predict, x, last, theta, ib, tg)
        else:
            last[ia] = tg
            last[ib] = tg
        scratch[ia, 0] = 1.0
        scratch[ib, 0] = 1.0
        pw, pd, pl = site(derivs, forecast, obs, x, theta, ia, ib, score[g], ya[g], yb[g], home[g],
                          min(weight[g], WEIGHT_MAX), scratch)
        out_p[g, 0] = pw
        out_p[g, 1] = pd
        out_p[g, 2] = pl
        _combine(rule, apply, x, count, theta, ia, scratch)
        _combine(rule, apply, x, count, theta, ib, scratch)
        count[ia] += 1
        count[ib] += 1
        _combine_shared(rule, apply, x, count, theta, scratch, shared)
        for c in range(k):
            out_post[g, c] = x[ia, c]
            out_post[g, k + c] = x[ib, c]


@entry(types.void(PredictFn, ProbaFn, UpdateFn, DerivsFn, ForecastFn, f8_1d, f8_2d, i8_1d, f8_1d, f8_1d, i8_1r,
                 i8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, f8_1r, i8_1r, f8_2d, f8_2d, i8), work="a")
def period_loop(predict, proba, update, derivs, forecast, obs, x, count, last, theta, a, b, score, ya, yb, home, weight,
                t, starts, out_p, out_post, shared):
    """:func:`site_loop` for a filter whose period update is not a sum of per-competitor sites
    (the full-covariance EKF): forecasts from the pre-period state, then ``update``."""
    for j in range(starts.shape[0] - 1):
        s = starts[j]
        e = starts[j + 1]
        _advance_period(predict, x, last, theta, a, b, s, e, t[s], shared)
        for g in range(s, e):
            pw, pd, pl = proba(forecast, obs, x, a[g], b[g], home[g], theta)
            out_p[g, 0] = pw
            out_p[g, 1] = pd
            out_p[g, 2] = pl
        update(derivs, obs, x, count, theta, a, b, score, ya, yb, home, weight, s, e)
        _record(out_post, x, a, b, s, e)


@entry(types.void(PredictFn, ProbaFn, ForecastFn, f8_1d, f8_2d, f8_1d, f8_1d, i8_1r, i8_1r, f8_1r, f8_1r, f8_2d,
                 f8_2d, i8), work="a")
def forecast_loop(predict, proba, forecast, obs, x, last, theta, a, b, home, t, out_p, tmp, shared):
    """Forecast games from a fixed state without updating it (the "frozen" forecast).

    Each game's competitors are copied into the first two rows of ``tmp`` and moved forward to
    the game's time before the forecast, so drift accumulates up to each game but no result is
    learned; the shared rows (``shared >= 0``) are copied into the rows after them and moved
    forward too (``tmp`` has ``2 + `` their number of rows, so they stay its last rows).
    """
    k = x.shape[1]
    for g in range(a.shape[0]):
        if shared >= 0:
            for r in range(shared, x.shape[0]):
                j = 2 + r - shared
                for c in range(k):
                    tmp[j, c] = x[r, c]
                ls = last[r]
                if not math.isnan(ls) and t[g] > ls:
                    predict(tmp, j, theta, min(t[g] - ls, DT_MAX))
        for side in range(2):
            i = a[g] if side == 0 else b[g]
            for c in range(k):
                tmp[side, c] = x[i, c]
            li = last[i]
            if not math.isnan(li) and t[g] > li:
                predict(tmp, side, theta, min(t[g] - li, DT_MAX))
        pw, pd, pl = proba(forecast, obs, tmp, 0, 1, home[g], theta)
        out_p[g, 0] = pw
        out_p[g, 1] = pd
        out_p[g, 2] = pl


def empty_scratch(n_rows: int, width: int = SCRATCH_WIDTH) -> np.ndarray:
    """Zeroed accumulator rows for the site loops."""
    return np.zeros((n_rows, width))
