"""Loading the lab's compiled kernels before it says it is ready.

The package compiles its kernels when first used, not at import (``statespace._runtime.jit``),
and keeps them in numba's disk cache; in a fresh install, or after the package's sources change,
the first run of each method compiles them, and later processes only load them, which is much
faster (docs/lab.md says how long each takes). :func:`warm_up` runs one tiny request through
every method and every path the API takes (a run from starting values with draws over two
periods, the odds, the history, ``statespace.compare`` in each mode) and the two examples of
matches through every method that rates them (a free-for-all, and teams with partial play), so
that cost is paid while
``statespace lab`` starts and not by the first request. :func:`statespace.app.lab.serve` calls
it before printing the lab's address; nothing calls it at import.
"""

from __future__ import annotations

from . import compute, match_compute
from .errors import LabInputError
from .match_schema import MatchRequest, ffa_example, team_example
from .schema import METHODS, CompareRequest, RateRequest

__all__ = ["WARM_UP_GAMES", "warm_up"]

#: three competitors over two periods, with a draw: every branch of a method's update
WARM_UP_GAMES = [{"period": 1, "player": "a", "opponent": "b", "score": "1"},
                 {"period": 1, "player": "b", "opponent": "c", "score": "0.5"},
                 {"period": 2, "player": "c", "opponent": "a", "score": "0"},
                 {"period": 2, "player": "a", "opponent": "b", "score": "0.5"}]


def warm_up() -> list[str]:
    """Run :data:`WARM_UP_GAMES` through every method of the lab (``/rate`` with starting values
    and a pair, ``/compare`` in each mode), once in period order and once not (the run loops
    are compiled separately for the table's own arrays and for the sorted copies a table out of
    order gets), then the examples of matches through every method that rates them; the paths
    run, as ``"rate:<method>"``, ``"compare:<mode>"`` and ``"matches:<method>"``."""
    done = []
    for games in (WARM_UP_GAMES, WARM_UP_GAMES[::-1]):
        rate = RateRequest.model_validate({
            "games": games, "methods": list(METHODS), "pair": {"a": "a", "b": "c"},
            "players": [{"name": "a", "rating": 1600, "rd": 100, "volatility": 0.05, "games": 3, "mu": 26,
                         "sigma": 6}]})
        result = compute.rate(rate)
        done += [f"rate:{name}" for name in result["methods"]]
        for mode in ("frozen", "online", "walk_forward"):
            compute.compare(CompareRequest.model_validate({"games": games, "methods": list(METHODS), "split": 0.5,
                                                           "mode": mode}))
            done.append(f"compare:{mode}")
    for name in match_compute.match_methods():
        for example in (ffa_example(), team_example()):
            try:
                match_compute.rate_matches(MatchRequest.model_validate({**example, "method": name, "settings": {}}))
            except LabInputError:  # a method of individuals (Elo-MMR) refuses the teams: nothing to compile
                pass
        done.append(f"matches:{name}")
    return list(dict.fromkeys(done))
