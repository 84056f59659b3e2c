"""The physical memory model of one NeuronCore, for the ISA interpreter.

- **HBM** tensors are plain NumPy arrays (kernel arguments, or fresh arrays for HBM
  ``nisa.alloc``\\ s).
- **SBUF** is one ``uint8`` array of shape ``(128, SBUF_BYTES[target])``: 128 partitions of
  192 KiB (trn1), 224 KiB (trn2) or 256 KiB (trn3) each (NKI architecture guide (nki/guides/architecture), from the
  NKI "Trainium architecture" guides).
- **PSUM** is ``(128, 16384)`` bytes: 8 banks of 2 KiB per partition.  A parallel byte array
  of the same shape holds the "written by a matmul since allocation" flags that implement
  ``nc_matmul(accumulate=None)`` (first write overwrites, later writes add).

A placed on-chip tensor (``nisa.alloc {nkim.partition = p0, nkim.offset = off}`` of
``memref<P x d1 x ... x T>``) is a typed NumPy *view* of rows ``[p0, p0+P)`` and bytes
``[off, off + d1*...*itemsize(T))`` of those arrays, so two placements that overlap really
share bytes: writes through one view are visible through the other, which is how allocation
bugs become wrong numbers.  Unplaced tensors get private arrays.

Fresh allocations are filled with sentinels like the NKI simulator does (NKI simulator guide (nki/guides/nki_simulator)): NaN for floats, ``4`` for integers (the raw byte ``4`` for ``bool``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .. import dtypes
#: partitions, physical SBUF bytes per partition per target, PSUM banks (nki_mlir.targets)
from ..targets import PARTITIONS, PSUM_BANK_BYTES, PSUM_BANKS, PSUM_BYTES, SBUF_BYTES  # noqa: F401
#: most typed views a :class:`Memory` remembers (:meth:`Memory.view`)
VIEWS_MAX = 4096
#: bytes of blocks (:mod:`.blocks`) a :class:`Memory` keeps; past it, they are dropped at
#: the start of the next run (:meth:`Memory.trim`)
BLOCK_BYTES_MAX = 96 << 20
#: the fill value of fresh integer tensors (the NKI simulator's sentinel)
INT_SENTINEL = 4

_FLAG_DTYPES = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                8: np.dtype(np.uint64)}


class MemoryFault(Exception):
    """A placement or access outside a memory; the interpreter re-raises it located at the op."""


def fill_sentinel(a: np.ndarray) -> None:
    """Fill ``a`` in place with the uninitialized-memory sentinel (NaN, or 4 for ints)."""
    sentinel_filler(a.dtype)(a)


def sentinel_filler(dt: np.dtype):
    """``fill(a)``: fill an array of dtype ``dt`` in place with the uninitialized-memory
    sentinel (NaN, or 4 for ints), with the dtype test done once (at decode time).

    A float ``dt`` is filled through an unsigned view with the bits of ``dt``'s NaN: the
    same bytes as ``a.fill(nan)``, ~4x faster for the ``ml_dtypes`` types (bfloat16, fp8),
    whose ``fill`` converts the scalar per element."""
    dt = np.dtype(dt)
    if dtypes.is_float(dt):
        nan = dt.type(np.nan)
        udt = _FLAG_DTYPES.get(dt.itemsize)
        if udt is None:
            return lambda a: a.fill(nan)
        bits = np.array(nan, dt).view(udt)[()]
        return lambda a: a.view(udt).fill(bits)
    if dt == np.bool_:
        return lambda a: a.view(np.uint8).fill(INT_SENTINEL)
    return lambda a: a.fill(INT_SENTINEL)


def _fill_flags(fv: np.ndarray, on: bool) -> None:
    """Write every flag of the view ``fv`` (as bytes when its rows are contiguous, ~3x
    faster than as wider integers)."""
    if fv.ndim and fv.strides[-1] == fv.itemsize:
        fv.view(np.uint8).fill(0xFF if on else 0)
    else:
        fv.fill(np.iinfo(fv.dtype).max if on else 0)


def _inside(r: tuple, outer: tuple) -> bool:
    """The flags rectangle ``r`` lies inside ``outer`` (both :attr:`Memory.rects` entries,
    in one flags array)."""
    return outer[2] <= r[2] and r[3] <= outer[3] and outer[4] <= r[4] and r[5] <= outer[5]


def flag_dtype(dt: np.dtype) -> np.dtype:
    """The unsigned dtype with ``dt``'s itemsize, used to view PSUM matmul-written flags."""
    return _FLAG_DTYPES[np.dtype(dt).itemsize]


