"""Selection instructions not yet moved to a definition (``nki_mlir/instructions``):
select_reduce, range_select.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`); AWS shows none of them, so the ``nisa`` ops keep the
``nki.isa`` names, operand roles and NKI op-token spellings (``reduce_op=maximum``,
``comp_op0=less``) and lower 1:1.  Engines: VectorE for the first six, GpSimd for
``sequence_bounds`` / ``nonzero_with_count`` / ``topk`` (NKI docs: "using GpSIMD Engine").

Semantics, defaults and limits: nki.isa API reference (nki/api/nki/isa) and the NKI 0.6 ``nki.isa`` API
page (aws-neuron-sdk ``nki/api/nki/isa/__init__.py``); readings of what the docs leave
open are stated on each op and in :mod:`nki_mlir.runtime.isa_select`.
"""
from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, MemRefType, StringAttr
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import dtype_of, shape_of
from .instruction import NisaInstruction, NkiInstruction, register_twins
from .syntax import KeywordOp

#: reduce_cmd values the VectorE select instructions accept (no ``load_reduce``: they have
#: no ``reduce_init`` operand)
SELECT_REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce")
#: comparison tokens of ``range_select``
RANGE_CMPS = ("equal", "less", "less_equal", "greater", "greater_equal")
#: ``range_select``'s only legal ``on_false_value`` (the hardware fills with FP32_MIN)
FP32_MIN = -3.4028234663852886e38

_INT8_16 = (dtypes.int8, dtypes.uint8, dtypes.int16, dtypes.uint16)


def _name(dt) -> str:
    return dtypes.name_of(dt)


def _dtype_in(op, role: str, v: SSAValue | None, allowed, what: str) -> None:
    if v is None or not isinstance(v.type, MemRefType):
        return
    if dtype_of(v) not in allowed:
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype {_name(dtype_of(v))}, but it "
                              f"must be {what}")


def _float_dtype(op, role: str, v: SSAValue | None) -> None:
    if v is not None and isinstance(v.type, MemRefType) and not dtypes.is_float(dtype_of(v)):
        raise VerifyException(f"{rules.api(op)}: '{role}' has dtype {_name(dtype_of(v))}, but it "
                              f"must be a float type")


def _reduce(op) -> None:
    """The shared VectorE accumulator options: reduce_op=maximum, reduce_cmd, reduce_res[P,1]."""
    rules.enum(op, "reduce_op", ("maximum",))
    rules.enum(op, "reduce_cmd", SELECT_REDUCE_CMDS)
    rr = op.reduce_res
    if rr is not None:
        rules.per_partition_vector(op, "reduce_res", rr, shape_of(op.dst)[0])
        _float_dtype(op, "reduce_res", rr)


def _const_float(v: SSAValue) -> float | None:
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float(owner.value.value.data)
    return None


# ----------------------------------------------------------------------- VectorE


