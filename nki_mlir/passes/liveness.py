"""Live ranges of ``nisa.alloc`` buffers over the loop structure of a function.

Ops are numbered in program pre-order (an op gets its number before the ops of its
regions).  A buffer is live from its ``nisa.alloc`` to its last use, where

- uses through view chains (``memref.subview`` of a subview of the alloc) count;
- a use inside a loop that does not contain the alloc extends the range to the end of
  the *outermost* such loop: a buffer defined outside a loop and used inside it is live
  for the whole loop, since every iteration reads or writes it;
- a buffer allocated inside a loop body is live only within the body: every iteration
  reuses the same placement, which is correct under in-order execution.

Runtime loops (``scf.for`` with ``nki.range = "dynamic"``, ``scf.while``) need nothing
special: they are in :data:`~.effects.LOOP_OPS`, both regions of an ``scf.while`` (the
condition and the body) are numbered inside it, so a buffer used in either is live over the
whole loop, and a loop that runs zero times only makes a range longer than needed.
Registers (``#nisa.mem<reg>``) are not ``nisa.alloc`` results and are never placed.

Multi-buffering hook: :attr:`LiveRange.copies` is the number of rotating copies a
placement needs (always 1 here).  Giving a body-allocated buffer ``copies = 2`` would
let iteration ``i+1`` fill one copy while iteration ``i`` still reads the other; the
allocator multiplies the footprint by ``copies`` (design.md section 5, step 4).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from ..dialects.nisa import AllocOp
from .effects import LOOP_OPS, enclosing_loops, is_view


@dataclass
class LiveRange:
    """The program points (pre-order numbers, inclusive) during which a buffer is live.

    Attributes:
        alloc: the ``nisa.alloc`` op.
        start: its own number.
        end: the number of its last use, extended over loops as described above.
        loop: the innermost loop whose body holds the alloc (None at function level).
        copies: placements rotated across iterations (the multi-buffering hook; 1).
    """

    alloc: AllocOp
    start: int
    end: int
    loop: Operation | None = None
    copies: int = 1

    def overlaps(self, other: LiveRange) -> bool:
        return self.start <= other.end and other.start <= self.end


@dataclass
class ProgramOrder:
    """Pre-order numbers of every op in a function, and the last number inside each op."""

    index: dict[Operation, int] = field(default_factory=dict)
    last: dict[Operation, int] = field(default_factory=dict)

    @classmethod
    def of(cls, func: Operation) -> ProgramOrder:
        order = cls()
        order._number(func)
        return order

    def _number(self, op: Operation) -> int:
        self.index[op] = len(self.index)
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    self._number(child)
        self.last[op] = len(self.index) - 1
        return self.last[op]


def users_through_views(value: SSAValue) -> list[Operation]:
    """Every op using ``value`` directly or through a chain of view ops (views included)."""
    found: list[Operation] = []
    work = [value]
    while work:
        v = work.pop()
        for use in v.uses:
            found.append(use.operation)
            if is_view(use.operation):
                work.extend(use.operation.results)
    return found


def outermost_loop_between(op: Operation, ancestor_of_def: Operation) -> Operation | None:
    """The outermost loop around ``op`` that is not around the alloc's block owner."""
    outer = None
    node = op.parent_op()
    while node is not None and node is not ancestor_of_def:
        if node.name in LOOP_OPS:
            outer = node
        node = node.parent_op()
    return outer


def live_range(alloc: AllocOp, order: ProgramOrder) -> LiveRange:
    """The live range of one alloc (see the module docstring)."""
    start = order.index[alloc]
    owner = alloc.parent_op()
    end = start
    for user in users_through_views(alloc.result):
        loop = outermost_loop_between(user, owner) if owner is not None else None
        end = max(end, order.last[loop] if loop is not None else order.index[user])
    loops = enclosing_loops(alloc)
    return LiveRange(alloc, start, end, loops[0] if loops else None)


def live_ranges(func: FuncOp) -> list[LiveRange]:
    """Live ranges of every ``nisa.alloc`` in ``func``, in program order."""
    order = ProgramOrder.of(func)
    allocs = [op for op in func.walk() if isinstance(op, AllocOp)]
    return [live_range(a, order) for a in allocs]
