"""An ``@nki.jit`` kernel called from inside another kernel runs inline, like a plain
helper (nki-library's test wrappers call its ``@nki.jit`` kernels this way); a launched one
(``k[2](...)``) stays an error (test_spmd.py::test_nested_gridded_kernel)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def scale_into(x, out, factor):
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=factor)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def scaled_copy(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def wrapper(x):
    """Calls two @nki.jit kernels: one returns a new HBM tensor, one writes ``out``."""
    y = scaled_copy(x)
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    r = scale_into(y, out, factor=3.0)
    return r, y




def test_jit_kernel_called_inside_a_kernel_runs_inline():
    x = np.arange(128 * 32, dtype=np.float32).reshape(128, 32)
    r, y = wrapper(x)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(r, 3 * x)


def test_the_sub_kernel_still_runs_on_its_own():
    x = np.ones((128, 32), np.float32)
    np.testing.assert_array_equal(scaled_copy(x), x)
    out = scale_into(x, np.zeros_like(x), 2.0)
    np.testing.assert_array_equal(out, 2 * x)
