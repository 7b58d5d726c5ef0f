"""Names a package exports without importing them: each is loaded from its module on first use.

``import statespace`` (and ``statespace --help``) must load neither pandas nor the compiled
kernels, so a package's ``__init__`` names its exports in a table and imports them only when asked
(PEP 562's module ``__getattr__``).
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["exports"]


def exports(package: str, names: dict[str, str], submodules: dict[str, str] | None = None):
    """The ``__getattr__`` and ``__dir__`` of ``package`` that load ``names`` (public name -> the
    module, relative to ``package``, that defines it) and ``submodules`` (public name -> the
    module itself, relative to ``package``) on first use and keep them."""
    module = sys.modules[package]
    submodules = submodules or {}

    def __getattr__(name: str):
        if name in names:
            value = getattr(importlib.import_module(f"{package}.{names[name]}"), name)
        elif name in submodules:
            value = importlib.import_module(f"{package}.{submodules[name]}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        setattr(module, name, value)
        return value

    def __dir__():
        return sorted(set(vars(module)) | set(names) | set(submodules))

    return __getattr__, __dir__
