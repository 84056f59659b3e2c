"""Numerics of the core nki.isa instructions, end to end, against NumPy references.

Rules checked (nki_spec.md section 3, runtime/numerics.py): Vector/Scalar/GpSimd compute in
fp32 and round once to the dst dtype (RNE, ml_dtypes for bf16/fp8, non-saturating);
tensor_copy is bit-exact for equal dtypes on Vector/GpSimd and goes through fp32 otherwise
(always on ScalarE); int32 arithmetic is exact on GpSimd and through fp32 on Vector (loses
precision above 2^24).  Edge shapes: 1 partition, 128 partitions, free size 1, large free.
The kernels live in this file (the frontend reads their source).
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl

F32 = np.dtype(np.float32)
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
E4M3 = np.dtype(ml_dtypes.float8_e4m3)
E5M2 = np.dtype(ml_dtypes.float8_e5m2)
E4M3FN = np.dtype(ml_dtypes.float8_e4m3fn)
I32 = np.dtype(np.int32)
U8 = np.dtype(np.uint8)

FLOATS = [F32, BF16, E4M3]
SHAPES = [(1, 1), (1, 2048), (128, 1), (128, 512), (128, 4096), (32, 4, 8)]
ENGINES = {"vector": nisa.engine.vector, "gpsimd": nisa.engine.gpsimd, "scalar": nisa.engine.scalar}

OPS = {"add": nl.add, "subtract": nl.subtract, "multiply": nl.multiply, "maximum": nl.maximum,
       "minimum": nl.minimum, "divide": nl.divide, "greater": nl.greater, "abs_max": nl.abs_max,
       "power": nl.power, "bitwise_and": nl.bitwise_and, "bitwise_xor": nl.bitwise_xor,
       "left_shift": nl.left_shift, "right_shift": nl.right_shift, "copy": nl.copy, "exp": nl.exp,
       "tanh": nl.tanh, "relu": nl.relu, "sigmoid": nl.sigmoid, "square": nl.square,
       "sqrt": nl.sqrt, "log": nl.log, "sin": nl.sin, "gelu": nl.gelu, "rsqrt": nl.rsqrt,
       "equal": nl.equal, "less": nl.less}

RNG = np.random.default_rng(1234)


def rand(shape, dt, lo=-4.0, hi=4.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32).astype(dt)


def f32(x):
    return np.asarray(x).astype(np.float32)


def cast(v, dt):
    """Reference float32 -> dt: RNE for floats; trunc + saturate (NaN -> 0) for ints."""
    v = np.asarray(v, np.float32)
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        w = np.nan_to_num(np.trunc(v.astype(np.float64)), nan=0.0, posinf=info.max, neginf=info.min)
        return np.clip(w, info.min, info.max).astype(dt)
    return v.astype(dt)


def same(got, want):
    """Bitwise equality of two arrays of the same (possibly ml_dtypes) dtype; NaN == NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    g, w = got.view(f"u{got.dtype.itemsize}"), want.view(f"u{want.dtype.itemsize}")
    if got.dtype.kind not in "iub":
        nan = np.isnan(got.astype(np.float32)) & np.isnan(want.astype(np.float32))
        g, w = np.where(nan, 0, g), np.where(nan, 0, w)
    np.testing.assert_array_equal(g, w)


# =============================================================================== kernels


@nki.jit
def copy_k(a, dt, eng):
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    tb = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    nisa.tensor_copy(dst=tb, src=ta, engine=eng)
    nisa.dma_copy(dst=out, src=tb)
    return out


@nki.jit
def psum_evict_k(a):
    """SBUF -> PSUM (Vector) -> SBUF bf16 (ScalarE): the usual eviction path."""
    out = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    p = nl.ndarray(a.shape, nl.float32, buffer=nl.psum)
    nisa.tensor_copy(dst=p, src=ta, engine=nisa.engine.vector)
    tb = nl.ndarray(a.shape, nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=tb, src=p, engine=nisa.engine.scalar)
    nisa.dma_copy(dst=out, src=tb)
    return out


