"""The forward–backward smoothers on simulated games: RTS against Laplace, TrueSkill Through Time
against Laplace (the figures of docs/smoothers.md's "The RTS smoother" and "TrueSkill Through
Time" sections).

- ``rts``: ``statespace.simulate`` of 20,000 games among 100 competitors with the EKF's default
  model (seed 0): warm fit times (best of 3) of ``RTSSmoother`` (diagonal and full) and
  ``LaplaceSmoother``, a warm refit after the last 1% of the games, and each fit's RMS error of
  ``s_a - s_b`` against the truth and against Laplace, with the median sd (and the iterated
  forward pass, ``iterations=10``).
- ``ttt``: the 20,000-game benchmark of ``bench_smoothers.py`` (fit on the first 40 periods):
  ``TrueSkillThroughTime`` fit times and sweeps, held-out log loss of it, of its forward pass
  alone and of ``LaplaceSmoother``, a warm refit, and a fit on all 20,000 games.

Usage::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_forward_backward.py [rts] [ttt]
"""

import math
import sys
import time

import numpy as np

import bench_smoothers as BS
import statespace as ss
from smoothers import LaplaceSmoother, RTSSmoother
from smoothers.ttt import TrueSkillThroughTime


def rts_times():

    model = ss.SkillModel("logistic", 400 / math.log(10), 1500.0, 350.0**2, drift=100.0, draw="half")
    games = ss.simulate(model, n_players=100, n_games=20_000, seed=0).games
    print(games, file=sys.stderr)

    def best(fn, reps=3):
        out = []
        for _ in range(reps):
            t0 = time.perf_counter(); r = fn(); out.append(time.perf_counter() - t0)
        return min(out), r

    methods = {"rts diagonal": RTSSmoother(model), "rts full": RTSSmoother(model, "full"),
               "laplace": LaplaceSmoother(model)}
    for name, m in methods.items():
        m.fit(games.take(np.arange(200)))  # compile / warm the caches
        s, fit = best(lambda: m.fit(games))
        extra = {k: fit.info[k] for k in ("forward_seconds", "backward_seconds", "backward_nodes", "backward_steps",
                                          "iterations", "variances", "cov") if k in fit.info}
        print(f"{name:14s} {s:8.3f} s  nodes {fit.timeline.n_nodes}  {extra}")
    # refit cost: the last 1% of the games added to a fit of the first 99%
    t = games.days()
    cut = np.quantile(t, 0.99)
    head = games.take(np.flatnonzero(t < cut))
    for name in ("rts diagonal", "rts full", "laplace"):
        m = methods[name]
        prev = m.fit(head)
        s, fit = best(lambda: m.fit(games, warm_start=prev))
        print(f"{name:14s} refit (+{len(games) - len(head)} games, warm) {s:8.3f} s  {fit.info.get('warm_start', '')} "
              f"{ {k: fit.info[k] for k in ('backward_nodes', 'backward_steps') if k in fit.info} }")


def rts_accuracy():

    model = ss.SkillModel("logistic", 400 / math.log(10), 1500.0, 350.0**2, drift=100.0, draw="half")
    sim = ss.simulate(model, n_players=100, n_games=20_000, seed=0)
    g = sim.games
    true = sim.skill_a - sim.skill_b
    fits = {"rts diagonal": RTSSmoother(model).fit(g), "rts full": RTSSmoother(model, "full").fit(g),
            "laplace": LaplaceSmoother(model).fit(g)}
    lap = fits["laplace"]
    for name, f in fits.items():
        d = f.mean[f.timeline.game_a] - f.mean[f.timeline.game_b]
        dl = lap.mean[lap.timeline.game_a] - lap.mean[lap.timeline.game_b]
        print(f"{name:13s} rms(d - true) {np.sqrt(np.mean((d - true) ** 2)):6.1f}  rms(d - laplace d) "
              f"{np.sqrt(np.mean((d - dl) ** 2)):6.1f}  median sd {np.median(np.sqrt(f.var)):6.1f}")
    for cov in ("diagonal", "full"):
        f = RTSSmoother(model, cov, iterations=10).fit(g)
        d = f.mean[f.timeline.game_a] - f.mean[f.timeline.game_b]
        dl = lap.mean[lap.timeline.game_a] - lap.mean[lap.timeline.game_b]
        print(f"iterated {cov:9s} rms(d - true) {np.sqrt(np.mean((d - true) ** 2)):6.1f}  rms(d - laplace d) {np.sqrt(np.mean((d - dl) ** 2)):6.1f}")


def ttt_part():
    sim, train, test, tr_rows, te_rows, per = BS.make_split(0)
    model = ss.SkillModel("logistic", 1.0, 0.0, BS.PRIOR_VAR, BS.DRIFT)
    y = test.score
    tol = 1e-4
    ttt = TrueSkillThroughTime(0.0, 1.0, 1.702/math.sqrt(2), math.sqrt(BS.DRIFT), 0.0, tol=tol, max_iter=200)
    ttt.fit(train.take(np.arange(500)))  # warm-up
    for rep in range(3):
        t0 = time.perf_counter(); f = ttt.fit(train); t = time.perf_counter() - t0
        print(f"ttt fit {t:.3f} s, sweeps {f.info['sweeps']}, change {f.info['change']:.1e}")
    p = f.predict_proba(test)[:, 0]
    print("ttt log loss", BS.log_loss(y, p))
    f0 = ttt.with_params(max_iter=0).fit(train)
    print("ttt forward only (filter) log loss", BS.log_loss(y, f0.predict_proba(test)[:, 0]))
    lap = LaplaceSmoother(model); lap.fit(train.take(np.arange(500)))
    t0 = time.perf_counter(); fl = lap.fit(train); t = time.perf_counter() - t0
    print(f"laplace fit {t:.3f} s, log loss", BS.log_loss(y, fl.predict_proba(test)[:, 0]))
    print("true", BS.log_loss(y, ss.metrics.expected_score(sim.true_proba()[te_rows])))
    for rep in range(2):
        t0 = time.perf_counter(); fl = lap.fit(train); print(f"laplace fit {time.perf_counter()-t0:.3f} s")
    allg = sim.games.with_periods(1)
    for rep in range(3):
        t0 = time.perf_counter(); fa = ttt.fit(allg); print(f"ttt on all 20,000 games: {time.perf_counter()-t0:.3f} s, sweeps {fa.info['sweeps']}")
    # walk-forward style warm start: fit on 39 periods, then warm 40
    t39 = train.take(np.flatnonzero(per[tr_rows] < 39))
    w = ttt.fit(t39)
    t0 = time.perf_counter(); fw = ttt.fit(train, warm_start=w); print(f"warm refit {time.perf_counter()-t0:.3f} s, sweeps {fw.info['sweeps']}, warm games {fw.info['warm_games']}")
    print("warm vs cold max diff", np.abs(fw.mean - f.mean).max(), np.abs(np.sqrt(fw.var) - np.sqrt(f.var)).max())


if __name__ == "__main__":
    parts = sys.argv[1:] or ["rts", "ttt"]
    if "rts" in parts:
        rts_times()
        rts_accuracy()
    if "ttt" in parts:
        ttt_part()
