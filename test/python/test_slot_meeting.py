"""The cached answer of :meth:`SlotIndex.meeting` (passes/placement_slots.py).

A latest-conflict query of the scoreboard (:meth:`ConflictIndex.latest_conflicts`) and a
listing one walk the live slots whose placement overlaps the access's.  On an unrolled
kernel (240k ops, 551 distinct placements) that set changed ~6k times over 270k queries,
so ``meeting`` keeps each region's answer until a slot overlapping it goes live or dead:

- repeated queries on one placement compute the answer once;
- the cached answer always equals the uncached one (``near`` + ``Region.overlaps``, same
  order), also while entries are added and retired (random programs).
"""
from __future__ import annotations

import random

from xdsl.dialects.builtin import MemRefType, f32

from nki_mlir.dialects.effects import Region
from nki_mlir.passes.affine import Affine
from nki_mlir.passes.conflict_index import ConflictIndex
from nki_mlir.passes.dependence import Acc, Box, Dim

SHAPE = (4, 8)
PLACES = [Region("sbuf", 0, 4, 0, 32), Region("sbuf", 0, 2, 16, 16), Region("sbuf", 2, 2, 0, 64),
          Region("sbuf", 0, 4, 96, 32), Region("psum", 0, 4, 0, 32)]


class _Buf:
    """A stand-in base buffer (an SSA value with a memref type)."""

    def __init__(self, name: str):
        self.name = name
        self.type = MemRefType(f32, list(SHAPE))


class _Regions:
    def __init__(self, placed: dict):
        self.placed = placed

    def region(self, base):
        return self.placed.get(base)


def _acc(base, write: bool, row: int | None = None) -> Acc:
    if row is None:
        return Acc("x", Box(base, None), write)
    return Acc("x", Box(base, (Dim(Affine(row), 1, 1), Dim(Affine(0), SHAPE[1], 1))), write)


def test_repeated_queries_build_the_answer_once():
    bufs = [_Buf(f"b{i}") for i in range(4)]
    regions = _Regions({bufs[0]: PLACES[0], bufs[1]: PLACES[1], bufs[2]: PLACES[0],
                        bufs[3]: PLACES[2]})
    index = ConflictIndex([], regions, reads_retire_reads=True)
    index.add(0, [_acc(bufs[1], True, 0)], "dma0")
    index.add(1, [_acc(bufs[3], True, 1)], "dma1")
    slots = index.slots
    built = slots.meeting_built
    for _ in range(50):
        got = index.latest_conflicts(_acc(bufs[0], False, 2))
        assert {t: e.node for t, e in got.items()} == {"dma0": 0, "dma1": 1}
    assert slots.meeting_built == built + 1          # one region, no slot went live/dead
    index.add(2, [_acc(bufs[2], True, 3)], "dma0")  # PLACES[0]'s slot goes live
    assert index.latest_conflicts(_acc(bufs[0], False, 2))["dma0"].node == 2
    assert slots.meeting_built == built + 2
    index.add(3, [_acc(bufs[2], True, 0)], "dma0")  # its slot already live: no rebuild
    assert index.latest_conflicts(_acc(bufs[0], False, 2))["dma0"].node == 3
    assert slots.meeting_built == built + 2


def test_cached_answer_equals_the_uncached_one():
    rng = random.Random(7)
    for trial in range(40):
        bufs = [_Buf(f"b{i}") for i in range(8)]
        regions = _Regions({b: rng.choice(PLACES) for b in bufs})
        index = ConflictIndex([], regions, reads_retire_reads=trial % 2 == 0)
        for node in range(60):
            accs = [_acc(rng.choice(bufs), rng.random() < 0.5,
                         None if rng.random() < 0.3 else rng.randrange(SHAPE[0]))
                    for _ in range(rng.randint(1, 3))]
            for a in accs:
                region = regions.region(a.base)
                want = [s for s in index.slots.near(region) if s.region.overlaps(region)]
                got = index.slots.meeting(region)
                assert [id(s) for s in got] == [id(s) for s in want]
                if index.reads_retire_reads:
                    index.latest_conflicts(a)
                else:
                    index.conflicts([a])
            index.add(node, accs, rng.choice(("dma0", "tensor")))
