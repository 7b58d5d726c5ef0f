"""Built-in simulated scenarios, each seeded and small enough to run in seconds.

Skills are in Elo units (mean 1500, logistic link at scale 400 / ln 10), so every method's
defaults are sensible on them. The first three mirror the setting of the often-cited
comparison of Elo, Glicko and TrueSkill on simulated leagues (30 competitors, 600 games;
static skills), which this project answers with held-out log loss rather than one accuracy
figure:

- ``balanced``: 30 competitors, 600 games, skill sd 200, about 10% draws;
- ``draw_heavy``: same size, skill sd 100 and a wide draw margin, about 45% of games drawn;
- ``sparse``: 120 competitors sharing 600 games, so most pairs never meet and each plays ~10;
- ``drifting``: 40 competitors, 4,000 games over 1,000 days, skills random-walking
  (sd about 150 points over the span): where filters that track drift should win.

One scenario takes parameters, for studies that vary one property of a league at a time:

- ``league``: ``n_competitors`` competitors meeting in random pairs, ``games_per_period`` games
  each per rating period of ``period_days`` days over ``n_periods`` periods, skills drifting by
  ``drift_sd`` Elo points (standard deviation) per period, optionally pulled back to the mean
  (``reversion`` per period), a home advantage of ``home`` points in a share ``home_share`` of
  the games and a draw margin set so that draws come at the rate ``draw_rate`` (see
  :func:`league` and :func:`league_draw_margin`).

Leagues of matches of many sides (teams, free-for-all, partial play; :mod:`statespace.model.match_scenarios`),
each a :class:`~statespace.model.match_scenarios.MatchSimulation` with every member's true skill:

- ``ffa_league``: 1,000 free-for-all matches of 50 entrants among 500 competitors;
- ``team_league``: team matches of several sides (see :func:`team_league`);
- :func:`simulate_matches`: any size, from a :class:`~statespace.model.skillmodel.SkillModel`.

Use ``scenarios.get(name, seed=..., **params)`` or the functions by name. ``scenarios.NAMES``
lists the fixed scenarios (which take no parameters), ``scenarios.PARAMETERISED`` those that
take some, with their defaults, and ``scenarios.ALL`` both; :func:`check_params` says whether
a scenario accepts some parameters without building it.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from statespace.model.skillmodel import ELO_SCALE, SkillModel, Threshold
from statespace.model.simulate import Simulation, simulate
from statespace.model.match_scenarios import MatchSimulation, ffa_league, simulate_matches, team_league

__all__ = ["ffa_league", "team_league", "simulate_matches", "MatchSimulation", "balanced", "draw_heavy", "sparse", "drifting", "league", "league_draw_margin", "get", "check_params",
           "NAMES", "PARAMETERISED", "ALL", "DEFAULT"]

DEFAULT = "balanced"


def balanced(seed: int = 0) -> Simulation:
    """30 competitors, 600 random pairings, static skills N(1500, 200^2), ~10% draws."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 200.0**2, 0.0, Threshold(60.0))
    return simulate(model, 30, 600, seed=seed, name="balanced", description=balanced.__doc__)


def draw_heavy(seed: int = 0) -> Simulation:
    """30 competitors, 600 games, skills N(1500, 100^2) and a wide draw margin: ~45% draws."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 100.0**2, 0.0, Threshold(190.0))
    return simulate(model, 30, 600, seed=seed, name="draw_heavy", description=draw_heavy.__doc__)


def sparse(seed: int = 0) -> Simulation:
    """120 competitors sharing 600 games (about 10 each): most pairs never meet."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 200.0**2, 0.0, Threshold(60.0))
    return simulate(model, 120, 600, seed=seed, name="sparse", description=sparse.__doc__)


def drifting(seed: int = 0) -> Simulation:
    """40 competitors, 4,000 games over 1,000 days; skills random-walk with variance 22.5 per
    day (sd 150 over the span) from N(1500, 150^2); ~10% draws."""
    model = SkillModel("logistic", ELO_SCALE, 1500.0, 150.0**2, 22.5, Threshold(60.0))
    return simulate(model, 40, 4000, days=1000, seed=seed, name="drifting", description=drifting.__doc__)


#: the defaults of :func:`league`'s parameters, in the order its signature gives them
LEAGUE_DEFAULTS = {"n_competitors": 20, "games_per_period": 2.0, "n_periods": 100, "period_days": 7.0,
                   "drift_sd": 20.0, "draw_rate": 0.1, "home": 0.0, "home_share": 1.0, "reversion": 0.0,
                   "spread": 200.0}

#: nodes and weights of Gauss-Hermite quadrature (probabilists' weight exp(-x^2 / 2)), normalised
#: so that sum(w f(x)) approximates E[f(Z)] for Z ~ N(0, 1); 120 nodes make the draw share of a
#: smooth logistic margin exact to about 1e-12
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(120)
_GH_W = _GH_W / _GH_W.sum()


