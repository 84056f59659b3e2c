"""A dynamic set of integer intervals with overlap queries, for the conflict scoreboards.

:class:`IntervalIndex` holds items with a closed interval ``[lo, hi]`` (``None`` for an
unbounded side).  Bounded intervals are bucketed by length class ``c`` (length < ``2**c``)
in lists sorted by ``lo``; a query ``[qlo, qhi]`` bisects each class for the items with
``qlo - 2**c < lo <= qhi`` and keeps those that really overlap.  Unbounded intervals sit in
one list scanned by every query.  Removal is lazy (a dead mark; lists are compacted when
half dead, or past 8 dead entries when few are alive, so queries skip few dead ones).  Costs: insert O(log n) amortised (plus a list shift), query
O(classes * log n + candidates).

Items also keep their insertion order with a caller's ``rank`` (nondecreasing over the
inserts): :meth:`IntervalIndex.last` is the newest alive item (amortised O(1)) and
:meth:`IntervalIndex.newer` the alive items of rank >= a bound (O(log n + the items from
the first such one on)), whatever their intervals.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Hashable


class IntervalIndex:
    """Items (hashable, each inserted at most once while alive) with closed intervals."""

    def __init__(self):
        self._classes: dict[int, list[tuple[int, int]]] = {}   # class -> sorted (lo, seq)
        self._wide: list[int] = []                             # seqs of unbounded items
        self._item: dict[int, Hashable] = {}                   # seq -> item
        self._span: dict[int, tuple[int | None, int | None]] = {}
        self._seq_of: dict[Hashable, int] = {}
        self._order: list[tuple[int, int]] = []                 # (rank, seq), insertion order
        self._dead = 0
        self._next = 0

    def __len__(self) -> int:
        return len(self._seq_of)

    def __contains__(self, item: Hashable) -> bool:
        return item in self._seq_of

    def insert(self, lo: int | None, hi: int | None, item: Hashable, rank: int = 0) -> None:
        """Add ``item`` with interval ``[lo, hi]``; ``rank``: its place in the insertion
        order for :meth:`newer` (never smaller than an earlier insert's)."""
        seq = self._next
        self._next += 1
        self._item[seq], self._span[seq], self._seq_of[item] = item, (lo, hi), seq
        self._order.append((rank, seq))
        if lo is None or hi is None:
            self._wide.append(seq)
        else:
            insort(self._classes.setdefault(max(0, hi - lo).bit_length(), []), (lo, seq))

    def discard(self, item: Hashable) -> None:
        seq = self._seq_of.pop(item, None)
        if seq is None:
            return
        del self._item[seq]
        self._dead += 1
        if self._dead > 8 and self._dead > len(self._item):      # over half dead
            self._compact()

    def _compact(self) -> None:
        for c, keys in list(self._classes.items()):
            self._classes[c] = [k for k in keys if k[1] in self._item]
        self._wide = [s for s in self._wide if s in self._item]
        self._order = [k for k in self._order if k[1] in self._item]
        self._span = {s: self._span[s] for s in self._item}
        self._dead = 0

    def query(self, lo: int | None, hi: int | None) -> list[Hashable]:
        """The alive items whose interval meets ``[lo, hi]`` (``None``: unbounded side)."""
        items, span = self._item, self._span
        out = [items[seq] for seq in self._wide if seq in items and _meets(span[seq], lo, hi)] \
            if self._wide else []
        for c, keys in self._classes.items():
            start = 0 if lo is None else bisect_left(keys, (lo - (1 << c), -1))
            stop = len(keys) if hi is None else bisect_right(keys, (hi, 1 << 62))
            for i in range(start, stop):     # every lo <= hi here: only the upper end to test
                seq = keys[i][1]
                item = items.get(seq)       # None: removed
                if item is not None and (lo is None or span[seq][1] >= lo):
                    out.append(item)
        return out

    def among(self, items: list[Hashable], lo: int | None, hi: int | None) -> list[Hashable]:
        """Those of ``items`` (alive items of this index) that :meth:`query` ``(lo, hi)``
        lists, in its order -- the same test per item, without walking the others (a
        caller that found candidates through another index)."""
        span, seq_of, classes = self._span, self._seq_of, self._classes
        pos = {c: i for i, c in enumerate(classes)} if len(items) > 1 else None
        out = []
        for item in items:
            seq = seq_of[item]
            slo, shi = span[seq]
            if slo is None or shi is None:
                if _meets((slo, shi), lo, hi):
                    out.append(((0, 0, 0, seq), item))
                continue
            c = max(0, shi - slo).bit_length()
            if (lo is None or (slo >= lo - (1 << c) and shi >= lo)) and (hi is None or slo <= hi):
                out.append(((1, pos[c] if pos else 0, slo, seq), item))
        if len(out) > 1:
            out.sort(key=lambda k: k[0])
        return [item for _, item in out]

    def items(self) -> list[Hashable]:
        return list(self._seq_of)

    def last(self) -> Hashable | None:
        """The alive item inserted last (None when empty)."""
        order, items = self._order, self._item
        while order and order[-1][1] not in items:
            order.pop()             # dead for good: never walked again
        return items[order[-1][1]] if order else None

    def newer(self, rank: int) -> list[Hashable]:
        """The alive items inserted with a rank >= ``rank``, in insertion order."""
        order, items = self._order, self._item
        start = bisect_left(order, (rank, -1))
        return [items[k[1]] for k in order[start:] if k[1] in items]


def _meets(span: tuple[int | None, int | None], lo: int | None, hi: int | None) -> bool:
    slo, shi = span
    return ((hi is None or slo is None or slo <= hi)
            and (lo is None or shi is None or lo <= shi))
