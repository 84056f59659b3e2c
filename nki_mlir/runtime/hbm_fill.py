"""Sentinels of write-only HBM tensors, filled after the run where nothing wrote them.

A fresh HBM tensor (``nisa.alloc`` in HBM) is filled with the uninitialized-memory sentinel
(:func:`~.memory.fill_sentinel`) so that a read of a never-written element, or a returned
element the kernel never wrote, shows NaN (4 for integers).  Most kernels' outputs are
*write-only*: no instruction reads them, only whole-view ``nisa.dma_copy`` writes reach
them (directly or through ``memref.subview`` chains), and they are returned.  Then a
sentinel can only be observed in the returned array, at an element no DMA wrote, so the
decoder (:func:`write_only`) gives such an alloc a tracking slot instead of the fill:

- the alloc stores a fresh ``np.empty`` array and an empty list in the tracking slot;
- every ``nisa.dma_copy`` into it (or a view of it) appends its destination view;
- at the end of the run (after queue mode drains, :func:`finisher`), :func:`fill_unwritten`
  fills the elements none of the recorded views covers.

The returned array is then the one a filled alloc would give.  In an SPMD / LNC launch a
``shared_hbm`` tensor is the launch's (:mod:`.spmd`, filled when made) and the tracking slot
stays empty.  Whole-tile writes cost one pointer comparison per recorded view at the end
instead of a pass over the tensor at the alloc (16 MiB for a 4096x1024 fp32 output).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import SSAValue

from .env import STATE, Closure
from .memory import fill_sentinel

if TYPE_CHECKING:
    from .decoder import Decoder

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def write_only(v: SSAValue) -> list | None:
    """The ``nisa.dma_copy`` ops writing the HBM tensor ``v`` when every use of ``v`` (and,
    transitively, of the ``memref.subview`` results viewing it) is a ``func.return``
    operand, a ``nisa.release``, the source of a ``memref.subview`` or the ``dst`` (and not
    the ``src``) of a ``nisa.dma_copy``; else None (some op may read it)."""
    dmas: list = []
    todo = [v]
    while todo:
        x = todo.pop()
        for use in x.uses:
            u = use.operation
            name = u.name
            if name in ("func.return", "nisa.release"):
                continue
            if name == "memref.subview" and use.index == 0:
                todo.append(u.results[0])
            elif name == "nisa.dma_copy" and u.dst is x and u.src is not x:
                dmas.append(u)
            else:
                return None
    return dmas


def track(dec: Decoder, v: SSAValue) -> int | None:
    """Register the HBM alloc result ``v`` for a deferred fill when it is write-only:
    returns its tracking slot (and tells its DMAs, :data:`Decoder.hbm_tracked`), or None."""
    dmas = write_only(v)
    if dmas is None:
        return None
    ts = dec.fresh()
    for op in dmas:
        dec.hbm_tracked[op] = ts
    dec.hbm_fills.append((dec.slot_of[v], ts, np.dtype(dec.bufs[v].dtype)))
    return ts


def recording(impl: Closure, d: int, ts: int) -> Closure:
    """A ``nisa.dma_copy`` closure that also records its destination view ``env[d]`` in the
    tracking list ``env[ts]`` (when the alloc started one)."""
    def run(env):
        impl(env)
        seen = env[ts]
        if seen is not None:
            seen.append(env[d])
    return run


def finisher(fills: list) -> Closure:
    """The closure ending a function body with deferred fills: drain queue mode, then
    :func:`fill_unwritten` every tracked tensor of this run."""
    items = tuple(fills)

    def run(env):
        qr = env[STATE].queues
        if qr is not None:
            qr.drain()
        origins = env[STATE].mem.origins
        for s, ts, dt in items:
            seen = env[ts]
            if seen is not None:
                env[ts] = None
                fill_unwritten(env[s], seen, dt, origins)
    return run


def _box(a: np.ndarray, v: np.ndarray, base: int) -> tuple | None:
    """``(start index, shape)`` of ``v`` as a box of ``a`` (same strides), or None."""
    if v.strides != a.strides:
        return None
    off = v.__array_interface__["data"][0] - base
    start = []
    for st in a.strides:
        q, off = divmod(off, st)
        start.append(q)
    return tuple(start), v.shape


def covered(a: np.ndarray, views: list, origins: dict | None = None) -> bool:
    """Whether the views of ``a`` (basic slices) cover all of it: ``a`` itself, or boxes of
    one shape at distinct starts aligned to that shape (so disjoint) as many as fill ``a``.
    False when that is not shown (the caller then computes the coverage element-wise).
    ``origins`` (``Memory.origins``) gives the start index of the kept subviews of ``a``
    (else it is worked out from the views' addresses)."""
    if a.size == 0:
        return True
    ashape, astrides = a.shape, a.strides
    for v in views:      # a slice of a with a's shape and strides starts at 0 (in bounds)
        if v.shape == ashape and v.strides == astrides:
            return True
    base = None
    starts = set()
    shape = None
    for v in views:
        o = origins.get(id(v)) if origins else None
        if o is not None and o[0] is v and o[1] is a and v.strides == astrides:
            b = (o[2], v.shape)
        else:
            if base is None:
                base = a.__array_interface__["data"][0]
            b = _box(a, v, base)
        if b is None or (shape is not None and b[1] != shape):
            return False
        shape = b[1]
        for s, n in zip(b[0], shape):
            if s % n:
                return False
        starts.add(b[0])
    return shape is not None and len(starts) * math.prod(shape) == a.size


def fill_unwritten(a: np.ndarray, views: list, dt: np.dtype, origins: dict | None = None) -> None:
    """Fill the elements of ``a`` (C-contiguous) that none of ``views`` (basic-slice views
    of ``a``) covers with the sentinel of :func:`~.memory.fill_sentinel` (``origins``: as
    for :func:`covered`)."""
    if covered(a, views, origins):
        return
    if not views:
        fill_sentinel(a)
        return
    isz = a.itemsize
    base = a.__array_interface__["data"][0]
    mask = np.zeros(a.size, np.bool_)
    for v in views:
        off = (v.__array_interface__["data"][0] - base) // isz
        m = np.lib.stride_tricks.as_strided(mask[off:], v.shape, [s // isz for s in v.strides])
        m[...] = True
    one = np.empty(1, dt)
    fill_sentinel(one)
    u = _UINT[isz]
    np.copyto(a.reshape(-1).view(u), one.view(u)[0], where=~mask)
