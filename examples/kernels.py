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


@nki.jit
def layernorm(x, gamma, beta):
    """out = (x - mean) / sqrt(var + 1e-5) * gamma + beta, row-wise over the free axis.

    x: [R, F] fp32 with R a multiple of 128 and F <= 8192 (one SBUF row tile per 128 rows);
    gamma, beta: [1, F] fp32, broadcast over the partitions by a stride-0 DMA.
    var is the biased (population) variance, as torch.nn.LayerNorm.
    """
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.shared_hbm)
    g = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
    bt = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=g, src=gamma.ap([[0, 128], [1, cols]], offset=0))
    nisa.dma_copy(dst=bt, src=beta.ap([[0, 128], [1, cols]], offset=0))
    for r in nl.affine_range(rows // 128):
        t = nl.ndarray((128, cols), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(r * 128, 128), :])
        total = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=total, op=nl.add, data=t, axis=1, keepdims=True)
        mean = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=mean, data=total, op0=nl.multiply, operand0=1.0 / cols)
        xc = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=xc, data=t, op0=nl.subtract, operand0=mean)
        sq = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        ssq = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=sq, op=nl.square, data=xc, reduce_op=nl.add, reduce_res=ssq,
                        reduce_cmd=nisa.reduce_cmd.reset_reduce)
        var = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=var, data=ssq, op0=nl.multiply, operand0=1.0 / cols,
                           op1=nl.add, operand1=1e-5)
        rstd = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=rstd, op=nl.rsqrt, data=var)
        y = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=xc, op0=nl.multiply, operand0=rstd)
        yg = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=yg, data1=y, data2=g, op=nl.multiply)
        res = nl.ndarray((128, cols), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=res, data1=yg, data2=bt, op=nl.add)
        nisa.dma_copy(dst=out[nl.ds(r * 128, 128), :], src=res)
    return out


@nki.jit
def attention(q, k, v):
    """Single-head attention out = softmax(q @ k.T / sqrt(d)) @ v.

    q, k, v: [S, d] fp32 with S a multiple of 128 and S <= 2048 (a score row fits SBUF),
    d = 128 (the contraction of q @ k.T runs over the partitions).  Per 128-query tile:
    q^T and k^T come from TensorE transposes (PSUM), scores from nc_matmul in 128-key
    blocks, a row softmax (max on VectorE, exp with a running sum on ScalarE), then
    p^T blocks (TensorE transposes) times v blocks accumulated in one PSUM tile, scaled
    by 1/sum at the end.
    """
    seq, d = q.shape
    nblk = seq // 128
    out = nl.ndarray((seq, d), dtype=nl.float32, buffer=nl.shared_hbm)
    # k^T [d, S], built once: load 128 keys, transpose on TensorE, copy out of PSUM
    kt = nl.ndarray((d, seq), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(nblk):
        kb = nl.ndarray((128, d), dtype=k.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=kb, src=k[nl.ds(j * 128, 128), :])
        kbt = nl.ndarray((d, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=kbt, data=kb)
        nisa.tensor_copy(dst=kt[:, nl.ds(j * 128, 128)], src=kbt)
    for i in nl.affine_range(nblk):
        qb = nl.ndarray((128, d), dtype=q.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=qb, src=q[nl.ds(i * 128, 128), :])
        qbt_ps = nl.ndarray((d, 128), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=qbt_ps, data=qb)
        qbt = nl.ndarray((d, 128), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=qbt, src=qbt_ps)
        # scores [128 queries, S] = (q_i @ k^T) / sqrt(d)
        s = nl.ndarray((128, seq), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(nblk):
            sp = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=sp, stationary=qbt, moving=kt[:, nl.ds(j * 128, 128)])
            nisa.activation(dst=s[:, nl.ds(j * 128, 128)], op=nl.copy, data=sp,
                            scale=1.0 / (d ** 0.5))
        mx = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=mx, op=nl.maximum, data=s, axis=1, keepdims=True, negate=True)
        e = nl.ndarray((128, seq), dtype=nl.float32, buffer=nl.sbuf)
        total = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=s, bias=mx, reduce_op=nl.add, reduce_res=total,
                        reduce_cmd=nisa.reduce_cmd.reset_reduce)
        inv = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.reciprocal(dst=inv, data=total)
        # acc [128 queries, d] = sum_j e[:, block j] @ v[block j]
        acc = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.psum)
        for j in nl.affine_range(nblk):
            pt_ps = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(dst=pt_ps, data=e[:, nl.ds(j * 128, 128)])
            pt = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=pt, src=pt_ps)
            vb = nl.ndarray((128, d), dtype=v.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=vb, src=v[nl.ds(j * 128, 128), :])
            nisa.nc_matmul(dst=acc, stationary=pt, moving=vb)
        o = nl.ndarray((128, d), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=o, data=acc, op0=nl.multiply, operand0=inv)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=o)
    return out
