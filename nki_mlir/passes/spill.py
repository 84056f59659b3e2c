"""Spilling for ``nisa-allocate``: when the SBUF tensors live at the same time need more bytes
per partition than SBUF has, some of them are kept in an internal HBM tensor between their
uses (docs/backend.md, "Spilling").

What is spilled: a whole SBUF tensor (``nisa.alloc``), never a PSUM one, a directly placed one
(``nl.ndarray(address=...)``) or a tile this pass created.  Its instructions are grouped into
*segments*: the uses of one block that follow each other with no loop, conditional or new
on-chip tensor between them, and that access the tensor through the same view (the same
chain of ``memref.subview`` s with the same operands).  Each segment gets its own SBUF tile,
live only from the segment's first to its last instruction:

- the tile is the accessed view when every view of the chain keeps partition 0 and the
  partition dimension (``t[:, k, :]``: a ``[128, 128]`` tile, loaded from / stored to the
  same view of the HBM tensor), else the whole tensor;
- before the segment, ``nisa.dma_copy`` loads the tile from the HBM tensor, unless the
  segment's first instruction writes the whole tile without reading it;
- after the segment's last writing instruction, ``nisa.dma_copy`` stores the tile back.

So the HBM tensor always holds the tensor's current value in execution order, inside loops
as well (every segment that writes stores, every segment that reads loads).  Two cheaper
forms are used when they apply:

- *rematerialisation*: a tensor written once, wholly, by a DMA from a kernel input that no
  instruction writes is reloaded from that input, and no HBM tensor is made; likewise a
  tensor filled tile by tile by one DMA loop nest from such an input, read through views of
  one tile each, reloads each tile from the input view it came from (:mod:`.spill_source`);
- *DMA forwarding*: a segment whose only instruction is a DMA between HBM and the tile
  becomes one HBM-to-HBM DMA into / out of the HBM tensor.

How chosen (:func:`.spill_choice.choose`): at the overflow the allocator reports (the tensor that found no
room and the tensors live with it), each spillable candidate's segments are planned; the
bytes it would still hold while the failing tensor is live (its largest segment tile live
then) must be fewer than it holds now.  Among those, the one whose next use after the
failing tensor's first program point is furthest is spilled (Belady's rule; a tensor used
only earlier in the loop body, i.e. next in the following iteration, counts as furthest),
then the most bytes saved, then program order.  The allocator then places the function
again, and spills again while it does not fit.

What it costs: the loads and stores are ordinary ``nisa.dma_copy`` instructions, scheduled,
run by the interpreter and charged by the cost model like any DMA (HBM bandwidth, DMA
queues, the dependences on the tile and the HBM tensor).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.dialects.builtin import MemRefType, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import BlockArgument, Operation, SSAValue

from ..dialects.common import MemSpaceAttr, bool_attr, i64_attr, memref, shape_of, dtype_of, space_of
from ..dialects.effects import accesses, base_buffer, bytes_per_partition, is_view
from ..dialects.instruction import FULL_WRITES
from ..dialects.nisa import AllocOp, NisaInstruction, ReleaseOp
from ..dialects.ods_ops import op_class
from .alloc_sinking import ancestor_in
from .liveness import ProgramOrder
from .spill_source import TiledSource, tiled_source

#: attribute on every alloc spilling creates: the name of the tensor it stands for
ATTR_SPILL_OF = "nkim.spill_of"
#: the memory of the internal tensors
SCRATCH_SPACE = "private_hbm"


def writes_whole_dst(op: Operation) -> bool:
    """Whether ``op`` writes every element of its ``dst`` without reading it: the instruction
    definitions' ``full_writes`` (``dialects.instruction.FULL_WRITES``), except a
    ``nisa.matmul``, which may accumulate into ``dst``."""
    return op.name != "nisa.matmul" and "dst" in FULL_WRITES.get(op.name, ())


@dataclass
class Use:
    """One instruction touching the spilled tensor (through ``operands``, by index)."""

    op: Operation
    index: int                          # pre-order number
    operands: list[int]
    chain: list[Operation] | None       # the view ops from the tensor to the operand (all
                                        # operands the same), None: several different ones
    reads: bool
    writes: bool


@dataclass
class Segment:
    """Consecutive uses sharing one tile (module docstring)."""

    uses: list[Use]
    sliced: bool                        # the tile is the view (``uses[0].chain``'s result)
    tile_type: MemRefType

    @property
    def first(self) -> int:
        return self.uses[0].index

    @property
    def last(self) -> int:
        return self.uses[-1].index

    @property
    def size(self) -> int:
        return bytes_per_partition(self.tile_type)

    @property
    def chain(self) -> list[Operation]:
        return self.uses[0].chain if self.sliced else []

    def needs_load(self) -> bool:
        """Whether the tile must be loaded first: unless the first instruction writes all
        of it (its ``dst``, the tile itself) without reading it."""
        u = self.uses[0]
        if u.reads or not writes_whole_dst(u.op) or len(u.operands) != 1:
            return True
        dst = getattr(u.op, "dst", None)
        value = u.op.operands[u.operands[0]]
        return dst is not value or not (self.sliced or value is base_buffer(value))

    def writes(self) -> bool:
        return any(u.writes for u in self.uses)


@dataclass
class Plan:
    """How one tensor would be spilled."""

    alloc: AllocOp
    segments: list[Segment]
    remat: Operation | None = None      # the DMA whose source reloads replace the HBM tensor
    source: TiledSource | None = None   # tile reloads from the input a DMA nest loaded
    releases: list[Operation] = field(default_factory=list)


def view_chain(value: SSAValue, base: SSAValue) -> list[Operation]:
    """The view ops (``memref.subview`` and the like, operand 0 their source) from the
    tensor ``base`` to ``value``, outermost first."""
    ops = []
    while value is not base:
        ops.append(value.op)
        value = value.op.operands[0]
    return ops[::-1]


def _value_key(v: SSAValue, depth: int = 8):
    """``v`` itself, or for an ``arith`` result (index arithmetic, constants) the same
    computation: two views ``acc[:, nl.ds(i * W, W)]`` written twice compare equal."""
    op = v.owner if isinstance(v.owner, Operation) else None
    if op is None or depth == 0 or not op.name.startswith("arith.") or op.regions:
        return v
    return (op.name, tuple(sorted(op.properties.items())), tuple(sorted(op.attributes.items())),
            tuple(_value_key(o, depth - 1) for o in op.operands))


def _chain_key(chain: list[Operation]) -> tuple:
    return tuple((op.name, tuple(_value_key(o) for o in op.operands[1:]),
                  tuple(sorted(op.properties.items())), op.results[0].type) for op in chain)


def _sliceable(chain: list[Operation]) -> bool:
    """Every view keeps partition 0 and the partition dimension (a tile of the view's shape
    then starts at the tensor's start partition, as the view does)."""
    for op in chain:
        if op.name != "memref.subview":
            return False
        offsets = op.static_offsets.get_values()
        sizes = op.static_sizes.get_values()
        src, res = op.operands[0].type, op.results[0].type
        if offsets[0] != 0:
            return False
        if len(res.get_shape()) < len(src.get_shape()) and sizes[0] == 1:
            return False        # rank-reducing: the partition dim may be the one dropped
    return bool(chain)


def _uses(alloc: AllocOp, order: ProgramOrder) -> tuple[list[Use], list[Operation]] | None:
    """The instructions using ``alloc``'s tensor and its releases, or None when some user is
    neither (then it is not spilled)."""
    t = alloc.result
    found: dict[Operation, Use] = {}
    releases = []
    work = [t]
    while work:
        v = work.pop()
        for use in v.uses:
            op = use.operation
            if is_view(op) and use.index == 0:
                work.extend(op.results)
            elif isinstance(op, ReleaseOp):
                releases.append(op)
            elif isinstance(op, NisaInstruction):
                found.setdefault(op, Use(op, order.index[op], [], None, False, False))
            else:
                return None
    out = []
    for op, u in found.items():
        keys = set()
        for i, operand in enumerate(op.operands):
            if isinstance(operand.type, MemRefType) and base_buffer(operand) is t:
                u.operands.append(i)
                keys.add(_chain_key(view_chain(operand, t)))
        for acc in accesses(op):
            if acc.base is t:
                u.writes |= acc.is_write
                u.reads |= not acc.is_write
        if not u.operands:
            return None
        if len(keys) == 1:
            u.chain = view_chain(op.operands[u.operands[0]], t)
        out.append(u)
    out.sort(key=lambda u: u.index)
    return out, releases


def _separated(a: Operation, b: Operation) -> bool:
    """Whether an op strictly between ``a`` and ``b`` (same block) is a loop / conditional or
    a new on-chip tensor (which a shared tile would be live across)."""
    op = a.next_op
    while op is not None and op is not b:
        if op.regions or (isinstance(op, AllocOp) and space_of(op.result) in ("sbuf", "psum")):
            return True
        op = op.next_op
    return op is None


def movable_uses(alloc: AllocOp, space: str,
                 order: ProgramOrder) -> tuple[list[Use], list[Operation]] | None:
    """The instruction uses (program order) and releases of ``alloc``'s tensor when it may be
    moved out of ``space`` (``"sbuf"``: spilled; ``"psum"``: evicted, :mod:`.psum_spill`): an
    automatically placed tensor of that memory (no ``nkim.address``, not itself a spill or
    eviction copy) used by instructions, through views, and releases only; else None."""
    if space_of(alloc.result) != space or ATTR_SPILL_OF in alloc.attributes or \
            "nkim.address" in alloc.attributes or alloc.operands:
        return None
    got = _uses(alloc, order)
    if got is None or not got[0]:
        return None
    return got


def plan(alloc: AllocOp, func: FuncOp, order: ProgramOrder) -> Plan | None:
    """The segments of ``alloc``'s tensor, or None when it cannot be spilled."""
    got = movable_uses(alloc, "sbuf", order)
    if got is None:
        return None
    uses, releases = got
    segments: list[Segment] = []
    for u in uses:
        sliced = u.chain is not None and _sliceable(u.chain)
        key = _chain_key(u.chain) if sliced else None
        last = segments[-1] if segments else None
        if last is not None and last.uses[-1].op.parent_block() is u.op.parent_block() and \
                (_chain_key(last.chain) if last.sliced else None) == key and \
                not _separated(last.uses[-1].op, u.op):
            last.uses.append(u)
            continue
        ty = alloc.result.type
        if sliced:
            view = u.op.operands[u.operands[0]]
            ty = memref(shape_of(view), dtype_of(view), "sbuf")
        segments.append(Segment([u], sliced, ty))
    p = Plan(alloc, segments, releases=releases)
    p.remat = _remat_source(p, func)
    if p.remat is None:
        p.source = _tiled_source(p, func)
    return p


def _single_input_writer(p: Plan, func: FuncOp) -> Use | None:
    """The one instruction writing the tensor if it is a DMA from a kernel input that no
    instruction writes, all other uses coming after it (inside the alloc's block); else None."""
    writers = [u for s in p.segments for u in s.uses if u.writes]
    if len(writers) != 1:
        return None
    w = writers[0]
    if not (w.op.name == "nisa.dma_copy") or w.reads or len(w.operands) != 1:
        return None
    src = base_buffer(w.op.src)
    if not isinstance(src, BlockArgument) or space_of(src) not in ("hbm", "private_hbm", "shared_hbm"):
        return None
    for op in func.walk():
        if isinstance(op, NisaInstruction) and any(a.is_write and a.base is src for a in accesses(op)):
            return None
    block = p.alloc.parent_block()
    pos = {op: i for i, op in enumerate(block.ops)}
    first = ancestor_in(w.op, block)
    for s in p.segments:
        for u in s.uses:
            anc = ancestor_in(u.op, block)
            if u is not w and (anc is None or first is None or pos[anc] <= pos[first]):
                return None
    return w


def _remat_source(p: Plan, func: FuncOp) -> Operation | None:
    """The DMA to reload from (module docstring), or None."""
    if any(s.sliced for s in p.segments):
        return None
    w = _single_input_writer(p, func)
    if w is None or w.op.dst is not p.alloc.result or w.op.parent_block() is not p.alloc.parent_block():
        return None
    return w.op


def _tiled_source(p: Plan, func: FuncOp) -> TiledSource | None:
    """Reloads of tiles from the input a DMA loop nest filled them from (:mod:`.spill_source`)."""
    w = _single_input_writer(p, func)
    if w is None or w.chain is None or len(w.chain) != 1:
        return None
    source = tiled_source(p.alloc.result, w.op)
    if source is None:
        return None
    for s in p.segments:
        if s.uses[0] is w:
            if len(s.uses) != 1:
                return None
        elif not (s.sliced and len(s.chain) == 1 and source.covers(s.chain[0])):
            return None
    return source


# ---------------------------------------------------------------------------- rewriting


def _scratch_type(ty: MemRefType) -> MemRefType:
    return MemRefType.new([ty.shape, ty.element_type, ty.layout, MemSpaceAttr(SCRATCH_SPACE)])


def clone_chain(chain: list[Operation], base: SSAValue, before: Operation,
                retype: Callable[[MemRefType], MemRefType] | None = None) -> SSAValue:
    """``chain`` (:func:`view_chain`) re-applied to ``base``, inserted before ``before``; its
    last value.  ``retype`` maps each view's result type (e.g. to another memory space)."""
    value = base
    block = before.parent_block()
    for op in chain:
        ty = op.results[0].type
        new = type(op).create(operands=[value, *op.operands[1:]],
                              result_types=[ty if retype is None else retype(ty)],
                              properties=dict(op.properties), attributes=dict(op.attributes))
        new.location = op.location
        block.insert_op_before(new, before)
        value = new.results[0]
    return value


def _dma(dst: SSAValue, src: SSAValue, loc) -> Operation:
    op = op_class("nisa.dma_copy").build(operands=[dst, src], properties={"engine": StringAttr("dma"),
                                                          "oob_is_err": bool_attr(True)})
    op.location = loc
    return op


def alloc_name(alloc: AllocOp) -> str:
    """The user-facing name of the tensor ``alloc`` creates (for messages and new names)."""
    attr = alloc.attributes.get("nkim.name")
    return attr.data if isinstance(attr, StringAttr) else (alloc.result.name_hint or "tensor")


def apply(p: Plan) -> None:
    """Rewrite the function as ``p`` says (module docstring)."""
    alloc, t = p.alloc, p.alloc.result
    name = alloc_name(alloc)
    scratch = None
    if p.remat is None and p.source is None:
        scratch = AllocOp.build(operands=[[]], result_types=[_scratch_type(t.type)],
                                attributes={"nkim.name": StringAttr(f"{name}.spill"),
                                            ATTR_SPILL_OF: StringAttr(name)})
        scratch.location = alloc.location
        alloc.parent_block().insert_op_before(scratch, alloc)
    dead: list[Operation] = [op for s in p.segments for u in s.uses for op in (u.chain or [])]
    for seg in p.segments:
        _rewrite_segment(p, seg, scratch, name)
    if p.source is not None:
        _erase_with_inputs(p.source.writer)
    for op in p.releases:
        op.detach()
        op.erase()
    for op in reversed(_unique(dead)):
        if op.parent is not None and not any(r.uses for r in op.results):
            op.detach()
            op.erase()
    # views of the tensor no user needs any more (built for instructions now rewritten)
    for op in reversed(_all_views(t)):
        if not any(r.uses for r in op.results):
            op.detach()
            op.erase()
    alloc.detach()
    alloc.erase()


def _all_views(t: SSAValue) -> list[Operation]:
    out, work = [], [t]
    while work:
        v = work.pop()
        for use in v.uses:
            if is_view(use.operation) and use.operation not in out:
                out.append(use.operation)
                work.extend(use.operation.results)
    return out


def _unique(ops: list[Operation]) -> list[Operation]:
    seen, out = set(), []
    for op in ops:
        if id(op) not in seen:
            seen.add(id(op))
            out.append(op)
    return out


def _rewrite_segment(p: Plan, seg: Segment, scratch, name: str) -> None:
    t = p.alloc.result
    first = seg.uses[0].op
    loc = first.location
    if p.remat is not None and len(seg.uses) == 1 and seg.uses[0].op is p.remat:
        p.remat.detach()            # reloads read the DMA's source: this copy is not needed
        p.remat.erase()
        return
    if p.source is not None and seg.uses[0].op is p.source.writer:
        return                      # erased by apply once the reloads have copied its source
    if scratch is not None and _forward(seg, scratch, t):
        return
    tile = AllocOp.build(operands=[[]], result_types=[seg.tile_type],
                         properties={"alignment": i64_attr(64)},
                         attributes={"nkim.name": StringAttr(name), ATTR_SPILL_OF: StringAttr(name)})
    tile.location = p.alloc.location
    block = first.parent_block()
    block.insert_op_before(tile, first)
    is_writer = p.remat is not None and any(u.op is p.remat for u in seg.uses)
    view = None                 # the segment's view of the HBM tensor, made once
    if scratch is not None and (seg.needs_load() or any(u.writes for u in seg.uses)):
        view = clone_chain(seg.chain, scratch.result, first, _scratch_type)
    if seg.needs_load() and not is_writer:
        src = p.remat.src if p.remat is not None else view
        if p.source is not None:
            src = p.source.reload(seg.chain[0], first)
        block.insert_op_before(_dma(tile.result, src, loc), first)
    last_writer = None
    for u in seg.uses:
        for i in u.operands:
            value = u.op.operands[i]
            u.op.operands[i] = tile.result if seg.sliced else \
                clone_chain(view_chain(value, t), tile.result, u.op)
        if u.writes:
            last_writer = u.op
    if last_writer is not None and scratch is not None:
        store = _dma(view, tile.result, last_writer.location)
        last_writer.parent_block().insert_op_after(store, last_writer)


def _erase_with_inputs(op: Operation) -> None:
    """Erase ``op`` and the pure ops (views, index arithmetic) only it used."""
    work = [op]
    while work:
        o = work.pop()
        if o.parent is None or any(r.uses for r in o.results):
            continue
        inputs = [v.owner for v in o.operands if isinstance(v.owner, Operation)]
        o.detach()
        o.erase()
        work.extend(i for i in inputs if is_view(i) or i.name.startswith("arith."))


def _forward(seg: Segment, scratch, t: SSAValue) -> bool:
    """A segment of one DMA between HBM and the tile: the DMA goes to / from the HBM tensor
    directly.  Returns whether it applied."""
    if len(seg.uses) != 1 or not (seg.uses[0].op.name == "nisa.dma_copy"):
        return False
    u = seg.uses[0]
    op: Operation = u.op
    if len(u.operands) != 1 or not (seg.sliced or op.operands[u.operands[0]] is t):
        return False
    other = op.src if u.operands[0] == 0 else op.dst
    if space_of(other) not in ("hbm", "private_hbm", "shared_hbm"):
        return False
    op.operands[u.operands[0]] = clone_chain(seg.chain, scratch.result, op, _scratch_type)
    return True


def spill(alloc: AllocOp, func: FuncOp) -> None:
    """Spill ``alloc``'s tensor (module docstring).  Internal error if it cannot be."""
    p = plan(alloc, func, ProgramOrder.of(func))
    assert p is not None, "spill: the tensor cannot be spilled (internal error)"
    apply(p)
