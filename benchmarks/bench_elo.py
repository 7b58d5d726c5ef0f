"""Speed of our compiled Elo against a plain Python loop and the ``elote`` package.

One stream of simulated games (random pairs among ``--players`` competitors, random results:
45% wins, 10% draws, 45% losses, drawn with NumPy) is rated by

- ours: ``filters.Elo(k=32).run(games)`` on a prebuilt ``statespace.Games`` (compilation
  excluded by a warm-up on a small table; best of ``--repeats``), and separately end to end,
  building the ``Games`` from the arrays and running;
- a plain Python loop: a dict of ratings, one pass over the games (its own slice,
  ``--python-games``);
- ``elote.EloCompetitor`` (``initial_rating=1500, k_factor=32``), one ``beat``/``lost_to``/
  ``tied`` call per game (its own slice, ``--elote-games``).

Every rate is games per second on one core (the compiled loop is serial; numba's thread pool is
not used). The ratios ours / peer are taken within this one run. The three are also checked to
give the same final ratings on a common slice (the first ``--check-games`` games), to within
1e-9 relative. Finally ``--profile`` (on by default, off with ``--quick``) splits our run into the
Python-side preparation in ``filters.base.Filter.run`` and the compiled
``filters.kernels.game_loop`` (the one-game path taken when the games carry no rating periods:
Elo's site, ``filters.elo._site``, then its combination rule, a shift of the rating, one game at a
time), times that loop with a no-op site kernel (the cost of the loop and its one indirect call
per game) and with a site that only forecasts (Elo's ``_proba``), and runs the same games as one
rating period per game (``games.with_periods("game")``: ``site_loop``, the same site and rule with
the period bookkeeping) and with ``Elo.fide()`` (FIDE's K, the custom rule ``_apply_fide``),
checking that both paths give bit-identical forecasts and ratings. The exit status is 1 if any
check fails.

Usage::

    python benchmarks/bench_elo.py                  # 1,000,000 games, 1,000 competitors
    python benchmarks/bench_elo.py --quick          # 20,000 games, a few seconds
    python benchmarks/bench_elo.py --games 200000 --players 500 --repeats 5 --seed 1
"""

from __future__ import annotations

import math
import sys

import numpy as np

from _common import (BenchParser, best_of, build_games, draw_stream, final_states, import_packages, noop_site_kernel,
                     print_breakdown, print_header, print_rate_table, proba_site_kernel, rate, replay_loop,
                     time_run_and_loop, versions, warm_up)

K_FACTOR = 32.0
INITIAL = 1500.0
TARGET = 20e6  # games per second on one core
TOLERANCE = 1e-9  # relative, for the agreement check


# ---------------------------------------------------------------------------- the peers
def python_elo(a, b, score, k: float = K_FACTOR, initial: float = INITIAL) -> dict:
    """Plain Python Elo: a dict of ratings, one pass, E = 1 / (1 + 10^(-(r_a - r_b) / 400))."""
    r: dict = {}
    get = r.get
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist()):
        ri = get(i, initial)
        rj = get(j, initial)
        e = 1.0 / (1.0 + 10.0 ** (-(ri - rj) / 400.0))
        delta = k * (s - e)
        r[i] = ri + delta
        r[j] = rj - delta
    return r


def elote_elo(a, b, score, k: float = K_FACTOR, initial: float = INITIAL) -> dict:
    """elote's EloCompetitor, one method call per game (how the package is meant to be used)."""
    from elote import EloCompetitor
    players: dict = {}
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist()):
        ci = players.get(i)
        if ci is None:
            ci = players[i] = EloCompetitor(initial_rating=initial, k_factor=k)
        cj = players.get(j)
        if cj is None:
            cj = players[j] = EloCompetitor(initial_rating=initial, k_factor=k)
        if s == 1.0:
            ci.beat(cj)
        elif s == 0.0:
            ci.lost_to(cj)
        else:
            ci.tied(cj)
    return {p: c.rating for p, c in players.items()}


def max_rel_diff(x: dict, y: dict) -> float:
    if x.keys() != y.keys():
        return math.inf
    return max(abs(x[p] - y[p]) / abs(y[p]) for p in x)


# ---------------------------------------------------------------------------- profile
def _identical(x, y) -> bool:
    """Forecasts, post-game states and the final state of two runs are equal bit for bit."""
    return (np.array_equal(x.proba, y.proba) and np.array_equal(x._post, y._post)
            and np.array_equal(x.state.values, y.state.values) and np.array_equal(x.state.count, y.state.count)
            and np.array_equal(x.state.last, y.state.last, equal_nan=True))


