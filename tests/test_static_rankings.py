"""Colley, Massey and Keener (smoothers.colley, smoothers.massey, smoothers.keener) and their shared
out-of-sample link (smoothers._static).

References are independent of the code under test: each system's textbook matrix is built here
with plain Python loops over the games and solved densely (numpy.linalg.solve; Keener: the
leading eigenvector from numpy.linalg.eig), on random game tables from hypothesis.

Differential test against elote (``elote.ColleyMatrixCompetitor``, a test-only dependency). Its
``_recalculate_ratings`` follows Colley's rule: for each connected group it builds
``C_ii = 2 + games``, ``C_ij = -games between i and j`` and ``b_i = 1 + (2 h_i - games) / 2``
with ``h_i`` the wins plus half the ties, i.e. ``1 + (w - l) / 2`` with a tie half a win and half
a loss, and solves ``C r = b``; it then rescales a group whose ratings do not sum to ``n / 2``
(Colley's ratings always do, so this is a no-op beyond rounding). Where it departs from us is the
forecast: its ``expected_score`` is the fixed ``1 / (1 + exp(-4 (r_a - r_b)))`` with no draw or
home term, where ours is a link fitted out of sample; so only the ratings are compared.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import smoothers
from smoothers import Colley, Keener, Massey
from smoothers._static import fit_link
from smoothers.keener import KeenerConvergenceError
from statespace import Games, compare

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------- random tables
@st.composite
def tables(draw, connected: bool = True, max_players: int = 7, max_games: int = 30):
    """``(players, games)`` with ``games`` rows ``(a, b, score_a, score_b, home, day)``; connected
    tables start with a path through every competitor."""
    n = draw(st.integers(2, max_players))
    pairs = []
    if connected:
        pairs = [(i, i + 1) if draw(st.booleans()) else (i + 1, i) for i in range(n - 1)]
    extra = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)).filter(lambda p: p[0] != p[1]),
                          min_size=0 if connected else 1, max_size=max_games))
    pairs += extra
    rows = []
    for a, b in pairs:
        sa = draw(st.integers(0, 6))
        sb = draw(st.integers(0, 6))
        rows.append((a, b, float(sa), float(sb), draw(st.booleans()), float(draw(st.integers(0, 40)))))
    names = [f"p{i}" for i in range(n)]
    return names, rows


def as_games(names, rows, with_scores: bool = True, home: bool = True) -> Games:
    a = [names[r[0]] for r in rows]
    b = [names[r[1]] for r in rows]
    sa = np.array([r[2] for r in rows])
    sb = np.array([r[3] for r in rows])
    neutral = [not (home and r[4]) for r in rows]
    t = np.array([r[5] for r in rows])
    if with_scores:
        return Games.from_arrays(t, a, b, neutral=neutral, score_a=sa, score_b=sb)
    return Games.from_arrays(t, a, b, np.where(sa > sb, 1.0, np.where(sa < sb, 0.0, 0.5)), neutral=neutral)


def rating_of(fit) -> dict:
    board = fit.ratings()
    return dict(zip(board["player"], board["mean"]))


def result(r) -> float:
    return 1.0 if r[2] > r[3] else 0.0 if r[2] < r[3] else 0.5


def groups(n, rows):
    """Connected groups of competitors (plain union-find)."""
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for r in rows:
        parent[find(r[0])] = find(r[1])
    out = {}
    for i in range(n):
        out.setdefault(find(i), []).append(i)
    return list(out.values())


# ---------------------------------------------------------------------------- textbook systems
def colley_textbook(n, rows):
    C = [[0.0] * n for _ in range(n)]
    b = [1.0] * n
    for i in range(n):
        C[i][i] = 2.0
    for r in rows:
        i, j = r[0], r[1]
        C[i][i] += 1
        C[j][j] += 1
        C[i][j] -= 1
        C[j][i] -= 1
        s = result(r)
        # a draw is half a win and half a loss: w - l gains 2s - 1
        b[i] += (2 * s - 1) / 2
        b[j] += (1 - 2 * s) / 2
    return np.linalg.solve(np.array(C), np.array(b))


def massey_textbook(n, rows, home: bool):
    """Normal equations of r_a - r_b (+ h home) = margin, with the last competitor's row of each
    connected group replaced by ones over the group and 0 on the right."""
    k = n + 1 if home else n
    M = [[0.0] * k for _ in range(k)]
    p = [0.0] * k
    for r in rows:
        x = [0.0] * k
        x[r[0]] += 1.0
        x[r[1]] -= 1.0
        if home:
            x[n] = 1.0 if r[4] else 0.0
        m = r[2] - r[3]
        for u in range(k):
            p[u] += x[u] * m
            for v in range(k):
                M[u][v] += x[u] * x[v]
    for group in groups(n, rows):
        last = max(group)
        M[last] = [1.0 if v in group else 0.0 for v in range(k)]
        p[last] = 0.0
    M = np.array(M)
    # a schedule that cannot separate the home advantage from the ratings has no unique solution
    assume(np.linalg.cond(M) < 1e10)
    sol = np.linalg.solve(M, np.array(p))
    return sol[:n], (sol[n] if home else None)


def keener_textbook(n, rows):
    S = [[0.0] * n for _ in range(n)]
    met = [[False] * n for _ in range(n)]
    games = [0] * n
    for r in rows:
        i, j = r[0], r[1]
        S[i][j] += r[2]
        S[j][i] += r[3]
        met[i][j] = met[j][i] = True
        games[i] += 1
        games[j] += 1
    A = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if met[i][j]:
                x = (S[i][j] + 1) / (S[i][j] + S[j][i] + 2)
                h = 0.5 + math.copysign(1.0, x - 0.5) * math.sqrt(abs(2 * x - 1)) / 2 if x != 0.5 else 0.5
                A[i, j] = h / games[i]
    values, vectors = np.linalg.eig(A)
    v = np.abs(np.real(vectors[:, np.argmax(np.real(values))]))
    return 100.0 * v / v.mean()


# ---------------------------------------------------------------------------- the kernels
@SETTINGS
@given(tables(connected=False))
def test_colley_equals_the_dense_textbook_solve(table):
    names, rows = table
    fit = Colley().fit(as_games(names, rows, with_scores=False))
    played = sorted({r[0] for r in rows} | {r[1] for r in rows})
    # competitors without games are not in the table at all: solve over those who played
    idx = {p: k for k, p in enumerate(played)}
    expected = colley_textbook(len(played), [(idx[r[0]], idx[r[1]]) + r[2:] for r in rows])
    got = rating_of(fit)
    for p, k in idx.items():
        assert got[names[p]] == pytest.approx(expected[k], abs=1e-9)


def test_colley_conjugate_gradients_agree_with_the_factor(monkeypatch):
    import smoothers.colley as colley

    games = league(seed=6, n_players=40, n_games=600)
    direct = rating_of(Colley().fit(games))
    monkeypatch.setattr(colley, "DIRECT_LIMIT", 0)
    iterative = rating_of(Colley().fit(games))
    for p, r in direct.items():
        assert iterative[p] == pytest.approx(r, abs=1e-10)


@SETTINGS
@given(tables(connected=True), st.booleans())
def test_massey_equals_the_dense_textbook_solve(table, home):
    names, rows = table
    n = len(names)
    expected, h = massey_textbook(n, rows, home and any(r[4] for r in rows))
    fit = Massey(home=home).fit(as_games(names, rows))
    got = rating_of(fit)
    for i in range(n):
        assert got[names[i]] == pytest.approx(expected[i], abs=1e-9)
    if h is None:
        assert fit.info["home"] is None
    else:
        assert fit.info["home"] == pytest.approx(h, abs=1e-9)


@SETTINGS
@given(tables(connected=False))
def test_massey_pins_each_connected_group_to_sum_zero(table):
    names, rows = table
    fit = Massey(home=False).fit(as_games(names, rows, home=False))
    got = rating_of(fit)
    played = {r[0] for r in rows} | {r[1] for r in rows}
    for group in groups(len(names), rows):
        if set(group) <= played:
            assert sum(got[names[i]] for i in group) == pytest.approx(0.0, abs=1e-9)
            # each group alone gives the same ratings: the groups do not interact
            alone = [r for r in rows if r[0] in group]
            sub = rating_of(Massey(home=False).fit(as_games(names, alone, home=False)))
            for i in group:
                assert got[names[i]] == pytest.approx(sub[names[i]], abs=1e-9)


@SETTINGS
@given(tables(connected=True))
def test_keener_equals_the_leading_eigenvector(table):
    names, rows = table
    n = len(names)
    expected = keener_textbook(n, rows)
    fit = Keener(tol=1e-14).fit(as_games(names, rows))
    got = rating_of(fit)
    for i in range(n):
        assert got[names[i]] == pytest.approx(expected[i], rel=1e-8)


def test_keener_reports_no_convergence_naming_the_settings():
    names, rows = ["x", "y", "z"], [(0, 1, 3.0, 1.0, False, 0.0), (1, 2, 2.0, 5.0, False, 1.0),
                                    (0, 2, 0.0, 4.0, False, 2.0), (0, 1, 7.0, 1.0, False, 3.0)]
    with pytest.raises(KeenerConvergenceError, match="max_iter=1 "):
        Keener(max_iter=1).fit(as_games(names, rows))
    assert issubclass(KeenerConvergenceError, ValueError)


# ---------------------------------------------------------------------------- elote
@SETTINGS
@given(tables(connected=False))
def test_colley_agrees_with_elote(table):
    from elote import ColleyMatrixCompetitor

    names, rows = table
    comps = {}
    for r in rows:
        a = comps.setdefault(r[0], ColleyMatrixCompetitor())
        b = comps.setdefault(r[1], ColleyMatrixCompetitor())
        s = result(r)
        if s == 1.0:
            a.beat(b)
        elif s == 0.0:
            b.beat(a)
        else:
            a.tied(b)
    got = rating_of(Colley().fit(as_games(names, rows, with_scores=False)))
    for i, c in comps.items():
        assert got[names[i]] == pytest.approx(c.rating, abs=1e-9)


# ---------------------------------------------------------------------------- the link
def league(seed=0, n_players=12, n_games=400, draws=True):
    """A league with scores: Poisson points from fixed strengths, about a fifth of games neutral."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.4, n_players)
    a = rng.integers(0, n_players, n_games)
    b = (a + rng.integers(1, n_players, n_games)) % n_players
    neutral = rng.random(n_games) < 0.2
    lam = 1.3 if draws else 20.0
    sa = rng.poisson(lam * np.exp(strength[a] - strength[b] + 0.2 * ~neutral))
    sb = rng.poisson(lam * np.exp(strength[b] - strength[a]))
    if not draws:
        sa = np.where(sa == sb, sa + 1, sa)
    t = np.sort(rng.uniform(0, 300, n_games)).round(1)
    names = np.array([f"t{i:02d}" for i in range(n_players)])
    return Games.from_arrays(t, names[a], names[b], neutral=neutral, score_a=sa.astype(float), score_b=sb.astype(float))


