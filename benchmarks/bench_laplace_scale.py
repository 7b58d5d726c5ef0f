"""The Laplace smoother from 10,000 to a million games (the speed goal: "linear in games up to 1e6").

The league, simulated here (:func:`league`): 1,000 competitors active at any time, each for a
career of 200 days (5 new ones a day replace 5 who retire), 500 games a day between two active
competitors drawn at random; skills drawn from the model the fit uses (logistic link, scale 1,
prior N(0, 1), random walk with drift 0.002 per day), results from the logistic. Every size has
the same league, only a longer history: 10,000 games are 20 days among 1,100 competitors,
100,000 games 200 days among 2,000, a million 2,000 days among 11,000 (about 1.26 nodes per game).

Each size is fitted with ``LaplaceSmoother(model)`` (the drift at the truth, every other setting
its default: variances ``"auto"``, which at these sizes are the per-competitor blocks, the sparse
factor being far over budget) on a prebuilt ``Games``, after a warm-up fit that loads the compiled
parts; timed by the CPU time of the fitting process (``time.process_time``: every thread, so
BLAS threads that spin count) and the wall clock, best and median of ``--repeats``. The report
gives per size: competitors, nodes, Newton steps, conjugate-gradient iterations per Newton step
(the linear solves), seconds, games per CPU second, and the scaling ``CPU(1e6) / CPU(1e5)``:
linear is 10; the verdict ``linear`` is yes when it is at most 15 (the CPU time per game at a
million within 1.5 times that at 100,000: the arrays of a million-game fit no longer fit in the
processor's caches, which costs a constant factor per pass, not iterations).

``--without-cholmod`` adds ours with ``STATESPACE_CHOLMOD=0`` (SuperLU's orders, what a user without
scikit-sparse gets). ``--real`` also fits the real data sets found under ``../shared/data`` (NFL, international and
English football with the smoother's defaults, ``period_days=1``; ATP with bench_smoothers.py's
settings). ``--after REV`` fits a commit as "ours" instead of the checkout as it is. ``--before REV`` fits
the same leagues, in alternation with ours (each fit of each version in
turn, so that both see the same moments of a shared machine), with the ``statespace`` and
``smoothers`` of an earlier commit (``git archive REV`` into a temporary folder; each version in
its own worker process); an earlier version's CG iterations are counted by wrapping scipy's
``cg`` in its ``smoothers._chains``. Each version runs as it ships: the earlier one with BLAS's
own threads, ours with its default ``blas_threads=1``; ``--before-one-thread`` adds the earlier
one with ``OPENBLAS_NUM_THREADS=1`` (what a user could set), which separates the two changes.

The lines ``goal laplace_linear yes|no`` and ``goal laplace_1e6_s <CPU seconds>`` are read by
``peers.py``; they are printed for a run that includes 100,000 and 1,000,000 games. The report
and its numbers are saved as ``benchmarks/results/laplace_scale-<date>-<HHMM>[-quick].md`` and
``.json`` (``--no-save``: not).

Usage::

    python benchmarks/bench_laplace_scale.py                     # 1e4, 1e5, 1e6 games: about a minute
    python benchmarks/bench_laplace_scale.py --before 25c7645    # the same beside an earlier commit
    python benchmarks/bench_laplace_scale.py --quick             # 1e4 and 1e5: seconds
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))

from _common import cpu_name, git_describe, load  # noqa: E402

ACTIVE, CAREER, PER_DAY, DRIFT = 1000, 200, 500, 0.002
SIZES, QUICK_SIZES = (10_000, 100_000, 1_000_000), (10_000, 100_000)
LINEAR_LIMIT = 15.0  # CPU(1e6) / CPU(1e5) at most this: "linear"


def league(n_games: int, seed: int = 0):
    """(Games, SkillModel): ``n_games`` games of the league described in the module docstring."""
    import statespace as ss

    rng = np.random.default_rng(seed)
    day = np.arange(n_games) // PER_DAY
    first = day * ACTIVE // CAREER  # the competitors active on a day are first .. first + ACTIVE - 1
    oa = rng.integers(0, ACTIVE, n_games)
    ob = (oa + rng.integers(1, ACTIVE, n_games)) % ACTIVE
    a, b = first + oa, first + ob
    # each competitor's skill at each day it plays: N(0, 1) at its first game, then the random walk
    who, when = np.concatenate([a, b]), np.concatenate([day, day])
    order = np.lexsort((when, who))
    w, t = who[order], when[order]
    new = np.r_[True, w[1:] != w[:-1]]
    gap = np.where(new, 0, t - np.r_[t[:1], t[:-1]]).astype(float)
    step = np.where(new, rng.normal(0.0, 1.0, w.size), rng.normal(0.0, 1.0, w.size) * np.sqrt(DRIFT * gap))
    total = np.cumsum(step)
    starts = np.flatnonzero(new)
    base = np.repeat(total[starts] - step[starts], np.diff(np.r_[starts, w.size]))
    skill = np.empty(w.size)
    skill[order] = total - base
    p = 1.0 / (1.0 + np.exp(-(skill[:n_games] - skill[n_games:])))
    score = (rng.random(n_games) < p).astype(float)
    times = np.datetime64("2000-01-01") + day.astype("timedelta64[D]")
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, DRIFT)
    return ss.Games.from_arrays(times, a, b, score), model


#: The real data sets of ``--real`` (under ../shared/data, when present): the smoother's defaults with
#: ``period_days=1``; ATP with the settings of bench_smoothers.py (Elo scale, prior N(1500, 300^2),
#: drift 30 per week, ``period_days=7``).
REAL = ("nfl", "intl_football", "england_football", "atp_tennis")
DATA = ROOT.parent / "shared" / "data"


def real_data(name: str):
    """(Games, SkillModel) of a real data set (rows with errors dropped)."""
    import warnings

    import statespace as ss
    from smoothers import LaplaceSmoother

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        games = ss.Games.from_csv(DATA / name / "games.csv", errors="drop")
    if name == "atp_tennis":
        return games, ss.SkillModel("logistic", ss.ELO_SCALE, 1500.0, 300.0**2, 30.0, "half")
    return games, LaplaceSmoother().model


# ---------------------------------------------------------------------------- the worker
def worker() -> None:
    """One version's fits: reads ``fit <games> <seed>`` lines, answers one JSON line each."""
    import smoothers._chains as chains
    from smoothers import LaplaceSmoother

    counts: list[int] = []
    if hasattr(chains, "cg"):  # an earlier version: Newton's steps by scipy's cg in _chains.solve
        scipy_cg = chains.cg

        def counting_cg(A, b, **kw):
            n = [0]
            out = scipy_cg(A, b, callback=lambda xk: n.__setitem__(0, n[0] + 1), **kw)
            counts.append(n[0])
            return out

        chains.cg = counting_cg
    cache: dict = {}
    print(json.dumps({"ready": True, "blas": blas_threads()}), flush=True)
    for line in sys.stdin:
        _, case, seed = line.split()
        key = (case, int(seed))
        if key not in cache:
            cache.clear()
            cache[key] = real_data(case) if case in REAL else league(int(case), int(seed))
        games, model = cache[key]
        counts.clear()
        c0, w0 = time.process_time(), time.perf_counter()
        fit = (LaplaceSmoother(model, period_days=7) if case == "atp_tennis" else LaplaceSmoother(model)).fit(games)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        cg = fit.info.get("cg_iterations", list(counts))
        print(json.dumps({"games": len(games), "players": int(games.n_players), "nodes": fit.info["n_nodes"],
                          "cpu": cpu, "wall": wall, "newton": fit.info["iterations"], "cg": [int(k) for k in cg],
                          "solves": fit.info.get("newton_solves", ["cg"] * len(cg)),
                          "variances": fit.info["variances"], "mean_sum": float(np.sum(fit.mean))}), flush=True)


