"""benchmarks/blend.py --quick runs and prints its tables (no number is asserted: the quick
subsets are too small to say anything)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.skipif(not (DATA / "nfl" / "games.csv").is_file(), reason=f"shared data not found at {DATA}")
def test_blend_benchmark_quick(tmp_path):
    out_file = tmp_path / "blend.md"
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "blend.py"), "--quick", "--datasets", "nfl",
                          "--out", str(out_file)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "### nfl" in out.stdout and "blend (log-linear)" in out.stdout and "blend (linear)" in out.stdout
    assert "minus the best member by training score" in out.stdout
    assert out_file.read_text() in out.stdout + "\n"


def test_blend_benchmark_skips_absent_data(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "blend.py"), str(tmp_path), "--quick",
                          "--out", "-"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 2
    assert "not found" in out.stderr and "skipped" in out.stderr
