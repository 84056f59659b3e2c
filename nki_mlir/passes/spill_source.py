"""Reloading a spilled tensor's tiles from the kernel input they were loaded from (the
*tiled rematerialisation* of :mod:`.spill`).

A tensor ``T`` filled tile by tile by one DMA in a loop nest, e.g.::

    for bn in range(2):                 # scf.for, 0 .. T.shape[1]
        for k in range(64):             # scf.for, 0 .. T.shape[2]
            dma_copy(dst=T[:, bn, k, :], src=rhs[k * 128:..., (n * 2 + bn) * 512:...])

holds at ``T[:, a, b, :]`` what the DMA read from its source with ``bn = a, k = b``.  So a
later read of the view ``T[:, a, b, :]`` (same sizes) can load its tile from that source
view directly: :meth:`TiledSource.reload` re-emits the source view (and the index
arithmetic inside the nest it depends on) with each loop's induction variable replaced by
the read's offset.  Conditions (:func:`tiled_source`): the DMA's destination is one
``memref.subview`` of ``T`` with unit strides whose dynamic offsets are exactly the
induction variables of the loops between ``T``'s block and the DMA, each once, each loop
``scf.for`` from 0 to that dimension's size by 1 with a size-1 slice there, the other
dimensions whole; the caller checks the rest (one writer, an input nothing writes, reads
after the nest).
"""
from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

#: memref.subview's marker of a dynamic offset in ``static_offsets``
_DYNAMIC = -(1 << 63)


@dataclass
class TiledSource:
    """How to reload a tile of ``T`` from the writer's source (module docstring)."""

    writer: Operation                   # the nisa.dma_copy filling T
    ivs: dict[BlockArgument, int]       # induction variable -> dimension of T
    nest: Operation                     # the outermost loop around the writer in T's block

    def reload(self, view: Operation, before: Operation) -> SSAValue:
        """The source view holding what ``view`` (a subview of ``T`` accepted by
        :meth:`covers`) reads, built before ``before``."""
        block = before.parent_block()
        offsets = _offsets(view)
        mapping: dict[SSAValue, SSAValue] = {}
        for iv, dim in self.ivs.items():
            off = offsets[dim]
            if isinstance(off, int):
                c = ConstantOp(IntegerAttr(off, IndexType()))
                block.insert_op_before(c, before)
                off = c.result
            mapping[iv] = off

        def value(v: SSAValue) -> SSAValue:
            if v in mapping:
                return mapping[v]
            op = v.owner
            if not isinstance(op, Operation) or not _inside(op, self.nest):
                return v                # defined before the nest: dominates the read
            new = op.clone()
            for i, o in enumerate(op.operands):
                new.operands[i] = value(o)
            block.insert_op_before(new, before)
            for old, res in zip(op.results, new.results):
                mapping[old] = res
            return mapping[v]
        return value(self.writer.src)

    def covers(self, view: Operation) -> bool:
        """Whether ``view`` (a subview of ``T``) reads exactly one of the writer's tiles."""
        w = self.writer.dst.owner
        if view.name != "memref.subview" or not _unit(view) or \
                view.static_sizes.get_values() != w.static_sizes.get_values() or \
                view.results[0].type.get_shape() != w.results[0].type.get_shape():
            return False
        dims = set(self.ivs.values())
        return all(d in dims or (isinstance(o, int) and o == 0)
                   for d, o in enumerate(_offsets(view)))


def _inside(op: Operation, ancestor: Operation) -> bool:
    node = op
    while node is not None:
        if node is ancestor:
            return True
        node = node.parent_op()
    return False


def _unit(view: Operation) -> bool:
    return all(s == 1 for s in view.static_strides.get_values())


def _offsets(view: Operation) -> list:
    """Per dimension: the static offset (int) or the dynamic one (SSA value)."""
    dyn = iter(view.operands[1:])
    return [next(dyn) if o == _DYNAMIC else o for o in view.static_offsets.get_values()]


def _const(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


def tiled_source(t: SSAValue, writer: Operation) -> TiledSource | None:
    """The :class:`TiledSource` of ``writer`` (a ``nisa.dma_copy`` whose ``dst`` is a view
    of the tensor ``t``), or None when the conditions of the module docstring fail."""
    view = writer.dst.owner
    if not isinstance(view, Operation) or view.name != "memref.subview" or \
            view.operands[0] is not t or not _unit(view):
        return None
    block = t.owner.parent_block()
    loops: list[Operation] = []
    node = writer.parent_op()
    while node is not None and node.parent_block() is not block:
        loops.append(node)
        node = node.parent_op()
    if node is None or node.name != "scf.for":
        return None
    loops.append(node)
    shape = t.type.get_shape()
    sizes = view.static_sizes.get_values()
    ivs: dict[BlockArgument, int] = {}
    for dim, off in enumerate(_offsets(view)):
        if isinstance(off, int):
            if off != 0 or sizes[dim] != shape[dim]:
                return None
            continue
        if sizes[dim] != 1 or off in ivs:
            return None
        ivs[off] = dim
    for loop in loops:
        if loop.name != "scf.for" or len(loop.regions[0].blocks) != 1:
            return None
        iv = loop.regions[0].blocks[0].args[0]
        lb, ub, step = (_const(v) for v in loop.operands[:3])
        if iv not in ivs or (lb, step) != (0, 1) or ub != shape[ivs[iv]]:
            return None
    if len(ivs) != len(loops):
        return None
    return TiledSource(writer, ivs, loops[-1])
