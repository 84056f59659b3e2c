"""``nki-legalize``: NKI 0.3 value-returning sugar -> destination-style ``nki`` ops.

Each sugar op allocates its result tile explicitly and becomes the instruction(s) the NKI
docs say it lowers to (nki.language API reference (nki/api/nki/language)): ``nl.load`` -> ``dma_copy``; ``nl.store``
-> ``dma_copy`` (via an SBUF copy when the value is in PSUM); ``nl.add`` / ``nl.multiply``
-> ``tensor_tensor`` (or ``tensor_scalar`` for a scalar / ``[P,1]`` operand);
``nl.exp`` -> ``activation``; ``nl.matmul`` -> ``nc_matmul`` (after a TensorE transpose
of ``x`` unless ``transpose_x``); ``nl.zeros`` -> ``ndarray`` + ``memset``.  The generic
``nl.*`` sugar ops (``nki.unary`` / ``nki.binary`` / ``nki.reduce`` / ...) are lowered by
:class:`.legalize_math.LegalizeMath`.  Afterwards no op of ``nki.SUGAR_OPS`` remains.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, MemRefType, ModuleOp, StringAttr, f32, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from .. import dtypes
from ..dialects import nki
from ..dialects.common import dtype_of, free_size, memref, shape_of, space_of
from ..dialects.ods_ops import op_class
from .forward_assign import ForwardAssign
from .legalize_math import LegalizeMath
from .rewrite_walk import op_type_pattern, rewrite_walk


def _with_loc(src: Operation, ops: list[Operation]) -> list[Operation]:
    for o in ops:
        o.location = src.location
    return ops


def _alloc(shape, dtype, space: str, name: str | None = None) -> nki.NdarrayOp:
    props = {"name": StringAttr(name)} if name else {}
    return nki.NdarrayOp.build(result_types=[memref(shape, dtype, space)], properties=props)


def _f32(v: float) -> arith.ConstantOp:
    return arith.ConstantOp(FloatAttr(float(v), f32), f32)


def _name(op: Operation, suffix: str) -> str | None:
    hint = op.results[0].name_hint if op.results else None
    return f"{hint}{suffix}" if hint else None


class LegalizeZeros(RewritePattern):
    """``%t = nki.zeros() : T``  ->  ``%t = nki.ndarray() : T; nki.memset(dst=%t, value=0)``."""

    @op_type_pattern
    def match_and_rewrite(self, op: nki.ZerosOp, rewriter: PatternRewriter) -> None:
        t = op.result.type
        alloc = nki.NdarrayOp.build(result_types=[t], properties=dict(op.properties))
        dt = dtype_of(t)
        if dtypes.is_int(dt) and dt != dtypes.bool_:
            attr = dtypes.int_constant_attr(0, dt)
            zero = arith.ConstantOp(attr, attr.type)
        else:
            zero = _f32(0.0)
        fill = op_class("nki.memset").build(operands=[alloc.result, zero.result])
        rewriter.replace(op, _with_loc(op, [alloc, zero, fill]), [alloc.result])


class LegalizeLoad(RewritePattern):
    """``%t = nki.load(src=%hbm)``  ->  ``%t = nki.ndarray : sbuf; nki.dma_copy(dst=%t, src=%hbm)``."""

    @op_type_pattern
    def match_and_rewrite(self, op: nki.LoadOp, rewriter: PatternRewriter) -> None:
        alloc = nki.NdarrayOp.build(result_types=[op.result.type])
        copy = op_class("nki.dma_copy").build(operands=[alloc.result, op.src])
        rewriter.replace(op, _with_loc(op, [alloc, copy]), [alloc.result])


class LegalizeStore(RewritePattern):
    """``nki.store(dst=%hbm, value=%t)`` -> ``nki.dma_copy`` (PSUM values go through an SBUF copy)."""

    @op_type_pattern
    def match_and_rewrite(self, op: nki.StoreOp, rewriter: PatternRewriter) -> None:
        ops: list[Operation] = []
        value: SSAValue = op.value
        if space_of(value) == "psum":
            tmp = _alloc(shape_of(value), dtype_of(value), "sbuf")
            ops += [tmp, op_class("nki.tensor_copy").build(operands=[tmp.result, value])]
            value = tmp.result
        ops.append(op_class("nki.dma_copy").build(operands=[op.dst, value]))
        rewriter.replace(op, _with_loc(op, ops), [])


class LegalizeBinary(RewritePattern):
    """``%r = nki.add(x=%a, y=%b)`` -> ``%r = nki.ndarray; nki.tensor_tensor(dst=%r, data1=%a, data2=%b, op=add)``.

    A scalar ``y`` or a ``[P,1]`` ``y`` against a wider ``x`` becomes ``tensor_scalar``.
    """

    @op_type_pattern
    def match_and_rewrite(self, op: nki.AddOp | nki.MultiplyOp, rewriter: PatternRewriter) -> None:
        token = "add" if isinstance(op, nki.AddOp) else "multiply"
        alloc = nki.NdarrayOp.build(result_types=[op.result.type])
        y = op.y
        if not isinstance(y.type, MemRefType) or (free_size(y) == 1 and free_size(op.x) > 1):
            inst = op_class("nki.tensor_scalar").build(operands=[alloc.result, op.x, y, None],
                                            properties={"op0": StringAttr(token)})
        else:
            inst = op_class("nki.tensor_tensor").build(operands=[alloc.result, op.x, y],
                                            properties={"op": StringAttr(token)})
        rewriter.replace(op, _with_loc(op, [alloc, inst]), [alloc.result])


class LegalizeExp(RewritePattern):
    """``%r = nki.exp(x=%a)`` -> ``%r = nki.ndarray; nki.activation(dst=%r, data=%a, scale=1.0, op=exp)``."""

    @op_type_pattern
    def match_and_rewrite(self, op: nki.ExpOp, rewriter: PatternRewriter) -> None:
        alloc = nki.NdarrayOp.build(result_types=[op.result.type])
        one = _f32(1.0)
        act = op_class("nki.activation").build(operands=[alloc.result, op.x, None, one.result, None],
                                     properties={"op": StringAttr("exp")})
        rewriter.replace(op, _with_loc(op, [alloc, one, act]), [alloc.result])


class LegalizeMatmul(RewritePattern):
    """``%r = nki.matmul(x, y, transpose_x)`` -> ``nc_matmul(dst=%r, stationary=xT, moving=y)``.

    Without ``transpose_x``, ``x[M,K]`` is first transposed on TensorE into PSUM and
    copied to SBUF, since the stationary operand must hold the contraction on partitions.
    """

    @op_type_pattern
    def match_and_rewrite(self, op: nki.MatmulOp, rewriter: PatternRewriter) -> None:
        ops: list[Operation] = []
        stationary: SSAValue = op.x
        if op.transpose_x is None or not op.transpose_x.value.data:
            m, k = shape_of(op.x)[0], free_size(op.x)
            dt = dtype_of(op.x)
            t_ps = _alloc((k, m), dt, "psum")
            t_sb = _alloc((k, m), dt, "sbuf")
            ops += [t_ps, op_class("nki.nc_transpose").build(operands=[t_ps.result, op.x]),
                    t_sb, op_class("nki.tensor_copy").build(operands=[t_sb.result, t_ps.result])]
            stationary = t_sb.result
        alloc = nki.NdarrayOp.build(result_types=[op.result.type])
        ops += [alloc, op_class("nki.nc_matmul").build(operands=[alloc.result, stationary, op.y])]
        rewriter.replace(op, _with_loc(op, ops), [alloc.result])


@dataclass(frozen=True)
class NkiLegalize(ModulePass):
    """Rewrite every NKI sugar op into destination-style ``nki`` instructions."""

    name = "nki-legalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_walk(op, [LegalizeZeros(), LegalizeLoad(), LegalizeStore(), LegalizeBinary(),
                          LegalizeExp(), LegalizeMatmul(), LegalizeMath()])
        # t[...] = value (Beta 1): the producer writes t directly (forward_assign.py)
        rewrite_walk(op, [ForwardAssign()], erase_dead=False)


__all__ = ["NkiLegalize", "i64"]
