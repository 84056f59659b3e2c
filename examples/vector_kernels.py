"""Two example kernels (our own) built on the vector-engine statistics and scan instructions.

- :func:`layernorm`: LayerNorm over the free dim with ``nisa.bn_stats`` (per 512-element
  chunk, ``nl.tile_size.bn_stats_fmax``) and one ``nisa.bn_aggr`` combining the chunks, then
  ``nisa.scalar_tensor_tensor`` twice for ``(x - mean) * gamma * rstd + beta``.
- :func:`cumsum`: running sum along the free dim with ``nisa.tensor_tensor_scan``
  (``data0`` = ones, ``op0=multiply``, ``op1=add``: ``r[i] = 1 * r[i-1] + x[i]``), in chunks
  of 512 whose ``initial`` is the previous chunk's last column.

Call them on NumPy arrays (``layernorm(x, gamma, beta, 1e-5)``, ``cumsum(x)``);
``test/python/test_isa_vector.py`` checks both against NumPy.
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def _broadcast_rows(dst, row, parts):
    """dst[parts, D] (fp32 SBUF) = row[1, D] repeated on every partition, via TensorE:
    ones[1, parts].T @ row[1, D], 512 columns (one PSUM bank) at a time."""
    d = row.shape[1]
    ones = nl.ndarray((1, parts), dtype=row.dtype, buffer=nl.sbuf)
    nisa.memset(dst=ones, value=1.0)
    bank = nl.tile_size.psum_bank_fmax
    for c in range((d + bank - 1) // bank):
        lo = c * bank
        n = min(bank, d - lo)
        ps = nl.ndarray((parts, n), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=ps, stationary=ones, moving=row[:, lo:lo + n])
        nisa.tensor_copy(dst=dst[:, lo:lo + n], src=ps)


@nki.jit
def layernorm(x, gamma, beta, eps):
    """out[R, D] = (x - mean) / sqrt(var + eps) * gamma + beta, statistics per row.

    x: [R, D] (fp32 or bf16), R <= 128 or a multiple of 128; gamma, beta: [1, D].
    The output has x's dtype.
    """
    rows, d = x.shape
    parts = min(rows, nl.tile_size.pmax)
    fmax = nl.tile_size.bn_stats_fmax
    n_chunks = (d + fmax - 1) // fmax
    out = nl.ndarray((rows, d), dtype=x.dtype, buffer=nl.shared_hbm)

    g_row = nl.ndarray((1, d), dtype=gamma.dtype, buffer=nl.sbuf)
    b_row = nl.ndarray((1, d), dtype=beta.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=g_row, src=gamma)
    nisa.dma_copy(dst=b_row, src=beta)
    g_all = nl.ndarray((parts, d), dtype=nl.float32, buffer=nl.sbuf)
    b_all = nl.ndarray((parts, d), dtype=nl.float32, buffer=nl.sbuf)
    _broadcast_rows(g_all, g_row, parts)
    _broadcast_rows(b_all, b_row, parts)

    for r in nl.affine_range(rows // parts):
        t = nl.ndarray((parts, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(r * parts, parts), :])
        stats = nl.ndarray((parts, n_chunks * 6), dtype=nl.float32, buffer=nl.sbuf)
        for c in range(n_chunks):
            lo = c * fmax
            n = min(fmax, d - lo)
            nisa.bn_stats(dst=stats[:, c * 6:(c + 1) * 6], data=t[:, lo:lo + n])
        mv = nl.ndarray((parts, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(dst=mv, data=stats)
        # rstd = 1 / sqrt(var + eps)
        std = nl.ndarray((parts, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=std, op=nl.sqrt, data=mv[:, 1:2], bias=eps)
        rstd = nl.ndarray((parts, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=rstd, data=std)
        # y = ((x - mean) * gamma) * rstd + beta
        xg = nl.ndarray((parts, d), dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=xg, data=t, op0=nl.subtract, operand0=mv[:, 0:1],
                                  op1=nl.multiply, operand1=g_all)
        y = nl.ndarray((parts, d), dtype=x.dtype, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=y, data=xg, op0=nl.multiply, operand0=rstd,
                                  op1=nl.add, operand1=b_all)
        nisa.dma_copy(dst=out[nl.ds(r * parts, parts), :], src=y)
    return out


@nki.jit
def cumsum(x):
    """out[R, N] (fp32) = np.cumsum(x, axis=1); x: [R, N], R <= 128 or a multiple of 128."""
    rows, n = x.shape
    parts = min(rows, nl.tile_size.pmax)
    chunk = 512
    out = nl.ndarray((rows, n), dtype=nl.float32, buffer=nl.shared_hbm)
    for r in nl.affine_range(rows // parts):
        t = nl.ndarray((parts, n), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(r * parts, parts), :])
        ones = nl.ndarray((parts, min(n, chunk)), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=ones, value=1.0)
        acc = nl.ndarray((parts, n), dtype=nl.float32, buffer=nl.sbuf)
        for c in range((n + chunk - 1) // chunk):
            lo = c * chunk
            w = min(chunk, n - lo)
            if c == 0:
                nisa.tensor_tensor_scan(dst=acc[:, lo:lo + w], data0=ones[:, 0:w],
                                        data1=t[:, lo:lo + w], initial=0.0,
                                        op0=nl.multiply, op1=nl.add)
            else:
                nisa.tensor_tensor_scan(dst=acc[:, lo:lo + w], data0=ones[:, 0:w],
                                        data1=t[:, lo:lo + w], initial=acc[:, lo - 1:lo],
                                        op0=nl.multiply, op1=nl.add)
        nisa.dma_copy(dst=out[nl.ds(r * parts, parts), :], src=acc)
    return out
