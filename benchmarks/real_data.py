"""Every rating method of the project on four real data sets, scored on the last 10% of games,
against the best forecasts measured before (the tables of docs/results.md).

What it measures, for each data set (``nfl``, ``intl_football``, ``england_football``,
``atp_tennis`` under the shared data folder; absent ones are skipped with a message):

- **Filters, online, tuned on the training part only.** ``statespace.compare(methods, games,
  split=0.9, mode="online", tune=True, tune_options={"burn_in": 0.3})``: each method's
  hyperparameters are fitted to the first 90% of the games (by time) by maximising the
  one-step-ahead likelihood, leaving the first 30% of them out of the objective (burn-in), then
  the filter runs through all games and each held-out game is forecast from everything before
  it. Methods: Elo, Glicko, Glicko-2, TrueSkill, Weng–Lin (Bradley–Terry), the EKF of a
  sensible model (logistic link at the Elo scale; draws by a threshold where the data have
  draws, none on ATP; a home advantage where the data have a ``neutral`` column), the same EKF
  with Ornstein–Uhlenbeck mean reversion (``reversion`` tuned too), and — where the data have
  scores — Elo, Glicko and the EKF with mean reversion on margin-weighted games
  (``Games.with_weights(margin=("score_a", "score_b"))``). Weighted games go to a separate
  ``compare`` call with only the methods that honour weights; its rows are merged into the same
  table (the split is by time, so the held-out games are the same, which the script checks).
  Objective: the expected-score log loss, except for methods that forecast draws on data with
  draws (TrueSkill, the EKF with threshold draws), which are tuned on the three-outcome log loss
  (``tune_options["objective"] = "log_loss_3"``, their proper one-step-ahead likelihood): the
  expected score hardly depends on the draw margin, so the expected-score log loss leaves the
  margin loose and it wanders to absurd values (a small table per football data set shows both).
- **Smoothers, walk-forward** (``mode="walk_forward"``): before each block of held-out games
  (``every`` 30 days; a calendar year for England and ATP, where one refit on 170,000+ games takes
  seconds) the smoother is refitted, warm-started, on every game before the block and forecasts
  the block. ``LaplaceSmoother`` with the model of the tuned EKF (its drift, prior variance,
  home advantage and draw margin; no mean reversion, which the smoother does not model), and
  the static ``BradleyTerry`` fit for reference.
- **References**, not tuned: NFL, FiveThirtyEight's published pre-game Elo probabilities
  (``elo_prob1`` of ``fivethirtyeight_nfl_games.csv``, aligned row by row with ``games.csv``) as a
  ``FixedForecast``; international football, plain online ``Elo(k=40, home=100)``; ATP,
  ``Elo(k=24)``; England, the best plain online Elo of K 10/20/40 x home 0/50/100 (picked on the
  held-out games, which favours the reference).
- **England, recent tuning**: the home advantage in English football has shrunk (home wins 51% of
  the training games, 43% of the held-out ones), so settings tuned on the whole training part
  carry a home advantage that is too large. A small extra table tunes the EKF and Elo on the most
  recent 5% of the training games only (``burn_in=0.95``), still never looking at held-out games;
  it is kept out of the main table because the choice was made after seeing the main table.

Printed, as Markdown: one table per data set (log loss and Brier score of the expected score,
accuracy with draws called in the 0.45–0.55 band, the three-outcome log loss where the data have
draws, seconds to run/refit and to tune, and each row's difference in log loss from the best row
with the paired standard error over the same games), the tuned settings, then the "beat the best
measured forecast" table; for NFL and international football the ablation of the EKF (what each
addition to the model buys, with paired standard errors) and the draw-margin objective table; for
England the recent-tuning table.

Usage::

    python benchmarks/real_data.py                          # all four data sets (~4 minutes, 2 cores)
    python benchmarks/real_data.py --datasets nfl,atp_tennis
    python benchmarks/real_data.py --datasets nfl --quick   # filters and references only (smoke test)
    python benchmarks/real_data.py /path/to/data            # another data root
    python benchmarks/real_data.py --datasets atp_tennis --every month   # monthly refits (~3 minutes)

Exit status: 0, or 2 when no data set is found.
"""

from __future__ import annotations

import os

