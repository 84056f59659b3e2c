"""The ``nki`` sugar ops of the NKI 0.2 value-returning wrappers: ``nki.zeros``,
``nki.load``, ``nki.store``, ``nki.add``, ``nki.multiply``, ``nki.exp``, ``nki.matmul``.

They mirror ``nl.zeros`` / ``nl.load`` / ``nl.store`` / ``nl.add`` / ``nl.multiply`` /
``nl.exp`` / ``nl.matmul`` and exist only until the ``nki-legalize`` pass, which rewrites
them into instructions (``ndarray`` + ``memset``, ``dma_copy``, ``tensor_tensor``, ...).
The generic sugar of the other ``nl.*`` functions is :mod:`.nki_sugar`.  Semantics: the NKI
``nki.language`` API pages.
"""
from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, MemRefType, StringAttr
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from . import rules
from .common import HBM_SPACES, space_of
from .syntax import KeywordOp


@irdl_op_definition
class ZerosOp(KeywordOp):
    """``nl.zeros(shape, dtype, buffer)``: a tensor filled with 0 (sugar: ndarray + memset)."""

    name = "nki.zeros"
    tensor_name = opt_prop_def(StringAttr, prop_name="name")
    result = result_def(MemRefType)

    def verify_(self) -> None:
        if space_of(self.result) in HBM_SPACES:
            raise VerifyException("nki.zeros: HBM tensors cannot have an initial value "
                                  "(err_hbm_tensor_with_init_value_not_supported)")
        rules.on_chip_shape(self, "result", self.result)


@irdl_op_definition
class LoadOp(KeywordOp):
    """``nl.load(src)``: a new SBUF tile holding an HBM tensor (sugar for ndarray + dma_copy)."""

    name = "nki.load"
    src = operand_def(MemRefType)
    result = result_def(MemRefType)

    def verify_(self) -> None:
        if space_of(self.src) not in HBM_SPACES:
            raise VerifyException(f"nki.load: src must be an HBM tensor, got one in {space_of(self.src)}")
        rules.tile(self, "result", self.result, spaces=("sbuf",))


@irdl_op_definition
class StoreOp(KeywordOp):
    """``nl.store(dst, value)``: write an on-chip tile to HBM (PSUM goes through SBUF)."""

    name = "nki.store"
    dst = operand_def(MemRefType)
    value = operand_def(MemRefType)

    def verify_(self) -> None:
        if space_of(self.dst) not in HBM_SPACES:
            raise VerifyException(f"nki.store: dst must be an HBM tensor, got one in {space_of(self.dst)}")
        rules.tile(self, "value", self.value)


class _ElementwiseSugar(KeywordOp):
    result = result_def(MemRefType)

    def verify_(self) -> None:
        rules.tile(self, "result", self.result)


@irdl_op_definition
class AddOp(_ElementwiseSugar):
    """``nl.add(x, y)``: a new tile x + y (y a tile or an f32 scalar)."""

    name = "nki.add"
    x = operand_def(MemRefType)
    y = operand_def()


@irdl_op_definition
class MultiplyOp(_ElementwiseSugar):
    """``nl.multiply(x, y)``: a new tile x * y (y a tile or an f32 scalar)."""

    name = "nki.multiply"
    x = operand_def(MemRefType)
    y = operand_def()


@irdl_op_definition
class ExpOp(_ElementwiseSugar):
    """``nl.exp(x)``: a new tile exp(x) (ScalarE activation)."""

    name = "nki.exp"
    x = operand_def(MemRefType)


@irdl_op_definition
class MatmulOp(KeywordOp):
    """``nl.matmul(x, y, transpose_x)``: a new PSUM tile x @ y (x.T @ y when transpose_x)."""

    name = "nki.matmul"
    x = operand_def(MemRefType)
    y = operand_def(MemRefType)
    transpose_x = opt_prop_def(IntegerAttr)
    result = result_def(MemRefType)

    def verify_(self) -> None:
        rules.tile(self, "x", self.x, spaces=("sbuf",))
        rules.tile(self, "y", self.y, spaces=("sbuf",))
        rules.tile(self, "result", self.result, spaces=("psum",))
