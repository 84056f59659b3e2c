"""Closure builder for ``nisa.activation``: ``dst = f(src * scale + bias)`` on ScalarE, and the
engine accumulator registers it shares with ``activate2`` (and, on VectorE, the accumulation
instructions of :mod:`.isa_vector`).

``scale`` and ``bias`` are scalars or ``[P, 1]`` tiles (a constant 1.0 / 0.0 is skipped);
``f`` is one of :data:`.numerics.ACTIVATION` (float32 results; see :mod:`.numerics` for
which functions are computed in float32 and which exactly then rounded).
With ``reduce_cmd`` (``reset``, ``reduce``, ``reset_reduce``; ``idle`` with a
``reduce_res`` means ``reset_reduce``) the per-partition sum of the results is kept in the
run's ScalarE fp32 accumulators (:class:`~.program.State` ``act_acc``, one lane per
partition, float32 arithmetic), which carry across instructions; ``reduce_res`` (``[P, 1]``) receives them.
Only ``reduce_op=add`` is supported, and not ``load_reduce``.  Semantics: nki.isa API reference (nki/api/nki/isa) (``nki.isa.activation`` / ``activation_reduce``, ``nki.isa.reduce_cmd``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics import error_at
from ..dialects import nisa
from ..errors import NKIRuntimeError
from . import numerics as nm
from .act_range import range_checker
from .env import STATE, check_elems, finish, reader, scratch, writes_f32

if TYPE_CHECKING:
    from .decoder import Decoder

#: reset value of an accumulator lane for each reduce op (NKI token spelling)
ACC_IDENTITY = {"add": 0.0, "subtract": 0.0, "multiply": 1.0, "maximum": -np.inf,
                "minimum": np.inf, "abs_max": 0.0, "abs_min": np.inf}


def _fold(rop: str, acc: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``rop`` of the accumulator lanes ``acc[P]`` and every row of ``rows[P, n]`` (float32)."""
    if rop == "add":
        return acc + np.add.reduce(rows, axis=1)
    if rop == "multiply":
        return acc * np.multiply.reduce(rows, axis=1)
    if rop == "maximum":
        return np.maximum(acc, rows.max(axis=1))
    if rop == "minimum":
        return np.minimum(acc, rows.min(axis=1))
    if rop == "abs_max":
        return np.maximum(np.abs(acc), np.abs(rows).max(axis=1))
    if rop == "abs_min":
        return np.minimum(np.abs(acc), np.abs(rows).min(axis=1))
    raise ValueError(f"reduce_op={rop} has no accumulator rule")


def accumulate(acc: np.ndarray, cmd: str, rop: str, values, init=None) -> None:
    """Apply ``reduce_cmd`` ``cmd`` to the first ``P`` lanes of the fp32 accumulators ``acc``.

    ``values`` is ``[P, ...]`` (the instruction's fp32 results, reduced over the free dims);
    ``init`` (``[P]``) is what ``load_reduce`` loads.  ``idle`` leaves ``acc`` alone,
    ``reset`` sets the lanes to the identity of ``rop``, ``reset_reduce`` resets then folds
    ``values`` in, ``reduce`` folds them into the current lanes, ``load_reduce`` loads
    ``init`` then folds.  The fold is float32 arithmetic, as the engines' accumulators are
    fp32 registers fed fp32 results (nki.isa API reference, ``nki.isa.activation``: the
    reduction is computed on the fp32 results): each row is reduced in float32 (NumPy's
    pairwise summation for ``add``), then combined with the lane.
    """
    if cmd == "idle":
        return
    P = values.shape[0]
    if cmd in ("reset", "reset_reduce"):
        acc[:P] = ACC_IDENTITY[rop]
    elif cmd == "load_reduce":
        acc[:P] = init
    if cmd == "reset":
        return
    rows = np.asarray(values, nm.F32).reshape(P, -1)
    acc[:P] = _fold(rop, acc[:P], rows)


