"""The waits of straight-line code without the all-pairs dependence graph (nisa-schedule).

When every instruction of a function sits directly in its entry block (no loop, no if --
typically a fully unrolled kernel), :func:`.schedule.compute_waits` reduces to this: for a
consumer ``c`` (not a fence), on every other queue ``q`` keep only the LATEST instruction
before ``c`` that conflicts with ``c`` in memory or is an extra predecessor of ``c``
(no-reorder span, in-order mode) -- every earlier one is implied by queue order -- and then
drop a kept ``x`` when a later kept ``y`` (another queue) itself waits for ``x`` before
reduction (``x`` is not a fence, conflicts with ``y`` or is an extra predecessor of it).
There are no carried waits.  Fences wait for nothing and are nobody's wait.

The latest conflicting instruction per queue comes from one query of one
:class:`.conflict_index.ConflictIndex` whose entries are tagged with their queue (with
``reads_retire_reads``: a whole access retires the earlier same-queue accesses it covers,
which never changes the latest conflicting one), so the cost is O(n log n + candidates)
instead of O(n^2) edges -- an
unrolled kernel whose tiles share one placement conflicts all-to-all.  The result orders the
instructions as :func:`.schedule.compute_waits` does on the full graph of
:func:`.dependence_graph.analyze`: every wait of the full graph is one of these waits or implied
by them and queue order.  The lists themselves can differ: on some kernels the fast path leaves
out a wait that its other waits and queue order already imply (test_compile_scaling.py compares
the transitive waits).
"""
from __future__ import annotations

from xdsl.dialects.func import FuncOp

from .conflict_index import ConflictIndex
from .dependence import Node, same_iteration_overlap
from ..dialects.effects import RegionCache


def is_straight_line(func: FuncOp, nodes: list[Node]) -> bool:
    """Every instruction of ``func`` is directly in its entry block."""
    entry = func.body.blocks[0] if func.body.blocks else None
    return all(n.op.parent_block() is entry for n in nodes)


def conflict(x: Node, y: Node, regions: RegionCache) -> bool:
    """Two different instructions of straight-line code touch a common byte, one writing
    (the loop-independent ``data`` / ``alias`` edges of :func:`.dependence_graph.analyze`)."""
    for ax in x.accs:
        for ay in y.accs:
            if not (ax.is_write or ay.is_write):
                continue
            if ax.base is ay.base:
                if same_iteration_overlap(ax.box, ay.box, []):
                    return True
            elif regions.may_alias(ax.base, ay.base):
                return True
    return False


def straight_line_waits(nodes: list[Node], queue: dict[Node, str], fence: dict[Node, bool],
                        extra: dict[Node, set[Node]], regions: RegionCache) -> dict[Node, list[int]]:
    """``nkim.deps`` (sorted instruction ids) of every instruction of straight-line code.

    Args:
        nodes: the instructions in program order (``Node.index`` = position).
        queue / fence: per instruction, its queue and whether it is a fence.
        extra: per instruction, more predecessors to wait for (no-reorder, in-order).
        regions: placed regions of the function's buffers.
    """
    index = ConflictIndex([], regions, reads_retire_reads=True)   # entries tagged by queue
    out: dict[Node, list[int]] = {}

    def raw_dep(x: Node, y: Node) -> bool:         # x in the unreduced waits of y
        if fence[x] or fence[y] or queue[x] == queue[y]:
            return False
        return x in extra.get(y, ()) or (x.index < y.index and conflict(x, y, regions))

    for c in nodes:
        if fence[c]:
            out[c] = []
            continue
        own = queue[c]
        best: dict[str, int] = {}                   # queue -> latest conflicting instruction
        for e in index.conflicts(c.accs):
            if e.tag != own and e.node > best.get(e.tag, -1):
                best[e.tag] = e.node
        for p in extra.get(c, ()):
            if queue[p] != queue[c] and not fence[p]:
                best[queue[p]] = max(best.get(queue[p], -1), p.index)
        kept = [nodes[i] for i in best.values()]
        kept = [x for x in kept if not any(y is not x and x.index < y.index and raw_dep(x, y)
                                           for y in kept)]
        out[c] = sorted(x.index for x in kept)
        index.add(c.index, c.accs, own)
    return out
