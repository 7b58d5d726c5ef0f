"""statespace.methods.plots: what each plot draws (lines, bands, truth, error bars) and that it saves."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.container import ErrorbarContainer  # noqa: E402

import filters  # noqa: E402
from statespace import ELO_SCALE, SkillModel, compare, scenarios
from statespace.methods import plots  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def sim():
    return scenarios.get("drifting", seed=1)


@pytest.fixture(scope="module")
def fitted(sim):
    return filters.Elo().fit(sim.games)


class _WithSd:
    """A fitted Elo run that also reports an sd, standing in for methods that track one."""

    def __init__(self, run):
        self._run = run
        self.games = run.games
        self.method = run.method

    def trajectories(self):
        t = self._run.trajectories().copy()
        t["sd"] = 300.0 / np.sqrt(1.0 + t.groupby("player").cumcount())
        return t

    def ratings(self):
        r = self._run.ratings().copy()
        r["sd"] = 40.0
        return r


def _legend_texts(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def _bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


# ---------------------------------------------------------------------------- trajectories
def test_trajectories_top_players_without_sd(fitted):
    ax = plots.plot_trajectories(fitted, top=4)
    assert isinstance(ax, matplotlib.axes.Axes)
    assert len(ax.lines) == 4
    assert _bands(ax) == []  # Elo has no sd: no band
    top4 = list(fitted.ratings()["player"][:4])
    assert _legend_texts(ax) == top4
    assert [line.get_label() for line in ax.lines] == top4
    # each line ends at the player's final rating
    final = fitted.ratings().set_index("player")["mean"]
    for line in ax.lines:
        assert line.get_ydata()[-1] == pytest.approx(final[line.get_label()])
    assert "Elo points" in ax.get_ylabel()
    assert ax.get_xlabel() == "date"
    assert ax.get_title()


def test_trajectories_truth_overlay_same_colour_dashed(fitted, sim):
    ax = plots.plot_trajectories(fitted, players=["P03", "P17"], truth=sim.truth)
    assert len(ax.lines) == 4
    est, truth = ax.lines[0::2], ax.lines[1::2]
    for e, t, name in zip(est, truth, ["P03", "P17"]):
        assert e.get_label() == name
        assert t.get_linestyle() == "--" and e.get_linestyle() == "-"
        assert matplotlib.colors.same_color(e.get_color(), t.get_color())
        skill = sim.truth.loc[sim.truth["player"] == name, "skill"].to_numpy()
        assert np.allclose(t.get_ydata(), skill)
    assert _legend_texts(ax) == ["P03", "P17", "true skill"]


def test_trajectories_bands_when_sd(fitted, sim):
    with_sd = _WithSd(fitted)
    ax = plots.plot_trajectories(with_sd, top=3, truth=sim.truth, band=2.0)
    assert len(_bands(ax)) == 3
    assert len(ax.lines) == 6
    assert _legend_texts(ax)[-2:] == ["true skill", "\u00b12 sd"]
    # the band spans mean +- 2 sd
    verts = _bands(ax)[0].get_paths()[0].vertices[:, 1]
    traj = with_sd.trajectories()
    first = traj[traj["player"] == ax.lines[0].get_label()]
    assert verts.max() == pytest.approx((first["mean"] + 2 * first["sd"]).max())
    assert verts.min() == pytest.approx((first["mean"] - 2 * first["sd"]).min())
    ax = plots.plot_trajectories(with_sd, top=3, band=0)
    assert _bands(ax) == []


def test_trajectories_bad_arguments(fitted):
    with pytest.raises(ValueError, match="no games for competitor 'nobody'"):
        plots.plot_trajectories(fitted, players=["P01", "nobody"])
    with pytest.raises(ValueError, match="top"):
        plots.plot_trajectories(fitted, top=0)


def test_trajectories_on_given_axes_and_png(fitted, tmp_path):
    fig, axes = plt.subplots(1, 2)
    ax = plots.plot_trajectories(fitted, players="P05", ax=axes[1])
    assert ax is axes[1] and len(axes[1].lines) == 1 and len(axes[0].lines) == 0
    path = tmp_path / "traj.png"
    fig.savefig(path)
    assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 5_000


def test_truth_in_units():
    truth = pd.DataFrame({"time": [0.0, 1.0], "player": ["a", "b"], "skill": [1500.0, 1673.7178]})
    elo = SkillModel("logistic", ELO_SCALE, 1500.0, 0.0, 0.0, "half")
    same = plots.truth_in_units(truth, elo, elo)
    assert np.allclose(same["skill"], truth["skill"])
    # TrueSkill-like units: probit, scale sqrt(2) * 25/6, mean 25
    ts = SkillModel("probit", math.sqrt(2) * 25 / 6, 25.0, (25 / 3) ** 2, 0.0, "none")
    out = plots.truth_in_units(truth, elo, ts)
    assert out["skill"].iloc[0] == pytest.approx(25.0)
    # one logistic scale unit becomes 1/1.702 probit scale units
    assert out["skill"].iloc[1] - 25.0 == pytest.approx(ts.scale * (1673.7178 - 1500) / ELO_SCALE / 1.702, rel=1e-6)
    assert list(out.columns) == ["time", "player", "skill"] and truth["skill"].iloc[0] == 1500.0


# ---------------------------------------------------------------------------- calibration
def test_calibration_single_and_many(fitted, sim):
    train, test = sim.games.split(0.7)
    p_elo = filters.Elo().fit(train).predict_proba(test)
    ax = plots.plot_calibration(test.score, p_elo, bins=8)
    containers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(containers) == 1
    diag = ax.lines[0]
    assert list(diag.get_xdata()) == [0, 1] and list(diag.get_ydata()) == [0, 1]
    assert _legend_texts(ax) == ["perfect calibration", "forecast"]

    ax = plots.plot_calibration(test.score, {"elo": p_elo, "fide": filters.Elo.fide().fit(train).predict_proba(test),
                                             "E only": p_elo[:, 0]}, bins=5)
    containers = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(containers) == 3
    assert _legend_texts(ax) == ["perfect calibration", "elo", "fide", "E only"]
    from statespace import metrics

    table = metrics.calibration_table(test.score, p_elo, bins=5)
    line = containers[0].lines[0]
    assert np.allclose(line.get_xdata(), table["mean_forecast"])
    assert np.allclose(line.get_ydata(), table["mean_score"])
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    with pytest.raises(ValueError):
        plots.plot_calibration(test.score, {})


# ---------------------------------------------------------------------------- comparison
def test_plot_comparison_two_panels_and_png(sim, fitted, tmp_path):
    table = compare([filters.Elo(), filters.Elo.fide()], sim.games)
    fig = plots.plot_comparison(table, fitted, sim.truth, top=3, title="t")
    cal, traj = fig.axes
    assert len([c for c in cal.containers if isinstance(c, ErrorbarContainer)]) == 2
    # 3 estimates + 3 truths + the line where held-out games begin
    assert len(traj.lines) == 7
    start = table.attrs["test"].time.min()
    assert pd.Timestamp(traj.lines[-1].get_xdata()[0]) == pd.Timestamp(start)
    path = tmp_path / "cmp.png"
    fig.savefig(path)
    assert path.read_bytes()[:4] == b"\x89PNG" and path.stat().st_size > 10_000

    fig = plots.plot_comparison(table)
    assert len(fig.axes) == 1
    with pytest.raises(ValueError, match="compare"):
        plots.plot_comparison(pd.DataFrame({"log_loss": [0.5]}))
