"""Speed of our compiled TrueSkill and Weng-Lin filters against the ``trueskill`` package,
``openskill`` and ``elote``, with agreement checks.

One stream of simulated games (random pairs among ``--players`` competitors, random results:
45% wins, 10% draws, 45% losses, drawn with NumPy as in ``bench_elo.py``) is rated one game at
a time by

- ours: ``filters.TrueSkill().run(games)`` and ``filters.WengLin(model=...).run(games)`` for the
  three models (``"bradley_terry"``, ``"thurstone_mosteller"``, ``"plackett_luce"``), default
  constants (mu 25, sigma 25/3, beta 25/6, tau 25/300, draw probability 0.10; kappa 1e-4 and
  epsilon 0.1 for Weng-Lin), on a prebuilt ``statespace.Games`` without a period column, so
  every game is rated from the state after the previous one (``tau^2`` added before each
  game: the per-game update of the peers). Compilation excluded by a warm-up on a small table;
  best of ``--repeats``. For information only, the same games dated (spread evenly over
  ``--days`` days from 2024-01-01) with ``TrueSkill(dynamics="time")`` (``tau^2`` per day idle,
  not per game) and in weekly rating periods (``games.with_periods(7)``, the period's per-game
  messages multiplied): different computations, not comparable per game;
- the ``trueskill`` package: ``env.rate_1vs1(winner, loser, drawn=...)`` per game, with its
  default backend (its own erfc approximation) and with ``backend="scipy"`` (exact normal
  cdf/pdf/ppf), each on its own slice (``--peer-games``, ``--scipy-games``);
- ``openskill``: ``BradleyTerryFull``, ``ThurstoneMostellerFull`` and ``PlackettLuce``,
  ``model.rate([[a], [b]], ranks=...)`` per game (``--peer-games``);
- ``elote``: ``TrueSkillCompetitor``, ``beat`` / ``lost_to`` / ``tied`` per game
  (``--peer-games``).

Every rate is games per second on one core (the compiled loops are serial). The ratios ours /
peer are taken within this one run; the target is at least 5 M one-vs-one TrueSkill
games per second for ours (it quotes about 11 thousand for the ``trueskill`` package and about
0.3 M for ``elote``).

Agreement on the first ``--check-games`` games, from identical starts, max absolute difference
of the final mu and sigma over the competitors:

- TrueSkill, ours vs ``trueskill`` with ``backend="scipy"``: must agree to 1e-6; **the exit
  status is 1 if they do not**. The package's default backend is reported beside it (its
  erfc approximation is good to about 1e-7 per evaluation);
- Weng-Lin, ours vs ``openskill`` per model, both configured identically (mu, sigma, beta,
  kappa, tau and, for Thurstone-Mosteller, epsilon passed to both constructors; openskill adds
  ``tau^2`` to every ``sigma^2`` before each ``rate`` call, as ours does with
  ``dynamics="game"``; ``tau`` is never passed to ``rate``, where 0 would mean "the model's
  tau"): reported against 1e-6, with the number of games that enter the regions where
  openskill's Thurstone-Mosteller terms are not exact (see ``tests/test_wenglin.py``); the
  exit status is 1 if a model disagrees and no game entered such a region;
- TrueSkill, ours vs ``elote`` (reported, not checked): elote's class constants are rounded
  (beta 4.166, tau 0.083, sigma 8.333); elote with our constants (a subclass overriding only
  the three class attributes) is run beside it to show that this is the difference.

``--profile`` (on by default, off with ``--quick``) splits ``TrueSkill().run`` into the
Python-side preparation and the compiled ``filters.kernels.game_loop`` (per game TrueSkill's
site, ``filters.trueskill._site``: the one-vs-one ADF posterior as a Gaussian site, then the
built-in Gaussian combination rule), times that loop with a no-op site, with a site that only
forecasts (``_proba``) and with TrueSkill's sites combined by nothing (a no-op custom rule), and
runs the same games with one rating period per game (``games.with_periods("game")``:
``site_loop``, the same site and rule with the period bookkeeping), reporting how far that path
is from the one-game path.

Usage::

    python benchmarks/bench_trueskill.py                  # 1,000,000 games, 1,000 competitors
    python benchmarks/bench_trueskill.py --quick          # 20,000 games, a few seconds
    python benchmarks/bench_trueskill.py --games 200000 --players 500 --repeats 5 --seed 1
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from _common import (BenchParser, best_of, build_games, dated_seconds, draw_stream, final_states, import_packages,
                     noop_site_kernel, print_breakdown, print_header, print_rate_table, proba_site_kernel, rate,
                     replay_loop, time_run_and_loop, versions, warm_up)

TARGET = 5e6  # one-vs-one TrueSkill games per second on one core for ours
ISSUE_TRUESKILL = 11e3  # the reference figures for the peers
ISSUE_ELOTE = 0.3e6
TOLERANCE = 1e-6  # absolute, in mu and sigma

MU, SIGMA, BETA, TAU = 25.0, 25.0 / 3.0, 25.0 / 6.0, 25.0 / 300.0
DRAW_PROBABILITY = 0.10
KAPPA, EPSILON = 1e-4, 0.1
MODELS = ("bradley_terry", "thurstone_mosteller", "plackett_luce")
OPENSKILL = {"bradley_terry": "BradleyTerryFull", "thurstone_mosteller": "ThurstoneMostellerFull",
             "plackett_luce": "PlackettLuce"}


# ---------------------------------------------------------------------------- the peers
def rate_stream(a, b, score, new, rate_game) -> dict:
    """Rate the games one at a time with a package's immutable rating objects: ``new()`` is a
    newcomer's rating, ``rate_game(r_a, r_b, s)`` returns both ratings after a game that ``a``
    scored ``s`` in. Returns {player: rating}."""
    players: dict = {}
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist()):
        ri = players.get(i)
        if ri is None:
            ri = new()
        rj = players.get(j)
        if rj is None:
            rj = new()
        players[i], players[j] = rate_game(ri, rj, s)
    return players


def trueskill_package(a, b, score, backend=None) -> dict:
    """The ``trueskill`` package, ``env.rate_1vs1`` per game (winner first; ``drawn=True`` for a
    draw), default constants. Returns {player: (mu, sigma)}."""
    import trueskill

    env = trueskill.TrueSkill(mu=MU, sigma=SIGMA, beta=BETA, tau=TAU, draw_probability=DRAW_PROBABILITY,
                              backend=backend)
    rate_1vs1 = env.rate_1vs1

    def rate_game(ri, rj, s):
        if s == 0.0:
            rj, ri = rate_1vs1(rj, ri)
            return ri, rj
        return rate_1vs1(ri, rj, drawn=s == 0.5)

    players = rate_stream(a, b, score, env.create_rating, rate_game)
    return {p: (r.mu, r.sigma) for p, r in players.items()}


def openskill_model(model: str):
    """openskill's model for ``model``, every constant set explicitly to ours."""
    from openskill import models

    cls = getattr(models, OPENSKILL[model])
    kw = dict(mu=MU, sigma=SIGMA, beta=BETA, kappa=KAPPA, tau=TAU)
    if model == "thurstone_mosteller":
        kw["epsilon"] = EPSILON
    return cls(**kw)


