"""The dependence graph of a function's instructions (docs/backend.md section C).

:func:`analyze` builds the edges :mod:`.dependence` defines (regions, the overlap tests,
:func:`.dependence._pair`); pairs of entry-block instructions come from the scoreboard of
:mod:`.conflict_index`, which itself builds on :mod:`.dependence` (hence a module of its own).
:func:`format_deps` prints the edges (``nki-opt --print-deps``).
"""
from __future__ import annotations

from collections import defaultdict

from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from ..dialects.effects import RegionCache
from .conflict_index import ConflictIndex
from .interval_index import IntervalIndex
from .affine import trip_count
from .dependence import Acc, Edge, Graph, Node, _kind, _pair, collect_nodes, describe


def analyze(func: FuncOp, nodes: list[Node] | None = None,
            queue: dict[Node, str] | None = None, exhaustive: bool = False) -> Graph:
    """The dependence edges between the instructions of ``func`` (program = IR order);
    ``nodes``: :func:`collect_nodes` of ``func`` when already computed.

    Every pair of accesses with at least one instruction *nested* (in a loop or an ``if``)
    inside one entry-block op is tested (:func:`_pair`); such pairs across entry-block ops
    come from a scoreboard of those ops (:func:`_nested_pairs`; ``exhaustive``: test every
    pair, for cross-checks).  Between two instructions directly in the function's entry
    block only loop-independent edges exist; those come from a scoreboard of live accesses
    (:class:`.conflict_index.ConflictIndex`, as the straight-line waits do): an earlier
    access covered by a later whole write gives no edge to the accesses after that write,
    which are ordered after it through the write.  So the edges keep the transitive
    closure of the all-pairs graph at O(n log n + edges) for the straight-line part of a
    kernel instead of O(n^2) pairs (an unrolled kernel whose tiles share one placement
    conflicts all-to-all).  ``queue`` (instruction -> engine queue, from ``nisa-schedule``):
    an entry-block instruction then gets, per queue, only its edge from the LATEST earlier
    entry-block instruction it conflicts with -- the one wait :func:`.schedule.compute_waits`
    keeps of them, every earlier one on that queue being implied by queue order (as in
    :mod:`.straight_waits`) -- so reads that no whole write retires add no edges later."""
    g = Graph(nodes if nodes is not None else collect_nodes(func))
    regions = RegionCache()
    entry = func.body.blocks[0] if func.body.blocks else None
    nested = {n for n in g.nodes if n.op.parent_block() is not entry}
    seen: set[tuple] = set()
    trips: dict[Operation, int | None] = {}     # loop -> static trip count (IR fixed here)

    def add(src, dst, kind, role, level, distance, reason):
        key = (src.index, dst.index, kind, level, reason)
        if key not in seen:
            seen.add(key)
            g.edges.append(Edge(src, dst, kind, role, level, distance, reason))

    if not exhaustive:
        _nested_pairs(g, entry, nested, regions, add, trips)
    else:
        _all_nested_pairs(nested, *_by_base(g.nodes, nested), regions, add, trips)
    _entry_pairs(g, nested, regions, add, queue)
    g.edges.sort(key=lambda e: (e.dst.index, e.src.index, e.level if e.level is not None else -1))
    return g


def _top_ops(g: Graph, entry) -> dict[Node, Operation]:
    """The entry-block op (an instruction, a loop, an ``if``) holding each node."""
    top: dict[Node, Operation] = {}
    for n in g.nodes:
        op = n.op
        while op.parent_block() is not entry and op.parent_op() is not None:
            op = op.parent_op()
        top[n] = op
    return top


def _runs_surely(n: Node, top: Operation, trips: dict) -> bool:
    """``n`` runs whenever its entry-block op does: only ``scf.for`` loops of static trip
    count >= 1 lie between them (no ``if``, no loop that may run no iteration)."""
    op = n.op.parent_op()
    while op is not None and op is not top.parent_op():
        if op.name != "scf.for":
            return False
        if op not in trips:
            trips[op] = trip_count(op)
        if not trips[op]:
            return False
        if op is top:
            return True
        op = op.parent_op()
    return True


def _nested_pairs(g: Graph, entry, nested: set[Node], regions: RegionCache, add, trips) -> None:
    """The pairs with a nested instruction: within one entry-block op every pair of
    accesses of bases that may share bytes (loop-carried edges need them all), and across
    entry-block ops the pairs a scoreboard of those ops reports (:class:`.conflict_index.
    ConflictIndex`, each op one node with the union of its accesses; an access retires
    covered entries only when its instruction surely runs).  Edges between different
    entry-block ops are loop-independent, so as for the entry block itself an earlier
    access covered by a whole write in between reaches later ones through that write:
    the edges keep the closure of the all-pairs graph, whose pair count grew with the
    square of the unrolled iterations (a kernel unrolled over its batches: every batch's
    tiles against every other batch's tiles sharing their placement).
    The scoreboard's entries are sorted by whether their op holds a nested instruction
    (``tags_are_classes``: the same answers, retiring and bounds as without), so an
    entry-block instruction lists only those -- it listed every live entry of the entry
    block, to skip them, on an unrolled kernel most of the time."""
    top = _top_ops(g, entry)
    groups: dict[Operation, list[Node]] = defaultdict(list)
    for n in g.nodes:
        groups[top[n]].append(n)
    for members in groups.values():
        if any(n in nested for n in members):
            _all_nested_pairs(nested, *_by_base(members, nested), regions, add, trips)
    # entries tagged by whether their op holds a nested instruction: an entry-block
    # instruction only lists those (its pairs with entry-block ones are _entry_pairs')
    index = ConflictIndex([], regions, tags_are_classes=True)
    owner: dict[int, Node] = {}
    with_nested = frozenset((True,))
    for t, (op, members) in enumerate(groups.items()):
        accs = [(n, a) for n in members for a in n.accs]
        tested: set[tuple[int, int]] = set()
        for y, ay in accs:
            y_in = y in nested
            aid, abase, role = id(ay), ay.base, ay.role
            kinds = ("WAW", "WAR") if ay.is_write else ("RAW", "WAR")    # _kind(x's, ay)
            for e in index.conflicts([ay], None if y_in else with_nested):
                ea = e.acc
                x = owner[id(ea)]
                if not y_in and x not in nested:
                    continue            # both in the entry block: _entry_pairs
                key = (id(ea), aid)
                if key in tested:
                    continue
                tested.add(key)
                # _pair(x, e.acc, y, ay, ...) with x, y in different entry-block ops: no
                # common loop, so only its loop-independent edge, and for one base the
                # overlap test the scoreboard just passed (the same renaming, no loops)
                add(x, y, kinds[0] if ea.is_write else kinds[1], role, None, None,
                    "data" if ea.base is abase else "alias")
        for n, a in accs:
            owner[id(a)] = n
        sure = [n for n in members if n not in nested or _runs_surely(n, op, trips)]
        retiring = frozenset(id(a) for n in sure for a in n.accs)
        index.add(t, [a for _, a in accs], any(n in nested for n in members), retiring)


