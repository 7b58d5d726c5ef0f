"""TrueSkill Through Time (``smoothers.ttt.TrueSkillThroughTime``).

- against the ``trueskillthroughtime`` package (Landfried and Mocskos; a test-only peer, the test
  skips without it) on small random histories with wins and draws: the same posterior mean and sd
  at every node after convergence;
- one game without dynamics is one TrueSkill (ADF) update: ``filters.TrueSkill.rate_1vs1``;
- ``max_iter=0`` (the forward pass only) is the ``filters.TrueSkill(dynamics="time")`` filter, with
  rating periods (each period's games from the pre-period beliefs) and without (one game after
  another);
- relabelling competitors changes nothing; variances stay positive and finite; forecasts are
  probabilities summing to 1 (hypothesis);
- the smoothed sd at an interior node is below the filtered one;
- warm starts; incremental refits (a walk-forward's) against fits from scratch, tightly converged
  and with the defaults, and that they visit only the slices whose messages change and number
  nodes and games as a fit from scratch; settings errors, the registry and ``compare``; the
  compiled and the plain-Python runs agree;
- ``draw_probability`` left out is learned from the games as ``filters.TrueSkill`` learns it (0 on
  games without a draw whose absence the classic 0.10's forecasts make implausible, else 0.10):
  the fit carries the value, forecasts no draw where it is 0, refits stay incremental, and an
  explicit value above 0 on such games warns.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import statespace as ss
from conftest import compiled_and_python_runs
from filters import TrueSkill
from smoothers import SmootherFit
from smoothers.ttt import BETA, DRAW_PROBABILITY, MU, SIGMA, TAU, TrueSkillThroughTime


def random_games(seed: int, n_players: int = 5, n_games: int = 25, n_times: int = 6, draws: float = 0.2,
                 periods: bool = False) -> ss.Games:
    """Random one-vs-one games among ``n_players`` named competitors at ``n_times`` numeric times."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n_games)
    b = (a + rng.integers(1, n_players, n_games)) % n_players
    t = rng.integers(0, n_times, n_games).astype(float)
    score = rng.choice([0.0, 0.5, 1.0], n_games, p=[(1 - draws) / 2, draws, (1 - draws) / 2])
    names = np.array([f"p{k}" for k in range(n_players)])
    g = ss.Games.from_arrays(t, names[a], names[b], score)
    return g.with_periods(1) if periods else g


def node_table(fit: SmootherFit) -> pd.DataFrame:
    return fit.trajectories().set_index(["player", "time"])[["mean", "sd"]].sort_index()


