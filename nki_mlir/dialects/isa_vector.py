"""Vector/Scalar-engine arithmetic instructions beyond the core set: scalar_tensor_tensor, tensor_partition_reduce, tensor_scalar_reduce, tensor_scalar_cumulative, tensor_tensor_scan, bn_stats, bn_aggr, exponential, activate2.

Each instruction is declared once as a mixin and instantiated as an nki op and its
nisa twin (see :mod:`.instruction`); both levels keep the ``nki.isa`` operand roles and the
NKI op-token spellings (``maximum``, ``subtract``), so the lowering is 1:1.  Scalars
(``operand0``, ``imm0``, ``initial``, ``reduce_init``, ...) are f32 SSA values or ``[P, 1]``
tiles.  Semantics and limits: nki.isa API reference (nki/api/nki/isa) (NKI ``nki.isa`` API pages).
"""
from __future__ import annotations

from xdsl.dialects.builtin import IntegerAttr, MemRefType, StringAttr
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
from .common import describe, dtype_of, free_size, prop_flag, prop_str
from .instruction import NisaInstruction, NkiInstruction, register_twins
from .syntax import KeywordOp
from .vector_rules import (  # noqa: F401  (the vocabularies are also read as isa_vector.X)
    ACT2_FUNCS, ACT2_PAIRS, ACT2_REDUCE_OPS, ACT_CMDS, ARITH, BITVEC, BN_AGGR_DIM, BN_STATS_DIM,
    BN_STATS_FMAX, CUMULATIVE_OPS, DVE_CMDS, EXP_CMDS, PARTITION_REDUCE_OPS, REDUCE_CMDS,
    TSR_REDUCE_OPS, arith_only, check_reduce_cmd, f32_operands, not_int32, partitions,
    reduce_res_tile, start_partitions,
)

# ===================================================================== scalar_tensor_tensor


class _ScalarTensorTensor(KeywordOp):
    """``dst = (data op0 operand0) op1 operand1`` (VectorE, fp32 math).

    ``operand0`` is an f32 scalar or a ``[P, 1]`` tile broadcast along the free dims;
    ``operand1`` is a tile with ``data``'s partition and per-partition element counts.
    ``reverse0`` computes ``operand0 op0 data``; ``reverse1`` computes ``operand1 op1 tmp``.
    Arithmetic operators only; ``data`` and ``operand1`` are not both in PSUM.
    """

    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)
    operand0 = operand_def()
    operand1 = operand_def(MemRefType)
    op0 = prop_def(StringAttr)
    op1 = prop_def(StringAttr)
    reverse0 = opt_prop_def(IntegerAttr)
    reverse1 = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.elementwise(self, ("dst", "data", "operand1"))
        rules.per_partition_vector(self, "operand0", self.operand0, partitions(self.data))
        rules.not_both_psum(self, ("data", self.data), ("operand1", self.operand1))
        arith_only(self, "op0")
        arith_only(self, "op1")
        start_partitions(self, "dst", "data", "operand0", "operand1")
        rules.engine(self, ("vector",))


@irdl_op_definition
class ScalarTensorTensorOp(_ScalarTensorTensor, NkiInstruction):
    name = "nki.scalar_tensor_tensor"


@irdl_op_definition
class NisaScalarTensorTensorOp(_ScalarTensorTensor, NisaInstruction):
    name = "nisa.scalar_tensor_tensor"


# ================================================================== tensor_partition_reduce


