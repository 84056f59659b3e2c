"""Closure builders for the ALU instructions: elementwise arithmetic and reductions.

``nisa.tensor_tensor_arith``, ``nisa.tensor_scalar_arith`` and ``nisa.reciprocal`` work
elementwise on tiles ``[P, free...]`` whose partition and per-partition element counts match
``dst``; ``nisa.tensor_reduce_arith`` reduces the last ``num_r_dim`` free dims.  They
compute in float32 and cast to the ``dst`` dtype, except on the exact integer path (int64,
wrapped to the ``dst`` width): bitvec operators, integer-only reductions, and
``tensor_tensor_arith`` on int32/uint32 operands on **GpSimd** (on Vector, int32/uint32
go through float32 and lose precision above 2^24, NKI API common tables (nki/api/nki.api.shared)).
Operator tables and casting rules: :mod:`.numerics` (NKI API common tables (nki/api/nki.api.shared));
semantics: nki.isa API reference (nki/api/nki/isa).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import Operation

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import nisa
from ..errors import NKIRuntimeError
from . import numerics as nm
from .env import Buf, check_elems, engine, finish, reader, writes_f32

if TYPE_CHECKING:
    from .decoder import Decoder


def _require_int(op: Operation, operator: str, *operands: tuple[str, Buf]) -> None:
    """Reject a non-integer operand of an integer-only ``operator`` (e.g. ``"op=bitwise_and"``)."""
    for role, b in operands:
        if not dtypes.is_int(b.dtype):
            raise error_at(op, f"{op.name}: {operator} works on integer bits, but '{role}' is "
                               f"{dtypes.name_of(b.dtype)}", NKIRuntimeError)


def tensor_tensor(dec: Decoder, op: nisa.TensorTensorArithOp):
    dst = dec.buf(op, op.dst, "dst")
    lhs, rhs = dec.buf(op, op.lhs, "lhs"), dec.buf(op, op.rhs, "rhs")
    check_elems(op, dst, ("lhs", lhs), ("rhs", rhs))
    name = op.op.data
    shape, d, ls, rs = dst.shape, dst.slot, lhs.slot, rhs.slot
    bitvec = name in nm.BITVEC
    if bitvec:
        _require_int(op, f"op={name}", ("lhs", lhs), ("rhs", rhs))
    exact = bitvec or (lhs.dtype in nm.INT32_TYPES and rhs.dtype in nm.INT32_TYPES and
                       engine(op) == "gpsimd" and name in nm.ALU_INT)
    if exact:
        fn, store = nm.ALU_INT[name], nm.make_int_store(dst.dtype)
        lsh, rsh = lhs.shape != shape, rhs.shape != shape

        def run(env):
            a = env[ls].astype(np.int64)
            b = env[rs].astype(np.int64)
            store(env[d], fn(a.reshape(shape) if lsh else a, b.reshape(shape) if rsh else b))
    else:
        fn = nm.ALU.get(name)
        if fn is None:
            raise error_at(op, f"nisa.tensor_tensor_arith: op={name} is not supported",
                           NKIRuntimeError)
        store, ra, rb = nm.make_store(dst.dtype), reader(lhs, shape), reader(rhs, shape)
        if writes_f32(dst) and isinstance(fn, np.ufunc):
            def run(env):
                fn(ra(env), rb(env), out=env[d])
        else:
            def run(env):
                store(env[d], fn(ra(env), rb(env)))
    return finish(op, run, dst)


def tensor_scalar(dec: Decoder, op: nisa.TensorScalarArithOp):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    check_elems(op, dst, ("src", src))
    shape, d = dst.shape, dst.slot
    op0 = op.op0.data
    op1 = op.op1.data if op.op1 is not None else None
    if (op1 is None) != (op.operand1 is None):
        raise error_at(op, "nisa.tensor_scalar_arith: op1 and operand1 must be given together",
                       NKIRuntimeError)
    rev = op.reverse_operands.data if op.reverse_operands is not None else "none_"
    # a unary operator (abs, rsqrt, reciprocal) applies to the data whatever the order
    rev0 = rev in ("first", "both") and op0 not in nm.UNARY
    rev1 = rev in ("second", "both") and op1 not in nm.UNARY
    bitvec = op0 in nm.BITVEC
    if op1 is not None and (op1 in nm.BITVEC) != bitvec:
        raise error_at(op, f"nisa.tensor_scalar_arith: op0={op0} and op1={op1} must be of the "
                           f"same class (both bitvec or both arithmetic)", NKIRuntimeError)
    table = nm.ALU_INT if bitvec else nm.ALU
    for o in (op0, op1):
        if o is not None and o not in table:
            raise error_at(op, f"nisa.tensor_scalar_arith: operator {o} is not supported",
                           NKIRuntimeError)
    f0 = table[op0]
    f1 = table[op1] if op1 is not None else None
    g0 = dec.scalar(op, op.operand0, "operand0", shape, as_int=bitvec)
    g1 = dec.scalar(op, op.operand1, "operand1", shape, as_int=bitvec) if op1 else None
    if bitvec:
        _require_int(op, f"op0={op0}", ("src", src))
        s, reshape = src.slot, src.shape != shape
        store = nm.make_int_store(dst.dtype)

        def read(env):
            x = env[s].astype(np.int64)
            return x.reshape(shape) if reshape else x
    else:
        store, read = nm.make_store(dst.dtype), reader(src, shape)

    if not bitvec and writes_f32(dst) and isinstance(f0, np.ufunc) and \
            (f1 is None or isinstance(f1, np.ufunc)):
        def run(env):  # float32 results straight into dst: the same bits, no temporaries
            dv = env[d]
            x = read(env)
            a = g0(env)
            if f1 is not None:
                b = g1(env)    # read before dst is written (it may be a view of dst)
                if isinstance(b, np.ndarray) and np.may_share_memory(b, dv):
                    b = b.copy()
            if rev0:
                f0(a, x, out=dv)
            else:
                f0(x, a, out=dv)
            if f1 is not None:
                if rev1:
                    f1(b, dv, out=dv)
                else:
                    f1(dv, b, out=dv)
        return finish(op, run, dst)

    def run(env):
        x = read(env)
        a = g0(env)
        t = f0(a, x) if rev0 else f0(x, a)
        if f1 is not None:
            b = g1(env)
            t = f1(b, t) if rev1 else f1(t, b)
        store(env[d], t)
    return finish(op, run, dst)


def reciprocal(dec: Decoder, op: nisa.ReciprocalOp):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    check_elems(op, dst, ("src", src))
    d, read, store = dst.slot, reader(src, dst.shape), nm.make_store(dst.dtype)
    one = np.float32(1.0)
    if writes_f32(dst):
        def run(env):
            np.divide(one, read(env), out=env[d])
    else:
        def run(env):
            store(env[d], np.divide(one, read(env)))
    return finish(op, run, dst)


def tensor_reduce(dec: Decoder, op: nisa.TensorReduceArithOp):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    name = op.op.data
    n = int(op.num_r_dim.value.data)
    negated = bool(op.negated.value.data)
    free_dims = src.shape[1:]
    if not 1 <= n <= len(free_dims):
        raise error_at(op, f"nisa.tensor_reduce_arith: num_r_dim={n} must be between 1 and the "
                           f"number of free dims ({len(free_dims)})", NKIRuntimeError)
    kept = int(np.prod(free_dims[:len(free_dims) - n], dtype=np.int64))
    red = int(np.prod(free_dims[len(free_dims) - n:], dtype=np.int64))
    if dst.parts != src.parts or dst.free != kept:
        raise error_at(op, f"nisa.tensor_reduce_arith: dst must be [{src.parts}, {kept}...] "
                           f"({kept} element(s) per partition), got {list(dst.shape)}",
                       NKIRuntimeError)
    P, d, s, shape = src.parts, dst.slot, src.slot, dst.shape
    if name in nm.REDUCE_INT:
        _require_int(op, f"op={name}", ("src", src))
        fn, store = nm.REDUCE_INT[name], nm.make_int_store(dst.dtype)

        def run(env):
            r = fn(env[s].astype(np.int64).reshape(P, kept, red))
            store(env[d], (-r if negated else r).reshape(shape))
    elif name in nm.REDUCE:
        fn, store = nm.REDUCE[name], nm.make_store(dst.dtype)

        def run(env):
            r = fn(nm.to_f32(env[s]).reshape(P, kept, red))
            store(env[d], (np.negative(r) if negated else r).reshape(shape))
    else:
        raise error_at(op, f"nisa.tensor_reduce_arith: op={name} is not a reduction operator "
                           f"(expected one of {', '.join([*nm.REDUCE, *nm.REDUCE_INT])})",
                       NKIRuntimeError)
    return finish(op, run, dst)
