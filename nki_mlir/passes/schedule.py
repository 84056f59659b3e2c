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
function) and, for each dependence edge ``P -> C`` of :func:`.dependence_graph.analyze` with ``P``
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

Cost.  Accesses and placed regions are computed once per op / buffer.  The reorder graph
keeps only closure-preserving edges found through a conflict scoreboard
(:mod:`.reorder`, :mod:`.conflict_index`): O(n log n + edges) per block, same order as the
all-pairs graph.  Straight-line functions (every instruction in the entry block, e.g. a
fully unrolled kernel) get their waits from per-queue scoreboards (:mod:`.straight_waits`)
without building the dependence graph; other functions use :func:`.dependence_graph.analyze`
(all pairs of accesses of one base, or of overlapping placements, with an instruction in a
loop or an ``if``; a scoreboard for the pairs of entry-block instructions) and
:func:`compute_waits` -- quadratic in the instructions of a loop nest, which the tracing
frontend keeps rolled and small.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from ..errors import NKIError
from ..dialects.common import HBM_SPACES, i64_attr, space_of, str_attr
from ..dialects.isa_control import no_reorder_groups
from .dependence import Edge, Node, collect_nodes, node_accesses
from .dependence_graph import analyze
from .output_deps import check_output_dependencies
from .affine import trip_count
from ..dialects.effects import LOOP_OPS, RegionCache, is_instruction
from .straight_waits import is_straight_line, straight_line_waits
from ..dialects.instruction import is_cross_core
from .reorder import is_dma, reorder_block, reorder_function  # noqa: F401 (re-exported)

MODES = ("list", "in-order")
ALIASES = {"program-order": "in-order"}

DMA_LOAD_QUEUES = ("dma0", "dma1")
DMA_STORE_QUEUES = ("dma2", "dma3")


# ------------------------------------------------------------------------------- queues


def engine_queue(op: Operation) -> str:
    """The compute engine queue of a non-DMA instruction."""
    engine = op.properties.get("engine")
    name = engine.data if isinstance(engine, StringAttr) else "unknown"
    if name != "unknown":
        return name
    defn = getattr(op, "DEFINITION", None)  # an instruction definition names its default engine
    return defn.engine.default if defn is not None else "vector"


def writes_hbm(op: Operation, cache: dict | None = None) -> bool:
    return any(a.is_write and space_of(a.box.base) in HBM_SPACES for a in node_accesses(op, cache))


def assign_queues(func: FuncOp, cache: dict | None = None) -> dict[Operation, str]:
    """Every instruction of ``func`` -> its queue (rule in the module docstring);
    ``cache``: see :func:`.dependence.node_accesses`."""
    out: dict[Operation, str] = {}
    loads = stores = 0
    for op in func.walk():
        if not is_instruction(op):
            continue
        if not is_dma(op):
            out[op] = engine_queue(op)
        elif writes_hbm(op, cache):
            out[op] = DMA_STORE_QUEUES[stores % 2]
            stores += 1
        else:
            out[op] = DMA_LOAD_QUEUES[loads % 2]
            loads += 1
    return out


def queue_of(op: Operation) -> str:
    """The queue kind of one instruction (``dma`` for any DMA queue; see assign_queues)."""
    return "dma" if is_dma(op) else engine_queue(op)


# ------------------------------------------------------------------------------- waits


def _innermost_common(a: Node, b: Node) -> Operation | None:
    out = None
    for x, y in zip(a.loops, b.loops):
        if x is not y:
            break
        out = x
    return out


def _directly_in(n: Node, loop: Operation) -> bool:
    return n.op.parent_block() is loop.body.block if loop.name == "scf.for" else False


