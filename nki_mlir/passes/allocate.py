"""``nisa-allocate``: place every SBUF / PSUM ``nisa.alloc`` (docs/pipeline.md).

Memory model (NKI architecture guide (nki/guides/architecture)-2.4; NKI docs "Trainium architecture",
``nl.ndarray`` direct allocation): SBUF and PSUM are 128 partitions x bytes.  A tensor
``[P, F...]`` occupies partitions ``[start, start + P)`` and the same byte range
``[offset, offset + size)`` in each of them, ``size`` = free size x element bytes
(*bytes per partition*, the unit of every number below).

Rules implemented:

- capacity per partition: SBUF 180224 (trn1), 212984 (trn2), 245752 (trn3) usable
  bytes; PSUM 16384 bytes = 8 banks x 2048;
- automatic placement starts at partition 0 (always legal), SBUF offsets are 64-byte
  aligned, PSUM offsets 4-byte aligned; a PSUM tensor of <= 2048 bytes lies inside one
  bank, a larger one starts on a bank boundary;
- a tensor is live from its first use, not from its ``nl.ndarray`` call: each alloc is
  first sunk to just below the last memory-touching op before its first use
  (:mod:`.alloc_sinking`);
- two tensors whose live ranges overlap (:mod:`.liveness`) never share a byte;
- direct allocation ``nkim.address = [partition, byte_offset]`` (``nl.ndarray(...,
  address=(p, off))``) is honoured exactly after checking the start-partition rule
  (64 < P <= 128: 0; 32 < P <= 64: 0 or 64; P <= 32: 0, 32, 64 or 96), the PSUM bank
  boundary, the capacity and overlap with other live pinned tensors; automatic tensors
  avoid pinned ones.

- multi-buffering (:mod:`.multibuffer`): a tensor allocated in an ``affine_range`` body
  (all enclosing loops static ``scf.for``) gets ``k`` rotating copies, 2 <= k <= 4,
  k <= the number of times its alloc runs; its footprint is ``k * stride`` bytes,
  reserved over the whole innermost loop (:meth:`.liveness.LiveRange.rotated`).

Algorithm, per memory (SBUF and PSUM are independent): pinned tensors first (program
order), then best-fit in program order: each tensor goes into the smallest free gap
(among tensors live at the same time and sharing partitions) in which a legal offset
exists.  Both memories are then placed again coldest-fit (:mod:`.coldest_fit`: the bytes
freed longest ago first, so a new tensor does not wait for the readers of one that just
died), with the copies best fit gave: SBUF below best fit's peak, PSUM over all its banks
(a PSUM bank holds nothing else, and spreading the tiles of a step over the banks lets
TensorE fill the next bank while VectorE / ScalarE still read the last one); freely when
every tensor fits so, else each tensor avoiding the best-fit regions of the later tensors
live with it, which always fits.

When SBUF does not fit even with one copy each, two tighter packings are tried before
the overflow is reported ("chosen by what fits" again, so kernels that fit are placed
exactly as before): an elementwise result is written into its dying input of the same
type (:mod:`.inplace`, an IR rewrite), and every automatic SBUF tensor is placed by
:func:`spread_fit`: over all its legal start partitions (64 for <= 64 partitions; 32, 64,
96 for <= 32), at the lowest offset, then the lowest start partition, so tensors of half
or a quarter of the partitions sit side by side over the same bytes.

Copy policy ("chosen by what fits", deterministic): every eligible tensor starts with
``k = min(max-copies, 4, total iterations)``.  When a tensor cannot be placed, one tensor
loses one copy and placement starts again: the largest footprint (``k * stride``; ties:
program order) with ``k > 1`` among the failing tensor and the tensors live with it, else
among all tensors of that memory; among those candidates, a tensor written by a DMA (a
load destination) with two copies left is chosen last: a load has the DMA's fixed latency (~1.3 us, NKI DMA bandwidth guide) to hide behind the
previous iteration, and a single-buffered load destination shares bytes with the step's
intermediates, so the load waits for their readers.  So copies are given up largest first,
4 -> 3 -> 2 -> 1, only where memory is short.  When every tensor of the memory is down to one copy the
placement is exactly the one without multi-buffering, and only then is the overflow
reported.  Option ``max-copies=N`` (1..4; 1 turns multi-buffering off).

Spilling (:mod:`.spill`, option ``spill``, on by default): instead of reporting an SBUF
overflow, one tensor live at the overflow is kept in an internal HBM tensor between its
uses (DMA stores and reloads around short-lived tiles) and the function is placed again,
until it fits or nothing left can be spilled.  A kernel that fits is never changed.

Output: ``nkim.partition``, ``nkim.offset`` and (PSUM) ``nkim.bank`` on each on-chip
alloc (copy 0; copy ``c`` is at ``nkim.offset + c * nkim.copy_stride``), ``alignment``
on allocs that had none, ``nkim.copies`` / ``nkim.copy_stride`` / ``copy(%slot)`` on
multi-buffered ones, and the memory report on the module (:mod:`.memory_report`:
``nkim.sbuf_peak_bytes``, ``nkim.sbuf_max_live_bytes``, per-partition peaks,
fragmentation, PSUM banks).  HBM allocs are not placed.  Errors:
:class:`~nki_mlir.errors.NKIAllocationError` located at the alloc that could not be
placed or whose address is illegal.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass

from ..diagnostics import error_at
from ..dialects.common import ON_CHIP, i64_attr, space_of
from ..dialects.nisa import AllocOp
from ..errors import NKIAllocationError, NKIError
from ..targets import DEFAULT, PSUM_BANK_BYTES, PSUM_BANKS, PSUM_BYTES, SBUF_USABLE_BYTES, TARGETS  # noqa: F401
from . import memory_report, multibuffer
from .alloc_sinking import sink_allocs
from .alloc_messages import describe_tensor, overflow_message, tensor_name  # noqa: F401
from .coldest_fit import FreedMap, coldest_fit
from .inplace import reuse_dying_inputs
from ..dialects.effects import ATTR_BANK, ATTR_OFFSET, ATTR_PARTITION, Region, bytes_per_partition, is_view
from .interval_index import IntervalIndex
from .placed import Placed
from .liveness import LiveRange, ProgramOrder, live_ranges
from . import psum_spill, spill as spilling
from .spill_choice import choose as choose_spill
from .target_option import module_target
from .direct_address import ATTR_ADDRESS, legal_starts as _legal_starts, pinned_address as _pinned_address  # noqa: F401

#: usable SBUF bytes per partition, per target (``tile_size.total_available_sbuf_size``)
SBUF_BYTES = SBUF_USABLE_BYTES
SBUF_ALIGN = 64                 # bytes; what AWS's nisa.alloc prints (``alignment=64``)
PSUM_ALIGN = 4                  # bytes (``psum_min_align``)


def _align_up(x: int, a: int) -> int:
    return -(-x // a) * a


@dataclass(frozen=True)
class Arena:
    """One on-chip memory as the allocator sees it (sizes in bytes per partition)."""

    space: str
    capacity: int
    alignment: int
    bank: int | None = None     # PSUM bank size; None for SBUF

    def legal_offset(self, start: int, size: int, alignment: int) -> int:
        """The first offset >= ``start`` where a ``size``-byte tensor may begin."""
        off = _align_up(start, alignment)
        if self.bank is None:
            return off
        crosses = off // self.bank != (off + size - 1) // self.bank
        if size > self.bank or crosses:
            return _align_up(off, self.bank)
        return off


def arenas(target: str) -> dict[str, Arena]:
    return {"sbuf": Arena("sbuf", SBUF_BYTES[target], SBUF_ALIGN),
            "psum": Arena("psum", PSUM_BYTES, PSUM_ALIGN, PSUM_BANK_BYTES)}


@dataclass
class Tensor:
    """An on-chip alloc to place: its live range, shape, copies and (once placed) region.

    ``size`` is one copy's bytes per partition; ``footprint`` is what is reserved
    (``copies * stride``); ``region`` covers the footprint.
    """

    base: LiveRange                     # the range with one copy
    space: str
    partitions: int
    size: int                           # bytes per partition of one copy
    alignment: int
    pinned: tuple[int, int] | None      # [partition, offset] asked for by the user
    nest: multibuffer.RotationNest | None = None   # loops, if it may be multi-buffered
    rotation: tuple[int, int] | None = None     # (stride, placement alignment) if k > 1
    copies: int = 1                     # starts at the most allowed (module docstring)
    live: LiveRange = field(init=False)     # base.rotated(copies), kept by set_copies
    region: Region | None = None
    start: int = 0                      # start partition tried / chosen (automatic tensors)
    loaded: bool = False                # written by a DMA (keeps its copies longest)

    def __post_init__(self) -> None:
        self.set_copies(self.copies)

    def set_copies(self, k: int) -> None:
        """Use ``k`` rotating copies (1 = single-buffered); updates the live range."""
        self.copies = k
        self.live = self.base.rotated(k)

    @property
    def op(self):
        return self.live.alloc

    @property
    def stride(self) -> int:
        return self.rotation[0] if self.copies > 1 and self.rotation else self.size

    @property
    def place_alignment(self) -> int:
        return self.rotation[1] if self.copies > 1 and self.rotation else self.alignment

    @property
    def footprint(self) -> int:
        return self.size if self.copies == 1 else self.copies * self.stride

    @property
    def first_partition(self) -> int:
        """The pinned start partition, else the one tried or chosen by the placement
        (0, legal for any partition count, unless partitions are spread)."""
        return self.pinned[0] if self.pinned else self.start

    def conflicts(self, other: Tensor) -> bool:
        """``other`` is placed, live at the same time and on shared partitions (so the
        two must not share bytes)."""
        if other.region is None or other.space != self.space or not self.live.overlaps(other.live):
            return False
        start, theirs = self.first_partition, other.region
        return start < theirs.partition + theirs.partitions and theirs.partition < start + self.partitions


def _tensor(live: LiveRange, arena: Arena, limit: int) -> Tensor:
    alloc = live.alloc
    size = bytes_per_partition(alloc.result)
    given = alloc.alignment.value.data if alloc.alignment is not None else 0
    alignment = max(given, arena.alignment)
    pinned = _pinned_address(alloc)
    nest = multibuffer.rotation_nest(alloc) if pinned is None else None
    rotation = multibuffer.copy_stride(size, alignment, arena.bank) if nest else None
    k = multibuffer.max_copies_for(nest, limit) if rotation else 1
    return Tensor(live, arena.space, alloc.result.type.get_shape()[0], size, alignment, pinned,
                  nest, rotation, k, loaded=k > 1 and _dma_written(alloc.result))


def _dma_written(value, depth: int = 0) -> bool:
    """Whether a DMA writes ``value`` (its ``dst``, directly or through views)."""
    for use in value.uses:
        user = use.operation
        if user.name.startswith("nisa.dma") and use.index == 0:
            return True
        if depth < 8 and user.results and is_view(user) and use.index == 0 and \
                _dma_written(user.results[0], depth + 1):
            return True
    return False


# ------------------------------------------------------------------ direct allocation


def _candidates(t: Tensor, placed: list[Tensor]) -> list[Tensor]:
    return placed.live_with(t) if isinstance(placed, Placed) else placed


def _place_pinned(t: Tensor, arena: Arena, placed: list[Tensor], target: str) -> None:
    part, off = t.pinned
    where = f"address=({part}, {off})"

    def fail(msg: str) -> NKIError:
        return error_at(t.op, f"tensor {describe_tensor(t)}: {where} {msg}",
                        NKIAllocationError, category="invalid address")

    if part not in _legal_starts(t.partitions):
        *rest, last = map(str, _legal_starts(t.partitions))
        starts = f"{', '.join(rest)} or {last}" if rest else last
        raise fail(f"is illegal: a tensor of {t.partitions} partitions must start at "
                   f"partition {starts}")
    if arena.bank is not None and off % arena.bank:
        raise fail(f"is illegal: PSUM tensors must start on a bank boundary (a multiple of "
                   f"{arena.bank} bytes per partition)")
    if off < 0 or off + t.size > arena.capacity:
        raise fail(f"is out of range: bytes {off}..{off + t.size - 1} per partition exceed the "
                   f"{arena.space.upper()} capacity of {arena.capacity} bytes per partition on {target}")
    t.region = Region(arena.space, part, t.partitions, off, t.size)
    for other in _candidates(t, placed):
        if t.conflicts(other) and t.region.overlaps(other.region):
            raise fail(f"overlaps tensor {describe_tensor(other)} at address=("
                       f"{other.region.partition}, {other.region.offset}) while both are live")


# -------------------------------------------------------------- automatic placement


def _spans(t: Tensor, placed: list[Tensor]) -> list[tuple[int, int]]:
    """Byte ranges [lo, hi) of the placed tensors live with ``t`` on its partitions."""
    return [(o.region.offset, o.region.offset + o.region.size)
            for o in _candidates(t, placed) if t.conflicts(o)]


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` sorted, touching and overlapping ones merged."""
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _occupied(t: Tensor, placed: list[Tensor]) -> list[tuple[int, int]]:
    """Byte ranges [lo, hi) taken by tensors live with ``t`` on its partitions, merged."""
    return merge_spans(_spans(t, placed))


