"""``nki-legalize`` patterns for the generic ``nl.*`` sugar ops (``dialects/nki_sugar.py``).

Every sugar op becomes ISA-level ``nki`` instructions writing an explicit result
allocation, with explicit temporaries (float32 unless noted).  Engines follow the NKI docs
(NKI API common tables (nki/api/nki.api.shared)-5.6):

- activation functions (``exp log tanh sigmoid relu silu gelu* mish softplus erf* sqrt
  square sign abs arctan``) -> ScalarE ``activation``;
- ``copy`` / ``expand_dims`` -> ``tensor_copy``; ``reciprocal`` -> Vector ``reciprocal``;
  ``rsqrt`` -> GpSimd ``tensor_scalar(op0=rsqrt)`` (0.5+; no PSUM); ``negative`` ->
  ``tensor_scalar(multiply, -1)``; ``logical_not`` -> ``tensor_scalar(equal, 0)``;
  ``invert`` -> ``tensor_scalar(bitwise_xor, -1)``;
- ``sin`` / ``cos`` are range-reduced before the ScalarE ``sin`` (unlike the raw
  activation): ``t = (x + shift) mod 2pi`` then ``sin(t - pi)``; ``tan = sin / cos``;
  ``floor = x - (x mod 1)``, ``trunc = x - fmod(x, 1)``, ``ceil = x + ((-x) mod 1)``;
- binary functions -> ``tensor_tensor`` (``power`` on GpSimd), or ``tensor_scalar`` when
  one side is a scalar or a ``[P, 1]`` column (``reverse0`` when it is the left side);
- NumPy broadcasting: a partition broadcast ``[1, F] -> [P, F]`` is a TensorE matmul of a
  ``[1, P]`` ones tile with the row (chunks of <= 512); a ``[P, 1]`` tile broadcasts along the free
  dims with ``memset 0`` + ``tensor_scalar(add)``; other free-dim broadcasts copy the
  source into each broadcast index with ``tensor_copy`` on ``memref.subview`` slices;
- reductions -> ``tensor_reduce`` (``mean``: sum then ``* 1/N``; ``var``: two passes,
  ``activation(square, reduce_res)`` of ``x - mean``);
- ``softmax`` -> max reduce, ``activation(exp, bias=-max, reduce_res=sum)``,
  ``reciprocal``, ``tensor_scalar(multiply)``; ``rms_norm`` -> ``activation(square,
  reduce_res)``, ``tensor_scalar(* 1/n + eps)``, ``activation(rsqrt)``, multiplies;
- ``where`` -> copy of ``y``, a uint8 predicate ``cond != 0``, ``tensor_copy_predicated``;
- ``transpose`` -> TensorE ``nc_transpose`` into PSUM (+ ``tensor_copy`` to the result);
- ``full`` -> ``memset``; ``shared_identity_matrix`` -> ``iota(p - i)`` + ``equal 0``;
  ``rand`` -> ``rng`` (uint32), ``right_shift`` to the dtype's mantissa width and a scale
  into ``[0, 1)``; ``random_seed`` -> ``set_rng_seed``; ``nl_dropout`` -> ``dropout``;
  ``gather_flattened`` -> ``nc_n_gather``.

The predicated-copy and gather instruction classes are imported lazily; the random-number
instructions are defined in ``nki_mlir/instructions`` and found by name (``op_class``).
"""
from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import memref as memref_d
from xdsl.dialects.builtin import (ArrayAttr, BoolAttr, FloatAttr, IntegerAttr, MemRefType, StringAttr,
                                   f32, i64)
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from .. import dtypes
from ..dialects import nki
from ..dialects import nki_sugar as S
from ..dialects.common import dtype_of, free_size, memref, shape_of, space_of
from ..dialects.ods_ops import op_class
from .legalize_broadcast import BroadcastEmitter, psum_direct

#: unary functions that are ScalarE activation functions
ACT_FNS = frozenset({
    "exp", "log", "tanh", "sigmoid", "relu", "silu", "silu_dx", "gelu", "gelu_dx",
    "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "gelu_apprx_tanh", "mish", "softplus",
    "erf", "erf_dx", "sqrt", "square", "sign", "abs", "arctan",
})
#: reduction -> tensor_reduce op token
REDUCE_TOKENS = {"sum": "add", "max": "maximum", "min": "minimum", "prod": "multiply",
                 "all": "logical_and", "mean": "add"}
