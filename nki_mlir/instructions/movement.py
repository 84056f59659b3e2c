"""Data movement: dma_copy (DMA queues), tensor_copy (Vector / Scalar / GpSimd).

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa) and the NKI
API common tables (nki/api/nki.api.shared).  ``dma_copy`` copies in flat element order
(any shapes of equal element count), bit-exact between equal dtypes, else through float32;
``tensor_copy`` is bit-exact between equal dtypes on Vector / GpSimd, and goes through
float32 on the Scalar engine (lossy for int32 above 2^24).
"""
from __future__ import annotations

import math

import numpy as np

from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import bool_attr
from ..dialects.ods import Engine, EnumProp, Flag, Stream, Tile
from ..dialects.ods_forms import EMITTED, ApiArg, Dma, IsaForm
from ..dialects.ods_verify_memo import types_only
from ..errors import NKIRuntimeError, NKITypeError
from ..frontend import args as A
from ..frontend.tensor_ap import emit_indirect_dma
from ..runtime import bind, forward, hbm_fill, out_forward, views
from ..runtime.env import check_elems, engine, finish
from ..runtime.isa_memory import copy_closure
from .define import instruction

# ---------------------------------------------------------------------------- dma_copy


def _dma_copy_call(cg, api: str, a: dict):
    """``dst_rmw_op`` (removed in NKI 0.3), ``priority`` (a QoS level), an indirect side
    (a gather / scatter: ``nki.dma_copy_indirect``), ``engine`` only with ``dge_mode=hwdge``."""
    if a["dst_rmw_op"] is not None:
        raise cg.b.error(f"{api}: dst_rmw_op was removed in NKI 0.3; use nisa.dma_compute", NKITypeError)
    priority = a["priority"]
    if priority is not None and (isinstance(priority, bool) or not isinstance(priority, int)
                                 or not 0 <= priority <= 3):
        raise cg.b.error(f"{api}: priority must be a DMA QoS level 0..3, got {priority!r}", NKITypeError)
    d, s = A.tensor(cg, api, "dst", a["dst"]), A.tensor(cg, api, "src", a["src"])
    if d.indirect is not None or s.indirect is not None:  # gather / scatter (tensor_ap.py)
        emit_indirect_dma(cg, api, d, s, A.enum_name(cg, api, "oob_mode", a["oob_mode"], "oob_mode"),
                          A.enum_name(cg, api, "dge_mode", a["dge_mode"], "dge_mode"))
        return EMITTED
    mode, eng = A.enum_name(cg, api, "dge_mode", a["dge_mode"], "dge_mode"), A.engine(cg, api, a["engine"])
    if eng is not None and mode != "hwdge":
        raise cg.b.error(f"{api}: engine={eng} is only valid with dge_mode=hwdge (it picks the "
                         f"sync or scalar queue that drives the hardware DGE)", NKITypeError)
    return None


def _dma_copy_properties(op) -> dict:
    """``oob_mode`` -> AWS's ``oob_is_err`` (true unless ``skip``); ``dge_mode=unknown`` dropped."""
    oob = op.properties.get("oob_mode")
    props = {"oob_is_err": bool_attr(oob is None or oob.data != "skip")}
    mode = op.properties.get("dge_mode")
    if mode is not None and mode.data != "unknown":
        props["dge_mode"] = mode
    return props


def _verify_isa_dma_copy(op) -> None:
    rules.dma(op, op.dst, op.src)
    rules.engine(op, ("dma", "sync", "scalar", "gpsimd"))


