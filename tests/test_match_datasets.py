"""Match data sets as Matches (statespace.data.match_datasets). Expected counts come from the
sources: the raw Halo 2 files of dotnet/mbmlbook hold 6,028 and 972 ``Game`` elements (counted in
the XML, not by our reader), and Elo-MMR's pinned commit holds 1,062 contest files."""

from __future__ import annotations

import numpy as np
import pytest

from statespace.data.match_datasets import MATCH_DATASETS, load_matches
from statespace.data.match_sources import codeforces_manifest


def test_halo2_loads_as_matches():
    h2h = load_matches("halo2_head_to_head")
    assert h2h.n_matches == 6_028 and h2h.is_pairwise
    team = load_matches("halo2_large_team")
    assert team.n_matches == 972 and not team.is_pairwise
    sides = np.diff(team.match_ptr)
    members = np.diff(team.side_ptr)
    assert sides.min() >= 2 and members.max() > 1  # teams of several players
    assert np.all(np.diff(team.time) >= 0)


def test_codeforces_without_download_names_the_folder(tmp_path):
    assert len(codeforces_manifest()["files"]) == 1_062
    with pytest.raises(FileNotFoundError, match="1062 of 1062 contest files are not in .*codeforces"):
        load_matches("codeforces", tmp_path, download=False)


def test_unknown_name_lists_the_known():
    with pytest.raises(ValueError, match="halo2_large_team"):
        load_matches("reddit")
    assert set(MATCH_DATASETS) == {"halo2_head_to_head", "halo2_large_team", "codeforces"}