# One BLAS thread: the Laplace smoother's conjugate-gradient steps are vector operations that
# gain nothing from OpenBLAS threads (measured: the same wall time at half the CPU), and on a
# busy machine the threads made some refits five to ten times slower. Set before NumPy loads.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import statespace  # noqa: E402
from statespace import ELO_SCALE, FixedForecast, Games, SkillModel, Threshold, metrics  # noqa: E402
from filters import EKF, Elo, Glicko, Glicko2, TrueSkill, WengLin  # noqa: E402
from smoothers import BradleyTerry, LaplaceSmoother  # noqa: E402

DATA_ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DATASETS = ("nfl", "intl_football", "england_football", "atp_tennis")
MARGIN = ("score_a", "score_b")
BURN_IN = 0.3
REVERSION_START = 1e-3  # per day; a model with reversion > 0 has it tuned too


@dataclass(frozen=True)
class Setup:
    """What each data set gets: walk-forward block length, the reference forecast and the best
    log loss measured before this script (on the same last 10%, expected-score log loss)."""

    every: object
    reference: str
    measured: float | None = None
    measured_by: str = ""
    measured_ll3: tuple[float, str] | None = None


SETUPS = {
    "nfl": Setup(30, "FiveThirtyEight", 0.6322, "FiveThirtyEight's published Elo"),
    "intl_football": Setup(30, "Elo k=40 home=100", 0.5485, "plain online Elo K 40 home 100",
                           (0.8825, "kickscore, ternary model")),
    "england_football": Setup("year", "best plain Elo (K 10/20/40 x home 0/50/100)"),
    "atp_tennis": Setup("year", "Elo k=24", 0.6285, "plain online Elo K 24"),
}


@dataclass
class Row:
    """One forecaster's held-out forecasts and costs (rows of several ``compare`` calls merge)."""

    name: str
    proba: np.ndarray
    kind: str  # "filter", "smoother", "reference"
    fit_seconds: float = float("nan")
    tune_seconds: float = float("nan")
    settings: dict = field(default_factory=dict)
    at_bound: tuple = ()  # tuned settings that ended on a bound of their search box


# ---------------------------------------------------------------------------------------- data
def load(root: Path, name: str) -> Games | None:
    path = root / name / "games.csv"
    if not path.is_file():
        print(f"\n{name}: not found at {path}; skipped", file=sys.stderr)
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", statespace.DroppedRowsWarning)
        games = Games.from_csv(path, errors="drop")  # ATP: 3 rows of a player against himself
    return games


def has_margin(games: Games) -> bool:
    return all(c in games.extra.columns for c in MARGIN)


def fivethirtyeight(root: Path, games: Games) -> FixedForecast:
    """FiveThirtyEight's pre-game P(team1 wins), aligned row by row with nfl/games.csv."""
    src = pd.read_csv(root / "nfl" / "fivethirtyeight_nfl_games.csv")
    if len(src) != len(games.row) + len(games.dropped["row"].unique()):
        raise SystemExit("fivethirtyeight_nfl_games.csv is not aligned with nfl/games.csv")
    frame = games.to_frame()
    same = ((src["team1"].astype(str).to_numpy()[games.row] == frame["a"].to_numpy())
            & (src["team2"].astype(str).to_numpy()[games.row] == frame["b"].to_numpy()))
    if not same.all():
        raise SystemExit(f"fivethirtyeight_nfl_games.csv: teams differ from games.csv in {int((~same).sum())} rows")
    return FixedForecast(src["elo_prob1"].to_numpy(float)[games.row], games, name="FiveThirtyEight")


def draw_start(train: Games, scale: float = ELO_SCALE) -> float:
    """Threshold margin at which two equal competitors draw as often as in the training games:
    P(draw) = 2 F(m / s) - 1 for the logistic F, so m = s logit((1 + p) / 2)."""
    p = float(np.mean(train.score == 0.5))
    p = min(max(p, 1e-3), 0.9)
    q = (1.0 + p) / 2.0
    return scale * math.log(q / (1.0 - q))


def describe_draw(model: SkillModel) -> str:
    d = model.draw
    if isinstance(d, Threshold):
        return f"threshold, margin {d.margin:.4g}"
    return {"NoDraw": "none", "HalfWin": "half a win"}.get(type(d).__name__, repr(d))


def ekf_model(train: Games, draw: str, home: bool, reversion: float) -> SkillModel:
    """The EKF's model with starting values for tuning: logistic at the Elo scale, prior
    N(1500, 200^2), drift 10 per day, home 50, the draw margin from the training draw rate."""
    d = ("threshold", draw_start(train)) if draw == "threshold" else draw
    return SkillModel("logistic", ELO_SCALE, 1500.0, 200.0**2, 10.0, d, 50.0 if home else 0.0, reversion)


