"""``nki.isa.constants``: the ISA enums, importable on their own
(``from nki.isa.constants import oob_mode, dge_mode``).  The members are those of
:mod:`nki_mlir.isa` (one definition each)."""
from __future__ import annotations

from .isa import dge_mode, dma_engine, engine, matmul_perf_mode, nc_version, oob_mode, reduce_cmd

__all__ = ["dge_mode", "dma_engine", "engine", "matmul_perf_mode", "nc_version", "oob_mode", "reduce_cmd"]
