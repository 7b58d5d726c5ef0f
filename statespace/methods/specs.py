"""Method specs of the command line: ``name`` or ``name:key=value,...`` read into method
objects of the registry, and ``--periods`` specs (:mod:`statespace.app.cli` uses them)."""

from __future__ import annotations

import contextlib
import inspect
import math
import sys
import warnings
from typing import Any, Callable

from statespace.methods import registry as _registry

PROG = "statespace"


class CLIError(Exception):
    """A user error: reported as one line on stderr, exit status 2."""


def one_line(text: str) -> str:
    return " ".join(str(text).split())


@contextlib.contextmanager
def _plugin_warnings():
    """Reading the registry: a broken plugin's :class:`~statespace.methods.registry.RegistryWarning` is
    one line on stderr (and the rest works); other warnings pass on."""
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", _registry.RegistryWarning)
            yield
    finally:  # also when the name is unknown: the broken plugin may be why
        for w in caught:
            if issubclass(w.category, _registry.RegistryWarning):
                print(f"{PROG}: warning: {one_line(w.message)}", file=sys.stderr)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def registry(default_only: bool = False) -> dict[str, Callable]:
    """Every method name the CLI knows, with its factory: :mod:`statespace.methods.registry` (the
    built-in filters and smoothers, then third-party methods of the ``statespace.methods`` entry
    point group). ``default_only``: the default method list (without PyMC's smoother). This
    imports every method's module; :func:`parse_method` looks up one name."""
    with _plugin_warnings():
        return _registry.factories(default_only=default_only)


def _lookup(name: str) -> Callable:
    """The factory of one method name, importing only what it needs (a built-in method's own
    module); an unknown name is a :class:`CLIError` listing the known ones."""
    with _plugin_warnings():
        try:
            return _registry.get(name)
        except ValueError as exc:
            raise CLIError(one_line(exc)) from None


