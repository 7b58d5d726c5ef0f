"""What :func:`statespace.auto` returns on matches of many sides: :class:`AutoMatchFit`, the chosen
method fitted on the matches (its run and ratings), the table of every candidate, and the reason
for the choice as text (:meth:`AutoMatchFit.summary`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from statespace.data.matches import Matches
from statespace.ensemble.auto_search import TIE


class AutoMatchFit:
    """The chosen match-rating method fitted on the matches, and why it was chosen
    (:mod:`statespace.ensemble.auto_matches`).

    - ``method``: the chosen method, tuned (on all the matches when refit, else on the first part);
      ``method.run(matches)`` runs it online through any matches;
    - ``run``: its run through the matches given (a :class:`filters.match_run.MatchRun`: each
      side's one-step-ahead ``perf_mean`` and ``perf_var``); ``matches``;
    - ``table``: every candidate (index: its name), best validation pairwise log loss first, failed
      ones last: ``observation`` (the ranking its forecast means), ``pair_log_loss`` (the
      validation score the choice is made by), ``delta`` and ``pair_log_loss_se`` (against the
      chosen, paired over the same matches), ``loglik``, ``pair_inversion``, ``rank_deviation``,
      ``top1`` (the other validation scores), ``chosen``, ``settings`` (tuned on the first part),
      ``at_bound`` (settings tuned to a bound of their search box), ``tune_seconds``, ``seconds``
      (the run over all the matches), ``note`` (e.g. a candidate with nothing to tune) and
      ``error`` (why a candidate could not be scored); ``table.attrs``: ``choice``, ``split``,
      ``n_train``, ``n_validation``, ``tuned``, ``refit``, ``values`` and ``weights`` (each score's
      per-match values of each candidate, as ``compare_matches``);
    - ``chosen``: its name; ``candidates``: every candidate scored, ``{name: method}`` as tuned
      on the first part; ``refit_tuning``: the refit's ``TuneResult`` (``None`` when not refit);
      ``seconds``: the whole choice;
    - ``ratings()``, ``trajectories()``: the fitted run's; ``summary()``: the choice as text.
    """

    def __init__(self, method, run, matches: Matches, table: pd.DataFrame, chosen: str, candidates: dict,
                 refit_tuning, seconds: float):
        self.method = method
        self.run = run
        self.matches = matches
        self.table = table
        self.chosen = chosen
        self.candidates = candidates
        self.refit_tuning = refit_tuning
        self.seconds = seconds

    @property
    def settings(self) -> dict[str, float]:
        """The chosen method's fitted settings (the refit's, else those tuned on the first part)."""
        if self.refit_tuning is not None:
            return dict(self.refit_tuning.params)
        return dict(self.table.at[self.chosen, "settings"])

    def ratings(self):
        return self.run.ratings()

    def trajectories(self) -> pd.DataFrame:
        return self.run.trajectories()

    def __repr__(self) -> str:
        score = self.table.at[self.chosen, "pair_log_loss"]
        return (f"AutoMatchFit(chose {self.chosen!r} among {len(self.table)} candidates by validation pairwise log "
                f"loss {score:.5f}; fitted on {self.matches.n_matches:,} matches)")

    def _why(self) -> str:
        t = self.table
        others = t[np.isfinite(t["pair_log_loss"]) & ~t["chosen"]]
        if not len(others):
            return "the only candidate that could be scored"
        other, r = others.index[0], others.iloc[0]
        if r["delta"] > TIE:
            return (f"the lowest validation pairwise log loss, {r['delta']:.5f} below the next ({other}; paired "
                    f"se {r['pair_log_loss_se']:.5f})")
        return (f"level with {other} (within {TIE:g}: {r['delta']:+.6f}) and no more tuned settings "
                f"({len(t.at[self.chosen, 'settings'])} against {len(r['settings'])})")

    def summary(self) -> str:
        """What was chosen, on which matches, why, its settings, and every candidate's scores."""
        t, a = self.table, self.table.attrs
        lines = [f"statespace.auto chose: {self.chosen} ({self.method!r})",
                 f"  tuned on the first {a['n_train']:,} matches" if a["tuned"] else
                 f"  at the settings given (not tuned); run online over {self.matches.n_matches:,} matches",
                 f"  compared on the last {a['n_validation']:,} matches, each forecast online: pairwise log loss "
                 f"(nats; lower is better; each method's own probabilities of who finishes ahead of whom)",
                 "  why: " + self._why()]
        if self.settings:
            lines.append("  settings: " + ", ".join(f"{k} {v:.6g}" for k, v in self.settings.items())
                         + (" (refit on all the matches)" if a["refit"] else ""))
        lines.append(f"  fitted on {self.matches.n_matches:,} matches; the choice took {self.seconds:.1f} s")
        lines.append("")
        width = max(len(str(n)) for n in t.index)
        head = (f"  {'candidate'.ljust(width)}  {'observation':<13}  {'pair log loss':>13}  {'delta':>8}  "
                f"{'se':>7}  {'pair inv %':>10}  {'tune s':>6}")
        lines += [head, "  " + "-" * (len(head) - 2)]
        for name, r in t.iterrows():
            if r["error"]:
                lines.append(f"  {str(name).ljust(width)}  failed: {r['error']}")
                continue
            delta = "chosen" if r["chosen"] else f"{r['delta']:+.5f}"
            lines.append(f"  {str(name).ljust(width)}  {r['observation']:<13}  {r['pair_log_loss']:>13.5f}  "
                         f"{delta:>8}  {r['pair_log_loss_se']:>7.5f}  {r['pair_inversion']:>10.2f}  "
                         f"{r['tune_seconds']:>6.1f}")
        for name, r in t[t["note"] != ""].iterrows():
            lines.append(f"  {name}: {r['note']}")
        for name, r in t[t["at_bound"].map(len) > 0].iterrows():
            lines.append(f"  {name}: tuned to a bound of its search box: {', '.join(r['at_bound'])}")
        return "\n".join(lines)