def best_fit(t: Tensor, arena: Arena, placed: list[Tensor]) -> int | None:
    """The offset in the smallest free gap that can hold ``t``'s footprint (lowest offset
    on ties).  Each copy obeys the bank rule: a rotating PSUM tensor is placed at a
    multiple of its stride, which divides a bank (or is whole banks)."""
    best: tuple[int, int] | None = None     # (gap size, offset)
    cursor, unit = 0, t.stride
    for lo, hi in [*_occupied(t, placed), (arena.capacity, arena.capacity)]:
        if lo > cursor:
            off = arena.legal_offset(cursor, unit, t.place_alignment)
            if off + t.footprint <= lo and (best is None or (lo - cursor, off) < best):
                best = (lo - cursor, off)
        cursor = max(cursor, hi)
    return None if best is None else best[1]


def spread_fit(t: Tensor, arena: Arena, placed: list[Tensor]) -> int | None:
    """Spread placement: over every legal start partition of ``t``, the lowest offset where
    its footprint fits (first fit), lowest offset first, then lowest start partition.
    Sets ``t.start``.  Filling the partition halves / quadrants side by side keeps them
    level, which is what lets tensors of <= 64 partitions share byte ranges."""
    best: tuple[int, int] | None = None     # (offset, start partition)
    for start in _legal_starts(t.partitions):
        t.start = start
        cursor = 0
        for lo, hi in [*_occupied(t, placed), (arena.capacity, arena.capacity)]:
            off = arena.legal_offset(cursor, t.stride, t.place_alignment)
            if off + t.footprint <= lo:
                if best is None or (off, start) < best:
                    best = (off, start)
                break
            cursor = max(cursor, hi)
    t.start = 0 if best is None else best[1]
    return None if best is None else best[0]


