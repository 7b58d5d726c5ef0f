"""Glicko-1 and Glicko-2 by hand, next to the library: Glickman's worked examples and tables.

What it reproduces, and where the numbers come from:

1. Glicko-1, the worked example of Glickman, "The Glicko system" (Boston University, 1999),
   pp. 3-4: a player rated 1500 with RD 200 beats a 1400 (RD 30), loses to a 1550 (RD 100) and
   to a 1700 (RD 300), all in one rating period. The paper prints g = 0.9955, 0.9531, 0.7242;
   E = 0.639, 0.432, 0.303; d^2 = 53670.85 (= 231.67^2); r' = 1464 and RD' = 151.4. It rounds
   g and E before summing, so its d^2 is off by 15 from the full-precision 53685.74; the row
   "d^2 from the paper's rounded g and E" redoes the paper's arithmetic and gets 53670.85.
   Full precision (q = ln 10 / 400): r' = 1464.1065, RD' = 151.3989.
2. Glicko-1, the prediction example of the same paper, p. 5: a 1400 player (RD 80) against a
   1500 player (RD 150): E = 0.376 (0.37599 at full precision), with the symmetric prediction
   form, ``g(sqrt(RD_a^2 + RD_b^2))``.
3. Glicko-2, Glickman, "Example of the Glicko-2 system" (Boston University, 2022 revision):
   the same player and games, volatility 0.06 everywhere,
   tau = 0.5. The paper prints v = 1.7785, Delta = -0.4834, sigma' = 0.05999, phi* = 1.152862,
   phi' = 0.8722, mu' = -0.2069, r' = 1464.06, RD' = 151.52. Its v, Delta and phi* come from
   its rounded intermediates (g and E to 4 and 3 decimals, phi = 1.1513), its sigma' is
   0.0599960 cut to five decimals, and its r' is 173.7178 x (-0.2069) + 1500; the rows say so.
   Full precision: r' = 1464.0507, RD' = 151.5165, sigma' = 0.0599960.
4. Repeated wins without time passing (direct evaluation of the Glicko-1 formulas; no
   published table): P and Q both start at 1500 / RD 350; P beats Q again and again, each game
   its own rating period, all at the same time (so no RD growth in between). P's RD after 1, 5
   and 20 wins: 290.23, 223.26, 177.98. The same games with Glicko-2 (tau 0.5), whose every
   update adds a period's sigma'^2, by hand and from the library.
5. Whose uncertainty moves a prediction (direct evaluation of Glickman's two expected-score
   forms; no published table): a 2500 (RD 30) against a 1500 whose RD is 30 ... 350, then the
   2500's own RD varied instead; a 1800 against a 1500, both RD 30, then the 1800's RD grown to
   350; two new players 300 apart.

The "by hand" column is computed here with plain Python arithmetic from the formulas of the
papers (the Glicko-2 volatility by bisection to 1e-15, not by the library's Illinois
algorithm); the "library" column comes from ``filters.Glicko``, ``filters.Glicko2`` and
``filters.glicko.expected_score``. A row is "ok" when by hand and library agree to 1e-9
(relative; 1e-6 for Glicko-2 quantities, the tolerance of the Illinois iteration) and, where the
paper prints a number, the by-hand value rounds to it; where the paper's value comes from its
own rounded intermediates, or is cut instead of rounded, a note on the row says so and the
check redoes the paper's arithmetic. In sections 4 and 5 the "filed" column holds the rounded
figures of the direct evaluation filed with the issue, not a published table. The script exits
with status 1 on any MISMATCH.

Usage::

    python examples/glicko_worked_examples.py
"""

from __future__ import annotations

import math
import sys

import numpy as np

import statespace
from statespace import Games
from filters import Glicko, Glicko2
from filters.glicko import expected_score, g as g_lib, new_volatility

Q = math.log(10) / 400  # 0.0057565 in the papers
SCALE2 = 173.7178  # Glicko-2 scale, as printed by Glickman (400 / ln 10 = 173.71779...)

_rows: list[tuple[str, bool]] = []


def _digits(printed: str) -> int:
    return len(printed.split(".")[1]) if "." in printed else 0


