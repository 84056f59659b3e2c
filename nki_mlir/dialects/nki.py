"""The ``nki`` dialect: NKI at the language level.

One op per ``nki.isa`` / ``nki.language`` API call, in destination-passing style, with
operand roles named as in the NKI API (``dst``, ``src``, ``data``, ``data1``,
``stationary``, ``moving``, ...).  Buffers are ``memref``s in ``#nisa.mem<...>`` memory
spaces and are *unplaced*.  Views are upstream ``memref.subview``; loops are ``scf.for``
carrying ``nki.range = "affine" | "sequential"``, runtime loops ``scf.for`` / ``scf.while``
with ``nki.range = "dynamic"`` (registers and ``no_reorder``: ``isa_control.py``); index
math is ``arith``.

Sugar ops (``nki.load``, ``nki.store``, ``nki.add``, ``nki.multiply``, ``nki.exp``,
``nki.matmul``, ``nki.zeros``: :mod:`.nki_wrappers`; the generic ones: :mod:`.nki_sugar`)
mirror the NKI 0.3 value-returning wrappers and exist only until the ``nki-legalize`` pass.
The instructions are defined once in ``nki_mlir/instructions`` (their op twins join both
dialects when defined); the hand-written families left (:mod:`.isa_control`,
:mod:`.isa_collective`: markers and collectives, not ``nki.isa`` instructions) add theirs too.  Semantics: nki.isa API reference (nki/api/nki/isa) (the NKI ``nki.isa``
and ``nki.language`` API pages).
"""
from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, FloatAttr, MemRefType, StringAttr
from xdsl.ir import Dialect
from xdsl.irdl import irdl_op_definition, opt_prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from . import rules
from .common import ON_CHIP, space_of
from .instruction import dialect_ops
from .syntax import KeywordOp

REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce", "load_reduce")
COMPUTE_ENGINES = ("vector", "scalar", "gpsimd")


# ----------------------------------------------------------------------- allocation


@irdl_op_definition
class NdarrayOp(KeywordOp):
    """``nl.ndarray(shape, dtype, buffer, name, address)``: uninitialised storage.

    ``address = [partition, byte_offset]`` pins an on-chip tensor (direct allocation).
    """

    name = "nki.ndarray"
    tensor_name = opt_prop_def(StringAttr, prop_name="name")
    address = opt_prop_def(ArrayAttr, prop_name="address")
    result = result_def(MemRefType)

    def verify_(self) -> None:
        if space_of(self.result) is None:
            raise VerifyException("nki.ndarray: the result must be a memref in a #nisa.mem space")
        if space_of(self.result) in ON_CHIP:
            rules.on_chip_shape(self, "result", self.result)


# ---------------------------------------------------------------- data movement


# ------------------------------------------------------------------- vector / scalar


# the instruction-family modules that add ops to both dialects, and the sugar ops
from . import (  # noqa: E402
    isa_collective, isa_control,
    lang_ops, nki_sugar, views,
)
from .nki_wrappers import (  # noqa: E402
    AddOp, ExpOp, LoadOp, MatmulOp, MultiplyOp, StoreOp, ZerosOp,
)

#: value-returning NKI 0.3 wrappers; none may remain after ``nki-legalize``
SUGAR_OPS = (ZerosOp, LoadOp, StoreOp, AddOp, MultiplyOp, ExpOp, MatmulOp, *nki_sugar.SUGAR)

#: the instruction-family modules that add ops to both dialects
FAMILIES = (isa_control,
            isa_collective, nki_sugar, lang_ops, views)


def family_ops(attr: str) -> list:
    """The ops listed under ``attr`` (``NKI_OPS`` / ``NISA_OPS``) by every family module."""
    return [op for fam in FAMILIES for op in getattr(fam, attr)]


NKI = Dialect(  # with the ops of the instruction definitions (dialect_ops: a live list)
    "nki",
    dialect_ops("nki", [NdarrayOp, ZerosOp,
     LoadOp, StoreOp, AddOp, MultiplyOp, ExpOp, MatmulOp,
     *family_ops("NKI_OPS")]),
    [],
)

__all__ = ["NKI", "FloatAttr"]