def _convert(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(low)
    except ValueError:
        pass
    try:
        return float(low)
    except ValueError:
        return text.strip()


def keyword_names(ctor) -> list[str] | None:
    """Keyword names a constructor accepts, or ``None`` if it takes any keyword. A classmethod
    variant taking ``**kwargs`` (such as ``Elo.fide``) is read through its class, and a subclass
    whose ``__init__`` passes ``**kwargs`` on through its parent class."""
    try:
        sig = inspect.signature(ctor)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    names = [p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        if inspect.ismethod(ctor) and isinstance(ctor.__self__, type):
            inner = keyword_names(ctor.__self__)
        elif isinstance(ctor, type) and len(ctor.__mro__) > 2 and ctor.__mro__[1] is not object:
            inner = keyword_names(ctor.__mro__[1])
        else:
            inner = None
        return None if inner is None else list(dict.fromkeys(names + inner))
    return names


def _settings(what: str, word: str, text: str) -> dict[str, Any]:
    """``key=value,...`` as a dict of converted values (:func:`_convert`); ``CLIError`` naming
    ``what`` on an item without ``=`` or a key given twice."""
    kwargs: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key or not value.strip():
            raise CLIError(f"{what}: {word} {item!r} must look like key=value")
        if key in kwargs:
            raise CLIError(f"{what}: {word} {key!r} given twice")
        kwargs[key] = _convert(value)
    return kwargs


def whole_number(flag: str, allowed: Callable[[int], bool], rule: str) -> Callable[[str], int]:
    """An argparse ``type``: the text as an int, or ``ArgumentTypeError`` "``flag`` must be a whole
    number ``rule``, got ..." when it is not a whole number or ``allowed(value)`` is false."""
    import argparse

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not allowed(value):
            raise argparse.ArgumentTypeError(f"{flag} must be a whole number {rule}, got {text!r}")
        return value

    return parse


def parse_scenario(spec: str) -> tuple[str, dict[str, Any]]:
    """``name`` or ``name:key=value,...`` (``league:drift_sd=40,n_competitors=40``) as the
    scenario's name and parameters, checked by :func:`statespace.model.scenarios.check_params`;
    ``CLIError`` on an unknown scenario or parameter."""
    from statespace.model import scenarios

    name, _, params = spec.strip().partition(":")
    name = name.strip()
    kwargs = _settings(f"scenario {name!r}", "parameter", params)
    try:
        scenarios.check_params(name, kwargs)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    return name, kwargs


def parse_method(spec: str, known: dict[str, Callable] | None = None):
    """Build a method from ``name`` or ``name:key=value,...``; raises ``CLIError`` on bad specs.
    ``known``: ``{name: factory}`` to choose from (default: the registry, one name looked up)."""
    spec = spec.strip()
    name, _, settings = spec.partition(":")
    name = name.strip()
    if not name:
        raise CLIError(f"empty method name in {spec!r}")
    if known is None:
        ctor = _lookup(name)
    elif name not in known:
        raise CLIError(f"unknown method {name!r}; choose from {', '.join(known) or 'none registered'}")
    else:
        ctor = known[name]
    kwargs = _settings(f"method {name!r}", "setting", settings)
    allowed = keyword_names(ctor)
    if allowed is not None:
        bad = [k for k in kwargs if k not in allowed]
        if bad:
            raise CLIError(f"method {name!r} has no setting{'s' if len(bad) > 1 else ''} "
                           f"{', '.join(map(repr, bad))}; its settings are {', '.join(allowed) or 'none'}")
    try:
        return ctor(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CLIError(f"method {spec!r}: {exc}") from None


def split_specs(text: str) -> list[str]:
    """``"elo:k=24,home=60,elo_fide"`` -> ``["elo:k=24,home=60", "elo_fide"]``: a comma-separated
    item with ``=`` but no ``:`` continues the settings of the method before it."""
    specs: list[str] = []
    for item in (s.strip() for s in text.split(",")):
        if not item:
            continue
        if ":" in item or "=" not in item:
            specs.append(item)
        elif not specs:
            raise CLIError(f"setting {item!r} comes before any method name")
        else:
            specs[-1] += ("," if ":" in specs[-1] else ":") + item
    return specs


def parse_methods(values: list[str] | None, *, mode: str = "frozen") -> dict[str, Any]:
    """``--methods`` values -> ``{display name: method}``; default: every method of the default
    list (in online mode, those that learn game by game: :func:`statespace.methods.protocols.is_online`)."""
    if not values:
        from statespace.methods.protocols import is_online

        out = {}
        for name, ctor in registry(default_only=True).items():
            method = ctor()
            if mode == "online" and not is_online(method):
                continue
            out[name] = method
        if not out:
            raise CLIError("no registered methods to compare")
        return out
    out = {}
    for value in values:
        for spec in split_specs(value):
            method = parse_method(spec)
            label = spec.replace(" ", "")
            if label in out:
                raise CLIError(f"method {label!r} is given twice")
            out[label] = method
    if not out:
        raise CLIError("--methods names no method")
    return out


def parse_periods(spec: str | None):
    """``--periods`` -> keyword arguments of :meth:`Games.with_periods` (or ``None``)."""
    if spec is None:
        return None
    text = spec.strip()
    if text.lower().startswith("column:"):
        column = text[len("column:"):].strip()
        if not column:
            raise CLIError("--periods column: needs a column name, e.g. column:season")
        return {"column": column}
    if text.lower() in ("week", "month", "year", "game"):
        return {"every": text.lower()}
    try:
        days = float(text)
    except ValueError:
        raise CLIError(f"--periods must be a number of days, week, month, year, game or column:NAME; "
                       f"got {spec!r}") from None
    if not (math.isfinite(days) and days > 0):
        raise CLIError(f"--periods: a period length must be a positive number of days, got {spec!r}")
    return {"every": days}


