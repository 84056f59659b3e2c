"""Frontend handlers for ``nki.language`` functions.

Allocation (``nl.ndarray``, ``nl.zeros``), loops and slices (``nl.affine_range``,
``nl.sequential_range``, ``nl.static_range``, ``nl.ds``) and the NKI 0.3 value-returning
wrappers ``nl.load``, ``nl.store``, ``nl.add``, ``nl.multiply``, ``nl.exp``,
``nl.matmul`` (sugar ops lowered by ``nki-legalize``).  Semantics: NKI migration guide (nki/migration) (NKI ``nki.language`` API page).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..dialects import nki
from ..dialects.common import contiguous_strides, memref
from ..errors import NKITypeError
from . import args as A
from .beta1.block_dims import split_shape
from .beta1.index import ParDim
from .buffers import MemoryRegion
from .builtins import handles
from .values import DynSlice, Index, LoopRange, Tensor, is_int


def _buffer(cg, api: str, buffer: Any, default: str = "sbuf") -> str:
    if buffer is None:
        return default
    if isinstance(buffer, MemoryRegion):
        return buffer.name
    space = getattr(buffer, "nki_buffer_name", None)  # Beta 1 ncc.sbuf / ncc.psum (beta1/compiler.py)
    if isinstance(space, str):
        if getattr(buffer, "is_direct", False) and api != "nl.ndarray":
            raise cg.b.error(f"{api}: buffer={buffer!r} is a direct allocation; a tensor with an "
                             f"initial value cannot be directly allocated (create it with "
                             f"nl.ndarray and write it)", NKITypeError,
                             code="err_tensor_creation_on_scratchpad_with_init_value_not_supported")
        return space
    raise cg.b.error(f"{api}: buffer must be nl.sbuf, nl.psum, nl.hbm or nl.shared_hbm, got "
                     f"{buffer!r} (string buffer names are not accepted since NKI 0.3)", NKITypeError)


def _shape(cg, api: str, shape: Any) -> tuple[int, ...]:
    if is_int(shape):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)) or not all(is_int(d) for d in shape):
        raise cg.b.error(f"{api}: shape must be a tuple of compile-time ints, got {shape!r}", NKITypeError)
    if any(int(d) <= 0 for d in shape):
        raise cg.b.error(f"{api}: every dimension must be positive, got {tuple(shape)}", NKITypeError)
    if any(isinstance(d, ParDim) for d in list(shape)[1:]):
        raise cg.b.error(f"{api}: nl.par_dim must mark the first dim: dims before the partition dim "
                         f"(Beta 1 block dims) are not supported; allocate one tile per block",
                         NKITypeError, code="err_leading_dimension_of_tensor_must_be_partition")
    return tuple(int(d) for d in shape)


def _dtype(cg, api: str, dtype: Any):
    try:
        return dtypes.as_dtype(dtype)
    except NKITypeError:
        raise cg.b.error(f"{api}: {dtype!r} is not an NKI dtype", NKITypeError) from None


def new_tensor(cg, op_cls, shape, dtype, buffer: str, name: str = "", props=None) -> Tensor:
    rtype = memref(shape, dtype, buffer)
    op = A.emit(cg, op_cls, {}, {**(props or {}), "name": name or None}, [rtype])
    return Tensor(op.results[0], tuple(shape), dtype, buffer, tuple(contiguous_strides(shape)), 0,
                  cg.b.block, name)


def _alloc_shape(cg, api: str, raw_shape: Any, buf: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(blocks, shape)``: Beta 1 block dims (the dims left of ``nl.par_dim``, see
    beta1/block_dims.py) and the shape of one tile, or ``((), shape)``."""
    blocks, tile = split_shape(cg, api, raw_shape, buf)
    if not blocks:
        return (), _shape(cg, api, tile if tile else raw_shape)
    return blocks, _shape(cg, api, blocks + tile)[len(blocks):]


