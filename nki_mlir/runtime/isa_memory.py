"""Closure builders for the ``nisa`` ops that place, move and fill data.

- ``nisa.alloc``: HBM -> a fresh sentinel-filled array per execution (a write-only one is
  filled after the run where no DMA wrote it, :mod:`.hbm_fill`); unplaced SBUF / PSUM -> a private
  array; placed (``nkim.partition`` / ``nkim.offset`` / ``nkim.bank``) -> a typed view of the
  run's SBUF / PSUM bytes (:mod:`.memory`), stored in the block of the placed tensors that may
  share its bytes (:mod:`.blocks`); with ``nkim.copies = k`` /
  ``nkim.copy_stride = s`` and ``copy(%slot)``, copy ``slot mod k`` at byte offset
  ``nkim.offset + (slot mod k) * s`` (copy 0 without the operand).  In program order every
  execution refills the region with sentinels and clears its PSUM flags, except where the
  next instruction (or the first iteration of the loop that follows) overwrites the whole
  tile before anything can read it, or that loop writes an SBUF tile box by box over its
  iterations (:func:`written_first`: no sentinel can then be observed, and that instruction sets
  every flag itself unless it is a matmul, which reads them); in queue mode
  (:mod:`.queues`) it does neither at once: the flags reset is enqueued on the ``tensor``
  queue and reads of never-written bytes are the hazard checks' business.
  ``nisa.release`` does nothing.
- :func:`copy_closure` (``nisa.dma_copy``, ``nisa.tensor_copy``, defined in
  ``nki_mlir/instructions/movement.py``): element-count-preserving copy (any shapes),
  bit-exact between equal dtypes, else through float32.
- ``nisa.dma_copy_indirect``: gather ``dst[i] = src[src_index[i]]`` / scatter
  ``dst[dst_index[i]] = src[i]`` by rows (dim 0); an index outside the indexed tensor's
  rows is a runtime error naming the index, its partition and the bound
  (``oob_is_err=true``, the default) or that row is not transferred (``false``).

Semantics: nki.isa API reference (nki/api/nki/isa) (the NKI ``nki.isa`` API pages of these instructions).
"""
from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import OpResult

from ..diagnostics import error_at, site_of
from ..dialects import nisa
from ..dialects.common import HBM_SPACES, MemSpaceAttr, prop_flag
from ..dialects.instruction import FULL_WRITES as _FULL_WRITES
from ..errors import NKIRuntimeError
from . import bind, hbm_fill, loop_cover, out_forward
from .alloc_run import PlacedAlloc, PlacedAllocPO
from .blocks import PLACEMENT, blocks_of, placement
from . import numerics as nm
from .env import STATE, Buf, Closure, Fault, finish, guard, reader
from .memory import Memory, MemoryFault, fill_sentinel, resolve_psum_offset, sentinel_filler
from .views import skips_oob

if TYPE_CHECKING:
    from .decoder import Decoder


