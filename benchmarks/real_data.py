"""Every rating method of the project on four real data sets, scored on the last 10% of games,
against the best forecasts measured before (the tables of docs/results.md).

What it measures, for each data set (``nfl``, ``intl_football``, ``england_football``,
``atp_tennis`` under the shared data folder; absent ones are skipped with a message):

- **Filters, online, tuned on the training part only.** ``statespace.compare(methods, games,
  split=0.9, mode="online", tune=True, tune_options={"burn_in": 0.3})``: each method's
  hyperparameters are fitted to the first 90% of the games (by time) by maximising the
  one-step-ahead likelihood, leaving the first 30% of them out of the objective (burn-in), then
  the filter runs through all games and each held-out game is forecast from everything before
  it. Methods: Elo, Glicko, Glicko-2, TrueSkill, Weng–Lin (Bradley–Terry), and where the data
  have scores Elo and Glicko on ``log(1 + margin)`` weights
  (``Games.with_weights(margin=("score_a", "score_b"))``). TrueSkill, which forecasts draws, is
  tuned on the three-outcome log loss where the data have draws (``objective="log_loss_3"``), the
  others on the expected-score log loss.
- **Our pick: ``statespace.auto``, chosen on the training games.** The row ``auto`` of the same
  ``compare`` call: ``compare`` hands ``statespace.Auto().tune`` the training part only, which
  tunes every candidate EKF variant of its search (observation Outcome or, where the data have
  scores, Margin; fixed or drifting home advantage where the data have a ``neutral`` column; mean
  reversion; margin-weight powers 0, 0.5 and 1) and keeps the one with the lowest one-step-ahead
  log-likelihood on the training games after the burn-in (the three-outcome log loss where the
  data have draws); ``compare`` then runs the chosen filter online through all games. No
  data-set-specific choice is left in this script. Every candidate of the search is a row of
  the main table too ("EKF <candidate>", its tuned settings run online), and the table of
  candidates shows what each buys on the held-out games against the pick (the ablation of the
  model's additions: home advantage, reversion, margin weights and their power, observation).
  The "beat the best" table compares the pick, not the best row on the held-out games (which is
  shown too).
- **Smoothers, walk-forward** (``mode="walk_forward"``): before each block of held-out games
  (``every`` 7 days on the NFL, 30 on international football, a calendar year on England and ATP,
  where one refit on 170,000+ games takes seconds) the smoother is refitted, warm-started, on every
  game before the block and forecasts the block. ``LaplaceSmoother`` with the model of the EKF
  candidate of auto's search that is best on the training games among those it can fit (it
  honours game weights, Margin observations and
  mean reversion; it refuses a drifting home advantage), on the same weighted games (auto's
  candidates are tuned, so this costs no extra tuning); on the NFL
  also with its drift chosen by type-II maximum likelihood on the training games; and the static
  ``BradleyTerry`` fit for reference.
- **References**, not tuned: NFL, FiveThirtyEight's published pre-game Elo probabilities
  (``elo_prob1`` of ``fivethirtyeight_nfl_games.csv``, aligned row by row with ``games.csv``) as a
  ``FixedForecast``; international football, plain online ``Elo(k=40, home=100)``; ATP,
  ``Elo(k=24)``. England has no forecast measured before: its reference is plain Elo tuned on the
  training games like ours (the "Elo" row); the best of a K x home grid of plain Elo picked on the
  held-out games, which favours Elo, is printed as a footnote.

Printed, as Markdown: one table per data set (log loss and Brier score of the expected score,
accuracy with draws called in the 0.45–0.55 band, the three-outcome log loss where the data have
draws, seconds to run/refit and to tune — for the pick, all of auto's choice —, each row's
difference in log loss from the best row with the paired standard error over the same games, and
the training log loss), the tuned settings, auto's candidates (their training score, on which the
pick is chosen, and their held-out scores against the pick with paired standard errors), for NFL
and international football the draw-margin objective table, and at the end the "beat the best
measured forecast" table.

Usage::

    python benchmarks/real_data.py                          # all four data sets
    python benchmarks/real_data.py --datasets nfl,atp_tennis
    python benchmarks/real_data.py --datasets nfl --quick   # filters, auto and references only (smoke test)
    python benchmarks/real_data.py /path/to/data            # another data root
    python benchmarks/real_data.py --datasets atp_tennis --every month   # monthly refits (~5 minutes)

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
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import statespace  # noqa: E402
from statespace import Auto, FixedForecast, Games, SkillModel, Threshold
from statespace.model import metrics  # noqa: E402
from statespace.ensemble.auto import TIE, Candidate, Variant  # noqa: E402

from _common import load_shared  # noqa: E402  (benchmarks/ is the script's folder, first on sys.path)
from filters import Elo, Glicko, Glicko2, TrueSkill, WengLin  # noqa: E402
from smoothers import BradleyTerry, LaplaceSmoother  # noqa: E402

DATA_ROOT = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DATASETS = ("nfl", "intl_football", "england_football", "atp_tennis")
MARGIN = ("score_a", "score_b")
BURN_IN = 0.3


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
    "nfl": Setup(7, "FiveThirtyEight", 0.6322, "FiveThirtyEight's published Elo"),
    "intl_football": Setup(30, "Elo k=40 home=100", 0.5485, "plain online Elo K 40 home 100",
                           (0.8825, "kickscore, ternary model")),
    "england_football": Setup("year", "Elo"),
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
    train_loss: float = float("nan")  # one-step-ahead log loss on the training games after burn-in
    candidate: Candidate | None = None  # the tuned EKF of one of auto's candidates


# ---------------------------------------------------------------------------------------- data
def load(root: Path, name: str) -> Games | None:
    return load_shared(root, name, prefix="\n")


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


def describe_draw(model: SkillModel) -> str:
    d = model.draw
    if not isinstance(model.observation, statespace.Outcome):
        return f"by the {type(model.observation).__name__} observation"
    if isinstance(d, Threshold):
        return f"threshold, margin {d.margin:.4g}"
    return {"NoDraw": "none", "HalfWin": "half a win"}.get(type(d).__name__, repr(d))


def ekf_name(label: str) -> str:
    """Row name of one of auto's candidates."""
    return f"EKF {label}"


