"""Offline methods that fit the shared random-walk skill model to the whole history at once.

Planned: ``PyMCSmoother`` (NUTS on the Gaussian-random-walk Bradley-Terry model) and
``LaplaceSmoother`` (Whole-History-Rating style Newton smoother); they will share the fitted
interface of the filters (``fit``, ``predict_proba``, ``ratings``, ``trajectories``).
"""

REGISTRY: dict = {}

__all__ = ["REGISTRY"]
