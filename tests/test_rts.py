"""RTSSmoother: the EKF forward, the Rauch-Tung-Striebel recursion back.

References written here, sharing no code with the package:

- the diagonal smoother against a dense Gaussian smoother of each competitor's chain: the EKF's
  filtered beliefs (its public trajectories) define the Gaussian site each node's games amount to
  (``1 / v_f - 1 / v_p`` in precision), and the chain's posterior under the random-walk (or
  Ornstein-Uhlenbeck) prior plus those sites is one dense solve;
- the full smoother against the dense posterior of the linearised model: the full EKF run period
  by period through its public ``run(..., state=)`` gives each game's linearisation point, and
  the posterior of every node given the Gaussian pseudo-observations ``d0 + g / kappa`` (precision
  ``kappa``) is one dense solve;
- the exact Gaussian case (Margin observations) is tests/test_exact_gaussian.py.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import statespace as ss
from conftest import walk_prior
from filters import EKF
from smoothers import LaplaceSmoother, RTSSmoother
from smoothers import rts as rts_module

LOGISTIC = ss.SkillModel("logistic", 1.0, 0.2, 1.0, drift=0.04, draw="half", home=0.3)


def small_games(n_players=4, n_games=40, n_times=15, seed=0, periods=False, dated=False):
    """Win/draw/loss games at ``n_times`` random times (several games at some), half at home."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_games)
    b = (a + 1 + rng.integers(0, n_players - 1, n_games)) % n_players
    t = np.sort(rng.choice(np.arange(0, 3 * n_times, 3), n_games)).astype(float)
    score = rng.choice([0.0, 0.5, 1.0], n_games, p=[0.4, 0.2, 0.4])
    names = np.array([f"P{i}" for i in range(n_players)])
    time = pd.Timestamp("2020-01-01") + pd.to_timedelta(t, unit="D") if dated else t
    return ss.Games.from_arrays(time, names[a], names[b], score, neutral=rng.random(n_games) < 0.5,
                                period=t.astype(int) if periods else None)


def node_table(fit) -> pd.DataFrame:
    """Every node as (player name, time) -> mean, var."""
    tl = fit.timeline
    return pd.DataFrame({"player": tl.players[tl.node_player], "time": tl.node_time, "mean": fit.mean,
                         "var": fit.var}).set_index(["player", "time"]).sort_index()


# ---------------------------------------------------------------------------- the backward pass
def chain_reference(games, model, times):
    """The dense Gaussian smoother of each competitor's chain given the diagonal EKF's sites:
    ``{(player, time): (mean, var, covariance with the previous node)}``."""
    traj = EKF(model).run(games).trajectories()
    traj["t"] = times[traj["row"].to_numpy()]
    out = {}
    for player, rows in traj.groupby("player", sort=False):
        filtered = rows.groupby("t", sort=True).last()  # after the node's last game (time order)
        t = filtered.index.to_numpy(float)
        mf, vf = filtered["mean"].to_numpy(), filtered["sd"].to_numpy() ** 2
        n = t.size
        phi, q = model.transition(np.diff(t))
        mu = model.prior_mean
        # the predicted beliefs: the prior at the first node, the transition after it
        mp = np.r_[mu, mu + phi * (mf[:-1] - mu)]
        vp = np.r_[model.prior_var, phi**2 * vf[:-1] + q]
        prec = np.zeros((n, n))
        lin = np.zeros(n)
        prec[0, 0] += 1.0 / model.prior_var
        lin[0] += mu / model.prior_var
        for k in range(1, n):  # x_k = mu + phi (x_{k-1} - mu) + N(0, q)
            w, f = 1.0 / q[k - 1], phi[k - 1]
            prec[k, k] += w
            prec[k - 1, k - 1] += f * f * w
            prec[k, k - 1] -= f * w
            prec[k - 1, k] -= f * w
            lin[k] += w * mu * (1 - f)
            lin[k - 1] -= f * w * mu * (1 - f)
        prec[np.diag_indices(n)] += 1.0 / vf - 1.0 / vp  # each node's games as a Gaussian site
        lin += mf / vf - mp / vp
        cov = np.linalg.inv(prec)
        mean = cov @ lin
        for k in range(n):
            out[(player, t[k])] = (mean[k], cov[k, k], cov[k, k - 1] if k else np.nan)
    return out


