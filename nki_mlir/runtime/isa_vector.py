"""Closure builders for tensor_scalar_reduce, exponential, activate2, and the helpers the
Vector-engine definitions (``nki_mlir/instructions/vector.py``) share with them.

All of them read their inputs as float32, compute in float32 (reductions and statistics in
float64, rounded once) and cast to the ``dst`` dtype (:func:`.numerics.make_store`);
``tensor_partition_reduce`` on integer tiles and its bitwise ops use exact int64 math.
Operator tokens are the NKI spellings (``maximum``), mapped to the ALU tables through
``nisa.ARITH_OPS``.  ``tensor_scalar_reduce``, ``tensor_scalar_cumulative`` and
``exponential`` share the VectorE accumulators (``State.dve_acc``), ``activate2`` the
ScalarE ones with ``activation`` (``State.act_acc``); see
:func:`.isa_activation.accumulate`.  Semantics: nki.isa API reference (nki/api/nki/isa).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from ..diagnostics import error_at
from ..dialects import isa_vector as V
from ..dialects.common import prop_flag, prop_str
from ..dialects.nisa import ARITH_OPS
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import STATE, Buf, check_elems, finish, reader
from .isa_activation import ACC_IDENTITY, accumulate

if TYPE_CHECKING:
    from .decoder import Decoder

F32 = np.float32


# ------------------------------------------------------------------------------ helpers


def alu(op: Operation, prop: str):
    """The float32 ALU function of the NKI token in ``prop``."""
    tok = prop_str(op, prop)
    fn = nm.ALU.get(ARITH_OPS.get(tok, tok))  # type: ignore[arg-type]
    if fn is None:
        raise error_at(op, f"{op.name}: {prop}={tok} is not supported by the interpreter",
                       NKIRuntimeError)
    return fn


def apply_op(fn, rev: bool, x, operand):
    """``x fn operand`` (``operand fn x`` when ``rev``)."""
    return fn(operand, x) if rev else fn(x, operand)


def lanes(v, P: int) -> np.ndarray:
    """A scalar or ``[P, 1...]`` operand value as ``[P]`` float32 accumulator lanes."""
    a = np.asarray(v, F32)
    return np.full(P, a, F32) if a.ndim == 0 else a.reshape(P)


def readout_writer(dec: Decoder, op: Operation, P: int):
    """``(buf, write(env, lanes))`` for an optional ``reduce_res[P, 1]``, else ``(None, None)``."""
    if op.reduce_res is None:
        return None, None
    rr = dec.buf(op, op.reduce_res, "reduce_res")
    if rr.parts != P or rr.free != 1:
        raise error_at(op, f"{op.name}: 'reduce_res' must be [{P}, 1], got {list(rr.shape)}",
                       NKIRuntimeError)
    slot, shape, store = rr.slot, rr.shape, nm.make_store(rr.dtype)

    def write(env, lanes):
        store(env[slot], lanes.reshape(shape))
    return rr, write


def flat(b: Buf):
    """Read ``b`` as float32 ``[P, n]`` (free dims flattened)."""
    return reader(b, (b.parts, b.free))


# ====================================================================== tensor_scalar_reduce


def tensor_scalar_reduce(dec: Decoder, op: V.NisaTensorScalarReduceOp):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    check_elems(op, dst, ("data", data))
    shape, d, P = dst.shape, dst.slot, dst.parts
    rx, store = reader(data, shape), nm.make_store(dst.dtype)
    g0 = dec.scalar(op, op.operand0, "operand0", shape)
    f0 = alu(op, "op0")
    rop = op.reduce_op.data
    cmd = prop_str(op, "reduce_cmd", "reset_reduce")
    gi = dec.scalar(op, op.reduce_init, "reduce_init", (P, 1)) if op.reduce_init is not None else None
    if cmd == "load_reduce" and gi is None:
        raise error_at(op, f"{op.name}: reduce_cmd=load_reduce needs 'reduce_init'", NKIRuntimeError)
    negate = prop_flag(op, "reduce_res_negate")
    rr, readout = readout_writer(dec, op, P)

    def run(env):
        t = f0(rx(env), g0(env))
        store(env[d], t)
        acc = env[STATE].dve_acc
        accumulate(acc, cmd, rop, np.asarray(t).reshape(P, -1),
                   lanes(gi(env), P) if gi is not None else None)
        if readout is not None:
            readout(env, np.negative(acc[:P]) if negate else acc[:P])
    return finish(op, run, dst, rr)


# ============================================================================= exponential


def exponential(dec: Decoder, op: V.NisaExponentialOp):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    check_elems(op, dst, ("src", src))
    shape, d, P = dst.shape, dst.slot, dst.parts
    rx, store, exp = reader(src, shape), nm.make_store(dst.dtype), nm.ACTIVATION["exp"]
    gm = dec.scalar(op, op.max_value, "max_value", shape)
    gi = dec.scalar(op, op.reduce_init, "reduce_init", (P, 1)) if op.reduce_init is not None else None
    cmd = prop_str(op, "reduce_cmd", "idle")
    if cmd == "load_reduce" and gi is None:
        raise error_at(op, f"{op.name}: reduce_cmd=load_reduce needs 'reduce_init'", NKIRuntimeError)
    rr, readout = readout_writer(dec, op, P)

    def run(env):
        y = exp(np.subtract(rx(env), gm(env)))
        store(env[d], y)
        acc = env[STATE].dve_acc
        accumulate(acc, cmd, "add", np.asarray(y).reshape(P, -1),
                   lanes(gi(env), P) if gi is not None else None)
        if readout is not None:
            readout(env, acc[:P])
    return finish(op, run, dst, rr)


# =============================================================================== activate2


def activate2(dec: Decoder, op: V.NisaActivate2Op):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    check_elems(op, dst, ("data", data))
    shape, d, P = dst.shape, dst.slot, dst.parts
    rx, store = reader(data, shape), nm.make_store(dst.dtype)
    name = op.op.data
    fn = nm.ACTIVATION.get(name)
    if fn is None and name != "prelu":
        raise error_at(op, f"{op.name}: op={name} is not supported by the interpreter (supported: "
                           f"prelu, {', '.join(nm.ACTIVATION)})", NKIRuntimeError)
    o0, o1 = op.op0.data, op.op1.data
    f0 = None if o0 == "bypass" else alu(op, "op0")
    f1 = None if o1 == "bypass" else alu(op, "op1")
    g0 = dec.scalar(op, op.imm0, "imm0", shape)
    g1 = dec.scalar(op, op.imm1, "imm1", shape)
    gr = dec.scalar(op, op.relu_param, "relu_param", shape) if op.relu_param is not None else None
    rev0, rev1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")
    cmd = prop_str(op, "reduce_cmd", "idle")
    rop = prop_str(op, "reduce_op", "add")
    rr, readout = readout_writer(dec, op, P)

    def run(env):
        t = rx(env)
        if f0 is not None:
            t = apply_op(f0, rev0, t, g0(env))
        if f1 is not None:
            t = apply_op(f1, rev1, t, g1(env))
        if fn is not None:
            y = fn(t)
        else:  # prelu: x for x > 0, relu_param * x otherwise
            alpha = gr(env) if gr is not None else F32(0.0)
            y = np.where(t > 0, t, np.multiply(t, alpha, dtype=F32)).astype(F32)
        store(env[d], y)
        acc = env[STATE].act_acc
        accumulate(acc, cmd, rop, np.asarray(y).reshape(P, -1))
        if readout is not None:
            readout(env, acc[:P])
    return finish(op, run, dst, rr)


#: op name -> closure builder ``builder(decoder, op)`` (merged into ``handlers.HANDLERS``)
HANDLERS: dict = {
    "nisa.tensor_scalar_reduce": tensor_scalar_reduce,
    "nisa.exponential": exponential,
    "nisa.activate2": activate2,
}
