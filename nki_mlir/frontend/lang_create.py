"""Frontend handlers for the NKI 0.3+ ``nki.language`` creation and utility functions.

Creation (``nl.full``, ``nl.ones``, ``nl.zeros_like``, ``nl.empty_like``, ``nl.rand``,
``nl.shared_constant``, ``nl.shared_identity_matrix``), random (``nl.random_seed``,
``nl.dropout``), ``nl.gather_flattened`` and ``nl.device_print``.  Argument checks and
result conventions are those of :mod:`.lang_math`.  Semantics: NKI migration guide
(nki/migration).
"""
from __future__ import annotations

import os

import numpy as np

from .. import dtypes
from ..dialects import nki, nki_sugar as S
from ..dialects.common import contiguous_strides, memref
from ..dialects.ods_ops import op_class
from ..dialects.lang_ops import DevicePrintOp, SharedConstantOp, dense_bits
from ..errors import NKITypeError
from . import args as A
from .builtins import handles
from .lang_calls import _alloc_shape, _buffer, _dtype, _shape, lazy_initialization_hint, new_tensor
from .lang_math import BCAST_COPIES_MAX, BCAST_PART_FMAX, PMAX, _NUMBER, _err, _out_dtype, _result, _tile
from .values import Tensor, is_int


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
    if blocks:    # Beta 1 block dims (beta1/block_dims.py): one tensor, blocks in the free dims
        from .beta1.block_dims import new_block_tensor
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
    A.emit(cg, op_class("nki.tensor_copy"), {"dst": d.value, "src": t.value})
    return d


def _constant_array(cg, api: str, constant) -> np.ndarray:
    if isinstance(constant, (str, os.PathLike)):
        path = os.fspath(constant)
        if not os.path.isabs(path) and not os.path.exists(path):
            here = os.path.dirname(os.path.abspath(cg.src.file))
            path = os.path.join(here, path)
        try:
            return np.load(path, allow_pickle=False)
        except (OSError, ValueError, EOFError) as exc:  # a missing, unreadable or non-.npy file
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