_BITVEC = frozenset({"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"})
_TWO_PI = 2.0 * math.pi


def _is_tile(v: SSAValue) -> bool:
    return isinstance(v.type, MemRefType)


def _const_value(v: SSAValue):
    owner = getattr(v, "op", None)
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data  # type: ignore[attr-defined]
    return None


def _mantissa_bits(dt: np.dtype) -> int:
    """Explicit mantissa bits of a float dtype (ml_dtypes' finfo covers NumPy's floats too)."""
    import ml_dtypes
    return int(ml_dtypes.finfo(dt).nmant)


class Emitter(BroadcastEmitter):
    """Builds the replacement ops of one sugar op (all located at the sugar op)."""

    def __init__(self, op: Operation):
        self.op = op
        self.ops: list[Operation] = []

    def add(self, o: Operation) -> Operation:
        o.location = self.op.location
        self.ops.append(o)
        return o

    # ------------------------------------------------------------ values
    def alloc(self, shape, dt, space: str = "sbuf", name: str | None = None) -> SSAValue:
        props = {"name": StringAttr(name)} if name else {}
        return self.add(nki.NdarrayOp.build(result_types=[memref(tuple(shape), dt, space)],
                                            properties=props)).results[0]

    def alloc_result(self) -> SSAValue:
        t = self.op.results[0].type
        name = self.op.properties.get("name")
        props = {"name": name} if isinstance(name, StringAttr) else {}
        return self.add(nki.NdarrayOp.build(result_types=[t], properties=props)).results[0]

    def f32(self, v: float) -> SSAValue:
        return self.add(arith.ConstantOp(FloatAttr(float(v), f32), f32)).results[0]

    def const_for(self, dt, v) -> SSAValue:
        """A memset value of ``dt``'s kind (an int of the dtype for integer tensors)."""
        if dtypes.is_int(dt) and dt != dtypes.bool_:
            attr = dtypes.int_constant_attr(int(v), dt)
            return self.add(arith.ConstantOp(attr, attr.type)).results[0]
        return self.f32(v)

    def int_const(self, v: int) -> SSAValue:
        attr = dtypes.int_constant_attr(int(v), dtypes.int32)
        return self.add(arith.ConstantOp(attr, attr.type)).results[0]

    def sbuf(self, v: SSAValue) -> SSAValue:
        """``v`` itself, or an SBUF copy of it when it lives in PSUM."""
        if not _is_tile(v) or space_of(v) != "psum":
            return v
        tmp = self.alloc(shape_of(v), dtype_of(v))
        self.copy(tmp, v)
        return tmp

    # ------------------------------------------------------------ instructions
    def copy(self, dst: SSAValue, src: SSAValue) -> None:
        self.add(op_class("nki.tensor_copy").build(operands=[dst, src]))

    def memset(self, dst: SSAValue, value: SSAValue) -> None:
        self.add(op_class("nki.memset").build(operands=[dst, value]))

    def tt(self, dst, a, b, fn: str, engine: str | None = None) -> None:
        props = {"op": StringAttr(fn)}
        if engine:
            props["engine"] = StringAttr(engine)
        self.add(op_class("nki.tensor_tensor").build(operands=[dst, a, b], properties=props))

    def ts(self, dst, data, op0: str, operand0, reverse0: bool = False, op1: str | None = None,
           operand1=None, engine: str | None = None) -> None:
        operand0, operand1 = self.f32_col(op0, operand0), self.f32_col(op1, operand1)
        props: dict = {"op0": StringAttr(op0)}
        if reverse0:
            props["reverse0"] = BoolAttr.from_bool(True)
        if op1 is not None:
            props["op1"] = StringAttr(op1)
        if engine:
            props["engine"] = StringAttr(engine)
        self.add(op_class("nki.tensor_scalar").build(operands=[dst, data, operand0, operand1], properties=props))

    def f32_col(self, op: str | None, v):
        """An arithmetic tensor_scalar operand tile must be float32: convert other dtypes."""
        if op is None or op in _BITVEC or v is None or not _is_tile(v) or dtype_of(v) == dtypes.float32:
            return v
        tmp = self.alloc(shape_of(v), dtypes.float32)
        self.copy(tmp, v)
        return tmp

    def act(self, dst, data, fn: str, bias=None, reduce_res=None) -> None:
        props = {"op": StringAttr(fn)}
        if reduce_res is not None:
            props["reduce_op"] = StringAttr("add")
        self.add(op_class("nki.activation").build(operands=[dst, data, bias, self.f32(1.0), reduce_res],
                                        properties=props))

    def reduce(self, dst, data, token: str, axes: ArrayAttr) -> None:
        self.add(op_class("nki.tensor_reduce").build(operands=[dst, data],
                                          properties={"op": StringAttr(token), "axis": axes}))

    def subview(self, v: SSAValue, offsets, sizes) -> SSAValue:
        op = memref_d.SubviewOp.from_static_parameters(v, v.type, list(offsets), list(sizes),
                                                       [1] * len(sizes))
        return self.add(op).results[0]

    # ------------------------------------------------------------ composite pieces
    def binary(self, dst: SSAValue, fn: str, x: SSAValue, y: SSAValue) -> None:
        """``dst = x fn y`` with broadcasting (tensor_tensor or tensor_scalar)."""
        shape = tuple(shape_of(dst))
        gpsimd = fn == "power"
        wide = free_size(dst) > 1

        def col(v):
            return not _is_tile(v) or (free_size(v) == 1 and shape_of(v)[0] == shape[0] and wide)

        def fix(v):
            return self.sbuf(v) if gpsimd else v

        if col(y) and _is_tile(x) and not col(x):
            self.ts(dst, fix(self.bcast(x, shape)), fn, fix(y), engine="gpsimd" if gpsimd else None)
        elif col(x) and _is_tile(y) and not col(y):
            self.ts(dst, fix(self.bcast(y, shape)), fn, fix(x), reverse0=True,
                    engine="gpsimd" if gpsimd else None)
        elif not _is_tile(y):  # x a column of dst's shape, y a scalar
            self.ts(dst, fix(self.bcast(x, shape)), fn, y, engine="gpsimd" if gpsimd else None)
        elif not _is_tile(x):
            self.ts(dst, fix(self.bcast(y, shape)), fn, x, reverse0=True,
                    engine="gpsimd" if gpsimd else None)
        else:
            a, b = self.bcast(x, shape), self.bcast(y, shape)
            ints = all(dtype_of(v) in (dtypes.int32, dtypes.uint32) for v in (dst, a, b))
            if gpsimd or ints:  # GpSimd cannot access PSUM
                a, b = self.sbuf(a), self.sbuf(b)
            elif space_of(a) == "psum" and space_of(b) == "psum":
                b = self.sbuf(b)
            self.tt(dst, a, b, fn)

    def reduced_sin(self, dst: SSAValue, x: SSAValue, shift: float) -> None:
        """``dst = sin(x + shift - pi)`` with the argument reduced into [-pi, pi)."""
        t = self.alloc(shape_of(x), dtypes.float32)
        self.ts(t, x, "add", self.f32(shift + math.pi), op1="mod", operand1=self.f32(_TWO_PI))
        self.act(dst, t, "sin", bias=self.f32(-math.pi))


