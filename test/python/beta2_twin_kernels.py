"""Beta 2 spellings of beta1_front_kernels.py's tiled_add, matmul_accum and row_scale
(test_beta1_front.py checks both fronts compile to the same nisa instructions)."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def tiled_add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    f = a.shape[1]
    for t in nl.affine_range(a.shape[0] // 128):
        x = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a[t * 128:(t + 1) * 128, 0:f])
        y = nl.ndarray((128, f), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=y, src=b[t * 128:(t + 1) * 128, 0:f])
        z = nl.ndarray((128, f), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=z, data1=x, data2=y, op=nl.add)
        nisa.dma_copy(dst=out[t * 128:(t + 1) * 128, 0:f], src=z)
    return out


@nki.jit
def matmul_accum(lhs_t, rhs):
    k_dim, m_dim = lhs_t.shape
    n_dim = rhs.shape[1]
    out = nl.ndarray((m_dim, n_dim), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((m_dim, n_dim), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(k_dim // 128):
        a_t = nl.ndarray((128, m_dim), dtype=lhs_t.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=a_t, src=lhs_t[k * 128:(k + 1) * 128, 0:m_dim])
        b_t = nl.ndarray((128, n_dim), dtype=rhs.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=b_t, src=rhs[k * 128:(k + 1) * 128, 0:n_dim])
        nisa.nc_matmul(dst=acc, stationary=a_t, moving=b_t, accumulate=True)
    res = nl.ndarray((m_dim, n_dim), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def row_scale(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    f = x.shape[1]
    t = nl.ndarray((128, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[0:128, 0:f])
    s = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1, keepdims=True)
    e = nl.ndarray((128, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=t)
    y = nl.ndarray((128, f), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=s)
    nisa.dma_copy(dst=out[0:128, 0:f], src=y)
    return out