def activation(dec: Decoder, op: nisa.ActivationOp):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    check_elems(op, dst, ("src", src))
    name = op.op.data
    fn = nm.ACTIVATION.get(name)
    if fn is None:
        raise error_at(op, f"nisa.activation: op={name} is not supported (expected one of "
                           f"{', '.join(nm.ACTIVATION)})", NKIRuntimeError)
    shape, d, P = dst.shape, dst.slot, dst.parts
    read, store = reader(src, shape), nm.make_store(dst.dtype)
    scale_c, bias_c = dec.const_value(op.scale), dec.const_value(op.bias)
    gs = None if scale_c is not None and float(scale_c) == 1.0 else \
        dec.scalar(op, op.scale, "scale", shape)
    gb = None if bias_c is not None and float(bias_c) == 0.0 else \
        dec.scalar(op, op.bias, "bias", shape)
    rr = dec.buf(op, op.reduce_res, "reduce_res") if op.reduce_res is not None else None
    cmd = op.reduce_cmd.data if op.reduce_cmd is not None else "idle"
    rop = op.reduce_op.data if op.reduce_op is not None else "add"
    if rop != "add":
        raise error_at(op, f"nisa.activation: reduce_op={rop} is not supported (only add)",
                       NKIRuntimeError)
    if cmd == "load_reduce":
        raise error_at(op, "nisa.activation: reduce_cmd=load_reduce is not supported by the "
                           "ScalarE accumulators (use reset, reduce or reset_reduce)",
                       NKIRuntimeError)
    if rr is not None and (rr.parts != P or rr.free != 1):
        raise error_at(op, f"nisa.activation: 'reduce_res' must be [{P}, 1], got "
                           f"{list(rr.shape)}", NKIRuntimeError)
    if cmd == "idle":
        cmd = "reset_reduce" if rr is not None else "idle"
    rr_slot = rr.slot if rr is not None else None
    rr_shape = rr.shape if rr is not None else None
    rr_store = nm.make_store(rr.dtype) if rr is not None else None
    check = range_checker(dec, op, name)  # documented input range (act_range.py)

    def run(env):
        x = read(env)
        if gs is not None:
            x = x * gs(env)
        if gb is not None:
            x = x + gb(env)
        if check is not None:
            check(env, x)
        y = fn(x)
        store(env[d], y)
        acc = env[STATE].act_acc
        accumulate(acc, cmd, "add", y)
        if rr_slot is not None:
            rr_store(env[rr_slot], acc[:P].reshape(rr_shape))
    if writes_f32(dst):
        return finish(op, _into_f32(op, fn, read, d, shape, P, gs, gb, check, cmd, rr_slot,
                                    rr_shape, rr_store, run), dst, rr)
    return finish(op, run, dst, rr)


def _into_f32(op, fn, read, d, shape, P, gs, gb, check, cmd, rr_slot, rr_shape, rr_store,
              general):
    """``activation`` into a float32 ``dst``: the same steps computed in place in ``dst``
    (and a reused float64 temporary for the functions evaluated in float64), so the results
    are bit-identical and no tile-sized temporary is allocated.  A ``dst`` access pattern
    with a zero step (several elements stored to one address, e.g. ``dst.ap([[1, P], [0, F]])``
    when only ``reduce_res`` is wanted) takes the ``general`` path: the accumulators sum the
    computed values, not what is left in ``dst``."""
    f64 = nm.ACTIVATION_F64.get(op.op.data)
    into = nm.ACTIVATION_INTO.get(op.op.data)

    def run(env):
        dv = env[d]
        if 0 in dv.strides and dv.size > 1:
            return general(env)
        sv = gs(env) if gs is not None else None
        bv = gb(env) if gb is not None else None   # [P, 1] tiles may be views of dst
        if isinstance(bv, np.ndarray) and np.may_share_memory(bv, dv):
            bv = bv.copy()
        x = read(env)
        if sv is not None:
            x = np.multiply(x, sv, out=dv)
        if f64 is not None and check is None:
            # the float32 sum x + bias, converted exactly, straight into the float64 temporary
            t = scratch(env, shape, nm.F64)
            if bv is not None:
                np.add(x, bv, out=t, dtype=nm.F32)
            else:
                np.copyto(t, x)
            f64(t, out=t)
            np.copyto(dv, t, casting="same_kind")
        elif f64 is not None:
            if bv is not None:
                x = np.add(x, bv, out=dv)
            check(env, x)
            t = scratch(env, shape, nm.F64)
            np.copyto(t, x)
            f64(t, out=t)
            np.copyto(dv, t, casting="same_kind")
        else:
            if bv is not None:
                x = np.add(x, bv, out=dv)
            if check is not None:
                check(env, x)
            if into is not None:
                into(x, dv)
            else:
                y = fn(x)
                if y is not dv:
                    dv[...] = y
        acc = env[STATE].act_acc
        if cmd != "idle":
            accumulate(acc, cmd, "add", dv)
        if rr_slot is not None:
            rr_store(env[rr_slot], acc[:P].reshape(rr_shape))
    return run
