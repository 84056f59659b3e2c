"""``nki.isa`` (``nisa``): the ISA instructions and their enums.

Every instruction takes ``dst`` first (NKI Beta 2+ convention).  Semantics, defaults and
constraints: nki_spec.md section 5.4 (NKI ``nki.isa`` API page).  These are markers
compiled by the frontend; calling them outside an ``@nki.jit`` kernel raises.
"""
from __future__ import annotations

from .frontend.builtins import Builtin as _B
from .frontend.builtins import Enum as _Enum

engine = _Enum("engine", {"unknown": 0, "tensor": 1, "scalar": 2, "gpsimd": 3, "dma": 4,
                          "vector": 5, "sync": 6})
reduce_cmd = _Enum("reduce_cmd", {"idle": 0, "reset": 1, "reduce": 2, "reset_reduce": 3,
                                  "load_reduce": 4})
dge_mode = _Enum("dge_mode", {"unknown": 0, "swdge": 1, "hwdge": 2, "none": 3})
oob_mode = _Enum("oob_mode", {"error": 0, "skip": 1})
matmul_perf_mode = _Enum("matmul_perf_mode", {"none": 0, "double_row": 1})
nc_version = _Enum("nc_version", {"gen2": 2, "gen3": 3, "gen4": 4})

tensor_engine = engine.tensor  # deprecated aliases kept for old kernels
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd

_INSTRUCTIONS = [
    # data movement
    "dma_copy", "dma_transpose", "dma_compute", "tensor_copy", "tensor_copy_predicated",
    "nc_n_gather", "local_gather", "nc_stream_shuffle",
    # tensor engine
    "nc_matmul", "nc_matmul_mx", "nc_transpose", "quantize_mx",
    # scalar engine
    "activation", "activation_reduce", "activate2",
    # vector / gpsimd
    "tensor_tensor", "tensor_scalar", "scalar_tensor_tensor", "tensor_reduce",
    "tensor_partition_reduce", "tensor_scalar_reduce", "tensor_scalar_cumulative",
    "tensor_tensor_scan", "bn_stats", "bn_aggr", "reciprocal", "exponential", "select_reduce",
    "range_select", "max8", "nc_find_index8", "nc_match_replace8", "memset", "iota",
    "affine_select", "sequence_bounds", "nonzero_with_count", "topk",
    # random numbers
    "dropout", "rng", "set_rng_seed", "rand_set_state", "rand_get_state", "rand2",
    # registers
    "register_alloc", "register_move", "register_load", "register_store",
    # queries
    "get_nc_version", "get_nc_sub_version",
]
for _name in _INSTRUCTIONS:
    globals()[_name] = _B(f"nisa.{_name}")
del _name

__all__ = [n for n in dir() if not n.startswith("_")]
