"""Cross-core instructions of an LNC2 launch: core_barrier and sendrecv (trn2/trn3).

Each instruction is declared once as a mixin and instantiated as an ``nki`` op and its
``nisa`` twin (see :mod:`.instruction`), lowered 1:1 by ``lower-nki-to-nisa``::

    nki.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1])
    nisa.core_barrier(data=memref<256x64xf32, #nisa.mem<shared_hbm>> %out, cores=[0, 1]) engine=gpsimd
    nki.sendrecv(src=memref<128x64xf32, #nisa.mem<sbuf>> %a, dst=memref<128x64xf32, #nisa.mem<sbuf>> %b,
                 send_to_rank=1, recv_from_rank=1, pipe_id=0)
    nisa.sendrecv(src=..., dst=..., send_to_rank=1, recv_from_rank=1, pipe_id=0) engine=dma

- ``core_barrier(data, cores)``: both cores of the LNC must reach the barrier before either
  continues (a semaphore exchange).  ``data`` is the ``shared_hbm`` tensor the cores
  synchronise on; ``cores`` must be ``[0, 1]``.  Runs on the engine the user picks (any
  engine sequencer); default GpSimd.  Only that engine is blocked on hardware.
- ``sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine)``: this core sends
  its SBUF tile ``src`` to core ``send_to_rank`` and receives core ``recv_from_rank``'s
  ``src`` into its own SBUF tile ``dst``.  Ranks are 0 or 1; ``src``/``dst`` have the same
  dtype, partition count and elements per partition.  Operations with the same ``pipe_id``
  complete together.  ``dma_engine = "dma"`` (shared DMA, default) or ``"gpsimd_dma"`` (GpSimd's
  DMA: at most 1024 / 512 / 256 bytes per partition for 32 / 16 / 8-bit types).  Engine: dma.

Effects for ``nisa-schedule``: ``sendrecv`` writes ``dst`` and reads ``src``; ``core_barrier``
reads ``data`` (so it waits for earlier writes to it).  The ops are cross-core
synchronisation points: a reordering schedule or a cost model must not move instructions
across them.

Semantics: nki_spec.md sections 1.4 and 5.4 (NKI ``nki.isa.core_barrier`` /
``nki.isa.sendrecv`` / ``nki.isa.dma_engine`` pages).
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from . import rules
from .common import HBM_SPACES, describe, dtype_of, free_size, space_of
from .instruction import NisaInstruction, NkiInstruction, register_twins
from .syntax import KeywordOp

#: the only supported ``cores`` of core_barrier (the two cores of one LNC2 logical core)
BARRIER_CORES = (0, 1)
#: engines whose sequencer may run core_barrier
BARRIER_ENGINES = ("gpsimd", "vector", "scalar", "tensor", "sync")
#: ranks of an LNC2 launch
RANKS = (0, 1)
#: ``nisa.dma_engine`` members
DMA_ENGINES = ("dma", "gpsimd_dma")
#: gpsimd_dma bytes-per-partition limit by element size (nki_spec.md 5.4, sendrecv row)
GPSIMD_DMA_MAX_BYTES = {4: 1024, 2: 512, 1: 256}


def _int(op, prop: str) -> int:
    a = op.properties.get(prop)
    if not isinstance(a, IntegerAttr):
        raise VerifyException(f"{rules.api(op)}: '{prop}' must be an integer")
    return int(a.value.data)


class _CoreBarrier(KeywordOp):
    """Barrier of both cores of an LNC2 launch on the ``shared_hbm`` tensor ``data``."""

    data = operand_def(MemRefType)
    cores = prop_def(ArrayAttr)

    def verify_(self) -> None:
        api = rules.api(self)
        rules.require_target(self, "trn2", "core_barrier (LNC2 cross-core barrier)")
        sp = space_of(self.data)
        if sp != "shared_hbm":
            where = sp if sp in HBM_SPACES else f"{sp} (on-chip)"
            raise VerifyException(f"{api}: 'data' must be a shared_hbm tensor (the data both cores "
                                  f"synchronise on), got one in {where}")
        got = []
        for c in self.cores.data:
            if not isinstance(c, IntegerAttr):
                raise VerifyException(f"{api}: 'cores' must be a list of integers, got {self.cores}")
            got.append(int(c.value.data))
        if tuple(got) != BARRIER_CORES:
            raise VerifyException(f"{api}: cores={tuple(got)} is not supported; only cores=(0, 1) "
                                  f"(the two NeuronCores of an LNC2 launch)")
        rules.engine(self, BARRIER_ENGINES)


class _SendRecv(KeywordOp):
    """Send ``src`` to core ``send_to_rank``; receive core ``recv_from_rank``'s ``src`` into ``dst``."""

    src = operand_def(MemRefType)
    dst = operand_def(MemRefType)
    send_to_rank = prop_def(IntegerAttr)
    recv_from_rank = prop_def(IntegerAttr)
    pipe_id = prop_def(IntegerAttr)
    dma_engine = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        api = rules.api(self)
        rules.require_target(self, "trn2", "sendrecv (LNC2 core-to-core exchange)")
        rules.tile(self, "src", self.src, spaces=("sbuf",))
        rules.tile(self, "dst", self.dst, spaces=("sbuf",))
        if dtype_of(self.src) != dtype_of(self.dst):
            raise VerifyException(f"{api}: 'src' and 'dst' must have the same dtype, got "
                                  f"{describe(self.src)} and {describe(self.dst)}")
        rules.same_partitions(self, ("dst", self.dst), ("src", self.src))
        rules.same_free_size(self, ("dst", self.dst), ("src", self.src))
        for prop in ("send_to_rank", "recv_from_rank"):
            r = _int(self, prop)
            if r not in RANKS:
                raise VerifyException(f"{api}: {prop}={r} is not a rank of an LNC2 launch (0 or 1)")
        if _int(self, "pipe_id") < 0:
            raise VerifyException(f"{api}: pipe_id must be a non-negative integer, got "
                                  f"{_int(self, 'pipe_id')}")
        rules.enum(self, "dma_engine", DMA_ENGINES)
        if self.dma_engine is not None and self.dma_engine.data == "gpsimd_dma":
            size = dtype_of(self.src).itemsize
            limit = GPSIMD_DMA_MAX_BYTES.get(size)
            nbytes = free_size(self.src) * size
            if limit is None or nbytes > limit:
                raise VerifyException(
                    f"{api}: dma_engine=gpsimd_dma moves at most 1024/512/256 bytes per partition "
                    f"for 32/16/8-bit types; 'src' {describe(self.src)} has {nbytes} bytes per "
                    f"partition")
        rules.engine(self, ("dma",))


@irdl_op_definition
class CoreBarrierOp(_CoreBarrier, NkiInstruction):
    name = "nki.core_barrier"


@irdl_op_definition
class NisaCoreBarrierOp(_CoreBarrier, NisaInstruction):
    name = "nisa.core_barrier"


@irdl_op_definition
class SendRecvOp(_SendRecv, NkiInstruction):
    name = "nki.sendrecv"


@irdl_op_definition
class NisaSendRecvOp(_SendRecv, NisaInstruction):
    name = "nisa.sendrecv"


NKI_OPS, NISA_OPS = register_twins((
    (CoreBarrierOp, NisaCoreBarrierOp, "gpsimd"),
    (SendRecvOp, NisaSendRecvOp, "dma"),
))

__all__ = ["CoreBarrierOp", "NisaCoreBarrierOp", "SendRecvOp", "NisaSendRecvOp", "NKI_OPS", "NISA_OPS"]
