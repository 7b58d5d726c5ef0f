"""Shared fixtures for the test suite.

Real data sets live outside the repository, in ``../shared/data`` relative to the project root;
tests that read them are marked ``@needs_data`` and skip cleanly when the folder is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest


def private_worker_cache(worker: str, tmp: str | None = None) -> str:
    """The numba cache folder named ``worker`` (the xdist workers share ``"workers"``): ``<tmp>/statespace-tests-<uid>/<worker>/numba``
    (warm from one run to the next) when ``<tmp>/statespace-tests-<uid>`` is a real folder of this user
    that no one else can write (made 0700 here), else a fresh private ``tempfile.mkdtemp`` folder,
    removed at exit. The name is predictable: another user could make that folder first and plant
    cache files, and the stamp that keeps them, whose machine code numba would then run here."""
    import atexit
    import shutil
    import stat
    import tempfile

    tmp = tempfile.gettempdir() if tmp is None else tmp
    base = os.path.join(tmp, f"statespace-tests-{os.getuid()}")
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        st = os.lstat(base)  # not a link: a link's target is whoever planted it
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not stat.S_IMODE(st.st_mode) & 0o022:
            os.chmod(base, 0o700)
            return os.path.join(base, worker, "numba")
    except OSError:
        pass
    fresh = tempfile.mkdtemp(prefix=f"statespace-tests-{worker}-", dir=tmp)
    atexit.register(shutil.rmtree, fresh, ignore_errors=True)
    return fresh


# Under pytest-xdist the workers share one private numba cache folder, as a process pool of users'
# does: the project's lock on each cache folder (statespace._runtime.cache_files) makes that safe
# (tests/test_cache_concurrency.py), and on a cold cache each loop is then compiled once for the
# run, not once per worker (compiling is most of a cold run's time). Set before any test module
# imports numba; child processes inherit it.
if os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("NUMBA_CACHE_DIR"):
    os.environ["NUMBA_CACHE_DIR"] = private_worker_cache("workers")

# The suite tests the compiled code. On a cold cache small work would otherwise run as plain Python
# (statespace._runtime.tier) until each function is compiled, so which test met which would hang
# on the order the tests ran in; tests/test_tier.py compares the two.
os.environ.setdefault("STATESPACE_JIT", "always")

#: Read-only real data sets (see ../shared/data/README.md); not part of the project.
DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_path(name: str) -> Path:
    """Path of ``<name>/games.csv`` in :data:`DATA_DIR`."""
    return DATA_DIR / name / "games.csv"


def has_data(name: str | None = None) -> bool:
    return (DATA_DIR / name / "games.csv").is_file() if name else DATA_DIR.is_dir()


needs_data = pytest.mark.skipif(not has_data(), reason=f"real data sets not found at {DATA_DIR}")


def with_points(games, seed: int = 0):
    """``games`` with each side's points, consistent with the results (the winner a Poisson margin
    of at least 1 ahead, a draw level): for methods that rate from points (``needs_scores``)."""
    from statespace import Games

    rng = np.random.default_rng(seed)
    low = rng.poisson(1.5, len(games)).astype(float)
    margin = 1.0 + rng.poisson(1.0, len(games))
    sa = np.where(games.score == 1.0, low + margin, low)
    sb = np.where(games.score == 0.0, low + margin, low)
    return Games.from_arrays(games.time, games.a_name, games.b_name, neutral=games.neutral, score_a=sa, score_b=sb)


def compiled_and_python_runs(script: str, timeout: float = 600) -> tuple[dict, dict]:
    """The JSON that ``script`` prints, run once compiled and once with ``NUMBA_DISABLE_JIT=1``
    (the kernels as plain Python): for the "compiled and uncompiled runs agree" tests."""
    runs = []
    for jit in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=jit)
        res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                             timeout=timeout)
        assert res.returncode == 0, res.stderr
        runs.append(json.loads(res.stdout))
    return runs[0], runs[1]


def walk_prior(a, b, times, prior_mean, prior_var, drift):
    """The dense random-walk prior of the smoother tests' exact-posterior references.
    Nodes ``[(player id, time)]`` sorted by player then time, their index, and the prior in
    natural parameters: a first node ``N(prior_mean, prior_var)``, consecutive nodes of a player
    linked by ``N(0, drift * dt)`` (precision ``prec``, precision times mean ``lin``)."""
    nodes = sorted(set(zip(np.asarray(a).tolist(), times.tolist())) | set(zip(np.asarray(b).tolist(), times.tolist())))
    at = {key: k for k, key in enumerate(nodes)}
    n = len(nodes)
    prec = np.zeros((n, n))
    lin = np.zeros(n)
    for k, (player, time) in enumerate(nodes):
        if k == 0 or nodes[k - 1][0] != player:  # a first node: the prior
            prec[k, k] += 1.0 / prior_var
            lin[k] += prior_mean / prior_var
        else:  # the random-walk link from the previous node
            w = 1.0 / (drift * (time - nodes[k - 1][1]))
            prec[np.ix_([k - 1, k], [k - 1, k])] += w * np.array([[1.0, -1.0], [-1.0, 1.0]])
    return nodes, at, prec, lin


@pytest.fixture
def tiny_frame() -> pd.DataFrame:
    """Six valid games among four competitors, deliberately not in time order."""
    return pd.DataFrame({
        "time": ["2020-01-05", "2020-01-01", "2020-01-03", "2020-01-02", "2020-01-04", "2020-01-06"],
        "a": ["ann", "bob", "cid", "dan", "ann", "bob"],
        "b": ["bob", "cid", "dan", "ann", "cid", "dan"],
        "score": [1, 0.5, 0, 1, 0.5, 0],
    })


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)
