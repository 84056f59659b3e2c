"""Alloc sinking, the first step of ``nisa-allocate``: each on-chip ``nisa.alloc`` moves down
to just before the first op of its block that uses it.

Why: a tensor is live from its ``nisa.alloc`` to its last use (:mod:`.liveness`), and
``nl.ndarray`` gives an uninitialised tensor, so the bytes it will occupy hold nothing it
needs until its first access.  Kernels often create their tensors well before they first
touch them (an output buffer made before the helper that fills it, a list of tiles made
up front and filled one per loop step); sunk to the first use, such a tensor no longer
reserves memory over the ops in between, where other tensors may use the same bytes.
The interpreter's hazard checks start a tensor's life at its ``nisa.alloc`` too, so the
IR and the checks agree on the shorter range.

Rules:

- it moves past ops that touch memory only: it stops below the last such op before the
  first use (pure ops and other allocs in between keep their place after it), so allocs
  that are already next to their first use stay where they are;
- the alloc stays in its block (so the loops and conditionals around it, and therefore the
  multi-buffering decision of :mod:`.multibuffer`, do not change); the first use is the
  first op of the block that is, or contains, a user of the alloc's result;
- directly placed tensors (``nl.ndarray(address=...)``) are sunk as well: their address
  is theirs, and the shorter range only narrows the span in which another tensor may not
  overlap them;
- ``nisa.release`` (the end of a lifetime in hand-written ``nisa`` IR) is not an access:
  a tensor that is only allocated and released keeps the lifetime its IR states;
- an alloc with an operand (the ``copy`` index of a previous ``nisa-allocate`` run, which
  :func:`.multibuffer.clear_copies` drops first) or without a user is left in place; HBM
  allocs are not placed and are left in place.
"""
from __future__ import annotations

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from ..dialects.common import ON_CHIP, space_of
from ..dialects.nisa import AllocOp, ReleaseOp
from .reorder import is_pure


def ancestor_in(op: Operation, block) -> Operation | None:
    """The op of ``block`` that is ``op`` or contains it (None if ``op`` is outside it)."""
    node: Operation | None = op
    while node is not None and node.parent_block() is not block:
        node = node.parent_op()
    return node


def first_use_in_block(alloc: AllocOp, orders: dict | None = None,
                       order=None) -> Operation | None:
    """The first op of the alloc's block that is or contains a user of its result other
    than ``nisa.release`` (None if there is none).
    ``orders`` caches each block's op positions (moving allocs keeps the order of the
    other ops, and users are never allocs); ``order``: a
    :class:`~.liveness.ProgramOrder` of the function made before any alloc moved,
    whose numbers order the ops of a block as their positions do (then none are made)."""
    block = alloc.parent_block()
    if block is None:
        return None
    firsts = []                 # (repeats: the same op, whose position is the same)
    use = alloc.result.first_use
    while use is not None:      # (alloc.result.uses, read along its links)
        user = use._operation                   # noqa: SLF001
        if not isinstance(user, ReleaseOp):
            first = user if user.parent is block else ancestor_in(user, block)
            if first is not None:
                firsts.append(first)
        use = use._next_use                     # noqa: SLF001
    if not firsts:
        return None
    if len(firsts) == 1:
        return firsts[0]
    if order is not None:
        return min(firsts, key=order.index.__getitem__)
    orders = {} if orders is None else orders
    if block not in orders:
        orders[block] = _positions(block)
    return min(firsts, key=orders[block].__getitem__)


def _positions(block) -> dict[Operation, int]:
    """Each op of ``block`` -> its position (the block read along its op links)."""
    pos, i, op = {}, 0, block._first_op         # noqa: SLF001
    while op is not None:
        pos[op] = i
        i += 1
        op = op._next_op                        # noqa: SLF001
    return pos


def _passive(op: Operation) -> bool:
    """Ops an alloc need not move past: pure ones (constants, index arithmetic, views) and
    other allocs.  Only ops between the alloc and its first use that touch memory make the
    range longer than the tensor's use."""
    return isinstance(op, AllocOp) or (not op.regions and is_pure(op))


def sink_allocs(func: FuncOp, allocs: list[AllocOp] | None = None, order=None) -> int:
    """Move every on-chip alloc of ``func`` (``allocs``: they, in program order, if the caller
    has them; ``order``: the function's :class:`~.liveness.ProgramOrder`, if it has it) just
    before its first use; returns how many moved."""
    moved, orders = 0, {}
    if allocs is None:
        allocs = [op for op in func.walk() if isinstance(op, AllocOp)]
    for alloc in allocs:
        if space_of(alloc.result) not in ON_CHIP or alloc.operands:
            continue
        first = first_use_in_block(alloc, orders, order)
        if first is None:
            continue
        while first.prev_op is not alloc and _passive(first.prev_op):
            first = first.prev_op
        if first.prev_op is alloc or first is alloc:
            continue
        alloc.detach()
        first.parent_block().insert_op_before(alloc, first)
        moved += 1
    return moved