def _try_place(tensors: list[Tensor], arena: Arena, target: str, spread: bool = False,
               coldest: bool = False, reserve: bool = True) -> Tensor | None:
    """Place ``tensors`` (one memory): pinned first, then automatic ones in program order
    (best fit at partition 0, :func:`spread_fit` when ``spread``).  ``coldest``: they hold
    a best-fit placement and are placed again by :func:`.coldest_fit.coldest_fit`; with
    ``reserve`` each avoids the best-fit regions of the later ones live with it (so each
    still finds room: its own best-fit region is free).  Returns the first tensor that
    found no room (the others' regions are then partial)."""
    placed = Placed()
    freed = FreedMap(arena.capacity) if coldest else None
    later = IntervalIndex()                 # coldest: best-fit regions not yet replaced
    index = {id(t): i for i, t in enumerate(tensors)}
    if coldest:
        for i, t in enumerate(tensors):
            if not t.pinned and reserve:
                later.insert(t.live.start, t.live.end, i)
        held = [t.region for t in tensors]
    for t in tensors:
        t.region, t.start = None, 0
    for t in [t for t in tensors if t.pinned] + [t for t in tensors if not t.pinned]:
        if t.pinned and coldest:
            # placed and checked as here by the best-fit pass this one follows (the same
            # pinned tensors before it, a capacity >= its end): only its region is set
            part, off = t.pinned
            t.region = Region(arena.space, part, t.partitions, off, t.size)
        elif t.pinned:
            _place_pinned(t, arena, placed, target)
        elif coldest:
            later.discard(index[id(t)])
            reserved = [(held[i].offset, held[i].offset + held[i].size)
                        for i in later.query(t.live.start, t.live.end)]
            off = coldest_fit(t, arena, merge_spans(_spans(t, placed) + reserved), freed)
            if off is None:
                return t
            t.region = Region(arena.space, 0, t.partitions, off, t.footprint)
        else:
            off = spread_fit(t, arena, placed) if spread else best_fit(t, arena, placed)
            if off is None:
                return t
            t.region = Region(arena.space, t.start, t.partitions, off, t.footprint)
        placed.append(t)
        if freed is not None:
            freed.assign(t.region.offset, t.region.offset + t.region.size, t.live.end)
    return None


