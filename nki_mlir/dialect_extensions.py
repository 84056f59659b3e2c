"""Dialect extensions: loaders that complete the ``nki`` / ``nisa`` dialects before a context
is made.

In the manner of MLIR's ``DialectRegistry::addExtension``: the instruction definitions
(``nki_mlir/instructions``) add their op twins to the dialects when they are imported, and
that package sits above the dialects, which must not import it.  So the package root
registers a loader here (:func:`add`), and :func:`nki_mlir.dialects.make_context` runs every
loader (:func:`load_all`) before it builds a context.  Every context then knows every op,
whichever module a program imported first (a test or tool that parses ``nisa`` text without
having compiled a kernel included).
"""
from __future__ import annotations

from collections.abc import Callable

_LOADERS: list[Callable[[], None]] = []
_LOADED: set[int] = set()


def add(loader: Callable[[], None]) -> None:
    """Register ``loader`` (no arguments, idempotent) to run before the next context is made."""
    _LOADERS.append(loader)


def load_all() -> None:
    """Run every registered loader that has not run yet (each runs once)."""
    for f in _LOADERS:
        if id(f) not in _LOADED:
            f()
            _LOADED.add(id(f))


__all__ = ["add", "load_all"]
