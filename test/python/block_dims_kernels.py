"""Our Beta 1 kernels with block dims (dims left of ``nl.par_dim``) for test_block_dims.py."""
import numpy as np
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.compiler as ncc  # noqa: E402
import neuronxcc.nki.isa as nisa  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


@nki.jit
def blocks_roundtrip(a):
    """Load every [128, F] row block of ``a`` into its own block, then scale and store them
    in a second loop (all blocks alive at once)."""
    n = a.shape[0] // 128
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((n, nl.par_dim(128), a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        buf[i] = nl.load(a[i * 128:(i + 1) * 128, :])
    for j in nl.affine_range(n):
        nl.store(out[j * 128:(j + 1) * 128, :], value=nl.multiply(buf[j, :, :], 2.0))
    return out


@nki.jit
def blocks_reverse(a):
    """Block ``n-1-i`` written in loop 1 is read in loop 2 as block ``j``: a block written and
    a different block read must stay ordered; constant block indices too."""
    n = a.shape[0] // 128
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.zeros((n, nl.par_dim(128), a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    i_p, i_f = nl.mgrid[0:128, 0:a.shape[1]]
    for i in nl.affine_range(n):
        buf[n - 1 - i, i_p, i_f] = nl.load(a[i * 128 + i_p, i_f])
    buf[0] = nl.add(buf[0], 1.0)
    for j in nl.affine_range(n):
        nl.store(out[j * 128 + i_p, i_f], value=buf[j, i_p, i_f])
    return out


@nki.jit
def blocks_two_dims(a):
    """Two block dims; ``t[i]`` keeps the second (a helper indexes it), and
    ``t[i, j, :, 0]`` a free column."""
    n0, n1 = 2, a.shape[0] // 256
    out = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((n0, n1, nl.par_dim(128), a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    s = nl.ndarray((n0, n1, nl.par_dim(128), 1), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n0):
        _fill(t[i], s[i], a, i, n1)
    for i in nl.affine_range(n0):
        for j in nl.affine_range(n1):
            nl.store(out[(i * n1 + j) * 128:(i * n1 + j + 1) * 128, :], value=s[i, j, :, 0])
    return out


def _fill(t_i, s_i, a, i, n1):
    for j in nl.affine_range(n1):
        t_i[j] = nl.load(a[(i * n1 + j) * 128:(i * n1 + j + 1) * 128, :])
        s_i[j, :, 0] = nisa.tensor_reduce(np.add, data=t_i[j], axis=(1,))


@nki.jit
def psum_blocks(lhs_t, rhs):
    """PSUM block tensor: block ``k`` accumulates the k-th [128, N] column tile of lhs_t.T @ rhs."""
    kd, m = lhs_t.shape
    n = rhs.shape[1]
    nb = m // 128
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((nb, nl.par_dim(128), n), dtype=nl.float32, buffer=nl.psum)
    for b in nl.affine_range(nb):
        for k in nl.affine_range(kd // 128):
            lt = nl.load(lhs_t[k * 128:(k + 1) * 128, b * 128:(b + 1) * 128])
            r = nl.load(rhs[k * 128:(k + 1) * 128, :])
            acc[b] += nisa.nc_matmul(lt, r)
    for b in nl.affine_range(nb):
        nl.store(out[b * 128:(b + 1) * 128, :], value=nl.copy(acc[b]))
    return out


@nki.jit
def mod_alloc_blocks(a):
    """``ncc.sbuf.mod_alloc(num_free_tiles=(2,))``: 4 blocks on 2 slots (block i in slot
    i % 2), each used right after it is written."""
    n = a.shape[0] // 128
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((n, nl.par_dim(128), a.shape[1]), dtype=a.dtype,
                     buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
    for i in nl.affine_range(n):
        res = nl.ndarray((nl.par_dim(128), a.shape[1]), dtype=a.dtype,
                         buffer=ncc.sbuf.mod_alloc(base_addr=2 * a.shape[1] * 4))
        buf[i] = nl.load(a[i * 128:(i + 1) * 128, :])
        res[...] = nl.multiply(buf[i], 3.0)
        nl.store(out[i * 128:(i + 1) * 128, :], value=res)
    return out


@nki.jit
def blocks_shape(a):
    """The kernel sees the block dims first in ``t.shape`` / ``ndim``; ``t[i]`` is a tile."""
    t = nl.ndarray((3, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
    assert tuple(t.shape) == (3, 128, 64) and t.ndim == 3, t.shape
    assert tuple(t[1].shape) == (128, 64), t[1].shape
    t2 = nl.ndarray((2, 3, nl.par_dim(128), 1), dtype=a.dtype, buffer=nl.sbuf)
    assert tuple(t2[1].shape) == (3, 128, 1), t2[1].shape
    assert tuple(t2[1, 2, :, 0].shape) == (128, 1), t2[1, 2, :, 0].shape
    h = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.private_hbm)
    assert tuple(h.shape) == (2, 128, 64)  # HBM: par_dim marks nothing
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t[2] = nl.load(a)
    nl.store(out, value=t[2])
    return out


# ------------------------------------------------------------------ errors (marked lines)


@nki.jit
def block_out_of_bounds(a):
    t = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
    t[2] = nl.load(a)  # OOB
    return a


@nki.jit
def arange_on_block_dim(a):
    t = nl.ndarray((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
    i_b = nl.arange(2)[:, None, None]
    i_p = nl.arange(128)[None, :, None]
    i_f = nl.arange(64)[None, None, :]
    nl.store(a, value=t[i_b, i_p, i_f])  # ARANGE
    return a


@nki.jit
def block_operand(a):
    t = nl.zeros((2, nl.par_dim(128), 64), dtype=a.dtype, buffer=nl.sbuf)
    u = nl.exp(t)  # WHOLE
    return a


@nki.jit
def par_tiles(a):
    alloc = ncc.sbuf.mod_alloc(base_addr=0, num_par_tiles=(2,))
    t = nl.ndarray((2, nl.par_dim(64), 64), dtype=a.dtype, buffer=alloc)  # PAR_TILES
    return a


@nki.jit
def same_block_every_iteration(a):
    n = a.shape[0] // 128
    out = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((n, nl.par_dim(128), a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n):
        buf[0] = nl.load(a[i * 128:(i + 1) * 128, :])  # SAME
    nl.store(out, value=buf[0])
    return out
