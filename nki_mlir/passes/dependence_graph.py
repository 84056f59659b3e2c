"""The dependence graph of a function's ``nisa`` instructions (docs/backend.md section C).

:func:`analyze` turns the accesses of :mod:`.dependence` (boxes in their base buffers, the
overlap tests, the edge kinds and reasons described there) into the edges ``nisa-schedule``
orders instructions by: pairs with an instruction in a loop or ``scf.if`` are tested
pairwise, the straight-line part of the entry block goes through the scoreboard of
:mod:`.conflict_index`.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from ..dialects.effects import RegionCache, enclosing_loops, is_instruction
from .affine import trip_count
from .conflict_index import ConflictIndex
from .dependence import (Acc, Edge, Node, _common, _kind, any_iteration_overlap, carried_distance,
                         copies_of, local_loop, node_accesses, same_iteration_overlap)


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def into(self) -> dict[Node, list[Edge]]:
        out: dict[Node, list[Edge]] = defaultdict(list)
        for e in self.edges:
            out[e.dst].append(e)
        return out


def collect_nodes(func: FuncOp, cache: dict | None = None) -> list[Node]:
    """The instructions of ``func`` in pre-order (``cache``: see :func:`node_accesses`)."""
    nodes = []
    for op in func.walk():
        if is_instruction(op):
            nodes.append(Node(op, len(nodes), list(reversed(enclosing_loops(op))), node_accesses(op, cache)))
    return nodes


def analyze(func: FuncOp, nodes: list[Node] | None = None) -> Graph:
    """The dependence edges between the instructions of ``func`` (program = IR order);
    ``nodes``: :func:`collect_nodes` of ``func`` when already computed.

    Every pair of accesses with at least one instruction *nested* (in a loop or an ``if``)
    is tested (:func:`_pair`).  Between two instructions directly in the function's entry
    block only loop-independent edges exist; those come from a scoreboard of live accesses
    (:class:`.conflict_index.ConflictIndex`, as the straight-line waits do): an earlier
    access covered by a later whole write gives no edge to the accesses after that write,
    which are ordered after it through the write.  So the edges keep the transitive
    closure of the all-pairs graph at O(n log n + edges) for the straight-line part of a
    kernel instead of O(n^2) pairs (an unrolled kernel whose tiles share one placement
    conflicts all-to-all)."""
    g = Graph(nodes if nodes is not None else collect_nodes(func))
    regions = RegionCache()
    entry = func.body.blocks[0] if func.body.blocks else None
    nested = {n for n in g.nodes if n.op.parent_block() is not entry}
    touches: dict[SSAValue, list[tuple[Node, Acc]]] = defaultdict(list)
    inner: dict[SSAValue, list[tuple[Node, Acc]]] = defaultdict(list)
    for n in g.nodes:
        for a in n.accs:
            touches[a.base].append((n, a))
            if n in nested:
                inner[a.base].append((n, a))
    seen: set[tuple] = set()
    trips: dict[Operation, int | None] = {}     # loop -> static trip count (IR fixed here)

    def add(src, dst, kind, role, level, distance, reason):
        key = (src.index, dst.index, kind, level, reason)
        if key not in seen:
            seen.add(key)
            g.edges.append(Edge(src, dst, kind, role, level, distance, reason))

    def order(n: Node, a: Acc) -> tuple[int, int]:
        return n.index, id(a)

    # pairs with a nested instruction: every base with a nested access against every base
    # it may share bytes with
    bases = list(touches)
    done: set[tuple[int, int]] = set()
    for b1 in list(inner):
        for b2 in bases:
            key = (id(b1), id(b2)) if id(b1) <= id(b2) else (id(b2), id(b1))
            if key in done or not regions.may_alias(b1, b2):
                continue
            done.add(key)
            same = b1 is b2
            pairs = [(x, ax, y, ay) for x, ax in inner[b1] for y, ay in touches[b2]]
            if not same:
                pairs += [(x, ax, y, ay) for x, ax in inner.get(b2, ()) for y, ay in touches[b1]
                          if y not in nested]
            for x, ax, y, ay in pairs:
                if not (ax.is_write or ay.is_write):
                    continue
                if same and y in nested and order(y, ay) < order(x, ax):
                    continue                # both nested: each unordered pair once
                if order(y, ay) < order(x, ax) if same else y.index < x.index:
                    x, ax, y, ay = y, ay, x, ax
                _pair(x, ax, y, ay, same, add, trips)
    # pairs of entry-block instructions: the scoreboard
    index = ConflictIndex([], regions)
    for y in g.nodes:
        if y in nested:
            continue
        for ay in y.accs:
            for e in index.conflicts([ay]):
                x = g.nodes[e.node]
                reason = "data" if e.acc.base is ay.base else "alias"
                add(x, y, _kind(e.acc, ay), ay.role, None, None, reason)
        index.add(y.index, y.accs)
    g.edges.sort(key=lambda e: (e.dst.index, e.src.index, e.level if e.level is not None else -1))
    return g


def occurs(common: list[Operation], level: int, distance: int, across_outer: bool,
           trips: dict | None = None) -> bool:
    """Whether two instances ``distance`` iterations apart at ``common[level]`` can both run:
    the distance is below the loop's static trip count (``across_outer``: below the number of
    iterations it runs over the whole function, i.e. the serial distance of rotating copies).
    Unknown trip counts count as possible.  ``trips``: a memo ``loop -> trip count`` valid
    while the IR does not change (one :func:`analyze` call)."""
    total = 1
    for loop in (common[:level + 1] if across_outer else common[level:level + 1]):
        if trips is not None and loop in trips:
            n = trips[loop]
        else:
            n = trip_count(loop) if loop.name == "scf.for" else None
            if trips is not None:
                trips[loop] = n
        if n is None:
            return True
        total *= n
    return distance < total


def _pair(x: Node, ax: Acc, y: Node, ay: Acc, same: bool, add_edge, trips: dict | None = None) -> None:
    """Edges between access ``ax`` of ``x`` and ``ay`` of ``y`` (``x`` not after ``y``).
    A carried edge whose distance the loop never reaches is not an edge (:func:`occurs`;
    ``trips``: its memo of trip counts)."""
    common = _common(x, y)

    def add(src, dst, kind, role, level, distance, reason):
        if level is None or occurs(common, level, distance, reason == "copies", trips):
            add_edge(src, dst, kind, role, level, distance, reason)

    if not same:
        if x is not y:
            add(x, y, _kind(ax, ay), ay.role, None, None, "alias")
        for lvl in range(len(common)):
            add(y, x, _kind(ay, ax), ax.role, lvl, 1, "alias")
        return
    local = local_loop(ax.base)
    local_level = common.index(local) if local is not None and local in common else None
    if x is not y and same_iteration_overlap(ax.box, ay.box, common):
        add(x, y, _kind(ax, ay), ay.role, None, None, "data")
    for lvl in range(len(common)):
        if local_level is not None and lvl <= local_level:
            continue
        d = carried_distance(ax.box, ay.box, common, lvl)
        if d is not None:
            add(x, y, _kind(ax, ay), ay.role, lvl, d, "data")
        d = carried_distance(ay.box, ax.box, common, lvl)
        if d is not None and not (x is y and ax is ay):
            add(y, x, _kind(ay, ax), ax.role, lvl, d, "data")
    if local_level is not None and any_iteration_overlap(ax.box, ay.box):
        k = copies_of(ax.base)
        add(x, y, _kind(ax, ay), ay.role, local_level, k, "copies")
        if not (x is y and ax is ay):
            add(y, x, _kind(ay, ax), ax.role, local_level, k, "copies")
