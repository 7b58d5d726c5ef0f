"""Compiled kernels and loops: compiled when first used, not at import, and each loop compiled for
the kernels it is given.

``numba.njit(signature)`` compiles (or loads from numba's disk cache) while its module is imported,
so importing a package of kernels would pay for every kernel of every method. Instead:

- :func:`kernel` declares a function that compiled loops receive by value (a filter's site, an
  observation's forecast) with its signature; nothing is compiled until a loop needs it;
- :func:`entry` declares a loop called from Python whose first arguments are kernels.

**Specialised loops.** Called with kernels declared by :func:`kernel` at the top level of a
module with a source file (every built-in filter's and observation's, and an extension's), an
entry runs its loop compiled for those very kernels: direct calls that LLVM can inline, no
function pointer per game, and no kernel compiled that this method never calls. That loop is
cached on disk under a key naming the entry and each kernel with its source file's modification
time and size (a ``str`` literal argument of :func:`_specialised`), so editing a kernel's module
compiles a fresh loop, as numba does for a function's own file (a change to a module a kernel
only calls into is not seen by numba; for this package's own modules :mod:`statespace._runtime.cache`
drops every cached file when any source changes). There the kernels are
typed :class:`DirectType`: their value in compiled code is a null pointer, never read, rather than
their address in this process, which would make every loop that passes them on uncacheable.

**The generic loop.** Any other kernel (a closure, a plain ``njit`` function, one defined in a
notebook) runs the loop compiled once for its declared signature, the kernels converted to
first-class function values and called through pointers; :func:`ready` compiles a declared kernel
for exactly its signature (return type included) before such a loop receives it.

Both are cached on disk (``cache=True``), every kernel and loop declared here (an extension's too)
with the rules of :mod:`statespace._runtime.cache` for caches that several processes use at once (a lock
per cache folder around numba's index and data files; no disk entry for a kernel compiled with
other kernels' dispatcher types as arguments, which could never be reused by another process).
With ``NUMBA_DISABLE_JIT=1`` everything stays plain Python and the generic path runs.

**Small work.** An entry whose loop for these kernels and argument types is neither compiled in
the process nor in the disk cache runs as plain Python (its function and its kernels' Python
twins) until compiling pays, by the rule of :mod:`statespace._runtime.tier`: a call's work is the
length of the argument the entry names (``work="a"``: its games), else the elements of its arrays.
"""

from __future__ import annotations

import inspect
import os
import sys

from llvmlite import ir
from numba import literally, njit, types
from numba._dispatcher import compute_fingerprint
from numba.core.datamodel.models import OpaqueModel
from numba.core.dispatcher import Dispatcher
from numba.core.imputils import lower_constant
from numba.core.typing.typeof import Purpose, typeof
from numba.extending import overload, register_model

from statespace._runtime import cache as _cache
from statespace._runtime import tier as _tier

__all__ = ["kernel", "entry", "ready"]


class DirectType(types.Dispatcher):
    """The numba type of a kernel inside a specialised loop: a dispatcher that compiled code only
    ever calls. Its value is never read (a call is resolved from the type), so it is a null
    pointer rather than the object's address in this process, which would make the loops that
    pass kernels on uncacheable."""


register_model(DirectType)(OpaqueModel)


@lower_constant(DirectType)
def _lower_direct(context, builder, typ, pyval):
    return ir.Constant(context.get_value_type(typ), None)


