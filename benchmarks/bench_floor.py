"""The floor: our compiled filters against a plain numba loop that produces the same outputs.

The speed goals' yardstick ("compiled loops within 1.3x of a plain numba loop with the same
outputs at 1k and 100k competitors; diagonal EKF >= 10 M games/s"). Each floor is written
independently, the obvious way, in this file: an array of ratings, one pass over the games, the
forecast and the update inline, no indirect calls, no per-game records beyond the one-step
forecast. It returns what the issue counts as the outputs: **each game's one-step win
probability and the final ratings** (the EKF floor: the final means and standard deviations).

- **Elo floor** (``elo_floor``): ``E = 1 / (1 + exp(-(r_a - r_b) ln 10 / 400))``,
  ``r_a += K (S - E)``, ``r_b -= K (S - E)``, against ``filters.Elo(k=K).run(games)``. A second
  floor writes ``E = 1 / (1 + 10 ** ((r_b - r_a) / 400))`` as printed in textbooks
  (``elo_floor_pow``); numba's ``pow`` is slower than its ``exp``, so the ratio is taken against the
  faster ``exp`` form (the stricter yardstick) and the ``pow`` form is printed for information.
- **Diagonal EKF floor** (``ekf_floor``), the default ``filters.EKF()`` (logistic link at Elo
  scale ``s = 400 / ln 10``, prior N(1500, 350^2), drift q = 100 per unit of time, draws as half a
  win, ``covariance="diagonal"``, one Newton step): a competitor's variance grows by ``q dt`` since
  its last game (a newcomer starts from the prior); the forecast is
  ``F(d / sqrt(s^2 + 3 (v_a + v_b) / pi^2))``; with ``z = d / s``, ``p = F(z)``,
  ``g = (S - p) / s``, ``kappa = p (1 - p) / s^2``, ``S = v_a + v_b``:
  ``m_a += v_a g / (1 + kappa S)``, ``m_b -= v_b g / (1 + kappa S)``,
  ``v_i -= kappa v_i^2 / (1 + kappa S)``. This is ``filters/ekf.py``'s update for these settings
  (its guards, clamps and the generic observation kernels left out: they never act on this
  stream).

Before any timing, each floor is checked against ours on the very stream it is timed on: the
largest difference of the one-step win probabilities and of the final ratings (relative to
``max(1, |rating|)``) must be at most 1e-9, else the script stops with status 1
(``tests/test_floor.py`` checks the same on small streams). Then ours and the floor are timed
in alternation, the same ``--repeats`` for both, on process CPU time (``time.process_time``;
the wall clock is printed beside it), after a warm-up of both (compilation or numba's cache
excluded). Ours is timed twice over: the whole ``Filter.run`` on a prebuilt ``statespace.Games``
(what a user pays), and the compiled ``filters.kernels.game_loop`` inside it (what the loop
costs, without the Python-side preparation). The ratio ours / floor > 1 means ours is slower.

The stream (``_common.make_stream``: random pairs, 45% wins / 10% draws / 45% losses, one game
per time step; for the EKF times in rounds, ``bench_ekf.in_rounds``, so each competitor plays
about once per unit of time) has ``--games`` games among each of ``--sizes`` competitor counts.

Usage::

    python benchmarks/bench_floor.py              # 1,000,000 games at 1k, 10k and 100k competitors
    python benchmarks/bench_floor.py --quick      # 200,000 games, 3 repeats: seconds
    python benchmarks/bench_floor.py --sizes 1000 100000 --repeats 9
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit

from _common import BenchParser, build_games, git_describe, load, make_stream, paired, print_header, versions

K_FACTOR = 32.0
INITIAL = 1500.0
TOLERANCE = 1e-9
GOAL_RATIO = 1.3  # the speed goal: ours within 1.3x of the floor
GOAL_EKF = 10e6  # the speed goal: diagonal EKF >= 10 M games/s
#: the default EKF's model (filters.ekf.DEFAULT_MODEL), written out
EKF_SCALE = 400.0 / math.log(10.0)
EKF_PRIOR_MEAN = 1500.0
EKF_PRIOR_VAR = 350.0**2
EKF_DRIFT = 100.0


# ---------------------------------------------------------------------------- the floors
@njit(cache=True)
def elo_floor(a, b, score, n_players, k, initial):
    """Plain Elo: (one-step win probability of each game, final ratings)."""
    c = math.log(10.0) / 400.0
    r = np.full(n_players, initial)
    p = np.empty(a.shape[0])
    for g in range(a.shape[0]):
        i = a[g]
        j = b[g]
        e = 1.0 / (1.0 + math.exp((r[j] - r[i]) * c))
        p[g] = e
        d = k * (score[g] - e)
        r[i] += d
        r[j] -= d
    return p, r


@njit(cache=True)
def elo_floor_pow(a, b, score, n_players, k, initial):
    """The same with the textbook ``10 ** (diff / 400)``."""
    r = np.full(n_players, initial)
    p = np.empty(a.shape[0])
    for g in range(a.shape[0]):
        i = a[g]
        j = b[g]
        e = 1.0 / (1.0 + 10.0 ** ((r[j] - r[i]) / 400.0))
        p[g] = e
        d = k * (score[g] - e)
        r[i] += d
        r[j] -= d
    return p, r


@njit(cache=True)
def ekf_floor(t, a, b, score, n_players, scale, prior_mean, prior_var, drift):
    """Plain diagonal EKF (logistic, draws as half a win, one Newton step): (one-step win
    probability of each game, final means, final standard deviations)."""
    m = np.full(n_players, prior_mean)
    v = np.full(n_players, prior_var)
    last = np.full(n_players, np.nan)
    p = np.empty(a.shape[0])
    s2 = scale * scale
    c = 3.0 / (math.pi * math.pi)
    for g in range(a.shape[0]):
        i = a[g]
        j = b[g]
        tg = t[g]
        if last[i] == last[i] and tg > last[i]:  # seen before (not NaN): drift since its last game
            v[i] += drift * (tg - last[i])
        last[i] = tg
        if last[j] == last[j] and tg > last[j]:
            v[j] += drift * (tg - last[j])
        last[j] = tg
        d = m[i] - m[j]
        S = v[i] + v[j]
        p[g] = 1.0 / (1.0 + math.exp(-d / math.sqrt(s2 + c * S)))
        e = 1.0 / (1.0 + math.exp(-d / scale))
        grad = (score[g] - e) / scale
        kappa = e * (1.0 - e) / s2
        keep = 1.0 / (1.0 + kappa * S)
        m[i] += v[i] * grad * keep
        m[j] -= v[j] * grad * keep
        v[i] -= kappa * keep * v[i] * v[i]
        v[j] -= kappa * keep * v[j] * v[j]
    return p, m, np.sqrt(v)


# ---------------------------------------------------------------------------- agreement
def max_rel(x, y) -> float:
    """``max |x - y| / max(1, |y|)`` (0 for empty arrays)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return float(np.max(np.abs(x - y) / np.maximum(1.0, np.abs(y)))) if x.size else 0.0


