"""Kernels with one mistake each, for the diagnostics tests (line numbers matter)."""
import nki_mlir as nki
import nki_mlir.language as nl
import nki_mlir.isa as nisa


@nki.jit
def iter_tensor(a):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    for row in t:
        pass
    return a


@nki.jit
def uses_is(a):
    if a.dtype is nl.float32:
        pass
    return a


@nki.jit
def uses_lambda(a):
    f = lambda x: x + 1
    return a


@nki.jit
def big_partition(a):
    t = nl.ndarray((256, 512), dtype=nl.float32, buffer=nl.sbuf)
    return a


@nki.jit
def psum_input(a):
    s = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
    m = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    d = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=d, stationary=s, moving=m)
    return a


@nki.jit
def moving_too_big(a):
    s = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.sbuf)
    m = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.sbuf)
    d = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=d, stationary=s, moving=m)
    return a


@nki.jit(spill=False)  # with spilling (the default) big is kept in HBM: test_spill.py
def overflow(a):
    out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    big = nl.ndarray((128, 40000), dtype=nl.float32, buffer=nl.sbuf)
    big2 = nl.ndarray((128, 40000), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=big, value=0.0)
    nisa.memset(dst=big2, value=0.0)
    nisa.dma_copy(dst=out, src=big[:, 0:512])
    nisa.dma_copy(dst=out, src=big2[:, 0:512])
    return out


@nki.jit
def tensor_float(a):
    t = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
    if float(t) > 0:
        pass
    return a



@nki.jit
def takes_shape(a, shape):
    return a
