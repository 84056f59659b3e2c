"""DMA instructions beyond dma_copy not yet moved to a definition (``nki_mlir/instructions``):
dma_compute.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`).  Semantics: nki.isa API reference (nki/api/nki/isa) (NKI
``nki.isa`` API pages of these instructions):

- ``dma_compute(dst, srcs, reduce_op=add, scales)``: DMA ``dst = sum_i srcs[i] * scales[i]``
  (fp32 math, <= 16 sources, scales all 1.0).
"""
from __future__ import annotations

import math

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from . import rules
from .common import describe, HBM_SPACES, shape_of
from .instruction import NisaInstruction, NkiInstruction, direct_lowering
from .syntax import KeywordOp, parse_value, print_value

#: ``nisa.dge_mode`` members (descriptor generation of a DMA)
DGE_MODES = ("unknown", "swdge", "hwdge", "none")
OOB_MODES = ("error", "skip")
#: at most this many dma_compute sources (NKI migration guide (nki/migration))
DMA_COMPUTE_MAX_SRCS = 16


# -------------------------------------------------------------------- dma_compute


class _DmaCompute(KeywordOp):
    """``dst = sum_i srcs[i] * scales[i]`` on a DMA queue (fp32 math).

    ``srcs`` is variadic and printed as a list: ``srcs=[T %a, T %b]``.
    """

    dst = operand_def(MemRefType)
    srcs = var_operand_def(MemRefType)
    reduce_op = prop_def(StringAttr)
    scales = opt_prop_def(ArrayAttr)
    unique_indices = opt_prop_def(IntegerAttr)
    oob_mode = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        api = rules.api(self)
        n = len(self.srcs)
        if not 1 <= n <= DMA_COMPUTE_MAX_SRCS:
            raise VerifyException(f"{api}: 'srcs' has {n} tensors; dma_compute takes 1 to "
                                  f"{DMA_COMPUTE_MAX_SRCS} sources")
        rules.enum(self, "reduce_op", ("add",))
        rules.enum(self, "oob_mode", OOB_MODES)
        rules.engine(self, ("dma",))
        spaces = (*HBM_SPACES, "sbuf")
        rules.dma_endpoint(self, "dst", self.dst, spaces)
        total = math.prod(shape_of(self.dst))
        for i, s in enumerate(self.srcs):
            rules.dma_endpoint(self, f"srcs[{i}]", s, spaces)
            if math.prod(shape_of(s)) != total:
                raise VerifyException(f"{api}: 'srcs[{i}]' has {math.prod(shape_of(s))} elements "
                                      f"but 'dst' has {total} (srcs[{i}] is {describe(s)}, dst is "
                                      f"{describe(self.dst)})")
        scales = self.properties.get("scales")
        if scales is not None:
            vals = []
            for x in scales.data:  # type: ignore[attr-defined]
                if not isinstance(x, (FloatAttr, IntegerAttr)):
                    raise VerifyException(f"{api}: scales must be a list of numbers, got {scales}")
                vals.append(float(x.value.data))
            if len(vals) != n:
                raise VerifyException(f"{api}: scales has {len(vals)} entries but there are "
                                      f"{n} sources")
            bad = [v for v in vals if v != 1.0]
            if bad:
                raise VerifyException(f"{api}: scales must all be 1.0 (the DMA engine does not "
                                      f"scale), got {vals}")

    # The generic keyword syntax handles single operands; print ``srcs`` as a list.
    def print(self, printer: Printer) -> None:
        printer.print_string("(dst=")
        printer.print_attribute(self.dst.type)
        printer.print_string(" ")
        printer.print_ssa_value(self.dst)
        printer.print_string(", srcs=[")
        for i, s in enumerate(self.srcs):
            if i:
                printer.print_string(", ")
            printer.print_attribute(s.type)
            printer.print_string(" ")
            printer.print_ssa_value(s)
        printer.print_string("]")
        for p in ("reduce_op", "scales", "unique_indices", "oob_mode"):
            if p in self.properties:
                printer.print_string(f", {p}=")
                print_value(printer, self.properties[p])
        printer.print_string(")")
        engine = self.properties.get("engine")
        if isinstance(engine, StringAttr):
            printer.print_string(f" engine={engine.data}")
        printer.print_op_attributes(self.attributes)

    @classmethod
    def parse(cls, parser: Parser):
        props: dict[str, Attribute] = {}
        dst: SSAValue | None = None
        srcs: list[SSAValue] = []
        allowed = ("reduce_op", "scales", "unique_indices", "oob_mode")
        parser.parse_punctuation("(")
        while True:
            pos = parser.pos
            key = parser.parse_identifier(f"operand role or property of '{cls.name}'")
            parser.parse_punctuation("=")
            if key == "dst":
                dst = parser.parse_operand(parser.parse_type())
            elif key == "srcs":
                parser.parse_punctuation("[")
                if parser.parse_optional_punctuation("]") is None:
                    while True:
                        srcs.append(parser.parse_operand(parser.parse_type()))
                        if parser.parse_optional_punctuation(",") is None:
                            break
                    parser.parse_punctuation("]")
            elif key in allowed:
                props[key] = parse_value(parser)
            else:
                parser.raise_error(f"'{cls.name}' has no operand or property '{key}' (expected "
                                   f"one of: dst, srcs, {', '.join(allowed)})", pos, parser.pos)
            if parser.parse_optional_punctuation(",") is None:
                break
        parser.parse_punctuation(")")
        if parser.parse_optional_keyword("engine") is not None:
            parser.parse_punctuation("=")
            props["engine"] = StringAttr(parser.parse_identifier("engine name"))
        attributes = parser.parse_optional_attr_dict()
        if dst is None:
            parser.raise_error(f"'{cls.name}' needs operand dst")
        return cls.build(operands=[dst, srcs], properties=props, attributes=attributes)


@irdl_op_definition
class DmaComputeOp(_DmaCompute, NkiInstruction):
    name = "nki.dma_compute"


@irdl_op_definition
class NisaDmaComputeOp(_DmaCompute, NisaInstruction):
    name = "nisa.dma_compute"


direct_lowering(DmaComputeOp, NisaDmaComputeOp, "dma")


#: ops this module adds to the nki dialect
NKI_OPS: list = [DmaComputeOp]
#: ops this module adds to the nisa dialect
NISA_OPS: list = [NisaDmaComputeOp]
