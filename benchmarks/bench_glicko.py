"""Speed of our compiled Glicko-1 and Glicko-2 against the ``glicko2`` package, ``elote`` and a
plain Python loop, with agreement checks.

One stream of simulated games (random pairs among ``--players`` competitors, random results:
45% wins, 10% draws, 45% losses, drawn with NumPy as in ``bench_elo.py``) is rated by

- ours: ``filters.Glicko().run(games)`` and ``filters.Glicko2().run(games)`` on a prebuilt
  ``statespace.Games`` without a period column, so every game is its own rating period, in two
  timings of the same games: all games at one time (no time passes, so RD grows only inside
  Glicko-2's own update: the per-game update of the peers) and dated games spread evenly over
  ``--days`` days (RD also grows with the time elapsed, ``c^2`` per 30 days for Glicko-1);
  and, for information, the dated games in weekly rating periods (``games.with_periods(7)``).
  Compilation excluded by a warm-up on a small table; best of ``--repeats``;
- a plain Python Glicko-1 written here from Glickman's formulas (one game per period, dicts of
  ratings and RDs; its own slice, ``--python-games``);
- the ``glicko2`` package (``glicko2.Player``): per game, each player's ``update_player`` with
  the opponent's pre-game rating and RD, one game per rating period (``--peer-games``);
- ``elote.GlickoCompetitor``: ``beat`` / ``lost_to`` / ``tied`` per game, all at one fixed
  ``match_time`` so no RD growth happens (``--peer-games``).

Every rate is games per second on one core (the compiled loops are serial). The ratios ours /
peer are taken within this one run; the target is at least 3 M games/s for ours in
one-game periods (judged on the no-time-passing timing, the peers' per-game update).

Agreement on the first ``--check-games`` games, from identical starts:

- Glicko-1, ours vs the plain Python loop, with and without time passing: must agree to 1e-9
  relative (they agree to about 1e-15); **the exit status is 1 if they do not**;
- Glicko-2, ours vs the ``glicko2`` package: reported, not checked. The package's volatility
  function ``f`` uses ``mu^2`` (the player's rating) where Glickman's has ``phi^2``, so its new
  volatility differs; the same package with ``f`` corrected is run beside it to show that this
  is the difference (up to the package's rounded scale 173.7178), and Glickman's worked example
  is printed for both;
- Glicko-1, ours vs elote: reported, not checked. elote rounds ``q`` to 0.0057565 and, with
  time, uses 1-day rating periods, ``c = 34.6`` and the wall clock when no ``match_time`` is
  given; elote with ``q = ln 10 / 400`` (and 30-day periods and our ``c`` for the dated games)
  is run beside it to show that.

``--profile`` (on by default, off with ``--quick``) splits ``Glicko2().run`` into the Python-side
preparation and the compiled ``filters.kernels.game_loop`` (per game the filter's site,
``filters.glicko._site``, then Glicko-2's custom combination rule ``_apply2``: steps 3-8 with the
volatility solve), times the same loop with the sites alone (a no-op combination) and with the
sites combined by the built-in Gaussian rule (Glicko-1's: steps 3, 4, 6-8 without the volatility),
times the run's volatility solves (two per game) on their own, and counts the Illinois iterations.

Usage::

    python benchmarks/bench_glicko.py                  # 1,000,000 games, 1,000 competitors
    python benchmarks/bench_glicko.py --quick          # 20,000 games, a few seconds
    python benchmarks/bench_glicko.py --games 200000 --players 500 --repeats 5 --seed 1
"""

from __future__ import annotations

import math
import sys
import time
from datetime import timedelta

import numpy as np

from _common import (EPOCH_SECONDS, START, BenchParser, best_of, build_games, dated_seconds, draw_stream,
                     final_states, import_packages, print_breakdown, print_header, print_rate_table, rate,
                     replay_loop, time_run_and_loop, versions, warm_up)

