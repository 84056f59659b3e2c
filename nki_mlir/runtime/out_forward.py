"""Output forwarding: a tile that leaves only through one DMA into an output is computed there.

The mirror of DMA forwarding (:mod:`.forward`, which reads an input tile from the input).
In program order (``Program.run(mode="program-order")``, outside SPMD / LNC launches), the
SBUF tile ``%t = nisa.alloc`` of a ``nisa.dma_copy(dst=%v, src=%t)`` whose ``%v`` is a
view of a write-only HBM output (:func:`.hbm_fill.write_only`) can bind its SSA value to
``%v`` itself when the alloc executes: the instructions then write (and read) the tile in
the output, and the DMA has nothing left to copy.  That can never be told apart from the
copy (:func:`plan` checks it at decode time):

- the tile is a placed SBUF ``nisa.alloc`` whose every copy is alone in its block
  (:mod:`.blocks`: no other SSA value can see its bytes, which then keep what they held);
- the alloc and the DMA are ops of one block, and every other use of the tile (directly or
  through ``memref.subview`` chains; ``nisa.release`` excepted) is an instruction operand
  the access table describes (:func:`~nki_mlir.dialects.effects.accesses`), placed between
  the two (so every write reaches the output before the DMA would have copied it, and no
  read happens after the DMA, when a later DMA may have overwritten the output), and none
  lets another value show the tile's bytes (no other view op; no ``nc_transpose`` bound
  to the tile's transposed view, :mod:`.bind`);
- the output is written only by ``nisa.dma_copy`` and never read (write-only), and none of
  its other DMAs lies between the alloc and the DMA: nothing observes the output while
  the tile is live, and writes to it keep their order;
- same dtype and shape; the view ``%v`` can be computed when the alloc executes: every
  value it depends on is defined before the alloc, or by a pure op between the two
  (``memref.subview``, ``arith`` index arithmetic, or the output's own ``nisa.alloc`` when
  it is an op of the function body, which then creates the output once per run), which the
  alloc evaluates ahead (a fault there leaves the tile in SBUF: the op faults at its place);
- at run time, the view's strides equal the tile's in every free dim and its partition
  stride is at least a partition's bytes (as :func:`.forward.forwarding` checks), so NumPy
  iterates both alike; otherwise the tile stays in SBUF and the DMA copies.

The alloc's sentinel fill (when its next instruction does not write the whole tile) then
fills the output view, so a never-written element reads and returns as before.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.irdl import IRDLOperation

from ..dialects.common import HBM_SPACES, space_of
from ..dialects.effects import VIEW_OPS, accesses
from .bind import bindable
from .blocks import alone, placement
from .control import INT_BINARY
from .env import Closure
from .hbm_fill import write_only
from .views import skips_oob

if TYPE_CHECKING:
    from .decoder import Decoder

#: ops evaluated ahead of their place when a forwarded tile's output view needs them
_PURE = frozenset({"memref.subview", "arith.index_cast", "arith.index_castui", *INT_BINARY})


class Plan:
    """A forwarded tile (module docstring): ``bound`` is the env slot holding the output
    view the tile is bound to in this execution (None: the tile is in SBUF), ``view`` the
    DMA's ``dst`` slot, ``chain`` the ops evaluated ahead and ``pre`` their closures."""

    __slots__ = ("bound", "view", "chain", "pre", "free_strides", "row", "shape")

    def __init__(self, bound: int, chain: list, shape: tuple, itemsize: int):
        self.bound, self.chain, self.shape = bound, chain, shape
        self.view = -1          # set with ``pre`` when the DMA is decoded (:func:`copying`)
        self.pre: tuple = ()
        free, n = [], itemsize
        for dim in reversed(shape[1:]):
            free.append(n)
            n *= dim
        self.free_strides, self.row = tuple(reversed(free)), n

    def bind(self, env: list) -> np.ndarray | None:
        """The output view the tile is computed in for this execution, or None."""
        if self.view < 0:
            return None
        try:
            for f in self.pre:
                f(env)
        except Exception:  # noqa: BLE001 -- the op faults again at its place, as before
            env[self.bound] = None
            return None
        v = env[self.view]
        if type(v) is np.ndarray and v.shape == self.shape:
            st = v.strides
            if st[1:] == self.free_strides and st[0] >= self.row:
                env[self.bound] = v
                return v
        env[self.bound] = None
        return None


def _hbm(v: SSAValue) -> bool:
    """Whether ``v`` lives in HBM (a memref without a memory space is an HBM tensor)."""
    return (space_of(v) or "hbm") in HBM_SPACES


def _view_base(v: SSAValue) -> Operation | None:
    """The HBM ``nisa.alloc`` that ``v`` is (a ``memref.subview`` chain of), or None."""
    while isinstance(v, OpResult) and v.op.name == "memref.subview":
        v = v.op.operands[0]
    if isinstance(v, OpResult) and v.op.name == "nisa.alloc" and _hbm(v):
        return v.op
    return None


def _in(block: Block, op: Operation) -> Operation | None:
    """The op of ``block`` that is ``op`` or holds it, or None."""
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op


def _positions(dec: Decoder, block: Block) -> dict:
    memo = dec.memo.setdefault("op positions", {})
    pos = memo.get(block)
    if pos is None:
        pos = memo[block] = {op: i for i, op in enumerate(block.ops)}
    return pos


def _the_dma(t: SSAValue) -> Operation | None:
    """The one ``nisa.dma_copy`` copying all of ``t`` into a view of an HBM alloc (and not
    skipping out-of-bounds addresses: :func:`.views.skips_oob`)."""
    found = None
    for use in t.uses:
        u = use.operation
        if u.name == "nisa.dma_copy" and u.src is t and u.dst is not t \
                and _view_base(u.dst) is not None and not skips_oob(u):
            if found is not None:
                return None
            found = u
    return found


