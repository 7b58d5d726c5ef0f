"""statespace.methods.registry and statespace.methods.protocols: one registry of methods that filter modules and
third-party packages (entry point group ``statespace.methods``) join, and the declared interfaces
of a method and a fitted result."""

from __future__ import annotations

import importlib.metadata
import json
import sys
import textwrap
import warnings

import numpy as np
import pytest

import filters
import smoothers
from filters import Elo
from statespace import FixedForecast, Games, compare, scenarios
from statespace.app import cli
from statespace.methods import registry
from statespace.methods.protocols import Configurable, Fitted, Method, OnlineMethod, TunableMethod, is_online


@pytest.fixture(scope="module")
def games():
    return scenarios.get("balanced", seed=2).games


@pytest.fixture
def fresh(monkeypatch):
    """An empty registry that discovers again on first use; the real one comes back afterwards."""
    monkeypatch.setattr(registry, "_entries", {})
    monkeypatch.setattr(registry, "_loaded", False)
    return registry


def _fake_entry_points(monkeypatch, *specs: tuple[str, str]):
    """``importlib.metadata.entry_points`` answering ``(name, value)`` pairs for our group."""
    eps = [importlib.metadata.EntryPoint(name, value, registry.ENTRY_POINT_GROUP) for name, value in specs]
    real = importlib.metadata.entry_points

    def entry_points(**params):
        if params.get("group") == registry.ENTRY_POINT_GROUP:
            return importlib.metadata.EntryPoints(eps)
        return real(**params)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


PLUGIN = '''
"""A third-party package's filter: Elo under another name."""
from filters.elo import Elo


class PluginElo(Elo):
    """Elo from a plugin."""

    name = "plugin_elo"


class SlowElo(Elo):
    """A plugin method that is registered but not compared by default."""

    name = "slow_elo"
    by_default = False


METHODS = {"plugin_elo": PluginElo, "slow_elo": SlowElo}
CLASH = {"elo": PluginElo}
NOT_A_METHOD = 42
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A module ``ss_plugin_demo`` importable from a temporary folder."""
    (tmp_path / "ss_plugin_demo.py").write_text(PLUGIN)
    (tmp_path / "ss_plugin_module.py").write_text(textwrap.dedent('''
        from filters.elo import Elo

        class ModuleElo(Elo):
            """Elo declared by a module's METHODS."""
            name = "module_elo"

        class HiddenElo(Elo):
            """Elo left out of the default list."""
            name = "hidden_elo"

        METHODS = {"module_elo": ModuleElo, "hidden_elo": HiddenElo}
        METHODS_NOT_BY_DEFAULT = {"hidden_elo"}
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for name in ("ss_plugin_demo", "ss_plugin_module"):
        sys.modules.pop(name, None)


# ---------------------------------------------------------------------------- built-ins
def test_builtin_names_and_default_list():
    names = registry.names()
    assert set(filters.REGISTRY) | set(smoothers.REGISTRY) <= set(names)
    assert {"elo", "elo_fide", "glicko", "glicko2", "trueskill", "wenglin", "ekf", "laplace", "bradley_terry",
            "pymc"} <= set(names)
    default = registry.names(default_only=True)
    assert "pymc" not in default and "elo" in default and "laplace" in default
    assert registry.get("elo") is Elo and registry.get("elo_fide") == Elo.fide
    assert registry.factories() == {n: registry.get(n) for n in names}
    # built-ins first: filters, then smoothers
    assert names[: len(filters.REGISTRY)] == list(filters.REGISTRY)