TARGET = 3e6  # games per second on one core for ours in one-game periods
ISSUE_GLICKO2_PACKAGE = 0.1e6  # the reference figures for the peers
ISSUE_ELOTE = 0.16e6
TOLERANCE = 1e-9  # relative, ours vs the plain Python Glicko-1
Q = math.log(10.0) / 400.0


# ---------------------------------------------------------------------------- the peers
def python_glicko1(a, b, score, periods=None, c=None, initial=1500.0, initial_rd=350.0, rd_max=350.0) -> dict:
    """Plain Python Glicko-1, every game its own rating period (Glickman 1999)::

        RD <- min(sqrt(RD^2 + c^2 t), RD_max)     (t periods since the last game; none if periods is None)
        g(RD) = 1 / sqrt(1 + 3 q^2 RD^2 / pi^2),  E = 1 / (1 + 10^(-g(RD_j) (r - r_j) / 400))
        d^2 = 1 / (q^2 g(RD_j)^2 E (1 - E))
        r' = r + q / (1/RD^2 + 1/d^2) g(RD_j) (s - E),   RD' = (1/RD^2 + 1/d^2)^(-1/2)

    both players from their pre-game values. Returns {player: (rating, RD)}.
    """
    if c is None:
        c = math.sqrt((350.0**2 - 50.0**2) / 100.0)
    q = Q
    q2 = q * q
    k3 = 3.0 * q2 / math.pi**2
    c2 = c * c
    sqrt = math.sqrt
    r: dict = {}
    rd: dict = {}
    last: dict = {}
    times = periods.tolist() if periods is not None else None
    for n, (i, j, s) in enumerate(zip(a.tolist(), b.tolist(), score.tolist())):
        ri = r.get(i, initial)
        rj = r.get(j, initial)
        di = rd.get(i, initial_rd)
        dj = rd.get(j, initial_rd)
        if times is not None:
            tn = times[n]
            li = last.get(i)
            if li is not None and tn > li:
                di = min(sqrt(di * di + c2 * (tn - li)), rd_max)
            lj = last.get(j)
            if lj is not None and tn > lj:
                dj = min(sqrt(dj * dj + c2 * (tn - lj)), rd_max)
            last[i] = tn
            last[j] = tn
        gi = 1.0 / sqrt(1.0 + k3 * di * di)  # g(RD_i), used by j
        gj = 1.0 / sqrt(1.0 + k3 * dj * dj)  # g(RD_j), used by i
        ei = 1.0 / (1.0 + 10.0 ** (-gj * (ri - rj) / 400.0))
        ej = 1.0 / (1.0 + 10.0 ** (-gi * (rj - ri) / 400.0))
        inv_d2_i = q2 * gj * gj * ei * (1.0 - ei)
        inv_d2_j = q2 * gi * gi * ej * (1.0 - ej)
        pi_ = 1.0 / (di * di) + inv_d2_i
        pj_ = 1.0 / (dj * dj) + inv_d2_j
        r[i] = ri + q / pi_ * gj * (s - ei)
        r[j] = rj + q / pj_ * gi * ((1.0 - s) - ej)
        rd[i] = sqrt(1.0 / pi_)
        rd[j] = sqrt(1.0 / pj_)
    return {p: (r[p], rd[p]) for p in r}


def _phi2_player():
    """``glicko2.Player`` with Glickman's volatility function: ``phi^2`` in ``f`` where the
    package has ``mu^2`` (``self.__rating``). Everything else is the package's own code."""
    from glicko2 import Player

    class Phi2Player(Player):
        def _f(self, x, delta, v, a):
            ex = math.exp(x)
            phi2 = self._Player__rd ** 2  # the pre-period phi: _newVol runs before _preRatingRD
            return ex * (delta**2 - phi2 - v - ex) / (2 * ((phi2 + v + ex) ** 2)) - (x - a) / (self._tau**2)

    return Phi2Player


