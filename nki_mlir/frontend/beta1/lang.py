"""Frontend handlers for the NKI Beta 1-only ``nl`` functions and ``ncc`` calls.

- ``nl.static_cast(x, dtype)``: a new SBUF tile holding ``x``'s values converted to
  ``dtype`` (one ``tensor_copy``; NumPy-style value conversion with NKI's rounding).
- ``nl.loop_reduce(x, op, loop_indices, dtype=None, mask=None)``: Beta 1
  ``nki.language.loop_reduce`` -- ``b = nl.loop_reduce(a, op=np.add, loop_indices=[k])`` is
  documented as ``b = nisa.tensor_tensor(data1=b, data2=a, op=np.add)``: the assignment
  target ``b`` is the accumulator (a tile allocated before the loop) and is updated in
  place (``tensor_tensor(dst=b, data1=b, data2=x)``), so it stays usable after the loop.
  With a subscript target (``b[...] = nl.loop_reduce(...)``) the view ``b[...]`` is
  updated in place the same way.  The target is found from the calling frame's bytecode
  (the instruction that stores the call's value), so the call may be in a helper function
  the kernel calls.  ``mask=`` predicates the accumulation (``tensor_tensor(...,
  mask=m)``): where it is false the accumulator keeps its value.  ``loop_indices`` (loop
  indices or ints) is checked and otherwise only informs the compiler's loop
  optimisations; the accumulator's dtype is the result dtype.
- ``nl.atomic_rmw(dst, value, op, mask=None)``: Beta 1 ``nki.language.atomic_rmw``,
  ``dst = op(dst, value)`` on HBM with ``op=np.add`` / ``nl.add`` only.  A direct ``dst``
  view is one ``dma_compute(dst, [dst, value], add)``; an indirect ``dst`` (rows selected by
  an SBUF ``[P, 1]`` index tile: ``t[idx_tile, ...]``, ``t.vector_select(0, idx)``,
  ``t.ap(vector_offset=idx)``) is updated row by row (gather the row, add the value row on
  the DMA queue, scatter it back), in order, so rows with the same index accumulate as
  the atomic hardware operation does.  The arithmetic is fp32 (DMA compute).
- ``ncc.no_reorder()``: ``nl.no_reorder()``.  ``ncc.allocation_scope()``: the body as is
  inside a kernel yet (a located error).

Semantics: the Beta 1 ``nki.language`` API page (Neuron SDK 2.26,
``general/nki/api/nki/language/__init__.py``), nki.language API reference (nki/api/nki/language) ("Beta 1 only").
"""
from __future__ import annotations

from typing import Any

from ... import dtypes
from ...dialects import nki
from ...dialects.ods_ops import op_class
from ...dialects.vector_rules import ALU_OPS
from ...errors import NKIError, NKITypeError
from .. import args as A
from ..builtins import HANDLERS, handles
from ..lang_calls import _dtype, new_tensor
from ..values import Index, Indirect, Tensor, is_int

_HBM = ("hbm", "private_hbm", "shared_hbm")


def _tile(cg, api: str, role: str, x: Any) -> Tensor:
    t = A.tensor(cg, api, role, x)
    if not t.on_chip:
        raise cg.b.error(f"{api}: '{role}' must be a tile in SBUF or PSUM, got {t.describe()}; load "
                         f"it with nl.load first", NKITypeError, code="err_unsupported_memory")
    return t


def _no_mask(cg, api: str, mask: Any) -> None:
    if mask is not None:
        raise cg.b.error(f"{api}: mask= is not supported on this API by nki-mlir", NKIError,
                         category="not implemented")


def _new_tile(cg, shape, dtype) -> Tensor:
    return new_tensor(cg, nki.NdarrayOp, tuple(shape), dtype, "sbuf")


# ------------------------------------------------------------------------ static_cast


@handles("nl.static_cast")
def static_cast(cg, arr, dtype):
    """``nl.static_cast(x, dtype)`` -> a new SBUF tile of ``x``'s shape and ``dtype``."""
    api = "nl.static_cast"
    t = _tile(cg, api, "arr", arr)
    out = _new_tile(cg, t.shape, _dtype(cg, api, dtype))
    HANDLERS["nisa.tensor_copy"](cg, out, t)
    return out


# ------------------------------------------------------------------------ loop_reduce


