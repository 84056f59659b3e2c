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


def _funcs():
    out = dict(_FUNCS)
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
