"""Elo-MMR (filters.elo_mmr) against a slow reference written here from the paper's equations
(Ebtekar and Liu, WWW 2021; the defaults of the reference code EbTech/Elo-MMR), each equation
solved by scipy's brentq, the performance history kept in full."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from filters.elo_mmr import EloMMR
from filters._elo_mmr_belief import HISTORY
from statespace.data.matches import Matches

C = math.pi / math.sqrt(3.0)


class Reference:
    """Elo-MMR straight from the equations: per player a Gaussian term (mean, precision) and the
    list of every past performance term (mean, tanh weight)."""

    def __init__(self, mu=1500.0, sigma=350.0, sig_limit=80.0, weight=0.2, drift_per_day=0.0,
                 transfer_speed=1.0, split_ties=False, history=None):
        self.history = history  # None: keep every term; else fold the oldest as the reference code does
        self.mu0, self.sigma0 = mu, sigma
        self.w, self.drift, self.ts, self.split = weight, drift_per_day, transfer_speed, split_ties
        self.beta2 = (1 + 1 / weight) * sig_limit ** 2 + drift_per_day / weight
        self.disc = weight * sig_limit ** 2
        self.p = {}

    def contest(self, players, ranks, t=0.0):
        if len(set(ranks)) == 1:
            return
        beta = math.sqrt(self.beta2)
        for a in players:
            if a not in self.p:
                self.p[a] = dict(mu=self.mu0, sig=self.sigma0, nmu=self.mu0, nw=self.sigma0 ** -2, terms=[], last=t)
            s = self.p[a]
            noise = self.disc + self.drift * (t - s["last"])
            s["last"] = t
            new = s["sig"] ** 2 + noise
            kappa = s["sig"] ** 2 / new
            s["sig"] = math.sqrt(new)
            if math.isinf(self.ts):
                s.update(nmu=s["mu"], nw=1 / new, terms=[])
                continue
            rho = kappa ** self.ts
            # a term's precision: its tanh factor a = C / (2 beta) times its weight w_k, over C^2 / 2
            total_terms = sum(C / (2 * beta) * wk * 2 / C ** 2 for _, wk in s["terms"])
            kept = rho * s["nw"]
            moved = (1 - rho) * (s["nw"] + total_terms)
            s["nmu"] = (kept * s["nmu"] + moved * s["mu"]) / (kept + moved)
            s["nw"] = kappa * (kept + moved)
            s["terms"] = [(pk, wk * rho * kappa) for pk, wk in s["terms"]]
        mus = [self.p[a]["mu"] for a in players]
        ws = [C / math.sqrt(self.p[a]["sig"] ** 2 + self.beta2) for a in players]
        perfs = []
        for i, a in enumerate(players):
            def f(x):
                tot = 0.0
                for j in range(len(players)):
                    v = -ws[j] * math.tanh(ws[j] / 2 * (x - mus[j]))
                    if ranks[j] < ranks[i]:
                        tot += v - ws[j]
                    elif ranks[j] > ranks[i]:
                        tot += v + ws[j]
                    else:
                        tot += v if self.split else 2 * v
                return tot
            perfs.append(brentq(f, -20000, 20000, xtol=1e-12, rtol=1e-15))
        for a, perf in zip(players, perfs):
            s = self.p[a]
            if self.history is not None and len(s["terms"]) == self.history:
                p_old, w_old = s["terms"].pop(0)
                prec = C / (2 * beta) * w_old * 2 / C ** 2
                s["nmu"] = (s["nw"] * s["nmu"] + prec * p_old) / (s["nw"] + prec)
                s["nw"] += prec
            s["terms"].append((perf, C / beta))

            def g(x):
                return s["nw"] * (x - s["nmu"]) + sum(wk * math.tanh(C / (2 * beta) * (x - pk)) for pk, wk in s["terms"])
            s["mu"] = brentq(g, -20000, 20000, xtol=1e-12, rtol=1e-15)
            s["sig"] = (s["sig"] ** -2 + 1 / self.beta2) ** -0.5


def table(contests):
    """Matches of single competitors from ``[(time, players, ranks), ...]``."""
    rows = [dict(match=m, time=float(t), competitor=p, side=p, rank=int(r), weight=1.0)
            for m, (t, ps, rs) in enumerate(contests) for p, r in zip(ps, rs)]
    return Matches.from_long(pd.DataFrame(rows))


def random_contests(rng, n_players, n_contests, lo, hi, tie_levels=None):
    out = []
    for m in range(n_contests):
        k = int(rng.integers(lo, hi + 1))
        ps = [f"p{i}" for i in rng.choice(n_players, k, replace=False)]
        levels = tie_levels or k
        raw = rng.integers(0, levels, k)
        ranks = [int(np.sum(raw < r)) for r in raw]  # competition ranking: 0, 0, 2, ...
        out.append((float(m) * 3.0, ps, ranks))
    return out


def final(run):
    r = run.ratings()
    return dict(zip(r["player"], zip(r["mean"], r["sd"])))


def reference(contests, history=None, **settings):
    ref = Reference(history=history, **settings)
    for t, ps, rs in contests:
        ref.contest(ps, rs, t)
    return ref


def check_against_reference(contests, history=None, **settings):
    ref = reference(contests, history, **settings)
    got = final(EloMMR(**settings).run(table(contests)))
    assert set(got) == set(ref.p)
    for a, (mu, sd) in got.items():
        assert mu == pytest.approx(ref.p[a]["mu"], abs=1e-6), a
        assert sd == pytest.approx(ref.p[a]["sig"], abs=1e-9), a


@pytest.mark.parametrize("settings", [{}, {"split_ties": True}, {"transfer_speed": math.inf},
                                      {"transfer_speed": 0.5, "drift_per_day": 300.0, "sig_limit": 60.0}])
def test_equals_the_reference_on_small_contests_with_ties(settings):
    rng = np.random.default_rng(3)
    check_against_reference(random_contests(rng, 12, 14, 2, 7, tie_levels=3), **settings)


def hero_contests(n):
    rng = np.random.default_rng(5)
    return [(float(m), ["hero"] + [f"o{i}" for i in rng.choice(6, 2, replace=False)], list(rng.permutation(3)))
            for m in range(n)]


def test_history_beyond_its_limit_equals_the_full_history():
    """A competitor playing HISTORY + 25 contests: its oldest terms are folded, the ratings stay
    within 1e-6 of keeping every term (at the default settings)."""
    check_against_reference(hero_contests(HISTORY + 25))


def test_the_oldest_term_is_folded_into_the_gaussian_term():
    """With transfer_speed 0 old terms keep weight, so folding matters (the full history differs by
    more than 1e-6): the fold is the reference code's (weight and mean into the Gaussian term)."""
    contests = hero_contests(HISTORY + 25)
    full = reference(contests, transfer_speed=0.0).p["hero"]["mu"]
    folded = reference(contests, HISTORY, transfer_speed=0.0).p["hero"]["mu"]
    assert abs(full - folded) > 1e-5
    check_against_reference(contests, HISTORY, transfer_speed=0.0)


