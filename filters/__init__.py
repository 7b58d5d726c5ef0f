"""Online rating methods as predict/update filters of the shared skill model: the room ``filters``.

What it holds:

- the filter protocol, :class:`filters.base.Filter`, which every filter subclasses, with the
  records a run reads and writes (:mod:`filters.state`), the fitted run (:mod:`filters.run`), the
  scores, the batched grid and tuning (:mod:`filters.objectives`, :mod:`filters.grid`,
  :mod:`filters.tuning`);
- the compiled run loop, :mod:`filters.kernels`, a public module (the smoothers and the
  benchmarks drive it too); a filter is its per-game site there, each module holding only its own
  update equations;
- one module per filter, ending with its ``METHODS`` (:mod:`filters.elo`, :mod:`filters.glicko`,
  :mod:`filters.trueskill`, :mod:`filters.wenglin`, :mod:`filters.ekf` with
  :mod:`filters.ekf_full`, :mod:`filters.stephenson`, :mod:`filters.ecf`, :mod:`filters.dwz`,
  :mod:`filters.pythagorean`), and helpers they share (:mod:`filters.draws`; the modules named
  with an underscore serve this room only).

What it may import: :mod:`statespace.methods`, :mod:`statespace.model`, :mod:`statespace.data` and
:mod:`statespace._runtime`, by their public names, each from the module that defines it; never the
facade ``statespace``, nor :mod:`smoothers` or the rooms above them (evaluation, ensemble, app).
Inside the room imports run one way: a filter module imports :mod:`filters.base`,
:mod:`filters.kernels` and helpers; :mod:`filters.base` imports the state, run, grid and tuning
modules, which do not import it back; and no module imports this package (the registry finds the
filters by name, :func:`statespace.methods.registry.collect`).
"""

from statespace.methods.registry import collect as _collect
from statespace.methods.settings import BoundWarning, DrawWarning

from .base import Filter, FilterRun, FilterState
from .ekf import EKF, ScalarEKF  # noqa: F401  (built by EKF(covariance=...); importable by name)
from .ekf_full import FullEKF  # noqa: F401  (defining it registers the form EKF(covariance="full") builds)
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
