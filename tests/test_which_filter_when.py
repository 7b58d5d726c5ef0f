"""examples/which_filter_when.py: its reduced study (2 small leagues x 2 seeds, Elo, Glicko-2, the
EKF and static Bradley-Terry) runs through ``statespace.study`` and gives a complete, finite table
of regrets whose floor is the true-probability log loss recomputed here from its definition; on
the strongly drifting league the tuned EKF beats the static method on every seed. No timing is
asserted."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import which_filter_when as W  # noqa: E402

from statespace.model import scenarios  # noqa: E402


@pytest.fixture(scope="module")
def reduced(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wfw")
    code = W.main(["--reduced", "--results", str(folder), "--figures", str(folder), "--out", str(folder / "rows"),
                   "--no-progress"])
    assert code == 0
    [csv] = folder.glob("which_filter_when-*-reduced.csv")
    [md] = folder.glob("which_filter_when-*-reduced.md")
    return pd.read_csv(csv), md.read_text(encoding="utf-8"), folder


def test_every_method_and_condition_is_scored(reduced):
    tidy, _, _ = reduced
    conds = W.conditions(W.REDUCED_BASE, {W.REDUCED_FACTOR[0]: (W.REDUCED_FACTOR[1], "")})
    assert [c["name"] for c in conds] == ["base", "drift_sd=100"]
    assert tidy["error"].isna().all(), tidy["error"].dropna().tolist()
    got = set(zip(tidy["method"], tidy["condition"], tidy["seed"]))
    want = {(m, c["name"], s) for m in W.REDUCED_METHODS for c in conds for s in (0, 1)}
    assert got == want and len(tidy) == len(want)
    assert np.isfinite(tidy["regret"]).all() and np.isfinite(tidy["log_loss"]).all()
    # the tuned settings were recorded for every tuned method
    assert tidy["tuned"].notna().all()


def _floor_by_hand(params: dict, seed: int) -> tuple[float, int]:
    """The expected-score log loss of the true probabilities on the last 30% of the games in
    time (ties in time kept in input order), written out from the definitions."""
    sim = scenarios.get("league", seed=seed, **params)
    frame = sim.games.to_frame()
    p = sim.true_proba()
    order = np.argsort(frame["time"].to_numpy(), kind="stable")
    k = int(round(0.7 * len(frame)))
    test = order[k:]
    e = p[test, 0] + 0.5 * p[test, 1]
    y = sim.games.score[test]
    return float(np.mean(-(y * np.log(e) + (1 - y) * np.log(1 - e)))), len(test)


def test_floor_is_the_true_probability_log_loss(reduced):
    tidy, _, _ = reduced
    params = {"base": W.REDUCED_BASE, "drift_sd=100": {**W.REDUCED_BASE, "drift_sd": 100.0}}
    for (cond, seed), rows in tidy.groupby(["condition", "seed"]):
        floor, n_test = _floor_by_hand(params[cond], int(seed))
        assert rows["floor"].to_numpy() == pytest.approx(floor, abs=1e-12)
        assert (rows["n_test"] == n_test).all()
        assert rows["regret"].to_numpy() == pytest.approx(rows["log_loss"].to_numpy() - floor, abs=1e-12)


def test_drift_tracking_filter_beats_the_static_method_under_strong_drift(reduced):
    tidy, _, _ = reduced
    drift = tidy[tidy["condition"] == "drift_sd=100"].pivot(index="seed", columns="method", values="regret")
    # skills moving 100 points (sd) a period over 40 periods: a static fit of the training games
    # is far off by the end, while the tuned EKF follows them
    assert (drift["ekf"] < drift["bradley_terry"]).all(), drift


def test_results_markdown_and_figures(reduced):
    tidy, md, folder = reduced
    assert "reduced run" in md
    header = next(line for line in md.splitlines() if line.startswith("| condition |"))
    assert header.split("|")[2:-1] == [f" {m} " for m in W.REDUCED_METHODS]
    summary = W.summarise(tidy.assign(error=tidy["error"].where(tidy["error"].notna(), None)))
    for cond in ("base", "drift_sd=100"):
        row = next(line for line in md.splitlines() if line.startswith(f"| {cond} |"))
        sub = summary[summary["condition"] == cond].set_index("method")
        best = sub["regret"].idxmin()
        cells = dict(zip(W.REDUCED_METHODS, row.split("|")[2:-1]))
        assert cells[best].strip().startswith("**")
        assert sum(c.strip().startswith("**") for c in cells.values()) == 1
        # the cell is 1000 x the mean regret over the seeds, +- its standard error
        mean = tidy[(tidy["condition"] == cond) & (tidy["method"] == "elo")]["regret"]
        assert f"{1000 * mean.mean():.1f} ± {1000 * mean.std(ddof=1) / math.sqrt(2):.1f}" in cells["elo"]
    assert "Elo's regret is within one standard error" in md
    for name in ("reduced-filters.png", "reduced-smoothers.png"):
        png = folder / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_conditions_vary_one_factor_at_a_time():
    conds = W.conditions(W.BASE, W.FACTORS)
    assert len(conds) == 1 + sum(len(levels) - 1 for levels, _ in W.FACTORS.values())
    for c in conds[1:]:
        changed = {k for k in W.BASE if c["params"][k] != W.BASE[k]}
        assert changed == {c["factor"]}
    for factor, (levels, _) in W.FACTORS.items():
        assert W.BASE[factor] in levels  # the base is one level of every factor


def test_unknown_method_is_named():
    with pytest.raises(ValueError, match="unknown method 'glicko3'"):
        W.build_methods(["glicko3"])
