"""Exact loop-carried overlap (passes/exact_overlap.py) in err_unexpected_output_dependencies.

Each kernel below writes one element column per iteration of two nested ``affine_range``
loops.  Whether two iterations write the same column is a question about integers: the
bijective maps must compile and compute the right result, the overlapping ones must be
reported, and real carried dependences keep their edges.
"""
from __future__ import annotations

import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir.errors import NKIError
from nki_mlir.passes import exact_overlap

pytestmark = pytest.mark.skipif(not exact_overlap.available(), reason="islpy not installed")

P, N1, N2 = 8, 3, 4


@nki.jit
def scatter_columns(a, n1, n2):
    """``out[:, j * n1 + i] = a[:, i * n2 + j]``: a (P, n1 * n2) row-block transpose, one
    column per iteration; ``j * n1 + i`` is a bijection of (i, j)."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    src = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=a)
    dst = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n1):
        for j in nl.affine_range(n2):
            nisa.tensor_copy(dst=dst[:, nl.ds(j * n1 + i, 1)], src=src[:, nl.ds(i * n2 + j, 1)])
    nisa.dma_copy(dst=out, src=dst)
    return out


@nki.jit
def store_columns(a, n1, n2):
    """Like :func:`scatter_columns` but every iteration stores straight to HBM."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    src = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=a)
    for i in nl.affine_range(n1):
        for j in nl.affine_range(n2):
            nisa.dma_copy(dst=out[:, nl.ds(i + j * n1, 1)], src=src[:, nl.ds(i * n2 + j, 1)])
    return out


@nki.jit
def diagonal_columns(a, n1, n2):
    """``out[:, i + j]``: iterations (0, 1) and (1, 0) write the same column."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    src = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=a)
    dst = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    for i in nl.affine_range(n1):
        for j in nl.affine_range(n2):
            nisa.tensor_copy(dst=dst[:, nl.ds(i + j, 1)], src=src[:, nl.ds(i * n2 + j, 1)])
    nisa.dma_copy(dst=out, src=dst)
    return out


@nki.jit
def short_stride_columns(a, n1, n2):
    """``out[:, j * (n1 - 1) + i]``: the stride of ``j`` is one short, so (i, j) = (n1 - 1, 0)
    and (0, 1) collide -- an overlap the interval test alone cannot tell from a bijection."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    src = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=a)
    for i in nl.affine_range(n1):
        for j in nl.affine_range(n2):
            nisa.dma_copy(dst=out[:, nl.ds(j * (n1 - 1) + i, 1)], src=src[:, nl.ds(i * n2 + j, 1)])
    return out


@nki.jit
def running_sum(a):
    """A real loop-carried dependence: ``acc += a[:, k]`` in a ``sequential_range``."""
    out = nl.ndarray((a.shape[0], 1), a.dtype, buffer=nl.shared_hbm)
    src = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=a)
    acc = nl.ndarray((a.shape[0], 1), a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for k in nl.sequential_range(a.shape[1]):
        nisa.tensor_tensor(dst=acc, data1=acc, data2=src[:, nl.ds(k, 1)], op=nl.add)
    nisa.dma_copy(dst=out, src=acc)
    return out


@nki.jit
def same_column_every_iteration(a):
    """Every iteration of an ``affine_range`` overwrites column 0: a real output dependence."""
    out = nl.ndarray((a.shape[0], 1), a.dtype, buffer=nl.shared_hbm)
    src = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=src, src=a)
    for k in nl.affine_range(a.shape[1]):
        nisa.dma_copy(dst=out[:, 0:1], src=src[:, nl.ds(k, 1)])
    return out


def _input() -> np.ndarray:
    return np.arange(P * N1 * N2, dtype=np.float32).reshape(P, N1 * N2)


def _block_transpose(a: np.ndarray) -> np.ndarray:
    return a.reshape(P, N1, N2).transpose(0, 2, 1).reshape(P, N1 * N2)


@pytest.mark.parametrize("kernel", [scatter_columns, store_columns])
def test_bijective_two_loop_map_is_not_an_output_dependence(kernel):
    a = _input()
    np.testing.assert_array_equal(kernel(a, N1, N2), _block_transpose(a))


@pytest.mark.parametrize("kernel", [diagonal_columns, short_stride_columns])
def test_overlapping_two_loop_map_is_reported(kernel):
    with pytest.raises(NKIError) as info:
        nki.compile(kernel, _input(), N1, N2, use_cache=False)
    assert getattr(info.value, "code", None) == "err_unexpected_output_dependencies"
    assert "written at the same location in different iterations" in str(info.value)


def test_real_carried_dependences_keep_their_behaviour():
    a = _input()
    np.testing.assert_allclose(running_sum(a), a.sum(axis=1, keepdims=True))
    ck = nki.compile(running_sum, a, use_cache=False)
    assert "nkim.deps" in ck.ir("nisa")
    with pytest.raises(NKIError) as info:
        nki.compile(same_column_every_iteration, a, use_cache=False)
    assert getattr(info.value, "code", None) == "err_unexpected_output_dependencies"


def test_interval_test_alone_would_report_the_bijections(monkeypatch):
    """The kernels above really need the exact test (guards against a vacuous pass)."""
    monkeypatch.setattr(exact_overlap, "_isl", None)
    for kernel in (scatter_columns, store_columns):
        with pytest.raises(NKIError):
            nki.compile(kernel, _input(), N1, N2, use_cache=False)


def test_exact_test_is_conservative_without_bounds():
    """A whole-buffer box (no affine map) always may overlap."""
    from nki_mlir.passes.dependence import Box
    box = Box(object(), None)
    assert exact_overlap.carried_overlap(box, box, [], 0)
