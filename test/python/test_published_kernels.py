"""The kernels of bench/published_report.py (examples/mamba.py, examples/perf_guide.py,
matmul_hoisted_tiles and fp32 matmul_tiled of examples/matmul.py) against NumPy at small
shapes, and the report's bookkeeping: every published measurement has a reproduction, the
engine-activity union, the scalar-chain interval."""
import os
import sys

import ml_dtypes
import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "bench")]

import mamba as MB  # noqa: E402
import matmul as MM  # noqa: E402
import perf_guide as PG  # noqa: E402

BF16 = ml_dtypes.bfloat16


def _mamba_inputs(channels, seq, state, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(0.01, 0.1, (1, channels, seq)).astype(np.float32),
            rng.standard_normal((1, channels, seq)).astype(np.float32),
            -rng.uniform(0.5, 2.0, (channels, state)).astype(np.float32),
            rng.standard_normal((1, state, seq)).astype(np.float32),
            rng.standard_normal((1, state, seq)).astype(np.float32))


@pytest.mark.parametrize("kernel", [MB.mamba_v1, MB.mamba_v2, MB.mamba_v3],
                         ids=lambda k: k.__name__)
def test_mamba_kernels_match_the_recurrence(kernel):
    args = _mamba_inputs(256, 1024, 2)     # two channel tiles, two sequence tiles for v3
    want = MB.reference(*args)
    got = np.asarray(kernel(*args), np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_mamba_v3_carries_the_scan_across_sequence_tiles():
    # a long-memory recurrence (A close to 0: exp(delta * A) ~ 1) makes a dropped carry visible
    d, u, a, b, c = _mamba_inputs(128, 1024, 1, seed=3)
    a[:] = -1e-3
    want = MB.reference(d, u, a, b, c)
    got = np.asarray(MB.mamba_v3(d, u, a, b, c), np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())
    assert np.abs(want[..., 512:]).max() > 0.1      # the second tile depends on the first


def test_perf_guide_kernels():
    assert PG._check() == 0


def test_matmul_hoisted_tiles_and_fp32_tiled():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((512, 256)).astype(BF16)
    b = rng.standard_normal((512, 1024)).astype(BF16)
    ref = a.astype(np.float64).T @ b.astype(np.float64)
    got = MM.matmul_hoisted_tiles(a, b)
    assert got.dtype == BF16
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=2 ** -7, atol=1e-3)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    got32 = MM.matmul_tiled(a32[:256], b32[:256, :512])
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, a32[:256].T.astype(np.float64) @ b32[:256, :512], rtol=1e-5,
                               atol=1e-4)


def test_every_measurement_has_a_reproduction_and_sequences_name_measurements():
    import published_report as R
    from published_data import BY_KEY, MEASUREMENTS, SEQUENCES
    assert len(BY_KEY) == len(MEASUREMENTS)
    for m in MEASUREMENTS:
        kernel, args, kw = R._spec(m)
        assert callable(getattr(kernel, "compile_with")) and args
        assert m.latency_ns is not None or m.active_pct, m.key
    for keys in SEQUENCES.values():
        assert len(keys) >= 2 and all(k in BY_KEY for k in keys)


def test_union_of_slices_counts_overlap_once():
    import published_report as R

    class S:
        def __init__(self, track, a, b):
            self.track, self.start_ns, self.end_ns = track, a, b

    sl = [S("dma0", 0, 10), S("dma1", 5, 20), S("dma2", 30, 40), S("tensor", 0, 100)]
    assert R._union_pct(sl, 100.0, lambda t: t.startswith("dma")) == pytest.approx(30.0)


def test_scalar_chain_interval_is_the_modelled_activation_time():
    import published_report as R
    from published_data import BY_KEY
    r = R.reproduce(BY_KEY["perf.scalar_ii"])
    assert not r.error
    # each activation waits for the previous one on the same in-order queue: the interval is
    # its modelled cost, at least the 64-cycle minimum at trn1's 1.4 GHz ScalarE clock
    assert r.latency_ns >= 64 / 1.4 - 1e-6
