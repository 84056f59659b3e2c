"""Our own NKI Beta 1 kernels with ``mask=`` stores for test_output_coverage.py."""
from nki_mlir import compat

compat.install()

import neuronxcc.nki as nki  # noqa: E402
import neuronxcc.nki.language as nl  # noqa: E402


@nki.jit
def ragged_store(x, short):
    """out = x over [n, F] in 128-row tiles, the last tile partial; with ``short`` rows the
    store's mask stops ``short`` rows before the end (those rows are never written)."""
    n, f = x.shape
    out = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.shared_hbm)  # ALLOC_RAGGED
    i_f = nl.arange(f)[None, :]
    for t in nl.affine_range((n + 127) // 128):
        i_p = t * 128 + nl.arange(128)[:, None]
        a = nl.load(x[i_p, i_f], mask=(i_p < n))
        nl.store(out[i_p, i_f], value=a, mask=(i_p < n - short))
    return out


@nki.jit
def lower_triangle(x):
    """Only the lower triangle (row >= column) of a [128, 128] output is stored."""
    out = nl.ndarray((128, 128), dtype=x.dtype, buffer=nl.shared_hbm)  # ALLOC_TRIANGLE
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(128)[None, :]
    a = nl.load(x[i_p, i_f])
    nl.store(out[i_p, i_f], value=a, mask=(i_p - i_f >= 0))
    return out