# =============================================================================== lowering


def _unary(e: Emitter, op: S.UnaryOp) -> SSAValue:
    r, x, fn = e.alloc_result(), op.x, op.fn.data
    if fn in ACT_FNS:
        e.act(r, x, fn)
    elif fn == "copy":
        e.copy(r, x)
    elif fn == "reciprocal":
        e.add(op_class("nki.reciprocal").build(operands=[r, x]))
    elif fn == "rsqrt":
        dst = r if space_of(r) == "sbuf" else e.alloc(shape_of(r), dtype_of(r))
        e.ts(dst, e.sbuf(x), "rsqrt", e.f32(0.0), engine="gpsimd")
        if dst is not r:
            e.copy(r, dst)
    elif fn == "negative":
        e.ts(r, x, "multiply", e.f32(-1.0))
    elif fn == "logical_not":
        e.ts(r, x, "equal", e.f32(0.0))
    elif fn == "invert":
        e.ts(r, x, "bitwise_xor", e.int_const(-1))
    elif fn == "sin":
        e.reduced_sin(r, x, 0.0)
    elif fn == "cos":
        e.reduced_sin(r, x, math.pi / 2)
    elif fn == "tan":
        s, c = e.alloc(shape_of(x), dtypes.float32), e.alloc(shape_of(x), dtypes.float32)
        e.reduced_sin(s, x, 0.0)
        e.reduced_sin(c, x, math.pi / 2)
        e.tt(r, s, c, "divide")
    elif fn in ("floor", "trunc"):
        f = e.alloc(shape_of(x), dtypes.float32)
        e.ts(f, x, "mod" if fn == "floor" else "fmod", e.f32(1.0))
        e.tt(r, x, f, "subtract")
    elif fn == "ceil":
        f = e.alloc(shape_of(x), dtypes.float32)
        e.ts(f, x, "multiply", e.f32(-1.0), op1="mod", operand1=e.f32(1.0))
        e.tt(r, x, f, "add")
    else:  # pragma: no cover -- the verifier lists every fn
        raise ValueError(f"nki.unary: no lowering for fn={fn}")
    return r


