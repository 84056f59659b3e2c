"""The Beta 1 front (``neuronxcc.nki``): index expressions, value-returning nisa, tile
operators, assignment, accumulation -- numerics against NumPy, and the same nisa
instruction sequence as the Beta 2 spelling of a kernel (issue 4)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from xdsl.ir import BlockArgument

import nki_mlir
from nki_mlir.compiler import parse_module
from nki_mlir.dialects.nisa import NisaInstruction

import beta1_front_kernels as B1
import beta2_twin_kernels as B2

RNG = np.random.default_rng(7)


def _f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ------------------------------------------------------------------ same nisa as Beta 2


def _describe(v, memo) -> str:
    """A structural description of an SSA value (independent of op order and SSA names)."""
    if v in memo:
        return memo[v]
    if isinstance(v, BlockArgument):
        owner = v.owner.parent_op()
        d = v.name_hint or f"arg{v.index}" if owner is not None and owner.name == "func.func" \
            else f"iv({_describe_loop(owner, memo)})"
    else:
        op = v.owner
        attrs = {k: str(a) for k, a in op.attributes.items() if k != "nkim.name"}
        props = {k: str(a) for k, a in op.properties.items()}
        d = f"{op.name}{sorted(props.items())}{sorted(attrs.items())}:{v.type}(" + \
            ",".join(_describe(x, memo) for x in op.operands) + ")"
    memo[v] = d
    return d


def _describe_loop(op, memo) -> str:
    return f"{op.name}(" + ",".join(_describe(x, memo) for x in op.operands) + ")"


def instruction_sequence(ck) -> list[str]:
    """Every nisa instruction in program order, with its operands described structurally."""
    module = parse_module(ck.ir("nisa"))
    memo: dict = {}
    out = []
    for op in module.walk():
        if isinstance(op, NisaInstruction):
            props = sorted((k, str(a)) for k, a in op.properties.items())
            attrs = sorted((k, str(a)) for k, a in op.attributes.items())
            out.append(f"{op.name} {props} {attrs} <- " +
                       " | ".join(_describe(x, memo) for x in op.operands))
    return out


def _pair_args(name):
    if name == "tiled_add":
        return _f32(256, 512), _f32(256, 512)
    if name == "matmul_accum":
        return (RNG.random((512, 128)).astype(ml_dtypes.bfloat16),
                RNG.random((512, 512)).astype(ml_dtypes.bfloat16))
    return (_f32(128, 256),)


@pytest.mark.parametrize("name", ["tiled_add", "matmul_accum", "row_scale"])
def test_beta1_and_beta2_spellings_compile_to_the_same_nisa(name):
    args = _pair_args(name)
    c1 = nki_mlir.compile(getattr(B1, name), *args)
    c2 = nki_mlir.compile(getattr(B2, name), *args)
    s1, s2 = instruction_sequence(c1), instruction_sequence(c2)
    assert len(s1) >= 3
    assert s1 == s2
    np.testing.assert_array_equal(np.asarray(c1(*args)), np.asarray(c2(*args)))


def test_instruction_sequence_notices_a_difference():
    """The comparison above can fail: two different kernels do not compare equal."""
    a, b = _f32(256, 512), _f32(256, 512)
    s1 = instruction_sequence(nki_mlir.compile(B1.tiled_add, a, b))
    s2 = instruction_sequence(nki_mlir.compile(B1.operators, a[:128, :64], b[:128, :64].astype(ml_dtypes.bfloat16)))
    assert s1 != s2


# ------------------------------------------------------------------ numerics


def test_tiled_add_and_row_scale_numerics():
    a, b = _f32(256, 512), _f32(256, 512)
    np.testing.assert_allclose(B1.tiled_add(a, b), a + b, rtol=1e-6)
    x = _f32(128, 256)
    np.testing.assert_allclose(B1.row_scale(x), np.exp(x) * x.sum(axis=1, keepdims=True),
                               rtol=2e-5, atol=1e-4)


def test_matmul_accumulates_over_k():
    lt = RNG.random((512, 128)).astype(ml_dtypes.bfloat16)
    r = RNG.random((512, 512)).astype(ml_dtypes.bfloat16)
    ref = lt.astype(np.float32).T @ r.astype(np.float32)
    np.testing.assert_allclose(B1.matmul_accum(lt, r), ref, rtol=1e-4, atol=1e-3)


def test_nl_matmul_accumulation():
    x_t, y = _f32(256, 128), _f32(256, 256)
    np.testing.assert_allclose(B1.nl_matmul_accum(x_t, y), x_t.T @ y, rtol=1e-4, atol=1e-3)


def test_operators_with_beta1_type_promotion():
    a = RNG.uniform(1, 2, (128, 64)).astype(np.float32)
    b = RNG.uniform(1, 2, (128, 64)).astype(ml_dtypes.bfloat16)
    bf = b.astype(np.float32)
    ck = nki_mlir.compile(B1.operators, a, b)
    assert "xf32" in ck.ir("nki")
    np.testing.assert_allclose(ck(a, b), ((a + bf) * 2 - a / bf) ** 2, rtol=1e-5)


def test_comparison_and_negation():
    a, b = _f32(128, 64), _f32(128, 64)
    np.testing.assert_allclose(B1.compare_ops(a, b), (a < b).astype(np.float32) - a, rtol=1e-6)


def test_strided_and_transposed_access_patterns():
    a = _f32(128, 64)
    np.testing.assert_array_equal(B1.strided_load(a), a[:, 1::2])
    t = _f32(64, 128)
    np.testing.assert_array_equal(B1.transposed_load(t), t.T)


def test_beta1_iota_and_affine_select():
    a = _f32(128, 128)
    low, io = B1.iota_select(a)
    np.testing.assert_array_equal(low, np.tril(a))
    np.testing.assert_array_equal(io, np.arange(128)[:, None] * 64 + np.arange(64)[None, :])


def test_dynamic_partition_index_gathers_rows():
    table = _f32(300, 32)
    idx = RNG.integers(0, 300, (128, 1)).astype(np.int32)
    np.testing.assert_array_equal(B1.gather_rows(table, idx), table[idx[:, 0]])


def test_assignment_broadcasts_a_row():
    a = _f32(1, 64)
    np.testing.assert_allclose(B1.store_broadcast(a), np.broadcast_to(a + 1.0, (128, 64)), rtol=1e-6)


def test_assignment_is_folded_into_the_producer():
    """``res[...] = nisa.tensor_copy(acc)`` writes ``res`` directly: no extra copy."""
    lt = RNG.random((512, 128)).astype(ml_dtypes.bfloat16)
    r = RNG.random((512, 512)).astype(ml_dtypes.bfloat16)
    nisa_ir = nki_mlir.compile(B1.matmul_accum, lt, r).ir("nisa")
    assert nisa_ir.count("nisa.tensor_copy(") == 1
    assert "nki.assign" not in nisa_ir


def test_assignments_of_an_unrolled_loop_fold_in_one_pass_over_the_block(monkeypatch):
    """Many ``res[...] = ...`` in one block: each folds into its producer, and the block is
    numbered once for all of them (not once per assignment: quadratic in the block)."""
    from nki_mlir.passes import forward_assign
    numbered = []
    real = forward_assign.number_ops
    monkeypatch.setattr(forward_assign, "number_ops", lambda b: numbered.append(b) or real(b))
    a = _f32(32 * 128, 8)
    ck = nki_mlir.compile(B1.unrolled_assigns, a, use_cache=False)
    ir = ck.ir("nisa")
    assert "nki.assign" not in ir and ir.count("nisa.tensor_copy(") == 16
    assert len(numbered) == 1
    rows = np.arange(a.shape[0]) // 128 % 2 == 1
    np.testing.assert_allclose(ck(a), np.where(rows[:, None], np.exp(a), a), rtol=2e-6)


def test_numpy_ufuncs_as_ops_and_store_broadcast():
    a, b = _f32(128, 64), _f32(128, 64)
    out, out2 = B1.ufunc_ops(a, b)
    np.testing.assert_allclose(out, np.exp(np.maximum(a, b)), rtol=2e-6)
    np.testing.assert_array_equal(out2, np.broadcast_to(a[0:1], (128, 64)))


def test_tutorial_style_psum_accumulation_on_a_name():
    lt, r = _f32(384, 128), _f32(384, 512)
    np.testing.assert_allclose(B1.tutorial_matmul(lt, r), lt.T @ r, rtol=1e-4, atol=1e-3)
    # `res_psum += nl.matmul(...)` accumulates in place and keeps the name's value: rolled
    from nki_mlir.frontend.trace_build import last_loop_report
    nki_mlir.compile(B1.tutorial_matmul, lt, r, use_cache=False)
    assert [how for how, _ in last_loop_report().values()] == ["rolled"], last_loop_report()


def test_masks_on_a_loop_index_gate_whole_instructions():
    a = _f32(512, 64)
    ref = np.concatenate([np.exp(a[:256]), a[256:]])
    np.testing.assert_allclose(B1.loop_index_masks(a), ref, rtol=2e-6)