@nki.jit
def dma_k(a, dt, shape):
    """HBM a -> SBUF tile of dtype dt and another shape (flat element order) -> HBM."""
    out = nl.ndarray(shape, dt, buffer=nl.shared_hbm)
    t = nl.ndarray(shape, dt, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def tt_k(a, b, op, dt, eng):
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    tb = nl.ndarray(b.shape, b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tb, src=b)
    tc = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=tc, data1=ta, data2=tb, op=OPS[op], engine=eng)
    nisa.dma_copy(dst=out, src=tc)
    return out


@nki.jit
def ts_k(a, op0, s0, rev0, op1, s1, dt):
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    tc = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    if op1 == "":
        nisa.tensor_scalar(dst=tc, data=ta, op0=OPS[op0], operand0=s0, reverse0=rev0)
    else:
        nisa.tensor_scalar(dst=tc, data=ta, op0=OPS[op0], operand0=s0, reverse0=rev0,
                           op1=OPS[op1], operand1=s1)
    nisa.dma_copy(dst=out, src=tc)
    return out


@nki.jit
def ts_vec_k(a, v, dt):
    """(a * v[p]) - 1.5 with a [P, 1] fp32 per-partition operand."""
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    tv = nl.ndarray(v.shape, v.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    nisa.dma_copy(dst=tv, src=v)
    tc = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=tc, data=ta, op0=nl.multiply, operand0=tv, op1=nl.subtract, operand1=1.5)
    nisa.dma_copy(dst=out, src=tc)
    return out


@nki.jit
def act_k(a, bias, op, scale, dt):
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    tb = nl.ndarray(bias.shape, bias.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=tb, src=bias)
    tc = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    nisa.activation(dst=tc, op=OPS[op], data=ta, bias=tb, scale=scale)
    nisa.dma_copy(dst=out, src=tc)
    return out


