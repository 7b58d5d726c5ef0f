"""Every observation over its whole accepted range, through every method that fits it.

Each property draws an observation's settings over their accepted ranges (log-uniform, the ends
included; ``statespace.model.outcome``, ``statespace.model.margin``, ``statespace.model.goals`` state them, in units
of the model's scale where they are lengths), a model scale from 1e-100 to 1e100, the model's prior
and drift over their ranges, and a small table of games whose scores run over the observation's
accepted inputs (counts 0 to ``GOALS_MAX``, margins up to ``MARGIN_SCALES`` scales). Then the EKF's
run, the RTS smoother and the Laplace smoother give finite forecasts that sum to 1, and PyMC's log
density of the games (evaluated in PyTensor's Python mode: nothing is sampled or compiled to C) is
finite at the prior mean and at random points of the prior (up to five sds out). Every loop in the observation numerics is bounded
(``statespace.model.counts``, ``statespace.model.goals``), so each example finishes; a setting or an input
outside its range is refused at construction or at loading (``tests/test_observation_ranges.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import statespace as ss
from filters import EKF
from smoothers import LaplaceSmoother, PyMCSmoother, RTSSmoother
from smoothers._pymc_model import build_model
from smoothers.base import timeline
from statespace import Goals, Margin, Outcome, SkillModel
from statespace.model import goals as G
from statespace.model import margin as M
from statespace.model import outcome as O
from statespace.model import ranges as R

PROPERTY = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def log_uniform(lo: float, hi: float):
    """Positive numbers from ``lo`` to ``hi``, log-uniform, the ends themselves often."""
    lo_e, hi_e = math.log10(lo), math.log10(hi)
    return st.one_of(st.sampled_from([lo, hi]), st.floats(lo_e, hi_e).map(lambda e: min(max(10.0 ** e, lo), hi)))


def nonneg(hi: float, lo: float = 1e-300):
    return st.one_of(st.just(0.0), log_uniform(lo, hi))


@st.composite
def outcomes(draw, alpha):
    kind = draw(st.sampled_from(["none", "half", "threshold", "davidson"]))
    parameter = {"threshold": lambda: draw(nonneg(R.SD_SCALES)) * alpha, "davidson": lambda: draw(nonneg(O.NU_MAX))}
    model = (kind, parameter[kind]()) if kind in parameter else kind
    return Outcome(draw(st.sampled_from(["logistic", "probit"])), model)


@st.composite
def margins(draw, alpha):
    sd = draw(log_uniform(M.SD_MIN_SCALES, R.SD_SCALES)) * alpha
    return Margin(min(max(sd, M.SD_MIN_SCALES * alpha), R.SD_SCALES * alpha), draw(nonneg(R.SD_SCALES)) * alpha)


@st.composite
def goals(draw, alpha):
    base = draw(st.one_of(st.sampled_from([G.BASE_MIN, G.BASE_MAX, math.log(1.35)]),
                          st.floats(G.BASE_MIN, G.BASE_MAX)))
    # each law of the counts over its whole range: negative binomial, Dixon-Coles, bivariate
    # Poisson; inflated draws on any law, a tilt of the draws' odds on the first and third
    law = draw(st.sampled_from(["nb", "dc", "bivariate"]))
    kw = {"nb": lambda: {"dispersion": draw(nonneg(G.DISPERSION_MAX))},
          "dc": lambda: {"rho": draw(st.floats(-G.RHO_MAX, G.RHO_MAX))},
          "bivariate": lambda: {"covariance": draw(nonneg(G.COVARIANCE_MAX))}}[law]()
    draws = draw(st.sampled_from(["plain", "inflated", "tilted"] if law != "dc" else ["plain", "inflated"]))
    if draws == "inflated":
        kw["inflation"] = draw(st.floats(0.0, G.INFLATION_MAX))
    elif draws == "tilted":
        kw["tilt"] = draw(st.floats(-G.TILT_MAX, G.TILT_MAX))
    return Goals(base, **kw)


@st.composite
def models(draw, kind):
    """A model of scale from 1e-100 to 1e100 observing ``kind``; prior sd and drift's sd up to the
    ranges' top, ``SD_SCALES`` scales."""
    alpha = draw(log_uniform(R.SCALE_MIN, R.SCALE_MAX))
    obs = draw({"outcome": outcomes, "margin": margins, "goals": goals}[kind](alpha))
    top = (R.SD_SCALES * alpha) ** 2
    prior_var = draw(log_uniform(1e-8, 1.0)) * top
    drift = draw(nonneg(1.0, 1e-12)) * top
    home = draw(st.sampled_from([0.0, 0.3, -2.0])) * alpha
    return SkillModel(scale=alpha, prior_var=min(prior_var, top), drift=min(drift, top), home=home, observation=obs)