# ---------------------------------------------------------------------------- (a) the peer package
@pytest.mark.parametrize("seed, gamma, p_draw", [(0, 25 / 300, 0.1), (1, 1.0, 0.25), (2, 0.0, 0.3), (3, 3.0, 0.05)])
def test_matches_trueskillthroughtime_package(seed, gamma, p_draw):
    """The same posterior at every node as ``trueskillthroughtime.History(...).convergence()``.

    Its settings, from its source (``trueskillthroughtime/__init__.py``, version 1.1.0):
    ``mu``, ``sigma`` (the prior ``Gaussian(mu, sigma)`` of every newcomer), ``beta`` (each
    player's performance noise), ``gamma`` (``Gaussian.forget``: ``sigma^2 + elapsed * gamma^2``,
    ``elapsed`` the time since the agent's last batch, so it is our ``tau`` per unit of time) and
    ``p_draw`` (``compute_margin(p_draw, sqrt(beta_a^2 + beta_b^2))`` =
    ``sqrt(2) beta Phi^{-1}((1 + p_draw) / 2)``, our one-vs-one draw margin). A batch is the games
    of one time (our slice); a draw is the result ``[0, 0]``. Its normal cdf is a rational
    approximation of erfc (relative error about 1e-7) and its margin inverts that, so agreement is
    to about 1e-6, not to rounding.
    """
    ttt = pytest.importorskip("trueskillthroughtime")
    g = random_games(seed)
    mu, sigma, beta = 25.0, 25.0 / 3.0, 25.0 / 6.0
    a, b, t, s = g.a_name, g.b_name, g.time, g.score
    composition = [[[a[i]], [b[i]]] for i in range(len(g))]
    results = [[0.0, 0.0] if s[i] == 0.5 else [s[i], 1.0 - s[i]] for i in range(len(g))]
    history = ttt.History(composition, results, [float(x) for x in t], mu=mu, sigma=sigma, beta=beta, gamma=gamma,
                          p_draw=p_draw)
    history.convergence(epsilon=1e-10, iterations=2000, verbose=False)
    theirs = pd.DataFrame([(p, time, n.mu, n.sigma) for p, curve in history.learning_curves().items()
                           for time, n in curve], columns=["player", "time", "mean", "sd"])
    theirs = theirs.set_index(["player", "time"]).sort_index()

    fit = TrueSkillThroughTime(mu, sigma, beta, gamma, p_draw, tol=1e-10, max_iter=2000).fit(g)
    assert fit.info["converged"]
    ours = node_table(fit)
    assert list(ours.index) == list(theirs.index)
    np.testing.assert_allclose(ours["mean"], theirs["mean"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours["sd"], theirs["sd"], rtol=0, atol=1e-5)


# ---------------------------------------------------------------------------- (b) one game is ADF
@pytest.mark.parametrize("score", [1.0, 0.5, 0.0])
def test_one_game_is_one_trueskill_update(score):
    """One factor: EP is exact ADF, the TrueSkill update (``tau = 0``: no dynamics)."""
    prior_a = prior_b = (MU, SIGMA)
    g = ss.Games.from_arrays([0.0], ["a"], ["b"], [score])
    fit = TrueSkillThroughTime(tau=0.0).fit(g)
    r = fit.ratings().set_index("player")
    ts = TrueSkill(tau=0.0)
    if score == 0.0:
        (mb, sb), (ma, sa) = ts.rate_1vs1(prior_b, prior_a)
    else:
        (ma, sa), (mb, sb) = ts.rate_1vs1(prior_a, prior_b, drawn=score == 0.5)
    np.testing.assert_allclose([r.loc["a", "mean"], r.loc["a", "sd"], r.loc["b", "mean"], r.loc["b", "sd"]],
                               [ma, sa, mb, sb], rtol=1e-12)
    assert fit.info["converged"] and fit.info["change"] < 1e-12
    # and the filter run on the same table gives the same
    run = TrueSkill(tau=0.0).fit(g).ratings().set_index("player")
    np.testing.assert_allclose(r.loc[["a", "b"], ["mean", "sd"]].to_numpy(), run.loc[["a", "b"], ["mean", "sd"]].to_numpy(),
                               rtol=1e-12)


def test_one_game_with_settings_and_home():
    """Other settings, and a home advantage (``a`` at home): still the filter's one update."""
    g = ss.Games.from_arrays([3.0], ["x"], ["y"], [0.0], neutral=[False])
    method = TrueSkillThroughTime(mu=10.0, sigma=2.0, beta=1.5, tau=0.0, draw_probability=0.3, home=0.7)
    ours = method.fit(g).ratings().set_index("player")[["mean", "sd"]]
    theirs = TrueSkill(mu=10.0, sigma=2.0, beta=1.5, tau=0.0, draw_probability=0.3, home=0.7).fit(g).ratings()
    np.testing.assert_allclose(ours.to_numpy(), theirs.set_index("player").loc[ours.index, ["mean", "sd"]].to_numpy(),
                               rtol=1e-12)


# ---------------------------------------------------------------------------- (c) the forward pass is the filter
def filter_nodes(run) -> pd.DataFrame:
    """Each competitor's state after its last game at each time, from a filter run."""
    tr = run.trajectories()
    return tr.groupby(["player", "time"])[["mean", "sd"]].last().sort_index()


@pytest.mark.parametrize("periods", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_forward_pass_is_the_trueskill_filter(seed, periods):
    """``max_iter=0``: every node is the ``filters.TrueSkill(dynamics="time")`` state after that
    time's games: with rating periods each period's games are updated from the pre-period beliefs
    (so the order inside a period does not matter), without them one after another in input order
    (a competitor may play several games at one time)."""
    g = random_games(seed, n_players=6, n_games=40, n_times=5, periods=periods)
    settings = dict(mu=20.0, sigma=6.0, beta=3.0, tau=1.5, draw_probability=0.2)
    fit = TrueSkillThroughTime(**settings, max_iter=0).fit(g)
    assert fit.info["sweeps"] == 0
    ours = node_table(fit)
    theirs = filter_nodes(TrueSkill(**settings, dynamics="time").run(g))
    assert list(ours.index) == list(theirs.index)
    np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fit.info["filtered_sd"], fit.trajectories()["sd"], rtol=1e-15)


def test_forward_pass_ignores_the_order_inside_a_period():
    g = random_games(4, n_games=30, n_times=3, periods=True)
    flipped = g.take(np.arange(len(g))[::-1])
    for max_iter in (0, 200):
        method = TrueSkillThroughTime(tau=1.0, max_iter=max_iter, tol=1e-12)
        one, two = node_table(method.fit(g)), node_table(method.fit(flipped))
        np.testing.assert_allclose(one.to_numpy(), two.to_numpy(), rtol=0, atol=1e-13 if max_iter == 0 else 1e-8)


# ---------------------------------------------------------------------------- (d) invariances and ranges
game_rows = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 5), st.integers(1, 5), st.sampled_from([0.0, 0.5, 1.0])),
                     min_size=1, max_size=30)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.filterwarnings("ignore::statespace.DrawWarning")  # an explicit 0.6 on rows without a draw
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=game_rows, tau=st.sampled_from([0.0, 0.1, 2.0]), p_draw=st.sampled_from([0.0, 0.1, 0.6]),
       periods=st.booleans())
