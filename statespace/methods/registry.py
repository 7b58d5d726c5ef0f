"""One registry of rating methods, which third-party packages can join.

A method is registered under a short name with a *factory*: a callable taking the method's
settings as keywords and returning a method object (a class, or a classmethod variant such as
``Elo.fide``). ``statespace compare --methods NAME``, ``statespace rate --method NAME`` and
``statespace methods`` read this registry.

::

    from statespace.methods import registry
    registry.names()                      # every registered name
    registry.names(default_only=True)     # those compared by default (not pymc: minutes, not seconds)
    method = registry.get("elo")(k=24)    # the factory; unknown names raise ValueError
    registry.register("mine", MyFilter)   # add one at run time

Where methods come from (read once, on first use; :func:`get` of a built-in name imports only the
module that declares it, see ``BUILTIN_INDEX``):

1. The built-in packages. Every module of ``filters`` (found with :func:`pkgutil.iter_modules`,
   names starting with ``_`` skipped) that defines a module-level ``METHODS = {name: factory}``
   is registered: a new filter is one new file ``filters/<name>.py`` ending with ``METHODS``,
   and no other edit. ``filters.REGISTRY`` is that collection (:func:`collect`). The smoothers
   declare theirs in ``smoothers.REGISTRY`` (the PyMC smoother is imported only when built), with
   ``smoothers.NOT_BY_DEFAULT`` the names left out of the default list. A module leaves some of
   its names out of the default list with ``METHODS_NOT_BY_DEFAULT = {name, ...}``, and any
   factory can with the attribute ``by_default = False``.
2. The entry point group ``statespace.methods`` of installed distributions. Each entry point
   loads a dict ``{name: factory}``, a class with a ``name`` attribute (registered under that
   name), or a module with ``METHODS`` (and optionally ``METHODS_NOT_BY_DEFAULT``). In a
   third-party ``pyproject.toml``::

       [project.entry-points."statespace.methods"]
       stephenson = "my_ratings.stephenson:METHODS"

   An entry point that fails to load, loads something else, or reuses a taken name is skipped
   with a :class:`RegistryWarning`; it never breaks the command line.

Like :mod:`statespace.app.cli`, this module sits on top of everything: it imports the sibling
packages ``filters`` and ``smoothers`` (lazily: a built-in method's module when that method is
asked for, every module when the registry is listed), and nothing else in ``statespace`` imports
it.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import types
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterable

__all__ = ["ENTRY_POINT_GROUP", "Entry", "RegistryWarning", "register", "get", "names", "factories", "entries",
           "collect"]

#: The entry point group third-party packages register methods in.
ENTRY_POINT_GROUP = "statespace.methods"

#: Packages whose methods are built in, in listing order (and ``statespace.ensemble.blend``, whose ``REGISTRY``
#: holds the blend of other methods: it sits on top of the filters, so it is no filter module).
BUILTIN_PACKAGES = ("filters", "smoothers", "statespace.ensemble.blend")

#: Where each built-in method is declared, in listing order: the filter module whose ``METHODS``
#: holds it, or the package whose ``REGISTRY`` holds it (the smoothers). :func:`get` of one of
#: these names imports that module only (not every method's), so ``statespace rate --method elo``
#: loads no smoother. It is an index, not the source: a name missing here (a new filter module)
#: is still found by the full discovery, and tests/test_registry.py checks that the index agrees
#: with it.
BUILTIN_INDEX = {
    "dwz": "filters.dwz",
    "ecf": "filters.ecf",
    "ekf": "filters.ekf",
    "elo": "filters.elo",
    "elo_fide": "filters.elo",
    "elo_mmr": "filters.elo_mmr",
    "glicko": "filters.glicko",
    "glicko2": "filters.glicko",
    "pythagorean": "filters.pythagorean",
    "stephenson": "filters.stephenson",
    "trueskill": "filters.trueskill",
    "wenglin": "filters.wenglin",
    "wenglin_pl": "filters.wenglin",
    "laplace": "smoothers",
    "bradley_terry": "smoothers",
    "pymc": "smoothers",
    "ttt": "smoothers",
    "rts": "smoothers",
    "colley": "smoothers",
    "massey": "smoothers",
    "keener": "smoothers",
    "blend": "statespace.ensemble.blend",
}

# a name must survive the CLI's method specs: "name:key=value,..."
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]*$")


class RegistryWarning(UserWarning):
    """A third-party method could not be registered (it is skipped)."""


@dataclass(frozen=True)
class Entry:
    """One registered method: its ``name``, ``factory``, whether it is in the default list
    (``default``) and where it came from (``source``: a module, or ``"entry point NAME = VALUE"``)."""

    name: str
    factory: Callable[..., Any]
    default: bool = True
    source: str = ""


_entries: dict[str, Entry] = {}
_loaded = False


# ---------------------------------------------------------------------------- registering
def register(name: str, factory: Callable[..., Any], *, default: bool = True, source: str = "",
             replace: bool = False) -> Callable[..., Any]:
    """Register ``factory`` (called with a method's settings as keywords) under ``name``.

    ``default=False``: registered, but left out of the default method list (``statespace
    compare`` without ``--methods``). A name already taken by another factory is a
    ``ValueError`` unless ``replace=True``; registering the same factory again does nothing.
    Returns ``factory``, so it can decorate a class: ``@functools.partial(register, "mine")``.
    """
    _ensure_loaded()
    _add(Entry(_check_name(name), _check_factory(name, factory), bool(default), source or _source_of(factory)),
         replace=replace)
    return factory


def _check_name(name) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"a method name is a letter followed by letters, digits, '_', '-' or '.'; got {name!r}")
    return name


def _check_factory(name: str, factory) -> Callable[..., Any]:
    if not callable(factory):
        raise TypeError(f"method {name!r}: the factory must be callable (a class or a function returning a "
                        f"method), got {type(factory).__name__}")
    return factory


def _source_of(factory) -> str:
    return getattr(factory, "__module__", None) or ""


def _add(entry: Entry, *, replace: bool = False) -> None:
    old = _entries.get(entry.name)
    if old is not None and not replace:
        if old.factory is entry.factory:
            return  # registered already: keep the first entry
        raise ValueError(f"method name {entry.name!r} is already registered (from {old.source or 'elsewhere'}); "
                         f"choose another name or pass replace=True")
    _entries[entry.name] = entry


# ---------------------------------------------------------------------------- reading
def entries(default_only: bool = False) -> list[Entry]:
    """Every registered method, in registration order (built-ins first)."""
    _ensure_loaded()
    return [e for e in _entries.values() if e.default or not default_only]


def names(default_only: bool = False) -> list[str]:
    """Registered names (``default_only``: those in the default method list)."""
    return [e.name for e in entries(default_only)]


def factories(default_only: bool = False) -> dict[str, Callable[..., Any]]:
    """``{name: factory}`` of the registered methods."""
    return {e.name: e.factory for e in entries(default_only)}


def get(name: str) -> Callable[..., Any]:
    """The factory registered under ``name``; an unknown name is a ``ValueError`` listing the
    known ones. A built-in name (``BUILTIN_INDEX``) imports only the module that declares it;
    any other name reads every source first."""
    entry = _entries.get(name)
    if entry is None and not _loaded and name in BUILTIN_INDEX:
        entry = _resolve_builtin(name)
    if entry is None:
        _ensure_loaded()
        entry = _entries.get(name)
    if entry is None:
        raise ValueError(f"unknown method {name!r}; choose from {', '.join(_entries) or 'none registered'}")
    return entry.factory


# ---------------------------------------------------------------------------- discovery
def collect(package: str | types.ModuleType) -> tuple[dict[str, Callable[..., Any]], set[str]]:
    """``METHODS`` of every module of ``package`` (names starting with ``_`` skipped), imported in
    name order: ``({name: factory}, names not by default)``. ``filters`` builds its
    ``REGISTRY`` with it. Two modules declaring one name is an error (a ``ValueError``)."""
    pkg = importlib.import_module(package) if isinstance(package, str) else package
    methods: dict[str, Callable[..., Any]] = {}
    not_default: set[str] = set()
    where: dict[str, str] = {}
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{pkg.__name__}.{info.name}")
        declared, hidden = _declared(module)
        for name, factory in declared.items():
            if name in methods and methods[name] is not factory:
                raise ValueError(f"method name {name!r} is declared by both {where[name]} and {module.__name__}")
            methods[name] = factory
            where[name] = module.__name__
        not_default |= hidden
    return methods, not_default


def _declared(module: types.ModuleType) -> tuple[dict[str, Callable[..., Any]], set[str]]:
    """A module's ``METHODS`` and ``METHODS_NOT_BY_DEFAULT`` (plus factories with ``by_default =
    False``), checked."""
    declared = getattr(module, "METHODS", None)
    if declared is None:
        return {}, set()
    if not isinstance(declared, dict):
        raise TypeError(f"{module.__name__}.METHODS must be a dict {{name: factory}}, got {type(declared).__name__}")
    for name, factory in declared.items():
        _check_factory(_check_name(name), factory)
    hidden = set(getattr(module, "METHODS_NOT_BY_DEFAULT", ()))
    unknown = hidden - set(declared)
    if unknown:
        raise ValueError(f"{module.__name__}.METHODS_NOT_BY_DEFAULT names {sorted(unknown)}, which METHODS lacks")
    return dict(declared), hidden | _hidden_by_attribute(declared)


def _hidden_by_attribute(declared: dict[str, Callable[..., Any]]) -> set[str]:
    return {n for n, f in declared.items() if getattr(f, "by_default", True) is False}


def _resolve_builtin(name: str) -> Entry | None:
    """The entry of one built-in method, importing only the module ``BUILTIN_INDEX`` names
    (``None`` when it does not declare the name: the full discovery then looks for it)."""
    where = BUILTIN_INDEX[name]
    module = importlib.import_module(where)
    if where in BUILTIN_PACKAGES:  # a package's REGISTRY (the smoothers)
        declared = module.REGISTRY
        hidden = set(getattr(module, "NOT_BY_DEFAULT", ())) | _hidden_by_attribute(declared)
    else:  # a filter module's METHODS
        declared, hidden = _declared(module)
    factory = declared.get(name)
    if factory is None:
        return None
    entry = Entry(_check_name(name), _check_factory(name, factory), name not in hidden,
                  where if where in BUILTIN_PACKAGES else where.split(".")[0])
    _entries[name] = entry
    return entry


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True  # first: an entry point that calls register() while loading must not recurse
    resolved = dict(_entries)  # built-ins that get() resolved one by one: listed in their place again
    _entries.clear()
    for package in BUILTIN_PACKAGES:
        _load_builtin(package)
    for name, entry in resolved.items():
        _entries.setdefault(name, entry)
    _load_entry_points()


def _load_builtin(package: str) -> None:
    """A built-in package's ``REGISTRY`` and ``NOT_BY_DEFAULT`` (errors here are bugs: they raise)."""
    pkg = importlib.import_module(package)
    hidden = set(getattr(pkg, "NOT_BY_DEFAULT", ())) | _hidden_by_attribute(pkg.REGISTRY)
    for name, factory in pkg.REGISTRY.items():
        _add(Entry(_check_name(name), _check_factory(name, factory), name not in hidden, package))


