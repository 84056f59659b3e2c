"""The operand rules of the Vector/Scalar-engine instructions (``nki_mlir/instructions``): their
op-token vocabularies (ALU tokens, reduce ops, ``reduce_cmd`` values, activation functions of
``activate2``), the batch-norm statistics sizes and the checks their verifiers share.
Semantics and limits: nki.isa API reference (nki/api/nki/isa) (NKI ``nki.isa`` API pages).
"""
from __future__ import annotations

from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from .. import dtypes
from . import rules
from .common import describe, dtype_of, free_size, prop_str, shape_of

# ------------------------------------------------------------------ op-token vocabularies

#: the ALU operators of the NKI API (``nl.add``, ...) as ``tensor_tensor`` / ``tensor_scalar``
#: take them (NKI API common tables (nki/api/nki.api.shared))
ALU_OPS = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal",
           "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
           "logical_xor", "power", "abs_max", "abs_min", "bitwise_and", "bitwise_or",
           "bitwise_xor", "left_shift", "right_shift", "bypass", "abs", "rsqrt", "reciprocal",
           "mod", "fmod")
#: NKI ALU token (``nl.maximum``) -> AWS ``ArithOp`` spelling (``max``), the ``nisa`` ops' tokens
ARITH_OPS = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
    "maximum": "max", "minimum": "min", "equal": "is_eq", "not_equal": "is_ne",
    "less": "is_lt", "less_equal": "is_le", "greater": "is_gt", "greater_equal": "is_ge",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "power": "pow", "abs_max": "abs_max", "abs_min": "abs_min", "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "left_shift": "left_shift",
    "right_shift": "right_shift", "bypass": "bypass", "abs": "abs", "rsqrt": "rsqrt",
    "reciprocal": "reciprocal", "mod": "mod", "fmod": "fmod",
}
#: the AWS ``ArithOp`` spellings
ARITH_NAMES = tuple(ARITH_OPS.values())
#: ``tensor_reduce`` operators
REDUCE_OPS = ("add", "subtract", "multiply", "maximum", "minimum", "logical_and", "logical_or",
              "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor")
#: the ScalarE activation functions (NKI API common tables (nki/api/nki.api.shared)), as the
#: ``op`` of ``activation`` / ``activation_reduce`` and (with ``prelu``) ``activate2``; the
#: interpreter's implementations are ``runtime/numerics.ACTIVATION``
ACTIVATIONS = ("copy", "identity", "exp", "relu", "gelu", "gelu_apprx_tanh", "sigmoid", "tanh",
               "square", "sqrt", "rsqrt", "reciprocal", "log", "silu", "abs", "sign", "softplus",
               "erf", "sin", "arctan", "mish", "silu_dx", "gelu_dx", "gelu_apprx_sigmoid",
               "gelu_apprx_sigmoid_dx", "erf_dx")
#: bitvec ALU tokens (integer bits; never accepted by the instructions of this module
#: except tensor_partition_reduce's bitwise_or / bitwise_and)
BITVEC = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert")
#: arithmetic ALU tokens usable as op0/op1 on VectorE (NKI API common tables (nki/api/nki.api.shared))
ARITH = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal",
         "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
         "logical_xor", "abs_max", "abs_min", "bypass", "abs", "rsqrt", "reciprocal", "power")
#: tensor_partition_reduce ``op`` (GpSimd, across partitions)
PARTITION_REDUCE_OPS = ("add", "average", "maximum", "bitwise_or", "bitwise_and")
#: tensor_scalar_reduce ``reduce_op`` with its accumulator reset value
TSR_REDUCE_OPS = ("add", "multiply", "maximum", "minimum")
#: tensor_scalar_cumulative ``op1``
CUMULATIVE_OPS = ("add", "subtract", "multiply", "maximum", "minimum")
#: activate2 ``reduce_op``
ACT2_REDUCE_OPS = ("add", "maximum", "minimum", "abs_max", "abs_min")
#: activate2 allowed ``(op0, op1)`` pairs
ACT2_PAIRS = (("multiply", "add"), ("multiply", "subtract"), ("multiply", "bypass"),
              ("add", "bypass"), ("subtract", "bypass"), ("bypass", "bypass"))
#: activation functions of activate2: the activation functions and ``prelu`` (which uses relu_param)
ACT2_FUNCS = (*ACTIVATIONS, "prelu")
REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce", "load_reduce")
#: reduce_cmd values the VectorE accumulator instructions accept
DVE_CMDS = ("reset_reduce", "reduce", "load_reduce")
EXP_CMDS = ("idle", "reset_reduce", "reduce", "load_reduce")
ACT_CMDS = ("idle", "reset", "reduce", "reset_reduce")

#: ``nl.tile_size.bn_stats_fmax``: free elements per partition bn_stats reads
BN_STATS_FMAX = 512
#: values bn_stats writes per partition: (count, mean, var*count) for even and odd elements
BN_STATS_DIM = 6
#: values bn_aggr writes per partition: (mean, var)
BN_AGGR_DIM = 2


# ------------------------------------------------------------------------------ helpers


def arith_only(op: Operation, prop: str, allowed: tuple[str, ...] = ARITH) -> None:
    """``prop`` is an arithmetic (not bitvec) ALU token from ``allowed``."""
    t = prop_str(op, prop)
    if t is None:
        return
    if t in BITVEC:
        raise VerifyException(f"{rules.api(op)}: {prop}={t} is a bitvec operator; this instruction "
                              f"takes arithmetic operators only")
    rules.enum(op, prop, allowed)


def partitions(v: SSAValue) -> int:
    return shape_of(v)[0]


def not_int32(op: Operation, *roles: str) -> None:
    for r in roles:
        v = getattr(op, r)
        if v is not None and dtype_of(v) in (dtypes.int32, dtypes.uint32):
            raise VerifyException(f"{rules.api(op)}: '{r}' is {dtypes.name_of(dtype_of(v))}; "
                                  f"int32/uint32 are not supported by this instruction")


def reduce_res_tile(op: Operation, parts: int) -> None:
    v = getattr(op, "reduce_res", None)
    if v is None:
        return
    rules.tile(op, "reduce_res", v)
    if shape_of(v)[0] != parts or free_size(v) != 1:
        raise VerifyException(f"{rules.api(op)}: 'reduce_res' must be [{parts}, 1] (one value per "
                              f"partition), got {describe(v)}")


def start_partitions(op: Operation, *roles: str) -> None:
    """The start-partition rule (NKI architecture guide (nki/guides/architecture)) for the tile operands ``roles``."""
    rules.start_partition(op, *((r, getattr(op, r)) for r in roles
                               if isinstance(getattr(op, r), SSAValue)
                               and isinstance(getattr(op, r).type, MemRefType)))


def f32_operands(op: Operation, *roles: str) -> None:
    """Tile operands in ``roles`` (scalar-or-[P, 1] immediates) are float32."""
    for r in roles:
        v = getattr(op, r)
        if v is not None and isinstance(v.type, MemRefType) and dtype_of(v) != dtypes.float32:
            raise VerifyException(f"{rules.api(op)}: operand '{r}' must be float32 (a scalar or a "
                                  f"[P, 1] float32 tensor), got {describe(v)}")


def check_reduce_cmd(op: Operation, allowed: tuple[str, ...], default: str) -> str:
    rules.enum(op, "reduce_cmd", allowed)
    return prop_str(op, "reduce_cmd") or default