def test_relabelling_changes_nothing_and_outputs_are_sane(rows, tau, p_draw, periods):
    """Renaming competitors (which reorders their ids) gives the same posterior per competitor;
    means are finite, sds positive and finite, forecasts probabilities that sum to 1."""
    t = np.array([r[0] for r in rows], dtype=float)
    a = np.array([r[1] for r in rows])
    b = (a + np.array([r[2] for r in rows])) % 6
    score = np.array([r[3] for r in rows])
    names = np.array(["ann", "bob", "cid", "dan", "eve", "fay"])
    renamed = dict(zip(names, ["zed", "yan", "xia", "wes", "val", "uma"]))
    g = ss.Games.from_arrays(t, names[a], names[b], score)
    h = ss.Games.from_arrays(t, [renamed[x] for x in names[a]], [renamed[x] for x in names[b]], score)
    if periods:
        g, h = g.with_periods(1), h.with_periods(1)
    method = TrueSkillThroughTime(tau=tau, draw_probability=p_draw, tol=1e-10, max_iter=500)
    fg, fh = method.fit(g), method.fit(h)
    one = node_table(fg)
    two = node_table(fh).rename(index={v: k for k, v in renamed.items()}, level="player").sort_index()
    assert list(one.index) == list(two.index)
    np.testing.assert_allclose(one.to_numpy(), two.to_numpy(), rtol=1e-9, atol=1e-9)
    for fit in (fg, fh):
        assert np.all(np.isfinite(fit.mean)) and np.all(fit.var > 0) and np.all(np.isfinite(fit.var))
    probe = ss.Games.from_arrays(np.r_[t, t + 3.0], np.r_[names[a], names[b]], np.r_[names[b], ["new"] * t.size],
                                 np.full(2 * t.size, 1.0))
    if periods:  # a fit with rating periods forecasts games with them
        probe = probe.with_periods(1)
    p = fg.predict_proba(probe)
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert (p[:, 1] > 0).all() == (p_draw > 0)