def alloc(dec: Decoder, op: nisa.AllocOp):
    s = dec.define(op.result, op)
    b = dec.bufs[op.result]
    shape, dt, space, fslot = b.shape, b.dtype, b.space, b.flags
    if space in HBM_SPACES:
        ts = hbm_fill.track(dec, op.result)
        if ts is not None and out_forward.hoisted(dec, op):
            def run_once(env):    # also evaluated ahead by a forwarded tile (out_forward.py)
                if env[ts] is None:
                    env[s] = np.empty(shape, dt)
                    env[ts] = []
            out_forward.create_once(dec, op, run_once)
            return guard(op, run_once)
        if ts is not None:    # write-only: sentinels where no DMA wrote, after the run
            def run_tracked(env):
                env[s] = np.empty(shape, dt)
                env[ts] = []
            return guard(op, run_tracked)

        def run(env):
            env[s] = Memory.hbm(shape, dt)
        return guard(op, run)
    attrs = {k: op.attributes.get(k) for k in ("nkim.partition", "nkim.offset", "nkim.bank",
                                                "nkim.copies", "nkim.copy_stride")}
    if all(attrs[k] is None for k in ("nkim.partition", "nkim.offset", "nkim.bank")):
        def run(env):  # unplaced: a private array per execution
            data, flags = Memory.private(space, shape, dt)
            fill_sentinel(data)
            env[s] = data
            if fslot is not None:
                env[fslot] = flags
            qr = env[STATE].queues
            if qr is not None and qr.hazards is not None:
                qr.hazards.on_alloc(op, s, data, space)
        return guard(op, run)
    vals = {}
    for k, a in attrs.items():
        if a is not None and not isinstance(a, IntegerAttr):
            raise error_at(op, f"nisa.alloc: attribute {k} must be an integer, got {a}",
                           NKIRuntimeError)
        vals[k] = None if a is None else int(a.value.data)
    p0 = vals["nkim.partition"] or 0
    try:
        off = (resolve_psum_offset(vals["nkim.offset"], vals["nkim.bank"]) if space == "psum"
               else vals["nkim.offset"] or 0)
    except MemoryFault as e:
        raise error_at(op, f"nisa.alloc: {e}", NKIRuntimeError) from None
    copies = vals["nkim.copies"] or 1
    stride = vals["nkim.copy_stride"]
    if copies < 1 or (copies > 1 and (stride is None or stride <= 0)):
        raise error_at(op, f"nisa.alloc: nkim.copies = {copies} needs a positive "
                           f"nkim.copy_stride, got {stride}", NKIRuntimeError)
    cslot = dec.use(op, op.copy_index, "copy") if op.copy_index is not None else None
    token = next(_TOKENS)  # the typed views per copy, kept with the state's memory
    # the contiguous block of bytes each copy is stored in (blocks.py), None: the whole memory
    in_block = tuple(dec.blocks.get((op, c)) for c in range(copies))
    first = written_first(op, dec.blocks, dec.next_memory_op)
    fill = None if first else sentinel_filler(dt)
    # the next instruction sets every flag of a tile it wholly writes, except a matmul,
    # which reads them (overwrite or add) first
    clear = fslot is not None and (first is None or first == "nisa.matmul")
    fwd = out_forward.plan(dec, op)   # computed in an output view (program order)
    facts = (site_of(op, hint=True), s, fslot, token, cslot, copies, space, p0, off,
             stride or 0, shape, dt, in_block, fill, clear)
    # a bf16 / fp8 tile stored as float32 (NKI_PRECISE_FP=0): placed by its declared bytes
    decl = dec.declared(b) if dec.wide and np.dtype(dt) != dec.declared(b) else None
    if fwd is not None:
        return guard(op, PlacedAlloc(*facts, fwd, decl=decl).run)
    g = guard(op, PlacedAlloc(*facts, decl=decl).run)
    # (:func:`.env.program_order`)
    g.program_order = guard(op, PlacedAllocPO(*facts, decl=decl).run)
    return g


_TOKENS = itertools.count()

#: instructions that write every element of their ``dst`` (and of an activation's
#: ``reduce_res``) without reading it first (a ``nisa.matmul`` only with
#: :func:`_matmul_overwrites`)
#: (the instruction definitions' ``full_writes`` and these hand-written ones: a live dict)
FULL_WRITES = _FULL_WRITES
#: ops that neither read nor write SBUF / PSUM bytes
_NO_MEMORY = ("arith.", "memref.subview", "memref.reinterpret_cast", "memref.cast",
              "nisa.view_dtype", "nisa.alloc", "nisa.release")
#: ops whose result views the memory of their first operand (cf. views.py _VIEWS)
_VIEW_OPS = ("memref.subview", "memref.reinterpret_cast", "memref.cast", "nisa.view_dtype")


def _matmul_overwrites(op) -> bool:
    """Whether a ``nisa.matmul`` writes its whole ``dst`` without reading it when the
    matmul-written flags of ``dst`` are clear (a transpose, or ``overwrite`` / ``auto``)."""
    if prop_flag(op, "is_transpose"):
        return True
    mode = op.psum_accumulate_flags.data if op.psum_accumulate_flags is not None else "auto"
    return mode in ("overwrite", "auto")