def _dominates(x: Node, c: Node, memo: dict | None = None) -> bool:
    """``x`` comes before ``c`` and runs at least once in the current execution of a block
    enclosing ``c`` (directly, or inside static ``scf.for`` loops of at least one trip).
    ``memo``: a dict kept across calls -- past the order test the answer depends only on
    the blocks holding ``x`` and ``c`` (the blocks and loops around them), so it is kept
    per pair of blocks (IR unchanged meanwhile)."""
    if x.index >= c.index:
        return False
    if memo is not None:
        cb = c.op.parent_block()
        key = (x.op.parent_block(), cb)
        out = memo.get(key)
        if out is None:
            around = memo.get(cb)           # the blocks enclosing c, once per block
            if around is None:
                around = memo[cb] = _enclosing_blocks(c.op)
            out = memo[key] = _runs_in(x.op, around, memo)
        return out
    return _runs_in(x.op, _enclosing_blocks(c.op), {})


def _enclosing_blocks(op: Operation) -> set[Block]:
    """The blocks enclosing ``op``: the one it is in, and those of the ops around it."""
    out = set()
    node: Operation | None = op
    while node is not None:
        out.add(node.parent_block())
        node = node.parent_op()
    return out


def _runs_in(op: Operation, around: set[Block], memo: dict) -> bool:
    """:func:`_dominates` past the order test: from ``op`` up to a block of ``around`` only
    static ``scf.for`` loops of at least one trip (trip counts kept in ``memo``)."""
    while op.parent_block() not in around:
        op = op.parent_op()
        if op is None or op.name != "scf.for":
            return False
        trips = memo.get(op)
        if trips is None:
            trips = memo[op] = trip_count(op) or 0
        if trips < 1:
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


def _same_queue_kept(ps: list[Node], c: Node, dom) -> list[Node]:
    """The ``ps`` (waits of ``c`` on one queue) that no other of ``ps`` implies
    (:func:`_implies`), in ``ps`` order -- in linear time: ``y`` is implied iff a
    dominating ``x`` (``dom(x)``: :func:`_dominates`) comes after it, or ``y`` comes after
    ``c`` and a dominating ``x`` lies in their innermost common loop, or some ``x`` after
    ``y`` (after ``c``) lies directly in its innermost common loop ``m`` with ``c`` and
    ``m`` encloses ``y`` -- the three cases of :func:`_implies`."""
    ci, last_dom, dom_loops = c.index, -1, set()
    last_in: dict[Operation, int] = {}      # loop m -> latest x after c directly in m
    for x in ps:
        if dom(x):
            last_dom = max(last_dom, x.index)
            dom_loops.update(x.loops)
        elif x.index > ci:
            m = _innermost_common(x, c)
            if m is not None and _directly_in(x, m) and x.index > last_in.get(m, -1):
                last_in[m] = x.index
    out = []
    for y in ps:
        yi = y.index
        if yi < last_dom:
            continue
        if yi > ci:
            m = _innermost_common(y, c)
            if (m is not None and m in dom_loops) or any(yi < last_in.get(l, -1) for l in y.loops):
                continue
        out.append(y)
    return out


