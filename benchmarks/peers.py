"""Every filter and smoother beside its peers, the floor, and the speed goals, in one command.

One run prints a report (markdown) and saves it with every number (JSON) under
``benchmarks/results/peers-<date>[-quick].md`` / ``.json`` (``--json`` elsewhere: the report goes
beside it), with the date, the command, the commit, the machine, the load average at the start
and the end and the version of every package. Nothing is flattered:

- **The same repeats for everyone**: ``--repeats`` (3; ``--quick`` 2) is the best-of count of ours
  and of every peer, in filters and smoothers alike; every row gives the best of that many runs.
- **Warm and cold, both**: our timed rows are warm (numba's on-disk cache loaded by a first call
  on a small table, excluded); the cold figures come from fresh processes with an empty numba
  cache (``NUMBA_CACHE_DIR`` pointed at a new temporary folder: what a fresh install pays):
  ``import statespace, filters`` and ``statespace compare --methods elo`` cold and warm, the
  default ``statespace compare`` cold (not with ``--quick``) and warm. A peer that compiles
  (kickscore: numba without a disk cache, so every process compiles it on its first fit) is
  reported twice: its first fit in the process (cold) and the best of ``--repeats`` fits after it
  (warm).
- **CPU time** (``time.process_time``: every thread of the process) beside the wall clock; the
  ratios ours / peer on both.

The parts:

**Filters** (games per second; ratio ours / peer). One simulated stream (``_common.make_stream``:
``--games`` random pairs among ``--players`` competitors, 45% wins / 10% draws / 45% losses) is
rated one game at a time by each of our compiled filters, on a prebuilt ``statespace.Games``
without rating periods, and by each filter's peers, one call per game as the packages are meant
to be used, on a prefix of the same stream (they run thousands to hundreds of thousands of games
per second; the prefix is stated in the table):

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

Elo, Glicko, TrueSkill and Weng-Lin rate the stream with every game at one time (the peers'
per-game update); the EKF needs time to pass, so it rates the same games with times in rounds
(``bench_ekf.in_rounds``), and ``Elo(k=32)`` is timed on that table too for the ratio. The
agreement of ours with each peer is checked by the ``bench_<x>.py`` scripts, not here.

**The floor** (``bench_floor.py``, imported): ``Elo(k=32)`` and the default ``EKF()`` against a
plain numba loop with the same outputs (one-step win probabilities and final ratings, checked to
1e-9 before timing) at ``--floor-sizes`` competitors; ratio ours / floor.

**Smoothers** (fit seconds, held-out log loss). The stream (``bench_smoothers.make_split``:
20,000 games among 100 competitors over 50 periods; train on the first 40 periods, forecast the
last 10): our ``LaplaceSmoother`` (drift at the truth) and static ``BradleyTerry`` against ``whr``
(until its convergence test), ``kickscore`` (cold and warm), ``trueskillthroughtime`` and
``choix`` (``opt_pairwise(alpha=0.5)``, the same MAP as our ``BradleyTerry``, and
``ilsr_pairwise``), run by ``bench_smoothers.py``'s peer functions, and the true probabilities (the
floor). Fit-time ratio peer / ours and the difference of held-out log loss with its paired
standard error.

**Start-up** (cold and warm, above) and **loading**: ``Games.from_arrays`` of the filters' stream
(integer ids) and ``Games.from_csv`` of the same games written to a temporary CSV, in games per
second, and the bytes per game of the built table and of the peak memory while building it
(``tracemalloc``); when ``benchmarks/bench_loading.py`` exists its figures are used instead.

**Other scripts** run as subprocesses when present (their whole output saved beside the report):
``bench_loading.py``, ``bench_laplace_scale.py`` (the million-game Laplace fit) and, not with
``--quick``, ``bench_pymc.py`` (the 5,000-game NUTS fit). A script's figure for a goal is read
from a line ``goal <key> <value>`` of its output (keys: ``from_arrays_games_per_s``,
``from_csv_rows_per_s``, ``bytes_per_game``, ``laplace_linear`` with ``yes``/``no`` and
``laplace_1e6_s``, ``pymc_5000_s``), or for ``bench_pymc.py`` from its ``wall time of fit`` line.

**Goals**: each speed goal with its target, today's figure and met / NOT met (or not
measured, and why).

BLAS runs on one thread (``--blas-threads 1``, through threadpoolctl), as the compiled loops do.
A peer whose package is not importable is skipped with a note (``pip install -e ".[bench]"``
installs all eight); ``--without elote,whr`` leaves packages out on purpose. With ``--quick`` the
sizes are small, the two slow smoother peers (kickscore, trueskillthroughtime) and PyMC are
skipped and the default ``compare`` is timed warm only: a few minutes at most.

Usage::

    python benchmarks/peers.py                          # everything (see benchmarks/README.md for the time)
    python benchmarks/peers.py --quick                  # the quick version
    python benchmarks/peers.py --only filters --json /tmp/filters.json
    python benchmarks/peers.py --write-docs             # also replace the generated block of docs/benchmarks.md
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

import bench_floor as FL
import bench_smoothers as BS
from _common import BenchParser, build_games, cpu_name, git_describe, make_stream, paired, rate, version_map, warm_up
from bench_ekf import in_rounds, valid
from bench_elo import K_FACTOR, elote_elo, python_elo
from bench_glicko import elote_glicko, glicko2_package, python_glicko1
from bench_trueskill import MODELS, OPENSKILL, elote_trueskill, openskill_stream, trueskill_package

#: The optional extra ``bench`` of pyproject.toml: every peer package (import name = package name).
PEER_PACKAGES = ("elote", "trueskill", "openskill", "glicko2", "kickscore", "whr", "trueskillthroughtime", "choix")
INSTALL = 'pip install -e ".[bench]"'
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
DOCS = ROOT / "docs" / "benchmarks.md"
DOCS_BEGIN = "<!-- peers.py: begin (generated by `python benchmarks/peers.py --write-docs`; do not edit by hand) -->"
DOCS_END = "<!-- peers.py: end -->"
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
_T0 = time.perf_counter()


def progress(msg: str) -> None:
    """A progress line on stderr (stdout holds the report), with the seconds since the start."""
    print(f"[{time.perf_counter() - _T0:6.1f} s] {msg}", file=sys.stderr, flush=True)


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


class Report:
    """The report: each line printed on stdout as it comes and kept for the saved file."""

    def __init__(self):
        self.lines: list[str] = []

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.extend(text.split("\n"))


def best_cpu(fn: Callable, repeats: int):
    """(best wall s, best process CPU s, last result) of ``repeats`` calls."""
    t = paired({"x": fn}, repeats)["x"]
    return t.wall, t.cpu, t.result


# ---------------------------------------------------------------------------- filters
def filters_part(args, without: set[str]) -> dict:
    n, players, reps = args.games, args.players, args.repeats
    progress(f"filters: drawing {n:,} games among {players:,} competitors")
    t, a, b, score = make_stream(n, players, args.seed)
    rounds = build_games(in_rounds(t, players), a, b, score)  # first: absorbs the first call's imports
    zeros = np.zeros(n)
    build_wall, build_cpu, flat = best_cpu(lambda: build_games(zeros, a, b, score), reps)
    tables = {"flat": flat, "rounds": rounds}

    ours = our_filters()
    small = np.arange(min(1_000, n))
    warm_up(f"filters: first calls on {small.size:,} games",
            [lambda o=o: o.make().run(tables[o.table].take(small)) for o in ours], file=sys.stderr)
    timing: dict[str, dict] = {}
    ok = True
    for o in ours:
        progress(f"  timing ours {o.name}")
        wall, cpu, fitted = best_cpu(lambda: o.make().run(tables[o.table]), reps)
        ok = valid(fitted) and ok
        timing[o.name] = {"games": n, "wall_s": wall, "cpu_s": cpu, "games_per_s": n / wall,
                          "cpu_games_per_s": n / cpu, "table": o.table}

    rows, skipped = [], []
    for p in filter_peers():
        size = getattr(args, p.size)
        pa, pb, ps = a[:size], b[:size], score[:size]
        try:
            p.run(pa[:100], pb[:100], ps[:100])  # imports the package and warms it (excluded from the timing)
        except ImportError as exc:
            skipped.append({"ours": p.ours, "peer": p.name, "package": p.package,
                            "note": skip_note(p.package, without, exc)})
            continue
        progress(f"  timing {p.name} on {size:,} games")
        wall, cpu, _ = best_cpu(lambda: p.run(pa, pb, ps), reps)
        rows.append(pair_row(timing[p.ours], p.ours, p.name, p.package, size, wall, cpu))
    # the EKF has no peer library: Elo(k=32) on the same games instead
    elo = timing[f"Elo(k={K_FACTOR:g}), times in rounds"]
    rows.append(pair_row(timing["EKF()"], "EKF()", f"no peer library: ours Elo(k={K_FACTOR:g}), same games",
                         None, n, elo["wall_s"], elo["cpu_s"]))
    return {"stream": {"games": n, "players": players, "seed": args.seed, "results": "45% wins, 10% draws, 45% losses",
                       "repeats_ours": reps, "repeats_peers": reps, "build_games_s": build_wall,
                       "build_games_cpu_s": build_cpu},
            "ours": timing, "rows": rows, "skipped": skipped, "forecasts_valid": ok}


def pair_row(ours: dict, ours_name: str, peer: str, package: str | None, size: int, wall: float, cpu: float) -> dict:
    peer_rate, peer_cpu = size / wall, size / cpu
    return {"ours": ours_name, "ours_games_per_s": ours["games_per_s"], "ours_cpu_games_per_s": ours["cpu_games_per_s"],
            "peer": peer, "package": package, "peer_games": size, "peer_wall_s": wall, "peer_cpu_s": cpu,
            "peer_games_per_s": peer_rate, "peer_cpu_games_per_s": peer_cpu,
            "ratio": ours["games_per_s"] / peer_rate, "ratio_cpu": ours["cpu_games_per_s"] / peer_cpu}


def print_filters(part: dict, out: Report) -> None:
    n = part["stream"]["games"]
    out(f"## Filters: games per second, ours on all {n:,} games, each peer on the first 'peer games' of the "
        "same stream\n")
    rows = [[r["ours"], fmt_rate(r["ours_games_per_s"]), r["peer"], f"{r['peer_games']:,}",
             fmt_rate(r["peer_games_per_s"]), fmt_ratio(r["ratio"]), fmt_rate(r["ours_cpu_games_per_s"]),
             fmt_rate(r["peer_cpu_games_per_s"]), fmt_ratio(r["ratio_cpu"])]
            for r in part["rows"]]
    out(markdown_table(["ours", "ours games/s", "peer", "peer games", "peer games/s", "ours / peer",
                        "ours CPU games/s", "peer CPU games/s", "ours / peer (CPU time)"], rows,
                       {1, 3, 4, 5, 6, 7, 8}))
    st = part["stream"]
    out(f"\nBest of {st['repeats_ours']} for ours and for every peer, warm (ours after a first call that loads numba's "
        "cache; each peer after a first call on 100 games); 'games/s' on the wall clock, 'CPU games/s' on the "
        "process's CPU time. Ours run on a prebuilt Games (Games.from_arrays: see Loading); peers take NumPy arrays "
        "and loop in Python.")
    for s in part["skipped"]:
        out(f"skipped: {s['peer']} ({s['ours']}): {s['note']}")
    if not part["forecasts_valid"]:
        out("A FORECAST OF A TIMED RUN IS NOT A FINITE PROBABILITY")


# ---------------------------------------------------------------------------- the floor
def floor_part(args) -> dict:
    progress("floor: ours against a plain numba loop with the same outputs")
    return FL.run_all(args.floor_games, args.floor_sizes, args.repeats, args.seed,
                      ekf_sizes=args.floor_sizes[:1], progress=progress)


def print_floor(part: dict, out: Report) -> None:
    out("## The floor: ours against a plain numba loop with the same outputs (bench_floor.py)\n")
    out("\n".join(FL.report_lines(part)))


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

    reps = args.repeats
    rows, losses = [], {}
    for name, make in ours.items():
        progress(f"  timing ours {name}")
        s, cpu, fit = best_cpu(lambda: make().fit(train), reps)
        p = ss.metrics.expected_score(fit.predict_proba(test))
        losses[name] = BS.log_loss(y, p, per_game=True)
        note = f"{fit.info['n_nodes']:,} nodes, {fit.info['iterations']} Newton steps"
        rows.append({"method": f"ours: {name}", "kind": "ours", "package": None, "fit_s": s, "fit_cpu_s": cpu,
                     "log_loss": float(losses[name].mean()), "runs": reps,
                     "note": note + (", static" if name == "BradleyTerry" else "")})
    rows[0]["note"] = f"drift = truth ({BS.DRIFT:g}); " + rows[0]["note"]
    true_p = ss.metrics.expected_score(sim.true_proba()[test_rows])
    rows.append({"method": "true probabilities", "kind": "floor", "package": None, "fit_s": None,
                 "log_loss": BS.log_loss(y, true_p), "note": "Simulation.true_proba(): the floor"})

    st = BS.Stream(sim.games.with_periods(1), train_rows, test_rows, per)
    peers = [  # (package, label, run -> (seconds, p, note), compared with, compiles on its first call)
        ("whr", "whr, until converged", lambda: BS.peer_whr(st, None), "LaplaceSmoother", False),
        ("kickscore", "kickscore (logit, Wiener kernel)", lambda: BS.peer_kickscore(st), "LaplaceSmoother", True),
        ("trueskillthroughtime", "trueskillthroughtime (probit)", lambda: BS.peer_ttt(st, args.ttt_iterations),
         "LaplaceSmoother", False),
        ("choix", "choix.opt_pairwise(alpha=0.5) (static)",
         lambda: BS.peer_choix(st, "opt")[:2] + ("MAP under N(0, 1), as our BradleyTerry",), "BradleyTerry", False),
        ("choix", "choix.ilsr_pairwise (static)",
         lambda: BS.peer_choix(st, "ilsr")[:2] + ("maximum likelihood",), "BradleyTerry", False),
    ]
    skipped = []
    for package, label, run, versus, compiles in peers:
        if args.quick and package in SLOW_SMOOTHER_PEERS:
            skipped.append({"peer": label, "package": package, "note": f"{package}: slow (tens of seconds), "
                                                                        "skipped with --quick"})
            continue
        progress(f"  fitting {label} ({reps} runs{', the first one cold' if compiles else ''})")
        try:
            results = [run()]  # the first call: cold where the package compiles
            first = results[0]
            for _ in range(reps - 1 if not compiles else reps):
                results.append(run())
        except ImportError as exc:
            skipped.append({"peer": label, "package": package, "note": skip_note(package, without, exc)})
            continue
        except Exception as exc:  # a peer failing must not hide the others
            skipped.append({"peer": label, "package": package, "note": f"failed: {type(exc).__name__}: {exc}"[:200]})
            continue
        mine = rows[0 if versus == "LaplaceSmoother" else 1]
        timed_runs = results[1:] if compiles else results
        s, p, note = min(timed_runs, key=lambda r: r[0])
        variants = [(f"{label}, warm (best of {len(timed_runs)} after the first)", s, p, note)]
        if compiles:
            variants.insert(0, (f"{label}, cold (its first fit in the process: numba compiles)", first[0], first[1],
                                first[2]))
        else:
            variants[0] = (label, s, p, note)
        for name, sec, prob, nt in variants:
            loss = BS.log_loss(y, prob, per_game=True)
            delta, se = ss.metrics.paired_difference(loss, losses[versus])
            rows.append({"method": name, "kind": "peer", "package": package, "fit_s": sec,
                         "log_loss": float(loss.mean()), "versus": f"ours: {versus}", "fit_ratio": sec / mine["fit_s"],
                         "log_loss_minus_ours": delta, "paired_se": se, "note": nt,
                         "runs": 1 if "cold" in name else len(timed_runs)})
    return {"stream": {"games": BS.N_GAMES, "players": BS.N_PLAYERS, "periods": BS.N_PERIODS,
                       "train_periods": BS.TRAIN_PERIODS, "train_games": len(train), "test_games": len(test),
                       "drift": BS.DRIFT, "prior_var": BS.PRIOR_VAR, "seed": args.seed, "repeats_ours": reps,
                       "repeats_peers": reps, "ttt_iterations": args.ttt_iterations},
            "rows": rows, "skipped": skipped}


def print_smoothers(part: dict, out: Report) -> None:
    st = part["stream"]
    out(f"## Smoothers: {st['games']:,} games among {st['players']} competitors over {st['periods']} periods; "
        f"fit on the first {st['train_periods']} ({st['train_games']:,} games), log loss on the last "
        f"{st['periods'] - st['train_periods']} ({st['test_games']:,} games)\n")
    rows = []
    for r in part["rows"]:
        peer = r["kind"] == "peer"
        rows.append([r["method"], "—" if r["fit_s"] is None else f"{r['fit_s']:.3f}", f"{r['log_loss']:.4f}",
                     r.get("versus", "—"), fmt_ratio(r["fit_ratio"]) if peer else "—",
                     fmt_delta(r["log_loss_minus_ours"], r["paired_se"]) if peer else "—", r["note"]])
    out(markdown_table(["method", "fit s", "log loss", "compared with", "peer s / ours s",
                        "log loss − ours ± paired se", "notes"], rows, {1, 2, 4, 5}))
    out(f"\nFit seconds on the wall clock, best of {st['repeats_ours']} for ours and for every peer (ours: fit(train) on a "
        "prebuilt Games after a warm-up; peers: end to end from Python lists, bench_smoothers.py's peer functions). "
        "kickscore compiles its numba kernels on its first fit in every process (no disk cache): that fit is its "
        "cold row, the best of the next ones its warm row.")
    for s in part["skipped"]:
        out(f"skipped: {s['peer']}: {s['note']}")


# ---------------------------------------------------------------------------- start-up, cold and warm
PROBE = r"""
import contextlib, io, json, sys, time
w0, c0 = time.perf_counter(), time.process_time()
import statespace, filters
w1, c1 = time.perf_counter(), time.process_time()
out = {"import_s": w1 - w0, "import_cpu_s": c1 - c0}
if len(sys.argv) > 1:
    from statespace.app.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        out["rc"] = main(sys.argv[1:])
    out["cli_s"] = time.perf_counter() - w1
    out["cli_cpu_s"] = time.process_time() - c1
