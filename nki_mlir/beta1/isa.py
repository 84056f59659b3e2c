"""``neuronxcc.nki.isa`` (Beta 1 ``nisa``): value-returning instructions.

In Beta 1 every ``nisa`` call returns a new tile (SBUF by default, PSUM for the TensorE
instructions or when assigned into a PSUM tile), takes ``mask=`` and ``dtype=``, and has
no ``dst`` (NKI migration guide (nki/migration)).  The frontend compiles ``nisa1.<name>`` by
allocating the result and calling the Beta 2 instruction with it as ``dst``.
"""
from __future__ import annotations

from ..frontend.builtins import Builtin as _B
from ..isa import (  # noqa: F401
    dge_mode, engine, gpsimd_engine, matmul_perf_mode, nc_version, oob_mode, reduce_cmd,
    scalar_engine, tensor_engine, vector_engine,
)
from ..isa_names import INSTRUCTIONS as _INSTRUCTIONS

for _name in _INSTRUCTIONS:
    globals()[_name] = _B(f"nisa1.{_name}")
del _name

__all__ = [n for n in dir() if not n.startswith("_")]
