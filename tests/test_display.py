"""Rich display in Jupyter and the helpers behind it (statespace.methods.display, statespace._runtime.progress):
fitted results' HTML (summary line and compact leaderboard, escaped), ratings() as a DataFrame
with its summary, compare's Comparison (HTML, plot, attrs), fitted.plot, progress bars on stderr
and quiet mode, and a real notebook's rich output (retina figures)."""

from __future__ import annotations

import re
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import filters  # noqa: E402
import smoothers  # noqa: E402
import statespace as ss  # noqa: E402
from statespace.methods import display as _display
from statespace._runtime import progress as _progress  # noqa: E402
from statespace.ensemble.auto import Variant  # noqa: E402
from statespace.evaluation.compare import _blocks  # noqa: E402

MODEL = ss.SkillModel("logistic", ss.ELO_SCALE, 1500.0, 200.0**2, 50.0, "half")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def games():
    return ss.simulate(MODEL, 14, 700, days=200, seed=3).games


@pytest.fixture(scope="module")
def odd_games():
    """Games whose competitors' names need escaping in HTML, with dates at midnight."""
    names = ["<b>Bold</b> & Co", "O'Neil \"The Wall\"", "plain", "x<y"]
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, 200)
    b = (a + rng.integers(1, 4, 200)) % 4
    when = np.datetime64("2021-03-01") + np.sort(rng.integers(0, 90, 200)).astype("timedelta64[D]")
    score = rng.choice([0.0, 1.0], 200)
    # the strongest name needs escaping: make it win more
    score = np.where(a == 0, 1.0, np.where(b == 0, 0.0, score))
    return ss.Games.from_arrays(when, [names[i] for i in a], [names[i] for i in b], score)


def _text(html: str) -> str:
    """The visible text of an HTML fragment (tags dropped, entities read)."""
    return _display.html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"<style>.*?</style>", "", html)))


def _fits(games):
    """One fitted result of every kind: filter run, smoother fit, static fit, blend, auto."""
    out = {
        "filter": filters.Glicko2().fit(games),
        "smoother": smoothers.LaplaceSmoother(MODEL).fit(games),
        "static": smoothers.Colley().fit(games),
        "blend": ss.Blend({"elo": filters.Elo(), "ekf": filters.EKF(MODEL)}).fit(games),
    }
    return out


@pytest.fixture(scope="module")
def fits(games):
    return _fits(games)


@pytest.fixture(scope="module")
def auto_fit(games):
    return ss.auto(games, candidates=[Variant("outcome", "none", False)], progress=False)


# ---------------------------------------------------------------------------- summary line
def test_summary_line_names_method_games_competitors_and_span(games):
    run = filters.Elo(k=24).fit(games)
    line = _display.summary_line(run.method, run.games)
    played = np.unique(np.concatenate([games.a, games.b])).size
    first, last = (str(games.time[games.order[i]].astype("datetime64[D]")) for i in (0, -1))
    assert line == f"Elo(k=24) \u00b7 700 games \u00b7 {played} competitors \u00b7 {first} to {last}"


def test_span_of_numbers_times_of_day_one_time_and_no_games():
    numeric = ss.Games.from_arrays([0.0, 2.5, 7.0], ["a", "b", "a"], ["b", "c", "c"], [1.0, 0.0, 0.5])
    assert _display.span_text(numeric) == "time 0 to 7"
    timed = ss.Games.from_arrays(np.array(["2020-01-01T10:30", "2020-01-02T00:00"], dtype="datetime64[m]"),
                                 ["a", "b"], ["b", "a"], [1.0, 0.0])
    assert _display.span_text(timed) == "2020-01-01 10:30 to 2020-01-02 00:00"
    same = ss.Games.from_arrays(np.array(["2020-05-05", "2020-05-05"], dtype="datetime64[D]"), ["a", "b"],
                                ["b", "a"], [1.0, 0.0])
    assert _display.span_text(same) == "2020-05-05"


def test_number_format_by_magnitude():
    assert _display.number_format([1765.36, 1500.0]).format(1765.36) == "1765.4"
    assert _display.number_format([25.123, 3.0]).format(25.123) == "25.12"
    assert _display.number_format([0.06, 0.1]).format(0.06) == "0.0600"
    assert _display.number_format([12, 3400]).format(3400) == "3,400"


