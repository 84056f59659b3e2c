"""Beta 1 value-returning ``nisa`` calls (``neuronxcc.nki.isa``, Builtins ``nisa1.<name>``).

In Beta 1 an instruction returns its result tile instead of taking ``dst`` (NKI migration guide (nki/migration)): the arguments are the Beta 2 ones without ``dst``, plus ``dtype=`` (result
dtype) and ``mask=``.  Each call here allocates the result (:data:`RESULT_RULES` gives its
shape, dtype and buffer: SBUF, or PSUM for the TensorE instructions) and calls the Beta 2
handler with it as ``dst``, so both fronts emit the same ``nki`` ops.  Assigning the result
into a tile (``psum[...] = nisa.nc_matmul(...)``) folds the temporary away (frontend/assign.py),
and ``psum[...] += nisa.nc_matmul(...)`` is an accumulating matmul (:func:`accumulate_matmul`).

``tensor_tensor(data1, data2, op)`` with one operand a ``[P, 1]`` column broadcasts it along
the free dims of the other (:func:`_free_broadcast_operand`), as real Beta 1 kernels rely on.

Reshaped Beta 1 forms: ``iota(expr, dtype)`` (``expr`` an ``nl.arange`` expression),
``affine_select(pred, on_true_tile, on_false_value)`` (``pred`` an affine comparison) and
``memset(shape, value, dtype)``.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from ... import dtypes
from ...dialects import nki
from ...errors import NKITypeError
from ...isa_names import INSTRUCTIONS as _INSTRUCTIONS
from ..builtins import HANDLERS, handles
from .index_expr import IndexExpr, Mask
from ..lang_calls import _dtype, _shape, new_tensor
from ..values import Tensor, is_int

#: parameters whose tile gives the result's shape and dtype by default, in order of preference
_SHAPE_ROLES = ("data", "data1", "src", "on_true_tile", "in_", "x")


def _first_tile(bound: dict[str, Any]) -> Tensor | None:
    for role in _SHAPE_ROLES:
        if isinstance(bound.get(role), Tensor):
            return bound[role]
    for v in bound.values():
        if isinstance(v, Tensor):
            return v
    return None


def _elementwise(cg, api, bound, dt):
    t = _first_tile(bound)
    if t is None:
        raise cg.b.error(f"{api}: no tile argument to take the result shape from; pass dst=",
                         NKITypeError)
    if dt is None:
        dt = t.dtype
        if isinstance(bound.get("data2"), Tensor):
            from .tile_ops import promote
            dt = promote(t.dtype, bound["data2"].dtype)
    return t.shape, dt, "sbuf"


def _tensor_reduce(cg, api, bound, dt):
    t = bound.get("data")
    if not isinstance(t, Tensor):
        return _elementwise(cg, api, bound, dt)
    axis = bound.get("axis")
    axes = [axis] if is_int(axis) else list(axis or ())
    axes = [int(a) % t.ndim for a in axes]
    shape = tuple(1 if d in axes else n for d, n in enumerate(t.shape))
    if not bound.get("keepdims") and t.ndim - len(axes) >= 2:
        shape = tuple(n for d, n in enumerate(t.shape) if d not in axes)
        bound["keepdims"] = False
    else:
        bound["keepdims"] = True
    return shape, dt or t.dtype, "sbuf"


def _fixed_free(n: int, out_dt=None):
    def rule(cg, api, bound, dt):
        t = _first_tile(bound)
        return (t.shape[0], n), dt or out_dt or t.dtype, "sbuf"
    return rule


def _bn_stats(cg, api, bound, dt):
    t = bound["data"]
    free = int(np.prod(t.shape[1:]))
    return (t.shape[0], 6 * -(-free // 512)), dt or t.dtype, "sbuf"


#: instruction -> rule(cg, api, bound_args, dtype) -> (shape, dtype, buffer) of the result
#: (an instruction definition adds its own with ``beta1_result = rule``, :func:`define_beta1`)
RESULT_RULES = {
    "tensor_reduce": _tensor_reduce,
    "max8": _fixed_free(8), "nc_find_index8": _fixed_free(8, dtypes.uint32),
    "bn_aggr": _fixed_free(2), "bn_stats": _bn_stats,
}
#: instructions without a result tile (registers, queries, seeds): passed through unchanged
#: (an instruction definition adds itself with ``beta1_result = False``, :func:`define_beta1`)
_PASS_THROUGH = {"get_nc_version", "get_nc_sub_version"}


def _beta1(name: str):
    api = f"nisa.{name}"

    @functools.cache
    def beta2() -> tuple:
        """The Beta 2 handler and its signature (looked up once, after every family registered)."""
        b2 = HANDLERS[api]
        return b2, inspect.signature(b2)

    def handler(cg, *args, dtype=None, mask=None, **kwargs):
        b2, sig = beta2()
        if name in _PASS_THROUGH or "dst" in kwargs or "dst" not in sig.parameters:
            return b2(cg, *args, **kwargs)
        special = _SPECIAL.get(name)
        if special is not None:
            return special(cg, *args, dtype=dtype, **kwargs)
        try:
            bound = sig.bind(cg, None, *args, **kwargs).arguments
        except TypeError as exc:
            raise cg.b.error(f"{api} (Beta 1 form, no dst): {exc}", NKITypeError) from None
        bound.pop("cg", None)
        bound.pop("dst", None)
        dt = None if dtype is None else _dtype(cg, api, dtype)
        if name in _PREPARE:
            _PREPARE[name](cg, bound)
        shape, dt, buf = RESULT_RULES.get(name, _elementwise)(cg, api, bound, dt)
        dst = new_tensor(cg, nki.NdarrayOp, shape, dt, buf)
        b2(cg, dst, **bound)
        return dst
    return handler


def _sbuf_matmul_operands(cg, bound: dict) -> None:
    """TensorE reads SBUF only: a PSUM ``stationary`` / ``moving`` of a Beta 1 value-form
    ``nc_matmul`` (e.g. straight from ``nisa.nc_transpose``) is first copied to an SBUF tile
    of its shape and dtype (exact), as ``nl.matmul`` does."""
    from ..lang_calls import _sbuf_operand
    for role in ("stationary", "moving"):
        if isinstance(bound.get(role), Tensor):
            bound[role] = _sbuf_operand(cg, bound[role])


def _free_broadcast_operand(cg, bound: dict) -> None:
    """Beta 1 ``nisa.tensor_tensor(data1, data2, op)`` with one operand a per-partition
    scalar (``[P, 1]``, every free dim 1) and the other a ``[P, F...]`` tile: the scalar
    operand is broadcast along the free dims, read through a stride-0 access pattern (the
    ``.broadcast(dim, size)`` view; the nki.isa.tensor_tensor page points to
    ``nki.isa.tensor_scalar`` as the faster way to broadcast along the free dimension).
    Operands of different partition sizes, indirect views and tensors with block dims are
    left alone for the instruction's own checks to report."""
    d1, d2 = bound.get("data1"), bound.get("data2")
    if not (isinstance(d1, Tensor) and isinstance(d2, Tensor)) or d1.shape[0] != d2.shape[0]:
        return
    if any(t.blocks or t.indirect is not None or not t.on_chip for t in (d1, d2)):
        return
    free1, free2 = (int(np.prod(t.shape[1:], dtype=np.int64)) for t in (d1, d2))
    for role, t, other, n, m in (("data2", d2, d1, free2, free1), ("data1", d1, d2, free1, free2)):
        if n == 1 and m > 1:
            strides = (t.strides[0],) + (0,) * (other.ndim - 1)
            bound[role] = cg.b.reinterpret(t, other.shape, strides, t.offset_index)
            return


