"""Beta 1 constructs real public kernels use, checked numerically against NumPy with our own
kernels (beta1_gap_kernels.py)."""
import numpy as np
import pytest

import beta1_gap_kernels as K
import nki_mlir as nki
from nki_mlir.errors import NKIVerifyError


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def test_where_with_unsigned_scalar(rng):
    c = rng.standard_normal((128, 64)).astype(np.float32)
    a = rng.integers(0, 2**32, size=(128, 64), dtype=np.uint32)
    out = nki.simulate_kernel(K.where_unsigned_scalar, c, a)
    assert out.dtype == np.uint32
    np.testing.assert_array_equal(out, np.where(c > 0, a, np.uint32(3000000000)))


def test_zeros_of_unsigned_dtype(rng):
    a = rng.integers(0, 256, size=(128, 32), dtype=np.uint8)
    out = nki.simulate_kernel(K.zeros_uint8_plus, a)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, a)


def test_tensor_tensor_broadcasts_a_column(rng):
    a = rng.standard_normal((128, 96)).astype(np.float32)
    s = rng.standard_normal((128, 1)).astype(np.float32)
    o1, o2 = nki.simulate_kernel(K.tensor_tensor_column, a, s)
    np.testing.assert_array_equal(o1, a - s)
    np.testing.assert_array_equal(o2, s - a)


def test_tensor_tensor_broadcasts_a_block_column(rng):
    a = rng.standard_normal((128, 4, 16)).astype(np.float32)
    s = rng.standard_normal((128, 2)).astype(np.float32)
    out = nki.simulate_kernel(K.tensor_tensor_column_3d, a, s)
    np.testing.assert_array_equal(out, a * s[:, 1, None, None])


def test_loop_reduce_masked_in_a_helper(rng):
    a = rng.standard_normal((4, 128, 64)).astype(np.float32)
    out = nki.simulate_kernel(K.prefix_sums_in_helper, a)
    want = np.cumsum(a, axis=0)
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_loop_reduce_masked_rows_and_rebinding_helper(rng):
    a = rng.standard_normal((4, 128, 64)).astype(np.float32)
    out, full = nki.simulate_kernel(K.max_in_helper_masked_rows, a)
    want = a[0].copy()
    want[:100] = a[:, :100].max(axis=0)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(full, a.max(axis=0))
    # the helper rebinding the accumulator returns the same proxy: the loop stays rolled
    from nki_mlir.frontend.trace_build import last_loop_report
    nki.compile(K.max_in_helper_masked_rows, a, use_cache=False)
    assert [how for how, _ in last_loop_report().values()] == ["rolled"], last_loop_report()


def _line_of(marker: str) -> int:
    return next(i for i, line in enumerate(open(K.__file__), 1) if f"# {marker}" in line)


@pytest.mark.parametrize("kernel, marker, free", [(K.tensor_tensor_two_columns, "TWO_COLUMNS", 2),
                                                  (K.tensor_tensor_column_beta2, "BETA2_COLUMN", 1)])
def test_tensor_tensor_other_shapes_still_rejected(rng, kernel, marker, free):
    a = rng.standard_normal((128, 64)).astype(np.float32)
    s = rng.standard_normal((128, free)).astype(np.float32)
    with pytest.raises(NKIVerifyError) as info:
        nki.simulate_kernel(kernel, a, s)
    msg = str(info.value)
    assert f"beta1_gap_kernels.py:{_line_of(marker)}:" in msg
    assert "nisa.tensor_tensor: per-partition element counts differ" in msg
    assert f"'data2' is [128, {free}] float32" in msg
