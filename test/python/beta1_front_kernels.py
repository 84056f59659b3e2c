"""Our Beta 1 kernels (``import neuronxcc.nki``) for test_beta1_front.py; their Beta 2 twins
are in beta2_twin_kernels.py."""
import numpy as np
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.isa as nisa  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


@nki.jit
def tiled_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(a.shape[1])[None, :]
    for t in nl.affine_range(a.shape[0] // 128):
        x = nl.load(a[t * 128 + i_p, i_f])
        y = nl.load(b[t * 128 + i_p, i_f])
        z = nisa.tensor_tensor(x, y, op=nl.add)
        nl.store(out[t * 128 + i_p, i_f], value=z)
    return out


@nki.jit
def matmul_accum(lhs_t, rhs):
    k_dim, m_dim = lhs_t.shape
    n_dim = rhs.shape[1]
    out = nl.ndarray((m_dim, n_dim), dtype=nl.float32, buffer=nl.shared_hbm)
    i_k = nl.arange(128)[:, None]
    i_m = nl.arange(m_dim)[None, :]
    i_n = nl.arange(n_dim)[None, :]
    acc = nl.zeros((nl.par_dim(m_dim), n_dim), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(k_dim // 128):
        a_t = nl.load(lhs_t[k * 128 + i_k, i_m])
        b_t = nl.load(rhs[k * 128 + i_k, i_n])
        acc[...] += nisa.nc_matmul(a_t, b_t)
    res = nl.ndarray((nl.par_dim(m_dim), n_dim), dtype=nl.float32, buffer=nl.sbuf)
    res[...] = nisa.tensor_copy(acc)
    nl.store(out, value=res)
    return out


@nki.jit
def row_scale(x):
    """out = exp(x) * sum(x, axis=1)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    ix = nl.mgrid[0:128, 0:x.shape[1]]
    t = nl.load(x[ix.p, ix.x])
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    s[...] = nisa.tensor_reduce(nl.add, t, axis=1, keepdims=True)
    e = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
    e[...] = nisa.activation(op=nl.exp, data=t)
    y = nl.ndarray((128, x.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
    y[...] = nisa.tensor_scalar(e, nl.multiply, s)
    nl.store(out[ix.p, ix.x], value=y)
    return out


# ------------------------------------------------------------------ more Beta 1 forms


@nki.jit
def operators(a, b):
    """out = ((a + b) * 2 - a / b) ** 2 with a bf16 b: Beta 1 promotion to fp32."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    ix = nl.mgrid[0:128, 0:64]
    x = nl.load(a[ix.p, ix.x])
    y = nl.load(b[ix.p, ix.x])
    z = ((x + y) * 2 - x / y) ** 2
    nl.store(out[ix.p, ix.x], value=z)
    return out


@nki.jit
def compare_ops(a, b):
    """out = (a < b) as float, plus -a, plus ~(a >= b) as float."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    x = nl.load(a[i_p, i_f])
    y = nl.load(b[i_p, i_f])
    lt = nl.less(x, y, dtype=nl.float32)
    neg = -x
    r = nl.add(lt, neg)
    nl.store(out[i_p, i_f], value=r)
    return out


@nki.jit
def strided_load(a):
    """out[p, j] = a[p, 2*j + 1]: a strided free-dim access pattern."""
    out = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(32)[None, :]
    t = nl.load(a[i_p, 2 * i_f + 1])
    nl.store(out[i_p, i_f], value=t)
    return out


@nki.jit
def transposed_load(a):
    """out = a.T for a [64, 128] input (a permuted HBM access pattern)."""
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    t = nl.load(a[i_f, i_p])
    nl.store(out[i_p, i_f], value=t)
    return out


@nki.jit
def iota_select(a):
    """Lower-triangular mask via Beta 1 affine_select, plus the iota of p*64 + f."""
    out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    t = nl.load(a[i_p, i_f])
    low = nisa.affine_select(i_p - i_f >= 0, t, 0.0)
    nl.store(out[i_p, i_f], value=low)
    j_f = nl.arange(64)[None, :]
    io = nisa.iota(i_p * 64 + j_f, dtype=nl.int32)
    nl.store(out2[i_p, j_f], value=io)
    return out, out2


@nki.jit
def nl_matmul_accum(x_t, y):
    """out = x_t.T @ y accumulated over two K tiles with psum[...] += nl.matmul(...)."""
    out = nl.ndarray((128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
    i_k = nl.arange(128)[:, None]
    i_m = nl.arange(128)[None, :]
    i_n = nl.arange(256)[None, :]
    acc = nl.zeros((128, 256), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(2):
        a = nl.load(x_t[k * 128 + i_k, i_m])
        b = nl.load(y[k * 128 + i_k, i_n])
        acc[...] += nl.matmul(a, b, transpose_x=True)
    nl.store(out, value=nl.copy(acc, dtype=nl.float32))
    return out


@nki.jit
def gather_rows(table, idx):
    """out[p, :] = table[idx[p], :] with a dynamic (indirect) partition index."""
    out = nl.ndarray((128, table.shape[1]), dtype=table.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(table.shape[1])[None, :]
    i_0 = nl.arange(1)[None, :]
    ix = nl.load(idx[i_p, i_0])
    rows = nl.load(table[ix[i_p, 0], i_f])
    nl.store(out[i_p, i_f], value=rows)
    return out


@nki.jit
def store_broadcast(a):
    """out[p, f] = a[0, f] + 1: a [1, F] row stored (broadcast) into every row."""
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    i_0 = nl.arange(1)[:, None]
    i_f = nl.arange(64)[None, :]
    row = nl.load(a[i_0, i_f]) + 1.0
    full = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    full[...] = row.broadcast_to((128, 64))
    nl.store(out, value=full)
    return out


@nki.jit
def ufunc_ops(a, b):
    """out = exp(maximum(a, b)) with NumPy ufuncs as op tokens; out2 = a[0:1, :] stored
    (broadcast) into all 128 rows."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    out2 = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    x = nl.load(a[i_p, i_f])
    y = nl.load(b[i_p, i_f])
    z = nisa.tensor_tensor(x, y, op=np.maximum)
    e = nisa.activation(op=np.exp, data=z)
    nl.store(out[i_p, i_f], value=e)
    i_0 = nl.arange(1)[:, None]
    row = nl.load(a[i_0, i_f])
    nl.store(out2[i_p, i_f], value=row)
    return out, out2


@nki.jit
def tutorial_matmul(lhs_t, rhs):
    """The Beta 1 tutorial spelling: ``res_psum += nl.matmul(...)`` on a name, in place."""
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    i_k = nl.arange(128)[:, None]
    i_m = nl.arange(128)[None, :]
    i_n = nl.arange(512)[None, :]
    res_psum = nl.zeros((128, 512), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(lhs_t.shape[0] // 128):
        a = nl.load(lhs_t[k * 128 + i_k, i_m])
        b = nl.load(rhs[k * 128 + i_k, i_n])
        res_psum += nl.matmul(a, b, transpose_x=True)
    res_sb = nl.copy(res_psum, dtype=nl.float32)
    nl.store(out, value=res_sb)
    return out


@nki.jit
def loop_index_masks(a):
    """Rows 0..255: exp(a); rows 256..511: a -- masks on the affine_range index alone."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    for t in nl.affine_range(4):
        x = nl.load(a[t * 128 + i_p, i_f])
        y = nl.exp(x, mask=(t < 2))
        nl.store(out[t * 128 + i_p, i_f], value=y, mask=(t < 2))
        nl.store(out[t * 128 + i_p, i_f], value=x, mask=(t >= 2))
    return out


@nki.jit
def unrolled_assigns(a):
    """One assignment per iteration of a loop the tracer unrolls (``t % 2`` steers Python)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for t in range(a.shape[0] // 128):
        x = nl.load(a[t * 128:(t + 1) * 128, :])
        res = nl.ndarray((128, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
        if t % 2 == 0:
            res[...] = nisa.tensor_copy(x)
        else:
            res[...] = nl.exp(x)
        nl.store(out[t * 128:(t + 1) * 128, :], value=res)
    return out