#: instruction -> hook(cg, bound_args) run on the Beta 1 arguments before the result is allocated
_PREPARE = {"nc_matmul": _sbuf_matmul_operands, "tensor_tensor": _free_broadcast_operand}


# ---------------------------------------------------------------- reshaped Beta 1 forms


def _grid(cg, api: str, expr: Any) -> IndexExpr:
    if not isinstance(expr, IndexExpr) or expr.rank < 2:
        raise cg.b.error(f"{api}: expected a 2-D (or higher) nl.arange / nl.mgrid expression, got "
                         f"{expr!r}", NKITypeError, code="err_1d_arange_not_supported"
                         if isinstance(expr, IndexExpr) else None)
    return expr  # its constant part may depend on loop indices (a run-time offset)


def _pattern(e: IndexExpr) -> tuple[list[list[int]], int]:
    """(free-dim pattern [[step, count], ...], channel multiplier) of a grid expression."""
    pattern = [[int(e.coeffs[r]), int(e.sizes[r])] for r in range(1, e.rank)]
    return pattern, int(e.coeffs[0]) if e.sizes[0] > 1 else 0


def _iota(cg, expr, dtype=None, **kw):
    """``nisa.iota(expr, dtype)``: the values of an index expression as a tile."""
    api = "nisa.iota"
    e = _grid(cg, api, expr)
    dt = dtypes.int32 if dtype is None else _dtype(cg, api, dtype)
    dst = new_tensor(cg, nki.NdarrayOp, e.sizes, dt, "sbuf")
    pattern, cm = _pattern(e)
    HANDLERS[api](cg, dst, pattern, offset=e.const, channel_multiplier=cm)
    return dst


