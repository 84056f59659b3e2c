"""Our own small kernels for test_corpus_gaps.py: one per construct real public kernels use
that nki-mlir used to reject (legacy spellings, non-trailing reductions, wide partition
broadcasts, PSUM matmul operands, masks with a loop index)."""
import numpy as np
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki1  # noqa: E402
import neuronxcc.nki.isa as nisa1  # noqa: E402
import neuronxcc.nki.language as nl1  # noqa: E402
import nki  # noqa: E402
import nki.isa as nisa  # noqa: E402
import nki.language as nl  # noqa: E402


@nki.jit
def copy_with_legacy_dtype(a):
    """Beta 2 ``nisa.tensor_copy(dst=, src=, dtype=)``: dst's dtype decides (bf16 -> f32)."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=t, dtype=a.dtype)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki1.jit
def reshape_keyword(a):
    """``tensor.reshape(shape=...)`` on an HBM tensor: [4, 6, 8] viewed as [4, 48]."""
    out = nl1.ndarray((4, 48), dtype=a.dtype, buffer=nl1.shared_hbm)
    flat = a.reshape(shape=(4, 48))
    nl1.store(out, nl1.load(flat))
    return out


@nki1.jit
def sum_middle_axes(a):
    """``nl.sum(x, axis=[2, 4])`` of a rank-5 tile, and ``nl.max(axis=1, keepdims=True)``."""
    out = nl1.ndarray((a.shape[0], a.shape[1], a.shape[3]), dtype=a.dtype, buffer=nl1.shared_hbm)
    out2 = nl1.ndarray((a.shape[0], 1, a.shape[2], a.shape[3], a.shape[4]), dtype=a.dtype,
                       buffer=nl1.shared_hbm)
    x = nl1.load(a)
    nl1.store(out, nl1.sum(x, axis=[2, 4]))
    nl1.store(out2, nl1.max(x, axis=1, keepdims=True))
    return out, out2


@nki1.jit
def wide_partition_broadcast(row, x):
    """``row`` [1, F] (F > 512) broadcast to [128, F] and added to ``x``."""
    out = nl1.ndarray(x.shape, dtype=x.dtype, buffer=nl1.shared_hbm)
    r = nl1.load(row)
    t = nl1.load(x)
    nl1.store(out, t + r.broadcast_to(x.shape))
    return out


@nki1.jit
def matmul_psum_operand(a, b):
    """``nl.matmul(x, nl.transpose(b))``: the transpose lives in PSUM."""
    out = nl1.ndarray((a.shape[0], b.shape[0]), dtype=nl1.float32, buffer=nl1.shared_hbm)
    x = nl1.load(a)
    bt = nl1.transpose(nl1.load(b))
    nl1.store(out, nl1.matmul(x, bt, transpose_x=False))
    return out


@nki1.jit
def masked_stats_in_loop(a):
    """A masked value-returning call assigned into a tile inside a loop (the mask bound
    depends on the loop index): per 256-wide chunk, the row max over the valid columns."""
    out = nl1.ndarray((128, 2), dtype=nl1.float32, buffer=nl1.shared_hbm)
    i_p = nl1.arange(128)[:, None]
    i_f = nl1.arange(256)[None, :]
    i_1 = nl1.arange(1)[None, :]
    x = nl1.load(a)
    res = nl1.ndarray((128, 2), dtype=nl1.float32)
    for j in nl1.affine_range(2):
        res[i_p, j + i_1] = nisa1.tensor_reduce(nl1.maximum, x[i_p, j * 256 + i_f], axis=[1],
                                                mask=(j * 256 + i_f < a.shape[1]),
                                                dtype=nl1.float32)
    nl1.store(out, res)
    return out


@nki1.jit
def lazy_initialized_accumulators(a, b):
    """out = a @ b.T + 2 (a, b [128, 128]): a PSUM accumulator from nl.zeros(...,
    lazy_initialization=True) and a bias from nl.full(..., lazy_initialization=False)."""
    out = nl1.ndarray((128, 128), dtype=nl1.float32, buffer=nl1.shared_hbm)
    acc = nl1.zeros((128, 128), dtype=nl1.float32, buffer=nl1.psum, lazy_initialization=True)
    two = nl1.full((128, 128), 2.0, dtype=nl1.float32, buffer=nl1.sbuf, lazy_initialization=False)
    at = nl1.load_transpose2d(a)
    bt = nl1.load_transpose2d(b)
    for k in nl1.affine_range(2):
        acc[...] += nl1.matmul(at[k * 64:(k + 1) * 64, :], bt[k * 64:(k + 1) * 64, :],
                               transpose_x=True)
    nl1.store(out, value=nl1.add(acc, two))
    return out


@nki1.jit
def gated_tiles(a, n_valid, use_gate):
    """out = 2 * a on the first n_valid 128-row tiles (when use_gate), 0 elsewhere: a loop
    condition combined with a compile-time flag, `(i < n) & flag`."""
    n, f = a.shape
    out = nl1.ndarray((n, f), dtype=a.dtype, buffer=nl1.shared_hbm)
    for i in nl1.affine_range(n // 128):
        nl1.store(out[i * 128:(i + 1) * 128, :], value=nl1.zeros((128, f), dtype=a.dtype))
        if (i < n_valid) & use_gate:
            t = nl1.load(a[i * 128:(i + 1) * 128, :])
            nl1.store(out[i * 128:(i + 1) * 128, :], value=nl1.multiply(t, 2.0))
        if use_gate & (i >= n_valid) & False:
            nl1.store(out[i * 128:(i + 1) * 128, :], value=nl1.ones((128, f), dtype=a.dtype))
    return out