def written_first(op: nisa.AllocOp, blocks: dict | None = None,
                  skips: dict | None = None) -> str | None:
    """The name of the instruction that, in program order, wholly writes the tensor ``op``
    allocates before anything could read its bytes, or None: the next instruction in its
    block that may touch its bytes writes it as a whole (:data:`FULL_WRITES`, not through a
    view) and does not also read it, and only ops that touch no SBUF / PSUM bytes, or (given
    the decoder's ``blocks``, :func:`.blocks.plan`) instructions whose tensor operands all
    lie outside the blocks of ``op``'s bytes, come between.  Then the sentinel fill of a
    fresh tile can never be observed (by this tensor or by one placed over the same bytes)
    and is skipped.  (A ``nisa.matmul`` writes the whole tile without reading it only when
    the alloc has cleared the tile's matmul-written flags.)  When the first op touching
    memory after the alloc is an ``scf.for`` running at least once, the answer is the
    instruction of its body that writes the tile whole in the first iteration, under the
    same conditions, or the instruction writing it box by box over the iterations
    (:func:`_written_in_loop`).

    ``skips`` (one dict per decoded function, :attr:`.decoder.Decoder.next_memory_op`)
    memoises the first memory-touching op after each op, so a block of ``n`` consecutive
    allocs costs O(n), not O(n^2) (a kernel allocating thousands of tiles up front).  At
    most :data:`_APART_SCAN` instructions apart from the tile are passed over (then None:
    the fill stays), so tiles allocated long before their first write -- a module in the
    kernel's own order, before ``nisa-schedule`` moved each alloc next to its first use --
    cost O(n) each, not a walk to the writer."""
    v = op.result
    mine = _ABSENT          # blocks_of(op, blocks) (None without blocks), when first needed
    skips = {} if skips is None else skips
    cur = op
    for _ in range(_APART_SCAN + 1):
        nxt = _next_memory_op(cur, skips)
        for use in v.uses:  # a use between ``cur`` and ``nxt`` (a subview, ...): None
            # (every op walked over is in ``skips``, mapped to ``nxt``; a later one is not)
            if skips.get(id(use.operation), _ABSENT) is nxt:
                return None
        if nxt is None:
            return None
        if nxt.name == "scf.for":
            mine = _blocks(op, blocks) if mine is _ABSENT else mine
            return _written_in_loop(nxt, op, mine, blocks)
        found = _writes_whole(nxt, v)
        if found is not _ABSENT:
            return found
        if v in nxt.operands:
            return None
        mine = _blocks(op, blocks) if mine is _ABSENT else mine
        if mine is None or not _apart(nxt, op, mine, blocks):
            return None
        cur = nxt
    return None


def _blocks(op, blocks: dict | None):
    return blocks_of(op, blocks) if blocks is not None else None


#: memory-touching instructions :func:`written_first` passes over, at most
_APART_SCAN = 64


def _writes_whole(ins, v):
    """The name of ``ins`` when it writes the whole of ``v`` without reading it
    (:data:`FULL_WRITES`; not a DMA skipping out-of-bounds addresses, which may transfer
    nothing, :func:`.views.skips_oob`), None when it takes ``v`` otherwise, ``_ABSENT`` when it is not
    a whole-tile writer taking ``v``."""
    roles = FULL_WRITES.get(ins.name)
    if roles is None or v not in ins.operands:
        return _ABSENT
    written = [getattr(ins, r, None) for r in roles]
    ok = v in written and sum(1 for o in ins.operands if o is v) == 1 and \
        (ins.name != "nisa.matmul" or _matmul_overwrites(ins)) and not skips_oob(ins)
    return ins.name if ok else None


def _const_int(v) -> int | None:
    owner = v.op if isinstance(v, OpResult) else None
    if owner is not None and owner.name == "arith.constant":
        a = owner.properties.get("value")
        if isinstance(a, IntegerAttr):
            return int(a.value.data)
    return None


#: ops of a loop body :func:`_written_in_loop` looks at, at most
_LOOP_SCAN = 64