def _affine_select(cg, pred, on_true_tile, on_false_value, dtype=None, **kw):
    """``nisa.affine_select(pred, on_true_tile, on_false_value)``: ``on_true_tile`` where the
    affine predicate holds, else ``on_false_value``.  GpSimd cannot read PSUM, so a PSUM
    ``on_true_tile`` (real Beta 1 kernels select straight from a matmul result) is first
    copied to an SBUF tile of its shape and dtype (exact)."""
    api = "nisa.affine_select"
    if not isinstance(pred, Mask) or len(pred.constraints) != 1:
        raise cg.b.error(f"{api}: pred must be one affine comparison of nl.arange expressions, "
                         f"e.g. (i_p - i_f >= 0)", NKITypeError, code="err_unsupported_expression_in_mask")
    (expr, op), = pred.constraints
    e = _grid(cg, api, expr)
    if not isinstance(on_true_tile, Tensor):
        raise cg.b.error(f"{api}: on_true_tile must be a tile", NKITypeError)
    dt = on_true_tile.dtype if dtype is None else _dtype(cg, api, dtype)
    from ..lang_calls import _sbuf_operand
    on_true_tile = _sbuf_operand(cg, on_true_tile)
    dst = new_tensor(cg, nki.NdarrayOp, on_true_tile.shape, dt, "sbuf")
    pattern, cm = _pattern(e)
    from ..builtins import Builtin
    cmp = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
           "eq": "equal", "ne": "not_equal"}[op]
    HANDLERS[api](cg, dst, pattern, cm, on_true_tile, on_false_value,
                  cmp_op=Builtin(f"nl.{cmp}", token=cmp), offset=e.const)
    return dst


def _memset(cg, shape, value, dtype=None, **kw):
    """``nisa.memset(shape, value, dtype)``: a new SBUF tile filled with ``value``."""
    api = "nisa.memset"
    dst = new_tensor(cg, nki.NdarrayOp, _shape(cg, api, shape),
                     dtypes.float32 if dtype is None else _dtype(cg, api, dtype), "sbuf")
    HANDLERS[api](cg, dst, value, **{k: v for k, v in kw.items() if k == "engine"})
    return dst


_SPECIAL = {"iota": _iota, "affine_select": _affine_select, "memset": _memset}

for _name in _INSTRUCTIONS:
    handles(f"nisa1.{_name}")(_beta1(_name))