def test_the_interpolated_solve_equals_the_exact_one():
    """Contests of 300 entrants with spread ratings and ties: the grid path (forced) within 1e-6."""
    rng = np.random.default_rng(7)
    contests = random_contests(rng, 400, 4, 250, 300, tie_levels=120)
    initial = {f"p{i}": (float(rng.normal(1500, 400)), float(rng.uniform(60, 350))) for i in range(400)}
    for split in (False, True):
        fast = final(EloMMR(exact_below=2, split_ties=split).run(table(contests), initial=initial))
        exact = final(EloMMR(exact_below=10 ** 6, split_ties=split).run(table(contests), initial=initial))
        diff = max(abs(fast[a][0] - exact[a][0]) for a in exact)
        assert diff < 1e-6


def test_properties_winner_rises_last_falls_relabelling_changes_nothing():
    rng = np.random.default_rng(11)
    contests = random_contests(rng, 30, 20, 3, 10)
    method = EloMMR()
    run = method.run(table(contests))
    # the contest's winner rises and its last falls (a fresh contest of established players)
    before = final(run)
    ps, rs = contests[-1][1], contests[-1][2]
    order = np.argsort(rs, kind="stable")
    winner, last = ps[order[0]], ps[order[-1]]
    nxt = contests + [(200.0, ps, [0 if p == winner else (len(ps) - 1 if p == last else 1) for p in ps])]
    after = final(method.run(table(nxt)))
    assert after[winner][0] > before[winner][0] and after[last][0] < before[last][0]
    assert all(sd > 0 for _, sd in after.values())
    # renaming the competitors and listing each contest's sides in another order changes nothing
    perm = {f"p{i}": f"q{j}" for i, j in enumerate(rng.permutation(30))}
    shuffled = []
    for t, ps, rs in contests:
        idx = rng.permutation(len(ps))
        shuffled.append((t, [perm[ps[k]] for k in idx], [rs[k] for k in idx]))
    again = final(method.run(table(shuffled)))
    for a, (mu, sd) in before.items():
        assert again[perm[a]][0] == pytest.approx(mu, abs=1e-9) and again[perm[a]][1] == pytest.approx(sd, abs=1e-12)


def test_teams_and_weights_are_refused_naming_the_method_and_match():
    rows = [dict(match="m1", time=0.0, competitor="a", side="x", rank=0, weight=1.0),
            dict(match="m1", time=0.0, competitor="b", side="y", rank=1, weight=1.0),
            dict(match="m2", time=1.0, competitor="a", side="x", rank=0, weight=1.0),
            dict(match="m2", time=1.0, competitor="c", side="x", rank=0, weight=1.0),
            dict(match="m2", time=1.0, competitor="b", side="y", rank=1, weight=1.0)]
    with pytest.raises(ValueError, match=r"elo_mmr rates contests of individuals: match 'm2'.*side of 2"):
        EloMMR().run(Matches.from_long(pd.DataFrame(rows)))
    rows = rows[:2] + [dict(rows[0], match="m3", time=2.0), dict(rows[1], match="m3", time=2.0, weight=0.5)]
    with pytest.raises(ValueError, match=r"elo_mmr does not use partial-play weights: match 'm3'.*'b' weight 0.5"):
        EloMMR().run(Matches.from_long(pd.DataFrame(rows)))


