"""The vector family end to end (frontend -> nki -> nisa -> interpreter) against NumPy:
scalar_tensor_tensor, tensor_partition_reduce, tensor_scalar_reduce, tensor_scalar_cumulative,
tensor_tensor_scan, bn_stats, bn_aggr, exponential and activate2 (trn3), the ScalarE
accumulators of activation, two example kernels (layernorm with bn_stats/bn_aggr, cumsum with
tensor_tensor_scan), and one located diagnostic per error condition.

References are computed independently in NumPy (float32 elementwise math, float64
reductions); kernels are in kernels_isa_vector.py and examples/vector_kernels.py.
"""
import inspect
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import kernels_isa_vector as K
import nki_mlir as nki
from nki_mlir.errors import NKIRuntimeError, NKITypeError, NKIVerifyError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))
import vector_kernels as EX  # noqa: E402

BF16 = ml_dtypes.bfloat16
F32 = np.float32
DTYPES = [F32, BF16]
SHAPES = [(1, 1), (128, 512), (64, 1), (1, 700), (128, 3)]

NP_OPS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum,
    "abs_max": lambda a, b: np.maximum(np.abs(a), np.abs(b)),
    "abs_min": lambda a, b: np.minimum(np.abs(a), np.abs(b)),
    "greater": lambda a, b: (a > b).astype(F32),
}
IDENTITY = {"add": 0.0, "subtract": 0.0, "multiply": 1.0, "maximum": -np.inf, "minimum": np.inf,
            "abs_max": 0.0, "abs_min": np.inf}


def rand(shape, dtype=F32, lo=-2.0, hi=2.0, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(F32).astype(dtype)


def f32(a):
    return np.asarray(a).astype(F32)


def trn3(kernel, *args):
    return nki.compile(kernel, *args, target="trn3")(*args)


def close(out, ref, dtype, rtol=1e-5, atol=1e-6):
    """fp32: tight; bf16 outputs: the reference rounded to bf16 (one rounding of the fp32 value)."""
    if dtype == BF16:
        np.testing.assert_allclose(f32(out), f32(np.asarray(ref, F32).astype(BF16)), rtol=1e-2, atol=1e-2)
    else:
        np.testing.assert_allclose(f32(out), ref, rtol=rtol, atol=atol)


# ====================================================================== scalar_tensor_tensor

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op0,op1,rev0,rev1,vec", [
    ("subtract", "multiply", False, False, True),
    ("multiply", "add", True, True, False),
    ("subtract", "subtract", True, True, True),
    ("maximum", "divide", False, True, False),
])
def test_scalar_tensor_tensor(dtype, shape, op0, op1, rev0, rev1, vec):
    x, y = rand(shape, dtype, seed=1), rand(shape, dtype, 0.5, 2.0, seed=2)
    s = rand((shape[0], 1), F32, seed=3)
    out = K.stt(x, y, s, op0, op1, rev0, rev1, vec, False)
    a = s if vec else F32(1.5)
    t = NP_OPS[op0](a, f32(x)) if rev0 else NP_OPS[op0](f32(x), a)
    ref = NP_OPS[op1](f32(y), t) if rev1 else NP_OPS[op1](t, f32(y))
    assert out.dtype == dtype
    close(out, ref, dtype)


def test_scalar_tensor_tensor_operand1_in_psum():
    x, y, s = rand((128, 64)), rand((128, 64), seed=4), rand((128, 1), seed=5)
    out = K.stt(x, y, s, "add", "multiply", False, False, True, True)
    np.testing.assert_allclose(out, (x + s) * y, rtol=1e-6)


# =================================================================== tensor_partition_reduce

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (128, 64), (128, 1), (7, 3, 5), (2, 512)])
@pytest.mark.parametrize("op", ["add", "average", "maximum"])
def test_tensor_partition_reduce(dtype, shape, op):
    x = rand(shape, dtype, seed=6)
    out = K.partition_reduce(x, op)
    xf = np.asarray(x, np.float64)
    ref = {"add": xf.sum(0), "average": xf.mean(0), "maximum": xf.max(0)}[op][None]
    assert out.shape == (1,) + shape[1:]
    close(out, ref, dtype, rtol=1e-6)


@pytest.mark.parametrize("op", ["add", "maximum", "bitwise_or", "bitwise_and"])
def test_tensor_partition_reduce_int32_is_exact(op):
    x = np.random.default_rng(7).integers(1 << 24, 1 << 26, (128, 16)).astype(np.int32)
    out = K.partition_reduce(x, op)
    fn = {"add": np.add, "maximum": np.maximum, "bitwise_or": np.bitwise_or,
          "bitwise_and": np.bitwise_and}[op]
    ref = fn.reduce(x.astype(np.int64), axis=0)[None].astype(np.int32)  # add wraps to int32
    np.testing.assert_array_equal(out, ref)


