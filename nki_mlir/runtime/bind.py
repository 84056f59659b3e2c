"""Transpose binding: an ``nc_transpose`` whose result only copies read is a view of its source.

In program order (``Program.run(mode="program-order")``), ``nisa.nc_transpose`` of a 2-D
``data[P, F]`` into a whole tile ``dst[F, P]`` of the same dtype can bind ``dst``'s SSA value
to the transposed view ``data.T`` instead of writing the tile, when no reader could tell
(:func:`bindable`, decided at decode time):

- ``dst`` is a placed ``nisa.alloc`` whose every copy is alone in its block (:mod:`.blocks`):
  only its own SSA value reads its bytes, and they keep what they held;
- every other use of ``dst`` (``nisa.release`` aside) is a copy instruction (:data:`READERS`)
  taking it as its source, directly (no subview), in the transpose's block after it (or
  nested in an op after it).  A copy moves the same bits whatever the layout of its source
  (a reduction or BLAS would not: NumPy and BLAS pick their summation order by layout);
- no op between the transpose and the last reader may write bytes ``data`` shares
  (:func:`_clobbered`: ``data``'s buffer, and what that buffer may itself be bound to --
  the input a forwarded DMA reads (:mod:`.forward`), the source of a bound transpose --,
  compared by block, :mod:`.blocks`), so the view still holds the transposed values when
  each reader runs.

The tile's bytes and PSUM matmul-written flags keep what they held (only matmuls read the
flags, and none writes this tile).  The transposed copy then happens once, in the reader
(:func:`copy_into`), instead of twice (PSUM write, then the copy out of PSUM).  In queue mode
(hazard checks, the cost model) the transpose writes its tile as always.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, OpResult
from xdsl.irdl import IRDLOperation

from ..dialects.effects import accesses, base_buffer
from .blocks import alone, blocks_of, placement
from .env import STATE, Closure, scratch

if TYPE_CHECKING:
    from .decoder import Decoder

#: instructions that only copy their ``src`` (bit for bit, whatever its layout)
READERS = ("nisa.tensor_copy", "nisa.dma_copy")
#: ops that touch no memory (besides the nisa instructions, walked with :func:`accesses`)
_PURE = ("arith.", "memref.subview", "memref.reinterpret_cast", "memref.cast",
         "nisa.view_dtype", "nisa.alloc", "nisa.release", "scf.yield")


def _roots(dec: Decoder, value, depth: int = 0) -> list | None:
    """The buffers whose bytes ``value`` may show at run time: its base buffer, and for an
    alloc every buffer a copy into the whole alloc may bind it to (conservatively: the
    sources of all its whole-tile ``dma_copy`` / ``nc_transpose`` writers).  None: unknown."""
    base = base_buffer(value)
    out = [base]
    if depth > 8:
        return None
    if isinstance(base, OpResult) and base.op.name == "nisa.alloc":
        for use in base.uses:
            u = use.operation
            if u.name in ("nisa.dma_copy", "nisa.nc_transpose") and \
                    getattr(u, "dst", None) is base:
                src = u.src if u.name == "nisa.dma_copy" else u.data
                more = _roots(dec, src, depth + 1)
                if more is None:
                    return None
                out += more
    return out


def _kind(dec: Decoder, buf) -> tuple:
    """How a buffer's bytes may be shared: ``("off",)`` (HBM / kernel argument: any such
    buffer may), ``("chip", space, blocks)`` (placed), ``("own", buf)`` (a private array)."""
    if isinstance(buf, OpResult) and buf.op.name == "nisa.alloc":
        mine = blocks_of(buf.op, dec.blocks)
        if mine is not None:
            return ("chip",) + mine
        ms = getattr(buf.type, "memory_space", None)
        space = getattr(getattr(ms, "space", None), "data", None)
        if space in ("sbuf", "psum") and placement(buf.op) is None:
            return ("own", buf)
    return ("off",)


def _aliases(a: tuple, b: tuple) -> bool:
    if a[0] == "off" or b[0] == "off":
        return a[0] == b[0]
    if a[0] == "own" or b[0] == "own":
        return a == b
    return a[1] == b[1] and bool(a[2] & b[2])


def _clobbered(dec: Decoder, op: Operation, roots: list) -> bool:
    """Whether ``op`` (or an op nested in it) may write bytes of one of ``roots``."""
    kinds = [_kind(dec, r) for r in roots]
    for x in op.walk():
        if x.name.startswith(_PURE) or x.name in ("scf.for", "scf.if"):
            continue
        if not (isinstance(x, IRDLOperation) and x.name.startswith("nisa.")):
            return True
        described = set()
        for a in accesses(x):
            described.add(id(a.value))
            if a.is_write and any(_aliases(_kind(dec, a.base), k) for k in kinds):
                return True
        if any(isinstance(v.type, MemRefType) and id(v) not in described for v in x.operands):
            return True
    return False


def bindable(dec: Decoder, op: Operation) -> bool:
    """Whether the ``nisa.nc_transpose`` ``op`` may bind its ``dst`` tile to the transposed
    view of its ``data`` in program order (see the module docstring; memoised per decode)."""
    memo = dec.memo.setdefault("bindable", {})
    hit = memo.get(id(op))
    if hit is None:
        hit = memo[id(op)] = _bindable(dec, op)
    return hit


def bound_source(dec: Decoder, value) -> bool:
    """Whether ``value`` may be bound to a transposed view at run time: the ``dst`` of a
    :func:`bindable` ``nisa.nc_transpose`` (its readers then copy with :func:`copy_into`)."""
    if not (isinstance(value, OpResult) and value.op.name == "nisa.alloc"):
        return False
    return any(u.operation.name == "nisa.nc_transpose" and u.operation.dst is value and
               bindable(dec, u.operation) for u in value.uses)


def _bindable(dec: Decoder, op: Operation) -> bool:
    dst, src = op.dst, op.data
    if not (isinstance(dst, OpResult) and dst.op.name == "nisa.alloc"):
        return False
    if not (isinstance(dst.type, MemRefType) and isinstance(src.type, MemRefType)):
        return False
    if dst.type.element_type != src.type.element_type or len(dst.type.get_shape()) != 2 or \
            len(src.type.get_shape()) != 2:
        return False
    if dec.wide and dec.stored_as(dst) != dec.stored_as(src):   # (NKI_PRECISE_FP=0)
        return False
    if not alone(dst.op, dec.blocks, dec.memo):
        return False
    block = op.parent_block()
    later: set[int] = set()
    for use in dst.uses:
        u = use.operation
        if u is op or u.name == "nisa.release":
            continue
        if u.name not in READERS or getattr(u, "src", None) is not dst or \
                sum(1 for v in u.operands if v is dst) != 1:
            return False
        while u is not None and u.parent_block() is not block:
            u = u.parent_op()
        if u is None:
            return False
        later.add(id(u))
    roots = _roots(dec, src)
    if roots is None:
        return False
    x = op.next_op
    while later and x is not None:
        if _clobbered(dec, x, roots):
            return False
        later.discard(id(x))
        x = x.next_op
    return not later


def binding(write: Closure, d: int, s: int) -> Closure:
    """The closure of a :func:`bindable` transpose: in program order bind ``env[d]`` to the
    transposed view of ``env[s]``; in queue mode run ``write``."""
    def run(env):
        if env[STATE].queues is None:
            env[d] = env[s].T
            return
        write(env)
    return run


#: bytes of padding after each row of the scratch copy a transposing copy reads
#: (:func:`copy_into`): one cache line, so consecutive rows fall in different cache sets
_ROW_PAD = 64
#: a C-contiguous tile whose rows are a multiple of this many bytes apart and that spans
#: more than :data:`_L1_BYTES` is transposed through the padded scratch too
_ROW_ALIGN = 512
_L1_BYTES = 32 << 10


def copy_into(env: list, dst: np.ndarray, src: np.ndarray) -> None:
    """``dst[...] = src`` (same shape and dtype), faster for a 2-D ``src`` that is the
    transposed view of a tile ``t = src.T`` (a bound transpose): ``t`` is first copied row
    by row into a scratch array whose rows are padded by :data:`_ROW_PAD` bytes, and
    transposed from there.  NumPy transposes element by element, reading one element of
    every row of ``t`` per output row; when those rows lie a multiple of 4 KiB apart (SBUF /
    PSUM rows) or of 512 bytes in a tile over 32 KiB (a contiguous 128x128 float32 tile),
    they map to a few sets of a typical 32 KiB 8-way L1 cache, which then misses on most
    reads (2-3x slower).  Padded rows map to consecutive sets.  A copy: the same bits
    either way."""
    if src.ndim == 2 and src.strides[0] == src.itemsize and src.shape[0] > 1:
        t = src.T
        rows, cols = t.shape
        row = t.strides[0]
        if not t.flags.c_contiguous or (row % _ROW_ALIGN == 0 and rows * row > _L1_BYTES):
            pad = max(1, _ROW_PAD // t.itemsize)
            tmp = scratch(env, (rows, cols + pad), t.dtype)[:, :cols]
            tmp[...] = t          # (np.copyto's copy, without its Python-level dispatcher)
            src = tmp.T
    dst[...] = src
