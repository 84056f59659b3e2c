"""End-to-end numerics of the select / search / sequence instructions against NumPy.

select_reduce, range_select, max8, nc_find_index8, nc_match_replace8, tensor_copy_predicated,
sequence_bounds, nonzero_with_count, topk (nki_spec.md section 5.4); kernels in
isa_select_kernels.py.  References are written here from the NKI docs, independently of the
interpreter.  Negative tests check the message and the reported source line.
"""
from __future__ import annotations

import inspect
import os

import ml_dtypes
import numpy as np
import pytest

import isa_select_kernels as K
import nki_mlir as nki
from nki_mlir.errors import NKIError

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)
FP32_MIN = np.float32(-3.4028235e38)
FILE = inspect.getsourcefile(K)
RNG = np.random.default_rng(1234)


def _rand(shape, dtype, lo=-4.0, hi=4.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32).astype(dtype)


# ----------------------------------------------------------------------------- top-8 kernel


def _top8_reference(x):
    """Values: the 8 largest per row, descending.  Indices: positions in the row; equal
    values take successive positions in ascending order (a stable argsort), which for
    distinct values is the first (only) occurrence."""
    xf = x.astype(np.float32)
    order = np.argsort(-xf, axis=1, kind="stable")[:, :8]
    return np.take_along_axis(xf, order, axis=1).astype(x.dtype), order.astype(np.uint32)


