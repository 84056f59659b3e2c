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
