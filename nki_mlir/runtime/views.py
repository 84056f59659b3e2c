"""Closure builders for the view ops: every tensor view is a NumPy view sharing memory.

- ``memref.subview``: a NumPy basic-indexing view of its source (below).
- ``memref.reinterpret_cast``: offset / sizes / strides count elements from the start of
  the *underlying buffer* (the alloc or argument the source is a view of, found through
  the view chain), so the result is ``np.lib.stride_tricks.as_strided`` over that buffer's
  memory.  For an SBUF/PSUM buffer the storage is ``[P, F]`` (``F`` = free size): the
  partition stride must be a multiple of ``F`` and the free part of every access must stay
  inside one partition.  Static offsets are bounds-checked at decode time (the fault is
  raised when the op executes), dynamic ones on every execution: a dynamic view out of
  bounds whose every user is a ``nisa.dma_copy`` with ``oob_is_err=false``
  (``oob_mode=skip``) is not an error, its slot holds ``None`` and those DMAs transfer
  nothing (:func:`skips_oob`, :func:`unless_skipped`; NKI docs ``nki.isa.dma_copy``: with a
  dynamic start address, ``oob_mode.skip`` "skip[s] the DMA transfer for a given dynamic
  address ... when it is out of bound").
- ``nisa.view_dtype``: ``ndarray.view(dtype)`` (the last axis is contiguous).  A
  ``reinterpret_cast`` below it views the buffer's bytes in its own element type.

A view of a PSUM tensor also views its matmul-written flags.

``memref.subview`` details:

Static sizes and strides (positive), static or dynamic (``index``) offsets.  Each source
dimension becomes a slice ``off : off + (size-1)*stride + 1 : stride`` when the result keeps
it, or the integer ``off`` when the subview drops it (a size-1 dimension absent from the
result shape), so writes through the view land in the source's bytes.  A view of a PSUM
tensor also views its matmul-written flags.  Bounds are checked at decode time for static
offsets (the fault is raised when the op executes) and on every execution for dynamic ones.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.lib.stride_tricks import as_strided
from xdsl.dialects import memref
from xdsl.ir import OpResult

from ..diagnostics import error_at
from ..errors import NKIRuntimeError
from . import precise_fp
from .blocks import placement
from .env import Closure, Fault, guard
from .kept_views import KeptCast, KeptSubview
from .memory import flag_dtype

if TYPE_CHECKING:
    from .decoder import Decoder

_DYNAMIC = memref.DYNAMIC_INDEX


def subview(dec: Decoder, op: memref.SubviewOp):
    source, result = op.source, op.result
    src = dec.buf(op, source, "source")
    static = (op.static_offsets.get_values(), op.static_sizes.get_values(),
              op.static_strides.get_values())
    res_shape = result.type.get_shape()
    # what the static attributes and shapes decide: worked out once per decode
    key = (_SUBVIEW_PLAN, src.shape, res_shape, *static)
    plan = dec.memo.get(key)
    if plan is None:
        plan = dec.memo[key] = _subview_plan(op, src.shape, tuple(res_shape), *static)
    offsets, sizes, strides, keep, box, idx = plan[:6]
    dyn_slots = [dec.use(op, v, "offset") for v in op.offsets]
    base = _base(source)
    alloc = isinstance(base, OpResult) and base.op.name == "nisa.alloc"
    on_chip = alloc and placement(base.op) is not None  # a placed tile: lives with the memory
    per_run = alloc and not on_chip         # a fresh array every run (a kernel's output)
    res = dec.define(result, op)
    rb = dec.bufs[result]
    fsrc, fres = src.flags, rb.flags
    ss = src.slot
    src_type = dec.type_text(source.type)

    src_shape = src.shape

    def check(d: int, off: int) -> None:
        _check(src_shape, sizes, strides, src_type, d, off)

    if not dyn_slots:
        if idx is None:       # out of bounds: the fault of the first dim out of bounds
            try:
                for d, off in enumerate(offsets):
                    check(d, off)
            except Fault as e:
                return _fault_at_run(op, e)
        return guard(op, KeptSubview(ss, res, fsrc, fres, (), None, box, on_chip, per_run,
                                     plan[7]).run)

    plan = []  # per dim: (static offset or None, dyn slot)
    it = iter(dyn_slots)
    for off in offsets:
        plan.append((None, next(it)) if off == _DYNAMIC else (off, -1))
    plan_t = tuple(plan)
    ndim = len(offsets)

    def indices(env):
        idx = []
        for d in range(ndim):
            off, ds = plan_t[d]
            if off is None:
                off = env[ds]
            check(d, off)
            idx.append(_index(keep, sizes, strides, d, off))
        return tuple(idx)

    return guard(op, KeptSubview(ss, res, fsrc, fres, tuple(dyn_slots), indices, box, on_chip,
                                 per_run, None).run)


_SUBVIEW_PLAN = object()    # (the key prefix of subview plans in ``Decoder.memo``)


def _subview_plan(op, src_shape: tuple, res_shape: tuple, offsets_v: tuple, sizes_v: tuple,
                  strides_v: tuple) -> tuple:
    """``(offsets, sizes, strides, keep, box, idx, starts, (idx, starts))`` of a ``memref.subview`` of a
    ``src_shape`` source: the static lists, which dims the result keeps, whether the view
    keeps every dim with unit steps, the index tuple of static offsets in bounds (None
    when an offset is dynamic or out of bounds) and the start index of its box (None when
    not a box).  They depend on the shapes and static
    attributes only, so subviews with the same ones share them.

    Raises:
        NKIRuntimeError: located at ``op``, a subview the interpreter cannot run.
    """
    offsets, sizes, strides = list(offsets_v), list(sizes_v), list(strides_v)
    if _DYNAMIC in sizes or _DYNAMIC in strides:
        raise error_at(op, "memref.subview: dynamic sizes or strides are not supported by the "
                           "interpreter", NKIRuntimeError)
    if len(offsets) != len(src_shape):
        raise error_at(op, f"memref.subview: {len(offsets)} offsets for a rank-"
                           f"{len(src_shape)} source", NKIRuntimeError)
    if any(s <= 0 for s in strides):
        raise error_at(op, f"memref.subview: strides must be positive, got {strides}",
                       NKIRuntimeError)
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
    box = all(keep) and all(st == 1 for st in strides)     # (Memory.origins)
    idx = None
    if _DYNAMIC not in offsets:
        try:
            for d, off in enumerate(offsets):
                _check(src_shape, sizes, strides, None, d, off)
            idx = tuple(_index(keep, sizes, strides, d, off) for d, off in enumerate(offsets))
        except Fault:
            idx = None
    starts = tuple(x.start for x in idx) if box and idx is not None else None
    return offsets, sizes, strides, keep, box, idx, starts, (idx, starts)


def _check(src_shape, sizes, strides, src_type, d: int, off: int) -> None:
    """Raise the :class:`Fault` of a subview whose dim ``d`` at offset ``off`` leaves the
    source (of type ``src_type``)."""
    size, stride, dim = sizes[d], strides[d], src_shape[d]
    last = off + (size - 1) * stride
    if off < 0 or (size > 0 and last >= dim):
        raise Fault(f"out-of-bounds access of 'source' ({src_type}): dim {d} has "
                    f"size {dim}, but the view covers [{off}, {last + 1})"
                    + (f" (offset {off}, size {size}, stride {stride})" if stride != 1 else
                       f" (offset {off} + size {size} > {dim})"))


def _index(keep, sizes, strides, d: int, off: int):
    """The index of dim ``d`` at offset ``off``: a slice when the view keeps the dim, else
    the integer ``off``."""
    if keep[d]:
        return slice(off, off + (sizes[d] - 1) * strides[d] + 1, strides[d])
    return off




#: ops whose result views the memory of their first operand (cf. dialects/effects.py VIEW_OPS)
_VIEWS = ("memref.subview", "memref.reinterpret_cast", "memref.cast", "nisa.view_dtype",
          "nki.view_dtype")
_ON_CHIP = ("sbuf", "psum")


def _base(v):
    while isinstance(v, OpResult) and v.op.name in _VIEWS:
        v = v.op.operands[0]
    return v


def _last_contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` with a size-1 last axis given the itemsize stride (so ``.view`` may rescale it)."""
    if a.ndim and a.shape[-1] == 1 and a.strides[-1] != a.itemsize:
        return np.lib.stride_tricks.as_strided(a, a.shape, a.strides[:-1] + (a.itemsize,))
    return a