# ====================================================================== tensor_scalar_reduce

def _tsr_ref(x, init, op0, rop, chunks, first_cmd, negate):
    t = NP_OPS[op0](f32(x), F32(2.0))
    p, f = t.shape
    w = f // chunks
    acc = np.full(p, IDENTITY[rop]) if first_cmd == "reset_reduce" else f32(init)[:, 0].astype(np.float64)
    red = {"add": np.sum, "multiply": np.prod, "maximum": np.max, "minimum": np.min}[rop]
    for c in range(chunks):
        part = red(t[:, c * w:(c + 1) * w].astype(np.float64), axis=1)
        acc = NP_OPS[rop](acc, part)
    return t, (-acc if negate else acc)[:, None]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,chunks", [((1, 1), 1), ((128, 512), 1), ((128, 48), 3), ((5, 6), 2)])
@pytest.mark.parametrize("op0,rop,lo,hi,first_cmd,negate", [
    ("add", "add", -2, 2, "reset_reduce", False), ("add", "add", -2, 2, "load_reduce", True),
    ("subtract", "multiply", 2.5, 3.5, "load_reduce", False),
    ("multiply", "maximum", -2, 2, "reset_reduce", True),
    ("add", "minimum", -2, 2, "load_reduce", False), ("add", "max", -2, 2, "reset_reduce", False),
])
def test_tensor_scalar_reduce(dtype, shape, chunks, op0, rop, lo, hi, first_cmd, negate):
    x = rand(shape, dtype, lo, hi, seed=8)
    init = rand((shape[0], 1), F32, 0.5, 1.5, seed=9)
    d, res = K.scalar_reduce(x, init, op0, rop, chunks, first_cmd, negate)
    t, ref = _tsr_ref(x, init, op0, "maximum" if rop == "max" else rop, chunks, first_cmd, negate)
    close(d, t, dtype)
    np.testing.assert_allclose(res, ref, rtol=1e-5, atol=1e-5)


# ================================================================== tensor_scalar_cumulative

def _cum_ref(x, imm1, op0, op1, first_cmd):
    v = NP_OPS[op0](f32(x), F32(0.5))
    reg = np.full(x.shape[0], IDENTITY[op1], F32) if first_cmd == "reset_reduce" else f32(imm1)[:, 0]
    out = np.empty_like(v)
    for i in range(v.shape[1]):
        reg = NP_OPS[op1](v[:, i], reg).astype(F32)  # reg = op1(op0(x_i, imm0), reg)
        out[:, i] = reg
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,split", [((1, 1), 1), ((128, 512), 2), ((128, 1), 1), ((3, 10), 2)])
@pytest.mark.parametrize("op0,op1,first_cmd", [
    ("multiply", "add", "reset_reduce"), ("multiply", "add", "load_reduce"),
    ("add", "subtract", "reset_reduce"), ("add", "subtract", "load_reduce"),
    ("add", "maximum", "load_reduce"), ("subtract", "minimum", "reset_reduce"),
    ("add", "multiply", "load_reduce"),
])
def test_tensor_scalar_cumulative(dtype, shape, split, op0, op1, first_cmd):
    lo, hi = (0.1, 0.9) if op1 == "multiply" else (-2, 2)  # op0(x, 0.5) stays near 1
    x = rand(shape, dtype, lo, hi, seed=10)
    imm1 = rand((shape[0], 1), F32, 0.5, 1.5, seed=11)
    out = K.cumulative(x, imm1, op0, op1, first_cmd, split)
    close(out, _cum_ref(x, imm1, op0, op1, first_cmd), dtype, rtol=1e-5, atol=1e-5)


# ======================================================================== tensor_tensor_scan