def _fewer_copies(failed: Tensor, live: list[Tensor], tensors: list[Tensor]) -> Tensor | None:
    """Which tensor gives up a copy (the policy of the module docstring), or None."""
    for pool in ([failed, *live], tensors):
        rotating = [t for t in pool if t.copies > 1]
        if rotating:
            return min(rotating, key=lambda t: (t.loaded and t.copies <= 2, -t.footprint, t.base.start))
    return None


def place_space(tensors: list[Tensor], arena: Arena, target: str, spread: bool = False,
                coldest: bool = False) -> None:
    """Place the tensors of one memory, giving up copies until they fit; raises the
    overflow error only when no tensor has a copy left to give up.  ``coldest`` (not with
    ``spread``): then place them coldest-fit with those copies (below best fit's peak,
    PSUM anywhere), else coldest-fit within what best fit leaves to the later tensors
    (:mod:`.coldest_fit`)."""
    while (failed := _try_place(tensors, arena, target, spread)) is not None:
        live = [o for o in tensors if failed.conflicts(o)]
        victim = _fewer_copies(failed, live, tensors)
        if victim is None:
            err = error_at(failed.op, overflow_message(failed, live, arena, target),
                           NKIAllocationError)
            err.overflow = (failed, live)       # for spilling (place_function)
            raise err
        victim.set_copies(victim.copies - 1)
    if coldest and not spread and not all(t.pinned for t in tensors):   # (pinned: placed)
        best = [t.region for t in tensors]
        peak = arena if arena.space == "psum" else \
            replace(arena, capacity=max(r.offset + r.size for r in best))
        if _try_place(tensors, peak, target, coldest=True, reserve=False) is None:
            return
        for t, region in zip(tensors, best):
            t.region = region
        if _try_place(tensors, peak, target, coldest=True) is not None:
            _try_place(tensors, arena, target)          # not reached (module docstring)


