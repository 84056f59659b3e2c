"""Elementwise ALU instructions: tensor_tensor, tensor_scalar, reciprocal (Vector by default;
Scalar or GpSimd when asked).

Semantics: the NKI ``nki.isa`` API pages of these instructions (nki/api/nki.isa) and the NKI
API common tables (nki/api/nki.api.shared) for the operators and casting.  Their ``nisa`` ops
are AWS's: ``nisa.tensor_tensor_arith(dst, lhs, rhs)``, ``nisa.tensor_scalar_arith(dst, src,
..., reverse_operands)``, ``nisa.reciprocal(dst, src)``, with AWS's ``ArithOp`` spellings
(``maximum`` -> ``max``, ``vector_rules.ARITH_OPS``).  They compute in float32 and cast to
the ``dst`` dtype, except on the exact integer path (int64, wrapped to the ``dst`` width):
bitvec operators, and ``tensor_tensor`` on int32/uint32 operands on GpSimd (on Vector,
int32/uint32 go through float32 and lose precision above 2^24).  Operator tables and casting
rules: ``runtime/numerics.py``.
"""
from __future__ import annotations

import numpy as np
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..diagnostics import error_at
from ..dialects import rules
from ..dialects.common import dtype_of, prop_flag, space_of, str_attr
from ..dialects.ods import Engine, EnumProp, Flag, Formula, OpToken, Scalar, Stream, Tile
from ..dialects.ods_forms import IsaForm
from ..dialects.vector_rules import ALU_OPS, ARITH_NAMES, ARITH_OPS
from ..errors import NKIRuntimeError, NKITypeError
from ..runtime import numerics as nm
from ..runtime.env import Buf, check_elems, engine, finish, reader, writes_f32
from .define import instruction

#: the engines of the elementwise ALU instructions (Vector the default)
ALU_ENGINES = Engine("vector", scalar="trn1", gpsimd="trn1")
#: ``reverse_operands`` of ``nisa.tensor_scalar_arith`` by ``(reverse0, reverse1)``
REVERSE = {(False, False): "none_", (True, False): "first", (False, True): "second",
           (True, True): "both"}


def require_int(op, operator: str, *operands: tuple[str, Buf]) -> None:
    """Reject a non-integer operand of an integer-only ``operator`` (e.g. ``"op=bitwise_and"``)."""
    for role, b in operands:
        if not dtypes.is_int(b.dtype):
            raise error_at(op, f"{op.name}: {operator} works on integer bits, but '{role}' is "
                               f"{dtypes.name_of(b.dtype)}", NKIRuntimeError)


# ------------------------------------------------------------------------ tensor_tensor


def _tensor_tensor_engine(op) -> str:
    """GpSimd for ``power`` and for int32 / uint32 tiles outside PSUM (its exact integer ALU;
    GpSimd cannot access PSUM), else Vector (nki.isa API reference)."""
    tiles = (op.dst, op.data1, op.data2)
    ints = all(dtype_of(v) in (dtypes.int32, dtypes.uint32) for v in tiles)
    psum = any(space_of(v) == "psum" for v in tiles)
    return "gpsimd" if op.op.data == "power" or (ints and not psum) else "vector"


def _verify_arith(op) -> None:
    rules.not_both_psum(op, ("lhs", op.lhs), ("rhs", op.rhs))
    rules.bitvec_operands(op, "op", op.op.data, ("lhs", op.lhs), ("rhs", op.rhs))


@instruction
class tensor_tensor:
    """``dst = data1 op data2`` elementwise.

    ``data1`` / ``data2`` / ``dst``: SBUF or PSUM tiles with the same partition count and
    elements per partition (``data1`` and ``data2`` not both in PSUM).  ``op``: an ``nl``
    operator (``nl.add``, ``nl.maximum``, ``nl.bitwise_and``, ...); bitvec operators need
    integer tiles.  Float32 math cast to ``dst``'s dtype; exact integer math for bitvec
    operators and for int32 / uint32 tiles on GpSimd.  ``engine``: Vector (the default), Scalar
    or GpSimd; ``nl.power`` and int32 / uint32 tiles outside PSUM run on GpSimd by default.

    Raises ``NKITypeError`` for another operator and ``NKIVerifyError`` for mismatched tiles,
    memories or dtypes.
    NKI docs: ``nki.isa.tensor_tensor`` (nki/api/generated/nki.isa.tensor_tensor).
    """

    dst = Tile(writes=True, like=("data1", "data2"))
    data1 = Tile()
    data2 = Tile()
    op = OpToken(allowed=ALU_OPS)
    engine = ALU_ENGINES
    start_partitions = True
    elementwise = True
    full_writes = ("dst",)
    cost = Formula("two_input", roles=("lhs", "rhs"), perf="other",
                   source="ISA_OLD tensor_tensor, ARCH2 \"roughly 2N\" (N with a PSUM input; bf16 "
                          "inputs in SBUF: ARCH3 perf mode)")
    isa = IsaForm("tensor_tensor_arith", dst=Tile(writes=True, like=("lhs", "rhs")), lhs=Tile(),
                  rhs=Tile(), op=OpToken(allowed=ARITH_NAMES), sources={"lhs": "data1", "rhs": "data2"},
                  spellings={"op": ARITH_OPS}, engine=_tensor_tensor_engine, verify=_verify_arith)

    def verify(op):
        rules.not_both_psum(op, ("data1", op.data1), ("data2", op.data2))
        pairs = (("dst", op.dst), ("data1", op.data1), ("data2", op.data2))
        if op.op.data == "power" and rules.engine_of(op) == "unknown":
            rules.gpsimd_no_psum(op, "gpsimd", *pairs, why=" (op=power runs on GpSimd)")
        rules.bitvec_operands(op, "op", op.op.data, ("data1", op.data1), ("data2", op.data2))

    def interpret(dec, op):
        dst = dec.buf(op, op.dst, "dst")
        lhs, rhs = dec.buf(op, op.lhs, "lhs"), dec.buf(op, op.rhs, "rhs")
        check_elems(op, dst, ("lhs", lhs), ("rhs", rhs))
        name = op.op.data
        shape, d, ls, rs = dst.shape, dst.slot, lhs.slot, rhs.slot
        bitvec = name in nm.BITVEC
        if bitvec:
            require_int(op, f"op={name}", ("lhs", lhs), ("rhs", rhs))
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


