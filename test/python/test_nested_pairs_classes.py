"""The scoreboard of dependence_graph._nested_pairs sorts its entries by whether their
entry-block op holds a nested instruction (ConflictIndex ``tags_are_classes``), so an
entry-block instruction lists only those (its pairs with other entry-block instructions are
_entry_pairs'), instead of listing every live entry and skipping most -- with exactly the
edges (same list, same order) of the index without classes: checked on kernels mixing loops
and entry-block instructions, on tiles placed on partly overlapping bytes (the listing
across bases, its "not older than a write" bound, writes in loops that may not run)."""
from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.func import FuncOp

import nki_mlir as nki
from nki_mlir.compiler import parse_module
from nki_mlir.passes import conflict_index, dependence_graph, schedule
from nki_mlir.passes.dependence import collect_nodes
from nki_mlir.passes.dependence_graph import analyze

from test_conflict_partial_overlap import func_of, overlap_program
from test_dependence_cross_ops import batches


class _Plain(conflict_index.ConflictIndex):
    """The index without classes: tags dropped, every query lists every entry."""

    def __init__(self, common, regions, reads_retire_reads=False, tags_are_classes=False):
        super().__init__(common, regions, reads_retire_reads)
        self.plain = tags_are_classes

    def conflicts(self, accs, only=None):
        return super().conflicts(accs, None if self.plain else only)

    def add(self, node, accs, tag=None, retiring=None):
        super().add(node, accs, None if self.plain else tag, retiring)


def _edges(g):
    return [(e.src.index, e.dst.index, e.kind, e.role, e.level, e.distance, e.reason)
            for e in g.edges]


def _funcs():
    out = {}
    for tiles, ops, trips, nested in [(5, 4, None, True), (5, 4, 1, False), (5, 4, 0, False),
                                      (4, 6, 1, True), (4, 6, 0, True)]:
        out[f"overlap-{tiles}-{ops}-{trips}-{nested}"] = func_of(
            overlap_program(tiles, ops, write_trips=trips, nested=nested))
    a = np.arange(128 * 5 * 256, dtype=np.float32).reshape(128 * 5, 256)
    ck = nki.compile(batches, a, np.ones((128, 256), np.float32), use_cache=False)
    out["batches"] = next(op for op in parse_module(ck.ir("nisa")).walk() if isinstance(op, FuncOp))
    return out


FUNCS = _funcs()


@pytest.mark.parametrize("name", sorted(FUNCS))
@pytest.mark.parametrize("with_queue", [False, True])
def test_same_edges_as_the_index_without_classes(name, with_queue, monkeypatch):
    func = FUNCS[name]
    nodes = collect_nodes(func)
    queue = None
    if with_queue:
        queues = schedule.assign_queues(func)
        queue = {n: queues[n.op] for n in nodes}
    fast = _edges(analyze(func, nodes, queue))
    monkeypatch.setattr(dependence_graph, "ConflictIndex", _Plain)
    plain = _edges(analyze(func, nodes, queue))
    assert fast == plain
    assert any(e[4] is None for e in fast)


def test_entry_block_queries_list_only_nested_entries(monkeypatch):
    """An entry-block instruction's query in _nested_pairs lists no entry of an entry-block
    instruction (the plain index listed them all: quadratic in the tiles)."""
    func = func_of(overlap_program(12, 12, write_trips=1))  # writes in loops, the rest not
    listed = {"classes": 0, "plain": 0}
    real = conflict_index.ConflictIndex.conflicts

    def counting(self, accs, only=None):
        out = real(self, accs, only)
        if self.classes or isinstance(self, _Plain):
            listed["plain" if isinstance(self, _Plain) else "classes"] += len(out)
        return out
    monkeypatch.setattr(conflict_index.ConflictIndex, "conflicts", counting)
    analyze(func)
    monkeypatch.setattr(dependence_graph, "ConflictIndex", _Plain)
    analyze(func)
    assert listed["plain"] > 4 * listed["classes"] > 0      # (12 x 12: 2153 vs 425)