def skips_oob(op) -> bool:
    """Whether ``op`` is a ``nisa.dma_copy`` that skips out-of-bounds dynamic addresses
    (``oob_is_err`` false: ``oob_mode=skip``)."""
    if op.name != "nisa.dma_copy":
        return False
    flag = op.properties.get("oob_is_err")
    return flag is not None and not bool(flag.value.data)


def unless_skipped(impl: Closure, slots: tuple[int, ...]) -> Closure:
    """``impl``, not run when one of ``slots`` holds ``None`` (an out-of-bounds dynamic view
    of a DMA with ``oob_mode=skip``: the transfer is skipped)."""
    def run(env):
        for s in slots:
            if env[s] is None:
                return
        impl(env)
    return run


def reinterpret_cast(dec: Decoder, op: memref.ReinterpretCastOp):
    source, result = op.source, op.result
    src = dec.buf(op, source, "source")
    b = _base(source)
    base = src if b is source else dec.buf(op, b, "source")
    wide = _widened_cast(dec, op, base, src)
    if wide is not None:
        dec.define(result, op)
        return wide
    offsets = op.static_offsets.get_values()
    sizes_v = op.static_sizes.get_values()
    strides_v = op.static_strides.get_values()
    # the pattern's facts depend on these only: worked out once per decode (:func:`_cast_plan`)
    key = (_CAST_PLAN, src.dtype, base.dtype, base.shape, base.space, sizes_v, strides_v)
    plan = dec.memo.get(key)
    if plan is None or len(offsets) != 1:
        plan = _cast_plan(op, src, base, list(offsets), sizes_v, strides_v)
        dec.memo[key] = plan
    dt, check, make = plan
    src_type = dec.type_text(source.type)
    dyn = [dec.use(op, v, "offset") for v in op.offsets]
    res = dec.define(result, op)
    rb = dec.bufs[result]
    bs, bf, fres = base.slot, base.flags, rb.flags
    ft = flag_dtype(dt) if fres is not None else None
    if not dyn:
        off0 = int(offsets[0])
        try:
            check(off0, src_type)
        except Fault as e:
            return _fault_at_run(op, e)

        return guard(op, KeptCast(bs, bf, res, fres, make, dt, ft, off0).run)  # (kept like a
        # subview's views: as_strided is slow)
    ds = dyn[0]
    users = [u.operation for u in result.uses]
    skip = bool(users) and all(skips_oob(u) for u in users)

    def run_dyn(env):
        off = int(env[ds])
        try:
            check(off, src_type)
        except Fault:
            if not skip:
                raise
            env[res] = None         # out of bounds: the DMAs using it skip their transfer
            if fres is not None:
                env[fres] = None
            return
        env[res] = make(env[bs], dt, off)
        if fres is not None:
            env[fres] = make(env[bf], ft, off)
    return guard(op, run_dyn)


