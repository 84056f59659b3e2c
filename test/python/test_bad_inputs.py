"""Inputs found by fuzzing that used to end in an internal error or a hang: each is now a
located user error (file:line:col of the kernel line that caused it)."""
import inspect

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIError


def _line(fn, text):
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, ln in enumerate(src) if text in ln)


@nki.jit
def runaway_power(a, n):
    k = 3
    big = k ** n
    return a


@nki.jit
def runaway_power_inplace(a, n):
    k = 7
    k **= n
    return a


@nki.jit
def runaway_shift(a, n):
    k = 1
    big = k << n
    return a


@nki.jit
def small_power(a, n):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(2 ** n + (1 << n)))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def huge_dim(a):
    t = nl.ndarray((128, 2 ** 64), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=0.0)
    return a


@nki.jit
def huge_scalar(a):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=1e39)
    nisa.dma_copy(dst=out, src=t)
    return out


X = np.ones((128, 64), np.float32)


@pytest.mark.parametrize("kernel, text", [(runaway_power, "k ** n"), (runaway_power_inplace, "k **= n"),
                                          (runaway_shift, "k << n")])
def test_runaway_integer_arithmetic_is_a_located_error(kernel, text):
    with pytest.raises(NKIError, match="compile-time evaluation error.*would be an integer of about") as exc:
        kernel(X, 10 ** 30)
    assert f"test_bad_inputs.py:{_line(kernel.fn, text)}:" in str(exc.value)


def test_guarded_operators_keep_their_value():
    np.testing.assert_array_equal(small_power(X, 5), X * 64)


def test_huge_dimension_is_a_located_capacity_error():
    with pytest.raises(NKIError, match="out of memory") as exc:
        huge_dim(X)
    assert f"test_bad_inputs.py:{_line(huge_dim.fn, '2 ** 64')}:" in str(exc.value)


def test_scalar_out_of_float32_range_is_located():
    with pytest.raises(NKIError, match="out of float32 range") as exc:
        huge_scalar(X)
    assert f"test_bad_inputs.py:{_line(huge_scalar.fn, '1e39')}:" in str(exc.value)


def test_unsupported_argument_dtype_is_located():
    with pytest.raises(NKIError, match="complex64 is not supported") as exc:
        small_power(np.ones((128, 64), np.complex64), 1)
    assert "test_bad_inputs.py:" in str(exc.value)


@nki.jit
def clamp_scalar(a, lo, hi):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.maximum, operand0=lo, op1=nl.minimum, operand1=hi)
    nisa.dma_copy(dst=out, src=t)
    return out


def test_scalar_rounding_to_float32_max_is_accepted():
    # -3.4028235e38 (float32's minimum as NumPy prints it) is slightly beyond the exact
    # float32 minimum as a Python float but rounds to it: a valid float32 scalar
    a = np.array([[-np.inf, -1.5, 0.0, 2.0, np.inf]] * 128, np.float32)
    want = np.clip(a, np.finfo(np.float32).min, np.finfo(np.float32).max)
    np.testing.assert_array_equal(clamp_scalar(a, -3.4028235e38, 3.4028235e38), want)
    below_overflow = np.nextafter(2.0 ** 128 - 2.0 ** 103, 0)  # still rounds to float32 max
    np.testing.assert_array_equal(clamp_scalar(a, -below_overflow, below_overflow), want)
    with pytest.raises(NKIError, match="out of float32 range"):
        clamp_scalar(a, -(2.0 ** 128 - 2.0 ** 103), 1.0)  # rounds to -inf


@nki.jit
def star_args_kernel(a, *rest):
    return a


def test_star_args_signature_is_a_located_syntax_error():
    from nki_mlir.errors import NKISyntaxError
    with pytest.raises(NKISyntaxError, match=r"kernel signatures cannot use '\*'") as exc:
        star_args_kernel(np.ones((128, 64), np.float32))
    assert "test_bad_inputs.py:" in str(exc.value)
