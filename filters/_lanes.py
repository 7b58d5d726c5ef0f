"""Many settings of one filter advanced together, the settings as the innermost, contiguous axis.

The batched loops of :mod:`filters.batched` (``grid_game_loop`` and its kin) run a filter's loop
once per setting, so a setting costs about what a run does. Here a filter instead supplies a
*lanes* kernel that advances one game for a whole block of settings at once (a *lane* is one
setting), written as a plain loop over the lanes that LLVM vectorises (AVX2/AVX-512 registers hold
4/8 doubles): the state is laid out settings-last, ``x[row, column, lane]``, the parameters
``theta[param, lane]`` and the observation's vector ``obs[entry, lane]``. The grid
(:func:`filters.grid.evaluate`) picks this path when a filter class sets ``_lanes_site`` (see
:func:`lanes_usable`) and falls back to the batched loops otherwise.

**The kernel.** ``site(x, theta, obs, a, b, lane, score, score_a, score_b, at_home, weight)``
(:data:`LANES_SITE_SIG`) is the filter's per-game site in one lane: from the pre-period state
``x[:, :, lane]`` it returns the game's forecast ``(win, draw, loss)`` and the shifts of rows ``a``
and ``b``. It calls :func:`always_inline`, so that the loop over a block's lanes
(:func:`_game_lanes`: the kernel, the shifts, the scoring of the forecast) is one loop with the
kernel's body in it, which LLVM vectorises (no call per lane, no forecast array). The combination
rule is :data:`~filters.kernels.RULE_SHIFT`: the shifts are summed over the period and then added
to ``x[i, 0, lane]``, as :func:`filters.kernels._combine` does for one setting (where every period
is one game they go straight into the state: ``x + r`` either way), so the numbers are those of the
filter's own site in the shared run loop (same operations in the same order, apart from the
logistic below). The filter writes its update once, for plain numbers, and both its site and its
lanes kernel call it (Elo's ``_update``, handed the logistic each path computes with), so the two
paths cannot drift apart. Today the lanes path covers filters with no time update, no shared state
row and this rule (Elo without FIDE's rules).

**Blocks.** One block of lanes a thread (:func:`lane_width`, up to :data:`MAX_WIDTH`): the work
outside the loop over lanes (reading the game, the branch on its result) is paid once a block, and
the loop's body is latency-bound (a chain of about 40 dependent operations from the ratings to the
shift), so many independent lanes a game keep the core busy. The last block is padded with copies of
the last setting, so every block is a whole number of 8-double vectors.

**No library calls inside the lanes loop.** ``math.exp`` and ``math.log`` are scalar calls into
libm (numba here has no vector math library), which stop LLVM from vectorising the loop. So:

- :func:`exp_nonpos` is ``e^x`` for ``x <= 0`` by range reduction: ``x = n ln 2 + r`` with
  ``n = round(x / ln 2)`` and ``|r| <= ln 2 / 2`` (Cody and Waite: ``ln 2`` split in a part whose
  product with ``n`` is exact and a small correction), ``e^r`` by its Taylor polynomial of degree
  13 (remainder below ``0.35^14 / 14! = 4e-18``; evaluated by Estrin's scheme, a tree of depth 4,
  for the latency), and ``2^n`` built exactly from its bits (in two
  halves, so that results below the smallest normal float round once, as libm's do). Within 2 ulp
  of ``math.exp`` on ``[-746, 0]`` (tests/test_grid_lanes.py checks it densely);
  :func:`logistic` is the logistic cdf from it, in the form of
  :func:`statespace.model.numeric.cdf`.
- The log losses are sums of logs of per-game factors; each lane keeps their running products and,
  every :data:`FOLD_EVERY` scored games, moves each product's binary exponent into an integer sum
  (reading the float's bits: exact, no log), so a lane pays one ``math.log`` per score at the end:
  ``log(prod) = log(mantissa) + exponent * ln 2``. A factor is at least about ``EPS = 1e-15``, so
  16 of them times a mantissa in ``[1, 2)`` stay a normal float.

The scores are :func:`filters.scores.objectives`' (the same clipped factors; equal to it within
rounding, about 1e-14 relative on real tables), so :func:`filters.grid.evaluate` gives the same
numbers whichever path it takes. With ``NUMBA_DISABLE_JIT=1`` the same code runs as plain Python.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numba
import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

from statespace._runtime.jit import entry, kernel

from . import kernels as K
from .scores import EPS, LN2, finish_objectives

__all__ = ["LANES_SITE_SIG", "LanesSiteFn", "lanes_site_kernel", "exp_nonpos", "logistic", "lanes_loop",
           "lanes_usable", "lane_width", "FOLD_EVERY", "always_inline", "wide_vectors"]

#: the compiler's freedom in the lanes code: a product followed by a sum may be one fused
#: multiply-add (one rounding instead of two: the scores move by about 1e-16 relative)
FLAGS = {"contract"}

f8 = types.float64
i8 = types.int64
f8_1d = types.float64[::1]
f8_2d = types.float64[:, ::1]
f8_3d = types.float64[:, :, ::1]

#: ``site(x, theta, obs, a, b, lane, score, score_a, score_b, at_home, weight) -> (win, draw, loss,
#: shift_a, shift_b)``: one game in one lane
LANES_SITE_SIG = types.UniTuple(f8, 5)(f8_3d, f8_2d, f8_2d, i8, i8, i8, f8, f8, f8, f8, f8)
LanesSiteFn = types.FunctionType(LANES_SITE_SIG)


def lanes_site_kernel(fn):
    """Compile ``fn`` as a lanes site kernel (:data:`LANES_SITE_SIG`; compiled on first use, cached),
    with numpy's error model: a division by zero gives inf or NaN rather than raising, so the loop
    over lanes has no branch out of it and vectorises (a forecast that is not finite scores NaN).
    The kernel should call :func:`always_inline`, so that the loop over lanes that calls it is one
    loop LLVM can vectorise rather than a call per lane."""
    return kernel(LANES_SITE_SIG, error_model="numpy", fastmath=FLAGS)(fn)


# ---------------------------------------------------------------------------- bits of a float
def _bitcast(name: str, src, dst, llvm_dst, view):
    """An intrinsic ``name(v)``: the value of type ``dst`` with the IEEE-754 bits of ``v`` of type
    ``src`` (an LLVM bit cast: one register move, vectorisable); without the compiler, numpy's
    ``view`` to the dtype ``view``."""
    if numba.config.DISABLE_JIT:
        def cast(v):
            return np.array(v, dtype=str(src)).view(view).item()
    else:
        def cast(typingctx, v):
            if v != src:
                return None

            def codegen(context, builder, sig, args):
                return builder.bitcast(args[0], llvm_dst)
            return dst(src), codegen
    cast.__name__ = cast.__qualname__ = name
    return cast if numba.config.DISABLE_JIT else intrinsic(cast)


#: the IEEE-754 bits of a float as an int64, and the float of an int64's bits
_bits = _bitcast("_bits", types.float64, types.int64, ir.IntType(64), np.int64)
_from_bits = _bitcast("_from_bits", types.int64, types.float64, ir.DoubleType(), np.float64)


def _function_attribute(name: str, add):
    """An intrinsic ``name()`` that marks the compiled function calling it with an LLVM function
    attribute (``add(attributes)``; no code); nothing without the compiler."""
    if numba.config.DISABLE_JIT:
        def mark():
            return None
    else:
        def mark(typingctx):
            def codegen(context, builder, sig, args):
                add(builder.function.attributes)
                return context.get_dummy_value()
            return types.none(), codegen
    mark.__name__ = mark.__qualname__ = name
    return mark if numba.config.DISABLE_JIT else intrinsic(mark)


#: the LLVM function attribute asking for 512-bit vectors where the CPU has them (LLVM's default on
#: AVX-512 CPUs is 256-bit vectors, to spare the clock; a loop over lanes of exps does more a cycle in wider ones)
_WIDE = '"prefer-vector-width"="512"'

#: ``wide_vectors()``: vectorise the calling function with 512-bit registers where the CPU has them.
#: llvmlite's attribute set accepts only the names it knows, so the string attribute goes in
#: through ``set.add``.
wide_vectors = _function_attribute("wide_vectors", lambda attributes: set.add(attributes, _WIDE))
#: ``always_inline()``: inline the calling function into every compiled caller (``alwaysinline``): a
#: lanes kernel is called once per lane inside the loop over lanes, which vectorises only with the
#: kernel's body in it.
always_inline = _function_attribute("always_inline", lambda attributes: attributes.add("alwaysinline"))


# ---------------------------------------------------------------------------- e^x without libm
def _ln2_split() -> tuple[float, float]:
    """``ln 2 = hi + lo``: ``hi`` with its low 32 significand bits zero (so ``n * hi`` is exact for
    ``|n| < 2^20``), ``lo`` the rest to double precision (from 40 digits of ln 2)."""
    getcontext().prec = 50
    ln2 = Decimal("0.6931471805599453094172321214581765680755001343602552")
    bits = np.array(float(ln2), dtype=np.float64).view(np.int64) & ~np.int64(0xFFFFFFFF)
    hi = float(np.array(bits, dtype=np.int64).view(np.float64))
    lo = float(ln2 - Decimal(hi))
    return hi, lo


LN2_HI, LN2_LO = _ln2_split()
INV_LN2 = 1.0 / math.log(2.0)
#: adding 1.5 * 2^52 rounds a float of magnitude below 2^51 to an integer (round to nearest), which
#: then sits in the low bits of the sum's significand
_ROUND = 6755399441055744.0
_ROUND_BITS = int(np.array(_ROUND).view(np.int64))
_MANTISSA = (1 << 52) - 1
_ONE_BITS = 1023 << 52  # the bits of 1.0
#: 1/k! for k = 2..13, the Taylor coefficients of e^r after 1 + r
_C = [1.0 / math.factorial(k) for k in range(2, 14)]
C2, C3, C4, C5, C6, C7, C8, C9, C10, C11, C12, C13 = _C


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def exp_nonpos(x):
    """``e^x`` for ``x <= 0`` (see the module docstring; below -746 it is 0, as ``math.exp`` rounds
    it, and a NaN stays NaN), written without library calls so a loop over lanes vectorises."""
    if x < -746.0:  # a NaN passes unchanged (the comparison is false)
        x = -746.0
    t = x * INV_LN2 + _ROUND
    k = t - _ROUND  # round(x / ln 2), as a float
    n = _bits(t) - _ROUND_BITS  # the same integer, from the significand's low bits
    r = (x - k * LN2_HI) - k * LN2_LO
    # Estrin's scheme: the same polynomial as Horner's rule in a tree of depth 4 rather than a
    # chain of 11 (the lanes are latency-bound: a shorter chain lets more lanes run at once)
    r2 = r * r
    r4 = r2 * r2
    poly = (((C2 + r * C3) + r2 * (C4 + r * C5)) + r4 * ((C6 + r * C7) + r2 * (C8 + r * C9))
            + (r4 * r4) * ((C10 + r * C11) + r2 * (C12 + r * C13)))
    er = 1.0 + (r + r2 * poly)
    # 2^n in two halves, each a normal float for n >= -1077: the first product is exact, the
    # second rounds once (to a subnormal when e^x is one)
    n1 = n >> 1
    n2 = n - n1
    return er * _from_bits((n1 + 1023) << 52) * _from_bits((n2 + 1023) << 52)


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def logistic(z):
    """The logistic cdf ``1 / (1 + e^-z)`` as :func:`statespace.model.numeric.cdf` computes it (from
    ``e^-|z|``, which never overflows), with :func:`exp_nonpos` for the exponential."""
    e = exp_nonpos(-abs(z))
    r = 1.0 / (1.0 + e)
    return r if z >= 0.0 else e * r


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def split_exponent(v):
    """``(m, e)`` with ``v = m * 2^e`` exactly, ``m`` in ``[1, 2)``, for a positive normal float
    ``v`` (from its bits: no library call)."""
    b = _bits(v)
    return _from_bits((b & _MANTISSA) | _ONE_BITS), float((b >> 52) - 1023)


# ---------------------------------------------------------------------------- the loop
#: the lanes' running products move their exponents out every this many scored games
FOLD_EVERY = 16
# rows of a block's score accumulators (one lane a column)
_PWIN, _PDRAW, _POBS, _EWIN, _EDRAW, _EOBS, _BRIER, _CHECK, _MOSTDRAW = range(9)
_N_STATS = 9


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def _lane_step(site, x, th, ob, tgt, st, a, b, s, y, ya, yb, at_home, w):
    """One game in lane ``s``: the kernel's forecast, its shifts added to ``tgt``, and the factors
    every result shares (the check sum, the largest draw forecast, the Brier term); returns the
    forecast and ``E = P(win) + P(draw) / 2``."""
    pw, pd, pl, ra, rb = site(x, th, ob, a, b, s, y, ya, yb, at_home, w)
    tgt[a, 0, s] += ra
    tgt[b, 0, s] += rb
    st[_CHECK, s] += pw + pd + pl
    st[_MOSTDRAW, s] = max(st[_MOSTDRAW, s], pd)
    e = pw + 0.5 * pd
    st[_BRIER, s] += (e - y) * (e - y)
    return pw, pd, pl, e


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def _game_lanes(site, x, th, ob, tgt, st, a, b, y, ya, yb, at_home, w, scored):
    """One game in every lane of a block: the filter's lane kernel ``site`` (inlined, so that the
    loop over lanes is one vectorised loop), its shifts added to ``tgt[a, 0, lane]`` and
    ``tgt[b, 0, lane]`` (the state itself for a one-game period, the period's accumulators
    otherwise), and, when ``scored``, the forecast's factors of :func:`filters.scores.objectives`
    added to the lane's accumulators ``st`` (``E`` clipped for the log loss, ``P(observed)`` for
    the three-outcome loss, ``(E - y)^2``). The result is the same in every lane, so the branch on it
    is taken once for the block, outside the loop over lanes."""
    W = x.shape[2]
    eps = EPS
    if not scored:
        for s in range(W):
            pw, pd, pl, ra, rb = site(x, th, ob, a, b, s, y, ya, yb, at_home, w)
            tgt[a, 0, s] += ra
            tgt[b, 0, s] += rb
    elif y == 1.0:
        for s in range(W):
            pw, pd, pl, e = _lane_step(site, x, th, ob, tgt, st, a, b, s, y, ya, yb, at_home, w)
            st[_PWIN, s] *= min(max(e, eps), 1.0 - eps)
            st[_POBS, s] *= min(max(pw, eps), 1.0)
    elif y == 0.0:
        for s in range(W):
            pw, pd, pl, e = _lane_step(site, x, th, ob, tgt, st, a, b, s, y, ya, yb, at_home, w)
            st[_PWIN, s] *= 1.0 - min(max(e, eps), 1.0 - eps)
            st[_POBS, s] *= min(max(pl, eps), 1.0)
    else:
        for s in range(W):
            pw, pd, pl, e = _lane_step(site, x, th, ob, tgt, st, a, b, s, y, ya, yb, at_home, w)
            ec = min(max(e, eps), 1.0 - eps)
            st[_PDRAW, s] *= ec * (1.0 - ec)
            st[_POBS, s] *= min(max(pd, eps), 1.0)


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def _fold_lanes(st):
    """Move each lane's running products' binary exponents into the exponent sums (exact)."""
    for s in range(st.shape[1]):
        for j in range(3):
            m, e = split_exponent(st[_PWIN + j, s])
            st[_PWIN + j, s] = m
            st[_EWIN + j, s] += e


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def _games_lanes(site, x, th, ob, tgt, st, a, b, score, ya, yb, home, weight, g0, g1, first, scored):
    """Games ``g0:g1`` in every lane of a block (:func:`_game_lanes`, their shifts into ``tgt``), those
    from ``first`` on scored; returns ``scored``, the count of games scored so far, with these, and
    folds the running products every :data:`FOLD_EVERY` of them (:func:`_fold_lanes`)."""
    for g in range(g0, g1):
        _game_lanes(site, x, th, ob, tgt, st, a[g], b[g], score[g], ya[g], yb[g], home[g],
                    min(weight[g], K.WEIGHT_MAX), g >= first)
        if g >= first:
            scored += 1
            if scored % FOLD_EVERY == 0:
                _fold_lanes(st)
    return scored


@njit(cache=True, inline="always", error_model="numpy", fastmath=FLAGS)
def _combine_lanes(x, acc, i):
    """Row ``i``'s accumulated shifts into its state, in every lane (:data:`~filters.kernels.RULE_SHIFT`)."""
    for s in range(x.shape[2]):
        x[i, 0, s] += acc[i, 0, s]
        acc[i, 0, s] = 0.0


