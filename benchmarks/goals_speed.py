"""The Goals observation's cost and the accuracy of its forecast table, on real football.

For each data set (``intl_football``, ``england_football`` under the shared data folder; absent
ones are skipped), on its first 90% by time (the games ``auto`` chooses on with ``split=0.9``):

1. **One run of the EKF** (auto's untuned starting model, drifting home advantage), best of
   ``--repeats``: Margin, Goals negative binomial with its forecast table (``Goals(table=True)``,
   the default), the same with the per-game integral (``table=False``, the forecast before the
   table), and Goals Poisson with Dixon and Coles' rho, table and per game.
2. **The table against the per-game integral** on those runs' one-step-ahead forecasts (every
   game): the largest difference of a probability, the mean and largest difference of a game's
   three-outcome log loss, and the difference of the mean log loss (what tuning minimises).
3. **Tuning the Goals candidates of auto** (its start values, the same objective, burn-in and
   ``maxiter``), with the table and (``--exact-tuning``, on by default) per game: seconds, the
   tuned objective and the number of runs of the filter.
4. **``statespace.auto`` with its default search** (which tries Goals where the scores are goal
   counts): seconds for the whole choice and for each Goals candidate, in this process and
   (``--n-jobs 1 2``) with ``auto(n_jobs=2)``, the candidates of a stage on two worker processes.

Usage::

    python benchmarks/goals_speed.py                                  # both data sets, everything
    python benchmarks/goals_speed.py --datasets intl_football --no-exact-tuning
    python benchmarks/goals_speed.py --no-exact-tuning --n-jobs 1 2   # auto's search, serial and on 2 workers
"""

from __future__ import annotations

import argparse
import dataclasses
import time
import warnings

import numpy as np

from _common import add_dataset_args, cpu_name, each_dataset, git_describe, load, versions

DATASETS = ("intl_football", "england_football")


class _CountRuns:
    """Counts the EKF's runs inside the ``with`` block (a tuning's evaluations; its grid start is one
    batched pass more, not counted)."""

    def __enter__(self):
        from filters import EKF

        self.n, self._orig = 0, EKF.run

        def counted(ekf, *args, **kwargs):
            self.n += 1
            return self._orig(ekf, *args, **kwargs)

        EKF.run = counted
        return self

    def __exit__(self, *exc):
        from filters import EKF

        EKF.run = self._orig


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dataset_args(p, DATASETS)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--exact-tuning", action=argparse.BooleanOptionalAction, default=True,
                   help="also tune the Goals candidates with the per-game integral (minutes on England)")
    p.add_argument("--auto", action=argparse.BooleanOptionalAction, default=True,
                   help="time statespace.auto's default search")
    p.add_argument("--n-jobs", type=int, nargs="*", default=[1],
                   help="time auto's search with each of these n_jobs (1: in this process)")
    args = p.parse_args()

    import statespace as ss
    from statespace.ensemble.auto_candidate import start_candidate
    from statespace.ensemble.auto_search import BURN_IN
    from statespace.ensemble.auto_variant import Variant, goal_counts
    from statespace.methods.settings import BoundWarning
    from statespace.model import metrics

    print(f"# Goals: cost and forecast table ({git_describe()}, {time.strftime('%Y-%m-%d')})\n")
    print(f"{cpu_name()}; {load()}; {versions('numpy', 'numba', 'scipy')}\n")
    for name, games in each_dataset(args):
        train, _ = games.split(0.9)
        assert goal_counts(train)
        info = {"scores": True, "counts": True, "home": not bool(train.neutral.all()),
                "draws": bool(np.any(train.score == 0.5))}
        home = "drifting" if info["home"] else "none"
        scored = np.sort(train.order[int(round(BURN_IN * len(train))):])
        y = train.score[scored]
        print(f"## {name}: {len(train):,} training games ({len(scored):,} scored after a {BURN_IN:.0%} burn-in)\n")

        nb = start_candidate(Variant("goals", home), train, info)
        dc = start_candidate(Variant("goals", home, counts="dixon-coles"), train, info)
        margin = start_candidate(Variant("margin", home), train, info)

        def exact(c):
            obs = dataclasses.replace(c.model.observation, table=False)
            return c.with_params(model=dataclasses.replace(c.model, observation=obs))

        runs = {"margin": margin, "goals NB, table": nb, "goals NB, per game": exact(nb),
                "goals DC, table": dc, "goals DC, per game": exact(dc)}
        print("| run of the EKF | seconds (best of %d) | games/s | vs margin |" % args.repeats)
        print("|---|---:|---:|---:|")
        proba, base_t = {}, None
        for label, c in runs.items():
            proba[label] = c.run(train).proba
            best = min(_timed(lambda: c.run(train)) for _ in range(args.repeats))
            base_t = best if base_t is None else base_t
            print(f"| {label} | {best:.3f} | {len(train) / best:,.0f} | {best / base_t:.1f}x |")
        print()
        print("| table vs per game | largest |dP| | mean |d log loss| | largest |d log loss| | d mean log loss |")
        print("|---|---:|---:|---:|---:|")
        for law in ("NB", "DC"):
            a, b = proba[f"goals {law}, table"], proba[f"goals {law}, per game"]
            la = metrics.log_loss_3(train.score, a, per_game=True)
            lb = metrics.log_loss_3(train.score, b, per_game=True)
            d = np.abs(la - lb)
            print(f"| goals {law} | {np.abs(a - b).max():.2e} | {d.mean():.2e} | {d.max():.2e} | "
                  f"{abs(metrics.log_loss_3(y, a[scored]) - metrics.log_loss_3(y, b[scored])):.2e} |")
        print()

        print("| tuning auto's candidate | seconds | runs | tuned log_loss_3 | settings |")
        print("|---|---:|---:|---:|---|")
        todo = [("goals NB, table", nb), ("goals DC, table", dc)]
        if args.exact_tuning:
            todo += [("goals NB, per game", exact(nb)), ("goals DC, per game", exact(dc))]
        for label, c in todo:
            with warnings.catch_warnings(), _CountRuns() as calls:
                warnings.simplefilter("ignore", BoundWarning)
                warnings.simplefilter("ignore", RuntimeWarning)
                t = time.perf_counter()
                tuned = c.tune(train, objective="log_loss_3", burn_in=BURN_IN, standard_errors=False)
                sec = time.perf_counter() - t
            shown = ", ".join(f"{k} {v:.4g}" for k, v in tuned.values().items())
            print(f"| {label} | {sec:.1f} | {calls.n} | {tuned.tuning.objective:.5f} | {shown} |")
        print()
        for jobs in (args.n_jobs if args.auto else []):
            t = time.perf_counter()
            fit = ss.auto(train, progress=False, n_jobs=None if jobs == 1 else jobs)
            sec = time.perf_counter() - t
            tab = fit.table
            goals = tab[tab["observation"] == "goals"]
            parts = "; ".join(f"{k} {v:.1f} s" for k, v in goals["tune_seconds"].items())
            rest = tab.loc[tab["observation"] != "goals", "tune_seconds"].sum()
            print(f"`statespace.auto(train, n_jobs={jobs})` (default search, {len(tab)} candidates): {sec:.1f} s; "
                  f"chose {fit.chosen!r}; Goals candidates: {parts}; the other candidates {rest:.1f} s in all\n")


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