# ---------------------------------------------------------------------------- fitted results' HTML
@pytest.mark.parametrize("kind", ["filter", "smoother", "static", "blend"])
def test_fitted_html_has_summary_and_top_player(fits, kind):
    fit = fits[kind]
    html = fit._repr_html_()
    text = _text(html)
    summary = _display.summary_line(fit.method, fit.games)
    assert _display.html.escape(summary) in html
    top = str(fit.ratings()["player"].iloc[0])
    # the best competitor is the first row of the table
    first_row = re.search(r"<tbody><tr[^>]*>(.*?)</tr>", html).group(1)
    assert f">{top}<" in first_row and ">1<" in first_row
    n = len(fit.ratings())
    assert f"\u2026 {n - _display.TOP} more" in text
    rows = re.findall(r"<tr[ >]", html.split("<tbody>")[1])
    assert len(rows) == _display.TOP


def test_blend_html_names_its_weights_and_whose_leaderboard(fits):
    text = _text(fits["blend"]._repr_html_())
    assert "weights elo" in text and "first member's, elo" in text


def test_auto_html_says_what_was_chosen(auto_fit):
    html = auto_fit._repr_html_()
    assert _display.html.escape(_display.summary_line(auto_fit.method, auto_fit.games)) in html
    assert f"chose {auto_fit.chosen!r}".replace("'", "&#x27;") in html
    assert f">{auto_fit.ratings()['player'].iloc[0]}<" in html


def test_html_escapes_names(odd_games):
    run = filters.Elo().fit(odd_games)
    html = run._repr_html_()
    assert "<b>Bold</b>" not in html and "&lt;b&gt;Bold&lt;/b&gt; &amp; Co" in html
    assert "x&lt;y" in html and "O&#x27;Neil &quot;The Wall&quot;" in html
    assert run.ratings()["player"].iloc[0] == "<b>Bold</b> & Co"
    # no competitor, fewer than TOP: no "more" line; dates without time of day
    assert "more</p>" not in html and "2021-03-01 to " in html
    assert "<b>" not in run.ratings()._repr_html_()


def test_html_escapes_method_labels_in_comparison(games):
    table = ss.compare({"<elo>": filters.Elo(), "a&b": filters.Glicko()}, games, progress=False)
    html = table._repr_html_()
    assert "&lt;elo&gt;" in html and "a&amp;b" in html and "<elo>" not in html


def test_smoother_leaderboard_leaves_out_the_band(fits):
    html = fits["smoother"]._repr_html_()
    head = html.split("<thead>")[1].split("</thead>")[0]
    assert ">sd<" in head and ">lower<" not in head and ">upper<" not in head


# ---------------------------------------------------------------------------- ratings()
@pytest.mark.parametrize("kind", ["filter", "smoother", "static", "blend"])
def test_ratings_stay_a_dataframe_equal_to_the_plain_one(fits, kind):
    r = fits[kind].ratings()
    assert isinstance(r, pd.DataFrame)
    plain = pd.DataFrame(r)
    pd.testing.assert_frame_equal(r, plain)
    pd.testing.assert_frame_equal(plain, r, check_frame_type=False)
    assert r.equals(plain) and plain.equals(r)
    # operations keep working, keep the class and the summary
    head = r.head(3)
    assert isinstance(head, _display.Ratings) and head.attrs["summary"] == r.attrs["summary"]
    assert list(r.sort_values("player")["player"]) == sorted(r["player"])
    assert isinstance(r["mean"], pd.Series) and not isinstance(r["mean"], pd.DataFrame)
    assert float(r["mean"].iloc[0]) == r["mean"].max()


def test_ratings_equal_the_columns_computed_directly(fits):
    """The leaderboard's numbers are unchanged: a filter run's from its final state."""
    run = fits["filter"]
    st = run.state.split()[0]
    r = run.ratings()
    by_player = dict(zip(st.players, st.values[:, 0]))
    np.testing.assert_array_equal(r["mean"].to_numpy(), [by_player[p] for p in r["player"]])
    assert list(r.columns) == ["player", "mean", "sd", "games", "rd", "volatility"]


def test_ratings_html_has_summary_caption_and_pandas_table(fits):
    r = fits["smoother"].ratings()
    html = r._repr_html_()
    assert _display.html.escape(r.attrs["summary"]) in html
    assert 'class="dataframe' in html and ">upper<" in html  # pandas' own table, every column
    assert r.attrs["summary"].startswith("LaplaceSmoother(")


