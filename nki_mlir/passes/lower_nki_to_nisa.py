"""``lower-nki-to-nisa``: one ``nisa`` instruction per ``nki`` op, with its engine chosen.

API names become AWS's instruction names and operand roles (``nki.tensor_tensor`` ->
``nisa.tensor_tensor_arith(dst, lhs, rhs)``, ``nki.nc_matmul`` -> ``nisa.matmul``), NKI
op tokens become AWS enum spellings (``maximum`` -> ``max``), ``nki.ndarray`` becomes
``nisa.alloc`` (keeping the user's name and direct address as ``nkim.name`` /
``nkim.address``).  Engines: the user's ``engine=`` when given, else the NKI default
(nki.isa API reference (nki/api/nki/isa)): DMA for dma_copy, TensorE for matmul/transpose, ScalarE for
activation, GpSimd for iota/affine_select and for int32 / ``power`` tensor_tensor,
VectorE otherwise.  Views (``memref.subview``), loops and index math are kept.

The instructions defined in ``nki_mlir/instructions`` lower by the rule their definition
registered (:class:`LowerDirect`: 1:1, or their ``isa`` form's names, roles, spellings and
engine rule, ``dialects/ods_forms.py``); the patterns here are the hand-written rest.
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (ArrayAttr, BoolAttr, IndexType, IntegerAttr, ModuleOp,
                                     StringAttr)
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

from ..dialects import nisa, nki
from ..dialects.common import bool_attr, i64_attr, str_attr
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


class LowerDmaCopy(RewritePattern):
    """``nki.dma_copy(dst, src)`` -> ``nisa.dma_copy(dst, src, oob_is_err=true) engine=dma``."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.DmaCopyOp, rewriter: PatternRewriter) -> None:
        oob = op.oob_mode is None or op.oob_mode.data != "skip"
        props = {"engine": _engine(op, "dma"), "oob_is_err": bool_attr(oob)}  # hwdge: sync/scalar
        if op.dge_mode is not None and op.dge_mode.data not in ("unknown",):
            props["dge_mode"] = op.dge_mode
        _replace(rewriter, op, [nisa.DmaCopyOp.build(operands=[op.dst, op.src], properties=props)])


class LowerTensorCopy(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.TensorCopyOp, rewriter: PatternRewriter) -> None:
        _replace(rewriter, op, [nisa.TensorCopyOp.build(
            operands=[op.dst, op.src], properties={"engine": _engine(op, "vector")})])


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


class LowerNcMatmul(RewritePattern):
    """``nki.nc_matmul`` -> ``nisa.matmul``: ``accumulate=None|true|false`` ->
    ``psum_accumulate_flags=auto|accumulate|overwrite``, ``is_transpose`` kept,
    ``perf_mode=double_row`` -> ``perf_opt=double_row``, ``tile_position=[r, c]`` -> index
    constants ``row_pos=%r, col_pos=%c`` plus ``tile_size``; the onezero hints are dropped::

        nki.nc_matmul(dst=T %d, stationary=T %s, moving=T %m, tile_position=[64, 0], tile_size=[64, 128])
        ->  %r = arith.constant 64 : index   %c = arith.constant 0 : index
            nisa.matmul(dst=T %d, stationary=T %s, moving=T %m, row_pos=index %r, col_pos=index %c,
                        is_transpose=false, ..., tile_size=[64, 128]) engine=tensor
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.NcMatmulOp, rewriter: PatternRewriter) -> None:
        acc = "auto" if op.accumulate is None else ("accumulate" if op.accumulate.value.data else "overwrite")
        transpose = op.is_transpose is not None and bool(op.is_transpose.value.data)
        perf = op.perf_mode.data if op.perf_mode is not None else "none"
        props = {"is_transpose": BoolAttr.from_bool(transpose),
                 "perf_opt": StringAttr("none_" if perf == "none" else perf),
                 "psum_zero_region": StringAttr("size2048"), "psum_accumulate_flags": StringAttr(acc),
                 "engine": StringAttr("tensor")}
        new_ops: list[Operation] = []
        pos: list[SSAValue | None] = [None, None]
        if op.tile_position is not None:
            for i, a in enumerate(op.tile_position.data[:2]):
                c = arith.ConstantOp(IntegerAttr(int(a.value.data), IndexType()))
                new_ops.append(c)
                pos[i] = c.result
        if op.tile_size is not None:
            props["tile_size"] = op.tile_size
        new_ops.append(nisa.MatmulOp.build(
            operands=[op.dst, op.stationary, op.moving, [pos[0]] if pos[0] else [], [pos[1]] if pos[1] else []],
            properties=props))
        _replace(rewriter, op, new_ops)


class LowerNcTranspose(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: nki.NcTransposeOp, rewriter: PatternRewriter) -> None:
        _replace(rewriter, op, [nisa.NcTransposeOp.build(
            operands=[op.dst, op.data], properties={"engine": _engine(op, "tensor")})])


class LowerDirect(RewritePattern):
    """Any op registered with ``instruction.direct_lowering``: ``nki.X(roles..., props...)`` ->
    its ``nisa`` twin with the same operands and properties, ``engine=`` filled in.

    ``nki.bn_stats(dst=T %d, data=T %x)`` -> ``nisa.bn_stats(dst=T %d, data=T %x) engine=vector``.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = DIRECT_LOWERINGS.get(op.name)
        if rule is None:
            return
        if rule.build is not None:  # not 1:1 (an instruction definition's isa form)
            new_ops = rule.build(op)
            _replace(rewriter, op, new_ops, list(new_ops[-1].results))
            return
        props = dict(rule.properties(op)) if rule.properties else dict(op.properties)
        if rule.engine is not None:  # None: not an instruction (a view, a constant)
            default = rule.engine(op) if callable(rule.engine) else rule.engine
            props["engine"] = _engine(op, default)
        new = rule.target.create(operands=list(op.operands), result_types=[r.type for r in op.results],
                                 properties=props, attributes=dict(op.attributes))
        _replace(rewriter, op, [new], list(new.results))


PATTERNS = (LowerDirect, LowerNdarray, LowerDmaCopy, LowerTensorCopy,
            LowerIota,
            LowerAffineSelect, LowerNcMatmul, LowerNcTranspose)


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
