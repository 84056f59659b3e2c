"""Python builtins asked about a traced value: ``isinstance(i, int)`` on a loop index.

A rolled loop's index is a :class:`~.proxies.LoopIndex`, the symbolic stand-in for the
Python ``int`` that ``range`` / ``nl.affine_range`` yields ("loops are Python loops").
Kernel code branches on its type (``if isinstance(index, int): <static path> else:
<dynamic path with a register>``), so the tracer rewrites the kernel's ``isinstance(a, b)``
calls into :func:`nki_isinstance`, which answers as Python would for the int the index
stands for, without needing its value (the loop stays rolled).
"""
from __future__ import annotations

from typing import Any

from .proxies import LoopIndex
from .symbolic_str import SymbolicName


def _classes(spec: Any):
    if isinstance(spec, tuple):
        for s in spec:
            yield from _classes(s)
    elif isinstance(spec, type):
        yield spec
    else:  # a types.UnionType (int | None) or anything else isinstance accepts
        yield from _classes(getattr(spec, "__args__", ()))


def nki_isinstance(obj: Any, spec: Any) -> bool:
    """``isinstance(obj, spec)``; for a loop index, True iff an ``int`` would be an instance
    (``int``, ``numbers.Integral``, ``object``, ...)."""
    if type(obj) is LoopIndex:
        isinstance(0, spec)  # the TypeError of a bad ``spec``, as Python raises it
        return any(issubclass(int, c) for c in _classes(spec)) or isinstance(obj, spec)
    if type(obj) is SymbolicName:   # a str whose text depends on a symbolic program id
        isinstance("", spec)
        return any(issubclass(str, c) for c in _classes(spec)) or isinstance(obj, spec)
    return isinstance(obj, spec)
