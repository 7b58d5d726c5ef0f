"""Shared fixtures for the test suite.

Real data sets live outside the repository, in ``../shared/data`` relative to the project root;
tests that read them are marked ``@needs_data`` and skip cleanly when the folder is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

#: Read-only real data sets (see ../shared/data/README.md); not part of the project.
DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data"


def data_path(name: str) -> Path:
    """Path of ``<name>/games.csv`` in :data:`DATA_DIR`."""
    return DATA_DIR / name / "games.csv"


def has_data(name: str | None = None) -> bool:
    return (DATA_DIR / name / "games.csv").is_file() if name else DATA_DIR.is_dir()


needs_data = pytest.mark.skipif(not has_data(), reason=f"real data sets not found at {DATA_DIR}")


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
