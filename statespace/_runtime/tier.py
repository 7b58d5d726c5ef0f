"""Small work interpreted, big or repeated work compiled.

Compiling a loop costs about a second (a filter's whole run, two to five): far more than running
it over a few hundred games as plain Python. So a compiled function of these packages called
from Python, whose code for these argument types is neither compiled in this process nor in the
disk cache, first runs as its *Python twin* (:func:`python_twin`: the same source, with every
compiled function it reaches replaced by its own twin, as ``NUMBA_DISABLE_JIT=1`` would have it),
and is compiled once the time spent interpreting it would reach :data:`BUDGET`: the break-even
rule of ski rental (rent until the rent paid equals the price of buying), which never pays more
than twice what the better choice in hindsight would have (Karlin, Manasse, Rudolph and Sleator
1988, "Competitive snoopy caching", Algorithmica 3), here with the budget about a compile's cost. Before
each call the time it would take interpreted is predicted from the size of its array arguments
(:func:`work`, or the argument a loop of :mod:`statespace._runtime.jit` names as its work: its
games) at the rate measured on its earlier calls (:data:`PRIOR_RATE` before the first), so one
big call compiles at once.

The twin computes what the compiled code computes, operation by operation in the same IEEE
doubles; where plain Python differs (a float division by zero, an ``exp`` overflow or the ``log``
of zero raises where compiled code gives an infinity; a construct only numba knows), the call is
run again compiled, from copies of the array arguments as they were. NumPy's floating-point
warnings are silenced in the twin, as compiled code has none.

``STATESPACE_JIT`` chooses: ``auto`` (the default, as above), ``always`` (compile on first use,
never interpret) or ``never`` (interpret everything that can be: slow, for stepping through a
kernel in a debugger or reading it in a lesson). :func:`mode` reads it on every call, so a test
can change it at run time.
"""

from __future__ import annotations

import os
import time
import types as pytypes
import warnings

import numpy as np
from numba._dispatcher import compute_fingerprint
from numba.core.dispatcher import Dispatcher
from numba.core.typing.typeof import Purpose, typeof

__all__ = ["BUDGET", "PRIOR_RATE", "PRIOR_RATE_PER_UNIT", "Tier", "mode", "python_twin", "work", "run", "adopt",
           "exempt", "load_cached"]

#: seconds a function may spend interpreted before it is compiled: about what compiling one of the
#: run loops costs on a laptop core, so interpreting never costs more than compiling would have
BUDGET = 1.0
#: seconds per element of the array arguments assumed for a function's first interpreted call
#: (later calls use the measured rate)
PRIOR_RATE = 2e-6
#: seconds per game (or per unit a loop names as its work) assumed for a loop's first interpreted
#: call: a filter's game loop takes 5 to 50 microseconds a game in plain Python
PRIOR_RATE_PER_UNIT = 3e-5
#: exceptions after which a twin's call is run again compiled: any, since the compiled code is the
#: reference (plain Python raises where it gives an infinity or NaN: ``math.exp(1000.0)``,
#: ``math.log(0.0)``, ``1.0 / 0.0``; a numba-only construct); an error compiled code raises too
#: reaches the caller from there. An interrupt is not retried.
_RETRY_COMPILED = (Exception,)
#: top-level packages whose modules hold no compiled function of ours: kept as they are in twins
_PLAIN_PACKAGES = frozenset({"math", "cmath", "numpy", "numba", "scipy", "llvmlite", "builtins", "operator"})

_MODES = ("auto", "always", "never")


def mode() -> str:
    """``STATESPACE_JIT`` (``auto``, ``always`` or ``never``; ``auto`` when unset). An unknown value
    is an error naming the variable, rather than a silent default."""
    value = os.environ.get("STATESPACE_JIT", "auto").strip().lower() or "auto"
    if value not in _MODES:
        raise ValueError(f"STATESPACE_JIT={value!r}: expected one of {', '.join(_MODES)}")
    return value