def define_beta1(name: str, result) -> None:
    """Register the Beta 1 form ``nisa1.<name>`` of an instruction definition: it returns a
    new tile (``result`` true; shaped like the first tile argument, or by ``result`` itself
    when it is a rule ``rule(cg, api, bound_args, dtype) -> (shape, dtype, buffer)``) or is
    passed on unchanged (``result`` False)."""
    if callable(result):
        RESULT_RULES[name] = result
    elif not result:
        _PASS_THROUGH.add(name)
    handles(f"nisa1.{name}")(_beta1(name))


# ---------------------------------------------------------------- psum[...] += matmul


def accumulate_matmul(cg, name: str, view: Tensor, args: list, kwargs: dict) -> None:
    """``view += nisa.nc_matmul(stationary, moving, ...)`` or ``view += nl.matmul(x, y,
    transpose_x)``: one matmul accumulating into the PSUM ``view``.  With ``mask=`` the
    accumulating matmul is compiled like any masked call (``masks.masked_call``, ``view``
    one of its operands): it runs only where the mask holds (a predicate on loop indices
    skips it in the iterations where it is false)."""
    mask = kwargs.get("mask")
    kwargs = {k: v for k, v in kwargs.items() if k not in ("mask", "dtype")}
    if mask is None:
        _accumulate(cg, name, view, args, kwargs)
        return
    from types import SimpleNamespace
    from .masks import masked_call

    def handler(cg, dst, *a, **kw):
        _accumulate(cg, name, dst, list(a), kw)

    masked_call(cg, cg.b.loc, SimpleNamespace(name=name), handler, [view, *args],
                {**kwargs, "mask": mask})


def _accumulate_flag(view: Tensor) -> bool | None:
    """``accumulate=`` of ``view += matmul``: True (add onto PSUM) when ``view`` is a part of
    an initialised tensor (``nl.zeros``, ``nl.full``: the documented ``acc = nl.zeros(...,
    buffer=nl.psum); acc += nc_matmul(...)`` idiom), None (the first matmul write overwrites,
    later ones add: ``nki.isa.nc_matmul`` ``accumulate=None``) when it is part of an
    uninitialised ``nl.ndarray``, as direct-allocated kernels must use."""
    from xdsl.dialects import memref as memref_d
    v = view.value
    while isinstance(v.owner, (memref_d.SubviewOp, memref_d.ReinterpretCastOp)) or \
            v.owner.name == "nki.view_dtype":
        v = v.owner.operands[0]
    return None if isinstance(v.owner, nki.NdarrayOp) else True


def _accumulate(cg, name: str, view: Tensor, args: list, kwargs: dict) -> None:
    flag = _accumulate_flag(view)
    if name == "nl.matmul":
        sig = inspect.Signature([inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                   default=d) for p, d in
                                 (("x", inspect.Parameter.empty), ("y", inspect.Parameter.empty),
                                  ("transpose_x", False))])
        try:
            b = sig.bind(*args, **kwargs).arguments
        except TypeError as exc:
            raise cg.b.error(f"nl.matmul: {exc}", NKITypeError) from None
        x, y = b["x"], b["y"]
        if not b.get("transpose_x", False):
            xt = HANDLERS["nl.transpose"](cg, x)
            x = HANDLERS["nl.copy"](cg, xt, dtype=x.dtype)
        HANDLERS["nisa.nc_matmul"](cg, view, x, y, accumulate=flag)
        return
    b2 = HANDLERS["nisa.nc_matmul"]
    try:
        bound = inspect.signature(b2).bind(cg, view, *args, **kwargs).arguments
    except TypeError as exc:
        raise cg.b.error(f"nisa.nc_matmul: {exc}", NKITypeError) from None
    bound.pop("cg", None)
    bound["accumulate"] = flag
    _sbuf_matmul_operands(cg, bound)
    b2(cg, **bound)


__all__ = ["accumulate_matmul", "define_beta1", "RESULT_RULES"]