def test_the_forecast_is_elo_mmrs_pairwise_probability_for_regular_entrants():
    """At the limiting variance v = (1 + w) sig_limit^2 our Bradley-Terry pair is Elo-MMR's
    logistic P = F(pi / sqrt(3) d / sqrt(2 beta^2 + 2 v))."""
    m = EloMMR()
    beta2 = 6.0 * 80.0 ** 2
    v = 1.2 * 80.0 ** 2
    b = m.match_forecast().beta
    for d in (50.0, 300.0):
        theirs = 1 / (1 + math.exp(-C * d / math.sqrt(2 * beta2 + 2 * v)))
        ours = 1 / (1 + math.exp(-d / math.sqrt(2 * b * b + 2 * v)))
        assert ours == pytest.approx(theirs, rel=1e-12)


def test_compiled_equals_plain_python():
    code = ("import numpy as np, pandas as pd\n"
            "from filters.elo_mmr import EloMMR\nfrom statespace.data.matches import Matches\n"
            "rows=[dict(match=m,time=float(m),competitor=p,side=p,rank=r,weight=1.0) for m,(ps,rs) in "
            "enumerate([(('a','b','c'),(0,1,1)),(('b','c','d'),(2,0,1)),(('a','d'),(1,0))]) for p,r in zip(ps,rs)]\n"
            "r=EloMMR(exact_below=3).run(Matches.from_long(pd.DataFrame(rows))).ratings()\n"
            "vals=[float(v) for v in r['mean']] + [float(v) for v in r['sd']]\nprint(repr(vals))\n")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    plain = eval(out.stdout.strip())
    exec_ns = {}
    exec(code, exec_ns)
    assert len(plain) == 8 and np.allclose(exec_ns["vals"], plain, rtol=0, atol=1e-9)


@pytest.mark.parametrize("kappa", [2.0, 1.0])
def test_the_grid_solve_is_within_1e_8_of_the_exact_one(kappa):
    """The performance solve's interpolant on its own: 600 entrants of spread ratings and
    uncertainties, a large tie group and small ones, every performance within 1e-8 rating points
    of Newton on the exact sums."""
    from filters._elo_mmr_perf import solve_exact, solve_grid
    rng = np.random.default_rng(13)
    n = 600
    mu = rng.normal(1500.0, 350.0, n)
    beta = 80.0 * math.sqrt(6.0)
    w = C / np.sqrt(rng.uniform(60.0, 350.0, n) ** 2 + beta ** 2)
    raw = np.concatenate([np.zeros(40), rng.integers(1, 400, n - 40)])  # 40 tied first, then pairs
    rank = np.array([np.sum(raw < r) for r in raw], dtype=np.int64)
    exact, grid = np.empty(n), np.empty(n)
    solve_exact(mu, w, rank, kappa, beta, exact)
    assert solve_grid(mu, w, rank, kappa, beta, grid) == 0
    assert np.max(np.abs(grid - exact)) < 1e-8


def test_registered_as_a_method_that_rates_contests_only_and_refuses_games():
    from statespace.data.games import Games
    from statespace.methods import registry

    assert registry.get("elo_mmr") is EloMMR
    assert "elo_mmr" in registry.names() and "elo_mmr" not in registry.names(default_only=True)
    games = Games.from_arrays([0.0, 1.0], ["a", "b"], ["b", "c"], [1.0, 0.0])
    method = EloMMR()
    message = r"^elo_mmr rates contests of many entrants \(statespace.data.matches.Matches\).*Matches.from_games"
    with pytest.raises(ValueError, match=message):
        method.run(games)
    with pytest.raises(ValueError, match=message):
        method.update(method.init_state(["a", "b", "c"]), games)
    with pytest.raises(ValueError, match=message):
        method.predict_proba(method.init_state(["a", "b"]), "a", "b")
    with pytest.raises(ValueError, match=message):
        method.grid(games, sig_limit=[60.0, 80.0])
    with pytest.raises(ValueError, match=message):
        method.tune(games, ["sig_limit"])
    # the games as contests of two: a win moves the winner up, the draw (a contest all tied) nobody
    run = method.run(Matches.from_games(Games.from_arrays([0.0, 1.0], ["a", "b"], ["b", "c"], [1.0, 0.5])))
    r = final(run)
    assert r["a"][0] > 1500.0 > r["b"][0] and r["c"] == (1500.0, 350.0)


def test_trajectories_record_only_the_rating_and_its_sd():
    """A recording run keeps each member's first record_columns (mu, sigma) after each contest,
    not the ~100 columns of the stored history; they end at the final ratings."""
    rng = np.random.default_rng(17)
    run = EloMMR().run(table(random_contests(rng, 10, 6, 2, 5)))
    traj = run.trajectories()
    assert run._post_rows.shape == (run.matches.member.size, 2)
    last = traj.groupby("player")[["mean", "sd"]].last()
    for a, (mu, sd) in final(run).items():
        assert last.loc[a, "mean"] == mu and last.loc[a, "sd"] == sd
