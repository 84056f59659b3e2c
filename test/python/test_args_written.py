"""``forward._args_written`` (whether an instruction of a function writes a view of a block
argument) looks only at the users of the argument views; its answer must be the one of its
definition -- some ``nisa`` instruction of the function has a written operand whose
``base_buffer`` is a block argument -- on every function of the lit tests (both answers
occur)."""
from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import BlockArgument
from xdsl.irdl import IRDLOperation

from nki_mlir.dialects.effects import base_buffer, written
from nki_mlir.runtime import forward

from lit_modules import LIT, lit_modules


class _Dec:
    def __init__(self):
        self.memo = {}


def _by_definition(fop) -> bool:
    return any(op.name.startswith("nisa.") and isinstance(op, IRDLOperation)
               and any(isinstance(base_buffer(v), BlockArgument) for v in written(op))
               for op in fop.walk())


def test_args_written_as_defined():
    answers = []
    for path, module in lit_modules(sorted(LIT.rglob("*.mlir"))):
        for fop in module.walk():
            if isinstance(fop, func.FuncOp) and fop.body.blocks:
                want = _by_definition(fop)
                assert forward._args_written(_Dec(), fop) == want, (path.name, fop.sym_name.data)
                answers.append(want)
    assert answers.count(True) >= 10 and answers.count(False) >= 10