def best_candidate(rows: list[Row], choice) -> Row:
    """The best of ``rows`` (some of auto's candidates) on the training games, by auto's own rule: the
    fewest tuned settings among those within ``TIE`` of the lowest training score."""
    score = {r.name: float(choice.table.loc[r.name[len("EKF "):], "train_score"]) for r in rows}
    low = min(score.values())
    return min((r for r in rows if score[r.name] <= low + TIE), key=lambda r: (len(r.settings), score[r.name]))


# ---------------------------------------------------------------------------------------- running
class Runner:
    """Runs ``compare`` calls on one data set and collects their rows (checking that every call
    scores the same held-out games)."""

    def __init__(self, games: Games, split: float, quick: bool):
        self.games = games
        self.split = split
        self.quick = quick
        self.train, self.test = games.split(split)
        self.scores = has_margin(games)
        self.draws = bool(np.any(games.score == 0.5))
        self.home = not bool(games.neutral.all())
        self._weighted: dict = {}
        self.choice = None  # auto's AutoResult

    def weighted(self, power: float | None) -> Games:
        """The games with margin weights of this power (``None``: unweighted)."""
        if power is None:
            return self.games
        if power not in self._weighted:
            self._weighted[power] = self.games.with_weights(margin=MARGIN, power=power)
        return self._weighted[power]

    def compare(self, methods: dict, *, kind: str, games: Games | None = None, tune: bool = True, params=None,
                objective: str | None = "log_loss", mode: str = "online", every=None) -> list[Row]:
        games = self.games if games is None else games
        # the objective is always named (None only for auto, which chooses its own): the library's default
        # (log_loss_3 for any model with a draw margin) would tune TrueSkill on ATP, which has no draws, on log_loss_3
        options = {"burn_in": BURN_IN, "standard_errors": False}
        if objective is not None:
            options["objective"] = objective
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
            if result is not None and not isinstance(methods[name], Auto):
                rows[-1].train_loss = self.train_loss(methods[name].with_params(**result.params), games)
            # the merged table recomputes the metrics: check they agree with compare's
            ll = metrics.log_loss(self.test.score, rows[-1].proba)
            assert abs(ll - table.loc[name, "log_loss"]) < 1e-12, (name, ll)
        return rows

    def train_loss(self, method, games: Games) -> float:
        """Expected-score log loss of ``method``'s one-step-ahead forecasts of the training games
        after the burn-in (the games its tuning scored)."""
        train = games.split(self.split)[0]
        scored = np.sort(train.order[int(round(BURN_IN * len(train))):])
        proba = method.run(train).proba
        return metrics.log_loss(train.score[scored], proba[scored])

    def auto(self) -> list[Row]:
        """``statespace.Auto`` through ``compare(..., tune=True)``: chosen and tuned on the training part
        only, then run online through all games; and every candidate of its search, run online."""
        method = Auto(observations="all")  # Goals too, where the scores are goal counts
        (pick,) = self.compare({"auto": method}, kind="filter", objective=None)
        self.choice = choice = method.last  # what compare's tuning chose (an AutoResult)
        table = choice.table
        rows = []
        for label, method in choice.methods.items():
            if label == choice.chosen:  # compare ran it already, as the row "auto"
                row = dataclasses.replace(pick, tune_seconds=choice.seconds)
            else:
                (row,) = self.compare({label: method}, kind="filter", tune=False)
                row.tune_seconds = float(table.loc[label, "tune_seconds"])
            row.name = ekf_name(label)
            row.settings = method.values()
            row.at_bound = tuple(table.loc[label, "at_bound"])
            row.train_loss = float(table.loc[label, "train_log_loss"])
            row.candidate = method
            rows.append(row)
        return rows


