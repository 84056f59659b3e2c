"""Contiguous storage of placed on-chip tensors: the interpreter's *blocks* of SBUF / PSUM.

A placed tensor (``nisa.alloc`` with ``nkim.partition`` / ``nkim.offset`` / ``nkim.bank``)
covers partitions ``[p0, p0 + P)`` and bytes ``[off, off + F)`` of each (``F`` = its free
size in bytes; one rectangle per copy ``c`` of a rotating tensor, at ``off + c * stride``).
Viewed in the run's ``uint8[128, capacity]`` memory its rows are ``capacity`` bytes apart, and
NumPy runs elementwise work on such a view row by row, about twice as slow as on a
contiguous array.

So before decoding, :func:`plan` groups the placed rectangles of one function whose byte
ranges overlap (per memory space, by merging the byte intervals: tensors that might share a
byte land in one group).  Each group is a *block*: its own ``uint8[128, hi - lo]`` array
(:meth:`~.memory.Memory.block`) covering bytes ``[lo, hi)`` of every partition, and each
tensor of the group is the view of its rectangle in it.  Two tensors share bytes exactly when
their rectangles do (both are in the block of those bytes, at the same coordinates), so the
memory model is unchanged: overlapping placements alias as before, and an alloc refills its
own bytes with sentinels as before.  A tensor alone in its block whose free size is the
block's width is one contiguous array.

Units: bytes of a partition; partitions are not split (a block holds all 128).
"""
from __future__ import annotations

import contextlib
import contextvars

from xdsl.dialects.builtin import IntegerAttr

from .. import dtypes
from ..dialects.common import MemSpaceAttr
from .memory import MemoryFault, free_elems, resolve_psum_offset

#: the attributes that place an on-chip tensor
PLACEMENT = ("nkim.partition", "nkim.offset", "nkim.bank", "nkim.copies", "nkim.copy_stride")


#: the placements worked out during the current decode (:func:`memoized`), or None
_MEMO: contextvars.ContextVar[dict | None] = contextvars.ContextVar("nki_mlir_placements",
                                                                    default=None)


@contextlib.contextmanager
def memoized():
    """While decoding a function (its IR does not change): each alloc's :func:`placement`
    worked out once (the decoders ask for the same allocs' placements many times)."""
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def placement(op) -> tuple[str, int, int, int, int] | None:
    """``(space, offset, nbytes, copies, stride)`` of a placed SBUF / PSUM ``nisa.alloc``
    (``offset`` resolved as the alloc does), or None (unplaced, HBM, or attributes the alloc
    itself rejects)."""
    memo = _MEMO.get()
    if memo is None:
        return _placement(op)
    hit = memo.get(op, memo)        # (ops hash and compare by identity)
    if hit is memo:
        hit = memo[op] = _placement(op)
    return hit


def _placement(op) -> tuple[str, int, int, int, int] | None:
    t = op.result.type
    ms = getattr(t, "memory_space", None)
    space = ms.space.data if isinstance(ms, MemSpaceAttr) else None
    if space not in ("sbuf", "psum"):
        return None
    vals = {}
    for k in PLACEMENT:
        a = op.attributes.get(k)
        if a is not None and not isinstance(a, IntegerAttr):
            return None
        vals[k] = None if a is None else int(a.value.data)
    if all(vals[k] is None for k in ("nkim.partition", "nkim.offset", "nkim.bank")):
        return None
    try:
        off = (resolve_psum_offset(vals["nkim.offset"], vals["nkim.bank"]) if space == "psum"
               else vals["nkim.offset"] or 0)
        itemsize = dtypes.from_mlir(t.element_type).itemsize
    except (MemoryFault, KeyError):
        return None
    shape = tuple(int(d) for d in t.get_shape())
    if any(d < 0 for d in shape):
        return None
    copies = vals["nkim.copies"] or 1
    stride = vals["nkim.copy_stride"] or 0
    if copies < 1 or (copies > 1 and stride <= 0):
        return None
    return space, off, free_elems(shape) * itemsize, copies, stride


def plan(fop) -> dict:
    """``{(alloc op, copy): (lo, hi)}``: the byte range ``[lo, hi)`` of the block of every
    copy of every placed on-chip ``nisa.alloc`` in ``fop`` (see the module docstring)."""
    spans: dict[str, list] = {}
    for op in fop.walk():
        if op.name != "nisa.alloc":
            continue
        p = placement(op)
        if p is None:
            continue
        space, off, nbytes, copies, stride = p
        rows = spans.setdefault(space, [])
        for c in range(copies):
            lo = off + c * stride
            rows.append((lo, lo + max(nbytes, 1), op, c))
    out = {}
    for items in spans.values():
        items.sort(key=lambda t: (t[0], t[1]))
        group: list = []
        glo = ghi = 0
        for lo, hi, op, c in items + [(None, None, None, None)]:
            if op is not None and group and lo < ghi:
                group.append((op, c))
                ghi = max(ghi, hi)
                continue
            for g in group:
                out[g] = (glo, ghi)
            group, glo, ghi = [(op, c)], lo, hi
    return out


def blocks_of(alloc, blocks: dict) -> tuple | None:
    """``(space, {(lo, hi) block of each copy})`` of a placed on-chip ``alloc`` in the plan
    ``blocks`` (:func:`plan`), or None (not placed, or a copy without a block).  The set is
    shared between callers (not to be modified): while :func:`memoized`, each alloc's answer
    for one plan is worked out once."""
    memo = _MEMO.get()
    if memo is None:
        return _blocks_of(alloc, blocks)
    per_plan = memo.get((_BLOCKS_OF, id(blocks)))
    if per_plan is None:      # (the plan is kept with its answers: its id stays its own)
        per_plan = memo[(_BLOCKS_OF, id(blocks))] = (blocks, {})
    answers = per_plan[1]
    hit = answers.get(alloc, answers)
    if hit is answers:
        hit = answers[alloc] = _blocks_of(alloc, blocks)
    return hit


_BLOCKS_OF = object()


def _blocks_of(alloc, blocks: dict) -> tuple | None:
    p = placement(alloc)
    if p is None:
        return None
    got = {blocks.get((alloc, c)) for c in range(p[3])}
    return None if None in got else (p[0], got)


def alone(alloc, blocks: dict, memo: dict) -> bool:
    """Whether every copy of the placed on-chip ``alloc`` is the only tensor in its block of
    the plan ``blocks`` (:func:`plan`); ``memo`` (one dict per decode) keeps the count of
    tensors per block."""
    mine = blocks_of(alloc, blocks)
    if mine is None:
        return False
    count = memo.get("block users")
    if count is None:
        count = memo["block users"] = {}
        for (op, _c), b in blocks.items():
            q = placement(op)
            if q is not None:
                count[(q[0], b)] = count.get((q[0], b), 0) + 1
    return all(count.get((mine[0], b), 0) == 1 for b in mine[1])