class _TensorPartitionReduce(KeywordOp):
    """GpSimd reduction ACROSS partitions: ``dst[0, f] = op over p of data[p, f]``.

    ``data`` is ``[P, F...]``; ``dst`` is one partition holding ``data``'s per-partition
    element count (``[1, F...]``).  ``op``: add, average (sum / P), maximum (fp32 math, exact
    int64 math when ``data`` and ``dst`` are integers), bitwise_or / bitwise_and (integer
    dtypes).  GpSimd cannot access PSUM, so both tiles are in SBUF.
    """

    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)
    op = prop_def(StringAttr)

    def verify_(self) -> None:
        rules.tile(self, "data", self.data, spaces=("sbuf",))
        rules.tile(self, "dst", self.dst, spaces=("sbuf",))
        rules.enum(self, "op", PARTITION_REDUCE_OPS)
        if partitions(self.dst) != 1:
            raise VerifyException(f"{rules.api(self)}: 'dst' must have 1 partition (the reduction "
                                  f"runs across the partitions of 'data'), got {describe(self.dst)}")
        if free_size(self.dst) != free_size(self.data):
            raise VerifyException(f"{rules.api(self)}: 'dst' must hold {free_size(self.data)} "
                                  f"element(s) in its partition (one per element of a 'data' "
                                  f"partition), got {describe(self.dst)}")
        if prop_str(self, "op") in BITVEC:
            for r in ("data", "dst"):
                if not dtypes.is_int(dtype_of(getattr(self, r))):
                    raise VerifyException(
                        f"{rules.api(self)}: op={prop_str(self, 'op')} works on integer bits, but "
                        f"'{r}' is {dtypes.name_of(dtype_of(getattr(self, r)))}")
        start_partitions(self, "dst", "data")
        rules.engine(self, ("gpsimd",))


@irdl_op_definition
class TensorPartitionReduceOp(_TensorPartitionReduce, NkiInstruction):
    name = "nki.tensor_partition_reduce"


@irdl_op_definition
class NisaTensorPartitionReduceOp(_TensorPartitionReduce, NisaInstruction):
    name = "nisa.tensor_partition_reduce"


# ===================================================================== tensor_scalar_reduce


class _TensorScalarReduce(KeywordOp):
    """``dst = data op0 operand0`` and a free-axis reduction into the VectorE accumulators.

    Per partition: ``acc = reduce_op(acc, reduce_op over the free dims of the fp32 result)``
    where ``reduce_cmd`` first sets ``acc``: ``reset_reduce`` (default) to the identity of
    ``reduce_op`` (add 0, multiply 1, maximum -inf, minimum +inf), ``load_reduce`` to
    ``reduce_init`` (f32 scalar or ``[P, 1]``), ``reduce`` keeps it.  ``reduce_res[P, 1]``
    receives ``acc`` (negated with ``reduce_res_negate``).  ``reverse0`` is not supported.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)
    operand0 = operand_def()
    reduce_res = opt_operand_def(MemRefType)
    reduce_init = opt_operand_def()
    op0 = prop_def(StringAttr)
    reduce_op = prop_def(StringAttr)
    reduce_cmd = opt_prop_def(StringAttr)
    reduce_res_negate = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.elementwise(self, ("dst", "data"))
        p = partitions(self.data)
        rules.per_partition_vector(self, "operand0", self.operand0, p)
        rules.per_partition_vector(self, "reduce_init", self.reduce_init, p)
        reduce_res_tile(self, p)
        arith_only(self, "op0")
        rules.enum(self, "reduce_op", TSR_REDUCE_OPS)
        cmd = check_reduce_cmd(self, DVE_CMDS, "reset_reduce")
        if cmd == "load_reduce" and self.reduce_init is None:
            raise VerifyException(f"{rules.api(self)}: reduce_cmd=load_reduce needs 'reduce_init' "
                                  f"(the value loaded into the accumulators)")
        if cmd != "load_reduce" and self.reduce_init is not None:
            raise VerifyException(f"{rules.api(self)}: 'reduce_init' is only used with "
                                  f"reduce_cmd=load_reduce, but reduce_cmd={cmd}")
        f32_operands(self, "operand0", "reduce_init")
        start_partitions(self, "dst", "data", "operand0", "reduce_res", "reduce_init")
        rules.engine(self, ("vector",))


@irdl_op_definition
class TensorScalarReduceOp(_TensorScalarReduce, NkiInstruction):
    name = "nki.tensor_scalar_reduce"


@irdl_op_definition
class NisaTensorScalarReduceOp(_TensorScalarReduce, NisaInstruction):
    name = "nisa.tensor_scalar_reduce"


# ================================================================= tensor_scalar_cumulative


class _TensorScalarCumulative(KeywordOp):
    """A scan along the (flattened) free dims, per partition, on the VectorE accumulator::

        reg = init;  for i: reg = op1(op0(src[i], imm0), reg);  dst[i] = reg

    ``init`` by ``reduce_cmd``: ``reset_reduce`` (default) the identity of ``op1`` (add /
    subtract 0, multiply 1, maximum -inf, minimum +inf), ``load_reduce`` ``imm1``, ``reduce``
    the accumulator left by the previous VectorE accumulation instruction.  ``imm0`` /
    ``imm1`` are f32 scalars or ``[P, 1]`` tiles.  int32/uint32 tiles are not supported.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    imm0 = operand_def()
    imm1 = opt_operand_def()
    op0 = prop_def(StringAttr)
    op1 = prop_def(StringAttr)
    reduce_cmd = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        rules.elementwise(self, ("dst", "src"))
        p = partitions(self.src)
        rules.per_partition_vector(self, "imm0", self.imm0, p)
        rules.per_partition_vector(self, "imm1", self.imm1, p)
        arith_only(self, "op0")
        arith_only(self, "op1", CUMULATIVE_OPS)
        not_int32(self, "src", "dst")
        cmd = check_reduce_cmd(self, DVE_CMDS, "reset_reduce")
        if cmd == "load_reduce" and self.imm1 is None:
            raise VerifyException(f"{rules.api(self)}: reduce_cmd=load_reduce needs 'imm1' (the "
                                  f"value loaded into the accumulator)")
        f32_operands(self, "imm0", "imm1")
        start_partitions(self, "dst", "src", "imm0", "imm1")
        rules.engine(self, ("vector",))


