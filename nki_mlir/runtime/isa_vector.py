"""Closure builders for scalar_tensor_tensor, tensor_partition_reduce, tensor_scalar_reduce, tensor_scalar_cumulative, tensor_tensor_scan, bn_stats, bn_aggr, exponential, activate2.

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

from .. import dtypes
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


def _alu(op: Operation, prop: str):
    """The float32 ALU function of the NKI token in ``prop``."""
    tok = prop_str(op, prop)
    fn = nm.ALU.get(ARITH_OPS.get(tok, tok))  # type: ignore[arg-type]
    if fn is None:
        raise error_at(op, f"{op.name}: {prop}={tok} is not supported by the interpreter",
                       NKIRuntimeError)
    return fn


def _apply(fn, rev: bool, x, operand):
    """``x fn operand`` (``operand fn x`` when ``rev``)."""
    return fn(operand, x) if rev else fn(x, operand)


def _lanes(v, P: int) -> np.ndarray:
    """A scalar or ``[P, 1...]`` operand value as ``[P]`` float32 accumulator lanes."""
    a = np.asarray(v, F32)
    return np.full(P, a, F32) if a.ndim == 0 else a.reshape(P)


def _readout(dec: Decoder, op: Operation, P: int):
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


def _flat(b: Buf):
    """Read ``b`` as float32 ``[P, n]`` (free dims flattened)."""
    return reader(b, (b.parts, b.free))


# ====================================================================== scalar_tensor_tensor


def scalar_tensor_tensor(dec: Decoder, op: V.NisaScalarTensorTensorOp):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    opd1 = dec.buf(op, op.operand1, "operand1")
    check_elems(op, dst, ("data", data), ("operand1", opd1))
    shape, d = dst.shape, dst.slot
    rx, r1, store = reader(data, shape), reader(opd1, shape), nm.make_store(dst.dtype)
    g0 = dec.scalar(op, op.operand0, "operand0", shape)
    f0, f1 = _alu(op, "op0"), _alu(op, "op1")
    rev0, rev1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")

    def run(env):
        t = _apply(f0, rev0, rx(env), g0(env))
        store(env[d], _apply(f1, rev1, t, r1(env)))
    return finish(op, run, dst)


# =================================================================== tensor_partition_reduce


def tensor_partition_reduce(dec: Decoder, op: V.NisaTensorPartitionReduceOp):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    if dst.parts != 1 or dst.free != data.free:
        raise error_at(op, f"{op.name}: 'dst' must be [1, {data.free}] (one partition), got "
                           f"{list(dst.shape)}", NKIRuntimeError)
    name = op.op.data
    P, n, s, d, shape = data.parts, data.free, data.slot, dst.slot, dst.shape
    exact = name in V.BITVEC or (dtypes.is_int(data.dtype) and dtypes.is_int(dst.dtype))
    if name in V.BITVEC and not exact:
        raise error_at(op, f"{op.name}: op={name} works on integer bits; 'data' and 'dst' must be "
                           f"integer tensors", NKIRuntimeError)
    if exact:
        red = {"add": np.add, "average": np.add, "maximum": np.maximum,
               "bitwise_or": np.bitwise_or, "bitwise_and": np.bitwise_and}[name]
        istore = nm.make_int_store(dst.dtype)

        def run(env):
            r = red.reduce(nm.to_int64(env[s]).reshape(P, n), axis=0)
            if name == "average":
                r = np.trunc(r / P).astype(np.int64)
            istore(env[d], r.reshape(shape))
    else:
        store = nm.make_store(dst.dtype)

        def run(env):
            x = np.asarray(nm.to_f32(env[s]), np.float64).reshape(P, n)
            r = x.max(axis=0) if name == "maximum" else x.sum(axis=0)
            if name == "average":
                r = r / P
            store(env[d], r.astype(F32).reshape(shape))
    return finish(op, run, dst)


# ====================================================================== tensor_scalar_reduce


def tensor_scalar_reduce(dec: Decoder, op: V.NisaTensorScalarReduceOp):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    check_elems(op, dst, ("data", data))
    shape, d, P = dst.shape, dst.slot, dst.parts
    rx, store = reader(data, shape), nm.make_store(dst.dtype)
    g0 = dec.scalar(op, op.operand0, "operand0", shape)
    f0 = _alu(op, "op0")
    rop = op.reduce_op.data
    cmd = prop_str(op, "reduce_cmd", "reset_reduce")
    gi = dec.scalar(op, op.reduce_init, "reduce_init", (P, 1)) if op.reduce_init is not None else None
    if cmd == "load_reduce" and gi is None:
        raise error_at(op, f"{op.name}: reduce_cmd=load_reduce needs 'reduce_init'", NKIRuntimeError)
    negate = prop_flag(op, "reduce_res_negate")
    rr, readout = _readout(dec, op, P)

    def run(env):
        t = f0(rx(env), g0(env))
        store(env[d], t)
        acc = env[STATE].dve_acc
        accumulate(acc, cmd, rop, np.asarray(t).reshape(P, -1),
                   _lanes(gi(env), P) if gi is not None else None)
        if readout is not None:
            readout(env, np.negative(acc[:P]) if negate else acc[:P])
    return finish(op, run, dst, rr)


# ================================================================== tensor_scalar_cumulative

_ACCUMULATE = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}


def tensor_scalar_cumulative(dec: Decoder, op: V.NisaTensorScalarCumulativeOp):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    check_elems(op, dst, ("src", src))
    for role, b in (("src", src), ("dst", dst)):
        if b.dtype in nm.INT32_TYPES:
            raise error_at(op, f"{op.name}: '{role}' is {dtypes.name_of(b.dtype)}; int32/uint32 "
                               f"are not supported", NKIRuntimeError)
    P, n, d, shape = dst.parts, dst.free, dst.slot, dst.shape
    rx, store = _flat(src), nm.make_store(dst.dtype)
    g0 = dec.scalar(op, op.imm0, "imm0", (P, n))
    g1 = dec.scalar(op, op.imm1, "imm1", (P, 1)) if op.imm1 is not None else None
    f0 = _alu(op, "op0")
    op1 = op.op1.data
    cmd = prop_str(op, "reduce_cmd", "reset_reduce")
    if cmd == "load_reduce" and g1 is None:
        raise error_at(op, f"{op.name}: reduce_cmd=load_reduce needs 'imm1'", NKIRuntimeError)
    ufunc = _ACCUMULATE.get(op1)

    def run(env):
        v = np.asarray(f0(rx(env), g0(env)), F32)
        acc = env[STATE].dve_acc
        if cmd == "reset_reduce":
            reg = np.full(P, ACC_IDENTITY[op1], F32)
        elif cmd == "load_reduce":
            reg = _lanes(g1(env), P)
        else:  # reduce: continue from the VectorE accumulator
            reg = acc[:P].astype(F32)
        if ufunc is not None:  # sequential fp32 scan (ufunc.accumulate runs left to right)
            out = ufunc.accumulate(np.concatenate([reg[:, None], v], axis=1), axis=1)[:, 1:]
        else:  # subtract: reg = op0(x_i) - reg
            out = np.empty((P, n), F32)
            for i in range(n):
                reg = np.subtract(v[:, i], reg)
                out[:, i] = reg
        acc[:P] = out[:, -1]
        store(env[d], out.reshape(shape))
    return finish(op, run, dst)


# ======================================================================= tensor_tensor_scan


def tensor_tensor_scan(dec: Decoder, op: V.NisaTensorTensorScanOp):
    dst = dec.buf(op, op.dst, "dst")
    d0, d1 = dec.buf(op, op.data0, "data0"), dec.buf(op, op.data1, "data1")
    check_elems(op, dst, ("data0", d0), ("data1", d1))
    P, n, d, shape = dst.parts, dst.free, dst.slot, dst.shape
    r0, r1, store = _flat(d0), _flat(d1), nm.make_store(dst.dtype)
    gi = dec.scalar(op, op.initial, "initial", (P, 1))
    f0, f1 = _alu(op, "op0"), _alu(op, "op1")
    rev0, rev1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")

    def run(env):
        a, b = r0(env), r1(env)
        r = _lanes(gi(env), P)
        out = np.empty((P, n), F32)
        for i in range(n):
            t = f0(r, a[:, i]) if rev0 else f0(a[:, i], r)
            r = np.asarray(f1(b[:, i], t) if rev1 else f1(t, b[:, i]), F32)
            out[:, i] = r
        store(env[d], out.reshape(shape))
    return finish(op, run, dst)


# ================================================================================ bn_stats


def _stats(g: np.ndarray) -> list[np.ndarray]:
    """(count, mean, var*count) of each row of ``g[P, k]`` (float64; zeros when k == 0)."""
    P, k = g.shape
    if k == 0:
        z = np.zeros(P)
        return [z, z, z]
    mean = g.mean(axis=1)
    return [np.full(P, float(k)), mean, ((g - mean[:, None]) ** 2).sum(axis=1)]


def bn_stats(dec: Decoder, op: V.NisaBnStatsOp):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    if data.free > V.BN_STATS_FMAX or dst.free != V.BN_STATS_DIM or dst.parts != data.parts:
        raise error_at(op, f"{op.name}: 'data' must hold at most {V.BN_STATS_FMAX} elements per "
                           f"partition and 'dst' be [{data.parts}, {V.BN_STATS_DIM}]; got "
                           f"{list(data.shape)} and {list(dst.shape)}", NKIRuntimeError)
    rx, store, d, shape = _flat(data), nm.make_store(dst.dtype), dst.slot, dst.shape

    def run(env):
        x = np.asarray(rx(env), np.float64)
        out = np.stack(_stats(x[:, 0::2]) + _stats(x[:, 1::2]), axis=1)
        store(env[d], out.astype(F32).reshape(shape))
    return finish(op, run, dst)


# ================================================================================= bn_aggr


def bn_aggr(dec: Decoder, op: V.NisaBnAggrOp):
    dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
    if data.free % 3 or dst.free != V.BN_AGGR_DIM or dst.parts != data.parts:
        raise error_at(op, f"{op.name}: 'data' must hold (count, mean, var*count) triples and "
                           f"'dst' be [{data.parts}, {V.BN_AGGR_DIM}]; got {list(data.shape)} and "
                           f"{list(dst.shape)}", NKIRuntimeError)
    P = data.parts
    rx, store, d, shape = _flat(data), nm.make_store(dst.dtype), dst.slot, dst.shape

    def run(env):
        t = np.asarray(rx(env), np.float64).reshape(P, -1, 3)
        cnt, mean, m2 = t[..., 0], t[..., 1], t[..., 2]
        total = cnt.sum(axis=1)
        safe = np.where(total > 0, total, 1.0)
        mu = np.where(total > 0, (cnt * mean).sum(axis=1) / safe, 0.0)
        var = np.where(total > 0, (m2 + cnt * (mean - mu[:, None]) ** 2).sum(axis=1) / safe, 0.0)
        store(env[d], np.stack([mu, var], axis=1).astype(F32).reshape(shape))
    return finish(op, run, dst)


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
    rr, readout = _readout(dec, op, P)

    def run(env):
        y = exp(np.subtract(rx(env), gm(env)))
        store(env[d], y)
        acc = env[STATE].dve_acc
        accumulate(acc, cmd, "add", np.asarray(y).reshape(P, -1),
                   _lanes(gi(env), P) if gi is not None else None)
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
    f0 = None if o0 == "bypass" else _alu(op, "op0")
    f1 = None if o1 == "bypass" else _alu(op, "op1")
    g0 = dec.scalar(op, op.imm0, "imm0", shape)
    g1 = dec.scalar(op, op.imm1, "imm1", shape)
    gr = dec.scalar(op, op.relu_param, "relu_param", shape) if op.relu_param is not None else None
    rev0, rev1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")
    cmd = prop_str(op, "reduce_cmd", "idle")
    rop = prop_str(op, "reduce_op", "add")
    rr, readout = _readout(dec, op, P)

    def run(env):
        t = rx(env)
        if f0 is not None:
            t = _apply(f0, rev0, t, g0(env))
        if f1 is not None:
            t = _apply(f1, rev1, t, g1(env))
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
    "nisa.scalar_tensor_tensor": scalar_tensor_tensor,
    "nisa.tensor_partition_reduce": tensor_partition_reduce,
    "nisa.tensor_scalar_reduce": tensor_scalar_reduce,
    "nisa.tensor_scalar_cumulative": tensor_scalar_cumulative,
    "nisa.tensor_tensor_scan": tensor_tensor_scan,
    "nisa.bn_stats": bn_stats,
    "nisa.bn_aggr": bn_aggr,
    "nisa.exponential": exponential,
    "nisa.activate2": activate2,
}
