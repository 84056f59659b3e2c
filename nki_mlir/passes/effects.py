"""Compatibility path: the memory-effect semantics of the ops live in
:mod:`nki_mlir.dialects.effects` (the dialects' own facts, read by the passes, the
interpreter, the cost model and the frontend)."""
from ..dialects.effects import (  # noqa: F401
    ATTR_BANK, ATTR_COPIES, ATTR_COPY_STRIDE, ATTR_OFFSET, ATTR_PARTITION, LOOP_OPS, VIEW_OPS,
    Access, Region, RegionCache, accesses, alloc_of, base_buffer, bytes_per_partition,
    element_bytes, enclosing_loops, int_attr, is_instruction, is_view, may_alias, region_of,
)