@irdl_op_definition
class TensorScalarCumulativeOp(_TensorScalarCumulative, NkiInstruction):
    name = "nki.tensor_scalar_cumulative"


@irdl_op_definition
class NisaTensorScalarCumulativeOp(_TensorScalarCumulative, NisaInstruction):
    name = "nisa.tensor_scalar_cumulative"


# ======================================================================= tensor_tensor_scan


class _TensorTensorScan(KeywordOp):
    """A per-partition scan over the (flattened) free dims, in fp32::

        r[0] = op1(op0(data0[0], initial), data1[0]);  r[i] = op1(op0(data0[i], r[i-1]), data1[i])

    ``reverse0`` swaps the operands of ``op0`` (``op0(r[i-1], data0[i])``), ``reverse1``
    those of ``op1`` (``op1(data1[i], tmp)``).  ``initial`` is an f32 scalar or ``[P, 1]``.
    ``data0`` and ``data1`` are not both in PSUM.
    """

    dst = operand_def(MemRefType)
    data0 = operand_def(MemRefType)
    data1 = operand_def(MemRefType)
    initial = operand_def()
    op0 = prop_def(StringAttr)
    op1 = prop_def(StringAttr)
    reverse0 = opt_prop_def(IntegerAttr)
    reverse1 = opt_prop_def(IntegerAttr)

    def verify_(self) -> None:
        rules.elementwise(self, ("dst", "data0", "data1"))
        rules.per_partition_vector(self, "initial", self.initial, partitions(self.data0))
        rules.not_both_psum(self, ("data0", self.data0), ("data1", self.data1))
        arith_only(self, "op0")
        arith_only(self, "op1")
        start_partitions(self, "dst", "data0", "data1", "initial")
        rules.engine(self, ("vector",))


@irdl_op_definition
class TensorTensorScanOp(_TensorTensorScan, NkiInstruction):
    name = "nki.tensor_tensor_scan"


@irdl_op_definition
class NisaTensorTensorScanOp(_TensorTensorScan, NisaInstruction):
    name = "nisa.tensor_tensor_scan"


# ================================================================================ bn_stats


class _BnStats(KeywordOp):
    """Per-partition statistics of ``data`` (at most 512 free elements, bn_stats_fmax).

    ``dst`` holds 6 values per partition: (count, mean, variance*count) of the even-index
    elements, then the same of the odd-index elements (flattened free order).  fp32 math.
    """

    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)

    def verify_(self) -> None:
        rules.tile(self, "data", self.data)
        rules.tile(self, "dst", self.dst)
        rules.same_partitions(self, ("dst", self.dst), ("data", self.data))
        n = free_size(self.data)
        if n > BN_STATS_FMAX:
            raise VerifyException(f"{rules.api(self)}: 'data' has {n} free elements per partition, "
                                  f"more than bn_stats_fmax={BN_STATS_FMAX} (call bn_stats on each "
                                  f"512-element chunk and combine them with one bn_aggr)")
        if free_size(self.dst) != BN_STATS_DIM:
            raise VerifyException(f"{rules.api(self)}: 'dst' must hold {BN_STATS_DIM} elements per "
                                  f"partition (count, mean, var*count for even and odd elements), "
                                  f"got {describe(self.dst)}")
        start_partitions(self, "dst", "data")
        rules.engine(self, ("vector",))


