"""compare: the held-out comparison harness."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from filters import Elo
from statespace import Games, compare, metrics, scenarios

COLUMNS = ["n_test", "log_loss", "brier", "accuracy", "accuracy_50", "log_loss_3", "fit_seconds",
           "delta_log_loss", "delta_se"]


class Oracle:
    """Test-only method that forecasts with the true probabilities of a simulation.

    ``Games.row`` holds each game's position in the simulated table, so any sub-table (the
    held-out part) can be looked up in ``Simulation.true_proba()``.
    """

    name = "oracle"

    def __init__(self, sim):
        self._p = sim.true_proba()

    def fit(self, games: Games) -> "Oracle":
        return self

    def predict_proba(self, games: Games) -> np.ndarray:
        return self._p[games.row]

    def run(self, games: Games):
        class _Run:
            proba = self._p[games.row]
        return _Run()


class Coin:
    """Test-only method forecasting 50/50 everywhere."""

    name = "coin"

    def fit(self, games):
        return self

    def predict_proba(self, games):
        return np.tile([0.5, 0.0, 0.5], (len(games), 1))


@pytest.fixture(scope="module")
def sim():
    return scenarios.get("balanced", seed=3)


def test_one_row_per_method_with_documented_columns(sim):
    table = compare({"elo16": Elo(k=16), "elo32": Elo(k=32), "coin": Coin()}, sim.games)
    assert sorted(table.index) == ["coin", "elo16", "elo32"]
    assert table.index.name == "method"
    assert list(table.columns) == COLUMNS
    assert (table["n_test"] == 600 - round(0.7 * 600)).all()
    assert table["log_loss"].is_monotonic_increasing  # best first
    assert table["delta_log_loss"].iloc[0] == 0.0 and table["delta_se"].iloc[0] == 0.0
    assert (table["delta_log_loss"] >= 0).all()
    # Elo forecasts no draws on data with draws: log_loss_3 not applicable
    assert table["log_loss_3"].isna().all()
    # the coin's log loss is log 2 for every game, by hand
    assert table.loc["coin", "log_loss"] == pytest.approx(math.log(2))
    assert table.loc["coin", "brier"] == pytest.approx(np.mean((0.5 - table.attrs["test"].score) ** 2))
    test = table.attrs["test"]
    assert set(table.attrs["proba"]) == set(table.index)
    for name in table.index:
        assert table.attrs["proba"][name].shape == (len(test), 3)
    # the scores in the table are the metrics of the stored forecasts
    p = table.attrs["proba"]["elo32"]
    assert table.loc["elo32", "log_loss"] == pytest.approx(metrics.log_loss(test.score, p))
    assert table.loc["elo32", "accuracy_50"] == pytest.approx(metrics.accuracy(test.score, p, band=None))


def test_list_of_methods_is_named_and_deduplicated(sim):
    table = compare([Elo(k=16), Elo(k=32), Elo(k=32)], sim.games)
    assert len(table) == 3
    assert len(set(table.index)) == 3
    table = compare(Elo(), sim.games)
    assert list(table.index) == ["elo"]


def test_held_out_part_is_the_time_ordered_tail(sim):
    table = compare({"elo": Elo()}, sim.games, split=0.8)
    test = table.attrs["test"]
    train_rows = np.setdiff1d(np.arange(len(sim.games)), test.row)
    assert len(test) == 600 - 480
    assert sim.games.time[train_rows].max() <= test.time.min()


def test_frozen_and_online_modes(sim):
    games = sim.games
    frozen = compare({"elo": Elo(k=32)}, games, mode="frozen")
    online = compare({"elo": Elo(k=32)}, games, mode="online")
    test = frozen.attrs["test"]
    p_frozen = frozen.attrs["proba"]["elo"]
    p_online = online.attrs["proba"]["elo"]
    assert not np.allclose(p_frozen, p_online)
    # online = the filter run over all games, held-out rows sliced out
    full = Elo(k=32).run(games).proba
    np.testing.assert_allclose(p_online, full[test.row], rtol=0, atol=1e-15)
    # frozen = fitted on the training part only, forecast from its final state
    train, _ = games.split(0.7)
    np.testing.assert_allclose(p_frozen, Elo(k=32).fit(train).predict_proba(test), rtol=0, atol=1e-15)
    # frozen Elo: held-out forecasts are the final-rating formula 1 / (1 + 10^(-d/400))
    final = Elo(k=32).fit(train).ratings().set_index("player")["mean"]
    ra = final.reindex(test.a_name).fillna(1500.0).to_numpy()
    rb = final.reindex(test.b_name).fillna(1500.0).to_numpy()
    np.testing.assert_allclose(p_frozen[:, 0], 1 / (1 + 10 ** (-(ra - rb) / 400)), atol=1e-12)


def test_online_on_a_shuffled_table_slices_by_row():
    sim = scenarios.get("balanced", seed=4)
    g = sim.games
    perm = np.random.default_rng(0).permutation(len(g))
    shuffled = Games.from_arrays(g.time[perm], g.a_name[perm], g.b_name[perm], g.score[perm])
    online = compare({"elo": Elo()}, shuffled, mode="online")
    test = online.attrs["test"]
    full = Elo().run(shuffled).proba
    np.testing.assert_allclose(online.attrs["proba"]["elo"], full[test.row], rtol=0, atol=1e-15)
    assert len(test) == 600 - 420
    # test.row points into the shuffled table: its results are the held-out rows' results
    np.testing.assert_array_equal(test.score, shuffled.score[test.row])


def test_oracle_beats_elo_on_a_simulated_scenario(sim):
    table = compare({"oracle": Oracle(sim), "elo": Elo(k=32)}, sim.games)
    assert table.index[0] == "oracle"
    elo = table.loc["elo"]
    assert elo["delta_log_loss"] > 0
    assert np.isfinite(elo["delta_se"]) and elo["delta_se"] > 0
    # the oracle has the documented 3-outcome score since it forecasts draws
    assert np.isfinite(table.loc["oracle", "log_loss_3"])
    # same result online (the oracle's run ignores history)
    online = compare({"oracle": Oracle(sim), "elo": Elo(k=32)}, sim.games, mode="online")
    assert online.index[0] == "oracle"
    # delta and its se agree with metrics.paired_difference on the stored forecasts
    y = table.attrs["test"].score
    loss = {n: metrics.log_loss(y, table.attrs["proba"][n], per_game=True) for n in ("elo", "oracle")}
    d = loss["elo"] - loss["oracle"]
    assert elo["delta_log_loss"] == pytest.approx(d.mean())
    assert elo["delta_se"] == pytest.approx(d.std(ddof=1) / np.sqrt(d.size))


def test_bad_arguments_raise(sim):
    with pytest.raises(ValueError, match="mode"):
        compare({"elo": Elo()}, sim.games, mode="live")
    with pytest.raises(ValueError):
        compare({}, sim.games)
    with pytest.raises(TypeError):
        compare({"elo": Elo()}, sim.games.to_frame())
    with pytest.raises(ValueError):
        compare({"elo": Elo()}, sim.games, split=1.0)
    with pytest.raises(ValueError, match="run"):
        compare({"coin": Coin()}, sim.games, mode="online")
