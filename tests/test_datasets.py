"""statespace.datasets: data sets by name (two shipped in the package, two fetched on first use),
never a path outside the repository, and a clear error saying where to get one that is absent."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from statespace import DroppedRowsWarning, Games
from statespace.data import datasets

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
CSV = "time,a,b,score\n2020-01-01,x,y,1\n2020-01-02,y,z,0.5\n2020-01-03,z,z,0\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A data home holding nfl/games.csv with one invalid row (a competitor against itself)."""
    (tmp_path / "nfl").mkdir()
    (tmp_path / "nfl" / "games.csv").write_text(CSV)
    monkeypatch.setenv(datasets.ENV, str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
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
    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with pytest.raises(datasets.DatasetNotFound) as err:
        datasets.load("england_football", download=False)
    text = str(err.value)
    assert str(tmp_path / "cache" / "statespace" / "datasets" / "england_football" / "games.csv") in text
    assert "jalapic/engsoccerdata" in text and "GPL" in text and datasets.ENV in text
    assert isinstance(err.value, FileNotFoundError)


def test_a_failed_download_is_reported_with_where_to_put_the_file(tmp_path, monkeypatch):
    """Offline (or a refused download), fetching says so and where the file goes by hand."""
    from statespace.data import fetch as _fetch

    def offline(url, **kw):
        raise ConnectionError("Name or service not known")

    pooch = pytest.importorskip("pooch")
    monkeypatch.setattr(pooch, "retrieve", offline)
    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(datasets.DatasetNotFound, match="could not download https://raw.githubusercontent.com/"
                                                       "JeffSackmann/tennis_atp/5b6263dc.*atp_tennis/games.csv"):
        datasets.load("atp_tennis")
    assert _fetch.SOURCES["atp_tennis"].commit.startswith("5b6263dc")


def test_the_shipped_data_sets_load_without_any_data_folder(tmp_path, monkeypatch):
    """intl_football and the NFL travel in the package, with their licences beside them."""
    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    for name in ("intl_football", "nfl"):
        games = datasets.load(name, errors="raise")
        assert len(games) == datasets.DATASETS[name].games and games.n_players == datasets.DATASETS[name].competitors
        assert (datasets.SHIPPED / name / "LICENSE").is_file()
    intl = datasets.load("intl_football")
    assert {"neutral", "score_a", "score_b", "tournament"} <= set(intl.to_frame().columns) | set(intl.extra.columns)
    assert (datasets.SHIPPED / "intl_football" / "LICENSE").read_text().lstrip().startswith("Creative Commons")
    assert "MIT" in (datasets.SHIPPED / "nfl" / "LICENSE").read_text() or "Permission is hereby granted" in \
        (datasets.SHIPPED / "nfl" / "LICENSE").read_text()
    assert not list(tmp_path.iterdir())  # nothing fetched or cached


# Content hashes of the development copies in ../shared/data (computed with _fetch.content_hash on
# 2026-12-01): the shipped files must hold exactly the same games.
SHIPPED_CONTENT = {"intl_football": "8227446d92f2de37c39f1565e520f28079cbb816d6c93284b27844041eb007f9",
                   "nfl": "970427e2337106d480d69fbd3521b19baa2e55771854b458e2752d7f982e3d50"}


@pytest.mark.parametrize("name", list(SHIPPED_CONTENT))
def test_the_shipped_files_hold_the_games_of_their_sources(name):
    import pandas as pd

    from statespace.data.fetch import content_hash

    frame = pd.read_csv(datasets.path(name), dtype={"a": str, "b": str}, keep_default_na=False)
    assert content_hash(frame) == SHIPPED_CONTENT[name]


@pytest.mark.skipif(not DATA.is_dir(), reason=f"development data not found at {DATA}")
@pytest.mark.parametrize("name", ["england_football", "atp_tennis", *SHIPPED_CONTENT])
def test_the_recorded_content_hashes_are_those_of_the_development_copies(name):
    """The hash a fetch is checked against is that of the games the benchmarks were run on."""
    import pandas as pd

    from statespace.data.fetch import SOURCES, content_hash

    frame = pd.read_csv(DATA / name / "games.csv", dtype={"a": str, "b": str}, keep_default_na=False)
    expected = SOURCES[name].content if name in SOURCES else SHIPPED_CONTENT[name]
    assert content_hash(frame) == expected


def test_the_content_hash_ignores_order_within_a_day_and_the_sides_of_a_decisive_game():
    import pandas as pd

    from statespace.data.fetch import content_hash

    one = pd.DataFrame({"time": ["2020-01-01", "2020-01-01"], "a": ["x", "y"], "b": ["y", "z"], "score": [1, 0.5]})
    swapped = pd.DataFrame({"time": ["2020-01-01", "2020-01-01"], "a": ["y", "y"], "b": ["z", "x"], "score": [0.5, 0]})
    assert content_hash(one) == content_hash(swapped)
    other = one.assign(score=[0, 0.5])  # the other winner
    assert content_hash(other) != content_hash(one)


def test_the_atp_normaliser_drops_walkovers_and_orders_rounds(tmp_path):
    from statespace.data.fetch import normalise_atp

    (tmp_path / "a.csv").write_text(
        "tourney_id,tourney_date,match_num,round,winner_id,loser_id,score\n"
        "2000-1,20000103,2,F,1,2,6-4 6-4\n"
        "2000-1,20000103,1,SF,1,3,6-0 RET\n"
        "2000-1,20000103,3,SF,2,4,W/O\n"
        "1999-9,19991227,1,R32,5,6,7-6 6-7 6-1\n")
    out = normalise_atp([tmp_path / "a.csv"])
    assert list(out["time"]) == ["1999-12-27", "2000-01-03", "2000-01-03"]
    winners = [a if s == 1 else b for a, b, s in zip(out["a"], out["b"], out["score"])]
    losers = [b if s == 1 else a for a, b, s in zip(out["a"], out["b"], out["score"])]
    assert winners == ["5", "1", "1"] and losers == ["6", "3", "2"]  # the walkover is gone; SF before F
    assert set(out["score"]) <= {0.0, 1.0}


def test_the_england_normaliser_keeps_tiers_one_to_four_with_home_first(tmp_path, monkeypatch):
    import pandas as pd

    rdata = pytest.importorskip("rdata")
    from statespace.data.fetch import normalise_england

    table = pd.DataFrame({"Date": pd.to_datetime(["1888-09-08", "1888-09-01", "1890-01-01"]), "Season": [1888, 1888, 1889],
                          "home": ["A", "B", "C"], "visitor": ["B", "A", "D"], "hgoal": [3, 1, 0], "vgoal": [6, 1, 2],
                          "tier": [1, 1, 5]})
    monkeypatch.setattr(rdata, "read_rda", lambda path: {"england": table})
    out = normalise_england([tmp_path / "england.rda"])
    assert list(out["time"]) == ["1888-09-01", "1888-09-08"]  # sorted, tier 5 dropped
    assert list(out["score"]) == [0.5, 0.0] and list(out["a"]) == ["B", "A"] and list(out["score_b"]) == [1, 6]


def test_the_nfl_reference_forecasts_are_aligned_with_the_loaded_games():
    """FiveThirtyEight's elo_prob1 by row: spot-checked against the source's first game
    (1920-09-26, RII 48 STP 0, elo_prob1 0.8246512009492516)."""
    games = datasets.load("nfl")
    ref = datasets.reference("nfl", games)
    p = ref.predict_proba(games.take(np.array([0])))
    assert p[0, 0] == pytest.approx(0.8246512009492516, abs=1e-15) and p[0, 1] == 0
    train, test = games.split(0.9)
    assert ref.predict_proba(test).shape == (len(test), 3)  # every held-out row finds its forecast
    with pytest.raises(ValueError, match="no published forecasts"):
        datasets.reference("intl_football")


def test_unknown_names_and_files_are_refused_listing_the_known_ones():
    with pytest.raises(ValueError, match="intl_football"):
        datasets.load("nba")
    with pytest.raises(ValueError, match="fivethirtyeight_nfl_games.csv"):
        datasets.path("nfl", file="other.csv")


def test_the_catalogue_lists_every_data_set_with_its_licence_and_presence(home):
    table = datasets.catalogue().set_index("name")
    assert list(table.index) == ["intl_football", "nfl", "england_football", "atp_tennis"]
    assert table.loc["nfl", "present"] and table.loc["nfl", "where"] == "data home"
    assert table.loc["intl_football", "where"] == "shipped"
    assert table.loc["atp_tennis", "where"] == "fetched on first use"
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
        datasets.load("atp_tennis")
    assert len(datasets.load("nfl")) == datasets.DATASETS["nfl"].games  # the shipped ones need no home


def test_the_command_line_lists_the_data_sets_and_rates_one_by_name(capsys, tmp_path, monkeypatch):
    from statespace.app.cli import main

    monkeypatch.delenv(datasets.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name, ds in datasets.DATASETS.items():
        line = next(l for l in out.splitlines() if l.startswith(name + " "))
        assert f"{ds.games:,} games" in line and ds.span in line and ds.licence in line
        assert ("shipped" if ds.shipped else "fetched on first use") in line
    assert main(["rate", "--dataset", "nfl", "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "data set nfl" in out and "16,810 games" in out
    assert main(["compare", "--dataset", "nba"]) == 2
    assert "unknown data set 'nba'" in capsys.readouterr().err