@handles("nl.ndarray")
def ndarray(cg, shape, dtype, buffer=None, name="", address=None):
    api = "nl.ndarray"
    raw_shape = shape
    dt, buf = _dtype(cg, api, dtype), _buffer(cg, api, buffer)
    blocks, shape = _alloc_shape(cg, api, raw_shape, buf)
    addr = None
    slots, slot_bytes = blocks, None
    if hasattr(buffer, "nki_address"):  # Beta 1 ncc.sbuf.mod_alloc(...) etc. (beta1/compiler.py)
        pinned = buffer.nki_address(cg, api, raw_shape, blocks + shape, dt)
        if blocks and pinned is not None:
            slots, slot_bytes = buffer.nki_block_slots(cg, api, blocks, shape, dt)
        if pinned is not None and address is not None:
            raise cg.b.error(f"{api}: give either address= or a direct-allocation buffer "
                             f"({buffer!r}), not both", NKITypeError)
        address = pinned if pinned is not None else address
    if address is not None:
        if buf not in ("sbuf", "psum"):
            raise cg.b.error(f"{api}: address= applies only to SBUF/PSUM tensors", NKITypeError)
        if not (isinstance(address, (tuple, list)) and len(address) == 2 and all(is_int(a) for a in address)):
            raise cg.b.error(f"{api}: address must be (partition, byte_offset), got {address!r}", NKITypeError)
        addr = [int(a) for a in address]
    if blocks:
        from .beta1.block_dims import new_block_tensor
        return new_block_tensor(cg, api, lambda s: new_tensor(cg, nki.NdarrayOp, s, dt, buf, name,
                                                              {"address": addr}),
                                blocks, slots, shape, dt, buf, slot_bytes)
    return new_tensor(cg, nki.NdarrayOp, shape, dt, buf, name, {"address": addr})


def lazy_initialization_hint(cg, api: str, v) -> None:
    """Check Beta 1's ``lazy_initialization=`` keyword of ``nl.zeros`` / ``nl.full`` /
    ``nl.ones`` / ``nl.zeros_like`` (``neuronxcc.nki.language``; NKI samples use it on
    accumulators): a hint that lets the compiler defer or fold the initialization (True) or
    asks for it where the tensor is created (False).  The contents are the fill value
    either way, so both compile the same; Beta 2 has no such keyword."""
    if v is None:
        return
    if not cg.b.beta1:
        raise cg.b.error(f"{api}(): got an unexpected keyword argument 'lazy_initialization' (a "
                         f"Beta 1 keyword, neuronxcc.nki.language only)", NKITypeError)
    if not isinstance(v, bool):
        raise cg.b.error(f"{api}: lazy_initialization must be True or False, got {v!r}",
                         NKITypeError)


@handles("nl.zeros")
def zeros(cg, shape, dtype, buffer=None, name="", lazy_initialization=None):
    api = "nl.zeros"
    lazy_initialization_hint(cg, api, lazy_initialization)
    dt, buf = _dtype(cg, api, dtype), _buffer(cg, api, buffer)
    blocks, shape = _alloc_shape(cg, api, shape, buf)
    if blocks:
        from .beta1.block_dims import new_block_tensor
        return new_block_tensor(cg, api, lambda s: new_tensor(cg, nki.ZerosOp, s, dt, buf, name),
                                blocks, blocks, shape, dt, buf)
    return new_tensor(cg, nki.ZerosOp, shape, dt, buf, name)


@handles("nl.ds")
def ds(cg, start, size):
    if not is_int(size) or int(size) <= 0:
        raise cg.b.error(f"nl.ds: size must be a positive compile-time int, got {size!r}", NKITypeError)
    if not (is_int(start) or isinstance(start, Index)):
        raise cg.b.error(f"nl.ds: start must be an int or a loop-index expression, got {start!r}", NKITypeError)
    return DynSlice(start, int(size))


def _range_args(cg, api: str, start, stop, step) -> tuple[int, int, int]:
    if stop is None:
        start, stop = 0, start
    for v in (start, stop, step):
        if not is_int(v):
            raise cg.b.error(f"{api}: bounds must be compile-time ints, got {v!r}", NKITypeError)
    if int(step) <= 0:
        raise cg.b.error(f"{api}: step must be positive, got {step}", NKITypeError)
    return int(start), int(stop), int(step)


@handles("nl.affine_range")
def affine_range(cg, start, stop=None, step=1):
    return LoopRange("affine", *_range_args(cg, "nl.affine_range", start, stop, step))


@handles("nl.sequential_range")
def sequential_range(cg, start, stop=None, step=1):
    return LoopRange("sequential", *_range_args(cg, "nl.sequential_range", start, stop, step))


@handles("nl.static_range")
def static_range(cg, start, stop=None, step=1):
    from .loops import StaticRange
    return StaticRange(range(*_range_args(cg, "nl.static_range", start, stop, step)))


# ----------------------------------------------------------------- value-returning sugar


