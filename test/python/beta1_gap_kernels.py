"""Our own small NKI Beta 1 kernels for test_beta1_gaps.py: constructs real public kernels
use that nki-mlir used to reject (unsigned integer scalars, free-dim broadcast of a [P, 1]
tensor_tensor operand, nl.loop_reduce inside a helper function and with a mask)."""
import numpy as np
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki1  # noqa: E402
import neuronxcc.nki.isa as nisa1  # noqa: E402
import neuronxcc.nki.language as nl1  # noqa: E402
import nki  # noqa: E402
import nki.isa as nisa  # noqa: E402
import nki.language as nl  # noqa: E402


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


def _accumulate_block(acc, x, i, k):
    """A helper of the kernels below: ``acc[i] += x`` where ``k <= i`` (loop_reduce into a
    subscript, masked by loop indices)."""
    acc[i, :, :] = nl1.loop_reduce(x, op=np.add, loop_indices=[k], dtype=nl1.float32, mask=(i >= k))


@nki1.jit
def prefix_sums_in_helper(a):
    """a [4, 128, 64] -> out[i] = sum of a[k] for k <= i: ``nl.loop_reduce(..., mask=)`` into a
    block of ``acc`` inside a helper function."""
    out = nl1.ndarray(a.shape, dtype=nl1.float32, buffer=nl1.shared_hbm)
    acc = nl1.ndarray((4, nl1.par_dim(128), 64), dtype=nl1.float32, buffer=nl1.sbuf)
    for i in nl1.affine_range(4):
        acc[i, :, :] = nl1.load(a[0], dtype=nl1.float32)
        for k in nl1.affine_range(3):
            _accumulate_block(acc, nl1.load(a[k + 1]), i, k + 1)
    for i in nl1.affine_range(4):
        nl1.store(out[i], acc[i])
    return out


def _running_max(acc, x, k):
    """A helper rebinding its own name: ``acc = nl.loop_reduce(x, op=np.maximum, ...)``."""
    acc = nl1.loop_reduce(x, op=np.maximum, loop_indices=[k])
    return acc


@nki1.jit
def max_in_helper_masked_rows(a):
    """a [4, 128, 64] -> out: the max over k on rows < 100 (``mask=(i_p < 100)``, the running
    accumulator updated in place), a[0]'s rows elsewhere; plus the max over k of every row,
    accumulated in a helper."""
    out = nl1.ndarray(a.shape[1:], dtype=nl1.float32, buffer=nl1.shared_hbm)
    full = nl1.ndarray(a.shape[1:], dtype=nl1.float32, buffer=nl1.shared_hbm)
    i_p = nl1.arange(128)[:, None]
    i_f = nl1.arange(64)[None, :]
    acc = nl1.load(a[0])
    acc2 = nl1.load(a[0])
    for k in nl1.affine_range(3):
        x = nl1.load(a[k + 1])
        acc = nl1.loop_reduce(x[i_p, i_f], op=np.maximum, loop_indices=[k], mask=(i_p < 100))
        acc2 = _running_max(acc2, x, k)
    nl1.store(out, acc)
    nl1.store(full, acc2)
    return out, full


@nki1.jit
def tensor_tensor_two_columns(a, s):
    """A [P, 2] operand is no per-partition scalar: still an element-count mismatch."""
    out = nl1.ndarray(a.shape, dtype=nl1.float32, buffer=nl1.shared_hbm)
    nl1.store(out, nisa1.tensor_tensor(nl1.load(a), nl1.load(s), nl1.add))  # TWO_COLUMNS
    return out


@nki.jit
def tensor_tensor_column_beta2(a, s):
    """Beta 2 nisa.tensor_tensor keeps its documented rule (same element count per partition)."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    col = nl.ndarray(s.shape, dtype=s.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=x, src=a)
    nisa.dma_copy(dst=col, src=s)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=r, data1=x, data2=col, op=nl.add)  # BETA2_COLUMN
    nisa.dma_copy(dst=out, src=r)
    return out
