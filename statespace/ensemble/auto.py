"""``statespace.auto``: the best forecast in one call.

``auto(games)`` chooses, on the games it is given and on nothing else, among the variants of the
extended Kalman filter's model that matter on real data, tunes each candidate by its
one-step-ahead likelihood, and returns the chosen filter fitted on the games, with a table of
every candidate and the reason for the choice::

    fit = statespace.auto(train)          # choose on train, fit on train
    print(fit.summary())                  # what was chosen, and why (a table of every candidate)
    fit.table                             # the candidates and their training scores (DataFrame)
    fit.predict_proba(test)               # frozen forecasts, as any fitted method
    fit.method.run(games).proba           # the chosen (tuned) filter, online through any games

    statespace.auto(games, split=0.9)     # choose on the first 90% (by time), fit on all:
                                          # the one-step-ahead forecasts of the last 10% are honest

**What is compared, and on what.** A candidate is an EKF (:class:`filters.EKF`, logistic link at
the Elo scale, diagonal covariance, time in days) of one model variant (:class:`Variant`):

- the observation: :class:`~statespace.Outcome` (win/draw/loss) always; where the games have
  ``score_a`` and ``score_b``, :class:`~statespace.Margin` (the score difference, Gaussian; its
  sd, and its draw width where there are draws, tuned); where the scores are goal counts (whole
  numbers, at most :data:`GOALS_MAX_MEAN` a side on average: football, not the NFL's points),
  :class:`~statespace.Goals` (each side's count) as three candidates: negative binomial counts
  with variance ``rate + dispersion * rate^2`` (its base rate and dispersion tuned, Poisson where
  the dispersion is tuned to 0); Poisson counts with Dixon and Coles' low-score dependence (its
  base rate and ``rho`` tuned); and the negative binomial with a drifting draw tendency
  (``SkillModel.draw_drift``: the log of a factor on the draws' odds, a latent random walk; its
  drift tuned);
- the home advantage: none when every game is neutral; otherwise fixed
  (``SkillModel.home``) or drifting (``SkillModel.home_drift``: a latent random walk);
- mean reversion (``SkillModel.reversion``) off or on;
- margin-of-victory weights (Outcome only, games with scores): unweighted, or each game's
  likelihood weighted by the Box–Cox power ``p`` of ``1 + margin``
  (:meth:`statespace.Games.with_weights`; ``p = 0`` is ``log(1 + margin)``), divided by the mean
  weight of the games the choice is made on (kept, so held-out games get the same scale);
- the draw model is not a choice: a threshold where the games have draws (its margin tuned),
  draws as half a win otherwise (on draw-free games the same model as none, and a draw that
  comes later is still rated).

Every candidate is tuned (:func:`filters.tuning.tune`: its drift, prior variance, home
advantage, reversion, home drift, draw margin and observation parameters, by L-BFGS-B) to
minimise one objective over the games after a burn-in (default: the first 30% are run through
but not scored), and the candidates are compared on that same objective: the three-outcome log
loss ``log_loss_3`` (the proper one-step-ahead log-likelihood of win/draw/loss) when the games
have draws, the expected-score ``log_loss`` (the same likelihood when there are no draws)
otherwise; the lowest wins (see the tie rule below). The table says which objective.

**The default search** is staged, to keep the number of tunings small (at most 11):

1. *structure*: the Outcome EKF, unweighted, with every home advantage that applies (fixed,
   drifting; none where every game is neutral) with and without mean reversion: 1, 2 or 4
   candidates; the best of these fixes the home advantage and reversion of the next stages;
2. *margin weights* (games with scores): that structure with weights of each power in
   ``powers`` (default 0, 0.5, 1): 3 candidates;
3. *observation* (games with scores): that structure observed through Margin, and through
   Goals where the scores are goal counts (negative binomial, Dixon–Coles, negative binomial with
   drifting draws): 1 or 4 candidates;
4. *groups* (only with ``group="league"``, a column of the games): the pick so far with a part of
   its home advantage and (Goals with negative binomial counts) of its draw tendency per group of
   that column, a fixed unknown offset per group around the common one (``Variant(group=...)``,
   ``filters.EKF(group=..., group_home_var=..., group_draw_var=...)``), tuned from the pick's tuned
   numbers twice, the parts' spreads at their start (30 points, 0.2) and at the bottom of their box
   (the pick itself, nested), the better kept: 1 candidate.

The chosen candidate is the best of all stages. Candidates whose training scores are within
:data:`TIE` of the best are level, and the one with the fewest tuned settings among them is
taken (in every stage): a drifting home advantage tuned to no drift, or a reversion tuned to its
lower bound, buys nothing and is not chosen. The margin-weight candidates start their tuning
from the chosen structure's tuned values, and the Goals candidates with drifting draws (or two
skills) from the one with fixed draws and one skill (among ``candidates=`` too, when it is given):
the others start from their starting values (:func:`~statespace.ensemble.auto_candidate.start_candidate`:
a candidate is not a filter whose settings batch, so ``tune``'s coarse grid start does not apply to
it). Give ``candidates=[Variant(...), ...]`` to compare an
explicit list instead, or narrow the search with ``observations=``, ``powers=``,
``drifting_home=`` and ``reversion=``.

Cost: one tuning per candidate, a few dozen to a few hundred passes of the compiled filter each,
every pass linear in the number of games; progress goes to stderr once the work has taken more
than a few seconds (``progress=True`` always, ``False`` never). ``n_jobs=k`` tunes the candidates of a
stage side by side on a process pool of ``k`` workers (``-1``: one per core; each worker starts by
importing the main script, so a script must call ``auto`` under ``if __name__ == "__main__":``);
the choice is the same. ``benchmarks/real_data.py`` times the choice on four real data sets
(``docs/getting_started.md`` gives the figures).

Goals costs about as much as Margin: its win/draw/loss forecast with the skill uncertainty
integrated is read from a table built once per setting (:mod:`statespace.model.outcome_table`),
not integrated per game (``benchmarks/goals_speed.py`` measures both).

**No peeking.** ``auto`` sees only the games it is given (with ``split``, only the first part of
them for the choice). In :func:`statespace.compare` use the method object :class:`Auto`:

- ``compare([Auto(), ...], games, split=0.9)`` (frozen): ``Auto().fit(train)`` chooses on the
  training part;
- ``compare([Auto(), ...], games, split=0.9, mode="online", tune=True)``: ``compare`` hands
  ``Auto.tune`` the training part, which returns the chosen, tuned filter; ``compare`` then runs
  it online through all games. ``Auto(split=0.9)`` with the same split as ``compare`` does the
  same without ``tune=True``; ``Auto()`` without a split refuses to run online (it would choose on
  the held-out games).

**A blend of the best** (``blend=True``, off by default): after the choice, the :data:`BLEND_TOP`
best candidates by training score are pooled by :class:`statespace.Blend` (log-linear pooling,
its weights fitted on the same choice games after the same burn-in), and the blend is returned
instead of the single pick only when its training score is lower by more than :data:`TIE`. The
blend's row (stage ``"blend"``, its weights as ``settings``) is in the table either way. Its
weights are fitted on the games they are scored on, as each candidate's settings are tuned on
them: an in-sample comparison, in which a blend that holds the pick as a special case is rarely
worse; judge it on held-out games (``compare``).

Like :mod:`statespace.app.cli` and :mod:`statespace.methods.registry`, this module sits on top of
everything: it imports the sibling package ``filters`` (when a candidate is built), and nothing
below it in ``statespace`` imports it (the package names ``statespace.auto`` and
``statespace.Auto`` load it on first use; the command line's ``--auto`` uses it).

The parts: the method object :class:`Auto` (:mod:`~statespace.ensemble.auto_method`), the search
and its record :class:`AutoResult` (:mod:`~statespace.ensemble.auto_search`), the candidates
(:mod:`~statespace.ensemble.auto_variant`, :mod:`~statespace.ensemble.auto_candidate`), the blend
of the best (:mod:`~statespace.ensemble.auto_blend`) and the fitted result :class:`AutoFit`
(:mod:`~statespace.ensemble.auto_fit`); this module holds :func:`auto` and the public names.
On matches of many sides ``auto`` chooses among the methods that rate them:
:mod:`~statespace.ensemble.auto_matches`.
"""

