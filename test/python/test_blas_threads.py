"""A kernel runs its tile matmuls on one BLAS thread and gives the caller's BLAS thread
count back (:mod:`nki_mlir.runtime.blas_threads`), also when runs overlap."""
import threading

import numpy as np
import pytest

threadpoolctl = pytest.importorskip("threadpoolctl")

import kernels_for_tests as K  # noqa: E402
from nki_mlir.runtime import blas_threads  # noqa: E402


@pytest.fixture
def two_blas_threads():
    """The process's BLAS at two threads for the test (restored after)."""
    if not blas_threads.current_threads():
        pytest.skip("no BLAS library found by threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        if set(blas_threads.current_threads()) != {2}:
            pytest.skip("this BLAS cannot be set to 2 threads")
        yield


def test_a_run_uses_one_blas_thread_and_restores_the_callers(two_blas_threads, monkeypatch):
    seen = []
    real = np.matmul

    def spy(*a, **kw):
        seen.append(tuple(blas_threads.current_threads()))
        return real(*a, **kw)

    monkeypatch.setattr(np, "matmul", spy)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 128), dtype=np.float32)
    w = rng.standard_normal((128, 512), dtype=np.float32)
    out = K.transpose_matmul(x, w)
    monkeypatch.undo()
    np.testing.assert_allclose(out, x @ w, rtol=1e-4, atol=1e-3)
    assert seen, "the kernel's matmul did not reach np.matmul"
    assert set(seen) == {(1,) * len(seen[0])}
    assert set(blas_threads.current_threads()) == {2}


def test_the_instances_of_an_lnc2_launch_use_one_blas_thread(two_blas_threads, monkeypatch):
    seen = []
    real = np.matmul

    def spy(*a, **kw):
        seen.append((threading.current_thread().name, tuple(blas_threads.current_threads())))
        return real(*a, **kw)

    monkeypatch.setattr(np, "matmul", spy)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((128, 128), dtype=np.float32)
    w = rng.standard_normal((128, 1024), dtype=np.float32)
    out = K.lnc_matmul[2](x, w)
    monkeypatch.undo()
    np.testing.assert_allclose(out, x.T @ w, rtol=1e-4, atol=1e-3)
    assert len(seen) == 2       # one matmul per instance (in threads when they exchange data)
    assert all(set(threads) == {1} for _, threads in seen)
    assert set(blas_threads.current_threads()) == {2}


def test_nested_runs_restore_once_the_outermost_ends(two_blas_threads):
    """A launch (outermost) and its instances' runs in other threads, ending out of order."""
    blas_threads.enter()
    inside: list = []
    a_in, b_out = threading.Event(), threading.Event()

    def a():
        blas_threads.enter()
        a_in.set()
        b_out.wait(5)          # b entered and left meanwhile: still one thread
        inside.append(blas_threads.current_threads())
        blas_threads.leave()

    def b():
        a_in.wait(5)
        blas_threads.enter()
        blas_threads.leave()
        b_out.set()

    ts = [threading.Thread(target=a), threading.Thread(target=b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(10)
    assert inside and set(inside[0]) == {1}
    assert set(blas_threads.current_threads()) == {1}      # the outermost still runs
    blas_threads.leave()
    assert set(blas_threads.current_threads()) == {2}


def test_a_failing_run_restores_too(two_blas_threads):
    with pytest.raises(Exception):
        K.transpose_matmul(np.zeros((128, 128), np.float32), np.zeros((64, 512), np.float32))
    assert set(blas_threads.current_threads()) == {2}
