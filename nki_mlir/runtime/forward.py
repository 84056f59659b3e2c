"""DMA forwarding: a tile loaded from a read-only kernel input is read from the input itself.

In program order (``Program.run(mode="program-order")``), a ``nisa.dma_copy`` of an input
array (a view of a kernel argument) into a whole SBUF tile can bind the tile's SSA value to
the source view instead of copying it, when the copy could never be told apart from the
source (:func:`forwardable`, decided at decode time):

- the tile is a placed SBUF ``nisa.alloc`` whose every copy is alone in its block
  (:mod:`.blocks`: no other tensor can share its bytes, so only its own SSA value reads them);
- every other use of the tile, directly or through ``memref.subview`` chains, is an
  instruction operand that is only read (:func:`~nki_mlir.dialects.effects.accesses`), so
  nothing writes through the binding into the input;
- no instruction of the function writes any kernel argument (the source cannot change while
  the tile is read, even when the caller passes one array for two arguments);
- same dtype and shape, and (checked when the DMA runs, :func:`forwarding`) the source's
  strides equal the tile's in every free dim and its partition stride is at least a
  partition's bytes, as the tile's: NumPy then iterates both alike, so every reader computes
  the same bits on either array.

The tile's SBUF bytes then keep what they held (no reader can see them).

A *broadcast* load -- a source view repeating one row on every partition (partition stride
0, e.g. ``gamma.ap([[0, 128], [1, F]])``) -- forwards too when every other use of the tile
is a direct operand of an instruction computing each result element from the same element
of each operand and nothing else (:data:`BROADCAST_READERS`: ``tensor_tensor``,
``tensor_scalar``; no subview, no reduction, no matmul, whose bits may depend on the
operand's layout): IEEE arithmetic on one element gives the same bits wherever the element
is read from (:func:`broadcast_readers`, decided at decode time).

In queue mode with the hazard checks on (:mod:`.hazards`), a forwardable DMA whose tile is
read only directly (no subview of it: :func:`queued`) forwards too, decided when it is
enqueued: the checks first see the DMA and every later reader exactly as without forwarding
(the tile's footprint, written by the DMA), then the tile's SSA value is bound to a fresh
view of the source that the checks know as the tile (:meth:`~.hazards.Checker.forward`), and
the DMA instance copies nothing.  A reader the checks pass happens after the DMA, which
would have run first, and the source never changes, so it reads the same bits.  Queue mode
without the checks (where a missing wait must change the results) and the cost model copy
as always.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult
from xdsl.irdl import IRDLOperation

from ..dialects.effects import VIEW_OPS, accesses, base_buffer, written
from .blocks import alone, placement
from .env import STATE, Closure

if TYPE_CHECKING:
    from .decoder import Decoder


def _args_written(dec: Decoder, func_op: Operation) -> bool:
    """Whether some instruction of ``func_op`` writes a function argument (or a view of one):
    a ``nisa`` instruction one of whose written operands (:func:`written`) has a block
    argument as its :func:`base_buffer`.

    Only the users of such values are looked at: the values whose base buffer is a block
    argument are the block arguments of the blocks in ``func_op`` and, transitively, the
    results of the view ops (``VIEW_OPS``) taking one as their first operand -- the chain
    :func:`base_buffer` walks back -- and every user of a value defined in ``func_op`` is in
    ``func_op``."""
    cached = dec.memo.get("args written")
    if cached is None:
        cached = any(_writes_a_view(x) for x in _arg_views(func_op))
        dec.memo["args written"] = cached
    return cached


def _arg_views(func_op: Operation) -> list:
    """The values defined in ``func_op`` whose :func:`base_buffer` is a block argument."""
    todo = []
    stack = list(func_op.regions)
    while stack:
        region = stack.pop()
        for block in region.blocks:
            todo.extend(block.args)
            for op in block.ops:
                if op.regions:
                    stack.extend(op.regions)
    out = []
    while todo:
        x = todo.pop()
        out.append(x)
        for use in x.uses:
            u = use.operation
            if use.index == 0 and u.name in VIEW_OPS:
                todo.extend(u.results)
    return out


def _writes_a_view(x) -> bool:
    """Whether a ``nisa`` instruction using ``x`` writes it."""
    for use in x.uses:
        u = use.operation
        if u.name.startswith("nisa.") and isinstance(u, IRDLOperation) and \
                any(v is x for v in written(u)):
            return True
    return False


def function_of(op: Operation) -> Operation | None:
    """The ``func.func`` holding ``op``, or None."""
    f = op.parent_op()
    while f is not None and f.name != "func.func":
        f = f.parent_op()
    return f


def args_read_only(dec: Decoder, op: Operation) -> bool:
    """Whether no instruction of the function holding ``op`` writes a kernel argument (so an
    argument's contents are those the caller passed for the whole run)."""
    func_op = function_of(op)
    return func_op is not None and not _args_written(dec, func_op)


def _only_read(v, dma: Operation) -> bool:
    """Whether every use of ``v`` (and of the subviews of it) other than ``dma`` only reads."""
    todo = [v]
    while todo:
        x = todo.pop()
        for use in x.uses:
            u = use.operation
            if u is dma:
                continue
            if u.name == "memref.subview" and use.index == 0:
                todo.append(u.results[0])
                continue
            if u.name == "nisa.release":
                continue
            if not (isinstance(u, IRDLOperation) and u.name.startswith("nisa.")) or u.regions:
                return False
            for a in accesses(u):
                if a.value is x and a.is_write:
                    return False
            if not any(a.value is x for a in accesses(u)):
                return False          # an operand the access table does not describe
    return True


def forwardable(dec: Decoder, op: Operation) -> bool:
    """Whether the ``nisa.dma_copy`` ``op`` may bind its ``dst`` tile to its ``src`` view in
    program order (see the module docstring; the stride condition is checked at run time)."""
    dst, src = op.dst, op.src
    if not (isinstance(dst, OpResult) and dst.op.name == "nisa.alloc"):
        return False
    if not (isinstance(dst.type, MemRefType) and isinstance(src.type, MemRefType)):
        return False
    if dst.type.element_type != src.type.element_type or \
            tuple(dst.type.get_shape()) != tuple(src.type.get_shape()):
        return False
    if dec.wide and dec.stored_as(dst) != dec.stored_as(src):   # (NKI_PRECISE_FP=0)
        return False
    if not isinstance(base_buffer(src), BlockArgument):
        return False
    if not args_read_only(dec, dst.op):
        return False
    p = placement(dst.op)      # an SBUF tile alone in its block
    return p is not None and p[0] == "sbuf" and alone(dst.op, dec.blocks, dec.memo) \
        and _only_read(dst, op)


#: instructions whose every result element is computed from the same element of each operand
#: alone (no reduction, no layout-dependent BLAS call): reading a forwarded tile through a
#: view with partition stride 0 gives them the copied tile's bits (module docstring)
BROADCAST_READERS = frozenset({"nisa.tensor_tensor_arith", "nisa.tensor_scalar_arith"})


def broadcast_readers(op: Operation) -> bool:
    """Whether every use of the :func:`forwardable` DMA ``op``'s tile other than ``op`` and
    ``nisa.release`` is an operand of a :data:`BROADCAST_READERS` instruction (so the tile
    may be bound to a source view with partition stride 0)."""
    for use in op.dst.uses:
        u = use.operation
        if u is op or u.name == "nisa.release":
            continue
        if u.name not in BROADCAST_READERS:
            return False
    return True


#: :attr:`Decoder.memo <.decoder.Decoder.memo>` key of ``{dma op: plan}``: the DMAs that forward in
#: hazard-checked queue mode (:func:`queued`)
QUEUED = "forward in queue mode"


def _direct_only(v, dma: Operation) -> bool:
    """Whether every use of ``v`` other than ``dma`` (and ``nisa.release``) is an instruction
    operand taking ``v`` itself (no subview: the checks find a reader's bytes from its view)."""
    return all(u.operation is dma or u.operation.name == "nisa.release" or
               u.operation.name != "memref.subview" for u in v.uses)


def queued(dec: Decoder, op: Operation, d: int, s: int, shape: tuple[int, ...],
           itemsize: int, broadcast: bool = False) -> None:
    """Record the plan ``(d, s, free strides, partition bytes, broadcast)`` of the
    :func:`forwardable` DMA ``op`` in ``dec.memo[QUEUED]`` when its tile is read only
    directly, so that it forwards in hazard-checked queue mode too (see the module
    docstring); ``broadcast``: a source with partition stride 0 forwards too
    (:func:`broadcast_readers`)."""
    if _direct_only(op.dst, op):
        free, row = _layout(shape, itemsize)
        dec.memo.setdefault(QUEUED, {})[op] = (d, s, free, row, broadcast)


def _layout(shape: tuple[int, ...], itemsize: int) -> tuple[tuple[int, ...], int]:
    """The free strides (row-major) and the partition's bytes of a tile of ``shape``."""
    free = []
    n = itemsize
    for dim in reversed(shape[1:]):
        free.append(n)
        n *= dim
    return tuple(reversed(free)), n


def forwarding(copy: Closure, d: int, s: int, shape: tuple[int, ...], itemsize: int,
               broadcast: bool = False) -> Closure:
    """The closure of a :func:`forwardable` DMA: in program order, bind ``env[d]`` to the
    source ``env[s]`` when its layout is the tile's (free strides row-major, partition stride
    at least a partition's bytes, or 0 with ``broadcast``: :func:`broadcast_readers`);
    otherwise (and in queue mode) run ``copy``."""
    free_strides, row = _layout(shape, itemsize)

    def run(env):
        v = env[s]
        if env[STATE].queues is None:
            st = v.strides
            if st[1:] == free_strides and (st[0] >= row or (broadcast and st[0] == 0)):
                env[d] = v
                return
        copy(env)
    return run
