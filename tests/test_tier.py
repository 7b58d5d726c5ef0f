"""statespace._runtime.tier: small work runs as plain Python, big or repeated work compiled, and the
two give the same numbers.

- every method (and the main job) gives the same forecasts and states interpreted as compiled;
- the rule: a small first call is interpreted, a big one compiled at once, and a function is
  compiled once its interpreted time would pass the budget;
- a twin whose plain-Python arithmetic raises where compiled code gives an infinity is run again
  compiled, from its array arguments as they were;
- the main job on an empty compile cache compiles nothing.

The rest of the suite runs with ``STATESPACE_JIT=always`` (tests/conftest.py), the compiled code.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

from statespace import Games
from statespace._runtime import tier
from statespace.methods.specs import registry
from statespace.model import scenarios

from conftest import with_points

ROOT = Path(__file__).resolve().parents[1]
#: registered methods left out: PyMC samples (no numba loop; its own tests), a blend of the others
_SKIP = {"pymc", "blend"}


def _fit(name: str, games, mode: str, monkeypatch):
    monkeypatch.setenv("STATESPACE_JIT", mode)
    return registry(default_only=False)[name]().fit(games)


@pytest.fixture(scope="module")
def small_games():
    return with_points(scenarios.get("balanced", seed=3).games.take(range(200)))


@pytest.mark.filterwarnings("ignore::statespace.methods.seen.SeenGamesWarning")  # in-sample on purpose
@pytest.mark.parametrize("name", [n for n in registry(default_only=False) if n not in _SKIP])
def test_every_method_interpreted_equals_compiled(name, small_games, monkeypatch):
    games = small_games
    if name == "elo_mmr":  # rates matches only: its own test below
        return
    compiled = _fit(name, games, "always", monkeypatch)
    interpreted = _fit(name, games, "never", monkeypatch)
    for forecast in ("proba", "predict_proba"):  # one step ahead (filters), then from the fitted state
        p_c, p_i = getattr(compiled, forecast, None), getattr(interpreted, forecast, None)
        if callable(p_c):
            p_c, p_i = p_c(games), p_i(games)
        if p_c is None:
            continue
        p_c, p_i = np.asarray(p_c, float), np.asarray(p_i, float)
        assert p_c.shape == p_i.shape and np.isfinite(p_i).all()
        np.testing.assert_allclose(p_i, p_c, rtol=1e-9, atol=1e-12)
    r_c = compiled.ratings() if callable(getattr(compiled, "ratings", None)) else None
    if r_c is not None:
        r_i = interpreted.ratings()
        np.testing.assert_allclose(np.asarray(r_i.select_dtypes("number"), float),
                                   np.asarray(r_c.select_dtypes("number"), float), rtol=1e-9, atol=1e-9)


_MATCH_METHODS = ["elo", "glicko", "glicko2", "trueskill", "wenglin", "wenglin_pl", "ekf", "elo_mmr", "laplace",
                  "ttt"]


@pytest.mark.parametrize("sides, size", [(5, 1), (2, 3)])
@pytest.mark.parametrize("name", _MATCH_METHODS)
def test_matches_interpreted_equal_compiled(name, sides, size, monkeypatch):
    from statespace.model.match_scenarios import simulate_matches
    from statespace.model.skillmodel import SkillModel

    if name == "elo_mmr" and size > 1:
        pytest.skip("Elo-MMR rates contests of individuals")
    matches = simulate_matches(SkillModel("logistic", 1.0, 0.0, 1.0, 0.01), 30, 40, sides, size, seed=2).matches
    compiled = _fit(name, matches, "always", monkeypatch)
    interpreted = _fit(name, matches, "never", monkeypatch)
    for field in ("perf_mean", "perf_var"):
        if hasattr(compiled, field):
            np.testing.assert_allclose(getattr(interpreted, field), getattr(compiled, field), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.asarray(interpreted.ratings().select_dtypes("number"), float),
                               np.asarray(compiled.ratings().select_dtypes("number"), float), rtol=1e-9, atol=1e-9)


_games = st.integers(2, 8).flatmap(lambda n_players: st.lists(
    st.tuples(st.integers(0, n_players - 1), st.integers(1, n_players - 1), st.sampled_from([0.0, 0.5, 1.0]),
              st.integers(0, 3)), min_size=1, max_size=40))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=_games, name=st.sampled_from(["elo", "glicko2", "trueskill", "ekf", "stephenson"]))
def test_random_games_interpreted_equal_compiled(rows, name, monkeypatch):
    a = [f"p{i}" for i, _, _, _ in rows]
    b = [f"p{(i + j) % 9}" if (i + j) % 9 != i else f"q{i}" for i, j, _, _ in rows]
    t = np.cumsum([gap for *_, gap in rows]).astype(float)
    games = Games.from_arrays(t, a, b, [s for _, _, s, _ in rows])
    p_c = np.asarray(_fit(name, games, "always", monkeypatch).proba)
    p_i = np.asarray(_fit(name, games, "never", monkeypatch).proba)
    assert ((p_i >= 0) & (p_i <= 1)).all()
    np.testing.assert_allclose(p_i, p_c, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------------- the rule
def _adopted(fn):
    """A fresh compiled function (not cached) with tiered calls, as this package's are."""
    disp = njit(fn)
    tier.adopt(disp)
    return disp