def glicko2_package(a, b, score, player_cls=None) -> dict:
    """The ``glicko2`` package, one game per rating period: both players updated with
    ``update_player([r_opp], [RD_opp], [s])`` from the opponent's pre-game values.
    Returns {player: (rating, RD, volatility)}."""
    if player_cls is None:
        from glicko2 import Player as player_cls
    players: dict = {}
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist()):
        pi = players.get(i)
        if pi is None:
            pi = players[i] = player_cls()
        pj = players.get(j)
        if pj is None:
            pj = players[j] = player_cls()
        ri, di = pi.rating, pi.rd
        rj, dj = pj.rating, pj.rd
        pi.update_player([rj], [dj], [s])
        pj.update_player([ri], [di], [1.0 - s])
    return {p: (pl.rating, pl.rd, pl.vol) for p, pl in players.items()}


def _elote_classes():
    """elote's GlickoCompetitor and two variants: q = ln 10 / 400 (``ExactQ``), and also our
    Glicko's c with 30-day rating periods (``LikeOurs``, for dated games)."""
    from elote import GlickoCompetitor

    from filters import Glicko

    class ExactQ(GlickoCompetitor):
        _q = Q

    class LikeOurs(GlickoCompetitor):
        _q = Q
        _c = Glicko().c
        _rating_period_days = Glicko().period_days

    return GlickoCompetitor, ExactQ, LikeOurs


def elote_glicko(a, b, score, when=None, cls=None) -> dict:
    """elote's GlickoCompetitor, one method call per game, at the fixed ``match_time`` START
    (``when=None``: no time passes) or at the datetimes ``when``. Returns {player: (rating, RD)}."""
    if cls is None:
        from elote import GlickoCompetitor as cls
    players: dict = {}
    times = [START] * len(a) if when is None else when
    for i, j, s, m in zip(a.tolist(), b.tolist(), score.tolist(), times):
        ci = players.get(i)
        if ci is None:
            ci = players[i] = cls(initial_rating=1500, initial_rd=350)
        cj = players.get(j)
        if cj is None:
            cj = players[j] = cls(initial_rating=1500, initial_rd=350)
        if s == 1.0:
            ci.beat(cj, m)
        elif s == 0.0:
            ci.lost_to(cj, m)
        else:
            ci.tied(cj, m)
    return {p: (c.rating, c.rd) for p, c in players.items()}


# ---------------------------------------------------------------------------- helpers
def max_rel_diffs(x: dict, y: dict, k: int) -> list:
    """Max relative difference of each of the first ``k`` state columns over the players."""
    if x.keys() != y.keys():
        return [math.inf] * k
    return [max(abs(x[p][c] - y[p][c]) / abs(y[p][c]) for p in x) for c in range(k)]


def fmt_diffs(d: list, names=("rating", "RD", "volatility")) -> str:
    return ", ".join(f"{n} {v:.3g}" for n, v in zip(names, d))


def line(label: str, diffs: list) -> None:
    print(f"    {label + ':':57s} {fmt_diffs(diffs)}")


# ---------------------------------------------------------------------------- agreement
def glickman_example() -> None:
    """Glickman's Glicko-2 worked example: a 1500/200/0.06 player beats 1400/30 and loses to
    1550/100 and 1700/300 in one period (tau = 0.5)."""
    import statespace as ss
    from filters import Glicko2

    Phi2Player = _phi2_player()
    from glicko2 import Player

    rows = []
    for label, cls in (("glicko2 package", Player), ("glicko2 package, f with phi^2", Phi2Player)):
        p = cls(1500, 200, 0.06)
        p.update_player([1400, 1550, 1700], [30, 100, 300], [1, 0, 0])
        rows.append((label, p.rating, p.rd, p.vol))
    games = ss.Games.from_arrays([0, 0, 0], ["P", "P", "P"], ["A", "B", "C"], [1, 0, 0], period=[0, 0, 0])
    init = {"P": (1500, 200, 0.06), "A": (1400, 30, 0.06), "B": (1550, 100, 0.06), "C": (1700, 300, 0.06)}
    r = Glicko2(tau=0.5).run(games, initial=init).ratings().set_index("player").loc["P"]
    rows.append(("ours, Glicko2(tau=0.5)", r["mean"], r["sd"], r["volatility"]))
    print("  Glickman's Glicko-2 example (1500/200/0.06 beats 1400/30, loses to 1550/100 and 1700/300;"
          " paper: 1464.06, 151.52, 0.05999):")
    for label, rr, rd, vol in rows:
        print(f"    {label:32s} rating {rr:.6f}  RD {rd:.6f}  volatility {vol:.7f}")


