"""The ``nisa`` dialect: one op per NKI ISA instruction, with its engine.

Op names, operand role keywords, enum spellings and the ``engine=`` suffix follow AWS's
own ``nisa`` dialect as seen in aws-neuron/nkipy, so our text is a
superset of theirs where it is known; instructions AWS does not show keep their
``nki.isa`` name (``nc_transpose``, ``iota``, ``affine_select``).

What is ours and strippable (the ``nkim.`` namespace):
- placement on ``nisa.alloc``: ``nkim.partition`` (start partition), ``nkim.offset``
  (byte offset in each partition) and, for PSUM, ``nkim.bank``;
- the schedule on every instruction: ``nkim.id`` (position in the program),
  ``nkim.queue`` (the engine queue) and ``nkim.deps`` (ids of the instructions of other
  queues it must wait for -- a semaphore wait in hardware terms).

Semantics: nki.isa API reference (nki/api/nki/isa) (NKI ``nki.isa`` API pages).
"""
from __future__ import annotations

from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, i64
from xdsl.ir import Dialect
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from . import rules
from .common import ON_CHIP, MemSpaceAttr, TargetAttr, space_of
from .instruction import NisaInstruction, dialect_ops  # noqa: F401 (NisaInstruction re-exported)

REVERSE = ("none_", "first", "second", "both")
REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce", "load_reduce")
ACCUMULATE = ("auto", "accumulate", "overwrite")
COMPUTE = ("vector", "scalar", "gpsimd")


@irdl_op_definition
class AllocOp(IRDLOperation):
    """``%m = nisa.alloc [copy(%slot)] alignment=64 {nkim.partition = 0, nkim.offset = 4096} : memref<...>``.

    Allocates an SBUF/PSUM tensor (or an internal HBM tensor).  After ``nisa-allocate``
    on-chip allocs carry their placement: ``nkim.partition`` (start partition),
    ``nkim.offset`` (bytes from the start of each partition) and for PSUM ``nkim.bank``.

    Multi-buffering (``nisa-allocate``, docs/pipeline.md): an alloc inside an
    ``affine_range`` body may get ``nkim.copies = k`` (2..4 rotating copies) and
    ``nkim.copy_stride = s`` (bytes per partition between copies) plus the optional
    ``copy`` operand, an ``index`` computed in the IR from the loop induction variables:
    copy ``c = slot mod k`` of the tensor lives at byte offset ``nkim.offset + c * s``.
    """

    name = "nisa.alloc"
    copy_index = opt_operand_def(IndexType)
    alignment = opt_prop_def(IntegerAttr)
    result = result_def(MemRefType)

    def verify_(self) -> None:
        if space_of(self.result) is None:
            raise VerifyException("nisa.alloc: the result must be a memref in a #nisa.mem space")
        if space_of(self.result) in ON_CHIP:
            rules.on_chip_shape(self, "result", self.result)
        if self.copy_index is not None and "nkim.copies" not in self.attributes:
            raise VerifyException("nisa.alloc: a copy(...) operand needs nkim.copies")

    def print(self, printer: Printer) -> None:
        if self.copy_index is not None:
            printer.print_string(" copy(")
            printer.print_operand(self.copy_index)
            printer.print_string(")")
        if self.alignment is not None:
            printer.print_string(f" alignment={self.alignment.value.data}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> "AllocOp":
        props = {}
        operands = []
        if parser.parse_optional_keyword("copy") is not None:
            parser.parse_punctuation("(")
            operands.append(parser.resolve_operand(parser.parse_unresolved_operand(), IndexType()))
            parser.parse_punctuation(")")
        if parser.parse_optional_keyword("alignment") is not None:
            parser.parse_punctuation("=")
            props["alignment"] = IntegerAttr(parser.parse_integer(), i64)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        ty = parser.parse_type()
        return cls.build(operands=[operands], result_types=[ty], properties=props, attributes=attrs)


@irdl_op_definition
class ReleaseOp(IRDLOperation):
    """``nisa.release %m : memref<...>``: the end of an alloc's lifetime."""

    name = "nisa.release"
    memref = operand_def(MemRefType)
    assembly_format = "$memref attr-dict `:` type($memref)"



def _family_ops() -> list:
    from .nki import family_ops
    return family_ops("NISA_OPS")


#: the ``nisa`` dialect: the ops above, the family modules' and those of the instruction
#: definitions (``nki_mlir/instructions``, added to the same list as they register)
NISA = Dialect("nisa", dialect_ops("nisa", [AllocOp, ReleaseOp, *_family_ops()]),
               [MemSpaceAttr, TargetAttr])
