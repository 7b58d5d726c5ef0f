r"""Elo-MMR's performance estimation: every entrant's performance in one contest, solved together.

Ebtekar and Liu ("Elo-MMR: A Rating System for Massive Multiplayer Competitions", WWW 2021,
Section 3.1; the reference implementation's ``round_update``) estimate entrant :math:`i`'s
performance :math:`p_i` as the zero of a strictly decreasing function, one logistic term per
entrant :math:`j` (:math:`i` itself included), each from :math:`j`'s belief
:math:`\mathcal N(\mu_j, \sigma_j^2)` widened by the performance noise :math:`\beta`:

.. math::

    w_j = \frac{\pi}{\sqrt 3 \sqrt{\sigma_j^2 + \beta^2}}, \qquad
    v_j(p) = -w_j \tanh\bigl(\tfrac{w_j}{2} (p - \mu_j)\bigr),

    F_i(p) = \sum_{j \text{ ahead of } i} \bigl(v_j(p) - w_j\bigr)
           + \sum_{j \text{ behind } i} \bigl(v_j(p) + w_j\bigr)
           + \sum_{j \text{ level with } i} \kappa\, v_j(p) = 0,

:math:`\kappa = 2` (a tie is a win and a loss, the code's default) or 1 (``split_ties``: half a
win and half a loss). :math:`v_j - w_j` and :math:`v_j + w_j` are :math:`\partial_p \log` of the
logistic survival and cdf of :math:`j`'s performance at :math:`p`, :math:`2 v_j` of its density.

All the equations share :math:`G(p) = \sum_j v_j(p)`: :math:`F_i = G + c_i + (\kappa - 1) E_g`
with the constant :math:`c_i = \sum_{\text{behind}} w_j - \sum_{\text{ahead}} w_j` and
:math:`E_g = \sum_{j \in g} v_j` over :math:`i`'s tie group :math:`g`. :func:`solve_exact` solves each
equation by Newton's method on the exact sums, :math:`O(n^2)` per contest. :func:`solve_grid`
evaluates :math:`G` and its first four derivatives exactly (each term's :math:`\tanh` from the
previous node's by the addition formula, :func:`_node_walk`) at nodes spaced
:data:`GRID_STEP` times the narrowest term's length :math:`2 / w_j` apart, and solves each equation
on the degree-9 Hermite interpolant of its cell (found by bisection over the nodes, where
:math:`F_i` is exact): :math:`O(n M)` for :math:`M` nodes. The nodes run outwards from the ratings'
mean until the first's equation is negative above and the last's positive below; :math:`F_i`
falls with :math:`i`'s rank, so every zero lies inside them. Large tie groups get their own
interpolant; small ones are summed exactly. Every Newton iteration stops when its step :math:`s`
leaves an error below ``TOL`` times :math:`\beta` by quadratic convergence
(:func:`_converged_step`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: pi / sqrt(3): the logistic of unit standard deviation is F(z) = 1 / (1 + exp(-TANH_MULTIPLIER z))
TANH_MULTIPLIER = math.pi / math.sqrt(3.0)
#: the highest derivative of the shared sum :func:`solve_grid` keeps at each node (its interpolant
#: is the Hermite one of degree 2 ORDER + 1)
ORDER = 4
#: node spacing of :func:`solve_grid` in units of the narrowest term's length 2 / w: a term's n-th
#: derivative grows as n! (w / pi)^n (its poles lie pi / w off the real line), so the degree-9
#: interpolant's error is of order (w h / 4 pi)^10 of the sum, below 1e-8 rating points here
GRID_STEP = 0.25
#: :func:`solve_grid` computes every this many nodes' terms afresh (the others by the addition formula)
REFRESH = 8
#: the most nodes :func:`solve_grid` builds; a contest needing more is solved exactly
GRID_MAX = 20000
#: tie groups of at most this many entrants are summed exactly in :func:`solve_grid`
GROUP_EXACT = 8
#: Newton stops when a step is below this many performance-noise units
TOL = 1e-12


@njit(cache=True, inline="always")
def fast_tanh(z):
    """``tanh(z)`` from one ``exp`` (cheaper than the library's ``tanh`` in these loops; within a
    few ulps of it)."""
    e = math.exp(-2.0 * abs(z))
    t = (1.0 - e) / (1.0 + e)
    return t if z >= 0.0 else -t


@njit(cache=True, inline="always")
def _terms(p, mu, w, lo, hi):
    """``sum v_j(p)`` and its first two derivatives over entrants ``order[lo:hi]`` given directly as
    ``mu[lo:hi]``, ``w[lo:hi]``."""
    v = 0.0
    d1 = 0.0
    d2 = 0.0
    for j in range(lo, hi):
        a = 0.5 * w[j]
        t = fast_tanh(a * (p - mu[j]))
        s = 1.0 - t * t
        v -= w[j] * t
        d1 -= w[j] * a * s
        d2 += 2.0 * w[j] * a * a * t * s
    return v, d1, d2


@njit(cache=True)
def tie_structure(rank, w, kappa):
    """Sorted by rank: ``order`` (entrants by rank), ``group_start``/``group_end`` (each sorted
    entrant's tie group, as positions in ``order``), the constants ``c`` (per sorted position) and
    ``kappa - 1``, the weight of the group's extra copy."""
    n = rank.shape[0]
    order = np.argsort(rank, kind="mergesort")
    gs = np.empty(n, np.int64)
    ge = np.empty(n, np.int64)
    c = np.empty(n)
    total = 0.0
    for j in range(n):
        total += w[order[j]]
    k = 0
    ahead = 0.0
    while k < n:
        e = k + 1
        while e < n and rank[order[e]] == rank[order[k]]:
            e += 1
        wg = 0.0
        for q in range(k, e):
            wg += w[order[q]]
        for q in range(k, e):
            gs[q] = k
            ge[q] = e
            c[q] = (total - ahead - wg) - ahead
        ahead += wg
        k = e
    return order, gs, ge, c


@njit(cache=True)
def _newton(lo, hi, x, fx, dfx):
    """One safeguarded Newton step for a decreasing function: the new bracket, the next point (the
    Newton point where it falls inside the bracket, else the bracket's midpoint) and the Newton
    step's length (``inf`` without one)."""
    if fx > 0.0:
        lo = x
    else:
        hi = x
    step = math.inf
    nx = 0.5 * (lo + hi)
    if dfx < 0.0:
        step = abs(fx / dfx)
        nx = x - fx / dfx
        if not (lo < nx < hi):
            nx = 0.5 * (lo + hi)
    return lo, hi, nx, step


@njit(cache=True, inline="always")
def _converged_step(tol, w_max):
    r"""The Newton step below which the error left is below ``tol``: every term has
    :math:`|v_j''| \le w_j |v_j'|` (all :math:`v_j'` of one sign), so a step :math:`s` leaves about
    :math:`\tfrac{w_{max}}{2} s^2` (quadratic convergence)."""
    return math.sqrt(2.0 * tol / w_max)


@njit(cache=True)
def _solve_one_exact(ms, ws, gs, ge, c, kappa1, q, beta):
    """The zero of ``F`` of sorted entrant ``q`` by safeguarded Newton on the exact sums
    (``ms``, ``ws``: the terms in rank order)."""
    n = ms.shape[0]
    span = 2.0 / ws.min()
    lo = ms.min() - span
    hi = ms.max() + span
    while True:
        v, d1, d2 = _terms(lo, ms, ws, 0, n)
        e, e1, e2 = _terms(lo, ms, ws, gs[q], ge[q])
        if v + c[q] + kappa1 * e > 0.0:
            break
        lo -= span
        span *= 2.0
    span = 2.0 / ws.min()
    while True:
        v, d1, d2 = _terms(hi, ms, ws, 0, n)
        e, e1, e2 = _terms(hi, ms, ws, gs[q], ge[q])
        if v + c[q] + kappa1 * e < 0.0:
            break
        hi += span
        span *= 2.0
    x = ms[q]
    if not (lo < x < hi):
        x = 0.5 * (lo + hi)
    tol = TOL * beta
    done = _converged_step(tol, ws.max())
    for _ in range(200):
        v, d1, d2 = _terms(x, ms, ws, 0, n)
        e, e1, e2 = _terms(x, ms, ws, gs[q], ge[q])
        fx = v + c[q] + kappa1 * e
        if fx == 0.0:
            return x
        lo, hi, nx, step = _newton(lo, hi, x, fx, d1 + kappa1 * e1)
        if step <= done:
            return x - fx / (d1 + kappa1 * e1)
        if hi - lo <= tol:
            return nx
        x = nx
    return x


@njit(cache=True)
def solve_exact(mu, w, rank, kappa, beta, perf):
    """``perf[i]``: the zero of every entrant's equation, each by Newton on the exact sums."""
    order, gs, ge, c = tie_structure(rank, w, kappa)
    ms = mu[order]
    ws = w[order]
    for q in range(order.shape[0]):
        perf[order[q]] = _solve_one_exact(ms, ws, gs, ge, c, kappa - 1.0, q, beta)


@njit(cache=True)
def _node_values(ms, ws, lo, hi, x0, h, m, out):
    """``out[k]`` (:func:`_node_walk`) of the terms ``lo:hi`` at nodes ``x0 + k h``."""
    tk = np.empty(ms.shape[0])
    for k in range(m):
        _node_walk(x0 + k * h, ms, ws, lo, hi, tk, tk, 0, out, k)


#: the inverse of ``[[j! / (j - d)! for j in 5..9] for d in 0..4]``: the top five coefficients of
#: the degree-9 Hermite interpolant from its derivatives at t = 1 (:func:`_cells`)
_NONIC = np.array([[126.0, -56.0, 21.0 / 2.0, -1.0, 1.0 / 24.0],
                   [-420.0, 196.0, -77.0 / 2.0, 23.0 / 6.0, -1.0 / 6.0],
                   [540.0, -260.0, 53.0, -11.0 / 2.0, 1.0 / 4.0],
                   [-315.0, 155.0, -65.0 / 2.0, 7.0 / 2.0, -1.0 / 6.0],
                   [70.0, -35.0, 15.0 / 2.0, -5.0 / 6.0, 1.0 / 24.0]])


@njit(cache=True)
def _cells(g, h, m, coef):
    r"""``coef[k]``: the coefficients :math:`c_0 .. c_9` in :math:`t \in [0, 1]` of the degree-9
    Hermite interpolant of the cell between nodes ``k`` and ``k + 1`` of width ``h`` (value and
    four derivatives at both ends: rows of ``g``), for the first ``m - 1`` cells:
    :math:`c_d = g_k^{(d)} h^d / d!` and :math:`\sum_j \tfrac{j!}{(j-d)!} c_j = g_{k+1}^{(d)} h^d`
    for :math:`d \le 4`."""
    h2 = h * h
    for a in range(m - 1):
        b = a + 1
        c0 = g[a, 0]
        c1 = g[a, 1] * h
        c2 = g[a, 2] * h2 / 2.0
        c3 = g[a, 3] * h2 * h / 6.0
        c4 = g[a, 4] * h2 * h2 / 24.0
        r0 = g[b, 0] - (c0 + c1 + c2 + c3 + c4)
        r1 = g[b, 1] * h - (c1 + 2.0 * c2 + 3.0 * c3 + 4.0 * c4)
        r2 = g[b, 2] * h2 - (2.0 * c2 + 6.0 * c3 + 12.0 * c4)
        r3 = g[b, 3] * h2 * h - (6.0 * c3 + 24.0 * c4)
        r4 = g[b, 4] * h2 * h2 - 24.0 * c4
        coef[a, 0] = c0
        coef[a, 1] = c1
        coef[a, 2] = c2
        coef[a, 3] = c3
        coef[a, 4] = c4
        for j in range(5):
            coef[a, 5 + j] = (_NONIC[j, 0] * r0 + _NONIC[j, 1] * r1 + _NONIC[j, 2] * r2 + _NONIC[j, 3] * r3
                              + _NONIC[j, 4] * r4)


@njit(cache=True, inline="always")
def _nonic(coef, a, h, t):
    """Cell ``a``'s interpolant (:func:`_cells`) and its derivative in x, at ``t`` in [0, 1]."""
    val = coef[a, 9]
    der = 9.0 * coef[a, 9]
    for j in range(8, 0, -1):
        val = val * t + coef[a, j]
        der = der * t + j * coef[a, j]
    return val * t + coef[a, 0], der / h


@njit(cache=True)
def _node_walk(p, ms, ws, lo, hi, tk, th, sign, out, k):
    r"""``out[k]``: :math:`G` and its first four derivatives over the terms ``lo:hi`` at ``p``.
    With :math:`a = w/2`, :math:`t = \tanh(a (p - \mu))`, :math:`s = 1 - t^2`, the derivatives of
    :math:`-w t` are :math:`-w a s`, :math:`2 w a^2 t s`, :math:`2 w a^3 s (1 - 3t^2)` and
    :math:`-8 w a^4 t s (2 - 3 t^2)`. ``tk`` holds each term's :math:`t_j` one node before
    (``sign`` +1: at ``p - h``; -1: at ``p + h``; 0: none, computed afresh) and is updated in place
    by the addition formula :math:`t_j \leftarrow (t_j \pm T_j) / (1 \pm t_j T_j)`, ``th``
    :math:`T_j = \tanh(w_j h / 2)`: a division per term instead of an ``exp``."""
    v = 0.0
    d1 = 0.0
    d2 = 0.0
    d3 = 0.0
    d4 = 0.0
    for j in range(lo, hi):
        a = 0.5 * ws[j]
        if sign == 0:
            t = fast_tanh(a * (p - ms[j]))
        else:
            step = sign * th[j]
            t = (tk[j] + step) / (1.0 + tk[j] * step)
        tk[j] = t
        tt = t * t
        was = ws[j] * a * (1.0 - tt)
        v -= ws[j] * t
        d1 -= was
        d2 += 2.0 * a * t * was
        d3 += 2.0 * a * a * (1.0 - 3.0 * tt) * was
        d4 -= 8.0 * a * a * a * t * (2.0 - 3.0 * tt) * was
    out[k, 0] = v
    out[k, 1] = d1
    out[k, 2] = d2
    out[k, 3] = d3
    out[k, 4] = d4


@njit(cache=True)
def _edge(ms, ws, c, kappa1, lo_g, hi_g, q, anchor, h, buf, mid, up, tk, th):
    """Nodes ``anchor + k h`` into ``buf[mid + k]`` from k = 0 (already there, its terms' tanh in
    ``tk``) outwards (``up``: k = 1, 2, ...; else -1, -2, ...) until sorted entrant ``q``'s
    equation (its tie group ``lo_g:hi_g``) is <= 0 there (``up``), or > 0; the last k, or
    ``GRID_MAX`` when ``buf`` ends first. Each node's terms follow from the last's
    (:func:`_node_walk`), afresh every :data:`REFRESH` nodes so that rounding cannot build up."""
    k = 0
    while True:
        i = mid + k
        if i < 0 or i >= buf.shape[0]:
            return GRID_MAX
        if k != 0:
            sign = 0 if k % REFRESH == 0 else (1 if up else -1)
            _node_walk(anchor + k * h, ms, ws, 0, ms.shape[0], tk, th, sign, buf, i)
        f = buf[i, 0] + c[q]
        if kappa1 != 0.0:
            f += kappa1 * _terms(anchor + k * h, ms, ws, lo_g, hi_g)[0]
        if (f <= 0.0) if up else (f > 0.0):
            return k
        k += 1 if up else -1


@njit(cache=True)
def solve_grid(mu, w, rank, kappa, beta, perf):
    """``perf[i]`` as :func:`solve_exact`, from the interpolants of :math:`G` (and of large tie
    groups' sums) on a grid of nodes; returns the number of equations solved exactly instead
    (zeros outside the nodes, where only rounding can put them), or -1 when the contest needs
    more than ``GRID_MAX`` nodes (then all are solved exactly)."""
    n = mu.shape[0]
    order, gs, ge, c = tie_structure(rank, w, kappa)
    ms = mu[order]
    ws = w[order]
    kappa1 = kappa - 1.0
    w_max = ws.max()
    h = GRID_STEP * 2.0 / w_max
    # the nodes run from the anchor outwards until the first's equation is <= 0 above and the
    # last's > 0 below: every other equation lies between those two (F_i falls with i's rank), so
    # every zero lies inside the nodes
    buf = np.empty((GRID_MAX, ORDER + 1))
    mid = GRID_MAX // 2
    anchor = ms.mean()
    tk = np.empty(n)
    th = np.empty(n)
    for j in range(n):
        th[j] = fast_tanh(0.5 * ws[j] * h)
    _node_walk(anchor, ms, ws, 0, n, tk, th, 0, buf, mid)
    below = tk.copy()
    k_hi = _edge(ms, ws, c, kappa1, gs[0], ge[0], 0, anchor, h, buf, mid, True, tk, th)
    k_lo = _edge(ms, ws, c, kappa1, gs[n - 1], ge[n - 1], n - 1, anchor, h, buf, mid, False, below, th)
    if k_hi == GRID_MAX or k_lo == GRID_MAX:
        solve_exact(mu, w, rank, kappa, beta, perf)
        return -1
    g = buf[mid + k_lo:mid + k_hi + 1]
    x0 = anchor + k_lo * h
    m = k_hi - k_lo + 1
    eg = np.zeros((m, ORDER + 1))
    coef = np.empty((m - 1, 2 * ORDER + 2))
    ecoef = np.empty((m - 1, 2 * ORDER + 2))
    _cells(g, h, m, coef)
    tol = TOL * beta
    done = _converged_step(tol, w_max)
    fallback = 0
    q = 0
    while q < n:
        lo_g = gs[q]
        hi_g = ge[q]
        big = kappa1 != 0.0 and hi_g - lo_g > GROUP_EXACT
        if big:
            _node_values(ms, ws, lo_g, hi_g, x0, h, m, eg)
            _cells(eg, h, m, ecoef)
        for r in range(lo_g, hi_g):
            cr = c[r]
            # bisection over the nodes, where F is exact: F(node lo) > 0 >= F(node hi)
            f_first = g[0, 0] + cr
            f_last = g[m - 1, 0] + cr
            if kappa1 != 0.0:
                if big:
                    f_first += kappa1 * eg[0, 0]
                    f_last += kappa1 * eg[m - 1, 0]
                else:
                    f_first += kappa1 * _terms(x0, ms, ws, lo_g, hi_g)[0]
                    f_last += kappa1 * _terms(x0 + (m - 1) * h, ms, ws, lo_g, hi_g)[0]
            if not (f_first > 0.0 and f_last <= 0.0):
                perf[order[r]] = _solve_one_exact(ms, ws, gs, ge, c, kappa1, r, beta)
                fallback += 1
                continue
            a = 0
            b = m - 1
            while b - a > 1:
                half = (a + b) // 2
                f = g[half, 0] + cr
                if kappa1 != 0.0:
                    f += kappa1 * (eg[half, 0] if big else _terms(x0 + half * h, ms, ws, lo_g, hi_g)[0])
                if f > 0.0:
                    a = half
                    f_first = f
                else:
                    b = half
                    f_last = f
            xa = x0 + a * h
            # Newton in the cell on the interpolant (plus the small group's exact sum), from the
            # chord's zero
            tl = 0.0
            th = 1.0
            t = f_first / (f_first - f_last)
            for _ in range(100):
                fx, dfx = _nonic(coef, a, h, t)
                fx += cr
                if kappa1 != 0.0:
                    if big:
                        ev, ed = _nonic(ecoef, a, h, t)
                    else:
                        ev, ed, _e2 = _terms(xa + t * h, ms, ws, lo_g, hi_g)
                    fx += kappa1 * ev
                    dfx += kappa1 * ed
                tl, th, nt, step = _newton(tl, th, t, fx, dfx * h)
                if step * h <= done:
                    t = t - fx / (dfx * h)
                    break
                if (th - tl) * h <= tol:
                    t = nt
                    break
                t = nt
            perf[order[r]] = xa + t * h
        q = hi_g
    return fallback
