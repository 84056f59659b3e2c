"""The instruction-definition mechanism (nki_mlir/dialects/ods.py, nki_mlir/instructions):
the generated frontend handler binds calls to the public signature (errors located at the
call), a definition with a mistake or a second definition of a name is refused before any
registry changes, and the memory-effect trait keeps ops that only touch engine state alive."""
import inspect

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.dialects import test as xdsl_test
from xdsl.traits import MemoryEffectKind, get_effects
from xdsl.transforms.dead_code_elimination import is_trivially_dead

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir import dtypes, isa_names
from nki_mlir.dialects import ods, ods_ops
from nki_mlir.dialects.common import memref
from nki_mlir.dialects.instruction import EngineState
from nki_mlir.dialects.ods import Engine, Scalar, Stream, Tile
from nki_mlir.errors import NKITypeError
from nki_mlir.frontend.builtins import HANDLERS
from nki_mlir.instructions import DEFINITIONS, instruction


@nki.jit
def k_bad_keyword(x):
    t = nl.ndarray(x.shape, nl.uint32, buffer=nl.sbuf)
    nisa.rng(dst=t, seed=1)  # MARK
    return x


@nki.jit
def k_missing(x):
    nisa.dropout(x)  # MARK
    return x


@nki.jit
def k_scalar_for_tile(x):
    t = nl.ndarray(x.shape, x.dtype, buffer=nl.sbuf)
    nisa.dropout(dst=t, data=2.0, prob=0.5)  # MARK
    return x


def _line(kernel) -> int:
    lines, start = inspect.getsourcelines(kernel.fn)
    return start + next(i for i, t in enumerate(lines) if "MARK" in t)


@pytest.mark.parametrize("kernel,message", [
    (k_bad_keyword, "nisa.rng(): got an unexpected keyword argument 'seed'"),
    (k_missing, "nisa.dropout(): missing a required argument: 'data'"),
    (k_scalar_for_tile, "nisa.dropout: 'data' must be a tensor, got float 2.0"),
])
def test_generated_handler_reports_bad_calls_at_the_call(kernel, message):
    with pytest.raises(NKITypeError) as info:
        kernel(np.zeros((4, 4), np.float32))
    assert message in str(info.value)
    assert info.value.loc.line == _line(kernel)


def test_public_signature_and_defaults():
    assert str(inspect.signature(nisa.rand_get_state)) == "(dst, engine=None, name=None)"
    assert str(inspect.signature(nisa.dropout)) == "(dst, data, prob, name=None)"
    # an optional tile defaults to None; Int defaults are the API's
    assert str(inspect.signature(nisa.nc_match_replace8)) == \
        "(dst, data, vals, imm, dst_idx=None, name=None)"
    assert str(inspect.signature(nisa.local_gather)) == \
        "(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, name=None)"
    assert nisa.rand2.__doc__.startswith("Fill ``dst`` with pseudo-random values uniform")


def test_a_definition_with_a_mistake_is_refused():
    class typo:
        """doc"""
        dst = Tile(writes=True)
        engine = Engine("vector")
        cots = Stream("dst")
    with pytest.raises(TypeError, match="unknown attribute 'cots'"):
        ods.record_of(typo)

    class no_engine:
        """doc"""
        dst = Tile(writes=True)
    with pytest.raises(TypeError, match="needs one 'engine = Engine"):
        ods.record_of(no_engine)

    class order:
        """doc"""
        lo = Scalar(default=0.0)
        dst = Tile(writes=True)
        engine = Engine("vector")
    with pytest.raises(ValueError):  # a required parameter after a defaulted one
        ods.record_of(order)


def test_a_second_definition_of_a_name_changes_no_registry():
    before = (list(isa_names.INSTRUCTIONS), dict(HANDLERS), dict(ods_ops.OPS_BY_NAME))

    class rng:
        """Another rng."""
        dst = Tile(writes=True)
        engine = Engine("vector")
        cost = Stream("dst", source="test")

        def interpret(dec, op):
            return None
    with pytest.raises(ValueError, match="nki.isa.rng is defined twice"):
        instruction(rng)
    assert (list(isa_names.INSTRUCTIONS), dict(HANDLERS), dict(ods_ops.OPS_BY_NAME)) == before
    assert DEFINITIONS["rng"].doc.startswith("Fill ``dst`` with pseudo-random bits")


