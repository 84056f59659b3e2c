"""With engine queues, dependence_graph._entry_pairs keeps per queue (entry tag) only the
newest entry the scoreboard lists for an access; ConflictIndex.latest_conflicts returns
those directly, without the listing (the cross-base part of it was most of nisa-schedule
on a large nki-library kernel).  Checked against the listing + filter it replaced: the same
entries per tag, in the same order, at every query, and the same edges (full tuples, in
order) of ``analyze(func, queue=...)`` -- on an unrolled batch loop, tiles placed on partly
overlapping bytes (with writes in loops that may run no iteration), the examples."""
from __future__ import annotations

import pytest
from xdsl.dialects.func import FuncOp

from nki_mlir.compiler import parse_module
from nki_mlir.passes import conflict_index, dependence_graph, schedule
from nki_mlir.passes.dependence import collect_nodes
from nki_mlir.passes.dependence_graph import analyze

from test_conflict_partial_overlap import func_of
from test_nested_pairs_classes import FUNCS as _FUNCS
from test_schedule_waits_fast import TEXTS


def _listed_latest(index, y):
    """The old path: list every conflict of ``y``, keep per tag the newest (first listed)."""
    latest: dict = {}
    for e in index.conflicts([y]):
        if e.node > latest.get(e.tag, (-1,))[0]:
            latest[e.tag] = (e.node, e)
    return {t: e for t, (_, e) in latest.items()}


class _Listing(conflict_index.ConflictIndex):
    def latest_conflicts(self, y):
        return _listed_latest(self, y)


class _Checked(conflict_index.ConflictIndex):
    answers = 0

    def latest_conflicts(self, y):
        new = super().latest_conflicts(y)
        old = _listed_latest(self, y)
        assert list(new.items()) == list(old.items())
        _Checked.answers += len(new)
        return new


HBM, SB = "#nisa.mem<shared_hbm>", "#nisa.mem<sbuf>"
T = f"memref<64x64xf32, {SB}>"
H = f"memref<64x64xf32, strided<[64, 1], offset: %d>, {HBM}>"

# two tiles on the same bytes of disjoint partitions (no conflict across them), each
# updated in place by the vector engine (one node, two entries of one base and queue),
# then %a rewritten whole by a DMA: its newest vector-queue conflict is the in-place
# update of %a -- its write entry, listed before its read -- not the later one of %b
SAME_BYTES = f"""func.func @f(%in: memref<128x64xf32, {HBM}>) {{
  %one = arith.constant 1.0 : f32
  %a = nisa.alloc {{nkim.partition = 0 : i64, nkim.offset = 0 : i64}} : {T}
  %b = nisa.alloc {{nkim.partition = 64 : i64, nkim.offset = 0 : i64}} : {T}
  %i0 = memref.subview %in[0, 0] [64, 64] [1, 1] : memref<128x64xf32, {HBM}> to {H % 0}
  %i1 = memref.subview %in[64, 0] [64, 64] [1, 1] : memref<128x64xf32, {HBM}> to {H % 4096}
  nisa.dma_copy(dst={T} %a, src={H % 0} %i0) engine=dma loc("k.py":1:1)
  nisa.dma_copy(dst={T} %b, src={H % 4096} %i1) engine=dma loc("k.py":2:1)
  nisa.tensor_scalar_arith(dst={T} %a, src={T} %a, operand0=f32 %one, op0=multiply) engine=vector loc("k.py":3:1)
  nisa.tensor_scalar_arith(dst={T} %b, src={T} %b, operand0=f32 %one, op0=multiply) engine=vector loc("k.py":4:1)
  nisa.dma_copy(dst={T} %a, src={H % 0} %i0) engine=dma loc("k.py":5:1)
  func.return
}}"""


def _funcs():
    out = dict(_FUNCS)
    out["same-bytes"] = func_of(SAME_BYTES)
    for name, text in TEXTS.items():
        for i, f in enumerate(op for op in parse_module(text).walk() if isinstance(op, FuncOp)):
            out[f"{name}-{i}"] = f
    return out


FUNCS = _funcs()


def _edges(g):
    return [(e.src.index, e.dst.index, e.kind, e.role, e.level, e.distance, e.reason)
            for e in g.edges]


def _with_queue(func):
    nodes = collect_nodes(func)
    queues = schedule.assign_queues(func)
    return nodes, {n: queues[n.op] for n in nodes}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_same_edges_as_listing_and_filtering(name, monkeypatch):
    func = FUNCS[name]
    nodes, queue = _with_queue(func)
    new = _edges(analyze(func, nodes, queue))
    monkeypatch.setattr(dependence_graph, "ConflictIndex", _Listing)
    old = _edges(analyze(func, nodes, queue))
    assert new == old
    assert any(e[4] is None for e in new)


def _check_queries(name, monkeypatch) -> int:
    """Run ``analyze`` with the index checking every query; the entries answered."""
    func = FUNCS[name]
    nodes, queue = _with_queue(func)
    _Checked.answers = 0
    monkeypatch.setattr(dependence_graph, "ConflictIndex", _Checked)
    analyze(func, nodes, queue)
    return _Checked.answers


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_same_latest_entries_at_every_query(name, monkeypatch):
    _check_queries(name, monkeypatch)


def test_the_queries_checked_have_answers(monkeypatch):
    """Entry-block conflicts across queues and bases do occur in the kernels above."""
    assert _check_queries("batches", monkeypatch) > 0
    overlap = [n for n in FUNCS if n.startswith("overlap") and n.endswith("False")]
    assert overlap and all(_check_queries(n, monkeypatch) > 0 for n in overlap)


def test_newest_per_queue_on_shared_bytes():
    """The whole DMA rewrite of %a (node 4) waits on its DMA write (0) and on the in-place
    vector update of %a (2) as a write-after-write: not on %b's (disjoint partitions)."""
    nodes, queue = _with_queue(FUNCS["same-bytes"])
    into = [e for e in _edges(analyze(FUNCS["same-bytes"], nodes, queue)) if e[1] == 4]
    assert into == [(0, 4, "WAW", "dst", None, None, "data"), (2, 4, "WAW", "dst", None, None, "data")]
