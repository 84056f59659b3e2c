"""Frontend handlers for the NKI 0.3+ ``nki.language`` convenience functions.

Math (``nl.add``, ``nl.exp``, ``nl.sum``, ``nl.softmax``, ...), shape (``nl.transpose``,
``nl.broadcast_to``, ``nl.expand_dims``, ``nl.load_transpose2d``, ``nl.copy``) and
``nl.where``; creation, random and utility functions are in :mod:`.lang_create`.

Each call checks its arguments (errors name the function, the operand and the limit, at
the call's source line) and emits one generic sugar op of ``dialects/nki_sugar.py``
returning a new SBUF tile (``nl.transpose``: PSUM); ``nki-legalize``
(``passes/legalize_math.py``) turns it into ISA-level ``nki`` instructions.  Result
dtype: ``dtype=`` when given, else the input's dtype (NKI 0.3+ semantics); comparisons
and logical functions give 1 / 0 in that dtype.  Semantics: NKI migration guide (nki/migration).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..dialects import nki, nki_sugar as S
from ..dialects.common import PMAX, contiguous_strides, memref
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .lang_calls import _dtype, _shape
from .values import Tensor, is_int

#: moving free size of one matmul: the limit of a partition broadcast (TensorE ones-matmul)
BCAST_PART_FMAX = 512
#: at most this many copies to broadcast along inner free dims
BCAST_COPIES_MAX = 512

_BITVEC = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert")
_NUMBER = (int, float, bool, np.integer, np.floating, np.bool_)
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")


# ----------------------------------------------------------------------------- helpers


def _err(cg, msg: str):
    return cg.b.error(msg, NKITypeError)


def _tile(cg, api: str, role: str, v: Any) -> Tensor:
    """An on-chip (SBUF/PSUM) tensor operand."""
    t = A.tensor(cg, api, role, v)
    if not t.on_chip:
        raise _err(cg, f"{api}: '{role}' is {t.describe()}; nl math functions work on SBUF/PSUM "
                       f"tiles (load HBM tensors with nl.load first)")
    return t


def _result(cg, cls, operands: dict, props: dict | None, shape, dt, buffer: str = "sbuf") -> Tensor:
    shape = tuple(int(d) for d in shape)
    if buffer in ("sbuf", "psum") and shape[0] > PMAX:
        raise _err(cg, f"{cls.name}: the result would have partition dimension {shape[0]}, which "
                       f"exceeds the architecture limit of {PMAX}")
    op = A.emit(cg, cls, operands, props, [memref(shape, dt, buffer)])
    return Tensor(op.results[0], shape, dt, buffer, tuple(contiguous_strides(shape)), 0, cg.b.block)


def _out_dtype(cg, api: str, dtype, *candidates):
    if dtype is not None:
        return _dtype(cg, api, dtype)
    for c in candidates:
        if isinstance(c, Tensor):
            return c.dtype
    return dtypes.float32


def _broadcast_shape(cg, api: str, shapes: list[tuple[str, tuple[int, ...]]]) -> tuple[int, ...]:
    """NumPy broadcasting of on-chip tiles (same rank: dim 0 is the partition dim)."""
    ranks = {len(s) for _, s in shapes}
    if len(ranks) > 1:
        desc = ", ".join(f"'{r}' {list(s)}" for r, s in shapes)
        raise _err(cg, f"{api}: operands have different ranks ({desc}); on-chip tiles broadcast "
                       f"only between equal ranks (dim 0 is the partition dim)")
    try:
        out = np.broadcast_shapes(*[s for _, s in shapes])
    except ValueError:
        desc = " and ".join(f"'{r}' {list(s)}" for r, s in shapes)
        raise _err(cg, f"{api}: shapes {desc} cannot be broadcast together "
                       f"(NumPy broadcasting: each dim must match or be 1)") from None
    for r, s in shapes:
        _check_broadcast(cg, api, r, s, out)
    return tuple(int(d) for d in out)


def _check_broadcast(cg, api: str, role: str, src: tuple[int, ...], dst: tuple[int, ...]) -> None:
    """The limits of materialising ``src -> dst`` (see legalize_math.broadcast)."""
    if tuple(src) == tuple(dst):
        return
    free = int(np.prod(src[1:], dtype=np.int64))  # (partition broadcasts: 512-wide chunks)
    if free > 1:
        copies = int(np.prod([d for s, d in zip(src[1:], dst[1:]) if s == 1 and d > 1],
                             dtype=np.int64))
        if copies > BCAST_COPIES_MAX:
            raise _err(cg, f"{api}: broadcasting '{role}' {list(src)} to {list(dst)} needs {copies} "
                           f"copies, more than {BCAST_COPIES_MAX}")


def _operand(cg, api: str, role: str, v: Any, bitvec: bool):
    """(SSA value, shape or None) of a tile-or-number operand."""
    if isinstance(v, Tensor):
        t = _tile(cg, api, role, v)
        if bitvec and not dtypes.is_int(t.dtype):
            raise _err(cg, f"{api}: '{role}' is {dtypes.name_of(t.dtype)}; bitwise functions need "
                           f"integer tiles")
        return t.value, t.shape
    if isinstance(v, _NUMBER):
        if bitvec:
            if not (isinstance(v, (int, np.integer, bool, np.bool_))):
                raise _err(cg, f"{api}: '{role}'={v!r} must be an integer for a bitwise function")
            return cg.b.const_scalar(int(v), dtypes.int32), None
        return cg.b.const_scalar(float(v)), None
    return A.tile_or_scalar(cg, api, role, v), None  # raises a located error


def _axes(cg, api: str, x: Tensor, axis, trailing: bool = True) -> list[int]:
    """Normalised free axes of ``x`` (negative axes count from the end; trailing only
    unless ``trailing`` is false)."""
    rank = x.ndim
    items = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    if not items or not all(is_int(a) for a in items):
        raise _err(cg, f"{api}: axis must be an int or a tuple of ints, got {axis!r}")
    axes = []
    for a in items:
        a = int(a)
        if not -rank <= a < rank:
            raise _err(cg, f"{api}: axis {a} is out of range for a rank-{rank} tile")
        axes.append(a % rank)
    axes = sorted(set(axes))
    if axes[0] == 0:
        raise _err(cg, f"{api}: axis={axis!r} includes the partition axis 0; reductions run over the "
                       f"trailing free axes (1..{rank - 1}) of an on-chip tile")
    if trailing and axes != list(range(axes[0], rank)):
        raise _err(cg, f"{api}: axis={axis!r} must be the trailing free axes of a rank-{rank} tile "
                       f"(e.g. [{rank - 1}] or {list(range(1, rank))})")
    return axes


def _whole_free(cg, api: str, x: Tensor, axes: list[int]) -> None:
    if axes[0] != 1:
        raise _err(cg, f"{api}: axis={axes} keeps free dims {list(x.shape[1:axes[0]])}; {api} supports "
                       f"only reductions over every free axis (1..{x.ndim - 1}) (reshape the tile so "
                       f"the reduced axes are its only free axes)")


# ----------------------------------------------------------------------- elementwise


def _unary(fn: str):
    api = f"nl.{fn}"

    def handler(cg, x, dtype=None, mask=None):
        t = _tile(cg, api, "x", x)
        if fn in _BITVEC and not dtypes.is_int(t.dtype):
            raise _err(cg, f"{api}: 'x' is {dtypes.name_of(t.dtype)}; bitwise functions need integer tiles")
        return _result(cg, S.UnaryOp, {"x": t.value}, {"fn": fn}, t.shape, _out_dtype(cg, api, dtype, t))
    return handler


for _fn in S.UNARY_FNS:
    handles(f"nl.{_fn}")(_unary(_fn))


def _binary(fn: str):
    api = f"nl.{fn}"
    bitvec = fn in _BITVEC

    def handler(cg, x, y, dtype=None, mask=None):
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            raise _err(cg, f"{api}: at least one of 'x', 'y' must be a tile, got {A._show(x)} and "
                           f"{A._show(y)}")
        xv, xs = _operand(cg, api, "x", x, bitvec)
        yv, ys = _operand(cg, api, "y", y, bitvec)
        shape = _broadcast_shape(cg, api, [(r, s) for r, s in (("x", xs), ("y", ys)) if s is not None])
        dt = _out_dtype(cg, api, dtype, x, y)
        if dtype is None:  # NKI type promotion ("whichever input has the highest precision")
            from .beta1.tile_ops import promote, result_dtype
            if cg.b.beta1:  # Beta 1: weak scalars widen too; comparisons give bool
                dt = dtypes.bool_ if fn in _COMPARE else result_dtype(x, y)
            elif isinstance(x, Tensor) and isinstance(y, Tensor):
                dt = promote(x.dtype, y.dtype)
        return _result(cg, S.BinaryOp, {"x": xv, "y": yv}, {"fn": fn}, shape, dt)
    return handler


for _fn in S.BINARY_FNS:
    handles(f"nl.{_fn}")(_binary(_fn))


@handles("nl.expand_dims")
def expand_dims(cg, x, axis):
    api = "nl.expand_dims"
    t = _tile(cg, api, "x", x)
    if not is_int(axis) or not -(t.ndim + 1) <= int(axis) <= t.ndim:
        raise _err(cg, f"{api}: axis must be an int in [{-(t.ndim + 1)}, {t.ndim}], got {axis!r}")
    a = int(axis) % (t.ndim + 1)
    if a == 0:
        raise _err(cg, f"{api}: axis 0 would insert a dim before the partition dim of an on-chip "
                       f"tile; insert free dims only (axis >= 1)")
    shape = t.shape[:a] + (1,) + t.shape[a:]
    return _result(cg, S.UnaryOp, {"x": t.value}, {"fn": "copy"}, shape, t.dtype)


@handles("nl.broadcast_to")
def broadcast_to(cg, x, shape, dtype=None):
    api = "nl.broadcast_to"
    t = _tile(cg, api, "x", x)
    shape = _shape(cg, api, shape)
    if len(shape) != t.ndim or any(s != d and s != 1 for s, d in zip(t.shape, shape)):
        raise _err(cg, f"{api}: cannot broadcast {list(t.shape)} to {list(shape)} (same rank; each "
                       f"dim must match or be 1)")
    _check_broadcast(cg, api, "x", t.shape, shape)
    return _result(cg, S.BroadcastToOp, {"x": t.value}, {}, shape, _out_dtype(cg, api, dtype, t))


def _transpose(cg, api: str, t: Tensor, dt, buffer: str) -> Tensor:
    if t.ndim != 2:
        raise _err(cg, f"{api}: '{t.name or 'x'}' has rank {t.ndim}; only 2-D tiles can be transposed")
    p, f = t.shape
    if p > PMAX or f > PMAX:
        raise _err(cg, f"{api}: the tile is [{p}, {f}], but the TensorE transpose handles at most "
                       f"[{PMAX}, {PMAX}]")
    return _result(cg, S.TransposeOp, {"x": t.value}, {}, (f, p), dt, buffer)


@handles("nl.transpose")
def transpose(cg, x, dtype=None, mask=None):
    api = "nl.transpose"
    t = _tile(cg, api, "x", x)
    return _transpose(cg, api, t, _out_dtype(cg, api, dtype, t), "psum")


@handles("nl.load_transpose2d")
def load_transpose2d(cg, src, dtype=None, mask=None):
    api = "nl.load_transpose2d"
    s = A.tensor(cg, api, "src", src)
    if s.buffer not in ("hbm", "private_hbm", "shared_hbm"):
        raise _err(cg, f"{api}: src must be an HBM tensor, got {s.describe()}")
    if s.ndim != 2:
        raise _err(cg, f"{api}: src has rank {s.ndim}; only 2-D tensors can be loaded transposed")
    if s.shape[0] > PMAX or s.shape[1] > PMAX:
        raise _err(cg, f"{api}: src is {list(s.shape)}, but the transpose handles at most "
                       f"[{PMAX}, {PMAX}]")
    op = A.emit(cg, nki.LoadOp, {"src": s.value}, {}, [memref(s.shape, s.dtype, "sbuf")])
    loaded = Tensor(op.results[0], s.shape, s.dtype, "sbuf", tuple(contiguous_strides(s.shape)), 0,
                    cg.b.block)
    return _transpose(cg, api, loaded, _out_dtype(cg, api, dtype, s), "sbuf")


# ------------------------------------------------------------------------ reductions


def _reduction(fn: str):
    api = f"nl.{fn}"

    def handler(cg, x, axis, dtype=None, keepdims=False, mask=None):
        from .beta1.tile_ops import reduced_axes_last
        t = _tile(cg, api, "x", x)
        axes = _axes(cg, api, t, axis, trailing=fn == "var" or not cg.b.beta1)
        if fn == "var":
            _whole_free(cg, api, t, axes)
        kept = tuple(s for d, s in enumerate(t.shape) if d not in axes)
        full = tuple(1 if d in axes else s for d, s in enumerate(t.shape))
        v, vaxes = reduced_axes_last(cg, t, axes)
        keep = keepdims or fn == "var"
        shape = kept + (1,) * len(axes) if keep else kept + (1,) * (len(kept) < 2)
        r = _result(cg, S.ReduceOp, {"x": v.value}, {"fn": fn, "axis": vaxes}, shape,
                    _out_dtype(cg, api, dtype, t))
        if keep and shape != full:  # size-1 dims move back in place: same element order
            r = cg.b.reinterpret(r, full, contiguous_strides(full), r.offset_index)
        return r
    return handler


for _fn in S.REDUCE_FNS:
    handles(f"nl.{_fn}")(_reduction(_fn))


@handles("nl.softmax")
def softmax(cg, x, axis=-1, dtype=None, compute_dtype=None, mask=None):
    api = "nl.softmax"
    t = _tile(cg, api, "x", x)
    axes = _axes(cg, api, t, axis)
    _whole_free(cg, api, t, axes)
    return _result(cg, S.SoftmaxOp, {"x": t.value}, {"axis": axes}, t.shape,
                   _out_dtype(cg, api, dtype, t))


@handles("nl.rms_norm")
def rms_norm(cg, x, w, axis, n, epsilon=1e-6, dtype=None, compute_dtype=None, mask=None):
    api = "nl.rms_norm"
    t, wt = _tile(cg, api, "x", x), _tile(cg, api, "w", w)
    axes = _axes(cg, api, t, axis)
    _whole_free(cg, api, t, axes)
    if not is_int(n) or int(n) <= 0:
        raise _err(cg, f"{api}: n must be a positive compile-time int, got {n!r}")
    if not isinstance(epsilon, (int, float, np.integer, np.floating)):
        raise _err(cg, f"{api}: epsilon must be a number, got {A._show(epsilon)}")
    shape = _broadcast_shape(cg, api, [("x", t.shape), ("w", wt.shape)])
    if shape != t.shape:
        raise _err(cg, f"{api}: 'w' {list(wt.shape)} must broadcast to the shape of 'x' {list(t.shape)}")
    return _result(cg, S.RmsNormOp, {"x": t.value, "w": wt.value},
                   {"axis": axes, "n": int(n), "epsilon": float(epsilon)}, t.shape,
                   _out_dtype(cg, api, dtype, t))


@handles("nl.where")
def where(cg, condition, x, y, dtype=None, mask=None):
    api = "nl.where"
    c = _tile(cg, api, "condition", condition)
    xv, xs = _operand(cg, api, "x", x, False)
    yv, ys = _operand(cg, api, "y", y, False)
    shapes = [("condition", c.shape)] + [(r, s) for r, s in (("x", xs), ("y", ys)) if s is not None]
    shape = _broadcast_shape(cg, api, shapes)
    dt = _out_dtype(cg, api, dtype, x, y)
    return _result(cg, S.WhereOp, {"cond": c.value, "x": xv, "y": yv}, {}, shape, dt)
