"""The operand views of a masked Beta 1 call (frontend/beta1/masks.py).

- :class:`PendingView`: a subscript by ``nl.arange`` / ``nl.mgrid`` keys written in the
  call, kept unevaluated and built per box of the mask (:func:`resolve`) so a view of the
  last partial tile never covers rows past the end of the tensor;
- :func:`narrow`: a view already made, rebuilt narrowed to a box from its source (the
  original is erased once the kernel is built if nothing else uses it,
  :func:`drop_superseded_views`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects import memref as memref_d
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import OpResult, SSAValue

from ...dialects.common import memref
from .index_expr import IndexExpr
from .mask_regions import Box
from ..values import Indirect, Tensor, as_index, simplify

#: attribute on the builder listing the views replaced by narrowed copies
_SUPERSEDED = "_mask_superseded_views"

# ====================================================================== pending views


@dataclass(frozen=True)
class PendingView:
    """``tensor[keys]`` with Beta 1 index-expression keys, not yet emitted.

    Attributes:
        node: the subscript's location (errors are located there).
        tensor: the indexed tensor.
        keys: one key per dim: :class:`~.index_expr.IndexExpr`, int or loop index.
        shape: the view's shape (the keys' broadcast grid).
    """

    node: Any
    tensor: Tensor
    keys: tuple
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)


def resolve(cg, v: Any, ranges: dict[int, tuple[int, int]] | None = None) -> Any:
    """A :class:`PendingView` emitted (restricted to ``ranges``: dim -> [lo, hi)); any other
    value unchanged."""
    if not isinstance(v, PendingView):
        return v
    from ..indexing import index_tensor
    rank = len(v.shape)
    keys = []
    for k in v.keys:
        if isinstance(k, IndexExpr) and ranges:
            sizes, coeffs = (list(x) for x in k._grid(rank))
            const = k.const
            for r, (lo, hi) in ranges.items():
                if sizes[r] > 1:
                    sizes[r] = hi - lo
                    const = simplify(as_index(const).add(lo * coeffs[r]))
                    if sizes[r] == 1:
                        coeffs[r] = 0
            k = IndexExpr(tuple(sizes), tuple(coeffs), const)
        keys.append(k)
    return index_tensor(cg, v.node, v.tensor, tuple(keys))


def resolve_all(cg, vals):
    if isinstance(vals, dict):
        return {k: resolve_all(cg, v) for k, v in vals.items()}
    if isinstance(vals, (tuple, list)):
        return type(vals)(resolve_all(cg, v) for v in vals)
    return resolve(cg, vals)


def drop_superseded_views(b) -> None:
    """Erase the full-size operand views that masked calls replaced, once nothing uses
    them (they could fault at run time on the last partial tile), and then the index
    arithmetic only they used.  Called once the whole kernel is built."""
    values: list[SSAValue] = getattr(b, _SUPERSEDED, [])
    for v in reversed(values):
        _erase_dead(v)
    if values:
        setattr(b, _SUPERSEDED, [])


def drop_stale_consts(b) -> None:
    """Forget cached constants whose op is no longer in the block it was cached for (a
    re-emitted Beta 1 call erases the ops of its first emission, constants included), so
    the builder emits fresh ones instead of using erased values."""
    for key, v in list(b._consts.items()):
        parent = v.op.parent if isinstance(v, OpResult) else None
        if parent is None or id(parent) != key[0]:
            del b._consts[key]


def _erase_dead(v: SSAValue) -> None:
    if not isinstance(v, OpResult) or v.uses:
        return
    op = v.op
    if op.parent is None or any(r.uses for r in op.results):
        return
    if not (op.name in ("memref.subview", "memref.reinterpret_cast")
            or op.name in ("arith.addi", "arith.muli")):
        return
    operands = list(op.operands)
    op.detach()
    op.erase(safe_erase=False)
    for o in operands:
        if isinstance(o, OpResult) and o.op.name in ("arith.addi", "arith.muli"):
            _erase_dead(o)


def tensors(vals):
    for v in vals:
        if isinstance(v, (Tensor, PendingView)):
            yield v
        elif isinstance(v, (tuple, list)):
            yield from tensors(v)


def narrow_arg(cg, v: Any, sizes, box: Box, rebuild: bool) -> Any:
    if isinstance(v, Tensor):
        return narrow(cg, v, sizes, box, rebuild)
    if isinstance(v, PendingView):
        return resolve(cg, v, _ranges(v, sizes, box))
    if isinstance(v, (tuple, list)) and any(isinstance(x, (Tensor, PendingView)) for x in v):
        return type(v)(narrow_arg(cg, x, sizes, box, rebuild) for x in v)
    return v


def narrow(cg, t: Tensor, sizes, box: Box, rebuild: bool) -> Tensor:
    """``t`` restricted to ``box`` along the dims whose size is the grid's (see the module
    docstring).  A view is rebuilt from its source (``rebuild`` or when narrowed) so the
    new view never covers more than the box."""
    ranges = _ranges(t, sizes, box)
    if t.indirect is not None:
        return _narrow_indirect(cg, t, ranges) if ranges else t
    owner = t.value.op if isinstance(t.value, OpResult) else None
    is_view = owner is not None and owner.name in ("memref.subview", "memref.reinterpret_cast")
    if not ranges and not (rebuild and is_view):
        return t
    shape = list(t.shape)
    extra = 0
    for d, (lo, hi) in ranges.items():
        shape[d] = hi - lo
        extra += lo * t.strides[d]
    if is_view:
        _supersede(cg, t.value)
        if owner.name == "memref.subview":
            return _resubview(cg, t, owner, ranges, tuple(shape), extra)
        src = replace(t, value=owner.operands[0])
        return cg.b.reinterpret(src, shape, t.strides, simplify(as_index(t.offset_index).add(extra)))
    offsets = [ranges.get(d, (0, 0))[0] for d in range(t.ndim)]
    return cg.b.subview(t, offsets, shape, [1] * t.ndim, [True] * t.ndim)


def _narrow_indirect(cg, t: Tensor, ranges: dict[int, tuple[int, int]]) -> Tensor:
    """An indirect (gathered / scattered) view narrowed: its rows through the rows
    ``[lo, hi)`` of the index tile (the rows outside the mask are never read, so their row
    numbers may be anything), its other dims on the table."""
    idx, table = t.indirect.index, t.indirect.table
    if 0 in ranges:
        lo, hi = ranges[0]
        idx = cg.b.subview(idx, [lo, 0], [hi - lo, 1], [1, 1], [True, True])
    free = {d: r for d, r in ranges.items() if d > 0}
    if free:
        offsets = [free.get(d, (0, 0))[0] for d in range(table.ndim)]
        shape = [free[d][1] - free[d][0] if d in free else n for d, n in enumerate(table.shape)]
        table = cg.b.subview(table, offsets, shape, [1] * table.ndim, [True] * table.ndim)
    return Tensor(table.value, (idx.shape[0],) + tuple(table.shape[1:]), t.dtype, t.buffer,
                  table.strides, table.offset, cg.b.block, t.name, is_base=False,
                  storage=table.storage_shape, dyn_offset=table.dyn_offset,
                  indirect=Indirect(idx, table))


def _ranges(t, sizes, box: Box) -> dict[int, tuple[int, int]]:
    """dim -> [lo, hi) for the dims of ``t`` the box restricts (the grid's size there)."""
    return {d: box[d] for d in range(min(len(sizes), t.ndim))
            if sizes[d] > 1 and t.shape[d] == sizes[d] and box[d] != (0, sizes[d])}


def _supersede(cg, v: SSAValue) -> None:
    lst = getattr(cg.b, _SUPERSEDED, None)
    if lst is None:
        lst = []
        setattr(cg.b, _SUPERSEDED, lst)
    if v not in lst:
        lst.append(v)


def _resubview(cg, t: Tensor, op: memref_d.SubviewOp, ranges, shape: tuple[int, ...],
               extra: int) -> Tensor:
    """A copy of the subview ``op`` (whose result is ``t``) narrowed along ``ranges``."""
    b = cg.b
    offsets = list(op.static_offsets.get_values())
    sizes = list(op.static_sizes.get_values())
    strides = list(op.static_strides.get_values())
    dyn_in = list(op.offsets)
    # result dim -> source dim (a dropped source dim has size 1 and is not in the result)
    src_dim, r = {}, 0
    for d, size in enumerate(sizes):
        if r < len(t.shape) and size == t.shape[r]:
            src_dim[r] = d
            r += 1
    shift = {src_dim[r]: lo * strides[src_dim[r]] for r, (lo, hi) in ranges.items()}
    for r, (lo, hi) in ranges.items():
        sizes[src_dim[r]] = hi - lo
    dyn: list[SSAValue] = []
    it = iter(dyn_in)
    for d, off in enumerate(offsets):
        k = shift.get(d, 0)
        if off == DYNAMIC_INDEX:
            v = next(it)
            if k:
                v = b.emit(arith.AddiOp(v, b.const_index(k)), verify=False).results[0]
            dyn.append(v)
        else:
            offsets[d] = off + k
    offset = None if t.offset is None else t.offset + extra
    rtype = memref(shape, t.dtype, t.buffer, strides=t.strides, offset=offset)
    new = memref_d.SubviewOp(op.source, dyn, [], [], offsets, sizes, strides, rtype)
    b.emit(new)
    return Tensor(new.results[0], shape, t.dtype, t.buffer, t.strides, offset, b.block, t.name,
                  is_base=False, storage=t.storage_shape,
                  dyn_offset=None if offset is not None else as_index(t.offset_index).add(extra))


__all__ = ["PendingView", "resolve", "resolve_all", "drop_superseded_views",
           "drop_stale_consts", "narrow", "narrow_arg", "tensors"]