RANKS = {1.0: [0, 1], 0.0: [1, 0], 0.5: [0, 0]}


def openskill_stream(model: str, a, b, score) -> dict:
    """openskill, ``model.rate([[a], [b]], ranks=...)`` per game. Returns {player: (mu, sigma)}."""
    m = openskill_model(model)
    rate_ = m.rate

    def rate_game(ri, rj, s):
        [[ri], [rj]] = rate_([[ri], [rj]], ranks=RANKS[s])
        return ri, rj

    players = rate_stream(a, b, score, m.rating, rate_game)
    return {p: (r.mu, r.sigma) for p, r in players.items()}


def openskill_inexact(a, b, score, ours_post) -> int:
    """Games of a Thurstone-Mosteller run in which openskill's terms are not exact: a draw with
    ``Phi(e - |t|) - Phi(-e - |t|) < 1e-5`` (its ``vt``/``wt`` switch to an asymptote) or a win
    with ``t - e <= -4.5`` (its erf-based Phi loses relative precision), ``t`` and ``e`` from the
    pre-game beliefs (with ``tau^2``), rebuilt from our run's post-game rows."""
    from scipy.stats import norm

    cur: dict = {}
    bad = 0
    t2 = TAU * TAU
    for g, (i, j, s) in enumerate(zip(a.tolist(), b.tolist(), score.tolist())):
        mi, si = cur.get(i, (MU, SIGMA))
        mj, sj = cur.get(j, (MU, SIGMA))
        c = math.sqrt(si * si + sj * sj + 2 * t2 + 2 * BETA * BETA)
        t, e = (mi - mj) / c, EPSILON / c
        if s == 0.5:
            bad += norm.cdf(e - abs(t)) - norm.cdf(-e - abs(t)) < 1e-5
        else:
            bad += (t if s == 1.0 else -t) - e <= -4.5
        cur[i] = (ours_post[g, 0], ours_post[g, 1])
        cur[j] = (ours_post[g, 2], ours_post[g, 3])
    return int(bad)