print("PROBE " + json.dumps(out))
"""


def probe(cli: list[str], cache_dir: str | None, timeout: float = 900) -> dict:
    """One fresh process: ``import statespace, filters`` and then (with ``cli``) the command line
    ``statespace <cli>`` in it, with numba's cache in ``cache_dir`` (None: the environment's).
    Returns the process's wall and CPU seconds (children's rusage) and the times measured inside."""
    env = dict(os.environ)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, *cli], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=timeout)
    wall = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = [x for x in done.stdout.splitlines() if x.startswith("PROBE ")]
    if done.returncode != 0 or not line:
        raise RuntimeError(f"probe {cli} failed ({done.returncode}): {done.stderr[-500:]}")
    inside = json.loads(line[-1][6:])
    if inside.get("rc", 0) != 0:
        raise RuntimeError(f"statespace {' '.join(cli)} exited with {inside['rc']}")
    return {"wall_s": wall, "cpu_s": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), **inside}


def startup_part(args) -> dict:
    """Cold (a new empty numba cache) and warm (the same cache, filled) fresh processes. With
    ``--quick`` one warm process and no default ``compare``."""
    elo = ["compare", "--methods", "elo"]
    warm_reps = 1 if args.quick else max(1, args.repeats)
    res: dict = {"repeats_warm": warm_reps}
    with tempfile.TemporaryDirectory(prefix="peers-numba-") as tmp:
        cache = os.path.join(tmp, "elo")
        progress("start-up: statespace compare --methods elo, cold (empty numba cache)")
        res["compare_elo_cold"] = probe(elo, cache)
        progress("start-up: the same, warm")
        warm = [probe(elo, cache) for _ in range(warm_reps)]
        res["compare_elo_warm"] = min(warm, key=lambda r: r["wall_s"])
        best = min(warm, key=lambda r: r["import_s"])
        res["import_warm"] = {"wall_s": None, "cpu_s": None, "import_s": best["import_s"],
                              "import_cpu_s": best["import_cpu_s"]}
        if not args.quick:
            cache = os.path.join(tmp, "all")
            progress("start-up: statespace compare (default), cold")
            res["compare_default_cold"] = probe(["compare"], cache)
            progress("start-up: statespace compare (default), warm")
            res["compare_default_warm"] = min((probe(["compare"], cache) for _ in range(warm_reps)),
                                              key=lambda r: r["wall_s"])
    return res


def print_startup(part: dict, out: Report) -> None:
    out("## Start-up: fresh processes, cold (empty numba cache: a fresh install) and warm (the cache filled)\n")
    rows = []
    for key, what in (("compare_elo_cold", "`statespace compare --methods elo`, cold"),
                      ("compare_elo_warm", "`statespace compare --methods elo`, warm"),
                      ("compare_default_cold", "`statespace compare` (all methods), cold"),
                      ("compare_default_warm", "`statespace compare` (all methods), warm"),
                      ("import_warm", "`import statespace, filters`, warm (inside the warm processes above)")):
        r = part.get(key)
        if r is None:
            rows.append([what, "not timed with --quick", "", ""])
            continue
        rows.append([what, "—" if r["wall_s"] is None else f"{r['wall_s']:.2f}",
                     "—" if r["cpu_s"] is None else f"{r['cpu_s']:.2f}", f"{r['import_s']:.2f}"])
    out(markdown_table(["process", "wall s (whole process)", "CPU s", "of which import statespace, filters (wall s)"],
                       rows, {1, 2, 3}))
    out(f"\nWarm rows: best of {part['repeats_warm']} process(es) after the cold one, with the cache it filled. Cold: "
        "one process with NUMBA_CACHE_DIR a new empty folder (every compiled kernel is compiled). CPU s: user + system "
        "time of the process.")


# ---------------------------------------------------------------------------- loading
def table_size(games) -> int:
    """Bytes held by a ``Games``: its NumPy arrays, with the text of an object array's elements."""
    total = 0
    for name in type(games).__slots__:
        v = getattr(games, name, None)
        if isinstance(v, np.ndarray):
            total += v.nbytes
            if v.dtype == object:
                total += sum(sys.getsizeof(x) for x in v.ravel())
    return total


