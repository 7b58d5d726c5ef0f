"""What :func:`statespace.auto` returns: :class:`AutoFit`, the chosen method fitted on the games
(its run, forecasts, ratings and trajectories), the table of every candidate, and the reason for
the choice as text (:meth:`AutoFit.summary`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.games import Games
from statespace.ensemble.auto_candidate import Candidate, fmt
from statespace.ensemble.auto_search import TIE, AutoResult
from statespace.ensemble.auto_variant import Variant
from statespace.methods.display import FittedDisplay
from statespace.methods.seen import already_checked, warn_seen
from statespace.model.skillmodel import SkillModel

#: what a warning about forecasts of the fitted games offers instead
_HONEST = ("The honest forecasts of the games auto was given are fit.proba, each made before its game (with "
           "split=, those of the games after the split are honest held-out forecasts); to score a method on "
           "held-out games use statespace.compare(..., mode='online'), or fit auto on the games before those to "
           "forecast.")


class AutoFit(FittedDisplay):
    """What :func:`auto` returns: the chosen filter fitted on the games, and why it was chosen.

    - ``method``: the chosen, tuned :class:`Candidate` (``method.run(games)`` runs it online
      through any games; ``method.model`` its :class:`~statespace.SkillModel`), or with
      ``blend=True`` possibly a :class:`statespace.Blend` of the best candidates, its weights fixed
      (``variant`` then ``None``, ``settings`` its weights, ``model`` its first member's);
    - ``run``: its run through the games given (a ``FilterRun``); ``proba``: the one-step-ahead
      forecasts of those games (input row order); ``games``;
    - ``table``: every candidate (index: its label), best training score first: ``stage``,
      ``observation``, ``home``, ``reversion``, ``power`` (NaN: unweighted), ``objective`` (the
      name of what was compared), ``train_score`` (its value on the choice games after the
      burn-in), ``delta`` (against the chosen), ``train_log_loss``, ``train_log_loss_3``,
      ``chosen``, ``tune_seconds``, ``converged``, ``at_bound`` (tuned settings on a bound of their
      search box), ``settings`` (the tuned values), ``error`` (why a candidate failed, if one did);
      ``table.attrs``: ``objective``, ``burn_in``, ``n_games`` and ``n_scored`` of the choice,
      ``draws`` (whether the choice games have any) and ``not_tried`` (candidates the games allow
      but the search left out, and why);
    - ``chosen``: the chosen label; ``variant``; ``settings``; ``objective``; ``seconds``;
      ``candidates``: every candidate tuned, ``{label: Candidate}``;
    - the fitted face: ``predict_proba(games)``, ``ratings()``, ``trajectories()``;
      ``summary()`` the choice as text (``print(fit.summary())``);
    - in Jupyter: the one-line summary (the chosen filter with its settings, games, competitors,
      span), what was chosen among how many, and the leaderboard; ``plot(players=...)``: the
      trajectories (:class:`statespace.methods.display.FittedDisplay`).
    """

    def __init__(self, method: Candidate, run, games: Games):
        self.method = method
        self.run = run
        self.games = games
        self.result: AutoResult = method.tuning

    # the choice
    @property
    def table(self) -> pd.DataFrame:
        return self.result.table

    @property
    def chosen(self) -> str:
        return self.result.chosen

    @property
    def variant(self) -> Variant | None:
        """The chosen candidate's :class:`Variant` (``None`` when a blend was chosen)."""
        return getattr(self.method, "variant", None)

    @property
    def candidates(self) -> dict[str, Candidate]:
        """Every candidate, tuned: ``{label: Candidate}``."""
        return self.result.methods

    @property
    def objective(self) -> str:
        return self.result.objective_name

    @property
    def settings(self) -> dict[str, float]:
        """The chosen model's tuned numbers (and the margin power, where weighted)."""
        return self.method.values()

    @property
    def seconds(self) -> float:
        """Seconds the choice took (every candidate's tuning)."""
        return self.result.seconds

    @property
    def model(self) -> SkillModel:
        return self.method.model

    # the fitted face
    @property
    def proba(self) -> np.ndarray:
        return self.run.proba

    @property
    def state(self):
        return self.run.state

    def predict_proba(self, games: Games) -> np.ndarray:
        """Frozen forecasts ``(n, 3)`` of ``games`` from the end of the fitted games: honest forecasts
        of games played after them. Games inside the fitted span (with ``split=``, the held-out part
        too: ``auto`` fits on every game it is given) are forecast from a state that has read their
        results: :class:`statespace.SeenGamesWarning`, naming the honest forecasts, :attr:`proba`
        (see :mod:`statespace.methods.seen`)."""
        if isinstance(games, Games):
            games.check_time_base(self.games.time_base, "auto")
            warn_seen("auto: predict_proba", self.games, games, _HONEST, stacklevel=3)
        with already_checked():
            return self.run.predict_proba(games)

    def ratings(self) -> pd.DataFrame:
        return self.run.ratings()

    def trajectories(self) -> pd.DataFrame:
        return self.run.trajectories()

    def __repr__(self) -> str:
        return (f"AutoFit(chose {self.chosen!r} among {len(self.table)} candidates by training {self.objective} "
                f"{self.result.objective:.5f}; fitted on {len(self.games):,} games)")

    def _notes(self) -> list[str]:
        """Under the leaderboard in Jupyter: what was chosen, and where the reasons are."""
        return [f"statespace.auto chose {self.chosen!r} among {len(self.table)} candidates by training "
                f"{self.objective} {self.result.objective:.5f}; print(fit.summary()) says why"]

    def _why(self) -> str:
        t = self.table
        ok = t[np.isfinite(t["train_score"])]
        others = ok[~ok["chosen"]]
        if self.variant is not None:  # a candidate was chosen: the blend's row is not one of its rivals
            others = others[others["stage"] != "blend"]
        if not len(others):
            return "the only candidate that could be tuned"
        mine = ok.loc[self.chosen]
        other = others.index[0]
        d = float(others["train_score"].iloc[0] - mine["train_score"])
        k, k_other = len(mine["settings"]), len(others["settings"].iloc[0])
        if d > TIE:
            return (f"the lowest training {self.objective}, {mine['train_score']:.5f}, {d:.5f} below the next "
                    f"({other})")
        if k < k_other:
            return (f"level with {other} (training {self.objective} within {TIE:g}: {d:+.6f}) and fewer tuned "
                    f"settings ({k} against {k_other})")
        return f"level with {other} (training {self.objective} within {TIE:g}: {d:+.6f}); the lower of the two"

    def summary(self) -> str:
        """The choice as text: what was chosen, on which games and objective, why, the tuned
        settings, and every candidate's training score."""
        t = self.table
        a = t.attrs
        what = {"log_loss_3": "the three-outcome log loss, -log P(observed result): the games have draws",
                "log_loss": "the expected-score log loss" + ("" if a.get("draws") else
                                                               ": the games have no draws, so it is the likelihood"),
                "brier": "the Brier score of the expected score"}[self.objective]
        picked = f"EKF, {self.chosen}" if self.variant is not None else \
            f"{self.chosen} (statespace.Blend, log-linear pool of {', '.join(self.method.members)})"
        lines = [f"statespace.auto chose: {picked}",
                 f"  compared on {a['n_games']:,} games (the first {a['burn_in']:.0%} a burn-in, {a['n_scored']:,} "
                 f"scored), one-step-ahead {self.objective}: {what}; lower is better"]
        lines.append("  why: " + self._why())
        shown = ", ".join(f"{k} {fmt(v)}" for k, v in self.settings.items())
        if self.variant is None:
            lines.append(f"  weights: {shown}")
        else:
            units = "points of the score" if self.variant.observation == "margin" else "rating points"
            lines.append(f"  tuned settings ({units}; variances per day): {shown}")
        bound = t.loc[self.chosen, "at_bound"]
        if bound:
            lines.append(f"  at a bound of its search box: {', '.join(bound)}")
        lines.append(f"  fitted on {len(self.games):,} games; the choice took {self.seconds:.1f} s")
        lines.append("")
        width = max(len(str(n)) for n in t.index)
        head = f"  {'candidate'.ljust(width)}  {'stage':<14}  {self.objective:>10}  {'Δ':>8}  {'tune s':>6}"
        lines += [head, "  " + "-" * (len(head) - 2)]
        for name, r in t.iterrows():
            if np.isfinite(r["train_score"]):
                score, delta = f"{r['train_score']:.5f}", ("chosen" if r["chosen"] else f"{r['delta']:+.5f}")
            else:
                score, delta = "failed", "-"
            lines.append(f"  {str(name).ljust(width)}  {r['stage']:<14}  {score:>10}  {delta:>8}  "
                         f"{r['tune_seconds']:>6.1f}")
        failed = t[t["error"] != ""]
        for name, r in failed.iterrows():
            lines.append(f"  {name} failed: {r['error']}")
        for note in t.attrs.get("not_tried", []):
            lines.append(f"  not tried: {note}")
        return "\n".join(lines)
