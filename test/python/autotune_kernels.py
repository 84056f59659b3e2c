"""Our own kernels with compile-time tiling parameters, for the autotune tests."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def tiled_add(a, b, P=128, TILE=256):
    """out = a + b for [R, F] fp32, in [P, TILE] tiles.

    R must be a multiple of P and F of TILE: a TILE that does not divide F leaves the
    last F % TILE columns unwritten (a wrong-output variant), and P > 128 is not a
    partition tile (a compile error).
    """
    rows, cols = a.shape
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // P):
        for j in nl.affine_range(cols // TILE):
            ta = nl.ndarray((P, TILE), dtype=a.dtype, buffer=nl.sbuf)
            tb = nl.ndarray((P, TILE), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=ta, src=a[i * P:(i + 1) * P, j * TILE:(j + 1) * TILE])
            nisa.dma_copy(dst=tb, src=b[i * P:(i + 1) * P, j * TILE:(j + 1) * TILE])
            tc = nl.ndarray((P, TILE), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.add)
            nisa.dma_copy(dst=out[i * P:(i + 1) * P, j * TILE:(j + 1) * TILE], src=tc)
    return out


@nki.jit
def tiled_matmul(lhsT, rhs, TN=512, KT=1):
    """out = lhsT.T @ rhs for lhsT [K, M], rhs [K, N] bf16 (M = 128, K a multiple of
    128 * KT, N of TN <= 512): per [128, TN] output tile, K/128 matmuls accumulate in
    one PSUM tile, their operands loaded KT tiles per DMA."""
    k_size, m_size = lhsT.shape
    _, n_size = rhs.shape
    out = nl.ndarray((m_size, n_size), dtype=nl.float32, buffer=nl.shared_hbm)
    for n in nl.affine_range(n_size // TN):
        ps = nl.ndarray((128, TN), dtype=nl.float32, buffer=nl.psum)
        for kb in nl.affine_range(k_size // (128 * KT)):
            a_blk = nl.ndarray((128, KT, 128), dtype=lhsT.dtype, buffer=nl.sbuf)
            b_blk = nl.ndarray((128, KT, TN), dtype=rhs.dtype, buffer=nl.sbuf)
            for kt in nl.affine_range(KT):
                k0 = (kb * KT + kt) * 128
                nisa.dma_copy(dst=a_blk[:, kt, :], src=lhsT[k0:k0 + 128, 0:128])
                nisa.dma_copy(dst=b_blk[:, kt, :], src=rhs[k0:k0 + 128, n * TN:(n + 1) * TN])
            for kt in nl.affine_range(KT):
                nisa.nc_matmul(dst=ps, stationary=a_blk[:, kt, :], moving=b_blk[:, kt, :])
        o = nl.ndarray((128, TN), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=o, src=ps)
        nisa.dma_copy(dst=out[0:128, n * TN:(n + 1) * TN], src=o)
    return out


@nki.jit
def dying_copy(a, DIE=False, TILE=128):
    """out = a for [128, F] fp32; tracing with DIE=True ends the Python process (a stand-in
    for a variant whose compile or run kills its worker, e.g. out of memory)."""
    if DIE:
        import os
        os._exit(3)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(a.shape[1] // TILE):
        t = nl.ndarray((128, TILE), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[0:128, j * TILE:(j + 1) * TILE])
        nisa.dma_copy(dst=out[0:128, j * TILE:(j + 1) * TILE], src=t)
    return out
