"""A condition on a rolled loop's index that is the same in every iteration (its range lies
on one side) keeps the loop rolled (frontend/index_bounds.py); one that differs unrolls it."""
import numpy as np

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.frontend import trace_build
from nki_mlir.frontend.index_bounds import _truth, index_bounds
from nki_mlir.frontend.values import Index

RNG = np.random.default_rng(5)


def _check(cond, text):
    assert cond, text


@nki.jit
def range_checked(a):
    """Range checks on the index, as nki-library's kernel_assert does: always true."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    n = a.shape[0] // 128
    for i in nl.affine_range(n):
        _check(i >= 0, "negative tile")
        _check(i * 128 + 128 <= a.shape[0], "past the end")
        rows = min(128, a.shape[0] - i * 128)       # always 128 here
        t = nl.ndarray((rows, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 128:i * 128 + rows, :])
        if i < 0:                                   # never true
            nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=-1.0)
        nisa.dma_copy(dst=out[i * 128:i * 128 + rows, :], src=t)
    return out


def test_uniform_conditions_keep_the_loop_rolled():
    a = RNG.standard_normal((512, 64)).astype(np.float32)
    ck = nki.compile(range_checked, a, use_cache=False)
    (what, _), = trace_build.last_loop_report().values()
    assert what == "rolled"
    assert ck.ir("nki").count("scf.for") == 1
    np.testing.assert_array_equal(ck(a), a)


@nki.jit
def ragged(a):
    """min(128, n - i * 128) differs in the last iteration: the loop unrolls."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range((a.shape[0] + 127) // 128):
        rows = min(128, a.shape[0] - i * 128)
        t = nl.ndarray((128, a.shape[1]), a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t[0:rows, :], src=a[i * 128:i * 128 + rows, :])
        nisa.dma_copy(dst=out[i * 128:i * 128 + rows, :], src=t[0:rows, :])
    return out


def test_condition_that_differs_unrolls():
    a = RNG.standard_normal((300, 64)).astype(np.float32)
    np.testing.assert_array_equal(ragged(a), a)
    (what, why), = trace_build.last_loop_report().values()
    assert what == "unrolled" and "Python condition" in why


def test_bounds_and_truth():
    iv = object()
    ranges = {iv: (0, 4, 1)}
    assert index_bounds(Index(((iv, -128),), 512), ranges) == (128, 512)
    assert index_bounds(Index(((object(), 1),), 0), ranges) is None
    assert _truth("ge", 0, 5) is True and _truth("lt", 0, 5) is False
    assert _truth("lt", -1, 5) is None and _truth("eq", 0, 0) is True
    assert _truth("ne", 1, 3) is True and _truth("le", -3, 0) is True