def loading_part(args) -> dict:
    """``Games.from_arrays`` (integer ids) and ``Games.from_csv`` of the filters' stream, and memory."""
    import statespace as ss

    n, reps = args.games, args.repeats
    progress(f"loading: Games.from_arrays and Games.from_csv of {n:,} games")
    t, a, b, score = make_stream(n, args.players, args.seed)
    ss.Games.from_arrays(t[:1000], a[:1000], b[:1000], score[:1000])
    wall, cpu, games = best_cpu(lambda: ss.Games.from_arrays(t, a, b, score), reps)
    table_bytes = table_size(games)
    del games
    tracemalloc.start()
    games = ss.Games.from_arrays(t, a, b, score)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    del games
    with tempfile.TemporaryDirectory(prefix="peers-csv-") as tmp:
        path = os.path.join(tmp, "games.csv")
        with open(path, "w") as fh:
            fh.write("time,a,b,score\n")
            fh.writelines(f"{int(ti)},{ai},{bi},{si:g}\n" for ti, ai, bi, si in zip(t, a, b, score))
        ss.Games.from_csv(path, nrows=1000)
        csv_wall, csv_cpu, _ = best_cpu(lambda: ss.Games.from_csv(path), reps)
    return {"games": n, "repeats": reps, "from_arrays_s": wall, "from_arrays_cpu_s": cpu,
            "from_arrays_games_per_s": n / cpu, "table_bytes_per_game": table_bytes / n,
            "peak_bytes_per_game": peak / n, "from_csv_s": csv_wall, "from_csv_cpu_s": csv_cpu,
            "from_csv_rows_per_s": n / csv_cpu, "source": "peers.py"}