@pytest.mark.parametrize("cls", [Colley, Massey, Keener])
def test_held_out_results_change_neither_link_nor_ratings(cls):
    games = league()
    train, test = games.split(0.7)
    fit = cls().fit(train)
    frame = games.to_frame()
    held = frame.index.isin(test.row)
    frame.loc[held, ["score_a", "score_b"]] = frame.loc[held, ["score_b", "score_a"]].to_numpy() + [3.0, 0.0]
    frame = frame.drop(columns="score")
    flipped = Games.from_frame(frame)
    train2, test2 = flipped.split(0.7)
    assert not np.array_equal(test.score, test2.score)
    fit2 = cls().fit(train2)
    assert fit2.link == fit.link
    assert fit2.ratings().equals(fit.ratings())
    # compare, frozen: the same forecasts whatever the held-out results
    p1 = compare({"m": cls()}, games, split=0.7).attrs["proba"]["m"]
    p2 = compare({"m": cls()}, flipped, split=0.7).attrs["proba"]["m"]
    np.testing.assert_array_equal(p1, p2)


@pytest.mark.parametrize("cls", [Colley, Massey, Keener])
def test_each_link_block_is_rated_from_earlier_games_only(cls):
    """A block's rating differences are those of a fit on the games before it, and do not change
    when that block's (or any later game's) results change."""
    games = league(seed=1)
    fit = cls().fit(games)
    rows = fit.info["link_rows"]
    order = games.order
    cuts = np.round(np.linspace(0, len(games), 6)).astype(int)
    days = games.days()
    # the fit scores blocks 2..5; block 1 only supplies history
    np.testing.assert_array_equal(rows, order[cuts[1]:])
    for j in range(1, 5):
        block = order[cuts[j]:cuts[j + 1]]
        before = np.flatnonzero(days < days[block].min())
        ref = rating_of(cls().fit(games.take(before)))
        expect = [ref.get(a, cls.newcomer) - ref.get(b, cls.newcomer)
                  for a, b in zip(games.a_name[block], games.b_name[block])]
        got = fit.info["link_diff"][cuts[j] - cuts[1]:cuts[j + 1] - cuts[1]]
        np.testing.assert_allclose(got, expect, rtol=1e-9, atol=1e-9)
    # the link is the maximum-likelihood fit on exactly those differences and results
    again = fit_link(fit.info["link_diff"], fit.info["link_home"], fit.info["link_result"],
                     np.ones(rows.size), draws=True, has_home=True)
    assert again == fit.link
    # results in the last block are data for the link, but the block's differences stay
    frame = games.to_frame().drop(columns="score")
    last = order[cuts[4]:]
    frame.loc[last, ["score_a", "score_b"]] = frame.loc[last, ["score_b", "score_a"]].to_numpy()
    fit2 = cls().fit(Games.from_frame(frame))
    np.testing.assert_array_equal(fit2.info["link_diff"], fit.info["link_diff"])
    assert fit2.link != fit.link


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_link_has_no_draw_term_without_draws_and_no_home_term_on_neutral_ground():
    games = league(seed=2, draws=False)
    assert not np.any(games.score == 0.5)
    fit = Massey().fit(games)
    assert fit.link.delta == 0.0 and fit.model.draw.__class__.__name__ == "NoDraw"
    assert np.all(fit.predict_proba(games)[:, 1] == 0.0)
    neutral = Games.from_frame(games.to_frame().assign(neutral=1).drop(columns="score"))
    assert Colley().fit(neutral).link.gamma == 0.0