@handles("nl.loop_reduce")
def loop_reduce(cg, x, op, loop_indices, dtype=None, mask=None):
    """Accumulate ``x`` into the assignment target (see the module docstring).

    ``acc = nl.loop_reduce(...)``: ``acc`` is still bound to the accumulator while the call
    runs (the calling frame's next instruction stores the name); it is updated in place and
    the same proxy object is returned, so the name stays bound to the same value and a
    rolled loop stays rolled.  ``acc[...] = nl.loop_reduce(...)``: the target is evaluated
    after the call, so the call returns a :class:`PendingReduce` that the subscript
    assignment applies to the view (:func:`reduce_into`)."""
    api = "nl.loop_reduce"
    t = _tile(cg, api, "x", x)
    tok = A.op_token(cg, api, "op", op, ALU_OPS)
    idx = loop_indices if isinstance(loop_indices, (list, tuple)) else [loop_indices]
    for v in idx:
        if not (isinstance(v, Index) or is_int(v)):
            raise cg.b.error(f"{api}: loop_indices must be loop indices (from nl.affine_range / "
                             f"nl.sequential_range) or ints, got {A._show(v)}", NKITypeError)
    if dtype is not None:
        _dtype(cg, api, dtype)
    from ..frames import result_use, user_frame
    frame = user_frame()
    use, name = result_use(frame) if frame is not None else ("drop", None)
    if use == "drop":
        raise cg.b.error(f"{api}: {_USAGE}", NKITypeError)
    pending = PendingReduce(t, tok, mask, cg.b.loc)
    if use == "other":
        return pending
    return reduce_into_name(cg, frame.f_globals if use == "global" else frame.f_locals, name, pending)


def reduce_into_name(cg, scope: dict, name: str, r: "PendingReduce") -> Any:
    """``name = nl.loop_reduce(...)``: accumulate into the tile ``name`` is bound to in
    ``scope`` (the calling frame's locals or globals); returns that same proxy."""
    from ..proxies import NkiTensor
    proxy = scope.get(name)
    if type(proxy) is not NkiTensor:
        what = "is not defined" if proxy is None else f"is {A._show(proxy)}"
        cg.b.loc = r.loc
        raise cg.b.error(f"nl.loop_reduce: the accumulator '{name}' {what}; {_USAGE}", NKITypeError)
    reduce_into(cg, proxy._t, r)
    return proxy


_USAGE = ("assign its result to the accumulator tile, allocated before the loop: "
          "'acc = nl.zeros(shape, dtype)' then 'acc = nl.loop_reduce(x, op=np.add, "
          "loop_indices=[i])' in the loop")


class PendingReduce:
    """The value of ``nl.loop_reduce(x, ...)`` before its assignment ``acc[...] = ...``
    names the accumulator: ``x`` (a tile), the ALU op token, the mask and the call's
    location."""

    __slots__ = ("x", "op", "mask", "loc")

    def __init__(self, x: Tensor, op: str, mask: Any, loc):
        self.x, self.op, self.mask, self.loc = x, op, mask, loc

    def __repr__(self) -> str:
        return ("(the value of nl.loop_reduce, which only an assignment to the accumulator takes: "
                "'acc = nl.loop_reduce(...)' or 'acc[...] = nl.loop_reduce(...)')")


def reduce_into(cg, acc: Tensor, r: PendingReduce) -> None:
    """``acc = op(acc, x)`` in place (``nisa.tensor_tensor(dst=acc, data1=acc, data2=x)``),
    only where ``r.mask`` holds; ``acc`` is the accumulator tile or a view of it."""
    api = "nl.loop_reduce"
    cg.b.loc = r.loc
    if not acc.on_chip:
        raise cg.b.error(f"{api}: the accumulator must be an SBUF/PSUM tile, got {acc.describe()}",
                         NKITypeError, code="err_unsupported_memory")
    if tuple(acc.shape) != tuple(r.x.shape):
        raise cg.b.error(f"{api}: the accumulator {acc.describe()} and x {list(r.x.shape)} must have "
                         f"the same shape", NKITypeError)
    operands, props = [acc, acc, r.x], {"op": _token_builtin(r.op)}
    if r.mask is None:
        HANDLERS["nisa.tensor_tensor"](cg, *operands, **props)
    else:  # nisa.tensor_tensor(data1=acc, data2=x, op, mask=mask)
        from types import SimpleNamespace
        from .masks import masked_call
        masked_call(cg, r.loc, SimpleNamespace(name=api), HANDLERS["nisa.tensor_tensor"],
                    operands, {**props, "mask": r.mask})