def _elote_classes():
    """elote's TrueSkillCompetitor as shipped, and with our constants (beta 25/6, tau 25/300,
    sigma 25/3 instead of its rounded 4.166, 0.083 and 8.333)."""
    from elote.competitors.trueskill import TrueSkillCompetitor

    class OurConstants(TrueSkillCompetitor):
        _beta = BETA
        _tau = TAU
        _default_mu = MU
        _default_sigma = SIGMA
        _draw_probability = DRAW_PROBABILITY

    return TrueSkillCompetitor, OurConstants


def elote_trueskill(a, b, score, cls=None) -> dict:
    """elote's TrueSkillCompetitor, one method call per game. Returns {player: (mu, sigma)}."""
    if cls is None:
        from elote.competitors.trueskill import TrueSkillCompetitor as cls
    players: dict = {}
    for i, j, s in zip(a.tolist(), b.tolist(), score.tolist()):
        ci = players.get(i)
        if ci is None:
            ci = players[i] = cls()
        cj = players.get(j)
        if cj is None:
            cj = players[j] = cls()
        if s == 1.0:
            ci.beat(cj)
        elif s == 0.0:
            ci.lost_to(cj)
        else:
            ci.tied(cj)
    return {p: (c.mu, c.sigma) for p, c in players.items()}


# ---------------------------------------------------------------------------- helpers
def max_abs_diffs(x: dict, y: dict) -> tuple[float, float]:
    """Max absolute difference of mu and of sigma over the competitors."""
    if x.keys() != y.keys():
        return math.inf, math.inf
    return (max(abs(x[p][0] - y[p][0]) for p in x), max(abs(x[p][1] - y[p][1]) for p in x))


def fmt(d) -> str:
    return f"mu {d[0]:.3g}, sigma {d[1]:.3g}"


def verdict(d, tol=TOLERANCE) -> str:
    m = max(d)
    return "identical" if m == 0 else ("within 1e-6" if m <= tol else "DIFFERENT")