class _SelectReduce(KeywordOp):
    """``nisa.select_reduce(dst, predicate, on_true, on_false, reduce_res, reduce_cmd, reduce_op, reverse_pred)``.

    ``dst = where(predicate != 0 (xor reverse_pred), on_true, on_false)``; ``on_false`` is
    an f32 scalar or a ``[P, 1]`` tile.  ``predicate`` is int8/uint8/int16/uint16 and has
    dst's partition and per-partition element counts, as has ``on_true`` (any dtype but
    int32/uint32); ``on_true`` and ``predicate`` are not both in PSUM.  With ``reduce_cmd``
    the per-partition max of the selected values goes through the VectorE accumulators;
    ``reduce_res`` (``[P, 1]``, float) reads them out.  ``reduce_op`` is ``maximum`` only.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    predicate = operand_def(MemRefType)
    on_true = operand_def(MemRefType)
    on_false = operand_def()
    reduce_res = opt_operand_def(MemRefType)
    reduce_cmd = opt_prop_def(StringAttr)
    reduce_op = opt_prop_def(StringAttr)
    reverse_pred = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.elementwise(self, ("dst", "predicate", "on_true"))
        rules.not_both_psum(self, ("on_true", self.on_true), ("predicate", self.predicate))
        _dtype_in(self, "predicate", self.predicate, _INT8_16, "int8, uint8, int16 or uint16")
        if dtype_of(self.on_true) in (dtypes.int32, dtypes.uint32):
            raise VerifyException(f"{rules.api(self)}: 'on_true' has dtype "
                                  f"{_name(dtype_of(self.on_true))}; int32/uint32/tfloat32 are not supported")
        rules.per_partition_vector(self, "on_false", self.on_false, shape_of(self.dst)[0])
        _reduce(self)
        rules.engine(self, ("vector",))


@irdl_op_definition
class SelectReduceOp(_SelectReduce, NkiInstruction):
    name = "nki.select_reduce"


@irdl_op_definition
class NisaSelectReduceOp(_SelectReduce, NisaInstruction):
    name = "nisa.select_reduce"


class _RangeSelect(KeywordOp):
    """``nisa.range_select(dst, on_true_tile, bound0, bound1, on_false_value, reduce_res, comp_op0, comp_op1, reduce_cmd, reduce_op, range_start)``.

    NeuronCore-v3+ (trn2).  With ``idx = range_start + flat free index`` (fp32),
    ``dst = where(comp_op0(idx, bound0) & comp_op1(idx, bound1), on_true_tile,
    on_false_value)``.  ``bound0`` / ``bound1`` are float32 ``[P, 1]`` tiles;
    ``on_true_tile`` is a float type; ``on_false_value`` must be FP32_MIN
    (-3.4028235e38); the comparisons are equal, less, less_equal, greater or greater_equal;
    ``reduce_op`` is maximum; ``reduce_cmd`` defaults to ``reset_reduce``.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    on_true_tile = operand_def(MemRefType)
    bound0 = operand_def(MemRefType)
    bound1 = operand_def(MemRefType)
    on_false_value = operand_def()
    reduce_res = opt_operand_def(MemRefType)
    comp_op0 = prop_def(StringAttr)
    comp_op1 = prop_def(StringAttr)
    reduce_cmd = opt_prop_def(StringAttr)
    reduce_op = opt_prop_def(StringAttr)
    range_start = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.require_target(self, "trn2", "range_select")
        rules.elementwise(self, ("dst", "on_true_tile"))
        _float_dtype(self, "on_true_tile", self.on_true_tile)
        parts = shape_of(self.dst)[0]
        for role in ("bound0", "bound1"):
            v = getattr(self, role)
            rules.per_partition_vector(self, role, v, parts)
            _dtype_in(self, role, v, (dtypes.float32,), "float32")
        rules.enum(self, "comp_op0", RANGE_CMPS)
        rules.enum(self, "comp_op1", RANGE_CMPS)
        if isinstance(self.on_false_value.type, MemRefType):
            raise VerifyException(f"{rules.api(self)}: 'on_false_value' must be the scalar "
                                  f"FP32_MIN (-3.4028235e+38), not a tensor")
        c = _const_float(self.on_false_value)
        if c is not None and np.float32(c) != np.float32(FP32_MIN):
            raise VerifyException(f"{rules.api(self)}: on_false_value={c!r} is not supported; the "
                                  f"hardware only fills with FP32_MIN (-3.4028235e+38)")
        _reduce(self)
        rules.engine(self, ("vector",))


@irdl_op_definition
class RangeSelectOp(_RangeSelect, NkiInstruction):
    name = "nki.range_select"


@irdl_op_definition
class NisaRangeSelectOp(_RangeSelect, NisaInstruction):
    name = "nisa.range_select"


_PAIRS = (
    (SelectReduceOp, NisaSelectReduceOp, "vector"),
    (RangeSelectOp, NisaRangeSelectOp, "vector"),
)

#: ops this module adds to the nki and nisa dialects
NKI_OPS, NISA_OPS = register_twins(_PAIRS)

__all__ = ["NKI_OPS", "NISA_OPS", "FP32_MIN", "RANGE_CMPS", "SELECT_REDUCE_CMDS"]
