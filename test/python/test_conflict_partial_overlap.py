"""The conflict scoreboard (passes/conflict_index.py) on tiles the allocator placed on PARTLY
overlapping bytes: no later whole write covers an earlier tile's region, so its entries stay
live, and every access of a neighbour conflicts with all of them (placement overlap).

- the edges still keep the transitive closure of the all-pairs edges: the reorder graph, the
  entry-block edges of the dependence graph, and the nested pairs against ``exhaustive``;
- the straight-line waits still equal the waits of the full dependence graph;
- the entries listed stay linear in the accesses (they grew with their square: each column
  write of tile k listed every read and write of tile k-1);
- a write that may not run (a loop without iterations) does not stand in for the entries
  it met: a later read of its tile keeps its edges from the neighbour's reads.
"""
from __future__ import annotations

from collections import defaultdict

import pytest
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser

from nki_mlir import compiler
from nki_mlir.dialects import make_context
from nki_mlir.dialects.effects import RegionCache
from nki_mlir.passes import conflict_index, dependence, reorder, schedule
from nki_mlir.passes.dependence_graph import analyze
from nki_mlir.passes.straight_waits import conflict

HBM = "#nisa.mem<shared_hbm>"
SB = "#nisa.mem<sbuf>"
T = f"memref<128x64xf32, {SB}>"


def overlap_program(tiles: int, ops: int, write_trips: int | None = None,
                    nested: bool = False) -> str:
    """Tile ``k`` (128 x 64 f32: 256 bytes a partition) placed at byte ``128 * k``: it shares
    half its bytes with tile ``k - 1`` and half with ``k + 1``.  It is written whole from
    ``in`` (in the entry block, or in a loop of ``write_trips`` iterations), then ``ops``
    times alternately one column rewritten in place by the vector engine and that column
    read by a DMA to its own slice of ``out`` (each in a one-trip loop with ``nested``).
    Nothing retires the reads of tile k-1 (no later whole write covers its bytes), and each
    column write of tile k conflicts with every one of them."""
    rows, body = 128 * tiles * ops, []
    for k in range(tiles):
        src = f"memref<128x64xf32, strided<[64, 1], offset: {128 * 64 * k}>, {HBM}>"
        body.append(f"""  %t{k} = nisa.alloc {{nkim.partition = 0 : i64, nkim.offset = {128 * k} : i64}} : {T}
  %i{k} = memref.subview %in[{128 * k}, 0] [128, 64] [1, 1] : memref<{128 * tiles}x64xf32, {HBM}> to {src}""")
        write = f"nisa.dma_copy(dst={T} %t{k}, src={src} %i{k}) engine=dma loc(\"k.py\":{k}:1)"
        body.append(f"  {write}" if write_trips is None else
                    f"  scf.for %w{k} = %c0 to %c{write_trips} step %c1 {{\n    {write}\n  }}")
        for r in range(ops):
            j = k * ops + r
            if r % 2 == 0:
                col = f"memref<128x1xf32, strided<[64, 1], offset: {r}>, {SB}>"
                body.append(f"  %p{j} = memref.subview %t{k}[0, {r}] [128, 1] [1, 1] : {T} to {col}")
                op = (f"nisa.tensor_scalar_arith(dst={col} %p{j}, src={col} %p{j}, operand0=f32 %one, "
                      f"op0=multiply) engine=vector loc(\"k.py\":{k}:{r + 2})")
            else:
                col = f"memref<128x1xf32, strided<[64, 1], offset: {r - 1}>, {SB}>"
                dst = f"memref<128x1xf32, strided<[1, 1], offset: {128 * j}>, {HBM}>"
                body.append(f"  %o{j} = memref.subview %out[{128 * j}, 0] [128, 1] [1, 1] : "
                            f"memref<{rows}x1xf32, {HBM}> to {dst}")
                op = f"nisa.dma_copy(dst={dst} %o{j}, src={col} %p{j - 1}) engine=dma loc(\"k.py\":{k}:{r + 2})"
            body.append(f"  scf.for %r{j} = %c0 to %c1 step %c1 {{\n    {op}\n  }}" if nested else f"  {op}")
    return f"""func.func @f(%in: memref<{128 * tiles}x64xf32, {HBM}>, %out: memref<{rows}x1xf32, {HBM}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
{chr(10).join(body)}
  func.return
}}"""


def func_of(text: str) -> FuncOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return next(op for op in module.walk() if isinstance(op, FuncOp))


def _conflicting(nodes, regions) -> set[tuple[int, int]]:
    return {(x.index, y.index) for i, x in enumerate(nodes) for y in nodes[i + 1:]
            if conflict(x, y, regions)}


def _reach(succ: dict[int, set[int]], n: int) -> list[set[int]]:
    out = [set() for _ in range(n)]
    for s in reversed(range(n)):        # edges go forward in program order
        for d in succ.get(s, ()):
            out[s] |= {d} | out[d]
    return out