from __future__ import annotations

from statespace.data.games import Games
from statespace.data.matches import Matches
from statespace.ensemble import auto_blend as _auto_blend, auto_search as _auto_search, auto_variant as _auto_variant
from statespace.ensemble.auto_candidate import Candidate
from statespace.ensemble.auto_fit import AutoFit
from statespace.ensemble.auto_method import Auto
from statespace.ensemble.auto_search import AutoResult
from statespace.ensemble.auto_variant import Variant

__all__ = ["auto", "Auto", "AutoFit", "Variant", "Candidate", "AutoResult", "DEFAULT_POWERS", "BURN_IN",
           "OBSERVATIONS", "DEFAULT_OBSERVATIONS", "MIN_GAMES", "TIE", "GOALS_MAX_MEAN", "BLEND_TOP"]

# the constants live with the code that uses them; their comments here are what the API reference shows
#: Box–Cox powers of ``1 + margin`` tried for the margin weights by default (0: ``log(1 + margin)``)
DEFAULT_POWERS = _auto_search.DEFAULT_POWERS
#: share of the earliest games run through but left out of the objective (tuning and choice)
BURN_IN = _auto_search.BURN_IN
#: the observation models a candidate may use
OBSERVATIONS = _auto_variant.OBSERVATIONS
#: those the default search tries (where the games allow): all of them
DEFAULT_OBSERVATIONS = _auto_search.DEFAULT_OBSERVATIONS
#: the Goals observation is a candidate where the scores average at most this many a side
GOALS_MAX_MEAN = _auto_variant.GOALS_MAX_MEAN
#: fewest games ``auto`` chooses on
MIN_GAMES = _auto_search.MIN_GAMES
#: seconds of work after which progress is reported on stderr (``progress=None``)
PROGRESS_AFTER = _auto_search.PROGRESS_AFTER
#: candidates whose training scores are within this of the best (nats per game) are level: the
#: one with the fewest tuned settings among them is chosen (a drifting home advantage whose drift
#: was tuned to its lower bound is the fixed one, and costs a setting)
TIE = _auto_search.TIE
#: with ``blend=True``, how many of the best candidates (by training score) are pooled
BLEND_TOP = _auto_blend.BLEND_TOP