def print_loading(part: dict, out: Report) -> None:
    out(f"## Loading: {part['games']:,} games, integer ids (best of {part['repeats']}, process CPU time)\n")
    if part.get("source") != "peers.py":
        out(f"Figures from {part['source']} (its output is saved beside this report).")
        return
    out(markdown_table(["what", "wall s", "CPU s", "per second (CPU)"], [
        ["Games.from_arrays(t, a, b, score)", f"{part['from_arrays_s']:.3f}", f"{part['from_arrays_cpu_s']:.3f}",
         f"{fmt_rate(part['from_arrays_games_per_s'])} games"],
        ["Games.from_csv(path), the same games", f"{part['from_csv_s']:.3f}", f"{part['from_csv_cpu_s']:.3f}",
         f"{fmt_rate(part['from_csv_rows_per_s'])} rows"]], {1, 2, 3}))
    out(f"\nMemory: the built table holds {part['table_bytes_per_game']:.0f} bytes per game (its NumPy arrays); "
        f"building it peaked at {part['peak_bytes_per_game']:.0f} bytes per game (tracemalloc, the inputs excluded).")


# ---------------------------------------------------------------------------- other scripts
GOAL_LINE = re.compile(r"^goal\s+(\w+)\s+(\S+)", re.M)
SCRIPTS = (  # (script, run with --quick too, how its figures are read)
    ("bench_loading.py", True),
    ("bench_laplace_scale.py", True),
    ("bench_pymc.py", False),
)


