"""Closure builder for ``memref.subview``: a tensor view is a NumPy basic-indexing view.

Static sizes and strides (positive), static or dynamic (``index``) offsets.  Each source
dimension becomes a slice ``off : off + (size-1)*stride + 1 : stride`` when the result keeps
it, or the integer ``off`` when the subview drops it (a size-1 dimension absent from the
result shape), so writes through the view land in the source's bytes.  A view of a PSUM
tensor also views its matmul-written flags.  Bounds are checked at decode time for static
offsets (the fault is raised when the op executes) and on every execution for dynamic ones.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import memref

from ..diagnostics import error_at
from ..errors import NKIRuntimeError
from .env import Fault, guard

if TYPE_CHECKING:
    from .decoder import Decoder

_DYNAMIC = memref.DYNAMIC_INDEX


def subview(dec: Decoder, op: memref.SubviewOp):
    src = dec.buf(op, op.source, "source")
    offsets = list(op.static_offsets.get_values())
    sizes = list(op.static_sizes.get_values())
    strides = list(op.static_strides.get_values())
    if _DYNAMIC in sizes or _DYNAMIC in strides:
        raise error_at(op, "memref.subview: dynamic sizes or strides are not supported by the "
                           "interpreter", NKIRuntimeError)
    if len(offsets) != len(src.shape):
        raise error_at(op, f"memref.subview: {len(offsets)} offsets for a rank-"
                           f"{len(src.shape)} source", NKIRuntimeError)
    if any(s <= 0 for s in strides):
        raise error_at(op, f"memref.subview: strides must be positive, got {strides}",
                       NKIRuntimeError)
    res_shape = tuple(op.result.type.get_shape())
    keep, r = [], 0
    for size in sizes:
        if r < len(res_shape) and size == res_shape[r]:
            keep.append(True)
            r += 1
        elif size == 1:
            keep.append(False)
        else:
            raise error_at(op, f"memref.subview: sizes {sizes} do not match the result shape "
                               f"{list(res_shape)}", NKIRuntimeError)
    if r != len(res_shape):
        raise error_at(op, f"memref.subview: sizes {sizes} do not match the result shape "
                           f"{list(res_shape)}", NKIRuntimeError)
    dyn_slots = [dec.use(op, v, "offset") for v in op.offsets]
    res = dec.define(op.result, op)
    rb = dec.bufs[op.result]
    fsrc, fres = src.flags, rb.flags
    ss = src.slot
    src_type = str(op.source.type)

    def check(d: int, off: int) -> None:
        size, stride, dim = sizes[d], strides[d], src.shape[d]
        last = off + (size - 1) * stride
        if off < 0 or (size > 0 and last >= dim):
            raise Fault(f"out-of-bounds access of 'source' ({src_type}): dim {d} has "
                         f"size {dim}, but the view covers [{off}, {last + 1})"
                         + (f" (offset {off}, size {size}, stride {stride})" if stride != 1 else
                            f" (offset {off} + size {size} > {dim})"))

    def index(d: int, off: int):
        if keep[d]:
            return slice(off, off + (sizes[d] - 1) * strides[d] + 1, strides[d])
        return off

    if not dyn_slots:
        try:
            for d, off in enumerate(offsets):
                check(d, off)
        except Fault as e:
            msg = str(e)

            def fail(env):
                raise Fault(msg)
            return guard(op, fail)
        idx = tuple(index(d, off) for d, off in enumerate(offsets))
        if fsrc is None:
            def run(env):
                env[res] = env[ss][idx]
        else:
            def run(env):
                env[res] = env[ss][idx]
                env[fres] = env[fsrc][idx]
        return guard(op, run)

    plan = []  # per dim: (static offset or None, dyn slot)
    it = iter(dyn_slots)
    for off in offsets:
        plan.append((None, next(it)) if off == _DYNAMIC else (off, -1))
    plan_t = tuple(plan)
    ndim = len(offsets)

    def run(env):
        idx = []
        for d in range(ndim):
            off, ds = plan_t[d]
            if off is None:
                off = env[ds]
            check(d, off)
            idx.append(index(d, off))
        t = tuple(idx)
        env[res] = env[ss][t]
        if fres is not None:
            env[fres] = env[fsrc][t]
    return guard(op, run)