# ---------------------------------------------------------------------------- agreement
def agreement(a, b, score, n_check: int) -> bool:
    """Print the agreement checks on the first ``n_check`` games; True unless TrueSkill ours and
    trueskill(backend="scipy") differ by more than TOLERANCE, or an openskill model does with
    no game in openskill's inexact regions."""
    from filters import TrueSkill, WengLin

    ca, cb, cs = a[:n_check], b[:n_check], score[:n_check]
    games = build_games(np.arange(n_check, dtype=float), ca, cb, cs)
    ours_ts = final_states(TrueSkill().run(games))

    print()
    print(f"agreement of final (mu, sigma) on the first {n_check:,} games ({len(ours_ts):,} competitors), "
          f"identical starts (25, 25/3), max absolute difference:")

    # ---- TrueSkill vs the trueskill package
    scipy_ = trueskill_package(ca, cb, cs, backend="scipy")
    default = trueskill_package(ca, cb, cs)
    d_sc, d_def = max_abs_diffs(ours_ts, scipy_), max_abs_diffs(ours_ts, default)
    d_pkg = max_abs_diffs(scipy_, default)
    ok = max(d_sc) <= TOLERANCE
    print(f"  TrueSkill, ours vs trueskill package (rate_1vs1 per game), tolerance {TOLERANCE:g}:")
    label = 'backend="scipy" (exact Phi, N, Phi^-1), checked:'
    print(f"    {label:58s} {fmt(d_sc)}  ({'agree' if ok else 'DISAGREE'})")
    print(f"    {'default backend (erfc approximation), reported:':58s} {fmt(d_def)}")
    print(f"    {'the package: default backend vs scipy backend:':58s} {fmt(d_pkg)}")

    # ---- Weng-Lin vs openskill
    print(f"  Weng-Lin, ours vs openskill (rate per game; mu 25, sigma 25/3, beta 25/6, kappa 1e-4, tau 25/300 "
          f"and epsilon {EPSILON:g} in both constructors):")
    for model in MODELS:
        run = WengLin(model).run(games)
        ours = final_states(run)
        theirs = openskill_stream(model, ca, cb, cs)
        d = max_abs_diffs(ours, theirs)
        bad = openskill_inexact(ca, cb, cs, run._post) if model == "thurstone_mosteller" else 0
        v = verdict(d)
        note = f"; {bad:,} games in openskill's inexact tail" if model == "thurstone_mosteller" else ""
        print(f"    {model + ' vs ' + OPENSKILL[model] + ':':58s} {fmt(d)}  ({v}{note})")
        if v == "DIFFERENT" and bad == 0:
            ok = False

    # ---- TrueSkill vs elote
    shipped, like_ours = _elote_classes()
    el = elote_trueskill(ca, cb, cs, shipped)
    el_ours = elote_trueskill(ca, cb, cs, like_ours)
    d_el, d_el_ours = max_abs_diffs(ours_ts, el), max_abs_diffs(ours_ts, el_ours)
    print("  TrueSkill, ours vs elote TrueSkillCompetitor (reported, not checked):")
    print(f"    {'elote as shipped (beta 4.166, tau 0.083, sigma 8.333):':58s} {fmt(d_el)}")
    print(f"    {'elote with beta 25/6, tau 25/300, sigma 25/3:':58s} {fmt(d_el_ours)}  ({verdict(d_el_ours)})")
    print("    elote's update is TrueSkill's one-vs-one ADF (tau^2 first, the same v and w, the same\n"
          "    draw margin sqrt(2) beta Phi^-1((p + 1) / 2)), but its class constants are rounded to three\n"
          "    decimals: beta 4.166 (25/6 = 4.16667), tau 0.083 (0.08333), a newcomer's sigma 8.333\n"
          "    (8.33333). With the exact constants it agrees with ours to rounding error; its Phi is\n"
          "    erf-based and its v returns 0 where Phi underflows, which matters only in far tails.")
    return ok