def _binary(e: Emitter, op: S.BinaryOp) -> SSAValue:
    r = e.alloc_result()
    e.binary(r, op.fn.data, op.x, op.y)
    return r


def _col_shape(x: SSAValue) -> tuple[int, int]:
    return (shape_of(x)[0], 1)


def _reduce(e: Emitter, op: S.ReduceOp) -> SSAValue:
    r, x, fn = e.alloc_result(), op.x, op.fn.data
    axes = [a.value.data for a in op.axis.data]  # type: ignore[attr-defined]
    n = int(np.prod([shape_of(x)[a] for a in axes], dtype=np.int64))
    if fn in ("sum", "max", "min", "prod", "all"):
        e.reduce(r, x, REDUCE_TOKENS[fn], op.axis)
    elif fn == "mean":
        t = e.alloc(shape_of(r), dtypes.float32)
        e.reduce(t, x, "add", op.axis)
        e.ts(r, t, "multiply", e.f32(1.0 / n))
    else:  # var: mean of (x - mean)^2, every free axis reduced (checked by the frontend)
        m = e.alloc(_col_shape(x), dtypes.float32)
        e.reduce(m, x, "add", op.axis)
        e.ts(m, m, "multiply", e.f32(1.0 / n))
        d = e.alloc(shape_of(x), dtypes.float32)
        e.ts(d, x, "subtract", m)
        ss = e.alloc(_col_shape(x), dtypes.float32)
        e.act(d, d, "square", reduce_res=ss)
        e.ts(r, ss, "multiply", e.f32(1.0 / n))
    return r


def _softmax(e: Emitter, op: S.SoftmaxOp) -> SSAValue:
    r, x = e.alloc_result(), op.x
    m = e.alloc(_col_shape(x), dtypes.float32)
    e.reduce(m, x, "maximum", op.axis)
    neg = e.alloc(_col_shape(x), dtypes.float32)
    e.ts(neg, m, "multiply", e.f32(-1.0))
    ex = e.alloc(shape_of(x), dtypes.float32)
    s = e.alloc(_col_shape(x), dtypes.float32)
    e.act(ex, x, "exp", bias=neg, reduce_res=s)
    inv = e.alloc(_col_shape(x), dtypes.float32)
    e.add(op_class("nki.reciprocal").build(operands=[inv, s]))
    e.ts(r, ex, "multiply", inv)
    return r


def _rms_norm(e: Emitter, op: S.RmsNormOp) -> SSAValue:
    r, x = e.alloc_result(), op.x
    sq = e.alloc(shape_of(x), dtypes.float32)
    ss = e.alloc(_col_shape(x), dtypes.float32)
    e.act(sq, x, "square", reduce_res=ss)
    ms = e.alloc(_col_shape(x), dtypes.float32)
    e.ts(ms, ss, "multiply", e.f32(1.0 / op.n.value.data), op1="add",
         operand1=e.f32(op.epsilon.value.data))
    inv = e.alloc(_col_shape(x), dtypes.float32)
    e.act(inv, ms, "rsqrt")
    y = e.alloc(shape_of(x), dtypes.float32)
    e.ts(y, x, "multiply", inv)
    e.binary(r, "multiply", y, op.w)
    return r


def _where(e: Emitter, op: S.WhereOp) -> SSAValue:
    r = e.alloc_result()
    shape, dt = shape_of(r), dtype_of(r)
    if _is_tile(op.y):
        e.bcast(op.y, shape, out=r)
    else:
        e.memset(r, e.const_for(dt, _const_value(op.y) or 0))
    pred = e.alloc(shape, dtypes.uint8)
    e.ts(pred, e.bcast(op.cond, shape), "not_equal", e.f32(0.0))
    src: SSAValue = op.x
    if _is_tile(src):
        src = e.bcast(src, shape)
        if dtype_of(src) != dt:
            tmp = e.alloc(shape, dt)
            e.copy(tmp, src)
            src = tmp
    e.add(op_class("nki.tensor_copy_predicated").build(operands=[r, src, pred]))
    return r


