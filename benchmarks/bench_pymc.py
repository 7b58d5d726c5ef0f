"""Wall time, CPU time and diagnostics of ``PyMCSmoother`` on a simulated random-walk stream.

One stream: ``statespace.simulate(SkillModel("logistic", 1, 0, 1, drift=0.02), n_players=100,
n_games=5000, days=50)`` grouped into daily rating periods (``with_periods(1)``, 4,340 nodes);
drift, prior variance (and home advantage, when some games are not neutral) inferred, 2 chains.

Each measured fit runs in a fresh Python process (``--child``), as a user's script would, with
its imports (statespace, PyMC, nutpie) done and timed before the fit, so that the fit's time
covers everything after them: the model, compiling it (or reading the compile caches), the
Laplace start, sampling, the posterior summaries and diagnostics. Two states of the caches:

- cold: empty PyTensor and numba caches (fresh folders through ``PYTENSOR_FLAGS`` and
  ``NUMBA_CACHE_DIR``): the first fit after installing;
- warm: the default caches, filled by a small fit in an earlier process: every later run.

Printed per sampler and cache: wall time of the fit and where it went (``setup``: model, compile or
cache, Laplace start, worker processes; ``sampling``: the sampler's own clock; ``summaries``: skills,
moments, r-hat and ESS), CPU time (this process, its threads and its worker processes), leapfrog
steps per draw (mean over the kept draws), step size, divergences, max r-hat, min bulk ESS and
bulk ESS per second of fit, and the drift's posterior against the truth; the load average
before and after each run (wall times are only meaningful on an otherwise idle machine; CPU time
is steadier on a busy one). Samplers: PyMC's NUTS (``nuts``) and nutpie (``nutpie``, when
installed: ``pip install -e ".[fast]"``). A full run writes everything, dated, with the
machine and versions, to ``benchmarks/results/pymc.json`` (``--json``), which docs/benchmarks.md
and README.md quote.

Usage::

    python benchmarks/bench_pymc.py                   # nuts and nutpie, cold and warm caches (~5 min)
    python benchmarks/bench_pymc.py --sampler nuts --no-cold
    python benchmarks/bench_pymc.py --repeats 3       # warm fits 3 times each (the table shows each run)
    python benchmarks/bench_pymc.py --quick           # 500 games, 200 + 200 draws, warm only (smoke test)
    python benchmarks/bench_pymc.py --diagnostics     # r-hat/ESS: ours against ArviZ, no sampling
    python benchmarks/bench_pymc.py --sampler nuts --init jitter+adapt_diag --likelihood graph   # as before the speed-ups
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from datetime import datetime, timezone
from importlib.util import find_spec
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "pymc.json"


def _cpu_seconds() -> float:
    """User + system CPU time of this process (all its threads) and of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _stream(args):
    import statespace as ss

    truth = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=args.drift)
    return ss.simulate(truth, n_players=args.players, n_games=args.games, days=args.periods,
                       seed=args.seed).games.with_periods(1)


def diagnostics(games, chains: int, draws: int, seed: int, repeats: int = 2) -> int:
    """Rank-normalised split r-hat and bulk ESS of every node's z, as PyMCSmoother computes them
    (``smoothers._diagnostics``, the ranks shared by both) and as ArviZ does (``az.rhat(method=
    "rank")``, ``az.ess(method="bulk")`` on an xarray Dataset), on AR(1) draws (phi 0.7) of shape
    chains x draws x nodes; wall and CPU seconds, best of ``repeats``, and the largest difference."""
    import arviz as az
    import xarray as xr

    from smoothers._diagnostics import ess_bulk, rhat_rank, split_chains, z_scale
    from smoothers.base import timeline

    n = timeline(games, games.period.astype(float)).n_nodes
    rng = np.random.default_rng(seed)
    e = rng.standard_normal((chains, draws, n))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    for t in range(1, draws):
        x[:, t] = 0.7 * x[:, t - 1] + e[:, t]
    ds = xr.Dataset({"z": (("chain", "draw", "node"), x)})
    xv = np.ascontiguousarray(np.moveaxis(x, -1, 0))

    def ours():
        z = z_scale(split_chains(xv))
        return rhat_rank(xv, z), ess_bulk(xv, z)

    def arviz():
        return np.asarray(az.rhat(ds, method="rank")["z"]), np.asarray(az.ess(ds, method="bulk")["z"])

    ours()  # compile
    print(f"r-hat and bulk ESS of {n:,} variables, {chains} chains x {draws:,} draws (AR(1) draws, phi 0.7); "
          f"best of {repeats}")
    out = {}
    for name, fn in (("smoothers._diagnostics", ours), ("ArviZ az.rhat + az.ess", arviz)):
        best = (float("inf"), float("inf"))
        for _ in range(repeats):
            w, c = time.perf_counter(), time.process_time()
            out[name] = fn()
            best = min(best, (time.perf_counter() - w, time.process_time() - c))
        print(f"  {name:24s} wall {best[0]:6.2f} s   CPU {best[1]:6.2f} s")
    (r1, e1), (r2, e2) = out.values()
    print(f"  largest difference: r-hat {np.nanmax(np.abs(r1 - r2)):.1e}, ESS (relative) "
          f"{np.nanmax(np.abs(e1 / e2 - 1)):.1e}")
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


