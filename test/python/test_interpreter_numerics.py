"""Unit tests of the interpreter's numerics and memory model (no IR involved)."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from nki_mlir.runtime import numerics as nm
from nki_mlir.runtime.memory import (
    INT_SENTINEL,
    PSUM_BYTES,
    SBUF_BYTES,
    Memory,
    MemoryFault,
    fill_sentinel,
    resolve_psum_offset,
)


def test_erf_matches_math_erf_to_float64_accuracy():
    x = np.concatenate([np.linspace(-7, 7, 20001), [0.0, -0.0, 1e-30, -1e-12, 1e-5, 2.0, 6.0, 30.0]])
    ref = np.array([math.erf(v) for v in x])
    got = nm.erf(x)
    rel = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)
    assert rel[ref != 0].max() < 1e-12
    assert np.isnan(nm.erf(np.array([np.nan]))).all()
    assert nm.erf(np.array([np.inf, -np.inf])).tolist() == [1.0, -1.0]


def test_erfc_is_accurate_in_the_tails():
    x = np.concatenate([np.linspace(-3, 9, 6001), [20.0, 26.0]])
    ref = np.array([math.erfc(v) for v in x])
    rel = np.abs(nm.erfc(x) - ref) / ref
    assert rel[x < 6].max() < 1e-10
    assert rel.max() < 1e-7  # asymptotic series beyond 6


def test_activation_erf_and_gelu_are_float32_accurate():
    x = np.linspace(-9, 9, 4001, dtype=np.float32)
    ref = np.array([math.erf(v) for v in x.astype(np.float64)]).astype(np.float32)
    np.testing.assert_array_equal(nm.ACTIVATION["erf"](x), ref)
    gelu_ref = np.array([0.5 * v * math.erfc(-v / math.sqrt(2)) for v in x.astype(np.float64)])
    np.testing.assert_allclose(nm.ACTIVATION["gelu"](x), gelu_ref, rtol=1e-7, atol=1e-37)


def test_activation_outputs_are_float32():
    x = np.linspace(0.1, 2, 8, dtype=np.float32)
    for name, f in nm.ACTIVATION.items():
        assert np.asarray(f(x)).dtype == np.float32, name


def test_f32_to_int_truncates_saturates_and_maps_nan_to_zero():
    x = np.array([2.9, -2.9, 1e10, -1e10, np.nan, np.inf, -np.inf, 255.5], np.float32)
    np.testing.assert_array_equal(nm.f32_to_int(x, np.dtype(np.int32)),
                                  [2, -2, 2 ** 31 - 1, -2 ** 31, 0, 2 ** 31 - 1, -2 ** 31, 255])
    np.testing.assert_array_equal(nm.f32_to_int(x, np.dtype(np.uint8)), [2, 0, 255, 0, 0, 255, 0, 255])


def test_store_rounds_to_nearest_even_for_bf16_and_fp8():
    bf16 = np.dtype(ml_dtypes.bfloat16)
    v = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.0e38], np.float32)
    dst = np.empty(3, bf16)
    nm.make_store(bf16)(dst, v)
    np.testing.assert_array_equal(dst, v.astype(bf16))
    assert dst[0] == 1.0 and dst[1] == 1 + 2 ** -6
    e4m3 = np.dtype(ml_dtypes.float8_e4m3)
    d8 = np.empty(2, e4m3)
    nm.make_store(e4m3)(d8, v[:2])
    np.testing.assert_array_equal(d8[:2], v[:2].astype(e4m3))


def test_alu_comparisons_and_logicals_give_float_ones_and_zeros():
    a = np.array([1, 0, -2, np.nan], np.float32)
    b = np.array([1, 3, 0, 0], np.float32)
    assert nm.ALU["is_eq"](a, b).tolist() == [1, 0, 0, 0]
    assert nm.ALU["logical_and"](a, b).tolist() == [1, 0, 0, 0]
    assert nm.ALU["logical_or"](a, b).tolist() == [1, 1, 1, 1]
    for name in ("is_eq", "is_lt", "logical_xor", "add", "abs_max"):
        assert nm.ALU[name](a, b).dtype == np.float32, name


def test_int_alu_right_shift_is_logical_and_divide_truncates():
    a = np.array([-16, 16, -7], np.int64)
    assert nm.ALU_INT["right_shift"](a, np.int64(2)).tolist() == [(2 ** 32 - 16) >> 2, 4, (2 ** 32 - 7) >> 2]
    assert nm.ALU_INT["divide"](a, np.int64(3)).tolist() == [-5, 5, -2]
    assert nm.ALU_INT["divide"](a, np.int64(0)).tolist() == [0, 0, 0]


def test_fill_sentinel():
    f = np.zeros(3, np.float32)
    fill_sentinel(f)
    assert np.isnan(f).all()
    b = np.zeros(3, ml_dtypes.bfloat16)
    fill_sentinel(b)
    assert np.isnan(b.astype(np.float32)).all()
    i = np.zeros(3, np.uint16)
    fill_sentinel(i)
    assert (i == INT_SENTINEL).all()
    z = np.zeros(3, np.bool_)
    fill_sentinel(z)
    assert (z.view(np.uint8) == INT_SENTINEL).all()


def test_memory_regions_are_views_of_the_shared_bytes():
    mem = Memory("trn1")
    assert mem.sbuf.shape == (128, SBUF_BYTES["trn1"]) == (128, 196608)
    assert mem.psum.shape == (128, PSUM_BYTES) == (128, 16384)
    a, fa = mem.region("sbuf", 32, 8, (4, 2, 3), np.dtype(np.float32))
    assert fa is None and a.shape == (4, 2, 3)
    a[...] = np.arange(24, dtype=np.float32).reshape(4, 2, 3)
    np.testing.assert_array_equal(mem.sbuf[33, 8:32].view(np.float32), np.arange(6, 12))
    p, fp = mem.region("psum", 0, 2048, (2, 4), np.dtype(np.float32))
    assert fp.dtype == np.uint32 and fp.shape == (2, 4)
    fp[...] = 0xFFFFFFFF
    assert (mem.psum_flags[0:2, 2048:2064] == 255).all() and mem.psum_flags[0:2, 2064:].sum() == 0
    with pytest.raises(MemoryFault, match="capacity of 196608 bytes per partition on trn1"):
        mem.region("sbuf", 0, 196608 - 4, (1, 2), np.dtype(np.float32))
    with pytest.raises(MemoryFault, match="capacity of 16384"):
        mem.region("psum", 0, 16384, (1, 1), np.dtype(np.float32))


def test_psum_offset_resolution():
    assert resolve_psum_offset(4096, 2) == 4096     # absolute offset consistent with the bank
    assert resolve_psum_offset(64, 3) == 3 * 2048 + 64  # offset inside the bank
    assert resolve_psum_offset(None, 5) == 5 * 2048
    assert resolve_psum_offset(100, None) == 100
    with pytest.raises(MemoryFault):
        resolve_psum_offset(4096, 5)