@pytest.mark.parametrize("reversion", [0.0, 0.05])
@pytest.mark.parametrize("periods", [False, True])
def test_diagonal_backward_pass_is_the_dense_chain_smoother(reversion, periods):
    model = ss.SkillModel("logistic", 1.0, 0.2, 1.0, drift=0.04, draw="half", home=0.3, reversion=reversion)
    games = small_games(seed=1, periods=periods)
    fit = RTSSmoother(model).fit(games)
    ref = chain_reference(games, model, RTSSmoother(model).times(games))
    nodes = node_table(fit)
    tl = fit.timeline
    prev_cov = pd.Series(fit.info["prev_cov"], index=pd.MultiIndex.from_arrays([tl.players[tl.node_player],
                                                                                tl.node_time]))
    assert len(ref) == len(nodes)
    for key, (mean, var, cov) in ref.items():
        assert nodes.loc[key, "mean"] == pytest.approx(mean, abs=1e-9)
        assert nodes.loc[key, "var"] == pytest.approx(var, abs=1e-9)
        assert prev_cov.loc[key] == pytest.approx(cov, abs=1e-9, nan_ok=True)


def linearised_reference(games, model):
    """The posterior of every node given the full EKF's linearisations (games with periods, one
    per time): nodes sorted by player id then time, mean and covariance."""
    ekf = EKF(model, "full")
    t = games.period.astype(float)
    nodes, at, prec, lin = walk_prior(games.a, games.b, t, model.prior_mean, model.prior_var, model.drift)
    state = None
    for period in np.unique(games.period):
        rows = np.flatnonzero(games.period == period)
        if state is not None:  # the linearisation point: the pre-period mean (a random walk moves no mean)
            index = state.index()
            mean = state.values[:, 0]
            for g in rows:
                ma = mean[index[games.a_name[g]]] if games.a_name[g] in index else model.prior_mean
                mb = mean[index[games.b_name[g]]] if games.b_name[g] in index else model.prior_mean
                _lin_site(prec, lin, at, games, g, t[g], ma - mb, model)
        else:
            for g in rows:
                _lin_site(prec, lin, at, games, g, t[g], 0.0, model)
        state = ekf.run(games.take(rows), state=state).state
    cov = np.linalg.inv(prec)
    return nodes, cov @ lin, cov


def _lin_site(prec, lin, at, games, g, time, diff, model):
    """Game ``g`` as a Gaussian pseudo-observation of ``s_a - s_b``: ``diff + g / kappa`` with
    precision ``kappa``, from the log-likelihood's derivatives at ``d0 = diff + home``."""
    home = model.home * (not games.neutral[g])
    grad, curv = model.loglik_derivs(games.score[g], diff + home)
    kappa = -float(curv)
    h = np.zeros(len(lin))
    h[at[(int(games.a[g]), time)]] = 1.0
    h[at[(int(games.b[g]), time)]] = -1.0
    prec += kappa * np.outer(h, h)
    lin += h * (kappa * diff + float(grad))


