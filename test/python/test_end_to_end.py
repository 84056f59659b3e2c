"""End-to-end: kernels compile through the whole pipeline and match NumPy references."""
import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import kernels_for_tests as K

BF16 = ml_dtypes.bfloat16


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def test_call_compiles_and_runs(rng):
    a = rng.standard_normal((128, 512)).astype(np.float32)
    b = rng.standard_normal((128, 512)).astype(np.float32)
    y = K.add(a, b)
    assert isinstance(y, np.ndarray) and y.shape == (128, 512) and y.dtype == np.float32
    np.testing.assert_array_equal(y, a + b)


def test_simulate_spelling_gives_the_same_result(rng):
    a = rng.standard_normal((64, 300)).astype(np.float32)
    b = rng.standard_normal((64, 300)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate(K.add)(a, b), a + b)


def test_bf16_add_rounds_like_the_hardware(rng):
    a = rng.standard_normal((128, 256)).astype(BF16)
    b = rng.standard_normal((128, 256)).astype(BF16)
    y = K.add(a, b)
    assert y.dtype == BF16
    expect = (a.astype(np.float32) + b.astype(np.float32)).astype(BF16)  # fp32 compute, RNE to bf16
    np.testing.assert_array_equal(y.view(np.uint16), expect.view(np.uint16))


def test_compile_api_exposes_artifact_and_ir(rng):
    a = rng.standard_normal((128, 512)).astype(np.float32)
    ck = nki.compile(K.add, a, a)
    assert (ck.artifact / "manifest.json").exists()
    import re
    assert "nki.tensor_tensor(" in ck.ir("nki") and not re.search(r"\bnisa\.\w+\(", ck.ir("nki"))
    nisa_ir = ck.ir("nisa")
    assert "nisa.tensor_tensor_arith(" in nisa_ir and not re.search(r"\bnki\.\w+\(", nisa_ir)
    assert "nkim.offset" in nisa_ir and "nkim.queue" in nisa_ir  # placement and schedule printed
    np.testing.assert_array_equal(ck(a, a), a + a)


def test_helper_inlined_python_loop_unrolled_and_constants(rng, capsys):
    x = rng.standard_normal((128, 1024)).astype(np.float32)
    y = K.scaled_rows(x, 1.5, 2)
    np.testing.assert_allclose(y, x * 1.5, rtol=1e-6)
    assert "compiling scaled_rows with factor 1.5" in capsys.readouterr().out  # print at compile time
    ir = nki.compile(K.scaled_rows, x, 1.5, 2).ir("nki")
    # range(2) stays a loop (its index only feeds views): one body, the helper run once
    assert ir.count("nki.tensor_scalar(") == 1
    assert ir.count("scf.for") == 1 and 'nki.range = "sequential"' in ir


def test_python_range_unrolled_on_request(rng, monkeypatch):
    x = rng.standard_normal((128, 1024)).astype(np.float32)
    monkeypatch.setenv("NKI_MLIR_LOOPS", "unroll")
    ir = nki.compile(K.scaled_rows, x, 1.5, 2, use_cache=False).ir("nki")
    assert ir.count("nki.tensor_scalar(") == 2  # helper run once per iteration
    assert "scf.for" not in ir


def test_affine_range_is_an_ir_loop_not_unrolled(rng):
    x = rng.standard_normal((1024, 64)).astype(np.float32)
    ck = nki.compile(K.loop_copy, x)
    ir = ck.ir("nki")
    assert ir.count("scf.for") == 1 and 'nki.range = "affine"' in ir
    assert ir.count("nki.dma_copy(") == 2  # one body for 8 iterations
    np.testing.assert_array_equal(ck(x), x)


def test_tuple_return_and_activation_reduce(rng):
    x = rng.standard_normal((32, 100)).astype(np.float32)
    y, s = K.two_outputs(x)
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(s[:, 0], np.exp(x.astype(np.float64)).sum(axis=1), rtol=1e-5)


def test_nl_value_returning_wrappers(rng):
    a = rng.standard_normal((128, 512)).astype(np.float32)
    b = rng.standard_normal((128, 512)).astype(np.float32)
    np.testing.assert_allclose(K.sugar(a, b), np.exp(a) * b + a, rtol=1e-5, atol=1e-6)


def test_nl_matmul_inserts_a_transpose(rng):
    x = rng.standard_normal((128, 128)).astype(np.float32)
    w = rng.standard_normal((128, 512)).astype(np.float32)
    ck = nki.compile(K.transpose_matmul, x, w)
    assert "nisa.nc_transpose" in ck.ir("nisa")
    np.testing.assert_allclose(ck(x, w), x.astype(np.float64) @ w, rtol=1e-4, atol=1e-4)


def test_iota_transpose_zeros(rng):
    x = rng.standard_normal((64, 32)).astype(np.float32)
    ramp, tr = K.iota_memset(x)
    p, f = np.arange(64)[:, None], np.arange(32)[None, :]
    np.testing.assert_array_equal(ramp, (5 + 1000 * p + f).astype(np.int32))
    np.testing.assert_array_equal(tr, x.T)


def test_example_kernels_match_numpy():
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
    from kernels import row_softmax, tensor_add, tiled_matmul
    rng = np.random.default_rng(0)
    a_t = rng.standard_normal((512, 512)).astype(BF16)
    b = rng.standard_normal((512, 512)).astype(BF16)
    out = tiled_matmul(a_t, b)
    ref = a_t.astype(np.float64).T @ b.astype(np.float64)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-3)
    x = rng.standard_normal((256, 512)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(row_softmax(x), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    p = rng.standard_normal((256, 1024)).astype(np.float32)
    np.testing.assert_array_equal(tensor_add(p, p), p + p)


def test_target_option_is_recorded(rng):
    a = rng.standard_normal((128, 512)).astype(np.float32)
    ck = nki.compile(K.add, a, a, target="trn1")
    assert ck.manifest["target"] == "trn1" and "#nisa.target<trn1>" in ck.ir("nisa")
