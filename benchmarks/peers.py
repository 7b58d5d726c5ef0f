"""Peers side by side: every filter and smoother of this package against the peer libraries, in one
command and one process (issue 7), printed as two markdown tables and saved as JSON.

**Filters** (games per second; ratio ours / peer). One simulated stream (``_common.make_stream``:
``--games`` random pairs among ``--players`` competitors, 45% wins / 10% draws / 45% losses) is
rated one game at a time by each of our compiled filters, on a prebuilt ``statespace.Games``
without rating periods, after a warm-up that loads numba's cache (best of ``--repeats``), and by
each filter's peers, one call per game as the packages are meant to be used, on a prefix of the
same stream (they run thousands to hundreds of thousands of games per second; the prefix is
stated in the table):

==============================  ================================================================
ours                            peers (the functions of the ``bench_<x>.py`` scripts, imported)
==============================  ================================================================
``Elo(k=32)``                   a plain Python loop; ``elote.EloCompetitor``
``Glicko()``                    a plain Python Glicko-1 (Glickman's formulas);
                                ``elote.GlickoCompetitor``
``Glicko2()``                   ``glicko2.Player.update_player``
``TrueSkill()``                 ``trueskill.TrueSkill.rate_1vs1``; ``elote.TrueSkillCompetitor``
``WengLin(model)``, 3 models    ``openskill``'s ``BradleyTerryFull``, ``ThurstoneMostellerFull``,
                                ``PlackettLuce`` (the same Weng-Lin updates)
``EKF()``                       no peer library: ``Elo(k=32)`` on the same games instead
==============================  ================================================================

Elo, Glicko, TrueSkill and Weng-Lin rate the stream with every game at one time (one-game rating
periods and no time passing, as the peers update: Glicko's RD grows only inside Glicko-2's own
update, TrueSkill and Weng-Lin add ``tau^2`` per game); the EKF needs time to pass, so it rates
the same games with times in rounds (``bench_ekf.in_rounds``: each competitor plays about once
per unit of time), and ``Elo(k=32)`` is timed on that table too for the ratio. The agreement of
ours with each peer is checked by the ``bench_<x>.py`` scripts, not here.

**Smoothers** (fit seconds, held-out log loss; ratio of fit times). The issue's stream
(``bench_smoothers.make_split``: 20,000 games among 100 competitors over 50 periods, drawn from
the random-walk model; train on the first 40 periods, forecast the last 10 from the end of
training): our ``LaplaceSmoother`` (drift at the truth) and static ``BradleyTerry`` against
``whr`` (until its convergence test), ``kickscore``, ``trueskillthroughtime`` and ``choix``
(``opt_pairwise(alpha=0.5)``, the same MAP as our ``BradleyTerry``, and ``ilsr_pairwise``),
run as ``bench_smoothers.py`` runs them, and the true probabilities (the floor). Dynamic peers are
compared with the Laplace smoother, ``choix`` with ``BradleyTerry``: fit-time ratio peer / ours
and the difference of held-out log loss with its paired standard error.

BLAS runs on one thread (``--blas-threads 1``, through threadpoolctl), as the compiled loops
do: on a busy two-core machine OpenBLAS's second thread can make a 100 x 100 inverse 500 times
slower (0.1 s instead of 0.2 ms), which would time the machine's load rather than the method.

A peer whose package is not importable is skipped with a note (``pip install -e ".[bench]"``
installs all eight); ``--without elote,whr`` leaves packages out on purpose (to see the report
without them). With ``--quick`` the sizes are small and the two slow smoother peers (kickscore,
trueskillthroughtime: tens of seconds each) are skipped: a smoke test of seconds.

Usage::

    python benchmarks/peers.py                          # everything: 1.5-2.5 minutes on 2 cores
    python benchmarks/peers.py --quick                  # smoke test
    python benchmarks/peers.py --only filters --json /tmp/filters.json
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import bench_smoothers as BS
from _common import BenchParser, best_of, build_games, cpu_name, make_stream, rate, timed, version_map, warm_up
from bench_ekf import in_rounds, valid
from bench_elo import K_FACTOR, elote_elo, python_elo
from bench_glicko import elote_glicko, glicko2_package, python_glicko1
from bench_trueskill import MODELS, OPENSKILL, elote_trueskill, openskill_stream, trueskill_package

#: The optional extra ``bench`` of pyproject.toml: every peer package (import name = package name).
PEER_PACKAGES = ("elote", "trueskill", "openskill", "glicko2", "kickscore", "whr", "trueskillthroughtime", "choix")
INSTALL = 'pip install -e ".[bench]"'
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "peers.json"
SLOW_SMOOTHER_PEERS = ("kickscore", "trueskillthroughtime")


# ---------------------------------------------------------------------------- what is compared
@dataclass
class Ours:
    """One of our filters: ``make()`` builds it; it rates the ``table`` ("flat": every game at
    one time; "rounds": times in rounds)."""

    name: str
    make: Callable
    table: str = "flat"


@dataclass
class Peer:
    """A peer of ``ours`` (an :class:`Ours` name): ``run(a, b, score)`` rates a prefix of the
    stream of ``size`` games (an option of the command line); ``package`` is what must be
    importable (None: plain Python)."""

    ours: str
    name: str
    run: Callable
    size: str
    package: str | None = None


def our_filters() -> list[Ours]:
    from filters import EKF, Elo, Glicko, Glicko2, TrueSkill, WengLin

    out = [Ours(f"Elo(k={K_FACTOR:g})", lambda: Elo(k=K_FACTOR)), Ours("Glicko()", Glicko),
           Ours("Glicko2()", Glicko2), Ours("TrueSkill()", TrueSkill)]
    out += [Ours(f'WengLin("{m}")', lambda m=m: WengLin(m)) for m in MODELS]
    out += [Ours("EKF()", EKF, "rounds"), Ours(f"Elo(k={K_FACTOR:g}), times in rounds", lambda: Elo(k=K_FACTOR),
                                                "rounds")]
    return out


def filter_peers() -> list[Peer]:
    elo, ts = f"Elo(k={K_FACTOR:g})", "TrueSkill()"
    out = [
        Peer(elo, "plain Python loop (bench_elo)", python_elo, "python_games"),
        Peer(elo, "elote EloCompetitor", elote_elo, "peer_games", "elote"),
        Peer("Glicko()", "plain Python Glicko-1 (bench_glicko)", python_glicko1, "python_games"),
        Peer("Glicko()", "elote GlickoCompetitor", elote_glicko, "peer_games", "elote"),
        Peer("Glicko2()", "glicko2 Player.update_player", glicko2_package, "peer_games", "glicko2"),
        Peer(ts, "trueskill rate_1vs1", trueskill_package, "slow_peer_games", "trueskill"),
        Peer(ts, "elote TrueSkillCompetitor", elote_trueskill, "peer_games", "elote"),
    ]
    out += [Peer(f'WengLin("{m}")', f"openskill {OPENSKILL[m]}", lambda a, b, s, m=m: openskill_stream(m, a, b, s),
                 "peer_games", "openskill") for m in MODELS]
    return out


# ---------------------------------------------------------------------------- helpers
def progress(msg: str) -> None:
    """A progress line on stderr (stdout holds the report)."""
    print(msg, file=sys.stderr, flush=True)


def skip_note(package: str, without: set[str], exc: BaseException | None = None) -> str:
    if package in without:
        return f"{package}: left out (--without)"
    return f"{package}: not importable ({exc}); {INSTALL} installs the peers"


def fmt_rate(games_per_s: float | None) -> str:
    return "—" if games_per_s is None else rate(games_per_s, 1.0).strip()


def fmt_ratio(r: float | None) -> str:
    if r is None or not math.isfinite(r):
        return "—"
    return f"{r:,.0f}" if r >= 100 else f"{r:.1f}" if r >= 1 else f"{r:.2f}"


def fmt_delta(delta: float, se: float) -> str:
    """``+0.0012 ± 0.0003`` (a difference that rounds to zero is shown as ``+0.0000``)."""
    return f"{0.0 if abs(delta) < 5e-5 else delta:+.4f} ± {se:.4f}"


def markdown_table(head: list[str], rows: list[list[str]], right: set[int]) -> str:
    """A markdown table, columns in ``right`` right-aligned, padded to line up in a terminal."""
    cells = [head] + rows
    widths = [max(len(r[k]) for r in cells) for k in range(len(head))]

    def line(r):
        return "| " + " | ".join(c.rjust(w) if k in right else c.ljust(w)
                                 for k, (c, w) in enumerate(zip(r, widths))) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if k in right else "-" * (w + 2) for k, w in enumerate(widths)) + "|"
    return "\n".join([line(head), rule] + [line(r) for r in rows])


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return None


# ---------------------------------------------------------------------------- filters
def filters_part(args, without: set[str]) -> dict:
    n, players = args.games, args.players
    progress(f"filters: drawing {n:,} games among {players:,} competitors")
    t, a, b, score = make_stream(n, players, args.seed)
    rounds = build_games(in_rounds(t, players), a, b, score)  # first: absorbs the first call's imports
    build_s, flat = best_of(lambda: build_games(np.zeros(n), a, b, score), 1)
    tables = {"flat": flat, "rounds": rounds}

    ours = our_filters()
    small = np.arange(min(1_000, n))
    warm_up(f"filters: first calls on {small.size:,} games",
            [lambda o=o: o.make().run(tables[o.table].take(small)) for o in ours], file=sys.stderr)
    timing: dict[str, dict] = {}
    ok = True
    for o in ours:
        progress(f"  timing ours {o.name}")
        wall, cpu, fitted = timed(lambda: o.make().run(tables[o.table]), args.repeats)
        ok = valid(fitted) and ok
        timing[o.name] = {"games": n, "wall_s": wall, "cpu_s": cpu, "games_per_s": n / wall,
                          "cpu_games_per_s": n / cpu, "table": o.table}

    rows, skipped = [], []
    reps = max(1, min(args.repeats, 2))
    for p in filter_peers():
        size = getattr(args, p.size)
        pa, pb, ps = a[:size], b[:size], score[:size]
        try:
            p.run(pa[:100], pb[:100], ps[:100])  # imports the package (excluded from the timing)
        except ImportError as exc:
            skipped.append({"ours": p.ours, "peer": p.name, "package": p.package,
                            "note": skip_note(p.package, without, exc)})
            continue
        progress(f"  timing {p.name} on {size:,} games")
        wall, cpu, _ = timed(lambda: p.run(pa, pb, ps), reps)
        rows.append(pair_row(timing[p.ours], p.ours, p.name, p.package, size, wall, cpu))
    # the EKF has no peer library: Elo(k=32) on the same games instead
    elo = timing[f"Elo(k={K_FACTOR:g}), times in rounds"]
    rows.append(pair_row(timing["EKF()"], "EKF()", f"no peer library: ours Elo(k={K_FACTOR:g}), same games",
                         None, n, elo["wall_s"], elo["cpu_s"]))
    return {"stream": {"games": n, "players": players, "seed": args.seed, "results": "45% wins, 10% draws, 45% losses",
                       "repeats_ours": args.repeats, "repeats_peers": reps,
                       "build_games_s": build_s},
            "ours": timing, "rows": rows, "skipped": skipped, "forecasts_valid": ok}


def pair_row(ours: dict, ours_name: str, peer: str, package: str | None, size: int, wall: float, cpu: float) -> dict:
    peer_rate, peer_cpu = size / wall, size / cpu
    return {"ours": ours_name, "ours_games_per_s": ours["games_per_s"], "ours_cpu_games_per_s": ours["cpu_games_per_s"],
            "peer": peer, "package": package, "peer_games": size, "peer_wall_s": wall, "peer_cpu_s": cpu,
            "peer_games_per_s": peer_rate, "peer_cpu_games_per_s": peer_cpu,
            "ratio": ours["games_per_s"] / peer_rate, "ratio_cpu": ours["cpu_games_per_s"] / peer_cpu}


def print_filters(part: dict) -> None:
    n = part["stream"]["games"]
    print(f"## Filters: games per second, ours on all {n:,} games, each peer on the first 'peer games' of the "
          "same stream\n")
    rows = [[r["ours"], fmt_rate(r["ours_games_per_s"]), r["peer"], f"{r['peer_games']:,}",
             fmt_rate(r["peer_games_per_s"]), fmt_ratio(r["ratio"]), fmt_ratio(r["ratio_cpu"])]
            for r in part["rows"]]
    print(markdown_table(["ours", "ours games/s", "peer", "peer games", "peer games/s", "ours / peer",
                          "ours / peer (CPU time)"], rows, {1, 3, 4, 5, 6}))
    build = part["stream"]["build_games_s"]
    print(f"\nOurs run on a prebuilt Games (Games.from_arrays of the {n:,} games: {build:.2f} s, "
          f"{fmt_rate(n / build)} games/s, not in the ours column); peers take NumPy arrays and loop in Python. "
          f"Best of {part['stream']['repeats_ours']} (ours) and {part['stream']['repeats_peers']} (peers), "
          "wall clock; the CPU-time ratio leaves out time other processes held the core.")
    for s in part["skipped"]:
        print(f"skipped: {s['peer']} ({s['ours']}): {s['note']}")
    if not part["forecasts_valid"]:
        print("A FORECAST OF A TIMED RUN IS NOT A FINITE PROBABILITY")


# ---------------------------------------------------------------------------- smoothers
def smoothers_part(args, without: set[str]) -> dict:
    import statespace as ss
    from smoothers import BradleyTerry, LaplaceSmoother

    progress(f"smoothers: drawing the {BS.N_GAMES:,}-game stream")
    sim, train, test, train_rows, test_rows, per = BS.make_split(args.seed)
    y, model = test.score, sim.model
    bt_model = ss.SkillModel("logistic", 1.0, 0.0, BS.PRIOR_VAR)
    ours = {"LaplaceSmoother": lambda: LaplaceSmoother(model), "BradleyTerry": lambda: BradleyTerry(bt_model)}
    start = train.take(np.arange(2_000))
    for make in ours.values():  # loads numba's cache (or compiles)
        make().fit(start)

    reps = max(1, min(args.repeats, 3))
    rows, losses = [], {}
    for name, make in ours.items():
        progress(f"  timing ours {name}")
        s, fit = best_of(lambda: make().fit(train), reps)
        p = ss.metrics.expected_score(fit.predict_proba(test))
        losses[name] = BS.log_loss(y, p, per_game=True)
        note = f"{fit.info['n_nodes']:,} nodes, {fit.info['iterations']} Newton steps"
        rows.append({"method": f"ours: {name}", "kind": "ours", "package": None, "fit_s": s,
                     "log_loss": float(losses[name].mean()),
                     "note": note + (", static" if name == "BradleyTerry" else "")})
    rows[0]["note"] = f"drift = truth ({BS.DRIFT:g}); " + rows[0]["note"]
    true_p = ss.metrics.expected_score(sim.true_proba()[test_rows])
    rows.append({"method": "true probabilities", "kind": "floor", "package": None, "fit_s": None,
                 "log_loss": BS.log_loss(y, true_p), "note": "Simulation.true_proba(): the floor"})

    st = BS.Stream(sim.games.with_periods(1), train_rows, test_rows, per)
    peers = [  # (package, label, run -> (seconds, p, note), compared with)
        ("whr", "whr, until converged", lambda: BS.peer_whr(st, None), "LaplaceSmoother"),
        ("kickscore", "kickscore (logit, Wiener kernel)", lambda: BS.peer_kickscore(st), "LaplaceSmoother"),
        ("trueskillthroughtime", "trueskillthroughtime (probit)", lambda: BS.peer_ttt(st, args.ttt_iterations),
         "LaplaceSmoother"),
        ("choix", "choix.opt_pairwise(alpha=0.5) (static)",
         lambda: BS.peer_choix(st, "opt")[:2] + ("MAP under N(0, 1), as our BradleyTerry",), "BradleyTerry"),
        ("choix", "choix.ilsr_pairwise (static)",
         lambda: BS.peer_choix(st, "ilsr")[:2] + ("maximum likelihood",), "BradleyTerry"),
    ]
    skipped = []
    for package, label, run, versus in peers:
        if args.quick and package in SLOW_SMOOTHER_PEERS:
            skipped.append({"peer": label, "package": package, "note": f"{package}: slow (tens of seconds), "
                                                                        "skipped with --quick"})
            continue
        progress(f"  fitting {label}")
        try:
            s, p, note = run()
        except ImportError as exc:
            skipped.append({"peer": label, "package": package, "note": skip_note(package, without, exc)})
            continue
        except Exception as exc:  # a peer failing must not hide the others
            skipped.append({"peer": label, "package": package, "note": f"failed: {type(exc).__name__}: {exc}"[:200]})
            continue
        mine = rows[0 if versus == "LaplaceSmoother" else 1]
        loss = BS.log_loss(y, p, per_game=True)
        delta, se = ss.metrics.paired_difference(loss, losses[versus])
        rows.append({"method": label, "kind": "peer", "package": package, "fit_s": s, "log_loss": float(loss.mean()),
                     "versus": f"ours: {versus}", "fit_ratio": s / mine["fit_s"], "log_loss_minus_ours": delta,
                     "paired_se": se, "note": note})
    return {"stream": {"games": BS.N_GAMES, "players": BS.N_PLAYERS, "periods": BS.N_PERIODS,
                       "train_periods": BS.TRAIN_PERIODS, "train_games": len(train), "test_games": len(test),
                       "drift": BS.DRIFT, "prior_var": BS.PRIOR_VAR, "seed": args.seed, "repeats_ours": reps,
                       "ttt_iterations": args.ttt_iterations},
            "rows": rows, "skipped": skipped}


def print_smoothers(part: dict) -> None:
    st = part["stream"]
    print(f"## Smoothers: {st['games']:,} games among {st['players']} competitors over {st['periods']} periods; "
          f"fit on the first {st['train_periods']} ({st['train_games']:,} games), log loss on the last "
          f"{st['periods'] - st['train_periods']} ({st['test_games']:,} games)\n")
    rows = []
    for r in part["rows"]:
        peer = r["kind"] == "peer"
        rows.append([r["method"], "—" if r["fit_s"] is None else f"{r['fit_s']:.3f}", f"{r['log_loss']:.4f}",
                     r.get("versus", "—"), fmt_ratio(r["fit_ratio"]) if peer else "—",
                     fmt_delta(r["log_loss_minus_ours"], r["paired_se"]) if peer else "—", r["note"]])
    print(markdown_table(["method", "fit s", "log loss", "compared with", "peer s / ours s",
                          "log loss − ours ± paired se", "notes"], rows, {1, 2, 4, 5}))
    print(f"\nOurs: fit(train) on a prebuilt Games, best of {st['repeats_ours']} after a warm-up; peers: timed "
          "once, end to end from Python lists (bench_smoothers.py's peer functions).")
    for s in part["skipped"]:
        print(f"skipped: {s['peer']}: {s['note']}")


# ---------------------------------------------------------------------------- main
def _plain(x):
    """NumPy scalars as Python numbers, for JSON."""
    return x.item() if hasattr(x, "item") else str(x)


def machine() -> dict:
    import numba

    return {"cpu": cpu_name(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "numba_threads": numba.config.NUMBA_NUM_THREADS, "blas": BS.blas_threads(),
            "load_average_start": load_average()}


def main(argv=None) -> int:
    t_start = time.perf_counter()
    p = BenchParser(__doc__)
    p.add_size("--python-games", "games timed for the plain Python loops", 200_000, 20_000)
    p.add_size("--peer-games", "games timed for elote, glicko2 and openskill", 50_000, 2_000)
    p.add_size("--slow-peer-games", "games timed for the trueskill package", 20_000, 500)
    p.add_argument("--ttt-iterations", type=int, default=30, help="trueskillthroughtime's convergence() cap (30)")
    p.add_argument("--only", choices=("filters", "smoothers"), help="run one part only")
    p.add_argument("--without", default="", help="comma-separated peer packages to leave out (as if absent)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS threads (1: one core, as the compiled loops; 0: as the environment sets them)")
    p.add_argument("--json", type=Path, default=DEFAULT_JSON, help=f"where to save the numbers ({DEFAULT_JSON})")
    p.add_quick()
    args = p.parse_args(argv)
    without = {x.strip() for x in args.without.split(",") if x.strip()}
    if without - set(PEER_PACKAGES):
        p.error(f"--without: unknown packages {', '.join(sorted(without - set(PEER_PACKAGES)))} "
                f"(peers: {', '.join(PEER_PACKAGES)})")
    for name in without:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` raise ImportError

    import filters  # noqa: F401  (imports numba, for the versions)
    import smoothers  # noqa: F401  (loads scipy's BLAS, for the limit below)
    if args.blas_threads > 0:  # every BLAS library loaded by now: NumPy's and SciPy's
        from threadpoolctl import threadpool_limits
        threadpool_limits(limits=args.blas_threads, user_api="blas")

    info = machine()
    vers = version_map("numpy", "scipy", "pandas", "numba", peers=("statespace-ratings",) + PEER_PACKAGES)
    command = "python benchmarks/peers.py" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
    print(f"# Peers side by side ({'--quick' if args.quick else 'full run'})\n")
    print(f"command: `{command}`  ")
    print(f"machine: {info['cpu']}, {info['cpu_count']} logical cores (one used: the loops are serial), "
          f"load average at start {info['load_average_start']}; BLAS: {info['blas']}  ")
    print("versions: " + ", ".join(f"{k} {v if v is not None else 'not installed'}" for k, v in vers.items()) + "\n")

    result = {"command": command, "quick": args.quick, "machine": info, "versions": vers,
              "without": sorted(without)}
    ok = True
    if args.only != "smoothers":
        result["filters"] = filters_part(args, without)
        ok = result["filters"]["forecasts_valid"]
        print_filters(result["filters"])
        print()
    if args.only != "filters":
        result["smoothers"] = smoothers_part(args, without)
        print_smoothers(result["smoothers"])
        print()
    info["load_average_end"] = load_average()
    result["seconds"] = time.perf_counter() - t_start
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=2, default=_plain) + "\n")
    print(f"load average at the end {info['load_average_end']}; whole command {result['seconds']:.0f} s")
    print(f"saved: {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
