"""Cross-core instructions: core_barrier and sendrecv (LNC2, trn2/trn3) and the
``nki.collectives`` operations between the ranks of a multi-rank launch (``collective``).

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

- ``collective(src, dst, [src1], [metadata], kind, groups, ...)``: one ``nki.collectives``
  call on one (src, dst) pair of this rank; ``kind`` is all_reduce, all_gather,
  reduce_scatter, all_to_all, all_gather_v, all_to_all_v (plus ``*_v_counts``: the write-back
  of the received counts into row 2 of ``metadata``, in place: src = dst = metadata),
  permute, permute_implicit or permute_implicit_reduce.  The verifier checks the documented
  static rules (memory spaces, dtypes, shapes against the group size, collective_dim, ops);
  the group against the launch is checked by the frontend.  Engine: dma.  Effects: reads
  ``src`` / ``src1`` / ``metadata``, writes ``dst``.

Semantics: NKI language guide (nki/get-started/nki-language-guide) (NKI ``nki.isa.core_barrier`` /
``nki.isa.sendrecv`` / ``nki.isa.dma_engine`` pages); NKI ``nki.collectives`` pages (aws-neuron-sdk
nki/api/nki.collectives.rst).
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.irdl import (AttrSizedOperandSegments, irdl_op_definition, operand_def, opt_operand_def,
                       opt_prop_def, prop_def)
from xdsl.utils.exceptions import VerifyException

from . import rules
from .common import HBM_SPACES, describe, dtype_of, free_size, shape_of, space_of
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
#: gpsimd_dma bytes-per-partition limit by element size (nki.isa API reference (nki/api/nki/isa), sendrecv row)
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


#: ``nki.collectives`` operations carried by ``nki.collective`` / ``nisa.collective`` (``kind``)
KINDS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "all_gather_v",
         "all_to_all_v", "all_gather_v_counts", "all_to_all_v_counts", "permute", "permute_implicit",
         "permute_implicit_reduce")
#: kinds that combine the ranks' data with ``op``
REDUCING = ("all_reduce", "reduce_scatter", "permute_implicit_reduce")
#: reduction ops of nki.collectives (``nl.add``, ``nl.minimum``, ``nl.maximum``)
REDUCE_OPS = ("add", "minimum", "maximum")
#: kinds whose tensors must be in HBM (the NKI pages: "SBUF is not currently supported")
HBM_ONLY = ("all_to_all", "all_gather_v", "all_to_all_v", "permute")
#: the public API name of each kind (for messages)
API = {"all_reduce": "all_reduce", "all_gather": "all_gather", "reduce_scatter": "reduce_scatter",
       "all_to_all": "all_to_all", "all_gather_v": "all_gather_v", "all_to_all_v": "all_to_all_v",
       "all_gather_v_counts": "all_gather_v", "all_to_all_v_counts": "all_to_all_v", "permute": "collective_permute",
       "permute_implicit": "collective_permute_implicit",
       "permute_implicit_reduce": "collective_permute_implicit_reduce"}


def collective_api(op) -> str:
    kind = op.kind.data if isinstance(op.kind, StringAttr) else "?"
    return f"nki.collectives.{API.get(kind, kind)}"


def int_lists(a: ArrayAttr, what: str, api: str) -> list[list[int]]:
    """An ``ArrayAttr`` of ``ArrayAttr`` of integers as Python lists."""
    out = []
    for row in a.data:
        if not isinstance(row, ArrayAttr) or not all(isinstance(x, IntegerAttr) for x in row.data):
            raise VerifyException(f"{api}: '{what}' must be a list of lists of integers, got {a}")
        out.append([int(x.value.data) for x in row.data])
    return out


class _Collective(KeywordOp):
    """One ``nki.collectives`` operation on one (src, dst) pair of this rank (``kind``).

    ``groups`` are the replica groups (lists of global rank ids, disjoint, of equal size);
    ``pairs`` the (source, target) pairs of ``permute``; ``src1`` the second operand of
    ``permute_implicit_reduce``; ``metadata`` the uint32 counts tensor of the ``*_v`` kinds.
    """

    src = operand_def(MemRefType)
    src1 = opt_operand_def(MemRefType)
    dst = operand_def(MemRefType)
    metadata = opt_operand_def(MemRefType)
    kind = prop_def(StringAttr)
    groups = prop_def(ArrayAttr)
    op = opt_prop_def(StringAttr)
    collective_dim = opt_prop_def(IntegerAttr)
    pairs = opt_prop_def(ArrayAttr)
    channel = opt_prop_def(IntegerAttr)
    has_rdispls = opt_prop_def(IntegerAttr)
    priority = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        api = collective_api(self)
        kind = self.kind.data
        if kind not in KINDS:
            raise VerifyException(f"{api}: unknown collective kind {kind!r} (one of {', '.join(KINDS)})")
        groups = int_lists(self.groups, "groups", api)
        flat = [r for g in groups for r in g]
        if not groups or any(not g for g in groups) or any(r < 0 for r in flat):
            raise VerifyException(f"{api}: the replica group {groups} must be non-empty lists of "
                                  f"non-negative rank ids")
        if len(set(flat)) != len(flat):
            raise VerifyException(f"{api}: the sub-groups of the replica group {groups} overlap "
                                  f"(a rank may appear once)")
        if len({len(g) for g in groups}) != 1:
            raise VerifyException(f"{api}: the sub-groups of the replica group {groups} must all "
                                  f"have the same number of ranks")
        n = len(groups[0])
        roles = [("src", self.src), ("dst", self.dst)] + ([("src1", self.src1)] if self.src1 else [])
        spaces = {r: space_of(v) for r, v in roles}
        if not all(sp in HBM_SPACES or sp == "sbuf" for sp in spaces.values()):
            raise VerifyException(f"{api}: tensors must be in HBM or SBUF, got "
                                  + ", ".join(f"'{r}' in {sp}" for r, sp in spaces.items()))
        hbm = {sp in HBM_SPACES for sp in spaces.values()}
        if len(hbm) != 1:
            raise VerifyException(f"{api}: mixing memory spaces is not supported (all tensors on HBM "
                                  f"or all on SBUF), got " + ", ".join(f"'{r}' in {sp}" for r, sp in spaces.items()))
        on_hbm = hbm.pop()
        if kind in HBM_ONLY and not on_hbm:
            raise VerifyException(f"{api}: tensors must be on HBM (SBUF is not supported), got "
                                  f"'src' in {spaces['src']}")
        for r, v in roles[1:]:
            if dtype_of(v) != dtype_of(self.src):
                raise VerifyException(f"{api}: '{r}' and 'src' must have the same dtype, got "
                                      f"{describe(v)} and {describe(self.src)}")
        if kind in REDUCING:
            tok = self.op.data if self.op is not None else None
            if tok not in REDUCE_OPS:
                raise VerifyException(f"{api}: op={tok} is not supported (nl.add, nl.minimum or nl.maximum)")
        if "_v" in kind:
            self._verify_v(api, n)
            return
        self._verify_shapes(api, kind, n, on_hbm)

    def _verify_shapes(self, api: str, kind: str, n: int, on_hbm: bool) -> None:
        s, d = tuple(shape_of(self.src)), tuple(shape_of(self.dst))
        if self.src1 is not None and tuple(shape_of(self.src1)) != s:
            raise VerifyException(f"{api}: 'src1' {describe(self.src1)} and 'src' {describe(self.src)} "
                                  f"must have the same shape")
        if kind not in ("all_gather", "reduce_scatter", "all_to_all"):
            if s != d:
                raise VerifyException(f"{api}: 'dst' {describe(self.dst)} must have the shape of "
                                      f"'src' {describe(self.src)}")
            return
        dim = int(self.collective_dim.value.data) if self.collective_dim is not None else 0
        allowed = (0, 1) if kind == "all_gather" and not on_hbm else (0,)
        if dim not in allowed:
            where = "HBM" if on_hbm else "SBUF"
            raise VerifyException(f"{api}: collective_dim={dim} is not supported for {where} tensors "
                                  f"(supported: {', '.join(map(str, allowed))})")
        if not on_hbm and (len(s) != 2 or len(d) != 2):
            raise VerifyException(f"{api}: SBUF collectives operate on 2D tensors (one free "
                                  f"dimension), got 'src' {describe(self.src)}")
        if len(s) != len(d) or dim >= len(s):
            raise VerifyException(f"{api}: 'src' {describe(self.src)} and 'dst' {describe(self.dst)} "
                                  f"must have the same rank, with collective_dim={dim} in range")
        big, small, bname = (d, s, "dst") if kind == "all_gather" else (s, d, "src")
        if kind == "all_to_all":
            ok = s == d and s[dim] % n == 0
            want = f"the shape of 'src' with dimension {dim} divisible by the group size {n}"
        else:
            ok = (big[dim] == n * small[dim]
                  and all(a == b for i, (a, b) in enumerate(zip(big, small)) if i != dim))
            want = (f"'{bname}' must be the other tensor with dimension {dim} multiplied by the "
                    f"group size {n}")
        if not ok:
            raise VerifyException(f"{api}: 'src' {describe(self.src)} and 'dst' {describe(self.dst)} "
                                  f"do not fit: {'dst must have ' if kind == 'all_to_all' else ''}{want}")

    def _verify_v(self, api: str, n: int) -> None:
        m = self.metadata
        if m is None:
            raise VerifyException(f"{api}: needs a 'metadata' tensor")
        shape = tuple(shape_of(m))
        rows_ok = (len(shape) == 2 and shape[0] in (3, 4)) or (len(shape) == 3 and shape[0] == 1
                                                               and shape[1] in (3, 4))
        if str(dtype_of(m)) != "uint32" or not rows_ok or shape[-1] != n:
            raise VerifyException(f"{api}: 'metadata' must be a uint32 tensor of shape (rows, {n}) "
                                  f"(HBM) or (1, rows, {n}) (SBUF), rows 3 or 4, got {describe(m)}")
        if space_of(m) not in HBM_SPACES and len(shape) != 3:
            raise VerifyException(f"{api}: an SBUF 'metadata' is (1, rows, {n}), got {describe(m)}")




@irdl_op_definition
class CollectiveOp(_Collective, NkiInstruction):
    name = "nki.collective"
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class NisaCollectiveOp(_Collective, NisaInstruction):
    name = "nisa.collective"
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


NKI_OPS, NISA_OPS = register_twins((
    (CoreBarrierOp, NisaCoreBarrierOp, "gpsimd"),
    (SendRecvOp, NisaSendRecvOp, "dma"),
    (CollectiveOp, NisaCollectiveOp, "dma"),
))

__all__ = ["CoreBarrierOp", "NisaCoreBarrierOp", "SendRecvOp", "NisaSendRecvOp", "CollectiveOp",
           "NisaCollectiveOp", "NKI_OPS", "NISA_OPS"]