def test_engine_state_is_a_memory_effect():
    """set_rng_seed writes no operand, only the engine's generator: not dead code."""
    seed = xdsl_test.TestOp(result_types=[memref((1, 1), dtypes.uint32, "sbuf")]).results[0]
    op = ods_ops.op_class("nisa.set_rng_seed").build(operands=[seed],
                                                     properties={"engine": StringAttr("vector")})
    effects = get_effects(op)
    kinds = {(e.kind, e.resource) for e in effects if e.value is None}
    assert (MemoryEffectKind.WRITE, EngineState("prng")) in kinds
    assert {(e.kind, e.value) for e in effects if e.value is not None} == {(MemoryEffectKind.READ, seed)}
    assert not is_trivially_dead(op)


def test_cost_model_reads_the_definitions_row():
    """nisa.rng / nisa.dropout cost their Stream row: one vector pass over the main operand
    (max(MIN_II, N) cycles), GpSimd 150 + N; no row in the cost model's own table."""
    from nki_mlir.driver.pipeline import parse_module
    from nki_mlir.perf import costs
    from nki_mlir.perf.costs import instruction_cost
    from nki_mlir.perf.targets import target_model
    text = """builtin.module attributes {nisa.target = #nisa.target<trn2>} {
  func.func @k(%x: memref<128x512xf32, #nisa.mem<sbuf>>) {
    %r = nisa.alloc : memref<128x512xui32, #nisa.mem<sbuf>>
    %y = nisa.alloc : memref<128x512xf32, #nisa.mem<sbuf>>
    %p = arith.constant 0.5 : f32
    nisa.rng(dst=memref<128x512xui32, #nisa.mem<sbuf>> %r) engine=vector
    nisa.rng(dst=memref<128x512xui32, #nisa.mem<sbuf>> %r) engine=gpsimd
    nisa.dropout(dst=memref<128x512xf32, #nisa.mem<sbuf>> %y, data=memref<128x512xf32, #nisa.mem<sbuf>> %x, prob=f32 %p) engine=vector
    func.return
  }
}"""
    ops = [op for op in parse_module(text).walk() if op.name in ("nisa.rng", "nisa.dropout")]
    model = target_model("trn2")
    cycles = [(c.engine, c.cycles) for c in (instruction_cost(op, model) for op in ops)]
    assert cycles == [("vector", 512), ("gpsimd", 150 + 512), ("vector", 512)]
    assert "nisa.rng" not in costs._SIMPLE


def test_property_parameters_and_formula_cost():
    """Flag / IntPair parameters are optional op properties with None defaults; a Formula
    cost names a formula the cost model has."""
    from nki_mlir.perf import costs
    rec = DEFINITIONS["nc_matmul_mx"]
    assert [p.role for p in rec.properties] == ["tile_position", "tile_size", "accumulate"]
    assert str(inspect.signature(nisa.nc_matmul_mx)) == (
        "(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None, "
        "tile_size=None, accumulate=None, name=None)")
    for name in ("nki.nc_matmul_mx", "nisa.nc_matmul_mx"):
        props = ods_ops.op_class(name).get_irdl_definition().properties
        assert {"tile_position", "tile_size", "accumulate"} <= set(props)
    assert rec.cost.row is None and costs._FORMULAS[rec.cost.kind] is costs._matmul_mx


