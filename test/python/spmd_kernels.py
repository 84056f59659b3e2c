"""Beta 2 (``import nki``-style) kernels for test_spmd.py: LNC launches ``kernel[2]``,
program ids, cross-core ``core_barrier`` / ``sendrecv``, and their error cases.

Written for nki-mlir's tests (not copied from NKI samples).  Line-sensitive: the negative
tests look up the source lines by text.
"""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

ROWS = 128


@nki.jit
def lnc_scale(a):
    """out[pid half] = a[pid half] * (pid + 1) + 10 * num_programs() + 100 * program_ndim()."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    n = nl.num_programs()
    rows = a.shape[0] // n
    t = nl.ndarray((rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[pid * rows:(pid + 1) * rows, :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(pid + 1), op1=nl.add,
                       operand1=float(10 * n + 100 * nl.program_ndim()))
    nisa.dma_copy(dst=out[pid * rows:(pid + 1) * rows, :], src=t)
    return out


@nki.jit
def lnc_exchange(x):
    """Core pid: stage[pid half] = 2 x[pid half]; barrier; out[pid half] = stage[other half];
    sendrecv with the other core: swapped[pid half] = x[other half]."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    swapped = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    stage = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm, name="stage")
    pid = nl.program_id(0)
    other = 1 - pid
    mine = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=x[pid * ROWS:(pid + 1) * ROWS, :])
    dbl = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=dbl, data=mine, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=stage[pid * ROWS:(pid + 1) * ROWS, :], src=dbl)
    nisa.core_barrier(data=stage, cores=(0, 1))
    theirs = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=theirs, src=stage[other * ROWS:(other + 1) * ROWS, :])
    nisa.dma_copy(dst=out[pid * ROWS:(pid + 1) * ROWS, :], src=theirs)
    got = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.sendrecv(src=mine, dst=got, send_to_rank=other, recv_from_rank=other, pipe_id=0)
    nisa.dma_copy(dst=swapped[pid * ROWS:(pid + 1) * ROWS, :], src=got)
    return out, swapped


@nki.jit
def lnc_ring_gpsimd(x):
    """sendrecv over two pipes with gpsimd_dma: out[pid] = x[other] + x[pid] (int32)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    other = (pid + 1) % 2
    mine = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=mine, src=x[pid * ROWS:(pid + 1) * ROWS, :])
    got = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.sendrecv(src=mine, dst=got, send_to_rank=other, recv_from_rank=other, pipe_id=3,
                  dma_engine=nisa.dma_engine.gpsimd_dma)
    back = nl.ndarray((ROWS, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.sendrecv(src=got, dst=back, send_to_rank=other, recv_from_rank=other, pipe_id=1)
    nisa.tensor_tensor(dst=got, data1=got, data2=back, op=nl.add)
    nisa.dma_copy(dst=out[pid * ROWS:(pid + 1) * ROWS, :], src=got)
    return out


@nki.jit
def barrier_without_lnc(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)
    nisa.core_barrier(data=out, cores=(0, 1))  # LNC1: error
    return out


@nki.jit
def barrier_bad_cores(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)
    nisa.core_barrier(data=out, cores=(0, 2))  # cores: error
    return out


@nki.jit
def lonely_barrier(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)
    if nl.program_id(0) == 0:
        nisa.core_barrier(data=out, cores=(0, 1))  # core 1 never arrives
    return out


@nki.jit
def mismatched_waits(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    if nl.program_id(0) == 0:
        nisa.core_barrier(data=out, cores=(0, 1))  # core 0 waits here
    else:
        nisa.sendrecv(src=t, dst=r, send_to_rank=0, recv_from_rank=0, pipe_id=0)  # core 1 here
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def sendrecv_bad_rank(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.sendrecv(src=t, dst=t, send_to_rank=nl.program_id(0) + 1, recv_from_rank=0, pipe_id=0)  # rank 2
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def sendrecv_dtype_mismatch(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    r = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.sendrecv(src=t, dst=r, send_to_rank=1, recv_from_rank=1, pipe_id=0)  # dtypes differ
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def program_id_bad_axis(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)
    k = nl.program_id(axis=1)  # a 1-D launch has axis 0 only
    return out


@nki.jit
def copy_kernel(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def calls_gridded(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    y = copy_kernel[2](x)  # nested gridded launch: error
    return out
