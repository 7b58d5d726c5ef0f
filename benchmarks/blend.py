"""Blended forecasts (``statespace.Blend``) against their members on the four real data sets.

For each data set (``nfl``, ``intl_football``, ``england_football``, ``atp_tennis`` under the shared
data folder; absent ones are skipped with a message):

- **Members**: the package's filters Elo, Glicko-2, TrueSkill and the EKF (the registry's ``elo``,
  ``glicko2``, ``trueskill``, ``ekf``; Elo and Glicko-2 with a home advantage to tune where the data
  have home games, TrueSkill with the training games' draw rate), each tuned on the first 90% of
  the games (by time) by its own ``tune``, inside ``Blend.tune``: the one-step-ahead likelihood
  after a 30% burn-in, the three-outcome log loss for TrueSkill where the data have draws and the
  expected-score log loss otherwise (as ``benchmarks/real_data.py`` tunes them).
- **Blends**, fitted on the same 90% (the tuned members' one-step-ahead forecasts of those games
  after the same burn-in): the log-linear pool (``Blend``'s default) and the linear pool (stacking).
- **Scored online on the last 10%** with ``statespace.compare(..., mode="online")``: every row runs
  through all games, each held-out game forecast from everything before it; nothing of the last
  10% reaches a tuning or a weight.

Printed, as Markdown (and written to ``benchmarks/results/blend-<date>.md``, ``-quick`` with
``--quick``): per data set one table (the weights, the training score on the blend's objective —
three-outcome log loss where the data have draws, the expected-score log loss otherwise —, and the
held-out log loss, Brier score, accuracy and three-outcome log loss), then each blend minus its
best member, the best by training score and the best on the held-out part, with the paired
standard error over the held-out games (:func:`statespace.metrics.paired_difference`), on the
blend's objective and on the expected-score log loss.

Usage::

    python benchmarks/blend.py                                # all four data sets (minutes on ATP and England)
    python benchmarks/blend.py --datasets nfl
    python benchmarks/blend.py --quick                        # the first 3,000 games of each, few iterations
    python benchmarks/blend.py /path/to/data --out table.md

Exit status: 0, or 2 when no data set is found.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import datetime  # noqa: E402
import io  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import statespace  # noqa: E402
from statespace import Blend, Games
from statespace.model import metrics  # noqa: E402

from _common import load_shared  # noqa: E402  (benchmarks/ is the script's folder, first on sys.path)
from filters import EKF, Elo, Glicko2, TrueSkill  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA_ROOT = ROOT.parent / "shared" / "data"
DATASETS = ("intl_football", "nfl", "england_football", "atp_tennis")
BURN_IN = 0.3
QUICK_GAMES = 3000
QUICK_MAXITER = 15


def load(root: Path, name: str) -> Games | None:
    return load_shared(root, name)


def members(train: Games) -> dict:
    h0 = 50.0 if not bool(train.neutral.all()) else 0.0
    p_draw = min(max(float(np.mean(train.score == 0.5)), 0.01), 0.9)
    return {"Elo": Elo(k=20, home=h0), "Glicko-2": Glicko2(home=h0), "TrueSkill": TrueSkill(draw_probability=p_draw),
            "EKF": EKF()}


def train_scores(method, train: Games) -> tuple[float, float]:
    """Expected-score and three-outcome log loss of the one-step-ahead forecasts of the training
    games after the burn-in (NaN three-outcome for a method that forecasts no draws on games with
    draws)."""
    rows = np.sort(train.order[int(round(BURN_IN * len(train))):])
    p = method.run(train).proba[rows]
    y = train.score[rows]
    return metrics.log_loss(y, p), metrics.log_loss_3(y, p)


def _pm(d: float, se: float) -> str:
    return f"{d:+.4f} ± {se:.4f}"


def measure(name: str, games: Games, args, out) -> None:
    if args.quick:
        games = games.take(np.sort(games.order[:QUICK_GAMES]))
    train, test = games.split(args.split)
    draws = bool(np.any(train.score == 0.5))
    objective = "log_loss_3" if draws else "log_loss"
    print(f"\n### {name}\n", file=out)
    print(f"{len(games):,} games{' (quick: the first ' + format(QUICK_GAMES, ',') + ')' if args.quick else ''}, "
          f"{games.n_players:,} competitors; draws {np.mean(games.score == 0.5):.1%}; trained on the first "
          f"{args.split:.0%} ({len(train):,}), scored online on the last {len(test):,}. Blend objective: "
          f"{objective}.\n", file=out)
    t0 = time.perf_counter()
    maxiter = QUICK_MAXITER if args.quick else 200
    loglinear = Blend(members(train), burn_in=BURN_IN).tune(train, maxiter=maxiter)
    tune_seconds = time.perf_counter() - t0
    tuned = loglinear.members
    linear_fit = Blend(tuned, pool="linear", burn_in=BURN_IN).fit(train)
    linear = linear_fit.blend
    blends = {"blend (log-linear)": loglinear, "blend (linear)": linear}
    table = statespace.compare({**tuned, **blends}, games, split=args.split, mode="online")
    y = table.attrs["test"].score
    proba = table.attrs["proba"]
    train_ll, train_ll3 = {}, {}
    for label, m in {**tuned, **blends}.items():
        train_ll[label], train_ll3[label] = train_scores(m, train)
    train_obj = train_ll3 if draws else train_ll
    weights = {"blend (log-linear)": loglinear.weights, "blend (linear)": linear.weights}

    head = ["method", "weight log-linear", "weight linear", f"train {objective}", "log loss", "Brier", "accuracy"]
    head += ["log loss 3"] if draws else []
    print("| " + " | ".join(head) + " |", file=out)
    print("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|", file=out)
    for label in [*tuned, *blends]:
        w = [f"{weights[b][label]:.3f}" if label in weights[b] else "" for b in blends]
        if label in blends:
            w = [f"Σ {sum(weights[label].values()):.3f}" if b == label else "" for b in blends]
        r = table.loc[label]
        cells = [label, *w, "-" if not np.isfinite(train_obj[label]) else f"{train_obj[label]:.4f}",
                 f"{r['log_loss']:.4f}", f"{r['brier']:.4f}", f"{r['accuracy']:.4f}"]
        if draws:
            cells.append("-" if not np.isfinite(r["log_loss_3"]) else f"{r['log_loss_3']:.4f}")
        print("| " + " | ".join(cells) + " |", file=out)
    zero = {b: [k for k, w in weights[b].items() if w <= 1e-9] for b in blends}
    shown = "; ".join(f"{b}: {', '.join(z)}" for b, z in zero.items() if z)
    print(f"\nTuning the members: {tune_seconds:.1f} s. Weight 0: {shown or 'none'}.", file=out)
    if draws:
        print("Elo, Glicko-2 and the default EKF forecast no draws (draws as half a win): no three-outcome score of "
              "their own; the log-linear pool takes their win/loss odds only.", file=out)

    print("\n| blend | metric | minus the best member by training score | minus the best member on the held-out part |",
          file=out)
    print("|---|---|---|---|", file=out)
    metric_names = [objective] + (["log_loss"] if draws else [])
    for metric in metric_names:
        per = {label: getattr(metrics, metric)(y, proba[label], per_game=True) for label in [*tuned, *blends]}
        held = {label: float(np.mean(per[label])) for label in tuned}
        trained = train_ll3 if metric == "log_loss_3" else train_ll
        ok = [label for label in tuned if np.isfinite(trained[label]) and np.isfinite(held[label])]
        by_train = min(ok, key=lambda k: trained[k])
        by_test = min(ok, key=lambda k: held[k])
        for b in blends:
            d1, s1 = metrics.paired_difference(per[b], per[by_train])
            d2, s2 = metrics.paired_difference(per[b], per[by_test])
            print(f"| {b} | {metric} | {_pm(d1, s1)} ({by_train}) | {_pm(d2, s2)} ({by_test}) |", file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="statespace.Blend against its members on the real data sets.")
    ap.add_argument("data", nargs="?", default=str(DATA_ROOT), help=f"data root holding <name>/games.csv "
                                                                     f"(default: {DATA_ROOT})")
    ap.add_argument("--datasets", default=",".join(DATASETS), help=f"comma-separated ({','.join(DATASETS)})")
    ap.add_argument("--split", type=float, default=0.9, help="share of games (by time) trained on (0.9)")
    ap.add_argument("--quick", action="store_true",
                    help=f"the first {QUICK_GAMES:,} games of each data set and {QUICK_MAXITER} tuning iterations "
                         f"(a smoke test)")
    ap.add_argument("--out", default=None,
                    help="Markdown file to write (default benchmarks/results/blend-<date>[-quick].md; '-' for none)")
    args = ap.parse_args(argv)
    if not 0 < args.split < 1:
        ap.error("--split must be strictly between 0 and 1")
    buffer = io.StringIO()

    class Tee(io.TextIOBase):
        def write(self, text):
            sys.stdout.write(text)
            buffer.write(text)
            return len(text)

    out = Tee()
    t0 = time.perf_counter()
    command = " ".join(["python benchmarks/blend.py", *(argv if argv is not None else sys.argv[1:])])
    print(f"## statespace {statespace.__version__}: blended forecasts, last {1 - args.split:.0%} scored online\n",
          file=out)
    print(f"Command: `{command}`  \nPython {platform.python_version()}, NumPy {np.__version__}, pandas "
          f"{pd.__version__}, {platform.machine()}, {datetime.date.today().isoformat()}", file=out)
    root = Path(args.data).expanduser()
    done = 0
    for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
        if name not in DATASETS:
            print(f"{name}: unknown data set (known: {', '.join(DATASETS)}); skipped", file=sys.stderr)
            continue
        games = load(root, name)
        if games is None:
            continue
        measure(name, games, args, out)
        done += 1
    if not done:
        print(f"no data set found under {root} (looked for {args.datasets})", file=sys.stderr)
        return 2
    print(f"\nTotal: {time.perf_counter() - t0:.0f} s.", file=out)
    if args.out != "-":
        path = Path(args.out) if args.out else (ROOT / "benchmarks" / "results" /
                                                f"blend-{datetime.date.today().isoformat()}"
                                                f"{'-quick' if args.quick else ''}.md")
        sys.stdout.flush()
        path.write_text(buffer.getvalue())
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