def _by_base(nodes, nested: set[Node]) -> tuple[dict, dict, dict]:
    """``(touches, writes, inner)`` of ``nodes``: per base, its ``(node, access)`` pairs, those
    that write, and those of a nested instruction (:func:`_all_nested_pairs`' inputs)."""
    touches: dict[SSAValue, list[tuple[Node, Acc]]] = defaultdict(list)
    writes: dict[SSAValue, list[tuple[Node, Acc]]] = defaultdict(list)
    inner: dict[SSAValue, list[tuple[Node, Acc]]] = defaultdict(list)
    for n in nodes:
        for a in n.accs:
            touches[a.base].append((n, a))
            if a.is_write:
                writes[a.base].append((n, a))
            if n in nested:
                inner[a.base].append((n, a))
    return touches, writes, inner


def _all_nested_pairs(nested: set[Node], touches, writes, inner, regions: RegionCache,
                      add, trips) -> None:
    """Every pair of accesses with a nested instruction (of ``inner``) and an access of
    ``touches`` on a base that may share bytes with it, one of them a write."""
    def order(n: Node, a: Acc) -> tuple[int, int]:
        return n.index, id(a)

    bases = list(touches)
    done: set[tuple[int, int]] = set()
    aliases = _alias_finder(bases, regions)
    for b1 in list(inner):
        for b2 in aliases(b1):
            key = (id(b1), id(b2)) if id(b1) <= id(b2) else (id(b2), id(b1))
            if key in done:
                continue
            done.add(key)
            same = b1 is b2
            # (read-read pairs are never listed: a base read in every unrolled iteration
            # made this the square of its reads)
            pairs = [(x, ax, y, ay) for x, ax in inner[b1]
                     for y, ay in (touches[b2] if ax.is_write else writes.get(b2, ()))]
            if not same:
                pairs += [(x, ax, y, ay) for x, ax in inner.get(b2, ())
                          for y, ay in (touches[b1] if ax.is_write else writes.get(b1, ()))
                          if y not in nested]
            for x, ax, y, ay in pairs:
                if same and y in nested and order(y, ay) < order(x, ax):
                    continue                # both nested: each unordered pair once
                if order(y, ay) < order(x, ax) if same else y.index < x.index:
                    x, ax, y, ay = y, ay, x, ax
                _pair(x, ax, y, ay, same, add, trips)


def _entry_pairs(g: Graph, nested: set[Node], regions: RegionCache, add, queue) -> None:
    """The pairs of entry-block instructions: the scoreboard (see :func:`analyze`)."""
    index = ConflictIndex([], regions, reads_retire_reads=queue is not None)
    for y in g.nodes:
        if y in nested:
            continue
        for ay in y.accs:
            if queue is None:
                found = index.conflicts([ay])
            else:                       # the latest entry per queue (entries are tagged)
                found = index.latest_conflicts(ay).values()
            for e in found:
                x = g.nodes[e.node]
                reason = "data" if e.acc.base is ay.base else "alias"
                add(x, y, _kind(e.acc, ay), ay.role, None, None, reason)
        index.add(y.index, y.accs, None if queue is None else queue[y])


def _alias_finder(bases: list[SSAValue], regions: RegionCache):
    """``aliases(b)``: the bases of ``bases`` that may share bytes with ``b``
    (:meth:`RegionCache.may_alias`), in ``bases`` order -- from an interval index of the
    placements per memory, so the nested pairs cost O(n log n + aliasing pairs), not a
    may_alias test of every nested base against every base (quadratic: a kernel with
    thousands of placed tiles)."""
    pos = {b: i for i, b in enumerate(bases)}
    by_space: dict[str, IntervalIndex] = {}
    for b in bases:
        r = regions.region(b)
        if r is not None and r.size > 0:
            by_space.setdefault(r.space, IntervalIndex()).insert(r.offset, r.offset + r.size - 1, b)

    def aliases(b1: SSAValue) -> list[SSAValue]:
        r1 = regions.region(b1)
        idx = by_space.get(r1.space) if r1 is not None and r1.size > 0 else None
        if idx is None:
            return [b1]
        out = [b2 for b2 in idx.query(r1.offset, r1.offset + r1.size - 1)
               if b2 is not b1 and r1.overlaps(regions.region(b2))]
        out.append(b1)
        out.sort(key=pos.__getitem__)
        return out
    return aliases


def format_deps(func: FuncOp) -> list[str]:
    return [describe(e) for e in analyze(func).edges]