def blas_threads() -> str:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    return ", ".join(f"{d.get('internal_api')} {d.get('num_threads')} threads" for d in threadpool_info()
                     if d.get("user_api") == "blas") or "none found"


def case_name(case) -> str:
    return f"{case:,} games" if isinstance(case, int) else case


class Worker:
    def __init__(self, label: str, tree: Path, env_extra: dict | None = None):
        env = dict(os.environ, PYTHONPATH=str(tree), **(env_extra or {}))
        self.label = label
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker"], cwd=tree, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        hello = json.loads(self.proc.stdout.readline())
        self.blas = hello["blas"]

    def fit(self, n: int, seed: int) -> dict:
        self.proc.stdin.write(f"fit {n} {seed}\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the worker of {self.label} stopped")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


# ---------------------------------------------------------------------------- the report
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", help=f"comma-separated game counts (default {','.join(map(str, SIZES))}; "
                                    f"--quick {','.join(map(str, QUICK_SIZES))})")
    ap.add_argument("--repeats", type=int, default=None, help="timed fits per size and version (default 3; --quick 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--before", help="an earlier commit to fit beside ours (any git revision)")
    ap.add_argument("--after", help="fit this commit as 'ours' instead of the checkout as it is (any git revision): "
                                    "a measurement without the working tree's uncommitted changes")
    ap.add_argument("--before-one-thread", action="store_true",
                    help="with --before, also the earlier commit with OPENBLAS_NUM_THREADS=1 (what a user could set)")
    ap.add_argument("--without-cholmod", action="store_true",
                    help="also ours with STATESPACE_CHOLMOD=0 (SuperLU's orders: what a user without scikit-sparse gets)")
    ap.add_argument("--real", action="store_true", help=f"also the real data sets ({', '.join(REAL)}) found under "
                                                        f"../shared/data")
    ap.add_argument("--quick", action="store_true", help="10,000 and 100,000 games only")
    ap.add_argument("--no-save", action="store_true", help="do not write benchmarks/results/laplace_scale-<date>-<time>.*")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker()
        return 0
    sizes = [int(float(s)) for s in args.sizes.split(",")] if args.sizes else list(QUICK_SIZES if args.quick else SIZES)
    repeats = args.repeats or (2 if args.quick else 3)
    lines: list[str] = []

    def out(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    started = _dt.datetime.now()
    date = started.date().isoformat()
    command = "python benchmarks/bench_laplace_scale.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])
                                                            if (argv or sys.argv[1:]) else "")
    import numba
    import scipy

    out(f"# Laplace smoother, 10,000 to 1,000,000 games: {date}\n")
    out(f"command: `{command}`  ")
    out(f"commit: {git_describe(ROOT)}; machine: {cpu_name()}, {os.cpu_count()} logical cores, {load()} at the start  ")
    try:
        from importlib.metadata import version

        sksparse = f"scikit-sparse {version('scikit-sparse')} (CHOLMOD's orders, where a fit orders its nodes)"
    except Exception:  # noqa: BLE001 - not installed
        sksparse = "scikit-sparse not installed (SuperLU's orders)"
    out(f"versions: python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__}, "
        f"numba {numba.__version__}, {sksparse}  ")
    out(f"league: {ACTIVE:,} competitors active at any time, careers of {CAREER} days, {PER_DAY} games a day, "
        f"random walk drift {DRIFT} per day (logistic, scale 1, prior N(0, 1)); seed {args.seed}  ")
    out(f"fit: LaplaceSmoother(model) with the drift at the truth, defaults otherwise; best of {repeats} "
        f"(median beside it), process CPU time, after a warm-up fit of {sizes[0]:,} games\n")

    tmp = tempfile.TemporaryDirectory() if (args.before or args.after) else None

    def checkout(rev: str, name: str) -> tuple[Path, str]:
        """The packages of commit ``rev`` in a temporary folder (git archive), and its short id."""
        tree = Path(tmp.name) / name
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "statespace", "smoothers", "filters"],
                                 check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        short = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True,
                               text=True).stdout.strip()
        return tree, short

    workers: dict[str, Worker] = {}
    try:
        if args.before:
            tree, rev = checkout(args.before, "before")
            workers[f"before ({rev})"] = Worker(f"before ({rev})", tree)
            if args.before_one_thread:
                workers[f"before ({rev}), 1 BLAS thread"] = Worker(f"before ({rev}), 1 BLAS thread", tree,
                                                                   {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                                                                    "OMP_NUM_THREADS": "1"})
        if args.after:
            tree, rev = checkout(args.after, "after")
            ours = f"after ({rev})"
        else:
            tree, ours = ROOT, "ours"
        if args.without_cholmod:
            workers[f"{ours}, no CHOLMOD"] = Worker(f"{ours}, no CHOLMOD", tree, {"STATESPACE_CHOLMOD": "0"})
        workers[ours] = Worker(ours, tree)
        for label, w in workers.items():
            out(f"BLAS in the {label} worker at start: {w.blas}  ")
        out()
        runs: dict[tuple[str, int], list[dict]] = {}
        for label, w in workers.items():  # warm-up: numba caches, first calls
            w.fit(sizes[0], args.seed)
        cases = list(sizes) + ([name for name in REAL if (DATA / name / "games.csv").is_file()] if args.real else [])
        for n in cases:
            for r in range(repeats):
                for label, w in workers.items():
                    print(f"[{time.strftime('%H:%M:%S')}] {label}: {case_name(n)}, fit {r + 1} of {repeats}",
                          file=sys.stderr, flush=True)
                    runs.setdefault((label, n), []).append(w.fit(n, args.seed))
    finally:
        for w in workers.values():
            w.close()
        if tmp is not None:
            tmp.cleanup()

    head = ("| version | data | games | competitors | nodes | Newton steps | CG iterations per step | CPU s (best) | "
            "CPU s (median) | wall s (best) | games per CPU s | variances |")
    out(head)
    out("|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
    summary: dict[str, dict] = {}
    for label in workers:
        for n in cases:
            rs = runs[(label, n)]
            best = min(rs, key=lambda r: r["cpu"])
            cpu_med = float(np.median([r["cpu"] for r in rs]))
            wall = min(r["wall"] for r in rs)
            steps = best["cg"]
            kinds = [k for k in best["solves"] if k != "cg"]
            cg_text = ", ".join(map(str, steps)) + (f" (+ {len(kinds)} by the factor)" if kinds else "")
            summary.setdefault(label, {})[n] = {**best, "cpu_median": cpu_med, "wall_best": wall,
                                                "cpu_all": [r["cpu"] for r in rs]}
            out(f"| {label} | {'league' if isinstance(n, int) else n} | {best['games']:,} | {best['players']:,} | "
                f"{best['nodes']:,} | {best['newton']} | {cg_text} | {best['cpu']:.2f} | {cpu_med:.2f} | {wall:.2f} | "
                f"{best['games'] / best['cpu']:,.0f} | {best['variances']} |")
    out()
    verdict = None
    for label, by_n in summary.items():
        for lo, hi in zip(sizes, sizes[1:]):
            ratio = by_n[hi]["cpu"] / by_n[lo]["cpu"]
            out(f"{label}: {lo:,} -> {hi:,} games ({hi / lo:g}x): CPU {ratio:.1f}x (best), "
                f"{by_n[hi]['cpu_median'] / by_n[lo]['cpu_median']:.1f}x (median); CG iterations per Newton step "
                f"{np.mean(by_n[lo]['cg']) if by_n[lo]['cg'] else 0:.1f} -> "
                f"{np.mean(by_n[hi]['cg']) if by_n[hi]['cg'] else 0:.1f}; Newton steps {by_n[lo]['newton']} -> "
                f"{by_n[hi]['newton']}  ")
        if label != ours:
            for n in cases:
                mine = summary[ours][n]
                out(f"{case_name(n)}: {ours} {mine['cpu']:.2f} s CPU against {by_n[n]['cpu']:.2f} s {label}: "
                    f"{by_n[n]['cpu'] / mine['cpu']:.1f} times less (the same mode: the node means differ by "
                    f"{abs(mine['mean_sum'] - by_n[n]['mean_sum']) / by_n[n]['nodes']:.1e} on average)  ")
    ours = summary[ours]
    if 100_000 in ours and 1_000_000 in ours:
        ratio = ours[1_000_000]["cpu"] / ours[100_000]["cpu"]
        verdict = ratio <= LINEAR_LIMIT
        out(f"\nlinear up to 1e6 games (CPU(1e6) / CPU(1e5) <= {LINEAR_LIMIT:g}): {ratio:.1f}, "
            f"{'yes' if verdict else 'no'}; a million games in {ours[1_000_000]['cpu']:.1f} s CPU "
            f"({ours[1_000_000]['wall_best']:.1f} s wall)")
    out(f"\nload at the end: {load()}")
    if verdict is not None:
        print(f"goal laplace_linear {'yes' if verdict else 'no'}")
        print(f"goal laplace_1e6_s {ours[1_000_000]['cpu']:.2f}")
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        stem = RESULTS / f"laplace_scale-{date}-{started:%H%M}{'-quick' if args.quick else ''}"
        stem.with_suffix(".md").write_text("\n".join(lines) + "\n")
        stem.with_suffix(".json").write_text(json.dumps({
            "command": command, "date": date, "commit": git_describe(ROOT), "sizes": sizes, "repeats": repeats,
            "seed": args.seed, "machine": {"cpu": cpu_name(), "cpu_count": os.cpu_count()},
            "league": {"active": ACTIVE, "career_days": CAREER, "games_per_day": PER_DAY, "drift": DRIFT},
            "blas": {label: w.blas for label, w in workers.items()},
            "results": {label: {str(k): v for k, v in by.items()} for label, by in summary.items()},
            "linear": verdict}, indent=2) + "\n")
        print(f"saved: {stem.with_suffix('.md').relative_to(ROOT)} and .json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
