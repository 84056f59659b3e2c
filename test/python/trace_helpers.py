"""A helper module imported by trace_kernels.py (helpers run as plain Python)."""
import nki_mlir.isa as nisa
import nki_mlir.language as nl


def load_rows(a, i, rows):
    t = nl.ndarray((rows, a.shape[1]), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[i * rows:(i + 1) * rows, :])
    return t


def bad_copy(dst, src):
    nisa.tensor_copy(dst=dst, src=src)  # bad_copy: HBM operands