@pytest.mark.parametrize("dtype", [F32, BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("shape", [(128, 512), (128, 8), (1, 8), (1, 300), (37, 1000)])
def test_top8_kernel(dtype, shape):
    x = _rand(shape, dtype)
    vals, idx = K.top8(x)
    ref_v, ref_i = _top8_reference(x)
    assert vals.dtype == dtype and idx.dtype == np.uint32
    np.testing.assert_array_equal(vals, ref_v)
    np.testing.assert_array_equal(idx, ref_i)


def test_top8_kernel_with_ties_and_max_size():
    x = _rand((128, 16384), F32)
    x[5, [3, 100, 7000]] = 9.0          # a tied maximum: three positions, ascending
    x[6, :] = 1.0                       # all equal: indices 0..7
    vals, idx = K.top8(x)
    ref_v, ref_i = _top8_reference(x)
    np.testing.assert_array_equal(vals, ref_v)
    np.testing.assert_array_equal(idx, ref_i)
    assert list(idx[5, :3]) == [3, 100, 7000] and list(idx[6]) == list(range(8))


# ----------------------------------------------------------------------------- max8 / find / replace


@pytest.mark.parametrize("src_dtype,dst_dtype", [(F32, BF16), (BF16, F32), (F32, F32)])
def test_max8_3d_source_and_cast(src_dtype, dst_dtype):
    x = _rand((64, 4, 32), src_dtype)
    got = K.max8_into(x, dst_dtype)
    ref = -np.sort(-x.astype(np.float32).reshape(64, -1), axis=1)[:, :8]
    np.testing.assert_array_equal(got, ref.astype(dst_dtype))


@pytest.mark.parametrize("dst_dtype", [np.dtype(np.uint32), np.dtype(np.uint16)])
@pytest.mark.parametrize("data_dtype", [F32, BF16], ids=["fp32", "bf16"])
def test_find_index8_first_occurrence_and_missing(dst_dtype, data_dtype):
    p, f = 128, 64
    data = np.tile(np.arange(f, dtype=np.float32) % 40, (p, 1)).astype(data_dtype)  # 0..39, 0..23
    vals = np.tile(np.array([3, 39, 0, 23, 500, 24, 7, -1], np.float32), (p, 1)).astype(data_dtype)
    got = K.find_index8(data, vals, dst_dtype)
    ones = np.iinfo(dst_dtype).max
    expect = np.array([3, 39, 0, 23, ones, 24, 7, ones])  # first occurrences; missing -> all ones
    assert got.dtype == dst_dtype
    np.testing.assert_array_equal(got, np.tile(expect, (p, 1)).astype(dst_dtype))


def test_find_index8_and_match_replace8_duplicate_vals_docs_example():
    """The NKI 2.32 docs example: data=[1,2,3,4,8,8,8,8,8,8,8], vals=[3,8,8,8,8,8,8,8]."""
    data = np.array([[1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    vals = np.array([[3, 8, 8, 8, 8, 8, 8, 8]], np.float32)
    np.testing.assert_array_equal(K.find_index8(data, vals, np.dtype(np.uint32)),
                                  [[2, 4, 5, 6, 7, 8, 9, 10]])
    d, i = K.match_replace8(data, vals, -5.0, True, np.dtype(np.uint32))
    np.testing.assert_array_equal(i, [[2, 10, 9, 8, 7, 6, 5, 4]])
    np.testing.assert_array_equal(d, [[1, 2, -5, 4, -5, -5, -5, -5, -5, -5, -5]])


def _match_replace_reference(data, vals, imm, idx_dtype):
    """vals processed i = 7..0, each replacing the first position still equal to it."""
    cur = data.astype(np.float32).copy()
    pos = np.full(vals.shape, np.iinfo(idx_dtype).max, np.int64)
    for r in range(cur.shape[0]):
        for i in range(7, -1, -1):
            hits = np.flatnonzero(cur[r] == np.float32(vals[r, i]))
            if hits.size:
                cur[r, hits[0]] = imm
                pos[r, i] = hits[0]
    return cur.astype(data.dtype), pos.astype(idx_dtype)


@pytest.mark.parametrize("dtype", [F32, BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("shape", [(128, 256), (1, 8), (16, 16384)])
def test_match_replace8(dtype, shape):
    p, f = shape
    data = RNG.integers(0, 20, size=shape).astype(np.float32).astype(dtype)
    cols = RNG.integers(0, f, size=(p, 8))
    vals = np.take_along_axis(data, cols, axis=1)
    vals[:, 0] = 99.0  # never present
    d, i = K.match_replace8(data, vals, -1e9, True, np.dtype(np.uint16))
    ref_d, ref_i = _match_replace_reference(data, vals, np.float32(-1e9), np.uint16)
    np.testing.assert_array_equal(d, ref_d)
    np.testing.assert_array_equal(i, ref_i)
    d_only = K.match_replace8(data, vals, -1e9, False, np.dtype(np.uint16))
    np.testing.assert_array_equal(d_only, ref_d)


# ----------------------------------------------------------------------------- copy_predicated


@pytest.mark.parametrize("pred_dtype", [np.uint8, np.uint16, np.uint32])
@pytest.mark.parametrize("dtype", [F32, BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("shape", [(128, 512), (1, 1), (128, 1), (64, 4, 8)])
@pytest.mark.parametrize("reverse", [False, True])
def test_tensor_copy_predicated(pred_dtype, dtype, shape, reverse):
    dst0, src = _rand(shape, dtype), _rand(shape, dtype)
    pred = RNG.integers(0, 3, size=shape).astype(pred_dtype) * 7  # 0 / 7 / 14: nonzero = true
    got = K.copy_predicated(dst0, src, pred, reverse)
    take = (pred != 0) != reverse
    np.testing.assert_array_equal(got, np.where(take, src, dst0))


@pytest.mark.parametrize("dtype", [F32, BF16, np.dtype(np.int32)], ids=["fp32", "bf16", "int32"])
def test_tensor_copy_predicated_scalar_src(dtype):
    dst0 = RNG.integers(-50, 50, size=(128, 33)).astype(dtype)
    pred = RNG.integers(0, 2, size=(128, 33)).astype(np.uint8)
    got = K.copy_predicated_scalar(dst0, 2.5, pred)
    np.testing.assert_array_equal(got, np.where(pred != 0, np.float32(2.5).astype(dtype), dst0))


# ----------------------------------------------------------------------------- select_reduce


@pytest.mark.parametrize("pred_dtype", [np.int8, np.uint8, np.int16, np.uint16])
@pytest.mark.parametrize("dtype", [F32, BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("shape", [(128, 512), (1, 1), (128, 1), (3, 2, 5)])
@pytest.mark.parametrize("vector_false", [False, True])
def test_select_reduce(pred_dtype, dtype, shape, vector_false):
    p = shape[0]
    pred = RNG.integers(0, 2, size=shape).astype(pred_dtype)
    on_true = _rand(shape, dtype)
    on_false = _rand((p, 1), F32) if vector_false else -0.75
    for reverse in (False, True):
        d, r = K.select_reduce(pred, on_true, on_false, reverse, F32, vector_false)
        take = (pred != 0) != reverse
        fill = on_false.reshape((p,) + (1,) * (len(shape) - 1)) if vector_false else np.float32(on_false)
        ref32 = np.where(take, on_true.astype(np.float32), fill).astype(np.float32)
        np.testing.assert_array_equal(d, ref32.astype(dtype))
        np.testing.assert_array_equal(r, ref32.reshape(p, -1).max(axis=1, keepdims=True))


def test_select_reduce_bf16_reduce_res_and_running_max():
    pred = RNG.integers(0, 2, size=(128, 64)).astype(np.uint8)
    a, b = _rand((128, 64), F32), _rand((128, 64), F32)
    d, r = K.select_reduce(pred, a, -3.0, False, BF16, False)
    ref = np.where(pred != 0, a, np.float32(-3.0))
    np.testing.assert_array_equal(r, ref.max(axis=1, keepdims=True).astype(BF16))
    got = K.select_reduce_running(pred, a, b)
    both = np.maximum(np.where(pred != 0, a, -1.0).max(axis=1), np.where(pred != 0, b, -1.0).max(axis=1))
    np.testing.assert_array_equal(got, both.reshape(128, 1).astype(np.float32))
    np.testing.assert_array_equal(K.select_plain(pred, a), np.where(pred != 0, a, np.float32(7.0)))


# ----------------------------------------------------------------------------- range_select


def _range_select_reference(x, b0, b1, start, cmp0, cmp1):
    p, f = x.shape[0], int(np.prod(x.shape[1:]))
    idx = (start + np.arange(f)).astype(np.float32)[None, :]
    keep = cmp0(idx, b0) & cmp1(idx, b1)
    vals = np.where(keep, x.astype(np.float32).reshape(p, f), FP32_MIN).astype(np.float32)
    return vals, vals.max(axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", [F32, BF16], ids=["fp32", "bf16"])
@pytest.mark.parametrize("shape", [(128, 512), (1, 1), (128, 1), (16, 4, 16)])
@pytest.mark.parametrize("start", [0, 100])
def test_range_select(dtype, shape, start):
    p, f = shape[0], int(np.prod(shape[1:]))
    x = _rand(shape, dtype)
    b0 = RNG.integers(start - 2, start + f, size=(p, 1)).astype(np.float32)
    b1 = b0 + RNG.integers(0, f + 1, size=(p, 1)).astype(np.float32)  # some rows fully masked
    d, r = K.range_select(x, b0, b1, dtype, start)
    vals, rmax = _range_select_reference(x, b0, b1, start, np.greater_equal, np.less)
    np.testing.assert_array_equal(d, vals.astype(dtype).reshape(shape))  # FP32_MIN -> -inf in bf16
    np.testing.assert_array_equal(r, rmax)  # fp32 reduce_res keeps FP32_MIN for empty rows
    if dtype == BF16 and (rmax == FP32_MIN).any():
        assert np.isneginf(d.reshape(p, -1)[rmax[:, 0] == FP32_MIN].astype(np.float32)).all()


def test_range_select_equal_and_target_gate():
    x = _rand((128, 64), F32)
    b0 = RNG.integers(0, 64, size=(128, 1)).astype(np.float32)
    got = K.range_select_eq(x, b0, b0)
    vals, _ = _range_select_reference(x, b0, b0, 0, np.equal, np.less_equal)
    np.testing.assert_array_equal(got, vals)
    with pytest.raises(NKIError) as info:
        nki.compile(K.range_select_eq, x, b0, b0, target="trn1")
    assert "nisa.range_select: range_select needs trn2 (NeuronCore-v3) or newer" in str(info.value)


# ----------------------------------------------------------------------------- sequence_bounds


def _sequence_bounds_reference(ids):
    """The NKI docs' loop: [start, exclusive end] of each run of equal ids; id 0 -> (n, -1)."""
    seq = ids.reshape(-1)
    n = seq.size
    lo, hi = np.zeros(n, np.int64), np.zeros(n, np.int64)
    lo[0] = 0 if seq[0] != 0 else n
    for i in range(1, n):
        lo[i] = n if seq[i] == 0 else (lo[i - 1] if seq[i] == seq[i - 1] else i)
    hi[-1] = n if seq[-1] != 0 else -1
    for i in range(n - 2, -1, -1):
        hi[i] = -1 if seq[i] == 0 else (hi[i + 1] if seq[i] == seq[i + 1] else i + 1)
    return np.stack([lo, hi]).reshape(1, 2, n)


@pytest.mark.parametrize("dtype", [F32, np.dtype(np.int32)], ids=["fp32", "int32"])
@pytest.mark.parametrize("n", [1, 2, 32, 512, 4096])
def test_sequence_bounds(dtype, n):
    ids = np.sort(RNG.integers(0, max(2, n // 4), size=n)).reshape(1, n).astype(dtype)
    if n >= 32:
        ids[0, -3:] = 0  # trailing padding
        ids[0, 10:12] = 5  # a run that reappears later: runs are contiguous, not per id
    got = K.sequence_bounds(ids)
    assert got.dtype == dtype and got.shape == (1, 2, n)
    np.testing.assert_array_equal(got, _sequence_bounds_reference(ids).astype(dtype))


# ----------------------------------------------------------------------------- nonzero_with_count


@pytest.mark.parametrize("dtype", [F32, np.dtype(np.int32)], ids=["fp32", "int32"])
@pytest.mark.parametrize("shape", [(128, 64), (16, 1), (1, 8), (128, 4096)])
def test_nonzero_with_count(dtype, shape):
    p, f = shape
    x = (RNG.integers(0, 3, size=shape) * RNG.integers(0, 2, size=shape)).astype(dtype)
    x[0, :] = 0  # an empty row: all padding, count 0
    dst0 = np.full((p, f + 1), -77, np.int32)
    got = K.nonzero_with_count(x, dst0, 16, -1)
    ref = dst0.copy()
    for r in range(0, p, 16):
        nz = np.flatnonzero(x[r])
        ref[r, :] = -1
        ref[r, :nz.size] = nz + 16
        ref[r, f] = nz.size
    np.testing.assert_array_equal(got, ref)  # other partitions untouched


def test_nonzero_with_count_docs_example_and_target_gate():
    x = np.zeros((16, 8), np.int32)
    x[0] = [0, 1, 1, 0, 0, 1, 0, 0]
    got = K.nonzero_with_count(x, np.zeros((16, 9), np.int32), 16, -1)
    np.testing.assert_array_equal(got[0], [17, 18, 21, -1, -1, -1, -1, -1, 3])
    with pytest.raises(NKIError) as info:
        nki.compile(K.nonzero_with_count, x, np.zeros((16, 9), np.int32), 0, -1, target="trn1")
    assert "nisa.nonzero_with_count: nonzero_with_count needs trn2" in str(info.value)


# ----------------------------------------------------------------------------- topk


def _snake_topk_reference(x, n, k, v0, i0):
    """Per 16-partition group: snake s -> (s % 16, s // 16); the k largest, ascending, with
    their snake indices, written in snake order over copies of v0 / i0 (other slots kept)."""
    p = x.shape[0]
    vals, idxs = v0.copy(), i0.copy()
    for g in range(p // 16):
        snake = x[g * 16:(g + 1) * 16].reshape(16, -1).T.reshape(-1)[:n].astype(np.float32)
        top = sorted(range(n), key=lambda s: (-snake[s], s))[:k]
        top = sorted(top, key=lambda s: (snake[s], s))
        for j, s in enumerate(top):
            vals[g * 16 + j % 16, j // 16] = snake[s]
            idxs[g * 16 + j % 16, j // 16] = s
    return vals, idxs


@pytest.mark.parametrize("p,f,n,k", [(16, 16, 256, 8), (128, 20, 300, 40), (32, 3, 40, 40),
                                     (16, 1, 8, 1), (16, 4096, 65535, 16)])
def test_topk(p, f, n, k):
    x = np.zeros((p, f), np.float32)
    for g in range(p // 16):  # distinct values per snake (exact in bf16: integers <= 256)
        vals = RNG.permutation(np.arange(16 * f, dtype=np.float32) % 257 - 128)
        x[g * 16:(g + 1) * 16] = vals.reshape(f, 16).T
    x = x.astype(BF16)
    v0, i0 = np.full((p, k), -9.0, BF16), np.full((p, k), 12345, np.uint32)
    v, i = K.topk(x, v0, i0, n)
    ref_v, ref_i = _snake_topk_reference(x, n, k, v0, i0)
    np.testing.assert_array_equal(v, ref_v)
    np.testing.assert_array_equal(i, ref_i)


# ----------------------------------------------------------------------------- negatives


def _tag_line(tag: str) -> int:
    for no, line in enumerate(open(FILE).read().splitlines(), 1):
        if line.rstrip().endswith(f"# E:{tag}"):
            return no
    raise AssertionError(tag)


X = np.zeros((4, 4), np.float32)
U8, U16, U32 = np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32)
I8, I32 = np.dtype(np.int8), np.dtype(np.int32)

NEGATIVE = [
    # kernel, args after X, tag, message fragment
    (K.bad_max8, ((128, 4), (128, 8), F32), "max8",
     "nisa.max8: 'src' has 4 elements per partition, but nisa.max8 needs 8..16384"),
    (K.bad_max8, ((128, 16385), (128, 8), F32), "max8",
     "nisa.max8: 'src' has 16385 elements per partition, but nisa.max8 needs 8..16384"),
    (K.bad_max8, ((128, 64), (128, 16), F32), "max8", "nisa.max8: 'dst' must be a 2-D [128, 8] tile"),
    (K.bad_max8, ((128, 2, 2, 16), (128, 8), F32), "max8", "nisa.max8: 'src' is 4-D"),
    (K.bad_find_index8, ((128, 64), (128, 8), I32), "find",
     "nisa.nc_find_index8: 'dst' has dtype int32, but it must be uint16 or uint32"),
    (K.bad_find_index8, ((128, 64), (128, 4), U32), "find",
     "nisa.nc_find_index8: 'vals' must hold exactly 8 elements per partition"),
    (K.bad_find_index8, ((128, 20000), (128, 8), U32), "find",
     "nisa.nc_find_index8: 'data' has 20000 elements per partition, but nisa.nc_find_index8 needs 8..16384"),
    (K.bad_match_replace8, (I32, False), "match",
     "nisa.nc_match_replace8: 'dst_idx' has dtype int32, but it must be uint16 or uint32"),
    (K.bad_match_replace8, (U32, True), "match",
     "nisa.nc_match_replace8: 'imm' must be a compile-time number"),
    (K.bad_copy_predicated, (F32, I8, 128, False), "copy",
     "nisa.tensor_copy_predicated: 'predicate' has dtype int8, but it must be uint8, uint16 or uint32"),
    (K.bad_copy_predicated, (BF16, U8, 128, False), "copy",
     "nisa.tensor_copy_predicated: 'src' dtype bfloat16 differs from 'dst' dtype float32"),
    (K.bad_copy_predicated, (F32, U8, 64, False), "copy",
     "nisa.tensor_copy_predicated: partition counts differ"),
    (K.bad_copy_predicated, (F32, U8, 128, True), "copy",
     "nisa.tensor_copy_predicated: inputs 'src' and 'predicate' are both in PSUM"),
    (K.bad_select_reduce, (I32, F32, (128, 1), F32, False), "select",
     "nisa.select_reduce: 'predicate' has dtype int32, but it must be int8, uint8, int16 or uint16"),
    (K.bad_select_reduce, (U8, I32, (128, 1), F32, False), "select",
     "nisa.select_reduce: 'on_true' has dtype int32"),
    (K.bad_select_reduce, (U8, F32, (128, 2), F32, False), "select",
     "nisa.select_reduce: operand 'on_false' must be a scalar or a [128, 1] per-partition tensor"),
    (K.bad_select_reduce, (U8, F32, (128, 1), I32, False), "select",
     "nisa.select_reduce: 'reduce_res' has dtype int32, but it must be a float type"),
    (K.bad_select_reduce, (U8, F32, (128, 1), F32, True), "select",
     "nisa.select_reduce: inputs 'on_true' and 'predicate' are both in PSUM"),
    (K.bad_select_reduce_args, (True, False), "selargs",
     "nisa.select_reduce: reduce_op=nl.add is not a supported op (allowed: nl.maximum)"),
    (K.bad_select_reduce_args, (False, True), "selargs",
     "nisa.select_reduce: reduce_cmd=load_reduce is not supported"),
    (K.bad_range_select, (BF16, F32, -3.4028235e38, False, 0), "range",
     "nisa.range_select: 'bound0' has dtype bfloat16, but it must be float32"),
    (K.bad_range_select, (F32, I32, -3.4028235e38, False, 0), "range",
     "nisa.range_select: 'on_true_tile' has dtype int32, but it must be a float type"),
    (K.bad_range_select, (F32, F32, 0.0, False, 0), "range",
     "nisa.range_select: on_false_value=0.0 is not supported; the hardware only fills with FP32_MIN"),
    (K.bad_range_select, (F32, F32, -3.4028235e38, True, 0), "range",
     "nisa.range_select: comp_op0=nl.not_equal is not a supported op"),
    (K.bad_range_select, (F32, F32, -3.4028235e38, False, 1.5), "range",
     "nisa.range_select: 'range_start' must be a compile-time integer"),
    (K.bad_sequence_bounds, ((2, 16), (2, 2, 16), F32), "seq",
     "nisa.sequence_bounds: 'dst' has partition dimension 2, but sequence_bounds needs exactly 1"),
    (K.bad_sequence_bounds, ((1, 16), (1, 16, 2), F32), "seq",
     "nisa.sequence_bounds: 'dst' must be [1, 2, 16]"),
    (K.bad_sequence_bounds, ((1, 16), (1, 2, 16), BF16), "seq",
     "nisa.sequence_bounds: 'dst' has dtype bfloat16, but it must be float32 or int32"),
    (K.bad_nonzero, ((128, 64), I32, F32, False), "nonzero",
     "nisa.nonzero_with_count: 'dst' must hold 65 elements per partition"),
    (K.bad_nonzero, ((128, 65), F32, F32, False), "nonzero",
     "nisa.nonzero_with_count: 'dst' has dtype float32, but it must be int32"),
    (K.bad_nonzero, ((128, 65), I32, BF16, False), "nonzero",
     "nisa.nonzero_with_count: 'src' has dtype bfloat16, but it must be float32 or int32"),
    (K.bad_nonzero, ((128, 65), I32, F32, True), "nonzero",
     "nisa.nonzero_with_count: operand 'dst' is a tensor in psum, but this instruction only accepts sbuf"),
    (K.bad_topk, ((24, 16), BF16, 8, U32, 64), "topk",
     "nisa.topk: 'src' has 24 partitions; topk works on 16-partition groups"),
    (K.bad_topk, ((16, 16), F32, 8, U32, 64), "topk",
     "nisa.topk: 'src' has dtype float32, but it must be bfloat16"),
    (K.bad_topk, ((16, 16), BF16, 8, I32, 64), "topk",
     "nisa.topk: 'idx_dst' has dtype int32, but it must be uint32"),
    (K.bad_topk, ((16, 16), BF16, 8, U32, 4), "topk", "nisa.topk: n=4 is out of range (8 <= n < 65536)"),
    (K.bad_topk, ((16, 16), BF16, 100, U32, 64), "topk",
     "nisa.topk: K=100 (the free size of 'val_dst') must satisfy 1 <= K < 32768 and K <= n=64"),
    (K.bad_topk, ((16, 2), BF16, 8, U32, 64), "topk",
     "nisa.topk: 'src' has 2 elements per partition, fewer than ceil(n/16)=4"),
]


@pytest.mark.parametrize("kernel,args,tag,fragment", NEGATIVE,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(NEGATIVE)])
def test_negative(kernel, args, tag, fragment):
    with pytest.raises(NKIError) as info:
        kernel(X, *args)
    err, text = info.value, str(info.value)
    assert fragment in text, text
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE)
    assert err.loc.line == _tag_line(tag)
    assert text.splitlines()[0].startswith(f"{err.loc.file}:{err.loc.line}:{err.loc.col}: ")
    assert f"# E:{tag}" in text.splitlines()[-2] and text.splitlines()[-1].strip() == "^"
    assert "Traceback" not in text
