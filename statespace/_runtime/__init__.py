"""The runtime: compile and cache plumbing that every other room stands on.

- :mod:`~statespace._runtime.jit`: kernels declared with explicit signatures, compiled lazily, and
  the run loops specialised per method (nothing compiles at import).
- :mod:`~statespace._runtime.tier`: small work run as plain Python, big or repeated work compiled
  (``STATESPACE_JIT``).
- :mod:`~statespace._runtime.cache` and :mod:`~statespace._runtime.cache_files`: numba's disk cache
  in a folder it can write, dropped when a source changes, shared safely between processes.
- :mod:`~statespace._runtime.pytensor_config` and :mod:`~statespace._runtime.pytensor_heal`: the
  PyTensor compile folder of the PyMC smoother, healed when damaged.
- :mod:`~statespace._runtime.progress`: progress lines on long work.
- :mod:`~statespace._runtime.lazy`: a package's names loaded on first use.

Imports: the standard library, NumPy and numba only; no other room of ``statespace``.
"""