def flag_set_value(dt: np.dtype) -> int:
    """All-ones for the flag dtype of ``dt`` (every byte of the element marked)."""
    return int(np.iinfo(flag_dtype(dt)).max)


def free_elems(shape: Sequence[int]) -> int:
    """Elements per partition of an on-chip tensor of ``shape`` (product of dims 1..)."""
    n = 1
    for d in shape[1:]:
        n *= int(d)
    return n


def typed_view(rows: np.ndarray, shape: Sequence[int], dt: np.dtype) -> np.ndarray:
    """View the ``uint8`` byte rows ``rows[P, nbytes]`` as a ``dt`` tensor of ``shape`` (no copy)."""
    return rows.view(dt).reshape(tuple(shape), copy=False)


def resolve_psum_offset(offset: int | None, bank: int | None) -> int:
    """Byte offset in a PSUM partition from ``nkim.offset`` / ``nkim.bank``.

    ``nkim.offset`` is bytes from the start of the partition.  If it lies inside bank 0
    while ``nkim.bank`` names another bank, it is taken as relative to that bank.
    """
    if offset is None:
        return (bank or 0) * PSUM_BANK_BYTES
    if bank is not None and offset // PSUM_BANK_BYTES != bank:
        if offset < PSUM_BANK_BYTES:
            return bank * PSUM_BANK_BYTES + offset
        raise MemoryFault(f"nkim.offset={offset} lies in PSUM bank {offset // PSUM_BANK_BYTES}, "
                          f"but nkim.bank={bank}")
    return offset