@nki.jit
def act_reduce_k(a, op, dt):
    p = a.shape[0]
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    red = nl.ndarray((p, 1), nl.float32, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    tc = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    tr = nl.ndarray((p, 1), nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=tc, op=OPS[op], data=ta, reduce_op=nl.add, reduce_res=tr)
    nisa.dma_copy(dst=out, src=tc)
    nisa.dma_copy(dst=red, src=tr)
    return out, red


@nki.jit
def reduce_k(a, op, axis, negate, dshape, dt):
    out = nl.ndarray(dshape, dt, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    tc = nl.ndarray(dshape, dt, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=tc, op=OPS[op], data=ta, axis=axis, negate=negate)
    nisa.dma_copy(dst=out, src=tc)
    return out


@nki.jit
def recip_k(a, dt):
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    tc = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    nisa.reciprocal(dst=tc, data=ta)
    nisa.dma_copy(dst=out, src=tc)
    return out


@nki.jit
def memset_k(a, value, dt, eng):
    out = nl.ndarray(a.shape, dt, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dt, buffer=nl.sbuf)
    nisa.memset(dst=t, value=value, engine=eng)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def iota_k(a, offset, cm, dt):
    p, f = a.shape
    out = nl.ndarray((p, f), dt, buffer=nl.shared_hbm)
    t = nl.ndarray((p, f), dt, buffer=nl.sbuf)
    nisa.iota(dst=t, pattern=[[1, f]], offset=offset, channel_multiplier=cm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def select_k(a, on_false):
    """Causal mask: keep a[p, f] where p - f >= 0, else on_false."""
    p, f = a.shape
    out = nl.ndarray((p, f), a.dtype, buffer=nl.shared_hbm)
    ta = nl.ndarray((p, f), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    t = nl.ndarray((p, f), a.dtype, buffer=nl.sbuf)
    nisa.affine_select(dst=t, pattern=[[-1, f]], channel_multiplier=1, on_true_tile=ta,
                       on_false_value=on_false, cmp_op=nl.greater_equal)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def transpose_k(a):
    p, f = a.shape
    out = nl.ndarray((f, p), a.dtype, buffer=nl.shared_hbm)
    ta = nl.ndarray((p, f), a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    t = nl.ndarray((f, p), a.dtype, buffer=nl.sbuf)
    nisa.nc_transpose(dst=t, data=ta, engine=nisa.engine.vector)
    nisa.dma_copy(dst=out, src=t)
    return out


# ============================================================================ tensor_copy


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("src,dst", [(F32, F32), (BF16, BF16), (E4M3, E4M3), (F32, BF16),
                                     (BF16, F32), (F32, E4M3), (F32, E5M2), (E4M3, BF16), (F32, I32)])
@pytest.mark.parametrize("eng", ["vector", "gpsimd", "scalar"])
def test_tensor_copy(shape, src, dst, eng):
    a = rand(shape, src, -100, 100)
    got = copy_k(a, dst, ENGINES[eng])
    same(got, cast(f32(a), dst))


def test_tensor_copy_equal_dtypes_is_bit_exact_on_vector_and_gpsimd_only():
    # NaN payloads survive a bit-exact copy; int32 above 2^24 survives on Vector/GpSimd only
    bits = np.array([[0x7FC01234, 0x7F800001, 0x3F800000]], np.uint32).view(np.float32)
    for eng in ("vector", "gpsimd"):
        np.testing.assert_array_equal(copy_k(bits, F32, ENGINES[eng]).view(np.uint32), bits.view(np.uint32))
    big = np.array([[2 ** 24 + 1, -(2 ** 31), 2 ** 31 - 1, 7]], np.int32)
    np.testing.assert_array_equal(copy_k(big, I32, ENGINES["vector"]), big)
    np.testing.assert_array_equal(copy_k(big, I32, ENGINES["gpsimd"]), big)
    via_f32 = copy_k(big, I32, ENGINES["scalar"])  # ScalarE always goes through fp32
    np.testing.assert_array_equal(via_f32, [[2 ** 24, -(2 ** 31), 2 ** 31 - 1, 7]])


def test_tensor_copy_int32_to_uint32_goes_through_fp32():
    a = np.array([[-5, 2 ** 24 + 1, 300]], np.int32)
    np.testing.assert_array_equal(copy_k(a, np.dtype(np.uint32), ENGINES["vector"]), [[0, 2 ** 24, 300]])
    np.testing.assert_array_equal(copy_k(a, U8, ENGINES["gpsimd"]), [[0, 255, 255]])  # saturates


@pytest.mark.parametrize("dt,expect", [
    # ml_dtypes casts are RNE and non-saturating: overflow -> +-inf, or NaN where there is no inf
    (E4M3, [np.inf, -np.inf, np.nan, np.inf, 0.1015625, np.inf]),  # max finite 240
    (E4M3FN, [np.nan, np.nan, np.nan, np.nan, 0.1015625, 448.0]),
    (E5M2, [1024.0, -1024.0, np.nan, np.inf, 0.09375, 448.0]),
    (BF16, [1000.0, -1000.0, np.nan, np.inf, 0.10009765625, 448.0]),
])
def test_fp8_and_bf16_rounding_overflow_and_nan(dt, expect):
    a = np.array([[1000.0, -1000.0, np.nan, np.inf, 0.1, 448.0]], np.float32)
    got = copy_k(a, dt, ENGINES["vector"]).astype(np.float64)
    np.testing.assert_array_equal(got, np.array([expect]))


def test_bf16_store_rounds_to_nearest_even():
    a = np.array([[1 + 2 ** -8, 1 + 3 * 2 ** -8, 3.4e38, -(1 + 2 ** -8)]], np.float32)
    got = copy_k(a, BF16, ENGINES["vector"]).astype(np.float64)
    np.testing.assert_array_equal(got, [[1.0, 1 + 2 ** -6, np.inf, -1.0]])


def test_psum_eviction_through_scalar_engine():
    a = rand((128, 512), F32)
    same(psum_evict_k(a), a.astype(BF16))


# =============================================================================== dma_copy


@pytest.mark.parametrize("src,dst", [(F32, F32), (F32, BF16), (BF16, F32), (F32, E4M3), (E5M2, F32),
                                     (I32, F32), (F32, I32), (I32, I32)])
@pytest.mark.parametrize("shape,dshape", [((1, 1), (1, 1)), ((128, 512), (128, 512)),
                                          ((4, 128), (128, 4)), ((1, 4096), (128, 32))])
def test_dma_copy(src, dst, shape, dshape):
    a = rand(shape, F32, -2 ** 26, 2 ** 26).astype(src) if src == I32 else rand(shape, src, -200, 200)
    got = dma_k(a, dst, dshape)
    want = a.reshape(dshape) if src == dst else cast(f32(a), dst).reshape(dshape)
    same(got, want)


# ========================================================================== tensor_tensor


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op,ref", [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                                    ("maximum", np.maximum), ("divide", np.divide),
                                    ("greater", lambda x, y: (x > y).astype(np.float32)),
                                    ("abs_max", lambda x, y: np.maximum(np.abs(x), np.abs(y)))])
def test_tensor_tensor(shape, dt, op, ref):
    a, b = rand(shape, dt), rand(shape, dt, 0.5, 3)
    with np.errstate(all="ignore"):
        want = cast(ref(f32(a), f32(b)), dt)
    same(tt_k(a, b, op, dt, None), want)


def test_tensor_tensor_mixed_dtypes_compute_in_fp32():
    a, b = rand((128, 64), BF16), rand((128, 64), E5M2)
    same(tt_k(a, b, "multiply", F32, None), f32(a) * f32(b))
    same(tt_k(a, b, "add", E4M3, None), (f32(a) + f32(b)).astype(E4M3))


def test_tensor_tensor_power_runs_on_gpsimd():
    a, b = rand((128, 8), F32, 0.1, 3), rand((128, 8), F32, -2, 2)
    same(tt_k(a, b, "power", F32, None), np.power(f32(a), f32(b)))


def test_int32_is_exact_on_gpsimd_and_through_fp32_on_vector():
    a = np.array([[2 ** 24 + 1, 2 ** 30 + 3, -(2 ** 24) - 3, 5]], np.int32)
    b = np.array([[0, 1, 0, 7]], np.int32)
    exact = (a.astype(np.int64) + b).astype(np.int32)
    np.testing.assert_array_equal(tt_k(a, b, "add", I32, ENGINES["gpsimd"]), exact)
    np.testing.assert_array_equal(tt_k(a, b, "add", I32, None), exact)  # int32 defaults to GpSimd
    lossy = tt_k(a, b, "add", I32, ENGINES["vector"])
    np.testing.assert_array_equal(lossy, (f32(a) + f32(b)).astype(np.int64).astype(np.int32))
    assert lossy[0, 0] == 2 ** 24 and lossy[0, 1] != exact[0, 1]


@pytest.mark.parametrize("op,ref", [("bitwise_and", np.bitwise_and), ("bitwise_xor", np.bitwise_xor),
                                    ("left_shift", lambda x, y: np.left_shift(x, y)),
                                    ("right_shift", lambda x, y: (x.view(np.uint32) >> y.view(np.uint32)).view(np.int32))])
def test_tensor_tensor_bitvec_is_exact(op, ref):
    a = np.array([[-16, 0x7FFFFFF0, 12345678, -1]], np.int32)
    b = np.array([[2, 3, 0xFF, 31]], np.int32)
    np.testing.assert_array_equal(tt_k(a, b, op, I32, ENGINES["vector"]), ref(a, b))


# ========================================================================== tensor_scalar


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt", FLOATS)
def test_tensor_scalar_two_stages(shape, dt):
    a = rand(shape, dt)
    want = cast((f32(a) * np.float32(0.75)) + np.float32(-2.5), dt)
    same(ts_k(a, "multiply", 0.75, False, "add", -2.5, dt), want)


@pytest.mark.parametrize("dt", FLOATS)
def test_tensor_scalar_reverse_and_single_stage(dt):
    a = rand((128, 33), dt, 0.5, 4)
    same(ts_k(a, "subtract", 1.0, True, "", None, dt), cast(np.float32(1.0) - f32(a), dt))
    same(ts_k(a, "divide", 3.0, True, "", None, dt), cast(np.float32(3.0) / f32(a), dt))
    same(ts_k(a, "maximum", 2.0, False, "", None, dt), cast(np.maximum(f32(a), np.float32(2.0)), dt))


@pytest.mark.parametrize("shape", [(1, 1), (128, 1), (128, 4096), (7, 300)])
@pytest.mark.parametrize("dt", [F32, BF16])
def test_tensor_scalar_per_partition_operand(shape, dt):
    a, v = rand(shape, dt), rand((shape[0], 1), F32)
    same(ts_vec_k(a, v, dt), cast(f32(a) * v - np.float32(1.5), dt))


def test_tensor_scalar_bitvec_on_int32():
    a = np.array([[-16, 0x12345678, 255, 1]], np.int32)
    got = ts_k(a, "bitwise_and", 0xF0, False, "left_shift", 4, I32)
    np.testing.assert_array_equal(got, ((a & 0xF0).astype(np.int64) << 4).astype(np.int32))


def test_tensor_scalar_on_int32_is_through_fp32():
    a = np.array([[2 ** 24 + 1, 3]], np.int32)
    np.testing.assert_array_equal(ts_k(a, "add", 0.0, False, "", None, I32), [[2 ** 24, 3]])


# ============================================================================== activation

ACT_REFS = {
    "copy": lambda x: x, "exp": np.exp, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0.0),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "square": lambda x: x * x, "sqrt": np.sqrt,
    "log": np.log, "sin": np.sin,
    "gelu": lambda x: 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0))),
}
EXACT_ACTS = ("copy", "relu", "square", "sqrt")


