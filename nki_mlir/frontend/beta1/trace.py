"""NKI Beta 1 forms in a traced kernel: index grids, masks, pending views, accumulation.

A Beta 1 kernel (``import neuronxcc.nki``) is traced like any other; what its Python meets
beyond Beta 2 is handled here, reusing the Beta 1 front's semantics (``tile_ops``,
``index_expr``, ``masks``):

- ``nl.arange(n)[:, None]``, ``t * 128 + i_p``, ``i_p < n``, ``nl.mgrid[0:P, 0:F]``: the
  operators of :class:`~.index_expr.IndexExpr` / :class:`~.index_expr.Mask` call
  :func:`grid_operator` and friends (affine algebra; located errors).
- ``x[t * 128 + i_p, i_f]``: a :class:`PendingTensor`.  It is emitted when first used, or,
  passed to a call with ``mask=``, built per masked shape by ``masks.masked_call`` so a view
  of a partial last tile never covers rows past the tensor's end.
- ``psum[...] += nisa.nc_matmul(...)`` / ``nl.matmul(...)``: the matmul just emitted into a
  temporary is re-emitted accumulating into the PSUM view (:func:`accumulate`).
- ``name: nt.tensor[...] = value``: the annotation is checked (:func:`check_annotation`).

Semantics: NKI language guide (nki/get-started/nki-language-guide); NKI Beta 1 programming-model page ("Tile indexing",
"Masking").
"""
from __future__ import annotations

import linecache
import re
from typing import Any

from ...errors import NKISyntaxError, NKITypeError
from ..context import require, tracer
from ..frames import user_loc
from ..proxies import AST_OPS, NkiTensor

_MATMULS = ("nisa1.nc_matmul", "nl.matmul", "nisa.nc_matmul")


def _ctx():
    return require("an nl.arange / nl.mgrid index expression")


# ------------------------------------------------------------------ index grids
def grid_operator(op: str, a: Any, b: Any) -> Any:
    """``a <op> b`` with an index expression or mask operand (``+ - * // % &``).

    An error in an expression written inside a ``mask=`` argument carries the Beta 1 code
    ``err_unsupported_expression_in_mask`` (told from the source text before the column)."""
    from .tile_ops import index_operator
    unwrap = tracer().unwrap
    ctx = _ctx()
    loc = ctx.b.loc = user_loc()
    try:
        return index_operator(ctx, loc, AST_OPS[op], unwrap(a), unwrap(b))
    except NKITypeError as exc:
        if exc.code is None and loc is not None and _in_mask_argument(loc):
            exc.code = "err_unsupported_expression_in_mask"
            exc.args = (exc.format(),)
        raise


_MASK_ARG = re.compile(r"\bmask\s*=\s*\(*\s*$")


def _in_mask_argument(loc) -> bool:
    return bool(_MASK_ARG.search(linecache.getline(loc.file, loc.line)[:max(loc.col - 1, 0)]))


def grid_compare(op: str, a: Any, b: Any) -> Any:
    """``expr <op> value`` -> a :class:`~.index_expr.Mask`."""
    from .tile_ops import compare_operator
    unwrap = tracer().unwrap
    ctx = _ctx()
    loc = ctx.b.loc = user_loc()
    return compare_operator(ctx, loc, AST_OPS[op], unwrap(a), unwrap(b))


def grid_subscript(obj: Any, key: Any) -> Any:
    """``nl.arange(n)[:, None]`` or ``nl.mgrid[0:P, 0:F]``."""
    from .tile_ops import subscript_index
    unwrap = tracer().unwrap
    ctx = _ctx()
    loc = ctx.b.loc = user_loc()
    return subscript_index(ctx, loc, obj, unwrap(key))


def grid_truth(what: str) -> None:
    """An index expression or mask used as a Python truth value: a located error."""
    from ..frames import truth_context
    if (kind := truth_context()) in ("and", "or", "not"):
        raise NKITypeError(f"'{kind}' needs a single truth value, but a tile (or index "
                           f"expression) has many; use the element-wise forms & | ~ "
                           f"(nl.logical_and / logical_or / logical_not)", user_loc(),
                           code="err_ambiguous_tensor_truth_value")
    raise NKISyntaxError(f"an nl.arange / nl.mgrid expression (or a mask built from one) has no "
                         f"single truth value ({what}); conditions must be compile-time values "
                         f"(use it as mask= instead)", user_loc(),
                         code="err_control_flow_condition_depending_on_arange")


