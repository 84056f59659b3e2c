"""Language-level ops that survive ``nki-legalize``: baked constants and device printing.

- ``%c = nki.shared_constant(value=dense<...> : tensor<NxMxiB>) : memref<NxMxT, #nisa.mem<shared_hbm>>``
  (``nl.shared_constant``, NKI migration guide (nki/migration)): a constant tensor baked into the
  artifact.  ``value`` holds the elements' **raw bits** as signless integers of the
  element width (``i8``/``i16``/``i32``), so every dtype (bf16, fp8, ...) round-trips
  exactly through the MLIR text; the memref type says how to read them.  Lowered 1:1 to
  ``nisa.shared_constant``, which the interpreter materialises as a fresh HBM array on
  every run (loading an artifact never executes code: the value is plain MLIR text).
- ``nki.device_print(tensor=T %t, prefix="x")`` (``nl.device_print``, section 4.5): prints
  ``prefix`` and the tensor's values to stdout when executed.  Lowered 1:1 to
  ``nisa.device_print ... engine=dma`` (on hardware the print is a DMA to a debug dump).
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, prop_def, result_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from .common import HBM_SPACES, dtype_of, shape_of, space_of
from .instruction import NisaInstruction, NkiInstruction, direct_lowering
from .syntax import KeywordOp


def dense_bits(arr: np.ndarray) -> DenseIntOrFPElementsAttr:
    """``arr`` (an NKI dtype) as a dense attribute of its raw bits (signless ints)."""
    arr = np.ascontiguousarray(arr)
    width = arr.dtype.itemsize * 8
    signed = {8: np.int8, 16: np.int16, 32: np.int32}[width]
    bits = arr.view(signed).reshape(-1)
    return DenseIntOrFPElementsAttr.from_list(TensorType(IntegerType(width), list(arr.shape)),
                                              [int(b) for b in bits])


def bits_to_array(attr: DenseIntOrFPElementsAttr, dt: np.dtype, shape) -> np.ndarray:
    """Inverse of :func:`dense_bits`: the raw bits of ``attr`` read as ``dt`` in ``shape``."""
    signed = {1: np.int8, 2: np.int16, 4: np.int32}[np.dtype(dt).itemsize]
    return np.asarray(list(attr.get_values()), dtype=signed).view(dt).reshape(shape)


class _SharedConstant(KeywordOp):
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(MemRefType)

    def verify_(self) -> None:
        if space_of(self.result) not in HBM_SPACES:
            raise VerifyException(f"{self.name}: the result must be an HBM tensor")
        t = self.value.get_type()
        dt = dtype_of(self.result)
        if not isinstance(t.element_type, IntegerType) or \
                t.element_type.width.data != np.dtype(dt).itemsize * 8:
            raise VerifyException(f"{self.name}: value must hold the raw bits as "
                                  f"i{np.dtype(dt).itemsize * 8} for {dtypes.name_of(dt)} elements")
        if tuple(t.get_shape()) != tuple(shape_of(self.result)):
            raise VerifyException(f"{self.name}: value shape {list(t.get_shape())} differs from the "
                                  f"result shape {list(shape_of(self.result))}")

    # ``(value=dense<...> : tensor<...>) : memref<...>``: the keyword syntax, with the dense
    # attribute parsed as an attribute (KeywordOp would read ``dense`` as an enum word)
    def print(self, printer: Printer) -> None:
        printer.print_string("(value=")
        printer.print_attribute(self.value)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser):
        parser.parse_punctuation("(")
        parser.parse_keyword("value")
        parser.parse_punctuation("=")
        value = parser.parse_attribute()
        parser.parse_punctuation(")")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        return cls.build(result_types=[parser.parse_type()], properties={"value": value},
                         attributes=attributes)


@irdl_op_definition
class SharedConstantOp(_SharedConstant):
    """``nl.shared_constant(constant)``: a constant HBM tensor baked into the artifact."""

    name = "nki.shared_constant"


@irdl_op_definition
class NisaSharedConstantOp(_SharedConstant, IRDLOperation):
    """A constant HBM tensor baked into the artifact (materialised by the runtime)."""

    name = "nisa.shared_constant"


class _DevicePrint(KeywordOp):
    tensor = operand_def(MemRefType)
    prefix = prop_def(StringAttr)

    def verify_(self) -> None:
        if len(shape_of(self.tensor)) < 1:
            raise VerifyException(f"{self.name}: 'tensor' must have rank >= 1")


@irdl_op_definition
class DevicePrintOp(_DevicePrint, NkiInstruction):
    """``nl.device_print(prefix, tensor)``: print the tensor's values at run time."""

    name = "nki.device_print"


@irdl_op_definition
class NisaDevicePrintOp(_DevicePrint, NisaInstruction):
    """Print ``prefix`` and the values of ``tensor`` to stdout (simulator behaviour)."""

    name = "nisa.device_print"


direct_lowering(SharedConstantOp, NisaSharedConstantOp, None)
direct_lowering(DevicePrintOp, NisaDevicePrintOp, "dma")

#: ops this module adds to the nki dialect
NKI_OPS: list = [SharedConstantOp, DevicePrintOp]
#: ops this module adds to the nisa dialect
NISA_OPS: list = [NisaSharedConstantOp, NisaDevicePrintOp]
