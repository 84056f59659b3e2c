"""Scoreboard of live memory accesses: the earlier accesses a new one may conflict with.

Used by ``nisa-schedule`` instead of testing every pair of ops.  :class:`ConflictIndex`
holds the accesses of the nodes seen so far (program order) and answers, for the accesses
of a new node, the entries it conflicts with -- exactly the pairs the pairwise test
(:func:`.dependence.same_iteration_overlap` on one base, overlapping placements
(:meth:`.effects.RegionCache.may_alias`) across bases, one side a write) reports, minus
*retired* entries:

- entries are found per base buffer through an interval index of their conservative
  linear element range (row-major over the base shape; :mod:`.box_index`: or of the dims
  after the first, for an access spanning several partitions), and across
  bases through their distinct placements (:mod:`.placement_slots`: listing, the latest
  query and retiring walk regions, not the many bases an allocator put on one region);
- a *whole* access ``W`` of a later node (its box is the whole buffer, or every dimension is
  ``[0, shape)``) retires the entries ``A`` it covers: same-base entries whose box provably
  lies inside the buffer, and every entry of another base whose placed region lies inside
  ``W``'s.  Then any later access that conflicts with ``A`` also conflicts with ``W``, so
  nothing is lost for a transitive question: a graph whose edges are the reported
  conflicts has the same transitive closure as the all-pairs graph (``W`` must be a write;
  with ``reads_retire_reads`` a whole read also retires covered reads, which keeps the
  LATEST conflicting entry of every index -- what a per-queue wait needs -- but not the
  closure);
- a *partial* write ``W`` with constant, in-bounds box likewise retires the same-base entries
  whose constant, in-bounds box provably lies inside ``W``'s (:func:`box_contains`): an
  unrolled loop that rewrites one row of a tile per iteration (``t[p:p+1, :]`` of every
  batch) keeps one live entry per row instead of one per write, so queries stay O(1)
  instead of growing with the trip count;
- an access ``Y`` meets every live entry of another base whose placement overlaps its own
  (the pairwise test is per placement), but lists fewer of them: with
  ``reads_retire_reads`` only the newest live entry of each (base, kind, tag) -- the latest
  conflicting entry of every tag is unchanged; :meth:`ConflictIndex.latest_conflicts`
  answers just that entry per tag, without the list -- and otherwise only those not older than
  the newest live, surely-run (``retiring``) write ``W`` of ``Y``'s own base and tag that
  ``Y`` meets.  Such an older entry ``E`` was live when ``W`` was queried and conflicts
  with ``W`` (a write on overlapping placements), so ``E`` reaches ``W``, which reaches
  ``Y``: the closure is kept.  (Tiles placed on partly overlapping bytes retire nothing of
  each other: each access of one listed every entry of the other, quadratic in them.);
- an access that may lie outside its buffer (a dimension provably beyond the shape, which
  a whole access cannot be shown to meet) is checked against every entry ever added.

Entries may carry a *tag* (``nisa-schedule``'s straight-line waits tag each with its
engine queue): a whole access retires only the entries of its own tag, so one index holds
what one index per tag would, and a query answers for every tag at once.  With
``tags_are_classes`` tags only sort the entries for listing: retiring and the "not older
than W" bound ignore them (the index answers as one without tags), and a query may ask
for the entries of some tags only (:meth:`ConflictIndex.conflicts` ``only``) without
walking the others' (but the same-base writes it meets, for that bound).

Costs: add O(accesses * log n) amortised; a query O(log n + candidates).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterator
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from .affine import value_range
from .dependence import (Acc, Box, _bound, _renamers, _shape, boxes_may_overlap,
                         same_iteration_overlap)
from ..dialects.effects import Region, RegionCache
from .box_index import BoxIndex, free_spans as _free_spans
from .placement_slots import SlotIndex


@dataclass(eq=False)
class Entry:
    """One access of node ``node`` (an index in program order)."""

    node: int
    acc: Acc
    span: tuple[int | None, int | None]     # linear element range, None = unbounded
    tag: Hashable = None
    sure: bool = True                       # its instruction surely runs (may retire)


_NO_LIVE: dict = {}     # read only: the live indexes of a (base, kind) without entries


@dataclass(frozen=True)
class Geometry:
    """What the scoreboard needs of one box, computed once: :func:`linear_span`,
    :func:`is_whole`, :func:`in_bounds`, :func:`may_escape`, and ``hull``: per dimension the
    ``(first, last)`` index the box may touch (None: unknown or unbounded; ``hull`` None:
    no per-dimension ranges) -- :func:`hulls_apart`."""

    span: tuple[int | None, int | None]
    whole: bool
    inside: bool
    escapes: bool
    hull: tuple | None = None

    @staticmethod
    def of(box: Box) -> Geometry:
        dims = _dim_ranges(box)
        hull = None if dims is None else tuple(
            None if r is None or r[0] is None or r[1] is None else (r[0], r[1]) for r in dims)
        return Geometry(linear_span(box, dims), is_whole(box), in_bounds(box, dims),
                        may_escape(box, dims), hull)


def hulls_apart(a: Geometry, b: Geometry) -> bool:
    """Two boxes of one base are apart in some dimension: their index ranges there
    (:func:`_dim_ranges`, every induction variable over its whole range) are disjoint.  Then
    :func:`.dependence.boxes_may_overlap` is False under any renaming of the induction
    variables (its per-dimension range of the offset difference lies inside the difference
    of these ranges: interval arithmetic, like terms combined), so the scoreboard skips that
    test -- most candidates of a big buffer read and written in column slices, whose linear
    spans all meet."""
    ha, hb = a.hull, b.hull
    if ha is None or hb is None:
        return False
    for ra, rb in zip(ha, hb):
        if ra is not None and rb is not None and (rb[0] > ra[1] or rb[1] < ra[0]):
            return True
    return False


def _dim_ranges(box: Box):
    """Per dimension ``(lo, hi_last_element, shape)`` of a box, None when unknown."""
    shape = _shape(box.base)
    if box.dims is None or len(shape) != len(box.dims):
        return None
    out = []
    for d, n in zip(box.dims, shape):
        if not d.known or n is None:
            out.append(None)
            continue
        if d.offset.terms:
            lo, hi = value_range(d.offset, lambda k: _bound(k, {}))
        else:
            lo = hi = d.offset.const
        ext = d.stride * (d.size - 1)
        out.append((lo, None if hi is None else hi + ext, n))
    return out


def linear_span(box: Box, dims=False) -> tuple[int | None, int | None]:
    """Conservative row-major linear element range of ``box`` in its base (both sides
    inclusive; ``(None, None)`` when some dimension is unknown).  ``dims``: the
    :func:`_dim_ranges` of ``box`` when already computed."""
    dims = _dim_ranges(box) if dims is False else dims
    if dims is None or any(r is None or r[0] is None or r[1] is None for r in dims):
        return None, None
    lo = hi = 0
    stride = 1
    for r_lo, r_hi, n in reversed(dims):
        lo += stride * r_lo
        hi += stride * r_hi
        stride *= n
    return lo, hi


def is_whole(box: Box) -> bool:
    """The box is the whole buffer: unknown (``dims is None``) or ``[0, n)`` in every dim."""
    if box.dims is None:
        return True
    shape = _shape(box.base)
    return len(shape) == len(box.dims) and all(
        d.known and d.offset.is_const and d.offset.const == 0 and d.stride == 1 and d.size == n
        for d, n in zip(box.dims, shape))


def in_bounds(box: Box, dims=False) -> bool:
    """Every element of ``box`` provably lies inside its base buffer."""
    dims = _dim_ranges(box) if dims is False else dims
    return dims is not None and all(r is not None and r[0] is not None and r[1] is not None
                                    and r[0] >= 0 and r[1] <= r[2] - 1 for r in dims)


def may_escape(box: Box, dims=False) -> bool:
    """Some dimension of ``box`` lies provably outside the base (a whole access of the
    base is then not known to meet it)."""
    dims = _dim_ranges(box) if dims is False else dims
    return dims is not None and any(r is not None and ((r[0] is not None and r[0] > r[2] - 1)
                                                       or (r[1] is not None and r[1] < 0))
                                    for r in dims)


def _const_dims(box: Box) -> bool:
    """Every dimension of ``box`` is known with a constant offset."""
    return box.dims is not None and all(d.known and d.offset.is_const for d in box.dims)


def box_contains(outer: Box, inner: Box) -> bool:
    """Every element of ``inner`` is an element of ``outer`` (same base; both boxes with
    constant offsets, else False).  Exact per dimension: ``inner``'s indices
    ``io + is * m`` (``m < isz``) all lie in ``{oo + os * k, k < osz}``."""
    if outer.base is not inner.base or not (_const_dims(outer) and _const_dims(inner)) \
            or len(outer.dims) != len(inner.dims):
        return False
    for do, di in zip(outer.dims, inner.dims):
        oo, os_, osz = do.offset.const, do.stride, do.size
        io, is_, isz = di.offset.const, di.stride, di.size
        if isz <= 0:
            continue
        last_o, last_i = oo + os_ * (osz - 1), io + is_ * (isz - 1)
        if osz <= 0 or io < oo or last_i > last_o:
            return False
        if osz > 1 and os_ > 1 and ((io - oo) % os_ or (isz > 1 and is_ % os_)):
            return False
    return True


def _inside(inner: Region, outer: Region) -> bool:
    return (inner.space == outer.space and inner.partitions > 0 and inner.size > 0
            and outer.partition <= inner.partition
            and inner.partition + inner.partitions <= outer.partition + outer.partitions
            and outer.offset <= inner.offset and inner.offset + inner.size <= outer.offset + outer.size)


def _geometry(acc: Acc) -> Geometry:
    """:class:`Geometry` of ``acc``'s box, computed once per box object (kept on it,
    outside its fields; boxes are immutable), so indexes sharing boxes share it."""
    box = acc.box
    geo = box.__dict__.get("_geometry")
    if geo is None:
        geo = Geometry.of(box)
        object.__setattr__(box, "_geometry", geo)
    return geo


_BOTH, _WRITES = (True, False), (True,)     # the entry kinds (is_write) an access may meet


class ConflictIndex:
    """Live accesses of earlier nodes (see the module docstring).

    Args:
        common: the loops around every node (outermost first): overlap is tested for the
            same iteration of them.
        regions: the placed-region cache of the function.
        reads_retire_reads: whole reads also retire covered reads (latest-entry queries).
        tags_are_classes: tags only select what a query lists (module docstring).
    """

    def __init__(self, common: list[Operation], regions: RegionCache, reads_retire_reads: bool = False,
                 tags_are_classes: bool = False):
        self.common = common
        self.regions = regions
        self.reads_retire_reads = reads_retire_reads
        self.classes = tags_are_classes
        assert not (tags_are_classes and reads_retire_reads), "internal: unsupported mix"
        # (base, is_write) -> tag -> the live entries of that tag
        self.live: dict[tuple[SSAValue, bool], dict[Hashable, BoxIndex]] = defaultdict(dict)
        self.count: dict[SSAValue, int] = defaultdict(int)
        self.history: dict[SSAValue, list[Entry]] = defaultdict(list)
        self.placed_history: dict[str, list[SSAValue]] = defaultdict(list)
        self._rename = _renamers(common, None, 0)   # same iteration of the common loops
        self.slots = SlotIndex(regions, newest=reads_retire_reads)   # placed bases by region

    @staticmethod
    def geometry(acc: Acc) -> Geometry:
        """:class:`Geometry` of ``acc``'s box (see :func:`_geometry`)."""
        return _geometry(acc)

    # ----------------------------------------------------------------------- queries

    def conflicts(self, accs: list[Acc], only: frozenset | None = None) -> list[Entry]:
        """Live (or, for an access that may escape its buffer, any earlier) entries that
        conflict with one of ``accs``, but of another base's entries only those the module
        docstring says (the newest of each kind and tag with ``reads_retire_reads``, else
        those not older than a surely-run write the access meets); an entry may be listed
        more than once.  ``only`` (with ``tags_are_classes``): list the entries of these
        tags only (the same as filtering the full answer)."""
        out: list[Entry] = []
        classes = self.classes
        live = self.live          # read with .get: a query adds no empty index
        region_of = self.regions.region
        latest = self.reads_retire_reads
        ra, rb = self._rename
        for y in accs:
            geo = _geometry(y)
            base, box = y.box.base, y.box
            kinds = _BOTH if y.is_write else _WRITES
            lo, hi = geo.span
            free = _free_spans(geo, base)[1]
            since: dict[Hashable, int] = {}     # tag -> newest surely-run write y meets
            for kind in kinds:
                by_tag = live.get((base, kind))
                if by_tag:
                    for tag, idx in by_tag.items():
                        wanted = only is None or tag in only
                        if idx and (wanted or kind):
                            key = None if classes else tag
                            for e in idx.query_box(lo, hi, free):
                                if (wanted or (e.sure and e.node > since.get(key, -1))) \
                                        and not hulls_apart(_geometry(e.acc), geo) \
                                        and boxes_may_overlap(e.acc.box, box, ra, rb):
                                    if wanted:
                                        out.append(e)
                                    if kind and e.sure and e.node > since.get(key, -1):
                                        since[key] = e.node
            region = region_of(base)
            if region is not None:
                # by slot, and per kind and tag only the bases with such live entries
                for s in self.slots.meeting(region):
                    for (kind, tag), bases in s.bases.items():
                        if not bases or not (kind or y.is_write) \
                                or (only is not None and tag not in only):
                            continue
                        key = None if classes else tag
                        for c in bases:
                            if c is base:
                                continue
                            idx = live[(c, kind)][tag]
                            if latest:
                                e = idx.last()
                                if e is not None:
                                    out.append(e)
                            elif key in since:
                                out.extend(idx.newer(since[key]))
                            else:
                                out.extend(idx.items())
            if geo.escapes:
                out.extend(e for e in self._all_conflicts(y, region)
                           if only is None or e.tag in only)
        return out

    def latest_conflicts(self, y: Acc) -> dict[Hashable, Entry]:
        """Per tag, the newest entry of :meth:`conflicts` ``([y])`` (``reads_retire_reads``
        only): the first listed of those of the largest ``node`` -- what filtering that list
        gives, in the order its tags first appear -- without building the list.  Listed
        entries no newer than the tag's best so far are skipped before their overlap test,
        and so are slot heaps whose top (a bound on their live nodes) is no newer."""
        assert self.reads_retire_reads and not self.classes, "internal: latest mode only"
        best: dict[Hashable, Entry] = {}
        live = self.live
        ra, rb = self._rename
        geo = _geometry(y)
        base, box = y.box.base, y.box
        kinds = _BOTH if y.is_write else _WRITES
        lo, hi = geo.span
        free = _free_spans(geo, base)[1]
        for kind in kinds:
            by_tag = live.get((base, kind))
            if by_tag:
                for tag, idx in by_tag.items():
                    if idx:
                        for e in idx.query_box(lo, hi, free):
                            cur = best.get(tag)
                            if (cur is None or e.node > cur.node) \
                                    and not hulls_apart(_geometry(e.acc), geo) \
                                    and boxes_may_overlap(e.acc.box, box, ra, rb):
                                best[tag] = e
        region = self.regions.region(base)
        if region is not None:
            slots = self.slots
            writes = y.is_write
            for s in slots.meeting(region):
                for key, heap in s.heaps.items():
                    kind, tag = key
                    if heap and (kind or writes):
                        top = heap[0]
                        cur = best.get(tag)     # the heap's top bounds its valid nodes
                        if cur is not None and cur.node >= -top[0]:
                            continue
                        if top[2] is not base:  # a valid top of another base: the answer
                            idx = live.get((top[2], kind), _NO_LIVE).get(tag)
                            e = idx.last() if idx else None
                            if e is not None and e.node == -top[0]:
                                best[tag] = e   # (newer than cur: cur.node < -top[0])
                                continue
                        e = slots.newest(s, key, base, _last_of(live, kind, tag))
                        if e is not None:
                            cur = best.get(tag)
                            if cur is None or e.node > cur.node:
                                best[tag] = e
        if geo.escapes:
            for e in self._all_conflicts(y, region):
                cur = best.get(e.tag)
                if cur is None or e.node > cur.node:
                    best[e.tag] = e
        return best

    def _all_conflicts(self, y: Acc, region: Region | None) -> Iterator[Entry]:
        for e in self.history[y.base]:
            if (e.acc.is_write or y.is_write) and same_iteration_overlap(e.acc.box, y.box, self.common):
                yield e
        if region is not None:
            for c in self.placed_history[region.space]:
                if c is not y.base and self.regions.region(c).overlaps(region):
                    yield from (e for e in self.history[c] if e.acc.is_write or y.is_write)

    # ------------------------------------------------------------------------ update

    def add(self, node: int, accs: list[Acc], tag: Hashable = None,
            retiring: frozenset[int] | None = None) -> None:
        """Retire the earlier entries of ``tag`` the whole accesses of ``node`` (after every
        earlier node) cover, and those its constant partial writes contain, then record its
        accesses under ``tag``.  (Retiring first: the
        node's own entries, which it never retires, are not walked once per whole access --
        a loop node with many whole accesses of placed-overlapping buffers made that
        quadratic in its accesses.)  ``retiring``: the ``id`` of the accesses that may
        retire entries (default: all; an access of an instruction that may not run, in a
        loop without iterations or an ``if``, must not)."""
        for a in accs:
            if retiring is not None and id(a) not in retiring:
                continue
            if a.is_write or self.reads_retire_reads:
                geo = _geometry(a)
                if geo.whole:
                    self._retire_covered(node, a, tag)
                elif geo.inside and _const_dims(a.box):
                    self._retire_contained(node, a, geo, tag)
        live, history = self.live, self.history
        for a in accs:
            geo = _geometry(a)
            span = geo.span
            e = Entry(node, a, span, tag, retiring is None or id(a) in retiring)
            base = a.box.base
            by_tag = live[(base, a.is_write)]
            idx = by_tag.get(tag)
            if idx is None:
                idx = by_tag[tag] = BoxIndex()
            idx.insert(span[0], span[1], e, node, _free_spans(geo, base)[0])
            history[base].append(e)
            self._mark_live(base, +1)
            self.slots.entry_added(base, a.is_write, tag, node)

    def _mark_live(self, base: SSAValue, delta: int) -> None:
        before = self.count[base]
        self.count[base] = before + delta
        region = self.regions.region(base)
        if region is None:
            return
        if before == 0 and delta > 0:
            self.slots.base_live(base, True)
            if len(self.history[base]) == 1:
                self.placed_history[region.space].append(base)
        elif before + delta == 0:
            self.slots.base_live(base, False)

    def _retire(self, e: Entry) -> None:
        base, kind = e.acc.base, e.acc.is_write
        idx = self.live[(base, kind)][e.tag]
        if e in idx:
            was_last = self.slots.keep_heaps and idx.last() is e
            idx.discard(e)
            if not idx:
                self.slots.tag_emptied(base, kind, e.tag)
            elif was_last:                  # the base's newest entry of this tag changed
                s = self.slots.slot(base)
                if s is not None:
                    self.slots.push(s, (kind, e.tag), base, idx.last().node)
            self._mark_live(base, -1)

    def _retire_covered(self, node: int, w: Acc, tag: Hashable) -> None:
        kinds = (True, False) if w.is_write else (False,)
        exact_all = w.box.dims is None
        for kind in kinds:
            for e in self._live_items(w.base, kind, tag):
                if e.node < node and (exact_all or _geometry(e.acc).inside):
                    self._retire(e)
        region = self.regions.region(w.base)
        if region is None:
            return
        for s in self.slots.meeting(region):    # (kept as is: retiring may empty a slot)
            if not _inside(s.region, region):
                continue
            for key, bases in list(s.bases.items()):
                if key[0] in kinds and (self.classes or key[1] == tag) and bases:
                    for c in list(bases):
                        if c is not w.base:
                            for e in self.live[(c, key[0])][key[1]].items():
                                if e.node < node:
                                    self._retire(e)

    def _retire_contained(self, node: int, w: Acc, geo: Geometry, tag: Hashable) -> None:
        """Retire the earlier same-base entries of ``tag`` whose box lies inside the
        partial box of ``w`` (a write, or with ``reads_retire_reads`` a read retiring
        reads): a later access conflicting with one of them conflicts with ``w``."""
        kinds = (True, False) if w.is_write else (False,)
        for kind in kinds:
            for idx in self._live_indexes(w.base, kind, tag):
                for e in idx.query_box(*geo.span, _free_spans(geo, w.base)[1]):
                    if e.node < node and _geometry(e.acc).inside and box_contains(w.box, e.acc.box):
                        self._retire(e)

    def _live_indexes(self, base: SSAValue, kind: bool, tag: Hashable) -> list[BoxIndex]:
        """The live indexes a write of ``tag`` retires from: its tag's, or every tag's
        with ``tags_are_classes``."""
        by_tag = self.live.get((base, kind), _NO_LIVE)
        if self.classes:
            return [idx for idx in by_tag.values() if idx]
        idx = by_tag.get(tag)
        return [idx] if idx else []

    def _live_items(self, base: SSAValue, kind: bool, tag: Hashable) -> list[Entry]:
        return [e for idx in self._live_indexes(base, kind, tag) for e in idx.items()]


def _last_of(live: dict, kind: bool, tag: Hashable):
    """``base -> `` its newest live entry of this kind and tag (None: none)."""
    def last(base: SSAValue) -> Entry | None:
        idx = live.get((base, kind), _NO_LIVE).get(tag)
        return idx.last() if idx else None
    return last
