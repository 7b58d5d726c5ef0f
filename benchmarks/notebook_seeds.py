"""Every derivation notebook run with several seeds: do its asserts hold for any seed?

A student who changes a notebook's ``SEED`` must still see every ``assert`` pass (the asserts use
tolerances from the statistics, not numbers tied to one seed). This script checks it: for each
notebook ``docs/notebooks/0N_*.md`` with a ``SEED`` assignment, it inserts ``SEED = k`` right after
that assignment, for each ``k`` of ``--seeds``, executes the notebook with nbclient (the
``python3`` kernel of this environment) and records whether it ran to the end, its first error and
its seconds. Notebooks without a ``SEED`` (real data only) are listed as such.

Printed as Markdown and written to ``benchmarks/results/notebook_seeds-<date>.md`` (``--out -``:
none). Usage::

    python benchmarks/notebook_seeds.py                         # seeds 0 1 2 7 123, all notebooks
    python benchmarks/notebook_seeds.py --seeds 5 6 --notebooks 01 05 --jobs 2
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "docs" / "notebooks"
# the first statement that assigns SEED (``SEED = 3`` or ``N, SEED = 3000, 3``), not a comparison
SEED_LINE = re.compile(r"^(?!\s*#)[^\n=]*\bSEED\b[^\n=]*=(?!=)[^\n]*$", re.M)


def with_seed(nb, seed: int) -> bool:
    """Insert ``SEED = seed`` after the notebook's first ``SEED`` assignment; False if it has none."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        match = SEED_LINE.search(cell.source)
        if match:
            end = match.end()
            cell.source = cell.source[:end] + f"\nSEED = {seed}  # set by benchmarks/notebook_seeds.py" + cell.source[end:]
            return True
    return False


def run_one(path: Path, seed: int, timeout: int) -> dict:
    import jupytext
    import nbclient

    nb = jupytext.read(path)
    if not with_seed(nb, seed):
        return {"notebook": path.stem, "seed": seed, "status": "no SEED", "seconds": 0.0, "error": ""}
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    try:
        client.execute()
        status, error = "passed", ""
    except nbclient.exceptions.CellExecutionError as exc:
        status = "FAILED"
        lines = [ln for ln in str(exc).splitlines() if ln.strip()]
        error = next((ln for ln in reversed(lines) if "Error" in ln), lines[-1] if lines else "")[:160]
    return {"notebook": path.stem, "seed": seed, "status": status,
            "seconds": time.perf_counter() - t0, "error": error}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 7, 123])
    parser.add_argument("--notebooks", nargs="+", default=None, help="two-digit prefixes, e.g. 01 05")
    parser.add_argument("--jobs", type=int, default=2, help="notebooks executed at once")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per cell")
    parser.add_argument("--out", default=None, help="Markdown file ('-': print only)")
    args = parser.parse_args(argv)

    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.md"))
    if args.notebooks:
        paths = [p for p in paths if p.name[:2] in set(args.notebooks)]
        if not paths:
            parser.error(f"no notebook starts with {args.notebooks}")
    os.environ.setdefault("MPLBACKEND", "Agg")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    tasks = [(p, s) for p in paths for s in args.seeds]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda t: run_one(t[0], t[1], args.timeout), tasks))
        for row in rows:
            print(f"{row['notebook']} seed {row['seed']}: {row['status']} ({row['seconds']:.0f} s) {row['error']}",
                  file=sys.stderr)
    wall = time.perf_counter() - t0

    seen: dict[str, list[dict]] = {}
    for row in rows:
        seen.setdefault(row["notebook"], []).append(row)
    lines = [f"# The derivation notebooks with several seeds ({datetime.date.today()})", "",
             f"`python benchmarks/notebook_seeds.py --seeds {' '.join(map(str, args.seeds))}"
             f"{' --notebooks ' + ' '.join(args.notebooks) if args.notebooks else ''}`; wall time {wall:.0f} s, "
             f"{args.jobs} at once.", "",
             "| notebook | " + " | ".join(f"seed {s}" for s in args.seeds) + " | first error |",
             "|---|" + "---|" * len(args.seeds) + "---|"]
    for name, rs in seen.items():
        cells = [f"{r['status']} ({r['seconds']:.0f} s)" if r["status"] != "no SEED" else "no SEED" for r in rs]
        error = next((f"seed {r['seed']}: {r['error']}" for r in rs if r["error"]), "")
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {error} |")
    failed = sum(r["status"] == "FAILED" for r in rows)
    lines += ["", f"{failed} of {sum(r['status'] != 'no SEED' for r in rows)} runs failed."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out != "-":
        out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"notebook_seeds-{datetime.date.today()}.md"
        out.write_text(text)
        print(f"written to {out}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
