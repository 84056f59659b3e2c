"""The warm call's launch plan (nki_mlir/driver/warm_plan.py): a repeated call on NumPy arrays
skips the driver (no compile_kernel, no argument conversion) and gives what the full path
gives -- keyword arguments, compile-time constants, in-place writes, several outputs, fresh
output arrays per call -- and every change the full path would see (environment variables,
decorator options, the guard, the in-memory cache, arguments the plan cannot key) takes the
full path again."""
import os
import sys

import numpy as np
import pytest

from nki_mlir.driver import compile as compiler
from nki_mlir.driver import warm, warm_plan
from nki_mlir.runtime import cache

sys.path.insert(0, os.path.dirname(__file__))
import warm_kernels as W  # noqa: E402


@pytest.fixture
def full(monkeypatch):
    """Counts calls that took the full path (compile_kernel)."""
    calls = []
    real = compiler.compile_kernel

    def counted(fn, *a, **k):
        calls.append(fn.__name__)
        return real(fn, *a, **k)
    monkeypatch.setattr(compiler, "compile_kernel", counted)
    warm.clear()
    return calls


def arr(seed, shape=(128, 64)):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_repeated_call_skips_the_driver(full):
    x, y = arr(0), arr(1)
    first = W.axpy(x, y)
    assert len(full) == 1
    for _ in range(3):
        out = W.axpy(x, y)
        np.testing.assert_array_equal(out, first)
        assert out is not first                 # a fresh output array per call
    x2, y2 = arr(2), arr(3)
    np.testing.assert_allclose(W.axpy(x2, y2), x2 + y2, rtol=1e-6)
    assert len(full) == 1                        # same specs, other values: the same plan


def test_keywords_constants_and_float_bits(full):
    x, y = arr(0), arr(1)
    np.testing.assert_allclose(W.axpy(x, y, alpha=2.0), 2 * x + y, rtol=1e-6)
    np.testing.assert_allclose(W.axpy(x, y=y, alpha=2.0), 2 * x + y, rtol=1e-6)
    np.testing.assert_allclose(W.axpy(y=y, x=x, alpha=2.0), 2 * x + y, rtol=1e-6)
    np.testing.assert_allclose(W.axpy(y=y, x=x, alpha=2.0), 2 * x + y, rtol=1e-6)
    np.testing.assert_allclose(W.axpy(x, y, alpha=-3.0), -3 * x + y, rtol=1e-6)
    n = len(full)
    np.testing.assert_allclose(W.axpy(x, y=y, alpha=2.0), 2 * x + y, rtol=1e-6)
    assert len(full) == n
    one, nz = np.ones_like(x), -np.zeros_like(x)
    a = W.axpy(one, nz, alpha=0.0)         # 0 * 1 + -0 = +0
    b = W.axpy(one, nz, alpha=-0.0)        # -0 * 1 + -0 = -0: another constant, its own compile
    assert not np.signbit(a).any() and np.signbit(b).all()


def test_in_place_and_several_outputs(full):
    x = arr(4)
    want = x * 4
    assert W.double_in_place(x) is None
    assert W.double_in_place(x) is None
    np.testing.assert_array_equal(x, want)
    a, b = W.two_outputs(x)
    a2, b2 = W.two_outputs(x)
    assert len(full) == 2
    np.testing.assert_allclose(a2, x + 1, rtol=1e-6)
    np.testing.assert_allclose(b2, x * 3, rtol=1e-6)
    assert a2 is not a and b2 is not b


def test_changes_take_the_full_path(full, monkeypatch):
    x = arr(5)
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")
    W.scaled(x)
    W.scaled(x)
    assert len(full) == 1
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "1")       # hazard checks: engine queues
    seen = []
    from nki_mlir.runtime import program
    real = program.Program.run_checked

    def spy(self, vals, launch=None, mode="program-order", hazards=False, *a, **k):
        seen.append((mode, hazards))
        return real(self, vals, launch, mode, hazards, *a, **k)
    monkeypatch.setattr(program.Program, "run_checked", spy)
    W.scaled(x)
    W.scaled(x)
    assert seen == [("queues", True)] * 2 and len(full) == 2
    monkeypatch.setenv("NKI_MLIR_HAZARDS", "0")
    W.scaled(x)
    assert seen[-1] == ("program-order", False) and len(full) == 3
    monkeypatch.setattr(W, "SCALE", 7.0)              # the guard: a rebound constant
    np.testing.assert_allclose(W.scaled(x), 7 * x, rtol=1e-6)
    assert len(full) == 4
    cache.memory_clear()                               # an evicted entry
    W.scaled(x)
    assert len(full) == 5
    monkeypatch.setitem(W.scaled.options, "target", "trn1")   # decorator options
    W.scaled(x)
    assert len(full) == 6 and W.scaled.compile(x).target == "trn1"


def test_unplanned_arguments_behave_as_before(full):
    x = arr(6, (64, 128)).T                     # not C-contiguous: a copy written back
    ro = arr(7)
    ro.flags.writeable = False
    for _ in range(2):
        np.testing.assert_allclose(W.scaled(x), 2 * x, rtol=1e-6)
        np.testing.assert_allclose(W.scaled(ro), 2 * ro, rtol=1e-6)
    assert warm_plan.call_spec(W.scaled, (x,), {}) is None
    assert warm_plan.call_spec(W.scaled, (ro,), {}) is None
    assert warm_plan.call_spec(W.scaled, ([1.0],), {}) is None
    assert len(full) == 4
