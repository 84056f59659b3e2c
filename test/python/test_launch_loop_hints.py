"""The program instances of an LNC launch share what tracing learnt about the kernel's loops:
the loops the first instance had to unroll start unrolled in the second, so ``kernel[2]``
traces the kernel once more, not once more per such loop (nki-library's attention_cte: 19
traces per instance).  The first instance itself traces such a loop again in place
(frontend/loop_retry.py), not the whole kernel."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import trace_build
from trace_counting import count_traces


@nki.jit
def two_retraces(x):
    """Two loops whose index meets a Python condition: each is traced again, unrolled."""
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    t = nl.ndarray((128, 64), x.dtype, buffer=nl.sbuf)
    for i in range(3):
        if i == 0:
            nisa.dma_copy(dst=t, src=x[:, 0:64])
        else:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.add, operand0=1.0)
    for j in range(2):
        if j == 1:
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out[:, pid * 64:(pid + 1) * 64], src=t)
    return out


def test_second_instance_starts_with_the_first_ones_unrolled_loops(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NKI_MLIR_SHARED_LAUNCH", "0")  # (else one trace serves both instances)
    monkeypatch.setenv("NKI_MLIR_LOOPS", "auto")
    runs = count_traces(monkeypatch)
    x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64) / 1000
    x = np.concatenate([x, x], axis=1)
    got = nki.simulate(two_retraces[2])(x)
    assert len(runs) == 1 + 1            # one trace per instance: the loops retried in place
    want = ((x[:, 0:64] + 2.0) * 2.0).astype(np.float32)
    np.testing.assert_allclose(got, np.concatenate([want, want], axis=1), rtol=1e-6)
    decisions = trace_build.last_loop_report()
    assert len(decisions) == 2 and all(d == "unrolled" for d, _ in decisions.values())


def test_roll_mode_takes_no_hint(monkeypatch, tmp_path):
    monkeypatch.setenv("NKI_MLIR_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("NKI_MLIR_LOOPS", "roll")
    x = np.zeros((128, 128), np.float32)
    for _ in range(2):      # the second launch too must say the loop cannot stay rolled
        try:
            nki.simulate(two_retraces[2])(x)
        except nki.NKIError as exc:
            assert "rolled" in str(exc) or "roll" in str(exc)
        else:
            raise AssertionError("NKI_MLIR_LOOPS=roll accepted a loop that cannot stay rolled")