# --------------------------------------------------------------- pending views
class PendingTensor(NkiTensor):
    """``x[keys]`` with index-expression keys, emitted on first use (see module doc).

    Attributes:
        pending: the :class:`~.masks.PendingView` (tensor, keys, broadcast shape).
    """

    __slots__ = ("pending", "_view")

    @classmethod
    def _make(cls, pending) -> "PendingTensor":
        p = object.__new__(cls)
        object.__setattr__(p, "pending", pending)
        object.__setattr__(p, "_view", None)
        return p

    @property
    def _t(self):  # type: ignore[override]
        if self._view is None:
            from .masks import resolve
            ctx = _ctx()
            saved = ctx.b.loc
            ctx.b.loc = self.pending.node
            try:
                object.__setattr__(self, "_view", resolve(ctx, self.pending))
            finally:
                ctx.b.loc = saved
        return self._view

    shape = property(lambda self: self.pending.shape if self._view is None else self._view.shape)
    dtype = property(lambda self: self.pending.tensor.dtype)


def pending_subscript(ctx, loc, t, key) -> Any:
    """``t[key]``: a :class:`PendingTensor` for index-expression keys of rank >= 2 (the form
    a mask may shrink), else None (the caller emits the view now)."""
    from .index_expr import IndexExpr
    from .masks import PendingView
    from ..values import Index, is_int
    keys = list(key) if isinstance(key, tuple) else [key]
    exprs = [k for k in keys if isinstance(k, IndexExpr)]
    if not exprs or len(keys) != t.ndim or not all(isinstance(k, (IndexExpr, Index)) or is_int(k)
                                                   for k in keys):
        return None
    rank = max(e.rank for e in exprs)
    if rank < 2:
        return None
    shape = [1] * rank
    for e in exprs:
        for r, n in enumerate(e._grid(rank)[0]):
            shape[r] = max(shape[r], n)
    return PendingTensor._make(PendingView(loc, t, tuple(keys), tuple(shape)))


# ------------------------------------------------------------- psum += matmul
class LastCall:
    """What the latest value-returning call emitted (for ``psum[...] += matmul(...)``)."""

    def __init__(self, name: str, args: list, kwargs: dict, result: Any, first_op, last_op):
        self.name, self.args, self.kwargs, self.result = name, args, kwargs, result
        self.first_op, self.last_op = first_op, last_op


def erase_last_call(ctx, last: LastCall) -> None:
    """Erase the ops the last value-returning call emitted (its result is unused so far)."""
    op = last.last_op
    erased: set[int] = set()
    while op is not None:
        prev = op.prev_op if op is not last.first_op else None
        erased.add(id(op))
        op.detach()
        op.erase(safe_erase=False)
        op = prev
    consts = ctx.b._consts  # constants the call emitted are no longer there to reuse
    for key in [k for k, v in consts.items() if id(v.owner) in erased]:
        del consts[key]
    ctx.last_call = None


def accumulate(ctx, view: NkiTensor, value: Any) -> Any:
    """``view += value``: when ``value`` is the result of the matmul just emitted and
    ``view`` is in PSUM, the matmul is re-emitted accumulating into ``view`` (the temporary
    and its ops are erased); otherwise NotImplemented (Python then uses ``+``)."""
    last: LastCall | None = getattr(ctx, "last_call", None)
    v = view._t
    if last is None or last.name not in _MATMULS or v.buffer != "psum" or \
            not isinstance(value, NkiTensor) or value._t is not last.result:
        return NotImplemented
    if ctx.b.block.last_op is not last.last_op:
        return NotImplemented  # something else was emitted since: keep Python's meaning
    erase_last_call(ctx, last)
    from .isa import accumulate_matmul
    ctx.b.loc = user_loc()
    accumulate_matmul(ctx, last.name, v, last.args, last.kwargs)
    ctx.accumulated = view
    return view


# ------------------------------------------------------------------ annotations
def check_annotation(value: Any, annotation: Any, target: str) -> Any:
    """``target: annotation = value`` in a kernel body: a ``nt.tensor[...]`` annotation must
    match the value's shape (``err_annotation_shape_mismatch``) and dtype; returns value."""
    from ... import dtypes
    from ..annotations import TensorAnnotation, annotation_of
    from .lang import PendingReduce, reduce_into_name
    if type(value) is PendingReduce:  # acc: nt.tensor[...] = nl.loop_reduce(...): into acc
        from ..frames import user_frame
        value = reduce_into_name(_ctx(), user_frame().f_locals, target, value)
    ann = annotation_of(annotation)
    if not isinstance(ann, TensorAnnotation) or not isinstance(value, NkiTensor):
        return value
    t = value._t
    loc = user_loc()
    if ann.shape is not None and tuple(t.shape) != tuple(ann.shape):
        raise NKITypeError(f"shape of '{target}{list(t.shape)}' does not match the expected shape "
                           f"of {list(ann.shape)} (annotation {ann!r})", loc,
                           code="err_annotation_shape_mismatch")
    if ann.dtype is not None and t.dtype != ann.dtype:
        raise NKITypeError(f"dtype of '{target}' is {dtypes.name_of(t.dtype)} but its annotation "
                           f"{ann!r} expects {dtypes.name_of(ann.dtype)}", loc)
    return value
