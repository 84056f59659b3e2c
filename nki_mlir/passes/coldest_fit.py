"""Coldest-fit placement for ``nisa-allocate``: a new tensor preferably takes the bytes freed
longest ago.

Best fit (:func:`.allocate.best_fit`) puts a tensor into the smallest free gap, which is
often the one a tensor dying just before it left.  Every instruction that writes the new
tensor then waits for the last readers of the old one (a WAR dependence on the shared
bytes, :mod:`.dependence` ``alias`` edges), although the two tensors have nothing in
common: a load that could be issued early waits for the compute that freed its bytes.  The
Neuron compiler's allocator is not bound to such reuse; ours avoids it when memory allows.

:class:`FreedMap` remembers, per byte offset of one memory, the live-range end (program
point, :mod:`.liveness`) of the last tensor placed there (-1: never used).
:func:`coldest_fit` considers the legal offsets in every free gap (among the tensors live
with the new one) at the gap's start and at each boundary of the map inside it, and takes
the offset whose bytes were freed earliest (the largest map value over its footprint is
smallest; never-used bytes first), then the smallest gap, then the lowest offset.  The
map ignores partitions (a tensor on some partitions marks the bytes of all): at worst a
reuse that does not share a partition counts as one.

``nisa-allocate`` uses it only on top of best fit, for SBUF: the copies are first decided
by best fit; then the same tensors are placed coldest-fit with those copies, and when one
does not fit (coldest fit fragments differently) they are placed coldest-fit again, each
avoiding the best-fit regions of the later tensors live with it -- which always fits, as
each tensor's own best-fit region stays free for it.  So every kernel that fits with best
fit still fits, with the same rotating copies.
"""
from __future__ import annotations

from bisect import bisect_right



class FreedMap:
    """Per byte offset ``[0, capacity)``: the live-range end of the last tensor placed there
    (-1 where none was).  Stored as sorted segment starts with one value each."""

    def __init__(self, capacity: int):
        self.starts: list[int] = [0]
        self.values: list[int] = [-1]
        self.capacity = capacity

    def _split(self, x: int) -> int:
        """Make ``x`` a segment start (``x < capacity``); return its index."""
        i = bisect_right(self.starts, x) - 1
        if self.starts[i] != x:
            self.starts.insert(i + 1, x)
            self.values.insert(i + 1, self.values[i])
            i += 1
        return i

    def assign(self, lo: int, hi: int, value: int) -> None:
        """Bytes ``[lo, hi)`` were last taken by a tensor live until ``value``."""
        hi = min(hi, self.capacity)
        if lo >= hi:
            return
        i = self._split(lo)
        j = self._split(hi) if hi < self.capacity else len(self.starts)
        self.starts[i:j] = [lo]
        self.values[i:j] = [value]

    def boundaries(self, lo: int, hi: int) -> list[int]:
        """The segment starts strictly inside ``(lo, hi)``."""
        i = bisect_right(self.starts, lo)
        out = []
        while i < len(self.starts) and self.starts[i] < hi:
            out.append(self.starts[i])
            i += 1
        return out

    def latest(self, lo: int, hi: int) -> int:
        """The largest value over bytes ``[lo, hi)``."""
        i = bisect_right(self.starts, lo) - 1
        best = -1
        while i < len(self.starts) and self.starts[i] < hi:
            if self.values[i] > best:
                best = self.values[i]
            i += 1
        return best


def coldest_fit(t: "Tensor", arena: "Arena", occupied: list[tuple[int, int]],
                freed: FreedMap) -> int | None:
    """The offset for ``t`` (module docstring), or None when no gap holds its footprint.

    Args:
        t: the tensor to place (its ``stride``, ``place_alignment``, ``footprint``).
        arena: the memory (capacity, legal offsets).
        occupied: merged byte ranges ``[lo, hi)`` taken by tensors live with ``t``.
        freed: the :class:`FreedMap` of the tensors placed so far.
    """
    best: tuple[int, int, int] | None = None      # (latest end, gap size, offset)
    cursor, unit, need = 0, t.stride, t.footprint
    for lo, hi in [*occupied, (arena.capacity, arena.capacity)]:
        if lo > cursor:
            for p in [cursor, *freed.boundaries(cursor, lo)]:
                off = arena.legal_offset(p, unit, t.place_alignment)
                if off + need > lo:
                    break
                key = (freed.latest(off, off + need), lo - cursor, off)
                if best is None or key < best:
                    best = key
        cursor = max(cursor, hi)
    return None if best is None else best[2]
