"""The kit every method is built with.

- :mod:`~statespace.methods.protocols`: the one interface of every method (``fit``,
  ``predict_proba``, ``ratings``, ``trajectories``; a filter's ``run``, ``predict``, ``update``).
- :mod:`~statespace.methods.settings`: settings, their checks and tuning results
  (:class:`BoundWarning`, :class:`DrawWarning`).
- :mod:`~statespace.methods.registry`: each built-in method named in one place (name -> class), the
  only module that names the method packages, by string.
- :mod:`~statespace.methods.specs`: method-spec strings (``elo:k=20``) read into method objects.
- :mod:`~statespace.methods.display` and :mod:`~statespace.methods.plots`: ratings tables,
  notebook display and plots of a fitted method.
- :mod:`~statespace.methods.seen`: the warning when a forecast asks for games the method has seen.

Imports: :mod:`statespace.model`, :mod:`statespace.data`, :mod:`statespace._runtime`. The methods
themselves (``filters``, ``smoothers``) import this room; it imports them only by name, through
the registry.
"""