def test_the_builtin_index_agrees_with_the_discovery(fresh):
    """``registry.BUILTIN_INDEX`` (where ``get`` looks a built-in name up without importing every
    method's module) lists every built-in method, in listing order, at the module declaring it."""
    for name in registry.BUILTIN_INDEX:  # one at a time, as the CLI asks
        fresh.get(name)
    lazily = {e.name: e for e in fresh.entries()}  # then the full read
    builtin = [n for n in fresh.names() if lazily[n].source in registry.BUILTIN_PACKAGES]
    assert builtin == list(registry.BUILTIN_INDEX)
    fresh._reset()
    eager = {e.name: e for e in fresh.entries()}
    assert list(eager) == list(lazily)
    for name, where in registry.BUILTIN_INDEX.items():
        assert lazily[name] == eager[name], name
        module = sys.modules[where]
        declared = module.REGISTRY if where in registry.BUILTIN_PACKAGES else module.METHODS
        assert declared[name] is eager[name].factory


def test_a_builtin_name_imports_its_module_only():
    """``get('elo')`` and ``statespace rate --method elo`` import no smoother (the filters package
    itself still imports every filter module), and the command line's ``--help`` neither NumPy,
    pandas nor numba."""
    import subprocess

    code = ("import sys\n"
            "from statespace.methods import registry\n"
            "registry.get('elo')\n"
            "print(sorted(m for m in ('smoothers', 'smoothers.laplace', 'pytensor', 'pymc') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    code = ("import sys\n"
            "from statespace.app import cli\n"
            "assert cli.main(['--help']) == 0\n"
            "print(sorted(m for m in ('numpy', 'pandas', 'numba', 'scipy', 'filters') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_the_clis_modes_are_comparisons():
    from statespace import compare as compare_function

    assert cli.MODES == sys.modules[compare_function.__module__].MODES


def test_filters_registry_is_every_module_methods():
    """``filters.REGISTRY`` is collected from the modules' METHODS, not written by hand."""
    import pkgutil

    expected = {}
    modules = [m.name for m in pkgutil.iter_modules(filters.__path__) if not m.name.startswith("_")]
    assert {"ekf", "elo", "glicko", "trueskill", "wenglin", "stephenson"} <= set(modules)
    for module in modules:
        expected.update(getattr(sys.modules[f"filters.{module}"], "METHODS", {}))
    assert filters.REGISTRY == expected
    # pythagorean rates from each side's points, which the default scenario lacks; elo_mmr rates contests only;
    # wenglin_pl (for matches) adds nothing to Bradley-Terry's row on games
    assert filters.NOT_BY_DEFAULT == {"pythagorean", "elo_mmr", "wenglin_pl"}
    assert {"Elo", "Glicko", "Glicko2", "TrueSkill", "WengLin", "EKF", "REGISTRY"} <= set(filters.__all__)


def test_unknown_name_is_a_value_error_listing_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown method 'nosuch'; choose from .*elo.*laplace"):
        registry.get("nosuch")


@pytest.mark.parametrize("argv", [["compare", "--methods", "nosuch"], ["rate", "--scenario", "balanced",
                                                                       "--method", "nosuch"]])
def test_cli_unknown_method_is_one_line_and_exit_2(capsys, argv):
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("statespace: error: unknown method 'nosuch'; choose from ") and "elo" in err


# ---------------------------------------------------------------------------- register()
def test_register_checks_names_and_clashes(fresh):
    class Mine(Elo):
        name = "mine"

    assert fresh.register("mine", Mine, default=False) is Mine
    fresh.register("mine", Mine, default=False)  # the same factory again: nothing happens
    assert "mine" in fresh.names() and "mine" not in fresh.names(default_only=True)
    with pytest.raises(ValueError, match="already registered"):
        fresh.register("elo", Mine)
    fresh.register("mine", Elo, replace=True)
    assert fresh.get("mine") is Elo
    for bad in ("", "a b", "elo:k", "x,y", "k=1", 3):
        with pytest.raises(ValueError, match="method name"):
            fresh.register(bad, Mine)
    with pytest.raises(TypeError, match="callable"):
        fresh.register("thing", 42)


def test_collect_reads_public_modules_only(tmp_path, monkeypatch):
    pkg = tmp_path / "ss_tmp_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "one.py").write_text("from filters import Elo\nMETHODS = {'one': Elo}\n")
    (pkg / "two.py").write_text("from filters import Elo\nMETHODS = {'two': Elo.fide}\nMETHODS_NOT_BY_DEFAULT = {'two'}\n")
    (pkg / "helpers.py").write_text("X = 1\n")
    (pkg / "_private.py").write_text("raise RuntimeError('private modules are not imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        methods, hidden = registry.collect("ss_tmp_pkg")
        assert methods == {"one": Elo, "two": Elo.fide} and hidden == {"two"}
        (pkg / "three.py").write_text("from filters import Elo\nMETHODS = {'one': Elo.fide}\n")
        with pytest.raises(ValueError, match="'one' is declared by both"):
            registry.collect("ss_tmp_pkg")
    finally:
        for name in [m for m in sys.modules if m.startswith("ss_tmp_pkg")]:
            del sys.modules[name]


NEW_FILTER = '''
"""A filter added as one file: Elo with a smaller K, standing in for a new rule."""
from filters.elo import Elo


class TinyElo(Elo):
    """Elo with K = 10 by default (a stand-in for a new filter module)."""

    name = "tiny_elo"

    def __init__(self, k: float = 10.0, **kwargs):
        super().__init__(k=k, **kwargs)


METHODS = {"tiny_elo": TinyElo}
'''


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
def test_new_filter_file_runs_everywhere_without_other_edits(tmp_path, monkeypatch, fresh, capsys, games):
    """A module dropped into the filters package folder (here: a second folder of the package's
    ``__path__``) ending with METHODS is found by the same collection that builds
    ``filters.REGISTRY``, and then runs through compare, fit, tune and the CLI by name."""
    (tmp_path / "tiny_elo.py").write_text(NEW_FILTER)
    monkeypatch.setattr(filters, "__path__", [*filters.__path__, str(tmp_path)])
    try:
        methods, hidden = registry.collect(filters)
        assert "tiny_elo" in methods and set(filters.REGISTRY) <= set(methods)
        # what re-importing filters/__init__.py does
        monkeypatch.setattr(filters, "REGISTRY", methods)
        monkeypatch.setattr(filters, "NOT_BY_DEFAULT", hidden)
        factory = fresh.get("tiny_elo")
        method = factory()
        assert isinstance(method, OnlineMethod) and is_online(method)
        fitted = method.fit(games)
        assert isinstance(fitted, Fitted) and fitted.predict_proba(games).shape == (len(games), 3)
        tuned = method.tune(games, standard_errors=False, maxiter=20)
        assert set(tuned.tuning.params) == set(method.tunable(games))
        table = compare({"tiny": method, "elo": Elo()}, games, mode="online", tune=True)
        assert set(table.index) == {"tiny", "elo"}
        assert "tiny_elo" in fresh.names(default_only=True)
        code = cli.main(["compare", "--methods", "tiny_elo:k=12,elo", "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert {r["method"] for r in json.loads(out)["methods"]} == {"tiny_elo:k=12", "elo"}
        assert cli.main(["compare", "--methods", "tiny_elo:kk=1"]) == 2  # settings read through Elo
        assert "its settings are k, home, initial_rating" in capsys.readouterr().err
        assert cli.main(["compare", "--methods", "tiny_elo", "--tune"]) == 0
        assert cli.main(["rate", "--scenario", "balanced", "--method", "tiny_elo", "--top", "3"]) == 0
        assert cli.main(["methods"]) == 0
        assert "tiny_elo" in capsys.readouterr().out
    finally:
        sys.modules.pop("filters.tiny_elo", None)


# ---------------------------------------------------------------------------- entry points
def test_entry_points_dict_class_and_module(fresh, monkeypatch, plugin, capsys):
    _fake_entry_points(monkeypatch, ("demo", "ss_plugin_demo:METHODS"), ("one", "ss_plugin_demo:PluginElo"),
                       ("mod", "ss_plugin_module"))
    import ss_plugin_demo

    names = fresh.names()
    assert {"plugin_elo", "slow_elo", "module_elo", "hidden_elo"} <= set(names)
    assert fresh.get("plugin_elo") is ss_plugin_demo.PluginElo
    default = fresh.names(default_only=True)
    assert "plugin_elo" in default and "module_elo" in default
    assert "slow_elo" not in default and "hidden_elo" not in default and "pymc" not in default
    # third-party names come after the built-ins
    assert names.index("plugin_elo") > names.index("pymc")
    entry = {e.name: e for e in fresh.entries()}["plugin_elo"]
    assert entry.source == "entry point demo = ss_plugin_demo:METHODS"
    code = cli.main(["compare", "--methods", "plugin_elo:k=20,elo", "--json"])
    out, err = capsys.readouterr()
    assert code == 0 and err == ""
    assert {r["method"] for r in json.loads(out)["methods"]} == {"plugin_elo:k=20", "elo"}
    assert cli.main(["methods"]) == 0
    listing = capsys.readouterr().out
    assert "plugin_elo" in listing and "Elo from a plugin." in listing
    assert [line for line in listing.splitlines() if line.startswith("slow_elo")][0].endswith(
        "(not compared by default)")


def test_broken_entry_points_warn_and_are_skipped(fresh, monkeypatch, plugin):
    _fake_entry_points(monkeypatch, ("missing", "ss_no_such_module_xyz:METHODS"),
                       ("clash", "ss_plugin_demo:CLASH"), ("number", "ss_plugin_demo:NOT_A_METHOD"),
                       ("nomethods", "json"), ("good", "ss_plugin_demo:METHODS"))
    with pytest.warns(registry.RegistryWarning) as record:
        names = fresh.names()
    messages = [str(w.message) for w in record]
    assert len(messages) == 4
    assert any("missing" in m and "ModuleNotFoundError" in m for m in messages)
    assert any("clash" in m and "'elo' is already registered" in m for m in messages)
    assert any("number" in m and "got int" in m for m in messages)
    assert any("nomethods" in m and "no METHODS" in m for m in messages)
    assert "plugin_elo" in names and fresh.get("elo") is Elo  # the built-in kept its name


def test_broken_entry_point_never_breaks_the_cli(fresh, monkeypatch, plugin, capsys):
    _fake_entry_points(monkeypatch, ("missing", "ss_no_such_module_xyz:METHODS"),
                       ("good", "ss_plugin_demo:METHODS"))
    code = cli.main(["compare", "--methods", "elo,plugin_elo", "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("statespace: warning: skipped the method entry point missing = ss_no_such_module_xyz:METHODS")
    assert len(json.loads(out)["methods"]) == 2


# ---------------------------------------------------------------------------- protocols
SMALL = scenarios.get("balanced", seed=5).games.take(np.arange(150))
# the same games with each side's points (a win 2-0, a draw 1-1), for methods that rate from scores
SMALL_SCORED = Games.from_arrays(SMALL.time, SMALL.a_name, SMALL.b_name, neutral=SMALL.neutral,
                                 score_a=2.0 * SMALL.score, score_b=2.0 - 2.0 * SMALL.score)


@pytest.mark.filterwarnings("ignore::statespace.SeenGamesWarning")  # forecasts games it fitted, on purpose
@pytest.mark.filterwarnings("ignore:BradleyTerry. the maximum-likelihood fit does not exist")
@pytest.mark.parametrize("name", [n for n in registry.names() if n != "pymc"])
def test_every_registered_method_satisfies_method_and_its_fit_fitted(name):
    method = registry.get(name)()
    assert isinstance(method, Method), name
    assert isinstance(method.name, str)
    games = SMALL_SCORED if getattr(method, "needs_scores", False) else SMALL
    if not getattr(method, "rates_games", True):  # rates contests only: refuses the games, rates them as matches
        from statespace.data.matches import Matches

        with pytest.raises(ValueError, match=rf"^{name} rates contests of many entrants.*Matches.from_games"):
            method.fit(games)
        run = method.fit(Matches.from_games(games))
        assert {"player", "mean"} <= set(run.ratings().columns)
        assert {"time", "player", "mean"} <= set(run.trajectories().columns)
        return
    fitted = method.fit(games)
    assert isinstance(fitted, Fitted), name
    if getattr(method, "learns_draws", False):
        # a setting left to the games (TrueSkill's draw_probability=None): the fitted method has it fixed
        assert type(fitted.method) is type(method) and not fitted.method.learns_draws
        assert fitted.method.get_params() == method.resolved(games).get_params() != method.get_params()
    else:
        assert fitted.method is method
    assert fitted.games is games
    p = fitted.predict_proba(games)
    assert p.shape == (len(games), 3) and np.allclose(p.sum(axis=1), 1.0)
    assert {"player", "mean", "games"} <= set(fitted.ratings().columns)
    assert {"time", "player", "mean"} <= set(fitted.trajectories().columns)
    if name in filters.REGISTRY or name == "blend":  # the blend pools its online members' runs
        assert isinstance(method, OnlineMethod) and isinstance(method, TunableMethod)
        assert isinstance(method, Configurable)
        assert is_online(method)
        runner = fitted.blend if name == "blend" else method  # a blend runs with the weights it fitted
        assert runner.run(games).proba.shape == (len(games), 3)
        assert type(method.with_params()) is type(method)
        assert repr(type(method)(**method.get_params())) == repr(method)
    else:
        assert not is_online(method)
        if not isinstance(method, Configurable):
            pytest.xfail("smoothers get get_params/with_params with the Smoother base")


def test_pymc_method_is_declared_without_fitting():
    method = registry.get("pymc")()
    assert isinstance(method, Method) and not is_online(method)


def test_is_online_prefers_the_declared_flag():
    class Declared:
        online = False
        name = "declared"

        def fit(self, games):
            return self

        def run(self, games):  # has run, but says it is not online
            raise AssertionError("not called")

    assert not is_online(Declared())
    assert is_online(FixedForecast(np.full(len(SMALL), 0.5), SMALL))  # run() without the flag
    assert not is_online(smoothers.LaplaceSmoother())


def test_compare_refuses_objects_that_are_not_methods(games):
    with pytest.raises(TypeError, match="has no fit"):
        compare({"x": object()}, games)
    with pytest.raises(TypeError, match="has no name"):
        compare([object()], games)


def test_only_methods_with_something_to_tune_are_tuned(games):
    class Settled(Elo):
        """Tunable in form, with nothing to tune."""

        name = "settled"

        def tunable(self, games):
            return {}

    from test_compare import Coin  # not tunable at all

    assert isinstance(Settled(), TunableMethod) and not isinstance(Coin(), TunableMethod)
    table = compare({"elo": Elo(), "settled": Settled(), "coin": Coin()}, games, tune=True,
                    tune_options={"standard_errors": False, "maxiter": 10})
    tuned = table.attrs["tuned"]
    assert set(tuned) == {"elo"} and set(tuned["elo"].params) == set(Elo().tunable(games))
    assert np.isnan(table.loc["settled", "tune_seconds"]) and np.isnan(table.loc["coin", "tune_seconds"])


def test_warnings_from_other_categories_are_not_swallowed(fresh, monkeypatch):
    def noisy(**params):
        warnings.warn("something else", DeprecationWarning)
        return importlib.metadata.EntryPoints([])

    monkeypatch.setattr(importlib.metadata, "entry_points", noisy)
    with pytest.warns(DeprecationWarning, match="something else"):
        known = cli.registry()
    assert "elo" in known