def _uses_between(dec: Decoder, t: SSAValue, dma: Operation, inside) -> bool:
    """Whether every use of ``t`` (and of its subviews) but ``dma`` and ``nisa.release``s
    is an instruction operand the access table describes, ``inside`` the window, and none
    makes another value show the tile's storage (another view op, or a transpose bound to
    the tile's transposed view, :mod:`.bind`, whose readers may run after the DMA)."""
    todo = [t]
    while todo:
        x = todo.pop()
        for use in x.uses:
            u = use.operation
            if u is dma or u.name == "nisa.release":
                continue
            if not inside(u):
                return False
            if u.name in VIEW_OPS:
                if u.name != "memref.subview" or use.index != 0:
                    return False
                todo.append(u.results[0])
                continue
            if not (isinstance(u, IRDLOperation) and u.name.startswith("nisa.")) or u.regions:
                return False
            if not any(a.value is x for a in accesses(u)):
                return False
            if u.name == "nisa.nc_transpose" and u.data is x and bindable(dec, u):
                return False
    return True


def plan(dec: Decoder, alloc: Operation) -> Plan | None:
    """The :class:`Plan` of the placed SBUF ``alloc`` when its tile can be forwarded to an
    output (module docstring), else None; registers it for the DMA (:func:`copying`)."""
    t = alloc.results[0]
    p = placement(alloc)
    if p is None or p[0] != "sbuf" or not alone(alloc, dec.blocks, dec.memo):
        return None
    dma = _the_dma(t)
    if dma is None:
        return None
    v = dma.dst
    if not (isinstance(v.type, MemRefType) and isinstance(t.type, MemRefType)) or \
            v.type.element_type != t.type.element_type or \
            tuple(v.type.get_shape()) != tuple(t.type.get_shape()):
        return None
    if dec.wide and dec.stored_as(v) != dec.stored_as(t):   # (NKI_PRECISE_FP=0)
        return None
    block = alloc.parent_block()
    if block is None or dma.parent_block() is not block:
        return None
    pos = _positions(dec, block)
    lo, hi = pos[alloc], pos[dma]

    def inside(op: Operation) -> bool:
        o = _in(block, op)
        return o is not None and lo < pos[o] < hi

    if not _uses_between(dec, t, dma, inside):
        return None
    out = _view_base(v)
    writers = write_only(out.results[0])
    if writers is None or any(w is not dma and inside(w) for w in writers):
        return None
    chain: list = []
    if not _ahead(v, block, pos, lo, hi, chain, set()):
        return None
    if out in chain:        # created once per run, ahead of its place (hoisted)
        fop = block.parent_op()
        if fop is None or fop.name != "func.func":
            return None
        dec.memo.setdefault("out hoisted", set()).add(out)
    chain.sort(key=pos.__getitem__)
    pl = Plan(dec.fresh(), chain, dec.bufs[t].shape, np.dtype(dec.bufs[t].dtype).itemsize)
    dec.memo.setdefault("out forward", {})[dma] = pl
    return pl


def _ahead(v: SSAValue, block: Block, pos: dict, lo: int, hi: int, chain: list,
           seen: set) -> bool:
    """Whether ``v`` can be computed when the op at ``lo`` executes; collects the ops of
    the window ``(lo, hi)`` to evaluate ahead in ``chain``."""
    if isinstance(v, BlockArgument):
        return True
    op = v.op
    if op in seen:
        return True
    seen.add(op)
    o = _in(block, op)
    if o is None or pos[o] < lo:
        return True                  # defined before the alloc (or around its block)
    if o is not op or pos[o] >= hi:
        return False
    if op.name == "arith.constant":
        return True                  # folded into the env template
    if op.name == "nisa.alloc":
        if op.operands or not _hbm(v) or write_only(v) is None:
            return False
    elif op.name not in _PURE:
        return False
    chain.append(op)
    return all(_ahead(x, block, pos, lo, hi, chain, seen) for x in op.operands)


def hoisted(dec: Decoder, alloc: Operation) -> bool:
    """Whether the write-only HBM ``alloc`` may be evaluated ahead by a forwarded tile (it
    then creates its tensor once per run: an op of the function body runs once)."""
    return alloc in dec.memo.get("out hoisted", ())


def create_once(dec: Decoder, alloc: Operation, run: Closure) -> None:
    """``run`` (creating the :func:`hoisted` ``alloc``'s tensor once per run) is what a
    forwarded tile evaluates ahead for it: in program order outside launches (the only
    runs that evaluate ahead) the alloc's own closure runs just that."""
    dec.memo.setdefault("out once", {})[alloc] = run


def copying(dec: Decoder, dma: Operation, impl: Closure, src: int) -> Closure:
    """The closure of ``dma``: ``impl``, skipped when its source tile was forwarded to its
    destination in this execution (module docstring)."""
    pl = dec.memo.get("out forward", {}).get(dma)
    if pl is None:
        return impl
    pl.view = dec.slot_of[dma.dst]
    once = dec.memo.get("out once", {})
    pl.pre = tuple(once.get(op) or dec.built[id(op)] for op in pl.chain
                   if op in once or dec.built.get(id(op)) is not None)
    pl.chain = ()       # (the ops: a decoded program keeps none of the compile's IR)
    bound = pl.bound

    def run(env):
        b = env[bound]
        if b is None or env[src] is not b:
            impl(env)
    return run
