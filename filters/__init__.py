"""Online rating methods as predict/update filters of the shared skill model.

Every filter shares one interface (:class:`filters.base.Filter`) and one compiled run loop
(:mod:`filters._kernels`); each module holds only its own update equations.
"""

from .base import Filter, FilterRun, FilterState  # noqa: E402
from .ekf import EKF  # noqa: E402
from .elo import Elo  # noqa: E402
from .glicko import Glicko, Glicko2  # noqa: E402
from .trueskill import TrueSkill  # noqa: E402
from .wenglin import WengLin  # noqa: E402

from statespace.registry import collect as _collect  # noqa: E402

#: Names used by ``statespace compare --methods`` and ``statespace rate --method``: the
#: ``METHODS = {name: factory}`` of every module here (names starting with ``_`` skipped), so a
#: new filter is one new file ending with its ``METHODS`` (see :mod:`statespace.registry`);
#: ``NOT_BY_DEFAULT``: those of them left out of the default method list.
REGISTRY, NOT_BY_DEFAULT = _collect(__name__)

__all__ = ["Filter", "FilterRun", "FilterState", "EKF", "Elo", "Glicko", "Glicko2", "TrueSkill", "WengLin", "REGISTRY",
           "NOT_BY_DEFAULT"]