def test_link_recovers_known_parameters():
    """On simulated differences and ordered-logistic results the maximum-likelihood link
    returns the parameters that generated them."""
    rng = np.random.default_rng(5)
    n = 40_000
    d = rng.normal(0, 3.0, n)
    home = (rng.random(n) < 0.5).astype(float)
    beta, gamma, delta = 0.4, 0.3, 0.5
    x = beta * d + gamma * home
    pw = 1 / (1 + np.exp(-(x - delta)))
    pl = 1 / (1 + np.exp(-(-x - delta)))
    u = rng.random(n)
    y = np.where(u < pw, 1.0, np.where(u < pw + pl, 0.0, 0.5))
    link = fit_link(d, home, y, np.ones(n), draws=True, has_home=True)
    assert link.beta == pytest.approx(beta, abs=0.02)
    assert link.gamma == pytest.approx(gamma, abs=0.05)
    assert link.delta == pytest.approx(delta, abs=0.05)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("cls", [Colley, Massey, Keener])
@pytest.mark.parametrize("rows", [
    # a transitive order: the ratings separate every result
    [(0, 1, 2, 0, False, 0.0), (1, 2, 2, 0, False, 1.0), (0, 2, 2, 0, False, 2.0)],
    # found by hypothesis: two draws, then p0 beats p2; the link's blocks see differences of
    # ratings equal up to rounding
    [(0, 2, 0, 0, False, 0.0), (1, 2, 0, 0, False, 0.0), (0, 2, 1, 0, False, 1.0)],
])
def test_results_the_ratings_separate_give_a_finite_link(cls, rows):
    """Differences of ratings that are equal up to rounding would separate results by their sign
    alone: rounding is no difference (before, the link's slope ran up on 1e-16 noise, its scale to
    1e-18 rating units, and the model refused its own prior mean). The forecasts stay
    probabilities."""
    fit = cls().fit(as_games(["p0", "p1", "p2"], rows))
    assert math.isfinite(fit.link.beta) and fit.link.beta >= 0
    p = fit.predict_proba(as_games(["p0", "p1", "p2"], rows))
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0)
    assert fit.model.scale > 0