class _Direct:
    """Stands for a dispatcher in the specialised loops' source: typed :class:`DirectType`."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    @property
    def _numba_type_(self):
        return DirectType(self.dispatcher)


def kernel(signature, **options):
    """Decorator declaring a kernel of ``signature`` (``njit(cache=True, **options)``, compiled
    where a loop first needs it)."""
    def wrap(fn):
        disp = njit(cache=True, **options)(fn)
        if isinstance(disp, Dispatcher):
            _cache.share(disp)
            disp._declared_signature = signature
            disp._ready = False
        return disp
    return wrap


def ready(fn):
    """Compile ``fn`` for its declared signature (from the disk cache where it is there), once;
    other objects pass through unchanged."""
    if getattr(fn, "_ready", True):
        return fn
    sig = fn._declared_signature
    if tuple(sig.args) not in fn.overloads:
        fn.compile(sig)
    fn._ready = True
    return fn


def _stamp(fn) -> str | None:
    """``module.qualname@mtime_ns:size`` of a kernel declared by :func:`kernel` and reachable by its
    module-level name, else ``None`` (a plain ``njit`` function may admit only its signature)."""
    if not hasattr(fn, "_declared_signature"):
        return None
    stamp = getattr(fn, "_stamp", False)
    if stamp is not False:
        return stamp
    stamp = None
    py = getattr(fn, "py_func", None)
    module = sys.modules.get(getattr(py, "__module__", None))
    if (py is not None and "<locals>" not in py.__qualname__ and module is not None
            and getattr(module, py.__name__, None) is fn):
        try:
            st = os.stat(inspect.getsourcefile(py))
            stamp = f"{py.__module__}.{py.__qualname__}@{st.st_mtime_ns}:{st.st_size}"
        except (TypeError, OSError):
            pass
    fn._stamp = stamp
    return stamp


#: whether entries run specialised loops where they can (False: always the generic loop; the tests
#: compare the two)
SPECIALISE = True

#: specialised loop key -> (the loop's body, its kernels)
_SPECIALISED: dict[str, tuple] = {}


def _call(key, args):
    """The loop ``key`` names, called with its kernels and then ``args`` (compiled code only)."""
    raise NotImplementedError("only callable from compiled code")


@overload(_call)
def _call_overload(key, args):
    if not isinstance(key, types.StringLiteral):
        return None
    body, kernels = _SPECIALISED[key.literal_value]
    # written out argument by argument: building one tuple of the kernels and the arguments
    # would have numba try to unify the kernels' types into one function type
    names = [f"k{j}" for j in range(len(kernels))] + [f"args[{i}]" for i in range(len(args))]
    namespace = {"body": _Direct(body), **{f"k{j}": _Direct(k) for j, k in enumerate(kernels)}}
    exec(f"def call(key, args):\n    return body({', '.join(names)})\n", namespace)
    return namespace["call"]


@njit(cache=True)
def _specialised(key, args):
    """Run the loop ``key`` names with its kernels and then ``args``."""
    literally(key)
    return _call(key, args)


_cache.share(_specialised)
_tier.exempt(_specialised)  # its Python meaning is the entry's loop: the entries tier themselves


class _Entry:
    """A loop called from Python (see :func:`entry`)."""

    def __init__(self, fn, signature, options):
        self.py_func = fn
        self.signature = signature
        options = dict(options)
        work = options.pop("work", None)
        self._interpret = options.pop("interpret", True)
        self._work = None if work is None else list(inspect.signature(fn).parameters).index(work)
        self.dispatcher = njit(cache=True, **options)(fn)
        self._compiled = not isinstance(self.dispatcher, Dispatcher)
        _cache.share(self.dispatcher)
        kinds = [isinstance(t, types.FunctionType) for t in signature.args]
        self._n_kernels = kinds.index(False) if False in kinds else len(kinds)
        if any(kinds[self._n_kernels:]):
            raise TypeError(f"{fn.__qualname__}: the kernels (function arguments) must come first")
        # the body the specialised loops call: not cached itself (the loops that call it are)
        self._body = None if self._compiled else njit(**options)(fn)
        self._keys: dict[tuple, tuple] = {}  # ids of kernels -> (key, the kernels, kept alive)
        self._fast: dict[tuple, object] = {}  # (key, the arguments' fingerprint) -> compiled entry point
        self._tiers: dict[tuple, _tier.Tier] = {}  # (key, fingerprint) or the kernels' ids -> how it runs
        self.__doc__ = fn.__doc__
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__module__ = fn.__module__
        self.__wrapped__ = fn

    def compile(self):
        """Compile for the declared signature now (or load it from the cache)."""
        if not self._compiled:
            self.dispatcher.compile(self.signature)
            self.dispatcher.disable_compile()
            self._compiled = True
        return self.dispatcher

    def key(self, kernels) -> str | None:
        """The specialised loop's key for these kernels, ``None`` when one of them cannot have one."""
        ids = tuple(map(id, kernels))
        if ids not in self._keys:
            stamps = [_stamp(k) for k in kernels]
            key = None
            if self._body is not None and None not in stamps:
                key = "|".join([f"{self.__module__}.{self.__qualname__}", *stamps])
                _SPECIALISED[key] = (self._body, tuple(kernels))
            self._keys[ids] = (key, tuple(kernels))
        return self._keys[ids][0]

    def __call__(self, *args):
        n = self._n_kernels
        key = self.key(args[:n]) if SPECIALISE else None
        if key is None:
            ids = tuple(map(id, args[:n]))
            tier = self._tiers.get(ids)
            if tier is None:
                tier = self._tiers[ids] = self._new_tier()
                tier.compiled = self._compiled or not self._interpret
            if tier.compiled:
                return self.generic(*args)
            return _tier.run(tier, self._twin, args, lambda: self.generic(*args), self._units(args))
        rest = args[n:]
        try:
            fingerprint = compute_fingerprint(rest)
        except (TypeError, ValueError, NotImplementedError):
            fingerprint = None
        fast = self._fast.get((key, fingerprint))
        if fast is not None:
            return fast(key, rest)
        tier = self._tiers.get((key, fingerprint))
        if tier is None:
            tier = self._tiers[(key, fingerprint)] = self._new_tier()
            tier.compiled = (fingerprint is None or not self._interpret or _tier.mode() != "never"
                             and _tier.load_cached(_specialised, (types.literal(key), typeof(rest, Purpose.argument))))
        if tier.compiled:
            return self._specialised(key, rest, fingerprint)
        return _tier.run(tier, self._twin, args, lambda: self._specialised(key, rest, fingerprint),
                         self._units(args))

    def _new_tier(self):
        return _tier.Tier(None if self._work is None else _tier.PRIOR_RATE_PER_UNIT)

    def _units(self, args) -> float:
        """The call's work: the length of the argument the entry names as its work, else
        :func:`statespace._runtime.tier.work`."""
        return _tier.work(args) if self._work is None else max(len(args[self._work]), 1)

    def _specialised(self, key, rest, fingerprint):
        """The specialised loop ``key`` names, compiled (or loaded from the disk cache), called."""
        # numba's dispatch retypes a str key as a literal on every call (milliseconds), so the
        # compiled loop's entry point is kept and called directly from then on
        result = _specialised(key, rest)
        if fingerprint is not None:
            sig = (types.literal(key), typeof(rest, Purpose.argument))
            if sig in _specialised.overloads:
                self._fast[(key, fingerprint)] = _specialised.overloads[sig].entry_point
        return result

    def _twin(self, *args):
        """The loop as plain Python (:func:`statespace._runtime.tier.python_twin`), its kernels too."""
        n = self._n_kernels
        return _tier.python_twin(self.py_func)(*(_tier.python_twin(k) for k in args[:n]), *args[n:])

    def generic(self, *args):
        """The loop compiled once for every kernel, called through function pointers."""
        for a in args:
            if not getattr(a, "_ready", True):
                ready(a)
        return self.compile()(*args)


def entry(signature, *, work: str | None = None, interpret: bool = True, **options):
    """Decorator for a compiled loop called from Python (see the module docstring). ``work`` names
    the argument whose length is a call's work (its games, say) for the choice between running it
    interpreted and compiling it (:mod:`statespace._runtime.tier`; default: the elements of every
    array argument); ``interpret=False``: always compiled (a loop using constructs only numba
    knows, such as intrinsics)."""
    options = dict(options, work=work, interpret=interpret)
    def wrap(fn):
        return _Entry(fn, signature, options)
    return wrap
