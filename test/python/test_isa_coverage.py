"""Every ``nki.isa`` instruction is wired through every layer and covered by tests.

For each instruction name exported by ``nki_mlir.isa`` this checks that the frontend has a
handler, that the ``nki`` dialect has the op, that every ``nki``/``nisa`` instruction op has a
lit round-trip test, every ``nki`` instruction op a lit lowering test, every ``nisa`` op an
interpreter closure builder, and that some pytest kernel calls the instruction.  It reads
registries and test sources only, so a new instruction that skips a layer fails here.
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
