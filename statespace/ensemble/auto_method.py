"""The method object of :func:`statespace.auto`: :class:`Auto`, its options checked, and the face
a method shows :func:`statespace.compare`: :meth:`Auto.fit` (choose, then fit), :meth:`Auto.run`
(with a ``split``) and :meth:`Auto.tune` (choose on the training part)."""

from __future__ import annotations

import math
from typing import Any, ClassVar, Sequence

import numpy as np

from statespace._runtime.pool import check_jobs
from statespace.data.games import Games
from statespace.ensemble.auto_blend import blend_the_best
from statespace.ensemble.auto_candidate import Candidate
from statespace.ensemble.auto_fit import AutoFit
from statespace.ensemble.auto_search import BURN_IN, AutoResult, choose, first_stage
from statespace.ensemble.auto_variant import OBSERVATIONS, Variant


def check_observations(observations):
    """``observations=`` of :class:`Auto` as it keeps it: ``None`` (its default), ``"all"``, or a
    tuple of names of :data:`OBSERVATIONS` that includes ``"outcome"``; ``ValueError`` otherwise
    (the command line's ``--observations`` is checked here too)."""
    if observations is None or observations == "all":
        return observations
    observations = tuple(observations) if not isinstance(observations, str) else (observations,)
    bad = [o for o in observations if o not in OBSERVATIONS]
    if bad or not observations:
        raise ValueError(f"auto: observations must name some of {', '.join(OBSERVATIONS)}, got "
                         f"{list(observations)!r}")
    if "outcome" not in observations:
        raise ValueError("auto: observations must include 'outcome' (the structure stage compares home "
                         "advantage and reversion on it); give candidates=[Variant(...)] for another list")
    return observations


