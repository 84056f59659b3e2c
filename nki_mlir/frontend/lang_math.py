"""Frontend handlers for the NKI 0.3+ ``nki.language`` convenience functions.

Math (``nl.add``, ``nl.exp``, ``nl.sum``, ``nl.softmax``, ...), shape (``nl.transpose``,
``nl.broadcast_to``, ``nl.expand_dims``, ``nl.load_transpose2d``, ``nl.copy``), creation
(``nl.full``, ``nl.ones``, ``nl.zeros_like``, ``nl.empty_like``, ``nl.rand``,
``nl.shared_constant``, ``nl.shared_identity_matrix``), random (``nl.random_seed``,
``nl.dropout``), ``nl.where``, ``nl.gather_flattened`` and ``nl.device_print``.

Each call checks its arguments (errors name the function, the operand and the limit, at
the call's source line) and emits one generic sugar op of ``dialects/nki_sugar.py``
returning a new SBUF tile (``nl.transpose``: PSUM); ``nki-legalize``
(``passes/legalize_math.py``) turns it into ISA-level ``nki`` instructions.  Result
dtype: ``dtype=`` when given, else the input's dtype (NKI 0.3+ semantics); comparisons
and logical functions give 1 / 0 in that dtype.  Semantics: NKI migration guide (nki/migration).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from .. import dtypes
from ..dialects import nki, nki_sugar as S
from ..dialects.common import contiguous_strides, memref
from ..dialects.lang_ops import DevicePrintOp, SharedConstantOp, dense_bits
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .lang_calls import _alloc_shape, _buffer, _dtype, _shape, lazy_initialization_hint, new_tensor
from .values import Tensor, is_int

PMAX = 128
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
            from .tile_ops import promote, result_dtype
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
        from .tile_ops import reduced_axes_last
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


# -------------------------------------------------------------------------- creation


def _on_chip_buffer(cg, api: str, buffer) -> str:
    buf = _buffer(cg, api, buffer)
    if buf not in ("sbuf", "psum"):
        raise _err(cg, f"{api}: buffer={buffer!r}: HBM tensors cannot have an initial value "
                       f"(err_hbm_tensor_with_init_value_not_supported); use nl.sbuf or nl.psum")
    return buf


def _full(cg, api: str, shape, fill_value, dtype, buffer, name) -> Tensor:
    dt = _dtype(cg, api, dtype)
    buf = _on_chip_buffer(cg, api, buffer)
    blocks, shape = _alloc_shape(cg, api, shape, buf)
    if not isinstance(fill_value, _NUMBER):
        raise _err(cg, f"{api}: fill_value must be a compile-time number, got {A._show(fill_value)}")
    if dtypes.is_int(dt) and dt != dtypes.bool_:
        if float(fill_value) != int(fill_value):
            raise _err(cg, f"{api}: fill_value {fill_value!r} is not an integer but dtype is "
                           f"{dtypes.name_of(dt)}")
        value = cg.b.const_scalar(int(fill_value), dt)
    else:
        value = cg.b.const_scalar(float(fill_value))
    if blocks:    # Beta 1 block dims (block_dims.py): one tensor, blocks in the free dims
        from .block_dims import new_block_tensor
        return new_block_tensor(cg, api, lambda sh: _result(cg, S.FullOp, {"value": value},
                                                            {"name": name or None}, sh, dt, buf),
                                blocks, blocks, shape, dt, buf)
    return _result(cg, S.FullOp, {"value": value}, {"name": name or None}, shape, dt, buf)


@handles("nl.full")
def full(cg, shape, fill_value, dtype, buffer=None, name="", lazy_initialization=None):
    lazy_initialization_hint(cg, "nl.full", lazy_initialization)
    return _full(cg, "nl.full", shape, fill_value, dtype, buffer, name)


@handles("nl.ones")
def ones(cg, shape, dtype, buffer=None, name="", lazy_initialization=None):
    lazy_initialization_hint(cg, "nl.ones", lazy_initialization)
    return _full(cg, "nl.ones", shape, 1, dtype, buffer, name)


@handles("nl.zeros_like")
def zeros_like(cg, x, dtype=None, buffer=None, name="", lazy_initialization=None):
    api = "nl.zeros_like"
    lazy_initialization_hint(cg, api, lazy_initialization)
    t = A.tensor(cg, api, "x", x)
    dt = _out_dtype(cg, api, dtype, t)
    return new_tensor(cg, nki.ZerosOp, t.shape, dt, _on_chip_buffer(cg, api, buffer), name)


@handles("nl.empty_like")
def empty_like(cg, x, dtype=None, buffer=None, name=""):
    api = "nl.empty_like"
    t = A.tensor(cg, api, "x", x)
    return new_tensor(cg, nki.NdarrayOp, t.shape, _out_dtype(cg, api, dtype, t),
                      _buffer(cg, api, buffer), name)


@handles("nl.rand")
def rand(cg, shape, dtype, buffer=None, name=""):
    api = "nl.rand"
    shape, dt = _shape(cg, api, shape), _dtype(cg, api, dtype)
    if not dtypes.is_float(dt):
        raise _err(cg, f"{api}: dtype must be a float type (uniform [0, 1)), got {dtypes.name_of(dt)}")
    buf = _on_chip_buffer(cg, api, buffer)
    return _result(cg, S.RandOp, {}, {"name": name or None}, shape, dt, buf)


@handles("nl.random_seed")
def random_seed(cg, seed):
    api = "nl.random_seed"
    t = _tile(cg, api, "seed", seed)
    if t.size != 1:
        raise _err(cg, f"{api}: seed must be a [1, 1] tile, got {list(t.shape)}")
    if np.dtype(t.dtype).itemsize != 4:
        raise _err(cg, f"{api}: seed must hold a 32-bit value (int32/uint32/float32), got "
                       f"{dtypes.name_of(t.dtype)}")
    A.emit(cg, S.RandomSeedOp, {"seed": t.value})


@handles("nl.dropout")
def dropout(cg, x, rate, dtype=None, mask=None):
    api = "nl.dropout"
    t = _tile(cg, api, "x", x)
    if isinstance(rate, Tensor):
        r = _tile(cg, api, "rate", rate)
        if r.shape[0] != t.shape[0] or r.size != r.shape[0]:
            raise _err(cg, f"{api}: 'rate' must be a number or a [{t.shape[0]}, 1] tile, got "
                           f"{list(r.shape)}")
        rv = r.value
    elif isinstance(rate, _NUMBER):
        if not 0.0 <= float(rate) <= 1.0:
            raise _err(cg, f"{api}: rate={rate!r} must be in [0, 1]")
        rv = cg.b.const_scalar(float(rate))
    else:
        raise _err(cg, f"{api}: 'rate' must be a number or a tile, got {A._show(rate)}")
    return _result(cg, S.DropoutOp, {"x": t.value, "rate": rv}, {}, t.shape,
                   _out_dtype(cg, api, dtype, t))


@handles("nl.gather_flattened")
def gather_flattened(cg, data, indices, axis=0, dtype=None, mask=None):
    api = "nl.gather_flattened"
    d, i = _tile(cg, api, "data", data), _tile(cg, api, "indices", indices)
    if axis != 0:
        raise _err(cg, f"{api}: only axis=0 (a gather inside each partition over the flattened "
                       f"free dims) is supported, got axis={axis!r}")
    if d.shape[0] != i.shape[0]:
        raise _err(cg, f"{api}: partition counts differ: 'data' has {d.shape[0]}, 'indices' has "
                       f"{i.shape[0]}")
    if i.dtype != dtypes.uint32:
        raise _err(cg, f"{api}: 'indices' must be uint32, got {dtypes.name_of(i.dtype)}")
    return _result(cg, S.GatherFlattenedOp, {"data": d.value, "indices": i.value}, {}, i.shape,
                   _out_dtype(cg, api, dtype, d))


@handles("nl.shared_identity_matrix")
def shared_identity_matrix(cg, n, dtype=None, dst=None):
    api = "nl.shared_identity_matrix"
    if not is_int(n) or not 1 <= int(n) <= PMAX:
        raise _err(cg, f"{api}: n must be a compile-time int in [1, {PMAX}], got {n!r}")
    dt = dtypes.uint8 if dtype is None else _dtype(cg, api, dtype)
    t = _result(cg, S.SharedIdentityOp, {}, {}, (int(n), int(n)), dt)
    if dst is None:
        return t
    d = _tile(cg, api, "dst", dst)
    if d.shape[0] != int(n) or d.size != int(n) * int(n):
        raise _err(cg, f"{api}: 'dst' must be [{n}, {n}], got {list(d.shape)}")
    A.emit(cg, nki.TensorCopyOp, {"dst": d.value, "src": t.value})
    return d


def _constant_array(cg, api: str, constant) -> np.ndarray:
    if isinstance(constant, (str, os.PathLike)):
        path = os.fspath(constant)
        if not os.path.isabs(path) and not os.path.exists(path):
            here = os.path.dirname(os.path.abspath(cg.src.file))
            path = os.path.join(here, path)
        try:
            return np.load(path, allow_pickle=False)
        except Exception as exc:  # noqa: BLE001 -- report any load failure at the call
            raise _err(cg, f"{api}: cannot load {os.fspath(constant)!r} as a .npy array: {exc}") from None
    if isinstance(constant, np.ndarray):
        return constant
    raise _err(cg, f"{api}: constant must be a NumPy array or a .npy path, got {A._show(constant)}")


@handles("nl.shared_constant")
def shared_constant(cg, constant, dtype=None):
    api = "nl.shared_constant"
    arr = np.asarray(_constant_array(cg, api, constant))
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if dtype is not None:
        dt = _dtype(cg, api, dtype)
    elif arr.dtype == np.float64:
        dt = dtypes.float32
    elif arr.dtype == np.int64:
        if arr.size and (arr.min() < -2**31 or arr.max() >= 2**31):
            raise _err(cg, f"{api}: int64 values do not fit int32 (NKI has no 64-bit types)")
        dt = dtypes.int32
    elif arr.dtype == np.uint64:
        dt = dtypes.uint32
    else:
        try:
            dt = dtypes.as_dtype(arr.dtype)
        except NKITypeError:
            raise _err(cg, f"{api}: array dtype {arr.dtype} is not an NKI dtype") from None
    data = arr.astype(dt)
    shape = tuple(int(s) for s in data.shape)
    op = A.emit(cg, SharedConstantOp, {}, {"value": dense_bits(data)},
                [memref(shape, dt, "shared_hbm")])
    return Tensor(op.results[0], shape, dt, "shared_hbm", tuple(contiguous_strides(shape)), 0,
                  cg.b.block, "shared_constant")


@handles("nl.device_print")
def device_print(cg, print_prefix=None, tensor=None, x=None, prefix=None):
    """``nl.device_print(print_prefix, tensor)`` (``prefix`` / ``x``: older spellings)."""
    api = "nl.device_print"
    prefix = print_prefix if print_prefix is not None else prefix
    t = A.tensor(cg, api, "tensor", tensor if tensor is not None else x)
    if not isinstance(prefix, str):
        raise _err(cg, f"{api}: prefix must be a string, got {A._show(prefix)}")
    A.emit(cg, DevicePrintOp, {"tensor": t.value}, {"prefix": prefix})


__all__ = ["BCAST_PART_FMAX", "BCAST_COPIES_MAX"]