@nki.jit
def k_bad_flag(x):
    d = nl.ndarray((32, 32), nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(d, x, x, x, x, accumulate=1)  # MARK
    return x


def test_flag_parameter_refuses_a_non_boolean_at_the_call():
    with pytest.raises(NKITypeError) as info:
        k_bad_flag(np.zeros((32, 32), np.float32))
    assert "nisa.nc_matmul_mx: accumulate must be True, False or None, got 1" in str(info.value)
    assert info.value.loc.line == _line(k_bad_flag)


def test_the_activation_functions_are_listed_once():
    """The activation vocabulary (dialects/vector_rules.ACTIVATIONS) is what the verifiers
    check, what the interpreter implements and what nki.language exports as op tokens."""
    from nki_mlir.dialects.vector_rules import ACT2_FUNCS, ACTIVATIONS
    from nki_mlir.runtime import numerics as nm
    from nki_mlir.passes.legalize_math import ACT_FNS
    assert set(nm.ACTIVATION) == set(ACTIVATIONS)
    assert set(ACT2_FUNCS) == {*ACTIVATIONS, "prelu"}
    assert ACT_FNS <= set(ACTIVATIONS)
    for name in ACT2_FUNCS:
        assert getattr(nl, name).token == name
    assert DEFINITIONS["activation"].params[1].allowed is ACTIVATIONS
    assert DEFINITIONS["activate2"].params[1].allowed is ACT2_FUNCS


def test_isa_form_gives_awss_op_and_a_lowering_that_is_not_one_to_one():
    """tensor_tensor's nisa op is AWS's tensor_tensor_arith(dst, lhs, rhs) with AWS spellings;
    the lowering renames the operands, respells op and takes the engine from the definition's
    rule (GpSimd for int32 tiles outside PSUM); activation_reduce lowers to activation's op
    with a bias constant and reduce_cmd=reset_reduce."""
    from nki_mlir.dialects.instruction import DIRECT_LOWERINGS
    from nki_mlir.driver.pipeline import parse_module
    tt = ods_ops.op_class("nisa.tensor_tensor_arith")
    assert tt.DEFINITION is DEFINITIONS["tensor_tensor"]
    assert [n for n, _ in tt.get_irdl_definition().operands] == ["dst", "lhs", "rhs"]
    assert "nisa.tensor_tensor" not in ods_ops.OPS_BY_NAME
    assert DIRECT_LOWERINGS["nki.activation_reduce"].target is ods_ops.op_class("nisa.activation")
    text = """builtin.module {
  func.func @k(%a: memref<128x64xi32, #nisa.mem<sbuf>>, %x: memref<128x64xf32, #nisa.mem<sbuf>>,
               %r: memref<128x1xf32, #nisa.mem<sbuf>>) {
    %c = arith.constant 1.0 : f32
    nki.tensor_tensor(dst=memref<128x64xi32, #nisa.mem<sbuf>> %a, data1=memref<128x64xi32, #nisa.mem<sbuf>> %a, data2=memref<128x64xi32, #nisa.mem<sbuf>> %a, op=maximum)
    nki.activation_reduce(dst=memref<128x64xf32, #nisa.mem<sbuf>> %x, data=memref<128x64xf32, #nisa.mem<sbuf>> %x, scale=f32 %c, reduce_res=memref<128x1xf32, #nisa.mem<sbuf>> %r, op=exp, reduce_op=add)
    func.return
  }
}"""
    from nki_mlir.passes.lower_nki_to_nisa import LowerNkiToNisa
    from nki_mlir.dialects import make_context
    m = parse_module(text)
    LowerNkiToNisa().apply(make_context(), m)
    ops = {op.name: op for op in m.walk() if op.name.startswith("nisa.")}
    t = ops["nisa.tensor_tensor_arith"]
    assert t.op.data == "max" and t.engine.data == "gpsimd" and t.lhs is t.rhs
    a = ops["nisa.activation"]
    assert a.reduce_cmd.data == "reset_reduce" and a.engine.data == "scalar"
    assert a.bias.owner.value.value.data == 0.0


def test_api_only_parameter_is_in_the_signature_not_the_ops():
    rec = DEFINITIONS["tensor_scalar_reduce"]
    assert "reverse0" in inspect.signature(nisa.tensor_scalar_reduce).parameters
    for name in ("nki.tensor_scalar_reduce", "nisa.tensor_scalar_reduce"):
        assert "reverse0" not in ods_ops.op_class(name).get_irdl_definition().properties
    assert rec.call is not None


def test_an_isa_form_takes_operands_and_properties_only():
    from nki_mlir.dialects.ods_forms import IsaForm
    with pytest.raises(TypeError, match="not an operand or a property"):
        IsaForm("x", dst=Tile(writes=True), eng=Engine("vector"))