@irdl_op_definition
class BnStatsOp(_BnStats, NkiInstruction):
    name = "nki.bn_stats"


@irdl_op_definition
class NisaBnStatsOp(_BnStats, NisaInstruction):
    name = "nisa.bn_stats"


# ================================================================================= bn_aggr


class _BnAggr(KeywordOp):
    """Combine ``(count, mean, variance*count)`` triples (bn_stats outputs, flattened free
    order) into ``dst[P, 2]`` = (mean, population variance) per partition.  fp32 math."""

    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)

    def verify_(self) -> None:
        rules.tile(self, "data", self.data)
        rules.tile(self, "dst", self.dst)
        rules.same_partitions(self, ("dst", self.dst), ("data", self.data))
        n = free_size(self.data)
        if n % 3:
            raise VerifyException(f"{rules.api(self)}: 'data' has {n} elements per partition, not a "
                                  f"multiple of 3 (it holds (count, mean, var*count) triples from "
                                  f"bn_stats)")
        if free_size(self.dst) != BN_AGGR_DIM:
            raise VerifyException(f"{rules.api(self)}: 'dst' must hold {BN_AGGR_DIM} elements per "
                                  f"partition (mean, variance), got {describe(self.dst)}")
        start_partitions(self, "dst", "data")
        rules.engine(self, ("vector",))


@irdl_op_definition
class BnAggrOp(_BnAggr, NkiInstruction):
    name = "nki.bn_aggr"


@irdl_op_definition
class NisaBnAggrOp(_BnAggr, NisaInstruction):
    name = "nisa.bn_aggr"


# ============================================================================= exponential


