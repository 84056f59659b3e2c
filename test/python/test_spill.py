"""Spilling (``nki_mlir/passes/spill.py``): kernels whose SBUF tensors do not all fit compile
with spilling on (the default), run on the interpreter (hazard checks on, conftest.py) with
NumPy's results, and the cost model charges the spill DMAs; kernels that fit compile to the
same IR with spilling on and off; with ``spill=False`` an overflow stays a located error."""
import os
import sys

import numpy as np
import pytest

import spill_kernels as K
from nki_mlir.errors import NKIAllocationError
from nki_mlir.passes.allocate import SBUF_BYTES

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import mamba as MB  # noqa: E402
import matmul as MM  # noqa: E402

#: columns of fp32 making two [128, F] tensors exceed trn2's SBUF (2 * 122880 > 212984)
F = 30720


def _run(ck, args):
    out = ck.run(args, {})
    return np.asarray(out[0] if isinstance(out, (tuple, list)) else out)


def _spill_dmas(ir: str) -> int:
    return sum(1 for line in ir.splitlines() if "nisa.dma_copy" in line and "private_hbm" in line)


def test_inputs_kept_in_hbm_give_numpy_results():
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((128, F)).astype(np.float32) for _ in range(2))
    assert 2 * F * 4 > SBUF_BYTES["trn2"]
    ck = K.chunk_sums.compile_with((x, y), {}, target="trn2")
    ir = ck.ir()
    assert "#nisa.mem<private_hbm>" in ir and _spill_dmas(ir) >= 2
    np.testing.assert_array_equal(_run(ck, (x, y)), x + y)
    # the cost model charges the spill traffic: one input goes HBM -> HBM into the spill
    # tensor (read and written) and comes back [128, 512] at a time, instead of one load
    est = ck.estimate()
    plain = x.nbytes + y.nbytes + x.nbytes          # two loads and the output's store
    assert est.hbm_bytes == plain + 2 * x.nbytes


def test_accumulator_kept_in_hbm_gives_numpy_results():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, F)).astype(np.float32)
    ck = K.running_total.compile_with((x,), {"STEPS": 3}, target="trn2")
    ir = ck.ir()
    assert 'nkim.name = "acc.spill"' in ir
    np.testing.assert_allclose(_run(ck, (x,)), 3 * x, rtol=1e-6)
    # per step: x loaded, every [128, 512] slice of acc loaded and stored; memset tile
    # stored once, the result copied HBM -> HBM
    est = ck.estimate()
    assert est.hbm_bytes == 3 * x.nbytes + 3 * 2 * x.nbytes + x.nbytes + 2 * x.nbytes


def test_overflow_is_a_located_error_with_spilling_off():
    x = np.zeros((128, F), np.float32)
    with pytest.raises(NKIAllocationError) as info:
        K.chunk_sums.compile_with((x, x), {}, target="trn2", spill=False)
    err = info.value
    assert "out of memory: cannot place tensor" in str(err)
    assert err.loc is not None and err.loc.file.endswith("spill_kernels.py")


def test_mamba_v2_long_sequence_spills_and_matches_the_reference():
    args = MB.inputs(batch=1, channels=128, seq=8192, state=2, seed=2)
    with pytest.raises(NKIAllocationError):
        MB.mamba_v2.compile_with(args, {}, target="trn1", spill=False)
    ck = MB.mamba_v2.compile_with(args, {}, target="trn1")
    assert _spill_dmas(ck.ir()) + ck.ir().count("nkim.spill_of") > 0
    want = MB.reference(*args)
    got = _run(ck, args).astype(np.float64)
    assert np.max(np.abs(got - want)) / np.max(np.abs(want)) < 1e-5


def test_tensor_larger_than_sbuf_is_spilled_by_tiles():
    # matmul_block_free's rhs block [128, 2, 64, 512] fp32 is 262144 bytes per partition:
    # more than SBUF on trn2 by itself.  It is filled tile by tile from rhs by one DMA loop
    # nest, so each [128, 512] tile a matmul reads is reloaded from rhs itself (no HBM
    # tensor, the block's loads are gone)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((8192, 256)).astype(np.float32)
    b = rng.standard_normal((8192, 1024)).astype(np.float32)
    ck = MM.matmul_block_free.compile_with((a, b), {}, target="trn2")
    ir = ck.ir()
    assert 'nkim.spill_of = "mov"' in ir and "private_hbm" not in ir
    # traffic: lhsT once, each rhs tile once per matmul (2 M stripes read it), the output
    assert ck.estimate().hbm_bytes == a.nbytes + 2 * b.nbytes + 256 * 1024 * 4
    got = _run(ck, (a, b)).astype(np.float64)
    ref = a.astype(np.float64).T @ b.astype(np.float64)
    assert np.max(np.abs(got - ref)) / np.max(np.abs(ref)) < 1e-5


@pytest.mark.parametrize("kernel,args,kwargs,target", [
    (K.chunk_sums, (np.zeros((128, 2048), np.float32),) * 2, {}, "trn2"),
    (K.running_total, (np.zeros((128, 2048), np.float32),), {}, "trn2"),
    (MM.matmul_blocked, (np.zeros((512, 512), np.float32), np.zeros((512, 1024), np.float32)),
     {"TILES_IN_BLOCK_M": 2, "TILES_IN_BLOCK_K": 2}, "trn1"),
    (MM.matmul_hoisted_tiles, (np.zeros((1024, 256), np.float32), np.zeros((1024, 1024), np.float32)),
     {}, "trn2"),
    (MB.mamba_v2, (np.zeros((1, 256, 2048), np.float32),) * 2 + (np.zeros((256, 16), np.float32),)
     + (np.zeros((1, 16, 2048), np.float32),) * 2, {}, "trn1"),
], ids=["chunk_sums", "running_total", "matmul_blocked", "matmul_hoisted_tiles", "mamba_v2"])
def test_kernels_that_fit_compile_to_the_same_ir(kernel, args, kwargs, target):
    on = kernel.compile_with(args, kwargs, target=target, use_cache=False).ir()
    off = kernel.compile_with(args, kwargs, target=target, use_cache=False, spill=False).ir()
    assert on == off and "nkim.spill_of" not in on
