"""A helper module imported by trace_kernels.py (helpers run as plain Python)."""
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def load_rows(a, i, rows):
    t = nl.ndarray((rows, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[i * rows:(i + 1) * rows, :])
    return t


def bad_copy(dst, src):
    nisa.tensor_copy(dst=dst, src=src)  # bad_copy: HBM operands


def copy_tiles(dst, src, n):
    for i in nl.affine_range(n):  # copy_tiles loop
        t = nl.ndarray((128, src.shape[1]), src.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=src[i * 128:(i + 1) * 128, :])
        nisa.dma_copy(dst=dst[i * 128:(i + 1) * 128, :], src=t)