def test_ratings_html_off_when_pandas_html_is_off(fits):
    r = fits["filter"].ratings()
    with pd.option_context("display.notebook_repr_html", False):
        assert r._repr_html_() is None


# ---------------------------------------------------------------------------- plots
@pytest.mark.parametrize("kind", ["filter", "smoother", "static", "blend"])
def test_fitted_plot_draws_one_line_per_player(fits, kind):
    fit = fits[kind]
    players = list(fit.ratings()["player"].iloc[[0, 3, 5]])
    ax = fit.plot(players=players)
    assert [ln.get_label() for ln in ax.get_lines()] == players
    fig, given = plt.subplots()
    assert fit.plot(players=players[0], ax=given) is given
    assert [ln.get_label() for ln in given.get_lines()] == players[:1]


def test_fitted_plot_default_is_top_and_options_pass_through(fits, games):
    ax = fits["filter"].plot(top=4, band=0)
    assert len(ax.get_lines()) == 4 and not ax.collections
    with pytest.raises(ValueError, match="no games for competitor"):
        fits["filter"].plot(players=["nobody"])


def test_auto_plot(auto_fit):
    ax = auto_fit.plot(players=list(auto_fit.ratings()["player"].head(2)))
    assert len(ax.get_lines()) == 2


# ---------------------------------------------------------------------------- Comparison
@pytest.fixture(scope="module")
def table(games):
    return ss.compare([filters.Elo(), filters.Glicko2(), filters.EKF(MODEL)], games, split=0.7, progress=False)


def test_compare_returns_a_comparison_dataframe_with_attrs(table, games):
    assert isinstance(table, ss.Comparison) and isinstance(table, pd.DataFrame)
    assert set(table.attrs) >= {"proba", "test", "mode", "split"}
    sub = table[["log_loss", "brier"]]
    assert isinstance(sub, ss.Comparison)
    assert np.array_equal(sub.attrs["test"].row, table.attrs["test"].row)  # pandas copies attrs
    resorted = table.sort_values("brier")
    for name in table.index:
        np.testing.assert_array_equal(resorted.attrs["proba"][name], table.attrs["proba"][name])
    assert list(table.index) == list(table.sort_values("log_loss").index)


def test_comparison_html_highlights_best_and_has_caption(table):
    html = table._repr_html_()
    best = table["log_loss"].idxmin()
    best_row = re.search(r'<tr class="best">(.*?)</tr>', html).group(1)
    assert f">{best}<" in best_row and f'best">{table.loc[best, "log_loss"]:.4f}<' in best_row
    assert html.count('<tr class="best">') == 1
    text = _text(html)
    n_test = len(table.attrs["test"])
    assert "Frozen forecasts" in text and f"of {n_test:,} held-out games" in text
    assert "the last 30% in time; split=0.7" in text
    assert "paired standard error" in text
    other = [n for n in table.index if n != best][0]
    r = table.loc[other]
    assert f"{r['delta_log_loss']:+.4f} \u00b1 {r['delta_se']:.4f}" in text


def test_comparison_html_caption_says_walk_forward_blocks(games):
    t = ss.compare([filters.Elo(), smoothers.Colley()], games, mode="walk_forward", every=40, progress=False)
    assert t.attrs["every"] == 40
    assert "refitted before each block of 40 days" in _text(t._repr_html_())


def test_comparison_html_without_score_columns_falls_back(table):
    html = table[["brier"]]._repr_html_()
    assert 'class="dataframe' in html and "held-out games" in html


def test_comparison_plot_returns_figure(table, games):
    fig = table.plot()
    assert isinstance(fig, matplotlib.figure.Figure) and len(fig.axes) == 1
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert set(table.index) <= set(labels)
    fig2 = table.plot(filters.Elo().fit(games), top=3, title="T")
    assert len(fig2.axes) == 2 and fig2._suptitle.get_text() == "T"


def test_pandas_plotting_stays_reachable(table):
    ax = table.plot_frame.bar(y="log_loss")
    assert len(ax.patches) == len(table)
    assert table["log_loss"].plot() is not None


def test_compare_progress_rejects_other_values(games):
    with pytest.raises(ValueError, match="progress must be True, False or None"):
        ss.compare([filters.Elo()], games, progress="yes")


