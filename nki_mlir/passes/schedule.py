"""``nisa-schedule{mode=list|in-order}``: engine queues, reordering and cross-queue waits.

docs/backend.md section C, with the dependence edges of :mod:`.dependence`.

Queues (``nkim.queue``).  Compute instructions run on their engine's queue (``tensor``,
``vector``, ``scalar``, ``gpsimd``; an ``unknown`` engine gets the natural engine of the
instruction).  DMA instructions (``nisa.dma_*``) go to four DMA queues by a fixed rule over
the original program order of the function: a *store* (it writes HBM) alternates between
``dma2`` and ``dma3``, every other DMA (a *load*: HBM -> SBUF, on-chip copies) alternates
between ``dma0`` and ``dma1``.  So loads never sit behind stores and two independent loads of
one loop body run on two queues.  One queue executes its instructions in program order.

Reordering (``mode=list``, the default).  Each block (function body, loop body, if branch) is
list-scheduled on its own: the nodes are the block's ops (a nested loop / if is one node with
the union of the accesses inside it); a node may only start after its SSA producers, after
every earlier node it may conflict with in memory in the same iteration (RAW / WAR / WAW on
overlapping boxes, or overlapping placements), after the earlier nodes sharing one of its
queues (so per-queue order and the engines' hidden state -- VectorE accumulators, PRNG --
are unchanged) and after the earlier ``device_print``.  ``nisa.alloc`` / ``nisa.release`` act
as writes of their whole buffer (a tensor's bytes are never claimed before the previous
owner's release).  Fences (below), unknown side-effecting ops and blocks holding a
``no_reorder`` span are never reordered across.  Among ready nodes the one with the longest
weighted path to the end of the block goes first (DMA 4, TensorE 3, others 2, non-instructions
0; ties: original order), which starts DMAs early and overlaps engines.  ``mode=in-order``
(alias ``program-order``) keeps the IR order.

Waits.  After reordering every instruction gets ``nkim.id`` (its pre-order number in the
function) and, for each dependence edge ``P -> C`` of :func:`.dependence.analyze` with ``P``
on another queue (same-queue edges are implied by queue order):

- ``nkim.deps = [P, ...]``: before an instance of ``C`` starts, wait until the MOST RECENT
  instance of ``P`` enqueued before it (program order) has completed (none: no wait).  Used
  for loop-independent edges, and for carried edges of distance 1 whose producer comes later
  in the loop body (its most recent instance is the previous iteration's), and for every
  carried edge of a loop that is not an ``scf.for``.
- ``nkim.deps_carried = [[P, level, d], ...]``: wait for the latest instance of ``P`` whose
  serial of ``C``'s loop at ``level`` (outermost first) is <= the current serial - ``d``.  Used
  for the other carried edges (multi-buffer distance ``k``, a producer earlier in the body).
- ``nkim.fence`` (``core_barrier``, ``sendrecv``): waits for every earlier instance on every
  queue and everything later waits for it; such an instruction has no other waits, and edges
  from it are dropped (implied).

A wait is dropped only when another wait of the same instruction on the same queue implies it
(queue order): ``deps`` on ``Y`` is implied by ``deps`` on ``X`` when ``X`` runs in a block
enclosing ``C`` before ``C`` and ``Y``'s latest instance cannot come after ``X``'s (``Y`` before
``X`` in the text, or after ``C`` and only in loops around ``X``), or when ``X`` and ``Y`` both
come after ``C`` in their innermost common loop ``M`` with ``C``, ``Y`` before ``X`` and ``X``
directly in ``M``'s body; ``deps_carried [P, l, d]`` is dropped when there is ``deps`` on
``P``, or ``deps`` on an ``X`` inside loop ``l`` running in a block enclosing ``C`` before it,
or ``[Q, l, d']`` with ``Q`` directly in loop ``l``'s body and ``d > d'`` or ``d = d'`` and ``P``
before ``Q`` (same queue), or ``[Q, l, d']`` with ``d >= d'``, ``Q`` directly in loop ``l``'s body
and ``Q`` waiting (``deps``) for ``P`` earlier in the body (any queue).  Across queues (cheap
transitive reduction): ``deps`` on ``X`` is dropped when
``deps`` on ``Y`` (``X`` before ``Y`` in the text) is kept and ``Y`` itself waits for ``X``
(``deps``) or runs on ``X``'s queue, and ``Y`` runs in a block enclosing ``C`` before it (``X``
before ``Y``, or after ``C`` with their innermost common loop enclosing ``Y``), or
``X`` and ``Y`` both come after ``C`` in their innermost common loop ``M`` with ``C`` and ``Y`` is
directly in ``M``'s body (the instance of ``Y`` waited for ran after the one of ``X``).

``with nl.no_reorder():`` spans (``nisa.no_reorder_begin`` / ``_end``): their instructions
keep program order across queues too -- each also waits for the span's previous instruction
when that one is on another queue.  ``mode=in-order``: every instruction also waits (``deps``)
for each instruction that may run right before it in program order (loops and ifs followed),
so execution is fully serialised -- the baseline for comparisons.

Before scheduling, :func:`.dependence.check_output_dependencies` rejects writes to one
location from different iterations of an ``affine_range``.  The module gets
``nkim.schedule = "list" | "in-order"``.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
import heapq

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, StringAttr, UnitAttr, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, OpResult
from xdsl.passes import ModulePass
from xdsl.traits import NoMemoryEffect

from ..dialects import nisa
from ..dialects.common import HBM_SPACES, space_of
from ..dialects.isa_control import NoReorderBeginOp, NoReorderEndOp, no_reorder_groups
from .dependence import (Acc, Box, Edge, Node, analyze, check_output_dependencies, node_accesses,
                         same_iteration_overlap)
from .affine import trip_count
from .effects import LOOP_OPS, base_buffer, enclosing_loops, is_instruction, may_alias

MODES = ("list", "in-order")
ALIASES = {"program-order": "in-order"}

#: the engine an instruction runs on when its ``engine`` is ``unknown``
NATURAL_ENGINE = {
    nisa.MatmulOp: "tensor", nisa.NcTransposeOp: "tensor", nisa.ActivationOp: "scalar",
    nisa.IotaOp: "gpsimd", nisa.AffineSelectOp: "gpsimd",
}
#: instructions ordered against everything on every queue
FENCES = ("nisa.core_barrier", "nisa.sendrecv")
DMA_LOAD_QUEUES = ("dma0", "dma1")
DMA_STORE_QUEUES = ("dma2", "dma3")


# ------------------------------------------------------------------------------- queues


def is_dma(op: Operation) -> bool:
    return op.name.startswith("nisa.dma")


def engine_queue(op: Operation) -> str:
    """The compute engine queue of a non-DMA instruction."""
    engine = op.properties.get("engine")
    name = engine.data if isinstance(engine, StringAttr) else "unknown"
    return NATURAL_ENGINE.get(type(op), "vector") if name == "unknown" else name


def writes_hbm(op: Operation) -> bool:
    return any(a.is_write and space_of(a.box.base) in HBM_SPACES for a in node_accesses(op))


def assign_queues(func: FuncOp) -> dict[Operation, str]:
    """Every instruction of ``func`` -> its queue (rule in the module docstring)."""
    out: dict[Operation, str] = {}
    loads = stores = 0
    for op in func.walk():
        if not is_instruction(op):
            continue
        if not is_dma(op):
            out[op] = engine_queue(op)
        elif writes_hbm(op):
            out[op] = DMA_STORE_QUEUES[stores % 2]
            stores += 1
        else:
            out[op] = DMA_LOAD_QUEUES[loads % 2]
            loads += 1
    return out


def queue_of(op: Operation) -> str:
    """The queue kind of one instruction (``dma`` for any DMA queue; see assign_queues)."""
    return "dma" if is_dma(op) else engine_queue(op)


# --------------------------------------------------------------------------- reordering

WEIGHT_DMA, WEIGHT_TENSOR, WEIGHT_OTHER = 4, 3, 2


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


def _pure(op: Operation) -> bool:
    return (op.has_trait(NoMemoryEffect) or op.name.startswith("arith.")
            or op.name in ("memref.subview", "memref.cast", "memref.reinterpret_cast",
                           "memref.collapse_shape", "memref.expand_shape", "memref.transpose",
                           "memref.reshape", "nisa.view_dtype", "nki.view_dtype",
                           "nisa.shared_constant", "builtin.unrealized_conversion_cast"))


def _is_terminator(op: Operation) -> bool:
    from xdsl.traits import IsTerminator
    return op.has_trait(IsTerminator)


def _conflict(a: BlockNode, b: BlockNode, common: list[Operation]) -> bool:
    for x in a.accs:
        for y in b.accs:
            if not (x.is_write or y.is_write):
                continue
            if x.base is y.base:
                if same_iteration_overlap(x.box, y.box, common):
                    return True
            elif may_alias(x.base, y.base):
                return True
    return False


def reorder_block(block: Block, queues: dict[Operation, str]) -> None:
    """List-schedule the ops of one block (see the module docstring)."""
    ops = [op for op in block.ops if not _is_terminator(op)]
    if len(ops) < 2:
        return
    common = list(reversed(enclosing_loops(ops[0])))
    nodes = []
    for i, op in enumerate(ops):
        nodes.append(_describe(op, i, queues))
    owner = {op: n for n in nodes for op in n.op.walk()}
    for j, n in enumerate(nodes):
        for inner in n.op.walk():
            for v in inner.operands:
                src = owner.get(v.op) if isinstance(v, OpResult) else None
                if src is not None and src is not n:
                    n.preds.add(src.index)
        for i in range(j):
            m = nodes[i]
            if (n.barrier or m.barrier or (n.queues & m.queues) or (n.prints and m.prints)
                    or _conflict(m, n, common)):
                n.preds.add(i)
    # longest weighted path to the end of the block
    succs: dict[int, list[int]] = defaultdict(list)
    for n in nodes:
        for p in n.preds:
            succs[p].append(n.index)
    prio = [0] * len(nodes)
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


def _describe(op: Operation, index: int, queues: dict[Operation, str]) -> BlockNode:
    n = BlockNode(op, index)
    for inner in op.walk():
        if is_instruction(inner):
            n.accs += node_accesses(inner)
            n.queues.add(queues[inner])
            n.prints |= inner.name == "nisa.device_print"
            n.barrier |= inner.name in FENCES
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
        elif not (_pure(inner) or _is_terminator(inner)):
            n.barrier = True
    return n


def reorder_function(func: FuncOp, queues: dict[Operation, str]) -> None:
    groups = no_reorder_groups(func)
    blocks = [b for op in func.walk() for r in op.regions for b in r.blocks]
    for block in blocks:
        if any(op in groups or isinstance(op, (NoReorderBeginOp, NoReorderEndOp)) for op in block.ops):
            continue
        reorder_block(block, queues)


# ------------------------------------------------------------------------------- waits


def _block_ancestor(x: Operation, c: Operation) -> bool:
    """Whether ``x``'s block encloses ``c`` (``c`` is in it or nested in one of its ops)."""
    blk = x.parent_block()
    node: Operation | None = c
    while node is not None:
        if node.parent_block() is blk:
            return True
        node = node.parent_op()
    return False