def test_full_backward_pass_is_the_linearised_models_posterior():
    games = small_games(n_players=5, n_games=50, seed=2, periods=True)
    nodes, mean, cov = linearised_reference(games, LOGISTIC)
    fit = RTSSmoother(LOGISTIC, "full").fit(games)
    assert list(zip(fit.timeline.node_player.tolist(), fit.timeline.node_time.tolist())) == nodes
    np.testing.assert_allclose(fit.mean, mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.var, np.diag(cov), rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.cov, cov, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------- limits
@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_drift_0_is_the_filters_final_belief_and_the_limit_of_small_drifts(covariance):
    """Drift 0: one node per competitor, the EKF's final belief (nothing moves, so the last games
    say everything). A tiny drift goes through the backward pass instead: every node of a chain
    is then (nearly) its last filtered belief, since a gain ``C = v_f / (v_f + q dt)`` of 1 copies
    the later node back."""
    games = small_games(seed=3)
    static = dataclasses.replace(LOGISTIC, drift=0.0)
    fit = RTSSmoother(static, covariance).fit(games)
    run = EKF(static, covariance).run(games)
    assert fit.static and fit.timeline.n_nodes == run.state.players.size
    final = run.state.frame().set_index("player")
    names = fit.timeline.players[fit.timeline.node_player]
    np.testing.assert_array_equal(fit.mean, final.loc[names, "mean"].to_numpy())
    np.testing.assert_allclose(fit.var, final.loc[names, "sd"].to_numpy() ** 2, rtol=1e-14, atol=0)
    tiny = RTSSmoother(static, covariance, drift=1e-12).fit(games)
    assert not tiny.static
    last = pd.Series(fit.mean, index=names)
    np.testing.assert_allclose(tiny.mean, last[tiny.timeline.players[tiny.timeline.node_player]].to_numpy(),
                               rtol=0, atol=1e-9)


@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_games_with_no_time_between_share_one_node(covariance):
    """All games at one time: one node per competitor, the filter's final belief (nothing comes
    after it), whatever the drift."""
    games = small_games(seed=4)
    games = games._replace(time=np.full(len(games), 7.0))
    fit = RTSSmoother(LOGISTIC, covariance).fit(games)
    run = EKF(LOGISTIC, covariance).run(games)
    assert not fit.static and fit.timeline.n_nodes == games.n_players
    final = run.state.frame().set_index("player")
    names = fit.timeline.players[fit.timeline.node_player]
    np.testing.assert_array_equal(fit.mean, final.loc[names, "mean"].to_numpy())


@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_forecasts_after_the_last_game_are_the_filters(covariance):
    """A last node keeps its filtered belief, so frozen forecasts are the EKF's own."""
    games = small_games(n_games=60, seed=5)
    train, test = games.split(0.7)
    rts = RTSSmoother(LOGISTIC, covariance).fit(train).predict_proba(test)
    ekf = EKF(LOGISTIC, covariance).run(train).predict_proba(test)
    np.testing.assert_allclose(rts, ekf, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------- invariances
@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_relabelling_the_players_changes_nothing(covariance):
    games = small_games(n_players=5, n_games=50, seed=6)
    rename = {f"P{i}": f"Z{9 - i}" for i in range(5)}  # reverses the sorted order
    other = ss.Games.from_arrays(games.time, [rename[p] for p in games.a_name], [rename[p] for p in games.b_name],
                                 games.score, neutral=games.neutral)
    a = node_table(RTSSmoother(LOGISTIC, covariance).fit(games))
    b = node_table(RTSSmoother(LOGISTIC, covariance).fit(other))
    b.index = b.index.set_levels([{v: k for k, v in rename.items()}[p] for p in b.index.levels[0]], level=0)
    b = b.sort_index()
    np.testing.assert_allclose(a.to_numpy(), b.loc[a.index].to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("covariance", ["diagonal", "full"])
def test_variances_are_positive_and_smoothing_never_widens_them(covariance):
    """Smoothed variance <= filtered variance at every node (later games only add information),
    with equality at each competitor's last node. With periods, the filtered belief at a node is
    the EKF's record after the node's period (its trajectories)."""
    games = small_games(n_players=5, n_games=60, seed=7, periods=True)
    fit = RTSSmoother(LOGISTIC, covariance).fit(games)
    traj = EKF(LOGISTIC, covariance).run(games).trajectories()
    traj["t"] = games.period[traj["row"].to_numpy()].astype(float)
    filtered = traj.groupby(["player", "t"]).last()["sd"] ** 2
    nodes = node_table(fit)
    vf = filtered.loc[nodes.index].to_numpy()
    assert np.all(nodes["var"] > 0)
    assert np.all(nodes["var"].to_numpy() <= vf * (1 + 1e-12))
    assert np.any(nodes["var"].to_numpy() < 0.9 * vf)  # it does shrink
    tl = fit.timeline
    last = tl.node_player != np.r_[tl.node_player[1:], -1]
    last_vf = filtered.loc[list(zip(tl.players[tl.node_player[last]], tl.node_time[last]))].to_numpy()
    np.testing.assert_allclose(fit.var[last], last_vf, rtol=1e-12, atol=0)


# ---------------------------------------------------------------------------- refits
@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("covariance", ["diagonal", "full"])
@pytest.mark.parametrize("periods", [False, True])
def test_warm_start_equals_a_fit_from_scratch(covariance, periods):
    """A refit continues the forward pass and stops the backward one where the smoothed beliefs
    stop changing (here with gains about 0.8, after some 110 nodes of a chain: the history is
    longer than that, so the refit smooths fewer nodes or times than a fit from scratch)."""
    games = small_games(n_players=4, n_games=600, n_times=300, seed=8, periods=periods)
    method = RTSSmoother(LOGISTIC, covariance)
    t = games.time
    first = games.take(np.flatnonzero(t < 700))
    middle = games.take(np.flatnonzero(t < 800))
    warm = method.fit(middle, warm_start=method.fit(first))
    warm = method.fit(games, warm_start=warm)
    cold = method.fit(games)
    assert warm.info["warm_start"] == f"resumed after {len(middle)} games"
    assert cold.info["warm_start"] == "none"
    np.testing.assert_allclose(warm.mean, cold.mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(warm.var, cold.var, rtol=0, atol=1e-9)
    if covariance == "full":
        np.testing.assert_allclose(warm.cov, cold.cov, rtol=0, atol=1e-9)
        assert warm.info["backward_steps"] < cold.info["backward_steps"]
    else:
        assert warm.info["backward_nodes"] < cold.info["backward_nodes"]
    np.testing.assert_allclose(warm.predict_proba(games), cold.predict_proba(games), rtol=0, atol=1e-9)


@pytest.mark.parametrize("periods", [False, True])
def test_a_refit_grows_the_earlier_timeline_into_the_one_built_afresh(periods):
    """A refit numbers the nodes from the earlier fit's timeline and the new games'
    (``base.extend_timeline``): the same timeline as ``timeline(games, times)``, for rows not in
    time order too, and the same fit as one built from a table naming the competitors in another
    order (which cannot share the ids, so the refit maps the earlier nodes by name and time)."""
    from smoothers.base import extend_timeline, timeline

    games = small_games(n_players=6, n_games=300, n_times=100, seed=21, periods=periods)
    games = games.take(np.random.default_rng(22).permutation(len(games)))  # rows out of time order
    method = RTSSmoother(LOGISTIC)
    first = games.take(np.flatnonzero(games.time < 150))
    times = method.times(games)
    old_tl = timeline(first, method.times(first))
    grown, old_to, new_to = extend_timeline(old_tl, first, games, times)
    built = timeline(games, times)
    for field in ("players", "node_player", "node_time", "prev", "dt", "game_a", "game_b"):
        np.testing.assert_array_equal(getattr(grown, field), getattr(built, field), err_msg=field)
    np.testing.assert_array_equal(grown.node_player[old_to], old_tl.node_player)
    np.testing.assert_array_equal(grown.node_time[old_to], old_tl.node_time)
    np.testing.assert_array_equal(np.sort(np.r_[old_to, new_to]), np.arange(built.n_nodes))
    warm = method.fit(games, warm_start=method.fit(first))
    cold = method.fit(games)
    assert warm.info["warm_start"] == f"resumed after {len(first)} games"
    np.testing.assert_allclose(warm.mean, cold.mean, rtol=0, atol=1e-9)
    np.testing.assert_allclose(warm.var, cold.var, rtol=0, atol=1e-9)
    np.testing.assert_allclose(warm.info["prev_cov"], cold.info["prev_cov"], rtol=0, atol=1e-9, equal_nan=True)
    # one more game, with a newcomer whose name comes first: every competitor gets another id
    frame = games.to_frame()
    extra = pd.DataFrame({"time": [frame["time"].max() + 3], "a": ["A newcomer"], "b": ["P0"], "score": [1.0],
                          "neutral": [1], **({"period": [frame["period"].max() + 3]} if periods else {})})
    more = ss.Games.from_frame(pd.concat([frame, extra], ignore_index=True))
    assert more.players[0] == "A newcomer"
    refit = method.fit(more, warm_start=method.fit(first))
    assert refit.info["warm_start"] == f"resumed after {len(first)} games"
    pd.testing.assert_frame_equal(node_table(refit), node_table(method.fit(more)), rtol=0, atol=1e-9)


def test_forecasts_use_each_competitors_last_node_at_or_before_the_game():
    """``SmootherFit._node_at`` (which forecasts and refits use) against a search of every node."""
    games = small_games(n_players=5, n_games=200, n_times=60, seed=23)
    fit = RTSSmoother(LOGISTIC).fit(games)
    tl = fit.timeline
    rng = np.random.default_rng(24)
    ids = rng.integers(-1, tl.players.size, 2000)
    t = np.r_[rng.uniform(-10, 200, 1000), rng.choice(tl.node_time, 1000)]  # between nodes and at them
    want = np.full(ids.size, -1)
    for i in range(ids.size):
        mine = np.flatnonzero((tl.node_player == ids[i]) & (tl.node_time <= t[i]))
        if ids[i] >= 0 and mine.size:
            want[i] = mine.max()
    np.testing.assert_array_equal(fit._node_at(ids, t), want)


def test_a_warm_start_that_is_not_a_prefix_refits_from_scratch():
    games = small_games(n_games=60, seed=10)
    method = RTSSmoother(LOGISTIC)
    cold = method.fit(games)
    other = method.fit(small_games(n_games=30, seed=11))
    fit = method.fit(games, warm_start=other)
    assert fit.info["warm_start"].startswith("refitted: the earlier fit's games are not")
    np.testing.assert_array_equal(fit.mean, cold.mean)
    # a new game at the earlier fit's last time (that time's node would change under it)
    ts = games.time[games.order]
    k = np.flatnonzero(ts[1:] == ts[:-1])[-1]  # the k-th and next games (time order) share a time
    tied = method.fit(games, warm_start=method.fit(games.take(games.order[:k + 1])))
    assert tied.info["warm_start"] == "refitted: new games at the earlier fit's last time"
    np.testing.assert_array_equal(tied.mean, cold.mean)


def test_warm_start_must_be_a_fit_of_the_same_smoother():
    games = small_games(seed=12)
    with pytest.raises(TypeError, match="warm_start"):
        RTSSmoother(LOGISTIC).fit(games, warm_start="yesterday")
    with pytest.raises(ValueError, match="warm_start must be a fit of RTSSmoother"):
        RTSSmoother(LOGISTIC).fit(games, warm_start=LaplaceSmoother(LOGISTIC).fit(games))
    with pytest.raises(ValueError, match="warm_start must be a fit of RTSSmoother"):
        RTSSmoother(LOGISTIC, drift=0.1).fit(games, warm_start=RTSSmoother(LOGISTIC).fit(games))


def test_compiled_and_python_backward_passes_agree():
    """The compiled chain recursion and the same function as plain Python (``NUMBA_DISABLE_JIT=1``
    runs the latter) give the same numbers."""
    rng = np.random.default_rng(13)
    n = 50
    prev = np.where(np.arange(n) % 10 == 0, -1, np.arange(n) - 1).astype(np.int64)
    mf, vf = rng.normal(size=n), rng.uniform(0.1, 1.0, n)
    a, q = rng.uniform(0.8, 1.0, n), rng.uniform(0.01, 0.1, n)
    ends = np.arange(9, n, 10, dtype=np.int64)
    out = []
    for fn in (rts_module._smooth_chains, rts_module._smooth_chains.py_func):
        ms, vs = np.empty(n), np.empty(n)
        visited = fn(mf, vf, a, q, 0.3, ends, prev, ms, vs, np.zeros(n, np.bool_), 0.0, 0.0)
        out.append((visited, ms, vs))
    assert out[0][0] == out[1][0] == n
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][2], out[1][2])


# ---------------------------------------------------------------------------- the shared interface
def test_walk_forward_compare_runs_with_warm_starts():
    model = ss.SkillModel("logistic", 1.0, 0.0, 1.0, drift=0.02, draw="half")
    games = ss.simulate(model, n_players=10, n_games=300, days=120, seed=14).games
    table = ss.compare({"rts": RTSSmoother(model), "rts_full": RTSSmoother(model, "full"), "ekf": EKF(model)},
                       games, mode="walk_forward", every=20)
    assert set(table.index) == {"rts", "rts_full", "ekf"}
    assert np.all(np.isfinite(table["log_loss"]))
    for name in ("rts", "rts_full"):
        p = table.attrs["proba"][name]
        assert np.all((p >= 0) & (p <= 1)) and np.allclose(p.sum(axis=1), 1.0)


def test_registered_as_rts_and_built_from_a_method_spec(capsys):
    from statespace.methods import registry
    from statespace.methods.specs import parse_method
    from statespace.app.cli import main

    assert registry.get("rts") is RTSSmoother
    m = parse_method("rts:covariance=full,drift=0.5,refit_tol=1e-10")
    assert isinstance(m, RTSSmoother) and m.covariance == "full" and m.model.drift == 0.5
    assert RTSSmoother(**m.get_params()).get_params() == m.get_params()
    assert m.with_params(covariance="diagonal").covariance == "diagonal"
    assert main(["compare", "--methods", "rts,ekf", "--mode", "walk_forward", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"rts"' in out


def test_ratings_and_trajectories_are_the_shared_fits():
    games = small_games(n_games=60, seed=15, dated=True)
    fit = RTSSmoother(ss.SkillModel("logistic", 173.7, 1500.0, 350.0**2, drift=100.0, draw="half")).fit(games)
    r = fit.ratings()
    assert list(r.columns) == ["player", "mean", "sd", "lower", "upper", "games"]
    assert r["games"].sum() == 2 * len(games)
    traj = fit.trajectories()
    assert len(traj) == fit.timeline.n_nodes and np.all(traj["sd"] > 0)
    assert fit.ratings(at="2020-02-01").shape[0] == games.n_players


def test_bad_settings_are_value_errors_naming_the_setting(monkeypatch):
    games = small_games(seed=16)
    with pytest.raises(ValueError, match="covariance must be 'diagonal' or 'full'"):
        RTSSmoother(covariance="scalar")
    with pytest.raises(ValueError, match="rts: drift must be a finite number in"):
        RTSSmoother(drift=-1.0)
    with pytest.raises(ValueError, match="home_drift"):
        RTSSmoother(ss.SkillModel(home_drift=0.1))
    with pytest.raises(ValueError, match="reversion"):
        RTSSmoother(ss.SkillModel(drift=0.0, reversion=0.1))
    with pytest.raises(ValueError, match="refit_tol"):
        RTSSmoother(refit_tol=-1.0)
    with pytest.raises(ValueError, match="dense_cov_limit"):
        RTSSmoother(dense_cov_limit=1.5)
    with pytest.raises(ValueError, match="iterations"):
        RTSSmoother(iterations=0)
    with pytest.raises(ValueError, match="initial="):
        RTSSmoother(LOGISTIC).fit(games, initial={"P0": 1.0})
    with pytest.raises(TypeError, match="Games"):
        RTSSmoother(LOGISTIC).fit(games.to_frame())
    monkeypatch.setattr(rts_module, "_FULL_BYTES", 1000)
    with pytest.raises(ValueError, match="covariance='full' would store"):
        RTSSmoother(LOGISTIC, "full").fit(games)


def test_draws_under_draw_model_none_are_refused():
    games = small_games(seed=17)
    with pytest.raises(ValueError, match="no likelihood under draw model 'none'"):
        RTSSmoother(ss.SkillModel("logistic", 1.0, drift=0.1)).fit(games)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("observation", [ss.Margin(2.0), ss.Goals(0.3)])
def test_margin_and_goals_observations(observation):
    rng = np.random.default_rng(18)
    games = small_games(n_games=50, seed=18)
    games = ss.Games.from_arrays(games.time, games.a_name, games.b_name, neutral=games.neutral,
                                 score_a=rng.poisson(1.5, 50).astype(float), score_b=rng.poisson(1.2, 50).astype(float))
    model = ss.SkillModel(scale=2.0, prior_var=1.0, drift=0.05, home=0.2, observation=observation)
    for covariance in ("diagonal", "full"):
        fit = RTSSmoother(model, covariance).fit(games)
        assert np.all(np.isfinite(fit.mean)) and np.all(fit.var > 0)
        p = fit.predict_proba(games)
        assert np.allclose(p.sum(axis=1), 1.0)


# ---------------------------------------------------------------------------- property
@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_players=st.integers(2, 6), n_games=st.integers(1, 40),
       drift=st.sampled_from([0.0, 1e-3, 0.1, 5.0]), reversion=st.sampled_from([0.0, 0.2]),
       link=st.sampled_from(["logistic", "probit"]), covariance=st.sampled_from(["diagonal", "full"]),
       periods=st.booleans())
def test_forecasts_are_probabilities(seed, n_players, n_games, drift, reversion, link, covariance, periods):
    if drift == 0.0:
        reversion = 0.0
    model = ss.SkillModel(link, 1.0, 0.0, 2.0, drift=drift, draw="half", home=0.4, reversion=reversion)
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_games)
    b = (a + 1 + rng.integers(0, n_players - 1, n_games)) % n_players
    t = np.sort(rng.integers(0, 10, n_games)).astype(float)
    games = ss.Games.from_arrays(t, a.astype(str), b.astype(str), rng.choice([0.0, 0.5, 1.0], n_games),
                                 neutral=rng.random(n_games) < 0.5, period=t.astype(int) if periods else None)
    fit = RTSSmoother(model, covariance).fit(games)
    assert np.all(fit.var > 0) and np.all(np.isfinite(fit.mean))
    future = games._replace(time=games.time + 3.0, period=None if games.period is None else games.period + 3)
    for p in (fit.predict_proba(games), fit.predict_proba(future)):
        assert p.shape == (n_games, 3)
        assert np.all((p >= 0) & (p <= 1))
        np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