def _scan_ref(a, b, init, op0, op1, rev0, rev1):
    a, b = f32(a), f32(b)
    r = np.broadcast_to(np.asarray(init, F32).reshape(-1), (a.shape[0],)).astype(F32)
    out = np.empty_like(a)
    for i in range(a.shape[1]):
        t = NP_OPS[op0](r, a[:, i]) if rev0 else NP_OPS[op0](a[:, i], r)
        r = (NP_OPS[op1](b[:, i], t) if rev1 else NP_OPS[op1](t, b[:, i])).astype(F32)
        out[:, i] = r
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("op0,op1,rev0,rev1,vec", [
    ("multiply", "add", False, False, True), ("add", "maximum", False, False, False),
    ("subtract", "multiply", True, True, True), ("subtract", "subtract", False, True, False),
])
def test_tensor_tensor_scan(dtype, shape, op0, op1, rev0, rev1, vec):
    a = rand(shape, dtype, 0.5, 1.0, seed=12)
    b = rand(shape, dtype, -1.0, 1.0, seed=13)
    init = rand((shape[0], 1), F32, seed=14)
    out = K.scan(a, b, init, op0, op1, rev0, rev1, vec)
    ref = _scan_ref(a, b, init if vec else F32(-0.25), op0, op1, rev0, rev1)
    close(out, ref, dtype, rtol=1e-5, atol=1e-5)


# ============================================================================ bn_stats / aggr

def _stats(g):
    if g.shape[1] == 0:
        z = np.zeros(g.shape[0])
        return [z, z, z]
    return [np.full(g.shape[0], g.shape[1]), g.mean(1), g.var(1) * g.shape[1]]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (128, 512), (64, 511), (3, 2, 5), (128, 2)])
def test_bn_stats_and_bn_aggr(dtype, shape):
    x = rand(shape, dtype, -3, 5, seed=15)
    st, mv = K.bn(x, "float32")
    xf = np.asarray(x, np.float64).reshape(shape[0], -1)
    ref = np.stack(_stats(xf[:, 0::2]) + _stats(xf[:, 1::2]), axis=1)
    np.testing.assert_allclose(st, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mv, np.stack([xf.mean(1), xf.var(1)], axis=1), rtol=1e-5, atol=1e-5)


def test_bn_stats_bf16_dst():
    x = rand((16, 100), F32, seed=16)
    st, mv = K.bn(x, "bfloat16")
    assert st.dtype == BF16
    xf = x.astype(np.float64)
    ref = np.stack(_stats(xf[:, 0::2]) + _stats(xf[:, 1::2]), axis=1)
    np.testing.assert_allclose(f32(st), ref.astype(F32).astype(BF16).astype(F32), rtol=1e-6)


# ==================================================================== example kernels (user)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,d", [(128, 1024), (256, 700), (1, 1), (128, 512), (32, 513)])
def test_layernorm_example_matches_numpy(dtype, rows, d):
    rng = np.random.default_rng(17)
    x = (rng.standard_normal((rows, d)) * 3 + 1).astype(F32).astype(dtype)
    g = rng.standard_normal((1, d)).astype(F32).astype(dtype)
    b = rng.standard_normal((1, d)).astype(F32).astype(dtype)
    y = EX.layernorm(x, g, b, 1e-5)
    xf = x.astype(np.float64)
    ref = ((xf - xf.mean(1, keepdims=True)) / np.sqrt(xf.var(1, keepdims=True) + 1e-5)
           * g.astype(np.float64) + b.astype(np.float64))
    assert y.dtype == dtype
    close(y, ref, dtype, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,n", [(128, 1300), (1, 1), (256, 512), (7, 1025)])
def test_cumsum_example_matches_numpy(dtype, rows, n):
    x = rand((rows, n), dtype, seed=18)
    out = EX.cumsum(x)
    ref = np.cumsum(f32(x), axis=1, dtype=F32)  # sequential fp32 sum, like the scan
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-5)


# ======================================================================== exponential (trn3)

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vec", [True, False])
@pytest.mark.parametrize("shape,chunks,first_cmd", [
    ((1, 1), 1, "reset_reduce"), ((128, 512), 2, "reset_reduce"), ((64, 9), 3, "load_reduce"),
    ((128, 1), 1, "load_reduce"), ((16, 8), 1, "idle"), ((128, 512), 1, "idle"),
])
def test_exponential(dtype, shape, chunks, vec, first_cmd):
    x = rand(shape, dtype, seed=19)
    m = rand((shape[0], 1), F32, seed=20)
    d, s = trn3(K.exponential, x, m, vec, chunks, first_cmd)
    e = np.exp(np.asarray(x, np.float64) - (m if vec else 0.5))
    close(d, e, dtype)
    ref = e.sum(1, keepdims=True) + (1.0 if first_cmd == "load_reduce" else 0.0)
    np.testing.assert_allclose(s, ref, rtol=1e-5)


# ========================================================================== activate2 (trn3)

def _act(op, t, relu):
    t = np.asarray(t, np.float64)
    return {"copy": t, "exp": np.exp(t), "tanh": np.tanh(t), "square": t * t,
            "relu": np.maximum(t, 0), "prelu": np.where(t > 0, t, relu * t),
            "gelu": 0.5 * t * (1 + np.vectorize(__import__("math").erf)(t / np.sqrt(2)))}[op]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 2), (128, 512), (64, 6)])