# ---------------------------------------------------------------------------- properties
@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@SETTINGS
@given(tables(connected=False, max_games=40), st.sampled_from([Colley, Massey, Keener]), st.randoms())
def test_probabilities_and_relabelling(table, cls, rnd):
    names, rows = table
    games = as_games(names, rows)
    fit = cls().fit(games)
    p = fit.predict_proba(games)
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    # new names in another sort order: the competitors get other ids, nothing else changes
    new = [f"q{k}" for k in range(len(names))]
    rnd.shuffle(new)
    games2 = as_games(new, rows)
    fit2 = cls().fit(games2)
    before, after = rating_of(fit), rating_of(fit2)
    tol = 1e-7 if cls is Keener else 1e-9
    for i in range(len(names)):
        if names[i] in before:
            assert after[new[i]] == pytest.approx(before[names[i]], rel=tol, abs=tol)
    np.testing.assert_allclose(fit2.predict_proba(games2), p, atol=1e-7)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_newcomers_get_the_average_rating_and_the_fitted_face():
    games = league(seed=3)
    for cls in (Colley, Massey, Keener):
        fit = cls().fit(games)
        board = fit.ratings()
        assert list(board.columns) == ["player", "mean", "games"]
        assert board["mean"].is_monotonic_decreasing
        assert board["mean"].mean() == pytest.approx(cls.newcomer, abs=1e-9)
        strangers = Games.from_arrays([1.0], ["nobody"], ["t00"], [1.0])
        d = fit.predict_diff(strangers)[0]
        assert d[0] == pytest.approx(cls.newcomer - dict(zip(board["player"], board["mean"]))["t00"])
        traj = fit.trajectories()
        assert set(traj["player"]) == set(board["player"])
        # each rating is flat from the competitor's first to its last fit game
        frame = games.to_frame()
        days = games.days()
        for p, rows in traj.groupby("player"):
            played = days[(frame["a"] == p) | (frame["b"] == p)]
            assert list(rows["time"]) == sorted({played.min(), played.max()})
            assert rows["mean"].nunique() == 1


