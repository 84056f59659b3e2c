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

The tile's SBUF bytes then keep what they held (no reader can see them); in queue mode
(hazard checks, the cost model) the DMA copies as always.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import BlockArgument, Operation, OpResult
from xdsl.irdl import IRDLOperation

from ..dialects.effects import accesses, base_buffer
from .blocks import alone, placement
from .env import STATE, Closure

if TYPE_CHECKING:
    from .decoder import Decoder


def _args_written(dec: Decoder, func_op: Operation) -> bool:
    """Whether some instruction of ``func_op`` writes a function argument (or a view of one)."""
    cached = dec.memo.get("args written")
    if cached is None:
        cached = False
        for op in func_op.walk():
            if isinstance(op, IRDLOperation) and op.name.startswith("nisa."):
                for a in accesses(op):
                    if a.is_write and isinstance(a.base, BlockArgument):
                        cached = True
                        break
            if cached:
                break
        dec.memo["args written"] = cached
    return cached


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
    if not isinstance(base_buffer(src), BlockArgument):
        return False
    func_op = dst.op.parent_op()
    while func_op is not None and func_op.name != "func.func":
        func_op = func_op.parent_op()
    if func_op is None or _args_written(dec, func_op):
        return False
    p = placement(dst.op)      # an SBUF tile alone in its block
    return p is not None and p[0] == "sbuf" and alone(dst.op, dec.blocks, dec.memo) \
        and _only_read(dst, op)


def forwarding(copy: Closure, d: int, s: int, shape: tuple[int, ...], itemsize: int) -> Closure:
    """The closure of a :func:`forwardable` DMA: in program order, bind ``env[d]`` to the
    source ``env[s]`` when its layout is the tile's (free strides row-major, partition stride
    at least a partition's bytes); otherwise (and in queue mode) run ``copy``."""
    free = []
    n = itemsize
    for dim in reversed(shape[1:]):
        free.append(n)
        n *= dim
    free_strides, row = tuple(reversed(free)), n

    def run(env):
        v = env[s]
        if env[STATE].queues is None:
            st = v.strides
            if st[1:] == free_strides and st[0] >= row:
                env[d] = v
                return
        copy(env)
    return run