class Memory:
    """SBUF, PSUM and the PSUM matmul-written flags of one NeuronCore for one ``Program.run``.

    Attributes:
        target: ``"trn1"``, ``"trn2"`` or ``"trn3"``.
        sbuf: ``uint8[128, SBUF_BYTES[target]]``.
        psum: ``uint8[128, 16384]``.
        psum_flags: ``uint8[128, 16384]``; non-zero bytes mark elements written by a matmul.
    """

    def __init__(self, target: str = "trn2"):
        if target not in SBUF_BYTES:
            raise MemoryFault(f"unknown target '{target}' (expected one of {', '.join(SBUF_BYTES)})")
        self.target = target
        self.sbuf = np.zeros((PARTITIONS, SBUF_BYTES[target]), np.uint8)
        self.psum = np.zeros((PARTITIONS, PSUM_BYTES), np.uint8)
        self.psum_flags = np.zeros((PARTITIONS, PSUM_BYTES), np.uint8)
        #: typed views of placed tensors by (alloc token, copy), reused across runs
        self.views: dict = {}
        #: ``memref.subview`` / static ``memref.reinterpret_cast`` results by (op token,
        #: offsets...): ``(source array, view, flag view)`` (:mod:`.views`), reused while the
        #: source is the same array (they keep the caller's arguments alive while this
        #: memory is pooled, :mod:`.program`)
        self.subviews: dict = {}
        #: the same for the views of a source made afresh every run (an unplaced
        #: ``nisa.alloc``: a kernel's output), which no later run can reuse: dropped at the
        #: end of the run (:meth:`end_run`), so the caller's output is freed when the caller
        #: drops it (and the next run's output may reuse its memory, still in cache)
        self.run_views: dict = {}
        #: ``id(view) -> (view, source, start index)`` of the kept ``memref.subview`` results
        #: that are unit-step boxes of their source (:mod:`.views`), for
        #: :func:`.hbm_fill.covered` (an array's address costs more than the lookup)
        self.origins: dict = {}
        #: ``(flags view, all set?)`` of the PSUM flags view whose bytes were written last,
        #: while no other flag byte has been written since (:meth:`set_flags`), else None
        self.known: tuple | None = None
        #: the byte rectangle of the flags view of each placed PSUM tile (:meth:`view`):
        #: ``id(view) -> (view, id(flags array), first row, end row, first byte, end byte,
        #: row bytes of the flags array, exact)``; ``exact``: the view's bytes are the whole
        #: rectangle (else they lie inside it)
        self.rects: dict = {}
        #: the same for the kept subviews of those flags views (:meth:`sub_rect`); at most
        #: ``VIEWS_MAX``, then it starts over
        self.subrects: dict = {}
        #: flag writes not yet done (:meth:`set_flags`): ``id(view) -> (view, on, rect)``,
        #: of views with a rectangle; no two of them overlap
        self.pending: dict = {}
        #: the same entries grouped by the flags array they lie in (``id(array) -> {id(view):
        #: entry}``): a write checks for overlaps only the pending writes in its own array
        self.pending_in: dict = {}
        #: contiguous storage of groups of placed tensors (:mod:`.blocks`) by
        #: ``(space, lo, hi)``: ``(data, flags)`` byte arrays of ``[128, hi - lo]``
        self.blocks: dict = {}
        #: ids of the block arrays (data and flags), for :meth:`owns`
        self.block_ids: dict[int, np.ndarray] = {}
        self.block_bytes = 0
        #: the float32 storage of placed bf16 / fp8 tensors with ``NKI_PRECISE_FP=0``
        #: (:meth:`wide_region`) by ``(space, scale)``: ``uint8[128, capacity * scale]``
        self.wide: dict = {}

    def set_flags(self, fv: np.ndarray, on: bool) -> None:
        """Set (``on``: matmul-written) or clear every PSUM matmul-written flag of the view
        ``fv``, and remember ``fv``'s state for :meth:`flags_state`.  The flags of a placed
        tile's own view (:attr:`rects`) are written lazily: the write stays pending until a
        write to an overlapping view, a read of flag bytes (:meth:`settle`) or the end of
        a queue-mode run (a program-order run leaves it pending with the pooled memory),
        and a later write to the same view replaces it -- a tile's clear at its
        ``nisa.alloc`` followed by the matmul setting all its flags, tile after tile, writes
        each tile's bytes once per run.  Every write of flag bytes goes through here.

        The same holds for a kept subview of such a view with a rectangle (:meth:`sub_rect`):
        a matmul accumulating into a slice of a PSUM tile, group after group, sets that
        slice's bytes once per group instead of counting and setting them every matmul.

        A view whose own write is pending replaces it without scanning the others: no
        pending write overlaps it (an overlapping write lands the earlier one first).  An
        earlier write inside the rectangle of an exact view is dropped, not landed: this
        write covers every byte of it."""
        pending = self.pending
        p = pending.get(id(fv))
        if p is not None and p[0] is fv:
            r = p[2]
            pending[id(fv)] = self.pending_in[r[1]][id(fv)] = (fv, on, r)
            self.known = None
            return
        r = self.rect(fv)
        if r is None:
            self.settle()
            _fill_flags(fv, on)
            self.known = (fv, on)
            return
        group = self.pending_in.get(r[1])
        if group is None:
            group = self.pending_in[r[1]] = {}
        elif group:
            _, _, p0, p1, c0, c1, _, exact = r
            for key, (pv, pon, pr) in list(group.items()):
                if pv is not fv and pr[2] < p1 and p0 < pr[3] and pr[4] < c1 and c0 < pr[5]:
                    if not (exact and _inside(pr, r)):
                        _fill_flags(pv, pon)          # an earlier write under this one
                    del pending[key]
                    del group[key]
        pending[id(fv)] = group[id(fv)] = (fv, on, r)
        self.known = None

    def end_run(self) -> None:
        """At the end of a run: forget :attr:`run_views` (and their :attr:`origins`)."""
        if self.run_views:
            origins = self.origins
            for _, v, _ in self.run_views.values():
                origins.pop(id(v), None)
            self.run_views.clear()

    def settle(self) -> None:
        """Write the bytes of the pending flag writes (:meth:`set_flags`): before flag bytes
        are read directly, at the start and end of a queue-mode run and before the blocks
        are dropped (:meth:`trim`).  A program-order run leaves its last writes pending
        with the (pooled) memory: the next writer or reader of those bytes settles or
        supersedes them, so nothing can tell."""
        if self.pending:
            for pv, pon, _ in self.pending.values():
                _fill_flags(pv, pon)
            self.pending.clear()
            self.pending_in.clear()
            self.known = None

    def flags_state(self, fv: np.ndarray) -> bool | None:
        """True / False when every flag of the view ``fv`` is known set / clear (its write
        is pending, or it lies inside the exact rectangle of a pending write -- the last
        write of those bytes -- or it is the view written last and no flag byte was written
        since), else None (the pending writes are then settled: the caller reads ``fv``'s
        bytes).  (An unrolled loop body makes a view object per instruction: the matmuls of
        one accumulation group write one slice through different views.)"""
        p = self.pending.get(id(fv))
        if p is not None and p[0] is fv:
            return p[1]
        r = self.rect(fv)
        if r is not None:                   # inside the exact rectangle of a pending write?
            group = self.pending_in.get(r[1])
            if group:
                for _, pon, pr in group.values():
                    if pr[7] and _inside(r, pr):
                        return pon
        self.settle()
        k = self.known
        return k[1] if k is not None and k[0] is fv else None

    def view(self, token: int, copy: int, space: str, partition: int, offset: int,
             shape: Sequence[int], dt: np.dtype,
             block: tuple[int, int] | None = None,
             decl: np.dtype | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`region` (in the block of bytes ``block = (lo, hi)`` when given,
        :meth:`block_region`; :meth:`wide_region` of declared dtype ``decl`` when given),
        remembered under ``(token, copy)`` (at most ``VIEWS_MAX`` views: the cache starts
        over when full)."""
        if decl is not None:
            v = self.wide_region(space, partition, offset, shape, decl)
        elif block is None:
            v = self.region(space, partition, offset, shape, dt)
        else:
            v = self.block_region(space, partition, offset, shape, dt, block)
        if len(self.views) >= VIEWS_MAX:
            self.settle()
            self.views.clear()
            self.rects.clear()
        self.views[(token, copy)] = v
        fv = v[1]
        if fv is not None:       # the flags' rectangle, for the lazy writes of set_flags
            nbytes = free_elems(shape) * np.dtype(dt).itemsize
            if decl is not None:
                scale = 4 // np.dtype(decl).itemsize
                arr, c0 = self.wide[("psum-flags", scale)], offset * scale
            elif block is None:
                arr, c0 = self.psum_flags, offset
            else:
                arr, c0 = self.blocks[(space, block[0], block[1])][1], offset - block[0]
            self.rects[id(fv)] = (fv, id(arr), partition, partition + int(shape[0]), c0,
                                  c0 + nbytes, arr.strides[0], True)
        return v

    def rect(self, fv: np.ndarray) -> tuple | None:
        """The rectangle of the flags view ``fv`` (:attr:`rects`, :attr:`subrects`), or None."""
        r = self.rects.get(id(fv)) or self.subrects.get(id(fv))
        return r if r is not None and r[0] is fv else None

    def sub_rect(self, fv: np.ndarray, src: np.ndarray) -> None:
        """Give the flags view ``fv``, a kept view into the flags view ``src``, the byte
        rectangle of the flags array that bounds it, when ``src`` has one (:attr:`rects`,
        :attr:`subrects`) and ``fv`` steps through whole partitions with non-negative
        strides; its writes are then lazy as ``src``'s (:meth:`set_flags`).  The rectangle
        is exact when each partition's bytes of ``fv`` are contiguous."""
        r = self.rect(src)
        if r is None or fv.ndim < 1 or fv.size == 0:
            return
        row = r[6]
        if (fv.shape[0] > 1 and fv.strides[0] != row) or any(x < 0 for x in fv.strides):
            return
        at = r[2] * row + r[4] + (fv.__array_interface__["data"][0]
                                  - src.__array_interface__["data"][0])
        p0, c0 = divmod(at, row)
        span = fv.itemsize + sum((n - 1) * x for n, x in zip(fv.shape[1:], fv.strides[1:]))
        if at < 0 or c0 + span > row:
            return
        exact, step = True, fv.itemsize       # the free dims in C order, without gaps
        for n, x in zip(reversed(fv.shape[1:]), reversed(fv.strides[1:])):
            exact = exact and (n == 1 or x == step)
            step *= n
        if len(self.subrects) >= VIEWS_MAX:
            self.subrects.clear()
        self.subrects[id(fv)] = (fv, r[1], p0, p0 + fv.shape[0], c0, c0 + span, row, exact)

    def capacity(self, space: str) -> int:
        """Bytes per partition of ``space`` (``"sbuf"`` or ``"psum"``)."""
        return self.sbuf.shape[1] if space == "sbuf" else PSUM_BYTES

    def region(self, space: str, partition: int, offset: int, shape: Sequence[int],
               dt: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
        """The typed view of a placed on-chip tensor, and for PSUM its flag view.

        Args:
            space: ``"sbuf"`` or ``"psum"``.
            partition: start partition ``p0``.
            offset: byte offset in each partition.
            shape: ``(P, *free)``; the view covers rows ``[p0, p0+P)``.
            dt: element dtype.

        Raises:
            MemoryFault: the region does not fit in the memory.
        """
        dt = np.dtype(dt)
        parts, nbytes = self._fits(space, partition, offset, shape, dt)
        base = self.sbuf if space == "sbuf" else self.psum
        data = typed_view(base[partition:partition + parts, offset:offset + nbytes], shape, dt)
        flags = None
        if space == "psum":
            flags = typed_view(self.psum_flags[partition:partition + parts, offset:offset + nbytes],
                               shape, flag_dtype(dt))
        return data, flags

    def _fits(self, space: str, partition: int, offset: int, shape: Sequence[int],
              dt: np.dtype) -> tuple[int, int]:
        """``(partitions, bytes per partition)`` of the region :meth:`region` views.

        Raises:
            MemoryFault: the region does not fit in the memory.
        """
        parts = int(shape[0])
        nbytes = free_elems(shape) * dt.itemsize
        cap = self.capacity(space)
        if partition < 0 or partition + parts > PARTITIONS:
            raise MemoryFault(f"partitions [{partition}, {partition + parts}) are outside the "
                              f"{PARTITIONS} partitions of {space.upper()}")
        if offset < 0 or offset + nbytes > cap:
            raise MemoryFault(f"bytes [{offset}, {offset + nbytes}) of each partition exceed the "
                              f"{space.upper()} capacity of {cap} bytes per partition on {self.target}")
        return parts, nbytes

    def block_region(self, space: str, partition: int, offset: int, shape: Sequence[int],
                     dt: np.dtype, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`region`, stored in the block covering bytes ``block = (lo, hi)`` of every
        partition (:mod:`.blocks`) instead of the whole memory: the same checks and the same
        aliasing among the tensors of one block, rows ``hi - lo`` bytes apart."""
        dt = np.dtype(dt)
        self._fits(space, partition, offset, shape, dt)      # the bounds checks of region
        lo, hi = block
        key = (space, lo, hi)
        b = self.blocks.get(key)
        if b is None:
            data = np.zeros((PARTITIONS, hi - lo), np.uint8)
            flags = np.zeros((PARTITIONS, hi - lo), np.uint8) if space == "psum" else None
            b = self.blocks[key] = (data, flags)
            self.block_ids[id(data)] = data
            if flags is not None:
                self.block_ids[id(flags)] = flags
            self.block_bytes += data.nbytes * (2 if flags is not None else 1)
        nbytes = free_elems(shape) * dt.itemsize
        rows = slice(partition, partition + int(shape[0]))
        cols = slice(offset - lo, offset - lo + nbytes)
        data = typed_view(b[0][rows, cols], shape, dt)
        flags = typed_view(b[1][rows, cols], shape, flag_dtype(dt)) if b[1] is not None else None
        return data, flags

    def wide_region(self, space: str, partition: int, offset: int, shape: Sequence[int],
                    decl: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`region` of a placed tensor of declared dtype ``decl`` (bf16 / fp8) stored
        as float32 (``NKI_PRECISE_FP=0``, :mod:`.precise_fp`): the same checks on the
        declared bytes; the values live in a float32 image of the memory where each
        declared byte ``b`` becomes bytes ``[b * scale, (b + 1) * scale)``, ``scale = 4 /
        itemsize(decl)``, so tensors of one declared width overlap where their declared bytes
        do (a tensor of another width never shares its values).  The PSUM flags live in an
        image of the flags laid out alike (uint32 per element, as for a float32 tile)."""
        decl = np.dtype(decl)
        parts, nbytes = self._fits(space, partition, offset, shape, decl)
        scale = 4 // decl.itemsize
        rows = slice(partition, partition + parts)
        cols = slice(offset * scale, (offset + nbytes) * scale)
        f32 = np.dtype(np.float32)
        data = typed_view(self._wide_image(space, scale)[rows, cols], shape, f32)
        flags = None
        if space == "psum":
            flags = typed_view(self._wide_image("psum-flags", scale)[rows, cols], shape,
                               flag_dtype(f32))
        return data, flags

    def _wide_image(self, key: str, scale: int) -> np.ndarray:
        """The float32 image ``key`` (``"sbuf"``, ``"psum"`` or ``"psum-flags"``) of
        :meth:`wide_region` for ``scale``, made on first use (zero pages: only the bytes a
        run touches cost memory)."""
        w = self.wide.get((key, scale))
        if w is None:
            cap = self.capacity("psum" if key == "psum-flags" else key)
            w = self.wide[(key, scale)] = np.zeros((PARTITIONS, cap * scale), np.uint8)
        return w

    def owns(self, root: np.ndarray) -> bool:
        """Whether ``root`` is this memory's SBUF, PSUM, one of its blocks or a float32
        image (:meth:`wide_region`)."""
        return root is self.sbuf or root is self.psum or self.block_ids.get(id(root)) is root \
            or any(root is w for w in self.wide.values())

    def peek(self, space: str, partitions: slice, lo: int, hi: int) -> np.ndarray:
        """The bytes ``[lo, hi)`` of ``partitions`` of ``space`` as the last run left them: in
        the most recent block covering them, else in the whole memory (for tests and
        debugging)."""
        for (sp, blo, bhi), (data, _) in reversed(list(self.blocks.items())):
            if sp == space and blo <= lo and hi <= bhi:
                return data[partitions, lo - blo:hi - blo]
        return (self.sbuf if space == "sbuf" else self.psum)[partitions, lo:hi]

    def trim(self) -> bool:
        """Between runs: drop every block (and every view of one) once they hold more than
        :data:`BLOCK_BYTES_MAX` bytes.  Never during a run: the tensors of a block must keep
        sharing one array while they live.  Returns whether it dropped them."""
        if self.block_bytes <= BLOCK_BYTES_MAX:
            return False
        self.settle()
        self.rects.clear()
        self.subrects.clear()
        self.blocks.clear()
        self.block_ids.clear()
        self.block_bytes = 0
        self.views.clear()
        self.subviews.clear()
        self.run_views.clear()
        self.origins.clear()
        self.known = None
        return True

    @staticmethod
    def private(space: str, shape: Sequence[int], dt: np.dtype) -> tuple[np.ndarray, np.ndarray | None]:
        """A fresh array for an unplaced tensor (and for PSUM a zeroed flag array)."""
        data = np.empty(tuple(shape), dt)
        flags = np.zeros(tuple(shape), flag_dtype(dt)) if space == "psum" else None
        return data, flags

    @staticmethod
    def hbm(shape: Sequence[int], dt: np.dtype) -> np.ndarray:
        """A fresh, sentinel-filled HBM tensor."""
        a = np.empty(tuple(shape), dt)
        fill_sentinel(a)
        return a
