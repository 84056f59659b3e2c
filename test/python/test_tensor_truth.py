"""A tensor's truth value in an NKI 0.x kernel is Python's default for an object (always
true), as for AWS's ``NkiTensor``, which defines no ``__bool__``: kernels test an optional
tensor argument with ``if bias:`` (their compiler rejects ``is None``).  Beta 1 tiles keep
the located error (test_beta1_errors.py, lit frontend/invalid/tensor_if.py)."""
from dataclasses import dataclass

import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl


@nki.jit
def add_optional(a, bias=None):
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    if bias:
        b = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=b, src=bias)
        nisa.tensor_tensor(dst=t, data1=t, data2=b, op=nl.add)
    if not bias:                      # `not` and `and` follow the same truth
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=bias and t or t)
    return out


@dataclass
class Params:
    scale: object = None


@nki.jit
def scale_if_given(a, s):
    p = Params(scale=s)
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    if p.scale:
        u = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=u, src=p.scale)
        nisa.tensor_tensor(dst=t, data1=t, data2=u, op=nl.multiply)
    nisa.dma_copy(dst=out, src=t)
    return out


A = np.arange(128 * 64, dtype=np.float32).reshape(128, 64) / 100
B = np.full((128, 64), 3.0, np.float32)


def test_if_tensor_means_given():
    np.testing.assert_allclose(add_optional(A, B), A + B)


def test_if_none_is_false():
    np.testing.assert_allclose(add_optional(A), 2 * A)
    np.testing.assert_allclose(add_optional(A, None), 2 * A)


def test_tensor_in_a_dataclass_field():
    np.testing.assert_allclose(scale_if_given(A, B), A * B)
