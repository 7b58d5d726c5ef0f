"""Which filter when: every filter and smoother on simulated leagues that differ in one property
at a time, scored against the forecast at the true skills.

What it measures: the **regret** of each method on a league, its held-out log loss minus the log
loss of the true probabilities (:meth:`statespace.Simulation.true_proba`, scored by
:func:`statespace.metrics.log_loss`, the expected-score log loss that ``compare`` reports) on the
same held-out games. The true probabilities are the floor no method can beat on average, so the
regret says how much of what is learnable each method leaves on the table. Nothing here is
published elsewhere: every number comes from the seeded leagues of
``statespace.scenarios.league`` that this script builds.

Design
------
- **Leagues** (:func:`statespace.scenarios.league`): a base league (:data:`BASE`: 20 competitors,
  2 games each per weekly period over 100 periods, i.e. 2,000 games; skills N(1500, 200^2)
  drifting 20 Elo points (sd) per period; 10% draws; no home advantage; no mean reversion) and,
  one factor at a time, :data:`FACTORS`' other levels of the six factors (drift, games per
  competitor per period, number of competitors, draw rate, home advantage, mean reversion), the
  others held at the base: ``1 + 6 x 4 = 25`` conditions, each simulated with several seeds.
- **Split**: the first 70% of each league's games (in time) train, the last 30% are scored
  (``Games.split``, as ``compare`` splits them; the floor is computed on exactly those games).
- **Tuning**: each method is tuned on the training games only (``compare(tune=True)``); a
  smoother whose own tuning does not cover a setting takes it from its filter counterpart tuned
  on the same training games (:class:`ThroughFilter`): the RTS smoother from the EKF, TrueSkill
  Through Time from TrueSkill with time dynamics, the Laplace smoother and static Bradley-Terry
  their home advantage from the EKF (the Laplace smoother then fits its drift by type-II maximum
  likelihood).
- **Mode**: ``walk_forward`` with refits every :data:`EVERY` days: the filters run online (each
  held-out game forecast from every game before it), the smoothers are refitted on all games
  before each 4-week block and forecast the block. The PyMC smoother (NUTS, about a minute per
  fit here) runs on :data:`PYMC_CONDITIONS` and :data:`PYMC_SEEDS` seeds only.
- **Statistics**: per condition and method, the mean regret over the seeds and its standard
  error (sd of the per-seed regrets / sqrt(seeds), which are paired differences: method and floor
  on the same games); comparisons of two methods use the per-seed differences of their regrets.

Outputs: a tidy CSV of regrets (one row per method, condition and seed), a Markdown results file
(rows = conditions, columns = methods, regret x 1000 +- se, the best per row in bold, then
sentences generated from the numbers) in ``benchmarks/results/which_filter_when-<date>[-tag].md``
and two figures (``filters.png``, ``smoothers.png``: one panel per factor, regret against the
factor's level per method with error bars) in ``docs/_static/which_filter_when/``. A published
run (not ``--reduced``) also writes ``benchmarks/results/which_filter_when-latest.md``, the file
``docs/which_filter_when.md`` includes.

Usage::

    python examples/which_filter_when.py --n-jobs 16 --out wfw-rows         # the full study
    python examples/which_filter_when.py --factors drift_sd --seeds 2 --n-jobs 1 --out wfw-rows
    python examples/which_filter_when.py --reduced --results /tmp/r --figures /tmp/r   # seconds

``--out FOLDER`` keeps each finished task's row (``statespace.study``'s resume folder): the same
command started again runs only what is missing. The script prints the summed seconds of the
tasks (fit + tune, measured in each task with one compute thread) and that divided by 16.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(ROOT))

#: the base league; every condition changes one of these from it
BASE = {"n_competitors": 20, "games_per_period": 2.0, "n_periods": 100, "drift_sd": 20.0, "draw_rate": 0.1,
        "home": 0.0, "reversion": 0.0}
#: each factor's levels (the base level among them) and how it is labelled
FACTORS = {
    "drift_sd": ([0.0, 10.0, 20.0, 40.0, 80.0], "drift (Elo points sd per period)"),
    "games_per_period": ([0.5, 1.0, 2.0, 4.0, 8.0], "games per competitor per period"),
    "n_competitors": ([10, 20, 40, 80, 160], "competitors"),
    "draw_rate": ([0.0, 0.1, 0.2, 0.3, 0.45], "draw rate at the start"),
    "home": ([0.0, 35.0, 70.0, 105.0, 140.0], "home advantage (Elo points)"),
    "reversion": ([0.0, 0.005, 0.02, 0.05, 0.1], "mean reversion per period"),
}
SPLIT = 0.7
#: walk-forward refit block of the smoothers, days (4 weekly periods)
EVERY = 28
FULL_SEEDS = 8
#: the PyMC smoother's share of the full run: these conditions, this many seeds
PYMC_CONDITIONS = ("base", "drift_sd=80")
PYMC_SEEDS = 2
#: the reduced run: two small conditions, two seeds, four cheap methods
REDUCED_BASE = {"n_competitors": 10, "games_per_period": 2.0, "n_periods": 40, "drift_sd": 0.0, "draw_rate": 0.1,
                "home": 0.0, "reversion": 0.0}
REDUCED_FACTOR = ("drift_sd", [0.0, 100.0])
REDUCED_METHODS = ("elo", "glicko2", "ekf", "bradley_terry")
FILTERS = ("elo", "elo_fide", "glicko", "glicko2", "trueskill", "wenglin", "ekf", "ekf_ou", "dwz", "ecf", "stephenson")
SMOOTHERS = ("laplace", "rts", "ttt", "pymc")
STATIC = ("bradley_terry", "colley")
#: methods that do not apply to these leagues, and why (said on the page)
LEFT_OUT = {"pythagorean": "rates from each side's points; the leagues record results only",
            "massey": "rates from each side's points", "keener": "rates from each side's points",
            "blend": "a blend of other methods, not a method of its own"}


# ---------------------------------------------------------------------------- the methods
class Tuning:
    """What ``compare`` records of a tuning: the fitted ``params`` (a dict)."""

    def __init__(self, params: dict):
        self.params = params


class ThroughFilter:
    """A smoother whose settings come from a filter tuned on the training games.

    ``build(filter, games)`` makes the smoother from the (tuned) filter; ``games`` are the
    training games when tuning (the builder may tune the smoother's own settings on them) and
    ``None`` for the untuned smoother. :meth:`tune` tunes the filter (its own ``tune``, on the
    training games only) and builds from it; :meth:`fit` is the smoother's, warm-started in
    walk-forward refits when the smoother accepts it."""

    online = False

    def __init__(self, name: str, filter, build, smoother=None, tuning: Tuning | None = None):
        self.name = name
        self.filter = filter
        self.build = build
        self.smoother = build(filter, None) if smoother is None else smoother
        self.tuning = tuning

    def tunable(self, games):
        return self.filter.tunable(games)

    def tune(self, games, **options) -> "ThroughFilter":
        tuned = self.filter.tune(games, **options)
        smoother = self.build(tuned, games)
        params = dict(tuned.tuning.params)
        own = getattr(smoother, "tuning", None)
        if own is not None:  # the smoother's own fitted settings (the Laplace smoother's drift)
            params.update({f"{self.name}.{k}": v for k, v in own.params.items()})
        return ThroughFilter(self.name, tuned, self.build, smoother, Tuning(params))

    def fit(self, games, warm_start=None):
        import inspect

        if warm_start is not None and "warm_start" in inspect.signature(self.smoother.fit).parameters:
            return self.smoother.fit(games, warm_start=warm_start)
        return self.smoother.fit(games)

    def __repr__(self) -> str:
        return f"ThroughFilter({self.name}, {self.filter!r}, {self.smoother!r})"


def _rts(ekf, games):
    from smoothers import RTSSmoother

    return RTSSmoother(ekf.skill_model, period_days=ekf.period_days)


def _ttt(ts, games):
    from smoothers import TrueSkillThroughTime

    return TrueSkillThroughTime(ts.mu, ts.sigma, ts.beta, ts.tau, ts.draw_probability, home=ts.home,
                                period_days=ts.period_days)


def _laplace(ekf, games):
    import dataclasses

    from smoothers import LaplaceSmoother

    base = LaplaceSmoother()
    smoother = LaplaceSmoother(dataclasses.replace(base.skill_model, home=ekf.skill_model.home))
    return smoother if games is None else smoother.tune(games)


def _bradley_terry(ekf, games):
    import dataclasses

    from smoothers import BradleyTerry

    base = BradleyTerry()
    return BradleyTerry(dataclasses.replace(base.skill_model, home=ekf.skill_model.home))


def build_methods(names) -> dict:
    """``{name: method}`` for the names asked (see :data:`FILTERS`, :data:`SMOOTHERS`, :data:`STATIC`)."""
    import dataclasses

    from filters import EKF, TrueSkill
    from filters.ekf import DEFAULT_MODEL
    from statespace import ELO_SCALE, SkillModel, Threshold

    out = {}
    for name in names:
        if name in ("elo", "elo_fide", "glicko", "glicko2", "trueskill", "wenglin", "ekf", "dwz", "ecf",
                    "stephenson", "colley"):
            from statespace.methods import registry

            out[name] = registry.get(name)()
        elif name == "ekf_ou":  # a reversion > 0 opts the EKF into tuning it
            out[name] = EKF(dataclasses.replace(DEFAULT_MODEL, reversion=1e-3))
        elif name == "rts":
            out[name] = ThroughFilter("rts", EKF(), _rts)
        elif name == "ttt":
            out[name] = ThroughFilter("ttt", TrueSkill(dynamics="time"), _ttt)
        elif name == "laplace":
            out[name] = ThroughFilter("laplace", EKF(), _laplace)
        elif name == "bradley_terry":
            out[name] = ThroughFilter("bradley_terry", EKF(), _bradley_terry)
        elif name == "pymc":
            from smoothers import PyMCSmoother

            # drift, prior variance, home advantage and draw margin inferred (their priors);
            # one core per task: the study's workers are the parallelism
            model = SkillModel("logistic", ELO_SCALE, 1500.0, 1.0, 0.0, Threshold(50.0))
            out[name] = PyMCSmoother(model, period_days=7.0, draws=500, tune=500, chains=2, cores=1, seed=0,
                                     progressbar=False)
        else:
            raise ValueError(f"unknown method {name!r}; choose from {', '.join(FILTERS + SMOOTHERS + STATIC)}")
    return out


def kind(name: str) -> str:
    return "filter" if name in FILTERS else "smoother" if name in SMOOTHERS else "static"


# ---------------------------------------------------------------------------- the conditions
def conditions(base: dict, factors: dict) -> list[dict]:
    """The base condition and, per factor, each non-base level: ``{"name", "factor", "level",
    "params"}``; the base appears once (named ``base``, factor ``None``)."""
    out = [{"name": "base", "factor": None, "level": None, "params": dict(base)}]
    for factor, (levels, _) in factors.items():
        for level in levels:
            if level == base[factor]:
                continue
            out.append({"name": f"{factor}={level:g}", "factor": factor, "level": level,
                        "params": {**base, factor: level}})
    return out


def floors(conds: list[dict], seeds) -> pd.DataFrame:
    """The true-probability log loss of each condition and seed on the held-out games that
    ``compare`` scores (``Games.split(SPLIT)``'s second part), and the number of them."""
    from statespace import metrics, scenarios

    rows = []
    for c in conds:
        for seed in seeds:
            sim = scenarios.get("league", seed=seed, **c["params"])
            games = sim.games
            _, test = games.split(SPLIT)
            at = pd.Index(games.row).get_indexer(test.row)
            rows.append({"condition": c["name"], "seed": int(seed), "n_test": len(test),
                         "floor": metrics.log_loss(test.score, sim.true_proba()[at])})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- running
def run(conds: list[dict], methods: dict, seeds, *, pymc_conditions=(), pymc_seeds=(), n_jobs=None, out=None,
        progress=None) -> pd.DataFrame:
    """Run the study (``statespace.study``) and return the tidy table of regrets: one row per
    method, condition and seed with ``log_loss``, ``floor``, ``regret``, ``fit_seconds``,
    ``tune_seconds``, ``error``."""
    from statespace.evaluation.study import study

    main = {k: m for k, m in methods.items() if k != "pymc"}
    sources = {c["name"]: {"scenario": "league", **c["params"]} for c in conds}
    tables = []
    if main:
        tables.append(study(methods=main, sources=sources, seeds=list(seeds), modes=["walk_forward"], split=SPLIT,
                            every=EVERY, tune=True, n_jobs=n_jobs, path=out, progress=progress))
    if "pymc" in methods and pymc_conditions and pymc_seeds:
        sub = {k: v for k, v in sources.items() if k in pymc_conditions}
        tables.append(study(methods={"pymc": methods["pymc"]}, sources=sub, seeds=list(pymc_seeds),
                            modes=["walk_forward"], split=SPLIT, every=EVERY, tune=True, n_jobs=n_jobs, path=out,
                            progress=progress))
    ran = sum(int(t.attrs.get("ran", len(t))) for t in tables)
    table = pd.concat(tables, ignore_index=True)
    table = table.rename(columns={"source": "condition"})
    table["seed"] = table["seed"].astype(int)
    used = sorted(set(table["seed"]))
    fl = floors(conds, used)
    merged = table.merge(fl, on=["condition", "seed"], how="left", suffixes=("", "_floor"))
    if not (merged["n_test"] == merged["n_test_floor"]).all():
        raise RuntimeError("the floor was scored on other games than the methods (held-out counts differ)")
    by_name = {c["name"]: c for c in conds}
    merged["factor"] = [by_name[c]["factor"] for c in merged["condition"]]
    merged["level"] = [by_name[c]["level"] for c in merged["condition"]]
    merged["kind"] = [kind(m) for m in merged["method"]]
    merged["regret"] = merged["log_loss"] - merged["floor"]
    columns = ["condition", "factor", "level", "method", "kind", "seed", "n_test", "log_loss", "floor", "regret",
               "fit_seconds", "tune_seconds", "tuned", "error"]
    merged = merged[columns].copy()
    merged.attrs["ran"] = ran  # the tasks this call ran; the others were read from the resume folder
    return merged


def summarise(tidy: pd.DataFrame) -> pd.DataFrame:
    """Per condition and method: mean regret, its standard error over the seeds (ddof 1; NaN from
    one seed), the number of seeds scored ``n`` and of failed tasks ``failed``."""
    ok = tidy[tidy["error"].isna()]
    g = ok.groupby(["condition", "method"], sort=False)["regret"]
    s = g.agg(["mean", "std", "count"]).reset_index()
    s["se"] = s["std"] / np.sqrt(s["count"])
    failed = tidy[tidy["error"].notna()].groupby(["condition", "method"]).size().rename("failed").reset_index()
    s = s.merge(failed, on=["condition", "method"], how="left")
    s["failed"] = s["failed"].fillna(0).astype(int)
    return s.rename(columns={"mean": "regret", "count": "n"})[["condition", "method", "regret", "se", "n", "failed"]]


def paired(tidy: pd.DataFrame, condition: str, a: str, b: str) -> tuple[float, float, int]:
    """Mean and standard error over the seeds of ``regret(a) - regret(b)`` on one condition
    (the same leagues: the difference of their log losses)."""
    sub = tidy[(tidy["condition"] == condition) & tidy["error"].isna()]
    x = sub[sub["method"] == a].set_index("seed")["regret"]
    y = sub[sub["method"] == b].set_index("seed")["regret"]
    d = (x - y).dropna()
    n = len(d)
    return float(d.mean()) if n else math.nan, float(d.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan, n


def n_games(params: dict) -> int:
    """A league's number of games (:func:`statespace.scenarios.league`'s rule)."""
    return int(round(params["n_competitors"] * params["games_per_period"] * params["n_periods"] / 2.0))


def full_run_estimate(tidy: pd.DataFrame, conds) -> tuple[float, float]:
    """``(tasks, compile)``: CPU seconds the full design's tasks (:data:`FACTORS` x
    :data:`FULL_SEEDS` seeds; PyMC on :data:`PYMC_CONDITIONS` x :data:`PYMC_SEEDS`) would take,
    extrapolated from this run's task seconds, and the one-off compilation this run paid.

    Per method and condition a task costs the mean over this run's seeds, except where the
    method ran first: there the first task also paid numba's compilation, so the condition whose
    seeds differ most counts its fastest seed and the difference goes to ``compile`` (paid once:
    the script's warm-up compiles before the workers start, and they load the compiled code from
    numba's cache). A condition this run did not cover is priced at the method's median seconds
    per game times its games."""
    full = conditions(BASE, FACTORS)
    games_of = {c["name"]: n_games(c["params"]) for c in full + list(conds)}
    ok = tidy[tidy["error"].isna()].assign(
        seconds=lambda t: t["fit_seconds"].fillna(0) + t["tune_seconds"].fillna(0),
        games=lambda t: [games_of[c] for c in t["condition"]])
    tasks = compiled = 0.0
    for method, rows in ok.groupby("method"):
        by = rows.groupby("condition")["seconds"]
        cost, spread = by.mean(), by.max() - by.min()
        first = spread.idxmax()
        cost[first] = by.min()[first]
        compiled += float(spread[first])
        per_game = float(np.median(rows["seconds"] / rows["games"]))
        targets, seeds = [c["name"] for c in full], FULL_SEEDS
        if method == "pymc":
            targets, seeds = [c for c in targets if c in PYMC_CONDITIONS], PYMC_SEEDS
        tasks += seeds * sum(float(cost[c]) if c in cost.index else per_game * games_of[c] for c in targets)
    return tasks, compiled


def warm_up(methods: dict) -> float:
    """Compile every method's code once in this process (each tuned and walked forward on a tiny
    league with draws and home games), so that the workers of a process pool load it from
    numba's on-disk cache instead of each compiling it; returns the seconds it took. The PyMC
    smoother is left out (its compiled graph is cached by PyTensor per fit)."""
    from statespace import compare, scenarios

    t0 = time.perf_counter()
    games = scenarios.get("league", seed=0, n_competitors=6, n_periods=12, home=30.0, draw_rate=0.2).games
    for name, method in methods.items():
        if name != "pymc":
            compare({name: method}, games, SPLIT, "walk_forward", every=EVERY, tune=True, progress=False)
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------- reporting
def _order(conds):
    return [c["name"] for c in conds]


def results_table(summary: pd.DataFrame, conds, methods) -> str:
    """Markdown: rows = conditions, columns = methods, cells ``1000 x regret +- se`` (milli-nats),
    the lowest mean regret per row in bold."""
    head = "| condition | " + " | ".join(methods) + " |"
    lines = [head, "|---|" + "--:|" * len(methods)]
    s = summary.set_index(["condition", "method"])
    for name in _order(conds):
        cells, means = [], {}
        for m in methods:
            if (name, m) in s.index and np.isfinite(s.loc[(name, m), "regret"]):
                means[m] = s.loc[(name, m), "regret"]
        best = min(means, key=means.get) if means else None
        for m in methods:
            if m not in means:
                cells.append("–")
                continue
            se = s.loc[(name, m), "se"]
            text = f"{1000 * means[m]:.1f}" + (f" ± {1000 * se:.1f}" if np.isfinite(se) else "")
            cells.append(f"**{text}**" if m == best else text)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _levels_text(factor, levels):
    return ", ".join(f"{v:g}" for v in levels)


def conclusions(tidy: pd.DataFrame, summary: pd.DataFrame, conds, methods) -> list[str]:
    """Sentences read off the results (no number typed by hand): per factor, where Elo is within
    one standard error of the best filter, where Glicko-2 beats Elo by more than two, where the
    EKF is the best filter or within one se of it, and what the best smoother gains over the best
    filter (the best of each kind among the methods scored on all of the condition's seeds)."""
    s = summary.set_index(["condition", "method"])
    filters_ = [m for m in methods if kind(m) == "filter"]
    smoothers_ = [m for m in methods if kind(m) == "smoother"]  # the static references left aside
    by_factor = {}
    for c in conds:
        for factor, (levels, _) in FACTORS.items():
            if c["factor"] == factor or (c["factor"] is None and factor in c["params"]):
                level = c["params"][factor]
                if level in levels or c["factor"] == factor:
                    by_factor.setdefault(factor, []).append((level, c["name"]))
    out = []

    def best_of(name, group):
        # only methods scored on every seed of the condition compete: the lowest mean of fewer seeds
        # (PyMC's subset) would be picked for its noise as often as for its skill
        rows = {m: s.loc[(name, m)] for m in group if (name, m) in s.index}
        most = max((r["n"] for r in rows.values()), default=0)
        vals = {m: r["regret"] for m, r in rows.items() if r["n"] == most and np.isfinite(r["regret"])}
        return min(vals, key=vals.get) if vals else None

    for factor, items in by_factor.items():
        items = sorted(items)
        if len(items) < 2:
            continue
        label = FACTORS[factor][1]
        enough, not_enough, g2, ekf_good, smooth = [], [], [], [], []
        for level, name in items:
            bf = best_of(name, filters_)
            if bf is None:
                continue
            if "elo" in filters_ and bf != "elo":
                d, se, n = paired(tidy, name, "elo", bf)
                (enough if np.isfinite(se) and d <= se else not_enough).append(f"{level:g}")
            elif bf == "elo":
                enough.append(f"{level:g}")
            if "glicko2" in filters_ and "elo" in filters_:
                d, se, n = paired(tidy, name, "elo", "glicko2")
                if np.isfinite(se) and d > 2 * se:
                    g2.append(f"{level:g} ({1000 * d:.1f} ± {1000 * se:.1f})")
            if "ekf" in filters_:
                d, se, n = (0.0, 0.0, 0) if bf == "ekf" else paired(tidy, name, "ekf", bf)
                if bf == "ekf" or (np.isfinite(se) and d <= se):
                    ekf_good.append(f"{level:g}")
            bs = best_of(name, smoothers_)
            if bs is not None:
                d, se, n = paired(tidy, name, bs, bf)
                smooth.append(f"{level:g}: {bs} − {bf} = {1000 * d:+.1f}" + (f" ± {1000 * se:.1f}" if np.isfinite(se)
                                                                              else ""))
        levels = [f"{lv:g}" for lv, _ in items]
        out += [f"**{label}** (levels {', '.join(levels)}):", ""]
        if "elo" in filters_:
            out.append(f"- Elo's regret is within one standard error of the best filter's at "
                       f"{', '.join(enough) if enough else 'no level'}"
                       + (f"; it is not at {', '.join(not_enough)}." if not_enough else "."))
        if "glicko2" in filters_ and "elo" in filters_:
            out.append(f"- Glicko-2 beats Elo by more than two standard errors at "
                       f"{', '.join(g2) if g2 else 'no level'} (Elo − Glicko-2, milli-nats).")
        if "ekf" in filters_:
            out.append(f"- The EKF is the best filter or within one standard error of it at "
                       f"{', '.join(ekf_good) if ekf_good else 'no level'}.")
        if smooth:
            out.append("- Smoothing buys (best smoother − best filter, milli-nats; negative: the smoother is "
                       "better): " + "; ".join(smooth) + ".")
        out.append("")
    return out


def write_markdown(path: Path, tidy, summary, conds, methods, info: dict) -> str:
    """The results file: what ran, its cost, the table and the sentences."""
    lines = [f"# Which filter when: results ({info['label']})", "",
             f"`{info['command']}`", "",
             f"Run {info['date']}; {info['leagues']} leagues ({len(conds)} conditions x {info['seeds']} seeds"
             + (f"; PyMC on {', '.join(info['pymc_conditions'])} with {info['pymc_seeds']} seeds" if info.get(
                 'pymc_conditions') else "") + f"); {len(methods)} methods; {info['tasks']} tasks, "
             f"{info['failed']} failed.", "",
             f"Cost: the tasks' fit + tune seconds sum to {info['task_seconds']:,.0f} s "
             f"({info['task_seconds'] / 3600:.2f} CPU-hours; / 16 = {info['task_seconds'] / 16 / 60:.1f} minutes on 16 "
             f"cores); this call ran {info['ran']} of the tasks (the others were read from its resume folder) in "
             f"{info['wall']:,.0f} s of wall clock with n_jobs={info['n_jobs']}"
             + (f", of which {info['warm']:,.0f} s the warm-up compiling every method once before the workers "
                f"started" if info["warm"] else "") + ".", ""]
    if info["partial"] and info["estimate"] is None:
        lines += [f"**Partial run**: {info['partial']}.", ""]
    elif info["partial"]:
        steady, one_off = info["estimate"]
        lines += [f"**Partial run**: {info['partial']}. The full study is "
                  f"`python examples/which_filter_when.py --n-jobs 16 --out wfw-rows`. Extrapolated from this "
                  f"run's task seconds (`full_run_estimate` in the script), its tasks would take "
                  f"{steady / 3600:.2f} CPU-hours, about {steady / 16 / 60:.0f} minutes on 16 cores, after a "
                  f"warm-up that compiles every method once (this run's compilation: {one_off:,.0f} s)"
                  + ("" if "pymc" in methods else " (without the PyMC smoother, which this run left out)") + ".",
                  ""]
    lines += ["Regret = held-out log loss − log loss of the true probabilities on the same games, in "
              "milli-nats (x 1000), mean ± standard error over the seeds; lowest per row in bold.", "",
              results_table(summary, conds, methods), ""]
    failures = tidy[tidy["error"].notna()]
    if len(failures):
        lines += ["Failed tasks:", ""]
        for (m, e), grp in failures.groupby(["method", "error"]):
            lines.append(f"- {m} ({len(grp)}): {e}")
        lines.append("")
    lines += ["## What the numbers say", "", *conclusions(tidy, summary, conds, methods), ""]
    text = "\n".join(lines)
    path.write_text(text, encoding="utf-8")
    return text


def plot(summary: pd.DataFrame, conds, methods, folder: Path, prefix: str = "") -> list[Path]:
    """Two figures, one panel per factor: regret against the factor's level per method (error
    bars: one standard error), filters in ``filters.png``, smoothers and static methods (with
    Elo and the EKF for reference) in ``smoothers.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = summary.set_index(["condition", "method"])
    base = next(c for c in conds if c["factor"] is None)
    factors = [f for f in FACTORS if any(c["factor"] == f for c in conds)]
    paths = []
    groups = {"filters": [m for m in methods if kind(m) == "filter"],
              "smoothers": [m for m in methods if kind(m) != "filter"] + [m for m in ("elo", "ekf") if m in methods]}
    for fig_name, group in groups.items():
        if not group or not factors:
            continue
        ncol = min(3, len(factors))
        nrow = math.ceil(len(factors) / ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(5.2 * ncol, 3.8 * nrow), squeeze=False)
        for ax, factor in zip(axes.flat, factors):
            points = sorted([(c["params"][factor], c["name"]) for c in conds if c["factor"] == factor]
                            + [(base["params"][factor], "base")])
            x = np.arange(len(points))
            colours = plt.get_cmap("tab20").colors
            for j, m in enumerate(group):
                y = [1000 * s.loc[(n, m), "regret"] if (n, m) in s.index else np.nan for _, n in points]
                e = [1000 * s.loc[(n, m), "se"] if (n, m) in s.index else np.nan for _, n in points]
                style = "--" if fig_name == "smoothers" and kind(m) == "filter" else "-"
                # spread the points a little sideways so that error bars of close methods stay apart
                ax.errorbar(x + (j - len(group) / 2) * 0.02, y, yerr=np.nan_to_num(e), marker="osD^v<>"[j % 7],
                            ms=3, ls=style, lw=1, capsize=2, label=m, color=colours[(2 * j) % 20 + (j >= 10)])
            ax.set_xticks(x, [f"{lv:g}" + (" (base)" if n == "base" else "") for lv, n in points], fontsize=8)
            ax.set_xlabel(FACTORS[factor][1])
            ax.set_ylabel("regret (milli-nats)")
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(factors):]:
            ax.axis("off")
        fig.suptitle(f"Regret against the true probabilities: {fig_name}", fontsize=11)
        fig.tight_layout()
        handles, labels = axes.flat[0].get_legend_handles_labels()
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(len(labels), 4 if ncol == 1 else 8), fontsize=8, frameon=False)
        path = folder / f"{prefix}{fig_name}.png"
        fig.savefig(path, dpi=160, bbox_inches="tight")
        plt.close(fig)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------- the command
def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--reduced", action="store_true", help="a tiny study (2 conditions, 2 seeds, 4 cheap methods)")
    p.add_argument("--factors", nargs="+", choices=list(FACTORS), help="only these factors' levels (and the base)")
    p.add_argument("--seeds", type=int, help=f"seeds per condition (default {FULL_SEEDS}; reduced 2)")
    p.add_argument("--methods", nargs="+", help="only these methods")
    p.add_argument("--no-pymc", action="store_true", help="leave the PyMC smoother out")
    p.add_argument("--pymc-seeds", type=int, help=f"seeds of the PyMC smoother (default {PYMC_SEEDS}, at most --seeds)")
    p.add_argument("--n-jobs", type=int, default=None, help="worker processes (-1: one per core; default: this one)")
    p.add_argument("--out", help="resume folder of the study's rows (statespace.study's path=)")
    p.add_argument("--results", default=str(ROOT / "benchmarks" / "results"), help="folder of the CSV and Markdown")
    p.add_argument("--figures", default=str(ROOT / "docs" / "_static" / "which_filter_when"), help="folder of the PNGs")
    p.add_argument("--tag", help="suffix of the results files (default: none for the full run, 'reduced', 'partial')")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    t_wall = time.perf_counter()
    if args.reduced:
        base, factors = REDUCED_BASE, {REDUCED_FACTOR[0]: (REDUCED_FACTOR[1], FACTORS[REDUCED_FACTOR[0]][1])}
        names = list(args.methods or REDUCED_METHODS)
        n_seeds = args.seeds or 2
    else:
        base = BASE
        factors = {f: FACTORS[f] for f in (args.factors or FACTORS)}
        names = list(args.methods or (FILTERS + SMOOTHERS + STATIC))
        if args.no_pymc and "pymc" in names:
            names.remove("pymc")
        n_seeds = args.seeds or FULL_SEEDS
    conds = conditions(base, factors)
    seeds = list(range(n_seeds))
    methods = build_methods(names)
    pymc_conditions = [c for c in PYMC_CONDITIONS if c in {d["name"] for d in conds}] if "pymc" in methods else []
    pymc_seeds = list(range(min(args.pymc_seeds or PYMC_SEEDS, n_seeds))) if pymc_conditions else []
    print(f"which filter when: {len(conds)} conditions x {n_seeds} seeds, {len(methods)} methods"
          + (f" (pymc on {', '.join(pymc_conditions)} x {len(pymc_seeds)} seeds)" if pymc_conditions else ""),
          flush=True)
    warm = 0.0
    if args.n_jobs is not None and args.n_jobs != 1:
        warm = warm_up(methods)
        print(f"warm-up (every method compiled once in this process): {warm:,.1f} s", flush=True)
    tidy = run(conds, methods, seeds, pymc_conditions=pymc_conditions, pymc_seeds=pymc_seeds, n_jobs=args.n_jobs,
               out=args.out, progress=args.progress)
    summary = summarise(tidy)
    order = [m for m in FILTERS + SMOOTHERS + STATIC if m in methods]
    task_seconds = float(np.nansum(tidy["fit_seconds"]) + np.nansum(tidy["tune_seconds"]))
    wall = time.perf_counter() - t_wall
    full = (not args.reduced and not args.factors and not args.methods and not args.no_pymc
            and n_seeds >= FULL_SEEDS and len(pymc_seeds) >= PYMC_SEEDS)
    partial = ""
    if not full:
        partial = ("reduced run (2 small conditions, the test suite's)" if args.reduced else
                   f"{'factors ' + ', '.join(factors) if args.factors else 'all factors'}, {n_seeds} seeds, "
                   f"{'methods ' + ', '.join(order) if args.methods or args.no_pymc else 'all methods'}"
                   + (f" (PyMC on {len(pymc_seeds)} seed{'s' if len(pymc_seeds) != 1 else ''})" if pymc_seeds else ""))
    tag = args.tag if args.tag is not None else ("reduced" if args.reduced else "" if full else "partial")
    date = _dt.date.today().isoformat()
    results, figures = Path(args.results), Path(args.figures)
    results.mkdir(parents=True, exist_ok=True)
    figures.mkdir(parents=True, exist_ok=True)
    stem = f"which_filter_when-{date}" + (f"-{tag}" if tag else "")
    tidy.to_csv(results / f"{stem}.csv", index=False)
    command = "python examples/which_filter_when.py " + " ".join(sys.argv[1:] if argv is None else argv)
    info = {"label": "full run" if full else "partial run" if not args.reduced else "reduced run",
            "command": command.strip(), "date": date, "leagues": len(conds) * n_seeds, "seeds": n_seeds,
            "pymc_conditions": pymc_conditions, "pymc_seeds": len(pymc_seeds), "tasks": len(tidy),
            "failed": int(tidy["error"].notna().sum()), "task_seconds": task_seconds, "wall": wall,
            "n_jobs": args.n_jobs or 1, "partial": partial, "warm": warm, "ran": tidy.attrs.get("ran", len(tidy)), "estimate": None if args.reduced else full_run_estimate(tidy, conds)}
    md = results / f"{stem}.md"
    write_markdown(md, tidy, summary, conds, order, info)
    prefix = "reduced-" if args.reduced else ""
    pngs = plot(summary, conds, order, figures, prefix)
    if not args.reduced:  # the file the docs page includes
        (results / "which_filter_when-latest.md").write_text(md.read_text(encoding="utf-8"), encoding="utf-8")
    print(results_table(summary, conds, order))
    print(f"\ntasks: {len(tidy)} ({info['failed']} failed); fit + tune seconds: {task_seconds:,.1f} "
          f"({task_seconds / 3600:.3f} CPU-hours); / 16 cores: {task_seconds / 16:,.1f} s; wall {wall:,.1f} s")
    if info["estimate"] is not None and not full:
        steady, one_off = info["estimate"]
        print(f"full design extrapolated from this run: {steady:,.0f} s of tasks ({steady / 3600:.2f} CPU-hours; "
              f"/ 16 cores: {steady / 16 / 60:.1f} minutes) after a warm-up compiling once ({one_off:,.0f} s here)")
    print(f"wrote {results / (stem + '.csv')}, {md}" + "".join(f", {p}" for p in pngs))
    return 0


if __name__ == "__main__":
    # one compute thread per process: the study's workers are the parallelism, and a task's
    # seconds are then its CPU seconds (set before numba and BLAS are first imported)
    for var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    sys.exit(main())
