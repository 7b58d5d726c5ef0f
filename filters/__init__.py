"""Online rating methods as predict/update filters of the shared skill model.

Every filter shares one interface (:class:`filters.base.Filter`) and one compiled run loop
(:mod:`filters._kernels`); each module holds only its own update equations.
"""

import hashlib as _hashlib
from pathlib import Path as _Path


def _drop_stale_numba_caches() -> None:
    """numba's on-disk cache of a function is invalidated only by changes to the function's
    own file, not to the files of functions it calls (the model's numerics in statespace); so
    when those change, the cached kernels here and there are dropped."""
    try:
        here = _Path(__file__).resolve().parent
        core = here.parent / "statespace"
        deps = sorted(list(core.glob("_*.py")) + [here / "_kernels.py", here / "_common.py"])
        digest = _hashlib.sha1(b"".join(p.read_bytes() for p in deps if p.exists())).hexdigest()
        stamp = here / "__pycache__" / "numba-deps.sha1"
        if stamp.exists() and stamp.read_text() == digest:
            return
        for folder in (here / "__pycache__", core / "__pycache__"):
            for f in list(folder.glob("*.nbi")) + list(folder.glob("*.nbc")):
                f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:  # a read-only install: numba then does not cache there either
        pass


_drop_stale_numba_caches()

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
