"""Our kernels for the warm-call guard tests (test_warm_call.py): they read a module-level
constant, a helper function, a mutable table and a closure variable."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

SCALE = 2.0
TABLE = [3.0]          # a mutable value the kernel reads: no guard, a full key every call


def _scale_into(dst, src):
    nisa.tensor_scalar(dst=dst, data=src, op0=nl.multiply, operand0=SCALE)


def _shift_into(dst, src):
    nisa.tensor_scalar(dst=dst, data=src, op0=nl.add, operand0=SCALE)


HELPER = _scale_into


def _tile_kernel(x, body):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    body(y, t)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def scaled(x):
    """out = x * SCALE (a module constant, read through HELPER)."""
    return _tile_kernel(x, HELPER)


@nki.jit
def tabled(x):
    """out = x * TABLE[0] (a list: mutable)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=TABLE[0])
    nisa.dma_copy(dst=out, src=t)
    return out


def make_offset_kernel(offset):
    """A kernel adding the closure variable ``offset`` (rebindable through the returned
    setter)."""
    def set_offset(v):
        nonlocal offset
        offset = v

    @nki.jit
    def offset_kernel(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=offset)
        nisa.dma_copy(dst=out, src=t)
        return out
    return offset_kernel, set_offset


def ones(shape=(128, 64)):
    return np.ones(shape, np.float32)


@nki.jit
def axpy(x, y, alpha=1.0):
    """out = alpha * x + y (``alpha`` a compile-time constant)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    tx = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    ty = nl.ndarray(y.shape, dtype=y.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tx, src=x)
    nisa.dma_copy(dst=ty, src=y)
    nisa.tensor_scalar(dst=tx, data=tx, op0=nl.multiply, operand0=alpha)
    nisa.tensor_tensor(dst=ty, data1=tx, data2=ty, op=nl.add)
    nisa.dma_copy(dst=out, src=ty)
    return out


@nki.jit
def double_in_place(x):
    """x *= 2 in place; returns nothing."""
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=x, src=t)


@nki.jit
def two_outputs(x):
    """(x + 1, x * 3)."""
    a = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    b = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=a, src=u)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=3.0)
    nisa.dma_copy(dst=b, src=u)
    return a, b
