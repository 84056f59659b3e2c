"""The access history of one memory for the hazard checks' race search (:mod:`.hazards`).

A :class:`History` keeps the remembered accesses of one root array (SBUF, PSUM, an HBM
tensor, a private on-chip array) in program order, with each access's box on the root's
first and last dimensions (:mod:`.footprint`) and, once it holds :data:`INDEX_MIN` rows, an
index of the rows by their range on one dimension of the root, so a race search tests only
the rows near a footprint.

Units: bytes of the root's byte geometry (:func:`~.footprint.geometry`).
"""
from __future__ import annotations

import numpy as np

from operator import le

from .footprint import Footprint, geometry

#: bytes of a partition per bucket of an on-chip root's access history (a PSUM bank, a
#: row of 512 fp32)
_BUCKET_BYTES = 2048
#: rows per bucket of an HBM tensor's access history (a partition-tile's worth)
_BUCKET_ROWS = 128
#: rows a :class:`History` holds before it indexes them in buckets
INDEX_MIN = 12
#: the key row of a removed entry: it meets no footprint
_DEAD_ROW = (np.iinfo(np.int64).max, np.iinfo(np.int64).min) * 2 + (0, 0)


def _index_dim(root: np.ndarray) -> tuple[int, int]:
    key = (root.shape, root.itemsize)
    out = _INDEX_DIMS.get(key)
    if out is None:
        out = _INDEX_DIMS[key] = _index_dim_of(root)
    return out


#: :func:`_index_dim` by the root's shape and itemsize
_INDEX_DIMS: dict[tuple, tuple[int, int]] = {}


def _index_dim_of(root: np.ndarray) -> tuple[int, int]:
    """``(dimension, bucket width)`` a :class:`History` of ``root`` indexes its rows by
    (in the root's byte geometry): the bytes of a partition for on-chip roots (at most 128
    rows: tiles sit side by side along a partition), :data:`_BUCKET_BYTES` per bucket; else
    the rows (HBM tensors are mostly accessed in blocks of 128 rows), :data:`_BUCKET_ROWS`
    per bucket."""
    shape, _ = geometry(root)
    if len(shape) == 1 or shape[0] <= 128:
        return len(shape) - 1, _BUCKET_BYTES
    return 0, _BUCKET_ROWS


