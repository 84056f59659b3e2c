"""Fold the copy of an assignment into the instructions that produced its value.

``t[...] = nl.exp(x)`` (NKI Beta 1 assignment, frontend/assign.py) legalizes to::

    %tmp = nki.ndarray : memref<128x512xf32, sbuf>
    nki.activation(dst=%tmp, data=%x, op=exp)
    nki.tensor_copy(dst=%t, src=%tmp) {nki.assign}

and this pattern makes the producer write ``%t`` directly (the IR Beta 2's
``nisa.activation(dst=t, ...)`` gives)::

    nki.activation(dst=%t, data=%x, op=exp)

It applies only when that cannot change what the kernel computes: ``%tmp`` is a fresh
unplaced allocation of the destination's shape and dtype, used only by instructions in the
copy's block before the copy (no views of it), the destination is defined before the
first of them, and nothing between the first use and the copy touches the destination's
buffer.  Writing into a PSUM destination is Beta 1's "the result goes to PSUM when assigned
to a PSUM tile"; if the producer's verifier rejects the new destination (an engine that
cannot write PSUM, say) the copy stays.
"""
from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import VerifyException

from ..dialects import nki
from ..dialects.common import dtype_of, shape_of
from ..dialects.instruction import NkiInstruction
from ..dialects.effects import base_buffer

ASSIGN_ATTR = "nki.assign"


def number_ops(block) -> dict[Operation, int]:
    """Each op of ``block`` -> its position."""
    return {o: i for i, o in enumerate(block.ops)}


def _touches(op: Operation, base: SSAValue) -> bool:
    for o in op.walk():
        if any(base_buffer(x) is base for x in o.operands):
            return True
    return False


class ForwardAssign(RewritePattern):
    """``producer(dst=%tmp); tensor_copy(dst=%t, src=%tmp) {nki.assign}`` -> ``producer(dst=%t)``.

    An instance serves one walk: it numbers the ops of a block once (the rewrite only
    erases ops and swaps operands, so the numbers keep their order), and collects the ops
    between the first use and the copy along the block, so a block with many assignments
    costs linear time, not one block scan per assignment."""

    def __init__(self):
        self._order: dict = {}          # block -> {op: position}

    def _positions(self, block) -> dict:
        order = self._order.get(block)
        if order is None:
            order = self._order[block] = number_ops(block)
        return order

    @staticmethod
    def applies_to(cls: type[Operation]) -> bool:
        return cls.name == "nki.tensor_copy"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.name != "nki.tensor_copy" or ASSIGN_ATTR not in op.attributes:
            return
        dst, tmp = op.dst, op.src
        alloc = tmp.owner
        if not isinstance(alloc, nki.NdarrayOp) or alloc.properties.get("address") is not None:
            return
        if shape_of(tmp) != shape_of(dst) or dtype_of(tmp) != dtype_of(dst):
            return
        block = op.parent_block()
        users = [u.operation for u in tmp.uses if u.operation is not op]
        if not users or any(u.parent_block() is not block or not isinstance(u, NkiInstruction)
                            for u in users):
            return
        order = self._positions(block)
        first_user = min(users, key=order.__getitem__)
        first = order[first_user]
        if any(order[u] > order[op] for u in users):
            return
        owner = dst.owner
        if isinstance(owner, Operation) and owner.parent_block() is block and order[owner] > first:
            return
        base = base_buffer(dst)
        between = []
        o = first_user
        while o is not op:
            between.append(o)
            o = o.next_op
        if any(_touches(o, base) for o in between):
            return
        swapped: list[tuple[Operation, int]] = []
        for u in users:
            for i, x in enumerate(u.operands):
                if x is tmp:
                    u.operands[i] = dst
                    swapped.append((u, i))
        try:
            for u in users:
                u.verify_()
        except VerifyException:
            for u, i in swapped:
                u.operands[i] = tmp
            return
        rewriter.erase(op)
        if not tmp.uses:
            rewriter.erase(alloc)


__all__ = ["ForwardAssign", "ASSIGN_ATTR"]