@entry(types.void(LanesSiteFn, f8_2d, f8_2d, f8_2d, i8, K.i8_1r, K.i8_1r, K.f8_1r, K.f8_1r, K.f8_1r, K.f8_1r,
                  K.f8_1r, K.i8_1r, types.boolean, i8, f8, i8, f8_2d), parallel=True, error_model="numpy",
       fastmath=FLAGS, interpret=False)
def lanes_loop(site, obs, prior, theta, rows, a, b, score, ya, yb, home, weight, starts, one_game, first, n_draws,
               width, out):
    """Every setting ``s`` (parameters ``theta[s]``, observation vector ``obs[s]``, every row
    starting at ``prior[s]``) over the time-sorted games, rating period by rating period
    (``starts[k]:starts[k+1]``; ``one_game``: every period is one game, whose shifts then go
    straight into the state: ``x + r`` either way), ``width`` settings a block (the last block
    padded with copies of the last setting, so that every block is a whole number of vectors),
    blocks in parallel; ``out[s]`` gets the objectives of its forecasts of games ``first:``
    (:func:`filters.scores.objectives`; ``n_draws``: how many of them are draws, one number)."""
    wide_vectors()
    n_set = theta.shape[0]
    cols = prior.shape[1]
    blocks = (n_set + width - 1) // width
    m = a.shape[0] - first
    for k in prange(blocks):
        lo = k * width
        hi = min(lo + width, n_set)
        W = width
        wide_vectors()  # the block's body is a function of its own
        x = np.empty((rows, cols, W))
        th = np.empty((theta.shape[1], W))
        ob = np.empty((obs.shape[1], W))
        for s in range(W):
            src = min(lo + s, n_set - 1)
            for c in range(cols):
                for i in range(rows):
                    x[i, c, s] = prior[src, c]
            for j in range(theta.shape[1]):
                th[j, s] = theta[src, j]
            for j in range(obs.shape[1]):
                ob[j, s] = obs[src, j]
        st = np.zeros((_N_STATS, W))
        st[_PWIN:_PWIN + 3, :] = 1.0
        scored = 0
        if one_game:
            scored = _games_lanes(site, x, th, ob, x, st, a, b, score, ya, yb, home, weight, 0, a.shape[0], first,
                                  scored)
        else:
            acc = np.zeros((rows, 1, W))
            for j in range(starts.shape[0] - 1):
                g0 = starts[j]
                g1 = starts[j + 1]
                scored = _games_lanes(site, x, th, ob, acc, st, a, b, score, ya, yb, home, weight, g0, g1, first,
                                      scored)
                for g in range(g0, g1):
                    _combine_lanes(x, acc, a[g])
                    _combine_lanes(x, acc, b[g])
        for s in range(hi - lo):
            finish_objectives(st[_EWIN, s] * LN2 + math.log(st[_PWIN, s]),
                              st[_EDRAW, s] * LN2 + math.log(st[_PDRAW, s]),
                              st[_EOBS, s] * LN2 + math.log(st[_POBS, s]), st[_BRIER, s], st[_CHECK, s],
                              n_draws, st[_MOSTDRAW, s], m, out, lo + s)