# ------------------------------------------------------------------------ tensor_scalar


def _scalar_rules(op, data: str) -> None:
    """The rules both ``tensor_scalar`` ops share (``data``: the data operand's role)."""
    if (op.op1 is None) != (op.operand1 is None):
        raise VerifyException(f"{rules.api(op)}: op1 and operand1 must be given together")
    rules.gpsimd_no_psum(op, rules.engine_of(op, "vector"), ("operand0", op.operand0),
                         ("operand1", op.operand1))
    rules.tensor_scalar_operands(op, op.op0.data, None if op.op1 is None else op.op1.data,
                                 getattr(op, data), op.operand0, op.operand1)


def _tensor_scalar_props(op) -> dict:
    props = {"op0": str_attr(ARITH_OPS[op.op0.data]),
             "reverse_operands": str_attr(REVERSE[prop_flag(op, "reverse0"), prop_flag(op, "reverse1")])}
    if op.op1 is not None:
        props["op1"] = str_attr(ARITH_OPS[op.op1.data])
    return props


@instruction
class tensor_scalar:
    """``dst = (data op0 operand0) op1 operand1`` elementwise (the second step optional).

    ``data`` / ``dst``: SBUF or PSUM tiles with the same partition count and elements per
    partition.  ``operand0`` / ``operand1``: numbers or ``[P, 1]`` tiles (one value per
    partition, broadcast along the free dims; float32 for arithmetic operators).  ``op0`` /
    ``op1``: ``nl`` operators, both arithmetic or both bitvec (bitvec ones need integer
    tiles).  ``reverse0`` computes ``operand0 op0 data``, ``reverse1`` ``operand1 op1 t``.
    ``op1`` and ``operand1`` go together.  ``engine``: Vector (the default), Scalar or GpSimd.

    Raises ``NKITypeError`` for another operator or ``op1`` without ``operand1`` (or the
    reverse), and ``NKIVerifyError`` for mismatched tiles, memories or dtypes.
    NKI docs: ``nki.isa.tensor_scalar`` (nki/api/generated/nki.isa.tensor_scalar).
    """

    dst = Tile(writes=True, like="data")
    data = Tile()
    op0 = OpToken(allowed=ALU_OPS)
    operand0 = Scalar()
    reverse0 = Flag(default=False)
    op1 = OpToken(allowed=ALU_OPS, optional=True)
    operand1 = Scalar(default=None)
    reverse1 = Flag(default=False)
    engine = ALU_ENGINES
    start_partitions = True
    elementwise = True
    full_writes = ("dst",)
    order = ("dst", "data", "operand0", "operand1", "op0", "op1", "reverse0", "reverse1")
    cost = Stream("src", perf="copy", source="ISA_OLD tensor_scalar: N (ARCH3 perf mode: 4x for "
                  "bf16/fp16 SBUF->SBUF, 2x other bf16)")
    isa = IsaForm("tensor_scalar_arith", dst=Tile(writes=True, like="src"), src=Tile(),
                  operand0=Scalar(), operand1=Scalar(default=None),
                  op0=OpToken(allowed=ARITH_NAMES), op1=OpToken(allowed=ARITH_NAMES, optional=True),
                  reverse_operands=EnumProp(allowed=tuple(REVERSE.values())),
                  sources={"src": "data"}, props=_tensor_scalar_props,
                  verify=lambda op: _scalar_rules(op, "src"))

    def call(cg, api, args):
        if (args["op1"] is None) != (args["operand1"] is None):
            raise cg.b.error(f"{api}: op1 and operand1 must be given together", NKITypeError)

    def verify(op):
        _scalar_rules(op, "data")

    def interpret(dec, op):
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
            require_int(op, f"op0={op0}", ("src", src))
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


# --------------------------------------------------------------------------- reciprocal


@instruction
class reciprocal:
    """``dst = 1 / data`` elementwise (float32 math, cast to ``dst``'s dtype).

    ``data`` / ``dst``: SBUF or PSUM tiles with the same partition count and elements per
    partition.  ``engine``: Vector (the default), Scalar or GpSimd.

    Raises ``NKIVerifyError`` for mismatched tiles or memories.
    NKI docs: ``nki.isa.reciprocal`` (nki/api/generated/nki.isa.reciprocal).
    """

    dst = Tile(writes=True, like="data")
    data = Tile()
    engine = ALU_ENGINES
    start_partitions = True
    elementwise = True
    full_writes = ("dst",)
    cost = Formula("reciprocal", roles=("src",),
                   source="ISA_OLD reciprocal: vector 8N, scalar N; SHARED: GpSimd 4x ScalarE")
    isa = IsaForm("reciprocal", dst=Tile(writes=True, like="src"), src=Tile(), sources={"src": "data"})

    def interpret(dec, op):
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

