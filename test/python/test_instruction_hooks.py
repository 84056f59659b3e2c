"""The definition hooks and operand kinds beyond the basic vocabulary (nki_mlir/dialects/ods.py
``frontend`` / ``results`` / ``public``, dialects/ods_registers.py, the cost model's engine
kinds), each on an instruction that uses it."""
import inspect

import numpy as np
import pytest
from xdsl.dialects import test as xdsl_test
from xdsl.dialects.builtin import ArrayAttr, IndexType, IntegerAttr, StringAttr, i64
from xdsl.traits import get_effects
from xdsl.transforms.dead_code_elimination import is_trivially_dead
from xdsl.utils.exceptions import VerifyException

import nki_mlir as nki
import nki_mlir.isa as nisa
import nki_mlir.language as nl
from nki_mlir import dtypes, isa_names
from nki_mlir.dialects import ods_ops
from nki_mlir.dialects.common import memref
from nki_mlir.dialects.instruction import EngineState
from nki_mlir.dialects.ods_registers import register_type
from nki_mlir.errors import NKITypeError
from nki_mlir.frontend.builtins import HANDLERS
from nki_mlir.instructions import DEFINITIONS
from nki_mlir.perf.costs import resolve_engine


def _value(t):
    return xdsl_test.TestOp(result_types=[t]).results[0]


def test_an_op_of_ours_has_a_definition_but_no_api():
    """register_read (public = False): both ops, a result, a closure builder; no nki.isa name,
    handler or Beta 1 form."""
    rec = DEFINITIONS["register_read"]
    assert not rec.public and rec.results == (("result", IndexType),)
    assert "register_read" not in isa_names.INSTRUCTIONS and not hasattr(nisa, "register_read")
    assert "nisa.register_read" not in HANDLERS and "nisa1.register_read" not in HANDLERS
    op = ods_ops.op_class("nisa.register_read").build(
        operands=[_value(register_type())], result_types=[IndexType()],
        properties={"engine": StringAttr("sync")})
    op.verify()
    assert isinstance(op.result.type, IndexType)


def test_register_operand_kind_checks_itself():
    """A Register operand is checked by its own rule, not the tile rules (rank 1 is fine, a
    tile is not a register)."""
    move = ods_ops.op_class("nisa.register_move")
    reg, c7 = _value(register_type()), _value(i64)
    move.build(operands=[reg, c7], properties={"engine": StringAttr("sync")}).verify()
    tile = _value(memref((1, 1), dtypes.int32, "sbuf"))
    with pytest.raises(VerifyException, match="'dst' must be a register"):
        move.build(operands=[tile, c7], properties={"engine": StringAttr("sync")}).verify()


@nki.jit
def k_move_into_a_tile(x):
    t = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.register_move(dst=t, src=1)  # MARK
    return x


def test_register_argument_is_converted_by_its_kind():
    with pytest.raises(NKITypeError) as info:
        k_move_into_a_tile(np.zeros((4, 4), np.float32))
    assert "nisa.register_move: 'dst' must be a register" in str(info.value)
    lines, start = inspect.getsourcelines(k_move_into_a_tile.fn)
    assert info.value.loc.line == start + next(i for i, t in enumerate(lines) if "MARK" in t)


def test_cross_core_state_keeps_the_barrier_alive():
    """core_barrier only reads its operand; the cross-core state it reads and writes makes
    it no dead code."""
    data = _value(memref((256, 64), dtypes.float32, "shared_hbm"))
    op = ods_ops.op_class("nisa.core_barrier").build(
        operands=[data], properties={"engine": StringAttr("gpsimd"),
                                     "cores": ArrayAttr([IntegerAttr(0, i64), IntegerAttr(1, i64)])})
    assert EngineState("cross_core") in {e.resource for e in get_effects(op) if e.value is None}
    assert not is_trivially_dead(op)


def test_engine_kinds_of_the_cost_model():
    """Formula("none"): no engine (registers); Formula("dma"): the DMA queues (sendrecv)."""
    reg = _value(register_type())
    move = ods_ops.op_class("nisa.register_move").build(
        operands=[reg, _value(i64)], properties={"engine": StringAttr("sync")})
    assert resolve_engine(move) == "none"
    t = _value(memref((128, 64), dtypes.float32, "sbuf"))
    props = {"engine": StringAttr("dma"), **{k: IntegerAttr(0, i64) for k in
                                             ("send_to_rank", "recv_from_rank", "pipe_id")}}
    send = ods_ops.op_class("nisa.sendrecv").build(operands=[t, t, [], []], properties=props)
    assert resolve_engine(send) == "dma"


def test_the_fences_are_the_definitions_with_the_cross_core_state():
    """nisa-schedule, the interpreter's queues, the cost model and the LNC2 launcher read
    which instructions are cross-core fences from the definitions' ``state``."""
    import nki_mlir.instructions  # noqa: F401
    from nki_mlir.dialects.instruction import cross_core_op_names, is_cross_core

    assert sorted(cross_core_op_names()) == ["nisa.core_barrier", "nisa.sendrecv"]
    copy = ods_ops.op_class("nisa.tensor_copy")
    assert not is_cross_core(copy.__new__(copy))