def _transpose(e: Emitter, op: S.TransposeOp) -> SSAValue:
    x = e.sbuf(op.x)
    rt = op.result.type
    if space_of(rt) == "psum" and dtype_of(rt) == dtype_of(x):
        r = e.alloc_result()
        e.add(op_class("nki.nc_transpose").build(operands=[r, x]))
        return r
    tp = e.alloc(shape_of(rt), dtype_of(x), "psum")
    e.add(op_class("nki.nc_transpose").build(operands=[tp, x]))
    r = e.alloc_result()
    e.copy(r, tp)
    return r


def _broadcast_to(e: Emitter, op: S.BroadcastToOp) -> SSAValue:
    if psum_direct(op):
        return e.part_bcast_psum(op.x, shape_of(op.results[0])[0])
    r = e.alloc_result()
    e.bcast(op.x, shape_of(r), out=r)
    return r


def _full(e: Emitter, op: S.FullOp) -> SSAValue:
    r = e.alloc_result()
    e.memset(r, op.value)
    return r


def _identity(e: Emitter, op: S.SharedIdentityOp) -> SSAValue:
    r = e.alloc_result()
    n = shape_of(r)[0]
    io = e.alloc((n, n), dtypes.int32)
    pattern = ArrayAttr([ArrayAttr([IntegerAttr(-1, i64), IntegerAttr(n, i64)])])
    e.add(op_class("nki.iota").build(operands=[io, None], properties={
        "pattern": pattern, "offset": IntegerAttr(0, i64), "channel_multiplier": IntegerAttr(1, i64)}))
    e.ts(r, io, "equal", e.f32(0.0))
    return r


def _rand(e: Emitter, op: S.RandOp) -> SSAValue:
    r = e.alloc_result()
    shape, dt = shape_of(r), dtype_of(r)
    bits = min(24, _mantissa_bits(dt) + 1)  # exactly representable: k / 2^bits < 1
    raw = e.alloc(shape, dtypes.uint32)
    e.add(op_class("nki.rng").build(operands=[raw]))
    top = e.alloc(shape, dtypes.uint32)
    e.ts(top, raw, "right_shift", e.int_const(32 - bits))
    e.ts(r, top, "multiply", e.f32(2.0 ** -bits))
    return r


def _random_seed(e: Emitter, op: S.RandomSeedOp) -> None:
    e.add(op_class("nki.set_rng_seed").build(operands=[op.seed]))


def _dropout(e: Emitter, op: S.DropoutOp) -> SSAValue:
    r = e.alloc_result()
    dst = r if dtype_of(r) == dtype_of(op.x) else e.alloc(shape_of(r), dtype_of(op.x))
    e.add(op_class("nki.dropout").build(operands=[dst, op.x, op.rate]))
    if dst is not r:
        e.copy(r, dst)
    return r


def _gather(e: Emitter, op: S.GatherFlattenedOp) -> SSAValue:
    r = e.alloc_result()
    dst = r if dtype_of(r) == dtype_of(op.data) else e.alloc(shape_of(r), dtype_of(op.data))
    e.add(op_class("nki.nc_n_gather").build(operands=[dst, e.sbuf(op.data), e.sbuf(op.indices)]))
    if dst is not r:
        e.copy(r, dst)
    return r


LOWERINGS = {
    S.UnaryOp: _unary, S.BinaryOp: _binary, S.ReduceOp: _reduce, S.SoftmaxOp: _softmax,
    S.RmsNormOp: _rms_norm, S.WhereOp: _where, S.TransposeOp: _transpose,
    S.BroadcastToOp: _broadcast_to, S.FullOp: _full, S.SharedIdentityOp: _identity,
    S.RandOp: _rand, S.RandomSeedOp: _random_seed, S.DropoutOp: _dropout,
    S.GatherFlattenedOp: _gather,
}


class LegalizeMath(RewritePattern):
    """Any generic sugar op -> its instructions (see the module docstring)."""

    @staticmethod
    def applies_to(cls: type[Operation]) -> bool:
        return cls in LOWERINGS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        fn = LOWERINGS.get(type(op))
        if fn is None:
            return
        e = Emitter(op)
        result = fn(e, op)
        rewriter.replace(op, e.ops, [result] if op.results else [])


__all__ = ["LegalizeMath", "Emitter", "ACT_FNS"]
