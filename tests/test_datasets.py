"""statespace.datasets: data sets found by name, never a path outside the repository, and a clear
error saying where to get one that is absent."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from statespace import DroppedRowsWarning, Games, datasets

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CSV = "time,a,b,score\n2020-01-01,x,y,1\n2020-01-02,y,z,0.5\n2020-01-03,z,z,0\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A data home holding nfl/games.csv with one invalid row (a competitor against itself)."""
    (tmp_path / "nfl").mkdir()
    (tmp_path / "nfl" / "games.csv").write_text(CSV)
    monkeypatch.setenv(datasets.ENV, str(tmp_path))
    return tmp_path


def test_the_data_home_is_the_argument_then_the_variable_then_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert datasets.data_home() == tmp_path / "cache" / "statespace" / "datasets"
    monkeypatch.setenv(datasets.ENV, str(tmp_path / "env"))
    assert datasets.data_home() == tmp_path / "env"
    assert datasets.data_home(tmp_path / "arg") == tmp_path / "arg"
    assert not (tmp_path / "cache").exists()  # looking creates nothing


def test_load_reads_the_data_home_and_drops_invalid_rows_with_a_warning(home):
    with pytest.warns(DroppedRowsWarning, match="row 2"):
        games = datasets.load("nfl")
    assert isinstance(games, Games) and len(games) == 2
    assert list(games.players) == ["x", "y", "z"]
    np.testing.assert_array_equal(games.score, [1.0, 0.5])
    with pytest.raises(Exception, match="itself"):
        datasets.load("nfl", errors="raise")


@pytest.mark.parametrize("given", ["root", "folder", "file"])
def test_a_path_may_be_the_data_root_the_folder_or_the_csv(home, monkeypatch, given):
    monkeypatch.delenv(datasets.ENV)
    arg = {"root": home, "folder": home / "nfl", "file": home / "nfl" / "games.csv"}[given]
    assert datasets.path("nfl", arg) == home / "nfl" / "games.csv"


def test_an_absent_data_set_says_where_to_get_it_and_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv(datasets.ENV, str(tmp_path))
    with pytest.raises(datasets.DatasetNotFound) as err:
        datasets.load("intl_football")
    text = str(err.value)
    assert str(tmp_path / "intl_football" / "games.csv") in text
    assert "martj42/international_results" in text and "CC0" in text and datasets.ENV in text
    assert isinstance(err.value, FileNotFoundError)


def test_unknown_names_and_files_are_refused_listing_the_known_ones():
    with pytest.raises(ValueError, match="intl_football"):
        datasets.load("nba")
    with pytest.raises(ValueError, match="fivethirtyeight_nfl_games.csv"):
        datasets.path("nfl", file="other.csv")


def test_the_catalogue_lists_every_data_set_with_its_licence_and_presence(home):
    table = datasets.catalogue().set_index("name")
    assert list(table.index) == ["intl_football", "nfl", "england_football", "atp_tennis"]
    assert table.loc["nfl", "present"] and not table.loc["atp_tennis", "present"]
    assert table.loc["atp_tennis", "licence"].startswith("CC BY-NC-SA")


@pytest.mark.skipif(not DATA.is_dir(), reason=f"development data not found at {DATA}")
@pytest.mark.parametrize("name", list(datasets.DATASETS))
def test_the_published_sizes_match_the_files(name):
    """The catalogue's sizes are the data README's; checked against the files themselves."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedRowsWarning)
        games = datasets.load(name, DATA)
    ds = datasets.DATASETS[name]
    assert len(games) + games.dropped["row"].nunique() == ds.games
    assert games.n_players == ds.competitors or name == "atp_tennis"  # ATP's dropped rows hold one id
    for extra in ds.files:
        assert datasets.path(name, DATA, file=extra).is_file()


def test_without_a_home_directory_the_variable_or_a_path_is_asked_for(monkeypatch):
    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setattr(datasets, "user_cache_dir", lambda name, create=True: None)
    with pytest.raises(datasets.DatasetNotFound, match=datasets.ENV):
        datasets.load("nfl")