def _implied_via(y: Node, x: Node, c: Node, queue: dict[Node, str],
                 waits: dict[Node, set[Node]], dom) -> bool:
    """``deps`` on ``y`` implies ``deps`` on ``x`` (any queues) for consumer ``c``: ``y``'s
    instance that ``c`` waits for itself waited for (or ran after, same queue) the instance
    of ``x`` that ``c`` would wait for.  ``dom``: ``_dominates(., c)``, memoised."""
    if not (queue[x] == queue[y] or x in waits.get(y, ())):
        return False
    if dom(y):
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
                  fence: dict[Node, bool], waits: dict[Node, set[Node]] | None = None,
                  memo: dict | None = None) -> tuple[list[int], list[tuple[int, int, int]]]:
    """The ``deps`` ids and ``deps_carried`` triples of consumer ``c``.  ``waits`` maps every
    instruction to its plain waits before reduction (:func:`raw_waits`); ``memo``: a dict
    shared by the consumers of one function (:func:`_dominates`)."""
    waits = waits if waits is not None else {}
    if fence[c]:
        return [], []
    deps, carried = raw_waits(c, edges, queue, extra, fence)
    memo = memo if memo is not None else {}

    def dom(x: Node) -> bool:
        return _dominates(x, c, memo)
    by_q: dict[str, list[Node]] = defaultdict(list)
    for p in deps:
        by_q[queue[p]].append(p)
    kept: list[Node] = []
    for q, ps in by_q.items():
        kept += _same_queue_kept(ps, c, dom)
    kept = [x for x in kept if not any(y is not x and _implied_via(y, x, c, queue, waits, dom)
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
        if any(dom(x) and loop in x.loops for x in same_q):
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


def _extra_waits(func: FuncOp, nodes: list[Node], mode: str) -> dict[Node, set[Node]]:
    """Waits beyond the dependence edges: the previous instruction of a ``no_reorder`` span,
    and (``in-order``) every instruction that may run right before."""
    by_op = {n.op: n for n in nodes}
    extra: dict[Node, set[Node]] = defaultdict(set)
    groups = no_reorder_groups(func)
    last: dict[Operation, Node] = {}
    for n in nodes:
        g = groups.get(n.op)
        if g is not None:
            if g in last:
                extra[n].add(last[g])
            last[g] = n
    if mode == "in-order":
        for op, ps in possible_predecessors(func).items():
            extra[by_op[op]] |= {by_op[p] for p in ps}
    return extra


def schedule_function(func: FuncOp, mode: str = "list", fast: bool = True) -> list[Edge]:
    """Reorder (``list``) and annotate the instructions of ``func``.  Returns the dependence
    edges, or ``[]`` when straight-line code took the fast path (:mod:`.straight_waits`;
    ``fast=False`` forces the full graph -- same attributes, for cross-checking)."""
    cache: dict = {}                                # op -> accesses, computed once
    check_output_dependencies(func, collect_nodes(func, cache))
    queues = assign_queues(func, cache)
    if mode == "list":
        reorder_function(func, queues, cache)
    nodes = collect_nodes(func, cache)
    queue = {n: queues[n.op] for n in nodes}
    fence = {n: is_cross_core(n.op) for n in nodes}
    extra = _extra_waits(func, nodes, mode)
    if fast and is_straight_line(func, nodes):
        edges: list[Edge] = []
        plain = straight_line_waits(nodes, queue, fence, extra, RegionCache())
        result = {n: (plain[n], []) for n in nodes}
    else:
        graph = analyze(func, nodes, queue)
        edges = graph.edges
        into = graph.into()
        waits = {n: raw_waits(n, into.get(n, []), queue, extra[n], fence)[0] for n in nodes}
        memo: dict = {}
        result = {n: compute_waits(n, into.get(n, []), queue, extra[n], fence, waits, memo)
                  for n in nodes}
    for n in nodes:
        deps, carried = result[n]
        n.op.attributes["nkim.id"] = i64_attr(n.index)
        n.op.attributes["nkim.queue"] = str_attr(queue[n])
        n.op.attributes["nkim.deps"] = ArrayAttr([i64_attr(d) for d in deps])
        if carried:
            n.op.attributes["nkim.deps_carried"] = ArrayAttr(
                [ArrayAttr([i64_attr(v) for v in t]) for t in carried])
        else:
            n.op.attributes.pop("nkim.deps_carried", None)
        if fence[n]:
            n.op.attributes["nkim.fence"] = UnitAttr()
    return edges


@dataclass(frozen=True)
class NisaSchedule(ModulePass):
    """Assign engine queues, reorder (``mode=list``) and make cross-queue waits explicit.
    Options: ``mode=list`` (default) or ``mode=in-order`` (alias ``program-order``)."""

    name = "nisa-schedule"
    mode: str = "list"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        mode = ALIASES.get(self.mode, self.mode)
        if mode not in MODES:
            raise NKIError(f"nisa-schedule: unknown mode '{self.mode}' "
                           f"(expected one of: {', '.join(MODES)})", category="bad option")
        for func in list(op.walk()):
            if isinstance(func, FuncOp):
                schedule_function(func, mode)
        op.attributes["nkim.schedule"] = StringAttr(mode)