def _innermost_common(a: Node, b: Node) -> Operation | None:
    out = None
    for x, y in zip(a.loops, b.loops):
        if x is not y:
            break
        out = x
    return out


def _directly_in(n: Node, loop: Operation) -> bool:
    return n.op.parent_block() is loop.body.block if loop.name == "scf.for" else False


def _dominates(x: Node, c: Node) -> bool:
    """``x`` comes before ``c`` and runs at least once in the current execution of a block
    enclosing ``c`` (directly, or inside static ``scf.for`` loops of at least one trip)."""
    if x.index >= c.index:
        return False
    op = x.op
    while not _block_ancestor(op, c.op):
        op = op.parent_op()
        if op is None or op.name != "scf.for" or not (trip_count(op) or 0) >= 1:
            return False
    return True


def _implies(x: Node, y: Node, c: Node) -> bool:
    """``deps`` on ``x`` implies ``deps`` on ``y`` (same queue) for consumer ``c``."""
    if _dominates(x, c):
        if y.index < x.index:
            return True
        if y.index > c.index:
            m = _innermost_common(y, c)
            return m is not None and m in x.loops
        return False
    if x.index > c.index and c.index < y.index < x.index:
        m = _innermost_common(x, c)
        return m is not None and _directly_in(x, m) and m in y.loops
    return False