_CAST_PLAN = object()    # (the key prefix of reinterpret_cast plans in ``Decoder.memo``)


def _cast_plan(op, src, base, offsets: list, sizes_v: tuple, strides_v: tuple) -> tuple:
    """``(dtype, check, make)`` of a ``memref.reinterpret_cast`` of ``src`` (a view of
    ``base``) with static ``sizes_v`` / ``strides_v``: ``check(off, src_type)`` raises the
    :class:`Fault` of an out-of-bounds offset (``src_type`` is printed in its message),
    ``make(arr, t, off)`` is the view of ``base``'s array ``arr`` (or its flags) as ``t``.
    They depend on the dtypes, ``base``'s shape and space, sizes and strides only, so ops
    with the same ones share them."""
    name = "memref.reinterpret_cast"
    sizes = [int(x) for x in sizes_v]
    strides = [int(x) for x in strides_v]
    if _DYNAMIC in sizes or _DYNAMIC in strides or len(offsets) != 1:
        raise error_at(op, f"{name}: dynamic sizes or strides are not supported by the "
                           f"interpreter", NKIRuntimeError)
    dt = np.dtype(src.dtype)
    a0, a = np.dtype(base.dtype).itemsize, dt.itemsize
    on_chip = base.space in _ON_CHIP
    if on_chip:
        parts = base.shape[0]
        nbytes = int(np.prod(base.shape[1:], dtype=np.int64)) * a0
        if nbytes % a:
            raise error_at(op, f"{name}: a partition of the buffer ({nbytes} bytes) is not a whole "
                               f"number of {a}-byte elements", NKIRuntimeError)
        free = nbytes // a
        if strides and strides[0] % free:
            raise error_at(op, f"{name}: the partition stride {strides[0]} is not a multiple of "
                               f"the buffer's free size {free}", NKIRuntimeError)
        pstep = strides[0] // free if strides else 0
        flo = sum(min(0, s * (n - 1)) for s, n in zip(strides[1:], sizes[1:]))
        fhi = sum(max(0, s * (n - 1)) for s, n in zip(strides[1:], sizes[1:]))
    else:
        nbytes = int(np.prod(base.shape, dtype=np.int64)) * a0
        total = nbytes // a
        lo = sum(min(0, s * (n - 1)) for s, n in zip(strides, sizes))
        hi = sum(max(0, s * (n - 1)) for s, n in zip(strides, sizes))
    shape = tuple(sizes)

    def check(off: int, src_type) -> None:
        if on_chip:
            p0, f0 = divmod(off, free)
            plast = p0 + pstep * (sizes[0] - 1) if sizes else p0
            if off < 0 or plast >= parts or f0 + flo < 0 or f0 + fhi >= free:
                raise Fault(f"out-of-bounds access of 'source' ({src_type}): the pattern (offset "
                            f"{off}, sizes {sizes}, strides {strides}) covers partitions "
                            f"[{p0}, {plast + 1}) and free elements [{f0 + flo}, {f0 + fhi + 1}) "
                            f"of a buffer of {parts} partitions x {free} elements")
        elif off + lo < 0 or off + hi >= total:
            raise Fault(f"out-of-bounds access of 'source' ({src_type}): the pattern (offset "
                        f"{off}, sizes {sizes}, strides {strides}) covers elements "
                        f"[{off + lo}, {off + hi + 1}) of a buffer of {total} elements")

    inner: dict = {}     # dtype -> the byte strides of the free dims (all dims off chip)
    # an on-chip [partitions, free] pattern with positive steps is a basic slice of the
    # rows (same shape, strides and first element, checked in bounds by ``check``)
    sliced = on_chip and len(sizes) == 2 and min(sizes) >= 1 and pstep >= 1 and strides[1] >= 1
    if sliced:
        plen, fstep = (sizes[0] - 1) * pstep + 1, strides[1]
        flen = (sizes[1] - 1) * fstep + 1

    def make(arr: np.ndarray, t: np.dtype, off: int) -> np.ndarray:
        fb = inner.get(t)
        if fb is None:
            fb = inner[t] = [s * t.itemsize for s in (strides[1:] if on_chip else strides)]
        if on_chip:
            rows = arr.reshape((parts, -1), copy=False).view(t)
            p0, f0 = divmod(off, free)
            if sliced and rows.strides[1] == t.itemsize:    # the same view by basic
                # slicing (as_strided costs ~10x more)
                return rows[p0:p0 + plen:pstep, f0:f0 + flen:fstep]
            return as_strided(rows[p0:, f0:], shape, [pstep * rows.strides[0]] + fb)
        if not arr.flags.c_contiguous:
            raise Fault("a reinterpret_cast view of a non-contiguous argument array is not "
                        "supported; pass np.ascontiguousarray(...)")
        return as_strided(arr.reshape(-1).view(t)[off:], shape, fb)
    return dt, check, make


