"""The warm-call guard: a repeated call finds its compiled kernel without rebuilding the key.

The compile-cache key (:func:`nki_mlir.compiler.compile_kernel`) hashes the kernel's source
file, the values its code reads from its globals and closure (and those of the user helper
functions it calls), the argument shapes / dtypes / constant values and the options.  Most
of that cannot change between two calls of one kernel, so after a call has computed the
key, :func:`remember` keeps, under the call's *spec key* (the function, the arguments'
types and shapes / dtypes / constant values, the options), a :class:`Guard`:

- the full cache key (the in-memory cache is then consulted as usual, so eviction and
  ``cache clear`` behave as before);
- ``(path, mtime, size)`` of every source file whose hash is part of the key;
- every name the key's digest read, with the object it was bound to;
- the code object of every user function it visited (the kernel and its helpers).

:func:`lookup` gives the compiled kernel only while the files are unchanged and every name
is still bound to the *same object* (:meth:`Guard.valid`).  That is exact for values whose
digest is fixed by their identity (numbers, strings, dtypes, modules, classes, functions,
tuples of them).  A kernel reading a mutable value (an array, a list, a dict, a
configuration object: their content may change in place) gets no guard and computes its key
on every call.

The warm-call plan (:mod:`.warm_plan`) checks the objects only (:meth:`Guard.holds`, no
``stat`` per call): what a call runs is the function objects the guard holds, and an edit
of a source file changes none of them until the module is executed again -- a re-import or
IPython's ``autoreload`` rebinds the module's names (and the latter swaps the ``__code__``
of the old function objects), which :meth:`Guard.holds` sees; the tracer parses a
function's source once per code object (:class:`~nki_mlir.frontend.source.FunctionSource`),
so before that a retrace would trace the same code (only the tensor names and messages it
reads from the edited lines could differ).  The full path (:func:`lookup`, and so
``nki.compile``) still compares the files, whose hashes are part of the cache key.
"""
from __future__ import annotations

import enum
import os
import sys
import types
from typing import Any

import numpy as np

from ..frontend.source import FunctionSource, _closure_vars, _is_user_file
from ..runtime import cache

#: guards kept (the table starts over when full; a miss only costs a full key)
MAX_GUARDS = 1024
#: argument types whose value is part of a spec key (hashable, immutable)
_SCALARS = (int, float, bool, str, bytes, complex, type(None), np.generic)
_MISSING = object()


class Guard:
    """What keeps a spec key's cache key valid (module docstring)."""

    __slots__ = ("key", "files", "names", "cells", "codes")

    def __init__(self, key: str, files: tuple, names: tuple, cells: tuple, codes: tuple = ()):
        self.key = key
        self.files = files      # ((path, mtime_ns, size), ...)
        self.names = names      # ((namespace dict, name, value), ...)
        self.cells = cells      # ((closure cell, value), ...)
        self.codes = codes      # ((function, its __code__), ...)

    def valid(self) -> bool:
        """Whether the files are unchanged and :meth:`holds` (the full path's check)."""
        for path, mtime, size in self.files:
            try:
                st = os.stat(path)
            except OSError:
                return False
            if st.st_mtime_ns != mtime or st.st_size != size:
                return False
        return self.holds()

    def holds(self) -> bool:
        """Whether every name and closure cell is bound to the same object and every
        function has the same code object (the warm-call plan's check, module docstring)."""
        for fn, code in self.codes:
            if fn.__code__ is not code:
                return False
        for ns, name, value in self.names:
            if ns.get(name, _MISSING) is not value:
                return False
        for cell, value in self.cells:
            try:
                if cell.cell_contents is not value:
                    return False
            except ValueError:
                return False
        return True


_GUARDS: dict[tuple, Guard] = {}


def _value_key(v: Any) -> Any:
    """The part of a spec key for one argument, or ``_MISSING`` (no guard for this call)."""
    t = type(v)
    if t is np.ndarray:
        return (v.shape, v.dtype)
    if t is float:              # by its bits: -0.0 is not 0.0, a NaN equals itself
        return (t, v.hex())
    if isinstance(v, _SCALARS):
        return (t, v)
    if t is tuple:
        items = tuple(_value_key(x) for x in v)
        return _MISSING if _MISSING in items else (t, items)
    return _MISSING


