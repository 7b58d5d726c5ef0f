"""Evaluation: methods scored on held-out games.

- :mod:`~statespace.evaluation.compare`: :func:`compare` fits every method on the same training
  games and scores the same held-out games (log loss, Brier score, accuracy), in three modes
  (static, online, walk-forward).
- :mod:`~statespace.evaluation.study`: a grid of methods x data sets (or scenarios) x seeds, run
  and resumed from row files (:mod:`~statespace.evaluation.study_rows`,
  the executors of :mod:`statespace._runtime.pool`).

Imports: ``smoothers``, ``filters``, :mod:`statespace.methods`, :mod:`statespace.model`,
:mod:`statespace.data`, :mod:`statespace._runtime`; never :mod:`statespace.ensemble` or the
application.
"""