def _encode(edge: Edge) -> tuple:
    p, c = edge.src, edge.dst
    if edge.level is None:
        return ("deps", p)
    loop = c.loops[edge.level]
    if loop.name != "scf.for" or (edge.distance == 1 and p.index > c.index):
        return ("deps", p)
    return ("carried", p, edge.level, edge.distance)


def _implied_via(y: Node, x: Node, c: Node, queue: dict[Node, str],
                 waits: dict[Node, set[Node]]) -> bool:
    """``deps`` on ``y`` implies ``deps`` on ``x`` (any queues) for consumer ``c``: ``y``'s
    instance that ``c`` waits for itself waited for (or ran after, same queue) the instance
    of ``x`` that ``c`` would wait for."""
    if not (queue[x] == queue[y] or x in waits.get(y, ())):
        return False
    if _dominates(y, c):
        if x.index < y.index:
            return True
        if x.index > c.index:           # x's latest instance ran in an earlier iteration
            m = _innermost_common(x, c)
            return m is not None and m in y.loops
        return False
    if x.index >= y.index:
        return False
    if y.index > c.index and x.index > c.index:
        m = _innermost_common(y, c)
        return m is not None and _directly_in(y, m) and m in x.loops
    return False


def raw_waits(c: Node, edges: list[Edge], queue: dict[Node, str], extra: set[Node],
              fence: dict[Node, bool]) -> tuple[set[Node], dict[tuple[Node, int], int]]:
    """Every wait of ``c`` before reduction: plain ``deps`` and ``(P, level) -> distance``."""
    deps: set[Node] = {p for p in extra if queue[p] != queue[c] and not fence[p]}
    carried: dict[tuple[Node, int], int] = {}
    if fence[c]:
        return set(), {}
    for e in edges:
        if queue[e.src] == queue[c] or fence[e.src]:
            continue
        enc = _encode(e)
        if enc[0] == "deps":
            deps.add(enc[1])
        else:
            key = (enc[1], enc[2])
            carried[key] = min(carried.get(key, enc[3]), enc[3])
    return deps, carried