def show(label: str, paper: str | None, hand: float, library: float | None, tol: float = 1e-9,
         shown: int = 6, paper_from: float | None = None, truncated: bool = False, note: str = "") -> None:
    """One row: the paper's value (text, as printed), by hand, library, and a verdict.

    The printed value is checked against ``paper_from`` when given (the paper's own arithmetic
    on its rounded intermediates), else against the by-hand value: it must be that value rounded
    to the printed digits (cut off instead of rounded when ``truncated``).
    """
    ok = True
    if library is not None:
        ok = abs(hand - library) <= tol * max(1.0, abs(hand))
    if paper is not None:
        target = hand if paper_from is None else paper_from
        unit = 10.0 ** -_digits(paper)
        if truncated:
            ok = ok and math.trunc(target / unit + 1e-9) == round(float(paper) / unit)
        else:
            ok = ok and abs(target - float(paper)) <= 0.5 * unit * (1 + 1e-9)
    _rows.append((label, ok))
    lib = "" if library is None else f"{library:.{shown}f}"
    print(f"  {label:52s} {paper or '':>9s} {hand:14.{shown}f} {lib:>14s}  {'ok' if ok else 'MISMATCH'}"
          + (f"  {note}" if note else ""))


def header(title: str, reference: str = "paper") -> None:
    print(f"\n{title}")
    print(f"  {'':52s} {reference:>9s} {'by hand':>14s} {'library':>14s}")


# ---------------------------------------------------------------- formulas by hand
def g_hand(rd: float) -> float:
    """Glickman 1999, eq. 3: g(RD) = 1 / sqrt(1 + 3 q^2 RD^2 / pi^2)."""
    return 1 / math.sqrt(1 + 3 * Q**2 * rd**2 / math.pi**2)


def e_update(r: float, r_j: float, rd_j: float) -> float:
    """Update-time expected score (eq. 4): only the opponent's RD."""
    return 1 / (1 + 10 ** (-g_hand(rd_j) * (r - r_j) / 400))


def e_prediction(r_a: float, rd_a: float, r_b: float, rd_b: float) -> float:
    """Prediction form ("The Glicko system", p. 5): g of the combined deviation."""
    return 1 / (1 + 10 ** (-g_hand(math.sqrt(rd_a**2 + rd_b**2)) * (r_a - r_b) / 400))