def scripts_part(args, stem: Path) -> dict:
    """Run the other benchmark scripts present as subprocesses; save each one's output beside the
    report and read its ``goal <key> <value>`` lines."""
    res: dict = {}
    for script, in_quick in SCRIPTS:
        path = HERE / script
        if not path.is_file():
            res[script] = {"status": "absent"}
            continue
        if args.quick and not in_quick:
            res[script] = {"status": "skipped with --quick"}
            continue
        # each script's own files go beside this report, not to its default place in benchmarks/results
        own = {"bench_loading.py": ["--json", str(stem.with_name(f"{stem.name}-bench_loading.json"))],
               "bench_laplace_scale.py": ["--no-save"]}.get(script, [])
        cmd = [sys.executable, str(path)] + (["--quick"] if args.quick else []) + own
        progress(f"running {' '.join(cmd[1:])}")
        w0 = time.perf_counter()
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)
        except subprocess.TimeoutExpired:
            res[script] = {"status": "timed out after 1800 s"}
            continue
        saved = stem.with_name(f"{stem.name}-{path.stem}.txt")
        saved.write_text(f"$ {' '.join(['python', 'benchmarks/' + script] + cmd[2:])}\n{done.stdout}\n"
                         f"--- stderr ---\n{done.stderr}")
        goals = {k: v for k, v in GOAL_LINE.findall(done.stdout)}
        if script == "bench_pymc.py" and "pymc_5000_s" not in goals:
            m = re.search(r"wall time of fit: ([\d.]+) s", done.stdout)
            if m:
                goals["pymc_5000_s"] = m.group(1)
        res[script] = {"status": "ran" if done.returncode == 0 else f"exit status {done.returncode}",
                       "seconds": time.perf_counter() - w0, "saved": str(saved), "goals": goals}
    return res