#: the handler applies mask= itself, to the tensor_tensor on the accumulator it finds (the
#: accumulator is no argument of the call, so the call cannot be masked as a whole)
loop_reduce.owns_mask = True


def _token_builtin(tok: str):
    from ..builtins import Builtin
    return Builtin(f"nl.{tok}", token=tok)


# ------------------------------------------------------------------------- atomic_rmw


@handles("nl.atomic_rmw")
def atomic_rmw(cg, dst, value, op, mask=None):
    """``dst = op(dst, value)`` on HBM, ``op`` = add (see the module docstring)."""
    api = "nl.atomic_rmw"
    _no_mask(cg, api, mask)
    A.op_token(cg, api, "op", op, ("add",))
    if not isinstance(dst, Tensor):
        raise cg.b.error(f"{api}: 'dst' must be an HBM tensor, got {A._show(dst)}", NKITypeError)
    table = dst.indirect.table if dst.indirect is not None else dst
    if table.buffer not in _HBM:
        raise cg.b.error(f"{api}: 'dst' must be in HBM, got {table.describe()}", NKITypeError,
                         code="err_unsupported_memory")
    if isinstance(value, Tensor):
        v = value
        if v.indirect is not None or v.buffer not in ("sbuf",):
            raise cg.b.error(f"{api}: 'value' must be an SBUF tile (or a number), got {v.describe()}",
                             NKITypeError, code="err_unsupported_memory")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        v = _new_tile(cg, dst.shape, table.dtype)
        HANDLERS["nisa.memset"](cg, v, value)
    else:
        raise cg.b.error(f"{api}: 'value' must be a tile or a number, got {A._show(value)}", NKITypeError)
    if v.size != dst.size or (dst.indirect is not None and tuple(v.shape) != tuple(dst.shape)):
        raise cg.b.error(f"{api}: 'value' {list(v.shape)} must have the shape of 'dst' "
                         f"{list(dst.shape)}", NKITypeError)
    if dst.indirect is None:
        A.emit(cg, op_class("nki.dma_compute"), {"dst": dst.value, "srcs": [dst.value, v.value]}, {"reduce_op": "add"})
        return None
    index = dst.indirect.index
    for i in range(dst.shape[0]):  # in order: repeated indices accumulate
        idx_row = _row(cg, index, i)
        row_view = Tensor(table.value, (1,) + tuple(table.shape[1:]), table.dtype, table.buffer,
                          table.strides, table.offset, cg.b.block, table.name, is_base=False,
                          storage=table.storage_shape, dyn_offset=table.dyn_offset,
                          indirect=Indirect(idx_row, table))
        tmp = _new_tile(cg, (1,) + tuple(table.shape[1:]), table.dtype)
        HANDLERS["nisa.dma_copy"](cg, tmp, row_view)  # gather dst[index[i]]
        A.emit(cg, op_class("nki.dma_compute"), {"dst": tmp.value, "srcs": [tmp.value, _row(cg, v, i).value]},
               {"reduce_op": "add"})
        HANDLERS["nisa.dma_copy"](cg, row_view, tmp)  # scatter it back
    return None


def _row(cg, t: Tensor, i: int) -> Tensor:
    """Row ``i`` of ``t`` as a ``[1, ...]`` view."""
    nd = t.ndim
    return cg.b.subview(t, [i] + [0] * (nd - 1), [1] + list(t.shape[1:]), [1] * nd, [True] * nd)


# ------------------------------------------------------------------------------- ncc


@handles("ncc.no_reorder")
def ncc_no_reorder(cg):
    """``with ncc.no_reorder():`` -- the same region as ``with nl.no_reorder():``."""
    return HANDLERS["nl.no_reorder"](cg)


@handles("ncc.allocation_scope")
def ncc_allocation_scope(cg):
    """``with ncc.allocation_scope():`` -- the body runs as is: the allocator already frees
    every tensor after its last use, which is what the scope asks for."""
    from .ncc_marks import AllocationScope
    return AllocationScope()


__all__ = ["static_cast", "loop_reduce", "reduce_into", "reduce_into_name", "PendingReduce", "atomic_rmw", "dtypes"]