def _written_in_loop(loop, op, mine, blocks) -> str | None:
    """:func:`written_first` when the first op after ``op`` touching memory is the
    ``scf.for`` ``loop``, which runs at least once (decode-time constant bounds): the name
    of the instruction of its body that wholly writes ``op``'s tensor in the first iteration
    before anything could read its bytes (only ops touching no memory, or instructions
    apart from its blocks, before it in the body), or else that writes it box by box over
    the iterations (:func:`_written_over_loop`); else None."""
    v = op.result
    body = loop.body.block
    if not any(u.operation.parent_block() is body for u in v.uses):
        return None      # (cheap: many allocs in a row before one loop walk nothing)
    lo, hi, step = (_const_int(x) for x in (loop.lb, loop.ub, loop.step))
    if lo is None or hi is None or step is None or step <= 0 or lo >= hi or loop.iter_args:
        return None
    for n, x in enumerate(body.ops):
        if n >= _LOOP_SCAN:
            return None
        if x.name.startswith(_NO_MEMORY):
            if v in x.operands:
                break
            continue
        found = _writes_whole(x, v)
        if found is not _ABSENT:
            if found is not None:
                return found
            break
        if v in x.operands or mine is None or not _apart(x, op, mine, blocks):
            break
    return _written_over_loop(loop, op, mine, blocks, range(lo, hi, step))


def _written_over_loop(loop, op, mine, blocks, ivs: range) -> str | None:
    """The name of the instruction ``w`` of ``loop``'s body that writes the SBUF tensor
    ``op`` allocates box by box over the iterations ``ivs``, when those boxes cover it
    (:mod:`.loop_cover`) and nothing else in the loop can touch its bytes: its only use in
    the loop is one ``memref.subview`` of it in the body, whose only use is ``w``, writing
    it whole (:data:`FULL_WRITES`; not a matmul, not a DMA skipping out-of-bounds
    addresses) with its other operands apart from the tensor's blocks, and every other op
    of the body touches no memory or is an instruction apart from them.  Then every
    element is written before anything reads it, in the iteration that writes it or after
    the loop.  Else None (a PSUM tensor too: its alloc clears its matmul-written flags)."""
    v = op.result
    t = v.type
    space = t.memory_space.space.data if isinstance(t.memory_space, MemSpaceAttr) else None
    if mine is None or space != "sbuf" or len(ivs) > loop_cover.MAX_TRIPS:
        return None
    body = loop.body.block
    inside = [u.operation for u in v.uses if loop.is_ancestor(u.operation)]
    sv = inside[0] if len(inside) == 1 else None
    if sv is None or sv.name != "memref.subview" or sv.parent_block() is not body:
        return None
    users = [u.operation for u in sv.result.uses]
    w = users[0] if len(users) == 1 else None
    if w is None or w.parent_block() is not body or w.name == "nisa.matmul" or \
            _writes_whole(w, sv.result) in (None, _ABSENT) or \
            not _apart(w, op, mine, blocks, besides=sv.result):
        return None
    for n, x in enumerate(body.ops):
        if n >= _LOOP_SCAN:
            return None
        if x is sv or x is w or x.name.startswith(_NO_MEMORY) or \
                (x.name == "scf.yield" and not x.operands):
            continue
        if not _apart(x, op, mine, blocks):
            return None
    boxes = loop_cover.subview_boxes(sv, body.args[0], ivs)
    if boxes is None or not loop_cover.covers(t.get_shape(), *boxes):
        return None
    return w.name


_ABSENT = object()


def _next_memory_op(op, skips: dict):
    """The first op after ``op`` in its block whose name is not in :data:`_NO_MEMORY`, or
    None; every op walked over is memoised in ``skips`` (keyed by ``id``)."""
    walked = []
    nxt = op.next_op
    found = None
    while nxt is not None:
        hit = skips.get(id(nxt), _ABSENT)
        if hit is not _ABSENT:
            found = hit
            break
        if not nxt.name.startswith(_NO_MEMORY):
            found = nxt
            break
        walked.append(nxt)
        nxt = nxt.next_op
    for w in walked:        # each op after a skipped one leads to the same op
        skips[id(w)] = found
    return found


