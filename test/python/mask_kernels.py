"""Our own NKI Beta 1 kernels using ``mask=`` predicates (test_masks.py)."""
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.isa as nisa  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402
import numpy as np  # noqa: E402


@nki.jit
def ragged_rows(x, y):
    """out = exp(x) * y + 2 over [n, F] in 128-row tiles; the last tile is partial."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < n))
        b = nl.load(y[i_p, i_f], mask=(i_p < n))
        e = nl.exp(a, mask=(i_p < n))
        m = nl.multiply(e, b, mask=(i_p < n))
        r = nl.add(m, 2.0, mask=(i_p < n))
        nl.store(out[i_p, i_f], value=r, mask=(i_p < n))
    return out


@nki.jit
def ragged_rows_slices(x):
    """The same ragged tiling with Beta 2-style slices: out = 3 * x."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[t * 128:(t + 1) * 128, :], mask=(i_p < n))
        r = nl.multiply(a, 3.0, mask=(i_p < n))
        nl.store(out[t * 128:(t + 1) * 128, :], value=r, mask=(i_p < n))
    return out


@nki.jit
def ragged_cols(x):
    """A free-axis mask: 512-column tiles over F columns, out = x + 1."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    for j in nl.affine_range((f + 511) // 512):
        i_f = j * 512 + nl.arange(512)[None, :]
        a = nl.load(x[i_p, i_f], mask=(i_f < f))
        r = nl.add(a, 1.0, mask=(i_f < f))
        nl.store(out[i_p, i_f], value=r, mask=(i_f < f))
    return out


@nki.jit
def ragged_2d(x):
    """Both axes ragged (nl.mgrid, two loops, (rows < n) & (cols < f)): out = x * x."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    g = nl.mgrid[0:128, 0:256]
    for t in nl.affine_range((n + 127) // 128):
        for j in nl.affine_range((f + 255) // 256):
            rows = t * 128 + g.p
            cols = j * 256 + g.x
            m = (rows < n) & (cols < f)
            a = nl.load(x[rows, cols], mask=m)
            r = nl.multiply(a, a, mask=m)
            nl.store(out[rows, cols], value=r, mask=m)
    return out


@nki.jit
def static_masks(x, a, b):
    """Outside loops: rows < a get exp(x) where cols >= b; the rest 2 * x."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    i_f = nl.arange(f)[None, :]
    t = nl.load(x[i_p, i_f])
    nl.store(out[i_p, i_f], value=nl.multiply(t, 2.0))
    e = nl.exp(t, mask=(i_p < a) & (i_f >= b))
    nl.store(out[i_p, i_f], value=e, mask=(i_p < a) & (i_f >= b))
    return out


@nki.jit
def skipped(x):
    """exp(x) stored only for the first tile (skipped in the others), 2 * x elsewhere; a
    statically empty mask skips a store entirely."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range(n // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f])
        nl.store(out[i_p, i_f], value=nl.multiply(a, 2.0))
        e = nl.exp(a, mask=(i_p < 128))
        nl.store(out[i_p, i_f], value=e, mask=(i_p < 128))
        nl.store(out[i_p, i_f], value=a, mask=(nl.arange(128)[:, None] >= 128))
    return out


@nki.jit
def masked_reductions(x, m):
    """Per row of a ragged [n, F] input: the sum of all columns and the max of the first m."""
    n, f = x.shape
    out = nl.ndarray((n, 2), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(f)[None, :]
    i_1 = nl.arange(1)[None, :]
    for t in nl.affine_range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < n))
        s = nl.sum(a, axis=1, keepdims=True, mask=(i_p < n))
        mx = nl.max(a, axis=1, keepdims=True, mask=(i_p < n) & (i_f < m))
        nl.store(out[i_p, i_1], value=s, mask=(i_p < n))
        nl.store(out[i_p, 1 + i_1], value=mx, mask=(i_p < n))
    return out


@nki.jit
def masked_isa(x):
    """Value-returning nisa calls and a dma_copy with dst=, masked: out = exp(2 * x)."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < n))
        d = nisa.tensor_scalar(a, np.multiply, 2.0, mask=(i_p < n))
        e = nisa.activation(op=nl.exp, data=d, mask=(i_p < n))
        nisa.dma_copy(dst=out[i_p, i_f], src=e, mask=(i_p < n))
    return out


@nki.jit
def masked_assign(x, k):
    """t[...] = call(..., mask=): only the masked rows of t change (the rest stay 5)."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    i_f = nl.arange(f)[None, :]
    t = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    t[i_p, i_f] = 5.0
    a = nl.load(x[i_p, i_f])
    t[i_p, i_f] = nl.exp(a, mask=(i_p < k))
    nl.store(out[i_p, i_f], value=t)
    return out


# ---------------------------------------------------------------- errors (one per line)


@nki.jit
def err_non_affine(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    a = nl.load(x[i_p, i_f])
    b = nl.exp(a, mask=(i_p * i_p < 100))
    nl.store(out[i_p, i_f], value=b)
    return out


@nki.jit
def err_or(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    a = nl.load(x[i_p, i_f])
    b = nl.exp(a, mask=(i_p < 10) | (i_f < 10))
    nl.store(out[i_p, i_f], value=b)
    return out


@nki.jit
def err_and(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    a = nl.load(x[i_p, i_f])
    b = nl.exp(a, mask=(i_p < 10) and (i_f < 10))
    nl.store(out[i_p, i_f], value=b)
    return out


@nki.jit
def err_not_equal(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    a = nl.load(x[i_p, i_f])
    b = nl.exp(a, mask=(i_p != 3))
    nl.store(out[i_p, i_f], value=b)
    return out


@nki.jit
def err_tile_mask(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    a = nl.load(x[i_p, i_f])
    b = nl.exp(a, mask=(a > 0.0))
    nl.store(out[i_p, i_f], value=b)
    return out


@nki.jit
def err_axis_size(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    a = nl.load(x[i_p, i_f])
    b = nl.exp(a, mask=(nl.arange(32)[None, :] < 10))
    nl.store(out[i_p, i_f], value=b)
    return out


# ---------------------------------------------------------------- more shapes of the same idea


@nki.jit
def padded_single_tile(x):
    """The NKI docs idiom: indices padded to pmax for a tensor of fewer than 128 rows."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(f)[None, :]
    for p in nl.affine_range((n + 127) // 128):
        i_p = p * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < n))
        e = nl.exp(a, mask=(i_p < n))
        nl.store(out[i_p, i_f], value=e, mask=(i_p < n))
    return out


@nki.jit
def unrolled_tiles(x):
    """A Python range loop (unrolled: the row offsets are compile-time ints): out = x - 1."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(f)[None, :]
    for t in range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < n))
        r = nl.subtract(a, 1.0, mask=(i_p < n))
        nl.store(out[i_p, i_f], value=r, mask=(i_p < n))
    return out


@nki.jit
def spmd_tiles(x):
    """One 128-row tile per program instance (kernel[g](x)); out = 4 * x."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.program_id(0) * 128 + nl.arange(128)[:, None]
    i_f = nl.arange(f)[None, :]
    a = nl.load(x[i_p, i_f], mask=(i_p < n))
    r = nl.multiply(a, 4.0, mask=(i_p < n))
    nl.store(out[i_p, i_f], value=r, mask=(i_p < n))
    return out


@nki.jit
def held_views(x):
    """Views held in variables (built before the masked calls), sequential_range: out = -x."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.sequential_range((n + 127) // 128):
        src = x[t * 128:(t + 1) * 128, :]
        dst = out[t * 128:(t + 1) * 128, :]
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(src, mask=(i_p < n))
        r = nl.negative(a, mask=(i_p < n))
        nl.store(dst, value=r, mask=(i_p < n))
    return out


@nki.jit
def masked_memset(x, k):
    """nisa.memset(shape, value) (no tile operand) under a mask: rows < k are 7, others x."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    i_f = nl.arange(f)[None, :]
    nl.store(out[i_p, i_f], value=nl.load(x[i_p, i_f]))
    s = nisa.memset((p, f), 7.0, dtype=x.dtype, mask=(i_p < k))
    nl.store(out[i_p, i_f], value=s, mask=(i_p < k))
    return out


@nki.jit
def err_too_many_versions(x):
    out = nl.ndarray((128, 64), dtype=x.dtype, buffer=nl.shared_hbm)
    i_f = nl.arange(64)[None, :]
    for t in nl.affine_range(20):
        i_p = nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < t))
        nl.store(out[i_p, i_f], value=a)
    return out


@nki.jit
def held_permuted_views(x):
    """Permuted access patterns (memref.reinterpret_cast) held in variables, rows ragged:
    out[r, 8a + b] = x[r, 8b + a]."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)
    for t in nl.affine_range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None, None]
        i_b = nl.arange(8)[None, :, None]
        i_a = nl.arange(8)[None, None, :]
        src = x[i_p, i_a * 8 + i_b]
        dst = out[i_p, i_b * 8 + i_a]
        a = nl.load(src, mask=(i_p < n))
        nl.store(dst, value=a, mask=(i_p < n))
    return out


# ---------------------------------------------------------------- comparisons coupling grid axes


@nki.jit
def flat_bound(a, b, n):
    """out = a + b on the first n elements of the flattened (T, 128, 64) tensors, 0 after:
    the bound ``t * 8192 + 64 * i_p + i_f < n`` couples the two grid axes (a staircase)."""
    t_count, p, f = a.shape
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range(t_count):
        nl.store(out[t, i_p, i_f], value=nl.zeros((p, f), dtype=a.dtype))
        flat = t * (p * f) + f * i_p + i_f
        x = nl.load(a[t, i_p, i_f], mask=flat < n)
        y = nl.load(b[t, i_p, i_f], mask=flat < n)
        s = nl.add(x, y, mask=flat < n)
        nl.store(out[t, i_p, i_f], value=s, mask=flat < n)
    return out


@nki.jit
def upper_triangle(x):
    """out = exp(x) where column >= row, x elsewhere (``i_f - i_p >= 0``: one box per column)."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    i_f = nl.arange(f)[None, :]
    t = nl.load(x[i_p, i_f])
    nl.store(out[i_p, i_f], value=t)
    e = nl.exp(t, mask=(i_f - i_p >= 0))
    nl.store(out[i_p, i_f], value=e, mask=(i_f - i_p >= 0))
    return out


@nki.jit
def skip_column(x, c):
    """out = 2 * x except column c, which keeps x (``i_f != c``: two boxes)."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    i_f = nl.arange(f)[None, :]
    t = nl.load(x[i_p, i_f])
    nl.store(out[i_p, i_f], value=t)
    d = nl.multiply(t, 2.0, mask=(i_f != c))
    nl.store(out[i_p, i_f], value=d, mask=(i_f != c))
    return out


@nki.jit
def skip_row_dma(x, r):
    """out = x except row r (zero): ``i_p != r`` on DMAs only (any partition range)."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(p)[:, None]
    i_f = nl.arange(f)[None, :]
    nl.store(out[i_p, i_f], value=nl.zeros((p, f), dtype=x.dtype))
    t = nl.load(x[i_p, i_f], mask=(i_p != r))
    nl.store(out[i_p, i_f], value=t, mask=(i_p != r))
    return out


@nki.jit
def err_too_many_boxes(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    a = nl.load(x[i_p, i_f], mask=(i_p - i_f != 0) & (i_p - i_f != 2) & (i_p - i_f != 4)
                & (i_p - i_f != 6))
    nl.store(out[i_p, i_f], value=a)
    return out
