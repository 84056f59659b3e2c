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
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import VerifyException

from ..dialects import nisa, nki
from ..dialects.common import i64_attr, str_attr
from ..dialects.instruction import DIRECT_LOWERINGS
from .replace_in_place import replace_one, replace_ops
from .rewrite_walk import op_type_pattern, rewrite_walk


def _engine(op: Operation, default: str) -> StringAttr:
    e = op.properties.get("engine")
    return e if isinstance(e, StringAttr) and e.data != "unknown" else str_attr(default)


class LowerNdarray(RewritePattern):
    """``%t = nki.ndarray(name=a, address=[0, 64]) : T`` -> ``%t = nisa.alloc {nkim.name = "a", nkim.address = [0, 64]} : T``."""

    @op_type_pattern
    def match_and_rewrite(self, op: nki.NdarrayOp, rewriter: PatternRewriter) -> None:
        attrs = {}
        if op.tensor_name is not None:
            attrs["nkim.name"] = op.tensor_name
        elif op.result.name_hint:
            attrs["nkim.name"] = StringAttr(op.result.name_hint)
        if op.address is not None:
            attrs["nkim.address"] = op.address
        props = {"alignment": i64_attr(64)} if op.result.type.memory_space.space.data in ("sbuf", "psum") else {}
        new = nisa.AllocOp.create(result_types=[op.result.type], properties=props, attributes=attrs)
        new.location = op.location
        replace_one(rewriter, op, new)




class LowerDirect(RewritePattern):
    """Any op registered with ``instruction.direct_lowering``: ``nki.X(roles..., props...)`` ->
    its ``nisa`` twin with the same operands and properties, ``engine=`` filled in.

    ``nki.bn_stats(dst=T %d, data=T %x)`` -> ``nisa.bn_stats(dst=T %d, data=T %x) engine=vector``.
    """

    @staticmethod
    def applies_to(cls: type[Operation]) -> bool:
        return cls.name in DIRECT_LOWERINGS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = DIRECT_LOWERINGS.get(op.name)
        if rule is None:
            return
        if rule.build is not None:  # not 1:1 (an instruction definition's isa form)
            new_ops = rule.build(op)
            for n in new_ops:
                n.location = op.location
            replace_ops(rewriter, op, new_ops)
            return
        props = dict(rule.properties(op)) if rule.properties else dict(op.properties)
        if rule.engine is not None:  # None: not an instruction (a view, a constant)
            default = rule.engine(op) if callable(rule.engine) else rule.engine
            props["engine"] = _engine(op, default)
        new = rule.target.create(operands=list(op.operands), result_types=[r.type for r in op.results],
                                 properties=props, attributes=dict(op.attributes))
        new.location = op.location
        replace_one(rewriter, op, new)


PATTERNS = (LowerDirect, LowerNdarray)


@dataclass(frozen=True)
class LowerNkiToNisa(ModulePass):
    """Lower every ``nki`` op to ``nisa``; afterwards no ``nki.`` op may remain."""

    name = "lower-nki-to-nisa"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_walk(op, [p() for p in PATTERNS])
        left = [o.name for o in op.walk() if o.name.startswith("nki.")]
        if left:
            raise VerifyException(f"lower-nki-to-nisa: ops left unlowered: {sorted(set(left))} "
                                  f"(run nki-legalize first for sugar ops)")


__all__ = ["LowerNkiToNisa", "ArrayAttr"]