def spec_key(fn: Any, args: tuple, kwargs: dict, options: tuple) -> tuple | None:
    """The spec key of a call (``options``: the resolved compile options, hashable), or
    None when an argument's value cannot be keyed cheaply (such calls are not guarded)."""
    parts: list = [fn, options]
    for a in args:
        k = _value_key(a)
        if k is _MISSING:
            return None
        parts.append(k)
    for name in sorted(kwargs):
        k = _value_key(kwargs[name])
        if k is _MISSING:
            return None
        parts.append((name, k))
    key = tuple(parts)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def options_key(target: str, schedule: Any, spmd: Any, output_check: Any,
                spill: Any = True, stage: str = "final") -> tuple:
    """The compile options' part of a spec key: the resolved target, the schedule, the SPMD
    instance, the output check (the option and ``$NKI_MLIR_OUTPUT_CHECK``), spilling and the
    compile stage (:func:`nki_mlir.driver.compile.compile_kernel`)."""
    from ..passes.output_coverage import ENV
    return (target, schedule, spmd.key() if spmd else None, output_check, os.environ.get(ENV),
            spill, stage)


#: warm-call plans by call spec (kept by :mod:`.warm_plan`; here so that :func:`clear`
#: forgets them without importing it)
PLANS: dict[tuple, Any] = {}


def clear() -> None:
    """Forget every guard and every warm-call plan (:mod:`.warm_plan`)."""
    _GUARDS.clear()
    PLANS.clear()


def _forget_plans(key: str) -> None:
    """Drop the warm-call plans of the compiled kernel the in-memory cache just let go of
    (cache key ``key``): a plan would keep its decoded program alive, and it can never run
    again (:func:`.warm_plan.call` needs the cache to hold the kernel)."""
    if PLANS:
        for spec in [s for s, p in PLANS.items() if p.guard.key == key]:
            del PLANS[spec]


cache.on_evict(_forget_plans)


def lookup(skey: tuple):
    """The compiled kernel of spec key ``skey`` if its guard holds and the in-memory cache
    still has it, else None."""
    g = _GUARDS.get(skey)
    if g is None:
        return None
    if not g.valid():
        del _GUARDS[skey]
        return None
    return cache.memory_get(g.key)


def remember(skey: tuple | None, fn: Any, key: str) -> None:
    """Keep a guard for ``skey`` -> ``key`` if every value the key read is fixed by its
    identity (module docstring)."""
    if skey is None:
        return
    g = _guard(fn, key)
    if g is None:
        return
    if len(_GUARDS) >= MAX_GUARDS:
        _GUARDS.clear()
    _GUARDS[skey] = g


def _guard(fn: Any, key: str) -> Guard | None:
    """The guard of ``fn``'s key: the same names, helper functions and files as
    :func:`nki_mlir.frontend.source.referenced_values_digest` and the source hash."""
    files: dict[str, tuple] = {}
    names: list = []
    cells: list = []
    codes: list = []
    seen: set[int] = set()

    def add_file(path: str) -> bool:
        if path and path not in files:
            try:
                st = os.stat(path)
            except OSError:
                return False
            files[path] = (path, st.st_mtime_ns, st.st_size)
        return True

    def fixed(v: Any, depth: int = 0) -> bool:
        """Whether the digest of ``v`` (``frontend.source._feed``) is fixed by the object's
        identity and the files added here."""
        if isinstance(v, np.ndarray):
            return False
        if isinstance(v, _SCALARS + (np.dtype,)):
            return True
        if isinstance(v, (list, dict)):
            return False
        if isinstance(v, tuple):
            return depth < 24 and all(fixed(x, depth + 1) for x in v)
        if isinstance(v, types.ModuleType):       # by name and source file
            file = getattr(v, "__file__", None) or ""
            return not _is_user_file(file) or add_file(file)
        if isinstance(v, type):                   # by name and its module's source file
            file = getattr(sys.modules.get(v.__module__), "__file__", None) or ""
            return not _is_user_file(file) or add_file(file)
        if hasattr(v, "__dict__") and not callable(v) and not isinstance(v, enum.Enum):
            return False                          # a configuration object: by content
        return True                               # enum members, other values: by name

    def visit(f: Any) -> bool:
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            return True
        seen.add(id(code))
        src = FunctionSource.of(f)
        if src is None or not src.is_user_code:
            return True
        if not add_file(src.file):
            return False
        codes.append((f, code))
        glb = getattr(f, "__globals__", {})
        cvars = _closure_vars(f)
        cell_of = dict(zip(code.co_freevars, f.__closure__ or ()))
        for name in (*code.co_names, *code.co_freevars):
            if name in cvars:
                value = cvars[name]
                cells.append((cell_of[name], value))
            elif name in glb:
                value = glb[name]
                names.append((glb, name, value))
            else:
                continue
            if callable(value) and hasattr(value, "__code__"):
                if not visit(value):
                    return False
            elif not fixed(value):
                return False
        return True

    target = getattr(fn, "__wrapped__", fn)
    src = FunctionSource.of(fn)
    if src is not None and not add_file(src.file):
        return None
    if not visit(target):
        return None
    return Guard(key, tuple(files.values()), tuple(names), tuple(cells), tuple(codes))