@instruction
class dma_copy:
    """Copy ``src`` into ``dst`` on a DMA queue, in flat element order, converting the dtype
    (through float32) when the dtypes differ.

    ``dst`` / ``src``: HBM or SBUF tensors (DMA cannot access PSUM) with the same number of
    elements.  ``dge_mode``: the descriptor generation (``nisa.dge_mode``; ``hwdge`` needs
    trn2 and equal dtypes), ``engine``: ``sync`` or ``scalar``, the queue that drives the
    hardware DGE (only with ``dge_mode=hwdge``); ``oob_mode``: what an out-of-bounds index
    of an indirect side or dynamic address (``.ap(scalar_offset=...)``) does: ``error``, or
    ``skip`` the row / the whole transfer; ``priority``: a QoS level 0..3.  An
    indirect ``dst`` / ``src`` (``.ap(..., vector_offset=...)``) is a scatter / gather.

    Raises ``NKITypeError`` for a removed or ill-typed argument (``dst_rmw_op``: use
    ``nisa.dma_compute``) and ``NKIVerifyError`` for another memory, size, dtype or engine.
    NKI docs: ``nki.isa.dma_copy`` (nki/api/generated/nki.isa.dma_copy).
    """

    dst = Tile(writes=True, spaces=None)
    src = Tile(spaces=None)
    dst_rmw_op = ApiArg()
    dge_mode = EnumProp(enum="dge_mode")
    oob_mode = EnumProp(enum="oob_mode")
    engine = Engine("dma", checked=False, sync="trn1", scalar="trn1", gpsimd="trn1")
    priority = ApiArg()
    unique_indices = ApiArg(default=True)
    cost = Dma(srcs=("src",), source="DMABW, DMAOV (docs/cost-model.md)")
    isa = IsaForm("dma_copy", dst=Tile(writes=True, spaces=None), src=Tile(spaces=None),
                  dge_mode=EnumProp(), oob_is_err=Flag(), props=_dma_copy_properties,
                  verify=_verify_isa_dma_copy)
    call = _dma_copy_call
    full_writes = ("dst",)
    beta1_result = False

    def verify(op):
        rules.dma(op, op.dst, op.src)

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        if math.prod(dst.shape) != math.prod(src.shape):
            raise error_at(op, f"nisa.dma_copy: dst has {math.prod(dst.shape)} elements but src "
                               f"has {math.prod(src.shape)}", NKIRuntimeError)
        impl = copy_closure(dst, src, exact=dst.dtype == src.dtype,
                            transposed=bind.bound_source(dec, op.src))
        skip = views.skips_oob(op)
        if not skip and forward.forwardable(dec, op):  # program order: read the input in place
            itemsize = np.dtype(dst.dtype).itemsize
            bc = {"broadcast": True} if forward.broadcast_readers(op) else {}
            impl = forward.forwarding(impl, dst.slot, src.slot, dst.shape, itemsize, **bc)
            forward.queued(dec, op, dst.slot, src.slot, dst.shape, itemsize, **bc)
        if not skip:
            impl = out_forward.copying(dec, op, impl, src.slot)   # a tile computed in dst
        ts = dec.hbm_tracked.get(op)
        if ts is not None:
            impl = hbm_fill.recording(impl, dst.slot, ts)
        if skip:        # an out-of-bounds dynamic address: no transfer (runtime/views.py)
            impl = views.unless_skipped(impl, (dst.slot, src.slot))
        return finish(op, impl, dst)


# ------------------------------------------------------------------------- tensor_copy


def _tensor_copy_call(cg, api: str, a: dict):
    """``dtype=``, the legacy (NKI 0.x) spelling of the result dtype that tutorial kernels
    still pass next to ``dst=``: it must name an NKI dtype and is otherwise ignored (the copy
    converts to ``dst.dtype``)."""
    if a["dtype"] is not None:
        from ..frontend.lang_calls import _dtype
        _dtype(cg, api, a["dtype"])


@instruction
class tensor_copy:
    """Copy ``src`` into ``dst`` on chip, converting to ``dst``'s dtype, on the Vector
    (default), Scalar (trn2 and newer) or GpSimd engine.

    ``dst`` / ``src``: SBUF or PSUM tiles with the same partition count and elements per
    partition (GpSimd cannot access PSUM); bit-exact between equal dtypes on Vector and
    GpSimd, through float32 on the Scalar engine.  ``dtype``: the legacy spelling of the
    result dtype, checked and ignored.

    Raises ``NKITypeError`` for a non-tile argument or a bad ``dtype`` and
    ``NKIVerifyError`` for another shape, memory or engine.
    NKI docs: ``nki.isa.tensor_copy`` (nki/api/generated/nki.isa.tensor_copy).
    """

    dst = Tile(writes=True, spaces=None)
    src = Tile(spaces=None)
    engine = Engine("vector", checked=False, scalar="trn2", gpsimd="trn1")
    dtype = ApiArg()
    cost = Stream("src", perf="copy", source="ISA_OLD: VectorE N (copy perf mode, ARCH3)")
    call = _tensor_copy_call
    elementwise = True
    full_writes = ("dst",)

    @types_only(also=lambda op: rules.start_partition(op, ("dst", op.dst), ("src", op.src)))
    def verify(op):
        rules.elementwise(op, ("dst", "src"), ("vector", "scalar", "gpsimd"))
        rules.core(op, ("dst", "src"), "vector")
        rules.tensor_copy_engine(op)

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        check_elems(op, dst, ("src", src))
        exact = engine(op) != "scalar" and dst.dtype == src.dtype
        return finish(op, copy_closure(dst, src, exact, bind.bound_source(dec, op.src)), dst)
