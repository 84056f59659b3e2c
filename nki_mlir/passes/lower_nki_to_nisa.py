"""``lower-nki-to-nisa``: one ``nisa`` instruction per ``nki`` op, with its engine chosen.

API names become AWS's instruction names and operand roles (``nki.tensor_tensor`` ->
``nisa.tensor_tensor_arith(dst, lhs, rhs)``, ``nki.nc_matmul`` -> ``nisa.matmul``), NKI
op tokens become AWS enum spellings (``maximum`` -> ``max``), ``nki.ndarray`` becomes
``nisa.alloc`` (keeping the user's name and direct address as ``nkim.name`` /
``nkim.address``).  Engines: the user's ``engine=`` when given, else the NKI default
(nki.isa API reference (nki/api/nki/isa)): DMA for dma_copy, TensorE for matmul/transpose, ScalarE for
activation, GpSimd for iota/affine_select and for int32 / ``power`` tensor_tensor,
VectorE otherwise.  Views (``memref.subview``), loops and index math are kept.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (ArrayAttr, BoolAttr, FloatAttr, IntegerAttr, ModuleOp,
                                     StringAttr, f32, i64)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from ..dialects import nisa, nki
from ..dialects.common import dtype_of, i64_attr, prop_flag, space_of, str_attr
from ..dialects.instruction import DIRECT_LOWERINGS
from ..dialects.nisa import ARITH_OPS


def _engine(op: Operation, default: str) -> StringAttr:
    e = op.properties.get("engine")
    return e if isinstance(e, StringAttr) and e.data != "unknown" else str_attr(default)


def _arith(token: StringAttr) -> StringAttr:
    return str_attr(ARITH_OPS[token.data])


def _replace(rewriter: PatternRewriter, op: Operation, new: list[Operation], results=None) -> None:
    for n in new:
        n.location = op.location
    rewriter.replace(op, new, results if results is not None else [])


class LowerNdarray(RewritePattern):
    """``%t = nki.ndarray(name=a, address=[0, 64]) : T`` -> ``%t = nisa.alloc {nkim.name = "a", nkim.address = [0, 64]} : T``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.NdarrayOp, rewriter: PatternRewriter) -> None:
        attrs = {}
        if op.tensor_name is not None:
            attrs["nkim.name"] = op.tensor_name
        elif op.result.name_hint:
            attrs["nkim.name"] = StringAttr(op.result.name_hint)
        if op.address is not None:
            attrs["nkim.address"] = op.address
        props = {"alignment": i64_attr(64)} if op.result.type.memory_space.space.data in ("sbuf", "psum") else {}
        new = nisa.AllocOp.build(operands=[[]], result_types=[op.result.type], properties=props,
                                 attributes=attrs)
        _replace(rewriter, op, [new], [new.result])


class LowerTensorTensor(RewritePattern):
    """``nki.tensor_tensor(dst, data1, data2, op=maximum)`` -> ``nisa.tensor_tensor_arith(dst, lhs, rhs, op=max)``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.TensorTensorOp, rewriter: PatternRewriter) -> None:
        ints = all(dtype_of(v) in (dtypes.int32, dtypes.uint32) for v in (op.dst, op.data1, op.data2))
        psum = any(space_of(v) == "psum" for v in (op.dst, op.data1, op.data2))  # GpSimd cannot
        default = "gpsimd" if op.op.data == "power" or (ints and not psum) else "vector"
        _replace(rewriter, op, [nisa.TensorTensorArithOp.build(
            operands=[op.dst, op.data1, op.data2],
            properties={"op": _arith(op.op), "engine": _engine(op, default)})])


class LowerTensorScalar(RewritePattern):
    """``nki.tensor_scalar(..., reverse0, reverse1)`` -> ``nisa.tensor_scalar_arith(..., reverse_operands=first|second|both)``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.TensorScalarOp, rewriter: PatternRewriter) -> None:
        r0, r1 = prop_flag(op, "reverse0"), prop_flag(op, "reverse1")
        rev = {(False, False): "none_", (True, False): "first", (False, True): "second",
               (True, True): "both"}[(r0, r1)]
        props = {"op0": _arith(op.op0), "reverse_operands": str_attr(rev),
                 "engine": _engine(op, "vector")}
        if op.op1 is not None:
            props["op1"] = _arith(op.op1)
        _replace(rewriter, op, [nisa.TensorScalarArithOp.build(
            operands=[op.dst, op.data, op.operand0, op.operand1], properties=props)])