def at_bound(method, train: Games, result) -> tuple:
    """Names of tuned settings within 0.1% (log scale for positive boxes) of their search bounds."""
    if result is None or isinstance(method, Auto):
        return ()
    from filters.tuning import at_bound as near_bounds

    return near_bounds(result.params, method.tunable(train))


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
        "train_loss": [r.train_loss for r in rows],
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


def markdown(table: pd.DataFrame, draws: bool, pick: str | None = None) -> str:
    head = ["method", "kind", "log loss", "Brier", "accuracy"] + (["3-outcome log loss"] if draws else []) + [
        "run s", "tune s", "Δ log loss ± se", "training log loss"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    best = table.index[0]
    for name, r in table.iterrows():
        cells = [name, r["kind"], f"{r['log_loss']:.4f}", f"{r['brier']:.4f}", f"{r['accuracy']:.4f}"]
        if draws:
            cells.append("n/a" if not np.isfinite(r["log_loss_3"]) else f"{r['log_loss_3']:.4f}")
        train = "–" if not np.isfinite(r["train_loss"]) else f"{r['train_loss']:.4f}"
        cells += [_sec(r["fit_seconds"]), _sec(r["tune_seconds"]),
                  "best" if name == best else _pm(r["delta"], r["delta_se"]),
                  f"**{train}** (pick)" if name == pick else train]
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


def _home_path(run: Runner, row: Row) -> str:
    """A drifting home advantage's filtered value at the end of the training games and of all games."""
    cand = row.candidate
    at_train = cand.ekf.home_advantage(cand.run(run.train).state)
    at_end = cand.ekf.home_advantage(cand.run(run.games).state)
    points = cand.variant.observation == "margin"  # points of the score: a few, so more digits

    def f(x):
        return f"{x:.2f}" if points else f"{x:.0f}"

    return (f"{row.name}: the filtered home advantage is {f(at_train[0])} ± {f(at_train[1])} "
            f"{'points of the score' if points else 'rating points'} at the end of the training games and "
            f"{f(at_end[0])} ± {f(at_end[1])} at the end of the held-out games (it started at {f(cand.model.home)} "
            f"with the first game)")


# ---------------------------------------------------------------------------------------- one data set
def measure(name: str, games: Games, root: Path, args) -> dict:
    t_start = time.perf_counter()
    setup = SETUPS[name]
    every = args.every if args.every is not None else setup.every
    run = Runner(games, args.split, args.quick)
    train, test = run.train, run.test
    draws, home = run.draws, run.home
    span = games.time[games.order[[0, -1]]].astype("datetime64[D]")
    tspan = test.time[test.order[[0, -1]]].astype("datetime64[D]")
    print(f"\n### {name}\n")
    dropped = games.dropped["row"].nunique()
    print(f"{len(games):,} games{f' (after dropping {dropped} invalid rows)' if dropped else ''}, "
          f"{games.n_players:,} competitors, {span[0]} to {span[1]}; draws {np.mean(games.score == 0.5):.1%}; "
          f"home advantage: {'yes' if home else 'no (no neutral column)'}; scores: "
          f"{'yes' if run.scores else 'no'}. Scored: the last {1 - args.split:.0%}, "
          f"{len(test):,} games from {tspan[0]} to {tspan[1]}.\n")

    rows: list[Row] = []
    # classic filters, tuned on the training part, online
    p_draw = float(np.mean(train.score == 0.5))
    h0 = 50.0 if home else 0.0
    rows += run.compare({"Elo": Elo(k=20, home=h0), "Glicko": Glicko(home=h0), "Glicko-2": Glicko2(home=h0)},
                        kind="filter")
    # TrueSkill forecasts draws: where there are some, tuned on the three-outcome log loss
    rows += run.compare({"TrueSkill": TrueSkill(draw_probability=p_draw)}, kind="filter",
                        objective="log_loss_3" if draws else "log_loss")
    rows += run.compare({"Weng–Lin BT": WengLin("bradley_terry")}, kind="filter")
    if run.scores:
        rows += run.compare({"Elo, margin-weighted": Elo(k=20, home=h0), "Glicko, margin-weighted": Glicko(home=h0)},
                            kind="filter", games=run.weighted(0.0))

    # our pick: statespace.auto, chosen on the training part inside compare; and every candidate it tuned
    t0 = time.perf_counter()
    candidates = run.auto()
    auto_seconds = time.perf_counter() - t0
    choice = run.choice
    rows += candidates
    pick = next(r for r in candidates if r.name == ekf_name(choice.chosen))

    # references, not tuned
    if name == "nfl":
        ref = run.compare({"FiveThirtyEight": fivethirtyeight(root, games)}, kind="reference", tune=False)
    elif name == "intl_football":
        ref = run.compare({"Elo k=40 home=100": Elo(k=40, home=100)}, kind="reference", tune=False)
    elif name == "atp_tennis":
        ref = run.compare({"Elo k=24": Elo(k=24)}, kind="reference", tune=False)
    else:
        ref = []  # England: plain Elo tuned on the training games (the "Elo" row)
    rows += ref
    ref_name = ref[0].name if ref else setup.reference

    # smoothers, walk-forward, with the model of the best candidate (on the training games) they can fit
    smoother_seconds = 0.0
    smoothed_from = None
    if not args.quick and not args.no_smoothers:
        smoothed_from = best_candidate([r for r in candidates if r.candidate.variant.home != "drifting"], choice)
        cand = smoothed_from.candidate
        model = cand.model
        sgames = cand.weighted(games)  # the weights scaled as on the training games
        bt_model = dataclasses.replace(model, drift=0.0, reversion=0.0, prior_var=model.scale**2)
        # walk-forward refits with the per-competitor block variances: the log losses are within 0.0002
        # of those with exact variances (measured on all four data sets), at a third of the time on England
        methods = {f"Laplace smoother ({smoothed_from.name})": LaplaceSmoother(model, variances="blocks"),
                   "Bradley–Terry (static)": BradleyTerry(bt_model)}
        t0 = time.perf_counter()
        if name == "nfl":  # the smoother's own choice of drift: type-II maximum likelihood on the training games
            auto_drift = LaplaceSmoother(model, drift="auto").fit(sgames.split(run.split)[0])
            methods["Laplace smoother, type-II drift"] = LaplaceSmoother(
                dataclasses.replace(model, drift=auto_drift.model.drift), variances="blocks")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # CG tolerance notes on the biggest refits
            rows += run.compare(methods, kind="smoother", games=sgames, tune=False, mode="walk_forward", every=every)
        smoother_seconds = time.perf_counter() - t0

    table = summary(rows, test.score)
    print(markdown(table, draws, pick.name))
    notes = [f"run s: seconds of the online run through all {len(games):,} games (filters) or of all "
             f"walk-forward refits (smoothers, every {every}{' days' if not isinstance(every, str) else ''})",
             "tune s: seconds to tune on the training part (for the pick, the whole of auto's choice)",
             f"training log loss: the tuned method's one-step-ahead expected-score log loss on the training games "
             f"after the first {BURN_IN:.0%}; the pick, in bold, is auto's, chosen by its {choice.objective_name} "
             f"(the candidates' table below)"]
    print("\n" + "; ".join(notes) + ".")
    print("\nTuned settings (EKF: drift, prior_var and home_drift in rating points² per day — points of the score "
          "for the margin observation —, home and draw_param in rating points, reversion per day; Glicko c and "
          "home in rating points; TrueSkill and Weng–Lin in their own units, mu 25):\n")
    print(settings_lines(rows))
    if pick.candidate.variant.home == "drifting":
        print("\n" + _home_path(run, pick) + ".")
    if smoothed_from is not None:
        model = smoothed_from.candidate.model
        print(f"\nSmoothers: LaplaceSmoother with the model of {smoothed_from.name} (the best of auto's candidates on "
              f"the training games without a drifting home advantage, which the smoother does not fit: drift "
              f"{model.drift:.4g}, prior_var {model.prior_var:.4g}, home {model.home:.4g}, reversion "
              f"{model.reversion:.3g}, draws: {describe_draw(model)}"
              f"{', on its margin-weighted games' if smoothed_from.candidate.variant.power is not None else ''})"
              + (f"; the type-II row: the same with drift {methods['Laplace smoother, type-II drift'].model.drift:.4g}, "
                 f"the maximum of the Laplace evidence on the training games" if name == "nfl" else "")
              + f"; Bradley–Terry: the same model with drift 0 and prior sd {model.scale:.4g}.")

    candidates_table(name, run, candidates, choice)
    observations = observation_table(name, run, candidates)
    result = {"observations": observations, "name": name, "table": table, "rows": rows, "test": test, "setup": setup,
              "ref": ref_name, "draws": draws, "pick": pick.name, "auto_seconds": auto_seconds,
              "choice": choice}
    if name == "england_football":
        grid = {f"Elo k={k} home={h}": Elo(k=k, home=h) for k in (10, 20, 40) for h in (0, 50, 100)}
        cands = run.compare(grid, kind="reference", tune=False)
        best = min(cands, key=lambda r: metrics.log_loss(test.score, r.proba))
        d, se = metrics.paired_difference(table.attrs["loss"][pick.name],
                                          metrics.log_loss(test.score, best.proba, per_game=True))
        print(f"\nFootnote: the best plain online Elo of K 10/20/40 × home 0/50/100 *picked on these held-out games* "
              f"(which favours it) is {best.name}, log loss {metrics.log_loss(test.score, best.proba):.4f}; our pick "
              f"minus it: {_pm(d, se)}.")
        result["grid"] = (best.name, metrics.log_loss(test.score, best.proba), d, se)
    if not args.quick and not args.no_draw_table and name in ("nfl", "intl_football"):
        draw_objective(name, run, candidates)
    seconds = time.perf_counter() - t_start
    result["seconds"] = seconds
    print(f"\n{name}: {seconds:.0f} s in all (auto {auto_seconds:.0f} s"
          + (f", smoothers {smoother_seconds:.0f} s" if smoother_seconds else "") + ")")
    return result


def candidates_table(name: str, run: Runner, rows: list[Row], choice) -> None:
    """auto's candidates: the training score the pick is chosen on, and what each does on the held-out games."""
    score = run.test.score
    t = choice.table
    a = t.attrs
    print(f"\n#### auto's candidates, {name}\n")
    print(f"Each candidate is tuned on the training part ({a['n_games']:,} games; the first {a['burn_in']:.0%} a "
          f"burn-in) and compared there by its one-step-ahead {a['objective']} ({a['n_scored']:,} games): the lowest "
          f"is the pick (level within {TIE:g}: the fewest settings). The stages: the structure (home "
          f"advantage and reversion, on the outcome), then on the best structure margin weights and the score "
          f"observations (margin; goals where the scores are goal counts). Held out: the same {len(score):,} games online; Δ is against the pick, with its paired "
          f"standard error. It took {choice.seconds:.0f} s"
          + (f"; not tried: {'; '.join(a['not_tried'])}" if a.get("not_tried") else "") + ".\n")
    pick = next(r for r in rows if r.name == ekf_name(choice.chosen))
    base = metrics.log_loss(score, pick.proba, per_game=True)
    print(f"| candidate | stage | training {a['objective']} | Δ training | log loss | 3-outcome log loss | "
          f"Δ log loss ± se | tune s |")
    print("|---|---|---|---|---|---|---|---|")
    by_label = {r.name[len("EKF "):]: r for r in rows}
    for label, r in t.iterrows():
        row = by_label.get(label)
        if row is None:  # failed to tune
            print(f"| {label} | {r['stage']} | failed: {r['error']} | | | | | {r['tune_seconds']:.1f} |")
            continue
        loss = metrics.log_loss(score, row.proba, per_game=True)
        ll3 = metrics.log_loss_3(score, row.proba) if run.draws else float("nan")
        delta = "pick" if r["chosen"] else _pm(*metrics.paired_difference(loss, base))
        print(f"| {label} | {r['stage']} | {r['train_score']:.5f} | {r['delta']:+.5f} | {loss.mean():.4f} | "
              f"{'n/a' if not np.isfinite(ll3) else f'{ll3:.4f}'} | {delta} | {r['tune_seconds']:.1f} |")


def observation_table(name: str, run: Runner, candidates: list[Row]) -> dict:
    """Scores against win/draw/loss: for each observation, its best candidate by the training score
    (auto's rule), against the best Outcome candidate by the same rule, on the held-out games'
    three-outcome log loss (expected-score where there are no draws), with the paired standard error."""
    score = run.test.score
    loss = metrics.log_loss_3 if run.draws else metrics.log_loss
    by_obs = {}
    for r in candidates:
        by_obs.setdefault(r.candidate.variant.observation, []).append(r)
    if "outcome" not in by_obs or len(by_obs) < 2:
        return {}
    base = best_candidate(by_obs["outcome"], run.choice)
    base_loss = loss(score, base.proba, per_game=True)
    kind = "3-outcome log loss" if run.draws else "log loss"
    print(f"\n#### Scores as observations, {name}\n")
    print(f"Each observation's best candidate on the training games (auto's rule), against the best outcome "
          f"(win/draw/loss) candidate, {base.name}: held-out {kind}, the difference with its paired standard "
          f"error and how many standard errors it is (negative: the score observation forecasts better).\n")
    print(f"| observation | best candidate on training | training score | held-out {kind} | Δ ± se | Δ / se |")
    print("|---|---|---|---|---|---|")
    out = {}
    for obs, rows in by_obs.items():
        best = best_candidate(rows, run.choice)
        per_game = loss(score, best.proba, per_game=True)
        train = float(run.choice.table.loc[best.name[len("EKF "):], "train_score"])
        if obs == "outcome":
            delta, ratio = "reference", ""
        else:
            d, se = metrics.paired_difference(per_game, base_loss)
            out[obs] = (best.name, float(per_game.mean()), d, se)
            delta, ratio = _pm(d, se), f"{d / se:+.1f}" if se > 0 else ""
        print(f"| {obs} | {best.name} | {train:.5f} | {per_game.mean():.4f} | {delta} | {ratio} |")
    return out


def draw_objective(name: str, run: Runner, candidates: list[Row]) -> None:
    """The draw margin barely moves the expected score, so the expected-score log loss leaves it loose."""
    score = run.test.score
    best = best_candidate([r for r in candidates if r.candidate.variant.observation == "outcome"], run.choice)
    print(f"\n#### Tuning objective of the draw margin, {name}\n")
    print("The EKF with threshold draws and a fixed home advantage, and the best of auto's outcome candidates, "
          "tuned on the training part with each objective:\n")
    print("| model | tuned on | log loss | 3-outcome log loss | draw margin |")
    print("|---|---|---|---|---|")
    for v in dict.fromkeys((Variant("outcome", "fixed"), best.candidate.variant)):
        for objective in ("log_loss", "log_loss_3"):
            method = Auto(candidates=[v], objective=objective, progress=False).tune(run.train)
            (row,) = run.compare({ekf_name(v.label): method}, kind="filter", tune=False)
            ll3 = metrics.log_loss_3(score, row.proba)
            print(f"| {row.name} | {objective} | {metrics.log_loss(score, row.proba):.4f} | {ll3:.4f} | "
                  f"{method.model.draw.margin:.4g} |")


def beat_table(results: list[dict]) -> None:
    print("\n### Beat the best measured forecast\n")
    print("Last 10% of games by time, expected-score log loss (a draw as the target 0.5). \"Our pick\": "
          "statespace.auto's choice, the candidate EKF with the lowest one-step-ahead log-likelihood on the training "
          "games (after the burn-in), chosen without looking at a held-out game (\"auto s\": the seconds its choice "
          "took); \"reference\": the best forecast measured before, recomputed here on the same "
          "games (England: plain Elo tuned on the training games like ours); the difference is ours minus the "
          "reference, with the paired standard error over the same games. The last column is the best of our rows "
          "on the held-out games themselves (a choice that peeks).\n")
    print("| data set | test games | our pick | auto s | log loss | reference | log loss (recomputed) | measured before "
          "| ours − reference ± se | best row on the held-out games |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for res in results:
        t, loss, setup = res["table"], res["table"].attrs["loss"], res["setup"]
        ours = res["pick"]
        ref = res["ref"]
        d, se = metrics.paired_difference(loss[ours], loss[ref])
        measured = f"{setup.measured:.4f} ({setup.measured_by})" if setup.measured is not None else "not measured"
        best = t[t["kind"] != "reference"].index[0]
        print(f"| {res['name']} | {len(res['test']):,} | {ours} | {res['choice'].seconds:.0f} | "
              f"{t.loc[ours, 'log_loss']:.4f} | {ref} | "
              f"{t.loc[ref, 'log_loss']:.4f} | {measured} | {_pm(d, se)} | {best} ({t.loc[best, 'log_loss']:.4f}) |")
    for res in results:
        setup = res["setup"]
        if setup.measured_ll3 is not None:
            t = res["table"]
            ll3 = t[(t["kind"] != "reference") & np.isfinite(t["log_loss_3"])].sort_values("log_loss_3")
            if len(ll3):
                value, by = setup.measured_ll3
                best = ll3.index[0]
                print(f"\n{res['name']}, three-outcome log loss: our pick {t.loc[res['pick'], 'log_loss_3']:.4f}, our "
                      f"best {ll3.iloc[0]['log_loss_3']:.4f} ({best}), against {value:.4f} ({by}; its per-game "
                      f"forecasts are not available here, so no paired standard error).")


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
                    help="filters, auto and references only: no smoothers, no draw-objective table (a smoke test)")
    ap.add_argument("--no-smoothers", action="store_true", help="leave out the walk-forward smoothers")
    ap.add_argument("--no-draw-table", action="store_true",
                    help="leave out the draw-objective table (NFL, international football)")
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
