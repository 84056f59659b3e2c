"""In-place reuse of a dying input, a fallback of ``nisa-allocate`` when SBUF is short.

An elementwise instruction ``dst = f(src, ...)`` whose ``src`` tensor ``A`` is read for the
last time by it and whose ``dst`` is a fresh tensor ``B`` of exactly the same type may
write its result into ``A`` itself: element ``i`` of ``dst`` depends only on element ``i``
of ``src``, which sits at the same bytes, so the instruction reads each element before it
overwrites it (the in-place form ``nisa.tensor_tensor(dst=a, data1=a, data2=b)`` of the NKI
ISA pages).  The rewrite replaces every use of ``B`` by ``A`` and erases ``B``'s alloc, so
the two share one placement and the IR says so (the schedule and the interpreter's hazard
checks see one buffer).

Conditions (all must hold; anything else is left alone):

- the instruction is one of :data:`ELEMENTWISE`, its ``dst`` operand is ``B`` itself (not
  a view), and ``A`` itself (not a view) is one of its other operands;
- ``A`` and ``B`` are automatically placed allocs of the memory being rewritten of the same memref type (same
  shape, dtype and layout, so element ``i`` is at the same byte), in the same block as the
  instruction (no loop or branch between them, so "last use" is the last in time), neither
  directly placed (``nkim.address``);
- ``B``'s alloc comes after ``A``'s and the instruction is ``B``'s first use and ``A``'s
  last use (no use of ``A``, through views or inside nested ops, after it).
"""
from __future__ import annotations

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from ..dialects.common import space_of
from ..dialects.instruction import ELEMENTWISE_OPS
from ..dialects.nisa import AllocOp
from .alloc_sinking import ancestor_in
from .liveness import users_through_views

#: instructions where element i of dst is computed from element i of each same-typed source
#: (and the instruction definitions' ``elementwise`` ops, ``ELEMENTWISE_OPS``)
ELEMENTWISE = frozenset({"nisa.tensor_copy"})


def _elementwise(name: str) -> bool:
    return name in ELEMENTWISE or name in ELEMENTWISE_OPS

ATTR_ADDRESS = "nkim.address"


def _alloc_of(value) -> AllocOp | None:
    owner = getattr(value, "owner", None)
    return owner if isinstance(owner, AllocOp) else None


def _automatic(alloc: AllocOp, space: str) -> bool:
    return space_of(alloc.result) == space and ATTR_ADDRESS not in alloc.attributes \
        and not alloc.operands


def _last_use_is(alloc: AllocOp, op: Operation, order: dict[Operation, int]) -> bool:
    """``op`` (in the alloc's block) is at or after every use of the alloc's result."""
    block = alloc.parent_block()
    for user in users_through_views(alloc.result):
        top = ancestor_in(user, block)
        if top is None or order[top] > order[op]:
            return False
    return True


def _candidate(op: Operation, order: dict[Operation, int], space: str) -> tuple[AllocOp, AllocOp] | None:
    """``(A, B)`` if ``op`` may write its ``dst`` ``B`` into its dying source ``A``."""
    if not _elementwise(op.name):
        return None
    dst = getattr(op, "dst", None)
    b = _alloc_of(dst)
    if b is None or not _automatic(b, space) or b.parent_block() is not op.parent_block():
        return None
    if any(order.get(ancestor_in(u.operation, op.parent_block()), -1) < order[op]
           for u in b.result.uses):
        return None                     # op is not B's first use
    for operand in op.operands:
        a = _alloc_of(operand)
        if (a is None or a is b or not _automatic(a, space) or a.result.type != b.result.type
                or a.parent_block() is not op.parent_block() or order[a] > order[b]):
            continue
        if _last_use_is(a, op, order):
            return a, b
    return None


def reuse_dying_inputs(func: FuncOp, space: str) -> int:
    """Apply the in-place rewrite to the tensors of memory ``space`` (``"sbuf"`` or
    ``"psum"``) wherever the conditions hold; returns how many were merged into their
    dying input."""
    merged = 0
    blocks = {op.parent_block() for op in func.walk() if _elementwise(op.name)}
    for block in blocks:
        order = {op: i for i, op in enumerate(block.ops)}
        for op in list(block.ops):
            found = _candidate(op, order, space)
            if found is None:
                continue
            a, b = found
            b.result.replace_all_uses_with(a.result)
            b.detach()
            b.erase()
            merged += 1
    return merged
