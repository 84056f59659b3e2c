"""Closure builder for ``nisa.activation``: ``dst = f(src * scale + bias)`` on ScalarE.

``scale`` and ``bias`` are scalars or ``[P, 1]`` tiles (a constant 1.0 / 0.0 is skipped);
``f`` is one of :data:`.numerics.ACTIVATION`, evaluated exactly and rounded once to float32.
With ``reduce_cmd`` (``reset``, ``reduce``, ``reset_reduce``; ``idle`` with a
``reduce_res`` means ``reset_reduce``) the per-partition sum of the results is kept in the
run's ScalarE fp32 accumulators (:class:`~.program.State` ``act_acc``, one lane per
partition), which carry across instructions; ``reduce_res`` (``[P, 1]``) receives them.
Only ``reduce_op=add`` is supported, and not ``load_reduce``.  Semantics: nki_spec.md
section 5.4 (``nki.isa.activation`` / ``activation_reduce``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..diagnostics import error_at
from ..dialects import nisa
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import STATE, check_elems, finish, reader

if TYPE_CHECKING:
    from .decoder import Decoder


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
                           "interpreter", NKIRuntimeError)
    if rr is not None and (rr.parts != P or rr.free != 1):
        raise error_at(op, f"nisa.activation: 'reduce_res' must be [{P}, 1], got "
                           f"{list(rr.shape)}", NKIRuntimeError)
    if cmd == "idle":
        cmd = "reset_reduce" if rr is not None else "idle"
    rr_slot = rr.slot if rr is not None else None
    rr_shape = rr.shape if rr is not None else None
    rr_store = nm.make_store(rr.dtype) if rr is not None else None

    def run(env):
        x = read(env)
        if gs is not None:
            x = x * gs(env)
        if gb is not None:
            x = x + gb(env)
        y = fn(x)
        store(env[d], y)
        if cmd != "idle":
            acc = env[STATE].act_acc
            if cmd == "reset":
                acc[:P] = 0
            else:
                total = np.add.reduce(np.asarray(y, np.float64).reshape(P, -1), axis=1)
                if cmd == "reduce":
                    acc[:P] += total.astype(np.float32)
                else:  # reset_reduce
                    acc[:P] = total
        if rr_slot is not None:
            rr_store(env[rr_slot], env[STATE].act_acc[:P].reshape(rr_shape))
    return finish(op, run, dst, rr)