# ---------------------------------------------------------------------------------------- running
class Runner:
    """Runs ``compare`` calls on one data set and collects their rows (checking that every call
    scores the same held-out games)."""

    def __init__(self, games: Games, split: float, quick: bool):
        self.games = games
        self.split = split
        self.quick = quick
        self.train, self.test = games.split(split)
        self.weighted = games.with_weights(margin=MARGIN) if has_margin(games) else None
        self.cache: dict = {}

    def compare(self, methods: dict, *, kind: str, weighted: bool = False, tune: bool = True, params=None,
                objective: str = "log_loss", mode: str = "online", every=None) -> list[Row]:
        games = self.weighted if weighted else self.games
        # the objective is always named: the library's default (log_loss_3 for any model with a
        # draw margin) would tune TrueSkill on ATP, which has no draws, on log_loss_3
        options = {"burn_in": BURN_IN, "objective": objective}
        if params is not None:
            options["params"] = params
        kwargs = {"every": every} if every is not None else {}
        table = statespace.compare(methods, games, split=self.split, mode=mode, tune=tune,
                                   tune_options=options if tune else None, **kwargs)
        test = table.attrs["test"]
        if not (np.array_equal(test.row, self.test.row) and np.array_equal(test.score, self.test.score)):
            raise RuntimeError("a compare call scored different held-out games")
        rows = []
        tuned = table.attrs.get("tuned", {})
        for name in methods:
            result = tuned.get(name)
            rows.append(Row(name, table.attrs["proba"][name], kind, float(table.loc[name, "fit_seconds"]),
                            float(table.loc[name, "tune_seconds"]) if "tune_seconds" in table else float("nan"),
                            dict(result.params) if result is not None else {},
                            at_bound(methods[name], self.train, result)))
            # the merged table recomputes the metrics: check they agree with compare's
            ll = metrics.log_loss(self.test.score, rows[-1].proba)
            assert abs(ll - table.loc[name, "log_loss"]) < 1e-12, (name, ll)
        return rows

    def ekf(self, draw: str, home: bool, reversion: bool, weighted: bool, name: str,
            objective: str | None = None) -> Row:
        """The EKF of one model variant, tuned (cached: the main table and the ablation share rows).
        ``objective``: by default the three-outcome log loss when the model forecasts draws
        (threshold), else the expected-score log loss."""
        if objective is None:
            objective = "log_loss_3" if draw == "threshold" else "log_loss"
        key = (draw, home, reversion, weighted, objective)
        if key not in self.cache:
            model = ekf_model(self.train, draw, home, REVERSION_START if reversion else 0.0)
            params = ["drift", "prior_var"]
            if home:
                params.append("home")
            if reversion:
                params.append("reversion")
            if draw == "threshold":
                params.append("draw_param")
            (row,) = self.compare({name: EKF(model)}, kind="filter", weighted=weighted, params=params,
                                  objective=objective)
            row.settings = {"model": dataclasses.replace(model, **{k: v for k, v in row.settings.items()
                                                                   if k in ("drift", "prior_var", "home",
                                                                            "reversion")}),
                            **row.settings}
            if draw == "threshold":
                row.settings["model"] = dataclasses.replace(row.settings["model"],
                                                            draw=("threshold", row.settings["draw_param"]))
            self.cache[key] = row
        row = self.cache[key]
        return dataclasses.replace(row, name=name)


def at_bound(method, train: Games, result) -> tuple:
    """Names of tuned settings within 0.1% (log scale for positive boxes) of their search bounds."""
    if result is None:
        return ()
    box = method.tunable(train)
    out = []
    for k, v in result.params.items():
        lo, hi = box.get(k, (-np.inf, np.inf))
        if lo > 0:
            near = min(abs(math.log(v / lo)), abs(math.log(hi / v))) < 1e-3
        else:
            near = min(abs(v - lo), abs(hi - v)) < 1e-3 * (hi - lo)
        if near:
            out.append(k)
    return tuple(out)


