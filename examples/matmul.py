"""Matrix-multiplication kernels for the cost model's calibration (our own, Beta 2 style).

The kernels compute ``out[M, N] = lhsT.T @ rhs`` for ``lhsT: [K, M]`` and ``rhs: [K, N]``
in bf16 (fp32 works too: the Neuron kernel-optimization guide runs them in fp32 on trn2),
accumulating in fp32 PSUM and returning a ``shared_hbm`` output of the inputs' dtype.  They
reproduce two schedules of the NKI matrix-multiplication tutorial
(aws-neuron-sdk ``general/nki/tutorials/matrix_multiplication.rst``), whose documented trn1
latencies for ``[4096, 8192] @ [8192, 8192]`` (K=8192, M=4096, N=8192) are 51.80 ms for the
naive tiling and 6.97 ms for the fully optimised one (``../shared/perf.md`` Part A.5):

- :func:`matmul_tiled`: the naive tiling (every [128, 128] x [128, 512] step loads both of
  its tiles from HBM);
- :func:`matmul_hoisted` and :func:`matmul_block_free`: the tutorial's intermediate steps
  "Optimization 1" (42.96 ms) and "Optimization 2" (22.07 ms), held-out checks of the
  calibration (``bench/calibration.py``);
- :func:`matmul_hoisted_tiles`: Optimization 1 written as the current tutorial and the
  kernel-optimization guide write it, one SBUF tensor per tile in a Python list (the guide's
  trn2 fp32 step "removing redundant loads", ``bench/published_report.py``);
- :func:`matmul_blocked`: the fully optimised tiling (blocks of tiles reused from SBUF, an
  SBUF result block accumulated on VectorE, one store per 128 x 1024 output tile).

:func:`single_dma` is the trn2 DMA anchor (DMAOV Example 1: 32 KiB HBM -> SBUF on one DMA
engine in 1416 ns).

    python examples/matmul.py        # checks small shapes against NumPy
    nki-mlir profile examples/matmul.py --target trn1    # the cost model's report of each
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

#: partition tile (contraction K), stationary free size (M), moving free size (N, one PSUM bank of fp32)
TK, TM, TN = 128, 128, 512

#: arguments of ``nki-mlir profile examples/matmul.py``: the tutorial's [4096, 8192] @ [8192, 8192]
EXAMPLE_ARGS = {name: ["8192x4096xbf16", "8192x8192xbf16"]
                for name in ("matmul_tiled", "matmul_hoisted", "matmul_hoisted_tiles",
                             "matmul_block_free", "matmul_blocked")}
EXAMPLE_ARGS["single_dma"] = ["4x4096xbf16"]


@nki.jit
def matmul_tiled(lhsT, rhs):
    """``out = lhsT.T @ rhs``, the tutorial's naive tiling.

    Args:
        lhsT: [K, M] bf16 (or fp32), K and M multiples of 128.
        rhs: [K, N], lhsT's dtype, N a multiple of 512.

    Returns:
        [M, N] in ``shared_hbm``, lhsT's dtype.

    For every [128, 512] output tile (M by 128, N by 512) one fp32 PSUM accumulator takes
    K/128 matmuls, each fed by a fresh [128, 128] lhsT tile and a fresh [128, 512] rhs tile
    loaded from HBM; the accumulator is then cast to bf16 in SBUF (``tensor_copy``) and
    stored.  Documented trn1 latency at K=8192, M=4096, N=8192: 51.80 ms.
    """
    k_size, m_size = lhsT.shape
    _, n_size = rhs.shape
    out = nl.ndarray((m_size, n_size), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(m_size // TM):
        for n in nl.affine_range(n_size // TN):
            psum_tile = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(k_size // TK):
                a_tile = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                b_tile = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a_tile, src=lhsT[nl.ds(k * TK, TK), nl.ds(m * TM, TM)])
                nisa.dma_copy(dst=b_tile, src=rhs[nl.ds(k * TK, TK), nl.ds(n * TN, TN)])
                nisa.nc_matmul(dst=psum_tile, stationary=a_tile, moving=b_tile)
            o_tile = nl.ndarray((TM, TN), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=o_tile, src=psum_tile)
            nisa.dma_copy(dst=out[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], src=o_tile)
    return out


@nki.jit
def matmul_blocked(lhsT, rhs, TILES_IN_BLOCK_M=16, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=8,
                   FP32_RESULT=False):
    """``out = lhsT.T @ rhs``, the tutorial's fully optimised tiling (its Optimization 3).

    Args:
        lhsT: [K, M] bf16; K a multiple of 128 * TILES_IN_BLOCK_K, M of 128 * TILES_IN_BLOCK_M.
        rhs: [K, N] bf16; N a multiple of 512 * TILES_IN_BLOCK_N.
        TILES_IN_BLOCK_M / _N / _K: tiles per block (compile-time ints); the defaults give
            blocks of 2048 (M) x 1024 (N) x 1024 (K) elements.
        FP32_RESULT: keep the SBUF result block in fp32 (tighter numerics, twice the SBUF)
            instead of bf16.  Default False: bf16, as the tutorial's kernel does, so the
            SBUF footprint (and with it what the allocator can multi-buffer) is the
            documented kernel's.

    Returns:
        [M, N] in ``shared_hbm``, lhsT's dtype.

    Schedule: for each N block, an SBUF result block covering all of M (zeroed with
    ``memset``; M/128 * 512 * TILES_IN_BLOCK_N elements per partition: 64 KiB bf16 or
    128 KiB fp32 at M=4096).  For each K block in order (``sequential_range``: the result
    block carries the sum): the rhs block comes in as TILES_IN_BLOCK_K loads of
    [128, 512 * TILES_IN_BLOCK_N]; for each M block, the lhsT block as TILES_IN_BLOCK_K
    loads of [128, 128 * TILES_IN_BLOCK_M]; every [128, 512] output tile of the block gets
    a PSUM tile and TILES_IN_BLOCK_K matmuls, and is added onto the result block on
    VectorE (``tensor_tensor`` add).  Finally each 128-row slab of the result block (its
    TILES_IN_BLOCK_N output tiles side by side) is cast to bf16 by one ``tensor_copy``
    and stored with one DMA.  Documented trn1 latency at K=8192, M=4096, N=8192: 6.97 ms.
    """
    k_size, m_size = lhsT.shape
    _, n_size = rhs.shape
    blk_m, blk_n, blk_k = TM * TILES_IN_BLOCK_M, TN * TILES_IN_BLOCK_N, TK * TILES_IN_BLOCK_K
    m_tiles = m_size // TM
    acc_dtype = nl.float32 if FP32_RESULT else nl.bfloat16
    out = nl.ndarray((m_size, n_size), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for nb in nl.affine_range(n_size // blk_n):
        # acc[:, mt * blk_n + j]: row mt*128 + p, column nb*blk_n + j of the output
        acc = nl.ndarray((TM, m_tiles * blk_n), dtype=acc_dtype, buffer=nl.sbuf)
        nisa.memset(dst=acc, value=0.0)
        for kb in nl.sequential_range(k_size // blk_k):
            # b_blk[:, kt * blk_n + j] = rhs[kb*blk_k + kt*128 + p, nb*blk_n + j]
            b_blk = nl.ndarray((TK, TILES_IN_BLOCK_K * blk_n), dtype=rhs.dtype, buffer=nl.sbuf)
            for kt in nl.affine_range(TILES_IN_BLOCK_K):
                nisa.dma_copy(dst=b_blk[:, nl.ds(kt * blk_n, blk_n)],
                              src=rhs[nl.ds(kb * blk_k + kt * TK, TK), nl.ds(nb * blk_n, blk_n)])
            for mb in nl.affine_range(m_size // blk_m):
                # a_blk[:, kt * blk_m + i] = lhsT[kb*blk_k + kt*128 + p, mb*blk_m + i]
                a_blk = nl.ndarray((TK, TILES_IN_BLOCK_K * blk_m), dtype=lhsT.dtype,
                                   buffer=nl.sbuf)
                for kt in nl.affine_range(TILES_IN_BLOCK_K):
                    nisa.dma_copy(dst=a_blk[:, nl.ds(kt * blk_m, blk_m)],
                                  src=lhsT[nl.ds(kb * blk_k + kt * TK, TK), nl.ds(mb * blk_m, blk_m)])
                for bn in nl.affine_range(TILES_IN_BLOCK_N):
                    for bm in nl.affine_range(TILES_IN_BLOCK_M):
                        ps = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                        for kt in nl.affine_range(TILES_IN_BLOCK_K):
                            nisa.nc_matmul(dst=ps,
                                           stationary=a_blk[:, nl.ds(kt * blk_m + bm * TM, TM)],
                                           moving=b_blk[:, nl.ds(kt * blk_n + bn * TN, TN)])
                        col = (mb * TILES_IN_BLOCK_M + bm) * blk_n + bn * TN
                        nisa.tensor_tensor(dst=acc[:, nl.ds(col, TN)], data1=ps,
                                           data2=acc[:, nl.ds(col, TN)], op=nl.add)
        for mt in nl.affine_range(m_tiles):
            o_tile = nl.ndarray((TM, blk_n), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=o_tile, src=acc[:, nl.ds(mt * blk_n, blk_n)])
            nisa.dma_copy(dst=out[nl.ds(mt * TM, TM), nl.ds(nb * blk_n, blk_n)], src=o_tile)
    return out


@nki.jit
def matmul_hoisted(lhs_t, rhs):
    """``out = lhsT.T @ rhs`` with the tutorial's "Optimization 1" tiling (loads hoisted out
    of the K loop; documented trn1 latency 42.96 ms at K=8192, M=4096, N=8192).

    Args / returns as :func:`matmul_tiled`.  Per 128-column stripe of lhsT its K/128 tiles
    are loaded once into a [128, K/128, 128] SBUF tensor; per (stripe, 512-column stripe of
    rhs) the rhs stripe's K/128 tiles are loaded into a [128, K/128, 512] tensor, then K/128
    matmuls accumulate one PSUM bank.
    """
    k_dim, m_dim = lhs_t.shape
    _, n_dim = rhs.shape
    kt = k_dim // 128
    out = nl.ndarray((m_dim, n_dim), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(m_dim // 128):
        stat = nl.ndarray((128, kt, 128), dtype=lhs_t.dtype, buffer=nl.sbuf)
        for k in nl.affine_range(kt):
            nisa.dma_copy(dst=stat[:, k, :], src=lhs_t[nl.ds(k * 128, 128), nl.ds(m * 128, 128)])
        for n in nl.affine_range(n_dim // 512):
            mov = nl.ndarray((128, kt, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            for k in nl.affine_range(kt):
                nisa.dma_copy(dst=mov[:, k, :], src=rhs[nl.ds(k * 128, 128), nl.ds(n * 512, 512)])
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(kt):
                nisa.nc_matmul(dst=acc, stationary=stat[:, k, :], moving=mov[:, k, :])
            res = nl.ndarray((128, 512), dtype=lhs_t.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[nl.ds(m * 128, 128), nl.ds(n * 512, 512)], src=res)
    return out


@nki.jit
def matmul_hoisted_tiles(lhsT, rhs):
    """``out = lhsT.T @ rhs`` with the hoisted loads of :func:`matmul_hoisted`, but every
    [128, 128] / [128, 512] tile its own SBUF tensor kept in a Python list, as the current
    tutorial and kernel-optimization guide write it (``lhsT_tiles.append(...)``).

    Args / returns as :func:`matmul_tiled`.  The list appends unroll the K loops (one tensor
    per K tile), so each tile's reuse waits only for the matmul that read that tile, not
    for the whole stripe: the next stripe loads tile by tile while the current one is
    multiplied, without a second stripe buffer.
    """
    k_dim, m_dim = lhsT.shape
    _, n_dim = rhs.shape
    out = nl.ndarray((m_dim, n_dim), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(m_dim // TM):
        stat = []
        for k in nl.affine_range(k_dim // TK):
            t = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=lhsT[nl.ds(k * TK, TK), nl.ds(m * TM, TM)])
            stat.append(t)
        for n in nl.affine_range(n_dim // TN):
            mov = []
            for k in nl.affine_range(k_dim // TK):
                t = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=t, src=rhs[nl.ds(k * TK, TK), nl.ds(n * TN, TN)])
                mov.append(t)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(k_dim // TK):
                nisa.nc_matmul(dst=acc, stationary=stat[k], moving=mov[k])
            res = nl.ndarray((TM, TN), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[nl.ds(m * TM, TM), nl.ds(n * TN, TN)], src=res)
    return out


@nki.jit
def matmul_block_free(lhs_t, rhs, tiles_m=2, tiles_n=2):
    """``out = lhsT.T @ rhs`` with the tutorial's "Optimization 2" tiling (free dimensions
    blocked by 2 x 128 lhsT columns and 2 x 512 rhs columns; documented trn1 latency
    22.07 ms at K=8192, M=4096, N=8192).

    Args / returns as :func:`matmul_tiled` (M a multiple of 128 * ``tiles_m``, N of
    512 * ``tiles_n``).  A block of lhsT stripes ([128, tiles_m, K/128, 128]) is loaded once
    per M block, a block of rhs stripes ([128, tiles_n, K/128, 512]) once per (M block,
    N block); every (stripe, stripe) pair then accumulates K/128 matmuls in one PSUM bank.
    """
    k_dim, m_dim = lhs_t.shape
    _, n_dim = rhs.shape
    kt = k_dim // 128
    out = nl.ndarray((m_dim, n_dim), dtype=lhs_t.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(m_dim // (128 * tiles_m)):
        stat = nl.ndarray((128, tiles_m, kt, 128), dtype=lhs_t.dtype, buffer=nl.sbuf)
        for bm in nl.affine_range(tiles_m):
            for k in nl.affine_range(kt):
                nisa.dma_copy(dst=stat[:, bm, k, :],
                              src=lhs_t[nl.ds(k * 128, 128), nl.ds((m * tiles_m + bm) * 128, 128)])
        for n in nl.affine_range(n_dim // (512 * tiles_n)):
            mov = nl.ndarray((128, tiles_n, kt, 512), dtype=rhs.dtype, buffer=nl.sbuf)
            for bn in nl.affine_range(tiles_n):
                for k in nl.affine_range(kt):
                    nisa.dma_copy(dst=mov[:, bn, k, :],
                                  src=rhs[nl.ds(k * 128, 128), nl.ds((n * tiles_n + bn) * 512, 512)])
            for bm in nl.affine_range(tiles_m):
                for bn in nl.affine_range(tiles_n):
                    acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(kt):
                        nisa.nc_matmul(dst=acc, stationary=stat[:, bm, k, :], moving=mov[:, bn, k, :])
                    res = nl.ndarray((128, 512), dtype=lhs_t.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res, src=acc)
                    nisa.dma_copy(dst=out[nl.ds((m * tiles_m + bm) * 128, 128),
                                          nl.ds((n * tiles_n + bn) * 512, 512)], src=res)
    return out


@nki.jit
def single_dma(x):
    """One HBM -> SBUF DMA of ``x`` and one store back (the trn2 DMA calibration anchor).

    Args:
        x: [P, F] tensor, P <= 128 (e.g. [4, 4096] bf16 = 32 KiB: 4 partitions, all on one
            DMA engine, the setting of DMAOV Example 1, 1416 ns).

    Returns:
        a copy of ``x`` in ``shared_hbm``.
    """
    parts, free = x.shape
    out = nl.ndarray((parts, free), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((parts, free), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)  # the anchor DMA
    nisa.dma_copy(dst=out, src=t)
    return out


def _check() -> int:
    import ml_dtypes
    import numpy as np
    rng = np.random.default_rng(0)
    bad = 0
    small = {"TILES_IN_BLOCK_M": 2, "TILES_IN_BLOCK_K": 2}
    cases = [(matmul_tiled, (256, 256, 512), {}),
             (matmul_hoisted, (512, 256, 1024), {}),
             (matmul_hoisted_tiles, (512, 256, 1024), {}),
             (matmul_block_free, (512, 512, 2048), {}),
             (matmul_blocked, (512, 512, 1024), small),
             (matmul_blocked, (512, 512, 1024), {**small, "FP32_RESULT": True})]
    for kernel, (k, m, n), kw in cases:
        a = rng.standard_normal((k, m)).astype(np.float32).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((k, n)).astype(np.float32).astype(ml_dtypes.bfloat16)
        got = np.asarray(kernel(a, b, **kw), dtype=np.float64)
        ref = a.astype(np.float64).T @ b.astype(np.float64)
        err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
        print(f"{kernel.__name__} K={k} M={m} N={n} {kw}: max |err| / max |ref| = {err:.2e}")
        bad += err > 2e-2
    return int(bad > 0)


if __name__ == "__main__":
    raise SystemExit(_check())
