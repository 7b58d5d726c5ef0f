"""TrueSkill's draw setting learned from the games against the old fixed 0.10, on ATP tennis.

ATP tennis (``atp_tennis`` under the shared data folder, read with ``errors="drop"``: 3 rows of
a player against himself) has no draws. Both rows run ``statespace.compare([...], games,
split=0.9, mode="online", tune=True)``: tuned on the first 90% of the matches by time (the
one-step-ahead likelihood), then run online through all of them and scored on the last 10%.

- **before** (the old default): ``TrueSkill(draw_probability=0.10)`` tuned on the three-outcome log
  loss (``tune_options={"objective": "log_loss_3"}``), which is what ``TrueSkill()`` and
  ``compare(..., tune=True)`` did before the draw setting was learned;
- **after** (the new default): ``TrueSkill()``, whose ``draw_probability`` is learned from the
  training games (0: they have no draw) and which is tuned on the two-outcome log loss
  (``filters.tuning.default_objective`` on games without draws).

Printed as Markdown and written to ``benchmarks/results/draw_default-<date>.md`` (``--out -``: none).

Usage::

    python benchmarks/draw_default.py [DATA_ROOT]     # default ../shared/data (about 20 s)
"""

from __future__ import annotations

import argparse
import datetime
import io
import sys
import warnings
from pathlib import Path

import numpy as np
from _common import load_shared

import statespace as ss
from statespace.model import metrics
from filters import TrueSkill
from statespace.methods.settings import DrawWarning

HERE = Path(__file__).resolve().parent
ROWS = {
    "before: TrueSkill(draw_probability=0.10), tuned on log_loss_3": (
        lambda: TrueSkill(draw_probability=0.10), {"objective": "log_loss_3"}),
    "after: TrueSkill() (draw_probability learned), default objective": (lambda: TrueSkill(), {}),
}


def run(root: Path, out) -> bool:
    games = load_shared(root, "atp_tennis")
    if games is None:
        return False
    n_draws = int((games.score == 0.5).sum())
    print(f"## TrueSkill's draw default on ATP tennis ({datetime.date.today().isoformat()})\n", file=out)
    print(f"{len(games):,} matches, {games.n_players:,} players, {n_draws} draws; "
          f"`statespace.compare([method], games, split=0.9, mode=\"online\", tune=True, tune_options=...)`\n",
          file=out)
    print("| method | draw_probability used | tuned on | tuned settings | log loss | Brier | 3-outcome log loss |",
          file=out)
    print("|---|---|---|---|---|---|---|", file=out)
    per_game = {}
    test = np.sort(games.order[int(round(0.9 * len(games))):])  # the held-out rows, as Games.split takes them
    for label, (make, options) in ROWS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DrawWarning)  # the old setting's warning: the point of the row
            table = ss.compare([make()], games, split=0.9, mode="online", tune=True, tune_options=options)
            row = table.iloc[0]
            result = table.attrs["tuned"]["trueskill"]
            tuned = make().with_params(**result.params).resolved(games.split(0.9)[0])
            used = tuned.draw_probability
            # the same forecasts again, per game, for the paired difference (checked against compare's score)
            per_game[label] = metrics.log_loss(games.score[test], tuned.run(games).proba[test], per_game=True)
        if not np.isclose(per_game[label].mean(), row["log_loss"], rtol=0, atol=1e-12):
            raise RuntimeError(f"{label}: rerun scores {per_game[label].mean()!r}, compare {row['log_loss']!r}")
        print(f"| {label} | {used:g} | {result.objective_name} | {result.describe_params(4)} | "
              f"{row['log_loss']:.4f} | {row['brier']:.4f} | {row['log_loss_3']:.4f} |", file=out)
    before, after = per_game.values()
    diff, se = metrics.paired_difference(after, before)
    print(f"\nlog loss of the last 10% ({test.size:,} matches): before {before.mean():.4f}, after {after.mean():.4f}; "
          f"after - before {diff:+.4f} ± {se:.4f} (paired standard error over the same matches)", file=out)
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", default=str(HERE.parent.parent / "shared" / "data"),
                        help="the shared data folder (default ../shared/data)")
    parser.add_argument("--out", default=None,
                        help="Markdown file to write (default benchmarks/results/draw_default-<date>.md; '-' for none)")
    args = parser.parse_args(argv)
    buf = io.StringIO()
    if not run(Path(args.root), buf):
        return 2
    text = buf.getvalue()
    print(text, end="")
    if args.out != "-":
        dest = Path(args.out) if args.out else HERE / "results" / f"draw_default-{datetime.date.today().isoformat()}.md"
        dest.write_text(text)
        print(f"wrote {dest}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
