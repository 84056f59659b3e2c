"""What a sweep is over: the variants of a search space, the tensor arguments, and where
the kernel's source is (so another process can import it).

- :func:`variants` -- ``{"TILE": [128, 256], "BUFS": [2, 3]}`` -> every combination, in
  order (the last name varies fastest), or a list of explicit configs as given;
- :func:`tensor_args` -- NumPy arrays, ``(shape, dtype)`` pairs or ``"512x512xbf16"``
  strings -> arrays (specs get fixed random data, seed 0);
- :class:`KernelRef` -- file, module and name of a module-level kernel; :func:`resolve`
  imports it in a worker (a process-pool worker or a Ray task).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import itertools
import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import NKIError

#: more variants than this is an error for search="exhaustive" (use search="optuna")
MAX_EXHAUSTIVE = 100_000


def _error(message: str) -> NKIError:
    from ..diagnostics import caller_loc
    return NKIError(message, caller_loc(), category="bad autotune space")


def kernel_fn(kernel: Any):
    """The Python function of a ``@nki.jit`` kernel, a plain function or an ``@autotune``."""
    inner = getattr(kernel, "kernel", None)      # an Autotuner wraps a Kernel
    if inner is not None and hasattr(inner, "fn"):
        kernel = inner
    return getattr(kernel, "fn", kernel)


def as_kernel(kernel: Any):
    """A :class:`~nki_mlir.kernel.Kernel` for ``kernel`` (wrapping a plain function)."""
    from ..driver.jit import Kernel
    inner = getattr(kernel, "kernel", None)
    if isinstance(inner, Kernel):
        return inner
    return kernel if isinstance(kernel, Kernel) else Kernel(kernel)


def space_size(space: Any, fn: Any) -> int:
    """How many variants the dict ``space`` has (validated as :func:`variants` does)."""
    if not isinstance(space, dict):
        raise _error("search='optuna' needs a dict space {name: [values]}")
    _check_dict(space, fn)
    return math.prod(len(list(v)) for v in space.values())


def _check_dict(space: dict, fn: Any) -> None:
    for name, values in space.items():
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise _error(f"space[{name!r}] = {values!r}: give a list of values to try")
        if not list(values):
            raise _error(f"space[{name!r}] is empty: give at least one value to try")
    check_names(space, fn)


def variants(space: Any, fn: Any) -> list[dict]:
    """The variants of ``space`` in sweep order.

    Args:
        space: ``{name: [value, ...]}`` (every combination; the last name varies fastest)
            or ``[{name: value, ...}, ...]`` (these configs, duplicates dropped).
        fn: the kernel's function; every name must be one of its keyword parameters
            (unless it takes ``**kwargs``).

    Raises:
        NKIError: an unknown parameter name, an empty value list, or more than
            :data:`MAX_EXHAUSTIVE` combinations.
    """
    if isinstance(space, dict):
        n = space_size(space, fn)
        if n > MAX_EXHAUSTIVE:
            raise _error(f"the space has {n} variants (over {MAX_EXHAUSTIVE}); sample it with "
                         f"search='optuna' and n_trials=...")
        names = list(space)
        return [dict(zip(names, combo)) for combo in itertools.product(*(list(space[k]) for k in names))]
    if isinstance(space, (list, tuple)) and all(isinstance(c, dict) for c in space):
        if not space:
            raise _error("the list of configs is empty: give at least one")
        out, seen = [], set()
        for cfg in space:
            check_names(cfg, fn)
            k = params_key(cfg)
            if k not in seen:
                seen.add(k)
                out.append(dict(cfg))
        return out
    raise _error(f"space must be a dict {{name: [values]}} or a list of config dicts, got "
                 f"{type(space).__name__}")


def check_names(params: dict, fn: Any) -> None:
    """Every key of ``params`` is a parameter ``fn`` takes by keyword."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    ps = sig.parameters
    if any(p.kind is p.VAR_KEYWORD for p in ps.values()):
        return
    for name in params:
        p = ps.get(name)
        if p is None or p.kind is p.POSITIONAL_ONLY:
            raise _error(f"{name!r} is not a keyword parameter of kernel "
                         f"{getattr(fn, '__name__', fn)}{sig}")


def params_key(params: dict) -> str:
    """A stable text key of one variant's parameters (sorted JSON; repr for other values)."""
    return json.dumps(params, sort_keys=True, default=repr)


