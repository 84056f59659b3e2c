"""The conflict scoreboard's cross-base part by placement slot (passes/placement_slots.py)
against a brute-force model on random programs (hypothesis).

Buffers share a few placements (as an allocator's rotating tiles do); every access is a
whole buffer or a constant box.  At every step the model -- the scoreboard's rules written
out over every base (a whole access retires the same-tag entries of the bases placed inside
its region and, same base, those inside the buffer; a constant partial access those its box
contains) -- gives the live entries, and:

- :meth:`ConflictIndex.latest_conflicts` (slot heaps) must give, per tag, an entry of the
  newest node among the live conflicting entries of the model (same-base overlap, or
  another base's overlapping placement);
- the live entries of the index (retired through the slots) must equal the model's.

Before the slots, retiring walked every live base near a whole access and a latest query
every live base near its own placement: the same answers, quadratic in the bases.
"""
from __future__ import annotations

from hypothesis import given, settings, strategies as st
from xdsl.dialects.builtin import MemRefType, f32

from nki_mlir.dialects.effects import Region
from nki_mlir.passes.affine import Affine
from nki_mlir.passes.conflict_index import ConflictIndex, _inside, box_contains, is_whole
from nki_mlir.passes.dependence import Acc, Box, Dim, same_iteration_overlap
from nki_mlir.passes.placement_slots import SlotIndex

SHAPE = (4, 8)
PLACES = [Region("sbuf", 0, 4, 0, 32), Region("sbuf", 0, 4, 0, 32), Region("sbuf", 0, 2, 16, 16),
          Region("sbuf", 2, 2, 0, 64), Region("sbuf", 0, 4, 96, 32), Region("psum", 0, 4, 0, 32)]
TAGS = ("dma0", "tensor", "vector")


class _Buf:
    """A stand-in base buffer (an SSA value with a memref type)."""

    def __init__(self, name: str):
        self.name = name
        self.type = MemRefType(f32, list(SHAPE))

    def __repr__(self) -> str:
        return self.name


class _Regions:
    """A RegionCache over fixed placements."""

    def __init__(self, placed: dict):
        self.placed = placed

    def region(self, base):
        return self.placed.get(base)


def _box(base, spec) -> Box:
    if spec is None:
        return Box(base, None)
    (r0, nr), (c0, nc) = spec
    return Box(base, (Dim(Affine(r0), nr, 1), Dim(Affine(c0), nc, 1)))


boxes = st.one_of(st.none(), st.tuples(
    st.integers(0, 3).flatmap(lambda r: st.tuples(st.just(r), st.integers(1, 4 - r))),
    st.integers(0, 7).flatmap(lambda c: st.tuples(st.just(c), st.integers(1, 8 - c)))))
steps = st.lists(st.tuples(st.integers(0, 7), st.sampled_from(TAGS),
                           st.lists(st.tuples(st.integers(0, 7), boxes, st.booleans()),
                                    min_size=1, max_size=3)), min_size=1, max_size=40)


def _conflict(e, y: Acc, regions) -> bool:
    if not (e.acc.is_write or y.is_write):
        return False
    if e.acc.base is y.base:
        return same_iteration_overlap(e.acc.box, y.box, [])
    ra, rb = regions.region(e.acc.base), regions.region(y.base)
    return ra is not None and rb is not None and ra.overlaps(rb)


def _model_add(live: list, node: int, accs: list[Acc], tag, regions) -> list:
    """The scoreboard's retiring rules over every live entry (reads retire reads)."""
    dead = set()
    for w in accs:
        kinds = (True, False) if w.is_write else (False,)
        for e in live:
            if e.tag != tag or e.acc.is_write not in kinds:
                continue
            if is_whole(w.box):
                if e.acc.base is w.base:
                    if w.box.dims is None or ConflictIndex.geometry(e.acc).inside:
                        dead.add(id(e))
                else:
                    re, rw = regions.region(e.acc.base), regions.region(w.base)
                    if re is not None and rw is not None and _inside(re, rw):
                        dead.add(id(e))
            elif e.acc.base is w.base and box_contains(w.box, e.acc.box) \
                    and ConflictIndex.geometry(e.acc).inside:
                dead.add(id(e))
    return [e for e in live if id(e) not in dead]


