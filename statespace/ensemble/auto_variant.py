"""The candidate models of :func:`statespace.auto`: :class:`Variant` (observation, home advantage,
reversion, margin weights), the observation models a variant may use, and whether the games'
scores are goal counts (which the Goals observation needs)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from statespace.data.games import Games

# public through statespace.auto, whose comments on them are what the API reference shows
OBSERVATIONS = ("outcome", "margin", "goals")
GOALS_MAX_MEAN = 5.0
#: the laws of the goal counts a Goals candidate may use: negative binomial (its dispersion tuned,
#: Poisson at 0), Poisson with Dixon and Coles' low-score dependence (its rho tuned), negative
#: binomial with inflated draws (dispersion and inflation tuned)
COUNTS = ("negative binomial", "dixon-coles", "inflated")

_HOMES = ("none", "fixed", "drifting")


@dataclass(frozen=True)
class Variant:
    """One candidate model of :func:`auto`.

    ``observation``: ``"outcome"``, ``"margin"`` or ``"goals"``; ``home``: ``"none"``, ``"fixed"``
    or ``"drifting"``; ``reversion``: mean reversion on; ``power``: the Box–Cox power of the margin
    weights (``None``: unweighted games; Outcome only); ``counts``: the law of the goal counts
    (Goals only, one of :data:`COUNTS`; default ``"negative binomial"``); ``draws``: ``"fixed"``, or
    ``"drifting"``: the draw tendency a latent random walk (``SkillModel.draw_drift``; Goals with
    negative binomial counts only); ``skills``: 1, or 2: attack and defence, a latent openness beside
    each skill (``SkillModel.openness_var``, ``openness_drift``; Goals with negative binomial counts
    and fixed draws only; tuned from the one-skill candidate's optimum twice, with the openness at its
    start and at the bottom of its box, the better kept; not among the default candidates: on the
    football sets it does not reliably win held out, ``benchmarks/attack_defence.py``); ``group``: a
    column of the games (a league, a competition) whose groups each have their own part of the home
    advantage (where the variant has one) and of the draw tendency (Goals with negative binomial
    counts and one skill): a fixed unknown offset per group around the variant's common one
    (``filters.EKF(group=..., group_home_var=..., group_draw_var=...)``, :meth:`group_parts`)."""

    observation: str = "outcome"
    home: str = "fixed"
    reversion: bool = False
    power: float | None = None
    counts: str | None = None
    draws: str = "fixed"
    skills: int = 1
    group: str | None = None

    def __post_init__(self) -> None:
        if self.observation not in OBSERVATIONS:
            raise ValueError(f"Variant: observation must be one of {', '.join(OBSERVATIONS)}, got {self.observation!r}")
        if self.home not in _HOMES:
            raise ValueError(f"Variant: home must be one of {', '.join(_HOMES)}, got {self.home!r}")
        if not isinstance(self.reversion, (bool, np.bool_)):
            raise ValueError(f"Variant: reversion must be True or False, got {self.reversion!r}")
        object.__setattr__(self, "reversion", bool(self.reversion))
        if self.power is not None:
            if self.observation != "outcome":
                raise ValueError(f"Variant: margin weights (power={self.power!r}) apply to the outcome observation; "
                                 f"the {self.observation} observation reads the margin itself")
            if not (isinstance(self.power, (int, float, np.integer, np.floating)) and math.isfinite(self.power)):
                raise ValueError(f"Variant: power must be a finite number or None, got {self.power!r}")
            object.__setattr__(self, "power", float(self.power))
        if self.observation == "goals":
            if self.counts is None:
                object.__setattr__(self, "counts", COUNTS[0])
            elif self.counts not in COUNTS:
                raise ValueError(f"Variant: counts must be one of {', '.join(COUNTS)}, got {self.counts!r}")
        elif self.counts is not None:
            raise ValueError(f"Variant: counts={self.counts!r} is the law of the goals observation's counts; "
                             f"this variant observes the {self.observation}")
        if self.draws not in ("fixed", "drifting"):
            raise ValueError(f"Variant: draws must be 'fixed' or 'drifting', got {self.draws!r}")
        if self.draws == "drifting" and self.counts != COUNTS[0]:
            raise ValueError(f"Variant: drifting draws (a latent draw tendency) are a candidate of the goals "
                             f"observation with {COUNTS[0]} counts, got observation={self.observation!r}, "
                             f"counts={self.counts!r}")
        if self.skills not in (1, 2) or isinstance(self.skills, bool):
            raise ValueError(f"Variant: skills must be 1 or 2 (attack and defence), got {self.skills!r}")
        if self.skills == 2 and (self.counts != COUNTS[0] or self.draws != "fixed"):
            raise ValueError(f"Variant: two skills (attack and defence) are a candidate of the goals observation "
                             f"with {COUNTS[0]} counts and fixed draws, got observation={self.observation!r}, "
                             f"counts={self.counts!r}, draws={self.draws!r}")
        if self.group is not None:
            if not isinstance(self.group, str) or not self.group:
                raise ValueError(f"Variant: group must be the name of a column of the games, got {self.group!r}")
            if not self.group_parts():
                raise ValueError(f"Variant: group={self.group!r} gives each group its own part of the home advantage "
                                 f"or of the draw tendency; this variant has neither (home={self.home!r}, "
                                 f"observation={self.observation!r})")

    def group_parts(self) -> tuple[str, ...]:
        """What a group gets its own part of: ``"home"`` (a home advantage), ``"draw"`` (Goals with
        negative binomial counts and one skill: a draw tilt), whether or not the variant has a
        grouping column."""
        return ((("home",) if self.home != "none" else ())
                + (("draw",) if self.counts == COUNTS[0] and self.skills == 1 else ()))

    @property
    def label(self) -> str:
        """Short name: ``"outcome, drifting home, reversion, margin weights p=0.5"``, ``"goals
        (dixon-coles), fixed home"``."""
        parts = [self.observation if self.counts in (None, COUNTS[0]) else f"{self.observation} ({self.counts})"]
        if self.home != "none":
            parts.append(f"{self.home} home")
        if self.reversion:
            parts.append("reversion")
        if self.power is not None:
            parts.append(f"margin weights p={self.power:g}")
        if self.draws == "drifting":
            parts.append("drifting draws")
        if self.skills == 2:
            parts.append("attack/defence")
        if self.group is not None:
            parts.append(f"by {self.group}")
        return ", ".join(parts)


def goal_counts(games: Games) -> bool:
    """Whether the scores are goal counts: whole numbers >= 0, at most :data:`GOALS_MAX_MEAN` a side
    on average (points in the tens are far from Poisson, and the Goals forecast's quadrature over
    the skill uncertainty costs in proportion to the rates)."""
    sides = np.concatenate([games.score_a, games.score_b])
    return bool(np.all(sides >= 0) and np.all(sides == np.round(sides)) and 0 < sides.mean() <= GOALS_MAX_MEAN)