class Tier:
    """How one compiled function (or one specialised loop) has been run: seconds spent interpreted,
    the measured seconds per unit of :func:`work`, and whether it is compiled now."""

    __slots__ = ("spent", "rate", "compiled")

    def __init__(self, prior: float | None = None):
        self.spent = 0.0
        self.rate = PRIOR_RATE if prior is None else prior
        self.compiled = False

    def interpret(self, units: float) -> bool:
        """Whether a call of ``units`` of work should run interpreted (the module docstring's rule)."""
        if self.compiled:
            return False
        m = mode()
        if m != "auto":
            return m == "never"
        return self.spent + self.rate * units <= BUDGET

    def record(self, seconds: float, units: float) -> None:
        self.spent += seconds
        if units > 0:
            self.rate = seconds / units


def work(args) -> float:
    """A call's size: the elements of its array arguments (in tuples too), at least 1."""
    total = 0
    for a in args:
        if isinstance(a, np.ndarray):
            total += a.size
        elif isinstance(a, tuple):
            total += work(a) - 1
    return max(total, 1)


def _writable(args, out):
    """The writable arrays among ``args`` (in tuples too), appended to ``out``."""
    for a in args:
        if isinstance(a, np.ndarray):
            if a.flags.writeable:
                out.append(a)
        elif isinstance(a, tuple):
            _writable(a, out)
    return out


def run(tier: Tier, twin, args, compiled, units: float | None = None):
    """``twin(*args)`` interpreted when ``tier`` says so (timed into it), else ``compiled()``; a
    twin that raises has its array arguments restored and the call compiled instead. ``units``:
    the call's work (default :func:`work`)."""
    if units is None:
        units = work(args)
    if tier.interpret(units):
        writable = _writable(args, [])
        saved = [a.copy() for a in writable]
        t0 = time.perf_counter()
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                result = twin(*args)
        except _RETRY_COMPILED:
            for a, before in zip(writable, saved):
                a[...] = before
        else:
            tier.record(time.perf_counter() - t0, units)
            return result
    result = compiled()
    tier.compiled = True
    return result


# ---------------------------------------------------------------------------- twins
_TWINS: dict[int, object] = {}  # id of a compiled function, module or Python function -> its twin
_KEEP: list = []  # the originals of _TWINS' keys, kept alive so their ids stay theirs


class _Globals(dict):
    """A module's globals as a twin sees them: each name's twin, kept from its first lookup (a
    dict subclass, so the interpreter looks names up through ``__missing__``). Kept, like numba,
    which freezes a module's globals into the code it compiles."""

    def __init__(self, base: dict):
        super().__init__(__builtins__=base.get("__builtins__", __builtins__))
        self._base = base

    def __missing__(self, name):
        if name in self._base:
            value = self._base[name]
        else:  # a builtin (range, min, ...): kept here too, so that its lookup raises no KeyError each time
            builtins = self["__builtins__"]
            value = (builtins if isinstance(builtins, dict) else vars(builtins))[name]  # KeyError: a NameError
        twin = self[name] = python_twin(value)
        return twin


class _Module:
    """A module as a twin sees it: each attribute's twin, kept from its first access."""

    def __init__(self, module):
        self.__dict__["_module"] = module

    def __getattr__(self, name):
        twin = self.__dict__[name] = python_twin(getattr(self._module, name))
        return twin


_GLOBALS: dict[int, _Globals] = {}


def _twin_function(fn):
    g = _GLOBALS.get(id(fn.__globals__))
    if g is None:
        g = _GLOBALS[id(fn.__globals__)] = _Globals(fn.__globals__)
        _KEEP.append(fn.__globals__)
    closure = None
    if fn.__closure__ is not None:
        cells = []
        for cell in fn.__closure__:
            try:
                cells.append(pytypes.CellType(python_twin(cell.cell_contents)))
            except ValueError:  # an empty cell
                cells.append(pytypes.CellType())
        closure = tuple(cells)
    twin = pytypes.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, closure)
    twin.__kwdefaults__ = fn.__kwdefaults__
    twin.__qualname__ = fn.__qualname__
    twin.__doc__ = fn.__doc__
    twin.__module__ = fn.__module__
    return twin