@settings(max_examples=300, deadline=None)
@given(steps, st.lists(st.integers(0, len(PLACES) - 1), min_size=8, max_size=8))
def test_latest_and_retiring_match_the_model(program, places):
    bufs = [_Buf(f"b{i}") for i in range(8)]
    regions = _Regions({b: PLACES[p] for b, p in zip(bufs, places) if b.name != "b7"})
    index = ConflictIndex([], regions, reads_retire_reads=True)
    live: list = []
    for node, (_, tag, spec) in enumerate(program):
        accs = [Acc("x", _box(bufs[b], box), w) for b, box, w in spec]
        for y in accs:
            got = index.latest_conflicts(y)
            want: dict = {}
            for e in live:
                if _conflict(e, y, regions) and e.node > want.get(e.tag, -1):
                    want[e.tag] = e.node
            assert {t: e.node for t, e in got.items()} == want
            for t, e in got.items():
                assert e.tag == t and _conflict(e, y, regions) and e in live
        live = _model_add(live, node, accs, tag, regions)
        index.add(node, accs, tag)
        live += [e for a in accs for e in index.history[a.base] if e.acc is a and e.node == node]
        indexed = {id(e) for by_tag in index.live.values() for idx in by_tag.values()
                   for e in idx.items()}
        assert indexed == {id(e) for e in live}


def test_newest_skips_the_asking_base_and_stale_items():
    regions = _Regions({})
    slots = SlotIndex(regions, newest=True)
    s = slots._by_region.setdefault(PLACES[0], __import__(
        "nki_mlir.passes.placement_slots", fromlist=["Slot"]).Slot(PLACES[0]))

    class E:
        def __init__(self, node):
            self.node = node
    lasts = {"a": E(5), "b": E(3), "c": E(1)}
    for base, node in (("c", 1), ("b", 3), ("a", 5), ("b", 4)):    # b's 4: retired since
        slots.push(s, (True, None), base, node)
    assert slots.newest(s, (True, None), "a", lasts.get).node == 3
    assert slots.newest(s, (True, None), "x", lasts.get).node == 5
    del lasts["a"]
    assert slots.newest(s, (True, None), "b", lasts.get).node == 1


dims = st.tuples(st.integers(-3, 9), st.integers(1, 5), st.integers(1, 3))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(dims, dims), min_size=2, max_size=2))
def test_hulls_apart_only_when_boxes_never_overlap(pair):
    """The scoreboard's prefilter (conflict_index.hulls_apart) skips only pairs the overlap
    test rejects (constant offsets, strides, boxes partly outside the buffer)."""
    from nki_mlir.passes.conflict_index import Geometry, hulls_apart
    from nki_mlir.passes.dependence import boxes_may_overlap
    base = _Buf("b")
    a, b = (Box(base, tuple(Dim(Affine(o), n, s) for o, n, s in spec)) for spec in pair)
    if hulls_apart(Geometry.of(a), Geometry.of(b)):
        assert not boxes_may_overlap(a, b, lambda v: v, lambda v: v)


def test_latest_skips_a_slot_whose_newest_is_not_newer():
    """The latest query does not walk a slot's heap when the newest entry it already has for
    that tag (here: of its own base) is at least the heap's top, which bounds every live
    entry of the slot's bases -- an unrolled kernel's tiles on one placement were walked by
    every access of each of them."""
    from unittest import mock
    bufs = [_Buf(f"b{i}") for i in range(21)]
    regions = _Regions({b: PLACES[0] for b in bufs})
    index = ConflictIndex([], regions, reads_retire_reads=True)
    for node, b in enumerate(bufs):
        index.add(node, [Acc("x", _box(b, ((0, 1), (0, 2))), True)], "vector")
    y = Acc("x", _box(bufs[-1], ((0, 1), (1, 2))), True)
    with mock.patch.object(SlotIndex, "newest", side_effect=SlotIndex.newest) as newest:
        got = index.latest_conflicts(y)
    assert {t: e.node for t, e in got.items()} == {"vector": 20}
    assert newest.call_count == 0