class LowerActivation(RewritePattern):
    """``nki.activation`` / ``nki.activation_reduce`` -> ``nisa.activation`` (bias defaults to 0.0)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.ActivationOp | nki.ActivationReduceOp, rewriter: PatternRewriter) -> None:
        new: list[Operation] = []
        bias: SSAValue | None = op.bias
        if bias is None:
            zero = arith.ConstantOp(FloatAttr(0.0, f32), f32)
            new.append(zero)
            bias = zero.result
        props = {"op": op.op, "engine": str_attr("scalar")}
        if op.reduce_res is not None:
            props["reduce_op"] = op.properties.get("reduce_op") or StringAttr("add")
        cmd = op.properties.get("reduce_cmd")
        if isinstance(op, nki.ActivationReduceOp):
            cmd = StringAttr("reset_reduce")
        if cmd is not None:
            props["reduce_cmd"] = cmd
        new.append(nisa.ActivationOp.build(operands=[op.dst, op.reduce_res, op.data, bias, op.scale],
                                           properties=props))
        _replace(rewriter, op, new)


class LowerTensorReduce(RewritePattern):
    """``nki.tensor_reduce(axis=[1, 2], negate)`` -> ``nisa.tensor_reduce_arith(num_r_dim=2, negated)``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.TensorReduceOp, rewriter: PatternRewriter) -> None:
        rank = len(op.data.type.get_shape())
        first = min(a.value.data for a in op.axis.data)
        props = {"op": _arith(op.op), "negated": BoolAttr.from_bool(prop_flag(op, "negate")),
                 "num_r_dim": IntegerAttr(rank - first, i64), "engine": _engine(op, "vector")}
        _replace(rewriter, op, [nisa.TensorReduceArithOp.build(operands=[op.dst, op.data], properties=props)])


class LowerReciprocal(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.ReciprocalOp, rewriter: PatternRewriter) -> None:
        _replace(rewriter, op, [nisa.ReciprocalOp.build(
            operands=[op.dst, op.data], properties={"engine": _engine(op, "vector")})])


class LowerMemset(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.MemsetOp, rewriter: PatternRewriter) -> None:
        _replace(rewriter, op, [nisa.MemsetOp.build(
            operands=[op.dst, op.value], properties={"engine": _engine(op, "vector")})])


class LowerIota(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.IotaOp, rewriter: PatternRewriter) -> None:
        _replace(rewriter, op, [nisa.IotaOp.build(
            operands=[op.dst, op.offset_index], properties={"pattern": op.pattern, "offset": op.offset,
                                           "channel_multiplier": op.channel_multiplier,
                                           "engine": StringAttr("gpsimd")})])


class LowerAffineSelect(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.AffineSelectOp, rewriter: PatternRewriter) -> None:
        _replace(rewriter, op, [nisa.AffineSelectOp.build(
            operands=[op.dst, op.on_true_tile, op.on_false_value, op.offset_index],
            properties={"pattern": op.pattern, "offset": op.offset,
                        "channel_multiplier": op.channel_multiplier, "cmp_op": _arith(op.cmp_op),
                        "engine": StringAttr("gpsimd")})])


class LowerDirect(RewritePattern):
    """Any op registered with ``instruction.direct_lowering``: ``nki.X(roles..., props...)`` ->
    its ``nisa`` twin with the same operands and properties, ``engine=`` filled in.

    ``nki.bn_stats(dst=T %d, data=T %x)`` -> ``nisa.bn_stats(dst=T %d, data=T %x) engine=vector``.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = DIRECT_LOWERINGS.get(op.name)
        if rule is None:
            return
        props = dict(rule.properties(op)) if rule.properties else dict(op.properties)
        if rule.engine is not None:  # None: not an instruction (a view, a constant)
            default = rule.engine(op) if callable(rule.engine) else rule.engine
            props["engine"] = _engine(op, default)
        if rule.operands is None:
            new = rule.target.create(operands=list(op.operands), result_types=[r.type for r in op.results],
                                     properties=props, attributes=dict(op.attributes))
            _replace(rewriter, op, [new], list(new.results))
            return
        before, operands = rule.operands(op)  # operands that differ: built (segment sizes)
        new = rule.target.build(operands=operands, result_types=[r.type for r in op.results],
                                properties=props, attributes=dict(op.attributes))
        _replace(rewriter, op, [*before, new], list(new.results))


PATTERNS = (LowerDirect, LowerNdarray, LowerTensorTensor, LowerTensorScalar,
            LowerActivation, LowerTensorReduce, LowerReciprocal, LowerMemset, LowerIota,
            LowerAffineSelect)


@dataclass(frozen=True)
class LowerNkiToNisa(ModulePass):
    """Lower every ``nki`` op to ``nisa``; afterwards no ``nki.`` op may remain."""

    name = "lower-nki-to-nisa"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([p() for p in PATTERNS]),
                             apply_recursively=False).rewrite_module(op)
        left = [o.name for o in op.walk() if o.name.startswith("nki.")]
        if left:
            raise VerifyException(f"lower-nki-to-nisa: ops left unlowered: {sorted(set(left))} "
                                  f"(run nki-legalize first for sugar ops)")


__all__ = ["LowerNkiToNisa", "ArrayAttr"]
