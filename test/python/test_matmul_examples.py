"""The calibration matmul kernels of examples/matmul.py: numerics against NumPy at small
shapes (run with the hazard checker, conftest.py) and compilation at the calibration size
K=8192, M=4096, N=8192 (nothing runs there)."""
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
from nki_mlir.passes.allocate import SBUF_BYTES

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
from matmul import (matmul_block_free, matmul_blocked, matmul_hoisted, matmul_tiled,  # noqa: E402
                    single_dma)

BF16 = ml_dtypes.bfloat16
#: relative spacing of bf16 numbers (8 significant bits): one rounding is within half of it
BF16_EPS = 2.0 ** -7


def _inputs(rng, k, m, n):
    a = rng.standard_normal((k, m)).astype(np.float32).astype(BF16)
    b = rng.standard_normal((k, n)).astype(np.float32).astype(BF16)
    return a, b


def _ref(a, b):
    return a.astype(np.float64).T @ b.astype(np.float64)


@pytest.mark.parametrize("k,m,n", [(256, 256, 512), (384, 128, 1024)])
def test_matmul_tiled_is_the_bf16_rounded_product(k, m, n):
    a, b = _inputs(np.random.default_rng(1), k, m, n)
    out = matmul_tiled(a, b)
    assert out.dtype == BF16 and out.shape == (m, n)
    ref = _ref(a, b)
    # fp32 PSUM accumulation, one rounding to bf16
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=BF16_EPS, atol=1e-3)
    assert np.abs(out.astype(np.float64) - ref).max() > 0  # really rounded to bf16


@pytest.mark.parametrize("kernel,k,m,n", [(matmul_hoisted, 512, 256, 1024),
                                           (matmul_block_free, 384, 512, 2048)],
                         ids=["hoisted", "block_free"])
def test_tutorial_intermediate_steps(kernel, k, m, n):
    a, b = _inputs(np.random.default_rng(4), k, m, n)
    out = kernel(a, b)
    assert out.dtype == BF16 and out.shape == (m, n)
    np.testing.assert_allclose(out.astype(np.float64), _ref(a, b), rtol=BF16_EPS, atol=1e-3)


#: every loop of the blocked kernel runs at least twice: 2 N blocks, 2 K blocks, 2 M blocks,
#: 2 tiles per block in each dimension
SMALL_BLOCKS = {"TILES_IN_BLOCK_M": 2, "TILES_IN_BLOCK_N": 2, "TILES_IN_BLOCK_K": 2}
K_S, M_S, N_S = 512, 512, 2048


def test_matmul_blocked_fp32_result_block():
    a, b = _inputs(np.random.default_rng(2), K_S, M_S, N_S)
    out = matmul_blocked(a, b, FP32_RESULT=True, **SMALL_BLOCKS)
    assert out.dtype == BF16 and out.shape == (M_S, N_S)
    np.testing.assert_allclose(out.astype(np.float64), _ref(a, b), rtol=BF16_EPS, atol=1e-3)


def test_matmul_blocked_bf16_result_block_rounds_after_each_k_block():
    a, b = _inputs(np.random.default_rng(3), K_S, M_S, N_S)
    out = matmul_blocked(a, b, **SMALL_BLOCKS)   # default: bf16 result block
    assert out.dtype == BF16
    blk_k = 128 * SMALL_BLOCKS["TILES_IN_BLOCK_K"]
    emu = np.zeros((M_S, N_S), BF16)
    slack = np.full((M_S, N_S), 1e-3)   # a 1-ulp difference in one rounding carries forward
    for kb in range(K_S // blk_k):
        part = _ref(a[kb * blk_k:(kb + 1) * blk_k], b[kb * blk_k:(kb + 1) * blk_k])
        emu = (emu.astype(np.float32) + part.astype(np.float32)).astype(BF16)
        slack += BF16_EPS * np.abs(emu.astype(np.float64))
    got = out.astype(np.float64)
    assert np.all(np.abs(got - emu.astype(np.float64)) <= slack)
    assert np.count_nonzero(got == emu.astype(np.float64)) > 0.99 * got.size
    # and it is not the fp32-accumulated result: the per-K-block bf16 rounding shows
    fp32_path = _ref(a, b).astype(BF16).astype(np.float64)
    assert np.count_nonzero(got != fp32_path) > 0


def test_matmul_blocked_default_blocks_small_k():
    # default 16 x 2 x 8 tiles per block: one block in each dimension
    a, b = _inputs(np.random.default_rng(4), 1024, 2048, 1024)
    out = matmul_blocked(a, b, FP32_RESULT=True)
    np.testing.assert_allclose(out.astype(np.float64), _ref(a, b), rtol=BF16_EPS, atol=1e-3)


def test_single_dma_round_trip():
    x = np.random.default_rng(5).standard_normal((4, 4096)).astype(np.float32).astype(BF16)
    out = single_dma(x)
    assert x.nbytes == 32 * 1024
    np.testing.assert_array_equal(out, x)


@pytest.mark.parametrize("target", ["trn1", "trn2"])
@pytest.mark.parametrize("kernel", [matmul_tiled, matmul_hoisted, matmul_block_free, matmul_blocked],
                         ids=lambda k: k.__name__)
def test_calibration_size_compiles_and_fits(kernel, target):
    a = np.zeros((8192, 4096), BF16)
    b = np.zeros((8192, 8192), BF16)
    ck = nki.compile(kernel, a, b, target=target, use_cache=False)
    mem = ck.manifest["memory"]
    assert 0 < mem["sbuf_peak_bytes"] <= SBUF_BYTES[target]
    assert 0 < mem["psum_peak_bytes"] <= 16 * 1024
    if kernel is matmul_blocked:
        # the bf16 result block (64 KiB), the rhs block (16 KiB), >= 1 lhsT block (32 KiB)
        assert mem["sbuf_peak_bytes"] >= (64 + 16 + 32) * 1024
