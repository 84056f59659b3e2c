"""Small kernels with one mistake each, for the Diagnostics page (docs/snippets/diagnostics.py)."""
import nki_mlir as nki
import nki_mlir.language as nl
import nki_mlir.isa as nisa


@nki.jit
def hbm_operand(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=t, data1=a, data2=a, op=nl.add)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def too_wide(a, b):
    out = nl.ndarray((128, 1024), nl.float32, buffer=nl.shared_hbm)
    s = nl.ndarray((128, 128), nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((128, 1024), nl.float32, buffer=nl.sbuf)
    d = nl.ndarray((128, 1024), nl.float32, buffer=nl.psum)
    nisa.dma_copy(dst=s, src=a)
    nisa.dma_copy(dst=m, src=b)
    nisa.nc_matmul(dst=d, stationary=s, moving=m)
    nisa.dma_copy(dst=out, src=d)
    return out


@nki.jit
def too_big(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 60000), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def bad_address(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((64, 512), nl.float32, buffer=nl.sbuf, address=(32, 0))
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def asserts(a):
    assert a.shape[0] <= 128, "one tile of rows only"
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    return out


@nki.jit
def raises(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    raise ValueError("unsupported shape")


@nki.jit
def evaluates(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    n = a.shape[0] // 0
    return out


@nki.jit
def starargs(*tensors):
    return tensors[0]


@nki.jit
def never_written(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    return out


@nki.jit
def log_of_zero(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.activation(dst=t, op=nl.log, data=t)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def oob(a, idx):
    out = nl.ndarray((128, 64), a.dtype, buffer=nl.shared_hbm)
    i = nl.ndarray((128, 1), nl.int32, buffer=nl.sbuf)
    t = nl.ndarray((128, 64), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=i, src=idx)
    nisa.dma_copy(dst=t, src=a.ap([[64, 128], [1, 64]], offset=0, vector_offset=i, indirect_dim=0))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def shape_mismatch(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 256), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def bad_dtype(a):
    out = nl.ndarray(a.shape, "float99", buffer=nl.shared_hbm)
    return out


@nki.jit
def python_value(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    for i in range(t):
        nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def token_call(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    u = nl.prelu(t)
    nisa.dma_copy(dst=out, src=u)
    return out


@nki.jit
def scale_rows(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128):
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.activation(dst=t, op=nl.exp, data=t)
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out


@nki.jit
def undefined_name(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=tile)
    return out


@nki.jit
def last_tile_missed(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 128 - 1):     # one tile short
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, :], src=t)
    return out
