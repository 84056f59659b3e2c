"""Closure builders for dma_transpose, dma_compute.

- ``nisa.dma_transpose``: ``dst = src.transpose(axes)``, bit-exact (equal dtypes).
- ``nisa.dma_compute``: ``dst = sum_i srcs[i] * scales[i]`` accumulated in fp32 in source
  order, each source read in flat element order, cast to ``dst``'s dtype.

Semantics: nki.isa API reference (nki/api/nki/isa).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics import error_at
from ..dialects.isa_movement import TRANSPOSE_AXES
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import finish

if TYPE_CHECKING:
    from .decoder import Decoder


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


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.dma_transpose": dma_transpose,
    "nisa.dma_compute": dma_compute,
}