def elo_agreement(games, fitted, floor_out) -> dict:
    """How far ``filters.Elo(k=...).run(games)`` (``fitted``) is from the Elo floor's outputs on
    the same games: the one-step win probabilities and the final ratings of every competitor."""
    p, r = floor_out
    return {"proba": max_rel(fitted.proba[:, 0], p), "ratings": max_rel(fitted.state.values[:, 0], r)}


def ekf_agreement(games, fitted, floor_out) -> dict:
    """The same for ``filters.EKF()`` and the EKF floor (means and sds)."""
    p, m, sd = floor_out
    st = fitted.state.values
    return {"proba": max_rel(fitted.proba[:, 0], p), "ratings": max_rel(st[:, 0], m), "sd": max_rel(st[:, 1], sd)}


def run_elo_floor(games, k: float = K_FACTOR, fn=elo_floor):
    return fn(games.a, games.b, games.score, games.n_players, k, INITIAL)


def run_ekf_floor(games):
    return ekf_floor(games.days(), games.a, games.b, games.score, games.n_players, EKF_SCALE, EKF_PRIOR_MEAN,
                     EKF_PRIOR_VAR, EKF_DRIFT)


def agrees(diffs: dict) -> bool:
    return all(d <= TOLERANCE for d in diffs.values())