def tensor_args(args: Any) -> list[np.ndarray]:
    """The tensor arguments as arrays: arrays as given; a ``(shape, dtype)`` pair or a
    ``"128x512xbf16"`` string (the CLI's ``--arg`` syntax) becomes standard-normal data
    (seed 0) of that shape and dtype (booleans: ``x > 0``)."""
    from ..tools.kernel_files import inputs as _inputs, parse_arg
    out = []
    rng = np.random.default_rng(0)
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(a)
            continue
        try:
            shape, dt = parse_arg(a) if isinstance(a, str) else (tuple(a[0]), _dtype(a[1]))
        except (argparse.ArgumentTypeError, TypeError, ValueError, IndexError, KeyError):
            raise _error(f"tensor argument {a!r}: expected a NumPy array, a (shape, dtype) pair "
                         f"or 'SHAPExDTYPE' like '128x512xbf16'") from None
        out.extend(_inputs([(shape, dt)], rng))
    return out


def _dtype(d: Any) -> np.dtype:
    """A NumPy dtype from a dtype, a NumPy name or an NKI name (``"bfloat16"``, ``nl.bfloat16``)."""
    from .. import dtypes
    if isinstance(d, str) and d in dtypes.BY_NAME:
        return np.dtype(dtypes.BY_NAME[d])
    return np.dtype(d)


@dataclass(frozen=True)
class KernelRef:
    """Where a module-level kernel lives: its source ``file``, ``module`` name and ``name``
    (the module attribute).  A worker re-imports it with :func:`resolve` instead of
    unpickling a function."""

    file: str
    module: str
    name: str


def locate(kernel: Any) -> KernelRef | None:
    """The :class:`KernelRef` of ``kernel``, or None when it is not reachable as a
    module attribute (defined inside a function, or not in a file)."""
    fn = kernel_fn(kernel)
    name = getattr(fn, "__qualname__", "")
    file = inspect.getsourcefile(fn) if inspect.isfunction(fn) else None
    mod = sys.modules.get(getattr(fn, "__module__", ""))
    if not file or "<locals>" in name or "." in name or mod is None:
        return None
    found = kernel_fn(getattr(mod, name, None))
    if found is not fn and _code_at(found) != _code_at(fn):   # same definition, re-imported
        return None
    return KernelRef(os.path.abspath(file), fn.__module__, name)


def _code_at(fn: Any) -> tuple | None:
    code = getattr(fn, "__code__", None)
    return None if code is None else (code.co_filename, code.co_firstlineno, fn.__qualname__)


_RESOLVED: dict[KernelRef, Any] = {}


def resolve(ref: KernelRef):
    """Import the kernel ``ref`` names (once per process): its module if that is the same
    file (a worker that shares the driver's ``sys.path``), else the file by path."""
    hit = _RESOLVED.get(ref)
    if hit is not None:
        return hit
    mod = sys.modules.get(ref.module)
    if mod is None or not _same_file(mod, ref.file):
        mod = None
        if ref.module != "__main__":
            try:
                mod = importlib.import_module(ref.module)
            except ImportError:
                mod = None
            if mod is not None and not _same_file(mod, ref.file):
                mod = None
        if mod is None:
            mod = _import_file(ref)
    obj = getattr(mod, ref.name, None)
    if obj is None:
        raise NKIError(f"internal error: the autotune worker imported {ref.file} but it has no "
                       f"attribute {ref.name!r}")
    k = as_kernel(obj)
    _RESOLVED[ref] = k
    return k


def _same_file(mod: Any, file: str) -> bool:
    f = getattr(mod, "__file__", None)
    return bool(f) and os.path.abspath(f) == file


def _import_file(ref: KernelRef):
    from ..frontend.source import file_hash
    name = f"_nki_autotune_{os.path.splitext(os.path.basename(ref.file))[0]}_{file_hash(ref.file)[:8]}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ref.file)
    if spec is None or spec.loader is None:
        raise NKIError(f"internal error: the autotune worker cannot import {ref.file}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    folder = os.path.dirname(ref.file)
    if folder not in sys.path:       # the file's sibling modules import as in `python FILE`
        sys.path.insert(0, folder)
    spec.loader.exec_module(mod)
    return mod
