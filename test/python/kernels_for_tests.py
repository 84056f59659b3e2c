"""Small Beta 2 kernels of our own used by the pytest suite (kept in a file: the frontend
reads kernel source)."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(b.shape, b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    tc = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=nl.add)
    nisa.dma_copy(dst=out, src=tc)
    return out


def _scale_into(dst, src, factor):
    """A helper: inlined at each call."""
    nisa.tensor_scalar(dst=dst, data=src, op0=nl.multiply, operand0=factor)


@nki.jit
def scaled_rows(x, factor, n_chunks):
    """out = x * factor; x is [128, 512*n_chunks]; a Python range loop (unrolled) over chunks."""
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    print("compiling scaled_rows with factor", factor)
    for c in range(n_chunks):
        t = nl.ndarray((128, 512), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, c * 512:(c + 1) * 512])
        y = nl.ndarray((128, 512), nl.float32, buffer=nl.sbuf)
        _scale_into(y, t, factor)
        nisa.dma_copy(dst=out[:, nl.ds(c * 512, 512)], src=y)
    return out


@nki.jit
def loop_copy(x):
    """A copy through SBUF in nl.affine_range steps of 128 rows."""
    rows, cols = x.shape
    out = nl.ndarray((rows, cols), x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        t = nl.ndarray((128, cols), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(i * 128, 128), :])
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=t)
    return out


@nki.jit
def two_outputs(x):
    """Returns (exp(x), sum over the free axis of exp(x)) via activation + reduce_res."""
    p, f = x.shape
    y_out = nl.ndarray((p, f), nl.float32, buffer=nl.shared_hbm)
    s_out = nl.ndarray((p, 1), nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    y = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    s = nl.ndarray((p, 1), nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=y, op=nl.exp, data=t, reduce_op=nl.add, reduce_res=s)
    nisa.dma_copy(dst=y_out, src=y)
    nisa.dma_copy(dst=s_out, src=s)
    return y_out, s_out


@nki.jit
def sugar(a, b):
    """NKI 0.3 wrappers: out = exp(a) * b + a."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    ta = nl.load(a)
    e = nl.exp(ta)
    m = nl.multiply(e, nl.load(b))
    nl.store(out, value=nl.add(m, ta))
    return out


@nki.jit
def transpose_matmul(x, w):
    """out = x @ w with x [128, 128] and w [128, 512] via nl.matmul (inserts a PE transpose)."""
    out = nl.ndarray((x.shape[0], w.shape[1]), nl.float32, buffer=nl.shared_hbm)
    r = nl.matmul(nl.load(x), nl.load(w))
    nl.store(out, value=r)
    return out


@nki.jit
def iota_memset(x):
    """(iota ramp as int32, x transposed on TensorE, zeros via nl.zeros + copy)."""
    p, f = x.shape
    ramp_out = nl.ndarray((p, f), nl.int32, buffer=nl.shared_hbm)
    tr_out = nl.ndarray((f, p), nl.float32, buffer=nl.shared_hbm)
    ramp = nl.ndarray((p, f), nl.int32, buffer=nl.sbuf)
    nisa.iota(dst=ramp, pattern=[[1, f]], offset=5, channel_multiplier=1000)
    nisa.dma_copy(dst=ramp_out, src=ramp)
    t = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    tp = nl.ndarray((f, p), nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=tp, data=t)
    ts = nl.zeros((f, p), nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=ts, data1=ts, data2=tp, op=nl.add)
    nisa.dma_copy(dst=tr_out, src=ts)
    return ramp_out, tr_out


@nki.jit
def lazy_initialization_in_beta2(a):
    """Beta 2 has no lazy_initialization= keyword (a Beta 1 hint): a located error."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.zeros(a.shape, dtype=a.dtype, buffer=nl.sbuf, lazy_initialization=True)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def lnc_matmul(x, w):
    """out[:, pid half] = x.T @ w[:, pid half] on LNC2 (``lnc_matmul[2]``): x [128, 128] and
    w [128, 1024] float32, each instance one nc_matmul of a 512-column half."""
    half = w.shape[1] // nl.num_programs()
    pid = nl.program_id(0)
    out = nl.ndarray((x.shape[0], w.shape[1]), nl.float32, buffer=nl.shared_hbm)
    xt = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    wt = nl.ndarray((w.shape[0], half), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=wt, src=w[:, pid * half:(pid + 1) * half])
    acc = nl.ndarray((x.shape[1], half), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=xt, moving=wt)
    res = nl.ndarray((x.shape[1], half), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out[:, pid * half:(pid + 1) * half], src=res)
    return out