def _apart(ins, op, mine: tuple, blocks: dict, besides=None) -> bool:
    """Whether instruction ``ins`` (no regions) has only tensor operands that cannot share
    bytes with ``op``'s: HBM tensors, unplaced (private) tiles, or placed tiles of the
    other memory or of other blocks (blocks never share bytes, :mod:`.blocks`), the operand
    ``besides`` (when given) left out."""
    if not ins.name.startswith("nisa.") or ins.regions:
        return False
    space, mine_blocks = mine
    for x in ins.operands:
        if x is besides or not isinstance(x.type, MemRefType):
            continue
        while isinstance(x, OpResult) and x.op.name in _VIEW_OPS:
            x = x.op.operands[0]
        t = x.type
        ms = t.memory_space.space.data if isinstance(t.memory_space, MemSpaceAttr) else "hbm"
        if ms in HBM_SPACES or ms != space and ms in ("sbuf", "psum"):
            continue
        if not isinstance(x, OpResult) or x.op.name != "nisa.alloc" or x.op is op:
            return False
        theirs = blocks_of(x.op, blocks)
        if theirs is None:
            if placement(x.op) is None and all(x.op.attributes.get(k) is None
                                                for k in PLACEMENT):
                continue          # unplaced: a private array
            return False
        if theirs[0] != space:
            continue
        if theirs[1] & mine_blocks:
            return False
    return True



def release(dec: Decoder, op: nisa.ReleaseOp):
    return None


def copy_closure(dst: Buf, src: Buf, exact: bool, transposed: bool = False) -> Closure:
    """A closure copying ``src`` into ``dst`` (same element count, any shapes).

    Bit-exact if ``exact`` (equal dtypes), else read as float32 and cast to ``dst``'s dtype.
    ``transposed``: ``src`` may be bound to a transposed view (:mod:`.bind`).
    """
    d, s, shape = dst.slot, src.slot, dst.shape
    if exact:
        if dst.shape == src.shape and transposed:
            def run(env):
                bind.copy_into(env, env[d], env[s])
        elif dst.shape == src.shape:
            def run(env):
                env[d][...] = env[s]
        else:
            def run(env):
                env[d][...] = env[s].reshape(shape)
    else:
        store, read = nm.make_store(dst.dtype), reader(src, shape)

        def run(env):
            store(env[d], read(env))
    return run


def dma_copy_indirect(dec: Decoder, op):
    dst, src = dec.buf(op, op.dst, "dst"), dec.buf(op, op.src, "src")
    si = dec.buf(op, op.src_index, "src_index") if op.src_index is not None else None
    di = dec.buf(op, op.dst_index, "dst_index") if op.dst_index is not None else None
    if si is None and di is None:
        raise error_at(op, "nisa.dma_copy_indirect: needs 'src_index' or 'dst_index'", NKIRuntimeError)
    flag = op.properties.get("oob_is_err")
    oob_err = not isinstance(flag, IntegerAttr) or bool(flag.value.data)
    n = (si or di).shape[0]
    ds, ss = dst.slot, src.slot
    dshape, sshape = dst.shape, src.shape
    rest = tuple(dshape[1:])
    exact = dst.dtype == src.dtype
    store = nm.make_store(dst.dtype)
    ddt = dst.dtype
    sis = si.slot if si is not None else None
    dis = di.slot if di is not None else None
    ident = np.arange(n, dtype=np.int64)
    every = np.ones(n, bool)     # (read only: combined with ``&`` into a fresh mask)

    def rows(env, slot, role, table_role, bound):
        if slot is None:
            return ident, every
        idx = nm.to_int64(env[slot]).reshape(-1)
        ok = (idx >= 0) & (idx < bound)
        if oob_err and not ok.all():
            i = int(np.argmin(ok))
            raise Fault(f"'{role}' value {int(idx[i])} at partition {i} is out of bounds: "
                        f"'{table_role}' has {bound} rows (valid indices 0..{bound - 1}); "
                        f"use oob_mode=nisa.oob_mode.skip to skip such rows")
        return idx, ok

    def run(env):
        s_rows, s_ok = rows(env, sis, "src_index", "src", sshape[0])
        d_rows, d_ok = rows(env, dis, "dst_index", "dst", dshape[0])
        ok = s_ok & d_ok
        vals = env[ss][s_rows[ok]].reshape((-1,) + rest)
        if not exact:
            tmp = np.empty(vals.shape, ddt)
            store(tmp, nm.to_f32(vals))
            vals = tmp
        env[ds][d_rows[ok]] = vals
    return finish(op, run, dst)


