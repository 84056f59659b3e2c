"""The conflict scoreboard's per-base index by free span (passes/box_index.py).

- :meth:`ConflictIndex.conflicts`, ``latest_conflicts`` and retiring give the same answers,
  in the same order, with the free-span lookup as with the row-major span index alone
  (hypothesis, random constant boxes of a 3-D buffer: strides, empty and unknown dims,
  boxes partly outside the buffer);
- :meth:`IntervalIndex.among` lists what ``query`` lists, in its order;
- column slices of one big buffer (every span meets every other): a query hands the
  per-dimension test only the slices it overlaps, not every live entry of the buffer.
"""
from __future__ import annotations

from unittest import mock

from hypothesis import given, settings, strategies as st
from xdsl.dialects.builtin import MemRefType, f32

from nki_mlir.passes import conflict_index
from nki_mlir.passes.affine import Affine
from nki_mlir.passes.box_index import BoxIndex
from nki_mlir.passes.conflict_index import ConflictIndex
from nki_mlir.passes.dependence import Acc, Box, Dim
from nki_mlir.passes.interval_index import IntervalIndex

SHAPE = (4, 3, 8)


class _Buf:
    """A stand-in base buffer (an SSA value with a memref type)."""

    def __init__(self, name: str, shape=SHAPE):
        self.name = name
        self.type = MemRefType(f32, list(shape))


class _NoRegions:
    def region(self, base):
        return None


dim = st.one_of(
    st.tuples(st.integers(-2, 9), st.integers(0, 5), st.integers(1, 3)),
    st.just(None))                                  # an unknown dimension
boxes = st.one_of(st.none(), st.tuples(dim, dim, dim))
steps = st.lists(st.tuples(st.sampled_from(("a", "b")),
                           st.lists(st.tuples(boxes, st.booleans()), min_size=1, max_size=3)),
                 min_size=1, max_size=30)


def _box(base, spec) -> Box:
    if spec is None:
        return Box(base, None)
    return Box(base, tuple(Dim(None, 1, 1) if d is None else Dim(Affine(d[0]), d[1], d[2])
                           for d in spec))


def _run(program, latest: bool):
    """Every answer of a scoreboard over ``program``: (node, access) keys, in order."""
    base = _Buf("t")
    index = ConflictIndex([], _NoRegions(), reads_retire_reads=latest)
    out = []
    accs_of = []
    for node, (tag, spec) in enumerate(program):
        accs = [Acc("x", _box(base, b), w) for b, w in spec]
        accs_of.append(accs)
        key = {id(a): (n, i) for n, aa in enumerate(accs_of) for i, a in enumerate(aa)}
        if latest:
            for y in accs:
                got = index.latest_conflicts(y)
                out.append(sorted((t, key[id(e.acc)]) for t, e in got.items()))
        else:
            out.append([key[id(e.acc)] for e in index.conflicts(accs)])
        index.add(node, accs, tag)
        out.append(sorted(key[id(e.acc)] for by_tag in index.live.values()
                          for idx in by_tag.values() for e in idx.items()))
    return out


def _span_only(self, lo, hi, free):
    return self.query(lo, hi)


@settings(max_examples=300, deadline=None)
@given(steps, st.booleans())
def test_free_span_lookup_gives_the_same_answers(program, latest):
    got = _run(program, latest)
    with mock.patch.object(BoxIndex, "query_box", _span_only):
        want = _run(program, latest)
    assert got == want


spans = st.one_of(st.tuples(st.integers(-5, 40), st.integers(-3, 20)).map(
    lambda t: (t[0], t[0] + t[1])), st.tuples(st.none(), st.integers(-5, 40)),
    st.tuples(st.integers(-5, 40), st.none()))


@settings(max_examples=300, deadline=None)
@given(st.lists(spans, max_size=30), st.sets(st.integers(0, 29)), spans,
       st.sets(st.integers(0, 29)))
def test_among_lists_what_query_lists_in_its_order(items, dead, q, pick):
    idx = IntervalIndex()
    for i, (lo, hi) in enumerate(items):
        idx.insert(lo, hi, i, i)
    for i in dead:
        idx.discard(i)
    alive = [i for i in range(len(items)) if i not in dead]
    chosen = [i for i in alive if i in pick]
    want = [i for i in idx.query(*q) if i in pick]
    assert idx.among(chosen, *q) == want
    assert idx.among(list(reversed(chosen)), *q) == want


def test_column_slices_are_found_by_their_columns():
    """60 disjoint column slices of a (128, 3840) tile, all live (no slice contains another):
    an access of one slice (and its neighbour's first column) hands only those two to the
    per-dimension test, where the row-major spans handed it all 60."""
    base = _Buf("t", (128, 3840))
    index = ConflictIndex([], _NoRegions())

    def cols(c0, n):
        return Acc("x", Box(base, (Dim(Affine(0), 128, 1), Dim(Affine(c0), n, 1))), True)
    for k in range(60):
        index.add(k, [cols(64 * k, 64)])
    tested = []
    real = conflict_index.hulls_apart

    def counting(a, b):
        tested.append(a)
        return real(a, b)
    with mock.patch.object(conflict_index, "hulls_apart", counting):
        found = index.conflicts([cols(64 * 30, 65)])
    assert sorted(e.node for e in found) == [30, 31]
    assert len(tested) == 2
