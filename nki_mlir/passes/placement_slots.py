"""Placed buffers grouped by their exact placement, for the conflict scoreboard's cross-base part.

An allocator reuses a few placements for many buffers (an unrolled kernel's tiles of one
loop body: thousands of bases on tens of regions).  :class:`.conflict_index.ConflictIndex`
meets, for an access of base ``b``, every live entry of another base whose placed region
(:class:`.effects.Region`: partitions x bytes) overlaps ``b``'s, and a whole access retires
the entries of the bases whose region lies inside its own.  Walking the live *bases* there
made both linear in the bases still holding an entry -- entries only some later access of
the same tag retires (a tile read in slices by the tensor engine) kept every tile of a
placement live, and each access walked them all: quadratic in the unrolled iterations.

A :class:`Slot` is one distinct region.  Per ``(kind, tag)`` (``kind``: the entries'
``is_write``) it keeps the bases of the slot with live entries of that kind and tag (what
a retiring walk needs: only bases that have something to retire), and, when asked for
(``newest``), a lazy max-heap of ``(node, base)`` whose valid items are the bases' newest live
entries: :meth:`SlotIndex.newest` answers "the newest live entry of this kind and tag among
the slot's bases other than ``b``" in amortised O(log n).  Slots with live bases sit in an
interval index of their byte range per memory, so a query walks the live regions it
overlaps, never their bases.  The slots overlapping one region change only when a slot of
that memory gains its first live base or loses its last (a few thousand times on a
240k-op unrolled kernel with 551 distinct regions), so :meth:`SlotIndex.meeting` keeps
each region's answer until one of the slots overlapping that region goes live or dead (each
slot knows the cached regions it overlaps).  The order of the answer is the interval
index's, which other slots' inserts and removals do not change.  Every region-holding base
is in exactly one slot, and all bases of a slot overlap (or lie inside) a region exactly
when their slot's region does.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterator
from heapq import heappop, heappush

from xdsl.ir import SSAValue

from ..dialects.effects import Region, RegionCache
from .interval_index import IntervalIndex


class Slot:
    """The live bases of one distinct placed region (module docstring)."""

    __slots__ = ("region", "bases", "heaps", "live")

    def __init__(self, region: Region):
        self.region = region
        #: (kind, tag) -> the bases with live entries of that kind and tag (insertion order)
        self.bases: dict[tuple[bool, Hashable], dict[SSAValue, None]] = {}
        #: (kind, tag) -> heap of (-node, seq, base): a base's newest live entry is valid
        self.heaps: dict[tuple[bool, Hashable], list] = {}
        self.live = 0           # bases of the slot with at least one live entry


_NONE = object()


class SlotIndex:
    """Slots of the placed bases of one scoreboard.

    Args:
        regions: the placed-region cache of the function.
        newest: keep the heaps for :meth:`newest` (latest-entry queries).
    """

    def __init__(self, regions: RegionCache, newest: bool):
        self.regions = regions
        self.keep_heaps = newest
        self._slot_of: dict[SSAValue, Slot | None] = {}
        self._by_region: dict[Region, Slot] = {}
        self._live: dict[str, IntervalIndex] = defaultdict(IntervalIndex)
        self._seq = 0
        self._meeting: dict[Region, list[Slot] | None] = {}    # None: to recompute
        self._watch: dict[Slot, list[Region]] = {}  # slot -> cached regions overlapping it
        self.meeting_built = 0      # answers of meeting() computed, not cached (tests)

    def slot(self, base: SSAValue) -> Slot | None:
        """The slot of ``base`` (None: not placed, or an empty region)."""
        s = self._slot_of.get(base, _NONE)
        if s is _NONE:
            r = self.regions.region(base)
            if r is None:
                s = None
            else:
                s = self._by_region.get(r)
                if s is None:
                    s = self._by_region[r] = Slot(r)
                    self._watch[s] = [q for q in self._meeting if q.overlaps(r)]
            self._slot_of[base] = s
        return s

    def near(self, region: Region) -> Iterator[Slot]:
        """The slots with live bases whose byte range meets ``region``'s (same memory; the
        caller tests the partitions)."""
        idx = self._live.get(region.space)
        if idx:
            yield from idx.query(region.offset, region.offset + region.size - 1)

    def meeting(self, region: Region) -> list[Slot]:
        """The slots with live bases whose region overlaps ``region`` (``near`` plus
        :meth:`.effects.Region.overlaps`, in ``near``'s order), cached until a slot
        overlapping ``region`` goes live or dead.  The caller must not change the list."""
        out = self._meeting.get(region, _NONE)
        if out is not None and out is not _NONE:
            return out
        if out is _NONE:                # a new region: the slots to tell when they change
            for s in self._by_region.values():
                if s.region.overlaps(region):
                    self._watch[s].append(region)
        self.meeting_built += 1
        out = self._meeting[region] = [s for s in self.near(region) if s.region.overlaps(region)]
        return out

    def _changed(self, s: Slot) -> None:
        """``s`` went live or dead: the cached answers it belongs in are stale."""
        meeting = self._meeting
        for q in self._watch[s]:
            meeting[q] = None

    # ------------------------------------------------------------------------ update

    def base_live(self, base: SSAValue, alive: bool) -> None:
        """``base`` got its first live entry (``alive``) or lost its last one."""
        s = self.slot(base)
        if s is None:
            return
        r = s.region
        if alive:
            s.live += 1
            if s.live == 1:
                self._live[r.space].insert(r.offset, r.offset + r.size - 1, s)
                self._changed(s)
        else:
            s.live -= 1
            if s.live == 0:
                self._live[r.space].discard(s)
                self._changed(s)

    def entry_added(self, base: SSAValue, kind: bool, tag: Hashable, node: int) -> None:
        """An entry of ``base`` (its newest now) was recorded."""
        s = self.slot(base)
        if s is None:
            return
        key = (kind, tag)
        bases = s.bases.get(key)
        if bases is None:
            bases = s.bases[key] = {}
        bases[base] = None
        if self.keep_heaps:
            self.push(s, key, base, node)

    def push(self, s: Slot, key: tuple[bool, Hashable], base: SSAValue, node: int) -> None:
        """``node`` is now the newest live entry of ``base`` of this kind and tag."""
        heap = s.heaps.get(key)
        if heap is None:
            heap = s.heaps[key] = []
        self._seq += 1
        heappush(heap, (-node, self._seq, base))

    def tag_emptied(self, base: SSAValue, kind: bool, tag: Hashable) -> None:
        """``base`` has no live entry of this kind and tag any more."""
        s = self.slot(base)
        if s is not None:
            bases = s.bases.get((kind, tag))
            if bases is not None:
                bases.pop(base, None)

    # ------------------------------------------------------------------------ queries

    @staticmethod
    def newest(s: Slot, key: tuple[bool, Hashable], but: SSAValue,
               last: Callable[[SSAValue], object]):
        """The newest live entry of ``key`` (kind, tag) in slot ``s`` among the bases other
        than ``but`` (ties: the base pushed first), or None; ``last(base)``: the newest live
        entry of ``base`` of that kind and tag (an object with ``node``), or None."""
        heap = s.heaps.get(key)
        if not heap:
            return None
        aside = []
        out = None
        while heap:
            neg, _, c = heap[0]
            e = last(c)
            if e is None or e.node != -neg:
                heappop(heap)               # stale: that base's newest entry changed
            elif c is but:
                aside.append(heappop(heap))
            else:
                out = e
                break
        for item in aside:
            heappush(heap, item)
        return out
