"""Versions of matmul operand blocks (nki_mlir/runtime/operand_versions.py): a bf16 matmul
operand read again before an instruction may have written its SBUF bytes is converted to
float32 once; after such a write it is converted again; writes to other tiles change
nothing.  Program order and queue mode agree bit for bit, and with NumPy's float32 product."""
import types

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.runtime import isa_matmul
from nki_mlir.runtime import numerics as nm

BF16 = ml_dtypes.bfloat16


@nki.jit
def reuse_then_rewrite(x, w):
    """out[s] = x[:, s]^T @ w for four 128-column tiles s, then again with w doubled in
    SBUF (the same operand views: the write must not leave the old copies in use)."""
    out = nl.ndarray((2, 512, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    xt = nl.ndarray((128, 512), dtype=x.dtype, buffer=nl.sbuf)
    wt = nl.ndarray((128, 512), dtype=w.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=xt, src=x)
    nisa.dma_copy(dst=wt, src=w)
    for phase in nl.static_range(2):
        ps = []
        for s in nl.static_range(4):
            p = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=p, stationary=xt[:, s * 128:(s + 1) * 128], moving=wt)
            ps.append(p)
        for s in nl.static_range(4):
            o = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=o, src=ps[s])
            nisa.dma_copy(dst=out[phase, s * 128:(s + 1) * 128, :], src=o)
        nisa.tensor_scalar(dst=wt, data=wt, op0=nl.multiply, operand0=2.0)
    return out


def _counting(monkeypatch):
    """Count the operand conversions of nisa.matmul (its module's to_f32 calls) by shape."""
    seen: list = []

    def to_f32(a):
        seen.append(tuple(a.shape))
        return nm.to_f32(a)
    proxy = types.SimpleNamespace(**{k: getattr(nm, k) for k in dir(nm) if not k.startswith("__")})
    proxy.to_f32 = to_f32
    monkeypatch.setattr(isa_matmul, "nm", proxy)
    return seen


@pytest.mark.parametrize("mode", ["program-order", "queues"])
def test_an_operand_converts_once_per_write_of_its_tile(monkeypatch, mode):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((128, 512)).astype(BF16)
    w = rng.standard_normal((128, 512)).astype(BF16)
    ck = nki.compile(reuse_then_rewrite, x, w, use_cache=False)
    seen = _counting(monkeypatch)
    (got,) = ck.run((x, w), {}, mode=mode, hazards=False)
    xf, wf = x.astype(np.float32), w.astype(np.float32)
    for phase, scale in enumerate((1.0, 2.0)):
        np.testing.assert_allclose(got[phase], xf.T @ (wf * scale), rtol=1e-5, atol=1e-4)
    # wt once per phase (the tensor_scalar writes it; the copies into the o tiles between
    # the matmuls do not count); each 128-column view of xt once (never written again)
    assert (seen.count((128, 512)), seen.count((128, 128))) == (2, 4)


def test_program_order_and_queue_mode_agree_bit_for_bit():
    rng = np.random.default_rng(10)
    x = rng.standard_normal((128, 512)).astype(BF16)
    w = rng.standard_normal((128, 512)).astype(BF16)
    ck = nki.compile(reuse_then_rewrite, x, w, use_cache=False)
    (po,) = ck.run((x, w), {}, mode="program-order", hazards=False)
    (qu,) = ck.run((x, w), {}, mode="queues", hazards=False)
    np.testing.assert_array_equal(po.view(np.uint32), qu.view(np.uint32))
