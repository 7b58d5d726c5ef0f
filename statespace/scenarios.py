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

Use ``scenarios.get(name, seed=...)`` or the functions by name; ``scenarios.NAMES`` lists them.
"""

from __future__ import annotations

from .model import ELO_SCALE, SkillModel, Threshold
from .simulate import Simulation, simulate

__all__ = ["balanced", "draw_heavy", "sparse", "drifting", "get", "NAMES", "DEFAULT"]

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


_ALL = {"balanced": balanced, "draw_heavy": draw_heavy, "sparse": sparse, "drifting": drifting}
NAMES = tuple(_ALL)


def get(name: str, seed: int = 0) -> Simulation:
    """The scenario called ``name`` (one of :data:`NAMES`)."""
    try:
        fn = _ALL[name]
    except KeyError:
        raise ValueError(f"unknown scenario {name!r}; choose one of {', '.join(NAMES)}") from None
    return fn(seed=seed)
