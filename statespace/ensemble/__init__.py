"""Methods made of methods.

- :mod:`~statespace.ensemble.auto`: :func:`auto` chooses, tunes and fits the best-forecasting model
  variant on the training games alone (:mod:`~statespace.ensemble.auto_search`,
  :mod:`~statespace.ensemble.auto_candidate`, :mod:`~statespace.ensemble.auto_variant`).
- :mod:`~statespace.ensemble.blend`: :class:`Blend` pools the forecasts of several methods.

Imports: ``smoothers``, ``filters``, :mod:`statespace.methods`, :mod:`statespace.model`,
:mod:`statespace.data`, :mod:`statespace._runtime`; never :mod:`statespace.evaluation` or the
application.
"""