# ------------------------------------------------------------------------- the pass


def place_function(func: FuncOp, target: str, max_copies: int = multibuffer.MAX_COPIES,
                   spill: bool = True) -> list[Tensor]:
    """Place every on-chip alloc of ``func``; returns the placed tensors (program order).
    ``spill``: on an SBUF overflow, spill a tensor to HBM (:mod:`.spill`), on a PSUM one,
    evict a tensor TensorE is done with to SBUF (:mod:`.psum_spill`), and place again."""
    while True:
        try:
            return _place_once(func, target, max_copies)
        except NKIAllocationError as exc:
            over = getattr(exc, "overflow", None)
            if not (spill and over):
                raise
            if over[0].space == "psum":
                victim = psum_spill.choose(*over, func)
                if victim is None:
                    raise
                psum_spill.evict(victim, func)
                continue
            victim = choose_spill(*over, func)
            if victim is None:
                raise
            spilling.spill(victim, func)


def _place_once(func: FuncOp, target: str, max_copies: int) -> list[Tensor]:
    by_space = arenas(target)
    allocs = [op for op in func.walk() if isinstance(op, AllocOp)]
    for op in allocs:
        multibuffer.clear_copies(op)
    order = ProgramOrder.of(func)
    if sink_allocs(func, allocs, order):
        order = ProgramOrder.of(func)       # (numbered again only when an alloc moved)
    tensors = _tensors(func, by_space, max_copies, order)
    try:
        place_space([t for t in tensors if t.space == "sbuf"], by_space["sbuf"], target,
                    coldest=True)
    except NKIAllocationError as exc:
        if exc.category != NKIAllocationError.category:
            raise
        # SBUF is short: write results into dying inputs, spread over partition ranges
        reuse_dying_inputs(func, "sbuf")
        tensors = _tensors(func, by_space, max_copies)
        place_space([t for t in tensors if t.space == "sbuf"], by_space["sbuf"], target, spread=True)
    place_space([t for t in tensors if t.space == "psum"], by_space["psum"], target, coldest=True)
    slots: dict = {}
    for t in tensors:
        _annotate(t, slots)
    return tensors