# ---------------------------------------------------------------------------- progress
def test_compare_quiet_and_loud(games, capsys):
    ss.compare([filters.Elo(), filters.Glicko()], games, progress=False)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""
    ss.compare([filters.Elo(), filters.Glicko()], games, progress=True)
    out = capsys.readouterr()
    assert out.out == ""
    assert "compare" in out.err and "2/2" in out.err


def test_compare_progress_none_stays_quiet_for_quick_work(games, capsys):
    ss.compare([filters.Elo()], games)
    assert capsys.readouterr().err == ""


def test_compare_progress_counts_tunings_and_refits(games, capsys):
    t = ss.compare([filters.Elo(), smoothers.Colley()], games, mode="walk_forward", every=40, tune=True,
                   tune_options={"maxiter": 3}, progress=True)
    err = capsys.readouterr().err
    n_blocks = int(_blocks(t.attrs["test"], 40).max()) + 1
    assert n_blocks > 1
    total = 1 + 1 + n_blocks  # Elo tuned, Elo run online, Colley refitted per block (nothing to tune)
    assert f"{total}/{total}" in err and f"{total + 1}/" not in err
    assert "tuning elo" in err and f"colley: refit {n_blocks}/{n_blocks}" in err


def test_progress_bar_helpers(capsys):
    with _progress.bar(3, "work", False) as b:
        b.update(3)
        _progress.note(b, "x")
    assert capsys.readouterr().err == ""
    with _progress.bar(3, "work", True) as b:
        _progress.note(b, "step one")
        b.update(3)
    err = capsys.readouterr().err
    assert "work" in err and "3/3" in err and "step one" in err
    with _progress.bar(3, "work", None) as b:  # hidden for its first seconds, also when described
        _progress.note(b, "step one")
        b.update(3)
    assert capsys.readouterr().err == ""


def test_interactive_is_false_under_pytest_without_terminal(monkeypatch):
    class NotATerminal:
        def isatty(self):
            return False

    monkeypatch.setattr(sys, "stderr", NotATerminal())
    assert not _progress.in_notebook()
    assert _progress.interactive() is False

    class Terminal(NotATerminal):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert _progress.interactive() is True


def test_crisp_inline_leaves_a_plain_session_alone(monkeypatch):
    from statespace.methods import plots

    monkeypatch.setattr(plots, "_CRISP_CHECKED", False)
    assert plots._crisp_inline() is False and plots._CRISP_CHECKED


# ---------------------------------------------------------------------------- a real notebook
NOTEBOOK_CELLS = [
    "import matplotlib\nimport statespace as ss, filters\n"
    "sim = ss.simulate(ss.SkillModel('logistic', ss.ELO_SCALE, 1500, 200**2, 50, 'half'), 12, 400, seed=2)",
    "fit = filters.Elo().fit(sim.games)\nfit",
    "fit.ratings().head(3)",
    "ss.compare([filters.Elo(), filters.Glicko()], sim.games, progress=False)",
    "ax = fit.plot(top=3)",
    "import matplotlib_inline.config as c\nprint(sorted(c.InlineBackend.instance().figure_formats), "
    "matplotlib.get_backend())",
]


def test_notebook_rich_output_and_retina_figures(tmp_path):
    """Run a small notebook in a real kernel: the fitted result, ratings and comparison show as
    HTML; the figure is a retina PNG (twice the pixels of its shown size)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    import base64
    import os
    import struct

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS]
    env_backend = os.environ.pop("MPLBACKEND", None)  # the kernel picks its inline backend itself
    try:
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                resources={"metadata": {"path": str(tmp_path)}}).execute()
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
    outs = [c.outputs for c in nb.cells]
    html = outs[1][0]["data"]["text/html"]
    assert "Elo(k=32) \u00b7 400 games" in html and "more</p>" in html
    assert "Elo(k=32)" in outs[2][0]["data"]["text/html"]
    assert '<tr class="best">' in outs[3][0]["data"]["text/html"]
    png = [o for o in outs[4] if "image/png" in o.get("data", {})]
    assert len(png) == 1
    raw = base64.b64decode(png[0]["data"]["image/png"])
    width_px = struct.unpack(">I", raw[16:20])[0]
    shown = png[0]["metadata"]["image/png"]["width"]
    assert width_px == pytest.approx(2 * shown, abs=2)
    assert "['retina']" in "".join(o.get("text", "") for o in outs[5])