#: the widest block: 512 lanes keep a block's state of a few hundred competitors within a core's L2
MAX_WIDTH = 512


def lane_width(n_settings: int, threads: int) -> int:
    """Settings a block: one block a thread (each pass over the games then serves as many settings as
    it can, and the per-game work outside the loop over lanes is paid once a thread), at most
    :data:`MAX_WIDTH` lanes, a multiple of 8 (one AVX-512 register of doubles)."""
    per = max(1, -(-n_settings // max(threads, 1)))
    n_blocks = -(-per // MAX_WIDTH)
    w = -(-per // n_blocks)
    return max(8, -(-w // 8) * 8)


def lanes_theta(method) -> np.ndarray:
    """The parameter vector of ``method``'s lanes kernel: its ``lanes_theta()`` where it has one
    (parameters in a form the lanes compute with faster, e.g. a reciprocal), else ``theta()``."""
    own = getattr(method, "lanes_theta", None)
    return own() if own is not None else method.theta()


def lanes_usable(method) -> bool:
    """Whether :func:`lanes_loop` can run ``method``: its class supplies ``_lanes_site``, it
    combines sites by :data:`~filters.kernels.RULE_SHIFT` with the class's own site, has no time
    update, no whole-period update, no shared state row and no forecast override."""
    cls = type(method)
    if getattr(cls, "_lanes_site", None) is None or cls._update is not None or cls._predict is not K.no_predict:
        return False
    site, _, rule = method.site_kernels()
    return (site is cls._site and rule == K.RULE_SHIFT and not method.shared_names()
            and method._forecast_override is None)
