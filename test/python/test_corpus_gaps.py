"""Constructs real public NKI kernels use, checked numerically against NumPy with our own
kernels (test_corpus_gaps_kernels.py)."""
import ml_dtypes
import numpy as np
import pytest

import test_corpus_gaps_kernels as K
import nki_mlir as nki


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_tensor_copy_accepts_legacy_dtype(rng):
    a = rng.standard_normal((128, 64)).astype(ml_dtypes.bfloat16)
    out = nki.simulate(K.copy_with_legacy_dtype)(a)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, a.astype(np.float32))


def test_reshape_shape_keyword(rng):
    a = rng.standard_normal((4, 6, 8)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(K.reshape_keyword, a), a.reshape(4, 48))


def test_reduction_over_non_trailing_axes(rng):
    a = rng.standard_normal((8, 3, 5, 2, 6)).astype(np.float32)
    s, m = nki.simulate_kernel(K.sum_middle_axes, a)
    np.testing.assert_allclose(s, a.sum(axis=(2, 4)), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(m, a.max(axis=1, keepdims=True))


def test_partition_broadcast_wider_than_one_matmul(rng):
    row = rng.standard_normal((1, 1300)).astype(np.float32)
    x = rng.standard_normal((128, 1300)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(K.wide_partition_broadcast, row, x), x + row)


def test_matmul_with_psum_operand(rng):
    a = rng.standard_normal((64, 128)).astype(np.float32)
    b = rng.standard_normal((96, 128)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate_kernel(K.matmul_psum_operand, a, b), a @ b.T,
                               rtol=1e-4, atol=1e-4)


def test_masked_call_assigned_in_loop(rng):
    a = rng.standard_normal((128, 400)).astype(np.float32)
    want = np.stack([a[:, :256].max(1), a[:, 256:400].max(1)], axis=1)
    np.testing.assert_array_equal(nki.simulate_kernel(K.masked_stats_in_loop, a), want)


def test_lazy_initialization_is_a_hint(rng):
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 128)).astype(np.float32)
    np.testing.assert_allclose(nki.simulate_kernel(K.lazy_initialized_accumulators, a, b),
                               a @ b.T + 2.0, rtol=1e-4, atol=1e-4)


def test_lazy_initialization_is_beta1_only(rng):
    import kernels_for_tests as K2
    from nki_mlir.errors import NKITypeError
    with pytest.raises(NKITypeError, match="unexpected keyword argument 'lazy_initialization'") as e:
        nki.simulate(K2.lazy_initialization_in_beta2)(np.zeros((128, 8), np.float32))
    assert "kernels_for_tests.py:" in str(e.value)


@pytest.mark.parametrize("use_gate", [True, False])
def test_loop_condition_and_a_flag(rng, use_gate):
    a = rng.standard_normal((512, 64)).astype(np.float32)
    want = np.zeros_like(a)
    if use_gate:
        want[:256] = 2.0 * a[:256]
    np.testing.assert_array_equal(nki.simulate_kernel(K.gated_tiles, a, 2, use_gate), want)