def _widened_cast(dec: Decoder, op, a, b) -> Closure | None:
    """With ``NKI_PRECISE_FP=0`` (:mod:`.precise_fp`): the closure failing at run time of a
    view from tensor ``a`` to ``b`` that reinterprets a bf16 / fp8 tensor stored as float32,
    else None."""
    if not dec.wide:
        return None
    da, db = dec.declared(a), dec.declared(b)
    if da != db and (np.dtype(a.dtype) != da or np.dtype(b.dtype) != db):
        return _fault_at_run(op, Fault(precise_fp.reinterpret_error(op.name, da, db)))
    return None


def view_dtype(dec: Decoder, op):
    src = dec.buf(op, op.source, "source")
    res = dec.define(op.result, op)
    rb = dec.bufs[op.result]
    wide = _widened_cast(dec, op, src, rb)
    if wide is not None:
        return wide
    dt, ss, sf, fres = np.dtype(rb.dtype), src.slot, src.flags, rb.flags
    ft = flag_dtype(dt) if fres is not None else None

    def run(env):
        env[res] = _last_contiguous(env[ss]).view(dt)
        if fres is not None:
            env[fres] = _last_contiguous(env[sf]).view(ft)
    return guard(op, run)


#: closure builders of this module (merged into runtime/handlers.py HANDLERS)
HANDLERS = {
    "memref.subview": subview,
    "memref.reinterpret_cast": reinterpret_cast,
    "nisa.view_dtype": view_dtype,
}


def _fault_at_run(op, exc: Fault):
    """The run function of a view whose fault is known at decode time: raises ``exc``'s
    message when (and only if) the op runs."""
    msg = str(exc)

    def fail(env):
        raise Fault(msg)
    return guard(op, fail)