def agreement(t, a, b, score, n_check: int, days_per_game: np.ndarray) -> bool:
    """Print the agreement checks on the first ``n_check`` games; True if Glicko-1 ours and the
    plain Python loop agree to TOLERANCE with and without time passing."""
    from filters import Glicko, Glicko2

    ca, cb, cs = a[:n_check], b[:n_check], score[:n_check]
    same = build_games(np.zeros(n_check), ca, cb, cs)
    secs = t[:n_check]
    dated = build_games(secs.astype("datetime64[s]"), ca, cb, cs)
    ours1 = final_states(Glicko().run(same))
    ours1_dated = final_states(Glicko().run(dated))
    ours2 = final_states(Glicko2().run(same))
    n_comp = len(ours1)
    period_days = Glicko().period_days

    print()
    print(f"agreement of final states on the first {n_check:,} games ({n_comp:,} competitors), "
          "identical starts (1500, RD 350, volatility 0.06), max relative difference:")

    # ---- Glicko-1 vs the plain Python loop
    ref = python_glicko1(ca, cb, cs)
    ref_dated = python_glicko1(ca, cb, cs, periods=days_per_game[:n_check] / period_days)
    d1 = max_rel_diffs(ours1, ref, 2)
    d1d = max_rel_diffs(ours1_dated, ref_dated, 2)
    ok = max(d1 + d1d) <= TOLERANCE
    verdict = "agree" if ok else "DISAGREE"
    print(f"  Glicko-1, ours vs plain Python (Glickman's formulas), tolerance {TOLERANCE:g}: {verdict}")
    line("one game per period, no time passing", d1)
    line(f"one game per period, dated (c^2 per {period_days:g} days)", d1d)

    # ---- Glicko-2 vs the glicko2 package
    pkg = glicko2_package(ca, cb, cs)
    fixed = glicko2_package(ca, cb, cs, player_cls=_phi2_player())
    d2 = max_rel_diffs(ours2, pkg, 3)
    d2f = max_rel_diffs(ours2, fixed, 3)
    dpf = max_rel_diffs(fixed, pkg, 3)
    print("  Glicko-2, one game per period, no time passing (reported, not checked):")
    line("ours vs glicko2 package", d2)
    line("ours vs glicko2 package with f corrected", d2f)
    line("glicko2 package vs itself with f corrected", dpf)
    print("    Cause: the package's volatility function f(x) = e^x (Delta^2 - mu^2 - v - e^x) /\n"
          "    (2 (mu^2 + v + e^x)^2) - (x - a) / tau^2 uses the player's rating mu where Glickman's\n"
          "    step 5 has the deviation phi (its choice of the bracket B does use phi), so its new\n"
          "    volatility solves a different equation; the ratings and RDs then differ through the\n"
          "    volatility. With f corrected (phi^2, a subclass overriding only _f) the package agrees\n"
          "    with ours up to its rounded scale 173.7178 (ours 400 / ln 10 = 173.71779276...) and the\n"
          "    1e-6 stopping rule of both Illinois solves.")
    glickman_example()

    # ---- Glicko-1 vs elote
    plain, exact_q, like_ours = _elote_classes()
    el = elote_glicko(ca, cb, cs)
    elq = elote_glicko(ca, cb, cs, cls=exact_q)
    when = [START + timedelta(seconds=int(s - EPOCH_SECONDS)) for s in secs]
    eld_default = elote_glicko(ca, cb, cs, when=when)
    eld = elote_glicko(ca, cb, cs, when=when, cls=like_ours)
    de = max_rel_diffs(ours1, el, 2)
    deq = max_rel_diffs(ours1, elq, 2)
    ded_default = max_rel_diffs(ours1_dated, eld_default, 2)
    ded = max_rel_diffs(ours1_dated, eld, 2)
    lowest = min(v[0] for v in list(el.values()) + list(eld_default.values()))
    print("  Glicko-1, ours vs elote GlickoCompetitor (reported, not checked):")
    line("no time passing (one fixed match_time)", de)
    line("  elote with q = ln 10 / 400", deq)
    line("dated games, elote as shipped", ded_default)
    line(f"  elote with q = ln 10 / 400, c = {Glicko().c:.2f}, 30-day periods", ded)
    print("    Cause: elote's update is Glickman's one-game Glicko-1 (E with the opponent's RD, both\n"
          "    players from pre-game values), but with q rounded to 0.0057565 (ln 10 / 400 =\n"
          "    0.00575646273...), which scales every rating change and 1/d^2; with q exact it agrees\n"
          "    with ours to rounding error. For time it grows RD before each match by c^2 per elapsed\n"
          "    1-day rating period (c = 34.6, capped at 350), from the match_time given, and from\n"
          "    datetime.now() when none is given (so RD then grows with the wall clock between calls);\n"
          "    ours grows c^2 = 34.64^2 per 30 days by default. With our c and 30-day periods it agrees\n"
          "    again on dated games. (elote also clamps ratings at 100; the lowest rating here is\n"
          f"    {lowest:.1f}, so the clamp never acted.)")
    return ok