def check_time_order(games) -> None:
    """The floors rate the games in the order given: the stream must already be in time order
    (``Filter.run`` would otherwise reorder it, and the floors would not be the same computation)."""
    if not np.array_equal(games.order, np.arange(len(games))):
        raise ValueError("the floor needs games in time order")


# ---------------------------------------------------------------------------- timing
def loop_timer(method, games):
    """A function timing one ``method.run(games)`` and, inside it, the compiled ``game_loop``:
    returns (fitted, loop CPU seconds)."""
    import time

    from filters import kernels as K

    original = K.game_loop
    spent: list[float] = []

    def wrapper(*args):
        c0 = time.process_time()
        original(*args)
        spent.append(time.process_time() - c0)

    def go():
        spent.clear()
        K.game_loop = wrapper
        try:
            fitted = method.run(games)
        finally:
            K.game_loop = original
        if len(spent) != 1:
            raise RuntimeError("Filter.run no longer calls game_loop once on games without periods")
        return fitted, spent[0]

    return go


def measure(kind: str, games, repeats: int, n_players: int | None = None) -> dict:
    """Check and time ours against the floor of ``kind`` ("elo" or "ekf") on ``games``: a dict with
    the agreement, CPU and wall seconds (best of ``repeats``, in alternation) and the ratios."""
    from filters import EKF, Elo

    check_time_order(games)
    if kind == "elo":
        method, floor, agreement = Elo(k=K_FACTOR), lambda: run_elo_floor(games), elo_agreement
        extra = {"floor_pow": lambda: run_elo_floor(games, fn=elo_floor_pow)}
    else:
        method, floor, agreement = EKF(), lambda: run_ekf_floor(games), ekf_agreement
        extra = {}
    small = games.take(np.arange(min(1_000, len(games))))
    method.run(small)  # warm: numba's cache or compilation
    for f in [floor, *extra.values()]:
        f()
    ours = loop_timer(method, games)
    fitted, _ = ours()
    diffs = agreement(games, fitted, floor())
    out = {"kind": kind, "games": len(games), "players": n_players or games.n_players, "agreement": diffs,
           "agrees": agrees(diffs), "repeats": repeats}
    if not out["agrees"]:
        return out
    loops: list[float] = []

    def ours_run():
        fitted, loop = ours()
        loops.append(loop)
        return fitted

    t = paired({"ours": ours_run, "floor": floor, **extra}, repeats)
    out.update({name: {"cpu_s": x.cpu, "cpu_median_s": x.cpu_median, "wall_s": x.wall} for name, x in t.items()})
    out["ours_loop"] = {"cpu_s": min(loops), "cpu_median_s": float(np.median(loops))}
    out["ratio"] = t["ours"].cpu / t["floor"].cpu
    out["ratio_median"] = t["ours"].cpu_median / t["floor"].cpu_median
    out["ratio_loop"] = min(loops) / t["floor"].cpu
    if "floor_pow" in t:
        out["ratio_pow"] = t["ours"].cpu / t["floor_pow"].cpu
    out["ours_games_per_s"] = len(games) / t["ours"].cpu
    out["floor_games_per_s"] = len(games) / t["floor"].cpu
    return out


def run_all(n_games: int, sizes, repeats: int, seed: int, ekf_sizes=None, progress=None) -> dict:
    """Every measurement of this script: Elo at each of ``sizes`` competitors, the EKF at each of
    ``ekf_sizes`` (default: the smallest size); used by ``main`` and by ``peers.py``."""
    from bench_ekf import in_rounds

    rows = []
    for kind, players_list in (("elo", sizes), ("ekf", ekf_sizes or sizes[:1])):
        for n_players in players_list:
            if progress:
                progress(f"  floor: {kind} at {n_players:,} competitors")
            t, a, b, score = make_stream(n_games, n_players, seed)
            games = build_games(in_rounds(t, n_players) if kind == "ekf" else t, a, b, score)
            rows.append(measure(kind, games, repeats, n_players))
    return {"games": n_games, "repeats": repeats, "seed": seed, "rows": rows}


# ---------------------------------------------------------------------------- the report
def fmt_rate(x: float) -> str:
    return f"{x / 1e6:.2f} M" if x >= 1e6 else f"{x / 1e3:.1f} k"