@st.composite
def tables(draw, model):
    """2-5 competitors, 1-20 games a day or two apart, some at home, with scores over the
    observation's whole accepted input range."""
    obs, alpha = model.observation, model.scale
    n_players = draw(st.integers(2, 5))
    n = draw(st.integers(1, 20))
    a = draw(st.lists(st.integers(0, n_players - 1), min_size=n, max_size=n))
    shift = draw(st.lists(st.integers(1, n_players - 1), min_size=n, max_size=n))
    b = [(x + s) % n_players for x, s in zip(a, shift)]
    t = np.cumsum(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=n, max_size=n)))
    names = np.array([f"P{i}" for i in range(n_players)], dtype=object)
    neutral = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    if isinstance(obs, Outcome):
        draws = obs.draw_code == 1 or obs.draw.theta / alpha > 0.0  # else a draw is refused (no likelihood)
        results = [1.0, 0.5, 0.0] if draws else [1.0, 0.0]
        score = draw(st.lists(st.sampled_from(results), min_size=n, max_size=n))
        return ss.Games.from_arrays(t, names[a], names[b], score, neutral=neutral)
    if isinstance(obs, Goals):
        count = st.one_of(st.integers(0, 6), st.integers(0, int(G.GOALS_MAX)), st.just(int(G.GOALS_MAX)))
        sa = draw(st.lists(count, min_size=n, max_size=n))
        sb = draw(st.lists(count, min_size=n, max_size=n))
    else:
        top = M.MARGIN_SCALES * alpha
        margin = st.one_of(st.just(0.0), st.floats(-3.0, 3.0).map(lambda y: y * alpha),
                           st.tuples(st.sampled_from([-1.0, 1.0]), log_uniform(1e-6, 1.0)).map(lambda p: p[0] * p[1] * top))
        y = np.array(draw(st.lists(margin, min_size=n, max_size=n)))
        sa, sb = np.maximum(y, 0.0), np.maximum(-y, 0.0)
    return ss.Games.from_arrays(t, names[a], names[b], neutral=neutral, score_a=np.asarray(sa, float),
                                score_b=np.asarray(sb, float))


def check_proba(p):
    p = np.asarray(p)
    assert np.all(np.isfinite(p)) and np.all(p >= 0) and np.all(p <= 1), p
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, atol=1e-9)


def pymc_log_density(model: SkillModel, games, z_points):
    """PyMC's log density of the games (the model's potential) at each ``z`` of ``z_points``, in
    PyTensor's Python mode: the observation's PyTensor graph, and for an Outcome also the compiled
    Op that PyMC's NUTS uses (over the same compiled kernels as the filters)."""
    outcome = isinstance(model.observation, Outcome)
    smoother = PyMCSmoother(model, drift=model.drift, prior_var=model.prior_var, home=model.home,
                            draw_param=model.draw.theta if outcome else None)
    tl = timeline(games, smoother.times(games))
    values = []
    for compiled in (False, True) if outcome else (False,):
        pmodel, free = build_model(smoother, games, tl, compiled=compiled)
        assert free == []
        fn = pmodel.compile_fn(pmodel.replace_rvs_by_values(pmodel.potentials)[0], mode="FAST_COMPILE")
        values += [float(fn({"z": z(tl)})) for z in z_points]
    return values


def ahead(games):
    """Every pair of the games' competitors a day after the last game, at home and not."""
    names = games.players.tolist()
    pairs = [(x, y) for x in names for y in names if x != y]
    t = float(np.max(games.time)) + 1.0
    return ss.Games.from_arrays([t] * len(pairs), [p[0] for p in pairs], [p[1] for p in pairs], [1.0] * len(pairs),
                                neutral=[i % 2 == 0 for i in range(len(pairs))])


def linearised(fit, model):
    """``fit()`` of a method that takes one Newton step per game (the EKF; the RTS smoother's forward
    pass), or None where it ends in ``ResultRangeError``: allowed only for negative-binomial goals,
    whose log-likelihood is linear far from the data (slope ``-1 / dispersion``, curvature going to
    0), so that one step from there moves a rating by up to its prior variance times the gradient,
    beyond 1e9 scales under the widest priors. Every other observation must give ratings."""
    try:
        return fit()
    except R.ResultRangeError as exc:
        assert isinstance(model.observation, Goals) and model.observation.dispersion > 0, exc
        assert "beyond" in str(exc)
        return None


def check_every_method(model, games):
    assert model.observation.check_games(games, scale=model.scale) is games  # in range: returned as they are
    future = ahead(games)
    run = linearised(lambda: EKF(model).run(games), model)
    if run is not None:
        check_proba(run.proba)
        check_proba(run.predict_proba(future))
    rts = linearised(lambda: RTSSmoother(model).fit(games), model)
    if rts is not None:
        check_proba(rts.predict_proba(future))
    try:
        check_proba(LaplaceSmoother(model).fit(games).predict_proba(future))
    except ss.GamesError as exc:
        # the Laplace smoother's own refusal, before any Newton step: a competitor's games weigh more
        # than 1e13 times its prior (many games at a margin sd near its floor under the widest prior)
        assert "times its prior" in str(exc), exc
    if getattr(model.observation, "tilt", 0.0) != 0.0:  # no PyTensor graph of the tilt: refused, naming it
        with pytest.raises(ValueError, match="tilt"):
            PyMCSmoother(model)
    elif model.prior_var > 0:
        rng = np.random.default_rng(len(games))
        points = [lambda tl: np.zeros(tl.n_nodes), lambda tl: rng.normal(size=tl.n_nodes),
                  lambda tl: 5.0 * rng.normal(size=tl.n_nodes)]
        values = pymc_log_density(model, games, points)
        assert np.all(np.isfinite(values)), values


@PROPERTY
@given(data=st.data(), model=models("outcome"))
def test_outcome_over_its_whole_range(data, model):
    check_every_method(model, data.draw(tables(model)))


@PROPERTY
@given(data=st.data(), model=models("margin"))
def test_margin_over_its_whole_range(data, model):
    check_every_method(model, data.draw(tables(model)))


@PROPERTY
@given(data=st.data(), model=models("goals"))
def test_goals_over_its_whole_range(data, model):
    check_every_method(model, data.draw(tables(model)))