@pytest.mark.parametrize("op,op0,op1,rev0,rev1,rop,relu,vec", [
    ("gelu", "multiply", "add", False, False, "add", 0.0, True),
    ("prelu", "multiply", "subtract", False, True, "maximum", 0.1, False),
    ("exp", "subtract", "bypass", True, False, "abs_max", 0.0, True),
    ("tanh", "add", "bypass", False, False, "minimum", 0.0, False),
    ("square", "bypass", "bypass", False, False, "abs_min", 0.0, False),
    ("copy", "multiply", "bypass", False, False, "max", 0.0, True),
])
def test_activate2(dtype, shape, op, op0, op1, rev0, rev1, rop, relu, vec):
    x = rand(shape, dtype, seed=21)
    s = rand((shape[0], 1), F32, seed=22)
    d, r = trn3(K.activate2, x, s, op, op0, op1, rev0, rev1, rop, relu, vec)
    t = f32(x)
    i0 = s if vec else F32(1.5)
    if op0 != "bypass":
        t = NP_OPS[op0](i0, t) if rev0 else NP_OPS[op0](t, i0)
    if op1 != "bypass":
        t = NP_OPS[op1](F32(-0.5), t) if rev1 else NP_OPS[op1](t, F32(-0.5))
    y = _act(op, t, relu)
    close(d, y, dtype)
    rop = "maximum" if rop == "max" else rop
    red = {"add": lambda v: v.sum(1), "maximum": lambda v: v.max(1), "minimum": lambda v: v.min(1),
           "abs_max": lambda v: np.abs(v).max(1), "abs_min": lambda v: np.abs(v).min(1)}[rop]
    np.testing.assert_allclose(r[:, 0], red(y.astype(F32).astype(np.float64)), rtol=1e-5, atol=1e-6)


# ===================================================== ScalarE accumulators across instructions