def glicko1_period(r: float, rd: float, opponents: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    """One Glicko-1 period; ``opponents`` = (r_j, RD_j, s_j). Returns r', RD', d^2."""
    gs = [g_hand(rd_j) for _, rd_j, _ in opponents]
    es = [e_update(r, r_j, rd_j) for r_j, rd_j, _ in opponents]
    d2 = 1 / (Q**2 * sum(gj**2 * e * (1 - e) for gj, e in zip(gs, es)))
    precision = 1 / rd**2 + 1 / d2
    r_new = r + Q / precision * sum(gj * (s - e) for gj, e, (_, _, s) in zip(gs, es, opponents))
    return r_new, math.sqrt(1 / precision), d2


def glicko2_period(r: float, rd: float, sigma: float, opponents, tau: float) -> dict:
    """Glicko-2 steps 2-8 ("Example of the Glicko-2 system"), volatility root by bisection."""
    mu, phi = (r - 1500) / SCALE2, rd / SCALE2
    terms = []
    for r_j, rd_j, s in opponents:
        mu_j, phi_j = (r_j - 1500) / SCALE2, rd_j / SCALE2
        gj = 1 / math.sqrt(1 + 3 * phi_j**2 / math.pi**2)
        e = 1 / (1 + math.exp(-gj * (mu - mu_j)))
        terms.append((gj, e, s))
    v = 1 / sum(gj**2 * e * (1 - e) for gj, e, _ in terms)
    delta = v * sum(gj * (s - e) for gj, e, s in terms)
    a = math.log(sigma**2)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2

    lo, hi = a - 10.0, a + 10.0  # f(lo) > 0 > f(hi): f is decreasing
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        if hi - lo < 1e-15:
            break
    sigma_new = math.exp((lo + hi) / 4)
    phi_star = math.sqrt(phi**2 + sigma_new**2)
    phi_new = 1 / math.sqrt(1 / phi_star**2 + 1 / v)
    mu_new = mu + phi_new**2 * sum(gj * (s - e) for gj, e, s in terms)
    return {"mu": mu, "phi": phi, "v": v, "delta": delta, "sigma": sigma_new, "phi_star": phi_star,
            "phi_new": phi_new, "mu_new": mu_new, "r": SCALE2 * mu_new + 1500, "rd": SCALE2 * phi_new}


# ---------------------------------------------------------------- the library
def final(fitted, name: str) -> np.ndarray:
    st = fitted.state
    return st.values[list(st.players).index(name)]


def paper_games() -> tuple[Games, dict]:
    """The player P (1500, RD 200) beats A (1400, 30), loses to B (1550, 100) and C (1700, 300)."""
    games = Games.from_arrays([0, 0, 0], ["P", "P", "P"], ["A", "B", "C"], [1, 0, 0], period=[0, 0, 0])
    return games, {"P": (1500, 200), "A": (1400, 30), "B": (1550, 100), "C": (1700, 300)}


OPPONENTS = [(1400, 30, 1.0), (1550, 100, 0.0), (1700, 300, 0.0)]


def glicko1_paper() -> None:
    header("1. Glicko-1, Glickman (1999) worked example: 1500/200 vs 1400/30 (won), 1550/100, 1700/300 (lost)")
    rds = [30, 100, 300]
    g_vals = g_lib(rds)
    for rd, printed, lib in zip(rds, ["0.9955", "0.9531", "0.7242"], g_vals):
        show(f"g(RD = {rd})", printed, g_hand(rd), float(lib))
    e_vals = expected_score(1500, 200, np.array([1400, 1550, 1700]), np.array(rds), form="update")
    for (r_j, rd_j, _), printed, lib in zip(OPPONENTS, ["0.639", "0.432", "0.303"], e_vals):
        show(f"E against {r_j}/{rd_j} (update-time form)", printed, e_update(1500, r_j, rd_j), float(lib))
    r_new, rd_new, d2 = glicko1_period(1500, 200, OPPONENTS)
    games, init = paper_games()
    fitted = Glicko().run(games, initial=init)
    r_lib, rd_lib = final(fitted, "P")[:2]
    d2_lib = 1 / (1 / rd_lib**2 - 1 / 200**2)  # the library's 1/d^2 is RD'^-2 - RD^-2
    show("d^2 (library: 1 / (RD'^-2 - RD^-2))", None, d2, d2_lib, tol=1e-9, shown=2)
    g_r, e_r = [0.9955, 0.9531, 0.7242], [0.639, 0.432, 0.303]
    d2_paper = 1 / (0.0057565**2 * sum(gj**2 * e * (1 - e) for gj, e in zip(g_r, e_r)))
    show("d^2 from the paper's rounded g and E", "53670.85", d2_paper, None, shown=2)
    show("r' (rating after the period)", "1464", r_new, r_lib, shown=4)
    show("r' to one decimal", "1464.1", r_new, r_lib, shown=4)
    show("RD' (rating deviation after the period)", "151.4", rd_new, rd_lib, shown=4)
    print(f"  full precision: r' = {r_new:.4f}, RD' = {rd_new:.4f}, d^2 = {d2:.2f} (q = ln 10 / 400 = {Q:.7f})")


def glicko1_prediction() -> None:
    header("2. Glicko-1, Glickman (1999) prediction example: 1400/80 against 1500/150")
    show("g(sqrt(80^2 + 150^2)) = g(170)", None, g_hand(170.0), float(g_lib(170.0)))
    hand = e_prediction(1400, 80, 1500, 150)
    glicko = Glicko()
    state = glicko.init_state(["A", "B"], initial={"A": (1400, 80), "B": (1500, 150)})
    show("E (prediction form), expected_score", "0.376", hand, float(expected_score(1400, 80, 1500, 150)))
    show("E (prediction form), Glicko().predict_proba", "0.376", hand, glicko.predict_proba(state, "A", "B")[0, 0])
    print(f"  full precision: E = {hand:.5f}; the other side: {1 - hand:.5f} (the form is symmetric)")


def glicko2_paper() -> None:
    header("3. Glicko-2, Glickman's \"Example of the Glicko-2 system\": same games, sigma = 0.06, tau = 0.5")
    hand = glicko2_period(1500, 200, 0.06, OPPONENTS, tau=0.5)
    games, init = paper_games()
    init2 = {k: (r, rd, 0.06) for k, (r, rd) in init.items()}
    fitted = Glicko2(tau=0.5).run(games, initial=init2)
    r_lib, rd_lib, sigma_lib = final(fitted, "P")
    # intermediates the library does not return, recovered from its output:
    # phi'^-2 = phi*^-2 + 1/v and mu' - mu = phi'^2 Delta / v
    phi_new_lib = rd_lib / 173.7178
    phi_star_lib = math.sqrt(hand["phi"] ** 2 + sigma_lib**2)
    v_lib = 1 / (1 / phi_new_lib**2 - 1 / phi_star_lib**2)
    mu_new_lib = (r_lib - 1500) / 173.7178
    delta_lib = v_lib * (mu_new_lib - hand["mu"]) / phi_new_lib**2
    # the paper's own arithmetic, on its rounded g and E (as printed in steps 3-4)
    g_r, e_r, s_r = [0.9955, 0.9531, 0.7242], [0.639, 0.432, 0.303], [1, 0, 0]
    v_p = 1 / sum(gj**2 * e * (1 - e) for gj, e in zip(g_r, e_r))
    delta_p = v_p * sum(gj * (s - e) for gj, e, s in zip(g_r, e_r, s_r))
    t2 = 1e-6
    show("phi = 200 / 173.7178", "1.1513", hand["phi"], None)
    show("v (estimated variance from the games)", "1.7785", hand["v"], v_lib, tol=t2, paper_from=v_p,
         note="paper: rounded g, E")
    show("Delta (estimated improvement)", "-0.4834", hand["delta"], delta_lib, tol=t2, paper_from=delta_p,
         note="paper: rounded g, E")
    show("sigma' (step 5; library: new_volatility)", "0.05999", hand["sigma"],
         new_volatility(0.06, hand["phi"], hand["v"], hand["delta"], 0.5, 1e-6, 10_000), tol=t2, shown=7,
         truncated=True, note="paper: cut to 5 decimals")
    show("sigma' (library run)", "0.05999", hand["sigma"], sigma_lib, tol=t2, shown=7, truncated=True,
         note="paper: cut to 5 decimals")
    show("phi* = sqrt(phi^2 + sigma'^2)", "1.152862", hand["phi_star"], phi_star_lib, tol=t2,
         paper_from=math.sqrt(1.1513**2 + 0.05999**2), note="paper: rounded phi, sigma'")
    show("phi'", "0.8722", hand["phi_new"], phi_new_lib, tol=t2)
    show("mu'", "-0.2069", hand["mu_new"], mu_new_lib, tol=t2)
    show("r' = 173.7178 mu' + 1500", "1464.06", hand["r"], r_lib, tol=t2, shown=4,
         paper_from=173.7178 * -0.2069 + 1500, note="paper: from rounded mu' = -0.2069")
    show("RD' = 173.7178 phi'", "151.52", hand["rd"], rd_lib, tol=t2, shown=4)
    print(f"  full precision: r' = {hand['r']:.4f}, RD' = {hand['rd']:.4f}, sigma' = {hand['sigma']:.7f}")
    print(f"  library:        r' = {r_lib:.4f}, RD' = {rd_lib:.4f}, sigma' = {sigma_lib:.7f}")


def repeated_wins() -> None:
    header("4. Repeated wins: P beats Q again and again, both from 1500/350, each game its own period", "filed")
    n = 20
    games = Games.from_arrays([0] * n, ["P"] * n, ["Q"] * n, [1] * n)  # same time: no RD growth
    traj = Glicko().run(games).trajectories()
    lib = traj[traj.player == "P"][["mean", "sd"]].to_numpy()
    p, q = (1500.0, 350.0), (1500.0, 350.0)
    hand = []
    for _ in range(n):
        p_new = glicko1_period(*p, [(q[0], q[1], 1.0)])[:2]
        q_new = glicko1_period(*q, [(p[0], p[1], 0.0)])[:2]
        p, q = p_new, q_new
        hand.append(p)
    for k, printed in ((1, "290.23"), (5, "223.26"), (20, "177.98")):
        show(f"P's RD after {k} win{'s' if k > 1 else ''}", printed, hand[k - 1][1], lib[k - 1, 1], shown=4)
    for k in (1, 5, 20):
        show(f"P's rating after {k} win{'s' if k > 1 else ''}", None, hand[k - 1][0], lib[k - 1, 0], shown=4)
    # Glicko-2 on the same games: every game is a period of play, so step 6 adds sigma'^2 to
    # phi^2 each time, even with no time between the games
    traj2 = Glicko2().run(games).trajectories()
    lib2 = traj2[traj2.player == "P"][["mean", "sd", "volatility"]].to_numpy()
    p2, q2 = (1500.0, 350.0, 0.06), (1500.0, 350.0, 0.06)
    hand2 = []
    for _ in range(n):
        hp = glicko2_period(*p2, [(q2[0], q2[1], 1.0)], tau=0.5)
        hq = glicko2_period(*q2, [(p2[0], p2[1], 0.0)], tau=0.5)
        p2, q2 = (hp["r"], hp["rd"], hp["sigma"]), (hq["r"], hq["rd"], hq["sigma"])
        hand2.append(p2)
    for k in (1, 5, 20):
        show(f"Glicko-2 (tau 0.5): P's RD after {k} win{'s' if k > 1 else ''}", None, hand2[k - 1][1],
             lib2[k - 1, 1], tol=1e-6, shown=4)
    show("Glicko-2: P's volatility after 20 wins", None, hand2[-1][2], lib2[-1, 2], tol=1e-6, shown=7)


def whose_uncertainty() -> None:
    header("5. Whose uncertainty moves a prediction: the update-time form uses only the opponent's RD", "filed")
    rds = [30, 50, 100, 200, 350]
    upd = expected_score(2500, 30, 1500, np.array(rds), form="update")
    pred = expected_score(2500, 30, 1500, np.array(rds))
    for rd, printed, lib in zip(rds, ["0.9968", "0.9966", "0.9959", "0.9923", "0.9792"], upd):
        show(f"E(2500/30 vs 1500/{rd}), update-time form", printed, e_update(2500, 1500, rd), float(lib))
    for rd, lib in zip(rds, pred):
        show(f"E(2500/30 vs 1500/{rd}), prediction form", None, e_prediction(2500, 30, 1500, rd), float(lib))
    # now the favourite's own RD varies, the 1500 at RD 30
    own = expected_score(2500, np.array(rds), 1500, 30, form="update")
    for rd, lib in zip(rds, own):
        show(f"E(2500/{rd} vs 1500/30), update-time: own RD", "0.9968", e_update(2500, 1500, 30), float(lib))
    own_pred = expected_score(2500, np.array(rds), 1500, 30)
    for rd, lib in zip(rds, own_pred):
        show(f"E(2500/{rd} vs 1500/30), prediction form", None, e_prediction(2500, rd, 1500, 30), float(lib))

    header("5b. 1800 against 1500: both forms, from each side", "filed")
    cases = [("1800/30 vs 1500/30", (1800, 30, 1500, 30), "0.8480", None),
             ("1500/30 vs 1800/30", (1500, 30, 1800, 30), "0.1520", None),
             ("1800/350 vs 1500/30 (RD grown)", (1800, 350, 1500, 30), "0.8480", None),
             ("1500/30 vs 1800/350", (1500, 30, 1800, 350), "0.2395", None),
             ("1800/350 vs 1500/350 (both new)", (1800, 350, 1500, 350), "0.7605", None),
             ("1800/30 vs 1500/30 (both settled)", (1800, 30, 1500, 30), "0.8480", None)]
    for label, (ra, rda, rb, rdb), printed, _ in cases:
        show(f"{label}, update", printed, e_update(ra, rb, rdb), float(expected_score(ra, rda, rb, rdb, form="update")))
    for label, (ra, rda, rb, rdb), _, _ in cases:
        show(f"{label}, prediction", None, e_prediction(ra, rda, rb, rdb), float(expected_score(ra, rda, rb, rdb)))
    s_upd = e_update(1800, 1500, 30) + e_update(1500, 1800, 350)
    s_pred = e_prediction(1800, 350, 1500, 30) + e_prediction(1500, 30, 1800, 350)
    show("update: E(1800/350 v 1500/30) + E(1500/30 v 1800/350)", "1.088", s_upd,
         float(expected_score(1800, 350, 1500, 30, form="update") + expected_score(1500, 30, 1800, 350, form="update")),
         shown=4)
    show("prediction: the same sum", "1.000", s_pred,
         float(expected_score(1800, 350, 1500, 30) + expected_score(1500, 30, 1800, 350)), shown=4)
    glicko = Glicko()
    state = glicko.init_state(["X", "Y"], initial={"X": (1800, 350), "Y": (1500, 30)})
    show("predict_proba(Y vs X), form=\"update\"", "0.2395", e_update(1500, 1800, 350),
         glicko.predict_proba(state, "Y", "X", form="update")[0, 0], shown=4)
    show("predict_proba(Y vs X), default (prediction)", None, e_prediction(1500, 30, 1800, 350),
         glicko.predict_proba(state, "Y", "X")[0, 0], shown=4)


def main() -> int:
    print(f"statespace {statespace.__version__}: Glicko worked examples (q = ln 10 / 400 = {Q:.7f})")
    glicko1_paper()
    glicko1_prediction()
    glicko2_paper()
    repeated_wins()
    whose_uncertainty()
    bad = [label for label, ok in _rows if not ok]
    print(f"\n{len(_rows) - len(bad)} of {len(_rows)} rows agree" + (f"; MISMATCH: {bad}" if bad else "."))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
