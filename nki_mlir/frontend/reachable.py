"""Which user functions a kernel can reach: the ones :mod:`.loop_rewrite` rewrites for a trace.

A kernel calls helpers by name (module globals), through closures, as methods of user
classes, in helper modules, and as other ``@nki.jit`` kernels called inline (nki-library's
test wrappers call its kernels this way; the sub-kernel's function is reached through the
wrapper object's ``__wrapped__``).  Only user code is followed (:func:`.frames.is_user_file`).
"""
from __future__ import annotations

import dis
import sys
import types
from typing import Any


_FOR_ITER = dis.opmap["FOR_ITER"]


def reachable_functions(kernel: Any) -> list[Any]:
    """User functions reachable from ``kernel`` (breadth first) through globals, closures,
    user classes, user modules and the functions of wrapper objects (:func:`_wrapped`: a
    sub-kernel), that contain a ``for`` loop or call ``isinstance``; ``kernel`` itself
    excluded."""
    from .frames import is_user_file
    seen: set[int] = {id(kernel)}
    out: list[Any] = []
    todo: list[Any] = [kernel]
    while todo:
        v = todo.pop()
        if isinstance(v, (staticmethod, classmethod)):
            v = v.__func__
        elif isinstance(v, property):
            todo.extend(f for f in (v.fget, v.fset) if f is not None)
            continue
        if isinstance(v, types.FunctionType):
            if not is_user_file(v.__code__.co_filename):
                continue
            if v is not kernel and (_FOR_ITER in v.__code__.co_code[::2]
                                    or "isinstance" in v.__code__.co_names):
                out.append(v)
            for name in _names(v.__code__):
                w = v.__globals__.get(name)
                if w is not None and id(w) not in seen:
                    seen.add(id(w))
                    todo.append(w)
            for w in closure_values(v):
                if w is not _EMPTY and id(w) not in seen:
                    seen.add(id(w))
                    todo.append(w)
        elif isinstance(v, (type, types.ModuleType)):
            file = getattr(v, "__file__", None) if isinstance(v, types.ModuleType) else \
                getattr(sys.modules.get(v.__module__), "__file__", None)
            if not file or not is_user_file(file):
                continue
            for w in list(vars(v).values()):
                owner = getattr(w, "__module__", None)
                if id(w) not in seen and (isinstance(v, type) or owner == v.__name__):
                    seen.add(id(w))
                    todo.append(w)
        else:
            w = _wrapped(v)
            if w is not None and id(w) not in seen:
                seen.add(id(w))
                todo.append(w)
    return out


#: what :func:`closure_values` gives for an empty cell
_EMPTY: Any = object()


def closure_values(fn: types.FunctionType) -> tuple:
    """The values of ``fn``'s closure cells, in order (``_EMPTY`` for an empty cell)."""
    out = []
    for cell in fn.__closure__ or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:
            out.append(_EMPTY)
    return tuple(out)


def _wrapped(v: Any) -> Any:
    """The function an object made by ``functools.update_wrapper`` wraps (a ``@nki.jit``
    :class:`~nki_mlir.driver.jit.Kernel` another kernel calls inline, a class-based
    decorator), read from the object's own ``__dict__`` (no ``__getattr__`` of its class
    runs); None for anything else."""
    try:
        d = object.__getattribute__(v, "__dict__")
    except AttributeError:
        return None
    w = d.get("__wrapped__") if type(d) is dict else None
    return w if isinstance(w, types.FunctionType) else None


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names