# ---------------------------------------------------------------------------- compare, registry, errors
@pytest.mark.parametrize("mode", ["frozen", "walk_forward"])
def test_compare_frozen_and_walk_forward(mode):
    games = league(seed=4)
    table = compare([Colley(), Massey(), Keener()], games, split=0.7, mode=mode, every=50)
    assert set(table.index) == {"colley", "massey", "keener"}
    assert table["log_loss"].notna().all() and (table["log_loss"] < math.log(2)).all()


def test_online_mode_is_refused_as_for_the_other_smoothers():
    """No one-step-ahead run: that would be a refit (ratings and link) before every game.
    walk_forward with a short ``every`` is the static systems' online comparison."""
    with pytest.raises(ValueError, match="no online run; use mode='frozen' or 'walk_forward'"):
        compare([Colley()], league(seed=4), split=0.7, mode="online")


def test_registry_and_default_list():
    from statespace.methods import registry

    names = registry.names()
    assert {"colley", "massey", "keener"} <= set(names)
    default = registry.names(default_only=True)
    assert "colley" in default and "massey" not in default and "keener" not in default
    assert registry.get("colley") is Colley
    assert smoothers.REGISTRY["keener"] is Keener


def test_cli_rate_methods_and_compare(capsys):
    from statespace.app.cli import main

    assert main(["rate", "--scenario", "balanced", "--method", "colley", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "Colley(link_blocks=5, window=None)" in out
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert any(line.startswith("keener") and "not compared by default" in line for line in out.splitlines())
    assert main(["compare", "--methods", "massey"]) == 2
    err = capsys.readouterr().err
    assert "'score_a' and 'score_b'" in err


@pytest.mark.parametrize("cls", [Massey, Keener])
def test_no_scores_is_an_error_naming_the_columns(cls):
    games = as_games(["x", "y"], [(0, 1, 2.0, 1.0, False, 0.0)], with_scores=False)
    with pytest.raises(ValueError, match="'score_a' and 'score_b'"):
        cls().fit(games)


@pytest.mark.parametrize("make, fragment", [
    (lambda: Colley(link_blocks=1), "link_blocks"),
    (lambda: Colley(link_blocks=2.5), "link_blocks"),
    (lambda: Massey(link_blocks=True), "link_blocks"),
    (lambda: Massey(home="yes"), "home"),
    (lambda: Keener(tol=0.0), "tol"),
    (lambda: Keener(max_iter=0), "max_iter"),
    (lambda: Colley(window=0), "window"),
    (lambda: Massey(window=float("inf")), "window"),
    (lambda: Keener(window="season"), "window"),
])
def test_bad_settings_name_the_setting(make, fragment):
    with pytest.raises(ValueError, match=fragment):
        make()


def test_settings_round_trip():
    m = Keener(tol=1e-9, max_iter=50, link_blocks=3)
    assert m.get_params() == {"tol": 1e-9, "max_iter": 50, "link_blocks": 3, "window": None}
    assert m.with_params(link_blocks=4).link_blocks == 4
    assert Massey(home=False).get_params() == {"home": False, "link_blocks": 5, "window": None}
    assert Colley(window=365).with_params(window=30).window == 30.0


@pytest.mark.parametrize("cls", [Colley, Massey, Keener])
def test_a_window_rates_from_the_recent_games_only(cls):
    """With ``window=w`` the final ratings are a plain fit of the games of the last ``w`` days
    (a competitor absent from them gets the average rating); the link's blocks are the last four
    spans of ``w`` days, each block's differences from the ``w`` days before its first game."""
    games = league(seed=3)
    days = games.days()
    w = 60.0  # four windows and the history of the first fit in the league's 300 days
    fit = cls(window=w).fit(games)
    recent = np.flatnonzero(days > days.max() - w)
    ref = rating_of(cls().fit(games.take(recent)))
    got = rating_of(fit)
    for name in games.players:
        assert got[name] == pytest.approx(ref.get(name, cls.newcomer), abs=1e-9)
    # the link's blocks: the last four windows before the end, each rated from the window before it
    end = days.max()
    edges = [end - 4 * w, end - 3 * w, end - 2 * w, end - w, np.inf]
    scored = 0
    for lo, hi in zip(edges[:-1], edges[1:]):
        block = np.flatnonzero((days > lo) & (days <= hi))
        block = block[np.argsort(days[block], kind="stable")]
        start = days[block].min()
        before = np.flatnonzero((days < start) & (days > start - w))
        ref = rating_of(cls().fit(games.take(before)))
        expect = {r: ref.get(a, cls.newcomer) - ref.get(b, cls.newcomer)
                  for r, a, b in zip(block, games.a_name[block], games.b_name[block])}
        rows = fit.info["link_rows"][scored:scored + block.size]
        assert set(rows.tolist()) == set(block.tolist())
        got_d = fit.info["link_diff"][scored:scored + block.size]
        np.testing.assert_allclose(got_d, [expect[r] for r in rows], rtol=1e-9, atol=1e-9)
        scored += block.size
    assert scored == fit.info["link_rows"].size