# ---------------------------------------------------------------------------- goals
def _num(x) -> float | None:
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def goals(result: dict) -> list[dict]:
    """Each speed goal: target, today's figure, met."""
    out: list[dict] = []

    def add(goal, target, figure, met, note=""):
        out.append({"goal": goal, "target": target, "today": figure, "met": met, "note": note})

    su = result.get("startup")
    scripts = result.get("scripts", {})
    sg = {k: v for s in scripts.values() for k, v in s.get("goals", {}).items()}
    if su:
        c, w = su["compare_elo_cold"], su["compare_elo_warm"]
        add("first `statespace compare --methods elo` on a fresh install", "< 5 s", f"{c['wall_s']:.1f} s cold "
            f"(warm {w['wall_s']:.1f} s)", c["wall_s"] < 5)
        w, cold = su.get("compare_default_warm"), su.get("compare_default_cold")
        if w:
            add("default `statespace compare`", "< 10 s", f"{w['wall_s']:.1f} s warm (cold {cold['wall_s']:.1f} s)",
                w["wall_s"] < 10, "judged warm; the cold figure beside it")
        else:
            add("default `statespace compare`", "< 10 s", "not timed with --quick", None)
        i = su["import_warm"]
        add("`import statespace, filters`, warm", "< 1 s", f"{i['import_s']:.2f} s (cold {c['import_s']:.1f} s)",
            i["import_s"] < 1)
    else:
        for g, tgt in (("first `statespace compare --methods elo` on a fresh install", "< 5 s"),
                       ("default `statespace compare`", "< 10 s"), ("`import statespace, filters`, warm", "< 1 s")):
            add(g, tgt, "not measured (--only)", None)
    ld = result.get("loading") or {}
    fa = _num(sg.get("from_arrays_games_per_s")) or ld.get("from_arrays_games_per_s")
    fc = _num(sg.get("from_csv_rows_per_s")) or ld.get("from_csv_rows_per_s")
    bpg = _num(sg.get("bytes_per_game")) or ld.get("peak_bytes_per_game")
    missing = "not measured" if "loading" in result else "not measured (--only)"
    add("`Games.from_arrays` (integer ids)", ">= 10 M games/s", f"{fmt_rate(fa)} games/s" if fa else missing,
        None if fa is None else fa >= 10e6)
    add("`Games.from_csv`", ">= 2 M rows/s", f"{fmt_rate(fc)} rows/s" if fc else missing,
        None if fc is None else fc >= 2e6)
    note = ("peak while building (tracemalloc); the built table: "
            f"{ld['table_bytes_per_game']:.0f} bytes/game" if ld and "bytes_per_game" not in sg else "")
    add("memory", "<= 64 bytes/game", f"{bpg:.0f} bytes/game" if bpg else missing,
        None if bpg is None else bpg <= 64, note)
    fl = result.get("floor")
    for kind, name in (("elo", "Elo(k=32)"), ("ekf", "EKF()")):
        for r in (fl or {}).get("rows", []):
            if r["kind"] != kind or not r["agrees"]:
                continue
            add(f"{name} within 1.3x of the plain numba loop, {r['players']:,} competitors", "<= 1.3x",
                f"{r['ratio']:.2f}x (game_loop alone {r['ratio_loop']:.2f}x"
                + (f"; against the 10 ** x floor {r['ratio_pow']:.2f}x)" if "ratio_pow" in r else ")"),
                r["ratio"] <= FL.GOAL_RATIO, "the whole run on a prebuilt Games against the floor, CPU time")
            if kind == "ekf":
                add("diagonal EKF", ">= 10 M games/s", f"{fmt_rate(r['ours_games_per_s'])} games/s",
                    r["ours_games_per_s"] >= FL.GOAL_EKF, f"{r['games']:,} games among {r['players']:,}, CPU time")
        if fl and any(r["kind"] == kind and not r["agrees"] for r in fl["rows"]):
            add(f"{name} against the floor", "<= 1.3x", "floor DISAGREES with ours: not timed", False)
    if not fl:
        add("compiled loops within 1.3x of the floor", "<= 1.3x", "not measured (--only)", None)
    lin = sg.get("laplace_linear")
    lap = _num(sg.get("laplace_1e6_s"))
    where = scripts.get("bench_laplace_scale.py", {}).get("status", "absent" if "scripts" in result else "not run with --only")
    add("Laplace linear up to 1e6 games", "linear", (f"{lin}" + (f"; 1e6 games in {lap:.1f} s" if lap else ""))
        if lin else f"not measured (benchmarks/bench_laplace_scale.py: {where})",
        None if lin is None else lin.lower() in ("yes", "true"))
    pm = _num(sg.get("pymc_5000_s"))
    where = scripts.get("bench_pymc.py", {}).get("status", "absent" if "scripts" in result else "not run with --only")
    add("PyMC 5,000-game fit (PyMC's NUTS, the default sampler)", "< 20 s",
        f"{pm:.1f} s" if pm else f"not measured (bench_pymc.py: {where})", None if pm is None else pm < 20,
        "best warm fit, wall clock")
    pn = _num(sg.get("pymc_5000_nutpie_s"))
    if pn:
        add("PyMC 5,000-game fit with nutpie (`sampler=\"nutpie\"` or `\"auto\"`, extra `fast`)", "< 20 s",
            f"{pn:.1f} s", pn < 20, "best warm fit, wall clock")
    return out


