"""The ``no_reorder`` region: ``nisa.no_reorder_begin`` / ``nisa.no_reorder_end``.

``with nl.no_reorder():`` becomes the markers ``nisa.no_reorder_begin`` ...
``nisa.no_reorder_end`` around its ops in the same block (structural, used at both the
``nki`` and the ``nisa`` level like ``scf.for``; a marker pair, not a region, so tensors
defined inside stay visible after it).  ``nisa-schedule`` chains the instructions between
them so they keep program order; runtime loops are not allowed between them.  They are
not instructions (no engine, no operands, nothing executed), so they have no instruction
definition; the register instructions are ``nki_mlir/instructions/registers.py``.

Semantics: NKI architecture guide (nki/guides/architecture) ("Registers and control").
"""
from __future__ import annotations

from xdsl.ir import Block, Operation
from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.utils.exceptions import VerifyException


@irdl_op_definition
class NoReorderBeginOp(IRDLOperation):
    """``nisa.no_reorder_begin``: the ops up to the matching ``nisa.no_reorder_end`` of the
    same block (nested regions included) keep program order (``with nl.no_reorder():``).

    A marker, not a region: tensors made inside stay visible after it (a region would scope
    its SSA values).  Structural, used at both levels, executes nothing.
    """

    name = "nisa.no_reorder_begin"
    assembly_format = "attr-dict"

    def verify_(self) -> None:
        depth, op = 0, self.next_op
        while op is not None:
            if isinstance(op, NoReorderBeginOp):
                depth += 1
            elif isinstance(op, NoReorderEndOp):
                if depth == 0:
                    return
                depth -= 1
            for inner in op.walk():
                if inner.name == "scf.while" or (inner.name == "scf.for"
                                                 and _range_kind(inner) == "dynamic"):
                    raise VerifyException("nisa.no_reorder_begin: runtime (dynamic) loops are not "
                                          "allowed inside a no_reorder block; static loops are")
            op = op.next_op
        raise VerifyException("nisa.no_reorder_begin: no matching nisa.no_reorder_end in the "
                              "same block")


@irdl_op_definition
class NoReorderEndOp(IRDLOperation):
    """``nisa.no_reorder_end``: closes the innermost open ``nisa.no_reorder_begin``."""

    name = "nisa.no_reorder_end"
    assembly_format = "attr-dict"


def _range_kind(op) -> str | None:
    a = op.attributes.get("nki.range")
    return getattr(a, "data", None)


def no_reorder_groups(root: Operation) -> dict[Operation, Operation]:
    """Every op inside a no_reorder span (nested regions included) -> the span's outermost
    ``nisa.no_reorder_begin`` (spans nest; the outermost one orders them all)."""
    groups: dict[Operation, Operation] = {}

    def visit(block: Block, outer: Operation | None) -> None:
        stack: list[Operation] = []
        for op in block.ops:
            if isinstance(op, NoReorderBeginOp):
                stack.append(op)
                continue
            if isinstance(op, NoReorderEndOp):
                if stack:
                    stack.pop()
                continue
            group = outer or (stack[0] if stack else None)
            if group is not None:
                groups[op] = group
            for region in op.regions:
                for b in region.blocks:
                    visit(b, group)

    for region in root.regions:
        for b in region.blocks:
            visit(b, None)
    return groups


#: ops this module adds to the nki dialect
NKI_OPS: list = []
#: ops this module adds to the nisa dialect
NISA_OPS: list = [NoReorderBeginOp, NoReorderEndOp]
