"""Python operators on tiles and index expressions (NKI Beta 1).

- Tile operators map to the ``nl`` functions (NKI language guide (nki/get-started/nki-language-guide), "Operator
  overloads"): ``+ - * / ** %`` -> ``add subtract multiply divide power mod``; ``<< >>`` ->
  ``left_shift right_shift``; ``& | ^ ~`` -> the logical forms ``logical_and logical_or
  logical_xor logical_not``; comparisons -> ``equal less ...``; unary ``-`` -> ``negative``.
  The result dtype follows NKI type promotion (Beta 1 programming-model page, "NKI Type
  Promotion"): see :func:`promote`.  Partition-dim broadcasting is not done by operators.
- ``nl.arange`` / ``nl.mgrid`` expressions combine affinely (:mod:`.index_expr`);
  comparing one gives a ``mask=`` predicate, and masks combine with ``&``.
- ``t[...] += value`` accumulates in place; ``psum[...] += nisa.nc_matmul(...)`` (or
  ``nl.matmul``) is an accumulating matmul into ``psum`` (section 5.5).
"""
from __future__ import annotations

import ast
import operator
from typing import Any

import numpy as np

from ... import dtypes
from ...errors import NKITypeError
from . import index_expr as ie
from ..builtins import HANDLERS, handles
from .index_expr import IndexExpr, Mask
from ..values import Index, Tensor, is_int

_PY_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
           ast.Pow: operator.pow, ast.LShift: operator.lshift, ast.RShift: operator.rshift,
           ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.BitXor: operator.xor,
           ast.MatMult: operator.matmul}
_CMP_OPS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Gt: operator.gt, ast.GtE: operator.ge}
#: Python binary operator -> nl function
TILE_BINOPS = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
               ast.Pow: "power", ast.Mod: "mod", ast.LShift: "left_shift",
               ast.RShift: "right_shift", ast.BitAnd: "logical_and", ast.BitOr: "logical_or",
               ast.BitXor: "logical_xor"}
TILE_CMPOPS = {ast.Eq: "equal", ast.NotEq: "not_equal", ast.Lt: "less", ast.LtE: "less_equal",
               ast.Gt: "greater", ast.GtE: "greater_equal"}
_NUMBER = (int, float, bool, np.integer, np.floating, np.bool_)


# ------------------------------------------------------------------ type promotion


def _weak(v: Any):
    """The dtype a Python / NumPy scalar contributes (weak scalars: bool -> uint8, int ->
    int32, float -> float32; a NumPy scalar keeps its own dtype)."""
    if isinstance(v, (np.integer, np.floating)) and v.dtype.itemsize < 8:
        return dtypes.as_dtype(v.dtype)
    if isinstance(v, (bool, np.bool_)):
        return dtypes.uint8
    if isinstance(v, (int, np.integer)):
        return dtypes.int32
    return dtypes.float32


def promote(a, b):
    """NKI type promotion of two dtypes (Beta 1 "NKI Type Promotion" rules).

    (float, int) -> the float; (float, float) -> the wider, fp16 with bf16 -> fp32 and two
    different fp8 kinds -> bf16; (int, int) -> the wider, or a widened type holding both
    ranges (int8 with uint8 -> int16).
    """
    if a == b:
        return a
    fa, fb = dtypes.is_float(a), dtypes.is_float(b)
    if fa != fb:
        return a if fa else b
    if fa:
        sa, sb = np.dtype(a).itemsize, np.dtype(b).itemsize
        if sa != sb:
            return a if sa > sb else b
        if sa == 1:
            return dtypes.bfloat16
        if sa == 2:
            return dtypes.float32  # float16 with bfloat16
        return dtypes.float32  # float32 with tfloat32
    ia, ib = np.iinfo(a), np.iinfo(b)
    lo, hi = min(ia.min, ib.min), max(ia.max, ib.max)
    for cand in (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16, dtypes.int32, dtypes.uint32):
        info = np.iinfo(cand)
        if info.min <= lo and hi <= info.max:
            return cand
    return dtypes.int32


def result_dtype(a: Any, b: Any):
    """The dtype of ``a <op> b`` with at least one tile operand (weak scalars included)."""
    ta = a.dtype if isinstance(a, Tensor) else _weak(a)
    tb = b.dtype if isinstance(b, Tensor) else _weak(b)
    return promote(ta, tb)


# ------------------------------------------------------------------ tile operators


def _call(cg, name: str, *args, **kwargs):
    return HANDLERS[name](cg, *args, **kwargs)


def tile_operator(cg, node: ast.AST, op: type, a: Any, b: Any) -> Tensor:
    """``a <op> b`` with a tile operand -> the ``nl`` function of ``op`` (Beta 1 only)."""
    if not cg.b.beta1:
        raise cg._tensor_operator(node)
    fn = TILE_BINOPS.get(op)
    if fn is None:
        raise cg.fail(node, f"the '{_sym(op)}' operator does not apply to tiles", NKITypeError)
    for v in (a, b):
        if not isinstance(v, (Tensor,) + _NUMBER):
            raise cg.fail(node, f"cannot combine a tile with {type(v).__name__} {v!r} using "
                                f"'{_sym(op)}'; operands must be tiles or numbers", NKITypeError)
    cg.b.loc = cg.loc(node)
    return _call(cg, f"nl.{fn}", a, b, dtype=result_dtype(a, b))


