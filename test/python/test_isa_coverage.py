"""Every ``nki.isa`` instruction is wired through every layer and covered by tests.

For each instruction name exported by ``nki_mlir.isa`` this checks that the frontend has a
handler, that the ``nki`` dialect has the op, that every ``nki``/``nisa`` instruction op has a
lit round-trip test, every ``nki`` instruction op a lit lowering test, every ``nisa`` op an
interpreter closure builder, and that some pytest kernel calls the instruction.  It reads
registries and test sources only, so a new instruction that skips a layer fails here.

For each instruction definition (``nki_mlir/instructions``) it checks that every layer's
registry holds what the record says -- the public function's signature and docstring, the op
twins with their memory effects and lowering, the frontend and Beta 1 handlers, the closure
builder and the cost row -- and that no module outside the definitions registers the
instruction again (one place per instruction).
"""
from __future__ import annotations

import pathlib
import re

import pytest

import nki_mlir.frontend  # noqa: F401  (registers the handlers)
from nki_mlir import isa
from nki_mlir.dialects.instruction import NisaInstruction, NkiInstruction
from nki_mlir.dialects.nisa import NISA
from nki_mlir.dialects.nki import NKI
from nki_mlir.frontend.builtins import HANDLERS
from nki_mlir.runtime.handlers import HANDLERS as RUNTIME
from nki_mlir.dialects.instruction import DIRECT_LOWERINGS, OperandEffects, write_roles
from nki_mlir.frontend.builtins import Builtin
from nki_mlir.dialects.ods_forms import Dma
from nki_mlir.instructions import DEFINITIONS
from nki_mlir.perf import costs

ROOT = pathlib.Path(__file__).resolve().parents[2]
#: API calls that are queries answered at compile time, not instructions
QUERIES = {"get_nc_version", "get_nc_sub_version"}
INSTRUCTIONS = sorted(n for n in isa._INSTRUCTIONS if n not in QUERIES)


def _text(folder: str, pattern: str) -> str:
    return "\n".join(p.read_text() for p in (ROOT / folder).rglob(pattern)
                     if "Output" not in p.parts)


LIT_DIALECTS = _text("test/lit/dialects", "*.mlir")
LIT_PASSES = _text("test/lit/passes", "*.mlir")
PYTESTS = _text("test/python", "*.py")
NKI_OPS = [op for op in NKI.operations if issubclass(op, NkiInstruction)]
NISA_OPS = [op for op in NISA.operations if issubclass(op, NisaInstruction)]


@pytest.mark.parametrize("name", INSTRUCTIONS)
def test_instruction_has_a_frontend_handler_and_an_nki_op(name):
    assert f"nisa.{name}" in HANDLERS, f"no frontend handler for nisa.{name}"
    assert any(op.name == f"nki.{name}" for op in NKI.operations), f"no nki.{name} op"


@pytest.mark.parametrize("name", INSTRUCTIONS)
def test_instruction_is_called_by_a_pytest_kernel(name):
    assert re.search(rf"\bnisa\.{name}\(", PYTESTS), f"no pytest kernel calls nisa.{name}"


@pytest.mark.parametrize("op", NKI_OPS + NISA_OPS, ids=lambda op: op.name)
def test_op_has_a_lit_round_trip(op):
    assert re.search(rf"\b{re.escape(op.name)}\(", LIT_DIALECTS), f"no round-trip test prints {op.name}"


@pytest.mark.parametrize("op", NKI_OPS, ids=lambda op: op.name)
def test_nki_op_has_a_lit_lowering_test(op):
    assert re.search(rf"\b{re.escape(op.name)}\(", LIT_PASSES), f"no lit pass test lowers {op.name}"


@pytest.mark.parametrize("op", NISA_OPS, ids=lambda op: op.name)
def test_nisa_op_runs_on_the_interpreter(op):
    assert op.name in RUNTIME, f"the interpreter cannot execute {op.name}"


# ------------------------------------------------------------------ instruction definitions

DEFINED = sorted(DEFINITIONS)
#: the definitions of nki.isa instructions (not ops of ours, ``public = False``)
PUBLIC = sorted(n for n, rec in DEFINITIONS.items() if rec.public)


def _nisa_name(rec) -> str:
    """The ``nisa`` op of a definition: ``nisa.<name>``, or its isa form's (AWS's name)."""
    return f"nisa.{rec.name if rec.isa is None else rec.isa.name}"


def _ops(rec):
    by_name = {op.name: op for op in [*NKI.operations, *NISA.operations]}
    return by_name.get(f"nki.{rec.name}"), by_name.get(_nisa_name(rec))