def _entry_points() -> Iterable[Any]:
    import importlib.metadata  # here: only a full read of the registry looks at entry points

    return importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)


def _load_entry_points() -> None:
    for ep in _entry_points():
        source = f"entry point {ep.name} = {ep.value}"
        try:
            loaded = ep.load()
            found = _from_loaded(loaded)
            for name in found:
                if name in _entries and _entries[name].factory is not found[name][0]:
                    raise ValueError(f"its method {name!r} is already registered (from {_entries[name].source})")
        except Exception as exc:  # a broken plugin must not break the command line
            warnings.warn(f"skipped the method {source} ({ENTRY_POINT_GROUP}): "
                          f"{type(exc).__name__}: {' '.join(str(exc).split())}", RegistryWarning, stacklevel=2)
            continue
        for name, (factory, default) in found.items():
            _add(Entry(name, factory, default, source))


def _from_loaded(loaded) -> dict[str, tuple[Callable[..., Any], bool]]:
    """``{name: (factory, default)}`` from what an entry point loaded."""
    if isinstance(loaded, types.ModuleType):
        if getattr(loaded, "METHODS", None) is None:
            raise TypeError(f"module {loaded.__name__} has no METHODS dict")
        declared, hidden = _declared(loaded)
    elif isinstance(loaded, dict):
        declared = loaded
        for name, factory in declared.items():
            _check_factory(_check_name(name), factory)
        hidden = _hidden_by_attribute(declared)
    elif isinstance(loaded, type):
        name = getattr(loaded, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"class {loaded.__qualname__} has no string attribute 'name' to register it under")
        declared = {_check_name(name): loaded}
        hidden = _hidden_by_attribute(declared)
    else:
        raise TypeError(f"expected a dict {{name: factory}}, a method class with a 'name', or a module with "
                        f"METHODS; got {type(loaded).__name__}")
    if not declared:
        raise ValueError("it declares no methods")
    return {n: (f, n not in hidden) for n, f in declared.items()}


def _reset() -> None:
    """Forget everything (tests): the next read discovers again."""
    global _loaded
    _entries.clear()
    _loaded = False