# ---------------------------------------------------------------------------- one fit, in its own process
def child(args) -> int:
    """One timed fit in this fresh process; prints one JSON line (``RESULT {...}``)."""
    t = time.perf_counter()
    import statespace  # noqa: F401
    import pymc  # noqa: F401
    from smoothers.pymc_smoother import PyMCSmoother

    if args.sampler == "nutpie":
        import nutpie  # noqa: F401
    imports = time.perf_counter() - t
    games = _stream(args)
    smoother = PyMCSmoother(sampler=args.sampler, draws=args.draws, tune=args.tune, chains=args.chains,
                            cores=args.cores, target_accept=args.target_accept, seed=args.seed + 1,
                            progressbar=False, init=args.init, likelihood=args.likelihood)
    load0 = os.getloadavg()
    cpu0 = _cpu_seconds()
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = smoother.fit(games)
    wall = time.perf_counter() - t
    cpu = _cpu_seconds() - cpu0
    info = fit.info
    stats = fit.idata.sample_stats
    drift = np.asarray(fit.idata.posterior["drift"]).ravel()
    out = {
        "sampler": info["sampler"], "smoother": repr(smoother), "cores": smoother.cores, "init": args.init,
        "likelihood": args.likelihood, "games": len(games), "nodes": fit.timeline.n_nodes, "imports_s": imports,
        "wall_s": wall, "cpu_s": cpu, "sampling_s": info.get("sampling_seconds"), "setup_s": info.get("setup_seconds"),
        "summary_s": info.get("summary_seconds"), "divergences": info["divergences"], "max_rhat": info["max_rhat"],
        "max_rhat_at": info["max_rhat_at"], "min_ess": info["min_ess"], "min_ess_at": info["min_ess_at"],
        "steps_per_draw": float(np.mean(stats["n_steps"])),
        "step_size": float(np.mean(stats["step_size"])) if "step_size" in stats else None,
        "drift_mean": float(drift.mean()), "drift_90": [float(q) for q in np.quantile(drift, [0.05, 0.95])],
        "warnings": [str(w.message) for w in caught if "sampling diagnostics" in str(w.message)],
        "load_before": list(load0), "load_after": list(os.getloadavg()),
    }
    out["ess_per_s"] = out["min_ess"] / wall
    print("RESULT " + json.dumps(out))
    return 0