def unary_operator(cg, node: ast.AST, op: ast.unaryop, v: Tensor) -> Tensor:
    if not cg.b.beta1:
        raise cg._tensor_operator(node)
    cg.b.loc = cg.loc(node)
    if isinstance(op, ast.USub):
        return _call(cg, "nl.negative", v)
    if isinstance(op, ast.UAdd):
        return v
    return _call(cg, "nl.logical_not", v)  # ~t: the logical form (section 4.3)


def compare_operator(cg, node: ast.AST, op: type, a: Any, b: Any):
    """``a <cmp> b``: a mask when an index expression is involved, else a 0/1 tile."""
    if isinstance(a, IndexExpr) or isinstance(b, IndexExpr):
        try:
            return ie.compare(_CMP_OPS[op], a, b)
        except ie.IndexError_ as exc:
            raise cg.fail(node, str(exc), NKITypeError, code="err_unsupported_expression_in_mask") from None
    if not cg.b.beta1:
        raise cg._tensor_operator(node)
    if op not in TILE_CMPOPS:
        raise cg.fail(node, f"'{_sym(op)}' does not apply to tiles", NKITypeError)
    cg.b.loc = cg.loc(node)
    return _call(cg, f"nl.{TILE_CMPOPS[op]}", a, b, dtype=dtypes.uint8)


# ------------------------------------------------------------------ index expressions


def index_operator(cg, node: ast.AST, op: type, a: Any, b: Any):
    """Affine arithmetic on index expressions; ``&`` of masks."""
    if isinstance(a, Mask) or isinstance(b, Mask):
        if op is ast.BitAnd and isinstance(a, Mask) and isinstance(b, Mask):
            return a & b
        raise cg.fail(node, f"a mask is a conjunction of comparisons joined with '&'; "
                            f"'{_sym(op)}' is not supported in a mask", NKITypeError,
                      code="err_unsupported_expression_in_mask")
    for v in (a, b):
        if not (isinstance(v, (IndexExpr, Index)) or is_int(v)):
            raise cg.fail(node, f"an nl.arange / nl.mgrid expression can only be combined with ints "
                                f"and loop indices, not {type(v).__name__}", NKITypeError)
    try:
        return ie.binop(_PY_OPS[op], a, b)
    except ie.IndexError_ as exc:
        raise cg.fail(node, str(exc), NKITypeError) from None


def subscript_index(cg, node: ast.AST, obj: Any, key: Any):
    """``nl.arange(n)[:, None]`` or ``nl.mgrid[0:P, 0:F]``."""
    try:
        if isinstance(obj, IndexExpr):
            return obj.subscript(key)
        return ie.mgrid(key)
    except ie.IndexError_ as exc:
        raise cg.fail(node, str(exc), NKITypeError) from None


@handles("tensor.broadcast_to")
def tile_broadcast_to(cg, t: Tensor, shape, dtype=None):
    """``tile.broadcast_to(shape)`` (Beta 1 tile method) -> ``nl.broadcast_to``."""
    return HANDLERS["nl.broadcast_to"](cg, t, shape, dtype=dtype)


def _sym(op: type) -> str:
    return {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
            ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|",
            ast.BitAnd: "&", ast.BitXor: "^", ast.MatMult: "@", ast.Eq: "==", ast.NotEq: "!=",
            ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}.get(op, op.__name__)


def reduced_axes_last(cg, t: Tensor, axes: list[int]) -> tuple[Tensor, list[int]]:
    """A view of on-chip tile ``t`` whose reduced free ``axes`` come last.

    ``nl.sum(x, axis=[2, 4])`` on a rank-5 tile reduces non-trailing free axes
    (nki/api/nki.language.rst, reductions: "axis: int or tuple/list of ints"); the ``nki``
    reduce op reduces trailing axes only, so the tile is viewed with its dims permuted to
    ``[0, kept free axes..., reduced axes...]`` (a ``memref.reinterpret_cast``, no copy) and
    reduced over its trailing ``len(axes)`` axes (Beta 1 kernels; Beta 2 keeps requiring
    trailing axes).  The kept axes keep their order, so the
    reduced result is the same as NumPy's.  ``axes``: sorted, without 0.  Returns the view
    and its trailing axes (``t`` and ``axes`` unchanged when they are already trailing)."""
    if axes == list(range(axes[0], t.ndim)):
        return t, axes
    order = [0] + [d for d in range(1, t.ndim) if d not in axes] + list(axes)
    view = cg.b.reinterpret(t, [t.shape[d] for d in order], [t.strides[d] for d in order],
                            t.offset_index)
    return view, list(range(t.ndim - len(axes), t.ndim))