def compute_waits(c: Node, edges: list[Edge], queue: dict[Node, str], extra: set[Node],
                  fence: dict[Node, bool], waits: dict[Node, set[Node]] | None = None
                  ) -> tuple[list[int], list[tuple[int, int, int]]]:
    """The ``deps`` ids and ``deps_carried`` triples of consumer ``c``.  ``waits`` maps every
    instruction to its plain waits before reduction (:func:`raw_waits`)."""
    waits = waits if waits is not None else {}
    if fence[c]:
        return [], []
    deps, carried = raw_waits(c, edges, queue, extra, fence)
    by_q: dict[str, list[Node]] = defaultdict(list)
    for p in deps:
        by_q[queue[p]].append(p)
    kept: list[Node] = []
    for q, ps in by_q.items():
        kept += [y for y in ps if not any(x is not y and _implies(x, y, c) for x in ps)]
    kept = [x for x in kept if not any(y is not x and _implied_via(y, x, c, queue, waits)
                                       for y in kept)]
    kept_q: dict[str, list[Node]] = defaultdict(list)
    for p in kept:
        kept_q[queue[p]].append(p)
    triples = []
    for (p, lvl), d in carried.items():
        if p in deps:
            continue
        loop = c.loops[lvl]
        same_q = kept_q[queue[p]]
        if any(_dominates(x, c) and loop in x.loops for x in same_q):
            continue
        if any(x.index > c.index and _directly_in(x, loop) and (d >= 2 or p.index < x.index)
               and loop in p.loops for x in same_q):
            continue
        if any(q is not p and queue[q] == queue[p] and l2 == lvl and _directly_in(q, loop)
               and (d > d2 or (d == d2 and p.index < q.index))
               for (q, l2), d2 in carried.items() if q not in deps):
            continue
        if any(q is not p and l2 == lvl and _directly_in(q, loop) and d >= d2
               and p.index < q.index and p in waits.get(q, ()) and loop in p.loops
               for (q, l2), d2 in carried.items() if q not in deps):
            continue            # q's instance d2 back waited for p's of the same iteration
        triples.append((p.index, lvl, d))
    return sorted(p.index for p in kept), sorted(triples)


