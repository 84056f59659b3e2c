"""Byte footprints of tensor accesses, for the interpreter's hazard checks (:mod:`.hazards`).

Every tensor the interpreter touches is a NumPy view of a *root* array that owns the
memory: the run's SBUF / PSUM byte arrays (``uint8[128, bytes]``, :mod:`.memory`), a private
array of an unplaced on-chip tensor, an HBM tensor (argument or ``nisa.alloc``), or a
register.  A :class:`Footprint` says which bytes of its root a view covers:

- ``root``: the owning array (compared by identity);
- ``lo`` / ``hi``: a bounding box in the root's *byte geometry* -- the root's shape with the
  last dimension counted in bytes (``(128, 229376)`` for SBUF, ``(256, 2048)`` for an
  ``f32[256, 512]`` HBM tensor) -- one half-open range per root dimension;
- ``exact``: the view covers every byte of its box (dense tiles, transposed tiles), so two
  exact boxes overlap exactly when their byte sets do.  Otherwise (stepped views, views that
  cross the root's rows) :func:`bytes_overlap` compares the byte sets themselves.

Units: bytes; partitions are the first dimension of on-chip roots.
"""
from __future__ import annotations

import numpy as np

#: ``np.byte_bounds`` moved to ``np.lib.array_utils`` in NumPy 2.0 (removed from ``np``)
_byte_bounds = getattr(getattr(np.lib, "array_utils", None), "byte_bounds", None) \
    or np.byte_bounds


def root_of(a: np.ndarray) -> np.ndarray:
    """The array owning ``a``'s memory (following ``.base`` through views and ``as_strided``)."""
    while True:
        b = a.base
        if isinstance(b, np.ndarray):
            a = b
            continue
        inner = getattr(b, "base", None)  # as_strided's DummyArray keeps the array in .base
        if b is not None and isinstance(inner, np.ndarray):
            a = inner
            continue
        return a


def address(a: np.ndarray) -> int:
    """The address of ``a``'s first element."""
    return a.__array_interface__["data"][0]


class Footprint:
    """The bytes of ``root`` a view covers (see the module docstring)."""

    __slots__ = ("root", "lo", "hi", "exact", "offset", "shape", "strides", "itemsize", "key",
                 "box")

    def __init__(self, root, lo, hi, exact, offset, shape, strides, itemsize):
        self.root, self.lo, self.hi, self.exact = root, lo, hi, exact
        self.offset, self.shape, self.strides, self.itemsize = offset, shape, strides, itemsize
        #: ``(lo, hi)``: the bounding box as one hashable key
        self.key = (lo, hi)
        #: ``(lo0, hi0, lo_last, hi_last)``: the box on the first and last dimensions
        self.box = (lo[0], hi[0], lo[-1], hi[-1])

    def overlaps(self, other: Footprint) -> bool:
        """Whether the bounding boxes intersect (same root assumed)."""
        for a0, a1, b0, b1 in zip(self.lo, self.hi, other.lo, other.hi):
            if a0 >= b1 or b0 >= a1:
                return False
        return True

    def contains(self, other: Footprint) -> bool:
        """Whether this exact footprint covers every byte of ``other``'s box."""
        if not self.exact:
            return False
        for a0, a1, b0, b1 in zip(self.lo, self.hi, other.lo, other.hi):
            if b0 < a0 or b1 > a1:
                return False
        return True

    def byte_addresses(self) -> np.ndarray:
        """Sorted unique byte offsets from the root's start that the view covers."""
        addr = np.array([self.offset], np.int64)
        for n, s in zip(self.shape, self.strides):
            addr = np.add.outer(addr, np.arange(n, dtype=np.int64) * s).reshape(-1)
        addr = np.add.outer(addr, np.arange(self.itemsize, dtype=np.int64)).reshape(-1)
        return np.unique(addr)


def geometry(root: np.ndarray) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The root's byte geometry: (shape, strides) with the last dimension in bytes."""
    if root.ndim == 0:
        return (root.itemsize,), (1,)
    shape = root.shape[:-1] + (root.shape[-1] * root.itemsize,)
    return shape, root.strides[:-1] + (1,)


