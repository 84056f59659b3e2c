"""Live ranges of ``nisa.alloc`` buffers over the loop structure of a function.

Ops are numbered in program pre-order (an op gets its number before the ops of its
regions).  A buffer is live from its ``nisa.alloc`` (which ``nisa-allocate`` first sinks
to just before the buffer's first use, :mod:`.alloc_sinking`) to its last use, where

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

Multi-buffering: :attr:`LiveRange.copies` is the number of rotating copies a placement
reserves (1 from :func:`live_range`).  ``nisa-allocate`` gives a tensor allocated in an
``affine_range`` body ``k`` copies with :meth:`LiveRange.rotated`, which also widens the
range to the whole loop (:attr:`LiveRange.body`): while iterations overlap, the copy of
iteration ``i`` may still be read while iteration ``i+1`` runs the part of the body
before the alloc, so no other tensor of the loop may take those bytes.  The allocator
multiplies the footprint by ``copies`` (see :mod:`.multibuffer`).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from ..dialects.nisa import AllocOp
from ..dialects.effects import LOOP_OPS, VIEW_OPS, enclosing_loops


@dataclass
class LiveRange:
    """The program points (pre-order numbers, inclusive) during which a buffer is live.

    Attributes:
        alloc: the ``nisa.alloc`` op.
        start: its own number.
        end: the number of its last use, extended over loops as described above.
        loop: the innermost loop whose body holds the alloc (None at function level).
        copies: placements rotated across iterations (1 unless multi-buffered).
        body: the numbers ``(first, last)`` spanned by ``loop`` (None at function level).
    """

    alloc: AllocOp
    start: int
    end: int
    loop: Operation | None = None
    copies: int = 1
    body: tuple[int, int] | None = None

    def overlaps(self, other: LiveRange) -> bool:
        return self.start <= other.end and other.start <= self.end

    def rotated(self, copies: int) -> LiveRange:
        """This range with ``copies`` rotating copies: ``copies > 1`` makes it live over the
        whole innermost loop (see the module docstring); ``copies == 1`` is the plain range."""
        if copies <= 1 or self.body is None:
            return replace(self, copies=1)
        return replace(self, copies=copies, start=min(self.start, self.body[0]),
                       end=max(self.end, self.body[1]))


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
        """Number ``op`` and the ops inside it (an op without regions is numbered in place,
        its block read along its ops' links: no call per op)."""
        index, last = self.index, self.last
        index[op] = len(index)
        for region in op.regions:
            for block in region.blocks:
                child = block._first_op                 # noqa: SLF001
                while child is not None:
                    if child.regions:
                        self._number(child)
                    else:
                        last[child] = index[child] = len(index)
                    child = child._next_op              # noqa: SLF001
        last[op] = len(index) - 1
        return last[op]


def users_through_views(value: SSAValue) -> list[Operation]:
    """Every op using ``value`` directly or through a chain of view ops (views included)."""
    found: list[Operation] = []
    work = [value]
    while work:
        v = work.pop()
        use = v.first_use
        while use is not None:          # (v.uses, read along its links)
            user = use._operation       # noqa: SLF001
            found.append(user)
            if user.name in VIEW_OPS:   # (is_view)
                work.extend(user.results)
            use = use._next_use         # noqa: SLF001
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
    index = order.index
    start = index[alloc]
    owner = alloc.parent_op()
    block = alloc.parent
    end = start
    for user in users_through_views(alloc.result):
        if user.parent is block:        # no loop between (the common case, asked directly)
            n = index[user]
        else:
            loop = outermost_loop_between(user, owner) if owner is not None else None
            n = order.last[loop] if loop is not None else index[user]
        if n > end:
            end = n
    loops = enclosing_loops(alloc)
    if not loops:
        return LiveRange(alloc, start, end)
    loop = loops[0]
    return LiveRange(alloc, start, end, loop, body=(order.index[loop], order.last[loop]))


def live_ranges(func: FuncOp, order: ProgramOrder | None = None) -> list[LiveRange]:
    """Live ranges of every ``nisa.alloc`` in ``func``, in program order (``order``: the
    function's numbering, if the caller has it)."""
    order = ProgramOrder.of(func) if order is None else order
    allocs = [op for op in order.index if isinstance(op, AllocOp)]     # (numbered in order)
    return [live_range(a, order) for a in allocs]
