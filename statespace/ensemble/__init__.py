"""Methods made of methods.

- :mod:`~statespace.ensemble.auto`: :func:`auto` chooses, tunes and fits the best-forecasting model
  variant on the training games alone; the method object :class:`Auto`
  (:mod:`~statespace.ensemble.auto_method`), its fitted result
  (:mod:`~statespace.ensemble.auto_fit`), the staged search over candidates
  (:mod:`~statespace.ensemble.auto_search`, :mod:`~statespace.ensemble.auto_candidate`,
  :mod:`~statespace.ensemble.auto_variant`) and the blend of its best
  (:mod:`~statespace.ensemble.auto_blend`).
- :mod:`~statespace.ensemble.blend`: :class:`Blend` pools the forecasts of several methods; the
  pooling rules and the weight fit (:mod:`~statespace.ensemble.blend_pool`) and its fitted result
  (:mod:`~statespace.ensemble.blend_fit`).

Imports: ``smoothers``, ``filters``, :mod:`statespace.methods`, :mod:`statespace.model`,
:mod:`statespace.data`, :mod:`statespace._runtime`; never :mod:`statespace.evaluation` or the
application.
"""
