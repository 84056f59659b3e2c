"""Arguments as a test harness passes them: a non-contiguous NumPy array or torch tensor
(transposed, strided) runs as a contiguous copy written back after the run, so a kernel
that views an argument's storage (``reshape`` / ``ap``) reads the logical values and an
in-place output reaches the caller; a launch ``k[2](...)`` of torch tensors returns torch."""
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def via_ap(x):
    """out = x, read through x.ap(...) (a view of x's storage)."""
    p, f = x.shape
    t = nl.ndarray((p, f), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap([[f, p], [1, f]]))
    out = nl.ndarray((p, f), x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def double_into(x, out):
    """out (an in-place output argument) = 2 * x, written through out.reshape(...)."""
    p, f = x.shape
    t = nl.ndarray((p, f), x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out.reshape((p, f)), src=t)
    return out


BASE = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)


def test_transposed_input_through_a_storage_view():
    x = BASE.T                              # [128, 64], not C-contiguous
    assert not x.flags.c_contiguous
    np.testing.assert_array_equal(via_ap(x), x)


def test_strided_in_place_output_is_written_back():
    big = np.zeros((128, 128), np.float32)
    out = big[:, ::2]                       # [128, 64] every other column
    x = BASE.T.copy()
    r = double_into(x, out)
    np.testing.assert_array_equal(big[:, ::2], 2 * x)
    np.testing.assert_array_equal(big[:, 1::2], 0)
    np.testing.assert_array_equal(r, 2 * x)


def test_launched_kernel_writes_back_too():
    big = np.zeros((128, 128), np.float32)
    x = BASE.T.copy()
    double_into[2](x, big[:, ::2])
    np.testing.assert_array_equal(big[:, ::2], 2 * x)


def test_read_only_noncontiguous_input_is_left_alone():
    x = BASE.T
    x.flags.writeable = False
    np.testing.assert_array_equal(via_ap(x), BASE.T)


def test_torch_noncontiguous_and_launched():
    torch = pytest.importorskip("torch")
    x = torch.arange(64 * 128, dtype=torch.float32).reshape(64, 128).t()
    y = via_ap(x)
    assert isinstance(y, torch.Tensor) and y.shape == x.shape and y.dtype == x.dtype
    assert torch.equal(y, x)
    out = torch.zeros(128, 128)[:, ::2]
    r = double_into[2](x.contiguous(), out)
    assert isinstance(r, torch.Tensor)
    assert torch.equal(out, 2 * x)