@handles("nl.load")
def load(cg, src, dtype=None, mask=None):
    api = "nl.load"
    if isinstance(src, Tensor) and src.indirect is not None:  # Beta 1 data[idx_tile[...], i_f]
        from .builtins import HANDLERS
        dt = src.dtype if dtype is None else _dtype(cg, api, dtype)
        t = new_tensor(cg, nki.NdarrayOp, src.shape, dt, "sbuf")
        HANDLERS["nisa.dma_copy"](cg, t, src)
        return t
    s = A.tensor(cg, api, "src", src)
    if s.buffer not in ("hbm", "private_hbm", "shared_hbm"):
        raise cg.b.error(f"{api}: src must be an HBM tensor, got {s.describe()}", NKITypeError)
    shape = s.shape if s.ndim >= 2 else (1,) + s.shape
    dt = s.dtype if dtype is None else _dtype(cg, api, dtype)
    op = A.emit(cg, nki.LoadOp, {"src": s.value}, {}, [memref(shape, dt, "sbuf")])
    return Tensor(op.results[0], shape, dt, "sbuf", tuple(contiguous_strides(shape)), 0, cg.b.block)


@handles("nl.store")
def store(cg, dst, value, mask=None):
    api = "nl.store"
    if isinstance(dst, Tensor) and dst.indirect is not None:  # Beta 1 scatter out[idx_tile[...], i_f]
        from .builtins import HANDLERS
        return HANDLERS["nisa.dma_copy"](cg, dst, value)
    d, v = A.tensor(cg, api, "dst", dst), A.tensor(cg, api, "value", value)
    if v.shape != d.shape and v.on_chip and v.ndim == d.ndim:  # broadcast the value (NumPy rules)
        from .assign import broadcast_value
        v = broadcast_value(cg, d, v)
    A.emit(cg, nki.StoreOp, {"dst": d.value, "value": v.value})


def _elementwise(cg, api: str, cls, x, y=None, dtype=None, binary=True):
    t = A.tensor(cg, api, "x", x)
    ops = {"x": t.value}
    if binary:
        ops["y"] = A.tile_or_scalar(cg, api, "y", y)
    dt = t.dtype if dtype is None else _dtype(cg, api, dtype)
    op = A.emit(cg, cls, ops, {}, [memref(t.shape, dt, "sbuf")])
    return Tensor(op.results[0], t.shape, dt, "sbuf", tuple(contiguous_strides(t.shape)), 0, cg.b.block)


@handles("nl.add")
def add(cg, x, y, dtype=None, mask=None):
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        x, y = y, x
    return _elementwise(cg, "nl.add", nki.AddOp, x, y, dtype)


@handles("nl.multiply")
def multiply(cg, x, y, dtype=None, mask=None):
    if not isinstance(x, Tensor) and isinstance(y, Tensor):
        x, y = y, x
    return _elementwise(cg, "nl.multiply", nki.MultiplyOp, x, y, dtype)


@handles("nl.exp")
def exp(cg, x, dtype=None, mask=None):
    return _elementwise(cg, "nl.exp", nki.ExpOp, x, None, dtype, binary=False)


def _sbuf_operand(cg, t: Tensor) -> Tensor:
    """``t`` itself, or for a PSUM tile an SBUF copy of it (same shape and dtype)."""
    if t.buffer != "psum":
        return t
    from .builtins import HANDLERS
    out = new_tensor(cg, nki.NdarrayOp, t.shape, t.dtype, "sbuf")
    HANDLERS["nisa.tensor_copy"](cg, out, t)
    return out


@handles("nl.matmul")
def matmul(cg, x, y, transpose_x=False, mask=None):
    """``nl.matmul(x, y, transpose_x)`` -> a float32 PSUM tile (nki/api/nki.language.rst,
    ``matmul``).  TensorE reads its operands from SBUF only, so an operand that lives in
    PSUM (e.g. the result of ``nl.transpose``) is first copied to a new SBUF tile of its
    shape and dtype (one ``tensor_copy``, exact), as the compiler does for this
    high-level call.  Bad operands raise located ``NKITypeError`` / verifier errors."""
    api = "nl.matmul"
    a, b = A.tensor(cg, api, "x", x), A.tensor(cg, api, "y", y)
    a, b = _sbuf_operand(cg, a), _sbuf_operand(cg, b)
    m = a.shape[-1] if transpose_x else a.shape[0]
    shape = (m, int(np.prod(b.shape[1:])))
    op = A.emit(cg, nki.MatmulOp, {"x": a.value, "y": b.value},
                {"transpose_x": bool(transpose_x) or None}, [memref(shape, dtypes.float32, "psum")])
    return Tensor(op.results[0], shape, dtypes.float32, "psum", tuple(contiguous_strides(shape)), 0, cg.b.block)
