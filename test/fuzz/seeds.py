"""Seed kernels of the frontend fuzzer (our own, small so a case compiles in milliseconds).

``SEEDS`` maps a kernel name to its argument specs: ``(shape, dtype)`` for a tensor or a
plain value for a compile-time constant.  The fuzzer mutates this file's source text (one
kernel at a time) and calls the mutated kernel with these arguments.
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def scale_rows(a, factor):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=factor)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def add_tiles(a, b):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(b.shape, b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    nisa.tensor_tensor(dst=ta, data1=ta, data2=tb, op=nl.add)
    nisa.dma_copy(dst=out, src=ta)
    return out


@nki.jit
def small_matmul(a_t, b):
    out = nl.ndarray((a_t.shape[1], b.shape[1]), nl.float32, buffer=nl.shared_hbm)
    ta = nl.ndarray(a_t.shape, a_t.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(b.shape, b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a_t)
    nisa.dma_copy(dst=tb, src=b)
    acc = nl.ndarray((a_t.shape[1], b.shape[1]), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=ta, moving=tb)
    res = nl.ndarray((a_t.shape[1], b.shape[1]), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def row_sum(x):
    out = nl.ndarray((x.shape[0], 1), nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    s = nl.ndarray((x.shape[0], 1), nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, data=t, op=nl.add, axis=1)
    nisa.dma_copy(dst=out, src=s)
    return out


@nki.jit
def exp_tiles(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    tiles = []
    for j in range(x.shape[1] // 64):
        t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, j * 64:(j + 1) * 64])
        nisa.activation(dst=t, op=nl.exp, data=t)
        tiles.append(t)
    for j, t in enumerate(tiles):
        nisa.dma_copy(dst=out[:, j * 64:(j + 1) * 64], src=t)
    return out


@nki.jit
def ragged_copy(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    n = x.shape[0]
    for i in range(0, n, 128):
        rows = min(128, n - i)
        t = nl.ndarray((128, x.shape[1]), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t[0:rows, :], src=x[i:i + rows, :])
        if i % 256 == 0:
            nisa.tensor_scalar(dst=t[0:rows, :], data=t[0:rows, :], op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[i:i + rows, :], src=t[0:rows, :])
    return out


@nki.jit
def lang_softmax(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    m = nl.max(t, axis=1, keepdims=True)
    e = nl.exp(nl.subtract(t, m))
    s = nl.sum(e, axis=1, keepdims=True)
    nl.store(out, value=nl.divide(e, s))
    return out


SEEDS = {
    "scale_rows": [((256, 64), "float32"), 2.0],
    "add_tiles": [((128, 64), "float32"), ((128, 64), "float32")],
    "small_matmul": [((128, 64), "bfloat16"), ((128, 32), "bfloat16")],
    "row_sum": [((128, 96), "float32")],
    "exp_tiles": [((128, 192), "float32")],
    "ragged_copy": [((300, 32), "float32")],
    "lang_softmax": [((128, 64), "float32")],
}