# ---------------------------------------------------------------------------- profile
def _profile_kernels():
    """Compiled helpers for the Glicko-2 profile (built on demand: numba compiles them)."""
    from numba import njit

    from filters import kernels as K
    from filters import _glicko_steps as G  # the volatility solve and its f
    from statespace import ELO_SCALE

    @njit(cache=False)
    def solve_inputs(site, lik, forecast, obs, theta, a, b, score, ya, yb, home, weight, post, prior, n_players):
        """Each game's two volatility problems (sigma, phi, v, Delta), from the pre-game rows
        (rebuilt from the post-game rows of the run), plus the volatility the run produced.
        The sites are the filter's own (``site``, into a fresh accumulator per game); only the
        change of units of ``_apply2`` is repeated here (``1 / v`` = precision times 173.72^2,
        ``Delta / v`` = gradient times 173.72)."""
        n = a.shape[0]
        cur = np.empty((n_players, 3))
        for i in range(n_players):
            for c in range(3):
                cur[i, c] = prior[c]
        scratch = np.zeros((n_players, K.SCRATCH_WIDTH))
        out = np.empty((2 * n, 5))
        for g in range(n):
            ia = a[g]
            ib = b[g]
            scratch[ia, 0] = 1.0
            scratch[ib, 0] = 1.0
            site(lik, forecast, obs, cur, theta, ia, ib, score[g], ya[g], yb[g], home[g], weight[g], scratch)
            for side in range(2):
                i = ia if side == 0 else ib
                v = 1.0 / (scratch[i, 1] * ELO_SCALE * ELO_SCALE)
                k = 2 * g + side
                out[k, 0] = cur[i, 2]
                out[k, 1] = cur[i, 1] / ELO_SCALE
                out[k, 2] = v
                out[k, 3] = v * (scratch[i, 2] * ELO_SCALE)
                out[k, 4] = post[g, 2] if side == 0 else post[g, 5]
                for c in range(K.SCRATCH_WIDTH):
                    scratch[i, c] = 0.0
            for c in range(3):
                cur[ia, c] = post[g, c]
                cur[ib, c] = post[g, 3 + c]
        return out

    @njit(cache=False)
    def solve_all(p, tau, eps, max_iter, out):
        for k in range(p.shape[0]):
            out[k] = G.new_volatility(p[k, 0], p[k, 1], p[k, 2], p[k, 3], tau, eps, max_iter)

    @njit(cache=False)
    def count_illinois(p, tau, eps, max_iter, evals, iters, bracket, out):
        """The same Illinois solve as filters.glicko.new_volatility, counting f evaluations,
        iterations and the cases that search for the bracket (Delta^2 <= phi^2 + v).
        Transcendental calls per solve: one log (ln sigma^2), then an exp for every f
        evaluation but the first (e^A = sigma^2 is known), except that the bracket
        B = ln(Delta^2 - phi^2 - v) costs a log instead; the result sqrt(e^A) costs no exp
        (as in the filter, e^A and e^B are kept alongside A and B)."""
        for k in range(p.shape[0]):
            sigma, phi, v, delta = p[k, 0], p[k, 1], p[k, 2], p[k, 3]
            s2 = sigma * sigma
            a_ = math.log(s2)
            pv = phi * phi + v
            delta2 = delta * delta
            inv_tau2 = 1.0 / (tau * tau)
            A = a_
            exA = s2
            fA = G._f_ex(A, exA, delta2, pv, a_, inv_tau2)
            ne = 1
            if delta2 > pv:
                exB = delta2 - pv
                B = math.log(exB)
                fB = G._f_ex(B, exB, delta2, pv, a_, inv_tau2)
                ne += 1
                bracket[k] = 0
            else:
                bracket[k] = 1
                kk = 1.0
                B = a_ - tau
                exB = math.exp(B)
                fB = G._f_ex(B, exB, delta2, pv, a_, inv_tau2)
                ne += 1
                while fB < 0.0:
                    kk += 1.0
                    B = a_ - kk * tau
                    exB = math.exp(B)
                    fB = G._f_ex(B, exB, delta2, pv, a_, inv_tau2)
                    ne += 1
            it = 0
            while abs(B - A) > eps:
                it += 1
                C = A + (A - B) * fA / (fB - fA)
                exC = math.exp(C)
                fC = G._f_ex(C, exC, delta2, pv, a_, inv_tau2)
                ne += 1
                if fC * fB <= 0.0:
                    A = B
                    exA = exB
                    fA = fB
                else:
                    fA = fA / 2.0
                B = C
                exB = exC
                fB = fC
            evals[k] = ne
            iters[k] = it
            out[k] = math.sqrt(exA)

    return solve_inputs, solve_all, count_illinois