@pytest.fixture
def count_listed(monkeypatch):
    """Entries listed by every ConflictIndex.conflicts call, per ``reads_retire_reads``."""
    listed: dict[bool, int] = defaultdict(int)
    real = conflict_index.ConflictIndex.conflicts

    def counting(self, accs, only=None):
        out = real(self, accs, only)
        listed[self.reads_retire_reads] += len(out)
        return out
    monkeypatch.setattr(conflict_index.ConflictIndex, "conflicts", counting)
    return listed


def test_entry_block_edges_order_every_conflicting_pair():
    f = func_of(overlap_program(6, 6))
    g = analyze(f)
    regions = RegionCache()
    pairs = _conflicting(g.nodes, regions)
    assert len(pairs) > 6 * 3 * 3          # column writes of tile k, reads of tile k-1
    succ: dict[int, set[int]] = defaultdict(set)
    for e in g.edges:
        assert e.level is None and e.src.index < e.dst.index
        succ[e.src.index].add(e.dst.index)
    reach = _reach(succ, len(g.nodes))
    assert not [(x, y) for x, y in pairs if y not in reach[x]]


def test_reorder_graph_has_the_all_pairs_closure():
    f = func_of(overlap_program(6, 6))
    queues = schedule.assign_queues(f)
    ops = [op for op in f.body.blocks[0].ops if not reorder._is_terminator(op)]
    regions = RegionCache()
    fast = [reorder._describe(op, i, queues) for i, op in enumerate(ops)]
    reorder._add_order_edges(fast, [], regions)
    ref = [reorder._describe(op, i, queues) for i, op in enumerate(ops)]
    succ_fast: dict[int, set[int]] = defaultdict(set)
    for n in fast:
        for p in n.preds:
            assert p < n.index
            succ_fast[p].add(n.index)
    reach = _reach(succ_fast, len(fast))
    owner = {op: n for n in ref for op in n.op.walk()}
    want = set()
    for j, n in enumerate(ref):          # the rule of nisa-schedule, every pair tested
        want |= {(owner[v.op].index, j) for inner in n.op.walk() for v in inner.operands
                 if hasattr(v, "op") and v.op in owner and owner[v.op] is not n}
        want |= {(i, j) for i, m in enumerate(ref[:j])
                 if n.barrier or m.barrier or (n.queues & m.queues) or any(
                     (x.is_write or y.is_write) and (
                         dependence.same_iteration_overlap(x.box, y.box, []) if x.base is y.base
                         else regions.may_alias(x.base, y.base)) for x in m.accs for y in n.accs)}
    assert not [(i, j) for i, j in want if j not in reach[i]]


def test_nested_pairs_keep_the_closure_of_exhaustive():
    f = func_of(overlap_program(5, 4, write_trips=1, nested=True))
    fast, full = analyze(f), analyze(f, exhaustive=True)
    indep = lambda g: {(e.src.index, e.dst.index) for e in g.edges if e.level is None}  # noqa: E731
    assert indep(fast) <= indep(full) and len(indep(fast)) < len(indep(full))
    succ: dict[int, set[int]] = defaultdict(set)
    for s, d in indep(fast):
        succ[s].add(d)
    reach = _reach(succ, len(fast.nodes))
    assert not [(s, d) for s, d in indep(full) if d not in reach[s]]


def test_a_write_that_may_not_run_stands_in_for_nothing():
    """Tile 1's whole write sits in a loop: with one iteration the column writes of tile 1
    are ordered after tile 0's reads through it; with none (it may not run) they keep their
    own edges from those reads."""
    def indep(trips):
        g = analyze(func_of(overlap_program(2, 4, write_trips=trips, nested=True)))
        return {(e.src.index, e.dst.index) for e in g.edges if e.level is None}
    # instructions: 0 write t0, 1 column t0, 2 read t0, 3 column t0, 4 read t0,
    #               5 write t1 (in the loop), 6 column t1, 7 read t1, 8 column t1, 9 read t1
    sure, maybe = indep(1), indep(0)
    assert {(2, 5), (4, 5), (5, 6), (5, 8)} <= sure
    assert not {(2, 6), (4, 6), (2, 8), (4, 8)} & sure
    assert {(2, 6), (4, 6), (2, 8), (4, 8)} <= maybe


@pytest.mark.parametrize("mode", ["list", "in-order"])
def test_fast_waits_equal_the_full_graph_waits(mode):
    a, b = func_of(overlap_program(5, 6)), func_of(overlap_program(5, 6))
    schedule.schedule_function(a, mode)
    schedule.schedule_function(b, mode, fast=False)
    assert compiler.print_module(a.parent_op()) == compiler.print_module(b.parent_op())


def test_listed_entries_grow_linearly_with_the_accesses(count_listed):
    def listed(ops):
        count_listed.clear()
        f = func_of(overlap_program(4, ops))
        analyze(f)                                          # closure scoreboard
        schedule.schedule_function(f, "list")               # reorder + straight-line waits
        return dict(count_listed)
    small, large = listed(8), listed(32)                    # 4x the accesses
    for latest in (False, True):
        assert large[latest] < 6 * small[latest], (latest, small, large)
