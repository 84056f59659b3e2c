"""Vector-engine arithmetic beyond the core set: scalar_tensor_tensor, tensor_tensor_scan,
tensor_scalar_cumulative, tensor_partition_reduce (GpSimd), bn_stats, bn_aggr.

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa) and the NKI
API common tables (nki/api/nki.api.shared) for the ALU operators.  Operators are the NKI
spellings (``maximum``); the vocabularies are ``nki_mlir/dialects/vector_rules.py``.  Inputs
are read as float32 and the math is float32 (statistics in float64, rounded once), cast to
the ``dst`` dtype; ``tensor_partition_reduce`` on integer tiles and its bitwise operators use
exact int64 math.
"""
from __future__ import annotations

import numpy as np
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import describe, dtype_of, free_size, prop_flag, prop_str
from ..dialects.ods import Engine, EnumProp, Flag, Formula, OpToken, Scalar, Stream, Tile
from ..dialects.vector_rules import (ARITH, BITVEC, BN_AGGR_DIM, BN_STATS_DIM, BN_STATS_FMAX,
                                     CUMULATIVE_OPS, DVE_CMDS, PARTITION_REDUCE_OPS,
                                     f32_operands, not_int32, partitions)
from ..errors import NKIRuntimeError
from ..runtime import numerics as nm
from ..runtime.env import STATE, check_elems, finish, reader
from ..runtime.isa_activation import ACC_IDENTITY
from ..runtime.isa_vector import alu, apply_op, flat, lanes
from .define import instruction

F32 = np.float32


# ---------------------------------------------------------------- scalar_tensor_tensor


@instruction
class scalar_tensor_tensor:
    """``dst = (data op0 operand0) op1 operand1`` on the Vector engine (float32 math).

    ``data`` / ``operand1`` / ``dst``: SBUF or PSUM tiles with the same partition count and
    elements per partition, ``data`` and ``operand1`` not both in PSUM.  ``operand0``: a
    number or a ``[P, 1]`` float32 tile (one value per partition, broadcast along the free
    dims).  ``op0`` / ``op1``: arithmetic ``nl`` operators (``nl.add``, ``nl.maximum``, ...;
    not the bitvec ones).  ``reverse0`` computes ``operand0 op0 data``, ``reverse1``
    ``operand1 op1 (data op0 operand0)``.

    Raises ``NKITypeError`` for an operator that is not one of these, and ``NKIVerifyError``
    for mismatched tiles or memories.
    NKI docs: ``nki.isa.scalar_tensor_tensor`` (nki/api/generated/nki.isa.scalar_tensor_tensor).
    """

    dst = Tile(writes=True, like=("data", "operand1"))
    data = Tile()
    op0 = OpToken(allowed=ARITH, arith=True)
    operand0 = Scalar(if_none=0.0)
    op1 = OpToken(allowed=ARITH, arith=True)
    operand1 = Tile()
    reverse0 = Flag(default=False)
    reverse1 = Flag(default=False)
    engine = Engine("vector", param=False)
    start_partitions = True
    cost = Formula("two_input", roles=("data", "operand1"), perf="other",
                   source="ISA_OLD scalar_tensor_tensor: as tensor_tensor (2N; bf16 N)")

    def verify(op):
        rules.not_both_psum(op, ("data", op.data), ("operand1", op.operand1))

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        opd1 = dec.buf(op, op.operand1, "operand1")
        check_elems(op, dst, ("data", data), ("operand1", opd1))
        shape, d = dst.shape, dst.slot
        rx, r1, store = reader(data, shape), reader(opd1, shape), nm.make_store(dst.dtype)
        g0 = dec.scalar(op, op.operand0, "operand0", shape)
        f0, f1 = alu(op, "op0"), alu(op, "op1")
        rev0, rev1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")

        def run(env):
            t = apply_op(f0, rev0, rx(env), g0(env))
            store(env[d], apply_op(f1, rev1, t, r1(env)))
        return finish(op, run, dst)


# ------------------------------------------------------------------- tensor_tensor_scan