def summary(rows: list[Row], score: np.ndarray) -> pd.DataFrame:
    """One line per row, best log loss first, with the paired difference from the best."""
    loss = {r.name: metrics.log_loss(score, r.proba, per_game=True) for r in rows}
    out = pd.DataFrame({
        "kind": [r.kind for r in rows],
        "log_loss": [loss[r.name].mean() for r in rows],
        "brier": [metrics.brier(score, r.proba) for r in rows],
        "accuracy": [metrics.accuracy(score, r.proba) for r in rows],
        "log_loss_3": [metrics.log_loss_3(score, r.proba) for r in rows],
        "fit_seconds": [r.fit_seconds for r in rows],
        "tune_seconds": [r.tune_seconds for r in rows],
    }, index=pd.Index([r.name for r in rows], name="method"))
    if out.index.duplicated().any():
        raise RuntimeError(f"duplicate row names: {out.index[out.index.duplicated()].tolist()}")
    best = out["log_loss"].idxmin()
    diffs = [metrics.paired_difference(loss[n], loss[best]) for n in out.index]
    out["delta"] = [d for d, _ in diffs]
    out["delta_se"] = [0.0 if n == best else s for n, (_, s) in zip(out.index, diffs)]
    out.attrs["loss"] = loss
    return out.sort_values("log_loss", kind="stable")


# ---------------------------------------------------------------------------------------- printing
def _pm(d: float, se: float) -> str:
    d = 0.0 if round(d, 4) == 0 else d
    return f"{d:+.4f} ± {se:.4f}"


def _sec(x: float) -> str:
    if not np.isfinite(x):
        return "–"
    return f"{x:.3f}" if x < 1 else (f"{x:.2f}" if x < 10 else f"{x:.1f}")