# ---------------------------------------------------------------------------- profile
def profile(games, repeats: int) -> None:
    """Where the time of ``TrueSkill().run(games)`` goes, and the rating-period path beside it."""
    from filters import TrueSkill
    from filters import kernels as K
    from filters import trueskill as T

    n = len(games)
    reps = max(1, repeats)
    seq_run = time_run_and_loop(TrueSkill(), games, reps, "game_loop")
    total, loop, seq = seq_run.wall, seq_run.loop_wall, seq_run.fitted

    # the same loop from a fresh state with lighter kernels, each combined by nothing (a no-op
    # custom rule, two indirect calls per game; the state never moves): a no-op site (the loop
    # itself), a site that only forecasts (TrueSkill's _proba), TrueSkill's own site
    fresh = TrueSkill().init_state(games.players).values
    no_rule = {"apply": K.no_apply, "rule": K.RULE_CUSTOM}
    steps = []
    for label, kw in (("loop, no-op site and no-op combination", {"site": noop_site_kernel()}),
                      ("+ the forecast, TrueSkill._proba", {"site": proba_site_kernel(T._proba)}),
                      ("+ the ADF site, TrueSkill._site", {})):
        go = replay_loop(seq_run.args, fresh, **kw, **no_rule)
        go()  # compiles the probe
        steps.append((label, best_of(go, reps)[0]))

    periods = games.with_periods("game")
    per_run = time_run_and_loop(TrueSkill(), periods, reps, "site_loop")
    p_total, p_loop, per = per_run.wall, per_run.loop_wall, per_run.fitted
    d_proba = float(np.max(np.abs(seq.proba - per.proba)))
    d_state = float(np.max(np.abs(seq.state.values - per.state.values)))
    same = bool(np.array_equal(seq.proba, per.proba) and np.array_equal(seq.state.values, per.state.values))
    w = 52
    print()
    print(f"Where the time of TrueSkill().run goes ({n:,} games, no rating periods, best of {reps}):")
    print_breakdown(n, total, loop, w, loop_note=f"   ({1e9 * loop / n:.0f} ns per game)")
    print("  the same loop from a fresh state, built up step by step (the state moves only in the full loop):")
    for label, sec in steps:
        print(f"    {label:{w - 2}s}{sec * 1e3:9.1f} ms  {rate(n, sec)} games/s   ({1e9 * sec / n:.0f} ns per game)")
    print(f"    {'the Gaussian rule for the no-op apply = game_loop':{w - 2}s}{loop * 1e3:9.1f} ms  "
          f"{rate(n, loop)} games/s   (the run's own loop)")
    print("Rating-period path for comparison: games.with_periods(\"game\") (site_loop: the same site and rule, "
          "summed per period):")
    print(f"  {'whole run':{w}s}{p_total * 1e3:9.1f} ms  {rate(n, p_total)} games/s"
          f"   (site_loop {p_loop * 1e3:.1f} ms)")
    print(f"  max difference from the one-game path: forecasts {d_proba:.3g}, final mu/sigma {d_state:.3g}"
          f" ({'bit-identical' if same else 'not bit-identical'})")
    print("    (both paths run TrueSkill's one site and the same Gaussian rule: a one-game period is the\n"
          "    one-game update)")


