"""The instruction definitions: one declarative record per ``nki.isa`` instruction.

Each module here defines one instruction or a small family with ``@instruction`` classes
(:mod:`.define`; the vocabulary is :mod:`nki_mlir.dialects.ods`).  Importing this package
imports every module in it, in name order, which registers the definitions with every
layer; ``nki_mlir.isa`` imports it before it creates the ``nki.isa`` functions, so the
package is registered whenever ``nki_mlir`` is imported.  A new module needs no entry
anywhere: how to add an instruction is in ``docs/architecture.md``.

This is the top of the compiler's layers: it reads the dialects, the frontend, the runtime
and the cost model, and none of them imports it.
"""
from __future__ import annotations

import importlib
import pkgutil

from .define import DEFINITIONS, instruction

for _m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    if _m.name != "define" and not _m.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_m.name}")

__all__ = ["DEFINITIONS", "instruction"]