def _act_input(op, shape, dt):
    lo, hi = {"log": (0.1, 4.0), "sqrt": (0.0, 4.0), "sin": (-3.0, 3.0)}.get(op, (-4.0, 4.0))
    return rand(shape, dt, lo, hi)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", list(ACT_REFS))
def test_activation(shape, dt, op):
    a = _act_input(op, shape, dt)
    bias = rand((shape[0], 1), F32, 0.0, 0.25)
    scale = 0.5
    x = f32(a) * np.float32(scale) + bias.reshape((shape[0],) + (1,) * (len(shape) - 1))
    want = ACT_REFS[op](x.astype(np.float64)).astype(np.float32)
    got = act_k(a, bias, op, scale, dt)
    if op in EXACT_ACTS:
        same(got, cast(want, dt))
    else:
        np.testing.assert_allclose(f32(got), f32(cast(want, dt)), rtol={F32: 2e-7, BF16: 8e-3, E4M3: 7e-2}[dt],
                                   atol=1e-30)


@pytest.mark.parametrize("shape", [(1, 1), (128, 1), (1, 4096), (128, 512)])
@pytest.mark.parametrize("dt", FLOATS)
def test_activation_reduce(shape, dt):
    a = rand(shape, dt, -2, 2)
    out, red = act_reduce_k(a, "exp", dt)
    want = np.exp(f32(a).astype(np.float64)).astype(np.float32)
    np.testing.assert_allclose(f32(out), f32(cast(want, dt)), rtol=2e-7)
    # the sum is of the fp32 function values (before the cast to dst)
    np.testing.assert_allclose(red[:, 0], want.astype(np.float64).sum(axis=1), rtol=1e-5)


