"""Kernels whose SBUF tensors do not all fit at once (test_spill.py): spilling keeps some of
them in HBM between their uses."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

W = 512


@nki.jit
def chunk_sums(x, y):
    """``x + y`` for ``[128, F]`` fp32 inputs loaded whole, summed ``W`` columns at a time.
    Both inputs stay live over the loop: 2 * F * 4 bytes per partition."""
    parts, free = x.shape
    out = nl.ndarray((parts, free), dtype=x.dtype, buffer=nl.shared_hbm)
    xs = nl.ndarray((parts, free), dtype=x.dtype, buffer=nl.sbuf)
    ys = nl.ndarray((parts, free), dtype=y.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xs, src=x)
    nisa.dma_copy(dst=ys, src=y)
    for i in nl.affine_range(free // W):
        t = nl.ndarray((parts, W), dtype=x.dtype, buffer=nl.sbuf)
        nisa.tensor_tensor(dst=t, data1=xs[:, nl.ds(i * W, W)], data2=ys[:, nl.ds(i * W, W)],
                           op=nl.add)
        nisa.dma_copy(dst=out[:, nl.ds(i * W, W)], src=t)
    return out


@nki.jit
def running_total(x, STEPS=3):
    """``out = STEPS * x`` (``[128, F]`` fp32), accumulated in an SBUF tensor: each step
    loads ``x`` into a fresh tensor as large as the accumulator and adds it on."""
    parts, free = x.shape
    out = nl.ndarray((parts, free), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((parts, free), dtype=x.dtype, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for s in nl.sequential_range(STEPS):
        t = nl.ndarray((parts, free), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x)
        for i in nl.affine_range(free // W):
            nisa.tensor_tensor(dst=acc[:, nl.ds(i * W, W)], data1=acc[:, nl.ds(i * W, W)],
                               data2=t[:, nl.ds(i * W, W)], op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def products_read_late(a, b, N=12, LATE=True):
    """``exp(0.01 * 2 * a.T @ b[:, i*W:(i+1)*W])`` per output tile ``i < N`` (``a`` ``[K, M]``,
    ``b`` ``[K, N*W]`` fp32), each product accumulated by two matmuls in its own ``[M, W]``
    float32 PSUM tensor.  ``LATE``: every product is read after the last matmul (``N`` PSUM
    banks live at once: more than 8 do not fit); else each right after its own."""
    K, M = a.shape
    out = nl.ndarray((M, N * W), dtype=nl.float32, buffer=nl.shared_hbm)
    a_sb = nl.ndarray((K, M), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_sb, src=a)
    b_sb = nl.ndarray((K, N * W), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_sb, src=b)
    ps = []
    for i in range(N):
        p = nl.ndarray((M, W), dtype=nl.float32, buffer=nl.psum)
        for _ in range(2):
            nisa.nc_matmul(dst=p, stationary=a_sb, moving=b_sb[:, i * W:(i + 1) * W])
        ps.append(p)
        if not LATE:
            _exp_out(out, p, i)
    if LATE:
        for i in range(N):
            _exp_out(out, ps[i], i)
    return out


def _exp_out(out, p, i):
    s = nl.ndarray(p.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=s, op=nl.exp, data=p, scale=0.01)
    nisa.dma_copy(dst=out[:, i * W:(i + 1) * W], src=s)