def print_goals(rows: list[dict], out: Report) -> None:
    out("## Speed goals beside today's figures\n")
    verdict = {True: "met", False: "**NOT met**", None: "not measured"}
    out(markdown_table(["goal", "target", "today", "met?", "how judged"],
                       [[g["goal"], g["target"], g["today"], verdict[g["met"]], g["note"]] for g in rows], set()))


# ---------------------------------------------------------------------------- main
def _plain(x):
    """NumPy scalars as Python numbers, for JSON."""
    return x.item() if hasattr(x, "item") else str(x)


def machine() -> dict:
    import numba

    return {"cpu": cpu_name(), "cpu_count": os.cpu_count(), "platform": platform.platform(),
            "numba_threads": numba.config.NUMBA_NUM_THREADS, "blas": BS.blas_threads(),
            "load_average_start": load_average()}


def write_docs(report: list[str]) -> None:
    """Replace the generated block of docs/benchmarks.md (between its markers) by this report."""
    text = DOCS.read_text()
    if DOCS_BEGIN not in text or DOCS_END not in text:
        raise SystemExit(f"{DOCS}: the markers of the generated block are missing")
    head, rest = text.split(DOCS_BEGIN, 1)
    _, tail = rest.split(DOCS_END, 1)
    body = "\n".join(line.replace("## ", "### ", 1) if line.startswith("## ") else line
                     for line in report if not line.startswith("# ") and not line.startswith("load average at the end"))
    DOCS.write_text(f"{head}{DOCS_BEGIN}\n\n{body.strip()}\n\n{DOCS_END}{tail}")