# ---------------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = BenchParser(__doc__)
    p.add_days("span of the dated games (dynamics=\"time\", weekly periods) in days (730)")
    p.add_size("--peer-games", "games timed for trueskill (default backend), openskill and elote", 20_000, 1_000)
    p.add_size("--scipy-games", "games timed for trueskill with backend=\"scipy\"", 5_000, 500)
    p.add_size("--check-games", "common slice for the agreement checks", 5_000, 1_000)
    p.add_quick_off("--profile", "break our TrueSkill run down")
    p.add_quick()
    args = p.parse_args(argv)
    n_games, repeats = args.games, args.repeats
    n_peer, n_scipy, n_check = args.peer_games, args.scipy_games, args.check_games

    print_header(f"bench_trueskill: TrueSkill and Weng-Lin over {n_games:,} simulated one-vs-one games among "
                 f"{args.players:,} competitors (seed {args.seed})",
                 versions("numpy", "pandas", "scipy", "numba", peers=("trueskill", "openskill", "elote")))
    t, a, b, score = draw_stream(n_games, args.players, args.seed,
                                 f"; dated games: 2024-01-01 + {args.days:g} days, evenly spread")
    secs = dated_seconds(n_games, args.days)
    import_packages()
    from filters import TrueSkill, WengLin

    t0 = time.perf_counter()
    games = build_games(t, a, b, score)
    dated = build_games(secs.astype("datetime64[s]"), a, b, score)
    weekly = dated.with_periods(7)
    print(f"Games built (one game per time step; dated; weekly periods: {len(np.unique(weekly.period))} weeks) "
          f"in {time.perf_counter() - t0:.2f} s")

    configs = [
        ("TrueSkill().run", TrueSkill, {}, games),
        ("WengLin(\"bradley_terry\").run", WengLin, {"model": "bradley_terry"}, games),
        ("WengLin(\"thurstone_mosteller\").run", WengLin, {"model": "thurstone_mosteller"}, games),
        ("WengLin(\"plackett_luce\").run", WengLin, {"model": "plackett_luce"}, games),
        ("TrueSkill(dynamics=\"time\").run, dated (info)", TrueSkill, {"dynamics": "time"}, dated),
        ("TrueSkill().run, weekly periods (info)", TrueSkill, {}, weekly),
        ("TrueSkill(dynamics=\"time\").run, weekly periods (info)", TrueSkill, {"dynamics": "time"}, weekly),
    ]

    # warm-up: load the cached compiled loops (or compile them) on a small table of each kind
    small = np.arange(min(1_000, n_games))
    warm_up(f"first calls on {small.size:,} games", [lambda c=cls, k=kw, g=g: c(**k).run(g.take(small))
                                                     for _, cls, kw, g in configs])

    ours = {label: best_of(lambda: cls(**kw).run(g), repeats)[0] for label, cls, kw, g in configs}

    reps_peer = max(1, min(repeats, 3))
    pa, pb, ps = a[:n_peer], b[:n_peer], score[:n_peer]
    sa, sb, ss_ = a[:n_scipy], b[:n_scipy], score[:n_scipy]
    peers = [
        ("trueskill package, rate_1vs1, default backend", n_peer,
         best_of(lambda: trueskill_package(pa, pb, ps), reps_peer)[0]),
        ("trueskill package, rate_1vs1, backend=\"scipy\"", n_scipy,
         best_of(lambda: trueskill_package(sa, sb, ss_, backend="scipy"), reps_peer)[0]),
    ]
    for model in MODELS:
        peers.append((f"openskill {OPENSKILL[model]}.rate", n_peer,
                      best_of(lambda: openskill_stream(model, pa, pb, ps), reps_peer)[0]))
    peers.append(("elote TrueSkillCompetitor", n_peer, best_of(lambda: elote_trueskill(pa, pb, ps), reps_peer)[0]))

    rows = [(f"ours: {label}", n_games, s) for label, s in ours.items()] + peers
    print()
    print_rate_table(rows, 62)

    per_s = {name: n / s for name, n, s in peers}
    ts_rate = n_games / ours["TrueSkill().run"]
    print()
    print("ratios (ours, one game at a time / peer, per game):")
    ratios = [("TrueSkill ours / trueskill package, default backend", ts_rate, peers[0]),
              ("TrueSkill ours / trueskill package, backend=\"scipy\"", ts_rate, peers[1])]
    for k, model in enumerate(MODELS):
        ratios.append((f"Weng-Lin {model} ours / openskill {OPENSKILL[model]}", n_games / ours[configs[1 + k][0]],
                       peers[2 + k]))
    ratios.append(("TrueSkill ours / elote TrueSkillCompetitor", ts_rate, peers[5]))
    for name, r, peer in ratios:
        print(f"  {name + ':':70s}{r / per_s[peer[0]]:10.1f}x")
    print(f"peers against the reference figures: trueskill package {per_s[peers[0][0]] / 1e3:.1f} k games/s (reference: "
          f"about {ISSUE_TRUESKILL / 1e3:.0f} k); elote {per_s[peers[5][0]] / 1e6:.3f} M games/s (reference: about "
          f"{ISSUE_ELOTE / 1e6:.1f} M)")
    print(f"target: >= {TARGET / 1e6:.0f} M one-vs-one TrueSkill games/s on one core for ours; measured "
          f"{ts_rate / 1e6:.2f} M games/s: {'MET' if ts_rate >= TARGET else 'BELOW'}")

    ok = agreement(a, b, score, n_check)
    if args.profile:
        profile(games, repeats)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