def _tensors(func: FuncOp, by_space: dict[str, Arena], max_copies: int,
             order: ProgramOrder | None = None) -> list[Tensor]:
    """The on-chip allocs of ``func`` as :class:`Tensor` s (program order), unplaced
    (``order``: the function's current numbering, if the caller has it)."""
    return [_tensor(lr, by_space[space_of(lr.alloc.result)], max_copies)
            for lr in live_ranges(func, order) if space_of(lr.alloc.result) in ON_CHIP]


def _annotate(t: Tensor, slots: dict) -> None:
    alloc, region = t.op, t.region
    if alloc.alignment is None:
        alloc.properties["alignment"] = IntegerAttr(t.alignment, i64)
    alloc.attributes[ATTR_PARTITION] = i64_attr(region.partition)
    alloc.attributes[ATTR_OFFSET] = i64_attr(region.offset)
    if t.space == "psum":
        alloc.attributes[ATTR_BANK] = IntegerAttr(region.offset // PSUM_BANK_BYTES, i64)
    if t.copies > 1:
        multibuffer.set_copies(alloc, t.copies, t.stride, t.nest, slots)


@dataclass(frozen=True)
class NisaAllocate(ModulePass):
    """Place SBUF/PSUM tensors (see the module docstring).  Options: ``target=trn1|trn2|trn3``,
    ``max-copies=1..4`` (rotating copies of a multi-buffered tensor at most; 1 = off),
    ``spill=true|false`` (spill SBUF tensors to HBM, evict PSUM tensors to SBUF, when they
    do not fit: :mod:`.spill`, :mod:`.psum_spill`)."""

    name = "nisa-allocate"
    target: str = ""
    max_copies: int = multibuffer.MAX_COPIES
    spill: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_target(op, self.target)
        if not 1 <= self.max_copies <= multibuffer.MAX_COPIES:
            raise NKIError(f"nisa-allocate: max-copies must be 1..{multibuffer.MAX_COPIES}, "
                           f"got {self.max_copies}", category="bad option")
        per_function = [place_function(func, target, self.max_copies, self.spill)
                        for func in op.walk() if isinstance(func, FuncOp)]
        memory_report.annotate(op, per_function)
