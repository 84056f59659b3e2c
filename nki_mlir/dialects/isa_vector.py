"""Vector/Scalar-engine accumulator instructions not yet moved to a definition
(``nki_mlir/instructions``): tensor_scalar_reduce, exponential, activate2.

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

from . import rules
from .common import prop_flag, prop_str
from .instruction import NisaInstruction, NkiInstruction, register_twins
from .syntax import KeywordOp
from .vector_rules import (  # noqa: F401  (the vocabularies are also read as isa_vector.X)
    ACT2_FUNCS, ACT2_PAIRS, ACT2_REDUCE_OPS, ACT_CMDS, ARITH, BITVEC, BN_AGGR_DIM, BN_STATS_DIM,
    BN_STATS_FMAX, CUMULATIVE_OPS, DVE_CMDS, EXP_CMDS, PARTITION_REDUCE_OPS, REDUCE_CMDS,
    TSR_REDUCE_OPS, arith_only, check_reduce_cmd, f32_operands, not_int32, partitions,
    reduce_res_tile, start_partitions,
)

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
    (TensorScalarReduceOp, NisaTensorScalarReduceOp, "vector"),
    (ExponentialOp, NisaExponentialOp, "vector"),
    (Activate2Op, NisaActivate2Op, "scalar"),
)

#: ops this module adds to the nki and nisa dialects
NKI_OPS, NISA_OPS = register_twins(_PAIRS)