def _sum_of_squares(x):
    total = 0.0
    for v in x:
        total += v * v
    return total


def test_a_small_call_is_interpreted_and_a_big_one_compiled(monkeypatch):
    monkeypatch.setenv("STATESPACE_JIT", "auto")
    f = _adopted(_sum_of_squares)
    x = np.arange(10.0)
    assert f(x) == 285.0
    assert len(f.overloads) == 0  # nothing compiled for ten numbers
    monkeypatch.setattr(tier, "PRIOR_RATE", 1.0)  # a prediction above the budget at once
    g = _adopted(_sum_of_squares)
    assert g(x) == 285.0
    assert len(g.overloads) == 1


def test_repeated_calls_compile_once_interpreting_would_pass_the_budget(monkeypatch):
    monkeypatch.setenv("STATESPACE_JIT", "auto")
    monkeypatch.setattr(tier, "BUDGET", 0.05)
    f = _adopted(_sum_of_squares)
    x = np.ones(20_000)
    calls = 0
    while not f.overloads:
        assert f(x) == 20_000.0
        calls += 1
        assert calls < 10_000, "never compiled"
    assert calls >= 2  # the first calls were interpreted
    assert f(x) == 20_000.0


def test_always_and_never(monkeypatch):
    x = np.arange(4.0)
    monkeypatch.setenv("STATESPACE_JIT", "always")
    f = _adopted(_sum_of_squares)
    f(x)
    assert len(f.overloads) == 1
    monkeypatch.setenv("STATESPACE_JIT", "never")
    monkeypatch.setattr(tier, "PRIOR_RATE", 1.0)
    g = _adopted(_sum_of_squares)
    assert g(np.ones(100_000)) == 100_000.0
    assert len(g.overloads) == 0
    monkeypatch.setenv("STATESPACE_JIT", "sometimes")
    with pytest.raises(ValueError, match="STATESPACE_JIT='sometimes'"):
        _adopted(_sum_of_squares)(x)


def _step_then_exp(x):
    x[0] += 1.0
    return math.exp(x[1])


def _step_then_log(x):
    x[0] += 1.0
    return math.log(x[1])


@pytest.mark.parametrize("fn, value, expected", [(_step_then_exp, 1000.0, math.inf),  # OverflowError in Python
                                                 (_step_then_log, 0.0, -math.inf)])  # ValueError in Python
def test_a_twin_that_raises_is_run_again_compiled_from_its_arguments_as_they_were(fn, value, expected, monkeypatch):
    monkeypatch.setenv("STATESPACE_JIT", "auto")
    f = _adopted(fn)
    x = np.array([0.0, value])
    assert f(x) == expected
    assert x[0] == 1.0  # the interpreted step undone, the compiled one kept
    assert len(f.overloads) == 1


def test_an_error_compiled_code_raises_too_reaches_the_caller(monkeypatch):
    monkeypatch.setenv("STATESPACE_JIT", "auto")

    def refuse(x):
        if x[0] < 0.0:
            raise ValueError("negative")
        return x[0]

    f = _adopted(refuse)
    with pytest.raises(ValueError, match="negative"):
        f(np.array([-1.0]))


def test_a_twin_reaches_compiled_functions_through_modules_and_closures():
    from filters import kernels as K

    inner = njit(lambda v: K.clamp_mean(v) + 1.0)

    def outer(v):
        return inner(v) * 2.0

    compiled = njit(outer)
    assert tier.python_twin(compiled)(1e300) == (K.MEAN_MAX + 1.0) * 2.0
    assert len(compiled.overloads) == 0 and len(inner.overloads) == 0


# ---------------------------------------------------------------------------- the main job
#: the main job with the interpreting budget tripled: its small work stays interpreted when
#: compiling would not pay (on a quiet machine its largest twin, the Laplace smoother's conjugate
#: gradients, spends about 0.8 s of the 1 s budget); on a machine the suite's other worker keeps
#: busy, plain Python runs slower and the rule would rightly compile it
MAIN_JOB = ("import sys; from statespace._runtime import tier; tier.BUDGET *= 3; "
            "from statespace.app.cli import main; sys.exit(main(['compare']))")


def test_the_tier_module_may_be_the_first_to_import_numba():
    """``tier`` imports numba, whose import installs the caching rules that adopt dispatchers into
    ``tier``: importing ``tier`` first must not find it half made (an ImportError before)."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    env["PYTHONPATH"] = str(ROOT)
    res = subprocess.run([sys.executable, "-c", "from statespace._runtime import tier; print(tier.BUDGET > 0)"], env=env,
                         capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "True"


def test_the_main_job_on_an_empty_cache_compiles_nothing(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_DISABLE_JIT",)}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "numba"), STATESPACE_JIT="auto", MPLBACKEND="Agg",
               PYTHONPATH=str(ROOT))
    res = subprocess.run([sys.executable, "-c", MAIN_JOB], env=env, capture_output=True, text=True, timeout=600,
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "log loss" in res.stdout
    compiled = list((tmp_path / "numba").rglob("*.nbc"))
    assert compiled == [], f"the main job compiled {len(compiled)} functions: {compiled[:5]}"