#: footprints' geometry by ``(root shape, root itemsize, offset, shape, strides, itemsize)``
#: (:func:`footprint`; it depends on nothing else, so views of new arrays hit it too)
_GEOMETRY: dict[tuple, tuple] = {}
#: entries :data:`_GEOMETRY` keeps before it is cleared
GEOMETRY_MAX = 1 << 14


def footprint(a: np.ndarray, root: np.ndarray | None = None,
              base: int | None = None) -> Footprint | None:
    """The :class:`Footprint` of ``a`` (None for an empty view or an unsupported root);
    ``base``: the root's :func:`address`, when the caller knows it."""
    root = root_of(a) if root is None else root
    geom = view_geometry(a, root, base)
    return None if geom is None else Footprint(root, *geom)


def view_geometry(a: np.ndarray, root: np.ndarray, base: int | None = None) -> tuple | None:
    """The arguments of :class:`Footprint` after ``root`` for the view ``a`` of ``root``
    (None for an empty view or an unsupported root): they depend on ``a``'s place in
    ``root`` only, so a caller may keep them while ``a`` lives."""
    if a.size == 0 or not root.flags.c_contiguous:
        return None
    return view_geometry_at(a, root, address(a) - (address(root) if base is None else base))


def view_geometry_at(a: np.ndarray, root: np.ndarray, off: int) -> tuple | None:
    """:func:`view_geometry` of the view ``a`` starting ``off`` bytes into ``root`` (known
    without reading addresses, e.g. from a subview's start index)."""
    if a.size == 0 or not root.flags.c_contiguous:
        return None
    key = (root.shape, root.itemsize, off, a.shape, a.strides, a.itemsize)
    hit = _GEOMETRY.get(key)
    if hit is None:
        if len(_GEOMETRY) >= GEOMETRY_MAX:
            _GEOMETRY.clear()
        hit = _GEOMETRY[key] = _geometry_of(a, root, off)
    return hit


def _geometry_of(a: np.ndarray, root: np.ndarray, off: int) -> tuple:
    """``(lo, hi, exact, offset, shape, strides, itemsize)`` of :func:`footprint`."""
    rshape, rstrides = geometry(root)
    item = a.itemsize
    nd = len(rshape)
    coords, rest = [], off
    for s in rstrides:
        c, rest = divmod(rest, s)
        coords.append(c)
    ext = [0] * nd
    ok = off >= 0
    distinct = item
    for n, s in zip(a.shape, a.strides):
        if n <= 1 or s == 0:
            continue
        distinct *= n
        if s < 0:
            ok = False
            break
        for j, rs in enumerate(rstrides):
            if s % rs == 0:
                ext[j] += (n - 1) * (s // rs)
                break
    lo = tuple(coords)
    hi = tuple(c + e + (item if j == nd - 1 else 1) for j, (c, e) in enumerate(zip(coords, ext)))
    if ok and all(h <= r for h, r in zip(hi, rshape)):
        vol = 1
        for l0, h0 in zip(lo, hi):
            vol *= h0 - l0
        return lo, hi, vol == distinct, off, a.shape, a.strides, item
    # not a box of the root's dimensions: the rows (first dimension) it touches, whole rows
    low, high = _byte_bounds(a)
    base = address(root)
    r0 = max((low - base) // rstrides[0], 0)
    r1 = min((high - base - 1) // rstrides[0] + 1, rshape[0])
    lo = (r0,) + (0,) * (nd - 1)
    hi = (r1,) + tuple(rshape[1:])
    return lo, hi, False, off, a.shape, a.strides, item


def bytes_overlap(a: Footprint, b: Footprint) -> bool:
    """Whether two footprints of the same root share a byte (exact)."""
    if not a.overlaps(b):
        return False
    if a.exact and b.exact:
        return True
    return bool(np.intersect1d(a.byte_addresses(), b.byte_addresses(), assume_unique=True).size)


def mirror_view(mirror: np.ndarray, fp: Footprint, scale: int = 1) -> np.ndarray:
    """The elements of ``mirror`` (one per byte of ``fp.root``, flat, ``scale`` bytes each)
    under ``fp``'s bytes, shaped ``fp.shape + (itemsize,)`` (a writable view)."""
    start = mirror[fp.offset:]
    strides = tuple(s * scale for s in fp.strides) + (scale,)
    return np.lib.stride_tricks.as_strided(start, fp.shape + (fp.itemsize,), strides)
