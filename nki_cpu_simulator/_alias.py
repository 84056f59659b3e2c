"""Helper for the shim's submodules: make an import name *be* an nki-mlir module.

Each submodule file of :mod:`nki_cpu_simulator.nki` calls :func:`become` with the nki-mlir
module it stands for; the import system then binds that nki-mlir module under the
shim's name (``nki_cpu_simulator.nki.language`` *is* :mod:`nki_mlir.language`), and under
any alias the file is loaded by (``import nki.collectives`` after the nki-library
conftest has put this package at ``sys.modules["nki"]``).  Object identity is kept, so
kernels that mix ``nki.*`` and ``nki_mlir.*`` names see the same functions and dtypes.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType


def become(name: str, target: str, children: dict[str, str] | None = None) -> ModuleType:
    """Replace ``sys.modules[name]`` by the nki-mlir module ``target``.

    ``children`` maps submodule names (``"dtypes"``) to nki-mlir modules; they are
    registered as ``f"{name}.{child}"`` so ``import <name>.<child>`` works although the
    nki-mlir module is a plain module, not a package.
    """
    mod = importlib.import_module(target)
    for child, child_target in (children or {}).items():
        sys.modules[f"{name}.{child}"] = importlib.import_module(child_target)
    sys.modules[name] = mod
    return mod
