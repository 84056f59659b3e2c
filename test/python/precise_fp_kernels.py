"""Kernels of our own whose bf16 / fp8 intermediates lose precision (used by
test_precise_fp.py): each loads ``x`` (float32), adds 1.0 into a tile of dtype ``dt``,
subtracts 1.0 again into a float32 tile and returns it, so a value below the dtype's
precision near 1 survives only when the intermediate tile is stored without rounding
(``NKI_PRECISE_FP=0``)."""
import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

DTYPES = {"bfloat16": nl.bfloat16, "float8_e4m3": nl.float8_e4m3,
          "float8_e5m2": nl.float8_e5m2, "int32": nl.int32, "float32": nl.float32}


@nki.jit
def add_sub(x, dt: str, out_dt: str = "float32"):
    """``(x + 1) - 1`` through an SBUF tile of dtype ``dt``, returned as ``out_dt``."""
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    m = nl.ndarray(x.shape, dtype=DTYPES[dt], buffer=nl.sbuf)
    nisa.tensor_scalar(dst=m, data=t, op0=nl.add, operand0=1.0)
    r = nl.ndarray(x.shape, dtype=DTYPES[out_dt], buffer=nl.sbuf)
    nisa.tensor_scalar(dst=r, data=m, op0=nl.subtract, operand0=1.0)
    out = nl.ndarray(x.shape, dtype=DTYPES[out_dt], buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def copy_chain(x):
    """``x`` (float32) -> bf16 tile (tensor_copy) -> private HBM bf16 (DMA) -> SBUF bf16 ->
    float32 output: every hop is a bf16 store."""
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    b = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=b, src=t)
    h = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.private_hbm)
    nisa.dma_copy(dst=h, src=b)
    b2 = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=b2, src=h)
    r = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=b2)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=r)
    return out


@nki.jit
def big_bf16_tile(x):
    """``x`` [128, 32000] float32 in SBUF (125 KiB of each partition) and a bf16 tile of
    its shape (62.5 KiB) holding ``x + 1``, minus 1 into the output: 187.5 KiB fit trn2's
    208 usable KiB, while a float32 tile in place of the bf16 one would not (250 KiB)."""
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    m = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=m, data=t, op0=nl.add, operand0=1.0)
    nisa.tensor_scalar(dst=t, data=m, op0=nl.subtract, operand0=1.0)
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def bitcast_bf16(x):
    """``x`` (float32) -> bf16 tile, its bits read as int16 (``view``)."""
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    b = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=b, src=t)
    v = b.view(nl.int16)
    out = nl.ndarray(x.shape, dtype=nl.int16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=v)
    return out


@nki.jit
def psum_reshape(x, k: int):
    """``x`` [n, 128] bf16 transposed into a bf16 PSUM tile, read back through a reshape
    of it to [128, k, n // k] (a ``memref.reinterpret_cast`` of the tile and of its
    matmul-written flags) plus 1/1024, returned as float32."""
    n = x.shape[0]
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    ps = nl.ndarray((128, n), dtype=nl.bfloat16, buffer=nl.psum)
    nisa.nc_transpose(ps, t)
    shape = (128, k, n // k)
    r = nl.ndarray(shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=r, data=ps.reshape(shape), op0=nl.add, operand0=2.0 ** -10)
    f = nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=f, src=r)
    out = nl.ndarray(shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=f)
    return out


@nki.jit
def returns_a_view(x):
    """``x`` [128, 8] float32 DMA'd into a bf16 output, returned through a reshape of it."""
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    out = nl.ndarray((128, 8), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out.reshape((128, 2, 4))
