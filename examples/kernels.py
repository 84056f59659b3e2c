"""Example NKI kernels in Beta 2 style (our own), used by examples/run_examples.py.

Each kernel takes HBM tensors, moves tiles into SBUF with ``nisa.dma_copy``, computes on
the engines and returns a ``shared_hbm`` output.
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def tiled_matmul(a_t, b):
    """out[M, N] = a_t.T @ b with a_t: [K, M] and b: [K, N] in bf16, accumulated in fp32 PSUM.

    Tiles: K by 128 (partition / contraction), M by 128 (stationary free size), N by 512
    (moving free size = one PSUM bank of fp32).
    """
    k_dim, m_dim = a_t.shape
    _, n_dim = b.shape
    tk, tm, tn = nl.tile_size.pmax, nl.tile_size.gemm_stationary_fmax, nl.tile_size.gemm_moving_fmax
    out = nl.ndarray((m_dim, n_dim), dtype=nl.float32, buffer=nl.shared_hbm)
    for m in nl.affine_range(m_dim // tm):
        for n in nl.affine_range(n_dim // tn):
            acc = nl.ndarray((tm, tn), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(k_dim // tk):
                lhs = nl.ndarray((tk, tm), dtype=a_t.dtype, buffer=nl.sbuf)
                rhs = nl.ndarray((tk, tn), dtype=b.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lhs, src=a_t[nl.ds(k * tk, tk), nl.ds(m * tm, tm)])
                nisa.dma_copy(dst=rhs, src=b[nl.ds(k * tk, tk), nl.ds(n * tn, tn)])
                nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
            res = nl.ndarray((tm, tn), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[nl.ds(m * tm, tm), nl.ds(n * tn, tn)], src=res)
    return out


@nki.jit
def row_softmax(x):
    """out = softmax(x, axis=1) for x: [R, F] fp32, R a multiple of 128."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    for r in nl.affine_range(rows // 128):
        t = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(r * 128, 128), :])
        mx = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=mx, op=nl.maximum, data=t, axis=1, keepdims=True)
        neg = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=neg, data=mx, op0=nl.multiply, operand0=-1.0)
        e = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        total = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t, bias=neg, reduce_op=nl.add, reduce_res=total,
                        reduce_cmd=nisa.reduce_cmd.reset_reduce)
        inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=total)
        y = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=out[nl.ds(r * 128, 128), :], src=y)
    return out


@nki.jit
def tensor_add(a, b):
    """out = a + b for [R, F] tensors, R a multiple of 128 and F of 512."""
    rows, cols = a.shape
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        for j in nl.affine_range(cols // 512):
            ta = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
            tb = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=ta, src=a[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            nisa.dma_copy(dst=tb, src=b[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            tc = nl.ndarray((128, 512), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.add)
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=tc)
    return out
