"""Closure builders for the index-pattern instructions: ``nisa.iota`` and ``nisa.affine_select``.

Both evaluate the affine pattern ``offset + p*channel_multiplier + sum_k step_k*i_k`` over
``dst``'s partitions ``p`` and its ``[step, count]`` free-dim pattern ``i_k``, in int32
(wrapping), once at decode time (plus the run-time ``offset_index`` when the offset
depends on loop indices).  ``nisa.iota`` stores the values (cast to ``dst``'s dtype);
``nisa.affine_select`` keeps ``on_true_tile`` where ``cmp_op(value, 0)`` holds and
``on_false_value`` elsewhere.  Semantics: nki.isa API reference (nki/api/nki/isa) (``nki.isa.iota`` /
``affine_select``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr
from xdsl.ir import Operation

from ..diagnostics import error_at
from ..dialects import nisa
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import Buf, check_elems, finish, reader

if TYPE_CHECKING:
    from .decoder import Decoder


def _iota_values(op: Operation, dst: Buf) -> np.ndarray:
    """``offset + p*channel_multiplier + sum_k step_k*i_k`` as int64 ``[P, F]`` (without the
    run-time ``offset_index``)."""
    pattern = op.pattern
    steps, counts = [], []
    for pair in pattern.data if isinstance(pattern, ArrayAttr) else ():
        if (not isinstance(pair, ArrayAttr) or len(pair.data) != 2
                or not all(isinstance(x, IntegerAttr) for x in pair.data)):
            raise error_at(op, f"{op.name}: pattern must be a list of [step, count] pairs",
                           NKIRuntimeError)
        steps.append(int(pair.data[0].value.data))
        counts.append(int(pair.data[1].value.data))
    if int(np.prod(counts, dtype=np.int64)) != dst.free:
        raise error_at(op, f"{op.name}: the pattern {[[s, c] for s, c in zip(steps, counts)]} "
                           f"covers {int(np.prod(counts, dtype=np.int64))} elements per "
                           f"partition but 'dst' has {dst.free}", NKIRuntimeError)
    offset = int(op.offset.value.data)
    cm = int(op.channel_multiplier.value.data)
    free = np.zeros(tuple(counts), np.int64)
    for k, (step, count) in enumerate(zip(steps, counts)):
        ax = [1] * len(counts)
        ax[k] = count
        free = free + step * np.arange(count, dtype=np.int64).reshape(ax)
    return offset + cm * np.arange(dst.parts, dtype=np.int64)[:, None] + free.reshape(1, -1)


def _values(dec: Decoder, op: Operation, dst: Buf) -> Callable[[list], np.ndarray]:
    """A getter of the pattern's int32 values (int32 arithmetic wraps), shaped as ``dst``:
    computed once at decode time, plus the run-time ``offset_index`` when there is one."""
    base = _iota_values(op, dst).reshape(dst.shape)
    if op.offset_index is None:
        vals = base.astype(np.int32)
        return lambda env: vals
    off = dec.scalar(op, op.offset_index, "offset_index", dst.shape, as_int=True)
    return lambda env: (base + off(env)).astype(np.int32)


def affine_select(dec: Decoder, op: nisa.AffineSelectOp):
    dst, tru = dec.buf(op, op.dst, "dst"), dec.buf(op, op.on_true_tile, "on_true_tile")
    check_elems(op, dst, ("on_true_tile", tru))
    cmp = op.cmp_op.data
    if not cmp.startswith("is_"):
        raise error_at(op, f"nisa.affine_select: cmp_op={cmp} is not a comparison (expected "
                           f"is_eq, is_ne, is_lt, is_le, is_gt or is_ge)", NKIRuntimeError)
    values, fn = _values(dec, op, dst), nm.ALU_INT[cmp]
    read, store, d = reader(tru, dst.shape), nm.make_store(dst.dtype), dst.slot
    gf = dec.scalar(op, op.on_false_value, "on_false_value", dst.shape)

    def run(env):
        mask = fn(values(env).astype(np.int64), np.int64(0)) != 0
        store(env[d], np.where(mask, read(env), gf(env)))
    return finish(op, run, dst)