def _draw_share(margin: float, spread: float, home: float, home_share: float) -> float:
    """The expected share of draws of the league's observation model with threshold ``margin``
    when both skills are drawn from ``N(mean, spread^2)`` (see :func:`league_draw_margin`)."""
    model = SkillModel("logistic", ELO_SCALE, 0.0, 1.0, 0.0, Threshold(margin))
    d = math.sqrt(2.0) * spread * _GH_X
    neutral = float(_GH_W @ model.proba(d)[:, 1])
    at_home = float(_GH_W @ model.proba(d + home)[:, 1]) if home_share > 0 else 0.0
    return (1.0 - home_share) * neutral + home_share * at_home


def league_draw_margin(draw_rate: float, spread: float = 200.0, home: float = 0.0, home_share: float = 1.0) -> float:
    """The threshold margin (Elo points) that gives a share ``draw_rate`` of draws at the prior's
    skill spread.

    Under the threshold model (ordered logit at scale ``s = 400 / ln 10``, :class:`Threshold`) a
    game with skill difference ``d`` is drawn with probability
    ``P(draw | d) = 1 - F((d - m) / s) - F((-d - m) / s)``. With both skills independent
    ``N(mean, spread^2)``, ``d = s_a - s_b + home * H`` where ``s_a - s_b ~ N(0, 2 spread^2)`` and
    ``H`` is 1 in a share ``home_share`` of the games (0 in the rest); the expected draw share
    ``E[P(draw | d)]`` (Gauss-Hermite quadrature) rises from 0 at ``m = 0`` towards 1, and the
    margin returned solves ``E[P(draw | d)] = draw_rate`` (Brent's method, to 1e-9 points).

    The share holds for the skills at the league's start; drift widens the spread as the league
    goes on (unless mean reversion holds it), which makes draws somewhat rarer later on.
    ``draw_rate`` must be in [0, 1); 0 gives margin 0 (no draws).
    """
    from scipy.optimize import brentq

    for label, value in (("draw_rate", draw_rate), ("spread", spread), ("home", home), ("home_share", home_share)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not math.isfinite(value):
            raise ValueError(f"league_draw_margin: {label} must be a finite number, got {value!r}")
    if not 0 <= draw_rate < 1:
        raise ValueError(f"league_draw_margin: draw_rate must be in [0, 1), got {draw_rate!r}")
    if spread < 0:
        raise ValueError(f"league_draw_margin: spread must be >= 0, got {spread!r}")
    if not 0 <= home_share <= 1:
        raise ValueError(f"league_draw_margin: home_share must be in [0, 1], got {home_share!r}")
    if draw_rate == 0:
        return 0.0
    hi = 100.0
    while _draw_share(hi, spread, home, home_share) < draw_rate:  # the share tends to 1: this ends
        hi *= 2.0
    return float(brentq(lambda m: _draw_share(m, spread, home, home_share) - draw_rate, 0.0, hi, xtol=1e-9))


def league(seed: int = 0, *, n_competitors: int = 20, games_per_period: float = 2.0, n_periods: int = 100,
           period_days: float = 7.0, drift_sd: float = 20.0, draw_rate: float = 0.1, home: float = 0.0,
           home_share: float = 1.0, reversion: float = 0.0, spread: float = 200.0) -> Simulation:
    """A league whose every property is a parameter (defaults: 20 competitors, 2 games each per
    weekly period over 100 periods, i.e. 2,000 games; skills drifting 20 points per period; 10%
    draws; no home advantage; no mean reversion).

    - ``n_competitors`` competitors meet in random pairs (:func:`statespace.simulate`);
      ``n_games = round(n_competitors * games_per_period * n_periods / 2)`` games are spread
      evenly over ``n_periods * period_days`` days, so each competitor plays
      ``games_per_period`` games per period of ``period_days`` days on average;
    - skills start at ``N(1500, spread^2)`` (Elo points) and move by a random walk whose
      **standard deviation over one period is** ``drift_sd`` points (the model's ``drift``, a
      variance per day, is ``drift_sd^2 / period_days``);
    - ``reversion`` (per period, >= 0) makes the walk an Ornstein-Uhlenbeck process pulled towards
      1500: a deviation from the mean shrinks by ``exp(-reversion)`` per period (the model's
      ``reversion`` per day is ``reversion / period_days``) and the spread tends to
      ``drift_sd / sqrt(2 reversion)`` (:meth:`SkillModel.transition`);
    - a share ``home_share`` of the games is played at ``a``'s home, with ``home`` Elo points
      added to ``a``'s skill (the others are neutral);
    - results follow the ordered logit at scale ``400 / ln 10`` with the draw margin of
      :func:`league_draw_margin`, so that ``draw_rate`` of the games are drawn at the starting
      spread.
    """
    n_competitors = _whole("n_competitors", n_competitors, 2)
    n_periods = _whole("n_periods", n_periods, 1)
    for label, value, low in (("games_per_period", games_per_period, 0.0), ("period_days", period_days, 0.0)):
        if _number(label, value) <= low:
            raise ValueError(f"scenario 'league': {label} must be > {low:g}, got {value!r}")
    for label, value in (("drift_sd", drift_sd), ("reversion", reversion), ("spread", spread)):
        if _number(label, value) < 0:
            raise ValueError(f"scenario 'league': {label} must be >= 0, got {value!r}")
    if not 0 <= _number("draw_rate", draw_rate) < 1:
        raise ValueError(f"scenario 'league': draw_rate must be in [0, 1), got {draw_rate!r}")
    if not 0 <= _number("home_share", home_share) <= 1:
        raise ValueError(f"scenario 'league': home_share must be in [0, 1], got {home_share!r}")
    _number("home", home)
    n_games = int(round(n_competitors * games_per_period * n_periods / 2.0))
    if n_games < 1:
        raise ValueError(f"scenario 'league': {n_competitors} competitors playing {games_per_period:g} games per "
                         f"period over {n_periods} periods make no game")
    margin = league_draw_margin(draw_rate, spread, home, home_share)
    model = SkillModel("logistic", ELO_SCALE, 1500.0, float(spread) ** 2, float(drift_sd) ** 2 / period_days,
                       Threshold(margin), float(home), float(reversion) / period_days)
    params = dict(n_competitors=n_competitors, games_per_period=games_per_period, n_periods=n_periods,
                  period_days=period_days, drift_sd=drift_sd, draw_rate=draw_rate, home=home,
                  home_share=home_share, reversion=reversion, spread=spread)
    description = (f"league: {n_competitors} competitors, {games_per_period:g} games each per period of "
                   f"{period_days:g} days over {n_periods} periods ({n_games:,} games); skills "
                   f"N(1500, {spread:g}^2) drifting {drift_sd:g} points (sd) per period"
                   + (f", reverting at {reversion:g} per period" if reversion else "")
                   + f"; home advantage {home:g} points in {home_share:.0%} of games; draw margin "
                   f"{margin:.1f} points for {draw_rate:.0%} draws at the start. Parameters: "
                   + ", ".join(f"{k}={v!r}" for k, v in params.items()))
    return simulate(model, n_competitors, n_games, days=n_periods * period_days, home_fraction=home_share,
                    seed=seed, name="league", description=description)


def _number(label: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value):
        raise ValueError(f"scenario 'league': {label} must be a finite number, got {value!r}")
    return float(value)


def _whole(label: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"scenario 'league': {label} must be a whole number >= {low}, got {value!r}")
    return int(value)


_ALL = {"balanced": balanced, "draw_heavy": draw_heavy, "sparse": sparse, "drifting": drifting}
#: the fixed scenarios (no parameters)
NAMES = tuple(_ALL)
#: the scenarios that take parameters: ``{name: {parameter: default}}``
PARAMETERISED: Mapping[str, Mapping[str, Any]] = {"league": LEAGUE_DEFAULTS}
_PARAMETERISED_FN = {"league": league}
#: every scenario's name
ALL = NAMES + tuple(PARAMETERISED)


def check_params(name: str, params: Mapping[str, Any] | None = None) -> None:
    """``ValueError`` unless ``name`` is a scenario (one of :data:`ALL`) and it takes every
    parameter named in ``params`` (a fixed scenario takes none); the message names the
    parameters it does take. The values are checked when the scenario is built."""
    if name not in ALL:
        raise ValueError(f"unknown scenario {name!r}; choose one of {', '.join(ALL)}")
    bad = [p for p in (params or {}) if p not in PARAMETERISED.get(name, {})]
    if bad:
        takes = (f"it takes {', '.join(PARAMETERISED[name])}" if name in PARAMETERISED
                 else f"it takes none; the scenarios with parameters are {', '.join(PARAMETERISED)}")
        raise ValueError(f"scenario {name!r} has no parameter{'s' if len(bad) > 1 else ''} "
                         f"{', '.join(map(repr, bad))} ({takes})")


def get(name: str, seed: int = 0, **params) -> Simulation:
    """The scenario called ``name`` (one of :data:`ALL`) simulated with ``seed``; ``params`` are
    passed to a scenario that takes parameters (:data:`PARAMETERISED`) and are an error for a
    fixed one (:func:`check_params`)."""
    check_params(name, params)
    if name in _PARAMETERISED_FN:
        return _PARAMETERISED_FN[name](seed=seed, **params)
    return _ALL[name](seed=seed)