@nki.jit
def act_reduce_zero_step_dst_k(a):
    """Only ``reduce_res`` is wanted: ``dst`` is one element per partition seen through a
    zero-step access pattern (every result of a row stored to the same address)."""
    p, f = a.shape
    red = nl.ndarray((p, 1), nl.float32, buffer=nl.shared_hbm)
    ta = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=ta, src=a)
    scratch = nl.ndarray((p, 1), nl.float32, buffer=nl.sbuf)
    tr = nl.ndarray((p, 1), nl.float32, buffer=nl.sbuf)
    nisa.activation_reduce(dst=scratch.ap(pattern=[[1, p], [0, f]]), op=nl.square, data=ta,
                           reduce_op=nl.add, reduce_res=tr)
    nisa.dma_copy(dst=red, src=tr)
    return red


def test_activation_reduce_into_a_zero_step_dst_sums_every_value():
    a = rand((128, 512), F32, -2, 2)
    red = act_reduce_zero_step_dst_k(a)
    want = (f32(a).astype(np.float64) ** 2).sum(axis=1)
    np.testing.assert_allclose(red[:, 0], want, rtol=1e-5)


# =========================================================================== tensor_reduce


@pytest.mark.parametrize("shape,axis", [((1, 1), (1,)), ((128, 1), (1,)), ((1, 4096), (1,)),
                                        ((128, 512), (1,)), ((16, 4, 8), (2,)), ((16, 4, 8), (1, 2))])
@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("op", ["add", "maximum", "minimum", "multiply"])
def test_tensor_reduce(shape, axis, dt, op, negate=False):
    a = rand(shape, dt, 0.95, 1.05) if op == "multiply" else rand(shape, dt, 0.5, 1.5)
    ref = {"add": np.sum, "maximum": np.max, "minimum": np.min, "multiply": np.prod}[op]
    want = ref(f32(a).astype(np.float64), axis=axis)
    dshape = (shape[0],) + tuple(d for i, d in enumerate(shape) if i and i not in axis) or (shape[0], 1)
    dshape = dshape if len(dshape) > 1 else (shape[0], 1)
    got = reduce_k(a, op, axis, negate, dshape, F32)
    if op in ("maximum", "minimum"):
        same(got, want.astype(np.float32).reshape(dshape))
    else:
        np.testing.assert_allclose(got, want.reshape(dshape), rtol=2e-5)