def _run_child(args, sampler: str, env: dict, *, prime: bool = False) -> dict:
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", "--sampler", sampler, "--init", args.init,
            "--likelihood", args.likelihood, "--chains", str(args.chains), "--target-accept", str(args.target_accept),
            "--seed", str(args.seed), "--drift", str(args.drift)]
    if args.cores is not None:
        argv += ["--cores", str(args.cores)]
    if prime:  # a small fit of the same structure: fills the caches
        argv += ["--games", "40", "--players", "5", "--periods", "5", "--draws", "20", "--tune", "20"]
    else:
        argv += ["--games", str(args.games), "--players", str(args.players), "--periods", str(args.periods),
                 "--draws", str(args.draws), "--tune", str(args.tune)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"bench_pymc child failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return json.loads(lines[-1][len("RESULT "):])


def _show(r: dict, cache: str) -> None:
    print(f"{r['sampler']}, {cache} cache: wall time of fit {r['wall_s']:.1f} s (setup {r['setup_s']:.1f} s, "
          f"sampling {r['sampling_s']:.1f} s, summaries {r['summary_s']:.1f} s); CPU time {r['cpu_s']:.1f} s; "
          f"imports before it {r['imports_s']:.1f} s")
    print(f"  divergences: {r['divergences']}, max r-hat: {r['max_rhat']:.3f} ({r['max_rhat_at']}), min bulk ESS: "
          f"{r['min_ess']:.0f} ({r['min_ess_at']}), {r['ess_per_s']:.0f} per second of fit; leapfrog steps per "
          f"draw: {r['steps_per_draw']:.1f}, step size {r['step_size'] or float('nan'):.3f}")
    lo, hi = r["drift_90"]
    print(f"  drift: posterior mean {r['drift_mean']:.4f}, 90% interval [{lo:.4f}, {hi:.4f}]; load average "
          f"{r['load_before'][0]:.2f} -> {r['load_after'][0]:.2f}")
    for w in r["warnings"]:
        print(f"  warning: {w}")


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("numpy", "numba", "pymc", "pytensor", "arviz", "nutpie", "statespace-ratings"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sampler", default="all", choices=["all", "nuts", "nutpie", "auto", "numpyro", "advi"],
                    help="all (default): PyMC's NUTS, and nutpie when it is installed")
    ap.add_argument("--games", type=int, default=5000)
    ap.add_argument("--players", type=int, default=100)
    ap.add_argument("--periods", type=int, default=50)
    ap.add_argument("--drift", type=float, default=0.02)
    ap.add_argument("--draws", type=int, default=None, help="kept draws per chain (default: the smoother's, 1000)")
    ap.add_argument("--tune", type=int, default=None, help="tuning steps per chain (default: the smoother's)")
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--cores", type=int, default=None, help="chains at a time (default: the smoother's, one per "
                                                          "chain up to the number of cores)")
    ap.add_argument("--target-accept", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", default="laplace", help="PyMCSmoother init: laplace (default) or a PyMC init method, "
                                                      "e.g. jitter+adapt_diag (PyMC's default)")
    ap.add_argument("--likelihood", default="auto", choices=["auto", "compiled", "graph"],
                    help="the games' log-likelihood: the compiled Op or the plain PyTensor graph")
    ap.add_argument("--cold", action=argparse.BooleanOptionalAction, default=None,
                    help="also time a fit with empty compile caches (default: on, off with --quick)")
    ap.add_argument("--repeats", type=int, default=1, help="warm fits per sampler (1)")
    ap.add_argument("--json", type=Path, default=None,
                    help=f"where to save the numbers (default {DEFAULT_JSON.relative_to(ROOT)}; --quick: nowhere)")
    ap.add_argument("--quick", action="store_true", help="500 games, 200 draws and tune, warm only")
    ap.add_argument("--diagnostics", action="store_true",
                    help="only time r-hat and bulk ESS (smoothers._diagnostics against ArviZ) on AR(1) draws of "
                         "this run's shape: chains x draws x the stream's nodes; no sampling")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.quick:
        args.games, args.draws, args.tune = 500, 200, 200
    from smoothers.pymc_smoother import PyMCSmoother

    defaults = PyMCSmoother()
    args.draws = defaults.draws if args.draws is None else args.draws
    args.tune = defaults.tune_steps if args.tune is None else args.tune
    if args.child:
        return child(args)
    if args.diagnostics:
        return diagnostics(_stream(args), args.chains, args.draws, args.seed)
    cold = (not args.quick) if args.cold is None else args.cold
    if args.sampler == "all":
        samplers = ["nuts"] + (["nutpie"] if find_spec("nutpie") is not None else [])
    else:
        samplers = [args.sampler]
    started = datetime.now(timezone.utc)
    print(f"{started:%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores; load average "
          f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"stream: {args.games:,} games, {args.players} competitors, {args.periods} daily periods, drift "
          f"{args.drift}; {args.chains} chains x ({args.tune:,} tuning + {args.draws:,} draws), target_accept "
          f"{args.target_accept}, init={args.init}, likelihood={args.likelihood}")
    if "nutpie" not in samplers and args.sampler == "all":
        print("nutpie is not installed (pip install -e \".[fast]\"): PyMC's NUTS only")
    runs = []
    for sampler in samplers:
        if cold:
            with tempfile.TemporaryDirectory(prefix="bench-pymc-cold-") as tmp:
                env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={tmp}/pytensor",
                           NUMBA_CACHE_DIR=f"{tmp}/numba")
                r = _run_child(args, sampler, env)
            _show(r, "cold")
            runs.append({"cache": "cold", **r})
        _run_child(args, sampler, dict(os.environ), prime=True)  # fills the default caches
        for _ in range(args.repeats):
            r = _run_child(args, sampler, dict(os.environ))
            _show(r, "warm")
            runs.append({"cache": "warm", **r})
    print(f"smoother: {runs[-1]['smoother']}, cores={runs[-1]['cores']}, init={args.init}, "
          f"likelihood={args.likelihood}")
    defaults_run = (args.games, args.players, args.periods, args.chains, args.tune, args.draws) == (
        5000, 100, 50, 2, defaults.tune_steps, defaults.draws)
    if defaults_run and not args.quick:  # for benchmarks/peers.py's goals table: the best warm fit
        for sampler in samplers:
            warm = [r["wall_s"] for r in runs if r["cache"] == "warm" and r["sampler"] == sampler]
            key = "pymc_5000_s" if sampler == "nuts" else f"pymc_5000_{sampler}_s"
            if warm:
                print(f"goal {key} {min(warm):.1f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    path = args.json if args.json is not None else (None if args.quick else DEFAULT_JSON)
    if path is not None:
        try:
            commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=ROOT).stdout.strip() or None
        except OSError:
            commit = None
        result = {"command": "python benchmarks/bench_pymc.py " + " ".join(sys.argv[1:] if argv is None else argv),
                  "date": started.isoformat(timespec="seconds"), "commit": commit,
                  "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                              "processor": platform.processor() or None},
                  "versions": _versions(),
                  "stream": {"games": args.games, "players": args.players, "periods": args.periods,
                             "drift": args.drift, "seed": args.seed},
                  "settings": {"chains": args.chains, "tune": args.tune, "draws": args.draws,
                               "target_accept": args.target_accept, "init": args.init,
                               "likelihood": args.likelihood},
                  "runs": runs}
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=2) + "\n")
        print(f"saved: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
