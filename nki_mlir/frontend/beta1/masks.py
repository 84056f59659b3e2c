"""NKI Beta 1 ``mask=`` predicates on ``nl`` / ``nisa`` calls.

A mask is a compile-time execution predicate (NKI language guide (nki/get-started/nki-language-guide) "Masks"; NKI Beta 1
docs, ``general/nki/api/nki.api.shared.rst`` "NKI API Masking" and
``general/nki/programming_model.rst``): a conjunction with ``&`` of comparisons of affine
expressions of ``nl.arange`` / ``nl.mgrid`` grids, ``nl.affine_range`` loop indices and
program ids (a :class:`~.index_expr.Mask`).  It *shrinks or skips* the instruction: the
instruction runs only on the grid points where the predicate holds.

How a masked call is compiled (:func:`masked_call`):

1. For fixed loop indices, the grid points where every comparison holds form a *region*:
   a union of disjoint boxes (frontend/beta1/mask_regions.py computes it exactly; a comparison
   along one axis bounds that axis, one coupling axes, ``512 * i_p + i_f < n``, gives a
   staircase of boxes, ``!=`` two boxes).  Each box is one instruction; a comparison along
   no axis gates the whole instruction.
2. Grid axis ``r`` is dim ``r`` of the instruction's tiles (axes aligned from the left,
   the partition axis first).  Each tensor operand (inputs, ``dst``, the HBM view of a
   load / store) is narrowed along dim ``r`` when that dim has the grid's size there; a
   ``[P, 1]`` operand is not narrowed along a free axis.  A value-returning call gets a
   full-size result tile (uninitialised where the mask is false, as in NKI); the call runs
   on the narrowed operands and its result is written into the matching part of that tile.
   ``t[...] = call(..., mask=m)`` writes straight into ``t``'s view (only the masked part).
3. When the bounds depend on loop indices, the static loop ranges are enumerated, and one
   version of the instruction is emitted per distinct non-empty region, guarded by an
   ``scf.if`` on the loop indices (``arith.cmpi`` / ``andi`` / ``ori``,
   frontend/beta1/mask_guards.py); at most :data:`MAX_VERSIONS` versions and
   :data:`MAX_INSTRUCTIONS` boxes in all.  An empty region skips the instruction.
4. Operand views are built inside the guarded region with the masked shape, because a
   full-size view of the last tile may cover rows past the end of the tensor (a run-time
   fault, or a compile-time ``err_tensor_access_out_of_bound`` for static indices):

   - a subscript by index expressions written in the call (``nl.load(x[t * 128 + i_p,
     i_f], mask=...)``, or the target of ``t[...] = call(..., mask=...)``) is kept
     unevaluated (:class:`PendingView`, :func:`eval_masked_call`) and built per version from
     the keys restricted to the box, so the views are the ones Beta 2 slicing of the
     partial tile would give;
   - a view already made (held in a variable) is rebuilt from its source (a narrowed
     ``memref.subview`` / ``memref.reinterpret_cast`` with the composed offsets); the
     original view op is erased once the kernel is built if nothing else uses it
     (:func:`drop_superseded_views`).

   The full-size result of a value-returning call is found by a dry run of the handler on
   stand-in operands of the full shapes (its IR is discarded).

Errors (located at the ``mask=`` expression, code ``err_unsupported_expression_in_mask``):
a mask that is not a conjunction of affine comparisons (a tile, ``|``), grids of different
sizes on one axis, a bound depending on a value with no static range, or a masked axis that
no operand of the call has.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from xdsl.ir import Block

from ...dialects import nki
from ...errors import NKIError, NKITypeError, SourceLoc
from .mask_guards import emit_chain
from .mask_regions import CODE, MAX_POINTS, Box, Region, full, parse, regions
from .mask_views import (PendingView, drop_stale_consts, drop_superseded_views, narrow, narrow_arg,
                         resolve, resolve_all, tensors)
from ..values import Tensor

#: most versions (distinct non-empty regions) one masked call may compile to
MAX_VERSIONS = 16
#: most instructions (boxes, summed over the versions) one masked call may compile to
MAX_INSTRUCTIONS = 256



# ====================================================================== entry points


def masked_call(cg, loc: SourceLoc | None, callee, handler: Callable, args: list, kwargs: dict,
                into: "Tensor | PendingView | None" = None) -> Any:
    """Compile ``callee(*args, **kwargs)`` whose ``kwargs["mask"]`` is a Beta 1 mask, at
    ``loc`` (the call's location; mask errors are located there).

    ``into``: the destination view of ``into[...] = callee(...)``; the masked result is
    written into its masked part only and None is returned.

    Returns what the call returns (a full-size result tile for a value-returning call).

    Raises:
        NKITypeError: ``err_unsupported_expression_in_mask`` (see the module docstring).
        NKIError: the mask needs more than :data:`MAX_VERSIONS` versions.
    """
    drop_stale_consts(cg.b)
    kwargs = dict(kwargs)
    mask = kwargs.pop("mask")
    api = callee.name
    if isinstance(mask, (bool, np.bool_)):  # a predicate that folded at compile time
        sizes, combos, cons = (), {(): [()]}, []
        region_of = {(): full(()) if mask else ()}
    else:
        sizes, cons = parse(cg, loc, mask)
        combos, region_of = regions(cg, loc, sizes, cons)
    versions: dict[Region, list[tuple]] = {}
    for combo in combos:
        if region_of[combo]:
            versions.setdefault(region_of[combo], []).append(combo)
    has_empty = any(not region_of[c] for c in combos)
    if len(versions) > MAX_VERSIONS:
        raise cg.fail(loc, f"{api}: this mask gives {len(versions)} different shapes of the "
                             f"instruction over the loop iterations; at most {MAX_VERSIONS} are "
                             f"supported (make the bound depend on fewer loop indices)", NKIError,
                      category="limit")
    count = sum(len(r) for r in versions)
    if count > MAX_INSTRUCTIONS:
        raise cg.fail(loc, f"{api}: this mask splits the instruction into {count} rectangular "
                             f"parts (the region where it holds is not a box); at most "
                             f"{MAX_INSTRUCTIONS} are supported", NKIError, category="limit")
    _check_partition_starts(cg, loc, api, sizes, versions)
    guarded = has_empty or len(versions) > 1
    if not guarded and versions and next(iter(versions)) == full(sizes):
        # the mask holds everywhere: the plain call
        result = handler(cg, *resolve_all(cg, args), **resolve_all(cg, kwargs))
        if into is not None:
            from ..assign import assign_into
            assign_into(cg, resolve(cg, into), result)
            return None
        return result

    template = _dry_run(cg, handler, args, kwargs)
    results = list(template) if isinstance(template, (tuple, list)) else \
        ([] if template is None else [template])
    if any(not isinstance(r, Tensor) for r in results):
        raise cg.fail(loc, f"{api}: mask= applies to instructions on tiles; this call returns "
                             f"{type(template).__name__}", NKITypeError, code=CODE)
    _check_axes(cg, loc, api, sizes, cons, list(args) + list(kwargs.values()) + results, into)
    dests: list[Tensor]
    if into is not None and len(results) == 1 and tuple(into.shape) == tuple(results[0].shape):
        dests, ret = [into], None
    else:
        from ..lang_calls import new_tensor
        dests = [new_tensor(cg, nki.NdarrayOp, r.shape, r.dtype, r.buffer) for r in results]
        if into is not None:
            ret = None
        else:
            ret = type(template)(dests) if isinstance(template, (tuple, list)) else \
                (dests[0] if dests else None)

    def emit(region: Region) -> None:
        for box in region:  # one instruction per box of the region
            emit_box(box)

    def emit_box(box: Box) -> None:
        # the destination parts first, so nki-legalize can fold the copies into the producer
        parts = [narrow_arg(cg, dst, sizes, box, True) for dst in dests]
        nargs = [narrow_arg(cg, a, sizes, box, guarded) for a in args]
        nkw = {k: narrow_arg(cg, v, sizes, box, guarded) for k, v in kwargs.items()}
        if api == "nl.load" and len(parts) == 1 and parts[0].on_chip:
            # a load into a part of its result tile is one DMA into that part (a compute-engine
            # copy could not start at every partition a DMA writes)
            from ..builtins import HANDLERS
            HANDLERS["nisa.dma_copy"](cg, parts[0], nkw["src"] if "src" in nkw else nargs[0])
            return
        out = handler(cg, *nargs, **nkw)
        outs = list(out) if isinstance(out, (tuple, list)) else ([] if out is None else [out])
        from ..assign import assign_into
        for dst, part, res in zip(dests, parts, outs):
            if isinstance(res, Tensor) and tuple(res.shape) == tuple(dst.shape) != tuple(part.shape):
                # no operand to narrow (nisa.memset(shape, ...)): computed whole, written masked
                res = narrow(cg, res, sizes, box, False)
            if not isinstance(res, Tensor) or tuple(res.shape) != tuple(part.shape):
                raise cg.fail(loc, f"{api}: with this mask the instruction produces a "
                                     f"{list(getattr(res, 'shape', ()))} tile, which does not match "
                                     f"the masked part {list(part.shape)} of its "
                                     f"{list(dst.shape)} result; the mask's grid axes must be the "
                                     f"result's dims", NKITypeError, code=CODE)
            assign_into(cg, part, res)

    order = list(versions.items())
    emit_chain(cg, order, 0, not has_empty, cons, combos, emit)
    if into is not None and dests and dests[0] is not into:
        from ..assign import assign_into
        assign_into(cg, resolve(cg, into), dests[0])
    return ret


def owns_mask(handler: Callable) -> bool:
    """Whether ``handler`` applies its ``mask=`` itself (it calls :func:`masked_call` on the
    instructions it emits, e.g. ``nl.loop_reduce``, whose accumulator is no argument of the
    call) rather than being compiled as one masked call."""
    return bool(getattr(handler, "owns_mask", False))


# ====================================================================== operands


def _check_axes(cg, loc, api, sizes, cons, operands: list, into) -> None:
    """Every masked grid axis must be a dim of some tile operand or result."""
    found = list(tensors(operands))
    if into is not None:
        found.append(into)
    for r in sorted({r for con in cons for r in con.axes}):
        s = sizes[r]
        if not any(t.ndim > r and t.shape[r] == s for t in found):
            shapes = ", ".join(str(list(t.shape)) for t in found) or "none"
            raise cg.fail(loc, f"{api}: the mask bounds grid axis {r} (size {s}), but no tile "
                                 f"operand has size {s} on dim {r} (operand shapes: {shapes}); "
                                 f"the mask's grid must match the instruction's tiles",
                          NKITypeError, code=CODE)


#: calls run by the DMA queues, which may access any partition range
_DMA_CALLS = frozenset({"nl.load", "nl.store", "nl.atomic_rmw", "nl.load_transpose2d",
                        "nisa.dma_copy", "nisa.dma_transpose", "nisa.dma_compute"})


def _check_partition_starts(cg, loc, api: str, sizes, versions) -> None:
    """A compute instruction restricted to a box of partitions ``[lo, hi)`` must start where
    an engine access of ``hi - lo`` partitions may start (the start-partition rule of the
    NKI architecture guide, "Trainium/Inferentia2 Architecture"); a DMA may access any
    partitions."""
    if api in _DMA_CALLS or not sizes or sizes[0] <= 1:
        return
    from ...dialects.rules import allowed_starts
    for region in versions:
        for box in region:
            lo, hi = box[0]
            if lo not in allowed_starts(hi - lo):
                starts = " or ".join(map(str, allowed_starts(hi - lo)))
                raise cg.fail(loc, f"{api}: where this mask holds, the instruction covers "
                                     f"partitions [{lo}, {hi}), but a compute instruction on "
                                     f"{hi - lo} partitions must start at partition {starts} "
                                     f"(start-partition rule); mask a DMA (nl.load / nl.store) "
                                     f"or bound the partitions from 0", NKITypeError, code=CODE)


# ====================================================================== dry run


def _dry_run(cg, handler: Callable, args: list, kwargs: dict) -> Any:
    """Run ``handler`` on the full-size operands into a scratch block and discard the IR:
    what it returns gives the result tiles' shapes, dtypes and buffers (and checks the call
    is valid unmasked, as NKI requires)."""
    b = cg.b
    scratch = Block()
    before = set(b._consts)
    try:
        with b.at(scratch):
            from ..lang_calls import new_tensor

            def stand_in(v):
                if isinstance(v, PendingView):  # a fresh tensor of the view's shape
                    return new_tensor(cg, nki.NdarrayOp, v.shape, v.tensor.dtype, v.tensor.buffer)
                if isinstance(v, (tuple, list)):
                    return type(v)(stand_in(x) for x in v)
                return v
            return handler(cg, *[stand_in(a) for a in args],
                           **{k: stand_in(v) for k, v in kwargs.items()})
    finally:
        for op in reversed(list(scratch.ops)):
            op.detach()
            op.erase(safe_erase=False)
        for key in set(b._consts) - before:
            del b._consts[key]


__all__ = ["masked_call", "owns_mask", "PendingView",
           "resolve", "drop_superseded_views", "narrow", "MAX_VERSIONS", "MAX_POINTS"]