def markdown(table: pd.DataFrame, draws: bool) -> str:
    head = ["method", "kind", "log loss", "Brier", "accuracy"] + (["3-outcome log loss"] if draws else []) + [
        "run s", "tune s", "Δ log loss ± se"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    best = table.index[0]
    for name, r in table.iterrows():
        cells = [name, r["kind"], f"{r['log_loss']:.4f}", f"{r['brier']:.4f}", f"{r['accuracy']:.4f}"]
        if draws:
            cells.append("n/a" if not np.isfinite(r["log_loss_3"]) else f"{r['log_loss_3']:.4f}")
        cells += [_sec(r["fit_seconds"]), _sec(r["tune_seconds"]),
                  "best" if name == best else _pm(r["delta"], r["delta_se"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(v) -> str:
    if isinstance(v, SkillModel):
        return ""
    v = float(v)
    return f"{v:.3g}" if abs(v) < 1e-2 or abs(v) >= 1e4 else f"{v:.4g}"


def settings_lines(rows: list[Row]) -> str:
    out = []
    for r in rows:
        shown = {k: v for k, v in r.settings.items() if k != "model"}
        if shown:
            out.append(f"- {r.name}: " + ", ".join(f"{k} {_fmt(v)}" + (" (at its bound)" if k in r.at_bound else "")
                                                   for k, v in shown.items()))
    return "\n".join(out)


# ---------------------------------------------------------------------------------------- one data set
def measure(name: str, games: Games, root: Path, args) -> dict:
    t_start = time.perf_counter()
    setup = SETUPS[name]
    every = args.every if args.every is not None else setup.every
    run = Runner(games, args.split, args.quick)
    train, test = run.train, run.test
    draws = bool(np.any(games.score == 0.5))
    home = not bool(games.neutral.all())
    draw = "threshold" if draws else "none"
    span = games.time[games.order[[0, -1]]].astype("datetime64[D]")
    tspan = test.time[test.order[[0, -1]]].astype("datetime64[D]")
    print(f"\n### {name}\n")
    dropped = games.dropped["row"].nunique()
    print(f"{len(games):,} games{f' (after dropping {dropped} invalid rows)' if dropped else ''}, "
          f"{games.n_players:,} competitors, {span[0]} to {span[1]}; draws {np.mean(games.score == 0.5):.1%}; "
          f"home advantage: {'yes' if home else 'no (no neutral column)'}; scores: "
          f"{'yes' if run.weighted is not None else 'no'}. Scored: the last {1 - args.split:.0%}, "
          f"{len(test):,} games from {tspan[0]} to {tspan[1]}. EKF draw model: {draw}.\n")

    rows: list[Row] = []
    # filters, tuned on the training part, online
    p_draw = float(np.mean(train.score == 0.5))
    rows += run.compare({
        "Elo": Elo(k=20, home=50.0 if home else 0.0),
        "Glicko": Glicko(home=50.0 if home else 0.0),
        "Glicko-2": Glicko2(home=50.0 if home else 0.0),
    }, kind="filter")
    # TrueSkill forecasts draws: where there are some, tuned on the three-outcome log loss
    rows += run.compare({"TrueSkill": TrueSkill(draw_probability=p_draw)}, kind="filter",
                        objective="log_loss_3" if draws else "log_loss")
    rows += run.compare({"Weng–Lin BT": WengLin("bradley_terry")}, kind="filter")
    rows.append(run.ekf(draw, home, False, False, "EKF"))
    rows.append(run.ekf(draw, home, True, False, "EKF + reversion"))
    if run.weighted is not None:
        rows += run.compare({"Elo, margin-weighted": Elo(k=20, home=50.0 if home else 0.0),
                             "Glicko, margin-weighted": Glicko(home=50.0 if home else 0.0)},
                            kind="filter", weighted=True)
        rows.append(run.ekf(draw, home, True, True, "EKF + reversion, margin-weighted"))

    # references, not tuned
    if name == "nfl":
        ref = run.compare({"FiveThirtyEight": fivethirtyeight(root, games)}, kind="reference", tune=False)
    elif name == "intl_football":
        ref = run.compare({"Elo k=40 home=100": Elo(k=40, home=100)}, kind="reference", tune=False)
    elif name == "atp_tennis":
        ref = run.compare({"Elo k=24": Elo(k=24)}, kind="reference", tune=False)
    else:
        grid = {f"Elo k={k} home={h}": Elo(k=k, home=h) for k in (10, 20, 40) for h in (0, 50, 100)}
        cands = run.compare(grid, kind="reference", tune=False)
        best = min(cands, key=lambda r: metrics.log_loss(test.score, r.proba))
        ref = [best]
    rows += ref

    # smoothers, walk-forward
    smoother_seconds = 0.0
    if not args.quick and not args.no_smoothers:
        model = next(r for r in rows if r.name == "EKF").settings["model"]
        bt_model = dataclasses.replace(model, drift=0.0, prior_var=ELO_SCALE**2)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # CG tolerance notes on the biggest refits
            smoothed = run.compare({"Laplace smoother (EKF's model)": LaplaceSmoother(model),
                                    "Bradley–Terry (static)": BradleyTerry(bt_model)},
                                   kind="smoother", tune=False, mode="walk_forward", every=every)
        smoother_seconds = time.perf_counter() - t0
        rows += smoothed

    table = summary(rows, test.score)
    print(markdown(table, draws))
    notes = [f"run s: seconds of the online run through all {len(games):,} games (filters) or of all "
             f"walk-forward refits (smoothers, every {every}{' days' if not isinstance(every, str) else ''})",
             "tune s: seconds to tune on the training part"]
    print("\n" + "; ".join(notes) + ".")
    print("\nTuned settings (EKF: drift and prior_var in rating points² per day, home and draw_param in "
          "rating points, reversion per day; Glicko c and home in rating points; TrueSkill and "
          "Weng–Lin in their own units, mu 25):\n")
    print(settings_lines(rows))
    if "Bradley–Terry (static)" in table.index:
        print(f"\nSmoothers: LaplaceSmoother with the tuned EKF's model (drift {model.drift:.4g}, prior_var "
              f"{model.prior_var:.4g}, home {model.home:.4g}, draws: {describe_draw(model)}); Bradley–Terry: the same "
              f"model with drift 0 and prior sd {ELO_SCALE:.1f}.")

    result = {"name": name, "table": table, "rows": rows, "test": test, "setup": setup,
              "ref": ref[0].name, "draws": draws}
    if not args.quick and name == "england_football":
        recent_tuning(run, draw, table)
    if not args.quick and not args.no_ablation and name in ("nfl", "intl_football"):
        result["ablation"] = ablation(name, run, home)
    seconds = time.perf_counter() - t_start
    result["seconds"] = seconds
    print(f"\n{name}: {seconds:.0f} s in all" + (f" (smoothers {smoother_seconds:.0f} s)" if smoother_seconds else ""))
    return result


def ablation(name: str, run: Runner, home: bool) -> list[tuple[str, Row]]:
    """EKF base (no home) -> + home -> + mean reversion -> + margin weights (NFL) / + threshold draws."""
    if name == "nfl":
        steps = [("EKF base (threshold draws, no home)", ("threshold", False, False, False)),
                 ("+ home advantage", ("threshold", True, False, False)),
                 ("+ mean reversion", ("threshold", True, True, False)),
                 ("+ margin-of-victory weights", ("threshold", True, True, True))]
    else:
        steps = [("EKF base (draws as half a win, no home)", ("half", False, False, False)),
                 ("+ home advantage", ("half", True, False, False)),
                 ("+ mean reversion", ("half", True, True, False)),
                 ("+ threshold draws", ("threshold", True, True, False))]
    out = [(label, run.ekf(*key, name=label)) for label, key in steps]
    score = run.test.score
    print(f"\n#### Ablation, {name}: what each addition to the EKF buys\n")
    print("Each step is tuned on the training part (burn-in 30%) and scored online on the same "
          f"{len(score):,} held-out games; Δ is against the step before, with its paired standard error.\n")
    print("| step | log loss | 3-outcome log loss | Δ log loss ± se | Δ from base ± se |")
    print("|---|---|---|---|---|")
    base = metrics.log_loss(score, out[0][1].proba, per_game=True)
    prev = None
    for label, row in out:
        loss = metrics.log_loss(score, row.proba, per_game=True)
        ll3 = metrics.log_loss_3(score, row.proba)
        step = "–" if prev is None else _pm(*metrics.paired_difference(loss, prev))
        total = "–" if prev is None else _pm(*metrics.paired_difference(loss, base))
        print(f"| {label} | {loss.mean():.4f} | {'n/a' if not np.isfinite(ll3) else f'{ll3:.4f}'} | {step} | {total} |")
        prev = loss
    print("\nTuned settings:\n")
    print(settings_lines([r for _, r in out]))

    # the draw margin barely moves the expected score, so the expected-score log loss leaves it loose
    print(f"\n#### Tuning objective of the draw margin, {name}\n")
    print("The EKF with threshold draws and home advantage (+ mean reversion, and margin weights where "
          "the data have scores), tuned on the training part with each objective:\n")
    print("| model | tuned on | log loss | 3-outcome log loss | draw margin |")
    print("|---|---|---|---|---|")
    variants = [("EKF", (True, False, False)), ("EKF + reversion", (True, True, False))]
    if run.weighted is not None:
        variants.append(("EKF + reversion, margin-weighted", (True, True, True)))
    for label, (h, rev, w) in variants:
        for objective in ("log_loss", "log_loss_3"):
            row = run.ekf("threshold", h and home, rev, w, label, objective=objective)
            ll3 = metrics.log_loss_3(score, row.proba)
            print(f"| {label} | {objective} | {metrics.log_loss(score, row.proba):.4f} | {ll3:.4f} | "
                  f"{row.settings['draw_param']:.4g} |")
    return out


def recent_tuning(run: Runner, draw: str, table: pd.DataFrame) -> None:
    """England: the home advantage has shrunk; tune on the most recent training games only."""
    train, test = run.train, run.test
    cut = len(train) - int(round(0.95 * len(train)))
    recent = train.take(np.sort(train.order[-cut:]))
    tspan = recent.time[recent.order[[0, -1]]].astype("datetime64[D]")
    share = lambda g: f"{np.mean(g.score == 1):.1%} / {np.mean(g.score == 0.5):.1%} / {np.mean(g.score == 0):.1%}"
    print("\n#### England: a shrinking home advantage\n")
    print(f"Home win / draw / away win: training games {share(train)}; their last 5% ({tspan[0]} to "
          f"{tspan[1]}) {share(recent)}; held-out games {share(test)}. Tuned with `burn_in=0.95` (the "
          f"objective counts only the last 5% of the training games; the filter still runs through all of "
          f"them), scored online as above:\n")
    model = ekf_model(train, draw, True, 0.0)
    objective = "log_loss_3" if draw == "threshold" else "log_loss"
    rows = []
    for label, method, obj in (("EKF, tuned on recent games", EKF(model), objective),
                               ("Elo, tuned on recent games", Elo(k=20, home=50.0), "log_loss")):
        t = statespace.compare({label: method}, run.games, split=run.split, mode="online", tune=True,
                               tune_options={"burn_in": 0.95, "objective": obj})
        result = t.attrs["tuned"][label]
        rows.append(Row(label, t.attrs["proba"][label], "filter", float(t.loc[label, "fit_seconds"]),
                        float(t.loc[label, "tune_seconds"]), dict(result.params), at_bound(method, train, result)))
    score = test.score
    loss = table.attrs["loss"]
    print("| method | log loss | Δ vs the same method tuned with burn-in 0.3 ± se | Δ vs the main table's best ± se |")
    print("|---|---|---|---|")
    for row, base in zip(rows, ("EKF", "Elo")):
        ll = metrics.log_loss(score, row.proba, per_game=True)
        print(f"| {row.name} | {ll.mean():.4f} | {_pm(*metrics.paired_difference(ll, loss[base]))} | "
              f"{_pm(*metrics.paired_difference(ll, loss[table.index[0]]))} |")
    print("\nTuned settings:\n")
    print(settings_lines(rows))


def beat_table(results: list[dict]) -> None:
    print("\n### Beat the best measured forecast\n")
    print("Last 10% of games by time, expected-score log loss (a draw as the target 0.5). \"Our best\": "
          "the best row of this script's methods (filters and smoothers, references excluded) on these "
          "games; \"reference\": the best forecast measured before, recomputed here on the same games; "
          "the difference is ours minus the reference, with the paired standard error over the same games.\n")
    print("| data set | test games | our best | log loss | reference | log loss (recomputed) | measured before "
          "| ours − reference ± se |")
    print("|---|---|---|---|---|---|---|---|")
    for res in results:
        t, loss, setup = res["table"], res["table"].attrs["loss"], res["setup"]
        ours = t[t["kind"] != "reference"].index[0]
        ref = res["ref"]
        d, se = metrics.paired_difference(loss[ours], loss[ref])
        measured = f"{setup.measured:.4f} ({setup.measured_by})" if setup.measured is not None else "not yet measured"
        print(f"| {res['name']} | {len(res['test']):,} | {ours} | {t.loc[ours, 'log_loss']:.4f} | {ref} | "
              f"{t.loc[ref, 'log_loss']:.4f} | {measured} | {_pm(d, se)} |")
    for res in results:
        setup = res["setup"]
        if setup.measured_ll3 is not None:
            t = res["table"]
            ll3 = t[(t["kind"] != "reference") & np.isfinite(t["log_loss_3"])].sort_values("log_loss_3")
            if len(ll3):
                value, by = setup.measured_ll3
                best = ll3.index[0]
                print(f"\n{res['name']}, three-outcome log loss: our best {ll3.iloc[0]['log_loss_3']:.4f} ({best}) "
                      f"against {value:.4f} ({by}; its per-game forecasts are not available here, so no paired "
                      f"standard error): {ll3.iloc[0]['log_loss_3'] - value:+.4f}.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Every method on the real data sets, against the best measured forecasts.")
    ap.add_argument("data", nargs="?", default=str(DATA_ROOT),
                    help=f"data root holding <name>/games.csv (default: {DATA_ROOT})")
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help=f"comma-separated data sets (default: {','.join(DATASETS)})")
    ap.add_argument("--split", type=float, default=0.9, help="share of games (by time) before the scored part")
    ap.add_argument("--every", default=None,
                    help="walk-forward block for the smoothers: days, or week/month/year (default: per data set)")
    ap.add_argument("--quick", action="store_true",
                    help="filters and references only: no smoothers, no ablation (a smoke test)")
    ap.add_argument("--no-smoothers", action="store_true", help="leave out the walk-forward smoothers")
    ap.add_argument("--no-ablation", action="store_true", help="leave out the ablation tables")
    args = ap.parse_args(argv)
    if args.every is not None and args.every not in ("week", "month", "year"):
        args.every = float(args.every)

    t0 = time.perf_counter()
    print(f"## statespace {statespace.__version__}: real data, last {1 - args.split:.0%} scored\n")
    command = " ".join(["python benchmarks/real_data.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"Command: `{command}`"
          f"  \nPython {platform.python_version()}, NumPy {np.__version__}, pandas {pd.__version__}, "
          f"{platform.machine()}")
    root = Path(args.data).expanduser()
    results = []
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        if name not in SETUPS:
            print(f"\n{name}: unknown data set (known: {', '.join(DATASETS)}); skipped", file=sys.stderr)
            continue
        games = load(root, name)
        if games is None:
            continue
        results.append(measure(name, games, root, args))
    if not results:
        print(f"\nno data set found under {root} (looked for {args.datasets}); pass the data root as an argument",
              file=sys.stderr)
        return 2
    beat_table(results)
    print(f"\nTotal: {time.perf_counter() - t0:.0f} s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
