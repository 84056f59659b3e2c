"""``nki.isa.constants``: the ISA enums, importable on their own
(``from nki.isa.constants import oob_mode, dge_mode``).  The same objects as
:mod:`nki_mlir.isa`'s (one definition each, in :mod:`nki_mlir.frontend.isa_enums`)."""
from __future__ import annotations

from .frontend.isa_enums import dge_mode, dma_engine, engine, matmul_perf_mode, nc_version, oob_mode, reduce_cmd

__all__ = ["dge_mode", "dma_engine", "engine", "matmul_perf_mode", "nc_version", "oob_mode", "reduce_cmd"]