@pytest.mark.parametrize("with_activate2", [False, True])
@pytest.mark.parametrize("shape", [(128, 64), (1, 4)])
def test_activation_accumulators_carry_across_instructions(with_activate2, shape):
    x = rand(shape, seed=23)
    run = trn3 if with_activate2 else (lambda k, *a: k(*a))
    _, r = run(K.act_accumulators, x, with_activate2)
    w = shape[1] // 4
    e = np.exp(x.astype(np.float64))
    c0, c1 = e[:, 0:w].sum(1), e[:, w:2 * w].sum(1)
    c3 = x[:, 3 * w:].astype(np.float64).sum(1)  # the copy chunk; chunk 2 ran idle
    np.testing.assert_allclose(r[:, 0], c0, rtol=1e-6)
    np.testing.assert_allclose(r[:, 1], c0 + c1 + c3, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(r[:, 2], 0.0)  # reset, then read out
    np.testing.assert_allclose(r[:, 3], c0, rtol=1e-6)  # reduce_res with idle = reset_reduce


# ====================================================================== located diagnostics

FILE = inspect.getsourcefile(K)
X600 = np.zeros((128, 600), F32)

BAD = [
    # case, target, error class, message fragments
    ("bn_big", "trn2", NKIVerifyError, "nisa.bn_stats: 'data' has 600 free elements per partition, more than bn_stats_fmax=512"),
    ("bn_dst", "trn2", NKIVerifyError, "nisa.bn_stats: 'dst' must hold 6 elements per partition"),
    ("aggr_mod3", "trn2", NKIVerifyError, "nisa.bn_aggr: 'data' has 7 elements per partition, not a multiple of 3"),
    ("aggr_dst", "trn2", NKIVerifyError, "nisa.bn_aggr: 'dst' must hold 2 elements per partition"),
    ("tpr_psum", "trn2", NKIVerifyError, "nisa.tensor_partition_reduce: operand 'data' is a tensor in psum, but this instruction only accepts sbuf"),
    ("tpr_parts", "trn2", NKIVerifyError, "nisa.tensor_partition_reduce: 'dst' must have 1 partition"),
    ("tpr_free", "trn2", NKIVerifyError, "nisa.tensor_partition_reduce: 'dst' must hold 600 element(s)"),
    ("tpr_bitwise", "trn2", NKIVerifyError, "op=bitwise_or works on integer bits, but 'data' is float32"),
    ("tpr_op", "trn2", NKITypeError, "nisa.tensor_partition_reduce: op=nl.multiply is not a supported op"),
    ("tsr_reverse", "trn2", NKITypeError, "nisa.tensor_scalar_reduce: reverse0=True is not supported"),
    ("tsr_init", "trn2", NKIVerifyError, "nisa.tensor_scalar_reduce: 'reduce_init' is only used with reduce_cmd=load_reduce, but reduce_cmd=reset_reduce"),
    ("tsr_load", "trn2", NKIVerifyError, "nisa.tensor_scalar_reduce: reduce_cmd=load_reduce needs 'reduce_init'"),
    ("tsr_res", "trn2", NKIVerifyError, "nisa.tensor_scalar_reduce: 'reduce_res' must be [128, 1]"),
    ("tsr_rop", "trn2", NKITypeError, "nisa.tensor_scalar_reduce: reduce_op=nl.subtract is not a supported op"),
    ("tsr_cmd", "trn2", NKIVerifyError, "nisa.tensor_scalar_reduce: reduce_cmd=idle is not supported"),
    ("tsr_operand", "trn2", NKIVerifyError, "nisa.tensor_scalar_reduce: operand 'operand0' must be float32"),
    ("cum_int32", "trn2", NKIVerifyError, "nisa.tensor_scalar_cumulative: 'src' is int32; int32/uint32 are not supported"),
    ("cum_load", "trn2", NKIVerifyError, "nisa.tensor_scalar_cumulative: reduce_cmd=load_reduce needs 'imm1'"),
    ("cum_op1", "trn2", NKITypeError, "nisa.tensor_scalar_cumulative: op1=nl.divide is not a supported op"),
    ("stt_bitvec", "trn2", NKITypeError, "nisa.scalar_tensor_tensor: op0=nl.bitwise_and is a bitvec operator"),
    ("stt_psum", "trn2", NKIVerifyError, "nisa.scalar_tensor_tensor: inputs 'data' and 'operand1' are both in PSUM"),
    ("stt_operand0", "trn2", NKIVerifyError, "nisa.scalar_tensor_tensor: operand 'operand0' must be a scalar or a [128, 1]"),
    ("stt_shape", "trn2", NKIVerifyError, "nisa.scalar_tensor_tensor: per-partition element counts differ"),
    ("scan_psum", "trn2", NKIVerifyError, "nisa.tensor_tensor_scan: inputs 'data0' and 'data1' are both in PSUM"),
    ("scan_initial", "trn2", NKIVerifyError, "nisa.tensor_tensor_scan: operand 'initial' must be a scalar or a [128, 1]"),
    ("exp_target", "trn2", NKIVerifyError, "nisa.exponential: this instruction needs trn3 (NeuronCore-v4) or newer, but the target is trn2"),
    ("exp_init", "trn3", NKITypeError, "nisa.exponential: reduce_init must be unset or 0.0 unless reduce_cmd=nisa.reduce_cmd.load_reduce"),
    ("act2_target", "trn1", NKIVerifyError, "nisa.activate2: this instruction needs trn3 (NeuronCore-v4) or newer, but the target is trn1"),
    ("act2_pair", "trn3", NKIVerifyError, "nisa.activate2: (op0, op1) = (add, multiply) is not supported; the allowed pairs are"),
    ("act2_rop", "trn3", NKITypeError, "nisa.activate2: reduce_res needs reduce_op"),
    ("act2_rev", "trn3", NKIVerifyError, "nisa.activate2: reverse0 needs op0 to be set"),
    ("act2_reduce_op", "trn3", NKITypeError, "nisa.activate2: reduce_op=nl.multiply is not a supported op"),
    ("act_load", "trn2", NKIRuntimeError, "nisa.activation: reduce_cmd=load_reduce is not supported by the ScalarE accumulators"),
]


def _line(case):
    for i, line in enumerate(open(FILE).read().splitlines(), 1):
        if line.rstrip().endswith(f"# E:{case}"):
            return i
    raise AssertionError(case)


@pytest.mark.parametrize("case,target,cls,fragment", BAD, ids=[b[0] for b in BAD])
def test_error_names_instruction_operand_and_limit_at_the_call_line(case, target, cls, fragment):
    with pytest.raises(cls) as info:
        nki.compile(K.bad, X600, case, target=target)(X600, case)
    err = info.value
    text = str(err)
    assert fragment in text, text
    assert err.loc is not None and os.path.samefile(err.loc.file, FILE)
    assert err.loc.line == _line(case), (err.loc.line, _line(case), text)
    assert text.splitlines()[0].startswith(f"{err.loc.file}:{err.loc.line}:{err.loc.col}: ")
    assert "Traceback" not in text
