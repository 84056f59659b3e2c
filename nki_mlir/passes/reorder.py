"""List reordering of one block for ``nisa-schedule{mode=list}`` (rules: :mod:`.schedule`).

A node is one op of the block (a nested loop / if is one node with the union of the
accesses inside it).  Node ``j`` must follow node ``i < j`` when ``j`` uses a result of
``i``, either is a barrier, they share a queue, both print, or they conflict in memory.
The list schedule (ready node with the longest weighted path to the end first, ties in
original order) depends only on the TRANSITIVE CLOSURE of that relation -- readiness is
"every ancestor scheduled" and, weights being >= 0, the longest path is the same over any
graph with the same closure -- so each node gets only enough edges to keep the closure:

- queues / prints: the previous node on each of its queues, the previous printing node;
- barriers: the previous barrier, and a barrier follows every node since the previous one;
- memory: the entries of a :class:`.conflict_index.ConflictIndex` it conflicts with (a
  whole write retires the earlier accesses it covers, which reach later nodes through it).

So building the graph costs O(n log n + edges) instead of O(n^2) pair tests, and the order
is the one the all-pairs graph gives.
"""
from __future__ import annotations

from dataclasses import dataclass, field
import heapq

from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, OpResult
from xdsl.traits import IsTerminator, NoMemoryEffect

from ..dialects import nisa
from ..dialects.isa_control import NoReorderBeginOp, NoReorderEndOp, no_reorder_groups
from .conflict_index import ConflictIndex
from .dependence import Acc, Box, node_accesses
from ..dialects.instruction import is_cross_core
from ..dialects.effects import LOOP_OPS, RegionCache, base_buffer, enclosing_loops, is_instruction

WEIGHT_DMA, WEIGHT_TENSOR, WEIGHT_OTHER = 4, 3, 2


def is_dma(op: Operation) -> bool:
    return op.name.startswith("nisa.dma")


@dataclass(eq=False)
class BlockNode:
    op: Operation
    index: int
    accs: list[Acc] = field(default_factory=list)
    queues: set[str] = field(default_factory=set)
    prints: bool = False
    barrier: bool = False
    weight: int = 0
    preds: set[int] = field(default_factory=set)


def is_pure(op: Operation) -> bool:
    """No memory effect: constants, index arithmetic, views and casts (an op the
    schedule and alloc sinking may move ops across)."""
    return (op.has_trait(NoMemoryEffect) or op.name.startswith("arith.")
            or op.name in ("memref.subview", "memref.cast", "memref.reinterpret_cast",
                           "memref.collapse_shape", "memref.expand_shape", "memref.transpose",
                           "memref.reshape", "nisa.view_dtype", "nki.view_dtype",
                           "nisa.shared_constant", "builtin.unrealized_conversion_cast"))


def _is_terminator(op: Operation) -> bool:
    return op.has_trait(IsTerminator)


def _describe(op: Operation, index: int, queues: dict[Operation, str], cache: dict | None = None) -> BlockNode:
    n = BlockNode(op, index)
    for inner in op.walk():
        if is_instruction(inner):
            n.accs += node_accesses(inner, cache)
            n.queues.add(queues[inner])
            n.prints |= inner.name == "nisa.device_print"
            n.barrier |= is_cross_core(inner)
            n.weight += (WEIGHT_DMA if is_dma(inner) else
                         WEIGHT_TENSOR if queues[inner] == "tensor" else WEIGHT_OTHER)
        elif isinstance(inner, nisa.AllocOp):
            n.accs.append(Acc("alloc", Box(inner.result, None), True))
        elif isinstance(inner, nisa.ReleaseOp):
            n.accs.append(Acc("release", Box(base_buffer(inner.memref), None), True))
        elif isinstance(inner, (NoReorderBeginOp, NoReorderEndOp)):
            n.barrier = True
        elif inner.regions:
            n.barrier |= inner.name not in (*LOOP_OPS, "scf.if", "scf.index_switch")
        elif not (is_pure(inner) or _is_terminator(inner)):
            n.barrier = True
    return n


def _add_order_edges(nodes: list[BlockNode], common: list[Operation], regions: RegionCache) -> None:
    """``preds`` of every node: SSA producers plus a closure-preserving subset of the
    ordering edges (module docstring)."""
    owner = {op: n for n in nodes for op in n.op.walk()}
    last_on: dict[str, int] = {}
    last_print: int | None = None
    last_barrier: int | None = None
    since_barrier: list[int] = []
    index = ConflictIndex(common, regions)
    for n in nodes:
        j = n.index
        for inner in n.op.walk():
            for v in inner.operands:
                src = owner.get(v.op) if isinstance(v, OpResult) else None
                if src is not None and src is not n:
                    n.preds.add(src.index)
        if n.barrier:
            n.preds.update(since_barrier)
        if last_barrier is not None:
            n.preds.add(last_barrier)
        for q in n.queues:
            if q in last_on:
                n.preds.add(last_on[q])
            last_on[q] = j
        if n.prints:
            if last_print is not None:
                n.preds.add(last_print)
            last_print = j
        n.preds.update(e.node for e in index.conflicts(n.accs))
        n.preds.discard(j)
        index.add(j, n.accs)
        if n.barrier:
            last_barrier, since_barrier = j, []
        else:
            since_barrier.append(j)


def reorder_block(block: Block, queues: dict[Operation, str], regions: RegionCache | None = None,
                  cache: dict | None = None) -> None:
    """List-schedule the ops of one block (see :mod:`.schedule`); ``regions`` / ``cache``:
    placed regions and per-op accesses shared by the blocks of one function."""
    ops = [op for op in block.ops if not _is_terminator(op)]
    if len(ops) < 2:
        return
    common = list(reversed(enclosing_loops(ops[0])))
    nodes = [_describe(op, i, queues, cache) for i, op in enumerate(ops)]
    _add_order_edges(nodes, common, regions if regions is not None else RegionCache())
    succs: list[list[int]] = [[] for _ in nodes]
    for n in nodes:
        for p in n.preds:
            succs[p].append(n.index)
    prio = [0] * len(nodes)        # longest weighted path to the end of the block
    for n in reversed(nodes):
        prio[n.index] = n.weight + max((prio[s] for s in succs[n.index]), default=0)
    waiting = [len(n.preds) for n in nodes]
    ready = [(-prio[n.index], n.index) for n in nodes if not n.preds]
    heapq.heapify(ready)
    order = []
    while ready:
        _, i = heapq.heappop(ready)
        order.append(i)
        for s in succs[i]:
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(ready, (-prio[s], s))
    assert len(order) == len(nodes), "nisa-schedule: cyclic block dependences"
    if order == sorted(order):
        return
    term = block.last_op if block.last_op is not None and _is_terminator(block.last_op) else None
    for i in order:
        op = nodes[i].op
        block.detach_op(op)
        if term is not None:
            block.insert_op_before(op, term)
        else:
            block.add_op(op)


def reorder_function(func: FuncOp, queues: dict[Operation, str], cache: dict | None = None) -> None:
    """Reorder every block of ``func`` except those holding a ``no_reorder`` span."""
    groups = no_reorder_groups(func)
    regions = RegionCache()
    blocks = [b for op in func.walk() for r in op.regions for b in r.blocks]
    for block in blocks:
        if any(op in groups or isinstance(op, (NoReorderBeginOp, NoReorderEndOp)) for op in block.ops):
            continue
        reorder_block(block, queues, regions, cache)
