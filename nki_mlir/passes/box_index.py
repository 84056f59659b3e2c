"""The live entries of one base buffer, found by their row-major span or by their free dims.

:class:`.conflict_index.ConflictIndex` finds the earlier entries of a base an access may
overlap through an :class:`.interval_index.IntervalIndex` of their conservative row-major
element span.  An on-chip tile's first dimension is its partition dimension, which most
accesses cover whole: then every span starts in row 0 and ends in the last row, so all
spans meet -- a big SBUF buffer read and written in column slices (``t[:, c:c + 512]``, a
projection's output over its hidden dimension) listed every live entry of the buffer for
every access, which the per-dimension test (:func:`.conflict_index.hulls_apart`) then
rejected one by one: quadratic in the accesses of the buffer.

:class:`BoxIndex` keeps, beside that span index, a second one of each entry's *free span*:
the row-major span of its per-dimension index ranges (``Geometry.hull``) over the dims after
the first.  Two boxes whose ranges meet in every dimension have a common point, whose free
linear index lies in both free spans; so an entry missing from the free index's answer is
apart from the access in some dimension and the caller's test would reject it.  A query
whose box spans more than one index of the first dimension looks entries up there
(:meth:`BoxIndex.query_box`) and keeps those the span index would list, in its order
(:meth:`.interval_index.IntervalIndex.among`): the caller sees the same candidates, in the
same order, minus entries its per-dimension test rejects.  Entries with an unknown or empty
range in some dimension sit unbounded in the free index (always candidates); a query with
one, a rank-1 base or a single first index uses the span index as before.
"""
from __future__ import annotations

from collections.abc import Hashable

from xdsl.ir import SSAValue

from .dependence import _shape
from .interval_index import IntervalIndex

_WIDE = (None, None)


class BoxIndex(IntervalIndex):
    """An :class:`IntervalIndex` of row-major spans plus one of free spans (module
    docstring); every inherited query (``query``, ``items``, ``last``, ``newer``) is the
    span index's."""

    def __init__(self):
        super().__init__()
        self._free = IntervalIndex()

    def insert(self, lo: int | None, hi: int | None, item: Hashable, rank: int = 0,
               free: tuple[int | None, int | None] = _WIDE) -> None:
        """:meth:`IntervalIndex.insert`; ``free``: the item's free span
        (:func:`entry_free_span`; unbounded by default: always a candidate)."""
        super().insert(lo, hi, item, rank)
        self._free.insert(free[0], free[1], item)

    def discard(self, item: Hashable) -> None:
        super().discard(item)
        self._free.discard(item)

    def query_box(self, lo: int | None, hi: int | None,
                  free: tuple[int, int] | None) -> list[Hashable]:
        """``query(lo, hi)`` (``free`` None), else those of its items whose free span meets
        ``free`` (:func:`query_free_span`), in the same order."""
        if free is None:
            return self.query(lo, hi)
        return self.among(self._free.query(free[0], free[1]), lo, hi)


def _free_span(hull, shape) -> tuple[int, int] | None:
    """Row-major span of ``hull`` over the dims after the first (None: a range unknown or
    empty, or fewer than two dims)."""
    if hull is None or len(hull) < 2 or len(shape) != len(hull):
        return None
    lo = hi = 0
    stride = 1
    for d in range(len(hull) - 1, 0, -1):
        r = hull[d]
        if r is None or r[1] < r[0] or shape[d] is None:
            return None
        lo += stride * r[0]
        hi += stride * r[1]
        stride *= shape[d]
    r0 = hull[0]
    if r0 is None or r0[1] < r0[0]:
        return None
    return lo, hi


def entry_free_span(hull, shape) -> tuple[int | None, int | None]:
    """The free span an entry is filed under in :class:`BoxIndex` (unbounded when unknown)."""
    span = _free_span(hull, shape)
    return _WIDE if span is None else span


def query_free_span(hull, shape) -> tuple[int, int] | None:
    """The free span a query looks entries up by, or None to use the row-major span
    (unknown, or a single index of the first dimension, where that span is the narrower)."""
    span = _free_span(hull, shape)
    if span is None or hull[0][0] == hull[0][1]:
        return None
    return span


def free_spans(geo, base: SSAValue) -> tuple:
    """``(entry_free_span, query_free_span)`` of a :class:`.conflict_index.Geometry` of a box
    of ``base``, computed once per geometry (kept on it, outside its fields)."""
    out = geo.__dict__.get("_free")
    if out is None:
        shape = _shape(base)
        out = (entry_free_span(geo.hull, shape), query_free_span(geo.hull, shape))
        object.__setattr__(geo, "_free", out)
    return out