def auto(games: Games, *, split: float | None = None, **options) -> AutoFit:
    """Choose the best-forecasting EKF variant on ``games`` (or on their first ``split``) and return
    it fitted on ``games``, with the table of candidates (see the module docstring; ``options``
    are those of :class:`Auto`: ``burn_in``, ``objective``, ``observations``, ``powers``,
    ``drifting_home``, ``reversion``, ``candidates``, ``maxiter``, ``progress``, ``blend``, ``n_jobs``,
    ``group``).

    Given matches of many sides (a :class:`statespace.data.matches.Matches`) it chooses among the
    methods that rate them instead, tuned on the first ``split`` (default 0.7) and compared on the
    rest, and returns an :class:`~statespace.ensemble.auto_matches_fit.AutoMatchFit`
    (:func:`statespace.ensemble.auto_matches.auto_matches`, whose options ``options`` are).

    Example::

        import statespace as ss

        sim = ss.simulate(ss.SkillModel("logistic", ss.ELO_SCALE, 1500, 200**2, 50, "half", home=60,
                                        reversion=0.01), 30, 3000, home_fraction=0.5, seed=1)
        fit = ss.auto(sim.games, split=0.8)
        print(fit.summary())
    """
    if isinstance(games, Matches):
        from statespace.ensemble.auto_matches import auto_matches  # loads the filters only when needed

        return auto_matches(games, **options) if split is None else auto_matches(games, split=split, **options)
    return Auto(split=split, **options).fit(games)