def report_lines(result: dict) -> list[str]:
    """The markdown table of :func:`run_all`'s result, and the verdicts."""
    n = result["games"]
    head = ("| filter | competitors | agreement: max rel. diff (p, ratings[, sd]) | ours: run, CPU ms | "
            "ours: game_loop, CPU ms | floor, CPU ms | ours / floor (run) | ours / floor (loop) | median ratio (run) | "
            "ours / 10 ** x floor (run) | ours games/s | floor games/s |")
    lines = [f"{n:,} games per stream, best of {result['repeats']} in alternation (the same repeats for ours and the "
             "floor), process CPU time; a ratio > 1: ours takes longer than the floor", "", head,
             "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for r in result["rows"]:
        agree = ", ".join(f"{v:.1e}" for v in r["agreement"].values())
        name = "Elo(k=32)" if r["kind"] == "elo" else "EKF()"
        if not r["agrees"]:
            lines.append(f"| {name} | {r['players']:,} | **{agree}: DISAGREE, not timed** |" + " |" * 9)
            continue
        lines.append(f"| {name} | {r['players']:,} | {agree} | {1e3 * r['ours']['cpu_s']:.1f} | "
                     f"{1e3 * r['ours_loop']['cpu_s']:.1f} | {1e3 * r['floor']['cpu_s']:.1f} | "
                     f"**{r['ratio']:.2f}** | {r['ratio_loop']:.2f} | {r['ratio_median']:.2f} | "
                     f"{'%.2f' % r['ratio_pow'] if 'ratio_pow' in r else '—'} | {fmt_rate(r['ours_games_per_s'])} | "
                     f"{fmt_rate(r['floor_games_per_s'])} |")
    lines.append("")
    for r in result["rows"]:
        if not r["agrees"]:
            continue
        name = "Elo(k=32)" if r["kind"] == "elo" else "EKF()"
        verdict = "met" if r["ratio"] <= GOAL_RATIO else "NOT met"
        lines.append(f"- {name}, {r['players']:,} competitors: ours {fmt_rate(r['ours_games_per_s'])} games/s, floor "
                     f"{fmt_rate(r['floor_games_per_s'])} games/s: ours takes {r['ratio']:.2f}x the floor's time "
                     f"(goal <= {GOAL_RATIO}x: {verdict})" +
                     (f"; against the textbook 10 ** x floor ({1e3 * r['floor_pow']['cpu_s']:.1f} ms) "
                      f"{r['ratio_pow']:.2f}x" if "floor_pow" in r else ""))
        if r["kind"] == "ekf":
            ok = r["ours_games_per_s"] >= GOAL_EKF
            lines.append(f"- EKF() diagonal: {fmt_rate(r['ours_games_per_s'])} games/s on CPU time "
                         f"(goal >= {fmt_rate(GOAL_EKF)}: {'met' if ok else 'NOT met'})")
    return lines


def main(argv=None) -> int:
    p = BenchParser(__doc__)
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000],
                   help="competitor counts of the Elo streams (1000 10000 100000)")
    p.add_argument("--ekf-sizes", type=int, nargs="+", default=None,
                   help="competitor counts of the EKF streams (default: 1000 and 100000)")
    p.add_quick()
    p.set_size("games", 1_000_000, 200_000)
    p.set_size("repeats", 7, 3)
    args = p.parse_args(argv)
    repeats = args.repeats
    print_header(f"bench_floor: ours against a plain numba loop with the same outputs ({args.games:,} games, seed "
                 f"{args.seed})", versions("numpy", "numba"), f"; {load()} at start; commit {git_describe()}")
    result = run_all(args.games, args.sizes, repeats, args.seed, args.ekf_sizes or [1_000, 100_000],
                     progress=lambda m: print(m, file=sys.stderr, flush=True))
    print("\n".join(report_lines(result)))
    print(f"{load()} at the end")
    bad = [r for r in result["rows"] if not r["agrees"]]
    for r in bad:
        print(f"DISAGREE: {r['kind']} at {r['players']:,} competitors: {r['agreement']} (tolerance {TOLERANCE:g})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
