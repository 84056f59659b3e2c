"""Small Beta 2 kernels of our own for the seeded-fault tests (test_seeded_faults.py).

Each mixes engine queues (DMA, Vector, Scalar, GpSimd, Tensor) so the schedule has
cross-queue edges, and several have loops (affine, sequential), PSUM and tiles allocated
inside ``affine_range`` bodies (candidates for multi-buffering).  Shapes: [128*n, F] fp32.
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def pipeline_scale(x):
    """out = exp(x) * 2 + 1, in 128-row tiles: DMA -> ScalarE -> VectorE -> DMA per tile."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        t = nl.ndarray((128, cols), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(i * 128, 128), :])
        e = nl.ndarray((128, cols), nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=t)
        y = nl.ndarray((128, cols), nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=e, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=1.0)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=y)
    return out


@nki.jit
def seq_accumulate(x):
    """out[128, F] = sum over the 128-row tiles of x of tanh(tile): a sequential_range
    loop carrying an SBUF accumulator (a true loop-carried dependence)."""
    rows, cols = x.shape
    out = nl.ndarray((128, cols), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((128, cols), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for i in nl.sequential_range(rows // 128):
        t = nl.ndarray((128, cols), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(i * 128, 128), :])
        h = nl.ndarray((128, cols), nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=h, op=nl.tanh, data=t)
        nisa.tensor_tensor(dst=acc, data1=acc, data2=h, op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def psum_accumulate(a_t, b):
    """out[128, N] = a_t.T @ b for a_t [K, 128], b [K, N] (N <= 512) with K tiled by 128:
    matmuls accumulate in one PSUM tile over an affine_range, ScalarE copies it out."""
    k_dim, m = a_t.shape
    _, n = b.shape
    out = nl.ndarray((m, n), nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((m, n), nl.float32, buffer=nl.psum)
    for k in nl.affine_range(k_dim // 128):
        lhs = nl.ndarray((128, m), a_t.dtype, buffer=nl.sbuf)
        rhs = nl.ndarray((128, n), b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=lhs, src=a_t[nl.ds(k * 128, 128), :])
        nisa.dma_copy(dst=rhs, src=b[nl.ds(k * 128, 128), :])
        nisa.nc_matmul(dst=acc, stationary=lhs, moving=rhs)
    res = nl.ndarray((m, n), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=res, op=nl.copy, data=acc, scale=0.5)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def transpose_roundtrip(x):
    """out = x.T + 1 for x [128, 128]: TensorE transpose into PSUM, VectorE copies it to
    SBUF (GpSimd cannot read PSUM), then GpSimd adds 1."""
    p, f = x.shape
    out = nl.ndarray((f, p), nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    tp = nl.ndarray((f, p), nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=tp, data=t)
    ts = nl.ndarray((f, p), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=ts, src=tp, engine=nisa.engine.vector)
    y = nl.ndarray((f, p), nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=y, data=ts, op0=nl.add, operand0=1.0, engine=nisa.engine.gpsimd)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def iota_mix(x):
    """out = (x + ramp) * sigmoid(x), ramp[p, j] = j + 100 p built by GpSimd iota."""
    p, f = x.shape
    out = nl.ndarray((p, f), nl.float32, buffer=nl.shared_hbm)
    ramp_i = nl.ndarray((p, f), nl.int32, buffer=nl.sbuf)
    nisa.iota(dst=ramp_i, pattern=[[1, f]], offset=0, channel_multiplier=100)
    ramp = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=ramp, src=ramp_i)
    t = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    s = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=s, op=nl.sigmoid, data=t)
    u = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=u, data1=t, data2=ramp, op=nl.add)
    y = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=u, data2=s, op=nl.multiply)
    nisa.dma_copy(dst=out, src=y)
    return out


@nki.jit
def column_partials(x):
    """out[128, 1] = row sums of x [128, F] (F a multiple of 128): per 128-column chunk a
    VectorE reduce into column c of a partials tile, then one final reduce."""
    p, f = x.shape
    n = f // 128
    out = nl.ndarray((p, 1), nl.float32, buffer=nl.shared_hbm)
    parts = nl.ndarray((p, n), nl.float32, buffer=nl.sbuf)
    for c in nl.affine_range(n):
        t = nl.ndarray((p, 128), nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, nl.ds(c * 128, 128)])
        sq = nl.ndarray((p, 128), nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=sq, op=nl.square, data=t)
        nisa.tensor_reduce(dst=parts[:, nl.ds(c, 1)], op=nl.add, data=sq, axis=1, keepdims=True)
    total = nl.ndarray((p, 1), nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=total, op=nl.add, data=parts, axis=1, keepdims=True)
    nisa.dma_copy(dst=out, src=total)
    return out


@nki.jit
def reuse_tile(x):
    """out = 3 * exp(x) - 1 computed in place: one SBUF tile written by DMA, ScalarE and
    VectorE in turn (RAW, WAR and WAW on the same bytes across queues)."""
    p, f = x.shape
    out = nl.ndarray((p, f), nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.activation(dst=t, op=nl.exp, data=t)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=3.0, op1=nl.subtract,
                       operand1=1.0)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def nested_tiles(x):
    """out = relu(x) * x over a 2-D grid of [128, 256] tiles (two nested affine_range loops)."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        for j in nl.affine_range(cols // 256):
            t = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=x[nl.ds(i * 128, 128), nl.ds(j * 256, 256)])
            r = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
            nisa.activation(dst=r, op=nl.relu, data=t)
            y = nl.ndarray((128, 256), nl.float32, buffer=nl.sbuf)
            nisa.tensor_tensor(dst=y, data1=r, data2=t, op=nl.multiply)
            nisa.dma_copy(dst=out[nl.ds(i * 128, 128), nl.ds(j * 256, 256)], src=y)
    return out


@nki.jit
def matmul_bias(x, w, bias):
    """out = x @ w + bias for x [128, 128], w [128, 512], bias [128, 512]: PE transpose of
    x, matmul into PSUM, VectorE adds the bias reading PSUM directly."""
    m, k = x.shape
    _, n = w.shape
    out = nl.ndarray((m, n), nl.float32, buffer=nl.shared_hbm)
    xt_in = nl.ndarray((m, k), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt_in, src=x)
    xt_ps = nl.ndarray((k, m), nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=xt_ps, data=xt_in)
    xt = nl.ndarray((k, m), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=xt, src=xt_ps)
    wt = nl.ndarray((k, n), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=wt, src=w)
    bt = nl.ndarray((m, n), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=bt, src=bias)
    ps = nl.ndarray((m, n), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=ps, stationary=xt, moving=wt)
    y = nl.ndarray((m, n), nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=y, data1=ps, data2=bt, op=nl.add)
    nisa.dma_copy(dst=out, src=y)
    return out