def test_swapping_sides_changes_nothing():
    """A game of ``a`` against ``b`` with score ``s`` is the game of ``b`` against ``a`` with ``1 - s``."""
    g = random_games(5, n_games=30)
    swapped = ss.Games.from_arrays(g.time, g.b_name, g.a_name, 1.0 - g.score)
    method = TrueSkillThroughTime(tau=0.8, tol=1e-12, max_iter=500)
    np.testing.assert_allclose(node_table(method.fit(g)).to_numpy(), node_table(method.fit(swapped)).to_numpy(),
                               rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------- (e) smoothing narrows
def test_smoothed_sd_at_an_interior_time_is_below_the_filtered():
    """``a`` plays at times 0, 1, 2: at time 1 the smoothed belief also has the evidence of time 2,
    so its sd is below the filtered (forward pass) one; at the last node they agree up to the
    opponents' smoothing."""
    g = ss.Games.from_arrays([0.0, 0.0, 1.0, 1.0, 2.0, 2.0], ["a", "a", "a", "a", "a", "a"],
                             ["b", "c", "b", "c", "b", "c"], [1.0, 0.0, 1.0, 0.5, 0.0, 1.0])
    method = TrueSkillThroughTime(tau=1.0, tol=1e-12, max_iter=500)
    smoothed = method.fit(g)
    filtered = method.with_params(max_iter=0).fit(g)
    s, f = node_table(smoothed), node_table(filtered)
    assert s.loc[("a", 1.0), "sd"] < f.loc[("a", 1.0), "sd"] - 0.1
    assert s.loc[("a", 0.0), "sd"] < f.loc[("a", 0.0), "sd"]
    # the fit keeps its forward pass's sds: the filtered ones
    np.testing.assert_allclose(smoothed.info["filtered_sd"], np.sqrt(filtered.var), rtol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_smoothed_sd_never_above_the_one_game_at_a_time_filter(seed):
    """Without rating periods the forward pass takes the games one at a time (ADF), and the
    smoothed sd of every node is at most its filtered one. (With rating periods the filter updates
    a period's games from the same pre-period belief, which overstates their joint evidence: there
    the smoothed sd can come out above the filtered one at a node.)"""
    g = random_games(seed, n_games=40, n_times=6)
    fit = TrueSkillThroughTime(tau=2.0, tol=1e-10, max_iter=1000).fit(g)
    assert np.all(np.sqrt(fit.var) <= fit.info["filtered_sd"] + 1e-12)


# ---------------------------------------------------------------------------- convergence, warm start
def test_converges_and_reports():
    g = random_games(6, n_games=60, n_times=8)
    fit = TrueSkillThroughTime(tau=1.0).fit(g)
    assert fit.info["converged"] and 0 < fit.info["sweeps"] <= 100 and fit.info["change"] <= 1e-4
    capped = TrueSkillThroughTime(tau=1.0, max_iter=1, tol=0.0).fit(g)
    assert capped.info["sweeps"] == 1 and not capped.info["converged"]


def test_warm_start_reaches_the_same_fixed_point():
    g = random_games(7, n_games=80, n_times=10)
    before = g.take(np.flatnonzero(g.time < 7))
    method = TrueSkillThroughTime(tau=1.0, tol=1e-11, max_iter=2000)
    cold = method.fit(g)
    warm = method.fit(g, warm_start=method.fit(before))
    assert warm.info["warm_games"] == len(before)
    assert warm.info["sweeps"] < cold.info["sweeps"]
    np.testing.assert_allclose(warm.mean, cold.mean, atol=1e-8)
    np.testing.assert_allclose(warm.var, cold.var, atol=1e-8)


def walk(method, games, t, edges):
    """Fit the games before ``edges[0]`` (times ``t``), then refit, warm-started, on the games before
    each later edge."""
    fit = method.fit(games.take(np.flatnonzero(t < edges[0])))
    for edge in edges[1:]:
        fit = method.fit(games.take(np.flatnonzero(t < edge)), warm_start=fit)
    return fit


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("periods", [False, True])
def test_an_incremental_refit_reaches_the_fixed_point_of_a_fit_from_scratch(periods):
    """Five incremental refits in turn (a walk-forward) against one fit from scratch of all the
    games, both converged tightly: the same posterior at every node and the same forecasts."""
    model = ss.SkillModel("probit", math.sqrt(2) * BETA, MU, SIGMA**2, 0.02, draw="threshold")
    games = ss.simulate(model, 16, 1200, days=400, seed=5).games
    if periods:
        games = games.with_periods("week")
    t = games.days() if games.period is None else games.period.astype(float)  # refits at whole periods
    method = TrueSkillThroughTime(tau=math.sqrt(0.02), tol=1e-9, max_iter=20000)
    warm = walk(method, games, t, list(np.round(np.quantile(t, [0.7, 0.76, 0.82, 0.88, 0.94]))) + [t.max() + 1])
    cold = method.fit(games)
    assert warm.info["refit"] == "incremental" and warm.info["warm_games"] < len(games)
    assert warm.info["converged"] and cold.info["converged"]
    np.testing.assert_allclose(warm.mean, cold.mean, rtol=0, atol=1e-5)
    np.testing.assert_allclose(np.sqrt(warm.var), np.sqrt(cold.var), rtol=0, atol=1e-7)
    np.testing.assert_allclose(warm.predict_proba(games), cold.predict_proba(games), rtol=0, atol=1e-6)
    if not periods:  # and a month after the last game
        later = ss.Games.from_arrays(np.full(len(games), games.time.max() + np.timedelta64(30, "D")), games.a_name,
                                     games.b_name, games.score)
        np.testing.assert_allclose(warm.predict_proba(later), cold.predict_proba(later), rtol=0, atol=1e-6)


def test_an_incremental_refit_with_the_defaults_forecasts_as_a_fit_from_scratch():
    """With the default tolerances (sweeps stop at tol = 1e-4 or after 100; a refit propagates
    moves above 1e-3) a walk-forward's forecasts agree with fits from scratch to about 1e-4."""
    model = ss.SkillModel("probit", math.sqrt(2) * BETA, MU, SIGMA**2, 0.02, draw="threshold")
    games = ss.simulate(model, 16, 3000, days=2000, seed=5).games
    t = games.days()
    method = TrueSkillThroughTime(tau=math.sqrt(0.02))
    edges = list(np.quantile(t, [0.9, 0.92, 0.94, 0.96, 0.98]))
    fit = method.fit(games.take(np.flatnonzero(t < edges[0])))
    for lo, hi in zip(edges, edges[1:] + [t.max() + 1]):
        fit = method.fit(games.take(np.flatnonzero(t < lo)), warm_start=fit)
        cold = method.fit(games.take(np.flatnonzero(t < lo)))
        block = games.take(np.flatnonzero((t >= lo) & (t < hi)))
        assert fit.info["refit"] == "incremental"
        np.testing.assert_allclose(fit.predict_proba(block), cold.predict_proba(block), rtol=0, atol=1e-3)


def test_an_incremental_refit_visits_only_the_slices_that_change():
    """Two leagues that never meet, on days of their own: new games of one leave every slice of
    the other unvisited and its every posterior as it was; the refit's layout of nodes and games
    is a fit from scratch's, and its posterior a fit's from scratch."""
    rng = np.random.default_rng(31)
    n = 400
    league = np.arange(n) % 2
    a = rng.integers(0, 6, n)
    b = (a + rng.integers(1, 6, n)) % 6
    names = np.array([[f"A{k}" for k in range(6)], [f"B{k}" for k in range(6)]])
    t = 2.0 * rng.integers(0, 150, n) + league  # league A on even days, B on odd ones
    score = rng.choice([0.0, 0.5, 1.0], n, p=[0.45, 0.1, 0.45])
    games = ss.Games.from_arrays(t, names[league, a], names[league, b], score)
    last_a = t[league == 0].max()
    first = games.take(np.flatnonzero(t <= last_a))  # both leagues up to A's last day
    method = TrueSkillThroughTime(tau=1.0, tol=1e-10, max_iter=10000)
    before = method.fit(first)
    refit = method.fit(games, warm_start=before)
    assert refit.info["refit"] == "incremental" and refit.info["converged"]
    st, new_st = before._ttt_state, refit._ttt_state
    in_a = np.char.startswith(refit.timeline.players[refit.timeline.node_player].astype(str), "A")
    slices_a = np.unique(new_st.node_slice[np.isin(new_st.node_order, np.flatnonzero(in_a))])
    slices_b = np.setdiff1d(np.arange(new_st.slice_times.size), slices_a)
    assert refit.info["slice_visits"] <= 2 * refit.info["sweeps"] * slices_b.size
    np.testing.assert_array_equal(new_st.fwd[:st.fwd.shape[0]][np.isin(new_st.node_slice[:st.fwd.shape[0]], slices_a)],
                                  st.fwd[np.isin(st.node_slice, slices_a)])
    old_a = before.trajectories().query("player.str.startswith('A')", engine="python")
    new_a = refit.trajectories().query("player.str.startswith('A')", engine="python")
    pd.testing.assert_frame_equal(old_a.reset_index(drop=True), new_a.reset_index(drop=True), check_exact=True)
    cold = method.fit(games)
    for field in ("slice_times", "node_order", "node_start", "node_slice", "game_order", "game_start", "prev", "nxt",
                  "q", "ga", "gb", "score", "home"):
        np.testing.assert_array_equal(getattr(new_st, field), getattr(cold._ttt_state, field), err_msg=field)
    np.testing.assert_allclose(refit.mean, cold.mean, rtol=0, atol=1e-6)
    np.testing.assert_allclose(refit.var, cold.var, rtol=0, atol=1e-8)


def test_a_refit_that_cannot_be_incremental_sweeps_the_whole_history():
    g = random_games(7, n_games=80, n_times=10)
    before = g.take(np.flatnonzero(g.time < 7))
    method = TrueSkillThroughTime(tau=1.0)
    fit = method.fit(before)
    assert method.fit(g, warm_start=fit).info["refit"] == "incremental"
    assert method.with_params(incremental=False).fit(g, warm_start=fit).info["refit"] == "full"
    assert method.with_params(tau=0.5).fit(g, warm_start=fit).info["refit"] == "full"  # another model
    assert method.with_params(tol=1e-6).fit(g, warm_start=fit).info["refit"] == "incremental"  # the same model
    tied = g.take(np.flatnonzero(g.time <= 7))  # games at the earlier fit's last time
    assert method.fit(tied, warm_start=method.fit(before.take(np.flatnonzero(before.time < 6)))).info["refit"] == \
        "incremental"
    same_time = g.take(np.flatnonzero(g.time < 7))
    assert method.fit(same_time, warm_start=method.fit(g.take(np.flatnonzero(g.time < 6)))).info["refit"] == \
        "incremental"
    at_last = ss.Games.from_arrays(np.r_[before.time, before.time.max()], np.concatenate([before.a_name, ["p0"]]),
                                   np.concatenate([before.b_name, ["p1"]]), np.r_[before.score, 1.0])
    assert method.fit(at_last, warm_start=fit).info["refit"] == "full"
    with pytest.raises(ValueError, match="refit_tol must be"):
        TrueSkillThroughTime(refit_tol=-1.0)
    with pytest.raises(ValueError, match="incremental must be"):
        TrueSkillThroughTime(incremental="yes")


def test_warm_start_must_be_a_ttt_fit():
    from smoothers import LaplaceSmoother

    g = random_games(8)
    with pytest.raises(ValueError, match="warm_start must be a fit of TrueSkillThroughTime"):
        TrueSkillThroughTime().fit(g, warm_start=LaplaceSmoother().fit(g))
    with pytest.raises(TypeError, match="warm_start"):
        TrueSkillThroughTime().fit(g, warm_start="yesterday")


# ---------------------------------------------------------------------------- settings, model, registry
def test_defaults_and_model():
    m = TrueSkillThroughTime()
    assert (m.mu, m.sigma, m.beta, m.tau, m.draw_probability) == (MU, SIGMA, BETA, TAU, None)
    assert m.learns_draws and DRAW_PROBABILITY == 0.10
    assert (MU, SIGMA, BETA, TAU) == pytest.approx((25.0, 25.0 / 3.0, 25.0 / 6.0, 25.0 / 300.0), rel=1e-15)
    ts = TrueSkill(dynamics="time", tau=TAU)
    assert m.model == ts.model
    assert m.draw_margin == ts.draw_margin
    # with no games at hand the classic 0.10 applies, as the filter's
    assert m.model == TrueSkillThroughTime(draw_probability=0.10).model
    assert m.draw_margin == TrueSkill(draw_probability=0.10).draw_margin > 0
    # a skill lead of beta wins about 76% between certain competitors (no draw margin)
    p = TrueSkillThroughTime(draw_probability=0.0).model.proba(BETA)
    assert abs(p[0] - 0.7602) < 1e-4
    assert type(m)(**m.get_params()).get_params() == m.get_params()


@pytest.mark.parametrize("setting, value", [("sigma", 0.0), ("beta", -1.0), ("tau", -0.1), ("tau", math.inf),
                                            ("draw_probability", 1.0), ("mu", math.nan), ("period_days", 0),
                                            ("max_iter", 1.5), ("max_iter", -1), ("tol", -1e-3), ("home", "2"),
                                            ("beta", True)])
def test_bad_settings_name_the_setting(setting, value):
    with pytest.raises(ValueError, match=rf"TrueSkillThroughTime: {setting} must be"):
        TrueSkillThroughTime(**{setting: value})


def test_refuses_weights_and_initial():
    g = random_games(9)
    with pytest.raises(ValueError, match="does not use game weights"):
        TrueSkillThroughTime().fit(g.with_weights(np.full(len(g), 2.0)))
    with pytest.raises(ValueError, match="initial="):
        TrueSkillThroughTime().fit(g, {"p0": (20.0, 3.0)})


def test_registered_and_compared():
    from statespace.methods import registry

    assert registry.get("ttt") is TrueSkillThroughTime
    sim = ss.simulate(ss.SkillModel("probit", math.sqrt(2) * BETA, MU, SIGMA**2, 0.5), 12, 400, days=40, seed=3)
    for mode in ("frozen", "walk_forward"):
        table = ss.compare({"ttt": TrueSkillThroughTime(tau=math.sqrt(0.5)), "trueskill": TrueSkill(dynamics="time")},
                           sim.games, mode=mode, every=5)
        assert np.isfinite(table.loc["ttt", "log_loss"]) and table.loc["ttt", "n_test"] == 120


SCRIPT = """
import json, numpy as np, statespace as ss
from smoothers.ttt import TrueSkillThroughTime
rng = np.random.default_rng(11)
a = rng.integers(0, 5, 40); b = (a + rng.integers(1, 5, 40)) % 5
g = ss.Games.from_arrays(rng.integers(0, 6, 40).astype(float), a, b, rng.choice([0.0, 0.5, 1.0], 40))
out = {}
for periods in (False, True):
    gg = g.with_periods(1) if periods else g
    m = TrueSkillThroughTime(tau=1.0, tol=1e-9, max_iter=300)
    f = m.fit(gg)
    out[str(periods)] = [f.mean.tolist(), f.var.tolist(), f.info["sweeps"]]
    r = m.fit(gg, warm_start=m.fit(gg.take(np.flatnonzero(gg.time < 4))))  # incremental
    out[f"{periods} refit"] = [r.mean.tolist(), r.var.tolist(), r.info["sweeps"]]
print(json.dumps(out))
"""


def test_compiled_and_python_runs_agree():
    compiled, python = compiled_and_python_runs(SCRIPT)
    for key in compiled:
        assert compiled[key][2] == python[key][2]
        np.testing.assert_allclose(compiled[key][0], python[key][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(compiled[key][1], python[key][1], rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- the draw setting learned from the games
def decisive_games(n: int, seed: int = 5, days: int = 400) -> ss.Games:
    """``n`` games without a draw, simulated from TrueSkill's probit model (no draw margin)."""
    model = ss.SkillModel("probit", math.sqrt(2) * BETA, MU, SIGMA**2, 0.02)
    games = ss.simulate(model, 16, n, days=days, seed=seed).games
    assert not np.any(games.score == 0.5)
    return games


def no_draw_chance(games: ss.Games, p_draw: float = 0.10) -> float:
    """The chance of a table without a single draw under the forecasts of the TrueSkill filter that
    is TTT's forward pass, at ``p_draw`` (the rule of ``filters.draws``, computed here from the
    forecasts themselves)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ss.DrawWarning)  # the filter's own warning at an explicit 0.10
        proba = TrueSkill(MU, SIGMA, BETA, TAU, p_draw, dynamics="time").run(games).proba
    return float(np.prod(1.0 - proba[:, 1]))


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_learns_no_draws_from_games_without_a_draw():
    """1,200 decisive games: the classic 0.10's forecasts make a table without draws implausible,
    so the fit uses 0 (the method it carries says so) and forecasts no draw; the method itself is
    left as it was, and the fit is the fit at an explicit 0."""
    games = decisive_games(1200)
    assert no_draw_chance(games) < 1e-3
    method = TrueSkillThroughTime(tau=math.sqrt(0.02))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ss.DrawWarning)
        fit = method.fit(games)
    assert method.draw_probability is None
    assert fit.method.draw_probability == 0.0 and not fit.method.learns_draws
    assert fit.method.get_params()["draw_probability"] == 0.0
    assert "draw_probability=0)" in repr(fit.method) and "draw_probability=None" in repr(method)
    assert fit.method.draw_margin == 0.0 and fit.model.draw == ss.Threshold(0.0)
    assert method.resolved(games).get_params() == fit.method.get_params()
    p = fit.predict_proba(games)
    np.testing.assert_allclose(p[:, 1], 0.0, atol=1e-12)
    assert np.all(p[:, [0, 2]] > 0)
    explicit = TrueSkillThroughTime(tau=math.sqrt(0.02), draw_probability=0.0).fit(games)
    np.testing.assert_array_equal(fit.mean, explicit.mean)
    np.testing.assert_array_equal(fit.var, explicit.var)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_keeps_the_classic_value_on_games_with_draws():
    games = random_games(11, n_games=60, n_times=8)
    assert np.any(games.score == 0.5)
    fit = TrueSkillThroughTime(tau=1.0).fit(games)
    assert fit.method.draw_probability == DRAW_PROBABILITY == 0.10
    assert "draw_probability=0.1)" in repr(fit.method)
    assert np.all(fit.predict_proba(games)[:, 1] > 0.01)
    explicit = TrueSkillThroughTime(tau=1.0, draw_probability=0.10).fit(games)
    np.testing.assert_array_equal(fit.mean, explicit.mean)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_keeps_the_classic_value_on_a_short_table_without_draws():
    """A dozen decisive games happen by chance at a 10% draw rate: 0.10 stays, and draws are still
    forecast (a later draw would otherwise have an infinite three-outcome log loss)."""
    games = decisive_games(12)
    assert no_draw_chance(games) > 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error", ss.DrawWarning)
        fit = TrueSkillThroughTime().fit(games)
        TrueSkillThroughTime(draw_probability=0.25).fit(games)  # explicit, and plausible: no warning
    assert fit.method.draw_probability == 0.10
    assert np.all(fit.predict_proba(games)[:, 1] > 0.01)


def test_the_switch_follows_the_filters_forecasts():
    """On growing prefixes of one table without draws the value learned is 0 exactly where the
    forward filter's forecasts at 0.10 give the table less than 1e-3 of chance, else 0.10."""
    games = decisive_games(400, seed=8, days=200)
    chosen = []
    for n in (20, 60, 100, 140, 180, 220, 300, 400):
        part = games.take(games.order[:n])
        learned = TrueSkillThroughTime().fit(part).method.draw_probability
        assert learned == (0.0 if no_draw_chance(part) < 1e-3 else 0.10), n
        chosen.append(learned)
    assert chosen[0] == 0.10 and chosen[-1] == 0.0  # both sides of the rule are exercised


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_explicit_draw_probability_on_games_without_draws_warns():
    games = decisive_games(1200)
    with pytest.warns(ss.DrawWarning, match=r"ttt: draw_probability=0\.1 on 1,200 games without a draw"):
        fit = TrueSkillThroughTime(draw_probability=0.1).fit(games)
    assert fit.method.draw_probability == 0.1  # honoured
    assert np.all(fit.predict_proba(games)[:, 1] > 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ss.DrawWarning)
        TrueSkillThroughTime(draw_probability=0.0).fit(games)
        TrueSkillThroughTime(draw_probability=0.1).fit(random_games(12, n_games=60))  # games with draws


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_refits_with_the_learned_value_stay_incremental():
    """A walk-forward on games without draws: the first window is short (0.10), later ones learn 0
    (one full refit where the model changes, incremental after it); every refit uses the value a fit
    from scratch of its games learns and forecasts as that fit does."""
    games = decisive_games(1500, seed=9, days=500)
    t = games.days()
    method = TrueSkillThroughTime(tau=math.sqrt(0.02), tol=1e-8, max_iter=5000, refit_tol=1e-8)
    fit = method.fit(games.take(games.order[:40]))
    assert fit.method.draw_probability == 0.10
    kinds = []
    for edge in np.quantile(t, [0.3, 0.5, 0.7, 0.9, 1.0]):
        part = games.take(np.flatnonzero(t <= edge))
        fit = method.fit(part, warm_start=fit)
        cold = method.fit(part)
        kinds.append(fit.info["refit"])
        assert fit.method.draw_probability == cold.method.draw_probability == 0.0
        np.testing.assert_allclose(fit.predict_proba(games), cold.predict_proba(games), rtol=0, atol=1e-5)
    assert kinds == ["full"] + ["incremental"] * 4
    # a warm start does not carry 0 over to games it does not extend: a short other table keeps 0.10
    other = decisive_games(12, seed=10)
    assert method.fit(other, warm_start=fit).method.draw_probability == 0.10
    # nor to games with a draw
    with_draw = ss.Games.from_arrays(np.r_[games.time, games.time.max() + np.timedelta64(1, "D")],
                                     np.r_[games.a_name, games.a_name[:1]], np.r_[games.b_name, games.b_name[:1]],
                                     np.r_[games.score, 0.5])
    refit = method.fit(with_draw, warm_start=fit)
    assert refit.method.draw_probability == 0.10 and refit.info["refit"] == "full"


@pytest.mark.filterwarnings("ignore::statespace.DrawWarning")  # the explicit 0.1 on games without a draw
def test_compared_walk_forward_learns_as_the_explicit_value():
    """``compare`` in walk-forward mode on games without draws: every refit (280 games and more)
    learns 0, so the forecasts are those of an explicit 0."""
    sim = ss.simulate(ss.SkillModel("probit", math.sqrt(2) * BETA, MU, SIGMA**2, 0.5), 12, 400, days=40, seed=3)
    table = ss.compare({"learned": TrueSkillThroughTime(tau=math.sqrt(0.5)),
                        "zero": TrueSkillThroughTime(tau=math.sqrt(0.5), draw_probability=0.0),
                        "classic": TrueSkillThroughTime(tau=math.sqrt(0.5), draw_probability=0.1)},
                       sim.games, mode="walk_forward", every=5)
    assert table.loc["learned", "log_loss"] == table.loc["zero", "log_loss"] != table.loc["classic", "log_loss"]
    np.testing.assert_array_equal(table.attrs["proba"]["learned"], table.attrs["proba"]["zero"])
