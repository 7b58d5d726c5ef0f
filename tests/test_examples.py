"""The examples and the benchmark run and print their key numbers (no timing is asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def run(script: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run a script with the development data sets as its data home (statespace.datasets)."""
    env = {**os.environ, "STATESPACE_DATA": str(DATA)}
    return subprocess.run([sys.executable, str(ROOT / script), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=env)


def test_elo_worked_example():
    out = run("examples/elo_worked_example.py")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "0.7597469266" in out.stdout
    assert "1607.6880983473" in out.stdout  # 1600 + 32 (1 - 0.7597469266)
    assert "1870.0000000000" in out.stdout  # FIDE newcomer, K cut to 35 by K * n <= 700
    assert "MISMATCH" not in out.stdout


def test_quickstart(tmp_path):
    png = tmp_path / "trajectories.png"
    out = run("examples/quickstart.py", "--scenario", "balanced", "--plot", str(png))
    assert out.returncode == 0, out.stderr + out.stdout
    assert "elo k=32" in out.stdout and "log_loss" in out.stdout
    assert "frozen" in out.stdout and "online" in out.stdout
    try:
        import statespace.methods.plots  # noqa: F401
    except ImportError:
        assert "not available" in out.stdout
    else:
        assert png.is_file() and png.stat().st_size > 0


def test_bench_elo_quick():
    out = run("benchmarks/bench_elo.py", "--quick", "--games", "20000")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "games/s" in out.stdout
    assert "ours vs plain Python" in out.stdout and "ours vs elote" in out.stdout


@pytest.mark.skipif(not (DATA / "intl_football" / "games.csv").is_file(),
                    reason=f"shared data not found at {DATA}")
def test_international_football_elo():
    out = run("examples/international_football_elo.py")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "elo k=40 home=100" in out.stdout
    assert "4,952 games" in out.stdout  # the last 10% of 49,520


def test_international_football_elo_missing_data(tmp_path):
    out = run("examples/international_football_elo.py", str(tmp_path / "nowhere"))
    assert out.returncode != 0
    assert "not found" in out.stderr


def test_bench_glicko_quick():
    out = run("benchmarks/bench_glicko.py", "--quick")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "games/s" in out.stdout


def test_glicko_worked_examples():
    out = run("examples/glicko_worked_examples.py")
    assert out.returncode == 0, out.stderr + out.stdout
    for number in ("1464.1065", "151.3989", "53685.74", "0.375988", "1464.0507", "151.5165", "0.0599960",
                   "290.2305", "223.2605", "177.9769", "0.239496"):
        assert number in out.stdout, number
    assert "MISMATCH" not in out.stdout


def test_glicko_rating_periods_scenario_only(tmp_path):
    out = run("examples/glicko_rating_periods.py", str(tmp_path / "nowhere"), "--scenario-only")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "### scenario drifting" in out.stdout
    assert "glicko2, monthly periods" in out.stdout and "glicko, each game, period_days=30" in out.stdout
    assert "forecast at the true skills" in out.stdout and "Cost of batching" in out.stdout


def test_glicko_rating_periods_no_data(tmp_path):
    out = run("examples/glicko_rating_periods.py", str(tmp_path / "nowhere"))
    assert out.returncode == 2
    assert "not found" in out.stderr and "--scenario-only" in out.stderr


@pytest.mark.skipif(not (DATA / "nfl" / "games.csv").is_file(), reason=f"shared data not found at {DATA}")
def test_glicko_rating_periods_nfl():
    out = run("examples/glicko_rating_periods.py", "--datasets", "nfl")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "### nfl" in out.stdout and "glicko, season periods" in out.stdout
    assert "1,681 games" in out.stdout  # the last 10% of 16,810


def test_bench_trueskill_quick():
    out = run("benchmarks/bench_trueskill.py", "--quick")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "games/s" in out.stdout
    assert "backend=\"scipy\"" in out.stdout and "agree" in out.stdout and "BradleyTerryFull" in out.stdout


def test_ekf_concept():
    out = run("examples/ekf_concept.py")
    assert out.returncode == 0, out.stderr + out.stdout
    # the published figures (seed 3): Elo K = 0.15 and the EKF, one step ahead after 500 games
    assert "0.1147        0.1135     0.1147" in out.stdout
    assert "0.0976        0.0963     0.0976" in out.stdout
    assert "median 0.1054   at the last game 0.1053" in out.stdout  # the gain, "about 0.105"
    assert "best on the 0.01 grid: K = 0.11 (0.1087)" in out.stdout  # "about 0.1, giving 0.109"
    assert "MISMATCH" not in out.stdout and "all checks ok" in out.stdout


def test_bench_ekf_quick():
    out = run("benchmarks/bench_ekf.py", "--quick")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "games/s" in out.stdout


def test_bench_pymc_quick():
    # 500 games, 200 draws: the whole path (warm-up, Laplace start, compiled Op, diagnostics);
    # PyTensor's cache is the smoother's default folder in the system's temp directory
    out = run("benchmarks/bench_pymc.py", "--quick")
    assert out.returncode == 0, out.stderr + out.stdout
    assert "wall time of fit" in out.stdout and "init=laplace" in out.stdout
    assert "divergences:" in out.stdout and "max r-hat:" in out.stdout  # 500 games: diagnostics may be off


@pytest.mark.skipif(not (DATA / "nfl" / "games.csv").is_file(), reason=f"shared data not found at {DATA}")
def test_real_data_benchmark_quick():
    # filters tuned on the training part and FiveThirtyEight's forecasts, no smoothers: a few seconds
    out = run("benchmarks/real_data.py", "--datasets", "nfl", "--quick", timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "| method | kind | log loss | Brier |" in out.stdout
    assert "| FiveThirtyEight | reference | 0.6322 |" in out.stdout
    assert "### Beat the best measured forecast" in out.stdout and "| nfl | 1,681 |" in out.stdout


def test_peers_quick(tmp_path):
    # both parts in one process, elote and whr left out as if absent: the tables still come out,
    # the skips are noted, and the JSON holds every number (no timing is asserted)
    path = tmp_path / "peers.json"
    out = run("benchmarks/peers.py", "--quick", "--without", "elote,whr", "--json", str(path), timeout=120)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "| ours | ours games/s | peer | peer games | peer games/s | ours / peer |" in " ".join(out.stdout.split())
    assert "| method | fit s | log loss | compared with | peer s / ours s |" in " ".join(out.stdout.split())
    assert "skipped: elote EloCompetitor (Elo(k=32)): elote: left out (--without)" in out.stdout
    assert "skipped: whr, until converged: whr: left out (--without)" in out.stdout
    assert path.is_file() and f"saved: {path}" in out.stdout
    result = json.loads(path.read_text())
    assert {"command", "quick", "machine", "versions", "filters", "smoothers", "seconds"} <= result.keys()
    assert {"cpu_count", "load_average_start", "load_average_end"} <= result["machine"].keys()
    assert {"numpy", "numba", "elote", "whr", "kickscore", "choix"} <= result["versions"].keys()
    filt, smooth = result["filters"], result["smoothers"]
    assert filt["forecasts_valid"] and len(filt["ours"]) == 9
    assert {"ours", "peer", "peer_games", "ours_games_per_s", "peer_games_per_s", "ratio"} <= filt["rows"][0].keys()
    assert "EKF()" in {r["ours"] for r in filt["rows"]}
    assert all(r["package"] != "elote" for r in filt["rows"])
    assert "elote" in {s["package"] for s in filt["skipped"]}  # and any other peer not installed
    assert [r["method"] for r in smooth["rows"][:3]] == ["ours: LaplaceSmoother", "ours: BradleyTerry",
                                                         "true probabilities"]
    assert {"whr", "kickscore", "trueskillthroughtime"} <= {s["package"] for s in smooth["skipped"]}


def test_published_tables():
    # the published Elo/Glicko/TrueSkill tables (elote's docs) from the library
    out = run("examples/published_tables.py")
    assert out.returncode == 0, out.stderr + out.stdout
    for number in ("0.7597469266", "0.6835846204", "0.6476185605",  # formula check (Glicko: q = ln 10 / 400)
                   "1516.000", "1566.831", "1665.435",  # Elo after 1, 5, 20 wins (K 32)
                   "290.2305", "223.2605", "177.9769",  # Glicko RD
                   "7.17113", "5.58494", "4.41327",  # TrueSkill sigma, elote's constants
                   "0.647610", "0.705905", "0.765283", "0.793599", "0.686621", "0.738510", "0.778386",  # symmetry
                   "1.08752"):  # Glicko's update-time asymmetry, for contrast
        assert number in out.stdout, number
    for scenario in ("balanced", "draw_heavy", "sparse"):
        assert f"\n  {scenario}: 420 train / 180 test games" in out.stdout, scenario
    assert "(forecast at true skills)" in out.stdout and "laplace" in out.stdout and "ekf full" in out.stdout
    import importlib.util

    if importlib.util.find_spec("elote") is None:
        assert "skipped, elote is not installed" in out.stdout
    else:  # elote's published balanced Elo row (0.8778, 0.0900, 0.3310) from our Elo on elote's rows
        lines = [" ".join(line.split()) for line in out.stdout.splitlines()]
        for metric, published, ours in (("accuracy", "0.8778", "0.877778"), ("brier", "0.0900", "0.090004"),
                                        ("log_loss", "0.3310", "0.330986")):
            assert f"this project's Elo (K 32), {metric}, vs elote's published Elo {published} {ours} MATCH" in lines
        assert sum("over the 180 forecasts" in line and "MATCH" in line for line in lines) == 6  # Elo, TrueSkill
    assert "MISMATCH" not in out.stdout and "published numbers reproduced: all of them." in out.stdout


def test_glicko_asymmetry_table():
    # the "whose uncertainty moves the prediction" table, printed by the Glicko examples
    out = run("examples/glicko_worked_examples.py")
    assert out.returncode == 0, out.stderr + out.stdout
    section = out.stdout.split("5. Whose uncertainty moves a prediction", 1)[1]
    for number in ("0.996765", "0.996616", "0.995876", "0.992310", "0.979194",  # the 1500's RD 30 ... 350
                   "0.848021", "0.151979", "0.239496", "0.760504", "1.0875"):
        assert number in section, number
    assert "MISMATCH" not in out.stdout
