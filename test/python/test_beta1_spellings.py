"""Spellings of real Beta 1 kernels: ordered ``nc_version``, a reduction as an op token,
``psum += matmul`` onto an uninitialised tensor and with ``mask=``, string ``perf_mode``.
Kernels: beta1_spelling_kernels.py."""
from __future__ import annotations

import numpy as np
import pytest

import beta1_spelling_kernels as K
from nki_mlir import isa as nisa
from nki_mlir.frontend.args import enum_name

RNG = np.random.default_rng(5)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_nc_version_is_ordered():
    v = nisa.nc_version
    assert v.gen3 >= v.gen3 and v.gen3 > v.gen2 and v.gen2 < v.gen4 and v.gen3 >= 3 and v.gen2 <= 2
    assert not (v.gen2 >= v.gen3)
    with pytest.raises(TypeError):
        nisa.engine.vector < nisa.engine.scalar  # other enums have no order


def test_reduction_function_as_the_op():
    a = f32(128, 64)
    np.testing.assert_allclose(K.reduce_with_nl_max(a), a.max(1, keepdims=True))


def test_accumulate_onto_uninitialised_psum_starts_with_an_overwrite():
    lt, r = f32(256, 128), f32(256, 64)
    np.testing.assert_allclose(K.accumulate_into_ndarray(lt, r), lt.T @ r, rtol=1e-4, atol=1e-4)
    assert "accumulate" not in K.accumulate_into_ndarray.compile(lt, r).ir("nki").split("nc_matmul")[1].split("\n")[0]


def test_masked_accumulating_matmul():
    lt, r = f32(512, 128), f32(512, 64)
    want = lt[:256].T @ r[:256]
    np.testing.assert_allclose(K.masked_accumulate(lt, r), want, rtol=1e-4, atol=1e-4)


def test_perf_mode_string():
    class _B:
        pass

    class _Cg:
        b = _B()
    assert enum_name(_Cg(), "nisa.nc_matmul", "perf_mode", "double_row_gen3", "matmul_perf_mode") == "double_row"


def test_psum_operands_are_copied_to_sbuf():
    a, b = f32(128, 128), f32(128, 128)
    want = np.where(np.tril(np.ones((128, 128), bool)), a @ b, -1.0)
    np.testing.assert_allclose(K.psum_operands(a, b), want, rtol=1e-4, atol=1e-4)