def _shape(rec, op):
    """The record ``op`` (a twin of ``rec``) has the operands and effects of."""
    from nki_mlir.dialects.ods_forms import form_record
    if op.name.startswith("nki.") or rec.isa is None:
        return rec
    owner = DEFINITIONS[op.DEFINITION.name]
    return form_record(owner) if owner.isa is not None else owner


def test_there_are_definitions():
    assert "rng" in DEFINITIONS and "dropout" in DEFINITIONS


@pytest.mark.parametrize("name", PUBLIC)
def test_definition_public_function(name):
    """``nki.isa.<name>`` has the record's signature and docstring, which cites its NKI page."""
    rec = DEFINITIONS[name]
    fn = getattr(isa, name)
    assert isinstance(fn, Builtin) and name in isa._INSTRUCTIONS
    assert fn.__doc__ == rec.doc
    assert f"nki.isa.{name}" in rec.doc and "(nki/api/" in rec.doc, "the doc cites the NKI page"
    import inspect
    assert inspect.signature(fn) == rec.signature()
    assert list(rec.signature().parameters)[-1] == "name"


@pytest.mark.parametrize("name", DEFINED)
def test_definition_ops_effects_and_lowering(name):
    """Both twins come from the record (the nisa op from its isa form, or the form's owner's
    op), with its write roles and state as their memory effects; the nki op lowers to the
    nisa op (1:1 unless the record has an isa form) on the record's default engine."""
    rec = DEFINITIONS[name]
    nki_op, nisa_op = _ops(rec)
    assert nki_op is not None and nisa_op is not None, "both twins are in the dialects"
    assert issubclass(nki_op, NkiInstruction) and issubclass(nisa_op, NisaInstruction)
    for op in (nki_op, nisa_op):
        shape = _shape(rec, op)
        shared = op is nisa_op and rec.isa is not None and rec.isa.of is not None
        assert op.DEFINITION is (DEFINITIONS[rec.isa.of] if shared else rec)
        operands = [n for n, _ in op.get_irdl_definition().operands]
        assert operands == [p.role for p in shape.operands]
        assert write_roles(op) == shape.writes
        assert op.get_trait(OperandEffects).state == shape.state
    low = DIRECT_LOWERINGS[nki_op.name]
    assert low.target is nisa_op and low.engine == rec.engine.default
    assert (low.build is None) == (rec.isa is None)
    assert rec.engine.default in rec.engine.names


@pytest.mark.parametrize("name", DEFINED)
def test_definition_frontend_runtime_and_cost(name):
    """The frontend handler has the public signature; the Beta 1 form exists; the
    interpreter runs the record's closure builder; the cost model has its row, with a source.
    An op of ours (``public = False``) has no handler, Beta 1 form or nki.isa name."""
    import inspect
    rec = DEFINITIONS[name]
    if rec.public:
        handler = HANDLERS[rec.api]
        params = list(inspect.signature(handler).parameters.values())
        assert params[0].name == "cg" and inspect.Signature(params[1:]) == rec.signature()
        assert handler.__doc__ == rec.doc
        assert f"nisa1.{name}" in HANDLERS
    else:
        assert rec.api not in HANDLERS and f"nisa1.{name}" not in HANDLERS
        assert name not in isa._INSTRUCTIONS
    nisa_op = _ops(rec)[1]
    rec = nisa_op.DEFINITION  # a form of another definition's op: that one runs and costs it
    assert RUNTIME[nisa_op.name] is rec.interpret
    assert nisa_op.name not in costs._SIMPLE and rec.cost.source  # read from the op
    assert costs._defined_row(nisa_op.create(properties={})) == rec.cost.row
    if isinstance(rec.cost, Dma):  # a DMA: timed on the DMA engines
        assert costs.resolve_engine(nisa_op.create(properties={})) == "dma"
    elif rec.cost.row is None:  # a Formula: the cost model has the formula it names
        assert rec.cost.kind in costs._FORMULAS or rec.cost.kind in costs.ENGINE_KINDS


def _outside_definitions() -> str:
    return "\n".join(p.read_text() for p in (ROOT / "nki_mlir").rglob("*.py")
                     if "instructions" not in p.relative_to(ROOT / "nki_mlir").parts)


@pytest.mark.parametrize("name", DEFINED)
def test_definition_is_the_only_place(name):
    """No hand-written op, handler, closure builder or cost row repeats a defined instruction."""
    src = _outside_definitions()
    isa = _nisa_name(DEFINITIONS[name])[5:]
    for pattern in (rf'name = "(nki|nisa)\.{name}"', rf'name = "nisa\.{isa}"',
                    rf'handles\("nisa\.{name}"\)', rf'"nisa\.({name}|{isa})": \S'):  # a table entry
        assert not re.search(pattern, src), f"{name}: {pattern} outside nki_mlir/instructions"
    assert f'"{name}"' not in (ROOT / "nki_mlir" / "isa_names.py").read_text()