def profile(games, repeats: int) -> bool:
    """Where the time of ``Elo().run(games)`` goes, and the rating-period path beside it (printed).

    Without rating periods (``games.period is None``) ``Filter.run`` prepares time-sorted arrays
    in Python and calls the compiled ``filters.kernels.game_loop``: per game Elo's site (the
    shift ``K (S - E)`` of each rating into the accumulator rows) and its combination rule
    (``RULE_SHIFT``: rating += the shift); with periods it calls ``site_loop``, which sums the
    same sites over each period from the pre-period state before combining them.
    ``games.with_periods("game")`` puts every game in its own period, so both paths must give
    the same numbers bit for bit. Returns whether they do (for Elo(k=32) and FIDE).
    """
    from filters import Elo
    from filters import elo as EL

    n = len(games)
    reps = max(1, repeats)

    # the one-game path: whole run, Python-side preparation, compiled game_loop
    seq_run = time_run_and_loop(Elo(k=K_FACTOR), games, reps, "game_loop")
    total, loop, seq = seq_run.wall, seq_run.loop_wall, seq_run.fitted

    # the price of game_loop itself: the same loop with a site kernel that does nothing (one
    # indirect call per game, the shift rule adding nothing, the forecast and post-game rows
    # written into fresh output arrays as in Filter.run), on a fresh state; then with a site
    # that only forecasts by Elo's own _proba (the state does not move either)
    fresh = Elo(k=K_FACTOR).init_state(games.players).values
    noop_run = replay_loop(seq_run.args, fresh, site=noop_site_kernel())
    noop_run()  # compiles site_noop
    floor, _ = best_of(noop_run, reps)
    proba_run = replay_loop(seq_run.args, fresh, site=proba_site_kernel(EL._proba))
    proba_run()  # compiles site_proba
    forecast, _ = best_of(proba_run, reps)

    # the rating-period path on the same games, one game per period
    periods = games.with_periods("game")
    per_run = time_run_and_loop(Elo(k=K_FACTOR), periods, reps, "site_loop")
    p_total, p_loop, per = per_run.wall, per_run.loop_wall, per_run.fitted
    same = _identical(seq, per)

    # FIDE rules on the one-game path (K from games played and 2400 reached, 400-point cap: the
    # custom combination rule _apply_fide), and on the period path for the same check
    fide_seq = time_run_and_loop(Elo.fide(), games, reps, "game_loop")
    fide_per = time_run_and_loop(Elo.fide(), periods, reps, "site_loop")
    fide_same = _identical(fide_seq.fitted, fide_per.fitted)

    w = 44
    print()
    print(f"Where the time of Elo(k=32).run goes ({n:,} games, no rating periods, best of {reps}):")
    print_breakdown(n, total, loop, w)
    print(f"      {'loop + one indirect call per game':{w - 4}s}{floor * 1e3:9.1f} ms  {rate(n, floor)} games/s"
          "   (no-op site kernel)")
    print(f"      {'+ the forecast, Elo._proba':{w - 4}s}{forecast * 1e3:9.1f} ms  {rate(n, forecast)} games/s"
          "   (a site that only forecasts)")
    print(f"      {'Elo site and shift rule beyond the loop':{w - 4}s}{(loop - floor) * 1e3:9.1f} ms"
          f"   (of which the forecast {(forecast - floor) * 1e3:.1f} ms)")
    print()
    print("Rating-period path for comparison: the same games with games.with_periods(\"game\") (site_loop: "
          "the same site and rule, summed per period):")
    print_breakdown(n, p_total, p_loop, w, "site_loop")
    print(f"  forecasts, post-game states and final ratings bit-identical to the one-game path: "
          f"{'yes' if same else 'NO'}")
    print()
    print("Elo.fide() (FIDE rules: Elo's site, the custom combination rule _apply_fide):")
    for label, run, loop_name in (("one-game path, whole run", fide_seq, "game_loop"),
                                  ("rating-period path, whole run", fide_per, "site_loop")):
        print(f"  {label:{w}s}{run.wall * 1e3:9.1f} ms  {rate(n, run.wall)} games/s"
              f"   ({loop_name} {run.loop_wall * 1e3:.1f} ms)")
    print(f"  bit-identical on the two paths: {'yes' if fide_same else 'NO'}")
    return same and fide_same


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = BenchParser(__doc__)
    p.add_size("--python-games", "games timed for the plain Python loop", 200_000, 20_000)
    p.add_size("--elote-games", "games timed for elote", 20_000, 2_000)
    p.add_size("--check-games", "common slice checked for equal final ratings", 20_000, 2_000)
    p.add_quick_off("--profile", "break our run down")
    p.add_quick()
    args = p.parse_args(argv)
    n_games, repeats = args.games, args.repeats
    n_python, n_elote, n_check = args.python_games, args.elote_games, args.check_games

    print_header(f"bench_elo: Elo(k={K_FACTOR:g}) over {n_games:,} simulated games among {args.players:,} "
                 f"competitors (seed {args.seed})", versions("numpy", "pandas", "numba", peers=("elote",)))
    t, a, b, score = draw_stream(n_games, args.players, args.seed)
    import_packages()
    from filters import Elo

    # warm-up: loads the cached compiled loop (or compiles it) on a small table
    small = min(1_000, n_games)
    warm_up(f"first call on {small:,} games",
            [lambda: Elo(k=K_FACTOR).run(build_games(t[:small], a[:small], b[:small], score[:small]))])

    build_s, games = best_of(lambda: build_games(t, a, b, score), max(1, min(repeats, 3)))
    run_s, fitted = best_of(lambda: Elo(k=K_FACTOR).run(games), repeats)
    e2e_s, _ = best_of(lambda: Elo(k=K_FACTOR).run(build_games(t, a, b, score)), max(1, min(repeats, 3)))

    py_s, _ = best_of(lambda: python_elo(a[:n_python], b[:n_python], score[:n_python]), max(1, min(repeats, 3)))
    el_s, _ = best_of(lambda: elote_elo(a[:n_elote], b[:n_elote], score[:n_elote]), max(1, min(repeats, 3)))

    ours_rate, py_rate, el_rate = n_games / run_s, n_python / py_s, n_elote / el_s
    rows = [
        ("ours: Elo(k=32).run(games), compiled", n_games, run_s),
        ("ours: end to end, Games.from_arrays + run", n_games, e2e_s),
        ("  (of which Games.from_arrays alone)", n_games, build_s),
        ("plain Python loop (dict of ratings)", n_python, py_s),
        ("elote EloCompetitor", n_elote, el_s),
    ]
    print()
    print_rate_table(rows, 44)
    print()
    print(f"ratio ours / plain Python: {ours_rate / py_rate:8.1f}x")
    print(f"ratio ours / elote:        {ours_rate / el_rate:8.1f}x")
    print(f"target: >= {TARGET / 1e6:.0f} M games/s on one core for ours; measured "
          f"{ours_rate / 1e6:.2f} M games/s: {'MET' if ours_rate >= TARGET else 'BELOW TARGET'}")

    # ------------------------------------------------------------------ agreement
    ca, cb, cs = a[:n_check], b[:n_check], score[:n_check]
    check_games = build_games(t[:n_check], ca, cb, cs)
    ours = {p: row[0] for p, row in final_states(Elo(k=K_FACTOR).run(check_games)).items()}
    plain = python_elo(ca, cb, cs)
    el = elote_elo(ca, cb, cs)
    d_py, d_el = max_rel_diff(ours, plain), max_rel_diff(ours, el)
    lowest = min(el.values())
    print()
    print(f"agreement of final ratings on the first {n_check:,} games ({len(ours):,} competitors), "
          f"tolerance {TOLERANCE:g} relative:")
    print(f"  ours vs plain Python: max relative difference {d_py:.3g} "
          f"({'bit-identical' if d_py == 0 else 'within tolerance' if d_py <= TOLERANCE else 'DIFFERENT'})")
    print(f"  ours vs elote:        max relative difference {d_el:.3g} "
          f"({'bit-identical' if d_el == 0 else 'within tolerance' if d_el <= TOLERANCE else 'DIFFERENT'})")
    print("    elote uses the same K (k_factor=32 multiplies S - E) and scale (400, base 10); it computes\n"
          "    E = Q_a / (Q_a + Q_b) with Q = 10^(r / 400), equal to 1 / (1 + 10^(-(r_a - r_b) / 400)) but\n"
          "    rounded differently, so agreement is to rounding error, not bit for bit. elote also clamps\n"
          f"    ratings at 100; the lowest rating here is {lowest:.1f}, so the clamp never acted.")
    ok = d_py <= TOLERANCE and d_el <= TOLERANCE and lowest > 100

    if args.profile:
        ok = profile(games, repeats) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
