"""Online rating methods as predict/update filters of the shared skill model.

Every filter shares one interface (:class:`filters.base.Filter`) and one compiled run loop
(:mod:`filters.kernels`); each module holds only its own update equations.
"""

from statespace.methods.registry import collect as _collect
from statespace.methods.settings import BoundWarning, DrawWarning

from .base import Filter, FilterRun, FilterState
from .ekf import EKF, ScalarEKF  # noqa: F401  (built by EKF(covariance=...); importable by name)
from .ekf_full import FullEKF  # noqa: F401
from .elo import Elo
from .glicko import Glicko, Glicko2
from .stephenson import Stephenson
from .trueskill import TrueSkill
from .wenglin import WengLin

#: Names used by ``statespace compare --methods`` and ``statespace rate --method``: the
#: ``METHODS = {name: factory}`` of every module here (names starting with ``_`` skipped), so a
#: new filter is one new file ending with its ``METHODS`` (see :mod:`statespace.methods.registry`);
#: ``NOT_BY_DEFAULT``: those of them left out of the default method list.
REGISTRY, NOT_BY_DEFAULT = _collect(__name__)

#: the filter classes users construct (the EKF's covariance forms, ScalarEKF and FullEKF, are built by
#: ``EKF(covariance=...)``)
__all__ = ["Filter", "FilterRun", "FilterState", "EKF", "Elo", "Glicko", "Glicko2", "Stephenson", "TrueSkill",
           "WengLin", "REGISTRY", "NOT_BY_DEFAULT", "BoundWarning", "DrawWarning"]
