"""Whether the boxes an ``scf.for`` writes through one ``memref.subview`` cover a whole tile.

A tile written block by block in a loop (``t[:, nl.ds(j * 128, 128)]`` for ``j`` in
``range(n)``) need not be sentinel-filled at its ``nisa.alloc`` when every element is
written before anything can read it (:func:`.isa_memory.written_first`).  This module
decides the geometric half of that proof at decode time, exactly:

- :func:`index_values`: the value an ``index`` SSA value takes in each iteration of a loop
  with constant bounds, evaluated with the interpreter's own integer semantics
  (:data:`.control.INT_BINARY`; ``arith.constant``, the induction variable,
  ``arith.index_cast``), or None when it depends on anything else (another loop's
  variable, a register, a tensor value);
- :func:`subview_boxes`: the box ``[offset, offset + size)`` per dimension a unit-stride
  ``memref.subview`` with static sizes selects in each iteration;
- :func:`covers`: whether those boxes, all in bounds, cover every element of the tile: every
  dimension but at most one is whole in every iteration, and along the remaining one the
  union of the intervals is ``[0, dim)``.  Anything else (two partial dimensions, a
  stride, a gap, a box out of bounds) is answered False.

The other half -- that nothing reads the tile's bytes before the loop writes them -- is
the caller's (:func:`.isa_memory.written_first`).
"""
from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import memref
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import OpResult, SSAValue

from .control import INT_BINARY
from .env import Fault

#: most iterations :func:`index_values` evaluates (decode time is linear in it)
MAX_TRIPS = 4096
#: deepest chain of integer ops :func:`index_values` follows
_DEPTH = 16


def index_values(v: SSAValue, iv: SSAValue, ivs: range, depth: int = 0) -> list[int] | None:
    """The value of the ``index`` SSA value ``v`` when the induction variable ``iv`` takes
    each value of ``ivs`` (the loop's iterations, in order), or None when ``v`` is not a
    function of ``iv`` and constants through :data:`.control.INT_BINARY` ops,
    ``arith.index_cast`` and ``arith.constant`` (or an op faults, e.g. a division by 0)."""
    if v is iv:
        return list(ivs)
    if not isinstance(v, OpResult) or depth > _DEPTH:
        return None
    op = v.op
    if op.name == "arith.constant":
        a = op.properties.get("value")
        return [int(a.value.data)] * len(ivs) if isinstance(a, IntegerAttr) else None
    if op.name in ("arith.index_cast", "arith.index_castui"):
        return index_values(op.operands[0], iv, ivs, depth + 1)
    fn = INT_BINARY.get(op.name)
    if fn is None or len(op.operands) != 2 or not isinstance(v.type, IndexType):
        return None     # (index arithmetic only: no fixed-width wraparound to model)
    a, b = (index_values(x, iv, ivs, depth + 1) for x in op.operands)
    if a is None or b is None:
        return None
    try:
        return [int(fn(x, y)) for x, y in zip(a, b)]
    except Fault:
        return None


def subview_boxes(sv: memref.SubviewOp, iv: SSAValue,
                  ivs: range) -> tuple[list[int], list[list[int]]] | None:
    """``(sizes, offsets)`` of the unit-stride ``memref.subview`` ``sv`` with static sizes:
    ``offsets[d][k]`` is its offset in source dimension ``d`` in iteration ``k`` of ``ivs``;
    None when a stride is not 1, a size is dynamic or an offset is not
    :func:`index_values`-known."""
    sizes = [int(s) for s in sv.static_sizes.get_values()]
    strides = [int(s) for s in sv.static_strides.get_values()]
    if any(s == memref.DYNAMIC_INDEX or s <= 0 for s in sizes) or any(s != 1 for s in strides):
        return None
    dyn = iter(sv.offsets)
    offsets = []
    for off in sv.static_offsets.get_values():
        if off != memref.DYNAMIC_INDEX:
            offsets.append([int(off)] * len(ivs))
            continue
        vals = index_values(next(dyn), iv, ivs)
        if vals is None:
            return None
        offsets.append(vals)
    return sizes, offsets


def covers(shape: Sequence[int], sizes: Sequence[int], offsets: Sequence[Sequence[int]]) -> bool:
    """Whether the boxes ``[offsets[d][k], offsets[d][k] + sizes[d])`` (one box per
    iteration ``k``) lie in ``shape`` and together cover all of it, proved for boxes whole
    in every dimension but at most one (else False: not proved)."""
    if len(shape) != len(sizes) or len(offsets) != len(shape) or not offsets or \
            not offsets[0]:
        return False
    partial = None
    for d, (dim, size, offs) in enumerate(zip(shape, sizes, offsets)):
        if any(o < 0 or o + size > dim for o in offs):
            return False
        if size != dim:
            if partial is not None:
                return False
            partial = d
    if partial is None:
        return True
    size = sizes[partial]
    reach = 0
    for o in sorted(set(offsets[partial])):
        if o > reach:
            return False                  # a gap before o
        reach = max(reach, o + size)
    return reach >= shape[partial]
