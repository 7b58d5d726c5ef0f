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

#: Names used by ``statespace compare --methods`` and ``statespace rate --method``.
REGISTRY = {
    "elo": Elo,
    "elo_fide": Elo.fide,
    "glicko": Glicko,
    "glicko2": Glicko2,
    "trueskill": TrueSkill,
    "wenglin": WengLin,
    "ekf": EKF,
}

__all__ = ["Filter", "FilterRun", "FilterState", "EKF", "Elo", "Glicko", "Glicko2", "TrueSkill", "WengLin", "REGISTRY"]