class Auto:
    """The method object of :func:`auto` (see :mod:`statespace.ensemble.auto`):
    ``Auto(**options).fit(games)`` chooses on ``games`` (or on their first ``split``) and returns
    an :class:`AutoFit`.

    Parameters
    ----------
    split:
        ``None`` (default): choose on all the games given to :meth:`fit`. A fraction in (0, 1):
        choose on the first ``split`` of them (in time order, :meth:`Games.split`), fit on all, so
        that the one-step-ahead forecasts of the rest are honest; :meth:`run` (what
        ``compare(..., mode="online")`` calls with every game) needs it.
    burn_in:
        Share of the choice games run through but not scored, in tuning and in the choice
        (default 0.3), so that settings are not chosen for how fast they forget the start.
    objective:
        ``None`` (default): ``"log_loss_3"`` when the choice games have draws, ``"log_loss"``
        otherwise; or one of :data:`filters.tuning.OBJECTIVES` for every candidate.
    observations:
        Observation models to try, among :data:`OBSERVATIONS` (default
        :data:`DEFAULT_OBSERVATIONS`: all of them, where the games allow); one the games do
        not allow is an error. ``"all"``: every one the games allow (Margin where they have
        scores, Goals where the scores are goal counts), without the error.
    powers:
        Box–Cox powers of the margin weights to try (default :data:`DEFAULT_POWERS` where the
        games have scores; ``()`` for none).
    drifting_home, reversion:
        Whether the structure stage tries a drifting home advantage and mean reversion (default
        both).
    candidates:
        An explicit list of :class:`Variant` to compare instead of the staged search.
    maxiter:
        L-BFGS-B iterations of each tuning (default 200).
    progress:
        ``True``: one line per candidate on stderr; ``False``: none; ``None`` (default): once the
        work has taken more than :data:`PROGRESS_AFTER` seconds.
    group:
        A column of the games (a league, a tier, a competition): the search then also tries its
        pick with a part of its home advantage and draw tendency per group of that column
        (``Variant(group=...)``, ``filters.EKF(group=...)``), started from the pick's tuned numbers,
        in a last stage ``"groups"``; chosen, as any candidate, only when its training score is lower.
        Default ``None``: no such candidate.
    blend:
        ``True``: also pool the :data:`BLEND_TOP` best candidates (:class:`statespace.Blend`) and
        return the blend when its training score is lower by more than :data:`TIE` (see
        :mod:`statespace.ensemble.auto`); default ``False``.
    """

    name = "auto"
    online: ClassVar[bool] = True

    def __init__(self, *, split: float | None = None, burn_in: float = BURN_IN, objective: str | None = None,
                 observations: Sequence[str] | str | None = None, powers: Sequence[float] | None = None,
                 drifting_home: bool = True, reversion: bool = True, candidates: Sequence[Variant] | None = None,
                 maxiter: int = 200, progress: bool | None = None, blend: bool = False, n_jobs: int | None = None,
                 group: str | None = None):
        if split is not None and not (isinstance(split, (int, float, np.integer, np.floating))
                                      and not isinstance(split, bool) and 0 < split < 1):
            raise ValueError(f"auto: split must be None or a fraction strictly between 0 and 1, got {split!r}")
        _check_burn_in(burn_in)
        if objective is not None:
            from filters.tuning import OBJECTIVES

            if objective not in OBJECTIVES:
                raise ValueError(f"auto: objective must be None or one of {', '.join(OBJECTIVES)}, got {objective!r}")
        observations = check_observations(observations)
        if powers is not None:
            powers = tuple(powers)
            for p in powers:
                if not (isinstance(p, (int, float, np.integer, np.floating)) and not isinstance(p, bool)
                        and math.isfinite(p)):
                    raise ValueError(f"auto: powers must be finite numbers, got {p!r}")
            powers = tuple(float(p) for p in dict.fromkeys(powers))
        if candidates is not None:
            candidates = tuple(candidates)
            if not candidates:
                raise ValueError("auto: candidates= is empty: give at least one Variant (or None for the default search)")
            bad = [c for c in candidates if not isinstance(c, Variant)]
            if bad:
                raise TypeError(f"auto: candidates must be statespace.ensemble.auto.Variant objects, got {bad[0]!r}")
            if len(set(candidates)) != len(candidates):
                raise ValueError("auto: the same Variant is given twice in candidates=")
        if not (isinstance(maxiter, (int, np.integer)) and maxiter >= 1):
            raise ValueError(f"auto: maxiter must be a whole number >= 1, got {maxiter!r}")
        if progress not in (None, True, False):
            raise ValueError(f"auto: progress must be True, False or None, got {progress!r}")
        try:
            check_jobs(None, n_jobs)
        except ValueError as exc:
            raise ValueError(f"auto: {exc}") from None
        if group is not None and (not isinstance(group, str) or not group):
            raise ValueError(f"auto: group must be the name of a column of the games, got {group!r}")
        if group is not None and candidates is not None:
            raise ValueError(f"auto: group={group!r} adds a stage to the default search; among candidates= give "
                             f"Variant(..., group={group!r}) instead")
        self.group = group
        self.n_jobs = n_jobs
        self.split = None if split is None else float(split)
        self.burn_in = float(burn_in)
        self.objective = objective
        self.observations = observations
        self.powers = powers
        self.drifting_home = bool(drifting_home)
        self.reversion = bool(reversion)
        self.candidates = candidates
        self.maxiter = int(maxiter)
        self.progress = progress
        if blend not in (True, False):
            raise ValueError(f"auto: blend must be True or False, got {blend!r}")
        self.blend = bool(blend)
        #: the :class:`AutoResult` of the latest choice this object made (``None`` before any): what
        #: ``compare`` chose for it, which ``compare``'s table does not keep
        self.last: AutoResult | None = None

    def __repr__(self) -> str:
        shown = []
        for k in ("split", "burn_in", "objective", "observations", "powers", "candidates", "progress", "n_jobs",
                  "group"):
            v = getattr(self, k)
            default = {"burn_in": BURN_IN}.get(k)
            if v is not None and v != default:
                shown.append(f"{k}={v!r}")
        for k in ("drifting_home", "reversion"):
            if not getattr(self, k):
                shown.append(f"{k}=False")
        if self.blend:
            shown.append("blend=True")
        return f"Auto({', '.join(shown)})"

    @property
    def model(self):
        raise AttributeError("Auto has no model until it has chosen one: statespace.auto(games).model")

    # ------------------------------------------------------------------ the method's face
    def fit(self, games: Games) -> AutoFit:
        """Choose on ``games`` (or their first ``split``), then run the chosen filter through all of
        ``games``."""
        _check_games(games)
        choice_games = games if self.split is None else _first_part(games, self.split)
        method = choose(self, choice_games)
        if self.blend:
            method = blend_the_best(self, method, choice_games)
        return AutoFit(method, method.run(games), games)

    def run(self, games: Games) -> AutoFit:
        """:meth:`fit` with a ``split``: the choice sees the first ``split`` of ``games`` only. Without
        one, ``ValueError``: a run goes through every game, and the choice would see them all."""
        if self.split is None:
            raise ValueError("Auto() has no split, so running it through these games would choose on all of them, "
                             "held-out games included: in compare(..., mode='online' or 'walk_forward') pass tune=True "
                             "(Auto is then chosen on the training part), or give Auto(split=...) the same split as "
                             "compare")
        return self.fit(games)

    def tunable(self, games: Games) -> dict[str, tuple[float, float]]:
        """What ``compare(..., tune=True)`` asks: the choice among the candidates is the one
        setting (``{"candidate": (0, n - 1)}``)."""
        return {"candidate": (0.0, float(max(len(first_stage(self, games)[0]), 1) - 1))}

    def tune(self, games: Games, params=None, bounds=None, *, objective: str | None = None, maxiter: int | None = None,
             burn_in: float | None = None, standard_errors: bool = False) -> Candidate:
        """Choose on ``games`` (all of them: they are the training part) and return the chosen,
        tuned filter (a :class:`Candidate`, whose ``tuning`` is an :class:`AutoResult`).
        ``objective``, ``maxiter`` and ``burn_in`` override this object's; ``params`` and
        ``bounds`` do not apply (each candidate's tuning sets its own); ``standard_errors`` is
        accepted and ignored (the choice needs none)."""
        if params is not None or bounds is not None:
            raise ValueError("auto: params= and bounds= do not apply (every candidate is tuned on its own settings); "
                             "give auto's options to Auto(...)")
        changes = {k: v for k, v in (("objective", objective), ("maxiter", maxiter), ("burn_in", burn_in))
                   if v is not None}
        me = self if not changes else Auto(**{**self._options(), **changes})
        _check_games(games)
        method = choose(me, games)
        if me.blend:
            method = blend_the_best(me, method, games)
        self.last = method.tuning
        return method

    def _options(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("split", "burn_in", "objective", "observations", "powers",
                                              "drifting_home", "reversion", "candidates", "maxiter", "progress", "blend",
                                              "n_jobs", "group")}


def _check_burn_in(burn_in) -> None:
    if not (isinstance(burn_in, (int, float, np.integer, np.floating)) and not isinstance(burn_in, bool)
            and 0 <= burn_in < 1):
        raise ValueError(f"auto: burn_in must be a fraction in [0, 1), got {burn_in!r}")


def _check_games(games) -> None:
    if not isinstance(games, Games):
        raise TypeError(f"auto: expected statespace.Games, got {type(games).__name__}")


def _first_part(games: Games, split: float) -> Games:
    try:
        return games.split(split)[0]
    except ValueError as exc:
        raise ValueError(f"auto: split={split}: {exc}") from None