class _Exponential(KeywordOp):
    """trn3 (NeuronCore-v4) only: ``dst = exp(src - max_value)`` on VectorE.

    ``max_value`` is an f32 scalar or ``[P, 1]``.  With ``reduce_cmd`` the free-axis sum of
    the fp32 results goes into the VectorE accumulators: ``reset_reduce`` from 0,
    ``load_reduce`` from ``reduce_init``, ``reduce`` on top of the current value, ``idle``
    (default) untouched.  ``reduce_res[P, 1]`` receives the accumulators.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    src = operand_def(MemRefType)
    max_value = operand_def()
    reduce_res = opt_operand_def(MemRefType)
    reduce_init = opt_operand_def()
    reduce_cmd = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        rules.require_target(self, "trn3", "this instruction")
        rules.elementwise(self, ("dst", "src"))
        p = partitions(self.src)
        rules.per_partition_vector(self, "max_value", self.max_value, p)
        rules.per_partition_vector(self, "reduce_init", self.reduce_init, p)
        reduce_res_tile(self, p)
        cmd = check_reduce_cmd(self, EXP_CMDS, "idle")
        if cmd == "load_reduce" and self.reduce_init is None:
            raise VerifyException(f"{rules.api(self)}: reduce_cmd=load_reduce needs 'reduce_init'")
        if cmd != "load_reduce" and self.reduce_init is not None:
            raise VerifyException(f"{rules.api(self)}: 'reduce_init' is only used with "
                                  f"reduce_cmd=load_reduce, but reduce_cmd={cmd}")
        f32_operands(self, "max_value", "reduce_init")
        start_partitions(self, "dst", "src", "max_value", "reduce_res", "reduce_init")
        rules.engine(self, ("vector",))


@irdl_op_definition
class ExponentialOp(_Exponential, NkiInstruction):
    name = "nki.exponential"


@irdl_op_definition
class NisaExponentialOp(_Exponential, NisaInstruction):
    name = "nisa.exponential"


# =============================================================================== activate2


class _Activate2(KeywordOp):
    """trn3 (NeuronCore-v4) only: ``dst = op((data op0 imm0) op1 imm1, relu_param)`` on ScalarE.

    ``(op0, op1)`` is one of (multiply, add), (multiply, subtract), (multiply, bypass),
    (add, bypass), (subtract, bypass), (bypass, bypass); ``reverse0`` / ``reverse1`` swap the
    operands of op0 / op1.  ``imm0``, ``imm1`` and ``relu_param`` (the negative slope of
    ``prelu``) are f32 scalars or ``[P, 1]`` tiles.  With ``reduce_cmd`` the ScalarE
    accumulators (shared with ``activation``) are reset to the identity of ``reduce_op``
    (add 0, maximum -inf, minimum +inf, abs_max 0, abs_min +inf) and/or reduced with the
    fp32 results; ``reduce_res[P, 1]`` receives them.
    """

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    dst = operand_def(MemRefType)
    data = operand_def(MemRefType)
    imm0 = operand_def()
    imm1 = operand_def()
    relu_param = opt_operand_def()
    reduce_res = opt_operand_def(MemRefType)
    op = prop_def(StringAttr)
    op0 = prop_def(StringAttr)
    op1 = prop_def(StringAttr)
    reverse0 = opt_prop_def(IntegerAttr)
    reverse1 = opt_prop_def(IntegerAttr)
    reduce_op = opt_prop_def(StringAttr)
    reduce_cmd = opt_prop_def(StringAttr)

    def verify_(self) -> None:
        rules.require_target(self, "trn3", "this instruction")
        rules.elementwise(self, ("dst", "data"))
        p = partitions(self.data)
        for role in ("imm0", "imm1", "relu_param"):
            rules.per_partition_vector(self, role, getattr(self, role), p)
        reduce_res_tile(self, p)
        rules.enum(self, "op", ACT2_FUNCS)
        pair = (prop_str(self, "op0"), prop_str(self, "op1"))
        if pair not in ACT2_PAIRS:
            shown = ", ".join(f"({a}, {b})" for a, b in ACT2_PAIRS)
            raise VerifyException(f"{rules.api(self)}: (op0, op1) = ({pair[0]}, {pair[1]}) is not "
                                  f"supported; the allowed pairs are {shown}")
        if prop_flag(self, "reverse0") and pair[0] == "bypass":
            raise VerifyException(f"{rules.api(self)}: reverse0 needs op0 to be set (op0=bypass)")
        if prop_flag(self, "reverse1") and pair[1] == "bypass":
            raise VerifyException(f"{rules.api(self)}: reverse1 needs op1 to be set (op1=bypass)")
        rules.enum(self, "reduce_op", ACT2_REDUCE_OPS)
        cmd = check_reduce_cmd(self, ACT_CMDS, "idle")
        if cmd in ("reduce", "reset_reduce") and self.reduce_op is None:
            raise VerifyException(f"{rules.api(self)}: reduce_cmd={cmd} needs reduce_op (one of "
                                  f"{', '.join(ACT2_REDUCE_OPS)})")
        start_partitions(self, "dst", "data", "imm0", "imm1", "relu_param", "reduce_res")
        rules.engine(self, ("scalar",))


@irdl_op_definition
class Activate2Op(_Activate2, NkiInstruction):
    name = "nki.activate2"


@irdl_op_definition
class NisaActivate2Op(_Activate2, NisaInstruction):
    name = "nisa.activate2"


# ------------------------------------------------------------------------ registration

_PAIRS = (
    (ScalarTensorTensorOp, NisaScalarTensorTensorOp, "vector"),
    (TensorPartitionReduceOp, NisaTensorPartitionReduceOp, "gpsimd"),
    (TensorScalarReduceOp, NisaTensorScalarReduceOp, "vector"),
    (TensorScalarCumulativeOp, NisaTensorScalarCumulativeOp, "vector"),
    (TensorTensorScanOp, NisaTensorTensorScanOp, "vector"),
    (BnStatsOp, NisaBnStatsOp, "vector"),
    (BnAggrOp, NisaBnAggrOp, "vector"),
    (ExponentialOp, NisaExponentialOp, "vector"),
    (Activate2Op, NisaActivate2Op, "scalar"),
)

#: ops this module adds to the nki and nisa dialects
NKI_OPS, NISA_OPS = register_twins(_PAIRS)