def possible_predecessors(func: FuncOp) -> dict[Operation, set[Operation]]:
    """Instruction -> the instructions that may execute right before it (program order)."""
    preds: dict[Operation, set[Operation]] = defaultdict(set)

    def block(b: Block, state: frozenset) -> frozenset:
        for op in b.ops:
            if is_instruction(op):
                preds[op] |= state
                state = frozenset({op})
            elif op.regions:
                state = region_op(op, state)
        return state

    def region_op(op: Operation, state: frozenset) -> frozenset:
        blocks = [b for r in op.regions for b in r.blocks]
        if op.name in LOOP_OPS:
            entry, end = state, frozenset()
            for _ in range(2):
                s = entry
                for b in blocks:
                    s = block(b, s)
                end = s
                entry = state | end
            return state | end
        if op.name != "scf.if":                 # unknown region op: any region may run
            out = state
            for b in blocks:
                out = out | block(b, out)
            return out
        out = frozenset()
        for r in op.regions:
            out = out | (block(r.blocks[0], state) if r.blocks else state)
        return out | (state if len(op.regions) < 2 else frozenset())

    for r in func.regions:
        for b in r.blocks:
            block(b, frozenset())
    return preds


def schedule_function(func: FuncOp, mode: str = "list") -> list[Edge]:
    """Reorder (``list``) and annotate the instructions of ``func``; returns the edges."""
    check_output_dependencies(func)
    queues = assign_queues(func)
    if mode == "list":
        reorder_function(func, queues)
    graph = analyze(func)
    queue = {n: queues[n.op] for n in graph.nodes}
    fence = {n: n.op.name in FENCES for n in graph.nodes}
    by_op = {n.op: n for n in graph.nodes}
    extra: dict[Node, set[Node]] = defaultdict(set)
    groups = no_reorder_groups(func)
    last: dict[Operation, Node] = {}
    for n in graph.nodes:
        g = groups.get(n.op)
        if g is not None:
            if g in last:
                extra[n].add(last[g])
            last[g] = n
    if mode == "in-order":
        for op, ps in possible_predecessors(func).items():
            extra[by_op[op]] |= {by_op[p] for p in ps}
    into = graph.into()
    waits = {n: raw_waits(n, into.get(n, []), queue, extra[n], fence)[0] for n in graph.nodes}
    for n in graph.nodes:
        deps, carried = compute_waits(n, into.get(n, []), queue, extra[n], fence, waits)
        n.op.attributes["nkim.id"] = IntegerAttr(n.index, i64)
        n.op.attributes["nkim.queue"] = StringAttr(queue[n])
        n.op.attributes["nkim.deps"] = ArrayAttr([IntegerAttr(d, i64) for d in deps])
        if carried:
            n.op.attributes["nkim.deps_carried"] = ArrayAttr(
                [ArrayAttr([IntegerAttr(v, i64) for v in t]) for t in carried])
        else:
            n.op.attributes.pop("nkim.deps_carried", None)
        if fence[n]:
            n.op.attributes["nkim.fence"] = UnitAttr()
    return graph.edges


@dataclass(frozen=True)
class NisaSchedule(ModulePass):
    """Assign engine queues, reorder (``mode=list``) and make cross-queue waits explicit.
    Options: ``mode=list`` (default) or ``mode=in-order`` (alias ``program-order``)."""

    name = "nisa-schedule"
    mode: str = "list"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mode = ALIASES.get(self.mode, self.mode)
        if mode not in MODES:
            raise ValueError(f"nisa-schedule: unknown mode '{self.mode}' "
                             f"(expected one of: {', '.join(MODES)})")
        for func in list(op.walk()):
            if isinstance(func, FuncOp):
                schedule_function(func, mode)
        op.attributes["nkim.schedule"] = StringAttr(mode)