class History:
    """The remembered accesses ``(fp, is_write, inst, role)`` of one memory, oldest first.

    ``entries[i]`` is row ``i`` (None once removed: removal marks rows dead; the rows are
    compacted, in order, when most are dead).  ``rows[i]`` holds the row's box on the
    root's first and last dimensions, :attr:`Footprint.box <.footprint.Footprint.box>`
    ``(lo0, hi0, lo_last, hi_last)``, then its access's epoch ``(queue, clock)``: the
    instance's queue index and its own entry of its vector clock (it happens before an
    instance whose clock holds at least that entry on that queue; :func:`~.queues.hb`)
    (``_DEAD_ROW``, which meets nothing, when removed).
    ``buckets`` indexes the rows by
    their range on one dimension of the root (:func:`_index_dim`, unless given): :meth:`near`
    tests only the rows sharing a bucket with the footprint, once there are
    :data:`INDEX_MIN` rows (before, ``buckets`` is None and it tests every row).  ``alive``:
    the rows not removed.

    A summary of the live rows answers the common question at once (:meth:`settled`):
    ``key``, the box every live row has when they all have one (else None), and
    ``bound[q]``, at least the largest clock entry of a live row on queue ``q`` (exact after
    :meth:`reset` and compaction, an upper bound after removals)."""

    __slots__ = ("entries", "rows", "buckets", "dim", "width", "n", "alive", "gen", "bound",
                 "key")

    def __init__(self, dim: int | None = None, width: int | None = None, queues: int = 0):
        self.entries: list = []
        self.rows: list[tuple] = []
        self.buckets: dict[int, list[int]] | None = None
        self.dim, self.width = dim, width
        self.n = 0
        self.alive = 0
        self.gen = 0        # compactions and resets so far (row numbers change at each)
        self.bound: list[int] = [0] * queues
        self.key: tuple | None = None

    def settled(self, clock: list[int], box: tuple) -> bool:
        """Whether every live row has the box ``box`` and happens before an instance of
        vector clock ``clock``; False may be a miss."""
        return self.key == box and all(map(le, self.bound, clock))

    def restart(self, entry, epoch: tuple[int, int]) -> None:
        """:meth:`reset`, then :meth:`append` ``entry`` with ``epoch``."""
        box = entry[0].box
        self.entries, self.rows = [entry], [box + epoch]
        self.buckets = None
        self.n = self.alive = 1
        self.gen += 1
        q, c = epoch
        bound = self.bound = [0] * max(len(self.bound), q + 1)
        bound[q] = c
        self.key = box

    def reset(self) -> None:
        """Forget every row."""
        self.entries, self.rows = [], []
        self.buckets = None
        self.n = self.alive = 0
        self.gen += 1
        self.bound = [0] * len(self.bound)
        self.key = None

    def _index(self, i: int, fp: Footprint) -> None:
        w, d, buckets = self.width, self.dim, self.buckets
        for b in range(fp.lo[d] // w, (fp.hi[d] - 1) // w + 1):
            rows = buckets.get(b)
            if rows is None:
                buckets[b] = [i]
            else:
                rows.append(i)

    def append(self, entry, epoch: tuple[int, int] = (0, 0)) -> None:
        """Remember ``entry`` ``(fp, is_write, inst, role)`` with its ``epoch`` (see above)."""
        fp = entry[0]
        box = fp.box
        self.rows.append(box + epoch)
        self.entries.append(entry)
        if not self.alive:
            self.key = box
        elif self.key != box:
            self.key = None
        q, c = epoch
        bound = self.bound
        if q >= len(bound):
            bound.extend([0] * (q + 1 - len(bound)))
        if c > bound[q]:
            bound[q] = c
        n = self.n
        self.n = n + 1
        self.alive += 1
        buckets = self.buckets
        if buckets is None:
            if n + 1 >= INDEX_MIN:
                self._reindex()
            return
        w, d = self.width, self.dim
        b = fp.lo[d] // w
        if b == (fp.hi[d] - 1) // w:       # (one bucket: :meth:`_index`, inline)
            rows = buckets.get(b)
            if rows is None:
                buckets[b] = [n]
            else:
                rows.append(n)
        else:
            self._index(n, fp)

    def _reindex(self) -> None:
        """Index every live row in :attr:`buckets`."""
        live = [(i, e[0]) for i, e in enumerate(self.entries) if e is not None]
        if self.dim is None:
            self.dim, self.width = _index_dim(live[0][1].root)
        self.buckets = {}
        for i, fp in live:
            self._index(i, fp)

    def mark(self, rows: list[int]) -> tuple:
        """``rows`` found by :meth:`near` for a footprint, as of now (for a later ``near``
        of the same footprint)."""
        return rows, self.n, self.gen

    def candidates(self, fp: Footprint):
        """Row numbers (ascending) that may meet ``fp``: every row, or once indexed, the
        rows sharing a bucket with it."""
        buckets = self.buckets
        if buckets is None:
            return range(self.n)
        w, d = self.width, self.dim
        b0, b1 = fp.lo[d] // w, (fp.hi[d] - 1) // w
        if b0 == b1:
            return buckets.get(b0, ())
        seen: set[int] = set()
        for b in range(b0, b1 + 1):
            seen.update(buckets.get(b, ()))
        return sorted(seen)

    def near(self, fp: Footprint, since: tuple | None = None) -> list[int]:
        """Rows (oldest first) whose boxes meet ``fp``'s on the first and last dimensions
        (a necessary condition of ``fp.overlaps``).  ``since``: an earlier answer for
        ``fp`` (:meth:`mark`); then only the rows appended after it are tested."""
        lo0, hi0, lo1, hi1 = fp.box
        rows = self.rows
        if since is not None and since[2] == self.gen:
            entries = self.entries
            out = [i for i in since[0] if entries[i] is not None]
            cand = range(since[1], self.n)
        else:
            out = []
            cand = self.candidates(fp)
        for i in cand:
            r = rows[i]
            if r[0] < hi0 and lo0 < r[1] and r[2] < hi1 and lo1 < r[3]:
                out.append(i)
        return out

    def covered(self, fp: Footprint, is_write: bool, clock: list[int], rows) -> list[int]:
        """The live rows among ``rows`` that ``fp`` (exact) covers and that happen before an
        instance of vector clock ``clock``, unless that access only reads and they write."""
        boxes = len(fp.lo) > 2
        lo0, hi0, lo1, hi1 = fp.box
        entries, krows = self.entries, self.rows
        out = []
        for i in rows:
            e = entries[i]
            if e is None or not (is_write or not e[1]):
                continue
            r = krows[i]
            if r[0] < lo0 or r[1] > hi0 or r[2] < lo1 or r[3] > hi1 or \
                    (boxes and not fp.contains(e[0])):
                continue
            if r[5] <= clock[r[4]]:
                out.append(i)
        return out

    def live(self) -> list:
        """The entries not removed, oldest first."""
        return [e for e in self.entries if e is not None]

    def remove(self, rows: list[int]) -> None:
        entries, krows = self.entries, self.rows
        for i in rows:
            entries[i] = None
            krows[i] = _DEAD_ROW
        self.alive -= len(rows)
        if self.n > 64 and 2 * self.alive < self.n:
            self.keep([True] * self.alive)

    def epochs(self) -> list[tuple[int, int]]:
        """The epochs of the live rows, oldest first."""
        return [r[4:] for r, e in zip(self.rows, self.entries) if e is not None]

    def keep(self, mask) -> None:
        """Keep the live entries (oldest first) whose ``mask`` entry is true; compacts."""
        kept = [(e, r) for e, r in zip(self.entries, self.rows) if e is not None]
        kept = [t for t, k in zip(kept, mask) if k]
        self.gen += 1
        self.entries = [t[0] for t in kept]
        self.n = self.alive = len(kept)
        self.rows = [t[1] for t in kept]
        bound = self.bound = [0] * len(self.bound)
        boxes = {r[:4] for r in self.rows}
        self.key = boxes.pop() if len(boxes) == 1 else None
        for r in self.rows:
            if r[5] > bound[r[4]]:
                bound[r[4]] = r[5]
        self.buckets = None
        if self.n >= INDEX_MIN:
            self._reindex()