def python_twin(obj):
    """``obj`` as plain Python: a compiled function (numba dispatcher, or anything with a
    ``py_func``) becomes its Python function with every compiled function it reaches through its
    globals, closure or modules replaced by twins; a Python function reaching compiled ones the
    same; a tuple element by element; anything else is itself."""
    key = id(obj)
    twin = _TWINS.get(key)
    if twin is not None:
        return twin
    if isinstance(obj, Dispatcher) or (hasattr(obj, "py_func") and callable(obj)):
        twin = _twin_function(obj.py_func)
    elif isinstance(obj, pytypes.FunctionType) and obj.__module__ and \
            obj.__module__.partition(".")[0] not in _PLAIN_PACKAGES:
        twin = _twin_function(obj)
    elif isinstance(obj, pytypes.ModuleType):
        if obj.__name__.partition(".")[0] in _PLAIN_PACKAGES:
            return obj
        twin = _Module(obj)
    elif isinstance(obj, tuple) and type(obj) is tuple:
        twin = tuple(python_twin(x) for x in obj)
        if all(t is x for t, x in zip(twin, obj)):
            return obj
        return twin  # not memoised: tuples are often made afresh
    else:
        return obj
    _TWINS[key] = twin
    _KEEP.append(obj)
    return twin


# ---------------------------------------------------------------------------- compiled functions
def load_cached(dispatcher, argtypes) -> bool:
    """Whether ``dispatcher`` has code for ``argtypes`` in this process, or now has after loading
    it from numba's disk cache (as ``Dispatcher.compile`` does before it compiles)."""
    from numba.core.compiler_lock import global_compiler_lock

    argtypes = tuple(argtypes)
    if argtypes in dispatcher.overloads:
        return True
    cache = getattr(dispatcher, "_cache", None)
    if cache is None:
        return False
    with global_compiler_lock:
        try:
            cres = cache.load_overload(argtypes, dispatcher.targetctx)
        except Exception:  # a damaged entry: the compile path heals it (statespace._runtime.cache_files)
            return False
        if cres is None:
            return False
        dispatcher._cache_hits[argtypes] += 1  # as numba counts a load (its tests and ours read it)
        if not cres.objectmode:
            dispatcher.targetctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
        dispatcher.add_overload(cres)
    return True


def _tiered_call(self, *args, **kws):
    """A call from Python of an adopted compiled function (see the module docstring)."""
    cls = type(self).__mro__[1]
    if kws or not getattr(self, "_tier_on", True):
        return cls.__call__(self, *args, **kws)
    try:
        fingerprint = compute_fingerprint(args)
    except (TypeError, ValueError, NotImplementedError):
        return cls.__call__(self, *args)
    tiers = self.__dict__.get("_tiers")
    if tiers is None:
        tiers = self.__dict__["_tiers"] = {}
    tier = tiers.get(fingerprint)
    if tier is None:
        tier = tiers[fingerprint] = Tier()
        if mode() != "never":
            try:
                tier.compiled = load_cached(self, (typeof(a, Purpose.argument) for a in args))
            except Exception:  # a type numba's typeof cannot name: its own call says why
                tier.compiled = True
    if tier.compiled:
        return cls.__call__(self, *args)
    return run(tier, python_twin(self), args, lambda: cls.__call__(self, *args))


_CLASSES: dict[type, type] = {}


def adopt(dispatcher) -> None:
    """Make calls of ``dispatcher`` from Python tiered (the module docstring); calls from compiled
    code, which numba resolves while compiling, are unchanged. Its class becomes a subclass of its
    own that only adds ``__call__``."""
    base = type(dispatcher)
    if base in _CLASSES.values():
        return
    cls = _CLASSES.get(base)
    if cls is None:
        name = f"Tiered{base.__name__}"
        cls = _CLASSES[base] = type(name, (base,), {"__call__": _tiered_call, "__module__": __name__,
                                                    "__qualname__": name})
        globals()[name] = cls  # where pickle looks for it
    dispatcher.__class__ = cls


def exempt(dispatcher):
    """``dispatcher`` always compiled when called from Python (a function with no Python meaning of
    its own); returns it."""
    if hasattr(dispatcher, "__dict__"):
        dispatcher.__dict__["_tier_on"] = False
    return dispatcher
