"""The filters at the numeric edges: every numeric setting over its whole accepted range.

The ranges are those of :mod:`statespace.model.ranges`, in units of each filter's scale: standard
deviations up to 1e3 scales, locations within 1e6 scales, and each filter's own (Elo's K up to 10
scales, Glicko-2's tau up to 3). Each property draws every setting of one filter over its accepted
range (log-uniform, the ends included) and runs it on a small random table of games (huge and tiny
weights, long idle gaps, rating periods). A run gives finite ratings within 1e9 scales of the prior
mean, sds > 0 and at most 1e9 scales, and forecasts in [0, 1] summing to 1 -- or, where the games'
weights or gaps break the arithmetic, a ``ResultRangeError`` instead of ratings; on tables of plain
games (weights 1, gaps up to 50) every accepted setting gives ratings. Construction refuses a setting
outside its range with a ``ValueError`` naming it. Below the properties, the audits' reproductions
as plain regression tests (the real-data ones skip without ``../shared/data``), and every filter at
the corners of its own tuning box.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import statespace as ss
from filters import EKF, REGISTRY, Elo, Glicko, Glicko2, Stephenson, TrueSkill, WengLin
from statespace import Davidson, SkillModel, Threshold
from statespace.model.ranges import RESULT_SCALES, ResultRangeError

from conftest import data_path, has_data, with_points

BIG = sys.float_info.max
#: period_days from here: the tables' times reach about 1e17, and a time over period_days that
#: overflows (Filter.times) warns there, before any kernel runs (see test_a_time_that_overflows...)
DAYS_MIN = 1e-290
PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------- strategies
def log_uniform(lo: float, hi: float):
    """Positive numbers from ``lo`` to ``hi``, log-uniform, the ends themselves often."""
    lo_e, hi_e = math.log10(lo), math.log10(hi)

    def power(e):  # 10^e, near the largest float taken from hi (10.0 ** 308.25 overflows)
        return min(max(10.0 ** e if e < 308.0 else hi * 10.0 ** (e - hi_e), lo), hi)

    return st.one_of(st.sampled_from([lo, hi]), st.floats(lo_e, hi_e).map(power))


def nonneg(hi: float, lo: float = 1e-300):
    return st.one_of(st.just(0.0), log_uniform(lo, hi))


def signed(hi: float = 1e300):
    """A location: 0, moderate, or up to ``hi`` in magnitude, either sign."""
    return st.one_of(st.just(0.0), st.floats(-min(3000.0, hi), min(3000.0, hi)),
                     st.tuples(st.sampled_from([-1.0, 1.0]), log_uniform(1e-300, hi)).map(lambda p: p[0] * p[1]))


@st.composite
def tables(draw, weighted: bool = False, plain: bool = False):
    """A small table: 2-6 competitors, 1-25 games, numeric times with gaps from 0 to 1e15 (``plain``:
    to 50), scores 1 / 0.5 / 0, some games at home, rating periods or not; weights log-uniform over
    [1e-300, 1e300] when asked."""
    n_players = draw(st.integers(2, 6))
    n = draw(st.integers(1, 25))
    a = draw(st.lists(st.integers(0, n_players - 1), min_size=n, max_size=n))
    shift = draw(st.lists(st.integers(1, n_players - 1), min_size=n, max_size=n))
    b = [(x + s) % n_players for x, s in zip(a, shift)]
    gap = st.one_of(st.just(0.0), st.floats(0.0, 50.0)) if plain else st.one_of(
        st.just(0.0), st.floats(0.0, 50.0), log_uniform(1.0, 1e15))
    gaps = draw(st.lists(gap, min_size=n, max_size=n))
    t = np.cumsum(gaps)
    score = draw(st.lists(st.sampled_from([1.0, 0.5, 0.0]), min_size=n, max_size=n))
    neutral = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    names = np.array([f"P{i}" for i in range(n_players)], dtype=object)
    period = np.floor(np.arange(n) / draw(st.integers(1, 4))).astype(int) if draw(st.booleans()) else None
    games = ss.Games.from_arrays(t, names[a], names[b], score, neutral=neutral, period=period)
    if weighted and draw(st.booleans()):
        games = games.with_weights(np.array(draw(st.lists(log_uniform(1e-300, 1e300), min_size=n, max_size=n))))
    return games


def built(make, **kwargs):
    """The filter ``make(**kwargs)``, or None when construction refuses a setting; the refusal must be
    a ``ValueError`` naming one of the settings given."""
    try:
        return make(**kwargs)
    except ValueError as exc:
        named = [k for k in kwargs if k in str(exc)] + [k for k in ("scale", "base", "drift") if k in str(exc)]
        assert named, f"{exc} names none of {sorted(kwargs)}"
        return None


def check_run(method, games, strict: bool = False):
    """Finite state within 1e9 scales of the prior mean, sds > 0 and at most 1e9 scales, forecasts in
    [0, 1] summing to 1: of the run and from its final state. Unless ``strict``, the run may instead
    end in a ``ResultRangeError`` (the games' weights or gaps broke the arithmetic): never in
    ratings beyond the bound. Returns the run, or None after that error."""
    try:
        run = method.run(games)
    except ResultRangeError as exc:
        if strict:
            raise
        assert method.name in str(exc) and "beyond" in str(exc)
        return None
    except ss.GamesError as exc:  # a draw where the draw model gives draws no chance: refused at loading
        assert "no chance of a draw" in str(exc) or "draw model 'none'" in str(exc), exc
        return None
    values = run.state.values
    assert np.all(np.isfinite(values)), (method, values)
    model = method.model
    assert np.all(np.abs(values[:, 0] - model.prior_mean) <= RESULT_SCALES * model.scale), (method, values)
    if method.sd_column is not None:  # competitors' rows (the EKF's shared home row starts at sd 0)
        sd = values[: len(run.state.players), method.columns.index(method.sd_column)]
        assert np.all(sd > 0) and np.all(sd <= RESULT_SCALES * model.scale), (method, values)
    check_proba(run.proba)
    players = list(run.state.players)
    check_proba(method.predict_proba(run.state, players, players[::-1], at_home=np.ones(len(players))))
    check_proba(run.predict_proba(games))
    return run


def check_proba(p):
    p = np.asarray(p)
    assert np.all(np.isfinite(p)) and np.all(p >= 0) and np.all(p <= 1), p
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-9)


# ---------------------------------------------------------------- the properties
# Settings are drawn in units of the scale (``*_scales``) and multiplied by it, so that each one runs
# over its whole accepted range whatever the scale drawn.
ELO_ALPHA = ss.ELO_SCALE


def sds(hi_scales: float = 1e3, zero: bool = False):
    """A standard deviation in scales: (0, 1e3] (with 0 where ``zero``)."""
    return nonneg(hi_scales, 1e-200) if zero else log_uniform(1e-200, hi_scales)


def run_both(method, games, plain):
    """``plain`` tables (weights 1, gaps of at most 50 units and ``period_days`` >= 1) must give
    ratings; others may end in the clear error."""
    check_run(method, games, strict=plain and (getattr(method, "period_days", None) or 1.0) >= 1.0)


@PROPERTY
@given(data=st.data(), plain=st.booleans(), k=nonneg(10.0), home=signed(10.0), initial_rating=signed(1e6),
       scale=log_uniform(1e-100, 1e100), base=st.sampled_from([10.0, math.e, 2.0, 1e300]), fide=st.booleans())
def test_elo_over_its_whole_range(data, plain, k, home, initial_rating, scale, base, fide):
    alpha = scale / math.log(base)
    games = data.draw(tables(weighted=not plain, plain=plain))
    method = built(Elo, k=k * alpha, home=home * alpha, initial_rating=initial_rating * alpha, scale=scale, base=base,
                   fide=fide)
    if method is not None:  # refused: the scale / ln(base) below 1e-100
        run_both(method, games, plain and not fide)  # FIDE's K is in points whatever the scale


@PROPERTY
@given(data=st.data(), plain=st.booleans(), c=sds(zero=True), initial_rd=sds(), rd_max=sds(), initial_rating=signed(1e6),
       home=signed(10.0), period_days=log_uniform(DAYS_MIN, 1e300), form=st.sampled_from(["prediction", "update"]))
def test_glicko_over_its_whole_range(data, plain, c, initial_rd, rd_max, initial_rating, home, **kw):
    games = data.draw(tables(weighted=not plain, plain=plain))
    run_both(Glicko(c=c * ELO_ALPHA, initial_rd=initial_rd * ELO_ALPHA, rd_max=rd_max * ELO_ALPHA,
                    initial_rating=initial_rating * ELO_ALPHA, home=home * ELO_ALPHA, **kw), games, plain)


@PROPERTY
@given(data=st.data(), plain=st.booleans(), tau=log_uniform(1e-300, 3.0), initial_volatility=log_uniform(1e-300, 1.0),
       eps=log_uniform(1e-300, 0.01), initial_rd=sds(10.0), rd_max=sds(10.0), home=signed(10.0),
       period_days=log_uniform(DAYS_MIN, 1e300), max_iter=st.integers(100, 10**6))
def test_glicko2_over_its_whole_range(data, plain, initial_rd, rd_max, home, **kw):
    """``max_iter`` from 100: fewer Illinois steps may stop short of convergence, the ``ArithmeticError``
    the filter documents (test_glicko.py::test_glicko2_non_convergence_is_an_error_not_nan)."""
    games = data.draw(tables(weighted=not plain, plain=plain))
    # not strict even on plain games: Glicko-2's volatility step can run away after a result far
    # from the forecast within its accepted ranges (tau 3 and a volatility of 1, six games of two
    # competitors), which its arithmetic then carries to 1e11 scales: the clear error, never ratings
    check_run(Glicko2(initial_rd=initial_rd * ELO_ALPHA, rd_max=rd_max * ELO_ALPHA, home=home * ELO_ALPHA, **kw),
              games)


@PROPERTY
@given(data=st.data(), plain=st.booleans(), c=sds(zero=True), h=sds(zero=True),
       bonus=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0)),
       neighbourhood=st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0)), initial_rd=sds(), rd_max=sds(),
       home=signed(10.0))
def test_stephenson_over_its_whole_range(data, plain, c, h, initial_rd, rd_max, home, **kw):
    games = data.draw(tables(weighted=not plain, plain=plain))
    run_both(Stephenson(c=c * ELO_ALPHA, h=h * ELO_ALPHA, initial_rd=initial_rd * ELO_ALPHA, rd_max=rd_max * ELO_ALPHA,
                        home=home * ELO_ALPHA, **kw), games, plain)


@st.composite
def belief_settings(draw):
    """TrueSkill's and Weng-Lin's shared settings over their ranges, in scales of sqrt(2) beta."""
    beta = draw(log_uniform(1e-100 / math.sqrt(2.0), 1e100 / math.sqrt(2.0)))
    alpha = math.sqrt(2.0) * beta
    tau = draw(st.one_of(st.none(), sds(zero=True)))
    return dict(mu=draw(signed(1e6)) * alpha, sigma=draw(sds()) * alpha, beta=beta,
                tau=None if tau is None else tau * alpha, dynamics=draw(st.sampled_from(["game", "time"])),
                home=draw(signed(10.0)) * alpha, period_days=draw(log_uniform(DAYS_MIN, 1e300)))


@PROPERTY
@given(games=tables(plain=True), draw_probability=st.one_of(st.sampled_from([0.0, 1e-300, 0.5, 1 - 1e-16]),
                                                          st.floats(0.0, 1.0, exclude_max=True)),
       kw=belief_settings())
def test_trueskill_over_its_whole_range(games, draw_probability, kw):
    run_both(TrueSkill(draw_probability=draw_probability, **kw), games, kw["dynamics"] == "game" or kw["period_days"] >= 1)


@PROPERTY
@given(games=tables(plain=True), model=st.sampled_from(["bt", "tm", "pl"]), kappa=log_uniform(1e-300, 1.0),
       epsilon=sds(zero=True), kw=belief_settings())
def test_wenglin_over_its_whole_range(games, model, epsilon, kappa, kw):
    epsilon = epsilon * math.sqrt(2.0) * kw["beta"] if model == "tm" else None
    run_both(WengLin(model, epsilon=epsilon, kappa=kappa, **kw), games, kw["dynamics"] == "game" or kw["period_days"] >= 1)


@st.composite
def ekf_models(draw):
    scale = draw(log_uniform(1e-100, 1e100))
    draw_model = draw(st.sampled_from(["half", "threshold", "davidson"]))
    draw_model = {"half": "half", "threshold": Threshold(draw(sds(zero=True)) * scale),
                  "davidson": Davidson(draw(nonneg(100.0)))}[draw_model]
    var = nonneg(0.999e6, 1e-300).map(lambda v: v * scale * scale)  # below the top: v * scale^2 rounds
    return SkillModel(draw(st.sampled_from(["logistic", "probit"])), scale, draw(signed(1e6)) * scale, draw(var),
                      draw(var), draw_model, draw(signed(1e6)) * scale, draw(nonneg(1e3)),
                      draw(var) if draw(st.booleans()) else 0.0)


@PROPERTY
@given(data=st.data(), plain=st.booleans(), model=ekf_models(),
       covariance=st.sampled_from(["diagonal", "scalar", "full"]), iterations=st.sampled_from([1, 2, 20, 10_000]),
       tol=log_uniform(1e-300, 1.0), variance=st.one_of(st.none(), log_uniform(1e-300, 1e6)),
       period_days=log_uniform(DAYS_MIN, 1e300))
def test_ekf_over_its_whole_range(data, plain, model, covariance, iterations, tol, variance, period_days):
    games = data.draw(tables(weighted=not plain, plain=plain))
    if model.home_drift > 0 and covariance != "diagonal":
        model = SkillModel(model.link, model.scale, model.prior_mean, model.prior_var, model.drift, model.draw,
                           model.home, model.reversion, 0.0)
    if covariance != "scalar":
        variance = None
    else:
        variance = None if variance is None else variance * model.scale**2
    method = built(EKF, model=model, covariance=covariance, iterations=iterations, tol=tol, variance=variance,
                   period_days=period_days)
    if method is not None:  # refused: the scalar form's steady state with drift 0 and no variance given
        # even plain games may take the EKF beyond the bound: its linearised step moves a rating by up
        # to its variance times the log-likelihood's slope, and a probit draw model's slope grows
        # with the distance from the forecast; the clear error then, never the ratings
        check_run(method, games)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), method=st.sampled_from(["trueskill", "bt", "tm", "pl"]))
def test_team_rating_over_the_settings_ranges(data, method):
    """``rate`` for teams and free-for-all: finite ratings and sigma > 0 for any accepted setting, with
    ratings whose sigma runs over its whole range and whose means spread up to 1e150; TrueSkill's
    message passing may instead raise ``ArithmeticError``, only where a mean over a variance passes
    1e300 (its messages are natural parameters)."""
    beta = data.draw(log_uniform(1e-100 / math.sqrt(2.0), 1e100 / math.sqrt(2.0)))
    tau = data.draw(nonneg(1e3)) * (math.sqrt(2.0) * beta)  # the scale as the range computes it: no rounding past it
    if method == "trueskill":
        m = TrueSkill(mu=0.0, sigma=2.0 * beta, beta=beta, tau=tau,
                      draw_probability=data.draw(st.floats(0.0, 1.0, exclude_max=True)))
    else:
        m = WengLin(method, mu=0.0, sigma=2.0 * beta, beta=beta, tau=tau, kappa=data.draw(log_uniform(1e-300, 1.0)),
                    epsilon=data.draw(nonneg(1e3)) * math.sqrt(2.0) * beta if method == "tm" else None)
    n_teams = data.draw(st.integers(2, 4))
    groups = [[(data.draw(signed(1e150)), data.draw(log_uniform(1e-300, 1e150)))
               for _ in range(data.draw(st.integers(1, 3)))] for _ in range(n_teams)]
    ranks = data.draw(st.lists(st.integers(0, 2), min_size=n_teams, max_size=n_teams))
    hi = 1.0 if method == "trueskill" else 1e300
    weights = [[data.draw(st.sampled_from([1.0, hi]) | log_uniform(1e-300, hi)) for _ in g] for g in groups]
    try:
        out = m.rate(groups, ranks=ranks, weights=weights)
    except ArithmeticError as exc:  # TrueSkill's messages in natural parameters: |mu| / sigma^2 past 1e308
        assert method == "trueskill" and "overflowed" in str(exc)
        spread = max(abs(mu) for g in groups for mu, _ in g)
        tiniest = min(sd * sd + tau * tau for g in groups for _, sd in g) * min(min(w) for w in weights) ** 2
        assert spread / max(tiniest, 1e-300) > 1e300 or tiniest == 0.0, (groups, weights, tau)
        return
    for team in out:
        for mu, sigma in team:
            assert math.isfinite(mu) and math.isfinite(sigma) and sigma > 0, (groups, ranks, weights)


# ---------------------------------------------------------------- just outside the ranges
@pytest.mark.parametrize("make, name", [
    (lambda: Elo(k=-1.0), "k"), (lambda: Elo(k=10.001 * ss.ELO_SCALE), "k"), (lambda: Elo(k=1e190), "k"),
    (lambda: Elo(home=10.01 * ss.ELO_SCALE), "home"), (lambda: Glicko2(home=-1e6 * ss.ELO_SCALE), "home"),
    (lambda: TrueSkill(home=60.0), "home"), (lambda: Elo(initial_rating=-2e300), "initial_rating"),
    (lambda: Elo(scale=1e300, base=1.0 + 1e-15), "scale"), (lambda: Elo(base=1.0), "base"),
    (lambda: Glicko(c=1.01e3 * ss.ELO_SCALE), "c"), (lambda: Glicko(initial_rd=1e200), "initial_rd"),
    (lambda: Glicko(rd_max=1.01e3 * ss.ELO_SCALE), "rd_max"), (lambda: Glicko(home=math.inf), "home"),
    (lambda: Glicko(period_days=0.0), "period_days"),
    (lambda: Glicko2(tau=0.0), "tau"), (lambda: Glicko2(tau=3.01), "tau"), (lambda: Glicko2(tau=1e308), "tau"),
    (lambda: Glicko2(initial_volatility=1.01), "initial_volatility"),
    (lambda: Glicko2(initial_volatility=100.0), "initial_volatility"),
    (lambda: Glicko2(eps=0.0), "eps"), (lambda: Glicko2(max_iter=0), "max_iter"),
    (lambda: Glicko2(max_iter=2.5), "max_iter"),
    (lambda: Glicko2(max_iter=10**6 + 1), "max_iter"),
    (lambda: Stephenson(h=1.01e3 * ss.ELO_SCALE), "h"), (lambda: Stephenson(bonus=1.5), "bonus"),
    (lambda: Stephenson(neighbourhood=2.0), "neighbourhood"),
    (lambda: TrueSkill(sigma=1.01e3 * math.sqrt(2.0) * 25 / 6, beta=25 / 6), "sigma"),
    (lambda: TrueSkill(beta=1e100), "beta"),
    (lambda: TrueSkill(beta=1e-101), "beta"),
    (lambda: TrueSkill(tau=1e150), "tau"), (lambda: TrueSkill(mu=1e301), "mu"),
    (lambda: TrueSkill(draw_probability=1.0), "draw_probability"),
    (lambda: TrueSkill(draw_probability=-1e-300), "draw_probability"),
    (lambda: WengLin("pl", sigma=1e300), "sigma"), (lambda: WengLin(kappa=0.0), "kappa"),
    (lambda: WengLin(kappa=1.5), "kappa"), (lambda: WengLin("tm", epsilon=1e151), "epsilon"),
    (lambda: EKF(SkillModel("logistic", 1.01e100)), "scale"), (lambda: EKF(SkillModel("logistic", 1e-101)), "scale"),
    (lambda: EKF(SkillModel("logistic", 1.0, prior_mean=1.01e6)), "prior_mean"),
    (lambda: EKF(SkillModel("logistic", 2.0, home=-2.03e6)), "home"),
    (lambda: EKF(SkillModel("logistic", 1.0, drift=1e308)), "drift"),
    (lambda: EKF(SkillModel("logistic", 1.0, prior_var=1e300)), "prior_var"),
    (lambda: EKF(SkillModel("logistic", 1.0, home_drift=1.01e6)), "home_drift"),
    (lambda: EKF(SkillModel("logistic", 1.0, reversion=1.01e3)), "reversion"),
    (lambda: EKF(SkillModel("logistic", 1.0, draw=Threshold(1.01e3))), "margin"),
    (lambda: EKF(iterations=0), "iterations"), (lambda: EKF(iterations=10_001), "iterations"),
    (lambda: EKF(tol=0.0), "tol"), (lambda: EKF(covariance="scalar", variance=1e301), "variance"),
])
def test_a_setting_outside_its_range_is_refused_by_name(make, name):
    with pytest.raises(ValueError, match=name):
        make()


@pytest.mark.parametrize("method", [Glicko(), Glicko2(), TrueSkill(), WengLin(), EKF(), Elo()])
def test_a_starting_value_outside_the_range_is_refused(method):
    games = ss.Games.from_arrays([0, 1], ["A", "A"], ["B", "B"], [1, 0])
    with pytest.raises(ValueError, match="initial"):
        method.run(games, initial={"A": 1e301})
    if method.sd_column is not None and not isinstance(method, EKF):
        with pytest.raises(ValueError, match="initial"):
            method.run(games, initial={"A": (0.0, 1e151)})


# ---------------------------------------------------------------- the audit's reproductions
def balanced():
    return ss.scenarios.balanced(seed=1).games


def test_glicko_with_a_tiny_rd():
    """RD <= 1e-200: its square underflowed to 0, and 1 / RD^2 was a ZeroDivisionError."""
    check_run(Glicko(initial_rd=1e-200), balanced())
    check_run(Glicko(initial_rd=1e-200, rd_max=1e-200), balanced())


def test_trueskill_with_a_tiny_sigma_and_a_draw_probability_next_to_1():
    check_run(TrueSkill(sigma=1e-300, beta=25 / 6), balanced())
    ts = TrueSkill(draw_probability=1 - 1e-16)
    assert math.isfinite(ts.draw_margin) and ts.draw_margin > 0  # Phi^-1 of (p + 1) / 2, which rounded to 1
    check_run(ts, balanced())


def test_glicko2_with_heavy_games():
    """Weights >= 1e10 made every E exactly 0 or 1 after a few games: 1 / v = 0 and v = 1 / 0."""
    for w in (1e10, 1e100, 1e300):
        check_run(Glicko2(), balanced().with_weights(np.full(len(balanced()), w)))


def test_glicko2_with_a_large_tau_or_starting_volatility():
    """tau >= 7 or a starting volatility of 1 or more gave ratings near 1e296 on the NFL's games: now
    refused; the tops of the accepted ranges give ratings on a plain league."""
    for kw in ({"tau": 8.0}, {"initial_volatility": 5.0}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            Glicko2(**kw)
    check_run(Glicko2(tau=3.0), balanced(), strict=True)
    check_run(Glicko2(initial_volatility=1.0), balanced(), strict=True)


def test_settings_that_made_nan_are_refused_or_work():
    with pytest.raises(ValueError, match="tau"):
        TrueSkill(tau=1e154)
    with pytest.raises(ValueError, match="sigma"):
        TrueSkill(sigma=1e300)
    with pytest.raises(ValueError, match="sigma"):
        WengLin("pl", sigma=1e300)
    top = 1e3 * TrueSkill().model.scale  # 1e3 scales: the largest sd accepted
    check_run(TrueSkill(tau=top), balanced(), strict=True)
    check_run(TrueSkill(sigma=top), balanced(), strict=True)


def test_team_rating_with_extreme_inputs():
    with pytest.raises(ValueError, match=r"weights\[0\]\[0\]"):  # partial play is a share of the game
        TrueSkill().rate([[(25.0, 8.0)], [(25.0, 8.0)]], weights=[[1e300], [1.0]])
    with pytest.raises(ValueError, match=r"rating_groups\[0\]\[0\].*sigma"):
        WengLin("pl").rate([[(25.0, 1e300)], [(25.0, 8.0)], [(20.0, 3.0)]])
    for model in ("bt", "tm", "pl"):
        out = WengLin(model).rate([[(25.0, 1e150)], [(25.0, 8.0)], [(20.0, 1e-300)]], weights=[[1e300], [1], [1]])
        for team in out:
            assert all(math.isfinite(m) and 0 < s < math.inf for m, s in team)
    for team in TrueSkill().rate([[(25.0, 1e150)], [(25.0, 8.0), (1e150, 1e-300)]], weights=[[1.0], [1.0, 0.5]]):
        assert all(math.isfinite(m) and 0 < s < math.inf for m, s in team)


@pytest.mark.parametrize("rate", [lambda: TrueSkill().rate, lambda: WengLin().rate])
@pytest.mark.parametrize("groups, weights, error, named", [
    ([[(25,)], [(25, 8)]], None, TypeError, r"rating_groups\[0\]\[0\]"),
    ([[25], [(25, 8)]], None, TypeError, r"rating_groups\[0\]\[0\]"),
    ([[(25, 8, 1)], [(25, 8)]], None, TypeError, r"rating_groups\[0\]\[0\]"),
    ([[("a", 8)], [(25, 8)]], None, ValueError, r"rating_groups\[0\]\[0\]"),
    ([{"x": (25, 8)}, {"y": (25, -8)}], None, ValueError, r"rating_groups\[1\]\['y'\]"),
    ([(25, 8), (25, 8)], None, TypeError, r"rating_groups\[0\]\[0\]"),
    ([{"x": (25, 8)}, {"y": (25, 8)}], {(0, "zz"): 1.0}, ValueError, r"\(0, 'zz'\).*no player 'zz'"),
    ([{"x": (25, 8)}, {"y": (25, 8)}], {(5, "x"): 1.0}, ValueError, r"\(5, 'x'\).*team index"),
    ([{"x": (25, 8)}, {"y": (25, 8)}], {"x": 1.0}, TypeError, r"'x'"),
    ([{"x": (25, 8)}, {"y": (25, 8)}], {(0, "x"): "heavy"}, ValueError, r"weights\[\(0, 'x'\)\]"),
    ([[(25, 8)], [(25, 8)]], [[1.0], [math.nan]], ValueError, r"weights\[1\]\[0\]"),
    ([[(25, 8)], [(25, 8)]], [[1.0, 1.0], [1.0]], ValueError, r"weights\[0\] has 2"),
    ([[(25, 8)], [(25, 8)]], [1.0, 1.0], TypeError, r"weights\[0\]"),
])
def test_malformed_team_inputs_are_named(rate, groups, weights, error, named):
    with pytest.raises(error, match=named):
        rate()(groups, weights=weights)


# ---------------------------------------------------------------- tuning never fails on its own bounds
def corners(box: dict) -> list[dict]:
    out = [{}]
    for name, (lo, hi) in box.items():
        out = [{**c, name: v} for c in out for v in (lo, hi)]
    return out


def home_scenario():
    sim = ss.simulate(SkillModel("logistic", ss.ELO_SCALE, 1500.0, 200.0**2, 5.0, Threshold(60.0), home=40.0), 12, 300,
                      home_fraction=0.7, seed=3)
    return sim.games


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_filter_runs_at_the_corners_of_its_tuning_box(name):
    method = REGISTRY[name]()
    games = home_scenario()
    if getattr(method, "needs_scores", False):
        games = with_points(games)
    if not hasattr(method, "tunable") or not hasattr(method, "run"):
        pytest.skip(f"{name} is not a filter")
    if not method.rates_games:  # a method that rates contests only refuses games, naming itself
        with pytest.raises(ValueError, match=rf"^{name} rates contests of many entrants"):
            method.run(games)
        return
    for corner in corners(method.tunable(games)):
        try:
            tuned = method.with_params(**corner)
        except ValueError as exc:  # a corner whose settings bound each other (home in scales of beta)
            assert "home" in str(exc), exc
            continue
        check_run(tuned, games)


def read(name: str) -> ss.Games:
    if not has_data(name):
        pytest.skip(f"real data set {name} not found")
    return ss.Games.from_csv(data_path(name))


def test_glicko2_at_its_tuning_bounds_on_england_and_international_football():
    """``Glicko2().tune()`` reached ``initial_volatility=1.0`` (the top of its box) on the England
    league data, and ``Glicko2(tau=0.3).tune()`` on 90% of international football: ZeroDivisionError."""
    england = read("england_football")
    intl = read("intl_football").split(0.9)[0]
    for games in (england, intl):
        for corner in corners(Glicko2().tunable(games)) + [{"tau": 0.3, "initial_volatility": 1.0}]:
            check_run(Glicko2(**corner), games)  # ratings, or where the volatility ran away the clear error


def test_glicko2_whose_volatility_runs_away_on_the_nfl_is_an_error():
    """With one game a rating period, tau=1.2 and a starting volatility of 0.3 let the volatility's
    random walk climb until it ran away: ratings near 1e296 came out as a result. Now the run ends in
    a ResultRangeError naming the method; the defaults and tau=3 give ratings."""
    nfl = read("nfl")
    with pytest.raises(ResultRangeError, match="glicko2.*beyond 1e9 scales"):
        Glicko2(tau=1.2, initial_volatility=0.3).run(nfl)
    for method in (Glicko2(), Glicko2(tau=3.0)):
        check_run(method, nfl, strict=True)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")
def test_a_time_that_overflows_over_period_days_still_gives_finite_ratings():
    """Times over a tiny ``period_days`` overflow to inf (``Filter.times`` warns): no drift is added
    between such games, and the ratings stay finite."""
    games = ss.Games.from_arrays([0.0, 1e10, 2e10, 2e10], ["A", "B", "A", "C"], ["B", "C", "C", "A"], [1, 0.5, 0, 1])
    for method in (Glicko(period_days=1e-300), Glicko2(period_days=1e-300), EKF(period_days=1e-300),
                   TrueSkill(dynamics="time", period_days=1e-300), WengLin(dynamics="time", period_days=1e-300)):
        check_run(method, games)


# ---------------------------------------------------------------- paths around the compiled loops
def test_a_time_step_is_finite_and_refused_when_infinite():
    """Filter.predict(state, inf) gave NaN sds (EKF, full EKF, TrueSkill with time dynamics, Glicko)."""
    games = ss.Games.from_arrays([0.0, 1.0], ["a", "b"], ["b", "c"], [1.0, 0.5])
    for method in (EKF(), EKF(covariance="full"), TrueSkill(tau=0.0, dynamics="time"), Glicko(c=0.0)):
        state = method.fit(games).state
        with pytest.raises(ValueError, match="dt must be a finite number"):
            method.predict(state, math.inf)
        assert np.isfinite(method.predict(state, 1e300).values).all()


def test_full_ekf_frozen_forecasts_across_an_overflowing_time():
    """The full EKF's frozen forecast did not cap the gap: NaN where the diagonal EKF is finite."""
    games = ss.Games.from_arrays([0.0, 1e8, 1.5e8], ["a", "a", "b"], ["b", "c", "c"], [1.0, 0.0, 0.5])
    for method in (EKF(period_days=1e-293), EKF(covariance="full", period_days=1e-293)):  # gaps of 1e301
        p = method.fit(games.take([0])).predict_proba(games)
        assert np.isfinite(p).all() and np.allclose(p.sum(axis=1), 1.0), method


def test_the_smallest_beta_works_everywhere():
    """beta=1e-300 gave a draw probability of 0 for draw_probability=0.5, and quality() raised; beta
    is now at least 1e-100 (a scale), where the forecasts still mean what they say."""
    with pytest.raises(ValueError, match="beta"):
        TrueSkill(beta=1e-300)
    ts = TrueSkill(mu=0.0, beta=1e-100, sigma=1e-300, draw_probability=0.5)
    assert ts.draw_margin > 0
    win, draw, loss = ts.proba_1vs1((0.0, 1e-300), (0.0, 1e-300))
    assert draw == pytest.approx(0.5)
    assert 0.0 <= ts.quality([[(0.0, 1e-300)], [(0.0, 1e-300)]]) <= 1.0


def test_the_full_ekf_keeps_the_time_base_when_newcomers_join():
    dated = ss.Games.from_arrays(["2020-01-01", "2020-01-02"], ["a", "b"], ["b", "c"], [1.0, 0.5])
    numeric = ss.Games.from_arrays([0.0, 1.0], ["a", "d"], ["d", "b"], [1.0, 0.0])
    method = EKF(covariance="full")
    state = method.update(method.fit(dated.take([0])).state, dated.take([1]))  # c joins
    assert state.time_base == "datetime"
    with pytest.raises(ValueError, match="'datetime'.*'numeric'"):
        method.run(numeric, state=state)
