"""The classic systems on the NFL, walk-forward by year on the last 10%: the command
and the static fits with a one-season window (the figures of docs/classic_systems.md).

    python benchmarks/classic_systems.py [DATA_ROOT]     # default ../shared/data

Writes the two tables to stdout and to benchmarks/results/classic_systems-<date>.md.
"""

from __future__ import annotations

import contextlib
import datetime
import io
import sys
from pathlib import Path

from statespace.app.cli import main

HERE = Path(__file__).resolve().parent
COMMANDS = (
    "colley,massey,keener,pythagorean,ecf,dwz,elo",
    "colley:window=365,massey:window=365,keener:window=365,elo",
)


def run(root: Path) -> str:
    path = root / "nfl" / "games.csv"
    if not path.is_file():
        sys.exit(f"classic_systems: the NFL games are not at {path}; give the data root as the first argument")
    out = [f"## Classic systems on the NFL, walk-forward by year, last 10% ({datetime.date.today()})\n"]
    for methods in COMMANDS:
        args = ["compare", "--data", str(path), "--methods", methods, "--mode", "walk_forward", "--every", "year",
                "--split", "0.9"]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            code = main(args)
        if code != 0:
            sys.exit(f"classic_systems: statespace {' '.join(args)} exited {code}")
        out.append(f"$ statespace compare --data <root>/nfl/games.csv --methods {methods} --mode walk_forward "
                   f"--every year --split 0.9\n\n```\n{buf.getvalue().rstrip()}\n```\n")
    return "\n".join(out)


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent.parent / "shared" / "data"
    text = run(root)
    print(text)
    dest = HERE / "results" / f"classic_systems-{datetime.date.today()}.md"
    dest.write_text(text + "\n")
    print(f"wrote {dest}", file=sys.stderr)
