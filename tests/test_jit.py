"""statespace._runtime.jit: nothing compiles at import; a loop runs compiled for the built-in kernels it is
given (and agrees with the generic loop that calls kernels through pointers); that loop is served
from numba's disk cache in the next process; editing a kernel's module compiles a fresh loop."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import filters
from filters import kernels as K
from statespace import Games
from statespace._runtime import jit as _jit

from conftest import with_points

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, env_extra: dict | None = None, cwd: Path | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *([str(cwd)] if cwd else [])])
    env.update(env_extra or {})
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                         text=True, timeout=600, cwd=cwd or ROOT)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_importing_the_packages_compiles_no_kernel_and_loads_no_optimiser():
    out = _python("""
        import json, sys
        import statespace, filters
        from numba.core.dispatcher import Dispatcher
        from statespace._runtime.jit import _Entry
        compiled, seen = [], 0
        for name, module in list(sys.modules.items()):
            if not name.split(".")[0] in ("statespace", "filters"):
                continue
            for attr, value in vars(module).items():
                disp = value.dispatcher if isinstance(value, _Entry) else value
                if isinstance(disp, Dispatcher):
                    seen += 1
                    if disp.overloads:
                        compiled.append(f"{name}.{attr}")
        print(json.dumps({"seen": seen, "compiled": compiled,
                          "heavy": [m for m in ("scipy.stats", "scipy.optimize", "scipy.special", "pymc")
                                    if m in sys.modules]}))
    """)
    assert out["seen"] > 50  # the kernels and loops are there, as dispatchers
    assert out["compiled"] == []
    assert out["heavy"] == []


def _games(n_players: int = 12, n: int = 400, seed: int = 3, periods: bool = False, points: bool = False) -> Games:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, n_players, n)
    b = (a + rng.integers(1, n_players, n)) % n_players
    score = rng.choice([1.0, 0.5, 0.0], size=n)
    g = Games.from_arrays(np.sort(rng.uniform(0, 40, n)), a, b, score,
                          neutral=rng.random(n) < 0.5)
    if points:
        g = with_points(g)
    return g.with_periods(5.0) if periods else g


METHODS = {**filters.REGISTRY, "ekf_full": lambda: filters.EKF(covariance="full")}


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.parametrize("periods", [False, True])
@pytest.mark.parametrize("name", sorted(METHODS))
def test_the_specialised_loop_agrees_with_the_generic_one(name, periods, monkeypatch):
    method = METHODS[name]()
    games = _games(periods=periods, points=getattr(method, "needs_scores", False))
    if not method.rates_games:  # rates contests only: no game loop to specialise (it refuses games)
        with pytest.raises(ValueError, match=rf"^{name} rates contests of many entrants"):
            method.run(games)
        return
    fast = method.run(games)
    monkeypatch.setattr(_jit, "SPECIALISE", False)
    slow = method.run(games)
    np.testing.assert_allclose(fast.proba, slow.proba, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fast.state.values, slow.state.values, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(fast.state.count, slow.state.count)
    np.testing.assert_allclose(fast.predict_proba(games), slow.predict_proba(games), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fast._post, slow._post, rtol=1e-12, atol=1e-12)


def test_a_closure_kernel_runs_the_generic_loop_and_gives_the_same_ratings():
    """Elo's site wrapped in a kernel built inside a function: no key, so the generic loop."""
    def make():
        @K.site_kernel
        def site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home, weight, scratch):
            return filters.elo._site(derivs, forecast, obs, x, theta, a, b, score, score_a, score_b, at_home,
                                     weight, scratch)
        return site

    site = make()

    class ClosureElo(filters.Elo):
        _site = staticmethod(site)

    assert K.game_loop.key((K.no_predict, site, K.no_apply, *filters.Elo().observation_kernels()[:2])) is None
    games = _games()
    ours = ClosureElo(k=24.0).run(games)
    reference = filters.Elo(k=24.0).run(games)
    np.testing.assert_allclose(ours.proba, reference.proba, rtol=1e-12)
    np.testing.assert_allclose(ours.state.values, reference.state.values, rtol=1e-12)


def test_the_trajectories_are_replayed_on_demand_and_equal_a_recorded_run():
    method = filters.Glicko2()
    games = _games(periods=True)
    run = method.run(games, initial={games.players[0]: 1800.0})
    assert run._post_rows is None  # not recorded by the run itself
    recorded = method._run(games, {games.players[0]: 1800.0}, None, record=True)
    np.testing.assert_array_equal(run._post, recorded._post_rows)
    traj = run.trajectories()
    assert len(traj) == 2 * len(games)
    later = run.continue_run(_games(seed=4, periods=True), allow_past=True)  # over the same 40 days again
    assert later._post.shape == (400, run._post.shape[1])


RUN_ELO = """
import json, numpy as np
from statespace import Games
from statespace._runtime import jit as _jit
import filters
rng = np.random.default_rng(0)
a = rng.integers(0, 20, 300); b = (a + rng.integers(1, 20, 300)) % 20
g = Games.from_arrays(np.arange(300.0), a, b, rng.choice([1.0, 0.0], 300))
p = filters.Elo().run(g).proba[:, 0]
hits = {str(k[0]): v for k, v in _jit._specialised.stats.cache_hits.items()}
misses = {str(k[0]): v for k, v in _jit._specialised.stats.cache_misses.items()}
print(json.dumps({"p": p.tolist(), "hits": hits, "misses": misses}))
"""


def test_the_specialised_loop_is_served_from_the_disk_cache_in_the_next_process(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    first = _python(RUN_ELO, env)
    second = _python(RUN_ELO, env)
    literal = [k for k in first["misses"] if k.startswith("Literal")]
    assert literal  # compiled the first time ...
    assert not [k for k in second["misses"] if k.startswith("Literal")]  # ... and loaded the second
    assert sum(v for k, v in second["hits"].items() if k.startswith("Literal")) >= 1
    assert first["p"] == second["p"]


PROBE = """
from statespace.model.observation import FORECAST_SIG, kernel


@kernel(FORECAST_SIG)
def probe_forecast(params, d, var):
    return {value}, 0.0, 1.0 - {value}
"""

RUN_PROBE = """
import json, numpy as np
from statespace.model import observation
from probe import probe_forecast
out = np.empty((1, 3))
observation._forecast_loop(probe_forecast, np.zeros(1), np.zeros(1), np.zeros(1), out)
print(json.dumps({"win": out[0, 0], "specialised": observation._forecast_loop.key((probe_forecast,)) is not None}))
"""


def test_editing_a_kernels_module_compiles_a_fresh_loop(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE.format(value="0.25"))
    first = _python(RUN_PROBE, env, cwd=tmp_path)
    assert first == {"win": 0.25, "specialised": True}
    probe.write_text(PROBE.format(value="0.75"))
    os.utime(probe, ns=(os.stat(probe).st_atime_ns, os.stat(probe).st_mtime_ns + 10**9))
    assert _python(RUN_PROBE, env, cwd=tmp_path)["win"] == 0.75