@instruction
class tensor_tensor_scan:
    """A per-partition scan over the (flattened) free dims, in float32, on the Vector engine::

        r[0] = op1(op0(data0[0], initial), data1[0]);  r[i] = op1(op0(data0[i], r[i-1]), data1[i])

    ``dst[i] = r[i]``.  ``data0`` / ``data1`` / ``dst``: SBUF or PSUM tiles of the same
    partition count and elements per partition (``data0`` and ``data1`` not both in PSUM).
    ``initial``: a number or a ``[P, 1]`` tile.  ``op0`` / ``op1``: arithmetic ``nl``
    operators; ``reverse0`` swaps the operands of ``op0`` (``op0(r[i-1], data0[i])``),
    ``reverse1`` those of ``op1`` (``op1(data1[i], t)``).

    Raises ``NKITypeError`` for another operator and ``NKIVerifyError`` for mismatched tiles
    or memories.
    NKI docs: ``nki.isa.tensor_tensor_scan`` (nki/api/generated/nki.isa.tensor_tensor_scan).
    """

    dst = Tile(writes=True, like=("data0", "data1"))
    data0 = Tile()
    data1 = Tile()
    initial = Scalar()
    op0 = OpToken(allowed=ARITH, arith=True)
    op1 = OpToken(allowed=ARITH, arith=True)
    reverse0 = Flag(default=False)
    reverse1 = Flag(default=False)
    engine = Engine("vector", param=False)
    start_partitions = True
    cost = Stream("data0", k=2.0, source="analogue: tensor_tensor (two inputs, no perf mode)")

    def verify(op):
        rules.not_both_psum(op, ("data0", op.data0), ("data1", op.data1))

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        d0, d1 = dec.buf(op, op.data0, "data0"), dec.buf(op, op.data1, "data1")
        check_elems(op, dst, ("data0", d0), ("data1", d1))
        P, n, d, shape = dst.parts, dst.free, dst.slot, dst.shape
        r0, r1, store = flat(d0), flat(d1), nm.make_store(dst.dtype)
        gi = dec.scalar(op, op.initial, "initial", (P, 1))
        f0, f1 = alu(op, "op0"), alu(op, "op1")
        rev0, rev1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")

        def run(env):
            a, b = r0(env), r1(env)
            r = lanes(gi(env), P)
            out = np.empty((P, n), F32)
            for i in range(n):
                t = f0(r, a[:, i]) if rev0 else f0(a[:, i], r)
                r = np.asarray(f1(b[:, i], t) if rev1 else f1(t, b[:, i]), F32)
                out[:, i] = r
            store(env[d], out.reshape(shape))
        return finish(op, run, dst)


# ------------------------------------------------------------- tensor_scalar_cumulative

_ACCUMULATE = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "minimum": np.minimum}


@instruction
class tensor_scalar_cumulative:
    """A scan along the (flattened) free dims, per partition, on the Vector engine's
    accumulator::

        reg = init;  for i: reg = op1(op0(src[i], imm0), reg);  dst[i] = reg

    ``init`` by ``reduce_cmd``: ``reset_reduce`` (the default) the identity of ``op1`` (add /
    subtract 0, multiply 1, maximum -inf, minimum +inf), ``load_reduce`` ``imm1``, ``reduce``
    the accumulator left by the previous Vector-engine accumulation.  ``src`` / ``dst``: SBUF
    or PSUM tiles of the same shape, not int32 / uint32.  ``imm0`` / ``imm1``: numbers or
    ``[P, 1]`` float32 tiles.  ``op0``: an arithmetic ``nl`` operator; ``op1``: add,
    subtract, multiply, maximum or minimum.

    Raises ``NKITypeError`` for another operator or ``reduce_cmd``, and ``NKIVerifyError``
    for mismatched tiles, dtypes, or ``load_reduce`` without ``imm1``.
    NKI docs: ``nki.isa.tensor_scalar_cumulative`` (nki/api/generated/nki.isa.tensor_scalar_cumulative).
    """

    dst = Tile(writes=True, like="src")
    src = Tile()
    op0 = OpToken(allowed=ARITH, arith=True)
    op1 = OpToken(allowed=CUMULATIVE_OPS, arith=True)
    imm0 = Scalar(if_none=0.0)
    imm1 = Scalar(default=None)
    reduce_cmd = EnumProp(enum="reduce_cmd", allowed=DVE_CMDS, default="reset_reduce")
    engine = Engine("vector", param=False)
    start_partitions = True
    cost = Stream("src", source="analogue: a one-input vector instruction (a scan: no perf mode)")

    def verify(op):
        not_int32(op, "src", "dst")
        if prop_str(op, "reduce_cmd", "reset_reduce") == "load_reduce" and op.imm1 is None:
            raise VerifyException(f"{rules.api(op)}: reduce_cmd=load_reduce needs 'imm1' (the "
                                  f"value loaded into the accumulator)")
        f32_operands(op, "imm0", "imm1")

    def interpret(dec, op):
        dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
        check_elems(op, dst, ("src", src))
        for role, b in (("src", src), ("dst", dst)):
            if b.dtype in nm.INT32_TYPES:
                raise error_at(op, f"{op.name}: '{role}' is {dtypes.name_of(b.dtype)}; int32/uint32 "
                                   f"are not supported", NKIRuntimeError)
        P, n, d, shape = dst.parts, dst.free, dst.slot, dst.shape
        rx, store = flat(src), nm.make_store(dst.dtype)
        g0 = dec.scalar(op, op.imm0, "imm0", (P, n))
        g1 = dec.scalar(op, op.imm1, "imm1", (P, 1)) if op.imm1 is not None else None
        f0 = alu(op, "op0")
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
                reg = lanes(g1(env), P)
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


