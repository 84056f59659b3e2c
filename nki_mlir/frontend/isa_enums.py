"""The ``nki.isa`` enums (``nki.isa.engine``, ``reduce_cmd``, ``dge_mode``, ``oob_mode``,
``matmul_perf_mode``, ``nc_version``, ``dma_engine``): their members and values, as the
NKI ``nki.isa`` API pages list them.  Exported by :mod:`nki_mlir.isa` and
:mod:`nki_mlir.isa_constants` (``nki.isa.constants``); defined here, below the public API,
so the frontend's handlers can read them."""
from __future__ import annotations

from .builtins import Enum

engine = Enum("engine", {"unknown": 0, "tensor": 1, "scalar": 2, "gpsimd": 3, "dma": 4,
                         "vector": 5, "sync": 6})
reduce_cmd = Enum("reduce_cmd", {"idle": 0, "reset": 1, "reduce": 2, "reset_reduce": 3,
                                 "load_reduce": 4})
dge_mode = Enum("dge_mode", {"unknown": 0, "swdge": 1, "hwdge": 2, "none": 3})
oob_mode = Enum("oob_mode", {"error": 0, "skip": 1})
matmul_perf_mode = Enum("matmul_perf_mode", {"none": 0, "double_row": 1})
nc_version = Enum("nc_version", {"gen2": 2, "gen3": 3, "gen4": 4})
#: DMA of nisa.sendrecv: the shared DMA (default) or GpSimd's internal DMA (nki.isa.dma_engine)
dma_engine = Enum("dma_engine", {"dma": 0, "gpsimd_dma": 1})

__all__ = ["dge_mode", "dma_engine", "engine", "matmul_perf_mode", "nc_version", "oob_mode", "reduce_cmd"]