def profile(games, repeats: int) -> None:
    """Where the time of ``Glicko2().run(games)`` goes (one-game periods), printed."""
    from filters import Glicko, Glicko2
    from filters import kernels as K

    n = len(games)
    reps = max(1, repeats)
    method = Glicko2()
    run2 = time_run_and_loop(method, games, reps, "game_loop")
    total, loop, fitted = run2.wall, run2.loop_wall, run2.fitted
    run1 = time_run_and_loop(Glicko(), games, reps, "game_loop")

    solve_inputs, solve_all, count_illinois = _profile_kernels()
    # game_loop(predict, site, apply, derivs, forecast, has_predict, rule, obs, x, count, last, theta,
    #           a, b, score, score_a, score_b, home, weight, ...)
    _, site, _, lik, forecast, _, _, obs = run2.args[:8]
    theta = run2.args[11]
    a, b, score, ya, yb, home, weight = run2.args[12:19]
    fresh = method.init_state(games.players)
    # the same loop with Glicko-2's sites combined by nothing (a no-op custom rule: the state
    # never moves) and by the built-in Gaussian rule (Glicko-1's combination: no volatility)
    sites_run = replay_loop(run2.args, fresh.values, apply=K.no_apply, rule=K.RULE_CUSTOM)
    sites, _ = best_of(sites_run, reps)
    keep_sigma_run = replay_loop(run2.args, fresh.values, rule=K.RULE_GAUSSIAN)
    keep, _ = best_of(keep_sigma_run, reps)

    # the volatility problems of this very run, solved again on their own
    prob = solve_inputs(site, lik, forecast, obs, theta, a, b, score, ya, yb, home, weight, fitted._post,
                        method.prior_row(), fresh.values.shape[0])
    tau, eps, max_iter = method.tau, method.eps, method.max_iter
    sig = np.empty(prob.shape[0])
    solve_all(prob[:10], tau, eps, max_iter, sig[:10])  # compiles
    solves, _ = best_of(lambda: solve_all(prob, tau, eps, max_iter, sig), reps)
    rebuilt = bool(np.array_equal(sig, prob[:, 4]))
    evals = np.empty(prob.shape[0], np.int64)
    iters = np.empty(prob.shape[0], np.int64)
    bracket = np.empty(prob.shape[0], np.int64)
    sig2 = np.empty(prob.shape[0])
    count_illinois(prob, tau, eps, max_iter, evals, iters, bracket, sig2)
    same_count = bool(np.array_equal(sig2, sig))

    w = 52
    print()
    print(f"Where the time of Glicko2().run goes ({n:,} games, one-game periods, no time passing, best of {reps}):")
    print_breakdown(n, total, loop, w)
    print(f"      {'same loop, the sites alone (no-op combination)':{w - 4}s}{sites * 1e3:9.1f} ms  "
          f"{rate(n, sites)} games/s   (forecast, g, E, sites)")
    print(f"      {'same loop, sites + Gaussian rule (no volatility)':{w - 4}s}{keep * 1e3:9.1f} ms  "
          f"{rate(n, keep)} games/s   (steps 3, 4, 6-8 only)")
    print(f"      {'=> the two volatility solves per game (step 5)':{w - 4}s}{(loop - keep) * 1e3:9.1f} ms  "
          f"({100 * (loop - keep) / total:4.1f}% of the run)")
    print(f"  {f'{prob.shape[0]:,} solves alone, new_volatility in a loop':{w}s}{solves * 1e3:9.1f} ms  "
          f"{1e9 * solves / prob.shape[0]:6.1f} ns per solve")
    exps = evals - 1 - (1 - bracket)  # see count_illinois
    logs = 1 + (1 - bracket)
    print(f"    Illinois: {evals.mean():.2f} evaluations of f per solve, {iters.mean():.2f} iterations on "
          f"average (max {iters.max()}); {100 * bracket.mean():.1f}% of the solves search")
    print(f"    for the bracket (Delta^2 <= phi^2 + v); {exps.mean():.2f} exp and {logs.mean():.2f} log "
          f"per solve")
    print(f"    problems rebuilt from the run's post-game rows give its volatilities bit for bit: "
          f"{'yes' if rebuilt else 'NO'}; the counting copy gives the same: {'yes' if same_count else 'NO'}")
    print(f"  {'Glicko().run for comparison, whole run':{w}s}{run1.wall * 1e3:9.1f} ms  {rate(n, run1.wall)} games/s"
          f"   (game_loop {run1.loop_wall * 1e3:.1f} ms)")


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = BenchParser(__doc__)
    p.add_days("span of the dated games in days (730: two years)")
    p.add_size("--python-games", "games timed for the plain Python Glicko-1", 200_000, 20_000)
    p.add_size("--peer-games", "games timed for the glicko2 package and elote", 20_000, 2_000)
    p.add_size("--check-games", "common slice for the agreement checks", 20_000, 2_000)
    p.add_quick_off("--profile", "break our Glicko-2 run down")
    p.add_quick()
    args = p.parse_args(argv)
    n_games, repeats = args.games, args.repeats
    n_python, n_peer, n_check = args.python_games, args.peer_games, args.check_games

    print_header(f"bench_glicko: Glicko-1 and Glicko-2 over {n_games:,} simulated games among {args.players:,} "
                 f"competitors (seed {args.seed})",
                 versions("numpy", "pandas", "numba", peers=("glicko2", "elote")))
    _, a, b, score = draw_stream(n_games, args.players, args.seed,
                                 f"; dated games: 2024-01-01 + {args.days:g} days, evenly spread")
    secs = dated_seconds(n_games, args.days)
    days = (secs / 86_400.0)
    import_packages()
    from filters import Glicko, Glicko2

    t0 = time.perf_counter()
    same = build_games(np.zeros(n_games), a, b, score)
    dated = build_games(secs.astype("datetime64[s]"), a, b, score)
    weekly = dated.with_periods(7)
    print(f"Games built (no time passing; dated; weekly periods: {len(np.unique(weekly.period))} weeks) "
          f"in {time.perf_counter() - t0:.2f} s")

    # warm-up: load the cached compiled loops (or compile them) on a small table of each kind
    small = min(1_000, n_games)
    warm_up(f"first calls on {small:,} games", [lambda m=method, g=games: m().run(g.take(np.arange(small)))
                                                for method in (Glicko, Glicko2) for games in (same, dated, weekly)])

    configs = [
        ("one-game periods, no time passing", same),
        ("one-game periods, dated", dated),
        ("weekly periods, with_periods(7)", weekly),
    ]
    ours = {}
    for label, method in (("Glicko", Glicko), ("Glicko2", Glicko2)):
        for kind, games in configs:
            ours[label, kind] = best_of(lambda: method().run(games), repeats)[0]

    reps_peer = max(1, min(repeats, 3))
    sa, sb, ss_ = a[:n_python], b[:n_python], score[:n_python]
    py_s, _ = best_of(lambda: python_glicko1(sa, sb, ss_), reps_peer)
    pa, pb, ps = a[:n_peer], b[:n_peer], score[:n_peer]
    g2_s, _ = best_of(lambda: glicko2_package(pa, pb, ps), reps_peer)
    el_s, _ = best_of(lambda: elote_glicko(pa, pb, ps), reps_peer)

    rows = [(f"ours: {label}().run, {kind}", n_games, ours[label, kind])
            for label in ("Glicko", "Glicko2") for kind, _ in configs]
    rows += [
        ("plain Python Glicko-1 (Glickman's formulas)", n_python, py_s),
        ("glicko2 package, Player.update_player", n_peer, g2_s),
        ("elote GlickoCompetitor (fixed match_time)", n_peer, el_s),
    ]
    print()
    print_rate_table(rows, 58)

    r1 = n_games / ours["Glicko", configs[0][0]]
    r2 = n_games / ours["Glicko2", configs[0][0]]
    r1d = n_games / ours["Glicko", configs[1][0]]
    r2d = n_games / ours["Glicko2", configs[1][0]]
    py_rate, g2_rate, el_rate = n_python / py_s, n_peer / g2_s, n_peer / el_s
    print()
    print("ratios (ours one-game periods, no time passing / peer, per game):")
    print(f"  Glicko-1 ours / plain Python Glicko-1:  {r1 / py_rate:8.1f}x")
    print(f"  Glicko-1 ours / elote GlickoCompetitor: {r1 / el_rate:8.1f}x")
    print(f"  Glicko-2 ours / glicko2 package:        {r2 / g2_rate:8.1f}x")
    print(f"peers against the reference figures: glicko2 package {g2_rate / 1e6:.3f} M games/s (reference: about "
          f"{ISSUE_GLICKO2_PACKAGE / 1e6:.2f} M); elote {el_rate / 1e6:.3f} M games/s (reference: about "
          f"{ISSUE_ELOTE / 1e6:.2f} M)")
    print(f"target: >= {TARGET / 1e6:.0f} M games/s on one core for ours in one-game periods:")
    for name, r, rd in (("Glicko-1", r1, r1d), ("Glicko-2", r2, r2d)):
        print(f"  {name}: measured {r / 1e6:.2f} M games/s (dated games: {rd / 1e6:.2f} M): "
              f"{'MET' if r >= TARGET else 'BELOW'}")

    ok = agreement(secs, a, b, score, n_check, days)
    if args.profile:
        profile(same, repeats)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