# -------------------------------------------------------------- tensor_partition_reduce


@instruction
class tensor_partition_reduce:
    """A reduction across partitions on GpSimd: ``dst[0, f] = op over p of data[p, f]``.

    ``data``: an SBUF tile ``[P, F...]``; ``dst``: an SBUF tile of one partition holding
    ``data``'s elements per partition (``[1, F...]``).  ``op``: ``nl.add``, ``nl.average``
    (sum / P), ``nl.maximum`` (float32 math; exact int64 math when ``data`` and ``dst`` are
    integer tiles), ``nl.bitwise_or`` / ``nl.bitwise_and`` (integer tiles only).

    Raises ``NKITypeError`` for another operator and ``NKIVerifyError`` for another memory,
    shape or dtype.
    NKI docs: ``nki.isa.tensor_partition_reduce`` (nki/api/generated/nki.isa.tensor_partition_reduce).
    """

    dst = Tile(writes=True, spaces=("sbuf",))
    op = OpToken(allowed=PARTITION_REDUCE_OPS)
    data = Tile(spaces=("sbuf",))
    engine = Engine("gpsimd", param=False)
    start_partitions = True
    cost = Stream("data", source="analogue: iota (GpSimd 150 + N over data)")

    def verify(op):
        api = rules.api(op)
        if partitions(op.dst) != 1:
            raise VerifyException(f"{api}: 'dst' must have 1 partition (the reduction "
                                  f"runs across the partitions of 'data'), got {describe(op.dst)}")
        if free_size(op.dst) != free_size(op.data):
            raise VerifyException(f"{api}: 'dst' must hold {free_size(op.data)} "
                                  f"element(s) in its partition (one per element of a 'data' "
                                  f"partition), got {describe(op.dst)}")
        if prop_str(op, "op") in BITVEC:
            for r in ("data", "dst"):
                if not dtypes.is_int(dtype_of(getattr(op, r))):
                    raise VerifyException(
                        f"{api}: op={prop_str(op, 'op')} works on integer bits, but "
                        f"'{r}' is {dtypes.name_of(dtype_of(getattr(op, r)))}")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        if dst.parts != 1 or dst.free != data.free:
            raise error_at(op, f"{op.name}: 'dst' must be [1, {data.free}] (one partition), got "
                               f"{list(dst.shape)}", NKIRuntimeError)
        name = op.op.data
        P, n, s, d, shape = data.parts, data.free, data.slot, dst.slot, dst.shape
        exact = name in BITVEC or (dtypes.is_int(data.dtype) and dtypes.is_int(dst.dtype))
        if name in BITVEC and not exact:
            raise error_at(op, f"{op.name}: op={name} works on integer bits; 'data' and 'dst' must "
                               f"be integer tensors", NKIRuntimeError)
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


# ----------------------------------------------------------------- bn_stats / bn_aggr


def _stats(g: np.ndarray) -> list[np.ndarray]:
    """(count, mean, var*count) of each row of ``g[P, k]`` (float64; zeros when k == 0)."""
    P, k = g.shape
    if k == 0:
        z = np.zeros(P)
        return [z, z, z]
    mean = g.mean(axis=1)
    return [np.full(P, float(k)), mean, ((g - mean[:, None]) ** 2).sum(axis=1)]


