"""Indirect DMA (gather / scatter) through ``t.ap(..., vector_offset=idx)``,
``t.vector_select(0, idx)``, ``t.select(0, idx)`` and ``t[idx]`` (nki_spec.md section 2.5;
``nisa.dma_copy`` oob_mode), checked against NumPy fancy indexing.

Kernels: views_kernels.py.  IR: ``nki.dma_copy_indirect`` -> ``nisa.dma_copy_indirect``.
"""
import inspect
import os

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
import views_kernels as K
from nki_mlir.errors import NKIRuntimeError

BF16 = ml_dtypes.bfloat16
FILE = inspect.getsourcefile(K)
RNG = np.random.default_rng(11)


def _table(v, d, dt):
    if dt == np.int32:
        return RNG.integers(-2 ** 31, 2 ** 31, (v, d)).astype(np.int32)
    return RNG.standard_normal((v, d)).astype(dt)


def _same(got, ref):
    got = np.asarray(got)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    np.testing.assert_array_equal(got.view(np.uint8), np.ascontiguousarray(ref).view(np.uint8))


@pytest.mark.parametrize("dt", [np.float32, BF16, np.int32])
@pytest.mark.parametrize("p,v,d", [(128, 500, 64), (1, 3, 8), (128, 128, 1), (64, 1000, 512)])
def test_gather_rows(dt, p, v, d):
    table = _table(v, d, dt)
    idx = RNG.integers(0, v, (p, 1)).astype(np.int32)
    _same(K.gather_ap(table, idx), table[idx[:, 0]])


@pytest.mark.parametrize("how", ["vector_select", "select"])
def test_gather_by_select(how):
    table = _table(300, 32, np.float32)
    idx = RNG.integers(0, 300, (128, 1)).astype(np.uint32).astype(np.int32)
    _same(K.gather_select(table, idx, how), table[idx[:, 0]])


def test_gather_uint32_indices_and_subscript():
    table = _table(200, 16, BF16)
    idx = RNG.integers(0, 200, (128, 1)).astype(np.uint32)
    _same(K.gather_subscript(table, idx), table[idx[:, 0].astype(np.int64)])


def test_gather_repeated_indices():
    table = _table(10, 4, np.float32)
    idx = np.zeros((128, 1), np.int32)
    idx[::2] = 9
    _same(K.gather_ap(table, idx), table[idx[:, 0]])


@pytest.mark.parametrize("dt", [np.float32, BF16])
def test_scatter_rows(dt):
    table = _table(500, 64, dt)
    rows = _table(128, 64, dt)
    idx = RNG.permutation(500)[:128].astype(np.int32).reshape(128, 1)
    ref = table.copy()
    ref[idx[:, 0]] = rows
    _same(K.scatter_rows(table, rows, idx), ref)


def test_oob_skip_leaves_rows_untouched():
    table = _table(500, 64, np.float32)
    idx = RNG.integers(0, 500, (128, 1)).astype(np.int32)
    idx[5], idx[7], idx[127] = 500, -1, 2 ** 30
    ref = table[np.clip(idx[:, 0], 0, 499)].copy()
    ref[[5, 7, 127]] = 0.0  # the kernel memsets g to 0 first
    _same(K.gather_select(table, idx, "skip"), ref)


def test_oob_error_names_instruction_index_and_bound():
    table = _table(500, 64, np.float32)
    idx = RNG.integers(0, 500, (128, 1)).astype(np.int32)
    idx[5] = 500
    with pytest.raises(NKIRuntimeError) as info:
        K.gather_select(table, idx, "vector_select")
    err = info.value
    text = str(err)
    assert "nisa.dma_copy_indirect" in text
    assert "'src_index' value 500 at partition 5" in text
    assert "'src' has 500 rows (valid indices 0..499)" in text
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE)
    lines = [i for i, l in enumerate(open(FILE).read().splitlines(), 1)
             if "nisa.dma_copy(dst=g, src=table.vector_select(0, ix))" in l]
    assert err.loc.line == lines[0]


def test_oob_error_on_scatter_index():
    table = _table(100, 8, np.float32)
    rows = _table(128, 8, np.float32)
    idx = RNG.permutation(100).astype(np.int32)
    idx = np.concatenate([idx, np.full(28, 100, np.int32)]).reshape(128, 1)
    with pytest.raises(NKIRuntimeError) as info:
        K.scatter_rows(table, rows, idx)
    assert "'dst_index' value 100 at partition 100" in str(info.value)
    assert "'dst' has 100 rows" in str(info.value)


@nki.jit
def scatter_by_column(table, rows, idx):
    """out = table; out[idx[i, c], :] = rows[i, :] for the index column ``c = 1`` of the
    [P, 3] index tile, picked as an SBUF [P, 1, 1] view with ``ap`` (one element per
    partition: taken as its [P, 1] reshape)."""
    p, d = rows.shape
    out = nl.ndarray(table.shape, table.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=table)
    ix = nl.ndarray(idx.shape, idx.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ix, src=idx)
    col = ix.ap(pattern=[[idx.shape[1], p], [1, 1], [1, 1]], offset=1)
    r = nl.ndarray((p, d), rows.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=r, src=rows)
    nisa.dma_copy(dst=out.ap([[d, p], [1, d]], offset=0, vector_offset=col, indirect_dim=0), src=r)
    return out


def test_scatter_index_column_as_p11_view():
    table = _table(300, 16, np.float32)
    rows = _table(32, 16, np.float32)
    idx = RNG.integers(0, 300, (32, 3)).astype(np.uint32)
    idx[:, 1] = RNG.permutation(300)[:32]
    ref = table.copy()
    ref[idx[:, 1].astype(np.int64)] = rows
    _same(scatter_by_column(table, rows, idx), ref)
