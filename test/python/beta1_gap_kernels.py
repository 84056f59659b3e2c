"""Our own small NKI Beta 1 kernels for test_beta1_gaps.py: constructs real public kernels
use that nki-mlir used to reject (unsigned integer scalars, free-dim broadcast of a [P, 1]
tensor_tensor operand, nl.loop_reduce inside a helper function and with a mask)."""
import numpy as np
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki1  # noqa: E402
import neuronxcc.nki.isa as nisa1  # noqa: E402
import neuronxcc.nki.language as nl1  # noqa: E402


@nki1.jit
def where_unsigned_scalar(c, a):
    """``nl.where(mask, x, 3000000000, dtype=nl.uint32)``: an unsigned scalar above 2**31."""
    out = nl1.ndarray(a.shape, dtype=nl1.uint32, buffer=nl1.shared_hbm)
    m = nl1.greater(nl1.load(c), 0.0)
    r = nl1.where(m, nl1.load(a), 3000000000, dtype=nl1.uint32)
    nl1.store(out, r)
    return out


@nki1.jit
def zeros_uint8_plus(a):
    """``nl.zeros(..., dtype=nl.uint8)`` plus a uint8 tile of values up to 255."""
    out = nl1.ndarray(a.shape, dtype=nl1.uint8, buffer=nl1.shared_hbm)
    z = nl1.zeros(a.shape, dtype=nl1.uint8)
    nl1.store(out, nl1.add(z, nl1.load(a), dtype=nl1.uint8))
    return out


@nki1.jit
def tensor_tensor_column(a, s):
    """``nisa.tensor_tensor(x[P, F], s[P, 1], op)`` and ``(s[P, 1], x[P, F], op)``: the
    per-partition column broadcasts along the free dim (subtract: order matters)."""
    out1 = nl1.ndarray(a.shape, dtype=nl1.float32, buffer=nl1.shared_hbm)
    out2 = nl1.ndarray(a.shape, dtype=nl1.float32, buffer=nl1.shared_hbm)
    x = nl1.load(a)
    col = nl1.load(s)
    nl1.store(out1, nisa1.tensor_tensor(x, col, nl1.subtract))
    nl1.store(out2, nisa1.tensor_tensor(col, x, op=nl1.subtract))
    return out1, out2


@nki1.jit
def tensor_tensor_column_3d(a, s):
    """A [P, 1] column against a [P, 4, 16] tile, from a block-dim tensor ``cols[j]``."""
    out = nl1.ndarray(a.shape, dtype=nl1.float32, buffer=nl1.shared_hbm)
    cols = nl1.ndarray((2, nl1.par_dim(128), 1), dtype=nl1.float32, buffer=nl1.sbuf)
    for j in nl1.affine_range(2):
        cols[j] = nl1.load(s[:, j:j + 1])
    x = nl1.load(a)
    nl1.store(out, nisa1.tensor_tensor(x, cols[1], nl1.multiply))
    return out
