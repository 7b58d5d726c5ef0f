"""Regenerate ``docs/_static/notebook_rich_output.png``: a real notebook's rich output.

A small notebook (the NFL games shipped with the package, since 2012) is executed in a Jupyter
kernel of this interpreter with nbclient, so that what the picture shows is what a notebook
shows: a fitted method's HTML (summary line and leaderboard), ``compare``'s table (best log
loss highlighted, its caption) and ``fit.plot(players=...)`` (a retina PNG: the package switches
the inline backend to retina). The executed cells are laid out as a notebook page (code and
outputs; the outputs' HTML and images as the kernel sent them) and photographed with Playwright
and Chromium at a device scale factor of 2.

Run from the repository root::

    python docs/_screenshots/notebook_rich_output.py [--chromium /usr/bin/chromium] [--keep-html out.html]

Needs nbformat, nbclient, ipykernel and playwright (with a Chromium: the system one by default).
"""

from __future__ import annotations

import argparse
import html
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "_static" / "notebook_rich_output.png"

CELLS = [
    """\
import numpy as np
import statespace as ss
import filters

games = ss.datasets.load("nfl")
games = games.take(np.flatnonzero(games.time >= np.datetime64("2012-09-01")))""",
    """\
fit = filters.Glicko2().fit(games)
fit""",
    """\
table = ss.compare([filters.Elo(k=20), filters.Glicko2(), filters.EKF()],
                   games, split=0.8, mode="online", progress=False)
table""",
    """\
fit.plot(players=["KC", "NE", "SF"]);""",
]

PAGE_CSS = """
body { font-family: -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; font-size: 14px;
       color: #212121; background: #fff; margin: 0; padding: 16px 20px; width: 860px; }
.cell { display: grid; grid-template-columns: 64px 1fr; margin-bottom: 14px; }
.prompt { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; color: #307fc1;
          text-align: right; padding: 6px 8px 0 0; }
.prompt.out { color: #bf5b3d; }
pre.code { background: #f5f5f5; border: 1px solid #e0e0e0; border-radius: 2px; margin: 0; padding: 6px 8px;
           font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; line-height: 1.4;
           white-space: pre-wrap; }
.output { padding: 6px 0 0 2px; overflow-x: auto; }
.output pre { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; margin: 0; }
.output table.dataframe, .output table.statespace-table { font-size: 12.5px; border-collapse: collapse; }
.output table.dataframe th { font-weight: bold; }
.output table.dataframe td, .output table.dataframe th { padding: 3px 8px; text-align: right; }
.output table.dataframe tbody tr:nth-child(odd) { background: #f5f5f5; }
"""


def notebook():
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(src) for src in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def kernel_of_this_interpreter() -> str:
    """A ``python3`` kernelspec running this interpreter, put first on ``JUPYTER_PATH`` (as
    docs/conf.py does), so that the notebook runs with the project and its dependencies."""
    base = Path(tempfile.mkdtemp(prefix="statespace-screenshot-kernel-"))
    spec = base / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    os.environ["JUPYTER_PATH"] = str(base) + os.pathsep + os.environ.get("JUPYTER_PATH", "")
    os.environ.pop("MPLBACKEND", None)  # the kernel chooses its inline backend itself
    pp = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(ROOT) + (os.pathsep + pp if pp else "")
    return "python3"


def execute(nb):
    import nbclient

    client = nbclient.NotebookClient(nb, timeout=600, kernel_name=kernel_of_this_interpreter(),
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()
    return nb


def output_html(out) -> str:
    """One output as the notebook shows it: rich HTML as sent, an image at its shown size,
    text escaped."""
    kind = out["output_type"]
    if kind == "stream":
        return f"<pre>{html.escape(out['text'])}</pre>"
    if kind == "error":
        raise RuntimeError("the notebook failed: " + "\n".join(out.get("traceback", [])))
    data = out.get("data", {})
    if "image/png" in data:
        meta = out.get("metadata", {}).get("image/png", {})
        size = "".join(f' {k}="{int(meta[k])}"' for k in ("width", "height") if k in meta)
        return f'<img src="data:image/png;base64,{data["image/png"].strip()}"{size}>'
    if "text/html" in data:
        return data["text/html"] if isinstance(data["text/html"], str) else "".join(data["text/html"])
    if "text/plain" in data:
        return f"<pre>{html.escape(data['text/plain'])}</pre>"
    return ""


def page(nb) -> str:
    cells = []
    for k, cell in enumerate(nb.cells, start=1):
        cells.append(f'<div class="cell"><div class="prompt">[{k}]:</div>'
                     f'<pre class="code">{html.escape(cell.source)}</pre></div>')
        outs = [o for o in cell.outputs if output_html(o)]
        for o in outs:
            prompt = f"[{k}]:" if o["output_type"] == "execute_result" else ""
            cells.append(f'<div class="cell"><div class="prompt out">{prompt}</div>'
                         f'<div class="output">{output_html(o)}</div></div>')
    return (f"<!doctype html><html><head><meta charset='utf-8'><style>{PAGE_CSS}</style></head>"
            f"<body>{''.join(cells)}</body></html>")


def screenshot(doc: str, out: Path, chromium: str) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        try:
            pg = browser.new_page(viewport={"width": 900, "height": 800}, device_scale_factor=2)
            pg.set_content(doc, wait_until="load")
            body = pg.locator("body")
            body.screenshot(path=str(out))
        finally:
            browser.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium to drive")
    ap.add_argument("--out", default=str(OUT), help="the PNG written (default: %(default)s)")
    ap.add_argument("--keep-html", help="also write the laid-out page here")
    args = ap.parse_args(argv)
    nb = execute(notebook())
    doc = page(nb)
    if args.keep_html:
        Path(args.keep_html).write_text(doc, encoding="utf-8")
    screenshot(doc, Path(args.out), args.chromium)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
