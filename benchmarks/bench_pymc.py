"""Wall time and diagnostics of ``PyMCSmoother`` on a simulated random-walk stream.

One stream: ``statespace.simulate(SkillModel("logistic", 1, 0, 1, drift=0.02), n_players=100,
n_games=5000, days=50)`` grouped into daily rating periods (``with_periods(1)``), so the drift is
per period. A warm-up fit on a few games with the same model structure first fills PyTensor's
compile cache (the graph takes its data as shared variables, so the compiled code does not
depend on the data), then the timed fit runs with the chosen sampler. Printed: wall time of
``fit`` (graph building, compilation from the warm cache, sampling, posterior summaries and
diagnostics), the sampler's own sampling time, divergences, max r-hat, min bulk ESS, mean
leapfrog steps per draw, the posterior mean of the drift against the truth, the CPU time
(this process and the sampler's worker processes) and the load average: wall times are only
meaningful on an otherwise idle machine; CPU time is steadier on a busy one.

Usage::

    python benchmarks/bench_pymc.py                         # PyMC NUTS, 2 chains in parallel (2+ cores)
    python benchmarks/bench_pymc.py --cores 1               # chains one after the other
    python benchmarks/bench_pymc.py --sampler nutpie --cores 2
    python benchmarks/bench_pymc.py --quick                 # 500 games, 200 draws (smoke test)
    python benchmarks/bench_pymc.py --diagnostics           # r-hat/ESS: ours against ArviZ, no sampling
    python benchmarks/bench_pymc.py --cores 2 --init jitter+adapt_diag --likelihood graph   # as before the speed-ups
"""

from __future__ import annotations

import argparse
import os
import resource
import time
import warnings

import numpy as np

import statespace as ss
from smoothers.pymc_smoother import PyMCSmoother


def _cpu_seconds() -> float:
    """User + system CPU time of this process and of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sampler", default="nuts", choices=["nuts", "nutpie", "numpyro", "advi"])
    ap.add_argument("--games", type=int, default=5000)
    ap.add_argument("--players", type=int, default=100)
    ap.add_argument("--periods", type=int, default=50)
    ap.add_argument("--drift", type=float, default=0.02)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--tune", type=int, default=1000)
    ap.add_argument("--chains", type=int, default=2)
    ap.add_argument("--cores", type=int, default=None, help="processes for the chains (default: the smoother's, "
                                                          "one per chain up to the number of cores)")
    ap.add_argument("--target-accept", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", default="laplace", help="PyMCSmoother init: laplace (default) or a PyMC init method, "
                                                      "e.g. jitter+adapt_diag (PyMC's default)")
    ap.add_argument("--likelihood", default="auto", choices=["auto", "compiled", "graph"],
                    help="the games' log-likelihood: the compiled Op or the plain PyTensor graph")
    ap.add_argument("--quick", action="store_true", help="500 games, 200 draws and tune")
    ap.add_argument("--diagnostics", action="store_true",
                    help="only time r-hat and bulk ESS (smoothers._diagnostics against ArviZ) on AR(1) draws of "
                         "this run's shape: chains x draws x the stream's nodes; no sampling")
    args = ap.parse_args(argv)
    if args.quick:
        args.games, args.draws, args.tune = 500, 200, 200

    truth = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=args.drift)
    games = ss.simulate(truth, n_players=args.players, n_games=args.games, days=args.periods,
                        seed=args.seed).games.with_periods(1)
    if args.diagnostics:
        return diagnostics(games, args.chains, args.draws, args.seed)
    opts = dict(sampler=args.sampler, chains=args.chains, cores=args.cores, target_accept=args.target_accept,
                seed=args.seed + 1, progressbar=False, init=args.init, likelihood=args.likelihood)

    warm = ss.simulate(truth, n_players=5, n_games=40, days=5, seed=1).games.with_periods(1)
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PyMCSmoother(draws=20, tune=20, **opts).fit(warm)
    print(f"warm-up fit (compile cache): {time.perf_counter() - t:.1f} s")

    smoother = PyMCSmoother(draws=args.draws, tune=args.tune, **opts)
    cpu0 = _cpu_seconds()
    t = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = smoother.fit(games)
    wall = time.perf_counter() - t
    cpu = _cpu_seconds() - cpu0
    info = fit.info
    print(f"{games!r}: {fit.timeline.n_nodes} nodes")
    print(f"{smoother!r}, cores={smoother.cores}, init={args.init}, likelihood={args.likelihood}")
    print(f"wall time of fit: {wall:.1f} s (sampling {info.get('sampling_seconds') or float('nan'):.1f} s); "
          f"CPU time {cpu:.1f} s (this process and its sampler processes)")
    if args.sampler != "advi":
        stats = fit.idata.sample_stats
        steps = float(np.mean(stats["n_steps"])) if "n_steps" in stats else float("nan")
        print(f"divergences: {info['divergences']}, max r-hat: {info['max_rhat']:.3f} ({info['max_rhat_at']}), "
              f"min bulk ESS: {info['min_ess']:.0f} ({info['min_ess_at']}), leapfrog steps per draw: {steps:.1f}")
    drift = np.asarray(fit.idata.posterior["drift"]).ravel()
    lo, hi = np.quantile(drift, [0.05, 0.95])
    print(f"drift: posterior mean {drift.mean():.4f}, 90% interval [{lo:.4f}, {hi:.4f}], true {args.drift}")
    for w in caught:
        if "sampling diagnostics" in str(w.message):
            print(f"warning: {w.message}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
