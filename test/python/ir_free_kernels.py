"""A small kernel of our own for test_program_holds_no_ir.py (kept in a file: the frontend
reads kernel source): a rolled loop over row blocks, views of the arguments, a matmul into
PSUM, an activation and vector ops."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def rolled_mix(x, w):
    """out[rows] = exp(x[rows] @ w) + 1 per block of 128 rows (x is [n*128, 128])."""
    rows, k = x.shape
    out = nl.ndarray((rows, w.shape[1]), nl.float32, buffer=nl.shared_hbm)
    tw = nl.ndarray(w.shape, w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tw, src=w)
    for i in nl.sequential_range(rows // 128):
        t = nl.ndarray((128, k), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[nl.ds(i * 128, 128), :])
        tt = nl.ndarray((k, 128), nl.float32, buffer=nl.psum)
        nisa.nc_transpose(dst=tt, data=t)
        ts = nl.ndarray((k, 128), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=ts, src=tt)
        acc = nl.ndarray((128, w.shape[1]), nl.float32, buffer=nl.psum)
        nisa.nc_matmul(dst=acc, stationary=ts, moving=tw)
        e = nl.ndarray((128, w.shape[1]), nl.float32, buffer=nl.sbuf)
        nisa.activation(dst=e, op=nl.exp, data=acc)
        y = nl.ndarray((128, w.shape[1]), nl.float32, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=y, data=e, op0=nl.add, operand0=1.0)
        nisa.dma_copy(dst=out[nl.ds(i * 128, 128), :], src=y)
    return out


@nki.jit
def dynamic_rows(x, which):
    """out[j] = row block which[0, 0] + j of x [8, 4, 16], for j in 0..1 (a dynamic DMA
    address in a rolled loop: out of bounds, a located run-time error)."""
    idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=idx, src=which)
    out = nl.ndarray((2, 4, 16), x.dtype, buffer=nl.shared_hbm)
    for j in nl.sequential_range(2):
        t = nl.ndarray((4, 16), x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x.ap([[16, 4], [1, 16]], offset=j * 64, scalar_offset=idx,
                                      indirect_dim=0))
        nisa.dma_copy(dst=out[j], src=t)
    return out