def test_tensor_reduce_negate_into_bf16():
    a = rand((128, 300), F32)
    got = reduce_k(a, "maximum", (1,), True, (128, 1), BF16)
    same(got, (-a.max(axis=1, keepdims=True)).astype(BF16))


def test_tensor_reduce_bitvec_on_int32():
    a = RNG.integers(-2 ** 31, 2 ** 31 - 1, (64, 17), dtype=np.int64).astype(np.int32)
    got = reduce_k(a, "bitwise_xor", (1,), False, (64, 1), I32)
    np.testing.assert_array_equal(got[:, 0], np.bitwise_xor.reduce(a, axis=1))


# ============================================================================== reciprocal


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt", FLOATS)
def test_reciprocal(shape, dt):
    a = rand(shape, dt, 0.25, 8) * np.where(RNG.random(shape) < 0.5, -1, 1).astype(dt)
    same(recip_k(a, dt), cast(np.float32(1.0) / f32(a), dt))


def test_reciprocal_of_zero_is_inf():
    a = np.array([[0.0, -0.0, np.inf]], np.float32)
    np.testing.assert_array_equal(recip_k(a, F32), [[np.inf, -np.inf, 0.0]])


# ================================================================================= memset


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dt,value", [(F32, 0.1), (BF16, 0.1), (E4M3, 0.1), (E5M2, -3.3), (I32, -7),
                                      (np.dtype(np.int8), -100), (F32, 2)])
@pytest.mark.parametrize("eng", ["vector", "gpsimd"])
def test_memset(shape, dt, value, eng):
    got = memset_k(np.zeros(shape, np.float32), value, dt, ENGINES[eng])
    want = np.full(shape, np.float32(value)).astype(dt) if dt.kind not in "iu" else np.full(shape, value, dt)
    same(got, want)


def test_memset_int32_beyond_fp32_precision_is_exact():
    got = memset_k(np.zeros((4, 3), np.float32), 2 ** 24 + 1, I32, ENGINES["vector"])
    assert (got == 2 ** 24 + 1).all()


# ========================================================================== iota / select


@pytest.mark.parametrize("p,f", [(1, 1), (128, 1), (1, 4096), (128, 512)])
@pytest.mark.parametrize("dt", [I32, F32, BF16])
def test_iota(p, f, dt):
    got = iota_k(np.zeros((p, f), np.float32), 5, 3, dt)
    want = 5 + 3 * np.arange(p)[:, None] + np.arange(f)[None, :]
    same(got, want.astype(np.int64).astype(np.float32).astype(dt) if dt != I32 else want.astype(I32))


def test_iota_wraps_in_int32():
    got = iota_k(np.zeros((2, 3), np.float32), 2 ** 31 - 2, 0, I32)
    np.testing.assert_array_equal(got[0], np.array([2 ** 31 - 2, 2 ** 31 - 1, -(2 ** 31)], np.int64))


@pytest.mark.parametrize("p,f", [(1, 1), (128, 1), (1, 2048), (128, 128), (64, 300)])
@pytest.mark.parametrize("dt", FLOATS)
def test_affine_select_causal_mask(p, f, dt):
    a = rand((p, f), dt)
    keep = np.arange(p)[:, None] - np.arange(f)[None, :] >= 0
    want = np.where(keep, f32(a), np.float32(-30.0)).astype(dt)
    same(select_k(a, -30.0), want)


# ============================================================================ nc_transpose


@pytest.mark.parametrize("p,f", [(1, 1), (32, 32), (1, 32), (32, 1), (7, 19)])
@pytest.mark.parametrize("dt", [F32, BF16, E4M3, I32])
def test_nc_transpose_vector_is_bit_exact(p, f, dt):
    a = rand((p, f), F32, -1e3, 1e3).astype(dt)
    same(transpose_k(a), np.ascontiguousarray(a.T))
