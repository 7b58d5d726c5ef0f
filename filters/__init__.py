"""Online rating methods as predict/update filters of the shared skill model.

Every filter shares one interface (:class:`filters.base.Filter`) and one compiled run loop
(:mod:`filters._kernels`); each module holds only its own update equations.
"""

from .base import Filter, FilterRun, FilterState
from .elo import Elo

#: Names used by ``statespace compare --methods`` and ``statespace rate --method``.
REGISTRY = {
    "elo": Elo,
    "elo_fide": Elo.fide,
}

__all__ = ["Filter", "FilterRun", "FilterState", "Elo", "REGISTRY"]