@instruction
class bn_stats:
    """Per-partition batch-norm statistics of ``data`` on the Vector engine (float32 math).

    ``data``: an SBUF or PSUM tile with at most 512 elements per partition
    (``nl.tile_size.bn_stats_fmax``); ``dst``: 6 values per partition, same partition count:
    (count, mean, variance * count) of the even-index elements, then of the odd-index
    elements (flattened free order).  Combine the results of several calls with
    ``nki.isa.bn_aggr``.

    Raises ``NKIVerifyError`` for a larger ``data`` or another ``dst`` shape.
    NKI docs: ``nki.isa.bn_stats`` (nki/api/generated/nki.isa.bn_stats).
    """

    dst = Tile(writes=True, partitions_of="data")
    data = Tile()
    engine = Engine("vector", param=False)
    start_partitions = True
    cost = Stream("data", source="ISA_OLD bn_stats: N")

    def verify(op):
        n = free_size(op.data)
        if n > BN_STATS_FMAX:
            raise VerifyException(f"{rules.api(op)}: 'data' has {n} free elements per partition, "
                                  f"more than bn_stats_fmax={BN_STATS_FMAX} (call bn_stats on each "
                                  f"512-element chunk and combine them with one bn_aggr)")
        if free_size(op.dst) != BN_STATS_DIM:
            raise VerifyException(f"{rules.api(op)}: 'dst' must hold {BN_STATS_DIM} elements per "
                                  f"partition (count, mean, var*count for even and odd elements), "
                                  f"got {describe(op.dst)}")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        if data.free > BN_STATS_FMAX or dst.free != BN_STATS_DIM or dst.parts != data.parts:
            raise error_at(op, f"{op.name}: 'data' must hold at most {BN_STATS_FMAX} elements per "
                               f"partition and 'dst' be [{data.parts}, {BN_STATS_DIM}]; got "
                               f"{list(data.shape)} and {list(dst.shape)}", NKIRuntimeError)
        rx, store, d, shape = flat(data), nm.make_store(dst.dtype), dst.slot, dst.shape

        def run(env):
            x = np.asarray(rx(env), np.float64)
            out = np.stack(_stats(x[:, 0::2]) + _stats(x[:, 1::2]), axis=1)
            store(env[d], out.astype(F32).reshape(shape))
        return finish(op, run, dst)


@instruction
class bn_aggr:
    """Combine batch-norm statistics on the Vector engine: ``dst[P, 2]`` = (mean, population
    variance) per partition of the ``(count, mean, variance * count)`` triples in ``data``
    (``nki.isa.bn_stats`` results, flattened free order; float32 math).

    ``data``: an SBUF or PSUM tile holding a multiple of 3 elements per partition; ``dst``:
    2 values per partition, same partition count.

    Raises ``NKIVerifyError`` for other sizes.
    NKI docs: ``nki.isa.bn_aggr`` (nki/api/generated/nki.isa.bn_aggr).
    """

    dst = Tile(writes=True, partitions_of="data")
    data = Tile()
    engine = Engine("vector", param=False)
    start_partitions = True
    cost = Stream("data", k=13.0 / 3.0, source="ISA_OLD bn_aggr: 13N/3")

    def verify(op):
        n = free_size(op.data)
        if n % 3:
            raise VerifyException(f"{rules.api(op)}: 'data' has {n} elements per partition, not a "
                                  f"multiple of 3 (it holds (count, mean, var*count) triples from "
                                  f"bn_stats)")
        if free_size(op.dst) != BN_AGGR_DIM:
            raise VerifyException(f"{rules.api(op)}: 'dst' must hold {BN_AGGR_DIM} elements per "
                                  f"partition (mean, variance), got {describe(op.dst)}")

    def interpret(dec, op):
        dst, data = dec.buf(op, op.dst, "dst"), dec.buf(op, op.data, "data")
        if data.free % 3 or dst.free != BN_AGGR_DIM or dst.parts != data.parts:
            raise error_at(op, f"{op.name}: 'data' must hold (count, mean, var*count) triples and "
                               f"'dst' be [{data.parts}, {BN_AGGR_DIM}]; got {list(data.shape)} and "
                               f"{list(dst.shape)}", NKIRuntimeError)
        P = data.parts
        rx, store, d, shape = flat(data), nm.make_store(dst.dtype), dst.slot, dst.shape

        def run(env):
            t = np.asarray(rx(env), np.float64).reshape(P, -1, 3)
            cnt, mean, m2 = t[..., 0], t[..., 1], t[..., 2]
            total = cnt.sum(axis=1)
            safe = np.where(total > 0, total, 1.0)
            mu = np.where(total > 0, (cnt * mean).sum(axis=1) / safe, 0.0)
            var = np.where(total > 0, (m2 + cnt * (mean - mu[:, None]) ** 2).sum(axis=1) / safe, 0.0)
            store(env[d], np.stack([mu, var], axis=1).astype(F32).reshape(shape))
        return finish(op, run, dst)