def main(argv=None) -> int:
    t_start = time.perf_counter()
    p = BenchParser(__doc__)
    p.set_size("repeats", 3, 2)
    p.add_size("--python-games", "games timed for the plain Python loops", 200_000, 20_000)
    p.add_size("--peer-games", "games timed for elote, glicko2 and openskill", 50_000, 2_000)
    p.add_size("--slow-peer-games", "games timed for the trueskill package", 20_000, 500)
    p.add_size("--floor-games", "games of each floor stream", 1_000_000, 100_000, slice_of_stream=False)
    p.add_argument("--floor-sizes", type=int, nargs="+", default=[1_000, 100_000],
                   help="competitors of the floor streams (1000 100000; the EKF at the first)")
    p.add_argument("--ttt-iterations", type=int, default=30, help="trueskillthroughtime's convergence() cap (30)")
    p.add_argument("--only", choices=("filters", "smoothers"), help="run one part only (no floor, start-up, "
                                                                    "loading or other scripts)")
    p.add_argument("--without", default="", help="comma-separated peer packages to leave out (as if absent)")
    p.add_argument("--no-startup", action="store_true", help="leave out the cold and warm start-up processes")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS threads (1: one core, as the compiled loops; 0: as the environment sets them)")
    p.add_argument("--json", type=Path, default=None,
                   help="where to save the numbers (default benchmarks/results/peers-<date>[-quick].json); "
                        "the report is saved beside it (.md)")
    p.add_argument("--write-docs", action="store_true",
                   help="replace the generated block of docs/benchmarks.md by this report")
    p.add_argument("--docs-from", type=Path, default=None,
                   help="no run: replace the generated block of docs/benchmarks.md by a saved report (.md)")
    p.add_quick()
    args = p.parse_args(argv)
    if args.docs_from is not None:
        lines = args.docs_from.read_text().splitlines()
        if not lines or "full run" not in lines[0]:
            p.error(f"{args.docs_from}: not the report of a full run")
        write_docs(lines)
        print(f"updated: {DOCS} from {args.docs_from}")
        return 0
    without = {x.strip() for x in args.without.split(",") if x.strip()}
    if without - set(PEER_PACKAGES):
        p.error(f"--without: unknown packages {', '.join(sorted(without - set(PEER_PACKAGES)))} "
                f"(peers: {', '.join(PEER_PACKAGES)})")
    if args.write_docs and (args.quick or args.only):
        p.error("--write-docs takes a full run (no --quick, no --only)")
    for name in without:
        sys.modules[name] = None  # type: ignore[assignment]  # makes `import name` raise ImportError
    date = _dt.date.today().isoformat()
    json_path = args.json or RESULTS / f"peers-{date}{'-quick' if args.quick else ''}.json"
    json_path.parent.mkdir(parents=True, exist_ok=True)

    import filters  # noqa: F401  (imports numba, for the versions)
    import smoothers  # noqa: F401  (loads scipy's BLAS, for the limit below)
    if args.blas_threads > 0:  # every BLAS library loaded by now: NumPy's and SciPy's
        from threadpoolctl import threadpool_limits
        threadpool_limits(limits=args.blas_threads, user_api="blas")

    out = Report()
    info = machine()
    vers = version_map("numpy", "scipy", "pandas", "numba", peers=("statespace-ratings",) + PEER_PACKAGES)
    command = "python benchmarks/peers.py" + "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
    commit = git_describe(ROOT)
    out(f"# Peers, floor and goals ({'--quick' if args.quick else 'full run'}), {date}\n")
    out(f"command: `{command}`  ")
    out(f"date: {date}; commit: {commit}  ")
    out(f"machine: {info['cpu']}, {info['cpu_count']} logical cores (one used: the loops are serial), "
        f"load average at start {info['load_average_start']}; BLAS: {info['blas']}  ")
    out("versions: " + ", ".join(f"{k} {v if v is not None else 'not installed'}" for k, v in vers.items()) + "\n")

    result = {"command": command, "date": date, "commit": commit, "quick": args.quick, "machine": info,
              "versions": vers, "without": sorted(without), "repeats": args.repeats}
    ok = True
    sections: list[Callable[[], None]] = []
    everything = args.only is None
    if everything and not args.no_startup:
        result["startup"] = startup_part(args)
        sections.append(lambda: print_startup(result["startup"], out))
    if args.only != "smoothers":
        result["filters"] = filters_part(args, without)
        ok = result["filters"]["forecasts_valid"]
        sections.append(lambda: print_filters(result["filters"], out))
    if everything:
        result["floor"] = floor_part(args)
        ok = ok and all(r["agrees"] for r in result["floor"]["rows"])
        sections.append(lambda: print_floor(result["floor"], out))
        result["scripts"] = scripts_part(args, json_path.with_suffix(""))
        loading = result["scripts"].get("bench_loading.py", {})
        if loading.get("goals"):
            result["loading"] = {"source": "benchmarks/bench_loading.py", "games": args.games,
                                 "repeats": args.repeats}
        else:
            result["loading"] = loading_part(args)
        sections.append(lambda: print_loading(result["loading"], out))
    if args.only != "filters":
        result["smoothers"] = smoothers_part(args, without)
        sections.append(lambda: print_smoothers(result["smoothers"], out))
    result["goals"] = goals(result)
    print_goals(result["goals"], out)
    out()
    for section in sections:
        section()
        out()
    if "scripts" in result:
        out("## Other benchmark scripts\n")
        for script, r in result["scripts"].items():
            extra = f", {r['seconds']:.0f} s, output saved in {Path(r['saved']).name}" if "saved" in r else ""
            out(f"- `{script}`: {r['status']}{extra}")
        out()
    info["load_average_end"] = load_average()
    result["seconds"] = time.perf_counter() - t_start
    out(f"load average at the end {info['load_average_end']}; whole command {result['seconds']:.0f} s")
    json_path.write_text(json.dumps(result, indent=2, default=_plain) + "\n")
    md = json_path.with_suffix(".md")
    md.write_text("\n".join(out.lines) + "\n")
    print(f"saved: {json_path}")
    print(f"saved: {md}")
    if args.write_docs:
        write_docs(out.lines)
        print(f"updated: {DOCS}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
