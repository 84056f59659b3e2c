"""Which tensor :mod:`.spill` spills at an SBUF overflow of ``nisa-allocate`` (the rule is in
:mod:`.spill`'s docstring, "How chosen")."""
from __future__ import annotations

from xdsl.dialects.func import FuncOp

from ..dialects.common import space_of
from ..dialects.nisa import AllocOp, DmaCopyOp
from .liveness import ProgramOrder
from .spill import Plan, Segment, plan


def savings(p: Plan, size: int, start: int, end: int) -> tuple[int, int]:
    """``(distance, bytes)`` of spilling ``p``'s tensor (``size`` bytes per partition now)
    while a tensor live over program points ``[start, end]`` fails: the distance from
    ``start`` to the tensor's next use (a large number if none comes later in program order;
    0 if a segment is live then) and the bytes per partition freed over that range."""
    during = [s.size for s in p.segments if s.first <= end and start <= s.last
              and not _tileless(p, s)]
    later = [s.first for s in p.segments if s.first > start]
    distance = 0 if during else (min(later) - start if later else 1 << 40)
    return distance, size - max(during, default=0)


def _tileless(p: Plan, s: Segment) -> bool:
    """Whether the segment needs no tile: the copy a reload from the input replaces, or one
    DMA between HBM and the tensor (forwarded to the HBM tensor)."""
    if len(s.uses) != 1:
        return False
    op = s.uses[0].op
    if op is p.remat or (p.source is not None and op is p.source.writer):
        return True
    u = s.uses[0]
    return isinstance(op, DmaCopyOp) and len(u.operands) == 1 and \
        (s.sliced or op.operands[u.operands[0]] is p.alloc.result) and \
        space_of(op.operands[1 - u.operands[0]]) in ("hbm", "private_hbm", "shared_hbm")


def choose(failed, live, func: FuncOp) -> AllocOp | None:
    """The tensor to spill at an overflow (module docstring): ``failed`` found no room while
    the tensors ``live`` (allocator ``Tensor`` s) were live with it."""
    order = ProgramOrder.of(func)
    best, best_key = None, None
    start, end = failed.base.start, failed.base.end
    for t in [failed, *live]:
        if t.space != "sbuf" or t.pinned:
            continue
        p = plan(t.op, func, order)
        if p is None:
            continue
        distance, saved = savings(p, t.size, start, end)
        if saved <= 0:
            continue
        key = (-distance, -saved, t.base.start)
        if best_key is None or key < best_key:
            best, best_key = t.op, key
    return best
