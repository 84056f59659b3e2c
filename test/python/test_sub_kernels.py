"""An ``@nki.jit`` kernel called from inside another kernel runs inline, like a plain
helper (nki-library's test wrappers call its ``@nki.jit`` kernels this way); a launched one
(``k[2](...)``) stays an error (test_spmd.py::test_nested_gridded_kernel)."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import trace_build


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


def copy_rows(dst, src, n):
    """A plain helper that only a sub-kernel names: 4 row tiles, one DMA pair each."""
    for i in range(n):
        t = nl.ndarray((32, src.shape[1]), src.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=src[i * 32:(i + 1) * 32, :])
        nisa.dma_copy(dst=dst[i * 32:(i + 1) * 32, :], src=t)


@nki.jit
def rows_kernel(x):
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    copy_rows(out, x, x.shape[0] // 32)
    return out


@nki.jit
def calls_rows_kernel(x):
    return rows_kernel(x)


def test_helpers_of_a_sub_kernel_keep_their_loops_rolled():
    """The outer kernel names only the sub-kernel (a ``Kernel`` object): the helpers the
    sub-kernel's function reaches get their loops rewritten too, so ``copy_rows``' loop
    stays one ``scf.for`` body instead of running as a plain Python loop (unrolled)."""
    x = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
    np.testing.assert_array_equal(calls_rows_kernel(x), x)
    line = copy_rows.__code__.co_firstlineno + 2
    decisions = {k: v for k, v in trace_build.last_loop_report().items()
                 if k.startswith(f"{__file__}:{line}:")}
    assert [what for what, _ in decisions.values()] == ["rolled"], \
        trace_build.last_loop_report()
