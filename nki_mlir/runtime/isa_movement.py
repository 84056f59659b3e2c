"""Closure builders for dma_transpose, dma_compute, nc_n_gather, local_gather, nc_stream_shuffle.

- ``nisa.dma_transpose``: ``dst = src.transpose(axes)``, bit-exact (equal dtypes).
- ``nisa.dma_compute``: ``dst = sum_i srcs[i] * scales[i]`` accumulated in fp32 in source
  order, each source read in flat element order, cast to ``dst``'s dtype.
- ``nisa.nc_n_gather``: ``dst[p, j] = data[p].flat[indices[p, j]]``; an index outside
  ``[0, F)`` is a runtime fault naming the partition, position and value.
- ``nisa.local_gather``: per 16-partition group ``g``, ``idx`` = ``index[16g:16g+16]`` (free
  dims flattened) read partition dim first, first ``num_valid_indices`` kept; partition ``p``
  of the group gets ``dst[p].flat[k*E + e] = src_buffer[p].flat[idx[k] + e]``.  The hardware
  leaves out-of-bounds reads undefined; the interpreter reports them as a runtime fault.
- ``nisa.nc_stream_shuffle``: per 32-partition quadrant ``q``, ``dst[q*32+i] = src[q*32+mask[i]]``
  unless ``mask[i] == 255``; the source is read before anything is written (in-place safe).

Semantics: nki.isa API reference (nki/api/nki/isa).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics import error_at
from ..dialects.isa_movement import (
    GPSIMD_GROUP, QUADRANT, SHUFFLE_KEEP, TRANSPOSE_AXES, local_gather_valid,
)
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import Fault, check_elems, finish

if TYPE_CHECKING:
    from .decoder import Decoder


def _ints(attr) -> list[int]:
    return [int(a.value.data) for a in attr.data]


def dma_transpose(dec: Decoder, op):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    perm = TRANSPOSE_AXES.get(len(src.shape))
    if perm is None or tuple(src.shape[a] for a in perm) != dst.shape or dst.dtype != src.dtype:
        raise error_at(op, f"{op.name}: 'dst' {list(dst.shape)} must be 'src' {list(src.shape)} "
                           f"permuted by {perm}, with the same dtype", NKIRuntimeError)
    d, s = dst.slot, src.slot

    def run(env):
        env[d][...] = env[s].transpose(perm)
    return finish(op, run, dst)


def dma_compute(dec: Decoder, op):
    dst = dec.buf(op, op.dst, "dst")
    srcs = [dec.buf(op, v, f"srcs[{i}]") for i, v in enumerate(op.srcs)]
    total = math.prod(dst.shape)
    for i, b in enumerate(srcs):
        if math.prod(b.shape) != total:
            raise error_at(op, f"{op.name}: 'srcs[{i}]' has {math.prod(b.shape)} elements but 'dst' "
                               f"has {total}", NKIRuntimeError)
    scales = op.properties.get("scales")
    factors = [np.float32(1.0)] * len(srcs) if scales is None else \
        [np.float32(a.value.data) for a in scales.data]
    d, shape, store = dst.slot, dst.shape, nm.make_store(dst.dtype)
    slots = [b.slot for b in srcs]

    def run(env):
        acc = np.zeros(shape, np.float32)
        for s, f in zip(slots, factors):
            acc += nm.to_f32(env[s]).reshape(shape) * f
        store(env[d], acc)
    return finish(op, run, dst)


def nc_n_gather(dec: Decoder, op):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    idx = dec.buf(op, op.indices, "indices")
    check_elems(op, dst, ("indices", idx))
    if data.parts != dst.parts or data.dtype != dst.dtype:
        raise error_at(op, f"{op.name}: 'data' must have the partitions and dtype of 'dst'",
                       NKIRuntimeError)
    d, x, i = dst.slot, data.slot, idx.slot
    parts, f, n, shape = dst.parts, data.free, idx.free, dst.shape

    def run(env):
        ix = env[i].reshape(parts, n).astype(np.int64)
        bad = (ix < 0) | (ix >= f)
        if bad.any():
            p, j = (int(a[0]) for a in np.nonzero(bad))
            raise Fault(f"'indices' value {int(ix[p, j])} at partition {p}, position {j} is out "
                        f"of range [0, {f}) ('data' has {f} elements per partition); "
                        f"{int(bad.sum())} index(es) out of range in total")
        src = env[x].reshape(parts, f)
        env[d][...] = np.take_along_axis(src, ix, axis=1).reshape(shape)
    return finish(op, run, dst)


def local_gather(dec: Decoder, op):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src_buffer, "src_buffer")
    idx = dec.buf(op, op.index, "index")
    elems = int(op.num_elem_per_idx.value.data) if op.num_elem_per_idx is not None else 1
    valid = local_gather_valid(op)
    parts, f, n = src.parts, src.free, idx.free
    if parts % GPSIMD_GROUP or idx.parts != parts or dst.parts != parts or dst.free != valid * elems:
        raise error_at(op, f"{op.name}: operand shapes do not fit (src_buffer {list(src.shape)}, "
                           f"index {list(idx.shape)}, dst {list(dst.shape)})", NKIRuntimeError)
    groups = parts // GPSIMD_GROUP
    d, s, i, shape = dst.slot, src.slot, idx.slot, dst.shape
    offs = np.arange(elems, dtype=np.int64)

    def run(env):
        # (group, partition-in-group, free) -> read partition dim first: (group, free, partition)
        ix = env[i].reshape(groups, GPSIMD_GROUP, n).transpose(0, 2, 1).reshape(groups, -1)
        ix = ix[:, :valid].astype(np.int64)
        pos = ix[:, :, None] + offs  # (group, valid, elems) element offsets in a partition
        bad = pos[:, :, -1] >= f
        if bad.any():
            g, k = (int(a[0]) for a in np.nonzero(bad))
            raise Fault(f"'index' value {int(ix[g, k])} (flattened index {k} of GpSimd core {g}) "
                        f"with num_elem_per_idx={elems} reads past the {f} elements per "
                        f"partition of 'src_buffer'")
        data = env[s].reshape(groups, GPSIMD_GROUP, f)
        flat = pos.reshape(groups, 1, valid * elems)
        out = np.take_along_axis(data, np.broadcast_to(flat, (groups, GPSIMD_GROUP, valid * elems)),
                                 axis=2)
        env[d][...] = out.reshape(shape)
    return finish(op, run, dst)


def nc_stream_shuffle(dec: Decoder, op):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    if dst.free != src.free or dst.dtype != src.dtype:
        raise error_at(op, f"{op.name}: 'dst' and 'src' must have the same dtype and elements "
                           f"per partition", NKIRuntimeError)
    mask = _ints(op.shuffle_mask)
    pairs = []  # (dst partition, src partition)
    for q in range(math.ceil(max(dst.parts, src.parts) / QUADRANT)):
        for i, m in enumerate(mask):
            pd, ps = q * QUADRANT + i, q * QUADRANT + m
            if m == SHUFFLE_KEEP or pd >= dst.parts:
                continue
            if ps >= src.parts:
                raise error_at(op, f"{op.name}: shuffle_mask[{i}]={m} reads src partition {ps}, "
                                   f"but 'src' has {src.parts} partitions", NKIRuntimeError)
            pairs.append((pd, ps))
    dsts = np.array([p for p, _ in pairs], np.int64)
    srcs = np.array([p for _, p in pairs], np.int64)
    d, s, free = dst.slot, src.slot, src.free

    def run(env):
        if not len(dsts):
            return
        rows = env[s].reshape(src.parts, free)[srcs]  # fancy indexing copies: in-place safe
        out = env[d].reshape(dst.parts, free).copy()
        out[dsts] = rows
        env[d][...] = out.reshape(dst.shape)
    return finish(op, run, dst)


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.dma_transpose": dma_transpose,
    "nisa.dma_compute": dma_compute,
    "nisa.nc_n_gather": nc_n_gather,
    "nisa.local_gather": local_gather,
    "nisa.nc_stream_shuffle": nc_stream_shuffle,
}
